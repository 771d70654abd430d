#include "exercise/facts.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "exercise/measure.hpp"
#include "exercise/variation.hpp"
#include "workbook/compare.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/schedule.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace exercise {

using nlohmann::json;

std::string slurp(const fs::path& p) {  // "" for a file that cannot be read
  std::error_code ec;
  return fs::is_regular_file(p, ec) ? wb::read_file(p) : std::string();
}

namespace {

json read_json_file(const fs::path& p) {
  if (!fs::exists(p)) return json::object();
  const json j = json::parse(slurp(p), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error(p.string() + " is not a JSON object (was the program interrupted?)");
  return j;
}

std::string num(double v, int digits = 3) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

std::string quoted(const json& v) { return v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump(); }

// A fact that starts measured; `not_measured` turns it into "not applicable, because ...".
wb::Fact start(std::string id, std::string title) {
  wb::Fact f;
  f.id = std::move(id);
  f.title = std::move(title);
  f.measured = true;
  return f;
}
wb::Fact not_measured(wb::Fact f, std::string why) {
  f.measured = false;
  f.status = wb::Status::NotApplicable;
  f.explanation = std::move(why);
  return f;
}

wb::FactOptions fact_options(const RunOutput& run, const std::string& annotation) {
  wb::FactOptions o;
  o.annotation = !annotation.empty() ? annotation : run.run.value("annotation", std::string("matmul_add"));
  o.problem = run.problem();
  return o;
}

// CPU ops whose start lies in a recorded step (every CPU op when the trace has no steps).
template <class F>
void for_each_step_op(const wb::TraceModel& m, F&& f) {
  for (wb::EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const wb::Event& e = m.at(i);
    if (e.kind != wb::Kind::CpuOp) continue;
    if (!m.steps().empty() && !m.step_at(e.start_ns)) continue;
    f(i, e);
  }
}

// ---- table: the order of table.txt (read with the lessons' table parser) ------------------
wb::Fact fact_table(const RunOutput& run) {
  wb::Fact f = start("table", "The profiler table (table.txt)");
  if (run.table.empty()) return not_measured(std::move(f), "no table.txt in the run's folder");
  std::vector<wb::TableLine> rows;
  try {
    rows = wb::parse_table_calls(run.table, "table.txt");
  } catch (const std::exception& e) {
    return not_measured(std::move(f), e.what());
  }
  if (rows.empty()) return not_measured(std::move(f), "table.txt has no rows");
  json calls = json::array(), names = json::array();
  bool sorted = true;
  for (size_t i = 0; i < rows.size(); ++i) {
    calls.push_back(rows[i].calls);
    names.push_back(rows[i].name);
    if (i > 0 && rows[i].calls > rows[i - 1].calls) sorted = false;
  }
  f.data = {{"rows", rows.size()},
            {"calls", calls},
            {"names", names},
            {"first_row", rows.front().name},
            {"sorted_by_calls", sorted}};
  std::string shown;
  for (size_t i = 0; i < rows.size() && i < 6; ++i) shown += (i ? ", " : "") + std::to_string(rows[i].calls);
  f.value = std::to_string(rows.size()) + " rows; # of Calls from the top: " + shown +
            (rows.size() > 6 ? ", ..." : "") + "; first row: " + rows.front().name;
  return f;
}

// ---- most_called_op: the learner's answer vs the op the trace calls most -------------------
wb::Fact fact_most_called_op(const RunOutput& run, const wb::TraceModel& m) {
  wb::Fact f = start("most_called_op", "The op with the most calls");
  std::map<std::string, long long> calls;
  for_each_step_op(m, [&](wb::EventIdx, const wb::Event& e) { calls[e.name]++; });
  if (calls.empty()) return not_measured(std::move(f), "no CPU ops in the recorded steps");
  long long top = 0;
  for (const auto& [name, n] : calls) top = std::max(top, n);
  json top_names = json::array();
  for (const auto& [name, n] : calls)
    if (n == top) top_names.push_back(name);
  const json answer = run.answers.value("most_called_op", json(""));
  const std::string a = answer.is_string() ? answer.get<std::string>() : answer.dump();
  const long long answer_calls = calls.count(a) ? calls[a] : 0;
  f.data = {{"answer", a},
            {"answer_calls", answer_calls},
            {"max_calls", top},
            {"top", top_names},
            {"answer_is_top", answer_calls == top}};
  // Says how often the answer ran, never which op is the top one.
  f.value = a.empty() ? "no answer yet (most_called_op is empty)"
                      : "your answer " + quoted(answer) + " ran " + std::to_string(answer_calls) + " time" +
                            (answer_calls == 1 ? "" : "s") + " in the recorded steps" +
                            (answer_calls == top ? ", the most of any op" : "");
  return f;
}

// ---- dead_window_answer: which step has the dead window, and which op ends it ---------------
wb::Fact fact_dead_window_answer(const RunOutput& run, const wb::TraceModel& m, const std::string& ann) {
  wb::Fact f = start("dead_window_answer", "Where the dead window is");
  const wb::Fact dw = wb::compute_fact("dead_window", m, fact_options(run, ann));
  const json gaps = dw.data.value("gaps", json::array());
  if (gaps.empty()) return not_measured(std::move(f), dw.explanation);
  const json* widest = &gaps.front();
  for (const auto& g : gaps)
    if (g.value("gap_us", 0.0) > widest->value("gap_us", 0.0)) widest = &g;
  const json step = run.answers.value("dead_window_step", json(-1));
  const json first_op = run.answers.value("first_op_after_gap", json(""));
  f.data = {{"answer_step", step},
            {"answer_first_op", first_op},
            {"step_matches", step == (*widest)["step"]},
            {"first_op_matches", first_op == (*widest)["first_child"]}};
  f.value = "your answer: the gap is in ProfilerStep#" + step.dump() + " and ends at " + quoted(first_op);
  return f;
}

// ---- steps: which ProfilerStep#N the trace recorded ----------------------------------------
wb::Fact fact_steps(const wb::TraceModel& m) {
  wb::Fact f = start("steps", "Recorded steps");
  if (m.steps().empty()) return not_measured(std::move(f), "the trace has no ProfilerStep#N ranges");
  json numbers = json::array();
  for (const auto& s : m.steps()) numbers.push_back(s.number);
  const int first = m.steps().front().number, last = m.steps().back().number;
  f.data = {{"numbers", numbers}, {"first", first}, {"last", last}, {"count", m.steps().size()}};
  f.value = "recorded ProfilerStep#" + std::to_string(first) + " .. #" + std::to_string(last) + " (" +
            std::to_string(m.steps().size()) + " step" + (m.steps().size() == 1 ? "" : "s") + ")";
  return f;
}

// ---- annotation_ops: the ops directly under a record_function range -------------------------
wb::Fact fact_annotation_ops(const RunOutput& run, const wb::TraceModel& m, const std::string& ann) {
  const std::string name = fact_options(run, ann).annotation;
  wb::Fact f = start("annotation_ops", "Ops directly under '" + name + "'");
  std::set<std::string> ops;
  int instances = 0;
  for (wb::EventIdx a : m.find(name)) {
    if (m.at(a).kind != wb::Kind::UserAnnotation) continue;  // the CPU side, not its GPU projection
    instances++;
    for (wb::EventIdx c : m.children(a))
      if (m.at(c).kind == wb::Kind::CpuOp) ops.insert(m.at(c).name);
  }
  if (instances == 0) return not_measured(std::move(f), "no '" + name + "' range in the trace");
  f.data = {{"annotation", name},
            {"instances", instances},
            {"ops", std::vector<std::string>(ops.begin(), ops.end())}};
  std::string list;
  for (const auto& o : ops) list += (list.empty() ? "" : ", ") + o;
  f.value = "'" + name + "' (" + std::to_string(instances) + "x) calls: " + (list.empty() ? "no ops" : list);
  return f;
}

// ---- step_ops: every op name that ran in the recorded steps ----------------------------------
wb::Fact fact_step_ops(const wb::TraceModel& m) {
  wb::Fact f = start("step_ops", "Ops in the recorded steps");
  std::map<std::string, long long> calls;
  for_each_step_op(m, [&](wb::EventIdx, const wb::Event& e) { calls[e.name]++; });
  if (calls.empty()) return not_measured(std::move(f), "no CPU ops in the recorded steps");
  json names = json::array();
  for (const auto& [n, c] : calls) names.push_back(n);
  f.data = {{"ops", names}, {"calls", calls}};
  std::string list;
  for (const auto& [n, c] : calls) list += (list.empty() ? "" : ", ") + n + " x" + std::to_string(c);
  f.value = list;
  return f;
}

// ---- launches: CPU calls that put work on the GPU, per step ----------------------------------
wb::Fact fact_launches(const wb::TraceModel& m) {
  wb::Fact f = start("launches", "Launch calls per step");
  if (!m.trace().has_device_activity())
    return not_measured(std::move(f), "CPU-only trace: nothing is launched");
  if (m.steps().empty()) return not_measured(std::move(f), "the trace has no ProfilerStep#N ranges");
  std::map<int, std::map<std::string, int>> apis;  // step -> launch API -> calls
  std::map<int, int> device_work;                  // step -> kernels/copies/memsets it launched
  std::set<std::string> all_apis;
  for (wb::EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const wb::Event& e = m.at(i);
    if (e.kind != wb::Kind::Runtime && e.kind != wb::Kind::Driver) continue;
    const auto work = m.launched(i);
    if (work.empty()) continue;  // a query or a sync, not a launch
    const wb::StepWindow* s = m.step_at(e.start_ns);
    if (!s) continue;
    apis[s->number][e.name]++;
    all_apis.insert(e.name);
    device_work[s->number] += static_cast<int>(work.size());
  }
  json per = json::array();
  int max_calls = 0, min_calls = 1 << 30, min_work = 1 << 30;
  for (const auto& s : m.steps()) {
    int n = 0;
    for (const auto& [api, c] : apis[s.number]) n += c;
    max_calls = std::max(max_calls, n);
    min_calls = std::min(min_calls, n);
    min_work = std::min(min_work, device_work[s.number]);
    per.push_back({{"step", s.number},
                   {"launch_calls", n},
                   {"apis", apis[s.number]},
                   {"device_work", device_work[s.number]}});
    std::string line = "ProfilerStep#" + std::to_string(s.number) + ": " + std::to_string(n) +
                       " launch call" + (n == 1 ? "" : "s") + " (";
    bool first = true;
    for (const auto& [api, c] : apis[s.number]) {
      line += std::string(first ? "" : ", ") + api + " x" + std::to_string(c);
      first = false;
    }
    f.evidence.push_back(line + ") -> " + std::to_string(device_work[s.number]) + " pieces of GPU work");
  }
  f.data = {{"per_step", per},
            {"max_launch_calls_per_step", max_calls},
            {"min_launch_calls_per_step", min_calls},
            {"min_device_work_per_step", min_work},
            {"apis", std::vector<std::string>(all_apis.begin(), all_apis.end())}};
  f.value = "launch calls per step: " + std::to_string(min_calls) +
            (max_calls != min_calls ? ".." + std::to_string(max_calls) : "") +
            "; GPU work per step: at least " + std::to_string(min_work);
  return f;
}

// ---- gemm_samples: how many GEMMs the recorded steps hold ------------------------------------
wb::Fact fact_gemm_samples(const wb::TraceModel& m) {
  wb::Fact f = start("gemm_samples", "GEMM samples in the recorded steps");
  const GemmSamples g = gemm_samples(m);
  // The count only: ex04.2 asks the learner for the median and the mean of these samples.
  f.data = {{"samples", g.count}, {"where", g.where}};
  f.value = std::to_string(g.count) + " GEMM sample" + (g.count == 1 ? "" : "s") + " (" + g.where + ")";
  return f;
}

// ---- tflops_answer: the learner's TFLOP/s vs the lesson's ------------------------------------
wb::Fact fact_tflops_answer(const RunOutput& run, const wb::TraceModel& m) {
  wb::Fact f = start("tflops_answer", "Achieved TFLOP/s, by hand");
  const wb::Problem p = run.problem();
  if (p.n <= 0) return not_measured(std::move(f), "run.json does not say the problem size");
  double expected = 0;
  std::string where;
  if (m.trace().has_device_activity()) {
    // The lesson report's number: 2*B*N^3 over the median GEMM kernel.
    wb::FactOptions o;
    o.problem = p;
    const wb::Fact t = wb::compute_fact("throughput", m, o);
    if (!t.data.contains("gemm_tflops")) return not_measured(std::move(f), "no GEMM kernel in the trace");
    expected = t.data["gemm_tflops"].get<double>();
    where = "the lesson report's throughput (median GEMM kernel)";
  } else {
    const GemmSamples g = gemm_samples(m);
    if (g.count == 0 || g.median_us <= 0)
      return not_measured(std::move(f), "no aten::mm in the recorded steps");
    expected = 2.0 * static_cast<double>(p.batch) * std::pow(static_cast<double>(p.n), 3) /
               (g.median_us * 1e-6) / 1e12;
    where = "2*B*N^3 over the median aten::mm CPU time";
  }
  const json a = run.answers.value("achieved_tflops", json(nullptr));
  const bool is_number = a.is_number() && std::isfinite(a.get<double>());
  const double answer = is_number ? a.get<double>() : 0.0;
  const double rel = expected > 0 ? std::fabs(answer - expected) / expected : 1.0;
  f.data = {{"answer", a}, {"rel_error", std::round(rel * 1e4) / 1e4}, {"from", where}};
  f.value = !is_number ? "no number in answer.json (achieved_tflops is " + a.dump() + ")"
                       : "your answer " + num(answer, 4) + " TFLOP/s is " + num(100 * rel, 1) +
                             "% away from " + where;
  f.evidence.push_back("problem: N=" + std::to_string(p.n) + ", batch " + std::to_string(p.batch));
  // The probe: the learner's function called on the learner's own (n, batch, us), which no
  // number typed in can match for every learner.
  if (run.variation.contains("probe_n") && run.variation.contains("probe_batch") &&
      run.variation.contains("probe_us")) {
    const double n = run.variation["probe_n"].get<double>(), b = run.variation["probe_batch"].get<double>(),
                 us = run.variation["probe_us"].get<double>();
    const double want = 2.0 * b * n * n * n / (us * 1e-6) / 1e12;
    const json pa = run.answers.value("probe_tflops", json(nullptr));
    const bool ok = pa.is_number() && std::isfinite(pa.get<double>());
    const double prel = ok ? std::fabs(pa.get<double>() - want) / want : 1.0;
    f.data["probe_rel_error"] = std::round(prel * 1e4) / 1e4;
    f.value += "; on your probe (n " + num(n, 0) + ", batch " + num(b, 0) + ", " + num(us, 1) +
               " us) it is " +
               (ok ? num(100 * prel, 1) + "% away from the right number"
                   : "missing (probe_tflops is " + pa.dump() + ")");
  }
  return f;
}

// ---- cold_setup: the one-time work of a process's first GEMM ---------------------------------
wb::Fact fact_cold_setup(const wb::TraceModel& m) {
  wb::Fact f = start("cold_setup", "First-call setup in the window");
  if (!m.trace().has_device_activity())
    return not_measured(std::move(f), "CPU-only trace: no GPU setup to see");
  // The unmistakable ones: kernel modules loaded on first use and per-kernel attribute setup.
  // (Not the profiler's own Activity Buffer Request: that depends on the schedule, not warmth.)
  static const std::vector<std::string> kCold = {"Runtime Triggered Module Loading", "Lazy Function Loading",
                                                 "cudaFuncSetAttribute", "cuModuleLoad", "cuLibraryLoad"};
  std::map<std::string, int> found;
  int in_first_step = 0;
  const wb::StepWindow* first = m.steps().empty() ? nullptr : &m.steps().front();
  for (const auto& e : m.trace().events)
    for (const auto& k : kCold)
      if (e.name.rfind(k, 0) == 0) {
        found[k]++;
        if (first && m.step_at(e.start_ns) == first) in_first_step++;
      }
  int count = 0;
  for (const auto& [k, n] : found) {
    count += n;
    f.evidence.push_back(k + " x" + std::to_string(n));
  }
  f.data = {{"count", count}, {"in_first_step", in_first_step}, {"events", found}};
  f.value = count == 0 ? "no module loading or attribute setup in the window"
                       : std::to_string(count) + " first-call setup event" + (count == 1 ? "" : "s") +
                             " in the window";
  return f;
}

// ---- variation: the run is the learner's own problem ----------------------------------------
// What the checker expects (variation(e, student)) against what the run says it ran (run.json)
// and what its trace shows (the recorded steps of a varied schedule).
wb::Fact fact_variation(const RunOutput& run, const wb::TraceModel& m) {
  wb::Fact f = start("variation", "Your own variation");
  const std::string student = run.run.value("student", "");
  const json ran = run.run.value("variation", json::object());
  bool run_matches = ran == run.variation, steps_match = true;
  std::string steps_text;
  if (run.variation.contains("schedule") && run.variation["schedule"].is_string()) {
    try {
      const wb::Schedule want = wb::Schedule::parse(run.variation["schedule"].get<std::string>());
      const int first = want.skip_first + want.wait + want.warmup;
      steps_match = !m.steps().empty() && m.steps().front().number == first &&
                    static_cast<int>(m.steps().size()) == want.active;
      steps_text = "; the schedule " + run.variation["schedule"].get<std::string>() + " keeps ProfilerStep#" +
                   std::to_string(first) + " .. #" + std::to_string(first + want.active - 1) +
                   ", the trace " +
                   (m.steps().empty() ? std::string("has no steps")
                                      : "has #" + std::to_string(m.steps().front().number) + " .. #" +
                                            std::to_string(m.steps().back().number));
    } catch (const std::exception& e) {
      steps_match = false;
      steps_text = std::string("; ") + e.what();
    }
  }
  f.data = {{"student", student},
            {"expected_student", run.student},
            {"ran", ran},
            {"expected", run.variation},
            {"run_matches", run_matches},
            {"steps_match", steps_match},
            {"matches", run_matches && steps_match && student == run.student}};
  f.value = "the run was made for " +
            (student.empty() ? std::string("no student (the defaults)") : "'" + student + "'") + " with " +
            (ran.empty() ? std::string("no variation") : describe_variation(ran)) + "; " +
            (run.student.empty() ? std::string("the defaults") : "'" + run.student + "'") + " should run " +
            describe_variation(run.variation) + steps_text;
  return f;
}

// ---- checksum_answer: the checksum the step computes, and its value --------------------------
// The program saves the learner's checksum (answer "checksum") and, outside the step, one
// step's sum and how many steps ran (run.json "reference", "steps_run"): the right value is
// their product (every step computes the same y).
wb::Fact fact_checksum_answer(const RunOutput& run) {
  wb::Fact f = start("checksum_answer", "The checksum's value");
  const json ref = run.run.value("reference", json::object());
  if (!ref.contains("checksum_per_step") || !run.run.contains("steps_run"))
    return not_measured(std::move(f), "run.json has no reference checksum (is the program the exercise's?)");
  const double want = ref["checksum_per_step"].get<double>() * run.run["steps_run"].get<double>();
  const json a = run.answers.value("checksum", json(nullptr));
  const bool ok = a.is_number() && std::isfinite(a.get<double>());
  const double rel = ok ? std::fabs(a.get<double>() - want) / std::max(std::fabs(want), 1e-9) : 1.0;
  f.data = {{"answer", a}, {"expected", want}, {"rel_error", std::round(rel * 1e6) / 1e6}};
  f.value = !ok ? "no checksum in answer.json (checksum is " + a.dump() + ")"
                : "your checksum " + num(a.get<double>(), 3) + " vs " + num(want, 3) + " (" +
                      std::to_string(run.run["steps_run"].get<int>()) +
                      " steps x one step's sum): " + num(100 * rel, 4) + "% off";
  return f;
}

// ---- distribution_answer: the learner's median and mean of the GEMM samples -----------------
wb::Fact fact_distribution_answer(const RunOutput& run, const wb::TraceModel& m) {
  wb::Fact f = start("distribution_answer", "Median and mean of the GEMM samples");
  const GemmSamples g = gemm_samples(m);
  if (g.count == 0) return not_measured(std::move(f), "no GEMM samples in the recorded steps");
  auto rel_of = [&](const char* key, double want, std::string& shown) {
    const json a = run.answers.value(key, json(nullptr));
    if (!a.is_number() || !std::isfinite(a.get<double>())) {
      shown = std::string(key) + " missing";
      return 1.0;
    }
    shown = std::string(key) + " " + num(a.get<double>(), 3) + " (trace: " + num(want, 3) + ")";
    return std::fabs(a.get<double>() - want) / std::max(std::fabs(want), 1e-9);
  };
  std::string ms, mn;
  const double rm = rel_of("median_us", g.median_us, ms), ra = rel_of("mean_us", g.mean_us, mn);
  f.data = {{"samples", g.count},
            {"median_rel_error", std::round(rm * 1e6) / 1e6},
            {"mean_rel_error", std::round(ra * 1e6) / 1e6},
            {"where", g.where}};
  f.value = std::to_string(g.count) + " samples (" + g.where + "); your " + ms + ", " + mn;
  return f;
}

}  // namespace

wb::Problem RunOutput::problem() const {
  wb::Problem p;
  p.n = run.value("size", int64_t{0});
  p.batch = run.value("batch", int64_t{1});
  p.dtype_bytes = run.value("dtype_bytes", 2);
  return p;
}

RunOutput read_run_output(const fs::path& dir) {
  RunOutput r;
  r.dir = dir;
  const fs::path trace = dir / "trace.json";
  if (!fs::exists(trace))
    throw std::runtime_error("no trace.json in " + dir.string() + " (did the program call run.profile()?)");
  r.trace = wb::read_trace(trace);
  r.table = fs::exists(dir / "table.txt") ? slurp(dir / "table.txt") : std::string();
  r.answers = read_json_file(dir / "answer.json");
  r.run = read_json_file(dir / "run.json");
  return r;
}

const std::vector<std::string_view>& exercise_fact_ids() {
  static const std::vector<std::string_view> kIds = {
      "table",     "most_called_op",  "dead_window_answer", "steps",         "annotation_ops",
      "step_ops",  "launches",        "gemm_samples",       "tflops_answer", "cold_setup",
      "variation", "checksum_answer", "distribution_answer"};
  return kIds;
}

wb::Fact measure(std::string_view id, const RunOutput& run, const wb::TraceModel& m, const std::string& ann) {
  if (id == "table") return fact_table(run);
  if (id == "most_called_op") return fact_most_called_op(run, m);
  if (id == "dead_window_answer") return fact_dead_window_answer(run, m, ann);
  if (id == "steps") return fact_steps(m);
  if (id == "annotation_ops") return fact_annotation_ops(run, m, ann);
  if (id == "step_ops") return fact_step_ops(m);
  if (id == "launches") return fact_launches(m);
  if (id == "gemm_samples") return fact_gemm_samples(m);
  if (id == "tflops_answer") return fact_tflops_answer(run, m);
  if (id == "cold_setup") return fact_cold_setup(m);
  if (id == "variation") return fact_variation(run, m);
  if (id == "checksum_answer") return fact_checksum_answer(run);
  if (id == "distribution_answer") return fact_distribution_answer(run, m);
  return wb::compute_fact(id, m, fact_options(run, ann));  // a lesson fact (throws if unknown)
}

}  // namespace exercise
