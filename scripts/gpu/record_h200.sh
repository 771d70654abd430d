#!/usr/bin/env bash
# The H200 side of a release, in two device calls that share one warm machine:
#   run(command="scripts/gpu/record_h200.sh record COMMIT", carry=[".deps"])   build, record, bench
#                                       (RUNS=3: two more recordings for the tolerances' spread)
#   run(command="scripts/gpu/record_h200.sh test")                             the suite, GPU live
#   run(command="SKIP_CTEST=1 scripts/gpu/exercises.sh")                  the exercises, live
#   run(command="scripts/gpu/record_h200.sh checks")   or, after record: chapter 11's test, the model
#                                       fixtures, the chapters check, the decode bench, the exercises
# (the second right after the first, while the machine is still warm: it reuses the build).
# COMMIT: write the full hash here, before the call (git rev-parse HEAD on this side): on the GPU
# machine `git rev-parse HEAD` names the session's starting commit, not the tree that was sent.
# Outputs in $OUT: h200_recording.tgz (expected_output/h200, to unpack here), bench and fixture
# tarballs, logs.
set -uo pipefail
cd "$(dirname "$0")/../.."
export BUILD_DIR=${BUILD_DIR:-build} JOBS=${JOBS:-16}
F=/tmp/final; mkdir -p $F
say() { echo "[h200 $((SECONDS))s] $*" | tee -a $F/summary.txt; }
case "${1:-}" in
  record)
    rev=${2:?commit}
    [[ "$rev" =~ ^[0-9a-f]{40}$ ]] || { echo "record: COMMIT must be a full 40-hex hash, got '$rev'" >&2; exit 2; }
    ./workbook setup > $F/setup.log 2>&1 || { tail -30 $F/setup.log; exit 1; }
    # The chapters (what a recording runs), figures, diff (the recorded pairs) and the bench;
    # `test` builds the rest.
    cmake --build $BUILD_DIR -j $JOBS --target $(cat $BUILD_DIR/chapters.txt) figures diff bench_geglu > $F/build.log 2>&1; say "build rc=$?"; grep -A5 FAILED: $F/build.log | head -30
    WORKBOOK_GIT_REV=$rev scripts/record.sh $BUILD_DIR --platform h200 > $F/record.log 2>&1; say "record rc=$?"
    grep -E '\[record\] (FAILED|wrote)' $F/record.log | tee -a $F/summary.txt
    tar czf $OUT/h200_recording.tgz expected_output/h200
    # RUNS=N: N-1 more recordings of the same build (expected_output/h200-runK), whose lessons,
    # tables and stdout (not traces or pictures) come back as test data: every claim must hold on
    # each run, and the tolerances are set from their spread.
    for k in $(seq 2 "${RUNS:-1}"); do
      # a run takes what the first took: start one only if it can end inside the call (RUNS_UNTIL_S)
      [ $SECONDS -lt "${RUNS_UNTIL_S:-330}" ] || { say "record run $k skipped (time)"; break; }
      WORKBOOK_GIT_REV=$rev scripts/record.sh $BUILD_DIR --platform h200-run$k > $F/record$k.log 2>&1; say "record run $k rc=$?"
    done
    [ "${RUNS:-1}" -lt 2 ] || tar czf $OUT/h200_reruns.tgz --exclude='trace.json*' --exclude='*.svg' expected_output/h200-run*
    if [ "${BENCH:-1}" = 1 ]; then  # BENCH=0: the GeGLU kernel did not change, keep its bench
      timeout 120 $BUILD_DIR/bench/bench_geglu --reps 11 --calls 50 --out $F/bench_geglu.md > $F/bench_geglu.txt 2>&1; say "bench_geglu rc=$?"
      grep -i -A3 goal $F/bench_geglu.txt | tee -a $F/summary.txt
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader >> $F/bench_geglu.txt
      cp $F/bench_geglu.md $F/bench_geglu.txt $OUT/
    fi
    cp $F/record.log $F/summary.txt $OUT/ ;;
  test)
    cmake --build $BUILD_DIR -j $JOBS > $F/build.log 2>&1; say "build rc=$?"; grep -A5 FAILED: $F/build.log | head -30
    timeout ${CTEST_S:-420} ctest --test-dir $BUILD_DIR -j 8 --timeout 240 --output-on-failure > $F/ctest.log 2>&1; say "ctest rc=$?: $(grep -E 'tests passed|tests failed' $F/ctest.log)"
    grep -E '\*\*\*Failed|\*\*\*Timeout|Not Run' $F/ctest.log | head -30 | tee -a $F/summary.txt
    gzip -c $F/ctest.log > $OUT/ctest_h200.log.gz
    if [ "${FIXTURES:-0}" = 1 ]; then  # the CUDA table fixtures (tests/data/python/cuda_*), ~1-3 min
      timeout ${FIXTURES_S:-150} python3 tests/data/python/make_fixtures.py --device cuda --out /tmp/tf/python > $F/fixtures.log 2>&1; say "fixtures rc=$?"
      tail -5 $F/fixtures.log; tar czf $OUT/fixtures.tgz -C /tmp/tf python 2>/dev/null
    fi
    cp $F/summary.txt $OUT/ ;;
  checks)
    # After `record`, on the same warm machine: the live checks a release needs, each bounded,
    # skipped once the call's time is nearly spent (LIMIT_S, default 540 s), logs in $OUT/checks.tgz.
    L=${LIMIT_S:-540}
    left() { [ $((L - SECONDS)) -gt "$1" ] || { say "skipped (time): $2"; return 1; }; }
    cmake --build $BUILD_DIR -j $JOBS --target test_11_llm_decode_kernels test_exercises exercises exercise \
      gaming_ex01_1_loop_deleted gaming_ex08_1_update_neutralised bench_llm_decode bench_llm_gemv inspect table timeline \
      > $F/build_checks.log 2>&1; say "build rc=$?"
    left 60 fixtures && { timeout 90 python3 tests/data/models/make_model_fixtures.py --device cuda --out $F/models > $F/fixtures.log 2>&1; say "model fixtures rc=$?"; }
    left 60 test_11 && { timeout 150 $BUILD_DIR/tests/test_11_llm_decode_kernels "[ch11]" > $F/test_11.log 2>&1; say "test_11 rc=$?: $(tail -2 $F/test_11.log | tr '\n' ' ')"; }
    left 120 chapters_check && { mkdir -p $F/cc; OUT=$F/cc BUILD_DIR=$BUILD_DIR timeout $((L - SECONDS - 60)) scripts/gpu/chapters_check.sh > $F/chapters_check.out 2>&1; say "chapters_check rc=$?"; grep -v 'rc=0' $F/cc/summary.txt | head -20 | tee -a $F/summary.txt; }
    left 90 bench && { timeout 120 $BUILD_DIR/bench/bench_llm_decode --repeats 5 > $F/bench_llm_decode.txt 2>&1; say "bench_llm_decode rc=$?"; }
    left 90 exercises && { WORKBOOK_BUILD_DIR=$BUILD_DIR timeout $((L - SECONDS - 20)) $BUILD_DIR/tests/test_exercises "[exercises][gpu]" > $F/exercises_gpu.log 2>&1; say "test_exercises [gpu] rc=$?: $(tail -2 $F/exercises_gpu.log | tr '\n' ' ')"; }
    # The learners' tricks on the GPU (the programs run on it when there is one): caught there too.
    left 60 gaming && { WORKBOOK_BUILD_DIR=$BUILD_DIR timeout $((L - SECONDS - 10)) $BUILD_DIR/tests/test_exercises "gaming:*" > $F/gaming_gpu.log 2>&1; say "test_exercises gaming on the GPU rc=$?: $(tail -2 $F/gaming_gpu.log | tr '\n' ' ')"; }
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader >> $F/summary.txt
    tar czf $OUT/checks.tgz -C /tmp final
    cp $F/summary.txt $OUT/ ;;
  *) echo "usage: $0 record COMMIT | test | checks" >&2; exit 2 ;;
esac
