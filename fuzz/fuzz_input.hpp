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

// Field by field: what reading in pieces must give back exactly.
inline bool same_trace(const wb::Trace& a, const wb::Trace& b) {
  auto same_kernel = [](const std::optional<wb::KernelInfo>& x, const std::optional<wb::KernelInfo>& y) {
    if (!x || !y) return !x && !y;
    return x->registers_per_thread == y->registers_per_thread && x->shared_memory == y->shared_memory &&
           x->grid == y->grid && x->block == y->block && x->blocks_per_sm == y->blocks_per_sm &&
           x->warps_per_sm == y->warps_per_sm;
  };
  if (a.base_ns != b.base_ns || a.source != b.source || a.record_shapes != b.record_shapes ||
      a.with_flops != b.with_flops || a.profile_memory != b.profile_memory ||
      a.devices.size() != b.devices.size() || a.events.size() != b.events.size())
    return false;
  for (size_t i = 0; i < a.devices.size(); ++i) {
    const auto &x = a.devices[i], &y = b.devices[i];
    if (x.id != y.id || x.name != y.name || x.compute_major != y.compute_major ||
        x.compute_minor != y.compute_minor || x.total_global_mem != y.total_global_mem ||
        x.num_sms != y.num_sms)
      return false;
  }
  for (size_t i = 0; i < a.events.size(); ++i) {
    const wb::Event &x = a.events[i], &y = b.events[i];
    if (x.name != y.name || x.kind != y.kind || x.category != y.category || x.start_ns != y.start_ns ||
        x.dur_ns != y.dur_ns || x.pid != y.pid || x.tid != y.tid || x.id != y.id ||
        x.linked_id != y.linked_id || x.is_async != y.is_async || x.bytes != y.bytes ||
        x.input_shapes != y.input_shapes || x.flops != y.flops || !same_kernel(x.kernel, y.kernel))
      return false;
  }
  return true;
}

// Reading in small pieces gives the same trace, or the same error, as reading whole.
inline std::optional<wb::Trace> parse_input_checked(const uint8_t* data, size_t size) {
  std::string whole_error, pieces_error;
  auto whole = parse_input(data, size, 0, &whole_error);
  const auto pieces = parse_input(data, size, 32, &pieces_error);
  require(whole.has_value() == pieces.has_value());
  require(whole ? same_trace(*whole, *pieces) : whole_error == pieces_error);
  return whole;
}

}  // namespace fuzz
