#include "workbook/pattern_json.hpp"

#include <algorithm>

namespace wb {

using nlohmann::json;

namespace {

template <class E, E Last>
std::string choices(const EnumNames<E, Last>& names) {
  std::string s;
  for (size_t i = 0; i < EnumNames<E, Last>::kCount; ++i)
    s += std::string(i == 0                                ? ""
                     : i + 1 == EnumNames<E, Last>::kCount ? " or "
                                                           : ", ") +
         std::string(names.name(static_cast<E>(i)));
  return s;
}

Condition read_condition(const json& c, const JsonWhere& w) {
  json_known_keys(c, {"key", "op", "value", "scope", "only_n", "device"}, w);
  Condition out;
  out.key = json_text(c, "key", w);
  if (out.key.empty() || out.key[0] != '/')
    w.in("key").fail("'" + out.key + "' must be a JSON pointer into the fact's data, e.g. \"/paths\"");
  const std::string op = json_text(c, "op", w);
  if (auto o = kOpSymbols.value(op)) {
    out.op = *o;
  } else {
    w.in("op").fail("unknown operator '" + op + "' (use " + choices(kOpSymbols) + ")");
  }
  if (!c.contains("value")) w.in("value").fail("missing");
  out.value = c["value"];
  const std::string scope = c.contains("scope") ? json_text(c, "scope", w) : "any";
  if (auto s = kScopeNames.value(scope)) {
    out.scope = *s;
  } else {
    w.in("scope").fail("unknown scope '" + scope + "' (use " + choices(kScopeNames) + ")");
  }
  out.only_n = json_positive(c, "only_n", w, false);  // the N the condition holds for
  if (c.contains("device")) {  // a device-specific expectation (lessons.hpp: Condition::device)
    out.device = json_text(c, "device", w);
    if (out.device.empty()) w.in("device").fail("must name a GPU (\"H200\", \"A100\") or \"sm_90\"");
  }
  return out;
}

}  // namespace

std::string read_fact_id(const json& j, const JsonWhere& w, const std::vector<std::string_view>& also) {
  const std::string id = json_text(j, "fact", w);
  std::vector<std::string_view> known = also;
  for (const auto& f : all_facts()) known.push_back(f.id);
  if (std::find(known.begin(), known.end(), id) != known.end()) return id;
  std::string list;
  for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  w.in("fact").fail("unknown fact '" + id + "' (known: " + list + ")");
}

Pattern read_pattern(const json& j, const JsonWhere& w) {
  Pattern p;
  p.text = json_text(j, "text", w);
  p.why = json_text(j, "why", w, false);
  json_each_object(j, "all", w, "a condition {\"key\", \"op\", \"value\"}",
                   [&](const json& c, const JsonWhere& at) { p.all.push_back(read_condition(c, at)); });
  return p;
}

}  // namespace wb
