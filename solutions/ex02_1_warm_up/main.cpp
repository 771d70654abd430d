// Exercise 02.1 -- keep the first call's setup out of the profile: a solution.  (chapter 02_warmup; GPU)
//
// Run the step a few times before profiling, then wait for the GPU: a launch returns before
// its kernel has run, and the module loading happens when the kernel is first launched. After
// that the recorded steps hold only the workload (and the profiler's own start-up, which is the
// subject of exercise 02.2). Raising the schedule's wait/warmup steps works too: the profiler
// then runs a few steps unrecorded before the ones it keeps.
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex02_1_warm_up", "Exercise 02.1: keep the first call's setup out of the profile"};
  e.defaults().schedule = "0,0,3";  // record from the first step on

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
    };

    for (int i = 0; i < 3; ++i) step();  // the same calls, unrecorded: first-call setup happens here
    wb::synchronize_device();            // ... and has finished on the GPU before the profiler starts

    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
