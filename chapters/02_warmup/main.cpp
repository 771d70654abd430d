// Chapter 02 — warm up, then profile.
//
//   build/bin/02_warmup                                  3 warm-up iterations, schedule 1,1,3
//   build/bin/02_warmup --experiment profiler_startup    warm library, cold profiler: 0,0,20
//   build/bin/02_warmup --warmup-iters 0 --schedule 0,0,3  (chapter 01's cold run, by hand)
//
// Same workload as chapter 01 (y = add(matmul(x, w), b), 64x64, "matmul_add"), but first it
// runs --warmup-iters untimed iterations and waits for the device, so the one-time work of a
// first call (cuBLAS handle and heuristics, lazy loading of kernel modules, attribute and
// occupancy queries) happens before the profiler looks. The lesson: the one-time costs are not
// gone, only kept out of the window. Two effects, two cures: the libraries' first-call work
// goes with the warm-up loop; the profiler's own start-up (its activity buffers) goes with the
// schedule's warmup step, which is what --experiment profiler_startup leaves out.
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include "workbook/chapter.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"02_warmup", "Chapter 02: warm up first, then profile"};
  ch.defaults().warmup_iters = 3;
  ch.experiment("profiler_startup", "0,0,20",
                "warm library, no schedule warmup: the profiler's own start-up");
  return ch.main(argc, argv, [](wb::Run& run) {
    const int64_t n = run.size();
    torch::manual_seed(0);
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;
    auto step = [&] { y = torch::add(torch::matmul(x, w), b); };

    // The warm-up: the same calls, unrecorded. The synchronize makes sure the GPU has really
    // run them (a launch returns before the kernel starts) and leaves the queue empty.
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
