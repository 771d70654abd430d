// Reading a hand-written JSON file (a spec or a table) with errors that say where: the file,
// the entry and the field, e.g. "exercises.json: ex01.1: checks[0].all[1].op: unknown operator".
// The lesson specs, the exercise catalog and the table of device peaks are read with these.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wb {

// A spec file that cannot be read: the message says where.
struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where in a spec file a value is: "source: entry: field".
struct JsonWhere {
  std::string source, entry, field;
  [[noreturn]] void fail(const std::string& what) const;
  JsonWhere in(const std::string& f) const;  // a field below this one: "checks[0]" -> "checks[0].all"
  // Once an entry's name is known, errors give it instead of its place: "ex01.1: checks[0]".
  JsonWhere named(const std::string& name) const { return {source, name, ""}; }
};

// A data file compiled into the libraries (workbook_embed) did not read: the build is broken,
// not the run's input. Prints "error: <what> ..." and exits with 2; the build's check_data step
// reads the same files, so a broken one normally stops the build first.
[[noreturn]] void fail_compiled_data(const std::exception& e);
// read() (which reads a compiled-in file), or fail_compiled_data on its SpecError.
template <class Read>
auto read_compiled_data(Read&& read) {
  try {
    return read();
  } catch (const SpecError& e) {
    fail_compiled_data(e);
  }
}

// The whole text as JSON ("not valid JSON: ..." otherwise).
nlohmann::json json_parse(std::string_view text, const JsonWhere& w);
// j[key] as a string; missing: an error when required, else "".
std::string json_text(const nlohmann::json& j, const std::string& key, const JsonWhere& w,
                      bool required = true);
// The same, or an array of lines, each followed by "\n" (JSON has no multi-line strings).
std::string json_lines(const nlohmann::json& j, const std::string& key, const JsonWhere& w,
                       bool required = true);
// j[key] as a number; missing: an error.
double json_number(const nlohmann::json& j, const std::string& key, const JsonWhere& w);
// j[key] as a positive integer; missing: an error when required, else 0.
int64_t json_positive(const nlohmann::json& j, const std::string& key, const JsonWhere& w, bool required);
// Calls fn(element, where) for each element of j[key], a non-empty array of objects; `where` is
// "key[i]". `what` names an element in errors: "a condition {\"key\", \"op\", \"value\"}" gives
// "all: needs a non-empty array, each element a condition {...}" and "all[2]: must be a
// condition {...}, got 3".
template <class Fn>
void json_each_object(const nlohmann::json& j, const std::string& key, const JsonWhere& w,
                      const std::string& what, Fn&& fn) {
  if (!j.contains(key) || !j[key].is_array() || j[key].empty())
    w.in(key).fail("needs a non-empty array, each element " + what);
  for (size_t i = 0; i < j[key].size(); ++i) {
    const JsonWhere at = w.in(key + "[" + std::to_string(i) + "]");
    if (!j[key][i].is_object()) at.fail("must be " + what + ", got " + j[key][i].dump());
    fn(j[key][i], at);
  }
}
// Fails when j has a key outside `known` (a misspelt key would otherwise be ignored silently).
void json_known_keys(const nlohmann::json& j, std::initializer_list<std::string_view> known,
                     const JsonWhere& w);

}  // namespace wb
