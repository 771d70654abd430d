// Published peak rates of common data-center GPUs, to turn a measured kernel time into
// "% of what this chip can do". Matched by the device name Kineto records in deviceProperties.
// The table is common/core/data/device_peaks.json, compiled in (add your GPU there).
//
// The numbers are the vendors' datasheet figures: dense (no 2:4 sparsity) tensor-core bf16,
// plain fp32 (CUDA cores, no TF32), and memory bandwidth. Datasheets round, and real clocks
// vary with power and temperature, so read a percentage as "about", never as an exact budget.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

struct DevicePeak {
  std::string_view platform;  // short key used for expected_output/<platform>: "h200", "a100"
  std::string_view model;     // human name: "H200 SXM"
  double bf16_tflops;         // dense tensor-core bf16 (== fp16), TFLOP/s
  double fp32_tflops;         // fp32 on CUDA cores (not TF32), TFLOP/s
  double mem_tbps;            // device memory bandwidth, TB/s (10^12 bytes/s)
  std::string_view source;    // where the numbers come from
};

// The whole table, most specific names first.
const std::vector<DevicePeak>& known_peaks();

// Reads a table in device_peaks.json's form and returns how many devices it lists; throws
// SpecError (workbook/json_spec.hpp) saying where a broken one is broken.
size_t check_peaks_table(std::string_view text, const std::string& source);

// Finds the peak for a device name such as "NVIDIA H200" or "NVIDIA A100-SXM4-80GB"
// (case-insensitive). nullptr: unknown device ("unknown peak").
const DevicePeak* find_peak(std::string_view device_name);

// Peak TFLOP/s for an element size in bytes: 2 -> bf16/fp16 tensor cores, 4 -> fp32.
// Returns 0 when the table has no figure for it.
double peak_tflops(const DevicePeak& peak, int dtype_bytes);

// Platform key for a device name: the table's key when known ("h200"), otherwise a slug of
// the name ("nvidia-rtx-4090"). Empty name -> "cpu".
std::string platform_key(std::string_view device_name);

}  // namespace wb
