// Shared by the benchmarks: the best of `reps` timed calls, after one warm-up call.
#pragma once

#include <algorithm>
#include <chrono>

template <class F>
double best_seconds(int reps, F&& f) {
  f();  // warm-up: page cache, allocator
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
