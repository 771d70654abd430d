// diff: two Kineto traces (ours or Python's, .json or .json.gz) side by side, step by step:
// the ops, kernels and launch calls added, removed or changed, the CPU and GPU time per step,
// and the kernels whose name changed (same name = same GPU work; a new name is new work).
//
//   diff A B                 e.g. chapter 05: diff out/05_compiled_addmm/{eager,addmm}/trace.json
//   diff A B --format json
//   diff A B --all           also the names that did not change
//
// Exit codes: 0 no change, 3 changes found (like diff(1)'s 1, kept apart from errors),
// 1 unreadable trace or one with no events, 2 bad flags.
#include <CLI/CLI.hpp>

#include <future>
#include <iostream>
#include <memory>
#include <utility>
#include <string>

#include "workbook/cli.hpp"
#include "workbook/keep_until_exit.hpp"
#include "workbook/trace_diff.hpp"
#include "workbook/trace_reader.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Compare two Kineto traces step by step: ops, kernels, launches, CPU and GPU time."};
  app.footer(
      "Exit codes: 0 no change, 3 changes found (like diff(1)'s 1, kept apart from errors), "
      "1 unreadable trace or a trace with no events, 2 bad flags.");
  std::string a_path, b_path, format = "text";
  bool all = false;
  app.add_option("a", a_path, "the first trace (before)")->required();
  app.add_option("b", b_path, "the second trace (after)")->required();
  app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--all", all, "also list the names whose count did not change");
  if (auto rc = wb::parse_flags(app, argc, argv)) return *rc;
  try {
    auto load = [](const std::string& path) {
      auto t = std::make_unique<wb::Trace>(wb::read_trace_with_events(path));
      auto m = std::make_unique<wb::TraceModel>(*t);
      return std::make_pair(std::move(t), std::move(m));
    };
    // The two traces are read and modelled at the same time, one per core.
    auto read_b = std::async(std::launch::async, [&] { return load(b_path); });
    auto a = load(a_path);
    auto b = read_b.get();  // rethrows B's TraceError here
    const wb::TraceDiff d = wb::diff_traces(*a.second, *b.second);
    std::cout << wb::render_diff(d, format == "json" ? wb::Format::Json : wb::Format::Text, all);
    std::cout.flush();
    // The process ends here: leave the two traces to the OS instead of freeing ~500k events
    // one by one (tens of ms on a 100 MB trace).
    for (auto* loaded : {&a, &b}) wb::keep_until_exit(loaded->first.release(), loaded->second.release());
    return d.changes() == 0 ? 0 : 3;
  } catch (const wb::TraceError& e) {
    std::cerr << "diff: cannot read trace: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "diff: " << e.what() << "\n";
  }
  return 1;
}
