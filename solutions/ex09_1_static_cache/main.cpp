// Solution to exercise 09.1 -- a static KV cache.                  (chapter 09_llm_prefill_decode)
#include <ATen/ops/arange.h>
#include <ATen/ops/index_copy.h>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex09_1_static_cache", "Exercise 09.1: a static KV cache"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t heads = 4, head_dim = 64, capacity = 256;
    auto cache = torch::zeros({1, heads, capacity, head_dim}, run.options());  // once, full size
    auto positions =
        torch::arange(capacity, at::TensorOptions().dtype(at::kLong).device(run.options().device()));
    int64_t pos = 0;
    torch::Tensor total;
    auto step = [&] {
      wb::Annotation a("decode");
      const auto row = torch::randn({1, heads, 1, head_dim}, run.options());
      cache.index_copy_(2, positions.narrow(0, pos, 1), row);  // in place, at the position
      ++pos;
      total = cache.narrow(2, 0, pos).sum();  // the rows written so far
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("cache", cache);  // the harness checks the rows and their sum against its own draws
    run.result("total", total);
  });
}
