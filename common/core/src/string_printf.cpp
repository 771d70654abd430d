#include "workbook/string_printf.hpp"

#include <cstdarg>
#include <cstdio>

namespace wb {

std::string string_printf(const char* format, ...) {
  va_list a, b;
  va_start(a, format);
  va_copy(b, a);
  const int n = std::vsnprintf(nullptr, 0, format, a);
  va_end(a);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, b);
  va_end(b);
  return out;
}

}  // namespace wb
