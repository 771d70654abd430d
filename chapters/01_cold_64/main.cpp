// Chapter 01 — a cold 64x64 matmul + add, profiled.
//
//   build/bin/01_cold_64                      the default run: schedule 1,1,3, nothing before it
//   build/bin/01_cold_64 --experiment cold    schedule 0,0,3: the process's first calls recorded
//
// The smallest workload that still shows every layer: y = add(matmul(x, w), b) under a
// "matmul_add" annotation. Nothing runs before the profiler, but the schedule's wait and warmup
// steps run the workload twice before the window opens: the one-time work of a first call
// (module loading, cuBLAS set-up, the first GEMM's occupancy sizing) is done by then, and what
// still widens the first recorded step ("the first recorded step's widening") has no one-time event in it.
// `--experiment cold` records the very first calls instead. At 64x64 the GPU finishes each kernel in ~2 us
// while the CPU spends tens of us getting there: the run is overhead-bound. README.md walks through it.
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include "workbook/chapter.hpp"  // wb::Chapter: flags, device, dtype, outputs; wb::Profiler

int main(int argc, char** argv) {
  wb::Chapter ch{"01_cold_64", "Chapter 01: a cold 64x64 matmul + add, profiled"};
  ch.experiment("cold", "0,0,3", "the process's first calls inside the window (truly cold)");
  return ch.main(argc, argv, [](wb::Run& run) {
    const int64_t n = run.size();  // --size (64)
    torch::manual_seed(0);
    auto x = torch::randn({n, n}, run.options());  // on --device, in --dtype
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;

    wb::ProfilerOptions opts;        // torch.profiler.profile(
    opts.schedule = run.schedule();  //   schedule=schedule(wait=1, warmup=1, active=3),
    opts.cuda = run.on_cuda();       //   activities=[CPU, CUDA])
    wb::Profiler prof(opts);
    prof.start();
    for (int i = 0; i < run.schedule().total_steps(); ++i) {
      {
        wb::Annotation a("matmul_add");  // with record_function("matmul_add"):
        y = torch::add(torch::matmul(x, w), b);
      }
      prof.step();                // prof.step()
      run.stop_if_interrupted();  // Ctrl-C stops here, before any output is written
    }
    prof.stop();  // the end of the `with profile(...)` block

    // table.txt (key_averages().table()), trace.json, timeline.svg, and the lessons judged on
    // the trace; the exit code is 3 under --check when a lesson does not hold.
    return run.exit_code(run.report(prof.results().back()));
  });
}
