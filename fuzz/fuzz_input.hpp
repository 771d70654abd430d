// What both libFuzzer targets share: the invariant check, and reading libFuzzer's bytes as a
// trace with small limits (gzip bombs must be refused, not allocated). A refusal must be a
// wb::TraceError naming the source; the target then has nothing more to exercise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "workbook/trace_reader.hpp"

namespace fuzz {

inline void require(bool ok) {
  if (!ok) __builtin_trap();
}

inline std::optional<wb::Trace> parse_input(const uint8_t* data, size_t size) {
  wb::ReadOptions opts;
  opts.max_bytes = 8 << 20;
  opts.max_events = 100'000;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    return wb::parse_trace(bytes, "fuzz.json", opts);
  } catch (const wb::TraceError& e) {
    require(e.source() == "fuzz.json" && e.offset() >= -1);
    return std::nullopt;
  }
}

}  // namespace fuzz
