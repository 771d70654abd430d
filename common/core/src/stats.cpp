#include "workbook/stats.hpp"

#include <algorithm>
#include <numeric>

namespace wb {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + h, v.end());
  if (v.size() % 2) return v[h];
  const double upper = v[h];
  const double lower = *std::max_element(v.begin(), v.begin() + h);
  return (lower + upper) / 2;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace wb
