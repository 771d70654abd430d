// Napkin math: the back-of-the-envelope numbers every chapter prints before its measurements:
// FLOPs, bytes, arithmetic intensity and the time the device's peak rates would allow.
#pragma once

#include <string>

#include "workbook/lessons.hpp"

namespace wb {

std::string napkin_math(const Problem& p, const std::string& device_name);

// Part 2. nn.Linear(k, n) on m rows (Problem m, k, n), with or without the bias.
std::string napkin_linear(const Problem& p, bool bias, const std::string& device_name);
// The GeGLU MLP down(gelu_tanh(gate(x)) * up(x)): m tokens, dim k, hidden n. Three GEMMs of
// 2*m*k*n FLOP each, and the pointwise stage in bytes: eager gelu + mul vs one fused kernel.
std::string napkin_geglu(const Problem& p, const std::string& device_name);

}  // namespace wb
