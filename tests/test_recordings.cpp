// The recordings are the truth. Every report under expected_output/{h200,cpu}/ (a chapter's
// lessons.json, its variants' and its experiments': 05_compiled_addmm/aoti/, 01_cold_64/cold/)
// is recomputed from the trace recorded next to it, with the options it recorded (the problem,
// the annotation, the reference run of chapter 03), and every lesson must come out with the
// same status and the same verdict. A chapter of build/chapters.txt without a recording on a
// platform fails: a missing recording is not a pass.
//
// The one place that ties the lessons code to the recorded runs. When a spec or a fact changes
// on purpose, re-record (./workbook record on each platform) and this test passes again.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lessons_fixtures.hpp"
#include "process.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using nlohmann::json;

namespace {

fs::path expected_root() {
  const char* env = std::getenv("WORKBOOK_EXPECTED_ROOT");
  return env && *env ? fs::path(env) : fs::path(WORKBOOK_ROOT) / "expected_output";
}

// `name` or `name`.gz in `dir` (big traces are recorded gzipped); empty when neither is there.
fs::path recorded_file(const fs::path& dir, const std::string& name) {
  for (const std::string& n : {name, name + ".gz"})
    if (fs::exists(dir / n)) return dir / n;
  return {};
}

// The folders under <platform>/<chapter> that hold a report, as spec keys relative to the
// platform folder: "01_cold_64", "01_cold_64/cold", "05_compiled_addmm/eager".
std::vector<std::string> reports_of(const fs::path& platform_dir, const std::string& chapter) {
  std::vector<std::string> keys;
  const fs::path top = platform_dir / chapter;
  if (!fs::is_directory(top)) return keys;
  if (fs::exists(top / "lessons.json")) keys.push_back(chapter);
  for (const auto& e : fs::recursive_directory_iterator(top))
    if (e.is_regular_file() && e.path().filename() == "lessons.json" && e.path().parent_path() != top)
      keys.push_back(e.path().parent_path().lexically_relative(platform_dir).generic_string());
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Recomputes the report in platform_dir/key from its trace; `recorded` gets the recorded JSON.
struct Recomputed {
  json recorded;
  std::optional<wb::LessonsReport> now;
  std::vector<std::string> problems;  // why it could not be recomputed
};
Recomputed recompute(const fs::path& platform_dir, const std::string& key) {
  Recomputed r;
  const fs::path dir = platform_dir / key;
  r.recorded = json::parse(proc::slurp(dir / "lessons.json"), nullptr, /*allow_exceptions=*/false);
  if (r.recorded.is_discarded() || !r.recorded.is_object()) {
    r.problems.push_back("lessons.json is not a JSON object");
    return r;
  }
  const wb::LessonSpec* spec = wb::find_lesson_spec(key);
  if (!spec) {
    r.problems.push_back("no lesson spec named '" + key + "'");
    return r;
  }
  if (r.recorded.value("chapter", "") != key)
    r.problems.push_back("lessons.json says chapter '" + r.recorded.value("chapter", "") + "', its folder '" +
                         key + "'");
  const fs::path trace_path = recorded_file(dir, "trace.json");
  if (trace_path.empty()) {
    r.problems.push_back("no trace.json[.gz] next to lessons.json");
    return r;
  }
  wb::FactOptions o;
  try {
    o = wb::lessons_from_json(r.recorded).options;
  } catch (const std::exception& e) {
    r.problems.push_back(std::string("lessons.json does not read back: ") + e.what());
    return r;
  }
  const wb::Trace trace = wb::read_trace(trace_path);
  const wb::TraceModel model(trace);
  std::optional<wb::Trace> ref_trace;
  std::optional<wb::TraceModel> ref_model;
  if (!o.reference_file.empty()) {
    const fs::path ref = recorded_file(dir, o.reference_file);
    if (ref.empty()) {
      r.problems.push_back("its reference run " + o.reference_file + " is not recorded next to it");
      return r;
    }
    ref_trace = wb::read_trace(ref);
    ref_model.emplace(*ref_trace);
    o.reference = &*ref_model;
  }
  r.now = wb::check_lessons(model, *spec, o);
  return r;
}

// What differs between the recorded report in platform_dir/key and the lessons recomputed from
// its trace today; empty when every lesson has the recorded status and verdict.
std::vector<std::string> differences(const fs::path& platform_dir, const std::string& key) {
  Recomputed r = recompute(platform_dir, key);
  std::vector<std::string> diff = r.problems;
  if (!r.now) return diff;
  const wb::LessonsReport& now = *r.now;
  const json& facts =
      r.recorded.contains("facts") && r.recorded["facts"].is_array() ? r.recorded["facts"] : json::array();
  std::vector<std::string> ids_then, ids_now;
  for (const auto& f : facts) ids_then.push_back(f.value("id", "?"));
  for (const auto& f : now.facts) ids_now.push_back(f.id);
  if (ids_then != ids_now) {
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return "[" + s + "]";
    };
    diff.push_back("lessons recorded " + list(ids_then) + ", today " + list(ids_now));
  }
  for (const auto& f : now.facts) {
    const auto it =
        std::find_if(facts.begin(), facts.end(), [&](const json& j) { return j.value("id", "") == f.id; });
    if (it == facts.end()) continue;  // named in the list above
    const std::string status(wb::status_name(f.status));
    if (it->value("status", "") != status)
      diff.push_back(f.id + ": status recorded " + it->value("status", "") + ", today " + status + " (" +
                     f.verdict + ")");
    else if (it->value("verdict", "") != f.verdict)
      diff.push_back(f.id + ": verdict recorded \"" + it->value("verdict", "") + "\", today \"" + f.verdict +
                     "\"");
  }
  if (r.recorded.contains("summary") && r.recorded["summary"].contains("ok") &&
      r.recorded["summary"]["ok"].get<bool>() != now.ok())
    diff.push_back(std::string("summary: recorded ok=") + (now.ok() ? "false" : "true") +
                   ", today ok=" + (now.ok() ? "true" : "false"));
  return diff;
}

// Every chapter of the build must have a recording on the platform; returns what is missing.
std::vector<std::string> missing_chapters(const fs::path& platform_dir,
                                          const std::vector<std::string>& chapters) {
  std::vector<std::string> missing;
  for (const auto& ch : chapters)
    if (reports_of(platform_dir, ch).empty()) missing.push_back(ch);
  return missing;
}

void check_platform(const std::string& platform) {
  const fs::path dir = expected_root() / platform;
  const std::vector<std::string> chapters = proc::chapters();
  REQUIRE(!chapters.empty());  // build/chapters.txt lists the chapters this build made
  INFO("recordings in " << dir.string());
  for (const auto& ch : missing_chapters(dir, chapters)) {
    INFO(ch << ": no recording (run ./workbook record on a " << platform << " machine)");
    CHECK(false);
  }
  int reports = 0;
  for (const auto& ch : chapters)
    for (const auto& key : reports_of(dir, ch)) {
      ++reports;
      const auto diff = differences(dir, key);
      std::string text;
      for (const auto& d : diff) text += "\n  " + d;
      INFO(platform << "/" << key << ": " << diff.size() << " difference(s)" << text);
      CHECK(diff.empty());
    }
  CHECK(reports >= static_cast<int>(chapters.size()));
}

}  // namespace

TEST_CASE("recordings: every H200 report recomputes to its recorded verdicts", "[recordings][cpu]") {
  check_platform("h200");
}

TEST_CASE("recordings: every CPU report recomputes to its recorded verdicts", "[recordings][cpu]") {
  check_platform("cpu");
}

TEST_CASE("recordings: every recorded run passes its lessons", "[recordings][cpu]") {
  // A recording is a real run that shows the lesson: no lesson fails and enough pass.
  int checked = 0;
  for (const std::string platform : {"h200", "cpu"}) {
    const fs::path dir = expected_root() / platform;
    for (const auto& ch : proc::chapters())
      for (const auto& key : reports_of(dir, ch)) {
        Recomputed r = recompute(dir, key);
        if (!r.now) continue;  // the test above names why
        ++checked;
        INFO(platform << "/" << key << "\n" << wb::render_lessons(*r.now, wb::Format::Text));
        CHECK(r.now->failed == 0);
        CHECK(r.now->ok());
      }
  }
  CHECK(checked > 0);
}

// ---- the check itself can fail ------------------------------------------------------------

TEST_CASE("recordings check: a report that matches passes; any change to it is found", "[recordings][cpu]") {
  // A recording written the way the harness writes one: chapter 03's spec on the H200-shaped
  // batched trace, with the 2-D run as its reference (tests/data/lessons).
  const fs::path root = proc::scratch("recordings_check");
  const fs::path platform = root / "h200", dir = platform / "03_batched_bmm";
  fs::create_directories(dir);
  fs::copy_file(fixtures::data_dir() / "h200_64_bmm.json", dir / "trace.json");
  fs::copy_file(fixtures::data_dir() / "h200_64_cold.json", dir / "trace_2d.json");
  const wb::Trace t = wb::read_trace(dir / "trace.json"), t2 = wb::read_trace(dir / "trace_2d.json");
  const wb::TraceModel m(t), m2(t2);
  wb::FactOptions o;
  o.problem = wb::Problem::square(64, 8, 2);
  o.reference = &m2;
  o.reference_file = "trace_2d.json";
  o.reference_label = "2-D";
  wb::LessonsReport rep = wb::check_lessons(m, *wb::find_lesson_spec("03_batched_bmm"), o);
  rep.chapter = "03_batched_bmm";
  const json good = wb::to_json(rep);
  auto write = [&](const json& j) { std::ofstream(dir / "lessons.json") << j.dump(2); };
  // The differences when the recording says `recorded`.
  auto differences_with = [&](const json& recorded) {
    write(recorded);
    return differences(platform, "03_batched_bmm");
  };

  write(good);
  INFO(wb::render_lessons(rep, wb::Format::Text));
  CHECK(differences(platform, "03_batched_bmm").empty());
  CHECK(reports_of(platform, "03_batched_bmm") == std::vector<std::string>{"03_batched_bmm"});

  // Another verdict (a number changed by hand).
  json j = good;
  j["facts"][0]["verdict"] = j["facts"][0]["verdict"].get<std::string>() + " (edited)";
  auto d = differences_with(j);
  REQUIRE(d.size() == 1);
  CHECK_THAT(d[0], ContainsSubstring("verdict recorded"));

  // Another status.
  j = good;
  j["facts"][1]["status"] = j["facts"][1]["status"] == "pass" ? "fail" : "pass";
  d = differences_with(j);
  REQUIRE(!d.empty());
  CHECK_THAT(d[0], ContainsSubstring("status recorded"));

  // A lesson the spec no longer has (or a new one the recording lacks).
  j = good;
  j["facts"].erase(j["facts"].begin() + 1);
  d = differences_with(j);
  REQUIRE(!d.empty());
  CHECK_THAT(d[0], ContainsSubstring("lessons recorded"));

  // The reference run is gone: not recomputable, which is a difference, not a skip.
  write(good);
  fs::remove(dir / "trace_2d.json");
  d = differences(platform, "03_batched_bmm");
  REQUIRE(d.size() == 1);
  CHECK_THAT(d[0], ContainsSubstring("trace_2d.json is not recorded"));

  // A recording without its reference option: batch_chain cannot be measured, so it fails
  // today while the recording says it passed.
  fs::copy_file(fixtures::data_dir() / "h200_64_cold.json", dir / "trace_2d.json");
  j = good;
  j["options"].erase("reference_file");
  d = differences_with(j);
  REQUIRE(!d.empty());
  CHECK_THAT(d[0], ContainsSubstring("batch_chain: status recorded pass, today fail"));

  // The trace is gone.
  write(good);
  fs::remove(dir / "trace.json");
  CHECK(!differences(platform, "03_batched_bmm").empty());

  // A folder whose name is not a spec, and chapters without any recording.
  fs::create_directories(platform / "03_batched_bmm" / "nonsense");
  std::ofstream(platform / "03_batched_bmm" / "nonsense" / "lessons.json") << good.dump();
  CHECK_THAT(differences(platform, "03_batched_bmm/nonsense").front(), ContainsSubstring("no lesson spec"));
  CHECK(missing_chapters(platform, {"01_cold_64", "03_batched_bmm"}) ==
        std::vector<std::string>{"01_cold_64"});
  CHECK(missing_chapters(root / "cpu", {"01_cold_64"}) == std::vector<std::string>{"01_cold_64"});
  fs::remove_all(root);
}
