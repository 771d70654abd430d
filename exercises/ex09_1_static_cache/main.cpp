// Exercise 09.1 -- a static KV cache.                              (chapter 09_llm_prefill_decode)
//
// Each step appends one row (one token's keys) to a cache and reads the whole cache. Growing the
// cache with torch::cat makes a new, longer tensor and copies everything so far, every step.
// Allocate the cache once, at its full capacity, and write each step's row into it in place at
// the step's position; read back only the rows written so far. The trace then shows an in-place
// write and no cat.
//
//   build:  cmake --build build --target ex09_1_static_cache
//   run:    build/bin/ex09_1_static_cache
//   check:  build/bin/exercise check ex09.1    stuck?  build/bin/exercise hint ex09.1
#include <ATen/ops/cat.h>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex09_1_static_cache", "Exercise 09.1: a static KV cache"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t heads = 4, head_dim = 64, capacity = 256;
    auto cache = torch::empty({1, heads, 0, head_dim}, run.options());
    int64_t pos = 0;
    torch::Tensor total;
    auto step = [&] {
      wb::Annotation a("decode");
      const auto row = torch::randn({1, heads, 1, head_dim}, run.options());
      // TODO(ex09.1): write the row into a cache allocated once, at position pos.
      cache = torch::cat({cache, row}, 2);
      ++pos;
      total = cache.sum();  // stands in for attention over the rows so far
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    if (pos >= capacity) throw std::runtime_error("the cache is full");
    run.profile(step);
    run.result("cache", cache);  // the harness checks the rows and their sum against its own draws
    run.result("total", total);
  });
}
