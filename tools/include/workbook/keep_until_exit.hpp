// For the trace tools (table, diff, inspect): their big objects (a trace, its model) are left to
// the OS at exit rather than freed one by one (on a 100 MB trace that is a noticeable part of
// the run). Held by a global (volatile: the stores must stay), so leak checkers (the ASan build)
// see them reachable, not lost.
#pragma once

namespace wb {

inline void keep_until_exit(const void* a, const void* b = nullptr) {
  static const void* volatile kept[8] = {};
  for (const void* p : {a, b})
    for (auto& slot : kept)
      if (!slot) {
        slot = p;
        break;
      }
}

}  // namespace wb
