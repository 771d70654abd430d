#include "workbook/pattern_json.hpp"

#include "workbook/names.hpp"

namespace wb {

using nlohmann::json;
using Op = Condition::Op;
using Scope = Condition::Scope;

namespace {

constexpr EnumNames<Op, Op::NotContains> kOpSymbols{
    "<", "<=", ">", ">=", "==", "!=", "contains", "not_contains"};
constexpr EnumNames<Scope, Scope::Cpu> kScopeNames{"any", "gpu", "hopper", "cpu"};

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

}  // namespace

std::string_view op_symbol(Op op) { return kOpSymbols.name(op); }
std::string_view scope_name(Scope scope) { return kScopeNames.name(scope); }
std::optional<Scope> scope_value(std::string_view name) { return kScopeNames.value(name); }

Condition read_condition(const json& c, const JsonWhere& w) {
  if (!c.is_object()) w.fail("must be a condition {\"key\", \"op\", \"value\"}, got " + c.dump());
  json_known_keys(c, {"key", "op", "value", "scope", "only_n"}, w);
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
  if (auto s = scope_value(scope)) {
    out.scope = *s;
  } else {
    w.in("scope").fail("unknown scope '" + scope + "' (use " + choices(kScopeNames) + ")");
  }
  out.only_n = json_positive(c, "only_n", w, false);  // the N the condition holds for
  return out;
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
