#!/usr/bin/env bash
# ASan + UBSan over the torch-free code: wb_core, the tests that link only wb_core, and the
# `inspect` and `timeline` tools (which test_bad_input also feeds bad flags and broken traces).
# LibTorch is not built with the sanitizers, so the torch side (wb_torch, the chapters) stays
# out: its reports would be about LibTorch, not about us.
#
#   scripts/ci_sanitize.sh            configure the `asan` preset (build-asan/), build, run
#   JOBS=4 scripts/ci_sanitize.sh     more parallel compile jobs (default 2)
#
# Any sanitizer report fails the run: UBSan halts on the first error, ASan aborts, and
# LeakSanitizer reports leaks at exit. Prints the elapsed time per phase.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=(test_schedule test_table test_trace_reader test_model test_lessons test_inspect
       test_compare test_timeline_svg)
jobs=${JOBS:-2}
t0=$SECONDS

cmake --preset asan -DWORKBOOK_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j "$jobs" --target "${tests[@]}" test_bad_input inspect timeline
t1=$SECONDS

export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export WORKBOOK_BUILD_DIR=$PWD/build-asan   # the tests that run bin/inspect use this build's
failed=()
for t in "${tests[@]}"; do
  echo "== $t"
  if ! "build-asan/tests/$t" --reporter compact --order rand; then
    failed+=("$t")
  fi
done
# The tools on bad flags and broken traces (the chapter rows skip: no chapter is built here).
echo "== test_bad_input [tools]"
build-asan/tests/test_bad_input "[tools]" --reporter compact || failed+=("test_bad_input")
t2=$SECONDS

echo "sanitize: build $((t1 - t0)) s, tests $((t2 - t1)) s, total $((t2 - t0)) s"
if ((${#failed[@]})); then
  echo "sanitize: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "sanitize: all $((${#tests[@]} + 1)) test programs clean under ASan + UBSan"
