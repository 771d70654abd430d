#!/usr/bin/env bash
# How long `table` and `inspect` take on one big trace, in process and end to end, pinned to two
# cores (the goal in docs/performance.md: <= 0.5 s on 2 cores for a 100 MB trace).
#
#   bench/tools_on_trace.sh [--build DIR] [--runs N] [--reps N] [--out FILE] TRACE
#
#   TRACE        a Kineto trace (.json); e.g. the 102 MB profile_memory one:
#                  PY=~/.cache/libtorch-workbook/torch-2.11.0/bin/python
#                  $PY tests/data/python/make_memory_fixtures.py --bench-steps 190 --out /tmp/benchmem
#                  gunzip -k /tmp/benchmem/cpu_memory_bench_190.json.gz
#   --build DIR  a configured build of this tree (default: build); the tools are built there
#   --runs N     end-to-end runs of each tool, and runs of bench_tools (default: 5 and 3)
#   --reps N     bench_tools' timed repetitions per run (default: 7)
#   --out FILE   also write the report there (default: only stdout)
#
# In process: bench_tools TRACE (read, model, table, diff, inspect; best and median of each run).
# End to end: /usr/bin/time of the command-line tool, process start and exit included, output
# thrown away. The report starts with the machine, the commit and the load average, because on
# a shared VM the same binary moves by tens of percent with its neighbours.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
RUNS=5
BT_RUNS=3
REPS=7
OUT=""
usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
number() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "tools_on_trace.sh: $1 needs a positive number, got '$2'" >&2; exit 2; }; }
TRACE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=${2:?--build needs a folder}; shift 2 ;;
    --runs) number --runs "${2:-}"; RUNS=$2; shift 2 ;;
    --reps) number --reps "${2:-}"; REPS=$2; shift 2 ;;
    --out) OUT=${2:?--out needs a file}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "tools_on_trace.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) [ -z "$TRACE" ] || { echo "tools_on_trace.sh: one trace only" >&2; exit 2; }; TRACE=$1; shift ;;
  esac
done
[ -n "$TRACE" ] || { usage >&2; exit 2; }
[ -f "$TRACE" ] || { echo "tools_on_trace.sh: no such trace: $TRACE" >&2; exit 2; }
[ -f "$BUILD/build.ninja" ] || { echo "tools_on_trace.sh: $BUILD is not a configured build (--build)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "tools_on_trace.sh: needs /usr/bin/time (Debian: apt install time)" >&2; exit 2; }

echo "building table, inspect, bench_tools in $BUILD ..." >&2
ninja -C "$BUILD" table inspect bench_tools >/dev/null

report=$(mktemp)
trap 'rm -f "$report" "$report.t"' EXIT
{
  echo "# table and inspect on $(basename "$TRACE")"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- common tools || echo ' (with local changes)')"
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, pinned to cores 0,1"
  echo "trace: $(stat -c %s "$TRACE" | awk '{printf "%.1f", $1 / 1e6}') MB"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "## in process: bench_tools --reps $REPS, $BT_RUNS runs (seconds: best, median)"
  for r in $(seq "$BT_RUNS"); do
    echo "run $r"
    taskset -c 0,1 "$BUILD/bench/bench_tools" "$TRACE" --reps "$REPS" 2>&1 | grep -E ' s ' || true
  done
  echo
  echo "## end to end: /usr/bin/time -f %e taskset -c 0,1 TOOL TRACE, $RUNS runs (seconds)"
  for tool in table inspect; do
    times=()
    for r in $(seq "$RUNS"); do
      /usr/bin/time -f %e -o "$report.t" taskset -c 0,1 "$BUILD/bin/$tool" "$TRACE" >/dev/null 2>&1
      times+=("$(tail -1 "$report.t")")
    done
    sorted=$(printf '%s\n' "${times[@]}" | sort -n)
    echo "$tool end to end: ${times[*]} (best $(head -1 <<<"$sorted"), median $(sed -n "$(((RUNS + 1) / 2))p" <<<"$sorted"))"
  done
  echo
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$report"
if [ -n "$OUT" ]; then
  mkdir -p "$(dirname "$OUT")"
  cp "$report" "$OUT.tmp.$$" && mv "$OUT.tmp.$$" "$OUT"
  echo "wrote $OUT" >&2
fi
