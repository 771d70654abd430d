#include "workbook/memory.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace wb {

std::string MemorySeries::label() const {
  if (!on_device()) return "CPU";
  return std::string(device_type == 1 ? "CUDA" : "device") + " " + std::to_string(std::max(device_id, 0));
}

int64_t MemorySeries::allocated_before(int64_t t_ns) const {
  auto it = std::lower_bound(points.begin(), points.end(), t_ns,
                             [](const MemoryPoint& p, int64_t t) { return p.t_ns < t; });
  return it == points.begin() ? 0 : std::prev(it)->allocated;
}

std::vector<MemorySeries> memory_series(const Trace& trace) {
  std::map<std::pair<int, int>, MemorySeries> by_device;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    if (!e.memory) continue;
    MemorySeries& s = by_device[{e.memory->device_type, e.memory->device_id}];
    s.device_type = e.memory->device_type;
    s.device_id = e.memory->device_id;
    s.points.push_back(
        {e.start_ns, e.bytes, e.memory->total_allocated, std::max<int64_t>(e.memory->total_reserved, 0), i});
  }
  std::vector<MemorySeries> out;
  for (auto& [key, s] : by_device) {
    std::stable_sort(s.points.begin(), s.points.end(),
                     [](const MemoryPoint& a, const MemoryPoint& b) { return a.t_ns < b.t_ns; });
    int64_t running = 0;
    for (size_t k = 0; k < s.points.size(); ++k) {
      MemoryPoint& p = s.points[k];
      running += p.bytes;
      if (p.allocated < 0) p.allocated = running;  // no totals recorded: the sum of the bytes
      s.has_reserved |= p.reserved > 0;
      if (p.allocated > s.points[s.peak].allocated) s.peak = k;
    }
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const MemorySeries& a, const MemorySeries& b) {
    return a.on_device() > b.on_device();
  });
  return out;
}

const MemorySeries* main_memory_series(const std::vector<MemorySeries>& all) {
  const MemorySeries* best = nullptr;
  for (const auto& s : all) {
    if (s.points.empty()) continue;
    if (!best || (s.on_device() && !best->on_device()) ||
        (s.on_device() == best->on_device() && s.peak_allocated() > best->peak_allocated()))
      best = &s;
  }
  return best;
}

std::vector<Allocation> allocation_lifetimes(const Trace& trace) {
  std::vector<size_t> order;
  for (size_t i = 0; i < trace.events.size(); ++i)
    if (trace.events[i].memory) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return trace.events[a].start_ns < trace.events[b].start_ns; });
  std::vector<Allocation> out;
  out.reserve(order.size() / 2 + 1);
  // (device, id, addr) -> index in out; a hash map: a 100 MB trace has ~90k records.
  struct KeyHash {
    size_t operator()(const std::tuple<int, int, int64_t>& k) const {
      return std::hash<int64_t>{}(std::get<2>(k)) ^ (static_cast<size_t>(std::get<0>(k)) << 48) ^
             (static_cast<size_t>(std::get<1>(k) + 1) << 40);
    }
  };
  std::unordered_map<std::tuple<int, int, int64_t>, size_t, KeyHash> live;
  live.reserve(1024);
  for (size_t i : order) {
    const Event& e = trace.events[i];
    const auto key = std::make_tuple(e.memory->device_type, e.memory->device_id, e.memory->addr);
    if (e.bytes > 0) {
      live[key] = out.size();
      out.push_back({i, std::nullopt, e.bytes, e.start_ns, -1, e.memory->device_type});
    } else if (e.bytes < 0) {
      auto it = live.find(key);
      if (it == live.end() || out[it->second].bytes != -e.bytes) continue;  // allocated before the trace
      out[it->second].free_event = i;
      out[it->second].end_ns = e.start_ns;
      live.erase(it);
    }
  }
  return out;
}

}  // namespace wb
