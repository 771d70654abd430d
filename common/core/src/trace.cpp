#include "workbook/trace.hpp"

#include "workbook/names.hpp"

namespace wb {

namespace {
constexpr EnumNames<Kind, Kind::Other> kKindNames{
    "cpu_op", "user_annotation", "gpu_user_annotation", "cuda_runtime", "cuda_driver",
    "kernel", "gpu_memcpy",      "gpu_memset",          "instant",      "Trace",
    "other"};
}  // namespace

std::string_view kind_name(Kind k) { return kKindNames.name(k); }

Kind kind_from_category(std::string_view cat) {
  if (auto k = kKindNames.value(cat); k && *k != Kind::Instant && *k != Kind::Other) return *k;
  // Kineto spells a few categories differently across versions.
  if (cat == "Kernel" || cat == "kernel") return Kind::Kernel;
  if (cat == "Memcpy") return Kind::Memcpy;
  if (cat == "Memset") return Kind::Memset;
  if (cat == "cuda_runtime" || cat == "Runtime") return Kind::Runtime;
  if (cat == "cuda_driver" || cat == "Driver") return Kind::Driver;
  return Kind::Other;
}

}  // namespace wb
