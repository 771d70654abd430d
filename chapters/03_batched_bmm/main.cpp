// Chapter 03 — a batch axis changes the dispatch chain: matmul calls bmm, not mm.
//
//   build/bin/03_batched_bmm [--batch 8] [--size 64]
//
// The workload of chapter 01 with a leading batch axis: x, w and b are (B, N, N) (B = 8, as in
// the original post). aten::matmul has no 3-D kernel of its own: it expands and reshapes both
// operands to (B, N, N), calls aten::bmm, and views the result back (_unsafe_view). Those shape
// ops are cheap, but each one is a dispatcher call the CPU pays every step.
//
// To show what the batch axis costs, the program also profiles the 2-D workload (N, N) in the
// same process; the lessons put both chains side by side (batch_chain). The batched run is the
// chapter's main output (trace.json, table.txt, lessons); the 2-D one is saved as trace_2d.json.
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include <CLI/CLI.hpp>  // this chapter's own flag, --batch

#include "workbook/chapter.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"03_batched_bmm", "Chapter 03: a batched (B, N, N) matmul dispatches bmm"};
  ch.defaults().batch = 8;  // the harness's memory check counts B x N x N
  ch.app()
      .add_option("--batch", ch.defaults().batch, "leading batch axis B: x, w, b are (B, N, N)")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();

  return ch.main(argc, argv, [&](wb::Run& run) {
    const int64_t n = run.size(), batch = run.config().batch;
    torch::manual_seed(0);
    auto x = torch::randn({batch, n, n}, run.options());
    auto w = torch::randn({batch, n, n}, run.options());  // (N, N) here would fold into one mm: see README
    auto b = torch::randn({batch, n, n}, run.options());
    auto x2 = x[0].contiguous(), w2 = w[0].contiguous(), b2 = b[0].contiguous();
    torch::Tensor y, y2;
    auto batched = [&] { y = torch::add(torch::matmul(x, w), b); };
    auto flat = [&] { y2 = torch::add(torch::matmul(x2, w2), b2); };
    for (int i = 0; i < 3; ++i) batched(), flat();  // both warm: compare chains, not first calls
    wb::synchronize_device();

    // The profiled loop, run once for each workload.
    auto profile = [&run](const std::function<void()>& step) {
      wb::ProfilerOptions opts;        // torch.profiler.profile(schedule=..., activities=...)
      opts.schedule = run.schedule();  // --schedule
      opts.cuda = run.on_cuda();
      wb::Profiler prof(opts);
      prof.start();
      for (int i = 0; i < run.schedule().total_steps(); ++i) {
        {
          wb::Annotation a("matmul_add");  // record_function("matmul_add")
          step();
        }
        prof.step();
        run.stop_if_interrupted();  // Ctrl-C stops here, before any output is written
      }
      prof.stop();
      return std::move(prof.results().back());
    };
    wb::CycleResult cycle = profile(batched);
    wb::CycleResult cycle_2d = profile(flat);
    wb::ReportOptions ro;
    ro.problem = wb::Problem::square(n, batch, run.dtype_bytes());  // napkin math counts all B matrices
    ro.reference = {&cycle_2d, "trace_2d.json", "2-D"};             // the lessons compare the two chains
    return run.exit_code(run.report(cycle, ro));
  });
}
