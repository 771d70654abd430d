#!/usr/bin/env bash
# The exercises, live on a GPU machine (the H200 the lead runs through `device`): builds the
# exercise programs and their checker, runs test_exercises with its [gpu] cases (every stub
# fails and every solution passes, CPU and GPU), checks every solution on the GPU as a learner
# (--student h200-check), and copies everything the runs wrote, with provenance, to $OUT as one tar.
#
#   scripts/gpu/exercises.sh            # on the GPU machine, from the repository root; OUT=... set
#   SKIP_CTEST=1 scripts/gpu/exercises.sh   # after record_h200.sh test (same build; its ctest
#                                           # already ran test_exercises)
#
# Output: $OUT/exercises-gpu.tar.gz holding PROVENANCE (commit, date, nvidia-smi), ctest.log,
# student.txt and runs/ (each check's program.log, trace.json, run.json, answer.json). Exit
# code: 0 when the tests pass and every solution passes as a learner.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:?set OUT to the folder that comes back}"
work="$out/exercises-gpu"
mkdir -p "$work/runs"
rc=0
{
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host:   $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "no nvidia-smi"
} > "$work/PROVENANCE"

B="${BUILD_DIR:-build}"
export BUILD_DIR="$B"
./workbook build --target exercises exercise test_exercises > "$work/build.log" 2>&1 || { echo "build failed" >&2; tail -40 "$work/build.log"; rc=1; }

if [ "$rc" -eq 0 ]; then
  if [ "${SKIP_CTEST:-0}" = 1 ]; then
    echo "test_exercises: run by the suite's ctest in the same build (SKIP_CTEST=1)" > "$work/ctest.log"
  else
    ctest --test-dir "$B" -R 'exercise' --output-on-failure > "$work/ctest.log" 2>&1 || rc=1
  fi
  # As a learner: every solution must pass its own variation on the GPU too.
  : > "$work/student.txt"
  for id in $("$B/bin/exercise" list --ids); do
    "$B/bin/exercise" --state "$work/runs/student" check "$id" --solution --device cuda --student h200-check \
      >> "$work/student.txt" 2>&1
    code=$?
    echo "== $id solution --student h200-check: exit $code" >> "$work/student.txt"
    [ "$code" -eq 0 ] || rc=1
  done
fi
echo "exit: $rc" >> "$work/PROVENANCE"
tar -C "$out" -czf "$out/exercises-gpu.tar.gz" exercises-gpu && rm -rf "$work"
echo "exercises on the GPU: exit $rc; outputs in $out/exercises-gpu.tar.gz"
exit "$rc"
