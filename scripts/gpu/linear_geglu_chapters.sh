#!/usr/bin/env bash
# Chapters 06-07 (nn.Linear, the GeGLU MLP) on the H200, in one go: builds chapters 06-07 (with their AOTI packages and the
# hand-written CUDA kernel), their tests and the GeGLU bench; runs both chapters (every variant),
# the [ch06]/[ch07] tests and the bench; packs everything into $OUT (at most 8 files come back).
#
# Here, once:   scripts/device-deps.sh                      (writes .deps/: the Debian C++ deps)
# Device call:  run(command="scripts/gpu/linear_geglu_chapters.sh", carry=[".deps"], kind="nvidia-h200")
#
# The build folder is BUILD_DIR (default build, which git ignores, so it never travels back).
# Exit code: 0 when everything ran and passed, 1 otherwise (the
# outputs are packed either way).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-$PWD/out-linear-geglu}"
mkdir -p "$OUT"
export BUILD_DIR="${BUILD_DIR:-build}" JOBS="${JOBS:-$(nproc)}"
stage=$(mktemp -d)
status=0
step() { echo "[linear_geglu] $*" | tee -a "$stage/summary.txt" >&2; }

step "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(nproc) cores"
step "torch: $(python3 -c 'import torch;print(torch.__version__, torch.version.cuda)' 2>&1)"
step "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
step "git: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"

t0=$SECONDS
if ./workbook build --target 06_linear 07_geglu_mlp test_06_linear test_07_geglu_mlp bench_geglu \
    > "$stage/build.log" 2>&1; then
  step "build: ok ($((SECONDS - t0)) s)"
else
  step "build: FAILED ($((SECONDS - t0)) s); see build.log"; tail -40 "$stage/build.log" >&2; status=1
fi
cp "$BUILD_DIR"/aoti/linear.json "$BUILD_DIR"/aoti/mlp.json "$BUILD_DIR"/aoti/geglu.json "$stage/" 2>/dev/null

# The chapters, every variant (the default), with --check: exit 3 when a lesson fails.
for ch in 06_linear 07_geglu_mlp; do
  if [ -x "$BUILD_DIR/bin/$ch" ]; then
    "$BUILD_DIR/bin/$ch" --check --out "$stage/chapters/$ch" > "$stage/chapters-$ch.stdout.txt" 2>&1
    rc=$?; step "$ch --check: exit $rc"; [ $rc -eq 0 ] || status=1
  fi
done
"$BUILD_DIR/bin/06_linear" --no-bias --out "$stage/chapters/06_linear_flag_no_bias" > /dev/null 2>&1 \
  && step "06_linear --no-bias: ok" || { step "06_linear --no-bias: FAILED"; status=1; }

# The tests: [ch06] and [ch07], GPU cases included (they skip only without CUDA).
if ctest --test-dir "$BUILD_DIR" -R 'test_0[67]_' --output-on-failure > "$stage/ctest.txt" 2>&1; then
  step "ctest test_06/test_07: $(grep -E 'tests passed' "$stage/ctest.txt")"
else
  step "ctest test_06/test_07: FAILED: $(grep -E 'tests passed|tests failed' "$stage/ctest.txt")"; status=1
fi
for t in test_06_linear test_07_geglu_mlp; do  # which cases ran and which skipped, by tag
  [ -x "$BUILD_DIR/tests/$t" ] && "$BUILD_DIR/tests/$t" --reporter compact '[gpu]' >> "$stage/ctest.txt" 2>&1
done

# The bench: handwritten vs eager vs Inductor, against a measured copy.
if [ -x "$BUILD_DIR/bench/bench_geglu" ]; then
  "$BUILD_DIR/bench/bench_geglu" --reps 11 --calls 50 --out "$stage/bench_geglu.md" > "$stage/bench_geglu.txt" 2>&1
  rc=$?; step "bench_geglu: exit $rc"; [ $rc -eq 0 ] || status=1
  grep -E "goal" "$stage/bench_geglu.txt" | tee -a "$stage/summary.txt" >&2
fi

# Pack: summary and bench in the clear, the rest in one tarball (big traces gzipped inside).
find "$stage/chapters" -name 'trace.json' -size +1000k -exec gzip -9 {} + 2>/dev/null
step "outputs: summary.txt, bench_geglu.md, linear_geglu.tar.gz (chapters/, logs, ctest.txt, manifests)"
cp "$stage/summary.txt" "$OUT/summary.txt"
[ -f "$stage/bench_geglu.md" ] && cp "$stage/bench_geglu.md" "$OUT/bench_geglu.md"
tar -C "$stage" -czf "$OUT/linear_geglu.tar.gz" .
rm -rf "$stage"
exit $status
