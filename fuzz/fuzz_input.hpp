// What both libFuzzer targets share: the invariant check, and reading libFuzzer's bytes as a
// trace with small limits (gzip bombs must be refused, not allocated), whole and in pieces. A
// refusal must be a wb::TraceError naming the source; the target then has nothing more to
// exercise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trace_dump.hpp"
#include "workbook/trace_reader.hpp"

namespace fuzz {

inline void require(bool ok) {
  if (!ok) __builtin_trap();
}

// `piece_bytes`: ReadOptions::piece_bytes (0: in one piece). `error`, if given, receives the
// TraceError's text.
inline std::optional<wb::Trace> parse_input(const uint8_t* data, size_t size, int64_t piece_bytes = 0,
                                            std::string* error = nullptr) {
  wb::ReadOptions opts;
  opts.max_bytes = 8 << 20;
  opts.max_events = 100'000;
  opts.piece_bytes = piece_bytes;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    return wb::parse_trace(bytes, "fuzz.json", opts);
  } catch (const wb::TraceError& e) {
    require(e.source() == "fuzz.json" && e.offset() >= -1);
    if (error) *error = e.what();
    return std::nullopt;
  }
}

// Reading in small pieces gives the same trace, or the same error, as reading whole.
inline std::optional<wb::Trace> parse_input_checked(const uint8_t* data, size_t size) {
  std::string whole_error, pieces_error;
  auto whole = parse_input(data, size, 0, &whole_error);
  const auto pieces = parse_input(data, size, 32, &pieces_error);
  require(whole.has_value() == pieces.has_value());
  require(whole ? dump_trace(*whole) == dump_trace(*pieces) : whole_error == pieces_error);
  return whole;
}

}  // namespace fuzz
