// Lesson facts about throughput: the GEMM's achieved FLOP/s against the device's datasheet
// peak, from the trace's own FLOPs count or from the problem the run names.
//
//   throughput
//
// Registered at the end of this file (throughput_facts(), each entry with its default pattern); the
// chapters' patterns are in chapters/NN_name/lessons.json.
#include <fmt/format.h>

#include <algorithm>
#include <map>
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
namespace {
// The ops a FLOP/s figure is about: GEMMs and convolutions with the trace's FLOPs (record_shapes +
// with_flops: torch's formula from the recorded shapes). Elementwise ops have a formula too, but
// their time is their bytes, not their arithmetic.
bool is_arithmetic_op(const Event& e) {
  return e.kind == Kind::CpuOp && e.flops > 0 &&
         (is_gemm_op(e.name) || classify_op(e.name) == OpClass::Convolution);
}

// Bytes per element of a type as the trace's "Input type" names it (0: unknown or none).
int dtype_bytes_of(std::string_view t) {
  if (t == "float") return 4;
  if (t == "double") return 8;
  if (t == "c10::BFloat16" || t == "c10::Half") return 2;
  if (t.find("Float8") != std::string_view::npos) return 1;
  return 0;
}
std::string dtype_label(std::string_view t) {
  if (t == "float") return "fp32";
  if (t == "double") return "fp64";
  if (t == "c10::BFloat16") return "bf16";
  if (t == "c10::Half") return "fp16";
  return std::string(t);
}

struct OpWork {
  double flops = 0, kernel_us = 0;
  int ops = 0, kernels = 0;
  bool tf32 = false;  // a kernel's name says it ran fp32 inputs on TF32 tensor cores
};
}  // namespace

// Without the problem size: the FLOPs the trace carries over the GPU time of the kernels that
// those same ops launched (correlation: a kernel belongs to the op its launch call ran in, and to
// that op's nearest ancestor with FLOPs: aten::linear > addmm, conv2d > cudnn_convolution), every
// kernel of theirs (a convolution's layout transposes too), judged against the peak for the element
// type the trace records for their inputs.
std::string throughput_from_flops(const View& v, Fact& f, const Problem& p) {
  const TraceModel& m = v.m;
  std::map<std::string, OpWork> by;  // "<family> <dtype>" -> work
  std::vector<bool> counted(m.trace().events.size(), false);
  for (EventIdx d : v.device) {
    if (m.at(d).kind != Kind::Kernel) continue;
    std::optional<EventIdx> with = m.op_of(d);
    while (with && !is_arithmetic_op(m.at(*with))) with = m.parent(*with);
    if (!with) continue;
    const Event& op = m.at(*with);
    const std::string key = std::string(is_gemm_op(op.name) ? "GEMM" : "convolution") + "|" + op.input_dtype;
    OpWork& w = by[key];
    w.kernel_us += us(m.at(d).dur_ns);
    ++w.kernels;
    w.tf32 = w.tf32 || m.at(d).name.find("tf32") != std::string::npos;
    if (!counted[*with]) {
      counted[*with] = true;
      w.flops += static_cast<double>(op.flops);
      ++w.ops;
    }
  }
  if (by.empty())
    return "no FLOPs in this trace and no problem size: record with with_flops "
           "(Python: profile(record_shapes=True, with_flops=True); C++: "
           "wb::ProfilerOptions::with_flops) or pass --size N [--batch B --dtype]";
  // The family and type with the most FLOPs is the figure; the others are evidence.
  const auto main = std::max_element(
      by.begin(), by.end(), [](const auto& a, const auto& b) { return a.second.flops < b.second.flops; });
  const std::string family = main->first.substr(0, main->first.find('|'));
  const std::string dtype = main->first.substr(main->first.find('|') + 1);
  const OpWork& w = main->second;
  const std::string dev = v.device_name();
  f.data["source"] = "trace FLOPs (with_flops)";
  f.data["ops"] = family;
  f.data["dtype"] = dtype.empty() ? "not recorded" : dtype_label(dtype);
  f.data["gemm_flops"] = w.flops;
  f.data["gemm_us"] = r3(w.kernel_us);
  f.data["gemm_kernels"] = w.kernels;
  if (w.kernel_us <= 0) return "the ops with FLOPs launched kernels of no recorded duration";
  const double tflops = w.flops / (w.kernel_us * 1e-6) / 1e12;
  f.data["gemm_tflops"] = r3(tflops);
  f.data["device"] = dev;
  f.value = fmt::format(
      "{} {:.3g} TFLOP/s: {:.4g} flop (the trace's FLOPs, {} {} ops) in {} of the {} kernels "
      "they launched",
      family, tflops, w.flops, w.ops, dtype.empty() ? "" : dtype_label(dtype), us_str(w.kernel_us),
      w.kernels);
  for (const auto& [key, o] : by)
    add_evidence(f, fmt::format("{} ops ({}): {} with {:.4g} flop; the {} kernels they launched ran {}",
                                key.substr(0, key.find('|')),
                                key.size() > key.find('|') + 1 ? dtype_label(key.substr(key.find('|') + 1))
                                                               : "type not recorded",
                                o.ops, o.flops, o.kernels, us_str(o.kernel_us)));
  const DevicePeak* peak = find_peak(dev);
  if (!peak)
    return fmt::format(
        "unknown peak for device '{}' (common/core/data/device_peaks.json lists the known ones)", dev);
  // The element type the trace records wins; --dtype only when it recorded none.
  int bytes = dtype_bytes_of(dtype);
  std::string basis;
  double peak_tf = 0;
  if (bytes == 4 && w.tf32) {  // fp32 inputs on TF32 tensor cores: half the bf16 dense rate
    peak_tf = peak->bf16_tflops / 2;
    basis = "TF32 tensor cores: a kernel's name holds 'tf32'; half the bf16 dense peak";
  } else if (bytes == 4) {
    peak_tf = peak_tflops(*peak, 4);
    basis = "fp32 on CUDA cores: the trace's input type 'float', no TF32 kernel";
  } else if (bytes == 2) {
    peak_tf = peak_tflops(*peak, 2);
    basis = fmt::format("{} dense tensor cores: the trace's input type", dtype_label(dtype));
  } else if (dtype.empty()) {
    bytes = p.dtype_bytes;
    peak_tf = peak_tflops(*peak, bytes);
    basis = fmt::format("{} B elements assumed: the trace records no input types (record_shapes); --dtype",
                        bytes);
  } else {
    return fmt::format("no peak in the table for the trace's input type '{}'", dtype);
  }
  if (peak_tf <= 0) return fmt::format("no peak figure for {} on {}", basis, peak->model);
  f.data["peak_tflops"] = peak_tf;
  f.data["peak_basis"] = basis;
  f.data["gemm_pct_of_peak"] = r3(100 * tflops / peak_tf);
  f.value += fmt::format(" = {:.3g}% of {} peak {:.3g} TFLOP/s ({})",
                         f.data["gemm_pct_of_peak"].get<double>(), peak->model, peak_tf, basis);
  return measured(f,
                  "percent of the datasheet peak for the element type the ops ran in, from the trace's own "
                  "FLOPs count over the time of the kernels those ops launched");
}

// A CPU-only trace: no device peak to judge against; still say what the trace's FLOPs give on
// the CPU. Returns why the fact is not applicable.
std::string cpu_throughput(const TraceModel& m, Fact& f) {
  double flops = 0;
  int64_t ns = 0;
  int ops = 0;
  bool conv = false;
  for (const Event& e : m.trace().events)
    if (is_arithmetic_op(e)) {
      flops += static_cast<double>(e.flops);
      ns += e.dur_ns;
      ++ops;
      conv = conv || !is_gemm_op(e.name);
    }
  if (ops > 0 && ns > 0) {
    f.data["source"] = "trace FLOPs (with_flops)";
    f.data["cpu_gemm_gflops"] = r3(flops / (static_cast<double>(ns) * 1e-9) / 1e9);
    f.value = fmt::format(
        "CPU GEMM {}ops: {:.4g} flop (the trace's FLOPs, {} calls) in {} of CPU time = "
        "{:.3g} GFLOP/s",
        conv ? "and convolution " : "", flops, ops, us_str(us(ns)), f.data["cpu_gemm_gflops"].get<double>());
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
