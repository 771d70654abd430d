// Lesson facts about launches: the dispatch chain from an annotation down to its kernels (and
// what a batch axis adds to it), the launch path of each kernel with its occupancy queries, the
// copies and memsets issued next to a launch, and the launch-to-start latency (a CPU running
// ahead of a busy GPU).
//
//   dispatch_chain, batch_chain, launch_path, copies_next_to_launch, launch_latency
//
// Registered at the end of this file (launches_facts(), each entry with its default pattern); the
// chapters' patterns are in chapters/NN_name/lessons.json.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fact_view.hpp"
#include "workbook/lessons.hpp"
#include "workbook/rules.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

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

// ---- a batch axis in the dispatch chain: this run vs the 2-D reference ----------------------
namespace {
struct Chain {
  int steps = 0;
  std::string gemm_op;  // the GEMM op aten::matmul calls
  double ops = 0;       // aten ops under the annotation, per step
  double shape_us = 0;  // median time aten::matmul spends outside its GEMM op
  double gemm_kernels = 0;
  std::array<int, 3> grid{0, 0, 0};
  long long blocks() const { return 1LL * grid[0] * grid[1] * grid[2]; }
};
Chain chain_of(const View& v, const std::string& annotation) {
  const TraceModel& m = v.m;
  Chain c;
  std::vector<double> shape;
  int ops = 0, kernels = 0;
  for (EventIdx a : v.annotations(annotation)) {
    c.steps++;
    std::vector<EventIdx> todo(m.children(a).begin(), m.children(a).end());
    while (!todo.empty()) {
      const EventIdx i = todo.back();
      todo.pop_back();
      const Event& e = m.at(i);
      for (EventIdx ch : m.children(i)) todo.push_back(ch);
      if (e.kind == Kind::CpuOp) ops++;
      if (e.name != "aten::matmul") continue;
      double inner = 0;
      for (EventIdx g : m.children(i)) {
        if (!is_gemm_op(m.at(g).name)) continue;
        inner += us(m.at(g).dur_ns);
        c.gemm_op = m.at(g).name;
        std::vector<EventIdx> calls(m.children(g).begin(), m.children(g).end());
        while (!calls.empty()) {
          const EventIdx r = calls.back();
          calls.pop_back();
          for (EventIdx cc : m.children(r)) calls.push_back(cc);
          for (EventIdx d : m.launched(r)) {
            if (classify(m.at(d)) != KernelClass::Gemm) continue;
            kernels++;
            if (c.grid[0] == 0 && m.at(d).kernel) c.grid = m.at(d).kernel->grid;
          }
        }
      }
      shape.push_back(us(e.dur_ns) - inner);
    }
  }
  if (c.steps == 0) return c;
  c.ops = static_cast<double>(ops) / c.steps;
  c.shape_us = median(shape);
  c.gemm_kernels = static_cast<double>(kernels) / c.steps;
  return c;
}
json chain_json(const Chain& c) {
  return {{"gemm_op", c.gemm_op},
          {"ops_per_step", r3(c.ops)},
          {"outside_gemm_us", r3(c.shape_us)},
          {"gemm_kernels_per_step", r3(c.gemm_kernels)},
          {"gemm_grid", c.grid},
          {"gemm_blocks", c.blocks()},
          {"steps", c.steps}};
}
}  // namespace

std::string measure_batch_chain(const View& v, const FactOptions& o, Fact& f) {
  if (!o.reference) return "needs the 2-D run to compare with (FactOptions::reference)";
  const View ref(*o.reference);
  const Chain b = chain_of(v, o.annotation), flat = chain_of(ref, o.annotation);
  if (b.steps == 0 || flat.steps == 0)
    return fmt::format("no '{}' annotation in {}", o.annotation,
                       b.steps == 0 ? "this run" : o.reference_label);
  f.data["batch"] = o.problem.batch;
  f.data["batched"] = chain_json(b);
  f.data["flat"] = chain_json(flat);
  f.data["ops_ratio"] = flat.ops > 0 ? json(r3(b.ops / flat.ops)) : json(nullptr);
  f.data["outside_gemm_extra_us"] = r3(b.shape_us - flat.shape_us);
  if (b.blocks() > 0 && flat.blocks() > 0)
    f.data["blocks_ratio"] = r3(static_cast<double>(b.blocks()) / static_cast<double>(flat.blocks()));
  f.detail = fmt::format("{:<34} {:>14} {:>14}\n", "per step", o.reference_label, "batched");
  auto row = [&](const std::string& what, const std::string& a, const std::string& c) {
    f.detail += fmt::format("{:<34} {:>14} {:>14}\n", what, a, c);
  };
  row("aten::matmul calls", flat.gemm_op.empty() ? "-" : flat.gemm_op, b.gemm_op.empty() ? "-" : b.gemm_op);
  row("aten ops under the annotation", fmt::format("{:.3g}", flat.ops), fmt::format("{:.3g}", b.ops));
  row("aten::matmul outside its GEMM op", us_str(flat.shape_us), us_str(b.shape_us));
  if (b.blocks() > 0 || flat.blocks() > 0) {
    row("GEMM kernels launched", fmt::format("{:.3g}", flat.gemm_kernels),
        fmt::format("{:.3g}", b.gemm_kernels));
    row("GEMM grid", dims(flat.grid), dims(b.grid));
  }
  f.value =
      fmt::format("{}: {} with {:.3g} ops per step; {}: {} with {:.3g} ({:.2g}x)", o.reference_label,
                  flat.gemm_op.empty() ? "no GEMM op" : flat.gemm_op, flat.ops, "batched",
                  b.gemm_op.empty() ? "no GEMM op" : b.gemm_op, b.ops, flat.ops > 0 ? b.ops / flat.ops : 0);
  add_evidence(f, fmt::format("matmul spends {} outside its GEMM op batched vs {} in the 2-D run",
                              us_str(b.shape_us), us_str(flat.shape_us)));
  if (b.blocks() > 0 && flat.blocks() > 0)
    add_evidence(f, fmt::format("GEMM grid {} = {} blocks vs {} = {} blocks, {:.3g} launch(es) per step",
                                dims(b.grid), b.blocks(), dims(flat.grid), flat.blocks(), b.gemm_kernels));
  return measured(f,
                  "a batch axis makes matmul reshape/expand its operands and call bmm: more CPU ops "
                  "per step, one launch for all the matrices");
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
  return kMeasured;
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
  return kMeasured;
}

// The registry's entries of this file's facts (fact_view.hpp: ViewFact): id, title, why a
// CPU-only trace has nothing to measure, the measurement, what the default pattern's verdict
// means, the teaching order, the default pattern, whether it is about a chapter's workload only,
// and the docs/cheatsheet.md rows that name it first.
const std::vector<ViewFact>& launches_facts() {
  static const std::vector<ViewFact> kFacts = {
      {"dispatch_chain",
       "Dispatch chain: annotation down to kernels",
       "",
       measure_dispatch_chain,
       {},
       40,
       R"json({"text": "the '{annotation}' annotation has a call tree",
 "why": "descriptive: chapters state which chain they expect",
 "all": [
      {"key": "/instances", "op": ">=", "value": 1}
 ]})json",
       false,
       {{"**The dispatch chain**",
         "one row per layer: annotation, `aten::` ops, launch call, kernel",
         "nested CPU bars over the launch, an arrow down to the kernel",
         "01, 03, 05",
         {}},
        {"**Shape ops (views)**",
         "`aten::expand`, `aten::reshape`, `aten::view`, `aten::as_strided` rows with 2 calls per step",
         "thin bars under `aten::matmul` before the GEMM op",
         "03",
         {"hot_ops"}}}},
      {"launch_path",
       "Launch path per kernel and occupancy queries",
       "CPU-only trace: nothing was launched",
       measure_launch_path,
       {"an occupancy query before a launch marks a heavy kernel whose launch is sized at run time "
        "(on Hopper: first call only)",
        "launches go straight out: no run-time occupancy sizing"},
       50,
       R"json({"text": "heavy adaptive kernel: an occupancy query precedes some launch",
 "why": "the cheatsheet's rule; the A100 showed it on every GEMM, the H200 only cold",
 "all": [
      {"key": "/occupancy_queries", "op": ">", "value": 0, "scope": "gpu"}
 ]})json",
       false,
       {{"**Launch path**",
         "`cuLaunchKernelEx` vs `cudaLaunchKernel` rows; `cudaOccupancy...` rows if any",
         "the call under each op that owns the arrow to a kernel",
         "01, 02",
         {}}}},
      {"copies_next_to_launch",
       "Copies and memsets next to a kernel launch",
       "CPU-only trace: no device copies",
       measure_copies_next_to_launch,
       {},
       60,
       R"json({"text": "a cudaMemcpyAsync/cudaMemsetAsync hides next to a kernel launch",
 "why": "the cheatsheet's rule: count copies/memsets issued by an op that also launches",
 "all": [
      {"key": "/copies", "op": ">", "value": 0, "scope": "gpu"}
 ]})json",
       false,
       {{"**Copies beside a launch**",
         "`Memcpy DtoD` / `Memset` rows with the GEMM's call count",
         "a copy or memset bar right before the GEMM",
         "04, 05",
         {}}}},
      {"launch_latency",
       "Launch-to-start latency (CPU running ahead)",
       "CPU-only trace: nothing was launched",
       measure_launch_latency,
       {"each step's kernels wait longer than the last step's: the CPU runs ahead and the launch "
        "queue fills (the GPU is the bottleneck)",
        "kernels start soon after their launch: the GPU keeps up with the CPU"},
       80,
       R"json({"text": "CPU runs ahead: the shortest launch-to-start wait grows >= 3x from the first step to the last",
 "why": "at 64 it stays near ten us in every step; a filling queue grows it ~10x in 3 steps",
 "all": [
      {"key": "/growth", "op": ">=", "value": 3, "scope": "gpu"}
 ]})json",
       false,
       {{"**CPU running ahead**",
         "a large Self CPU on `cudaDeviceSynchronize`",
         "launch-to-kernel arrows get longer step after step; CPU steps end long before their kernels",
         "04",
         {"end_sync"}},
        {"**GPU keeping up**",
         "a small `cudaDeviceSynchronize`",
         "each kernel starts soon after its launch, the same in every step",
         "01, 02",
         {"end_sync"}}}},
      {"batch_chain",
       "A batch axis in the dispatch chain (vs the 2-D run)",
       "",
       measure_batch_chain,
       {},
       180,
       R"json({"text": "the batched run dispatches aten::bmm and runs >= 2x the CPU ops of the 2-D one",
 "why": "matmul reshapes and expands batched operands around one bmm call",
 "all": [
      {"key": "/batched/gemm_op", "op": "==", "value": "aten::bmm"},
      {"key": "/ops_ratio", "op": ">=", "value": 2}
 ]})json",
       true,
       {{"**A batch axis in the chain**",
         "`aten::bmm` instead of `aten::mm`, with `aten::expand`, `aten::reshape`, `aten::_unsafe_view` "
         "around it: more calls per step than the 2-D run",
         "still one GEMM kernel per step, with a wider grid",
         "03",
         {}}}}};
  return kFacts;
}

}  // namespace wb
