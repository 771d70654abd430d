#!/usr/bin/env python3
"""What Python's torch.profiler does with a schedule, recorded for tests/test_schedule.cpp and
tests/test_profiler.cpp: for each schedule in CASES,
  * "actions": torch.profiler.schedule(**kwargs)(step) for steps 0..STEPS-1, one letter each
    (N=NONE W=WARMUP R=RECORD S=RECORD_AND_SAVE);
  * "cycles": a real torch.profiler.profile run of LOOP steps on the CPU under that schedule:
    for each on_trace_ready call, the ProfilerStep numbers its trace holds.
"text" is the same schedule in the workbook's text form (Schedule::parse), as a learner would
type it. Never edit schedules.json by hand: rerun this script.

  ~/.cache/libtorch-workbook/torch-2.11.0/bin/python tests/data/python/make_schedule_fixture.py
"""
import json
import pathlib
import warnings

import torch
from torch.profiler import ProfilerActivity, profile, schedule

STEPS = 40  # actions per schedule
LOOP = 14   # steps of the real profiled loop

# (kwargs as Python takes them, the workbook's text for the same schedule)
CASES = [
    (dict(wait=1, warmup=1, active=3, repeat=1), "1,1,3,1"),          # the chapters' default
    (dict(wait=1, warmup=1, active=2), "1,1,2"),                      # repeat=0: cycles to the end
    (dict(wait=1, warmup=1, active=3), "1, 1, 3"),                    # spaces, as people type
    (dict(wait=0, warmup=0, active=3, repeat=1), "0,0,3,1"),
    (dict(wait=0, warmup=0, active=20, repeat=1), "0,0,20,1"),
    (dict(wait=1, warmup=1, active=2, repeat=2), "1,1,2,2"),
    (dict(wait=1, warmup=0, active=2), "1,0,2"),
    (dict(wait=2, warmup=1, active=1, repeat=3, skip_first=1), "2,1,1,3,1"),
    (dict(wait=0, warmup=1, active=2, skip_first=3), "0,1,2,0,3"),
    (dict(wait=3, warmup=1, active=2, repeat=2, skip_first=2, skip_first_wait=1),
     "wait=3, warmup=1, active=2, repeat=2, skip_first=2, skip_first_wait=1"),
    (dict(wait=2, warmup=2, active=1, skip_first_wait=1), "skip_first_wait=1,active=1,warmup=2,wait=2"),
    (dict(wait=5, warmup=1, active=3, repeat=1), "5,1,3,1"),          # needs 9 steps of the 14
    (dict(wait=12, warmup=1, active=3, repeat=1), "wait=12,warmup=1,active=3,repeat=1"),  # mid-cycle
    (dict(wait=14, warmup=1, active=3, repeat=1), "14,1,3,1"),        # ends in warmup: no result
    (dict(wait=20, warmup=1, active=3), "20,1,3"),                    # ends in wait: no result
]
LETTER = {"NONE": "N", "WARMUP": "W", "RECORD": "R", "RECORD_AND_SAVE": "S"}


def cycles(kwargs):
    """The ProfilerStep numbers of each trace that on_trace_ready received."""
    out = []

    def ready(prof):
        # FunctionEvent.name reads "ProfilerStep*" for every step; trace_name keeps the number.
        steps = sorted({int(e.trace_name.split("#")[1]) for e in prof.events()
                        if e.trace_name.startswith("ProfilerStep#")})
        out.append(steps)

    x = torch.ones(4, 4)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(**kwargs), on_trace_ready=ready) as p:
        for _ in range(LOOP):
            x = x + 1
            p.step()
    return out


def main():
    warnings.simplefilter("ignore")  # warmup=0 warns; the recording is what matters here
    rows = []
    for kwargs, text in CASES:
        fn = schedule(**kwargs)
        actions = "".join(LETTER[fn(i).name] for i in range(STEPS))
        rows.append({"kwargs": kwargs, "text": text, "actions": actions, "loop_steps": LOOP,
                     "cycles": cycles(kwargs)})
    doc = {"torch": torch.__version__, "steps": STEPS, "schedules": rows}
    path = pathlib.Path(__file__).parent / "schedules.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {path}: {len(rows)} schedules")


if __name__ == "__main__":
    main()
