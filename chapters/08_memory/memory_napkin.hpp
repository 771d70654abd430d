// Chapter 08's napkin math: the bytes of each tensor from its shape and dtype, printed before the
// report so the trace's memory columns can be read against them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace wb08 {

// The bytes of x, the intermediates, the weights, their gradients and Adam's state for a GeGLU
// MLP of `tokens` x `dim` -> `hidden`, `bytes` per element; `fused`: the fused forward runs too.
// The text, and ReportOptions::napkin's callback that gives it (the device's name is not used).
std::string napkin_text(int64_t tokens, int64_t dim, int64_t hidden, int bytes, bool fused);
std::function<std::string(const std::string&)> napkin(int64_t tokens, int64_t dim, int64_t hidden, int bytes,
                                                      bool fused);

}  // namespace wb08
