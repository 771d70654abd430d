// Measurements shared by the exercise programs and the checker, so both read a trace the same
// way. Torch-free: the exercise runtime (LibTorch side) and the checker (wb_lessons) include it.
#pragma once

#include <string>
#include <vector>

#include "workbook/trace_model.hpp"

namespace exercise {

// The GEMMs of the recorded steps (ProfilerStep windows). On a GPU trace: the GEMM kernels (the
// ones the lesson's throughput fact takes its median over). On a CPU-only trace: the outermost
// GEMM ops (wb::is_gemm_op: aten::mm, bmm, addmm, ...), whose CPU time is the multiply itself.
// The median and the mean are wb::median and wb::mean of `us`.
struct GemmSamples {
  std::vector<double> us;  // every sample, in the order they ran (microseconds)
  int count = 0;
  double min_us = 0, median_us = 0, mean_us = 0, max_us = 0;  // 0 when count == 0
  std::string where;  // "GEMM kernels on the GPU" / "aten::mm/bmm/addmm on the CPU"
};
GemmSamples gemm_samples(const wb::TraceModel& m);

// "20 samples (GEMM kernels on the GPU): min 168.2 us, max 177.6 us" (not the median nor the
// mean: ex04.2 asks the learner to compute those)
std::string describe(const GemmSamples& g);

}  // namespace exercise
