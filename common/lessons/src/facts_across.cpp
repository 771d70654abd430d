#include "workbook/across.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include "workbook/peaks.hpp"
#include "workbook/rules.hpp"
#include "workbook/stats.hpp"
#include "workbook/trace_model.hpp"

namespace wb {

using nlohmann::json;
using Op = Condition::Op;
using Scope = Condition::Scope;

namespace {

// wb::median of counts, rounded down (a count per step stays a whole number).
int median_count(const std::vector<int>& v) {
  return static_cast<int>(median(std::vector<double>(v.begin(), v.end())));
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}
std::string us(double v) { return v < 0 ? "-" : fixed(v, v < 10 ? 2 : 1); }
std::string shorten(const std::string& s, size_t n = 60) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

// The annotation instance a CPU event runs under, if any.
bool under(const TraceModel& m, EventIdx i, const std::string& annotation) {
  for (auto p = m.parent(i); p; p = m.parent(*p))
    if (m.at(*p).kind == Kind::UserAnnotation && m.at(*p).name == annotation) return true;
  return false;
}

// Which profiled step (index into m.steps()) issued a piece of device work: the step around
// its launch call; a kernel without a recorded launch counts where it started.
std::optional<size_t> step_of(const TraceModel& m, EventIdx d, const std::map<int, size_t>& slot) {
  const auto l = m.launcher(d);
  const StepWindow* s = m.step_at(l ? m.at(*l).start_ns : m.at(d).start_ns);
  if (!s) return std::nullopt;
  return slot.at(s->number);
}

// The aten ops under the annotation, per step (rounded), into s.ops, s.aten_ops and the counts
// of matmul, mm, add and addmm.
void count_ops(const TraceModel& m, const std::string& annotation, VariantSummary& s) {
  std::map<std::string, int> ops;
  int instances = 0;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (e.kind == Kind::UserAnnotation && e.name == annotation) instances++;
    if (e.kind == Kind::CpuOp && under(m, i, annotation)) ops[e.name]++;
  }
  auto per_step = [&](int total) { return instances > 0 ? (total + instances / 2) / instances : 0; };
  for (const auto& [name, n] : ops) {
    s.ops.push_back(name + " x" + std::to_string(per_step(n)));
    s.aten_ops += per_step(n);
  }
  auto calls = [&](const char* name) {
    auto it = ops.find(name);
    return it == ops.end() ? 0 : per_step(it->second);
  };
  s.matmul = calls("aten::matmul");
  s.mm = calls("aten::mm");
  s.add = calls("aten::add");
  s.addmm = calls("aten::addmm");
}

}  // namespace

VariantSummary summarize_variant(const VariantRun& r, const std::string& annotation) {
  VariantSummary s;
  s.name = r.name;
  if (!r.trace) return s;
  const TraceModel m(*r.trace);
  const auto& steps = m.steps();
  s.steps = static_cast<int>(steps.size());
  if (steps.empty()) return s;
  std::map<int, size_t> slot;
  for (size_t k = 0; k < steps.size(); ++k) slot[steps[k].number] = k;

  std::vector<double> widths;
  for (const auto& w : steps) widths.push_back((w.end_ns - w.start_ns) / 1e3);
  s.step_us = median(widths);

  count_ops(m, annotation, s);

  // Device work per step, in start order.
  std::vector<std::vector<EventIdx>> work(steps.size());
  std::vector<EventIdx> device;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i)
    if (is_device_work(m.at(i))) device.push_back(i);
  std::sort(device.begin(), device.end(),
            [&](EventIdx a, EventIdx b) { return m.at(a).start_ns < m.at(b).start_ns; });
  for (EventIdx d : device)
    if (auto k = step_of(m, d, slot)) work[*k].push_back(d);

  if (!device.empty()) {
    std::vector<double> busy, copy_us;
    std::vector<int> kernels;
    for (const auto& w : work) {
      double b = 0;
      int nk = 0;
      bool dtod = false, counted = false;
      for (EventIdx d : w) {
        const Event& e = m.at(d);
        b += e.dur_ns / 1e3;
        nk += e.kind == Kind::Kernel;
        if (is_dtod(e)) {
          dtod = true;
          copy_us.push_back(e.dur_ns / 1e3);
          if (e.bytes > 0) s.memcpy_bytes = e.bytes;
        }
        if (classify(e) == KernelClass::Gemm) {
          if (s.gemm.empty()) s.gemm = e.name;
          if (dtod && !counted) s.dtod_before_gemm_steps++;
          counted = true;
        }
      }
      busy.push_back(b);
      kernels.push_back(nk);
    }
    s.gpu_us = median(busy);
    s.kernels = median_count(kernels);
    if (!copy_us.empty()) s.memcpy_us = median(copy_us);
    for (EventIdx d : work.back()) s.sequence.push_back(shorten(m.at(d).name));
  }

  const auto api = trace_api_counts(m);
  s.kineto = median_step(api);
  s.event_waits =
      static_cast<int>(median_calls(api, "cudaEventQuery") + median_calls(api, "cudaEventSynchronize"));
  return s;
}

namespace {

Condition C(std::string key, Op op, json v, Scope s = Scope::Any, int64_t n = 0) {
  return Condition{std::move(key), op, std::move(v), s, n};
}

json class_json(const ClassCounts& c) {
  return {{"kernel_launches", c[ApiClass::KernelLaunch]},
          {"graph_launches", c[ApiClass::GraphLaunch]},
          {"memcpy", c[ApiClass::Memcpy]},
          {"memset", c[ApiClass::Memset]},
          {"occupancy", c[ApiClass::Occupancy]},
          {"sync", c[ApiClass::Sync]}};
}

// The classes the census and Kineto must agree on. Synchronizations are left out: the AOTI
// runner waits on its previous run only when that run has not finished yet, so their number
// depends on timing, and a profiled step is slower than an unprofiled one.
constexpr ApiClass kCompared[] = {ApiClass::KernelLaunch, ApiClass::GraphLaunch, ApiClass::Memcpy,
                                  ApiClass::Memset, ApiClass::Occupancy};

Fact fact(const char* id, const char* title) {
  Fact f;
  f.id = id;
  f.title = title;
  f.measured = true;
  return f;
}

}  // namespace

namespace {
// What the lessons across variants read: the runs, the summaries of those with a trace, and
// which of the four variants have one.
struct Across {
  const std::vector<VariantRun>& runs;
  const std::map<std::string, VariantSummary>& sum;
  bool eager, addmm, aoti, graph;
};

// One lesson across variants: fills `f` (data, value, evidence) and adds to `p` the
// conditions for the variants that ran; returns "" or why it cannot be judged here.
using AcrossMeasure = std::string (*)(const Across& in, Fact& f, Pattern& p);

// 1. One op after the rewrite.
std::string one_op(const Across& in, Fact& f, Pattern& p) {
  std::ostringstream v;
  for (const auto& [name, s] : in.sum) {
    f.data[name] = {{"aten::matmul", s.matmul}, {"aten::mm", s.mm},       {"aten::add", s.add},
                    {"aten::addmm", s.addmm},   {"aten_ops", s.aten_ops}, {"ops", s.ops}};
    std::string ops;
    for (const auto& op : s.ops) ops += (ops.empty() ? "" : ", ") + op;
    v << (v.tellp() > 0 ? "; " : "") << name << ": " << (ops.empty() ? "no aten op" : ops);
  }
  if (in.eager) {
    for (const char* op : {"aten::matmul", "aten::mm", "aten::add"})
      p.all.push_back(C(std::string("/eager/") + op, Op::Ge, 1));
  }
  if (in.addmm) {
    p.all.push_back(C("/addmm/aten::addmm", Op::Eq, 1));
    for (const char* op : {"aten::matmul", "aten::mm", "aten::add"})
      p.all.push_back(C(std::string("/addmm/") + op, Op::Eq, 0));
  }
  if (in.aoti) {
    for (const char* op : {"aten::matmul", "aten::mm", "aten::add"})
      p.all.push_back(C(std::string("/aoti/") + op, Op::Eq, 0));
    for (const auto& r : in.runs)
      if (r.name == "aoti") f.data["aoti"]["generated_call"] = r.generated_call;
    p.all.push_back(C("/aoti/generated_call", Op::Contains, "addmm_out"));
  }
  if (in.graph) p.all.push_back(C("/graph/aten_ops", Op::Eq, 0, Scope::Gpu));
  f.value = v.str();
  if (in.aoti)
    f.evidence.push_back("aoti generated wrapper: " + f.data["aoti"]["generated_call"].get<std::string>());
  return in.eager || in.addmm || in.aoti ? "" : "neither eager, addmm nor aoti ran";
}

// 2. Launches per step (Kineto's runtime/driver rows).
std::string launches(const Across& in, Fact& f, Pattern& p) {
  std::ostringstream v;
  for (const auto& [name, s] : in.sum) {
    f.data[name] = class_json(s.kineto);
    v << (v.tellp() > 0 ? "; " : "") << name << ": " << s.kineto[ApiClass::KernelLaunch] << " launch"
      << (s.kineto[ApiClass::KernelLaunch] == 1 ? "" : "es");
    if (s.kineto[ApiClass::Memcpy]) v << " + " << s.kineto[ApiClass::Memcpy] << " memcpy";
    if (s.kineto[ApiClass::Memset]) v << " + " << s.kineto[ApiClass::Memset] << " memset";
    if (s.kineto[ApiClass::GraphLaunch]) v << " + " << s.kineto[ApiClass::GraphLaunch] << " graph launch";
  }
  if (in.eager) p.all.push_back(C("/eager/kernel_launches", Op::Eq, 2, Scope::Gpu));
  for (const char* name : {"addmm", "aoti"})
    if (in.sum.count(name)) {
      p.all.push_back(C(std::string("/") + name + "/kernel_launches", Op::Eq, 1, Scope::Gpu));
      p.all.push_back(C(std::string("/") + name + "/memcpy", Op::Eq, 1, Scope::Gpu));
    }
  if (in.graph) {
    p.all.push_back(C("/graph/graph_launches", Op::Eq, 1, Scope::Gpu));
    p.all.push_back(C("/graph/kernel_launches", Op::Eq, 0, Scope::Gpu));
  }
  f.value = v.str();
  return in.sum.empty() ? "no variant ran" : "";
}

// 3. The same GEMM, no fused kernel.
std::string same_gemm(const Across& in, Fact& f, Pattern& p) {
  std::ostringstream v;
  for (const auto& [name, s] : in.sum) {
    std::string family = s.gemm;
    for (const char* epi : {"_badd_", "_bz_"})
      if (auto at = family.find(epi); at != std::string::npos)
        family.replace(at, std::string(epi).size(), "_*_");
    f.data[name] = {{"kernels_per_step", s.kernels},
                    {"dtod_before_gemm_steps", s.dtod_before_gemm_steps},
                    {"steps", s.steps},
                    {"gemm", s.gemm},
                    {"gemm_family", family},
                    {"sequence", s.sequence}};
    if (!s.sequence.empty()) {
      std::string seq;
      for (const auto& k : s.sequence) seq += (seq.empty() ? "" : " -> ") + k;
      f.evidence.push_back(name + ": " + seq);
    }
    v << (v.tellp() > 0 ? "; " : "") << name << ": " << s.kernels << " kernel" << (s.kernels == 1 ? "" : "s")
      << (s.dtod_before_gemm_steps ? ", DtoD copy before the GEMM" : "");
  }
  if (in.eager) {
    p.all.push_back(C("/eager/dtod_before_gemm_steps", Op::Eq, 0, Scope::Gpu));
    p.all.push_back(C("/eager/gemm", Op::Contains, "_bz_", Scope::Hopper));
  }
  for (const char* name : {"addmm", "aoti"})
    if (in.sum.count(name)) {
      const std::string k = std::string("/") + name;
      p.all.push_back(C(k + "/kernels_per_step", Op::Eq, 1, Scope::Gpu));
      p.all.push_back(
          C(k + "/dtod_before_gemm_steps", Op::Eq, static_cast<int64_t>(in.sum.at(name).steps), Scope::Gpu));
      p.all.push_back(C(k + "/gemm", Op::Contains, "_badd_", Scope::Hopper));
      if (in.eager)
        p.all.push_back(C(k + "/gemm_family", Op::Eq, f.data["eager"]["gemm_family"], Scope::Hopper));
    }
  f.value = v.str();
  return in.sum.empty() ? "no variant ran" : "";
}

// 4. CPU time per step.
std::string cpu_per_step(const Across& in, Fact& f, Pattern& p) {
  std::ostringstream v;
  for (const auto& r : in.runs)
    if (r.unavailable.empty() && r.cpu_us > 0) {
      f.data[r.name] = {{"cpu_us", r.cpu_us},
                        {"timed_steps", r.timed_steps},
                        {"profiled_step_us", in.sum.count(r.name) ? in.sum.at(r.name).step_us : -1}};
      v << (v.tellp() > 0 ? ", " : "") << r.name << " " << us(r.cpu_us) << " us";
    }
  auto cpu = [&](const char* n) { return f.data.contains(n) ? f.data[n]["cpu_us"].get<double>() : -1.0; };
  if (cpu("eager") > 0 && cpu("graph") > 0) {
    f.data["eager_over_graph"] = cpu("eager") / cpu("graph");
    p.all.push_back(C("/eager_over_graph", Op::Ge, 4, Scope::Gpu));
    v << "; eager/graph = " << fixed(cpu("eager") / cpu("graph"), 1) << "x";
  }
  if (cpu("aoti") > 0 && cpu("addmm") > 0) {
    f.data["aoti_over_addmm"] = cpu("aoti") / cpu("addmm");
    p.all.push_back(C("/aoti_over_addmm", Op::Gt, 1, Scope::Gpu));
    v << "; aoti/addmm = " << fixed(cpu("aoti") / cpu("addmm"), 1) << "x";
  }
  f.value = "median CPU time per step without the profiler: " + v.str();
  return f.data.empty() ? "no variant was timed" : "";
}

// 5. The AOTI runner waits for its previous run.
std::string aoti_waits(const Across& in, Fact& f, Pattern&) {
  if (in.aoti) {
    f.data["aoti"] = {{"event_waits", in.sum.at("aoti").event_waits},
                      {"sync", in.sum.at("aoti").kineto[ApiClass::Sync]}};
    f.value = std::to_string(in.sum.at("aoti").event_waits) +
              " cudaEventQuery/cudaEventSynchronize per step, " +
              std::to_string(in.sum.at("aoti").kineto[ApiClass::Sync]) + " synchronization(s)";
  }
  return in.aoti ? "" : "the aoti variant did not run";
}

// 6. The census agrees with Kineto.
std::string census_vs_kineto(const Across& in, Fact& f, Pattern& p) {
  std::string why_not;
  std::ostringstream v;
  for (const auto& r : in.runs) {
    if (!r.unavailable.empty() || !in.sum.count(r.name)) continue;
    if (!r.census) {
      if (why_not.empty()) why_not = r.census_note.empty() ? "the census did not run" : r.census_note;
      continue;
    }
    const ClassCounts& c = *r.census;
    const ClassCounts& k = in.sum.at(r.name).kineto;
    bool agree = true;
    for (ApiClass cls : kCompared) agree = agree && c[cls] == k[cls];
    f.data[r.name] = {{"census", class_json(c)},
                      {"kineto", class_json(k)},
                      {"agree", agree},
                      {"census_steps", r.census_steps}};
    p.all.push_back(C("/" + r.name + "/agree", Op::Eq, true, Scope::Gpu));
    v << (v.tellp() > 0 ? "; " : "") << r.name << " " << (agree ? "agrees" : "DIFFERS") << " ("
      << c[ApiClass::KernelLaunch] << " | " << k[ApiClass::KernelLaunch] << " launches)";
  }
  f.value = v.str();
  if (!p.all.empty()) return "";
  return why_not.empty() ? "the census did not run" : why_not;
}

// The lessons across variants, in order: id, title, pattern (the conditions every run has; the
// measurement adds those of the variants that ran), the explanation, the measurement.
struct AcrossFact {
  const char* id;
  const char* title;
  Pattern pattern;
  const char* explanation;  // what the result means, whichever way it comes out
  AcrossMeasure measure;
};
const std::vector<AcrossFact>& across_facts() {
  static const std::vector<AcrossFact> kFacts = {
      {"one_op",
       "One op after the rewrite",
       {"eager runs aten::matmul > aten::mm + aten::add; addmm runs one aten::addmm; the "
        "AOTI wrapper calls the addmm shim (no matmul/mm/add); a graph replay runs no aten op",
        "Inductor's rewrite of add(matmul(x, w), b) is addmm(b, x, w); torch::addmm does "
        "it by hand, AOTInductor compiles it into a call of its C shim, a graph needs no op",
        {}},
       "the rewrite is real: one op does the work of three on the CPU side",
       one_op},
      {"launches",
       "Launch calls per step: did they halve?",
       {"eager 2 kernel launches; addmm and aoti 1 launch + 1 cudaMemcpyAsync; graph 1 "
        "cudaGraphLaunch and no kernel launch",
        "the rewrite removes the add kernel's launch but adds the bias copy; a graph "
        "replays every kernel from one call",
        {}},
       "fewer launch calls, not less GPU work: the copy replaces the add kernel, and "
       "only the graph takes the launches off the CPU",
       launches},
      {"same_gemm",
       "Same GEMM, no fused kernel",
       {"addmm/aoti: a Memcpy DtoD of the bias before the only kernel, a GEMM with a "
        "beta-add epilogue (_badd_ on Hopper) where eager's is beta-zero (_bz_)",
        "addmm(b, x, w) = 1*b + x@w: cuBLAS copies b into the output, then accumulates "
        "into it; no new kernel is generated for the add",
        {}},
       "the 'fusion' is the GEMM's epilogue reading the output it writes: same tile "
       "shape, different epilogue, plus a copy; no fused kernel was generated",
       same_gemm},
      {"cpu_per_step",
       "CPU time per step: what a CUDA graph saves",
       {"a graph replay costs the CPU >= 4x less than eager at the recorded size; the AOTI "
        "runner costs more than torch::addmm",
        "unprofiled medians of this run (the value line): eager dispatches an op and launches a "
        "kernel per op, the replay makes one call whatever the size; 4x leaves margin for a "
        "noisy host",
        {}},
       "the CPU pays per op and per launch; a graph replay pays once per step, the "
       "AOTI runner adds its own bookkeeping (and waits, see below)",
       cpu_per_step},
      {"aoti_waits",
       "The AOTI runner checks on its previous run every step",
       {"each AOTI step calls cudaEventQuery or cudaEventSynchronize",
        "one model instance: before reusing it the runner checks that the previous run "
        "finished (cudaEventQuery) and waits if not (cudaEventSynchronize)",
        {C("/aoti/event_waits", Op::Ge, 1, Scope::Gpu)}},
       "with one runner the CPU cannot queue step i+1 before step i finished: CPU and "
       "GPU take turns (num_runners > 1 lets them overlap)",
       aoti_waits},
      {"census_vs_kineto",
       "CUPTI launch census agrees with the trace",
       {"per step, the census counts the same kernel launches, graph launches, copies, "
        "memsets and occupancy queries as the Kineto trace",
        "two independent counters of the same API calls; synchronizations are shown "
        "but not compared (how often the AOTI runner waits depends on timing)",
        {}},
       "Kineto's launch rows are the same calls the CUPTI callbacks see",
       census_vs_kineto},
  };
  return kFacts;
}
}  // namespace

ClassCounts census_step(const std::vector<ApiCounts>& steps) {
  std::vector<ApiCounts> visible;
  for (const auto& s : steps) visible.push_back(kineto_visible(s));
  return median_step(visible);
}

LessonsReport check_across(const std::vector<VariantRun>& runs, const Problem& problem,
                           const std::string& annotation) {
  LessonsReport rep;
  rep.chapter = "05_compiled_addmm (across variants)";
  rep.title = "one op, the same GEMM, fewer launches, and what a CUDA graph saves";
  rep.options.problem = problem;
  rep.options.annotation = annotation;

  std::map<std::string, VariantSummary> sum;
  const Trace* any = nullptr;
  for (const auto& r : runs)
    if (r.unavailable.empty() && r.trace) {
      sum[r.name] = summarize_variant(r, annotation);
      if (!any || r.name == "eager") any = &*r.trace;
    }
  const Trace empty;
  const Trace& scope_trace = any ? *any : empty;
  rep.source = "out/05_compiled_addmm/<variant>/trace.json";
  rep.device = scope_trace.devices.empty() ? (scope_trace.has_device_activity() ? "GPU" : "CPU only")
                                           : scope_trace.devices.front().name;
  const Across in{runs,
                  sum,
                  sum.count("eager") > 0,
                  sum.count("addmm") > 0,
                  sum.count("aoti") > 0,
                  sum.count("graph") > 0};
  for (const AcrossFact& af : across_facts()) {
    Fact f = fact(af.id, af.title);
    Pattern p = af.pattern;
    f.explanation = af.explanation;
    const std::string why_not = af.measure(in, f, p);
    if (!why_not.empty()) {
      f.measured = false;
      f.explanation = why_not;
    }
    rep.facts.push_back(apply_pattern(std::move(f), p, scope_trace, problem));
  }

  tally(rep);
  rep.min_passes = 1;  // as for a chapter: a comparison in which nothing passed is not a pass
  return rep;
}

std::string side_by_side(const std::vector<VariantRun>& runs, const std::vector<VariantSummary>& sums) {
  std::vector<const VariantRun*> cols;
  for (const auto& r : runs) cols.push_back(&r);
  auto sum_of = [&](const std::string& n) -> const VariantSummary* {  // null: no profiled trace
    for (const auto& s : sums)
      if (s.name == n && s.steps > 0) return &s;
    return nullptr;
  };
  auto census_class = [](const VariantRun& r, ApiClass c) -> std::string {
    return r.census ? std::to_string((*r.census)[c]) : "-";
  };
  const bool any_census =
      std::any_of(runs.begin(), runs.end(), [](const VariantRun& r) { return r.census.has_value(); });

  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  auto row = [&](const std::string& label, auto cell) {
    std::vector<std::string> cells;
    for (const auto* r : cols) {
      const VariantSummary* s = sum_of(r->name);
      cells.push_back(!r->unavailable.empty() ? "n/a" : cell(*r, s));
    }
    rows.emplace_back(label, cells);
  };
  row("CPU us/step, unprofiled (median)",
      [](const VariantRun& r, const VariantSummary*) { return us(r.cpu_us); });
  row("CPU us/step, ProfilerStep width",
      [](const VariantRun&, const VariantSummary* s) { return s ? us(s->step_us) : "-"; });
  row("GPU us/step (kernels+copies)",
      [](const VariantRun&, const VariantSummary* s) { return s ? us(s->gpu_us) : "-"; });
  row("aten ops/step under matmul_add",
      [](const VariantRun&, const VariantSummary* s) { return s ? std::to_string(s->aten_ops) : "-"; });
  row("kernels/step on the GPU", [](const VariantRun&, const VariantSummary* s) {
    return s && s->gpu_us >= 0 ? std::to_string(s->kernels) : "-";
  });
  const char* tag = any_census ? " (trace | census)" : " (trace)";
  for (ApiClass c : {ApiClass::KernelLaunch, ApiClass::GraphLaunch, ApiClass::Memcpy, ApiClass::Memset,
                     ApiClass::Occupancy, ApiClass::Sync})
    row(std::string(api_class_name(c)) + tag, [&](const VariantRun& r, const VariantSummary* s) {
      std::string k = s && s->gpu_us >= 0 ? std::to_string(s->kineto[c]) : "-";
      return any_census ? k + " | " + census_class(r, c) : k;
    });

  size_t w0 = 0;
  for (const auto& [l, _] : rows) w0 = std::max(w0, l.size());
  std::vector<size_t> w(cols.size());
  for (size_t j = 0; j < cols.size(); ++j) {
    w[j] = cols[j]->name.size();
    for (const auto& [_, cells] : rows) w[j] = std::max(w[j], cells[j].size());
  }
  std::ostringstream os;
  os << std::left << std::setw(static_cast<int>(w0)) << "per step";
  for (size_t j = 0; j < cols.size(); ++j)
    os << "  " << std::right << std::setw(static_cast<int>(w[j])) << cols[j]->name;
  os << "\n";
  for (const auto& [label, cells] : rows) {
    os << std::left << std::setw(static_cast<int>(w0)) << label;
    for (size_t j = 0; j < cells.size(); ++j)
      os << "  " << std::right << std::setw(static_cast<int>(w[j])) << cells[j];
    os << "\n";
  }
  for (const auto* r : cols) {
    if (!r->unavailable.empty()) os << "n/a " << r->name << ": " << r->unavailable << "\n";
    if (r->name == "aoti x2") os << "aoti x2: the same package loaded with num_runners = 2 (timed only)\n";
  }
  if (!any_census)
    for (const auto* r : cols)
      if (!r->census_note.empty()) {
        os << "no census column: " << r->census_note << "\n";
        break;
      }
  return os.str();
}

std::string memcpy_napkin(const std::vector<VariantSummary>& sums, const Problem& p,
                          const std::string& device_name) {
  const double bytes = static_cast<double>(p.n) * p.n * p.dtype_bytes;
  std::ostringstream os;
  os << "Napkin math for the bias copy (addmm's beta=1 epilogue needs b in the output first):\n"
     << "  N^2 x " << p.dtype_bytes << " B = " << fixed(bytes / 1e6, bytes < 1e6 ? 3 : 1)
     << " MB copied; read + write = " << fixed(2 * bytes / 1e6, bytes < 1e6 ? 3 : 1)
     << " MB of memory traffic\n";
  const DevicePeak* peak = find_peak(device_name);
  if (peak)
    os << "  at " << fixed(peak->mem_tbps, 2) << " TB/s (" << peak->model << ") that is at least "
       << us(2 * bytes / (peak->mem_tbps * 1e12) * 1e6) << " us\n";
  bool any = false;
  for (const auto& s : sums)
    if (s.memcpy_us > 0) {
      any = true;
      const double tbps = 2 * bytes / (s.memcpy_us * 1e-6) / 1e12;
      os << "  " << s.name << ": measured " << us(s.memcpy_us) << " us -> " << fixed(tbps, 2) << " TB/s";
      if (peak) os << " (" << fixed(100 * tbps / peak->mem_tbps, 0) << "% of peak)";
      os << "\n";
    }
  if (!any)
    os << "  no device copy in these traces (CPU run: addmm copies b into the output inside its CPU "
          "kernel)\n";
  return os.str();
}

std::string render_across(const std::vector<VariantRun>& runs, const LessonsReport& lessons) {
  std::vector<VariantSummary> sums;
  std::string device_name;
  for (const auto& r : runs) {
    sums.push_back(summarize_variant(r, lessons.options.annotation));
    if (r.trace && !r.trace->devices.empty()) device_name = r.trace->devices.front().name;
  }
  const Problem& p = lessons.options.problem;
  return "==== all variants, N=" + std::to_string(p.n) + " ====\n" + side_by_side(runs, sums) + "\n" +
         memcpy_napkin(sums, p, device_name) + "\n" + render_lessons(lessons, Format::Text);
}

}  // namespace wb
