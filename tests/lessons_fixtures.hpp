// Synthetic traces for the lesson tests, built in memory (no reader involved).
//
// make_trace() lays out the workbook's workload the way Kineto records it: ProfilerStep#N >
// matmul_add > aten::matmul > aten::mm > [occupancy queries] > cuLaunchKernelEx -> GEMM
// kernel, then aten::add > cudaLaunchKernel -> add kernel, on one CPU thread and one stream,
// with the ids that link them (External id, correlation). Each knob moves one lesson fact.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "workbook/trace.hpp"

namespace fixtures {

inline std::filesystem::path data_dir() {
  return std::filesystem::path(WORKBOOK_ROOT) / "tests" / "data" / "lessons";
}

struct StepSpec {
  double width_us = 60;       // ProfilerStep width (grown if its content needs more)
  double gap_us = 1;          // matmul_add start -> aten::matmul start
  double gemm_us = 2;         // GEMM kernel duration
  double add_us = 1;          // add kernel duration
  int occupancy_queries = 0;  // cudaOccupancy* calls before the GEMM launch
};

struct Scenario {
  std::vector<StepSpec> steps = {{200, 20}, {70, 1.5}, {60, 1}};
  bool gpu = true;
  std::string device = "NVIDIA H200";
  int cc_major = 9;
  bool device_properties = true;
  bool kernel_info = true;
  double latency_us = 10;     // launch call start -> kernel start when the stream is free
  bool sync = true;           // cudaDeviceSynchronize after the last step
  double sync_extra_us = 15;  // sync length beyond the GPU work still queued
  std::string mm = "aten::mm";
  std::string gemm_name = "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT";
  std::vector<std::string> extra_ops_per_step;  // more cpu_ops inside matmul_add (hot loops, ...)
};

class Builder {
 public:
  wb::Trace trace;

  int64_t cpu(wb::Kind k, const std::string& name, double start_us, double dur_us) {
    wb::Event e = base(k, name, start_us, dur_us, 1, 1);
    e.id = ++ext_;
    trace.events.push_back(e);
    return ext_;
  }
  // A runtime/driver call inside op `op_ext`; with a kernel name, also the device work.
  void call(wb::Kind k, const std::string& name, double start_us, double dur_us, int64_t op_ext,
            const std::string& work = "", double work_us = 0, wb::Kind work_kind = wb::Kind::Kernel,
            double latency_us = 10, bool kernel_info = true, std::array<int, 3> grid = {4, 2, 1}) {
    wb::Event c = base(k, name, start_us, dur_us, 1, 1);
    c.id = ++corr_;
    c.linked_id = op_ext;
    trace.events.push_back(c);
    if (work.empty()) return;
    const double ks = std::max(start_us + latency_us, stream_free_);
    wb::Event w = base(work_kind, work, ks, work_us, 0, 7);
    w.id = corr_;
    w.linked_id = op_ext;
    if (work_kind == wb::Kind::Kernel && kernel_info) {
      wb::KernelInfo ki;
      const bool gemm = work.find("nvjet") != std::string::npos;
      ki.registers_per_thread = gemm ? 168 : 30;
      ki.shared_memory = gemm ? 164308 : 0;
      ki.grid = gemm ? grid : std::array<int, 3>{2, 1, 1};
      ki.block = gemm ? std::array<int, 3>{384, 1, 1} : std::array<int, 3>{128, 1, 1};
      w.kernel = ki;
    }
    if (work_kind != wb::Kind::Kernel) w.bytes = 4096;
    trace.events.push_back(w);
    stream_free_ = ks + work_us;
  }
  double stream_free() const { return stream_free_; }

 private:
  static wb::Event base(wb::Kind k, const std::string& name, double start_us, double dur_us, int64_t pid,
                        int64_t tid) {
    wb::Event e;
    e.name = name;
    e.kind = k;
    e.category = std::string(wb::kind_name(k));
    e.start_ns = static_cast<int64_t>(start_us * 1000);
    e.dur_ns = static_cast<int64_t>(dur_us * 1000);
    e.pid = pid;
    e.tid = tid;
    return e;
  }
  int64_t ext_ = 0, corr_ = 0;
  double stream_free_ = 0;
};

inline wb::Trace make_trace(const Scenario& s) {
  using wb::Kind;
  Builder b;
  b.trace.source = "<synthetic>";
  if (s.gpu && s.device_properties) {
    wb::DeviceProperties d;
    d.name = s.device;
    d.compute_major = s.cc_major;
    b.trace.devices.push_back(d);
  }
  double t = 100;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const StepSpec& st = s.steps[i];
    const double occ = 2.0 * st.occupancy_queries;
    const double extra = 3.0 * static_cast<double>(s.extra_ops_per_step.size());
    const double ann_len = st.gap_us + 40 + occ + extra;
    const double width = std::max(st.width_us, ann_len + 4);
    b.cpu(Kind::UserAnnotation, "ProfilerStep#" + std::to_string(2 + i), t, width);
    const double a = t + 2;
    b.cpu(Kind::UserAnnotation, "matmul_add", a, ann_len);
    double c = a + st.gap_us;
    const double mm_len = 20 + occ;
    b.cpu(Kind::CpuOp, "aten::matmul", c, mm_len + 2);
    const int64_t mm = b.cpu(Kind::CpuOp, s.mm, c + 1, mm_len);
    double k = c + 2;
    for (int q = 0; q < st.occupancy_queries; ++q, k += 2)
      b.call(Kind::Runtime, "cudaOccupancyMaxActiveBlocksPerMultiprocessor", k, 1.5, mm);
    if (s.gpu)
      b.call(Kind::Driver, "cuLaunchKernelEx", k + 8, 6, mm, s.gemm_name, st.gemm_us, Kind::Kernel,
             s.latency_us, s.kernel_info);
    c += mm_len + 3;
    const int64_t add = b.cpu(Kind::CpuOp, "aten::add", c, 10);
    if (s.gpu)
      b.call(Kind::Runtime, "cudaLaunchKernel", c + 2, 5, add,
             "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>>",
             st.add_us, Kind::Kernel, s.latency_us, s.kernel_info);
    c += 12;
    for (const auto& name : s.extra_ops_per_step) {
      b.cpu(Kind::CpuOp, name, c, 2);
      c += 3;
    }
    t += width + 5;
  }
  if (s.gpu && s.sync)
    b.call(Kind::Runtime, "cudaDeviceSynchronize", t, std::max(0.0, b.stream_free() - t) + s.sync_extra_us,
           0);
  return b.trace;
}

}  // namespace fixtures
