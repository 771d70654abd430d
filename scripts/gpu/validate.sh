#!/usr/bin/env bash
# The whole workbook on the H200 in one call: build everything (keep going past a broken
# target), every chapter and experiment with --check, the test suite with the GPU live, the
# GeGLU bench. Everything lands in $OUT/validate.tgz; a summary is printed.
#   run(command="scripts/gpu/validate.sh", carry=[".deps"])
set -uo pipefail
cd "$(dirname "$0")/../.."
export BUILD_DIR=${BUILD_DIR:-/tmp/bgpu} JOBS=${JOBS:-16}
V=/tmp/validate; rm -rf $V; mkdir -p $V
say() { echo "[validate $((SECONDS))s] $*" | tee -a $V/summary.txt; }
say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
./workbook setup > $V/setup.log 2>&1 || { say "setup failed"; tail -30 $V/setup.log; }
cmake --build $BUILD_DIR -j $JOBS -- -k 0 > $V/build.log 2>&1; say "build rc=$? ($(grep -c FAILED: $V/build.log) failed targets)"
grep FAILED: $V/build.log | head -20 | tee -a $V/summary.txt
B=$BUILD_DIR/bin
for ch in $(cat $BUILD_DIR/chapters.txt); do
  [ -x $B/$ch ] || { say "$ch: not built"; continue; }
  timeout 300 $B/$ch --check --quiet --out $V/out/$ch > $V/$ch.log 2>&1; say "$ch --check rc=$? $(grep -h 'lessons' $V/$ch.log | tr '\n' ' ' | cut -c1-300)"
  for e in $($B/$ch --list-experiments 2>/dev/null); do
    timeout 300 $B/$ch --experiment $e --check --quiet --out $V/out/$ch > $V/$ch.$e.log 2>&1; say "$ch --experiment $e rc=$? $(grep -h lessons $V/$ch.$e.log | cut -c1-200)"
  done
done
timeout 330 ctest --test-dir $BUILD_DIR -j 8 --timeout 200 --output-on-failure > $V/ctest.log 2>&1; say "ctest rc=$?: $(grep -E 'tests passed|tests failed' $V/ctest.log)"
grep -E '\*\*\*Failed|\*\*\*Timeout|Not Run' $V/ctest.log | head -40 | tee -a $V/summary.txt
[ -x $BUILD_DIR/bench/bench_geglu ] && { timeout 120 $BUILD_DIR/bench/bench_geglu --reps 11 --calls 50 --out $V/bench_geglu.md > $V/bench_geglu.txt 2>&1; say "bench_geglu rc=$?"; grep -i goal $V/bench_geglu.txt | tee -a $V/summary.txt; }
find $V/out -name '*.json' -size +2M -delete
tar czf $OUT/validate.tgz -C /tmp validate; cp $V/summary.txt $OUT/
say done
