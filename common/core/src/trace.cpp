#include "workbook/trace.hpp"

namespace wb {

namespace {
struct KindName {
  Kind kind;
  std::string_view name;
};
constexpr KindName kKindNames[] = {
    {Kind::CpuOp, "cpu_op"},
    {Kind::UserAnnotation, "user_annotation"},
    {Kind::GpuUserAnnotation, "gpu_user_annotation"},
    {Kind::Runtime, "cuda_runtime"},
    {Kind::Driver, "cuda_driver"},
    {Kind::Kernel, "kernel"},
    {Kind::Memcpy, "gpu_memcpy"},
    {Kind::Memset, "gpu_memset"},
    {Kind::Instant, "instant"},
    {Kind::Trace, "Trace"},
    {Kind::Other, "other"},
};
}  // namespace

std::string_view kind_name(Kind k) {
  for (const auto& kn : kKindNames)
    if (kn.kind == k) return kn.name;
  return "other";
}

Kind kind_from_category(std::string_view cat) {
  for (const auto& kn : kKindNames)
    if (kn.name == cat && kn.kind != Kind::Instant && kn.kind != Kind::Other) return kn.kind;
  // Kineto spells a few categories differently across versions.
  if (cat == "Kernel" || cat == "kernel") return Kind::Kernel;
  if (cat == "Memcpy") return Kind::Memcpy;
  if (cat == "Memset") return Kind::Memset;
  if (cat == "cuda_runtime" || cat == "Runtime") return Kind::Runtime;
  if (cat == "cuda_driver" || cat == "Driver") return Kind::Driver;
  return Kind::Other;
}

}  // namespace wb
