// Measurements shared by the exercise programs and the checker, so both read a trace the same
// way. Torch-free: the exercise runtime (LibTorch side) and the checker (wb_core) include it.
#pragma once

#include <string>

#include "workbook/model.hpp"

namespace exercise {

// The GEMMs of the recorded steps (ProfilerStep windows). On a GPU trace: the GEMM kernels, with
// the median the lesson's throughput fact uses. On a CPU-only trace: the aten::mm / aten::bmm /
// aten::addmm ops, whose CPU time is the multiply itself.
struct GemmSamples {
  int count = 0;
  double min_us = 0, median_us = 0, mean_us = 0, max_us = 0;  // 0 when count == 0
  std::string where;  // "GEMM kernels on the GPU" / "aten::mm/bmm/addmm on the CPU"
};
GemmSamples gemm_samples(const wb::TraceModel& m);

// "20 samples (GEMM kernels on the GPU): min 168.2 us, median 169.9 us, mean 171.0 us, max 177.6 us"
std::string describe(const GemmSamples& g);

}  // namespace exercise
