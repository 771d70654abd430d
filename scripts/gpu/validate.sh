#!/usr/bin/env bash
# The whole workbook on the H200 in one call: build everything (keep going past a broken
# target), every chapter and experiment live (scripts/gpu/chapters_check.sh: --check --compare,
# the CUDA-only variants too), the test suite with the GPU live, the GeGLU bench. Everything
# lands in $OUT/validate.tgz; a summary is printed.
#   run(command="scripts/gpu/validate.sh", carry=[".deps"])
set -uo pipefail
cd "$(dirname "$0")/../.."
export BUILD_DIR=${BUILD_DIR:-build} JOBS=${JOBS:-16}
V=$(mktemp -d)
say() { echo "[validate $((SECONDS))s] $*" | tee -a $V/summary.txt; }
say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
./workbook setup > $V/setup.log 2>&1 || { say "setup failed"; tail -30 $V/setup.log; }
cmake --build $BUILD_DIR -j $JOBS -- -k 0 > $V/build.log 2>&1; say "build rc=$? ($(grep -c FAILED: $V/build.log) failed targets)"
grep FAILED: $V/build.log | head -20 | tee -a $V/summary.txt
OUT=$V/chapters scripts/gpu/chapters_check.sh > /dev/null 2>&1; say "chapters_check rc=$?"
cat $V/chapters/summary.txt >> $V/summary.txt
timeout 330 ctest --test-dir $BUILD_DIR -j 8 --timeout 200 --output-on-failure > $V/ctest.log 2>&1; say "ctest rc=$?: $(grep -E 'tests passed|tests failed' $V/ctest.log)"
grep -E '\*\*\*Failed|\*\*\*Timeout|Not Run' $V/ctest.log | head -40 | tee -a $V/summary.txt
[ -x $BUILD_DIR/bench/bench_geglu ] && { timeout 120 $BUILD_DIR/bench/bench_geglu --reps 11 --calls 50 --out $V/bench_geglu.md > $V/bench_geglu.txt 2>&1; say "bench_geglu rc=$?"; grep -i goal $V/bench_geglu.txt | tee -a $V/summary.txt; }
tar czf $OUT/validate.tgz -C $V .; cp $V/summary.txt $OUT/
say done
