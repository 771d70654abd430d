// Lesson facts about throughput: the GEMM's achieved FLOP/s against the device's datasheet
// peak, from the trace's own FLOPs count or from the problem the run names.
//
//   throughput
//
// Registered at the end of this file (throughput_facts(), each entry with its default pattern); the
// chapters' patterns are in chapters/NN_name/lessons.json.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fact_view.hpp"
#include "workbook/lessons.hpp"
#include "workbook/peaks.hpp"
#include "workbook/rules.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

// ---- 11. achieved throughput ------------------------------------------------------------
// Without the problem size: the FLOPs the trace carries (record_shapes + with_flops: torch's
// formula per GEMM op) over the GPU time of the kernels those ops launched.
std::string throughput_from_flops(const View& v, Fact& f, const Problem& p) {
  const TraceModel& m = v.m;
  double flops = 0, gemm_us = 0;
  int ops = 0;
  std::vector<bool> counted(m.trace().events.size(), false);
  for (EventIdx d : v.device) {
    if (v.kclass(d) != KClass::Gemm) continue;
    const auto op = m.op_of(d);
    if (!op) continue;
    // The op that owns the launch, or the nearest ancestor with FLOPs (aten::linear > addmm).
    std::optional<EventIdx> with = op;
    while (with && m.at(*with).flops <= 0) with = m.parent(*with);
    if (!with) continue;
    gemm_us += us(m.at(d).dur_ns);
    if (!counted[*with]) {
      counted[*with] = true;
      flops += static_cast<double>(m.at(*with).flops);
      ++ops;
    }
  }
  if (ops == 0 || gemm_us <= 0)
    return "no FLOPs in this trace and no problem size: record with with_flops "
           "(Python: profile(record_shapes=True, with_flops=True); C++: "
           "wb::ProfilerOptions::with_flops) or pass --size N [--batch B --dtype]";
  const double tflops = flops / (gemm_us * 1e-6) / 1e12;
  const std::string dev = v.device_name();
  f.data["source"] = "trace FLOPs (with_flops)";
  f.data["gemm_flops"] = flops;
  f.data["gemm_us"] = r3(gemm_us);
  f.data["gemm_tflops"] = r3(tflops);
  f.data["device"] = dev;
  f.value = fmt::format("GEMM {:.3g} TFLOP/s: {:.4g} flop (the trace's FLOPs, {} ops) in {} of GEMM kernels",
                        tflops, flops, ops, us_str(gemm_us));
  add_evidence(f, fmt::format("{} GEMM ops with FLOPs; their kernels ran {}", ops, us_str(gemm_us)));
  const DevicePeak* peak = find_peak(dev);
  if (!peak || peak_tflops(*peak, p.dtype_bytes) <= 0)
    return fmt::format(
        "unknown peak for device '{}' (common/core/data/device_peaks.json lists the known ones)", dev);
  f.data["gemm_pct_of_peak"] = r3(100 * tflops / peak_tflops(*peak, p.dtype_bytes));
  f.value += fmt::format(" = {:.3g}% of {} peak {:.0f} TFLOP/s ({} B elements assumed; --dtype)",
                         f.data["gemm_pct_of_peak"].get<double>(), peak->model,
                         peak_tflops(*peak, p.dtype_bytes), p.dtype_bytes);
  return measured(f, "percent of the datasheet peak from the trace's own FLOPs count");
}

// A CPU-only trace: no device peak to judge against; still say what the trace's FLOPs give on
// the CPU. Returns why the fact is not applicable.
std::string cpu_throughput(const TraceModel& m, Fact& f) {
  double flops = 0;
  int64_t ns = 0;
  int ops = 0;
  for (const Event& e : m.trace().events)
    if (e.kind == Kind::CpuOp && e.flops > 0 && is_gemm_op(e.name)) {
      flops += static_cast<double>(e.flops);
      ns += e.dur_ns;
      ++ops;
    }
  if (ops > 0 && ns > 0) {
    f.data["source"] = "trace FLOPs (with_flops)";
    f.data["cpu_gemm_gflops"] = r3(flops / (static_cast<double>(ns) * 1e-9) / 1e9);
    f.value = fmt::format(
        "CPU GEMM ops: {:.4g} flop (the trace's FLOPs, {} calls) in {} of CPU time = "
        "{:.3g} GFLOP/s",
        flops, ops, us_str(us(ns)), f.data["cpu_gemm_gflops"].get<double>());
    return "CPU-only trace: no kernel times and no device peak to "
           "compare with (the CPU figure is above)";
  }
  // (The chapters' recorded verdicts read exactly this: keep it.)
  return "CPU-only trace: no kernel times";
}

std::string measure_throughput(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  if (!v.gpu) return cpu_throughput(m, f);
  const Problem& p = o.problem;
  // No problem size, or a rectangular one (m x k times k x n: chapters 06-07, the LLM of
  // chapters 09-10), which the square formula below does not describe: the trace's FLOPs.
  if (p.n <= 0 || p.m > 0) return throughput_from_flops(v, f, p);
  std::vector<double> gemm, ew;
  std::vector<std::pair<double, double>> copies;  // bytes, us
  for (EventIdx d : v.device) {
    const Event& e = m.at(d);
    const KClass k = v.kclass(d);
    if (k == KClass::Gemm) gemm.push_back(us(e.dur_ns));
    if (k == KClass::Elementwise) ew.push_back(us(e.dur_ns));
    // A device-to-device copy reads and writes every byte: twice the payload in traffic.
    if (e.kind == Kind::Memcpy && e.bytes > 0 && e.dur_ns > 0)
      copies.push_back({(is_dtod(e) ? 2.0 : 1.0) * static_cast<double>(e.bytes), us(e.dur_ns)});
  }
  const std::string dev = v.device_name();
  const DevicePeak* peak = find_peak(dev);
  const double n = static_cast<double>(p.n), b = static_cast<double>(p.batch);
  const double flops = 2 * b * n * n * n;                 // one multiply-add = 2 flop
  const double ew_bytes = 3 * b * n * n * p.dtype_bytes;  // read x@w and b, write y
  f.data["problem"] = {{"n", p.n}, {"batch", p.batch}, {"dtype_bytes", p.dtype_bytes}};
  f.data["device"] = dev;
  std::vector<std::string> parts;
  if (!gemm.empty()) {
    const double tflops = flops / (median(gemm) * 1e-6) / 1e12;
    f.data["gemm_median_us"] = r3(median(gemm));
    f.data["gemm_tflops"] = r3(tflops);
    if (peak && peak_tflops(*peak, p.dtype_bytes) > 0)
      f.data["gemm_pct_of_peak"] = r3(100 * tflops / peak_tflops(*peak, p.dtype_bytes));
    parts.push_back(fmt::format("GEMM {:.3g} TFLOP/s", tflops));
    add_evidence(f, fmt::format("GEMM: 2*{}*{}^3 flop in median {}", p.batch, p.n, us_str(median(gemm))));
  }
  if (!ew.empty()) {
    const double tbps = ew_bytes / (median(ew) * 1e-6) / 1e12;
    f.data["elementwise_median_us"] = r3(median(ew));
    f.data["elementwise_tbps"] = r3(tbps);
    if (peak) f.data["elementwise_pct_of_peak"] = r3(100 * tbps / peak->mem_tbps);
    parts.push_back(fmt::format("add {:.3g} TB/s", tbps));
    add_evidence(f, fmt::format("elementwise: 3*{}*{}^2*{} B in median {}", p.batch, p.n, p.dtype_bytes,
                                us_str(median(ew))));
  }
  if (!copies.empty()) {
    const double tbps = copies.front().first / (copies.front().second * 1e-6) / 1e12;
    f.data["memcpy_tbps"] = r3(tbps);
    if (peak) f.data["memcpy_pct_of_peak"] = r3(100 * tbps / peak->mem_tbps);
    parts.push_back(fmt::format("copy {:.3g} TB/s", tbps));
  }
  if (parts.empty()) return "no GEMM, elementwise or copy on the GPU";
  f.value = join(parts, ", ", "");
  if (!peak) {
    f.value += fmt::format(" (unknown peak for '{}')", dev);
    return fmt::format(
        "unknown peak for device '{}' (common/core/data/device_peaks.json lists the known ones)", dev);
  }
  f.data["peak"] = {{"model", peak->model},
                    {"tflops", peak_tflops(*peak, p.dtype_bytes)},
                    {"mem_tbps", peak->mem_tbps},
                    {"source", peak->source}};
  f.value += fmt::format(" of {} peak {:.0f} TFLOP/s, {:.2f} TB/s", peak->model,
                         peak_tflops(*peak, p.dtype_bytes), peak->mem_tbps);
  if (f.data.contains("gemm_pct_of_peak"))
    f.value += fmt::format(" (GEMM {:.3g}%)", f.data["gemm_pct_of_peak"].get<double>());
  return measured(f,
                  "percent of the datasheet peak: near it the kernel is compute- or "
                  "bandwidth-bound; far below it, the work is too small to fill the chip");
}

// The registry's entries of this file's facts (fact_view.hpp: ViewFact): id, title, why a
// CPU-only trace has nothing to measure, the measurement, what the default pattern's verdict
// means, the teaching order, the default pattern, whether it is about a chapter's workload only,
// and the docs/cheatsheet.md rows that name it first.
const std::vector<ViewFact>& throughput_facts() {
  static const std::vector<ViewFact> kFacts = {
      {"throughput",
       "Achieved throughput vs the device's peak",
       "",
       measure_throughput,
       {},
       120,
       R"json({"text": "the GEMM runs at >= 50% of the device's peak",
 "why": "datasheet peaks are rarely exceeded; half of it means the chip is busy",
 "all": [
      {"key": "/gemm_pct_of_peak", "op": ">=", "value": 50, "scope": "gpu"}
 ]})json",
       false,
       {{"**Near the chip's peak**",
         "kernel time vs the napkin math's ideal time",
         "long, back-to-back kernels",
         "04, 05",
         {}}}}};
  return kFacts;
}

}  // namespace wb
