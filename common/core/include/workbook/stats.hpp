// Small statistics over samples, defined once for the whole workbook.
#pragma once

#include <vector>

namespace wb {

// The median: the middle sample of the sorted values, or for an even count the mean of the two
// middle ones (as numpy.median and Python's statistics.median). 0 for no samples.
double median(std::vector<double> v);
// The arithmetic mean; 0 for no samples.
double mean(const std::vector<double>& v);

}  // namespace wb
