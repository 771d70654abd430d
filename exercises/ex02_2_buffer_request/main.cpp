// Exercise 02.2 -- catch the profiler at work.                          (chapter 02_warmup; GPU)
//
// The profiler is not free either. On a GPU it collects the GPU's activity in buffers, and
// asks for them while it runs; the trace calls that "Activity Buffer Request". This program
// warms up and then profiles with the chapters' schedule (wait 1, warmup 1, active 3), and its
// trace shows no such request: the profiler's own start-up happens in a step it does not keep.
// Change the schedule so that the profiler's start-up lands in a recorded step.
//
//   build:  cmake --build build --target ex02_2_buffer_request
//   run:    build/bin/ex02_2_buffer_request    (try --schedule W,WU,A on the command line first)
//   check:  build/bin/exercise check ex02.2    stuck?  build/bin/exercise hint ex02.2
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex02_2_buffer_request", "Exercise 02.2: catch the profiler at work"};
  // TODO(ex02.2): a schedule "W,WU,A" whose first recorded step sees the profiler start.
  e.defaults().schedule = "1,1,3";

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
    for (int i = 0; i < 3; ++i) step();  // warm: first-call setup stays out of the way
    wb::synchronize_device();

    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
