// Every field the trace reader fills, as text: one line for the trace, one per device, one per
// event. Two reads of the same input must give the same text; the fuzz target (fuzz_input.hpp)
// and tests/test_trace_reader.cpp compare reading whole with reading in pieces through it.
#pragma once

#include <sstream>
#include <string>

#include "workbook/trace.hpp"

namespace fuzz {

inline std::string dump_trace(const wb::Trace& t) {
  std::ostringstream o;
  o.precision(17);  // doubles (blocks/warps per SM) exactly
  o << t.base_ns << '|' << t.source << '|' << t.record_shapes << t.with_flops << t.profile_memory << '\n';
  for (const auto& d : t.devices)
    o << d.id << '|' << d.name << '|' << d.compute_major << '|' << d.compute_minor << '|'
      << d.total_global_mem << '|' << d.num_sms << '\n';
  for (const auto& e : t.events) {
    o << e.name << '|' << static_cast<int>(e.kind) << '|' << e.category << '|' << e.start_ns << '|'
      << e.dur_ns << '|' << e.pid << '|' << e.tid << '|' << e.id << '|' << e.linked_id << '|' << e.is_async
      << '|' << e.bytes << '|' << e.input_shapes << '|' << e.flops;
    if (const auto& k = e.kernel)
      o << '|' << k->registers_per_thread << ',' << k->shared_memory << ',' << k->grid[0] << ',' << k->grid[1]
        << ',' << k->grid[2] << ',' << k->block[0] << ',' << k->block[1] << ',' << k->block[2] << ','
        << k->blocks_per_sm << ',' << k->warps_per_sm;
    o << '\n';
  }
  return o.str();
}

}  // namespace fuzz
