#include "exercise/catalog.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exercise/facts.hpp"
#include "workbook/pattern_json.hpp"

namespace exercise {

using nlohmann::json;

namespace {

using Where = wb::JsonWhere;

using wb::json_lines;
using wb::json_text;

Check check(const json& c, const Where& w) {
  wb::json_known_keys(c, {"fact", "annotation", "text", "why", "all"}, w);
  Check out;
  out.fact = wb::read_fact_id(c, w, exercise_fact_ids());
  out.annotation = json_text(c, "annotation", w, false);
  out.pattern = wb::read_pattern(c, w);
  return out;
}

}  // namespace

const Exercise* Catalog::find(std::string_view key) const {
  for (const auto& e : exercises)
    if (key == e.id || key == e.name || (e.id.size() > 2 && key == std::string_view(e.id).substr(2)))
      return &e;
  return nullptr;
}

std::string Catalog::ids() const {
  std::string s;
  for (const auto& e : exercises) s += (s.empty() ? "" : ", ") + e.id;
  return s;
}

namespace {

// Hints: "hints" (levels 1, 2, 3, ...: each a string or an array of lines), or the older
// single "hint", which is level 1.
void parse_hints(const json& j, const Where& w, Exercise& e) {
  if (j.contains("hints")) {
    if (!j["hints"].is_array() || j["hints"].empty())
      w.in("hints").fail("must be a non-empty array of levels");
    for (size_t k = 0; k < j["hints"].size(); ++k) {
      const json level = {{"h", j["hints"][k]}};
      e.hints.push_back(json_lines(level, "h", w.in("hints[" + std::to_string(k) + "]")));
    }
    if (j.contains("hint")) w.in("hint").fail("give either \"hint\" or \"hints\", not both");
  } else {
    e.hints.push_back(json_lines(j, "hint", w));
  }
  e.hint = e.hints.front();
}

// "vary", "gpu_note", "needs_gpu" and "args".
void parse_run_settings(const json& j, const Where& w, Exercise& e) {
  if (j.contains("vary")) {
    if (!j["vary"].is_object()) w.in("vary").fail("must be an object {\"key\": [choices, ...]}");
    for (const auto& [key, choices] : j["vary"].items())
      if (!choices.is_array() || choices.empty())
        w.in("vary." + key).fail("must be a non-empty array of choices (the first is the default)");
    e.vary = j["vary"];
  }
  e.gpu_note = json_lines(j, "gpu_note", w, false);
  if (j.contains("needs_gpu")) {
    if (!j["needs_gpu"].is_boolean()) w.in("needs_gpu").fail("must be true or false");
    e.needs_gpu = j["needs_gpu"].get<bool>();
  }
  if (j.contains("args")) {
    if (!j["args"].is_array()) w.in("args").fail("must be an array of strings");
    for (const auto& a : j["args"]) {
      if (!a.is_string()) w.in("args").fail("must be an array of strings");
      e.args.push_back(a.get<std::string>());
    }
  }
}

// "checks" (at least one: an exercise nobody can fail checks nothing) and "stub_fails".
void parse_checks(const json& j, const Where& w, Exercise& e) {
  wb::json_each_object(j, "checks", w, "a check {\"fact\", \"text\", \"all\"}",
                       [&](const json& c, const Where& at) { e.checks.push_back(check(c, at)); });
  // A condition's value may be {"var": "key"}: the learner's own choice of vary.key.
  for (size_t k = 0; k < e.checks.size(); ++k)
    for (const auto& c : e.checks[k].pattern.all)
      if (c.value.is_object()) {
        const std::string var = c.value.value("var", "");
        if (var.empty() || !e.vary.contains(var))
          w.in("checks[" + std::to_string(k) + "]")
              .fail("value " + c.value.dump() + ": {\"var\": KEY} must name a key of \"vary\"");
      }
  if (j.contains("stub_fails")) {
    if (!j["stub_fails"].is_number_unsigned() || j["stub_fails"].get<size_t>() >= e.checks.size())
      w.in("stub_fails").fail("must be the index of a check (0-based)");
    e.stub_fails = j["stub_fails"].get<int>();
  }
}

}  // namespace

Catalog parse_catalog(const std::string& text, const std::string& source) {
  const Where top{source, "", ""};
  const json doc = wb::json_parse(text, top);
  if (!doc.is_object()) top.fail("expected an object with an \"exercises\" array");
  wb::json_known_keys(doc, {"version", "about", "exercises"}, top);
  Catalog cat;
  cat.source = source;
  std::set<std::string> ids, names;
  wb::json_each_object(
      doc, "exercises", top, "an exercise {\"id\", \"name\", ...}", [&](const json& j, Where w) {
        Exercise e;
        e.id = json_text(j, "id", w);
        w = w.named(e.id);
        wb::json_known_keys(j,
                            {"id", "name", "chapter", "title", "task", "hints", "hint", "vary", "gpu_note",
                             "needs_gpu", "args", "checks", "stub_fails"},
                            w);
        if (e.id.size() < 3 || e.id.rfind("ex", 0) != 0) w.in("id").fail("ids look like \"ex01.1\"");
        e.name = json_text(j, "name", w);
        if (e.name.empty() ||
            e.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
          w.in("name").fail("'" + e.name + "' must be a folder/target name: lowercase letters, digits, _");
        if (!ids.insert(e.id).second) w.in("id").fail("duplicate id");
        if (!names.insert(e.name).second) w.in("name").fail("duplicate name '" + e.name + "'");
        e.chapter = json_text(j, "chapter", w);
        e.title = json_text(j, "title", w);
        e.task = json_lines(j, "task", w);
        parse_hints(j, w, e);
        parse_run_settings(j, w, e);
        parse_checks(j, w, e);
        cat.exercises.push_back(std::move(e));
      });
  return cat;
}

Catalog load_catalog(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CatalogError(path.string() + ": cannot open the exercise catalog");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_catalog(ss.str(), path.string());
}

}  // namespace exercise
