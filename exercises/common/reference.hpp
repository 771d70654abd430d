// The values a correct exercise program must produce, computed by the harness itself from the
// exercise's own inputs (the seed, the shapes and the number of updates the exercise
// specifies), never from the program: a program that deletes or neutralises its workload
// hands in a result these do not match. Exercises list the values they check in
// exercises.json ("workload": {"values": [...]}); run.result(key, tensor) hands one in.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ex {

// What the run did, as the reference needs it.
struct ReferenceContext {
  std::string exercise;       // the program's name, e.g. "ex08_1_in_place_update"
  int64_t size = 0;           // --size as the run used it
  int steps_run = 0;          // profiled steps (every step of the schedule)
  at::TensorOptions options;  // the run's device and dtype
};

// Whether the harness has a reference for this exercise's value `key`.
bool has_reference(const std::string& exercise, const std::string& key);

// {"ok": bool, "what": the value the exercise specifies, "measured": how far `got` is from it}.
// An exercise/key without a reference is {"ok": false, "what": "no reference for <key>"}.
// Reseeds the global generator (call it after the workload).
nlohmann::json verify_result(const ReferenceContext& c, const std::string& key, const at::Tensor& got);

}  // namespace ex
