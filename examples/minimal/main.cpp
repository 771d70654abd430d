// The smallest program that profiles with wb::Profiler (torch.profiler.profile in C++):
// a loop of matmul + add under a schedule, then the summary table and the Chrome trace.
//   example_minimal [OUT_DIR]   ->  OUT_DIR/table.txt, OUT_DIR/trace.json (default: .)
// docs/profiler-in-cpp.md shows it whole and reads it next to Python's torch.profiler and the raw
// LibTorch calls; tests/test_examples.cpp builds the page's copy against the installed package.
// [snippet:program]
#include <torch/types.h>
#include <workbook/profiler_all.hpp>  // wb::Profiler, wb::key_averages_table, wb::write_file_atomic...

#include <filesystem>
#include <iostream>

int main(int argc, char** argv) {
  const std::filesystem::path out = argc > 1 ? argv[1] : ".";
  const auto dev = wb::cuda_available() ? torch::kCUDA : torch::kCPU;
  auto x = torch::randn({64, 64}, dev), w = torch::randn({64, 64}, dev), b = torch::randn({64}, dev);
  torch::Tensor y;

  // [snippet:loop]
  wb::ProfilerOptions opts;
  opts.schedule = wb::Schedule::parse("1,1,3");  // schedule(wait=1, warmup=1, active=3)
  wb::Profiler prof(opts);
  prof.start();
  for (int i = 0; i < 5; ++i) {
    {
      wb::Annotation a("matmul_add");  // with record_function("matmul_add"):
      y = torch::add(torch::matmul(x, w), b);
    }
    prof.step();
  }
  prof.stop();
  // [/snippet:loop]

  // [snippet:save]
  wb::CycleResult& result = prof.results().back();  // one per cycle; throws if none completed
  result.save_chrome_trace(out / "trace.json");     // creates `out`; open it at https://ui.perfetto.dev
  wb::TableOptions table_opts;
  table_opts.sort_by = "cpu_time_total";
  table_opts.row_limit = 10;
  const std::string table = wb::key_averages_table(result.trace(), table_opts);
  wb::write_file_atomic(out / "table.txt", table);
  std::cout << table;
  // [/snippet:save]
}
// [/snippet:program]
