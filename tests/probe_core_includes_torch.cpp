// A probe for the include rule, built only by two ctest cases (tests/CMakeLists.txt): a target
// that links the torch-free wb_core and includes a LibTorch header must fail to compile, since
// wb_core's usage requirements carry no torch include directory. The same file linked to wb_torch
// is the control: it compiles, so the failure is the missing header path and nothing else.
#include <torch/types.h>

int main() { return torch::kFloat == torch::kFloat ? 0 : 1; }
