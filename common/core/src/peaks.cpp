#include "workbook/peaks.hpp"

#include <algorithm>
#include <cctype>

namespace wb {

namespace {

// Sparsity doubles the tensor-core figures in NVIDIA's tables ("1,979 TFLOPS*" with a
// footnote); we keep the dense half, which is what a dense GEMM can reach.
constexpr std::string_view kA100 =
    "NVIDIA A100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/a100): BF16 312 TFLOPS "
    "dense (624 sparse), FP32 19.5 TFLOPS; HBM2e 1,555 GB/s (40GB), 1,935 GB/s (80GB PCIe), "
    "2,039 GB/s (80GB SXM)";
constexpr std::string_view kH100 =
    "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100): BF16 1,979 (SXM) / "
    "1,671 (NVL) / 1,513 (PCIe) TFLOPS sparse, half that dense; FP32 67 / 60 / 51 TFLOPS; "
    "3.35 / 3.9 / 2.0 TB/s";
constexpr std::string_view kH200 =
    "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200): BF16 1,979 (SXM) / "
    "1,671 (NVL) TFLOPS sparse, half that dense; FP32 67 / 60 TFLOPS; HBM3e 4.8 TB/s";
constexpr std::string_view kL4 =
    "NVIDIA L4 datasheet (nvidia.com/en-us/data-center/l4): BF16 242 TFLOPS sparse (121 dense), "
    "FP32 30.3 TFLOPS, 300 GB/s";
constexpr std::string_view kL40S =
    "NVIDIA L40S datasheet (nvidia.com/en-us/data-center/l40s): BF16 733 TFLOPS sparse (362 dense), "
    "FP32 91.6 TFLOPS, 864 GB/s";
constexpr std::string_view kA10 =
    "NVIDIA A10 datasheet (nvidia.com/en-us/data-center/products/a10-gpu): BF16 250 TFLOPS sparse "
    "(125 dense), FP32 31.2 TFLOPS, 600 GB/s";

struct Entry {
  std::string_view tokens;  // every word must appear in the device name (any order)
  DevicePeak peak;
};

// Most specific first: "H200 NVL" before "H200", "A100 80GB PCIe" before "A100".
const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {"h200 nvl", {"h200-nvl", "H200 NVL", 835, 60, 4.8, kH200}},
      {"h200", {"h200", "H200 SXM", 989, 67, 4.8, kH200}},
      {"h100 nvl", {"h100-nvl", "H100 NVL", 835, 60, 3.9, kH100}},
      {"h100 pcie", {"h100-pcie", "H100 PCIe", 756, 51, 2.0, kH100}},
      {"h100", {"h100", "H100 SXM", 989, 67, 3.35, kH100}},
      {"a100 80gb pcie", {"a100-pcie", "A100 PCIe 80GB", 312, 19.5, 1.935, kA100}},
      {"a100 pcie", {"a100-pcie", "A100 PCIe 40GB", 312, 19.5, 1.555, kA100}},
      {"a100 80gb", {"a100", "A100 SXM 80GB", 312, 19.5, 2.039, kA100}},
      {"a100", {"a100", "A100 SXM 40GB", 312, 19.5, 1.555, kA100}},
      {"l40s", {"l40s", "L40S", 362, 91.6, 0.864, kL40S}},
      {"l4", {"l4", "L4", 121, 30.3, 0.3, kL4}},
      {"a10", {"a10", "A10", 125, 31.2, 0.6, kA10}},
  };
  return kEntries;
}

// Lower-case words of a name: "NVIDIA A100-SXM4-80GB" -> {nvidia, a100, sxm4, 80gb}.
std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

const std::vector<DevicePeak>& known_peaks() {
  static const std::vector<DevicePeak> kPeaks = [] {
    std::vector<DevicePeak> v;
    for (const auto& e : entries()) v.push_back(e.peak);
    return v;
  }();
  return kPeaks;
}

const DevicePeak* find_peak(std::string_view device_name) {
  // Whole words only, so "A10" never matches "A100" and "L4" never matches "L40S".
  const auto have = words(device_name);
  for (const auto& e : entries()) {
    bool all = true;
    for (const auto& w : words(e.tokens)) all = all && std::find(have.begin(), have.end(), w) != have.end();
    if (all) return &e.peak;
  }
  return nullptr;
}

double peak_tflops(const DevicePeak& peak, int dtype_bytes) {
  if (dtype_bytes == 2) return peak.bf16_tflops;
  if (dtype_bytes == 4) return peak.fp32_tflops;
  return 0;
}

std::string platform_key(std::string_view device_name) {
  if (device_name.empty()) return "cpu";
  if (const DevicePeak* p = find_peak(device_name)) return std::string(p->platform);
  std::string slug;
  for (const auto& w : words(device_name)) {
    if (w == "nvidia" && slug.empty()) continue;  // every NVIDIA name starts with it
    if (!slug.empty()) slug += '-';
    slug += w;
  }
  return slug.empty() ? "unknown-gpu" : slug;
}

}  // namespace wb
