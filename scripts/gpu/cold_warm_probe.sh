#!/usr/bin/env bash
# One-off evidence run on the H200: cold vs warm chapter 01/02 runs, 0,0,20 windows.
set -uo pipefail
export BUILD_DIR=${BUILD_DIR:-build} JOBS=${JOBS:-16}
t0=$SECONDS
./workbook build --target 01_cold_64 02_warmup 04_compute_bound_4096 inspect > $OUT/build.log 2>&1 || { tail -50 $OUT/build.log; exit 1; }
echo "build $((SECONDS-t0)) s"
T=$(mktemp -d)
B=$BUILD_DIR/bin
run() { local name=$1; shift; echo "== $name: $*"; "$@" --out $T/$name --quiet > $T/$name.log 2>&1; echo "rc=$?"; tail -2 $T/$name.log; }
run c01 $B/01_cold_64
run c01cold3 $B/01_cold_64 --schedule 0,0,3
run c01cold5 $B/01_cold_64 --schedule 0,0,5
run c02 $B/02_warmup
run c02cold3 $B/02_warmup --warmup-iters 0 --schedule 0,0,3
run c02w0020 $B/02_warmup --schedule 0,0,20
run c02cold20 $B/02_warmup --warmup-iters 0 --schedule 0,0,20
run c04 $B/04_compute_bound_4096
run c04d20 $B/04_compute_bound_4096 --schedule 0,0,20
for d in $T/c*/; do $B/inspect $d/trace.json --format json > $d/inspect.json 2>/dev/null; done
tar czf $OUT/probe.tgz -C /tmp probe
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
echo "total $((SECONDS-t0)) s"
