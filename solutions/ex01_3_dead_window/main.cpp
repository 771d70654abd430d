// Exercise 01.3 -- find the dead window: a solution.                        (chapter 01_cold_64)
//
// The first recorded step is the one: matmul_add starts well before aten::matmul does (tens of
// us on a CPU or an H200; 1-2 us in the later steps): the first recorded step also pays for the
// profiler getting going and, on a cold process, for one-time setup. With the chapters'
// schedule 1,1,3 that is ProfilerStep#2; a learner's own schedule (--student) moves it. This
// solution reads the answer from its own trace with the lesson fact that measures the gaps, so
// it is right for every learner's schedule.
#include "exercise.hpp"

#include <string>

#include "workbook/lessons.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex01_3_dead_window", "Exercise 01.3: find the dead window"};
  e.defaults().show_lessons = false;  // the lesson report would give the answer away

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;

    run.profile([&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
    // The widest gap between matmul_add's start and its first child's, over the recorded steps.
    const wb::Trace trace = wb::read_trace(run.out() / "trace.json");
    const wb::Fact gaps = wb::compute_fact("dead_window", wb::TraceModel(trace));
    nlohmann::json widest;
    for (const auto& g : gaps.data.value("gaps", nlohmann::json::array()))
      if (widest.is_null() || g.value("gap_us", 0.0) > widest.value("gap_us", 0.0)) widest = g;
    run.answer("dead_window_step", widest.is_null() ? -1 : widest.value("step", -1));
    run.answer("first_op_after_gap",
               widest.is_null() ? std::string() : widest.value("first_child", std::string()));
  });
}
