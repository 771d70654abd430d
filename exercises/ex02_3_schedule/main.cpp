// Exercise 02.3 -- choose the steps the profiler keeps.                     (chapter 02_warmup)
//
// The schedule "W,WU,A" says what the profiler does with each step of the loop: the first W
// steps it ignores (wait), the next WU it records and throws away (warmup), the next A it keeps
// (active). Steps are numbered from 0, and each kept step is a ProfilerStep#N range in the
// trace. The chapters use 1,1,3 and keep ProfilerStep#2, #3 and #4.
// Write my_schedule(first, count): the schedule that keeps exactly `count` steps starting at
// ProfilerStep#first, with one warmup step before them, as the chapters do. Your target steps
// depend on your name: the program's first line names them. (A trace never shows warmup steps,
// so the check looks at the steps kept.)
//
//   build:  cmake --build build --target ex02_3_schedule
//   run:    build/bin/ex02_3_schedule --student YOUR_NAME     (the first lines: your target, the schedule)
//   check:  build/bin/exercise check ex02.3 --student YOUR_NAME    stuck?  build/bin/exercise hint ex02.3
#include "exercise.hpp"

#include <string>

// TODO(ex02.3): the schedule "W,WU,A" that keeps ProfilerStep#first .. #first+count-1 after one
// warmup step.
std::string my_schedule(int64_t first, int64_t count) {
  (void)first, (void)count;
  return "1,1,3";
}

int main(int argc, char** argv) {
  ex::Exercise e{"ex02_3_schedule", "Exercise 02.3: choose the steps the profiler keeps"};
  e.defaults().schedule_for_steps = my_schedule;

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;

    run.profile([&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
