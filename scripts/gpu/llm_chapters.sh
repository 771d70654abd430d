#!/usr/bin/env bash
# Chapters 09-10 (the LLM decoder) on the H200, in one go: builds chapters 09-10 (the LLM decoder), their tests and
# bench_llm_decode; runs both chapters live with --check (1b, the default on a GPU), the [ch09]/[ch10]
# GPU tests (teacher-forced logits eager vs graph), the C++ bench and the Python bench (eager and
# torch.compile reduce-overhead); packs everything into $OUT (at most 8 files come back).
#
# Here, once:   scripts/device-deps.sh                      (writes .deps/: the Debian C++ deps)
# Device call:  run(command="scripts/gpu/llm_chapters.sh", carry=[".deps"], kind="nvidia-h200")
#
# SKIP_PY_COMPILE=1 skips torch.compile (its compile takes about a minute on a cold cache);
# FULL_TESTS=1 runs every [gpu] case of test_09/test_10 (the chapters live again); RECORD=1 also
# records expected_output/h200/ for both chapters (see the end).
# Exit code: 0 when everything ran and passed, 1 otherwise (the outputs are packed either way).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-$PWD/out-llm}"
mkdir -p "$OUT"
export BUILD_DIR="${BUILD_DIR:-build}" JOBS="${JOBS:-$(nproc)}"
stage=$(mktemp -d)
status=0
step() { echo "[llm] $*" | tee -a "$stage/summary.txt" >&2; }

step "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(nproc) cores"
step "torch: $(python3 -c 'import torch;print(torch.__version__, torch.version.cuda)' 2>&1)"
step "git: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"

t0=$SECONDS
if ./workbook build --target 09_llm_prefill_decode 10_llm_decode_graphs test_09_llm_prefill_decode \
    test_10_llm_decode_graphs bench_llm_decode > "$stage/build.log" 2>&1; then
  step "build: ok ($((SECONDS - t0)) s)"
else
  step "build: FAILED ($((SECONDS - t0)) s); see build.log"; tail -40 "$stage/build.log" >&2; status=1
fi

# The chapters, every phase / variant, with --check: exit 3 when a lesson fails.
for ch in 09_llm_prefill_decode 10_llm_decode_graphs; do
  if [ -x "$BUILD_DIR/bin/$ch" ]; then
    t0=$SECONDS
    timeout 240 "$BUILD_DIR/bin/$ch" --check --out "$stage/chapters/$ch" > "$stage/chapters-$ch.stdout.txt" 2>&1
    rc=$?; step "$ch --check: exit $rc ($((SECONDS - t0)) s)"; [ $rc -eq 0 ] || status=1
    grep -E '^(Timed|Teacher|  max|batch|.*: lessons )' "$stage/chapters-$ch.stdout.txt" | tee -a "$stage/summary.txt" >&2
    grep -h -A4 '^\[FAIL\]' "$stage/chapters/$ch"/*/lessons.txt 2>/dev/null | head -40 | tee -a "$stage/summary.txt" >&2
    # Per variant: kernels and launches per step, GPU busy, CPU per step (the counts at each step).
    python3 - "$stage/chapters/$ch" <<'PY' 2>&1 | tee -a "$stage/summary.txt" >&2
import json, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1]).glob("*/lessons.json")):
    facts = {x["id"]: x.get("data", {}) for x in json.loads(f.read_text())["facts"]}
    w, o = facts.get("work_per_step", {}), facts.get("overhead_bound", {})
    t = facts.get("throughput", {})
    print(f"  {f.parent.name}: kernels/step {w.get('kernels_per_step')}, launches/step "
          f"{w.get('kernel_launches_per_step')}, graph launches/step {w.get('graph_launches_per_step')}, "
          f"GPU busy {o.get('gpu_busy_fraction')}, GEMM TFLOP/s {t.get('gemm_tflops')}")
PY
  fi
done

# The GPU test of the graph's logits against eager's (teacher forcing). FULL_TESTS=1 runs every
# [gpu] case of both tests (they run the chapters live again: a minute or two more).
t="$BUILD_DIR/tests/test_10_llm_decode_graphs"
if [ -x "$t" ]; then
  WORKBOOK_BUILD_DIR="$BUILD_DIR" timeout 300 "$t" --reporter compact \
    "the graph computes what eager computes: teacher-forced logits in bf16" > "$stage/test_logits.txt" 2>&1
  rc=$?; step "test_10 logits [gpu]: exit $rc: $(tail -1 "$stage/test_logits.txt")"; [ $rc -eq 0 ] || status=1
  grep -E 'rel |FAILED|failed' "$stage/test_logits.txt" | head -12 | tee -a "$stage/summary.txt" >&2
fi
if [ "${FULL_TESTS:-0}" = 1 ]; then
  for t in test_09_llm_prefill_decode test_10_llm_decode_graphs; do
    WORKBOOK_BUILD_DIR="$BUILD_DIR" timeout 400 "$BUILD_DIR/tests/$t" --reporter compact '[gpu]' \
      > "$stage/$t.gpu.txt" 2>&1
    rc=$?; step "$t [gpu]: exit $rc: $(tail -1 "$stage/$t.gpu.txt")"; [ $rc -eq 0 ] || status=1
  done
fi

# The bench: C++ eager and graph, then Python eager and reduce-overhead, one after the other.
if [ -x "$BUILD_DIR/bench/bench_llm_decode" ]; then
  timeout 120 "$BUILD_DIR/bench/bench_llm_decode" --json "$stage/bench_cpp.json" > "$stage/bench_cpp.txt" 2>&1
  rc=$?; step "bench_llm_decode: exit $rc"; [ $rc -eq 0 ] || status=1
  cat "$stage/bench_cpp.txt" | tee -a "$stage/summary.txt" >&2
fi
py_args=(); [ "${SKIP_PY_COMPILE:-0}" = 1 ] && py_args+=(--no-compile)
timeout 300 python3 bench/bench_llm_decode.py --json "$stage/bench_py.json" "${py_args[@]}" > "$stage/bench_py.txt" 2>&1
rc=$?; step "bench_llm_decode.py: exit $rc"; [ $rc -eq 0 ] || status=1
grep -vE 'Warning|warn' "$stage/bench_py.txt" | tail -6 | tee -a "$stage/summary.txt" >&2

# RECORD=1: also record the H200 expected outputs of both chapters (scripts/record.sh; name the
# commit with WORKBOOK_GIT_REV when the tree is a copy); they travel in llm.tar.gz under
# expected_output/h200/ (unpack them into the repository).
if [ "${RECORD:-0}" = 1 ]; then
  for ch in 09_llm_prefill_decode 10_llm_decode_graphs; do
    t0=$SECONDS
    timeout 300 scripts/record.sh "$BUILD_DIR" --platform h200 --only "$ch" > "$stage/record-$ch.txt" 2>&1
    rc=$?; step "record $ch: exit $rc ($((SECONDS - t0)) s)"; [ $rc -eq 0 ] || status=1
  done
  mkdir -p "$stage/expected_output/h200"
  cp -r expected_output/h200/09_llm_prefill_decode expected_output/h200/10_llm_decode_graphs \
    expected_output/h200/PROVENANCE "$stage/expected_output/h200/" 2>/dev/null
fi

# Pack: summary in the clear, the rest in one tarball (big traces gzipped inside).
find "$stage/chapters" -name 'trace.json' -size +1000k -exec gzip -9 {} + 2>/dev/null
step "outputs: summary.txt, llm.tar.gz (chapters/, logs, tests, bench)"
cp "$stage/summary.txt" "$OUT/summary.txt"
tar -C "$stage" -czf "$OUT/llm.tar.gz" .
rm -rf "$stage"
exit $status
