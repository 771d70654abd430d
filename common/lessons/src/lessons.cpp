// Lesson facts (see lessons.hpp). Each fact is one function that measures it and says where the
// numbers came from, and one row of view_facts() (at the end): its id, title and default
// pattern. ViewFact::fn (lessons_detail.cpp) does the rest, the same for every fact: start,
// the CPU-only check, the measurement, then judge or say why not. The chapter specs live in
// chapters/NN_name/lessons.json.
#include "workbook/lessons.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "lessons_detail.hpp"
#include "workbook/peaks.hpp"
#include "workbook/table.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

// ---- 1. overhead-bound vs compute-bound ------------------------------------------------
std::string measure_overhead_bound(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  // The table's footers, summed the way Python sums them.
  int64_t cpu_ns = 0, cuda_ns = 0;
  for (const auto& row : key_averages(m.trace())) {
    cpu_ns += row.self_cpu_ns;
    if (row.on_device && !row.is_user_annotation) cuda_ns += row.self_device_ns;
  }
  const double cpu = us(cpu_ns), cuda = us(cuda_ns);
  f.data["self_cpu_total_us"] = r3(cpu);
  f.data["self_cuda_total_us"] = r3(cuda);
  if (!v.gpu) {
    f.value = fmt::format("Self CPU total {}, no device time", us_str(cpu));
    return "CPU-only trace: no device time to compare with";
  }
  if (cpu <= 0) return "no CPU time recorded";

  const Interval win = v.active_window();
  const double busy = us(union_ns(m, v.device, win));
  const double span = us(win.end - win.start);
  const double ratio = cuda / cpu;
  const double busy_frac = span > 0 ? busy / span : 0;
  f.data["cuda_cpu_ratio"] = r3(ratio);
  f.data["window_us"] = r3(span);
  f.data["gpu_busy_us"] = r3(busy);
  f.data["gpu_busy_fraction"] = r3(busy_frac);
  f.data["gpu_idle_fraction"] = r3(1 - busy_frac);
  f.value = fmt::format(
      "Self CUDA {} / Self CPU {} = {:.3f}; GPU busy {:.1f}% of the {} active "
      "window",
      us_str(cuda), us_str(cpu), ratio, 100 * busy_frac, us_str(span));
  f.explanation = ratio < 0.1    ? "the CPU spends far longer issuing work than the GPU spends doing "
                                   "it: overhead-bound (bigger work or fewer launches help)"
                  : ratio >= 0.5 ? "GPU time is comparable to CPU time: the device does real work "
                                   "(compute- or memory-bound)"
                                 : "in between: the GPU works, but CPU overhead still shows";
  add_evidence(f, fmt::format("active window {} .. {} (first ProfilerStep start to the last "
                              "device event it launched)",
                              v.at(win.start), v.at(win.end)));
  add_evidence(f,
               fmt::format("{} device events in the window, busy (union) {}", v.device.size(), us_str(busy)));
  return kMeasured;
}

// ---- 2. step widths ---------------------------------------------------------------------
std::string measure_step_widths(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  const auto& steps = m.steps();
  if (steps.size() < 2)
    return fmt::format(
        "needs at least 2 ProfilerStep windows, the "
        "trace has {}",
        steps.size());
  json arr = json::array();
  std::vector<double> rest;
  double widest = 0;
  for (const auto& s : steps) {
    const double w = us(s.end_ns - s.start_ns);
    arr.push_back({{"step", s.number}, {"width_us", r3(w)}});
    if (&s != &steps.front()) rest.push_back(w);
    widest = std::max(widest, w);
    add_evidence(f,
                 fmt::format("ProfilerStep#{}: {} wide, starts {}", s.number, us_str(w), v.at(s.start_ns)));
  }
  const double first = us(steps.front().end_ns - steps.front().start_ns);
  const double med = median(rest);
  f.data["steps"] = arr;
  f.data["first_us"] = r3(first);
  f.data["median_rest_us"] = r3(med);
  f.data["first_over_median_rest"] = med > 0 ? json(r3(first / med)) : json(nullptr);
  f.data["first_is_widest"] = first >= widest;
  f.value = fmt::format("first active step ProfilerStep#{} {} vs median of the others {} ({:.1f}x)",
                        steps.front().number, us_str(first), us_str(med), med > 0 ? first / med : 0);
  return measured(f, first >= 1.5 * med
                         ? "the first recorded step pays one-time costs (cold start, profiler start-up)"
                         : "steps take similar time: nothing one-time left in the window");
}

// ---- 3. dead window ---------------------------------------------------------------------
std::string measure_dead_window(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  json arr = json::array();
  std::vector<double> gaps;
  for (EventIdx a : v.annotations(o.annotation)) {
    const auto& kids = m.children(a);
    if (kids.empty()) continue;
    const double gap = us(m.at(kids.front()).start_ns - m.at(a).start_ns);
    gaps.push_back(gap);
    arr.push_back(
        {{"step", v.step_number(a)}, {"gap_us", r3(gap)}, {"first_child", m.at(kids.front()).name}});
    add_evidence(f, fmt::format("{}: {} starts {}, first child {} after {}", v.step_label(a), o.annotation,
                                v.at(m.at(a).start_ns), m.at(kids.front()).name, us_str(gap)));
  }
  if (gaps.empty())
    return fmt::format(
        "no '{}' annotation with children in this "
        "trace",
        o.annotation);
  f.data["annotation"] = o.annotation;
  f.data["gaps"] = arr;
  f.data["first_gap_us"] = r3(gaps.front());
  if (gaps.size() < 2) {
    f.value = fmt::format("one '{}' only: gap {}", o.annotation, us_str(gaps.front()));
    return "needs at least 2 annotations to compare the first gap";
  }
  const double later = median(std::vector<double>(gaps.begin() + 1, gaps.end()));
  f.data["median_later_gap_us"] = r3(later);
  f.data["first_over_median_later"] = later > 0 ? json(r3(gaps.front() / later)) : json(nullptr);
  f.value = fmt::format("gap before the first op: {} in the first step, median {} later",
                        us_str(gaps.front()), us_str(later));
  return measured(f, gaps.front() >= 1.5 * later
                         ? "the first call does one-time setup before any op starts (library "
                           "handles, heuristics, lazy loading)"
                         : "no one-time setup visible before the first op");
}

// ---- 4. dispatch chain ------------------------------------------------------------------
std::string measure_dispatch_chain(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  const auto anns = v.annotations(o.annotation);
  if (anns.empty())
    return fmt::format(
        "no '{}' annotation in this trace (pick one "
        "with --annotation)",
        o.annotation);
  std::set<std::string> paths;
  bool reaches_device = false;
  for (EventIdx a : anns)
    for (auto& p : leaf_paths(m, a)) {
      reaches_device = reaches_device || p.on_device;
      paths.insert(std::move(p.text));
    }
  // The last instance is the steady state; the first may carry one-time calls.
  const EventIdx shown = anns.back();
  f.detail = render_tree(m, shown);
  f.data["annotation"] = o.annotation;
  f.data["paths"] = json(std::vector<std::string>(paths.begin(), paths.end()));
  f.data["reaches_device"] = reaches_device;
  f.data["instances"] = anns.size();
  const std::string main = main_path(m, shown);
  f.data["main_path"] = main;
  f.value = main;
  f.explanation = reaches_device ? "each layer hands the work down: annotation > aten op > runtime/driver "
                                   "launch > kernel on the GPU"
                                 : "the chain ends on the CPU (no device work launched under it)";
  add_evidence(f, fmt::format("tree of the {} in {} (starts {})", o.annotation, v.step_label(shown),
                              v.at(m.at(shown).start_ns)));
  return kMeasured;
}

// ---- 5. launch path ---------------------------------------------------------------------
std::string measure_launch_path(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  json launches = json::array();
  // Names are views into the trace, turned into strings once at the end: a 100 MB trace has
  // hundreds of thousands of launches and a handful of distinct names.
  std::map<std::string_view, int> apis;
  std::set<std::string_view> gemm_launchers, ew_launchers, gemm_kernels;
  int gemm_occ = 0, ew_occ = 0, occ_total = 0;
  for (EventIdx d : v.device) {
    const Event& e = m.at(d);
    const auto l = m.launcher(d);
    const std::string_view api = l ? std::string_view(m.at(*l).name) : "(no launch call recorded)";
    const int occ = l ? occupancy_queries_before(m, *l) : 0;
    const KClass k = v.kclass(d);
    apis[api]++;
    occ_total += occ;
    if (k == KClass::Gemm) {
      gemm_launchers.insert(api);
      gemm_kernels.insert(e.name);
      gemm_occ += occ;
    } else if (k == KClass::Elementwise) {
      ew_launchers.insert(api);
      ew_occ += occ;
    }
    const auto op = m.op_of(d);
    if (launches.size() < 200)
      launches.push_back({{"kernel", e.name},
                          {"class", class_name(k)},
                          {"launcher", api},
                          {"op", op ? m.at(*op).name : ""},
                          {"step", v.step_number(d)},
                          {"occupancy_queries", occ}});
    if (occ > 0)
      add_evidence(f, fmt::format("{}: {} occupancy quer{} before {} of {}", v.step_label(d), occ,
                                  occ == 1 ? "y" : "ies", api, short_name(e.name)));
  }
  for (const auto& [api, n] : apis) add_evidence(f, fmt::format("{} x{}", api, n));
  f.data["launches"] = launches;
  auto strings = [](const std::set<std::string_view>& v) {
    return std::vector<std::string>(v.begin(), v.end());
  };
  json api_counts = json::object();
  for (const auto& [api, n] : apis) api_counts[std::string(api)] = n;
  f.data["launch_apis"] = api_counts;
  f.data["gemm_launchers"] = strings(gemm_launchers);
  f.data["gemm_kernels"] = strings(gemm_kernels);
  f.data["elementwise_launchers"] = strings(ew_launchers);
  f.data["gemm_occupancy_queries"] = gemm_occ;
  f.data["elementwise_occupancy_queries"] = ew_occ;
  f.data["occupancy_queries"] = occ_total;
  f.value = fmt::format("GEMM via {}, elementwise via {}; {} occupancy quer{} before launches",
                        join(gemm_launchers, "/", "-"), join(ew_launchers, "/", "-"), occ_total,
                        occ_total == 1 ? "y" : "ies");
  f.devices =
      "seen on the A100 before every heavy GEMM launch; on Hopper (H100/H200) "
      "only before a kernel's first launch, so a warm Hopper trace has none";
  return measured(f, occ_total > 0 ? "an occupancy query before a launch marks a heavy kernel whose "
                                     "launch is sized at run time (on Hopper: first call only)"
                                   : "launches go straight out: no run-time occupancy sizing");
}

// ---- 5b. copies hidden next to a launch --------------------------------------------------
std::string measure_copies_next_to_launch(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  // Group the window's device work by the CPU op that issued it, in issue order.
  std::map<EventIdx, std::vector<EventIdx>> by_op;
  for (EventIdx d : v.device)
    if (auto op = m.op_of(d)) by_op[*op].push_back(d);
  json ops = json::array();
  int copies = 0, dtod_before_gemm = 0, memset_before_gemm = 0;
  for (const auto& [op, work] : by_op) {
    bool has_kernel = false;
    for (EventIdx d : work) has_kernel = has_kernel || m.at(d).kind == Kind::Kernel;
    if (!has_kernel || work.size() < 2) continue;
    bool seen_dtod = false, seen_memset = false;
    // The first 50 ops are written out (their sequences, and the evidence among them); the rest
    // are only counted.
    const bool describe = ops.size() < 50;
    json seq = json::array();
    for (EventIdx d : work) {
      const Event& e = m.at(d);
      if (describe) {
        const auto l = m.launcher(d);
        seq.push_back(fmt::format("{} via {}", short_name(e.name), l ? m.at(*l).name : "?"));
      }
      if (e.kind == Kind::Memcpy || e.kind == Kind::Memset) copies++;
      if (e.kind == Kind::Memcpy && is_dtod(e)) seen_dtod = true;
      if (e.kind == Kind::Memset) seen_memset = true;
      if (v.kclass(d) == KClass::Gemm) {
        dtod_before_gemm += seen_dtod;
        memset_before_gemm += seen_memset;
      }
    }
    if (!describe) continue;
    ops.push_back({{"op", m.at(op).name}, {"step", v.step_number(op)}, {"sequence", seq}});
    add_evidence(f, fmt::format("{} in {}: {}", m.at(op).name, v.step_label(op),
                                join(seq.get<std::vector<std::string>>(), " -> ", "")));
  }
  f.data["ops"] = ops;
  f.data["copies"] = copies;
  f.data["dtod_before_gemm"] = dtod_before_gemm;
  f.data["memset_before_gemm"] = memset_before_gemm;
  f.value = fmt::format(
      "{} copy/memset{} share an op with a kernel ({} DtoD copy before a GEMM, "
      "{} memset before a GEMM)",
      copies, copies == 1 ? "" : "s", dtod_before_gemm, memset_before_gemm);
  return measured(f, dtod_before_gemm > 0
                         ? "the bias is copied into the output first, then the GEMM adds into it "
                           "(beta=1 epilogue): one op, two pieces of device work"
                     : copies > 0 ? "an op issues a copy or memset next to its kernel: easy to miss "
                                    "in the CPU lane, visible on the GPU lane"
                                  : "every op launches only kernels");
}

// ---- 6. kernel footprint ----------------------------------------------------------------
std::string measure_kernel_footprint(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  json kernels = json::array();
  std::set<std::string_view> seen;
  for (EventIdx d : v.device) {
    const Event& e = m.at(d);
    if (!e.kernel || !seen.insert(e.name).second) continue;
    const KClass k = v.kclass(d);
    const json fp = footprint_json(e);
    json row = fp;
    row["kernel"] = e.name;
    row["class"] = class_name(k);
    kernels.push_back(row);
    if (k == KClass::Gemm && !f.data.contains("gemm")) f.data["gemm"] = fp;
    if (k == KClass::Elementwise && !f.data.contains("elementwise")) f.data["elementwise"] = fp;
    add_evidence(f, fmt::format("{}: {} regs/thread, {} B shared, grid {}, block {}", short_name(e.name),
                                e.kernel->registers_per_thread, e.kernel->shared_memory, dims(e.kernel->grid),
                                dims(e.kernel->block)));
  }
  if (kernels.empty()) return "the trace records no kernel launch configuration";
  f.data["kernels"] = kernels;
  if (f.data.contains("gemm") && f.data.contains("elementwise")) {
    const double g = f.data["gemm"]["registers_per_thread"].get<double>();
    const double e = f.data["elementwise"]["registers_per_thread"].get<double>();
    f.data["gemm_over_elementwise_registers"] = e > 0 ? json(r3(g / e)) : json(nullptr);
  }
  f.value = fmt::format("{} kernel{} with launch config; first: {}", kernels.size(),
                        kernels.size() == 1 ? "" : "s", f.evidence.front());
  return measured(f,
                  "a GEMM holds many registers and a large shared-memory tile per block; an "
                  "elementwise kernel needs few registers and no shared memory");
}

// ---- 7. launch-to-start latency ---------------------------------------------------------
// Per step we take the *shortest* wait: when even the quickest launch of a step waits long,
// the queue never drained. (A median of 2 launches is their mean, which a GEMM's queue-mate
// inflates at any size.)
std::string measure_launch_latency(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  json samples = json::array();
  std::vector<std::pair<std::string, std::vector<double>>> groups;  // label -> latencies
  std::vector<double> all;
  int group_step = -2;
  for (EventIdx d : v.device) {  // by start, so steps come in order
    const auto l = m.launcher(d);
    if (!l) continue;
    const double lat = us(m.at(d).start_ns - m.at(*l).start_ns);
    const int step = v.step_number(d);
    all.push_back(lat);
    if (groups.empty() || step != group_step) groups.push_back({v.step_label(d), {}});
    group_step = step;
    groups.back().second.push_back(lat);
    if (samples.size() < 200)
      samples.push_back({{"kernel", m.at(d).name}, {"step", step}, {"latency_us", r3(lat)}});
  }
  if (all.empty()) return "no device event is linked to its launch";
  if (groups.size() < 2) {  // no steps: compare the first and last third of the launches
    if (all.size() < 3) return "needs launches in 2 steps or 3 in all";
    const size_t third = all.size() / 3;
    groups = {{"first third", {all.begin(), all.begin() + third}},
              {"last third", {all.end() - third, all.end()}}};
  }
  json per = json::array();
  for (const auto& [label, lats] : groups) {
    const double mn = *std::min_element(lats.begin(), lats.end());
    const double mx = *std::max_element(lats.begin(), lats.end());
    per.push_back(
        {{"where", label}, {"min_us", r3(mn)}, {"median_us", r3(median(lats))}, {"max_us", r3(mx)}});
    add_evidence(f, fmt::format("{}: {} .. {} over {} launch{}", label, us_str(mn), us_str(mx), lats.size(),
                                lats.size() == 1 ? "" : "es"));
  }
  auto shortest = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  const double first = shortest(groups.front().second), last = shortest(groups.back().second);
  f.data["samples"] = samples;
  f.data["per_step"] = per;
  f.data["first_min_us"] = r3(first);
  f.data["last_min_us"] = r3(last);
  f.data["max_us"] = r3(*std::max_element(all.begin(), all.end()));
  f.data["growth"] = first > 0 ? json(r3(last / first)) : json(nullptr);
  f.data["slope_us_per_step"] = r3((last - first) / static_cast<double>(groups.size() - 1));
  f.value = fmt::format("shortest launch-to-start {} in {}, {} in {} ({:.1f}x); longest {}", us_str(first),
                        groups.front().first, us_str(last), groups.back().first, first > 0 ? last / first : 0,
                        us_str(f.data["max_us"].get<double>()));
  return measured(f, last >= 3 * first
                         ? "each step's kernels wait longer than the last step's: the CPU runs ahead "
                           "and the launch queue fills (the GPU is the bottleneck)"
                         : "kernels start soon after their launch: the GPU keeps up with the CPU");
}

// ---- 8. end-of-window synchronization ---------------------------------------------------
std::string measure_end_sync(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  const auto syncs = m.find("cudaDeviceSynchronize");
  if (syncs.empty()) return "no cudaDeviceSynchronize in the trace";
  const EventIdx s = syncs.back();
  const Interval during{m.at(s).start_ns, m.at(s).end_ns()};
  const double sync = us(m.at(s).dur_ns);
  const double busy_in = us(union_ns(m, v.all_device, during));
  const double busy_all = us(union_ns(m, v.device, v.active_window()));
  f.data["sync_us"] = r3(sync);
  f.data["gpu_busy_us"] = r3(busy_all);
  f.data["busy_during_sync_us"] = r3(busy_in);
  f.data["busy_during_sync_fraction"] = sync > 0 ? json(r3(busy_in / sync)) : json(nullptr);
  f.data["sync_over_gpu_busy"] = busy_all > 0 ? json(r3(sync / busy_all)) : json(nullptr);
  f.value = fmt::format(
      "last cudaDeviceSynchronize {} (GPU busy {} of it); all GPU work in the "
      "window {}",
      us_str(sync), us_str(busy_in), us_str(busy_all));
  f.explanation = sync > 0 && busy_in < 0.5 * sync
                      ? "the wait is mostly idle GPU: it costs round-trip and flush time, not work"
                      : "the CPU waits for queued GPU work to drain: the GPU is behind";
  add_evidence(f,
               fmt::format("cudaDeviceSynchronize {} long, starts {}", us_str(sync), v.at(m.at(s).start_ns)));
  return kMeasured;
}

// ---- 9. kernel duration distribution ----------------------------------------------------
std::string measure_kernel_durations(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  std::map<std::string_view, std::vector<std::pair<double, EventIdx>>> by_name;
  double total = 0, gemm = 0;
  for (EventIdx d : v.device) {
    const double t = us(m.at(d).dur_ns);
    by_name[m.at(d).name].push_back({t, d});
    total += t;
    if (v.kclass(d) == KClass::Gemm) gemm += t;
  }
  json rows = json::array();
  int outliers = 0;
  std::string table = fmt::format("{:>6} {:>10} {:>10} {:>10} {:>10}  {}\n", "count", "min", "median", "mean",
                                  "max", "kernel");
  for (const auto& [name, ds] : by_name) {
    std::vector<double> t;
    for (const auto& p : ds) t.push_back(p.first);
    const double med = median(t), mean = average(t);
    const auto [mn, mx] = std::minmax_element(t.begin(), t.end());
    json out = json::array();
    for (const auto& [dur, d] : ds)
      if (dur > o.outlier_factor * med) {
        out.push_back({{"step", v.step_number(d)}, {"dur_us", r3(dur)}});
        add_evidence(f, fmt::format("outlier: {} took {} in {} (median {})", short_name(name), us_str(dur),
                                    v.step_label(d), us_str(med)));
        outliers++;
      }
    json row = {{"kernel", name},       {"class", class_name(v.kclass(ds.front().second))},
                {"count", t.size()},    {"min_us", r3(*mn)},
                {"median_us", r3(med)}, {"mean_us", r3(mean)},
                {"max_us", r3(*mx)},    {"mean_over_median", med > 0 ? json(r3(mean / med)) : json(nullptr)},
                {"outliers", out}};
    if (v.kclass(ds.front().second) == KClass::Gemm && !f.data.contains("gemm")) f.data["gemm"] = row;
    rows.push_back(row);
    table += fmt::format("{:>6} {:>10} {:>10} {:>10} {:>10}  {}{}\n", t.size(), us_str(*mn), us_str(med),
                         us_str(mean), us_str(*mx), short_name(name),
                         out.empty() ? "" : fmt::format("  <- {} outlier(s)", out.size()));
  }
  f.detail = table;
  f.data["kernels"] = rows;
  f.data["outliers"] = outliers;
  f.data["outlier_rule"] = fmt::format("duration > {} x the median of the same kernel", o.outlier_factor);
  f.data["gemm_share"] = total > 0 ? json(r3(gemm / total)) : json(nullptr);
  f.value = fmt::format(
      "{} kernel name{}, {} outlier{} (> {}x median); GEMMs are {:.0f}% of "
      "device time",
      by_name.size(), by_name.size() == 1 ? "" : "s", outliers, outliers == 1 ? "" : "s", o.outlier_factor,
      total > 0 ? 100 * gemm / total : 0);
  return measured(f, outliers > 0 ? "the same kernel on the same data ran slower at times (clocks, "
                                    "power, other work): read the distribution, not the mean"
                                  : "each kernel runs in a steady time");
}

// ---- 10. profiler artefacts and one-time setup -------------------------------------------
namespace {
// The innermost CPU op whose span holds [start, end] (an event on another row, such as a buffer
// request on pid -1, happened while that op ran): down each CPU lane's call tree, at each level
// the last event that starts at or before `start`.
std::optional<EventIdx> innermost_op_around(const TraceModel& m, int64_t start, int64_t end) {
  std::optional<EventIdx> best;
  for (const CpuLane& lane : m.cpu_lanes()) {
    const std::vector<EventIdx>* level = &lane.roots;
    while (!level->empty()) {
      const auto it = std::upper_bound(level->begin(), level->end(), start,
                                       [&](int64_t t, EventIdx i) { return t < m.at(i).start_ns; });
      if (it == level->begin()) break;
      const EventIdx e = *std::prev(it);
      if (m.at(e).end_ns() < end) break;
      if (m.at(e).kind == Kind::CpuOp && (!best || m.at(e).dur_ns < m.at(*best).dur_ns)) best = e;
      level = &m.children(e);
    }
  }
  return best;
}

// Where each Activity Buffer Request sits: its row (Kineto draws it on pid -1, category
// "overhead", not on a GPU stream), its step, the CPU op it ran during, and whether that op
// launched its first device work only after the request ended (the request held the op up).
json buffer_requests(const View& v) {
  const TraceModel& m = v.m;
  std::set<std::pair<int64_t, int64_t>> gpu_rows;
  for (EventIdx d : v.all_device) gpu_rows.insert({m.at(d).pid, m.at(d).tid});
  constexpr size_t kPlaced = 8;  // each placement looks at the device work: the first few are enough
  json out = json::array();
  for (EventIdx i = 0; i < m.trace().events.size() && out.size() < kPlaced; ++i) {
    const Event& r = m.at(i);
    if (r.name != "Activity Buffer Request") continue;
    const StepWindow* s = m.step_at(r.start_ns);
    json j = {{"pid", r.pid},
              {"category", r.category},
              {"dur_us", r3(us(r.dur_ns))},
              {"on_gpu_stream_row", gpu_rows.count({r.pid, r.tid}) > 0},
              {"step", s ? s->number : -1}};
    const auto op = innermost_op_around(m, r.start_ns, r.end_ns());
    j["during"] = op ? m.at(*op).name : "";
    std::optional<int64_t> first_launch;
    for (EventIdx d : v.all_device)
      if (const auto l = m.launcher(d); l && op && m.op_of(d) == op)
        first_launch = std::min(first_launch.value_or(m.at(*l).start_ns), m.at(*l).start_ns);
    j["launch_after_request"] = first_launch ? json(*first_launch >= r.end_ns()) : json(nullptr);
    out.push_back(std::move(j));
  }
  return out;
}

// For each kind of one-time event, the CPU ops it ran during (the innermost around it): whose
// first call paid for it (chapter 01's cold run: the GEMM's setup under aten::mm). The first few
// of each name are placed (a long training trace can hold thousands of cudaDeviceGetAttribute).
json one_time_during(const TraceModel& m) {
  constexpr int kPerName = 4;
  std::map<std::string, std::set<std::string>> during;
  std::map<std::string, int> seen;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (!is_one_time_event(e.name) || seen[e.name]++ >= kPerName) continue;
    const auto op = innermost_op_around(m, e.start_ns, e.end_ns());
    during[e.name].insert(op ? m.at(*op).name : "");
  }
  json out = json::object();
  for (const auto& [name, ops] : during) out[name] = std::vector<std::string>(ops.begin(), ops.end());
  return out;
}
}  // namespace

std::string measure_profiler_artefacts(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  std::map<std::string, std::pair<int, double>> found;  // name -> count, total us
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (!is_one_time_event(e.name)) continue;
    auto& [n, t] = found[e.name];
    if (n == 0)
      add_evidence(f, fmt::format("{} ({}) {}, {} long", e.name, kind_name(e.kind), v.at(e.start_ns),
                                  us_str(us(e.dur_ns))));
    n++;
    t += us(e.dur_ns);
  }
  json rows = json::array();
  int count = 0;
  double total = 0;
  for (const auto& [name, nt] : found) {
    rows.push_back({{"name", name}, {"count", nt.first}, {"total_us", r3(nt.second)}});
    count += nt.first;
    total += nt.second;
  }
  f.data["events"] = rows;
  f.data["count"] = count;
  f.data["total_us"] = r3(total);
  // The profiler's own start-up (its activity buffers) vs one-time work of the libraries
  // (module loading, attribute setup, occupancy sizing): two effects with two cures.
  const int requests = found.count("Activity Buffer Request") ? found["Activity Buffer Request"].first : 0;
  f.data["activity_buffer_requests"] = requests;
  f.data["library_events"] = count - requests;
  json library = json::array();
  for (const auto& [name, nt] : found)
    if (name != "Activity Buffer Request") library.push_back(name);
  f.data["library_names"] = library;
  f.data["requests"] = buffer_requests(v);
  f.data["during"] = one_time_during(m);
  // How long after the window opened the device row starts, and how long that first piece of
  // device work waited after its own launch: a late first launch, not a queue, when the second is short.
  if (!v.device.empty() && !m.steps().empty()) {
    const Event& first = m.at(v.device.front());
    f.data["window_to_first_device_us"] = r3(us(first.start_ns - m.steps().front().start_ns));
    if (const auto l = m.launcher(v.device.front()))
      f.data["first_device_launch_wait_us"] = r3(us(first.start_ns - m.at(*l).start_ns));
  }
  f.value = count == 0 ? "no profiler or one-time setup events"
                       : fmt::format("{} one-time/profiler event{} ({} in total): {}", count,
                                     count == 1 ? "" : "s", us_str(total), join(keys(found), ", ", ""));
  return measured(f, count > 0 ? "these run once per process or are the profiler's own work: keep "
                                 "them out of what you measure (warm up first)"
                               : "the window holds only the workload");
}

// ---- 11. achieved throughput ------------------------------------------------------------
// Without the problem size: the FLOPs the trace carries (record_shapes + with_flops: torch's
// formula per GEMM op) over the GPU time of the kernels those ops launched.
std::string throughput_from_flops(const View& v, Fact& f, const Problem& p) {
  const TraceModel& m = v.m;
  double flops = 0, gemm_us = 0;
  int ops = 0;
  std::vector<bool> counted(m.trace().events.size(), false);
  for (EventIdx d : v.device) {
    if (v.kclass(d) != KClass::Gemm) continue;
    const auto op = m.op_of(d);
    if (!op) continue;
    // The op that owns the launch, or the nearest ancestor with FLOPs (aten::linear > addmm).
    std::optional<EventIdx> with = op;
    while (with && m.at(*with).flops <= 0) with = m.parent(*with);
    if (!with) continue;
    gemm_us += us(m.at(d).dur_ns);
    if (!counted[*with]) {
      counted[*with] = true;
      flops += static_cast<double>(m.at(*with).flops);
      ++ops;
    }
  }
  if (ops == 0 || gemm_us <= 0)
    return "no FLOPs in this trace and no problem size: record with with_flops "
           "(Python: profile(record_shapes=True, with_flops=True); C++: "
           "wb::ProfilerOptions::with_flops) or pass --size N [--batch B --dtype]";
  const double tflops = flops / (gemm_us * 1e-6) / 1e12;
  const std::string dev = v.device_name();
  f.data["source"] = "trace FLOPs (with_flops)";
  f.data["gemm_flops"] = flops;
  f.data["gemm_us"] = r3(gemm_us);
  f.data["gemm_tflops"] = r3(tflops);
  f.data["device"] = dev;
  f.value = fmt::format("GEMM {:.3g} TFLOP/s: {:.4g} flop (the trace's FLOPs, {} ops) in {} of GEMM kernels",
                        tflops, flops, ops, us_str(gemm_us));
  add_evidence(f, fmt::format("{} GEMM ops with FLOPs; their kernels ran {}", ops, us_str(gemm_us)));
  const DevicePeak* peak = find_peak(dev);
  if (!peak || peak_tflops(*peak, p.dtype_bytes) <= 0)
    return fmt::format(
        "unknown peak for device '{}' (common/core/data/device_peaks.json lists the known ones)", dev);
  f.data["gemm_pct_of_peak"] = r3(100 * tflops / peak_tflops(*peak, p.dtype_bytes));
  f.value += fmt::format(" = {:.3g}% of {} peak {:.0f} TFLOP/s ({} B elements assumed; --dtype)",
                         f.data["gemm_pct_of_peak"].get<double>(), peak->model,
                         peak_tflops(*peak, p.dtype_bytes), p.dtype_bytes);
  return measured(f, "percent of the datasheet peak from the trace's own FLOPs count");
}

std::string measure_throughput(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  if (!v.gpu) {
    // No device peak to judge against; still say what the trace's FLOPs give on the CPU.
    double flops = 0;
    int64_t ns = 0;
    int ops = 0;
    for (const Event& e : m.trace().events)
      if (e.kind == Kind::CpuOp && e.flops > 0 && is_gemm_op(e.name)) {
        flops += static_cast<double>(e.flops);
        ns += e.dur_ns;
        ++ops;
      }
    if (ops > 0 && ns > 0) {
      f.data["source"] = "trace FLOPs (with_flops)";
      f.data["cpu_gemm_gflops"] = r3(flops / (static_cast<double>(ns) * 1e-9) / 1e9);
      f.value = fmt::format(
          "CPU GEMM ops: {:.4g} flop (the trace's FLOPs, {} calls) in {} of CPU time = "
          "{:.3g} GFLOP/s",
          flops, ops, us_str(us(ns)), f.data["cpu_gemm_gflops"].get<double>());
      return "CPU-only trace: no kernel times and no device peak to "
             "compare with (the CPU figure is above)";
    }
    // (The chapters' recorded verdicts read exactly this: keep it.)
    return "CPU-only trace: no kernel times";
  }
  const Problem& p = o.problem;
  // No problem size, or a rectangular one (m x k times k x n: chapters 06-07, the LLM of
  // chapters 09-10), which the square formula below does not describe: the trace's FLOPs.
  if (p.n <= 0 || p.m > 0) return throughput_from_flops(v, f, p);
  std::vector<double> gemm, ew;
  std::vector<std::pair<double, double>> copies;  // bytes, us
  for (EventIdx d : v.device) {
    const Event& e = m.at(d);
    const KClass k = v.kclass(d);
    if (k == KClass::Gemm) gemm.push_back(us(e.dur_ns));
    if (k == KClass::Elementwise) ew.push_back(us(e.dur_ns));
    // A device-to-device copy reads and writes every byte: twice the payload in traffic.
    if (e.kind == Kind::Memcpy && e.bytes > 0 && e.dur_ns > 0)
      copies.push_back({(is_dtod(e) ? 2.0 : 1.0) * static_cast<double>(e.bytes), us(e.dur_ns)});
  }
  const std::string dev = v.device_name();
  const DevicePeak* peak = find_peak(dev);
  const double n = static_cast<double>(p.n), b = static_cast<double>(p.batch);
  const double flops = 2 * b * n * n * n;                 // one multiply-add = 2 flop
  const double ew_bytes = 3 * b * n * n * p.dtype_bytes;  // read x@w and b, write y
  f.data["problem"] = {{"n", p.n}, {"batch", p.batch}, {"dtype_bytes", p.dtype_bytes}};
  f.data["device"] = dev;
  std::vector<std::string> parts;
  if (!gemm.empty()) {
    const double tflops = flops / (median(gemm) * 1e-6) / 1e12;
    f.data["gemm_median_us"] = r3(median(gemm));
    f.data["gemm_tflops"] = r3(tflops);
    if (peak && peak_tflops(*peak, p.dtype_bytes) > 0)
      f.data["gemm_pct_of_peak"] = r3(100 * tflops / peak_tflops(*peak, p.dtype_bytes));
    parts.push_back(fmt::format("GEMM {:.3g} TFLOP/s", tflops));
    add_evidence(f, fmt::format("GEMM: 2*{}*{}^3 flop in median {}", p.batch, p.n, us_str(median(gemm))));
  }
  if (!ew.empty()) {
    const double tbps = ew_bytes / (median(ew) * 1e-6) / 1e12;
    f.data["elementwise_median_us"] = r3(median(ew));
    f.data["elementwise_tbps"] = r3(tbps);
    if (peak) f.data["elementwise_pct_of_peak"] = r3(100 * tbps / peak->mem_tbps);
    parts.push_back(fmt::format("add {:.3g} TB/s", tbps));
    add_evidence(f, fmt::format("elementwise: 3*{}*{}^2*{} B in median {}", p.batch, p.n, p.dtype_bytes,
                                us_str(median(ew))));
  }
  if (!copies.empty()) {
    const double tbps = copies.front().first / (copies.front().second * 1e-6) / 1e12;
    f.data["memcpy_tbps"] = r3(tbps);
    if (peak) f.data["memcpy_pct_of_peak"] = r3(100 * tbps / peak->mem_tbps);
    parts.push_back(fmt::format("copy {:.3g} TB/s", tbps));
  }
  if (parts.empty()) return "no GEMM, elementwise or copy on the GPU";
  f.value = join(parts, ", ", "");
  if (!peak) {
    f.value += fmt::format(" (unknown peak for '{}')", dev);
    return fmt::format(
        "unknown peak for device '{}' (common/core/data/device_peaks.json lists the known ones)", dev);
  }
  f.data["peak"] = {{"model", peak->model},
                    {"tflops", peak_tflops(*peak, p.dtype_bytes)},
                    {"mem_tbps", peak->mem_tbps},
                    {"source", peak->source}};
  f.value += fmt::format(" of {} peak {:.0f} TFLOP/s, {:.2f} TB/s", peak->model,
                         peak_tflops(*peak, p.dtype_bytes), peak->mem_tbps);
  if (f.data.contains("gemm_pct_of_peak"))
    f.value += fmt::format(" (GEMM {:.3g}%)", f.data["gemm_pct_of_peak"].get<double>());
  return measured(f,
                  "percent of the datasheet peak: near it the kernel is compute- or "
                  "bandwidth-bound; far below it, the work is too small to fill the chip");
}

// ---- table: hot loops -------------------------------------------------------------------
std::string measure_hot_ops(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  std::map<std::string, int> calls;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (e.kind != Kind::CpuOp && e.kind != Kind::Runtime && e.kind != Kind::Driver) continue;
    if (!m.steps().empty() && !m.step_at(e.start_ns)) continue;
    calls[e.name]++;
  }
  if (calls.empty()) return "no CPU ops in the window";
  const double steps = std::max<size_t>(1, m.steps().size());
  std::vector<std::pair<int, std::string>> ranked;
  for (const auto& [name, n] : calls) ranked.push_back({n, name});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;  // most calls, then A-Z
  });
  json top = json::array();
  for (size_t i = 0; i < ranked.size() && i < 10; ++i) {
    top.push_back(
        {{"name", ranked[i].second}, {"calls", ranked[i].first}, {"per_step", r3(ranked[i].first / steps)}});
    if (i < 5)
      add_evidence(f, fmt::format("{}: {} calls ({:.1f} per step)", ranked[i].second, ranked[i].first,
                                  ranked[i].first / steps));
  }
  f.data["top"] = top;
  f.data["max_per_step"] = r3(ranked.front().first / steps);
  f.value = fmt::format("most called: {} x{} ({:.1f} per step)", ranked.front().second, ranked.front().first,
                        ranked.front().first / steps);
  return measured(f, ranked.front().first / steps >= 10
                         ? "a row with many calls per step is a hot loop: its per-call overhead adds up"
                         : "every op runs a handful of times per step");
}

// ---- torch.compile markers --------------------------------------------------------------
// Per step: how often each marker ran (a compiled call enters its region once), and which
// compiled graphs the steps called (the same "## Call CompiledFxGraph <hash> ##" every step: the
// cache served one graph).
namespace {
void compile_markers_per_step(const View& v, Fact& f) {
  const TraceModel& m = v.m;
  const auto& steps = m.steps();
  std::map<std::string, std::map<int, int>> counts;  // marker -> step -> calls
  std::set<std::string> graphs, regions;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    const std::string_view marker = compile_marker(e.name);
    if (marker.empty() || e.kind == Kind::GpuUserAnnotation) continue;
    if (marker == "CompiledFxGraph") graphs.insert(e.name);
    if (marker == "Torch-Compiled Region") regions.insert(e.name);
    if (const StepWindow* s = m.step_at(e.start_ns)) counts[std::string(marker)][s->number]++;
  }
  json per_step = json::object(), once = json::array();
  for (const auto& [marker, by_step] : counts) {
    int calls = 0;
    bool each_once = by_step.size() == steps.size() && !steps.empty();
    for (const auto& [step, n] : by_step) {
      calls += n;
      each_once = each_once && n == 1;
    }
    per_step[marker] =
        r3(static_cast<double>(calls) / static_cast<double>(std::max<size_t>(1, steps.size())));
    if (each_once) once.push_back(marker);
  }
  f.data["steps"] = steps.size();
  f.data["per_step"] = per_step;
  f.data["once_every_step"] = once;
  f.data["graphs"] = json(std::vector<std::string>(graphs.begin(), graphs.end()));
  f.data["distinct_graphs"] = graphs.size();
  f.data["regions"] = json(std::vector<std::string>(regions.begin(), regions.end()));
  for (const auto& g : graphs) add_evidence(f, "compiled graph called: " + g);
}
}  // namespace

std::string measure_compile_markers(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  std::map<std::string, int> found;
  bool cache_hit = false;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const std::string& n = m.at(i).name;
    const std::string_view marker = compile_marker(n);
    if (marker.empty()) continue;
    if (found[std::string(marker)]++ == 0) add_evidence(f, fmt::format("{} {}", n, v.at(m.at(i).start_ns)));
    cache_hit = cache_hit || marker == "CompiledFxGraph";
  }
  f.data["markers"] = found;
  f.data["compiled"] = !found.empty();
  f.data["cache_hit"] = cache_hit;
  compile_markers_per_step(v, f);
  f.value = found.empty() ? "no torch.compile markers (eager or C++ code)"
                          : "torch.compile rows: " + join(keys(found), ", ", "");
  return measured(f, found.empty() ? "the ops run eagerly"
                     : cache_hit   ? "compiled code ran from its cache (## Call CompiledFxGraph ## "
                                     "names the cached graph)"
                                   : "compiled region present");
}

// ---- registry -----------------------------------------------------------------------------
namespace lessons_detail {
// The one list of facts, in teaching order: id, title, default pattern, why a CPU-only trace
// has nothing to measure ("": the measurement decides), the measurement. compute_fact(id, ...)
// computes one; inspect and check_lessons build one View and hand it to every fact (it sorts
// all device work: worth doing once on a 100 MB trace).
const std::vector<ViewFact>& view_facts() {
  static const std::vector<ViewFact> kFacts = [] {
  std::vector<ViewFact> facts = {
      {"overhead_bound",
       "Overhead-bound vs compute-bound",
       {"overhead-bound: Self CUDA total < 0.1 x Self CPU total",
        "the cheatsheet's 'CPU total >> CUDA total'; 64x64 runs sit near 0.01",
        {{"/cuda_cpu_ratio", Op::Lt, 0.1, Gpu}}},
       "",
       measure_overhead_bound},
      {"step_widths",
       "ProfilerStep widths (cold start)",
       {"cold start: first active step >= 1.5 x the median of the others",
        "noise between warm steps stays well under 1.5x; a cold first step is 2-3x",
        {{"/first_over_median_rest", Op::Ge, 1.5, Any}}},
       "",
       measure_step_widths},
      {"dead_window",
       "Dead window: annotation start to its first op",
       {"one-time setup: first gap >= 1.5 x the median later gap",
        "a cold first gap is 2-15x the later ones on the reference runs",
        {{"/first_over_median_later", Op::Ge, 1.5, Any}}},
       "",
       measure_dead_window},
      {"dispatch_chain",
       "Dispatch chain: annotation down to kernels",
       {"the '{annotation}' annotation has a call tree",
        "descriptive: chapters state which chain they expect",
        {{"/instances", Op::Ge, 1, Any}}},
       "",
       measure_dispatch_chain},
      {"launch_path",
       "Launch path per kernel and occupancy queries",
       {"heavy adaptive kernel: an occupancy query precedes some launch",
        "the cheatsheet's rule; the A100 showed it on every GEMM, the H200 only cold",
        {{"/occupancy_queries", Op::Gt, 0, Gpu}}},
       "CPU-only trace: nothing was launched",
       measure_launch_path},
      {"copies_next_to_launch",
       "Copies and memsets next to a kernel launch",
       {"a cudaMemcpyAsync/cudaMemsetAsync hides next to a kernel launch",
        "the cheatsheet's rule: count copies/memsets issued by an op that also launches",
        {{"/copies", Op::Gt, 0, Gpu}}},
       "CPU-only trace: no device copies",
       measure_copies_next_to_launch},
      {"kernel_footprint",
       "Kernel footprint: registers, shared memory, grid, block",
       {"heavy vs light: the GEMM uses >= 2x the registers/thread of the elementwise kernel",
        "tensor-core GEMMs use 150-250 registers/thread, elementwise kernels ~20-40",
        {{"/gemm_over_elementwise_registers", Op::Ge, 2, Gpu}}},
       "CPU-only trace: no kernels",
       measure_kernel_footprint},
      {"launch_latency",
       "Launch-to-start latency (CPU running ahead)",
       {"CPU runs ahead: the shortest launch-to-start wait grows >= 3x from the first step to the last",
        "at 64 it stays near ten us in every step; a filling queue grows it ~10x in 3 steps",
        {{"/growth", Op::Ge, 3, Gpu}}},
       "CPU-only trace: nothing was launched",
       measure_launch_latency},
      {"end_sync",
       "End-of-window synchronization",
       {"idle wait: the GPU is busy < 50% of the final sync",
        "at 64 the GPU has finished before the sync starts; at 4096 it is draining a queue for most of it",
        {{"/busy_during_sync_fraction", Op::Lt, 0.5, Gpu}}},
       "CPU-only trace: no device to wait for",
       measure_end_sync},
      {"kernel_durations",
       "Kernel duration distribution",
       {"same kernel varying: some run > {outlier_factor}x its median",
        "MAD is 0 for a handful of identical samples, so a ratio to the median is steadier than median + "
        "k*MAD",
        {{"/outliers", Op::Gt, 0, Gpu}}},
       "CPU-only trace: no kernels",
       measure_kernel_durations},
      {"profiler_artefacts",
       "Profiler artefacts and one-time setup",
       {"one-time work in the window: module loading, attribute setup or profiler buffers appear",
        "any such event is a symptom; a warm steady-state window has none",
        {{"/count", Op::Gt, 0, Any}}},
       "",
       measure_profiler_artefacts},
      {"throughput",
       "Achieved throughput vs the device's peak",
       {"the GEMM runs at >= 50% of the device's peak",
        "datasheet peaks are rarely exceeded; half of it means the chip is busy",
        {{"/gemm_pct_of_peak", Op::Ge, 50, Gpu}}},
       "",
       measure_throughput},
      {"hot_ops",
       "Calls per step (hot loops)",
       {"hot loop: some op is called >= 10 times per step",
        "the workload itself calls each op once or a few times per step",
        {{"/max_per_step", Op::Ge, 10, Any}}},
       "",
       measure_hot_ops},
      {"compile_markers",
       "torch.compile markers",
       {"compiled: TorchDynamo / Torch-Compiled Region / CompiledFxGraph rows appear",
        "these rows exist only when torch.compile wrapped the code",
        {{"/compiled", Op::Eq, true, Any}}},
       "",
       measure_compile_markers},
      {"step_cpu",
       "CPU time per step, and where it goes",
       {"layers around the ops: >= half of '{annotation}' is CPU time outside its aten ops",
        "eager code spends its annotation in the aten ops it calls; torch.compile's cache lookup, compiled "
        "region and wrappers (or a runner) add CPU time around one op",
        {{"/outside_ops_share", Op::Ge, 0.5, Any}}},
       "",
       measure_step_cpu},
      // chapters 02-04 (facts_chapters.cpp)
      {"kernel_gaps",
       "GPU idle between the kernels of each step",
       {"an unusual gap: some step's largest gap > 2x the median step's and > 2 us above it",
        "the profiler's own buffer requests can open a gap between two kernels of a step",
        {{"/unusual_steps", Op::Gt, 0, Gpu}}},
       "CPU-only trace: no kernels",
       measure_kernel_gaps},
      {"cpu_shares",
       "Where a CPU step's time goes",
       {"compute-bound on the CPU: '{annotation}' outside its GEMM and add ops < 2% of it",
        "on a CPU the arithmetic runs inside the GEMM op and aten::add; the rest is dispatcher and "
        "allocation overhead",
        {{"/overhead_share", Op::Lt, 0.02, Any}}},
       "",
       measure_cpu_shares},
      {"batch_chain",
       "A batch axis in the dispatch chain (vs the 2-D run)",
       {"the batched run dispatches aten::bmm and runs >= 2x the CPU ops of the 2-D one",
        "matmul reshapes and expands batched operands around one bmm call",
        {{"/batched/gemm_op", Op::Eq, "aten::bmm", Any}, {"/ops_ratio", Op::Ge, 2, Any}}},
       "",
       measure_batch_chain},
      // Part 2 (facts_part2.cpp)
      {"view_ops",
       "Metadata ops (views) launch nothing",
       {"views (t, transpose, as_strided, view, reshape, _unsafe_view) have zero device time",
        "a view rewrites shape and strides on the CPU; no kernel reads the data",
        {{"/view_device_us", Op::Eq, 0, Gpu}}},
       "",
       measure_view_ops},
      {"work_per_step",
       "Ops and kernels per step",
       {"every step launches the same number of kernels",
        "a warm, steady loop repeats the same work; an extra kernel in one step is one-time work (a cold "
        "call, a workspace memset)",
        {{"/uniform_kernels", Op::Eq, true, Gpu}}},
       "",
       measure_work_per_step},
      {"gemm_tiles",
       "GEMM kernels: same FLOPs, different tiles",
       {"each GEMM kernel reaches >= 30% of the device's peak",
        "a GEMM large enough to fill the chip runs near its datasheet rate",
        {{"/min_pct_of_peak", Op::Ge, 30, Gpu}}},
       "CPU-only trace: no GEMM kernels to compare",
       measure_gemm_tiles},
      {"pointwise_traffic",
       "Pointwise traffic: gelu + mul vs one fused kernel",
       {"the pointwise stage runs at >= 50% of memory bandwidth",
        "pointwise kernels are memory-bound: their time is their bytes over bandwidth",
        {{"/pct_of_hbm", Op::Ge, 50, Gpu}}},
       "",
       measure_pointwise_traffic},
      {"fusion_pays",
       "Fusion pays: the fused kernel's time vs eager's gelu + mul",
       {"judged by a chapter's lessons.json (chapter 07): no threshold of its own",
        "the comparison needs the eager variant of the same run as the reference",
        {}},
       "CPU-only trace: no pointwise kernels to time",
       measure_fusion_pays},
      {"pointwise_bytes_bound",
       "Pointwise bytes: the most HBM could have moved in the kernels' time",
       {"judged by a chapter's lessons.json (chapter 07): no threshold of its own",
        "time x the datasheet's memory bandwidth bounds the bytes a kernel moved",
        {}},
       "CPU-only trace: no pointwise kernels to time",
       measure_pointwise_bytes_bound},
      {"runner_waits",
       "Waits per step: the CPU blocked on the GPU",
       {"judged by a chapter's lessons.json (chapter 07): no threshold of its own",
        "cudaEventQuery/cudaEventSynchronize inside a step block the CPU until earlier GPU work is done",
        {}},
       "CPU-only trace: no CUDA calls to wait in",
       measure_runner_waits},
  };
  // profile_memory (facts_memory.cpp)
  for (const auto& f : memory_view_facts()) facts.push_back(f);
  return facts;
  }();
  return kFacts;
}

Fact compute_fact(std::string_view id, const View& v, const FactOptions& o) {
  for (const auto& fi : view_facts())
    if (fi.id == id) return fi.fn(v, o);
  std::string ids;
  for (const auto& fi : view_facts()) ids += (ids.empty() ? "" : ", ") + std::string(fi.id);
  throw std::invalid_argument(fmt::format("unknown lesson fact '{}' (known: {})", id, ids));
}
}  // namespace lessons_detail

const std::vector<FactInfo>& all_facts() {
  static const std::vector<FactInfo> kFacts = [] {
    std::vector<FactInfo> out;
    for (const auto& fi : view_facts()) out.push_back({fi.id, fi.title});
    return out;
  }();
  return kFacts;
}

Fact compute_fact(std::string_view id, const TraceModel& m, const FactOptions& o) {
  return lessons_detail::compute_fact(id, View(m), o);
}

}  // namespace wb
