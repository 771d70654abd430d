// Chapter 04 — make the work big enough and the GPU becomes the bottleneck.
//
//   build/bin/04_compute_bound_4096                            schedule 1,1,3
//   build/bin/04_compute_bound_4096 --experiment distribution  schedule 0,0,20: twenty GEMMs
//
// The chapter-01 workload at 4096x4096 (bf16 on a GPU): one GEMM is 2*4096^3 = 137 GFLOP,
// ~170 us on an H200, so each step's kernels outlast the CPU's tens of us of launching them.
// The CPU runs ahead, the launch queue fills, and the table's Self CUDA total catches up with
// the Self CPU total. Then: the same GEMM on the same data does not always take the same time;
// --experiment distribution records 20 of them to read as a distribution rather than a mean.
//
// Without a GPU the default size is 1024, and the lessons check the CPU-side version: the
// multiply itself is the step (cpu_shares).
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include "workbook/chapter.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"04_compute_bound_4096", "Chapter 04: a 4096x4096 matmul + add is compute-bound"};
  ch.defaults().size_for_device = {4096, 1024,  // said when the CPU size is picked:
                                   "2*1024^3 = 2.1 GFLOP per step in fp32, a second or so on a "
                                   "laptop CPU; 4096 is 64x the work"};
  ch.defaults().warmup_iters = 3;  // as in chapter 02: first-call costs stay out of the window
  ch.experiment("distribution", "0,0,20", "twenty samples of the same GEMM");

  return ch.main(argc, argv, [](wb::Run& run) {
    const int64_t n = run.size();
    torch::manual_seed(0);
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;
    auto step = [&] { y = torch::add(torch::matmul(x, w), b); };
    for (int i = 0; i < run.config().warmup_iters; ++i) step();
    wb::synchronize_device();

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
    return run.exit_code(run.report(prof.results().back()));
  });
}
