// Reads Kineto Chrome-trace JSON (ours and Python's torch.profiler's, plain or .json.gz)
// into the shared model (trace.hpp). Never crashes on bad input: every failure is a
// TraceError naming the file and, where known, the byte offset.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "workbook/trace.hpp"

namespace wb {

class TraceError : public std::runtime_error {
 public:
  TraceError(std::string source, int64_t offset, const std::string& what);
  const std::string& source() const { return source_; }
  int64_t offset() const { return offset_; }  // byte offset in the (decompressed) JSON; -1: unknown
 private:
  std::string source_;
  int64_t offset_;
};

struct ReadOptions {
  // Refuse inputs larger than this, before and after decompression (bounded memory).
  int64_t max_bytes = int64_t{2} << 30;
  // Refuse more events than this.
  int64_t max_events = 50'000'000;
  // Inputs of at least 4 pieces are read in pieces of about this many bytes, on two threads
  // (same result; trace_reader.cpp says how). 0: always in one piece.
  int64_t piece_bytes = int64_t{2} << 20;
};

// Time: ts/dur (us, 3 decimals) become whole ns, rounded. start_ns == 0 is the earliest kept
// event and Trace::base_ns its absolute time (baseTimeNanoseconds + earliest ts; old traces
// with absolute ts and no baseTimeNanoseconds give the same numbers).
// Kept: ph "X" and "i"/"I"; metadata, flow and counter events are skipped.
// Strict (TraceError): broken JSON, missing/mistyped ph/ts/dur, limits. Lenient (defaults):
// name, cat, pid/tid and everything in args. Details: trace_reader.cpp.
//
// Reads a trace file (.json or .json.gz, detected by magic bytes, not by name).
Trace read_trace(const std::filesystem::path& path, const ReadOptions& opts = {});
// What the command-line tools read: read_trace, then refuse a trace with no events (a
// {"traceEvents": []} file, a capture that recorded nothing) with a TraceError that says
// "no events", so every tool says the same and exits non-zero instead of printing nothing.
Trace read_trace_with_events(const std::filesystem::path& path, const ReadOptions& opts = {});
// Parses a trace already in memory. `source` names it in errors.
Trace parse_trace(std::string_view json, const std::string& source = "<memory>",
                  const ReadOptions& opts = {});

}  // namespace wb
