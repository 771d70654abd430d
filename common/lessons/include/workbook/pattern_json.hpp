// Patterns written as JSON, read in one place. Two files use this form: the lesson specs
// (chapters/NN_name/lessons.json) and the exercises' checks (exercises/exercises.json).
// A check, or a lesson, looks like this:
//
//   {"fact": "overhead_bound", "text": "what should hold", "why": "why this tolerance",
//    "all": [{"key": "/cuda_cpu_ratio", "op": "<", "value": 0.1, "scope": "gpu", "only_n": 64}]}
//
// "op" is one of < <= > >= == != contains not_contains; "scope" (default any) is any, gpu,
// hopper or cpu; "only_n" (optional) is the problem size N the condition holds for; "device"
// (optional) makes it a device-specific expectation: "sm_90" (compute capability) or a GPU name
// ("H200", "A100"), judged only on a trace of that device (elsewhere: relations only). A broken
// file gets an error that names the file, the entry and the field:
//   "exercises.json: ex01.1: checks[0].all[1].op: unknown operator '=<' (use <, <=, ...)".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "workbook/json_spec.hpp"
#include "workbook/lessons.hpp"
#include "workbook/names.hpp"

namespace wb {

// The operators as spec files (and the verdicts) write them.
inline constexpr EnumNames<Condition::Op, Condition::Op::NotContains> kOpSymbols{
    "<", "<=", ">", ">=", "==", "!=", "contains", "not_contains"};
// The scopes as every JSON file (lessons.json too) writes them.
inline constexpr EnumNames<Condition::Scope, Condition::Scope::Cpu> kScopeNames{"any", "gpu", "hopper",
                                                                                "cpu"};

// j["fact"]: a lesson fact (all_facts()) or one of `also` (a tool's own facts); otherwise
// "fact: unknown fact 'x' (known: ...)".
std::string read_fact_id(const nlohmann::json& j, const JsonWhere& w,
                         const std::vector<std::string_view>& also = {});
// "text" (required), "why" (optional) and "all" (a non-empty array of conditions). The caller
// reads "fact" and its other keys.
Pattern read_pattern(const nlohmann::json& j, const JsonWhere& w);

}  // namespace wb
