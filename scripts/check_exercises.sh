#!/usr/bin/env bash
# Checks every exercise twice -- the untouched stub (must fail: "not yet") and the reference
# solution (must pass) -- and prints one summary table. This is the proof that the checkers are
# honest; run it on a GPU machine to cover the GPU-only exercises and the GPU parts of the others
# (the H200 results of the same stub/solution checks, from the test suite, are in docs/exercises-h200.txt).
#
#   scripts/check_exercises.sh [BUILD_DIR] [--device auto|cpu|cuda] [--keep DIR]
#
# BUILD_DIR defaults to build; build first: cmake --build BUILD_DIR --target exercises.
# The runs go to a temporary folder (or --keep DIR, to look at them afterwards); the learners'
# progress (out/exercises/status.json) is never touched.
# Exit code: 0 when every stub fails and every solution passes (or, without a GPU, the GPU-only
# exercises report "needs a GPU" for both), 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build device=auto keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device="${2:?--device needs auto, cpu or cuda}"; shift 2 ;;
    --keep) keep="${2:?--keep needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check_exercises: unknown flag $1" >&2; exit 2 ;;
    *) build="$1"; shift ;;
  esac
done
tool="$build/bin/exercise"
[ -x "$tool" ] || { echo "check_exercises: $tool is not built (cmake --build $build --target exercises)" >&2; exit 2; }
if [ -n "$keep" ]; then state="$keep"; mkdir -p "$state"; else state=$(mktemp -d); trap 'rm -rf "$state"' EXIT; fi

verdict() {  # exit code of `exercise check` -> a word
  case "$1" in 0) echo pass ;; 1) echo fail ;; 3) echo error ;; 4) echo needs-gpu ;; *) echo "rc=$1" ;; esac
}

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
echo "# exercises: stubs must fail, solutions must pass"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  GPU: ${gpu:-none}  --device $device"
echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
printf '%-8s %-6s %-7s %-10s %-10s %-8s %s\n' ID GPU? RAN_ON STUB SOLUTION RESULT "SOLUTION'S SUMMARY"
bad=0
for id in $("$tool" list --ids); do
  needs=$("$tool" list | awk -v id="$id" '$1 == id { print ($3 == "needs") ? "yes" : "no" }')
  set +e
  "$tool" --state "$state" check "$id" --device "$device" --no-record --no-hint >"$state/$id.stub.txt" 2>&1
  s=$?
  "$tool" --state "$state" check "$id" --solution --device "$device" --no-record --no-hint >"$state/$id.solution.txt" 2>&1
  p=$?
  set -e
  stub=$(verdict $s) sol=$(verdict $p)
  if [ "$s" = 1 ] && [ "$p" = 0 ]; then
    result=OK
  elif [ "$s" = 4 ] && [ "$p" = 4 ]; then
    result=skipped
  else
    result=WRONG; bad=1
  fi
  # The one line that says how the solution's run went (e.g. "PASS -- 2 of 2 checks hold.").
  evidence=$(grep -E '^(PASS|NOT YET|NEEDS A GPU|COULD NOT CHECK)' "$state/$id.solution.txt" | head -1 | cut -c1-70)
  ran_on=$(sed -n 's/^    on the \([A-Z]*\),.*/\1/p' "$state/$id.solution.txt" | head -1)
  printf '%-8s %-6s %-7s %-10s %-10s %-8s %s\n' "$id" "$needs" "${ran_on:--}" "$stub" "$sol" "$result" "$evidence"
done
echo
if [ "$bad" = 0 ]; then
  echo "All checkers honest: every stub that could be checked fails, every solution passes."
else
  echo "Some checker is not honest (WRONG above). The full outputs: $state/<id>.{stub,solution}.txt"
  [ -n "$keep" ] || { trap - EXIT; echo "(kept: $state)"; }
fi
exit $bad
