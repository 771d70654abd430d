// The lesson facts' registry (see lessons.hpp and fact_view.hpp). Each fact is one function
// that measures it and says where the numbers came from, and one entry beside it in its
// family's list (facts_*.cpp): its id, title, why a CPU-only trace has nothing to measure, what
// its default pattern's verdict means, its teaching order, the default pattern and its
// docs/cheatsheet.md rows. The chapters' patterns are in chapters/NN_name/lessons.json.
// ViewFact::fn (fact_view.cpp) does the rest, the same for every fact: start, the CPU-only
// check, the measurement, then judge or say why not.
#include "workbook/lessons.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "fact_view.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

// ---- registry -----------------------------------------------------------------------------
namespace lessons_detail {
// Every family's facts, in teaching order (ViewFact::order). compute_fact(id, ...) computes
// one; inspect and check_lessons build one View and hand it to every fact (it sorts all device
// work: worth doing once on a 100 MB trace).
const std::vector<ViewFact>& view_facts() {
  static const std::vector<ViewFact> kFacts = [] {
    std::vector<ViewFact> facts;
    using Family = const std::vector<ViewFact>& (*)();
    for (Family family : {overhead_facts, steps_facts, launches_facts, kernels_facts, throughput_facts,
                          linear_mlp_facts, fusion_facts, memory_facts})
      for (const auto& f : family()) facts.push_back(f);
    std::stable_sort(facts.begin(), facts.end(),
                     [](const ViewFact& a, const ViewFact& b) { return a.order < b.order; });
    for (size_t i = 0; i < facts.size(); ++i)
      for (size_t j = i + 1; j < facts.size(); ++j)
        if (facts[i].order == facts[j].order || facts[i].id == facts[j].id)
          throw std::logic_error(
              fmt::format("lesson facts '{}' and '{}' share an id or a place in the teaching order",
                          facts[i].id, facts[j].id));
    return facts;
  }();
  return kFacts;
}

Fact compute_fact(std::string_view id, const View& v, const FactOptions& o) {
  for (const auto& fi : view_facts())
    if (fi.id == id) return fi.fn(v, o);
  std::string ids;
  for (const auto& fi : view_facts()) ids += (ids.empty() ? "" : ", ") + std::string(fi.id);
  throw std::invalid_argument(fmt::format("unknown lesson fact '{}' (known: {})", id, ids));
}
}  // namespace lessons_detail

const std::vector<FactInfo>& all_facts() {
  static const std::vector<FactInfo> kFacts = [] {
    std::vector<FactInfo> out;
    for (const auto& fi : view_facts()) out.push_back({fi.id, fi.title});
    return out;
  }();
  return kFacts;
}

std::string cheatsheet_markdown() {
  std::string out =
      "| pattern | in the table | in the trace | chapter | inspect rule |\n"
      "| --- | --- | --- | --- | --- |";
  for (const auto& fi : view_facts())
    for (const auto& r : fi.cheatsheet) {
      std::string rules = fmt::format("`rule:{}`", fi.id);
      for (const auto& also : r.also) rules += fmt::format(" `rule:{}`", also);
      out +=
          fmt::format("\n| {} | {} | {} | {} | {} |", r.pattern, r.in_table, r.in_trace, r.chapters, rules);
    }
  return out;
}

Fact compute_fact(std::string_view id, const TraceModel& m, const FactOptions& o) {
  return lessons_detail::compute_fact(id, View(m), o);
}

}  // namespace wb
