// Chapter 03 — a batch axis changes the dispatch chain: matmul calls bmm, not mm.
//
// The workload of chapter 01 with a leading batch axis: x, w and b are (B, N, N) (B = 8, as in
// the original post). aten::matmul has no 3-D kernel of its own: it expands and reshapes both
// operands to (B, N, N), calls aten::bmm, and views the result back (_unsafe_view). Those shape
// ops are cheap, but each one is a dispatcher call the CPU pays every step.
//
// To show what the batch axis costs, the program also profiles the 2-D workload (N, N) in the
// same process and prints both chains side by side. The batched run is the chapter's main
// output (trace.json, table.txt, lessons); the 2-D one is saved as trace_2d.json.
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include "chain_stats.hpp"
#include "workbook/chapter.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/trace_reader.hpp"

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
    auto batched = [&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
    };
    auto flat = [&] {
      wb::Annotation a("matmul_add");
      y2 = torch::add(torch::matmul(x2, w2), b2);
    };

    // Both workloads warm, so the comparison is about the chains, not first-call costs.
    for (int i = 0; i < 3; ++i) {
      batched();
      flat();
    }
    wb::synchronize_device();

    auto cycle = run.profile(batched);
    auto cycle_2d = run.profile(flat);
    wb::ReportOptions ro;
    ro.batch = batch;  // napkin math and throughput count all B matrices
    const wb::RunOutputs out = run.report(cycle, ro);

    const auto trace_2d_path = run.out() / "trace_2d.json";
    {
      wb::DirLock lock(run.out());
      cycle_2d.save_chrome_trace(trace_2d_path);
    }
    const wb::Trace t3 = wb::read_trace(out.trace), t2 = wb::read_trace(trace_2d_path);
    const wb::TraceModel m3(t3), m2(t2);
    const auto s3 = ch03::chain_stats(m3), s2 = ch03::chain_stats(m2);
    const auto checks = ch03::compare_checks(s2, s3, static_cast<int>(batch));

    wb::FactOptions fo;
    fo.problem = {n, 1, run.dtype_bytes()};
    const wb::Fact tree_2d = wb::compute_fact("dispatch_chain", m2, fo);
    fo.problem.batch = batch;
    const wb::Fact tree_3d = wb::compute_fact("dispatch_chain", m3, fo);
    run.say("The two dispatch chains (last active step of each run):\n-- 2-D (" + std::to_string(n) + ", " +
            std::to_string(n) + "), saved as " + trace_2d_path.string() + "\n" + tree_2d.detail +
            "-- batched (" + std::to_string(batch) + ", " + std::to_string(n) + ", " + std::to_string(n) +
            "), trace.json\n" + tree_3d.detail);
    run.say(ch03::side_by_side(s2, s3, static_cast<int>(batch)));
    run.say(ch03::render(checks));
    if (!run.on_cuda())
      run.say("CPU edition: the dispatch chains and the extra CPU ops are checked here. The GEMM kernel's\n"
              "grid (H200: [4,16,1] batched vs [4,2,1] 2-D) needs a GPU: see expected_output/h200/03_batched_bmm/.\n"
              "On a CPU aten::bmm also does the arithmetic itself, so its time grows with the batch.");

    int rc = run.exit_code(out);
    for (const auto& c : checks)
      if (!c.ok && run.config().check) rc = 3;
    return rc;
  });
}
