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

#include "workbook/chapter.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"03_batched_bmm", "Chapter 03: a batched (B, N, N) matmul dispatches bmm"};
  ch.defaults().batch = 8;  // --batch; the harness's memory check counts B x N x N
  ch.defaults().batch_help = "leading batch axis B: x, w, b are (B, N, N)";

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
    for (int i = 0; i < 3; ++i) batched(), flat();  // both warm: compare chains, not first calls
    wb::synchronize_device();

    auto cycle = run.profile(batched);
    auto cycle_2d = run.profile(flat);
    wb::ReportOptions ro;
    ro.batch = batch;  // napkin math and throughput count all B matrices
    ro.reference = &cycle_2d, ro.reference_file = "trace_2d.json", ro.reference_label = "2-D";
    return run.exit_code(run.report(cycle, ro));
  });
}
