#include "exercise/variation.hpp"

#include <cstdint>

namespace exercise {

namespace {
// FNV-1a, 64 bit: stable across compilers and runs (std::hash is neither promised).
uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}
}  // namespace

nlohmann::json variation(const Exercise& e, std::string_view student) {
  nlohmann::json v = nlohmann::json::object();
  for (const auto& [key, choices] : e.vary.items()) {
    size_t i = 0;
    if (!student.empty()) i = fnv1a(e.id + "/" + key + "/" + std::string(student)) % choices.size();
    v[key] = choices[i];
  }
  return v;
}

std::string describe_variation(const nlohmann::json& v) {
  std::string out;
  for (const auto& [key, value] : v.items())
    out +=
        (out.empty() ? "" : ", ") + key + " " + (value.is_string() ? value.get<std::string>() : value.dump());
  return out;
}

bool valid_student_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return name != "." && name != "..";
}

}  // namespace exercise
