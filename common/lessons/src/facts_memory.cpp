// The memory facts (profile_memory, chapter 08): what the [memory] records say about the
// caching allocator, activations, optimizer state and short-lived buffers. Every one needs a
// trace recorded with profile_memory; on any other trace it is not measurable (and a chapter
// that expects it fails: check_lessons never counts n/a as a pass).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <optional>
#include <string>
#include <vector>

#include "fact_view.hpp"
#include "workbook/memory.hpp"

namespace wb {
using namespace lessons_detail;

namespace {

constexpr const char* kNoMemory =
    "the trace holds no [memory] records: record it with profile_memory (Python: "
    "profile(profile_memory=True); C++: wb::ProfilerOptions::profile_memory = true)";

double mb(int64_t b) { return r3(static_cast<double>(b) / 1e6); }
std::string mb_str(int64_t b) { return fmt::format("{:.2f} MB", static_cast<double>(b) / 1e6); }

// The memory records of the steps: the main allocator's series, and everything the facts share.
struct MemView {
  std::vector<MemorySeries> all;
  const MemorySeries* s = nullptr;
  std::vector<Allocation> allocs;  // of the main series' device
};

MemView build_mem_view(const View& v) {
  MemView mv;
  mv.all = memory_series(v.m.trace());
  mv.s = main_memory_series(mv.all);
  if (!mv.s && v.m.trace().profile_memory) {
    // Recorded with profile_memory, and nothing was allocated or freed: an empty series (the
    // facts then measure zeros), not a trace without the option.
    mv.all.emplace_back();
    mv.s = &mv.all.back();
  }
  if (!mv.s) return mv;
  for (auto& a : allocation_lifetimes(v.m.trace())) {
    const auto& r = *v.m.at(a.alloc_event).memory;
    if (r.device_type == mv.s->device_type && r.device_id == mv.s->device_id) mv.allocs.push_back(a);
  }
  return mv;
}

// The facts share one MemView per trace (inspect measures them on two threads): the last one
// built, keyed by the trace's identity.
std::shared_ptr<const MemView> mem_view_shared(const View& v) {
  static std::mutex mu;
  static std::shared_ptr<const MemView> cached;
  static std::tuple<const Trace*, const Event*, size_t, std::string, uint64_t> key;
  const Trace& t = v.m.trace();
  uint64_t fingerprint = 0;  // the records themselves, so a reused address is not mistaken
  for (const Event& e : t.events)
    if (e.memory)
      fingerprint = fingerprint * 31 + static_cast<uint64_t>(e.bytes) + static_cast<uint64_t>(e.start_ns);
  auto k = std::make_tuple(&t, t.events.data(), t.events.size(), t.source, fingerprint);
  std::lock_guard<std::mutex> lock(mu);
  if (!cached || key != k) {
    cached = std::make_shared<const MemView>(build_mem_view(v));
    key = std::move(k);
  }
  return cached;
}
const MemView& mem_view_of(const View& v, std::shared_ptr<const MemView>& hold) {
  hold = mem_view_shared(v);
  return *hold;
}

// The points of a series with start <= t <= end (the series is in time order).
std::pair<const MemoryPoint*, const MemoryPoint*> points_in(const MemorySeries& s, int64_t start,
                                                            int64_t end) {
  const auto lo = std::lower_bound(s.points.begin(), s.points.end(), start,
                                   [](const MemoryPoint& p, int64_t t) { return p.t_ns < t; });
  const auto hi =
      std::upper_bound(lo, s.points.end(), end, [](int64_t t, const MemoryPoint& p) { return t < p.t_ns; });
  return {s.points.data() + (lo - s.points.begin()), s.points.data() + (hi - s.points.begin())};
}

// The innermost CPU event open at time t on thread (pid, tid): where an allocation happened.
std::optional<EventIdx> innermost_at(const TraceModel& m, int64_t pid, int64_t tid, int64_t t) {
  for (const auto& lane : m.cpu_lanes()) {
    if (lane.pid != pid || lane.tid != tid) continue;
    const std::vector<EventIdx>* level = &lane.roots;
    std::optional<EventIdx> found;
    while (level && !level->empty()) {
      // the last event starting at or before t
      auto it = std::upper_bound(level->begin(), level->end(), t,
                                 [&](int64_t x, EventIdx i) { return x < m.at(i).start_ns; });
      std::optional<EventIdx> next;
      for (auto j = it; j != level->begin();) {  // a few back: siblings may end early
        --j;
        if (m.at(*j).end_ns() >= t) {
          next = *j;
          break;
        }
        if (it - j > 8) break;
      }
      if (!next) break;
      found = next;
      level = &m.children(*next);
    }
    return found;
  }
  return std::nullopt;
}

// The name of the op (or annotation) an allocation happened in: "aten::mm", or "(no op)".
std::string op_at(const TraceModel& m, EventIdx record) {
  const Event& e = m.at(record);
  const auto i = innermost_at(m, e.pid, e.tid, e.start_ns);
  return i ? m.at(*i).name : std::string("(no op)");
}

// The user annotations at the top of the steps (forward, backward, optimizer, ...), by start.
std::vector<EventIdx> step_regions(const TraceModel& m) {
  std::vector<EventIdx> out;
  for (const auto& st : m.steps())
    for (EventIdx c : m.children(st.event))
      if (m.at(c).kind == Kind::UserAnnotation) out.push_back(c);
  std::sort(out.begin(), out.end(),
            [&](EventIdx a, EventIdx b) { return m.at(a).start_ns < m.at(b).start_ns; });
  return out;
}
std::string region_at(const TraceModel& m, const std::vector<EventIdx>& regions, int64_t t) {
  for (EventIdx r : regions)
    if (m.at(r).start_ns <= t && t <= m.at(r).end_ns()) return m.at(r).name;
  return "";
}
// Every instance of the top-level annotation `name`, by start.
std::vector<EventIdx> regions_named(const TraceModel& m, const std::vector<EventIdx>& regions,
                                    std::string_view name) {
  std::vector<EventIdx> out;
  for (EventIdx r : regions)
    if (m.at(r).name == name) out.push_back(r);
  return out;
}

// A training step's phase (forward, backward, optimizer) in one step: the user's annotation of
// that name, or, in a trace without one, what autograd and the optimizer record themselves.
struct Phase {
  int64_t start_ns = 0, end_ns = 0;
  EventIdx at = 0;  // the annotation, or the event the phase starts with (for its step label)
};
constexpr std::string_view kBackwardNode = "autograd::engine::evaluate_function: ";
constexpr std::string_view kOptimizerStep = "Optimizer.step#";

// Every instance of phase `name`, by start; `how` says where they came from. Without "forward",
// "backward", "optimizer" annotations at the top of the steps: per step, the backward spans
// autograd's evaluate_function events (on any thread: the CPU runs them on the calling thread,
// CUDA on autograd's device thread), the optimizer is each Optimizer.step#... range (Python's
// optimizers record one), and the forward runs from the step's start (or the end of an
// Optimizer.zero_grad#... before the backward) to the backward's first node.
std::vector<Phase> phases(const TraceModel& m, std::string_view name, std::string& how) {
  std::vector<Phase> out;
  for (EventIdx r : regions_named(m, step_regions(m), name))
    out.push_back({m.at(r).start_ns, m.at(r).end_ns(), r});
  if (!out.empty()) {
    how = fmt::format("the '{}' annotations", name);
    return out;
  }
  for (const StepWindow& st : m.steps()) {
    std::optional<Phase> bwd;
    std::vector<Phase> opt, zero;
    for (const Event& e : m.trace().events) {  // (a few passes at most: one per phase fact)
      if (e.start_ns < st.start_ns || e.start_ns > st.end_ns) continue;
      const EventIdx i = static_cast<EventIdx>(&e - m.trace().events.data());
      if (e.kind == Kind::CpuOp &&
          std::string_view(e.name).substr(0, kBackwardNode.size()) == kBackwardNode) {
        if (!bwd) bwd = Phase{e.start_ns, e.end_ns(), i};
        if (e.start_ns < bwd->start_ns) *bwd = Phase{e.start_ns, bwd->end_ns, i};
        bwd->end_ns = std::max(bwd->end_ns, e.end_ns());
      } else if (e.kind == Kind::UserAnnotation && e.name.rfind(kOptimizerStep, 0) == 0) {
        opt.push_back({e.start_ns, e.end_ns(), i});
      } else if (e.kind == Kind::UserAnnotation && e.name.rfind("Optimizer.zero_grad#", 0) == 0) {
        zero.push_back({e.start_ns, e.end_ns(), i});
      }
    }
    if (name == "backward" && bwd) out.push_back(*bwd);
    if (name == "optimizer") out.insert(out.end(), opt.begin(), opt.end());
    if (name == "forward" && bwd) {
      Phase fwd{st.start_ns, bwd->start_ns, st.event};
      for (const Phase& z : zero)
        if (z.end_ns <= bwd->start_ns) fwd.start_ns = std::max(fwd.start_ns, z.end_ns);
      for (const Phase& o : opt)
        if (o.end_ns <= bwd->start_ns) fwd.start_ns = std::max(fwd.start_ns, o.end_ns);
      out.push_back(fwd);
    }
  }
  std::sort(out.begin(), out.end(), [](const Phase& a, const Phase& b) { return a.start_ns < b.start_ns; });
  if (name == "backward")
    how =
        "no 'backward' annotation: autograd's own events ('autograd::engine::evaluate_function: "
        "...Backward0'), first to last in each step";
  else if (name == "forward")
    how =
        "no 'forward' annotation: each step's start (or its Optimizer.zero_grad#...) to the first "
        "autograd::engine::evaluate_function";
  else
    how = fmt::format("no '{}' annotation: the optimizer's own '{}...' ranges", name, kOptimizerStep);
  return out;
}

std::string measure_memory_peak(const View& v, const FactOptions&, Fact& f) {
  std::shared_ptr<const MemView> hold;
  const MemView& mv = mem_view_of(v, hold);
  if (!mv.s) return kNoMemory;
  const MemorySeries& s = *mv.s;
  if (s.points.empty()) return "recorded with profile_memory, but nothing was allocated or freed: no peak";
  const MemoryPoint& p = s.points[s.peak];
  const auto regions = step_regions(v.m);
  const std::string op = op_at(v.m, p.event), region = region_at(v.m, regions, p.t_ns);
  const int64_t low = std::min_element(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) {
                        return a.allocated < b.allocated;
                      })->allocated;
  f.data = {{"device", s.label()},
            {"peak_bytes", p.allocated},
            {"peak_mb", mb(p.allocated)},
            {"reserved_at_peak", p.reserved},
            {"op", op},
            {"region", region},
            {"step", v.step_number(p.event)},
            {"low_bytes", low},
            {"peak_over_low", low > 0 ? r3(double(p.allocated) / double(low)) : 0.0},
            {"records", s.points.size()}};
  // Where the forward ends: the peak against the level at the end of each "forward".
  const auto fwd = regions_named(v.m, regions, "forward");
  if (!fwd.empty()) {
    int64_t best = 0;
    for (EventIdx r : fwd) best = std::max(best, s.allocated_before(v.m.at(r).end_ns() + 1));
    f.data["at_forward_end_bytes"] = best;
    f.data["forward_end_share_of_peak"] = p.allocated > 0 ? r3(double(best) / double(p.allocated)) : 0.0;
  }
  f.value = fmt::format("{} peak: {} allocated{}, in {}{} ({})", s.label(), mb_str(p.allocated),
                        s.has_reserved ? fmt::format(" ({} reserved)", mb_str(p.reserved)) : "", op,
                        region.empty() ? "" : " inside '" + region + "'", v.step_label(p.event));
  add_evidence(f, fmt::format("[memory] {} {:+} B -> {} allocated {}", v.step_label(p.event), p.bytes,
                              p.allocated, v.at(p.t_ns)));
  return measured(f, "the allocator's highest 'Total Allocated' in the trace, and the op that was running");
}

// Per step: allocations (count, bytes), the caching allocator's growth (reserved) and the
// device allocator calls (cudaMalloc) the runtime recorded.
std::string measure_memory_per_step(const View& v, const FactOptions&, Fact& f) {
  std::shared_ptr<const MemView> hold;
  const MemView& mv = mem_view_of(v, hold);
  if (!mv.s) return kNoMemory;
  if (v.m.steps().empty()) return "no ProfilerStep in the trace to split the records by";
  const MemorySeries& s = *mv.s;
  nlohmann::json steps = nlohmann::json::array();
  std::vector<int64_t> counts;
  int64_t growth_first = 0, growth_warm = 0, growth_steady = 0, malloc_first = 0, malloc_warm = 0;
  const std::vector<EventIdx> mallocs_all = v.m.find("cudaMalloc");
  for (size_t k = 0; k < v.m.steps().size(); ++k) {
    const StepWindow& st = v.m.steps()[k];
    int64_t n = 0, bytes = 0;
    const auto [lo, hi] = points_in(s, st.start_ns, st.end_ns);
    const int64_t res_before = lo == s.points.data() ? 0 : (lo - 1)->reserved;
    int64_t res_after = res_before;
    for (const MemoryPoint* p = lo; p != hi; ++p) {
      if (p->bytes > 0) ++n, bytes += p->bytes;
      res_after = p->reserved;
    }
    const int64_t growth = n > 0 ? std::max<int64_t>(0, res_after - res_before) : 0;
    int64_t mallocs = 0;
    for (EventIdx i : mallocs_all)
      if (v.m.at(i).start_ns >= st.start_ns && v.m.at(i).start_ns <= st.end_ns) ++mallocs;
    (k == 0 ? growth_first : growth_warm) = k == 0 ? growth : std::max(growth_warm, growth);
    // From the third step on: the second may still grow (state the first step created at its end,
    // an optimizer's, now lives through the whole step).
    if (k >= 2) growth_steady = std::max(growth_steady, growth);
    (k == 0 ? malloc_first : malloc_warm) += mallocs;
    counts.push_back(n);
    steps.push_back({{"step", st.number},
                     {"allocations", n},
                     {"bytes", bytes},
                     {"reserved_growth", growth},
                     {"cuda_malloc", mallocs}});
    add_evidence(f, fmt::format("ProfilerStep#{}: {} allocations, {} allocated, reserved +{}, {} cudaMalloc",
                                st.number, n, mb_str(bytes), mb_str(growth), mallocs));
  }
  // Kept: allocated in a step and never freed in the trace. The last step is left out (what it
  // made for the next step is freed after the trace ends).
  std::vector<int64_t> kept(v.m.steps().size(), 0);
  for (const Allocation& a : mv.allocs) {
    if (a.freed()) continue;
    if (const StepWindow* st = v.m.step_at(a.start_ns))
      for (size_t k = 0; k < v.m.steps().size(); ++k)
        if (v.m.steps()[k].number == st->number) kept[k] += a.bytes;
  }
  int64_t warm_kept = 0;
  for (size_t k = 1; k + 1 < kept.size(); ++k) warm_kept = std::max(warm_kept, kept[k]);
  for (size_t k = 0; k < kept.size(); ++k) steps[k]["kept_bytes"] = kept[k];
  const bool warm_equal = counts.size() < 3 || std::all_of(counts.begin() + 1, counts.end(),
                                                           [&](int64_t c) { return c == counts[1]; });
  f.data = {{"device", s.label()},
            {"steps", steps},
            {"caching", s.has_reserved},
            {"first_reserved_growth", growth_first},
            {"warm_reserved_growth", growth_warm},
            {"steady_reserved_growth", growth_steady},
            {"first_cuda_malloc", malloc_first},
            {"warm_cuda_malloc", malloc_warm},
            {"warm_allocations_equal", warm_equal},
            {"warm_kept_bytes", warm_kept},
            {"first_kept_bytes", kept.empty() ? 0 : kept.front()},
            {"first_allocations", counts.front()},
            {"warm_allocations", counts.size() > 1 ? counts[1] : 0}};
  f.value = fmt::format(
      "{}: {} allocations in the first step, {} in the next; reserved grows {} in the first, "
      "at most {} in a later one{}",
      s.label(), counts.front(), counts.size() > 1 ? counts[1] : 0, mb_str(growth_first), mb_str(growth_warm),
      s.has_reserved ? "" : " (no caching allocator: reserved stays 0)");
  return measured(f,
                  "a caching allocator asks the device for memory (cudaMalloc, 'Total Reserved' grows) "
                  "in the first step and serves later steps from its cache");
}

// Allocations made inside 'forward' and still held when it ends, and the share of them that
// 'backward' frees.
std::string measure_activations_held(const View& v, const FactOptions&, Fact& f) {
  std::shared_ptr<const MemView> hold;
  const MemView& mv = mem_view_of(v, hold);
  if (!mv.s) return kNoMemory;
  std::string how_fwd, how_bwd;
  const auto fwd = phases(v.m, "forward", how_fwd), bwd = phases(v.m, "backward", how_bwd);
  if (fwd.empty() || bwd.empty())
    return "no 'forward' and 'backward' annotations at the top of the steps, and no autograd "
           "events (autograd::engine::evaluate_function) in them: no backward to compare";
  int64_t held = 0, freed_in_bwd = 0, still = 0;
  const auto in = [](const std::vector<Phase>& rs, int64_t t) -> const Phase* {
    for (const Phase& r : rs)
      if (r.start_ns <= t && t <= r.end_ns) return &r;
    return nullptr;
  };
  for (const Allocation& a : mv.allocs) {
    const Phase* r = in(fwd, a.start_ns);
    if (!r) continue;
    if (a.freed() && a.end_ns <= r->end_ns) continue;  // freed inside the forward
    held += a.bytes;
    if (a.freed() && in(bwd, a.end_ns))
      freed_in_bwd += a.bytes;
    else if (!a.freed())
      still += a.bytes;
  }
  const double n = static_cast<double>(fwd.size());
  f.data = {{"forward_held_bytes", static_cast<int64_t>(held / n)},
            {"forward_held_mb", mb(static_cast<int64_t>(held / n))},
            {"freed_in_backward_bytes", static_cast<int64_t>(freed_in_bwd / n)},
            {"released_share", held > 0 ? r3(double(freed_in_bwd) / double(held)) : 0.0},
            {"never_freed_bytes", still},
            {"forwards", fwd.size()},
            {"phases_from", how_fwd + "; " + how_bwd}};
  add_evidence(f, "forward: " + how_fwd);
  add_evidence(f, "backward: " + how_bwd);
  for (size_t k = 0; k < fwd.size() && k < 4; ++k)
    add_evidence(f, fmt::format("{}: forward {} .. {}", v.step_label(fwd[k].at), v.at(fwd[k].start_ns),
                                v.at(fwd[k].end_ns)));
  f.value = fmt::format("per step: the forward keeps {} past its end; the backward frees {:.0f}% of it",
                        mb_str(static_cast<int64_t>(held / n)), held > 0 ? 100.0 * freed_in_bwd / held : 0.0);
  return measured(f, "autograd saves the activations the backward needs; the backward frees each once used");
}

// Allocations made inside the optimizer step that outlive the trace: its state, created at its
// first step (the 'optimizer' annotation, else the optimizer's own Optimizer.step#... range).
std::string measure_optimizer_state(const View& v, const FactOptions&, Fact& f) {
  std::shared_ptr<const MemView> hold;
  const MemView& mv = mem_view_of(v, hold);
  if (!mv.s) return kNoMemory;
  std::string how;
  const auto opt = phases(v.m, "optimizer", how);
  if (opt.empty())
    return "no 'optimizer' annotation at the top of the steps and no Optimizer.step#... range in them";
  std::vector<int64_t> kept(opt.size(), 0);
  std::vector<int64_t> count(opt.size(), 0);
  for (const Allocation& a : mv.allocs) {
    if (a.freed()) continue;
    for (size_t k = 0; k < opt.size(); ++k)
      if (opt[k].start_ns <= a.start_ns && a.start_ns <= opt[k].end_ns) {
        kept[k] += a.bytes;
        ++count[k];
      }
  }
  const int64_t later = opt.size() > 1 ? *std::max_element(kept.begin() + 1, kept.end()) : 0;
  f.data = {{"first_kept_bytes", kept[0]}, {"first_kept_mb", mb(kept[0])},  {"first_kept_tensors", count[0]},
            {"later_kept_bytes", later},   {"optimizer_steps", opt.size()}, {"phases_from", how}};
  add_evidence(f, "optimizer: " + how);
  for (size_t k = 0; k < opt.size(); ++k)
    add_evidence(f, fmt::format("'{}' #{} {}: keeps {} in {} tensors", v.m.at(opt[k].at).name, k,
                                v.step_label(opt[k].at), mb_str(kept[k]), count[k]));
  f.value = fmt::format("the first optimizer step keeps {} ({} tensors); later steps keep at most {}",
                        mb_str(kept[0]), count[0], mb_str(later));
  return measured(f, kept[0] > 0
                         ? "the optimizer allocates its state (Adam's exp_avg and exp_avg_sq, SGD's momentum "
                           "buffers) at its first step, then reuses it"
                         : "the window's first optimizer step keeps nothing: its state was made before "
                           "the window (a warm-up step), or the optimizer keeps none (plain SGD)");
}

// The largest allocations freed within the step that made them.
std::string measure_short_lived(const View& v, const FactOptions&, Fact& f) {
  std::shared_ptr<const MemView> hold;
  const MemView& mv = mem_view_of(v, hold);
  if (!mv.s) return kNoMemory;
  std::vector<const Allocation*> shorts;
  for (const Allocation& a : mv.allocs) {
    if (!a.freed()) continue;
    const StepWindow* s1 = v.m.step_at(a.start_ns);
    if (s1 && a.end_ns <= s1->end_ns) shorts.push_back(&a);
  }
  if (shorts.empty()) {
    f.data = {{"count", 0}, {"largest_bytes", 0}, {"largest_op", ""}};
    f.value = "no allocation is freed within the step that made it";
    return measured(f, "short-lived buffers: allocated and freed within one step");
  }
  std::stable_sort(shorts.begin(), shorts.end(), [](auto* a, auto* b) { return a->bytes > b->bytes; });
  nlohmann::json top = nlohmann::json::array();
  for (size_t k = 0; k < shorts.size() && k < 5; ++k) {
    const Allocation& a = *shorts[k];
    const std::string op = op_at(v.m, a.alloc_event), by = op_at(v.m, *a.free_event);
    top.push_back(
        {{"bytes", a.bytes}, {"op", op}, {"freed_in", by}, {"lifetime_us", r3(us(a.end_ns - a.start_ns))}});
    add_evidence(f, fmt::format("{} in {} ({}), freed {} later in {}", mb_str(a.bytes), op,
                                v.step_label(a.alloc_event), us_str(us(a.end_ns - a.start_ns)), by));
  }
  const size_t steps = std::max<size_t>(1, v.m.steps().size());
  f.data = {{"count", shorts.size()},
            {"per_step", shorts.size() / steps},
            {"largest_bytes", shorts.front()->bytes},
            {"largest_mb", mb(shorts.front()->bytes)},
            {"largest_op", top[0]["op"]},
            {"top", top}};
  f.value = fmt::format("{} allocations freed within their step; the largest {} in {}", shorts.size(),
                        mb_str(shorts.front()->bytes), top[0]["op"].get<std::string>());
  return measured(
      f, "short-lived buffers: allocated and freed within one step (the allocator reuses their blocks)");
}

// In-place ops (aten::*_) and the bytes allocated while one ran.
std::string measure_inplace_alloc(const View& v, const FactOptions&, Fact& f) {
  std::shared_ptr<const MemView> hold;
  const MemView& mv = mem_view_of(v, hold);
  if (!mv.s) return kNoMemory;
  std::map<std::string, int64_t> calls, bytes;
  // A chapter marks the in-place op it means with an 'inplace' annotation; else every in-place op.
  const auto inplace_regions = regions_named(v.m, step_regions(v.m), "inplace");
  for (const auto& lane : v.m.cpu_lanes())
    for (EventIdx i : lane.events) {
      const Event& e = v.m.at(i);
      // aten::resize_ is in-place on the tensor's metadata and allocates its storage by design.
      if (e.kind != Kind::CpuOp || e.name.size() < 8 || e.name.back() != '_' ||
          e.name.rfind("aten::", 0) != 0 || e.name == "aten::resize_" ||
          e.name.rfind("aten::_foreach", 0) == 0 || !v.m.step_at(e.start_ns))
        continue;
      if (!inplace_regions.empty() &&
          std::none_of(inplace_regions.begin(), inplace_regions.end(), [&](EventIdx r) {
            return v.m.at(r).start_ns <= e.start_ns && e.end_ns() <= v.m.at(r).end_ns();
          }))
        continue;
      ++calls[e.name];
      bytes[e.name] += 0;
      const auto [lo, hi] = points_in(*mv.s, e.start_ns, e.end_ns());
      for (const MemoryPoint* p = lo; p != hi; ++p)
        if (p->bytes > 0) bytes[e.name] += p->bytes;
    }
  if (calls.empty()) return "no in-place aten op (name ending in '_') inside the steps";
  int64_t total_calls = 0, total_bytes = 0;
  std::vector<std::string> allocating;
  for (const auto& [name, n] : calls) {
    total_calls += n;
    total_bytes += bytes[name];
    if (bytes[name] > 0) allocating.push_back(name);
    add_evidence(f, fmt::format("{}: {} calls, {} allocated while it ran", name, n, bytes[name]));
  }
  f.data = {{"inplace_calls", total_calls},
            {"inplace_alloc_bytes", total_bytes},
            {"allocating", allocating},
            {"ops", keys(calls)}};
  f.value = fmt::format("{} in-place calls ({}); {} B allocated while they ran", total_calls,
                        join(keys(calls), ", ", ""), total_bytes);
  return measured(f, "an in-place op writes into its input: no new tensor, no allocation");
}

// Per top-level annotation inside the steps: allocations and bytes per instance (any thread,
// by time), and the largest single allocation.
std::string measure_region_allocations(const View& v, const FactOptions&, Fact& f) {
  std::shared_ptr<const MemView> hold;
  const MemView& mv = mem_view_of(v, hold);
  if (!mv.s) return kNoMemory;
  const auto regions = step_regions(v.m);
  if (regions.empty()) return "no user annotation at the top of the steps";
  std::map<std::string, std::array<int64_t, 4>> by;  // name -> instances, allocations, bytes, largest
  for (EventIdx r : regions) {
    auto& a = by[v.m.at(r).name];
    ++a[0];
    const auto [lo, hi] = points_in(*mv.s, v.m.at(r).start_ns, v.m.at(r).end_ns());
    for (const MemoryPoint* p = lo; p != hi; ++p) {
      if (p->bytes <= 0) continue;
      ++a[1];
      a[2] += p->bytes;
      a[3] = std::max(a[3], p->bytes);
    }
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, a] : by) {
    out[name] = {{"allocations", a[1] / a[0]},
                 {"bytes", a[2] / a[0]},
                 {"mb", mb(a[2] / a[0])},
                 {"largest_bytes", a[3]}};
    add_evidence(f, fmt::format("'{}' ({} times): {} allocations, {} per instance; the largest {}", name,
                                a[0], a[1] / a[0], mb_str(a[2] / a[0]), mb_str(a[3])));
  }
  f.data = {{"device", mv.s->label()}, {"regions", out}};
  f.value = fmt::format("{} allocations per annotation: {}", mv.s->label(), join(keys(by), ", ", ""));
  return measured(f, "what each annotated region allocates per step (frees not subtracted)");
}

}  // namespace

// The registry's entries of this file's facts (fact_view.hpp: ViewFact): id, title, why a
// CPU-only trace has nothing to measure, the measurement, what the default pattern's verdict
// means, the teaching order, the default pattern, whether it is about a chapter's workload only,
// and the docs/cheatsheet.md rows that name it first.
const std::vector<ViewFact>& memory_facts() {
  static const std::vector<ViewFact> kFacts = {
      {"memory_peak",
       "Memory peak, and the op at which it occurs",
       "",
       measure_memory_peak,
       {},
       260,
       R"json({"text": "profile_memory: the trace has a peak",
 "why": "descriptive: chapters state where they expect it",
 "all": [
      {"key": "/peak_bytes", "op": ">", "value": 0}
 ]})json",
       false,
       {{"**Memory: the peak and where it is** (profile_memory)",
         "the `CPU Mem` / `CUDA Mem` columns: an op's memory is what was allocated while it ran (frees count "
         "negative), `Self ... Mem` less its children's; a region that frees more than it allocates is "
         "negative",
         "`timeline`'s memory lane under the steps: allocated (and reserved, dashed), the peak marked",
         "08",
         {}}}},
      {"memory_per_step",
       "Allocations per step; do warm steps still call the device allocator?",
       "",
       measure_memory_per_step,
       {},
       270,
       R"json({"text": "warm steps still grow the caching allocator (reserved grows or cudaMalloc after the first step)",
 "why": "a warm loop is served from the allocator's cache; growth after the first step means new shapes or a leak",
 "all": [
      {"key": "/warm_reserved_growth", "op": ">", "value": 0, "scope": "gpu"}
 ]})json",
       false,
       {{"**Caching allocator: warm steps reuse**",
         "(not in the table)",
         "reserved (dashed) rises in the first step only; `cudaMalloc` rows in the first step only",
         "08",
         {}}}},
      {"activations_held",
       "Activations held from forward to backward",
       "",
       measure_activations_held,
       {},
       280,
       R"json({"text": "the backward frees >= half of what the forward kept",
 "why": "autograd frees each saved tensor once its backward node has run",
 "all": [
      {"key": "/forward_held_bytes", "op": ">", "value": 0},
      {"key": "/released_share", "op": ">=", "value": 0.5}
 ]})json",
       false,
       {{"**Activations held for the backward**",
         "the forward's ops' `CUDA Mem` adds up; the backward's `Self ... Mem` is negative",
         "the memory lane climbs through the forward and falls through the backward",
         "08",
         {"region_allocations"}}}},
      {"optimizer_state",
       "Optimizer state appears at its first step",
       "",
       measure_optimizer_state,
       {},
       290,
       R"json({"text": "the first optimizer step keeps memory, later ones keep none",
 "why": "Adam's exp_avg and exp_avg_sq are created once",
 "all": [
      {"key": "/first_kept_bytes", "op": ">", "value": 0},
      {"key": "/later_kept_bytes", "op": "==", "value": 0}
 ]})json",
       false,
       {{"**Optimizer state appears once**",
         "the optimizer's row keeps memory in the first step only",
         "a step up in the memory lane at the first optimizer step that never comes down",
         "08",
         {}}}},
      {"short_lived",
       "Largest short-lived allocations",
       "",
       measure_short_lived,
       {},
       300,
       R"json({"text": "some buffer is allocated and freed within its step",
 "why": "descriptive: chapters state the size they expect",
 "all": [
      {"key": "/count", "op": ">", "value": 0}
 ]})json",
       false,
       {{"**Short-lived buffers**",
         "large `... Mem` on an op whose parent's total is 0",
         "a spike in the memory lane within one step",
         "08",
         {}}}},
      {"inplace_alloc",
       "In-place ops allocate nothing",
       "",
       measure_inplace_alloc,
       {},
       310,
       R"json({"text": "in-place ops allocate 0 bytes",
 "why": "an in-place op writes into its input",
 "all": [
      {"key": "/inplace_calls", "op": ">", "value": 0},
      {"key": "/inplace_alloc_bytes", "op": "==", "value": 0}
 ]})json",
       false,
       {{"**In-place allocates nothing**",
         "an `aten::*_` row with `0 B`",
         "no step in the memory lane while it runs",
         "08",
         {}}}},
      {"region_allocations",
       "What each annotated region allocates",
       "",
       measure_region_allocations,
       {},
       320,
       R"json({"text": "some annotated region allocates",
 "why": "descriptive: chapters state the bytes they expect per region",
 "all": [
      {"key": "/regions", "op": "!=", "value": {}}
 ]})json",
       false,
       {}}};
  return kFacts;
}

}  // namespace wb
