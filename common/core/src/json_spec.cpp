#include "workbook/json_spec.hpp"

#include <cstdio>
#include <cstdlib>

namespace wb {

using nlohmann::json;

void JsonWhere::fail(const std::string& what) const {
  std::string at = source;
  if (!entry.empty()) at += ": " + entry;
  if (!field.empty()) at += ": " + field;
  throw SpecError(at + ": " + what);
}

JsonWhere JsonWhere::in(const std::string& f) const {
  return {source, entry, field.empty() ? f : field + "." + f};
}

void fail_compiled_data(const std::exception& e) {
  std::fprintf(stderr, "error: %s\n  (a data file compiled into this build: fix it, then rebuild)\n",
               e.what());
  std::exit(2);
}

json json_parse(std::string_view text, const JsonWhere& w) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    w.fail(std::string("not valid JSON: ") + e.what());
  }
}

std::string json_text(const json& j, const std::string& key, const JsonWhere& w, bool required) {
  if (!j.contains(key)) {
    if (required) w.in(key).fail("missing (a string is required)");
    return {};
  }
  if (!j[key].is_string()) w.in(key).fail("must be a string, got " + j[key].dump());
  return j[key].get<std::string>();
}

std::string json_lines(const json& j, const std::string& key, const JsonWhere& w, bool required) {
  if (j.contains(key) && j[key].is_array()) {
    std::string out;
    for (const auto& l : j[key]) {
      if (!l.is_string()) w.in(key).fail("every line must be a string, got " + l.dump());
      out += l.get<std::string>() + "\n";
    }
    return out;
  }
  return json_text(j, key, w, required);
}

double json_number(const json& j, const std::string& key, const JsonWhere& w) {
  if (!j.contains(key)) w.in(key).fail("missing (a number is required)");
  if (!j[key].is_number()) w.in(key).fail("must be a number, got " + j[key].dump());
  return j[key].get<double>();
}

int64_t json_positive(const json& j, const std::string& key, const JsonWhere& w, bool required) {
  if (!j.contains(key)) {
    if (required) w.in(key).fail("missing (a positive integer is required)");
    return 0;
  }
  if (!j[key].is_number_integer() || j[key].get<int64_t>() <= 0) w.in(key).fail("must be a positive integer");
  return j[key].get<int64_t>();
}

void json_known_keys(const json& j, std::initializer_list<std::string_view> known, const JsonWhere& w) {
  for (const auto& item : j.items()) {
    bool ok = false;
    for (auto k : known) ok = ok || k == item.key();
    if (ok) continue;
    std::string list;
    for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    w.in(item.key()).fail("unknown key (known here: " + list + ")");
  }
}

}  // namespace wb
