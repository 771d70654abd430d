// Patterns written as JSON, read in one place. Two files use this form: the lesson specs
// (common/lessons/data/lesson_specs.json) and the exercises' checks (exercises/exercises.json).
// A check, or a lesson, looks like this:
//
//   {"fact": "overhead_bound", "text": "what should hold", "why": "why this tolerance",
//    "all": [{"key": "/cuda_cpu_ratio", "op": "<", "value": 0.1, "scope": "gpu", "only_n": 64}]}
//
// "op" is one of < <= > >= == != contains not_contains; "scope" (default any) is any, gpu,
// hopper or cpu; "only_n" (optional) is the problem size N the condition holds for. A broken
// file gets an error that names the file, the entry and the field:
//   "exercises.json: ex01.1: checks[0].all[1].op: unknown operator '=<' (use <, <=, ...)".
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "workbook/json_spec.hpp"
#include "workbook/lessons.hpp"

namespace wb {

// The operators as spec files (and the verdicts) write them: "<" ... "not_contains".
std::string_view op_symbol(Condition::Op op);
// The scopes as every JSON file (lessons.json too) writes them: "any", "gpu", "hopper", "cpu".
std::string_view scope_name(Condition::Scope scope);
std::optional<Condition::Scope> scope_value(std::string_view name);

Condition read_condition(const nlohmann::json& c, const JsonWhere& w);
// "text" (required), "why" (optional) and "all" (a non-empty array of conditions). The caller
// reads "fact" and its other keys and checks that the fact exists.
Pattern read_pattern(const nlohmann::json& j, const JsonWhere& w);

}  // namespace wb
