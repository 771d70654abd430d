#include "workbook/schedule.hpp"
#include "workbook/names.hpp"

#include <charconv>
#include <vector>

namespace wb {

namespace {
constexpr EnumNames<ProfilerAction, ProfilerAction::RecordAndSave> kActionNames{"NONE", "WARMUP", "RECORD",
                                                                                "RECORD_AND_SAVE"};
}  // namespace

std::string_view action_name(ProfilerAction a) { return kActionNames.name(a); }

void Schedule::validate() const {
  if (wait < 0) throw std::invalid_argument("schedule: wait must be >= 0");
  if (warmup < 0) throw std::invalid_argument("schedule: warmup must be >= 0");
  if (active <= 0) throw std::invalid_argument("schedule: active must be > 0");
  if (repeat < 0) throw std::invalid_argument("schedule: repeat must be >= 0");
  if (skip_first < 0) throw std::invalid_argument("schedule: skip_first must be >= 0");
}

ProfilerAction Schedule::operator()(int step) const {
  if (step < 0) throw std::invalid_argument("schedule: step must be >= 0");
  if (step < skip_first) return ProfilerAction::None;
  step -= skip_first;
  const int num_steps = wait + warmup + active;
  if (repeat > 0 && step / num_steps >= repeat) return ProfilerAction::None;
  const int mod = step % num_steps;
  if (mod < wait) return ProfilerAction::None;
  if (mod < wait + warmup) return ProfilerAction::Warmup;
  return mod < num_steps - 1 ? ProfilerAction::Record : ProfilerAction::RecordAndSave;
}

int Schedule::total_steps() const {
  if (repeat == 0) return -1;
  return skip_first + (wait + warmup + active) * repeat;
}

Schedule Schedule::parse(std::string_view text) {
  const std::string expected =
      "expected W,WU,A[,R]: wait, warmup and active steps, and optionally repeat "
      "(0 = until the steps run out), e.g. 1,1,3 or 0,0,20,1";
  std::vector<int> v;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string_view part = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    int value = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size())
      throw std::invalid_argument("schedule '" + std::string(text) + "': '" + std::string(part) +
                                  "' is not a whole number; " + expected);
    v.push_back(value);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (v.size() < 3 || v.size() > 4)
    throw std::invalid_argument("schedule '" + std::string(text) + "' has " + std::to_string(v.size()) +
                                " field(s); " + expected);
  Schedule s;
  s.wait = v[0];
  s.warmup = v[1];
  s.active = v[2];
  s.repeat = v.size() == 4 ? v[3] : 1;
  try {
    s.validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("schedule '" + std::string(text) + "': " + (e.what() + 10) + "; " + expected);
  }
  return s;
}

std::string Schedule::str() const {
  std::string s = "wait=" + std::to_string(wait) + " warmup=" + std::to_string(warmup) +
                  " active=" + std::to_string(active) + " repeat=" + std::to_string(repeat);
  if (skip_first) s += " skip_first=" + std::to_string(skip_first);
  return s;
}

Transition transition(ProfilerAction prev, ProfilerAction next) {
  using A = ProfilerAction;
  Transition t;
  switch (prev) {
    case A::None:
      if (next == A::Warmup) t.prepare = true;
      if (next == A::Record || next == A::RecordAndSave) t.prepare = t.start = true;
      break;
    case A::Warmup:
      if (next == A::None) {
        t.warn_incorrect = true;
        t.start = t.stop = true;
        t.start_before_stop = true;
      }
      if (next == A::Record || next == A::RecordAndSave) t.start = true;
      break;
    case A::Record:
      if (next == A::None || next == A::Warmup) {
        t.warn_incorrect = true;
        t.stop = true;
      }
      break;
    case A::RecordAndSave:
      t.stop = t.trace_ready = true;
      if (next == A::Warmup) t.prepare = true;
      if (next == A::Record || next == A::RecordAndSave) t.prepare = t.start = true;
      break;
  }
  return t;
}

Transition transition_on_exit(ProfilerAction prev) {
  using A = ProfilerAction;
  Transition t;
  if (prev == A::Warmup) {
    t.start = t.stop = true;
    t.start_before_stop = true;
  }
  if (prev == A::Record || prev == A::RecordAndSave) t.stop = t.trace_ready = true;
  return t;
}

}  // namespace wb
