#include "workbook/across.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include "workbook/json_spec.hpp"
#include "workbook/pattern_json.hpp"
#include "workbook/peaks.hpp"
#include "workbook/rules.hpp"
#include "workbook/stats.hpp"
#include "workbook/trace_model.hpp"

namespace wb {

using nlohmann::json;

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
// its launch call (device_work_per_step says the rule).
std::optional<size_t> step_of(const TraceModel& m, EventIdx d, const std::map<int, size_t>& slot) {
  const auto l = m.launcher(d);
  if (!l && m.at(d).id != 0) return std::nullopt;
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

std::vector<std::vector<EventIdx>> device_work_per_step(const TraceModel& m) {
  std::map<int, size_t> slot;
  for (size_t k = 0; k < m.steps().size(); ++k) slot[m.steps()[k].number] = k;
  std::vector<std::vector<EventIdx>> work(m.steps().size());
  std::vector<EventIdx> device;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i)
    if (is_device_work(m.at(i))) device.push_back(i);
  std::sort(device.begin(), device.end(),
            [&](EventIdx a, EventIdx b) { return m.at(a).start_ns < m.at(b).start_ns; });
  for (EventIdx d : device)
    if (auto k = step_of(m, d, slot)) work[*k].push_back(d);
  return work;
}

VariantSummary summarize_variant(const VariantRun& r, const std::string& annotation) {
  VariantSummary s;
  s.name = r.name;
  if (!r.trace) return s;
  const TraceModel m(*r.trace);
  const auto& steps = m.steps();
  s.steps = static_cast<int>(steps.size());
  if (steps.empty()) return s;

  std::vector<double> widths;
  for (const auto& w : steps) widths.push_back((w.end_ns - w.start_ns) / 1e3);
  s.step_us = median(widths);

  count_ops(m, annotation, s);

  // Device work per step, in start order.
  const std::vector<std::vector<EventIdx>> work = device_work_per_step(m);
  const bool any_device = std::any_of(m.trace().events.begin(), m.trace().events.end(),
                                      [](const Event& e) { return is_device_work(e); });

  if (any_device) {
    std::vector<double> busy, copy_us, spans;
    std::vector<int> kernels;
    for (const auto& w : work) {
      int64_t first = 0, last = 0;
      for (EventIdx d : w) {
        const Event& e = m.at(d);
        first = d == w.front() ? e.start_ns : std::min(first, e.start_ns);
        last = d == w.front() ? e.start_ns + e.dur_ns : std::max(last, e.start_ns + e.dur_ns);
      }
      if (!w.empty()) spans.push_back((last - first) / 1e3);
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
    if (!spans.empty()) s.gpu_span_us = median(spans);
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
// the lesson's parameters (AcrossLesson::variants).
struct Across {
  const std::vector<VariantRun>& runs;
  const std::map<std::string, VariantSummary>& sum;
  const std::vector<std::string>& variants;
};

// One lesson across variants: fills `f` (data, value, evidence); returns "" or why it cannot be
// judged here. The conditions are the chapter's (lessons.json), judged where their data is.
using AcrossMeasure = std::string (*)(const Across& in, Fact& f);

// "a, b nor c": the variants a lesson needed, none of which ran.
std::string nor_list(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i == 0 ? "" : i + 1 == v.size() ? " nor " : ", ") + v[i];
  return out;
}

// 1. One op after the rewrite. variants: the runs that do the work (one of them must have run).
std::string one_op(const Across& in, Fact& f) {
  std::ostringstream v;
  for (const auto& [name, s] : in.sum) {
    f.data[name] = {{"aten::matmul", s.matmul}, {"aten::mm", s.mm},       {"aten::add", s.add},
                    {"aten::addmm", s.addmm},   {"aten_ops", s.aten_ops}, {"ops", s.ops}};
    std::string ops;
    for (const auto& op : s.ops) ops += (ops.empty() ? "" : ", ") + op;
    v << (v.tellp() > 0 ? "; " : "") << name << ": " << (ops.empty() ? "no aten op" : ops);
  }
  for (const auto& r : in.runs)  // a compiled package: the line of its wrapper that does the work
    if (in.sum.count(r.name) && !r.generated_call.empty())
      f.data[r.name]["generated_call"] = r.generated_call;
  f.value = v.str();
  for (const auto& r : in.runs)
    if (f.data.contains(r.name) && f.data[r.name].contains("generated_call"))
      f.evidence.push_back(r.name +
                           " generated wrapper: " + f.data[r.name]["generated_call"].get<std::string>());
  for (const auto& name : in.variants)
    if (in.sum.count(name)) return "";
  return "neither " + nor_list(in.variants) + " ran";
}

// 2. Launches per step (Kineto's runtime/driver rows).
std::string launches(const Across& in, Fact& f) {
  std::ostringstream v;
  for (const auto& [name, s] : in.sum) {
    f.data[name] = class_json(s.kineto);
    v << (v.tellp() > 0 ? "; " : "") << name << ": " << s.kineto[ApiClass::KernelLaunch] << " launch"
      << (s.kineto[ApiClass::KernelLaunch] == 1 ? "" : "es");
    if (s.kineto[ApiClass::Memcpy]) v << " + " << s.kineto[ApiClass::Memcpy] << " memcpy";
    if (s.kineto[ApiClass::Memset]) v << " + " << s.kineto[ApiClass::Memset] << " memset";
    if (s.kineto[ApiClass::GraphLaunch]) v << " + " << s.kineto[ApiClass::GraphLaunch] << " graph launch";
  }
  f.value = v.str();
  return in.sum.empty() ? "no variant ran" : "";
}

// 3. The same GEMM, no fused kernel.
std::string same_gemm(const Across& in, Fact& f) {
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
  f.value = v.str();
  return in.sum.empty() ? "no variant ran" : "";
}

// 4. CPU time per step. variants: the ratios to compute, "A/B" (data "A_over_B").
std::string cpu_per_step(const Across& in, Fact& f) {
  std::ostringstream v;
  for (const auto& r : in.runs)
    if (r.unavailable.empty() && r.cpu_us > 0) {
      f.data[r.name] = {{"cpu_us", r.cpu_us},
                        {"timed_steps", r.timed_steps},
                        {"profiled_step_us", in.sum.count(r.name) ? in.sum.at(r.name).step_us : -1}};
      v << (v.tellp() > 0 ? ", " : "") << r.name << " " << us(r.cpu_us) << " us";
    }
  auto cpu = [&](const std::string& n) {
    return f.data.contains(n) ? f.data[n]["cpu_us"].get<double>() : -1.0;
  };
  for (const auto& ratio : in.variants) {
    const auto slash = ratio.find('/');
    const std::string a = ratio.substr(0, slash), b = ratio.substr(slash + 1);
    if (cpu(a) > 0 && cpu(b) > 0) {
      f.data[a + "_over_" + b] = cpu(a) / cpu(b);
      v << "; " << a << "/" << b << " = " << fixed(cpu(a) / cpu(b), 1) << "x";
    }
  }
  f.value = "median CPU time per step without the profiler: " + v.str();
  return f.data.empty() ? "no variant was timed" : "";
}

// "A/B" split into its two names ("" and "" when it is not a ratio).
std::pair<std::string, std::string> ratio_names(const std::string& ratio) {
  const auto slash = ratio.find('/');
  if (slash == std::string::npos) return {"", ""};
  return {ratio.substr(0, slash), ratio.substr(slash + 1)};
}

// 4b. GPU time per profiled step: the span of its device work (a CUDA graph's replay: first
// kernel start to last kernel end), its share of the read bound, the aten ops per step.
// variants: the span ratios to compute, "A/B" (data "A_over_B": A's span over B's).
std::string gpu_per_step(const Across& in, Fact& f) {
  std::ostringstream v;
  double gbps = -1;
  for (const auto& r : in.runs) {
    if (!r.unavailable.empty() || !in.sum.count(r.name)) continue;
    const VariantSummary& s = in.sum.at(r.name);
    json d = {{"aten_ops", s.aten_ops}, {"profiled_step_us", s.step_us}};
    if (s.gpu_span_us > 0) {
      d["gpu_span_us"] = s.gpu_span_us;
      d["gpu_busy_us"] = s.gpu_us;
      v << (v.tellp() > 0 ? ", " : "") << r.name << " " << us(s.gpu_span_us) << " us";
      gbps = r.bandwidth_gbps;
      if (gbps <= 0 && r.trace && !r.trace->devices.empty())
        if (const DevicePeak* p = find_peak(r.trace->devices.front().name)) gbps = p->mem_tbps * 1e3;
      if (r.bytes_per_step > 0 && gbps > 0) {
        const double bound_us = r.bytes_per_step / (gbps * 1e9) * 1e6;
        d["bound_us"] = bound_us;
        d["pct_of_bound"] = 100 * bound_us / s.gpu_span_us;
        v << " (" << fixed(100 * bound_us / s.gpu_span_us, 1) << "% of " << us(bound_us) << ")";
      }
    }
    f.data[r.name] = d;
  }
  for (const auto& ratio : in.variants) {
    const auto [a, b] = ratio_names(ratio);
    if (f.data.contains(a) && f.data.contains(b) && f.data[a].contains("gpu_span_us") &&
        f.data[b].contains("gpu_span_us")) {
      const double q = f.data[a]["gpu_span_us"].get<double>() / f.data[b]["gpu_span_us"].get<double>();
      f.data[a + "_over_" + b] = q;
      v << "; " << a << "/" << b << " = " << fixed(q, 2) << "x";
    }
  }
  if (f.data.empty()) return "no variant was profiled";
  if (v.tellp() == 0) {
    f.value = "no device work in these traces";
    return "";  // the conditions that need a GPU are out of scope here; the others are judged
  }
  f.value = "median GPU span per profiled step: " + v.str();
  for (const auto& r : in.runs)
    if (f.data.contains(r.name) && f.data[r.name].contains("bound_us")) {
      f.evidence.push_back("bound: " + fixed(r.bytes_per_step / 1e9, 3) + " GB read per step at " +
                           fixed(gbps, 0) + " GB/s = " + us(f.data[r.name]["bound_us"].get<double>()) +
                           " us");
      break;
    }
  return "";
}

// 4c. The rate of chosen kernels: each run's kernels whose name contains variants[0], per
// profiled step in start order, matched one to one with its kernel_bytes (a step with another
// count is left out and counted); per label the median GB/s and its % of bandwidth_gbps.
std::string kernel_rates(const Across& in, Fact& f) {
  const std::string& pattern = in.variants.front();
  std::ostringstream v;
  bool any_device = false;
  for (const auto& r : in.runs) {
    if (!r.unavailable.empty() || !r.trace || r.kernel_bytes.empty()) continue;
    const TraceModel m(*r.trace);
    std::map<size_t, std::vector<EventIdx>> per_step;  // step -> its kernels, in start order
    std::map<int, size_t> slot;
    for (size_t k = 0; k < m.steps().size(); ++k) slot[m.steps()[k].number] = k;
    std::vector<EventIdx> kernels;
    for (EventIdx i = 0; i < m.trace().events.size(); ++i)
      if (m.at(i).kind == Kind::Kernel) {
        any_device = true;
        if (m.at(i).name.find(pattern) != std::string::npos) kernels.push_back(i);
      }
    std::sort(kernels.begin(), kernels.end(),
              [&](EventIdx a, EventIdx b) { return m.at(a).start_ns < m.at(b).start_ns; });
    for (EventIdx k : kernels)
      if (auto step = step_of(m, k, slot)) per_step[*step].push_back(k);
    std::map<std::string, std::vector<double>> gbps;
    int matched = 0, other = 0;
    for (const auto& [step, ks] : per_step) {
      if (ks.size() != r.kernel_bytes.size()) {
        other++;
        continue;
      }
      matched++;
      for (size_t i = 0; i < ks.size(); ++i)
        if (m.at(ks[i]).dur_ns > 0)
          gbps[r.kernel_bytes[i].first].push_back(r.kernel_bytes[i].second /
                                                  m.at(ks[i]).dur_ns);  // B/ns = GB/s
    }
    json d = {{"steps_matched", matched}, {"steps_other_count", other}};
    v << (v.tellp() > 0 ? "; " : "") << r.name << ":";
    for (const auto& [label, rates] : gbps) {
      const double g = median(rates);
      d[label] = {{"gbps", g}, {"calls", rates.size()}};
      v << " " << label << " " << fixed(g, 0) << " GB/s";
      if (r.bandwidth_gbps > 0) {
        d[label]["pct_of_copy"] = 100 * g / r.bandwidth_gbps;
        v << " (" << fixed(100 * g / r.bandwidth_gbps, 1) << "%)";
      }
    }
    if (gbps.empty()) v << " no step with " << r.kernel_bytes.size() << " kernels named *" << pattern << "*";
    f.data[r.name] = d;
  }
  if (!any_device) return "no kernel in these traces: nothing to time";
  if (f.data.empty()) return "no profiled run names the bytes of its kernels";
  f.value = "median rate per kernel (bytes moved / duration): " + v.str();
  for (const auto& r : in.runs)
    if (r.bandwidth_gbps > 0) {
      f.evidence.push_back("copy rate " + fixed(r.bandwidth_gbps, 0) + " GB/s (read + write)");
      break;
    }
  return "";
}

// 5. A compiled runner waits for its previous run. variants: the variant that runs it.
std::string runner_waits(const Across& in, Fact& f) {
  const std::string& name = in.variants.front();
  if (!in.sum.count(name)) return "the " + name + " variant did not run";
  const VariantSummary& s = in.sum.at(name);
  f.data[name] = {{"event_waits", s.event_waits}, {"sync", s.kineto[ApiClass::Sync]}};
  f.value = std::to_string(s.event_waits) + " cudaEventQuery/cudaEventSynchronize per step, " +
            std::to_string(s.kineto[ApiClass::Sync]) + " synchronization(s)";
  return "";
}

// 6. The census agrees with Kineto.
std::string census_vs_kineto(const Across& in, Fact& f) {
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
    v << (v.tellp() > 0 ? "; " : "") << r.name << " " << (agree ? "agrees" : "DIFFERS") << " ("
      << c[ApiClass::KernelLaunch] << " | " << k[ApiClass::KernelLaunch] << " launches)";
  }
  f.value = v.str();
  if (!f.data.empty()) return "";
  return why_not.empty() ? "the census did not run" : why_not;
}

// The measurements across variants: id, title, the explanation (what the result means,
// whichever way it comes out), the measurement, how many "variants" it needs. Their patterns
// are the chapter's (lessons.json, "across").
struct AcrossFact {
  const char* id;
  const char* title;
  const char* explanation;
  AcrossMeasure measure;
  size_t min_variants;
};
const std::vector<AcrossFact>& across_facts() {
  static const std::vector<AcrossFact> kFacts = {
      {"one_op", "One op after the rewrite",
       "the rewrite is real: one op does the work of three on the CPU side", one_op, 1},
      {"launches", "Launch calls per step: did they halve?",
       "fewer launch calls, not less GPU work: the copy replaces the add kernel, and "
       "only the graph takes the launches off the CPU",
       launches, 0},
      {"same_gemm", "Same GEMM, no fused kernel",
       "the 'fusion' is the GEMM's epilogue reading the output it writes: same tile "
       "shape, different epilogue, plus a copy; no fused kernel was generated",
       same_gemm, 0},
      {"cpu_per_step", "CPU time per step: what a CUDA graph saves",
       "the CPU pays per op and per launch; a graph replay pays once per step, the "
       "AOTI runner adds its own bookkeeping (and waits, see below)",
       cpu_per_step, 0},
      {"gpu_per_step", "GPU time per step: which step pays",
       "the span of a step's device work is the time a token costs the GPU; against the time "
       "its bytes take at the copy rate it says how much of each step is not reading weights",
       gpu_per_step, 0},
      {"kernel_rates", "Kernel rates: bytes over time, against the copy",
       "a memory-bound kernel's bytes over its duration; near the copy rate it is as fast as "
       "its bytes allow, well under it the time goes to starting, ramping up and draining",
       kernel_rates, 1},
      {"aoti_waits", "The AOTI runner checks on its previous run every step",
       "with one runner the CPU cannot queue step i+1 before step i finished: CPU and "
       "GPU take turns (num_runners > 1 lets them overlap)",
       runner_waits, 1},
      {"census_vs_kineto", "CUPTI launch census agrees with the trace",
       "Kineto's launch rows are the same calls the CUPTI callbacks see", census_vs_kineto, 0},
  };
  return kFacts;
}

const AcrossFact* find_across_fact(std::string_view id) {
  for (const auto& af : across_facts())
    if (af.id == id) return &af;
  return nullptr;
}

// The conditions judged on this fact's data: those whose "when" pointers it has, with their
// "value_at" values read from it.
std::vector<Condition> conditions_here(const AcrossLesson& l, const json& data) {
  std::vector<Condition> out;
  for (const auto& c : l.all) {
    bool here = true;
    for (const auto& w : c.when) here = here && data.contains(json::json_pointer(w));
    if (!here) continue;
    out.push_back(c.condition);
    if (!c.value_at.empty()) out.back().value = data.at(json::json_pointer(c.value_at));
  }
  return out;
}
}  // namespace

AcrossSpec parse_across_spec(const json& j, const std::string& source, const std::string& chapter) {
  const JsonWhere top = JsonWhere{source, "", ""}.in("across");
  if (!j.is_object()) top.fail("must be an object {\"title\", \"lessons\"}");
  json_known_keys(j, {"about", "title", "lessons"}, top);
  json_lines(j, "about", top, false);
  AcrossSpec spec;
  spec.chapter = chapter;
  spec.title = json_text(j, "title", top);
  json_each_object(
      j, "lessons", top, "a lesson {\"fact\", \"text\", \"why\", \"all\"}",
      [&](const json& l, const JsonWhere& w) {
        json_known_keys(l, {"fact", "variants", "text", "why", "all"}, w);
        AcrossLesson lesson;
        lesson.fact = json_text(l, "fact", w);
        const AcrossFact* af = find_across_fact(lesson.fact);
        if (!af) {
          std::string known;
          for (const auto& f : across_facts()) known += (known.empty() ? "" : ", ") + std::string(f.id);
          w.in("fact").fail("unknown lesson across variants '" + lesson.fact + "' (known: " + known + ")");
        }
        if (l.contains("variants")) {
          if (!l["variants"].is_array()) w.in("variants").fail("must be an array of variant names");
          for (const auto& v : l["variants"]) {
            if (!v.is_string() || v.get<std::string>().empty())
              w.in("variants").fail("must be an array of variant names");
            lesson.variants.push_back(v.get<std::string>());
          }
        }
        if (lesson.variants.size() < af->min_variants)
          w.in("variants").fail("'" + lesson.fact + "' needs the variants it reads");
        if (lesson.fact == "cpu_per_step" || lesson.fact == "gpu_per_step")
          for (const auto& v : lesson.variants)
            if (v.find('/') == std::string::npos || v.front() == '/' || v.back() == '/')
              w.in("variants").fail("'" + v + "': " + lesson.fact + "'s variants are ratios \"A/B\"");
        // The pattern's own form (workbook/pattern_json.hpp), with "when" and "value_at" read here.
        json pattern = {{"text", l.value("text", json())}, {"all", json::array()}};
        if (l.contains("why")) pattern["why"] = l["why"];
        std::vector<std::vector<std::string>> whens;
        std::vector<std::string> value_ats;
        if (l.contains("all") && !l["all"].is_array()) w.in("all").fail("must be an array of conditions");
        for (json c : l.value("all", json::array())) {
          std::vector<std::string> when;
          std::string value_at;
          if (c.is_object() && c.contains("when")) {
            const json& wj = c["when"];
            for (const auto& p : wj.is_array() ? wj : json::array({wj})) {
              if (!p.is_string() || p.get<std::string>().rfind('/', 0) != 0)
                w.in("all").fail("\"when\" must be a JSON pointer or an array of them, e.g. \"/eager\"");
              when.push_back(p.get<std::string>());
            }
            c.erase("when");
          }
          if (c.is_object() && c.contains("value_at")) {
            if (!c["value_at"].is_string() || c["value_at"].get<std::string>().rfind('/', 0) != 0)
              w.in("all").fail("\"value_at\" must be a JSON pointer into the fact's data");
            if (c.contains("value")) w.in("all").fail("a condition has \"value\" or \"value_at\", not both");
            value_at = c["value_at"].get<std::string>();
            c.erase("value_at");
            c["value"] = nullptr;  // read from the data when judged
          }
          pattern["all"].push_back(std::move(c));
          whens.push_back(std::move(when));
          value_ats.push_back(std::move(value_at));
        }
        const Pattern p = read_pattern(pattern, w);
        lesson.text = p.text;
        lesson.why = p.why;
        for (size_t i = 0; i < p.all.size(); ++i) lesson.all.push_back({p.all[i], whens[i], value_ats[i]});
        spec.lessons.push_back(std::move(lesson));
      });
  return spec;
}

ClassCounts census_step(const std::vector<ApiCounts>& steps) {
  std::vector<ApiCounts> visible;
  for (const auto& s : steps) visible.push_back(kineto_visible(s));
  return median_step(visible);
}

LessonsReport check_across(const AcrossSpec& spec, const std::vector<VariantRun>& runs,
                           const Problem& problem, const std::string& annotation) {
  LessonsReport rep;
  rep.chapter = spec.chapter + " (across variants)";
  rep.title = spec.title;
  rep.options.problem = problem;
  rep.options.annotation = annotation;

  std::map<std::string, VariantSummary> sum;
  const Trace* any = nullptr;
  for (const auto& r : runs)
    if (r.unavailable.empty() && r.trace) {
      sum[r.name] = summarize_variant(r, annotation);
      if (!any) any = &*r.trace;  // the first variant's trace (the baseline) sets the device scope
    }
  const Trace empty;
  const Trace& scope_trace = any ? *any : empty;
  rep.source = "out/" + spec.chapter + "/<variant>/trace.json";
  rep.device = scope_trace.devices.empty() ? (scope_trace.has_device_activity() ? "GPU" : "CPU only")
                                           : scope_trace.devices.front().name;
  for (const AcrossLesson& lesson : spec.lessons) {
    const AcrossFact& af = *find_across_fact(lesson.fact);  // parse_across_spec checked it
    Fact f = fact(af.id, af.title);
    f.explanation = af.explanation;
    const std::string why_not = af.measure(Across{runs, sum, lesson.variants}, f);
    const Pattern p{lesson.text, lesson.why, conditions_here(lesson, f.data)};
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

std::string side_by_side(const std::vector<VariantRun>& runs, const std::vector<VariantSummary>& sums,
                         const std::string& annotation) {
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
  if (std::any_of(runs.begin(), runs.end(), [](const VariantRun& r) { return r.bytes_per_step > 0; }))
    row("GPU span us/step (first start to last end)",  // what the read bound's % is of
        [](const VariantRun&, const VariantSummary* s) { return s ? us(s->gpu_span_us) : "-"; });
  row("aten ops/step under " + annotation,
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

std::string render_across(const std::vector<VariantRun>& runs, const LessonsReport& lessons,
                          const std::string& problem) {
  std::vector<VariantSummary> sums;
  std::string device_name;
  for (const auto& r : runs) {
    sums.push_back(summarize_variant(r, lessons.options.annotation));
    if (r.trace && !r.trace->devices.empty()) device_name = r.trace->devices.front().name;
  }
  const Problem& p = lessons.options.problem;
  // The napkin math of what the runs declare: the bytes a step must read, else the copy's.
  std::string napkin;
  for (const auto& r : runs)
    if (r.bytes_per_step > 0 && napkin.empty()) {
      napkin = "Napkin math for the read bound: " + fixed(r.bytes_per_step / 1e9, 3) + " GB read per step";
      if (r.bandwidth_gbps > 0)
        napkin += " at " + fixed(r.bandwidth_gbps, 0) + " GB/s (the measured copy rate) = " +
                  us(r.bytes_per_step / (r.bandwidth_gbps * 1e9) * 1e6) + " us at least";
      napkin += "\n";
    }
  if (napkin.empty()) napkin = memcpy_napkin(sums, p, device_name);
  const std::string what = !problem.empty() ? ", " + problem : p.n > 0 ? ", N=" + std::to_string(p.n) : "";
  return "==== all variants" + what + " ====\n" + side_by_side(runs, sums, lessons.options.annotation) +
         "\n" + napkin + "\n" + render_lessons(lessons, Format::Text);
}

}  // namespace wb
