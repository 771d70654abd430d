// Run by the build (target check_data, common/lessons/CMakeLists.txt): the data files compiled
// into the libraries must read, so a typo in a chapter's lessons.json or
// common/core/data/device_peaks.json stops the build with an error naming the entry and field.
#include <cstdio>

#include "workbook/across.hpp"
#include "workbook/lessons.hpp"
#include "workbook/peaks.hpp"

int main() {
  const size_t specs = wb::lesson_specs().size();  // a broken file: "error: ...", exit 2
  (void)wb::compute_fact("overhead_bound", wb::TraceModel(wb::Trace{}));  // parses every default pattern
  (void)wb::find_across_spec("");  // parses every chapter's lessons across variants
  const size_t peaks = wb::known_peaks().size();
  std::printf("check_data: %zu lesson specs, %zu device peaks\n", specs, peaks);
  return 0;
}
