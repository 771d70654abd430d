#!/usr/bin/env bash
# The sanitizer pass: every library, chapter, tool and test built with AddressSanitizer +
# UndefinedBehaviorSanitizer (the `asan` preset: -O1, line tables, build-asan/), then the whole
# test suite run there. `./workbook test` runs it after the normal suite, so CI runs it too.
#
#   scripts/ci_sanitize.sh              configure, build, run
#   JOBS=4 scripts/ci_sanitize.sh       more parallel jobs (default: nproc)
#
# Any report fails the run: UBSan halts on the first error, ASan aborts, LeakSanitizer reports
# leaks at exit. LibTorch itself is not instrumented: our code is checked where it calls in and
# where LibTorch calls back, and leaks inside LibTorch's own libraries are suppressed
# (scripts/sanitizers/lsan.supp). Tests whose verdict rests on relative CPU times skip
# themselves in this build (WORKBOOK_SANITIZED_BUILD): ASan's allocator under LibTorch's
# allocations shifts those times. Prints the time of each phase.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
say() { printf '\033[1m[sanitize]\033[0m %s\n' "$*" >&2; }
t0=$SECONDS

prefix=()
# ./workbook passes the prefix its setup found (Debian packages in .deps, the torch venv).
if [ -n "${WORKBOOK_PREFIX:-}" ]; then prefix=(-DCMAKE_PREFIX_PATH="$WORKBOOK_PREFIX"); fi
cmake --preset asan "${prefix[@]}" > build-asan.configure.log 2>&1 \
  || { cat build-asan.configure.log >&2; exit 1; }
say "building everything with ASan + UBSan in build-asan/ ($jobs jobs; a few minutes the first time)"
cmake --build build-asan -j "$jobs"
t1=$SECONDS

export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0
# First, that the sanitizers are really there: each planted mistake must be reported.
for mistake in "heap:AddressSanitizer: heap-buffer-overflow" \
               "ub:runtime error: signed integer overflow" \
               "leak:LeakSanitizer: detected memory leaks"; do
  kind=${mistake%%:*} report=${mistake#*:}
  if out=$(build-asan/tests/sanitizer_canary "$kind" 2>&1); then
    say "FAILED: the canary's planted $kind mistake ran cleanly: this build is not sanitized"
    exit 1
  fi
  if ! grep -qF "$report" <<<"$out"; then
    say "FAILED: the canary's planted $kind mistake failed without the expected report ($report):"
    echo "$out" | tail -5 >&2
    exit 1
  fi
done
say "canary: the planted heap overflow, signed overflow and leak were each reported"

say "running the test suite under the sanitizers"
rc=0
ctest --test-dir build-asan --output-on-failure -j "$jobs" || rc=$?
t2=$SECONDS

say "build $((t1 - t0)) s, tests $((t2 - t1)) s, total $((t2 - t0)) s"
if [ "$rc" -ne 0 ]; then
  say "FAILED: a test failed or a sanitizer reported (the output above names it)"
  exit "$rc"
fi
say "clean: the whole suite passed under ASan + UBSan"
