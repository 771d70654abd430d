// torch.profiler.schedule, in C++, with exactly Python's semantics (torch/profiler/profiler.py):
//
//   steps [0, skip_first)                 -> None
//   then cycles of  wait | warmup | active , `repeat` times (repeat == 0: until steps run out)
//   inside a cycle: wait steps -> None, warmup steps -> Warmup,
//                   active steps -> Record, the last active step -> RecordAndSave
//   skip_first_wait != 0: the first cycle starts without its wait steps
//
// The struct and the text form are the same thing with the same defaults as Python's
// schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
//   wb::Schedule{1, 1, 2}  ==  Schedule::parse("1,1,2")  ==  Schedule::parse("wait=1, warmup=1, active=2")
// and all three cycle until the loop ends, as schedule(wait=1, warmup=1, active=2) does.
//
// Torch-free so it can be tested as a pure state machine.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace wb {

enum class ProfilerAction { None, Warmup, Record, RecordAndSave };
std::string_view action_name(ProfilerAction a);

struct Schedule {
  int wait = 0;
  int warmup = 0;
  int active = 1;
  int repeat = 0;  // 0: repeat until the steps run out (Python's default)
  int skip_first = 0;
  int skip_first_wait = 0;  // != 0: no wait steps before the first cycle

  // Throws std::invalid_argument when a field is out of range (Python asserts the same).
  void validate() const;
  ProfilerAction operator()(int step) const;
  // Steps a loop needs to complete every cycle, or -1 when repeat == 0 (unbounded).
  int total_steps() const;
  // Steps a loop needs before the first cycle's result exists: the first cycle's last step + 1.
  int first_cycle_steps() const;
  // The text form, in either of two spellings (fields separated by commas, spaces around them
  // ignored; missing fields take the struct's defaults, so repeat is 0 as in Python):
  //   positional  "W,WU,A[,R[,S]]"                 wait, warmup, active, repeat, skip_first
  //   keywords    "wait=1, warmup=1, active=3, repeat=2, skip_first=1, skip_first_wait=1"
  //               (Python's argument names, any order; wait, warmup and active are required;
  //               spaces alone may separate them, as str() prints them:
  //               Schedule::parse(s.str()) == s)
  // Throws std::invalid_argument with a message that says what was wrong and what is expected.
  static Schedule parse(std::string_view text);
  std::string str() const;  // "wait=1 warmup=1 active=3 repeat=1": parse() reads it back
  bool operator==(const Schedule& o) const;
};

// What the profiler does on a transition between two actions: torch.profiler.profile's
// action_map. `next` == nullopt stands for "the profiler is exiting" (Python's None key).
struct Transition {
  bool warn_incorrect = false;  // Python warns "Incorrect schedule: X followed by Y"
  bool prepare = false;         // prepareProfiler  (always before enable)
  bool start = false;           // enableProfiler
  bool stop = false;            // synchronize device, then disableProfiler
  bool trace_ready = false;     // a cycle's result is complete
  // Order of operations when several are set: warn, stop, trace_ready, prepare, start;
  // except WARMUP->NONE / WARMUP->exit, which Python does as start then stop.
  bool start_before_stop = false;
};
Transition transition(ProfilerAction prev, ProfilerAction next);
Transition transition_on_exit(ProfilerAction prev);

}  // namespace wb
