// libFuzzer target: arbitrary bytes -> parse_trace -> TraceModel -> every query.
// The only acceptable outcomes are a Trace that satisfies the invariants below, or a
// TraceError naming the source; read in small pieces (ReadOptions::piece_bytes), the same
// Trace or the same error. Anything else (a crash, a sanitizer report, another
// exception type escaping, a broken invariant) is a bug. Build and run: fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"
#include "fuzz_input.hpp"

namespace {

using fuzz::require;

void exercise(const wb::Trace& trace) {
  const wb::TraceModel model(trace);
  const auto& ev = trace.events;
  for (wb::EventIdx i = 0; i < ev.size(); ++i) {
    const wb::Event& e = ev[i];
    require(e.start_ns >= 0 && e.dur_ns >= 0 && e.end_ns() >= e.start_ns);
    if (const auto p = model.parent(i)) {  // a parent contains its child
      require(ev[*p].start_ns <= e.start_ns && e.end_ns() <= ev[*p].end_ns());
      require(ev[*p].pid == e.pid && ev[*p].tid == e.tid);
    }
    for (wb::EventIdx c : model.children(i)) require(model.parent(c) == i);
    if (const auto call = model.launcher(i)) require(ev[*call].id == e.id && e.id != 0);
    for (wb::EventIdx d : model.launched(i)) require(model.launcher(d) == i);
    if (const auto op = model.op_of(i)) require(*op < ev.size());
    if (const wb::StepWindow* s = model.step_at(e.start_ns))
      require(s->start_ns <= e.start_ns && e.start_ns < s->end_ns);
  }
  for (const auto& lane : model.cpu_lanes())
    for (wb::EventIdx r : lane.roots) require(!model.parent(r));
  if (!ev.empty()) {
    for (wb::EventIdx i : model.find(ev.front().name)) require(ev[i].name == ev.front().name);
  }
  require(!model.parent(ev.size()) && model.children(ev.size()).empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (const auto trace = fuzz::parse_input_checked(data, size)) exercise(*trace);
  return 0;
}
