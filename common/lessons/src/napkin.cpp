#include "workbook/napkin.hpp"

#include <sstream>

#include "workbook/peaks.hpp"

namespace wb {

namespace {
std::string fixed(double v, int digits) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}
std::string si(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000.0 && i < 5) {
    v /= 1000.0;
    ++i;
  }
  return fixed(v, v < 10 ? 2 : 1) + " " + prefixes[i] + unit;
}
// "  H200 SXM peaks (source): 989 TFLOP/s dense bf16, 4.80 TB/s memory\n", or why none.
std::string peak_line(const DevicePeak* peak, int dtype_bytes, const std::string& device_name) {
  std::ostringstream os;
  if (!peak) {
    os << "  peak rates: unknown for '" << (device_name.empty() ? "this CPU" : device_name)
       << "' (no % of peak; see common/core/data/device_peaks.json for the table)\n";
    return os.str();
  }
  const double tf = peak_tflops(*peak, dtype_bytes);
  os << "  " << peak->model << " peaks (" << peak->source << "): ";
  if (tf > 0) os << fixed(tf, 0) << " TFLOP/s " << (dtype_bytes == 2 ? "dense bf16" : "fp32") << ", ";
  os << fixed(peak->mem_tbps, 2) << " TB/s memory\n";
  return os.str();
}
double ideal_us(double amount, double per_second) { return per_second > 0 ? amount / per_second * 1e6 : 0; }
}  // namespace

std::string napkin_math(const Problem& p, const std::string& device_name) {
  const double n = static_cast<double>(p.n), batch = static_cast<double>(p.batch);
  const double flops = 2.0 * n * n * n * batch;                   // one multiply-add = 2 FLOPs, N^3 of them
  const double gemm_bytes = 3.0 * n * n * batch * p.dtype_bytes;  // read x, w; write x@w
  const double add_bytes = 3.0 * n * n * batch * p.dtype_bytes;   // read x@w, b; write y
  std::ostringstream os;
  os << "Napkin math (N=" << p.n << (p.batch > 1 ? ", batch " + std::to_string(p.batch) : std::string())
     << ", " << p.dtype_bytes << " bytes/element):\n"
     << "  matmul: 2*N^3" << (p.batch > 1 ? "*batch" : "") << " = " << si(flops, "FLOP")
     << "; moves at least 3*N^2*" << p.dtype_bytes << " = " << si(gemm_bytes, "B") << " (intensity "
     << fixed(flops / gemm_bytes, 1) << " FLOP/B)\n"
     << "  add:    N^2 adds, moves 3*N^2*" << p.dtype_bytes << " = " << si(add_bytes, "B") << "\n";
  const DevicePeak* peak = find_peak(device_name);
  os << peak_line(peak, p.dtype_bytes, device_name);
  if (const double tf = peak ? peak_tflops(*peak, p.dtype_bytes) : 0; tf > 0)
    os << "  ideal matmul time at peak: " << fixed(flops / (tf * 1e12) * 1e6, 3)
       << " us; ideal add time: " << fixed(add_bytes / (peak->mem_tbps * 1e12) * 1e6, 3) << " us\n"
       << "  (the measured kernel times and their % of peak are in the lessons below)\n";
  return os.str();
}

std::string napkin_linear(const Problem& p, bool bias, const std::string& device_name) {
  const double m = static_cast<double>(p.m), k = static_cast<double>(p.k), n = static_cast<double>(p.n);
  const double flops = 2 * m * k * n;
  const double bytes = (m * k + k * n + m * n + (bias ? n : 0)) * p.dtype_bytes;  // x, W, y (+ b)
  std::ostringstream os;
  os << "Napkin math (nn.Linear(" << p.k << ", " << p.n << ") on " << p.m << " rows, " << p.dtype_bytes
     << " bytes/element):\n"
     << "  y = x @ W^T" << (bias ? " + b" : "") << ": 2*" << p.m << "*" << p.k << "*" << p.n << " = "
     << si(flops, "FLOP") << "; moves x, W" << (bias ? ", b" : "") << " and y = " << si(bytes, "B")
     << " (intensity " << fixed(flops / bytes, 1) << " FLOP/B)\n"
     << "  W^T is a view (aten::t): strides swapped on the CPU, no bytes moved"
     << (bias ? "; the bias is added in the GEMM's epilogue, no separate add kernel\n" : "\n");
  const DevicePeak* peak = find_peak(device_name);
  os << peak_line(peak, p.dtype_bytes, device_name);
  if (peak && peak_tflops(*peak, p.dtype_bytes) > 0)
    os << "  ideal time: " << fixed(ideal_us(flops, peak_tflops(*peak, p.dtype_bytes) * 1e12), 3)
       << " us of math, " << fixed(ideal_us(bytes, peak->mem_tbps * 1e12), 3)
       << " us of memory: far below a kernel launch (~2-3 us), so this GEMM is overhead-bound\n";
  return os.str();
}

std::string napkin_geglu(const Problem& p, const std::string& device_name) {
  const double m = static_cast<double>(p.m), k = static_cast<double>(p.k), n = static_cast<double>(p.n);
  const double flops = 2 * m * k * n;          // each of gate, up, down
  const double inter = m * n * p.dtype_bytes;  // one [m, n] tensor (g, u, h or y)
  std::ostringstream os;
  os << "Napkin math (GeGLU MLP: " << p.m << " tokens, dim " << p.k << ", hidden " << p.n << ", "
     << p.dtype_bytes << " bytes/element):\n"
     << "  gate, up: [" << p.m << "," << p.k << "] @ [" << p.k << "," << p.n << "]; down: [" << p.m << ","
     << p.n << "] @ [" << p.n << "," << p.k << "]\n"
     << "  each GEMM: 2*" << p.m << "*" << p.k << "*" << p.n << " = " << si(flops, "FLOP")
     << " (the same for all three), 3 GEMMs = " << si(3 * flops, "FLOP") << "\n"
     << "  the intermediate [" << p.m << "," << p.n << "] = " << si(inter, "B") << "\n"
     << "  pointwise, eager: gelu reads g, writes h (2 x), mul reads h and u, writes y (3 x): 5 x = "
     << si(5 * inter, "B") << "\n"
     << "  pointwise, fused: read g and u, write y: 3 x = " << si(3 * inter, "B")
     << " (h never reaches memory)\n";
  const DevicePeak* peak = find_peak(device_name);
  os << peak_line(peak, p.dtype_bytes, device_name);
  if (peak && peak_tflops(*peak, p.dtype_bytes) > 0) {
    const double bw = peak->mem_tbps * 1e12;
    os << "  ideal: each GEMM " << fixed(ideal_us(flops, peak_tflops(*peak, p.dtype_bytes) * 1e12), 1)
       << " us at peak; pointwise eager " << fixed(ideal_us(5 * inter, bw), 1) << " us, fused "
       << fixed(ideal_us(3 * inter, bw), 1) << " us at " << fixed(peak->mem_tbps, 2) << " TB/s\n";
  }
  return os.str();
}

}  // namespace wb
