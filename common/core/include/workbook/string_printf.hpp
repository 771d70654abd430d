// printf-style formatting into a std::string, for text that code seeing LibTorch prints (it
// does not use fmt: spdlog's bundled fmt stays out of LibTorch translation units).
#pragma once

#include <string>

namespace wb {

std::string string_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace wb
