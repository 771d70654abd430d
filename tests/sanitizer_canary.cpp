// Proof that the sanitizer build is one. scripts/ci_sanitize.sh runs this program with each
// mistake below and expects the sanitizer's report and a failing exit; a build that silently
// lost -fsanitize (a changed preset, a toolchain that ignores the flag) would run them cleanly,
// and then a clean test suite would prove nothing.
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace {
char* volatile g_lost = nullptr;  // volatile: the compiler must keep the store and the loss
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  if (!std::strcmp(what, "heap")) {  // ASan: heap-buffer-overflow
    std::vector<int> v(4);
    volatile int* p = v.data();
    return p[4];
  }
  if (!std::strcmp(what, "ub")) {  // UBSan: signed integer overflow
    volatile int x = std::numeric_limits<int>::max();
    volatile int y = x + 1;  // stored, so the compiler cannot fold the overflow away
    return y == 0 ? 1 : 0;
  }
  if (!std::strcmp(what, "leak")) {  // LeakSanitizer: 64 bytes never freed
    g_lost = new char[64];
    g_lost = nullptr;
    return 0;
  }
  std::fprintf(stderr, "usage: sanitizer_canary heap|ub|leak\n");
  return 2;
}
