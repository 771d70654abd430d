// A learner's trick on exercise 08.1 (tests/test_exercises.cpp, "gaming"): an update in place
// that changes nothing, w.sub_(g, 0.0) -- no allocation, and no update either. The checker must
// see that w does not hold what the exercise's updates produce.
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex08_1_in_place_update", "Exercise 08.1: an update in place allocates nothing"};
  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t tokens = 512, hidden = 1024;
    auto w = torch::randn({tokens, hidden}, run.options());
    const auto g = torch::randn({tokens, hidden}, run.options());
    auto step = [&] {
      wb::Annotation a("update");
      w.sub_(g, 0.0);
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    ex::Workload wl;
    wl.annotation = "update";
    wl.profile_memory = true;
    run.profile(step, wl);
    run.result("w", w);
  });
}
