// Patterns: how a fact is judged (apply_pattern), what each chapter expects to see (the specs,
// read from each chapter's chapters/NN_name/lessons.json and the shared ones in
// common/lessons/data/lesson_specs.json, which says how tolerances are chosen),
// and the two reports built from them: a chapter's lessons and inspect's cheatsheet.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>

#include "fact_view.hpp"
#include "workbook/across.hpp"
#include "workbook/lessons.hpp"
#include "workbook/peaks.hpp"
#include "workbook/pattern_json.hpp"
#include "workbook/rules.hpp"

namespace wb {

using nlohmann::json;
using Op = Condition::Op;
using Scope = Condition::Scope;

namespace {

bool is_hopper(const Trace& t) {
  for (const auto& d : t.devices)
    if (d.compute_major == 9) return true;
  if (!t.devices.empty()) return false;
  // No deviceProperties: Hopper-only kernels name their architecture.
  for (const auto& e : t.events)
    if (e.kind == Kind::Kernel && e.name.find("sm90") != std::string::npos) return true;
  return false;
}

// Lower-case words of a name: "NVIDIA A100-SXM4-80GB" -> {nvidia, a100, sxm4, 80gb}.
std::vector<std::string> name_words(std::string_view s) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.back().empty())
      out.emplace_back();
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

// A device key of a condition (Condition::device) against the trace's first device: "sm_90" is a
// compute capability, anything else a GPU name whose words are all whole words of the device's
// name ("A100" matches "NVIDIA A100-SXM4-80GB", "A10" does not). A trace without
// deviceProperties matches nothing: only its relations are judged.
bool device_matches(const std::string& key, const Trace& t) {
  if (t.devices.empty()) return false;
  const DeviceProperties& d = t.devices.front();
  if (key.size() == 5 && key.rfind("sm_", 0) == 0 && std::isdigit(static_cast<unsigned char>(key[3])) &&
      std::isdigit(static_cast<unsigned char>(key[4])))
    return d.compute_major == key[3] - '0' && d.compute_minor == key[4] - '0';
  const auto have = name_words(d.name);
  for (const auto& w : name_words(key))
    if (std::find(have.begin(), have.end(), w) == have.end()) return false;
  return true;
}

bool element_matches(const json& elem, const json& want) {
  if (elem.is_string() && want.is_string())
    return elem.get<std::string>().find(want.get<std::string>()) != std::string::npos;
  return elem == want;
}

bool holds(const json& have, Op op, const json& want) {
  switch (op) {
    case Op::Eq: return have == want;
    case Op::Ne: return have != want;
    case Op::Contains:
    case Op::NotContains: {
      bool found = false;
      if (have.is_array()) {
        for (const auto& e : have) found = found || element_matches(e, want);
      } else {
        found = element_matches(have, want);
      }
      return op == Op::Contains ? found : !found;
    }
    default: break;
  }
  if (!have.is_number() || !want.is_number()) return false;
  const double a = have.get<double>(), b = want.get<double>();
  switch (op) {
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    default: return false;
  }
}

// The first element (or the string itself) that matches `want`, shortened; "" if none.
std::string first_match(const json& have, const json& want) {
  auto cut = [](std::string s) { return s.size() > 100 ? s.substr(0, 97) + "..." : s; };
  if (!have.is_array()) return element_matches(have, want) ? cut(have.dump()) : "";
  for (const auto& e : have)
    if (element_matches(e, want)) return cut(e.is_string() ? e.get<std::string>() : e.dump());
  return "";
}

std::string show(const json& v) {
  std::string s = v.dump();
  constexpr size_t kMax = 80;  // a list of 20 paths does not belong on one line
  return s.size() > kMax ? s.substr(0, kMax - 3) + "..." : s;
}

// Why a condition does not apply to this run ("" when it does). `trace` decides a condition's
// device key (Condition::device).
std::string out_of_scope(const Condition& c, bool gpu, bool hopper, const Problem& problem,
                         const Trace& trace) {
  const std::string key = c.key.empty() || c.key[0] != '/' ? c.key : c.key.substr(1);
  if (c.scope == Scope::Gpu && !gpu) return key + " needs a GPU trace";
  if (!c.device.empty() && !gpu) return key + " needs a GPU trace";
  if (!c.device.empty() && !device_matches(c.device, trace))
    return key + " is an expectation for the " + c.device + " only";
  // Hopper: work that ran on a Hopper GPU (a CPU run on a GPU machine still lists the GPU in
  // deviceProperties, but nothing ran there).
  if (c.scope == Scope::Hopper && !(gpu && hopper)) return key + " describes Hopper GPUs (H100/H200)";
  if (c.scope == Scope::Cpu && gpu) return key + " describes the CPU edition";
  if (c.only_n > 0 && problem.n > 0 && problem.n != c.only_n)
    return fmt::format("{} holds for N={} (this run: N={})", key, c.only_n, problem.n);
  return "";
}

// A condition on a percentage of the device's peak, on a GPU trace whose device the peak table
// does not know (an L4 is known, an RTX 4090 is not): no percentage can be measured.
bool gpu_without_peak(const Condition& c, const Trace& trace) {
  return c.key.find("pct_of_peak") != std::string::npos && !trace.devices.empty() &&
         trace.has_device_activity() && find_peak(trace.devices.front().name) == nullptr;
}

// A fact that could not be measured because the device's peak is unknown (the facts say
// "unknown peak for ..."), on a GPU trace whose device the peak table does not list.
bool no_peak_known(const Trace& trace, const Fact& f) {
  return !trace.devices.empty() && trace.has_device_activity() &&
         find_peak(trace.devices.front().name) == nullptr &&
         f.explanation.find("unknown peak for") != std::string::npos;
}

}  // namespace

json fact_value(const Fact& f, const std::string& key) {
  const json::json_pointer ptr(key);
  if (f.data.contains(ptr)) return f.data.at(ptr);
  if (f.data.contains("zero_when_absent"))  // a count the trace never saw is 0
    for (const auto& parent : f.data["zero_when_absent"])
      if (parent.is_string() && ptr.parent_pointer().to_string() == parent.get<std::string>() &&
          f.data.contains(ptr.parent_pointer()))
        return 0.0;  // as the counts the fact wrote (per-step averages)
  return nullptr;
}

Fact apply_pattern(Fact f, const Pattern& p, const Trace& trace, const Problem& problem) {
  f.pattern = p;
  if (!f.measured) {
    f.status = Status::NotApplicable;
    f.verdict = "not applicable: " + f.explanation;
    return f;
  }
  // Each is a scan of the events: only when a condition is scoped.
  bool scoped_gpu = false, scoped_hopper = false;
  for (const auto& c : p.all) {
    // Cpu: "not a GPU run"; Hopper: "ran on a Hopper GPU" (both read gpu).
    scoped_gpu |=
        c.scope == Scope::Gpu || c.scope == Scope::Cpu || c.scope == Scope::Hopper || !c.device.empty();
    scoped_hopper |= c.scope == Scope::Hopper;
  }
  const bool gpu = scoped_gpu && trace.has_device_activity();
  const bool hopper = scoped_hopper && is_hopper(trace);
  // The device-specific expectations not judged on this GPU, by whom they describe.
  std::vector<std::pair<std::string, std::vector<std::string>>> not_here;
  auto note = [&](const std::string& who, const std::string& key) {
    auto it = std::find_if(not_here.begin(), not_here.end(), [&](const auto& e) { return e.first == who; });
    if (it == not_here.end()) it = not_here.insert(not_here.end(), {who, {}});
    it->second.push_back(key);
  };
  std::vector<std::string> held, failed, skipped, applied_for;
  bool own = false;  // some device-specific expectation was judged on this device
  for (const auto& c : p.all) {
    const std::string key = c.key.empty() || c.key[0] != '/' ? c.key : c.key.substr(1);
    if (std::string why = out_of_scope(c, gpu, hopper, problem, trace); !why.empty()) {
      // A Hopper expectation (from the H200's recording) on another GPU: said in the verdict.
      if (c.scope == Scope::Hopper && gpu && !hopper)
        note("Hopper GPUs (the H200's recording)", key);
      else if (!c.device.empty() && gpu && c.scope != Scope::Cpu)
        note("the " + c.device, key);
      skipped.push_back(std::move(why));
      continue;
    }
    // A device's own expectation, judged on it. The H200's are the recordings' (their verdicts
    // read as recorded); any other device's are named in the verdict.
    own = own || !c.device.empty() || c.scope == Scope::Hopper;
    if (!c.device.empty() && c.device != "H200" &&
        std::find(applied_for.begin(), applied_for.end(), c.device) == applied_for.end())
      applied_for.push_back(c.device);
    json have;
    try {
      have = fact_value(f, c.key);
    } catch (const json::exception&) {
      failed.push_back(fmt::format("bad key '{}' in the pattern", c.key));
      continue;
    }
    const bool ok = !have.is_null() && holds(have, c.op, c.value);
    if (have.is_null() && gpu_without_peak(c, trace)) {
      // A percentage of a peak the device table does not know: not measurable here, not wrong.
      skipped.push_back(
          fmt::format("{}: no peak known for '{}' (common/core/data/device_peaks.json lists the "
                      "known GPUs), so only the lesson's relations are judged",
                      key, trace.devices.front().name));
      continue;
    }
    if (have.is_null()) {
      failed.push_back(fmt::format("{} was not measured", key));
    } else if (c.op == Op::Contains || c.op == Op::NotContains) {
      // A list of paths is too long for a verdict: name the element that decided it.
      const std::string hit = first_match(have, c.value);
      std::string line = hit.empty() ? fmt::format("no {} entry has {}", key, show(c.value))
                                     : fmt::format("{} has {} (in \"{}\")", key, show(c.value), hit);
      if (!ok) line += c.op == Op::Contains ? ", which it should" : ", which it should not";
      (ok ? held : failed).push_back(line);
    } else if (ok) {
      held.push_back(fmt::format("{} = {} {} {}", key, show(have), kOpSymbols.name(c.op), show(c.value)));
    } else {
      failed.push_back(
          fmt::format("{} = {}, expected {} {}", key, show(have), kOpSymbols.name(c.op), show(c.value)));
    }
  }
  if (held.empty() && failed.empty()) {
    f.status = Status::NotApplicable;
    f.verdict = "not applicable: " + lessons_detail::join(skipped, "; ", "the pattern is empty");
  } else {
    f.status = failed.empty() ? Status::Pass : Status::Fail;
    f.verdict = lessons_detail::join(failed.empty() ? held : failed, "; ", "");
    // Which kind of expectation was applied: this device's own ones (named, unless they are the
    // H200's: its verdicts read as recorded), or, on a GPU that none describes, relations only.
    if (!applied_for.empty())
      f.verdict += fmt::format("; device-specific: the {} expectations judged",
                               lessons_detail::join(applied_for, ", ", ""));
    if (!own && !not_here.empty()) {
      std::vector<std::string> parts;
      for (const auto& [who, keys] : not_here)
        parts.push_back(fmt::format("{} describe{} {}", lessons_detail::join(keys, ", ", ""),
                                    keys.size() == 1 ? "s" : "", who));
      f.verdict += fmt::format("; relations only on {}: {}, not judged",
                               trace.devices.empty() ? std::string("this GPU") : trace.devices.front().name,
                               lessons_detail::join(parts, "; ", ""));
    }
  }
  return f;
}

// ---- chapter specs: chapters/NN_name/lessons.json, compiled in ------------------------------
// Each chapter's specs sit in its own folder; the lessons several chapters share sit in
// common/lessons/data/lesson_specs.json ("shared"). cmake embeds both (common/lessons/CMakeLists.txt).
namespace embedded {
extern const std::string_view lesson_specs_json;        // generated by workbook_embed (common/CMakeLists.txt)
extern const std::string_view chapter_lessons_paths[];  // generated by workbook_embed_files
extern const std::string_view chapter_lessons_texts[];
extern const std::size_t chapter_lessons_count;
}  // namespace embedded

namespace {

constexpr std::string_view kSharedFile = "common/lessons/data/lesson_specs.json";

Expectation read_lesson(const json& j, const JsonWhere& w) {
  json_known_keys(j, {"fact", "about", "text", "why", "all"}, w);
  Expectation e;
  e.fact = read_fact_id(j, w);
  json_lines(j, "about", w, false);
  e.pattern = read_pattern(j, w);
  return e;
}

Problem read_problem(const json& j, const JsonWhere& w) {
  if (!j.is_object()) w.fail("must be an object {\"n\", \"batch\", \"dtype_bytes\"} (and \"m\", \"k\")");
  json_known_keys(j, {"n", "batch", "dtype_bytes", "m", "k"}, w);
  Problem p;
  p.n = json_positive(j, "n", w, true);
  p.batch = json_positive(j, "batch", w, true);
  p.dtype_bytes = static_cast<int>(json_positive(j, "dtype_bytes", w, true));
  p.m = json_positive(j, "m", w, false);
  p.k = json_positive(j, "k", w, false);
  return p;
}

using SharedLessons = std::map<std::string, Expectation>;

SharedLessons read_shared(const json& doc, const JsonWhere& top) {
  SharedLessons shared;
  if (!doc.contains("shared")) return shared;
  if (!doc["shared"].is_object()) top.in("shared").fail("must be an object {NAME: lesson}");
  for (const auto& [name, j] : doc["shared"].items()) {
    if (!j.is_object()) top.in("shared." + name).fail("must be a lesson {\"fact\", \"text\", \"all\"}");
    shared[name] = read_lesson(j, top.in("shared." + name));
  }
  return shared;
}

// The "specs" array of one document, appended to `specs` (whose earlier entries, from other
// files, count for the duplicate check but not for same_as). `folder` non-empty: each entry must
// be that chapter or one of its experiments/variants ("01_cold_64", "01_cold_64/cold").
void read_specs(const json& doc, const JsonWhere& top, const SharedLessons& shared, const std::string& folder,
                std::vector<LessonSpec>& specs) {
  const size_t first = specs.size();
  const std::string kLesson = "a lesson {\"fact\", \"text\", \"why\", \"all\"} or {\"use\": NAME}";
  json_each_object(
      doc, "specs", top, "an entry {\"chapter\", \"title\", \"problem\", \"lessons\"}",
      [&](const json& j, const JsonWhere& at) {
        LessonSpec s;
        s.chapter = json_text(j, "chapter", at);
        if (s.chapter.empty())
          at.in("chapter").fail("must name a chapter, e.g. \"01_cold_64\" or \"01_cold_64/cold\"");
        const JsonWhere w = at.named(s.chapter);
        if (!folder.empty() && s.chapter != folder && s.chapter.rfind(folder + "/", 0) != 0)
          w.in("chapter").fail("is not " + folder + " or one of its runs (" + folder + "/NAME)");
        for (const auto& earlier : specs)
          if (earlier.chapter == s.chapter) w.in("chapter").fail("a second entry for the same chapter");
        json_lines(j, "about", w, false);
        if (j.contains("same_as")) {
          json_known_keys(j, {"chapter", "about", "same_as"}, w);
          const std::string base = json_text(j, "same_as", w);
          auto it = std::find_if(specs.begin() + static_cast<std::ptrdiff_t>(first), specs.end(),
                                 [&](const LessonSpec& e) { return e.chapter == base; });
          if (it == specs.end()) w.in("same_as").fail("'" + base + "' is not an entry above this one");
          LessonSpec copy = *it;
          copy.chapter = s.chapter;
          specs.push_back(std::move(copy));
          return;
        }
        json_known_keys(j, {"chapter", "title", "about", "problem", "min_cpu_passes", "lessons"}, w);
        s.title = json_text(j, "title", w);
        if (!j.contains("problem")) w.in("problem").fail("missing");
        s.problem = read_problem(j["problem"], w.in("problem"));
        if (j.contains("min_cpu_passes"))
          s.min_cpu_passes = static_cast<int>(json_positive(j, "min_cpu_passes", w, true));
        json_each_object(j, "lessons", w, kLesson, [&](const json& l, const JsonWhere& lw) {
          if (!l.contains("use")) return s.expect.push_back(read_lesson(l, lw));
          json_known_keys(l, {"use"}, lw);
          const std::string name = json_text(l, "use", lw);
          auto it = shared.find(name);
          if (it == shared.end()) lw.in("use").fail("'" + name + "' is not a lesson of \"shared\"");
          s.expect.push_back(it->second);
        });
        specs.push_back(std::move(s));
      });
}

}  // namespace

std::vector<LessonSpec> parse_lesson_specs(std::string_view text, const std::string& source) {
  const JsonWhere top{source, "", ""};
  const json doc = json_parse(text, top);
  if (!doc.is_object()) top.fail("expected an object with a \"specs\" array");
  json_known_keys(doc, {"version", "about", "shared", "specs"}, top);
  json_lines(doc, "about", top, false);
  std::vector<LessonSpec> specs;
  read_specs(doc, top, read_shared(doc, top), "", specs);
  return specs;
}

std::vector<LessonSpec> parse_lesson_spec_files(const SpecFile& shared_file,
                                                const std::vector<SpecFile>& chapters) {
  const JsonWhere top{shared_file.path, "", ""};
  const json doc = json_parse(shared_file.text, top);
  if (!doc.is_object()) top.fail("expected an object with a \"shared\" object");
  json_known_keys(doc, {"version", "about", "shared"}, top);
  json_lines(doc, "about", top, false);
  const SharedLessons shared = read_shared(doc, top);
  std::vector<LessonSpec> specs;
  for (const auto& f : chapters) {
    const JsonWhere w{f.path, "", ""};
    const json d = json_parse(f.text, w);
    if (!d.is_object()) w.fail("expected an object with a \"specs\" array");
    json_known_keys(d, {"about", "specs", "across"}, w);  // "across": find_across_spec
    json_lines(d, "about", w, false);
    // chapters/NN_name/lessons.json: the folder's name is the chapter's.
    const std::string folder = std::filesystem::path(f.path).parent_path().filename().string();
    read_specs(d, w, shared, folder, specs);
  }
  return specs;
}

const AcrossSpec* find_across_spec(std::string_view chapter) {
  static const std::vector<AcrossSpec> kSpecs = read_compiled_data([] {
    std::vector<AcrossSpec> out;
    for (std::size_t i = 0; i < embedded::chapter_lessons_count; ++i) {
      const std::string path(embedded::chapter_lessons_paths[i]);
      const json d = json_parse(embedded::chapter_lessons_texts[i], JsonWhere{path, "", ""});
      if (d.is_object() && d.contains("across"))
        out.push_back(parse_across_spec(d["across"], path,
                                        std::filesystem::path(path).parent_path().filename().string()));
    }
    return out;
  });
  for (const auto& s : kSpecs)
    if (s.chapter == chapter) return &s;
  return nullptr;
}

const std::vector<LessonSpec>& lesson_specs() {
  static const std::vector<LessonSpec> kSpecs = read_compiled_data([] {
    std::vector<SpecFile> chapters;
    for (std::size_t i = 0; i < embedded::chapter_lessons_count; ++i)
      chapters.push_back(
          {std::string(embedded::chapter_lessons_paths[i]), embedded::chapter_lessons_texts[i]});
    return parse_lesson_spec_files({std::string(kSharedFile), embedded::lesson_specs_json}, chapters);
  });
  return kSpecs;
}

// ---- each fact's default pattern, from its registry entry (ViewFact::default_pattern) --------
namespace lessons_detail {
std::map<std::string, Pattern, std::less<>> parse_default_patterns() {
  std::map<std::string, Pattern, std::less<>> out;
  for (const auto& fi : view_facts()) {
    const JsonWhere w{"the lesson fact registry", "", ""};
    const JsonWhere at = w.in("facts").named(std::string(fi.id));
    const json j = json_parse(fi.pattern_json, at);
    if (!j.is_object()) at.fail("must be a pattern {\"text\", \"why\", \"all\"}");
    json_known_keys(j, {"text", "why", "all"}, at);
    out[std::string(fi.id)] = read_pattern(j, at);
  }
  return out;
}

const Pattern& default_pattern(std::string_view fact) {
  static const auto kPatterns = read_compiled_data([] { return parse_default_patterns(); });
  return kPatterns.find(fact)->second;  // every fact of view_facts() has one
}
}  // namespace lessons_detail

const LessonSpec* find_lesson_spec(std::string_view chapter) {
  for (const auto& s : lesson_specs())
    if (s.chapter == chapter) return &s;
  return nullptr;
}

void tally(LessonsReport& r) {
  r.passed = r.failed = r.not_applicable = 0;
  for (const auto& f : r.facts) {
    if (f.status == Status::Pass) r.passed++;
    if (f.status == Status::Fail) r.failed++;
    if (f.status == Status::NotApplicable) r.not_applicable++;
  }
}

namespace {

LessonsReport header(const TraceModel& m, const FactOptions& o) {
  LessonsReport r;
  r.source = m.trace().source;
  r.device = m.trace().devices.empty() ? (m.trace().has_device_activity() ? "GPU (no "
                                                                            "deviceProperties)"
                                                                          : "CPU only")
                                       : m.trace().devices.front().name;
  r.options = o;
  return r;
}
}  // namespace

LessonsReport check_lessons(const TraceModel& m, const LessonSpec& spec, const FactOptions& o) {
  FactOptions opts = o;
  if (opts.problem.n <= 0) opts.problem = spec.problem;
  LessonsReport r = header(m, opts);
  r.chapter = spec.chapter;
  r.title = spec.title;
  const lessons_detail::View view(m);    // once, for every fact
  std::map<std::string, Fact> measured;  // each fact once, however many expectations use it
  const bool gpu_run = m.trace().has_device_activity();
  for (const auto& e : spec.expect) {
    // A lesson about the CPU edition has nothing to say about a GPU run: it is left out there
    // (GPU lessons stay in a CPU report as not applicable: they say what a GPU would show).
    const bool cpu_only =
        !e.pattern.all.empty() && std::all_of(e.pattern.all.begin(), e.pattern.all.end(),
                                              [](const Condition& c) { return c.scope == Scope::Cpu; });
    if (gpu_run && cpu_only) continue;
    auto it = measured.find(e.fact);
    if (it == measured.end())
      it = measured.emplace(e.fact, lessons_detail::compute_fact(e.fact, view, opts)).first;
    Fact f = apply_pattern(it->second, e.pattern, m.trace(), opts.problem);
    if (f.status == Status::NotApplicable && !f.measured) {
      // Not measured: fine for a lesson about another platform, a failure for one about this one.
      const bool gpu = m.trace().has_device_activity(), hopper = is_hopper(m.trace());
      bool applies = false;
      for (const auto& c : e.pattern.all)
        applies = applies || out_of_scope(c, gpu, hopper, opts.problem, m.trace()).empty();
      if (no_peak_known(m.trace(), f)) {
        // A GPU the peak table does not know: the lesson needs its peak, and says so (n/a).
        f.verdict = "not applicable: no peak known for '" + m.trace().devices.front().name +
                    "', so only relations are judged here: " + f.explanation;
      } else if (applies) {
        f.status = Status::Fail;
        f.verdict = "could not be measured, although the lesson applies to this run: " + f.explanation;
      }
    }
    r.facts.push_back(std::move(f));
  }
  tally(r);
  r.min_passes = m.trace().has_device_activity() ? 1 : std::max(1, spec.min_cpu_passes);
  return r;
}

namespace {
// Ranges torch records by itself, not the user's: the optimizer's (Optimizer.step#SGD.step,
// Optimizer.zero_grad#SGD.zero_grad) and the data loader's (enumerate(DataLoader)#...).
bool torch_own_range(std::string_view name) {
  return name.rfind("Optimizer.", 0) == 0 || name.rfind("enumerate(DataLoader)#", 0) == 0;
}
}  // namespace

std::vector<std::string> user_annotations(const TraceModel& m) {
  std::vector<std::string> names;
  const bool stepped = !m.steps().empty();
  for (const CpuLane& lane : m.cpu_lanes()) {
    for (EventIdx i : lane.events) {
      const Event& e = m.at(i);
      if (e.kind != Kind::UserAnnotation || is_step_name(e.name) || e.name.empty() || torch_own_range(e.name))
        continue;
      const auto parent = m.parent(i);
      const bool top = stepped ? parent && is_step_name(m.at(*parent).name) : !parent;
      if (!top) continue;
      if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
    }
  }
  // First appearance in time (of any event so named), not lane order; one pass per name.
  std::vector<std::pair<int64_t, std::string>> by_first;
  for (auto& n : names) {
    int64_t t = INT64_MAX;
    for (EventIdx i : m.find(n)) t = std::min(t, m.at(i).start_ns);
    by_first.emplace_back(t, std::move(n));
  }
  std::stable_sort(by_first.begin(), by_first.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t k = 0; k < names.size(); ++k) names[k] = std::move(by_first[k].second);
  return names;
}

bool is_chapter_trace(const TraceModel& m) {
  // The annotations the chapters profile under (chapter.cpp's harness, variants.cpp).
  static const std::vector<std::string> kChapterAnnotations = {"matmul_add", "linear_fwd", "mlp_fwd"};
  const auto names = user_annotations(m);
  return !names.empty() && std::all_of(names.begin(), names.end(), [](const std::string& n) {
    return std::find(kChapterAnnotations.begin(), kChapterAnnotations.end(), n) != kChapterAnnotations.end();
  });
}

namespace {
// The annotation a trace that is not a chapter's is about: of the top-level annotations inside
// the steps, the one that takes the most time (a training step's "train_step", or of "forward",
// "backward" and "optimizer" the longest). The others are listed in the facts' evidence.
std::string main_annotation(const TraceModel& m, const std::vector<std::string>& names) {
  std::string best;
  int64_t best_ns = -1;
  for (const auto& n : names) {
    int64_t ns = 0;
    for (EventIdx i : m.find_annotations(n)) ns += m.at(i).dur_ns;
    if (ns > best_ns) best = n, best_ns = ns;
  }
  return best;
}

// inspect only (chapter verdicts stay as recorded): a failed pattern whose other conditions this
// trace cannot judge -- they describe Hopper GPUs, or need a GPU -- says so, so that a "no" on
// another device reads as "not this device", not as "not there".
void note_device_scope(Fact& f, const Trace& trace, bool gpu, bool hopper) {
  if (f.status != Status::Fail) return;
  std::vector<std::string> only;
  for (const auto& c : f.pattern.all) {
    if (c.scope == Scope::Hopper && !(gpu && hopper)) only.push_back("Hopper GPUs (H100/H200)");
    if (c.scope == Scope::Gpu && !gpu) only.push_back("GPU traces");
    if (c.scope == Scope::Cpu && gpu) only.push_back("CPU-only traces");
  }
  const std::string dev = trace.devices.empty() ? "CPU only" : trace.devices.front().name;
  if (!f.devices.empty())
    f.verdict += fmt::format(" (this rule depends on the device: {}; this trace: {})", f.devices, dev);
  if (only.empty()) return;
  std::sort(only.begin(), only.end());
  only.erase(std::unique(only.begin(), only.end()), only.end());
  f.verdict += fmt::format(" (part of this rule holds only on {}; this trace: {}: not judged here)",
                           lessons_detail::join(only, " and ", ""), dev);
}
}  // namespace

namespace {
// A "yes" on a trace that is not a chapter's must stand out of the noise. The chapters know their
// workload and tune their margins on the reference machines; on any other trace a ratio of two
// microsecond-sized times over two or three samples says nothing. These rules ask for enough
// samples and an absolute difference before a ratio counts; a pattern that holds only on less is
// not judged ("not enough evidence"), rather than reported as found.
constexpr double kMinExcessUs = 10;       // a step or gap this much longer than the median, at least
constexpr double kMinKernelExcessUs = 2;  // a kernel this much slower than its median, at least
constexpr size_t kMinSamples = 3;         // steps, gaps or kernel runs to compare

std::string too_noisy(const Fact& f) {
  const auto& d = f.data;
  auto num = [&](const char* key) {
    return d.contains(key) && d[key].is_number() ? d[key].get<double>() : 0.0;
  };
  if (f.id == "step_widths") {
    const size_t n = d.contains("steps") ? d["steps"].size() : 0;
    if (n < kMinSamples) return fmt::format("{} steps: too few to tell a cold step from noise", n);
    if (num("first_us") - num("median_rest_us") < kMinExcessUs)
      return fmt::format("the first step is less than {} us wider than the others: noise", kMinExcessUs);
  } else if (f.id == "dead_window") {
    const size_t n = d.contains("gaps") ? d["gaps"].size() : 0;
    if (n < kMinSamples) return fmt::format("{} annotations: too few to tell one-time setup from noise", n);
    if (num("first_gap_us") - num("median_later_gap_us") < kMinExcessUs)
      return fmt::format("the first gap is less than {} us longer than the others: noise", kMinExcessUs);
  } else if (f.id == "kernel_durations" && d.contains("kernels")) {
    for (const auto& k : d["kernels"])
      for (const auto& o : k["outliers"])
        if (k["count"].get<size_t>() >= kMinSamples &&
            o["dur_us"].get<double>() - k["median_us"].get<double>() >= kMinKernelExcessUs)
          return "";
    return fmt::format(
        "every outlier is of a kernel run fewer than {} times or less than {} us over its median",
        kMinSamples, kMinKernelExcessUs);
  }
  return "";
}

void guard_noise(Fact& f) {
  if (f.status != Status::Pass) return;
  const std::string why = too_noisy(f);
  if (why.empty()) return;
  f.status = Status::NotApplicable;
  f.verdict = "not enough evidence: " + why + " (the pattern's ratio alone would have said yes)";
}

// One fact inspect measures: its options and the annotation it is judged for.
struct InspectTask {
  const lessons_detail::ViewFact* fi;
  FactOptions opts;
  const std::string* annotation;  // per-annotation facts only
  bool no_annotation;             // a per-annotation fact with no annotation to look into
};

// Every fact to measure, in report order.
std::vector<InspectTask> inspect_tasks(const FactOptions& o, const std::vector<std::string>& annotations) {
  std::vector<InspectTask> tasks;
  for (const auto& fi : lessons_detail::view_facts()) {
    if (o.general && fi.chapter_only) continue;  // about one chapter's workload
    // The facts about one annotation; on a trace that is not a chapter's, step_cpu too (it has
    // no other way to find one: the chapters name theirs).
    const bool per_annotation =
        fi.id == "dead_window" || fi.id == "dispatch_chain" || (o.general && fi.id == "step_cpu");
    if (!per_annotation || !o.annotation.empty()) {
      tasks.push_back({&fi, o, nullptr, false});
    } else if (annotations.empty()) {
      // step_cpu reads the whole step when there is no annotation; the others need one.
      tasks.push_back({&fi, o, nullptr, fi.id != "step_cpu"});
    } else {
      for (const auto& name : annotations) {
        tasks.push_back({&fi, o, &name, false});
        tasks.back().opts.annotation = name;
      }
    }
  }
  return tasks;
}

// The facts only read the trace, so on a big one two threads share them (the overhead-bound
// fact's key_averages alone is ~0.1 s of a 100 MB trace); the results keep the tasks' order.
std::vector<Fact> measure_tasks(const TraceModel& m, const std::vector<InspectTask>& tasks) {
  const lessons_detail::View view(m);  // once, for every fact
  std::vector<Fact> measured(tasks.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < tasks.size();)
      measured[i] = tasks[i].fi->fn(view, tasks[i].opts);
  };
  constexpr size_t kParallelEvents = 50'000;
  if (m.trace().events.size() >= kParallelEvents && tasks.size() > 1) {
    auto other = std::async(std::launch::async, work);
    work();
    other.get();
  } else {
    work();
  }
  return measured;
}
}  // namespace

LessonsReport inspect_trace(const TraceModel& m, const FactOptions& o) {
  LessonsReport r = header(m, o);
  r.kind = "inspect";
  FactOptions opts = o;
  opts.general = o.general || !is_chapter_trace(m);
  r.title = opts.general
                ? "General patterns found in the trace (not a chapter's: the chapters' own rules left out)"
                : "Cheatsheet patterns found in the trace";
  std::vector<std::string> annotations, others;
  if (o.annotation.empty()) annotations = user_annotations(m);
  if (opts.general && annotations.size() > 1) {  // judge the main one
    others = annotations;
    annotations = {main_annotation(m, annotations)};
    others.erase(std::find(others.begin(), others.end(), annotations.front()));
  }
  const std::vector<InspectTask> tasks = inspect_tasks(opts, annotations);
  std::vector<Fact> measured = measure_tasks(m, tasks);
  const bool gpu = m.trace().has_device_activity(), hopper = is_hopper(m.trace());  // once
  for (size_t i = 0; i < tasks.size(); ++i) {
    Fact f = std::move(measured[i]);
    if (tasks[i].no_annotation) {  // the fact says there is no annotation to look into
      f.status = Status::NotApplicable;
      f.verdict =
          "not applicable: no user annotation (record_function) at the top of a step; "
          "wrap the code to study in one, or name one with --annotation";
      // The rule as a reader meets it: about "a user annotation", not an empty name ('').
      for (size_t at; (at = f.pattern.text.find("the '' annotation")) != std::string::npos;)
        f.pattern.text.replace(at, 17, "a user annotation");
      for (size_t at; (at = f.pattern.text.find("''")) != std::string::npos;)
        f.pattern.text.replace(at, 2, "a user annotation");
      f.explanation = f.verdict.substr(std::string_view("not applicable: ").size());
    } else if (tasks[i].annotation) {
      f.title += fmt::format(" ('{}')", *tasks[i].annotation);
      if (!others.empty())
        lessons_detail::add_evidence(
            f, fmt::format("'{}' is the longest top-level annotation; the others: {}", *tasks[i].annotation,
                           lessons_detail::join(others, ", ", "")));
    }
    if (opts.general) guard_noise(f);
    note_device_scope(f, m.trace(), gpu, hopper);
    r.facts.push_back(std::move(f));
  }
  if (o.annotation.empty()) r.options.annotation = lessons_detail::join(annotations, ", ", "");
  tally(r);
  return r;
}

}  // namespace wb
