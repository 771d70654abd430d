// Exercise 02.2 -- catch the profiler at work: a solution.              (chapter 02_warmup; GPU)
//
// With warmup = 0 the profiler prepares and starts in the same step, so its first buffer
// request happens while it records. (With a warmup step it asks for buffers during that
// step, which is thrown away.) That is what the schedule's warmup steps are for.
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex02_2_buffer_request", "Exercise 02.2: catch the profiler at work"};
  e.defaults().schedule = "0,0,3";  // no wait, no warmup: recording starts with the profiler

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
