// Claims: what the workbook's pages say a trace shows, tied to the lesson or fact value that
// shows it on a named recording (docs/claims/*.json; docs/claims/README.md says how to write
// one). Read and judged here, for tests/test_claims.cpp and tests/test_python_compiled.cpp.
//
//   {"page": "chapters/04_compute_bound_4096/README.md",
//    "claims": [
//      {"quote": "the final sync holds most of the CPU time",      // a short quote of the sentence
//       "recording": "h200/04_compute_bound_4096",                 // a folder under expected_output/
//       "lesson": "end_sync"},                                     // a lesson of its spec: must pass
//      {"quote": "...", "recording": "h200/python/compile", "reference": "h200/python/eager",
//       "fact": "step_cpu", "text": "CPU per step above eager's",  // or a pattern on a fact
//       "all": [{"key": "/over_reference", "op": ">=", "value": 1.5}],
//       "figures": [{"printed": "3.9", "key": "/over_reference"}]}]}        // optional
//
// A recording's options (the problem, the annotation, chapter 03's reference run) come from its
// lessons.json, or for a Python recording from its run.json. The quote is looked for in the
// page with HTML comments taken out and every run of white
// space made one space, so a quote may span lines and figures.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "workbook/sentences.hpp"  // wb::figures::normalized
#include "workbook/figures.hpp"
#include "workbook/json_spec.hpp"
#include "workbook/lessons.hpp"
#include "workbook/pattern_json.hpp"
#include "workbook/trace_reader.hpp"

namespace claims {

namespace fs = std::filesystem;
using nlohmann::json;

inline fs::path root() { return fs::path(WORKBOOK_ROOT); }
inline fs::path expected_root() {
  const char* env = std::getenv("WORKBOOK_EXPECTED_ROOT");
  return env && *env ? fs::path(env) : root() / "expected_output";
}

// A figure the quote prints, read from the fact's data: "855" with key "/first_over_median_rest"
// holds when the value is within half a unit of the last printed digit (the rule of
// tools/figures, without a marker in the page). `scale` turns the data's unit into the page's.
// Or, with `ref` (FILE#SELECTOR, the references of tools/figures: a cell of a table.txt, a field
// of a lessons.json or a file under docs/bench/, an event of a trace), the value is read from
// that file instead of the fact: a number the page quotes from a recording, checked like a
// lesson's figure.
struct Figure {
  std::string printed;
  std::string key;
  double scale = 1;
  std::string ref;
};

struct Claim {
  std::string where;  // "docs/claims/04_compute_bound_4096.json: claims[2]"
  std::string page;   // relative to the repository root
  std::string quote;
  std::string recording;  // under expected_output/: "h200/04_compute_bound_4096" ("" for a
                          // claim that only quotes figures by "ref")
  std::string reference;  // optional second recording (FactOptions::reference)
  std::string spec;       // optional: the spec whose lesson is named (default: the recording's)
  std::string lesson;     // a lesson (fact id) of the spec, or
  std::string fact;       // a fact judged by `pattern`
  wb::Pattern pattern;
  std::vector<Figure> figures;  // figures of the quote, checked against the same fact's data
};

// Text with <!--...--> comments removed and every run of white space made one space: the
// sentence-coverage tool's own normalization, so a quote matches where the coverage looks for it.
using wb::figures::normalized;

inline Claim read_claim(const json& j, const wb::JsonWhere& w, const std::string& page) {
  wb::json_known_keys(
      j, {"quote", "recording", "reference", "spec", "lesson", "fact", "text", "why", "all", "figures"}, w);
  Claim c;
  c.where = w.source + ": " + w.field;
  c.page = page;
  c.quote = wb::json_text(j, "quote", w);
  c.reference = wb::json_text(j, "reference", w, false);
  c.spec = wb::json_text(j, "spec", w, false);
  c.lesson = wb::json_text(j, "lesson", w, false);
  // A claim that only quotes figures by "ref" names no recording, lesson or fact.
  bool refs_only = j.contains("figures") && j["figures"].is_array() && !j["figures"].empty() &&
                   !j.contains("recording") && c.lesson.empty() && !j.contains("fact");
  if (refs_only)
    for (const auto& fj : j["figures"]) refs_only = refs_only && fj.is_object() && fj.contains("ref");
  if (!refs_only) {
    c.recording = wb::json_text(j, "recording", w);
    if (c.lesson.empty() == !j.contains("fact"))
      w.fail("a claim names either a \"lesson\" or a \"fact\" with its pattern");
  }
  if (j.contains("fact")) {
    c.fact = wb::read_fact_id(j, w);
    c.pattern = wb::read_pattern(j, w);
  }
  if (j.contains("figures"))
    wb::json_each_object(j, "figures", w, "a figure {\"printed\", \"key\"[, \"scale\"]}",
                         [&](const json& fj, const wb::JsonWhere& at) {
                           wb::json_known_keys(fj, {"printed", "key", "scale", "ref"}, at);
                           Figure fig{wb::json_text(fj, "printed", at),
                                      wb::json_text(fj, "key", at, !fj.contains("ref")), 1,
                                      wb::json_text(fj, "ref", at, false)};
                           if (!fig.ref.empty() && !fig.key.empty())
                             at.fail("a figure names a \"key\" of the fact or a \"ref\", not both");
                           if (fj.contains("scale")) fig.scale = wb::json_number(fj, "scale", at);
                           if (c.quote.find(fig.printed) == std::string::npos)
                             at.in("printed").fail("'" + fig.printed + "' is not in the quote");
                           c.figures.push_back(fig);
                         });
  return c;
}

// "" when the printed figure agrees with the value at its precision, else why not. A figure
// with a `ref` reads its value from that file, not from `data`.
inline std::string figure_problem(const Figure& fig, const json& data) {
  std::string digits;
  for (char ch : fig.printed)
    if (ch != ',') digits += ch;
  double shown = 0;
  try {
    shown = std::stod(digits);
  } catch (const std::exception&) {
    return "'" + fig.printed + "' is not a number";
  }
  const size_t dot = digits.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(digits.size() - dot - 1);
  json v;
  if (!fig.ref.empty()) {
    try {
      v = wb::figures::resolve(root(), fig.ref);
    } catch (const std::exception& e) {
      return fig.ref + ": " + e.what();
    }
  } else {
    try {
      const json::json_pointer ptr(fig.key);
      if (data.contains(ptr)) v = data.at(ptr);
    } catch (const json::exception&) {
      return "bad key '" + fig.key + "'";
    }
  }
  if (!v.is_number()) return fig.key + " is not a number in the fact's data";
  const double value = v.get<double>() * fig.scale;
  if (std::abs(value - shown) <= 0.5 * std::pow(10.0, -decimals) + 1e-9) return "";
  return "the page prints " + fig.printed + ", the recording's " + (fig.ref.empty() ? fig.key : fig.ref) +
         " gives " + std::to_string(value);
}

// Every claim of one claims file (throws wb::SpecError saying where a broken one is broken).
inline std::vector<Claim> read_claims(const fs::path& file) {
  const std::string source = fs::relative(file, root()).generic_string();
  const wb::JsonWhere w{source, "", ""};
  const json doc = wb::json_parse(proc::slurp(file), w);
  wb::json_known_keys(doc, {"page", "about", "every_figure", "claims", "sources", "files"}, w);
  const std::string page = wb::json_text(doc, "page", w);
  std::vector<Claim> out;
  if (doc.contains("claims"))
    wb::json_each_object(
        doc, "claims", w, "a claim {\"quote\", \"recording\", ...}",
        [&](const json& j, const wb::JsonWhere& at) { out.push_back(read_claim(j, at, page)); });
  return out;
}

// A sentence that is not about a recording, and where it comes from (workbook/sentences.hpp).
struct Source {
  std::string where, page, quote, source, what;
};
inline const std::vector<std::string>& source_kinds() {
  static const std::vector<std::string> k = {"datasheet", "seed",       "calc",  "spec",
                                             "code",      "definition", "bench", "probe"};
  return k;
}
// Every source of one claims file (throws wb::SpecError on an unknown kind or a missing field).
inline std::vector<Source> read_sources(const fs::path& file) {
  const std::string name = fs::relative(file, root()).generic_string();
  const wb::JsonWhere w{name, "", ""};
  const json doc = wb::json_parse(proc::slurp(file), w);
  std::vector<Source> out;
  if (!doc.contains("sources")) return out;
  const std::string page = wb::json_text(doc, "page", w);
  wb::json_each_object(doc, "sources", w, "a source {\"quote\", \"source\", \"what\"}",
                       [&](const json& j, const wb::JsonWhere& at) {
                         wb::json_known_keys(j, {"quote", "section", "source", "what"}, at);
                         if (j.contains("quote") == j.contains("section"))
                           at.fail("a source quotes a sentence (\"quote\") or names a \"section\"");
                         Source s{name + ": " + at.field, page,
                                  wb::json_text(j, j.contains("quote") ? "quote" : "section", at),
                                  wb::json_text(j, "source", at), wb::json_text(j, "what", at)};
                         const auto& k = source_kinds();
                         if (std::find(k.begin(), k.end(), s.source) == k.end())
                           at.in("source").fail("'" + s.source +
                                                "' is not one of datasheet, seed, calc, spec, code, "
                                                "definition, bench, probe");
                         out.push_back(s);
                       });
  return out;
}

inline std::vector<fs::path> claim_files() {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(root() / "docs" / "claims"))
    if (e.path().extension() == ".json") v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

// A recording read once: its trace, model and options. Chapter 05's top folder holds no trace
// but comparison.json, the lessons across its variants (recomputed from the variants' traces by
// tests/test_05_compiled_addmm.cpp): a claim on it names one of those lessons.
struct Recording {
  json comparison;  // non-null for a folder with comparison.json and no trace
  std::unique_ptr<wb::Trace> trace;
  std::unique_ptr<wb::TraceModel> model;
  wb::FactOptions options;
  std::string spec;                          // lessons.json's chapter ("" for a Python recording)
  std::unique_ptr<Recording> reference_run;  // chapter 03's trace_2d.json
};

inline fs::path recorded_file(const fs::path& dir, const std::string& name) {
  for (const std::string& n : {name, name + ".gz"})
    if (fs::exists(dir / n)) return dir / n;
  return {};
}

// Options from run.json (tools/python/chapter01_python.py writes it).
inline wb::FactOptions options_from_run(const json& run) {
  wb::FactOptions o;
  o.annotation = run.value("annotation", "matmul_add");
  o.problem.n = run.value("size", 0);
  o.problem.dtype_bytes = run.value("dtype", "") == "float32" ? 4 : 2;
  return o;
}

// Loads expected_output/<name>; throws std::runtime_error naming what is missing.
inline std::unique_ptr<Recording> load(const std::string& name) {
  const fs::path dir = expected_root() / name;
  const fs::path trace = recorded_file(dir, "trace.json");
  if (trace.empty() && fs::exists(dir / "comparison.json")) {
    auto r = std::make_unique<Recording>();
    r->comparison = json::parse(proc::slurp(dir / "comparison.json"));
    return r;
  }
  if (trace.empty())
    throw std::runtime_error("missing recording: " + (dir / "trace.json").string() +
                             " (neither it nor trace.json.gz exists)");
  auto r = std::make_unique<Recording>();
  r->trace = std::make_unique<wb::Trace>(wb::read_trace(trace));
  r->model = std::make_unique<wb::TraceModel>(*r->trace);
  if (fs::exists(dir / "lessons.json")) {
    const wb::LessonsReport rep = wb::lessons_from_json(json::parse(proc::slurp(dir / "lessons.json")));
    r->options = rep.options;
    r->spec = rep.chapter;
  } else if (fs::exists(dir / "run.json")) {
    r->options = options_from_run(json::parse(proc::slurp(dir / "run.json")));
  }
  if (!r->options.reference_file.empty()) {
    const fs::path ref = recorded_file(dir, r->options.reference_file);
    if (ref.empty())
      throw std::runtime_error("missing recording: " + (dir / r->options.reference_file).string());
    r->reference_run = std::make_unique<Recording>();
    r->reference_run->trace = std::make_unique<wb::Trace>(wb::read_trace(ref));
    r->reference_run->model = std::make_unique<wb::TraceModel>(*r->reference_run->trace);
    r->options.reference = r->reference_run->model.get();
  }
  return r;
}

class Recordings {
 public:
  // nullptr and `why` set when the recording cannot be read.
  const Recording* get(const std::string& name, std::string& why) {
    auto it = cache_.find(name);
    if (it == cache_.end()) {
      std::pair<std::unique_ptr<Recording>, std::string> entry;
      try {
        entry.first = load(name);
      } catch (const std::exception& e) {
        entry.second = e.what();
      }
      it = cache_.emplace(name, std::move(entry)).first;
    }
    why = it->second.second;
    return it->second.first.get();
  }

 private:
  std::map<std::string, std::pair<std::unique_ptr<Recording>, std::string>> cache_;
};

// Judges one claim on its recording: the lesson must pass, or the fact must match the pattern.
// Returns "" when it holds, else why not (with the verdict).
inline std::string judge(const Claim& c, Recordings& recs, wb::Fact* out = nullptr) {
  std::string why;
  if (c.recording.empty()) {  // figures quoted by "ref" only
    for (const auto& fig : c.figures)
      if (std::string p = figure_problem(fig, json::object()); !p.empty()) return p;
    return "";
  }
  const Recording* r = recs.get(c.recording, why);
  if (!r) return why;
  wb::FactOptions o = r->options;
  if (!c.reference.empty()) {
    const Recording* ref = recs.get(c.reference, why);
    if (!ref) return "its reference: " + why;
    o.reference = ref->model.get();
    o.reference_label = c.reference;
  }
  wb::Fact f;
  if (!r->comparison.is_null()) {
    if (c.lesson.empty()) return c.recording + " holds the lessons across variants: name one with \"lesson\"";
    for (const auto& j : r->comparison.at("facts")) {
      if (j.at("id") != c.lesson) continue;
      f.id = c.lesson;
      f.data = j.at("data");
      f.status = j.at("status") == "pass" ? wb::Status::Pass : wb::Status::Fail;
      f.verdict = j.value("verdict", "");
    }
    if (f.id.empty()) return c.recording + "/comparison.json has no lesson '" + c.lesson + "'";
  } else if (!c.lesson.empty()) {
    const std::string spec_name = c.spec.empty() ? r->spec : c.spec;
    const wb::LessonSpec* spec = wb::find_lesson_spec(spec_name);
    if (!spec) return "no lesson spec '" + spec_name + "' for " + c.recording + " (name one with \"spec\")";
    const wb::LessonsReport rep = wb::check_lessons(*r->model, *spec, o);
    const auto it =
        std::find_if(rep.facts.begin(), rep.facts.end(), [&](const wb::Fact& x) { return x.id == c.lesson; });
    if (it == rep.facts.end()) return "spec " + spec_name + " has no lesson '" + c.lesson + "'";
    f = *it;
  } else {
    f = wb::apply_pattern(wb::compute_fact(c.fact, *r->model, o), c.pattern, *r->trace, o.problem);
  }
  if (out) *out = f;
  if (f.status != wb::Status::Pass) return std::string(wb::status_mark(f.status)) + ": " + f.verdict;
  for (const auto& fig : c.figures)
    if (std::string p = figure_problem(fig, f.data); !p.empty()) return p;
  return "";
}

}  // namespace claims
