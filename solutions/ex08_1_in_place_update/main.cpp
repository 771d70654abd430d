// Exercise 08.1 -- an update in place allocates nothing: a solution.              (chapter 08_memory)
//
// Each step moves a weight against its gradient, w = w - 0.01 * g: two new [tokens, hidden]
// tensors per step (the product and the difference), and the old w freed. Make the update write
// into w itself, then read the table's CPU Mem column and the memory lane: what does the
// 'update' region allocate now? The profile records every allocation (profile_memory).
//
//   build:  cmake --build build --target ex08_1_in_place_update
//   run:    build/bin/ex08_1_in_place_update
//   check:  build/bin/exercise check ex08.1    stuck?  build/bin/exercise hint ex08.1
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex08_1_in_place_update", "Exercise 08.1: an update in place allocates nothing"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t tokens = 512, hidden = 1024;
    auto w = torch::randn({tokens, hidden}, run.options());
    const auto g = torch::randn({tokens, hidden}, run.options());
    auto step = [&] {
      wb::Annotation a("update");
      w.sub_(g, 0.01);  // aten::sub_: w -= 0.01 * g in one pass, into w (alpha is a number, not a tensor)
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    ex::Workload wl;
    wl.annotation = "update";
    wl.profile_memory = true;
    run.profile(step, wl);
    run.result("w", w);  // the harness checks w against the exercise's own numbers
  });
}
