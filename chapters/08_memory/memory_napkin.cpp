#include "memory_napkin.hpp"

#include <cstdio>

namespace wb08 {

std::string napkin_text(int64_t tokens, int64_t dim, int64_t hidden, int bytes, bool fused) {
  const double inter = double(tokens) * hidden * bytes, act = double(tokens) * dim * bytes;
  const double weight = double(dim) * hidden * bytes, params = 3 * weight;
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "Napkin math (bytes = elements x %d):\n"
                "  x, target, y      [%lld, %lld]   %.2f MB each\n"
                "  one intermediate  [%lld, %lld]  %.2f MB  (g, u, gelu(g), h: 4 per forward = %.2f MB)\n"
                "  weights           3 x [%lld, %lld]  %.2f MB  (their gradients: the same again)\n"
                "  Adam's state      exp_avg + exp_avg_sq = 2 x the weights = %.2f MB\n"
                "  held forward -> backward: g, u, gelu(g), h + y = %.2f MB\n",
                bytes, (long long)tokens, (long long)dim, act / 1e6, (long long)tokens, (long long)hidden,
                inter / 1e6, 4 * inter / 1e6, (long long)hidden, (long long)dim, params / 1e6,
                2 * params / 1e6, (4 * inter + act) / 1e6);
  std::string s = buf;
  if (fused) {
    std::snprintf(buf, sizeof buf, "  fused_fwd: gelu(g) never exists: one intermediate (%.2f MB) fewer\n",
                  inter / 1e6);
    s += buf;
  }
  return s;
}

std::function<std::string(const std::string&)> napkin(int64_t tokens, int64_t dim, int64_t hidden, int bytes,
                                                      bool fused) {
  return [=](const std::string&) { return napkin_text(tokens, dim, hidden, bytes, fused); };
}

}  // namespace wb08
