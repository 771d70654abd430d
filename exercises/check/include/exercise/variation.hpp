// Per-learner variation: each exercise may pick its problem (size, batch, schedule) and the
// values its task asks about from the learner's name, so that two learners run different
// problems: answers copied from someone else, or numbers typed in, do not fit one's own trace.
//
//   catalog:  "vary": {"schedule": ["1,1,3", "2,1,3", "3,1,3"], "probe_n": [1000, 1536]}
//   nlohmann::json v = exercise::variation(e, "ada");   // {"schedule": "3,1,3", "probe_n": 1536}
//
// The choice is a hash of (exercise id, key, name): the same name always gets the same
// variation, on every machine. No name (""): the first choice of every key, the exercise's
// defaults. The exercise program (--student NAME) and the checker (check --student NAME,
// grade) both call this, so both agree on what the learner's run should be.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "exercise/catalog.hpp"

namespace exercise {

nlohmann::json variation(const Exercise& e, std::string_view student);

// "size 96, schedule 2,1,3" for people.
std::string describe_variation(const nlohmann::json& v);

// A learner's name as the command line and folder names take it: letters, digits, '.', '_',
// '-', 1..64 characters. Anything else is a usage error (exit 2) before any work.
bool valid_student_name(std::string_view name);

}  // namespace exercise
