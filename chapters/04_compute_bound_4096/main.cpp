// Chapter 04 — make the work big enough and the GPU becomes the bottleneck.
//
// The chapter-01 workload at 4096x4096 (bf16 on a GPU): one GEMM is 2*4096^3 = 137 GFLOP,
// ~170 us on an H200, so each step's kernels outlast the CPU's ~60 us of launching them. The
// CPU runs ahead, the launch queue fills, and the table's Self CUDA total catches up with the
// Self CPU total. Then: the same GEMM on the same data does not always take the same time;
// `--schedule 0,0,20` records 20 of them to read as a distribution rather than a mean.
//
// Without a GPU the default size is 1024 (2*1024^3 = 2.1 GFLOP per step in fp32; 4096 would
// take 64x longer on a laptop CPU), and the chapter checks the CPU-side version of the lesson:
// the multiply itself dominates each step.
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include <cstdio>

#include "distribution.hpp"
#include "workbook/chapter.hpp"
#include "workbook/trace_reader.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"04_compute_bound_4096", "Chapter 04: a 4096x4096 matmul + add is compute-bound"};
  int warmup_iters = 3;
  ch.app()
      .add_option("--warmup-iters", warmup_iters,
                  "untimed iterations (then a device synchronize) before the profiler starts")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  ch.app().get_option("--size")->default_str("4096 on a GPU, 1024 on a CPU");
  bool cpu_size_picked = false;
  ch.app().final_callback([&] {  // after parsing: pick the size for the device, unless given
    if (ch.app().get_option("--size")->count() > 0) return;
    const auto& dev = ch.defaults().device;
    const bool gpu = dev == "cuda" || (dev == "auto" && wb::cuda_available());
    ch.defaults().size = gpu ? 4096 : 1024;
    cpu_size_picked = !gpu;
  });

  return ch.main(argc, argv, [&](wb::Run& run) {
    const int64_t n = run.size();
    if (cpu_size_picked)
      run.say("No GPU: using --size 1024 instead of 4096 (2*1024^3 = 2.1 GFLOP per step in fp32, a second\n"
              "or so on a laptop CPU; 4096 is 64x the work). Pass --size 4096 to run the GPU size anyway.");
    torch::manual_seed(0);
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
    };
    for (int i = 0; i < warmup_iters; ++i) step();  // as in chapter 02: first-call costs stay out
    wb::synchronize_device();

    auto cycle = run.profile(step);
    const wb::RunOutputs out = run.report(cycle);

    const wb::Trace trace = wb::read_trace(out.trace);
    const wb::TraceModel model(trace);
    const ch04::Distribution d = ch04::gemm_durations(model);
    run.say(ch04::render(d));
    if (d.samples.size() < 10)
      run.say("(a handful of samples says little about a distribution: try --schedule 0,0,20)");

    int rc = run.exit_code(out);
    if (!run.on_cuda()) {
      // The CPU-side lesson: the arithmetic dominates each step. On a CPU it runs inside
      // aten::mm and aten::add; everything else in the step is overhead, < 2% when compute-bound
      // (1024 on a 2-core VM: ~0.1%; 64x64: ~10%, the overhead-bound case of chapter 01).
      const ch04::CpuShares s = ch04::cpu_shares(model);
      const bool ok = s.steps > 0 && s.overhead < 0.02;
      const double gflop = 2.0 * n * n * n / 1e9;
      char line[640];
      std::snprintf(line, sizeof line,
                    "Chapter check (CPU edition):\n"
                    "  [%s] compute-bound: overhead (matmul_add outside aten::mm and aten::add) < 2%% of the step\n"
                    "         measured: overhead %.2f%%, aten::mm %.1f%%, aten::add %.1f%% (medians over %d steps)\n"
                    "         aten::mm: %.3g GFLOP in median %s = %.3g GFLOP/s\n"
                    "CPU edition: the compute-bound ratio (Self CUDA vs Self CPU), the CPU running ahead of the\n"
                    "GPU (launch-to-start latency), the %% of the H200's peak and the GEMM's Memset need a GPU:\n"
                    "see expected_output/h200/04_compute_bound_4096/ and README.md.\n",
                    ok ? "PASS" : "FAIL", 100 * s.overhead, 100 * s.mm, 100 * s.add, s.steps, gflop,
                    ch04::fmt_us(d.median).c_str(), d.median > 0 ? gflop * 1e6 / d.median : 0.0);
      run.say(line);
      if (!ok && run.config().check) rc = 3;
    }
    return rc;
  });
}
