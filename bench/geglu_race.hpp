// bench_geglu's kernel clock: which kernels each timed call launched, read from a profiler trace.
// Each call runs inside a user annotation "race|<contender>|<condition>"; a kernel belongs to the
// call whose annotation holds its launch call (the runtime/driver event with the kernel's
// correlation id). Kernels launched elsewhere (a prelude: the L2 flush, the GEMMs) count nowhere.
// Torch-free, so tests/test_07_geglu_mlp.cpp checks it on a synthetic trace.
#pragma once

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "workbook/trace.hpp"

namespace geglu_race {

struct Attribution {
  // contender -> condition -> the device time (us) of each call: the sum of its kernels
  std::map<std::string, std::map<std::string, std::vector<double>>> call_us;
  std::map<std::string, std::vector<std::string>> kernels;  // contender -> distinct kernel names
  std::map<std::string, std::string> launch;                // contender -> "grid G x block B (R regs)" each
};

inline Attribution attribute(const wb::Trace& trace, const std::string& prefix = "race|") {
  std::map<int64_t, int64_t> launch_at;  // correlation -> launch start
  std::vector<const wb::Event*> calls;
  for (const wb::Event& e : trace.events) {
    if ((e.kind == wb::Kind::Runtime || e.kind == wb::Kind::Driver) && e.id != 0)
      launch_at[e.id] = e.start_ns;
    if (e.kind == wb::Kind::UserAnnotation && e.name.rfind(prefix, 0) == 0 &&
        e.name.find('|', prefix.size()) != std::string::npos)
      calls.push_back(&e);
  }
  std::sort(calls.begin(), calls.end(),
            [](const wb::Event* a, const wb::Event* b) { return a->start_ns < b->start_ns; });
  std::map<const wb::Event*, double> per_call;
  Attribution out;
  auto who_of = [&](const wb::Event* call) {
    return call->name.substr(prefix.size(), call->name.rfind('|') - prefix.size());
  };
  for (const wb::Event& e : trace.events) {
    if (e.kind != wb::Kind::Kernel) continue;
    const auto l = launch_at.find(e.id);
    if (l == launch_at.end()) continue;
    auto it = std::upper_bound(calls.begin(), calls.end(), l->second,
                               [](int64_t t, const wb::Event* a) { return t < a->start_ns; });
    if (it == calls.begin()) continue;
    const wb::Event* call = *std::prev(it);
    if (l->second > call->end_ns()) continue;  // launched between calls (a prelude)
    per_call[call] += e.dur_ns / 1e3;
    const std::string who = who_of(call);
    auto& names = out.kernels[who];
    if (std::find(names.begin(), names.end(), e.name) != names.end()) continue;
    names.push_back(e.name);
    if (e.kernel) {
      const auto& k = *e.kernel;
      std::string& cfg = out.launch[who];
      cfg += std::string(cfg.empty() ? "" : " + ") + "grid " + std::to_string(k.grid[0]) + " x block " +
             std::to_string(k.block[0]) +
             (k.registers_per_thread >= 0 ? " (" + std::to_string(k.registers_per_thread) + " regs)" : "");
    }
  }
  for (const auto& [call, us] : per_call)
    out.call_us[who_of(call)][call->name.substr(call->name.rfind('|') + 1)].push_back(us);
  return out;
}

}  // namespace geglu_race
