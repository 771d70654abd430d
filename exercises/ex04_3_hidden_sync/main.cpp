// Exercise 04.3 -- the hidden sync.                              (chapter 04_compute_bound_4096)
//
// Chapter 04 shows the CPU running ahead of a busy GPU: it queues step after step while the
// GEMMs run, and in the trace each step's kernels wait longer after their launch than the
// last step's did. This program does not run ahead, because of one innocent-looking line in
// its step. Find it in the trace (which op is new in the table? what does it wait for?), and
// keep what that line computes while letting the CPU run ahead again.
//
//   build:  cmake --build build --target ex04_3_hidden_sync
//   run:    build/bin/ex04_3_hidden_sync       (N = 4096 on a GPU, 512 on a CPU)
//   check:  build/bin/exercise check ex04.3    stuck?  build/bin/exercise hint ex04.3
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex04_3_hidden_sync", "Exercise 04.3: the hidden sync"};
  e.defaults().size = 4096;
  e.defaults().cpu_size = 512;

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;
    double checksum = 0;  // the sum of every step's output, printed at the end
    auto step = [&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
      // TODO(ex04.3): the same checksum, without making the step wait.
      checksum += y.sum(torch::kFloat).item<double>();
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    checksum = 0;
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
    run.say("checksum of the profiled steps: " + std::to_string(checksum));
    run.answer("checksum", checksum);
    // For the checker: one step's sum (every step computes the same y), read after profiling.
    run.reference("checksum_per_step", y.sum(torch::kFloat).item<double>());
  });
}
