#include "workbook/schedule.hpp"
#include "workbook/names.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <utility>
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
  if (skip_first_wait != 0) step += wait;  // Python shifts the first cycle left by its wait
  const int num_steps = wait + warmup + active;
  if (repeat > 0 && step / num_steps >= repeat) return ProfilerAction::None;
  const int mod = step % num_steps;
  if (mod < wait) return ProfilerAction::None;
  if (mod < wait + warmup) return ProfilerAction::Warmup;
  return mod < num_steps - 1 ? ProfilerAction::Record : ProfilerAction::RecordAndSave;
}

int Schedule::total_steps() const {
  if (repeat == 0) return -1;
  return skip_first + (wait + warmup + active) * repeat - (skip_first_wait != 0 ? wait : 0);
}

int Schedule::first_cycle_steps() const {
  return skip_first + (skip_first_wait != 0 ? 0 : wait) + warmup + active;
}

bool Schedule::operator==(const Schedule& o) const {
  return wait == o.wait && warmup == o.warmup && active == o.active && repeat == o.repeat &&
         skip_first == o.skip_first && skip_first_wait == o.skip_first_wait;
}

namespace {
constexpr std::string_view kExpected =
    "expected W,WU,A[,R[,S]] (wait, warmup and active steps, then optionally repeat, 0 = until the "
    "steps run out, and skip_first), e.g. 1,1,3 or 0,0,20,1; or Python's names: "
    "wait=1, warmup=1, active=3[, repeat=0][, skip_first=0][, skip_first_wait=0]";

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

[[noreturn]] void bad(std::string_view text, const std::string& what) {
  throw std::invalid_argument("schedule '" + std::string(text) + "': " + what + "; " +
                              std::string(kExpected));
}

int whole_number(std::string_view text, std::string_view part) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (part.empty() || ec != std::errc() || ptr != part.data() + part.size())
    bad(text, "'" + std::string(part) + "' is not a whole number");
  return value;
}

// The fields between the commas, trimmed; an empty one is an error (a typo such as "1,,3").
// Name=value fields may also be separated by spaces alone, as str() prints them
// ("wait=1 warmup=1 active=3 repeat=1"), so that a printed schedule parses back.
std::vector<std::string_view> fields_of(std::string_view text) {
  std::vector<std::string_view> out;
  if (text.find(',') == std::string_view::npos && text.find('=') != std::string_view::npos) {
    // Spaces around '=' belong to the field ("wait = 1"): split only where a value ends.
    size_t pos = text.find_first_not_of(" \t");
    while (pos != std::string_view::npos) {
      size_t eq = text.find('=', pos);
      if (eq == std::string_view::npos)
        bad(text, "'" + std::string(trim(text.substr(pos))) + "' has no value");
      size_t value = text.find_first_not_of(" \t", eq + 1);
      size_t end = value == std::string_view::npos ? text.size() : text.find_first_of(" \t", value);
      if (end == std::string_view::npos) end = text.size();
      out.push_back(trim(text.substr(pos, end - pos)));
      pos = text.find_first_not_of(" \t", end);
    }
    return out;
  }
  for (size_t pos = 0;;) {
    const size_t comma = text.find(',', pos);
    const std::string_view field =
        trim(text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos));
    if (field.empty()) bad(text, "an empty field");
    out.push_back(field);
    if (comma == std::string_view::npos) return out;
    pos = comma + 1;
  }
}

// "wait=1, warmup=1, active=3, ...": Python's keyword arguments.
Schedule parse_keywords(std::string_view text, const std::vector<std::string_view>& fields) {
  static constexpr std::pair<std::string_view, int Schedule::*> kKeys[] = {
      {"wait", &Schedule::wait},
      {"warmup", &Schedule::warmup},
      {"active", &Schedule::active},
      {"repeat", &Schedule::repeat},
      {"skip_first", &Schedule::skip_first},
      {"skip_first_wait", &Schedule::skip_first_wait}};
  Schedule s;
  std::vector<std::string_view> seen;
  for (std::string_view f : fields) {
    const size_t eq = f.find('=');
    if (eq == std::string_view::npos)
      bad(text, "'" + std::string(f) + "' mixes a bare number with name=value fields");
    const std::string_view key = trim(f.substr(0, eq));
    auto it = std::find_if(std::begin(kKeys), std::end(kKeys), [&](const auto& k) { return k.first == key; });
    if (it == std::end(kKeys)) bad(text, "unknown field '" + std::string(key) + "'");
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      bad(text, "'" + std::string(key) + "' given twice");
    seen.push_back(key);
    s.*(it->second) = whole_number(text, trim(f.substr(eq + 1)));
  }
  for (std::string_view required : {"wait", "warmup", "active"})
    if (std::find(seen.begin(), seen.end(), required) == seen.end())
      bad(text, "'" + std::string(required) + "' is missing (Python requires it too)");
  return s;
}
}  // namespace

Schedule Schedule::parse(std::string_view text) {
  const std::vector<std::string_view> fields = fields_of(text);
  Schedule s;
  if (fields.front().find('=') != std::string_view::npos) {
    s = parse_keywords(text, fields);
  } else {
    if (fields.size() < 3 || fields.size() > 5)
      bad(text, "has " + std::to_string(fields.size()) + " field(s)");
    int Schedule::*const order[] = {&Schedule::wait, &Schedule::warmup, &Schedule::active, &Schedule::repeat,
                                    &Schedule::skip_first};
    for (size_t i = 0; i < fields.size(); ++i) s.*order[i] = whole_number(text, fields[i]);
  }
  try {
    s.validate();
  } catch (const std::invalid_argument& e) {
    bad(text, e.what() + std::string_view("schedule: ").size());
  }
  return s;
}

std::string Schedule::str() const {
  std::string s = "wait=" + std::to_string(wait) + " warmup=" + std::to_string(warmup) +
                  " active=" + std::to_string(active) + " repeat=" + std::to_string(repeat);
  if (skip_first) s += " skip_first=" + std::to_string(skip_first);
  if (skip_first_wait) s += " skip_first_wait=" + std::to_string(skip_first_wait);
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
