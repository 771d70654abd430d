// The schedule state machine against sequences produced by Python's own
// torch.profiler.schedule (torch 2.11.0; N=NONE W=WARMUP R=RECORD S=RECORD_AND_SAVE).
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "workbook/schedule.hpp"

using wb::ProfilerAction;
using wb::Schedule;

namespace {
char letter(ProfilerAction a) {
  switch (a) {
    case ProfilerAction::None: return 'N';
    case ProfilerAction::Warmup: return 'W';
    case ProfilerAction::Record: return 'R';
    case ProfilerAction::RecordAndSave: return 'S';
  }
  return '?';
}
std::string run(const Schedule& s, int n = 24) {
  std::string out;
  for (int i = 0; i < n; ++i) out += letter(s(i));
  return out;
}
}  // namespace

TEST_CASE("schedule matches torch.profiler.schedule step by step", "[profiler][schedule][common][cpu]") {
  struct Row {
    Schedule s;
    const char* python;
  };
  auto [s, python] = GENERATE(values<Row>({
      {{1, 1, 3, 1, 0}, "NWRRSNNNNNNNNNNNNNNNNNNN"},   // the workbook's default
      {{0, 0, 3, 1, 0}, "RRSNNNNNNNNNNNNNNNNNNNNN"},   // no wait, no warmup
      {{0, 0, 20, 1, 0}, "RRRRRRRRRRRRRRRRRRRSNNNN"},  // the long window of chapters 02/04
      {{1, 1, 2, 2, 0}, "NWRSNWRSNNNNNNNNNNNNNNNN"},   // repeat > 1
      {{1, 0, 2, 0, 0}, "NRSNRSNRSNRSNRSNRSNRSNRS"},   // repeat == 0: until steps run out
      {{2, 1, 1, 3, 1}, "NNNWSNNWSNNWSNNNNNNNNNNN"},   // skip_first
  }));
  CAPTURE(s.str());
  CHECK(run(s) == python);
}

TEST_CASE("a wrong schedule would be caught", "[profiler][schedule][common][cpu]") {
  // The comparison above is not vacuous: an off-by-one schedule yields a different sequence.
  CHECK(run(Schedule{1, 1, 3, 1, 0}) != run(Schedule{1, 1, 2, 1, 0}));
  CHECK(run(Schedule{1, 0, 2, 0, 0}) != run(Schedule{1, 0, 2, 1, 0}));
}

TEST_CASE("schedule parsing: W,WU,A[,R[,S]] and Python's names", "[profiler][schedule][common][cpu]") {
  // As Python: repeat defaults to 0 (cycle until the loop ends), so the text form and the
  // aggregate agree: Schedule{1, 1, 3} == parse("1,1,3") (parse once gave repeat=1).
  auto s = Schedule::parse("1,1,3");
  CHECK((s.wait == 1 && s.warmup == 1 && s.active == 3 && s.repeat == 0 && s.skip_first == 0));
  CHECK(s == Schedule{1, 1, 3});
  CHECK(s.total_steps() == -1);
  CHECK(s.first_cycle_steps() == 5);
  CHECK(Schedule::parse("1,1,3,1").total_steps() == 5);
  auto r = Schedule::parse("0,0,20,0");
  CHECK(r.repeat == 0);
  CHECK(r.total_steps() == -1);
  CHECK(Schedule::parse("1,1,2,2").total_steps() == 8);
  // Spaces around the fields, skip_first as the fifth field, Python's keyword form.
  CHECK(Schedule::parse(" 1, 1, 3 ") == Schedule{1, 1, 3});
  CHECK(Schedule::parse("2,1,1,3,1") == Schedule{2, 1, 1, 3, 1});
  CHECK(Schedule::parse("wait=1, warmup=1, active=2, repeat=2, skip_first=3") == Schedule{1, 1, 2, 2, 3});
  CHECK(Schedule::parse("active=2,wait=3,warmup=1,skip_first_wait=1") == Schedule{3, 1, 2, 0, 0, 1});
  CHECK(Schedule::parse("wait=3,warmup=1,active=2,repeat=2,skip_first_wait=1").total_steps() == 9);

  for (const char* bad :
       {"", "1", "1,1", "1,1,0", "-1,1,3", "1,1,3,1,1,1", "a,b,c", "1,,3", "1,1,3,", "1.5,1,3", "1 1 3",
        "wait=1,warmup=1", "wait=1,warmup=1,active=2,wait=2", "wait=1,warmup=1,active=2,every=3",
        "1,warmup=1,active=2", "wait=x,warmup=1,active=1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(Schedule::parse(bad), std::invalid_argument);
  }
  try {
    Schedule::parse("1,1,0");
    FAIL("expected an error");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("active must be > 0") != std::string::npos);
  }
}

TEST_CASE("a schedule's printed form parses back", "[profiler][schedule][common][cpu]") {
  for (const Schedule& s : {Schedule{1, 1, 3, 1}, Schedule{0, 0, 1}, Schedule{2, 1, 2, 3, 4},
                            Schedule{3, 1, 2, 0, 0, 1}, Schedule{1, 1, 3, 1, 2, 1}}) {
    CAPTURE(s.str());
    CHECK(Schedule::parse(s.str()) == s);
  }
  CHECK(Schedule::parse("wait=1 warmup=1 active=3 repeat=1") == Schedule{1, 1, 3, 1});
  CHECK(Schedule::parse("wait = 1  warmup=1 active= 3") == Schedule{1, 1, 3});
  // Still an error: a bare number among them, a field given twice, no value.
  for (const char* bad : {"wait=1 warmup=1 3", "wait=1 wait=1 active=1", "wait=1 warmup=1 active="}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(Schedule::parse(bad), std::invalid_argument);
  }
}

namespace {
nlohmann::json python_schedules() {
  std::ifstream in(std::string(WORKBOOK_ROOT) + "/tests/data/python/schedules.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}
Schedule from_kwargs(const nlohmann::json& k) {
  return Schedule{k.at("wait").get<int>(), k.at("warmup").get<int>(), k.at("active").get<int>(),
                  k.value("repeat", 0),    k.value("skip_first", 0),  k.value("skip_first_wait", 0)};
}
}  // namespace

TEST_CASE("schedules agree with Python's torch.profiler.schedule action by action (recorded)",
          "[profiler][schedule][common][cpu]") {
  // tests/data/python/schedules.json: torch 2.11's own schedule() on each case, and the same
  // schedule in our text form. The struct (Python's keyword arguments) and the text must give
  // the same schedule, and both Python's actions, step by step.
  const nlohmann::json doc = python_schedules();
  const int steps = doc.at("steps").get<int>();
  REQUIRE(doc.at("schedules").size() >= 10);
  for (const auto& row : doc.at("schedules")) {
    const std::string text = row.at("text").get<std::string>();
    CAPTURE(text, row.at("kwargs").dump());
    const Schedule from_struct = from_kwargs(row.at("kwargs"));
    const Schedule from_text = Schedule::parse(text);
    CHECK(from_text == from_struct);
    CHECK(run(from_struct, steps) == row.at("actions").get<std::string>());
    CHECK(run(from_text, steps) == row.at("actions").get<std::string>());
  }
}

TEST_CASE("transitions follow torch.profiler.profile's action map", "[profiler][schedule][common][cpu]") {
  using A = ProfilerAction;
  // Prepare always comes with (and before) start when entering a recording phase from NONE,
  // even when warmup == 0: enabling without preparing segfaults in LibTorch.
  auto t = wb::transition(A::None, A::Record);
  CHECK((t.prepare && t.start && !t.stop));
  t = wb::transition(A::None, A::Warmup);
  CHECK((t.prepare && !t.start));
  t = wb::transition(A::Warmup, A::Record);
  CHECK((!t.prepare && t.start));
  t = wb::transition(A::RecordAndSave, A::Record);  // back-to-back cycles
  CHECK((t.stop && t.trace_ready && t.prepare && t.start));
  t = wb::transition(A::RecordAndSave, A::None);
  CHECK((t.stop && t.trace_ready && !t.start));
  t = wb::transition(A::Record, A::None);  // Python stops without a result here
  CHECK((t.warn_incorrect && t.stop && !t.trace_ready));
  t = wb::transition(A::Record, A::Record);
  CHECK((!t.prepare && !t.start && !t.stop));
  auto e = wb::transition_on_exit(A::Record);  // loop ended mid-cycle: still saved
  CHECK((e.stop && e.trace_ready));
  e = wb::transition_on_exit(A::Warmup);
  CHECK((e.start && e.stop && !e.trace_ready));
  e = wb::transition_on_exit(A::None);
  CHECK((!e.start && !e.stop));
}
