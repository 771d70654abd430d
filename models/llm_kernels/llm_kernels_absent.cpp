// The build without a CUDA compiler: llm_kernels.hpp's functions exist and say why they cannot
// run, so decode_kernels.cpp runs the ATen equivalents.
#include "llm_kernels.hpp"

namespace llmk {

namespace {
const char* kWhy =
    "the decode kernels were not compiled (no CUDA compiler or no CUDA LibTorch in this build)";
}

bool compiled() { return false; }
GemvConfig gemv_default(int64_t, int64_t) { return {}; }
std::string gemv(const void*, const void*, void*, int64_t, int64_t, const void*, float, Epilogue, const void*,
                 void*, const GemvConfig&) {
  return kWhy;
}
std::string rope_kv_write(const void*, const void*, const void*, const int64_t*, void*, void*, void*, int,
                          int, int, int64_t, void*) {
  return kWhy;
}
int64_t attention_workspace_bytes(int, int, int, int64_t) { return 0; }
std::string attention(const void*, const void*, const void*, const int64_t*, void*, int, int, int, int64_t,
                      float, void*, void*) {
  return kWhy;
}
std::string embed(const void*, const int64_t*, void*, int64_t, void*) { return kWhy; }
std::string argmax_next(const void*, int64_t, int64_t*, int64_t*, void*) { return kWhy; }

}  // namespace llmk
