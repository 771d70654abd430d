#include "exercise/catalog.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exercise/facts.hpp"

namespace exercise {

using nlohmann::json;
using Op = wb::Condition::Op;
using Scope = wb::Condition::Scope;

namespace {

const std::pair<std::string_view, Op> kOps[] = {
    {"<", Op::Lt},
    {"<=", Op::Le},
    {">", Op::Gt},
    {">=", Op::Ge},
    {"==", Op::Eq},
    {"!=", Op::Ne},
    {"contains", Op::Contains},
    {"not_contains", Op::NotContains},
};

// Errors say where: "exercises.json: ex01.1: checks[0].all[1].op: ..."
struct Where {
  std::string source, exercise, field;
  [[noreturn]] void fail(const std::string& what) const {
    std::string at = source;
    if (!exercise.empty()) at += ": " + exercise;
    if (!field.empty()) at += ": " + field;
    throw CatalogError(at + ": " + what);
  }
  Where in(const std::string& f) const { return {source, exercise, field.empty() ? f : field + "." + f}; }
};

std::string text(const json& j, const std::string& key, const Where& w, bool required = true) {
  if (!j.contains(key)) {
    if (required) w.in(key).fail("missing (a string is required)");
    return {};
  }
  if (!j[key].is_string()) w.in(key).fail("must be a string, got " + j[key].dump());
  return j[key].get<std::string>();
}

// Long texts may be written as an array of lines (JSON has no multi-line strings).
std::string lines(const json& j, const std::string& key, const Where& w, bool required = true) {
  if (j.contains(key) && j[key].is_array()) {
    std::string out;
    for (const auto& l : j[key]) {
      if (!l.is_string()) w.in(key).fail("every line must be a string, got " + l.dump());
      out += l.get<std::string>() + "\n";
    }
    return out;
  }
  return text(j, key, w, required);
}

wb::Condition condition(const json& c, const Where& w) {
  if (!c.is_object()) w.fail("a condition is an object {\"key\", \"op\", \"value\"}, got " + c.dump());
  wb::Condition out;
  out.key = text(c, "key", w);
  if (out.key.empty() || out.key[0] != '/')
    w.in("key").fail("'" + out.key + "' must be a JSON pointer into the fact's data, e.g. \"/paths\"");
  const std::string op = text(c, "op", w);
  bool known = false;
  for (const auto& [name, value] : kOps)
    if (name == op) {
      out.op = value;
      known = true;
    }
  if (!known)
    w.in("op").fail("unknown operator '" + op + "' (use <, <=, >, >=, ==, !=, contains, not_contains)");
  if (!c.contains("value")) w.in("value").fail("missing");
  out.value = c["value"];
  const std::string scope = c.contains("scope") ? text(c, "scope", w) : "any";
  if (scope == "any")
    out.scope = Scope::Any;
  else if (scope == "gpu")
    out.scope = Scope::Gpu;
  else if (scope == "hopper")
    out.scope = Scope::Hopper;
  else
    w.in("scope").fail("unknown scope '" + scope + "' (use any, gpu or hopper)");
  if (c.contains("only_n")) {
    if (!c["only_n"].is_number_integer() || c["only_n"].get<int64_t>() <= 0)
      w.in("only_n").fail("must be a positive integer (the N the condition holds for)");
    out.only_n = c["only_n"].get<int64_t>();
  }
  return out;
}

Check check(const json& c, const Where& w) {
  if (!c.is_object()) w.fail("a check is an object {\"fact\", \"text\", \"all\"}");
  Check out;
  out.fact = text(c, "fact", w);
  if (!is_known_fact(out.fact)) {
    std::string known;
    for (auto id : exercise_fact_ids()) known += std::string(known.empty() ? "" : ", ") + std::string(id);
    for (const auto& f : wb::all_facts()) known += ", " + std::string(f.id);
    w.in("fact").fail("unknown fact '" + out.fact + "' (known: " + known + ")");
  }
  out.annotation = text(c, "annotation", w, false);
  out.pattern.text = text(c, "text", w);
  out.pattern.why = text(c, "why", w, false);
  if (!c.contains("all") || !c["all"].is_array() || c["all"].empty())
    w.in("all").fail("needs a non-empty array of conditions");
  for (size_t i = 0; i < c["all"].size(); ++i)
    out.pattern.all.push_back(condition(c["all"][i], w.in("all[" + std::to_string(i) + "]")));
  return out;
}

}  // namespace

std::string_view op_name(Op op) {
  for (const auto& [name, value] : kOps)
    if (value == op) return name;
  return "?";
}

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

Catalog parse_catalog(const std::string& json_text, const std::string& source) {
  const Where top{source, "", ""};
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    top.fail(std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("exercises") || !doc["exercises"].is_array())
    top.fail("expected an object with an \"exercises\" array");
  Catalog cat;
  cat.source = source;
  std::set<std::string> ids, names;
  for (size_t i = 0; i < doc["exercises"].size(); ++i) {
    const json& j = doc["exercises"][i];
    Where w{source, "exercises[" + std::to_string(i) + "]", ""};
    if (!j.is_object()) w.fail("an exercise is an object");
    Exercise e;
    e.id = text(j, "id", w);
    w.exercise = e.id;
    if (e.id.size() < 3 || e.id.rfind("ex", 0) != 0) w.in("id").fail("ids look like \"ex01.1\"");
    e.name = text(j, "name", w);
    if (e.name.empty() ||
        e.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      w.in("name").fail("'" + e.name + "' must be a folder/target name: lowercase letters, digits, _");
    if (!ids.insert(e.id).second) w.in("id").fail("duplicate id");
    if (!names.insert(e.name).second) w.in("name").fail("duplicate name '" + e.name + "'");
    e.chapter = text(j, "chapter", w);
    e.title = text(j, "title", w);
    e.task = lines(j, "task", w);
    // Hints: "hints" (levels 1, 2, 3, ...: each a string or an array of lines), or the older
    // single "hint", which is level 1.
    if (j.contains("hints")) {
      if (!j["hints"].is_array() || j["hints"].empty())
        w.in("hints").fail("must be a non-empty array of levels");
      for (size_t k = 0; k < j["hints"].size(); ++k) {
        const json level = {{"h", j["hints"][k]}};
        e.hints.push_back(lines(level, "h", w.in("hints[" + std::to_string(k) + "]")));
      }
      if (j.contains("hint")) w.in("hint").fail("give either \"hint\" or \"hints\", not both");
    } else {
      e.hints.push_back(lines(j, "hint", w));
    }
    e.hint = e.hints.front();
    if (j.contains("vary")) {
      if (!j["vary"].is_object()) w.in("vary").fail("must be an object {\"key\": [choices, ...]}");
      for (const auto& [key, choices] : j["vary"].items())
        if (!choices.is_array() || choices.empty())
          w.in("vary." + key).fail("must be a non-empty array of choices (the first is the default)");
      e.vary = j["vary"];
    }
    e.gpu_note = lines(j, "gpu_note", w, false);
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
    if (!j.contains("checks") || !j["checks"].is_array() || j["checks"].empty())
      w.in("checks").fail("needs a non-empty array: an exercise nobody can fail checks nothing");
    for (size_t k = 0; k < j["checks"].size(); ++k)
      e.checks.push_back(check(j["checks"][k], w.in("checks[" + std::to_string(k) + "]")));
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
    cat.exercises.push_back(std::move(e));
  }
  if (cat.exercises.empty()) top.fail("no exercises");
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
