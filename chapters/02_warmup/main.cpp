// Chapter 02 — warm up, then profile.
//
// Same workload as chapter 01 (y = add(matmul(x, w), b), 64x64, "matmul_add"), but first it
// runs --warmup-iters untimed iterations and waits for the device, so the one-time work of a
// first call (cuBLAS handle and heuristics, lazy loading of kernel modules, attribute and
// occupancy queries) happens before the profiler looks. The schedule's own wait and warmup
// steps come on top. The lesson: the one-time costs are not gone, only kept out of the window.
//
// Experiments (README.md):
//   --warmup-iters 0 --schedule 0,0,3    truly cold: the first recorded step pays everything
//   --warmup-iters 0 --schedule 0,0,20   the profiler's own start-up (Activity Buffer Request)
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include <iostream>

#include "kernel_gaps.hpp"
#include "workbook/chapter.hpp"
#include "workbook/trace_reader.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"02_warmup", "Chapter 02: warm up first, then profile"};
  int warmup_iters = 3;
  ch.app()
      .add_option("--warmup-iters", warmup_iters,
                  "untimed iterations (then a device synchronize) before the profiler starts; 0 = cold")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();

  return ch.main(argc, argv, [&](wb::Run& run) {
    const int64_t n = run.size();
    torch::manual_seed(0);
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("matmul_add");  // record_function("matmul_add")
      y = torch::add(torch::matmul(x, w), b);
    };

    // The warmup: the same calls, unrecorded. The synchronize makes sure the GPU has really
    // run them (a launch returns before the kernel starts) and leaves the queue empty.
    for (int i = 0; i < warmup_iters; ++i) step();
    wb::synchronize_device();
    run.say("warmup: " + std::to_string(warmup_iters) + " untimed iteration(s) + a device synchronize, then the "
            "profiler (" + run.schedule().str() + ")" +
            (warmup_iters == 0 ? "\n  (cold: the first recorded step pays every one-time cost that the "
                                 "schedule's wait/warmup steps do not absorb)" : ""));

    auto cycle = run.profile(step);
    const wb::RunOutputs out = run.report(cycle);

    // Beyond the lessons: the gaps between each step's kernels and the profiler's own events.
    const wb::Trace trace = wb::read_trace(out.trace);
    const wb::TraceModel model(trace);
    if (run.on_cuda()) {
      run.say(ch02::render(ch02::kernel_gaps(model)));
    } else {
      run.say("CPU edition: checked here: the step widths (warm steps within 5x of each other; try\n"
              "--warmup-iters 0 --schedule 0,0,3 for a cold first step). The one-time GPU work (module\n"
              "loading, cudaFuncSetAttribute, occupancy queries), Activity Buffer Request, the gaps\n"
              "between kernels and the launch-to-start latency need a GPU: see\n"
              "expected_output/h200/02_warmup/ and README.md.");
    }
    return run.exit_code(out);
  });
}
