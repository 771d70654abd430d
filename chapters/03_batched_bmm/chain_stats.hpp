// Chapter 03's own reading of a trace: what one "matmul_add" costs on the CPU side and what it
// launches, so the 2-D and the batched runs can be put side by side. Torch-free, so the tests
// use it on recorded traces too.
#pragma once

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "workbook/model.hpp"

namespace ch03 {

struct ChainStats {
  int steps = 0;                 // "matmul_add" annotations measured
  std::string gemm_op;           // the op under aten::matmul that does the multiply: aten::mm / aten::bmm
  double ops_per_step = 0;       // aten:: ops under the annotation, per step
  double shape_ops_per_step = 0; // of which view/expand/reshape/... (neither the GEMM op nor add)
  double matmul_us = 0;          // median aten::matmul duration
  double gemm_op_us = 0;         // median duration of the GEMM op inside it
  double shape_us = 0;           // median time aten::matmul spends outside its GEMM op
  double step_us = 0;            // median matmul_add duration
  double gemm_kernels_per_step = 0;
  std::array<int, 3> gemm_grid{0, 0, 0};  // launch grid of the first GEMM kernel (GPU)
  long long gemm_blocks() const { return 1LL * gemm_grid[0] * gemm_grid[1] * gemm_grid[2]; }
};

inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline bool is_gemm_op(const std::string& name) {
  return name == "aten::mm" || name == "aten::bmm" || name == "aten::addmm" || name == "aten::baddbmm";
}

inline bool is_gemm_kernel(const std::string& name) {
  for (const char* k : {"nvjet", "gemm", "cutlass", "xmma", "cublas"})
    if (name.find(k) != std::string::npos) return true;
  return false;
}

inline ChainStats chain_stats(const wb::TraceModel& m, const std::string& annotation = "matmul_add") {
  ChainStats s;
  std::vector<double> matmul, gemm_op, shape, step;
  int ops = 0, shape_ops = 0, gemm_kernels = 0;
  for (wb::EventIdx a : m.find(annotation)) {
    if (m.at(a).kind != wb::Kind::UserAnnotation) continue;  // the CPU side, not the GPU copy
    s.steps++;
    step.push_back(m.at(a).dur_ns / 1000.0);
    // Walk the annotation's subtree: count ops, find aten::matmul and what it calls.
    std::vector<wb::EventIdx> todo(m.children(a).begin(), m.children(a).end());
    while (!todo.empty()) {
      const wb::EventIdx i = todo.back();
      todo.pop_back();
      const wb::Event& e = m.at(i);
      for (wb::EventIdx c : m.children(i)) todo.push_back(c);
      if (e.kind == wb::Kind::CpuOp) {
        ops++;
        if (!is_gemm_op(e.name) && e.name != "aten::matmul" && e.name != "aten::add" &&
            e.name != "aten::resolve_conj")
          shape_ops++;
      }
      if (e.name != "aten::matmul") continue;
      double inner = 0;
      for (wb::EventIdx c : m.children(i))
        if (is_gemm_op(m.at(c).name)) {
          inner += m.at(c).dur_ns / 1000.0;
          s.gemm_op = m.at(c).name;
          // The kernels its runtime/driver calls launched (anywhere below it).
          std::vector<wb::EventIdx> calls(m.children(c).begin(), m.children(c).end());
          while (!calls.empty()) {
            const wb::EventIdx r = calls.back();
            calls.pop_back();
            for (wb::EventIdx cc : m.children(r)) calls.push_back(cc);
            for (wb::EventIdx d : m.launched(r)) {
              const wb::Event& k = m.at(d);
              if (k.kind != wb::Kind::Kernel || !is_gemm_kernel(k.name)) continue;
              gemm_kernels++;
              if (s.gemm_grid[0] == 0 && k.kernel) s.gemm_grid = k.kernel->grid;
            }
          }
        }
      matmul.push_back(e.dur_ns / 1000.0);
      gemm_op.push_back(inner);
      shape.push_back(e.dur_ns / 1000.0 - inner);
    }
  }
  if (s.steps == 0) return s;
  s.ops_per_step = static_cast<double>(ops) / s.steps;
  s.shape_ops_per_step = static_cast<double>(shape_ops) / s.steps;
  s.matmul_us = median_of(matmul);
  s.gemm_op_us = median_of(gemm_op);
  s.shape_us = median_of(shape);
  s.step_us = median_of(step);
  s.gemm_kernels_per_step = static_cast<double>(gemm_kernels) / s.steps;
  return s;
}

// Two columns: the 2-D run and the batched run.
inline std::string side_by_side(const ChainStats& flat, const ChainStats& batched, int batch) {
  char line[256];
  std::string out;
  auto row = [&](const char* what, const std::string& a, const std::string& b) {
    std::snprintf(line, sizeof line, "  %-34s %18s %18s\n", what, a.c_str(), b.c_str());
    out += line;
  };
  auto us = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f us", v);
    return std::string(b);
  };
  auto num = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return std::string(b);
  };
  auto grid = [](const ChainStats& s) {
    if (s.gemm_grid[0] == 0) return std::string("-");
    return "[" + std::to_string(s.gemm_grid[0]) + "," + std::to_string(s.gemm_grid[1]) + "," +
           std::to_string(s.gemm_grid[2]) + "]";
  };
  out += "2-D vs batched, per step (medians over the active steps):\n";
  row("", "2-D (N,N)", "batched (" + std::to_string(batch) + ",N,N)");
  row("aten::matmul calls", flat.gemm_op.empty() ? "-" : flat.gemm_op, batched.gemm_op.empty() ? "-" : batched.gemm_op);
  row("aten:: ops under matmul_add", num(flat.ops_per_step), num(batched.ops_per_step));
  row("  of which view/expand/reshape/...", num(flat.shape_ops_per_step), num(batched.shape_ops_per_step));
  row("aten::matmul", us(flat.matmul_us), us(batched.matmul_us));
  row("  inside its mm/bmm", us(flat.gemm_op_us), us(batched.gemm_op_us));
  row("  outside it (shape bookkeeping)", us(flat.shape_us), us(batched.shape_us));
  row("matmul_add", us(flat.step_us), us(batched.step_us));
  if (flat.gemm_kernels_per_step > 0 || batched.gemm_kernels_per_step > 0) {  // GPU runs only
    row("GEMM kernels launched", num(flat.gemm_kernels_per_step), num(batched.gemm_kernels_per_step));
    row("GEMM grid", grid(flat), grid(batched));
  }
  return out;
}

// The chapter's own checks on the pair (what the lessons cannot see from one trace).
struct Check {
  std::string text;  // the stated relationship
  bool ok = false;
  std::string measured;
};

inline std::vector<Check> compare_checks(const ChainStats& flat, const ChainStats& batched, int batch) {
  std::vector<Check> out;
  char m[160];
  std::snprintf(m, sizeof m, "2-D: %s, batched: %s", flat.gemm_op.c_str(), batched.gemm_op.c_str());
  out.push_back({"the 2-D matmul calls aten::mm, the batched one aten::bmm",
                 flat.gemm_op == "aten::mm" && batched.gemm_op == "aten::bmm", m});
  std::snprintf(m, sizeof m, "%.3g vs %.3g ops per step", batched.ops_per_step, flat.ops_per_step);
  out.push_back({"the batched chain runs >= 2x the CPU ops of the 2-D one (view/expand/reshape)",
                 flat.ops_per_step > 0 && batched.ops_per_step >= 2 * flat.ops_per_step, m});
  std::snprintf(m, sizeof m, "%.1f vs %.1f us outside mm/bmm", batched.shape_us, flat.shape_us);
  out.push_back({"batched aten::matmul spends longer outside its GEMM op than the 2-D one",
                 batched.shape_us > flat.shape_us, m});
  if (flat.gemm_blocks() > 0 && batched.gemm_blocks() > 0) {  // GPU traces with launch configs
    std::snprintf(m, sizeof m, "%.3g launch(es) per step; %lld vs %lld blocks (batch %d)",
                  batched.gemm_kernels_per_step, batched.gemm_blocks(), flat.gemm_blocks(), batch);
    out.push_back({"one GEMM launch covers the whole batch: 1 per step, its grid >= batch/2 x the 2-D grid",
                   batched.gemm_kernels_per_step == 1 &&
                       2 * batched.gemm_blocks() >= static_cast<long long>(batch) * flat.gemm_blocks(),
                   m});
  }
  return out;
}

inline std::string render(const std::vector<Check>& checks) {
  std::string out = "Chapter checks (2-D vs batched):\n";
  for (const auto& c : checks)
    out += std::string("  [") + (c.ok ? "PASS" : "FAIL") + "] " + c.text + "\n         measured: " +
           c.measured + "\n";
  return out;
}

}  // namespace ch03
