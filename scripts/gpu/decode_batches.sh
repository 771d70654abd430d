#!/usr/bin/env bash
# The LLM decode bench at batch 1, 8 and 64 on the H200, both sides: bench/bench_llm_decode (C++
# eager, CUDA graph, graph fused; chapter 11's kernels at batch 1 only) and
# bench/bench_llm_decode.py (Python eager, torch.compile reduce-overhead, and max-autotune when
# asked), each at the 1b config, a 512-token prompt, 64 new tokens, --repeats 5: the C++ side at
# every batch, then the Python side. Each run prints the step's napkin math: weight bytes per
# step (read once whatever the batch), FLOPs per step, the intensity against the H200's ridge
# point, the batch at which the step would turn compute-bound. Measured time per step staying
# flat from batch 1 to 64 is the sign of a bandwidth-bound step.
#
# Here, once:   scripts/device-deps.sh                      (writes .deps/: the Debian C++ deps)
# Device calls (two, so that the build's minutes do not come out of the runs' 10):
#   1. run(command="BUILD_DIR=build ./workbook build --target bench_llm_decode", carry=[".deps"], kind="nvidia-h200")
#   2. run(command="SKIP_BUILD=1 BUILD_DIR=build scripts/gpu/decode_batches.sh", carry=[".deps"], kind="nvidia-h200")
#   build/ is ignored by git, so the second call on the same (warm) machine finds the first's build.
#   In one call instead: run(command="BUILD_DIR=build scripts/gpu/decode_batches.sh", carry=[".deps"]):
#   without SKIP_BUILD=1 the script builds bench_llm_decode first (./workbook build --target
#   bench_llm_decode: configure, LibTorch's precompiled header, the target) inside the same budget,
#   and the Python runs at the end are the ones a slow build leaves out.
#
# Time: one device call is at most 10 minutes, and the whole script keeps to TIME_BUDGET seconds
# (default 560): every run gets a timeout of what is left, and a run that does not fit is listed
# as not run. The estimate, from the batch-1 timings in docs/bench/llm_decode_h200_*.txt: per
# batch, the C++ bench's 6 generations x 64 steps per side (eager ~10-13 ms/step, graphs ~1-2.5
# ms/step, 4 kernel steps at batch 1) plus model build, capture and 6 prefills is well under a
# minute; the Python bench's eager is ~7 s and its reduce-overhead compile about a minute on a cold
# Inductor cache (scripts/gpu/llm_chapters.sh), a new compile per batch (new shapes): about 1.5
# minutes per batch, ~6 minutes for the three batches with the build's first minutes on top.
# max-autotune's GEMM autotuning takes minutes per compile (not measured here yet) and three of
# them would not fit: it is skipped unless MAX_AUTOTUNE=1 (then best alone, e.g.
# MAX_AUTOTUNE=1 BATCHES="64" SKIP_CPP=1, a call of its own).
#
# Env: BATCHES (default "1 8 64"), MAX_AUTOTUNE=1, SKIP_CPP=1, SKIP_PY=1, SKIP_BUILD=1,
# TIME_BUDGET (seconds, default 560), OUT (default ./out-decode-batches); SMOKE=1 runs the script's
# own plumbing on any machine: the tiny config on the CPU, prompt 16, 4 new tokens, --repeats 1.
# Writes into $OUT: summary.txt (host, torch, git, each run's exit and time, the table),
# table.md (the table alone, ready for docs/performance.md), and raw.tar.gz (every run's stdout,
# stderr and --json, the build log). Exit 0 when every run asked for ran and exited 0, 1 otherwise
# (what ran is packed either way), 2 when the build is missing and not built.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
OUT="${OUT:-$PWD/out-decode-batches}"
export BUILD_DIR="${BUILD_DIR:-build}" JOBS="${JOBS:-$(nproc)}"
BATCHES="${BATCHES:-1 8 64}"
BUDGET="${TIME_BUDGET:-560}"
mkdir -p "$OUT"
stage=$(mktemp -d)
mkdir -p "$stage/raw"
status=0
step() { echo "[decode] $*" | tee -a "$stage/summary.txt" >&2; }
left() { echo $((BUDGET - (SECONDS - start))); }
# The Python with CUDA torch that the build was configured with (CMake cache), else python3.
PY=$(sed -n 's/^WORKBOOK_TORCH_PYTHON:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | head -1)
[ -x "${PY:-}" ] || PY=python3

step "host: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>/dev/null | head -1); $(nproc) cores"
step "torch: $("$PY" -c 'import torch;print(torch.__version__, torch.version.cuda)' 2>&1 | tail -1)"
step "git: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
step "batches: $BATCHES; $([ "${SMOKE:-0}" = 1 ] && echo 'SMOKE: tiny on the CPU, prompt 16, 4 new tokens, --repeats 1' || echo '1b, prompt 512, 64 new tokens, --repeats 5'); max-autotune: $([ "${MAX_AUTOTUNE:-0}" = 1 ] && echo on || echo 'off (MAX_AUTOTUNE=1)'); budget ${BUDGET} s"

bin="$BUILD_DIR/bench/bench_llm_decode"
if [ "${SKIP_CPP:-0}" != 1 ] && [ "${SKIP_BUILD:-0}" != 1 ]; then
  t0=$SECONDS
  if timeout "$(left)" ./workbook build --target bench_llm_decode > "$stage/raw/build.log" 2>&1; then
    step "build bench_llm_decode: ok ($((SECONDS - t0)) s)"
  else
    step "build bench_llm_decode: FAILED ($((SECONDS - t0)) s); see build.log"; tail -30 "$stage/raw/build.log" >&2
    status=1
  fi
fi
if [ "${SKIP_CPP:-0}" != 1 ] && [ ! -x "$bin" ]; then
  step "no $bin: build it (./workbook build --target bench_llm_decode) or set SKIP_CPP=1"
  tar -C "$stage" -czf "$OUT/raw.tar.gz" . 2>/dev/null; cp "$stage/summary.txt" "$OUT/summary.txt"
  exit 2
fi

# One run: NAME, then the command. Its stdout, stderr and exit go to raw/NAME.*; a run that no
# longer fits the budget (under 30 s left) is not started.
run_one() {
  local name=$1; shift
  local t0=$SECONDS budget
  budget=$(left)
  if [ "$budget" -lt 30 ]; then
    step "$name: NOT RUN (the time budget is spent: $budget s left)"; status=1; return
  fi
  timeout "$budget" "$@" > "$stage/raw/$name.txt" 2> "$stage/raw/$name.stderr.txt"
  local rc=$?
  step "$name: exit $rc ($((SECONDS - t0)) s)$([ $rc -eq 124 ] && echo ': timed out')"
  [ $rc -eq 0 ] || { status=1; tail -5 "$stage/raw/$name.stderr.txt" >&2; }
  cat "$stage/raw/$name.txt" >&2
}

common=(--config 1b --prompt 512 --new-tokens 64 --repeats 5 --device cuda)
[ "${SMOKE:-0}" = 1 ] && common=(--config tiny --prompt 16 --new-tokens 4 --repeats 1 --device cpu)
# The C++ side first, every batch (well under a minute each), then the Python side, whose
# compiles take most of the time: a budget cut then costs a Python batch, never a C++ one.
if [ "${SKIP_CPP:-0}" != 1 ]; then
  for b in $BATCHES; do
    run_one "cpp_batch$b" "$bin" "${common[@]}" --batch "$b" --json "$stage/raw/cpp_batch$b.json"
  done
fi
if [ "${SKIP_PY:-0}" != 1 ]; then
  py=(); [ "${MAX_AUTOTUNE:-0}" = 1 ] || py+=(--no-max-autotune)
  for b in $BATCHES; do
    run_one "py_batch$b" "$PY" bench/bench_llm_decode.py "${common[@]}" --batch "$b" "${py[@]}" \
      --json "$stage/raw/py_batch$b.json"
  done
fi

# The table: one row per side and batch, from the runs' --json; then each side's ms/step at the
# largest batch over its ms/step at batch 1 (about 1x: the step stayed bandwidth-bound).
"$PY" - "$stage/raw" > "$stage/table.md" 2>> "$stage/summary.txt" <<'PY'
import json, pathlib, sys
raw = pathlib.Path(sys.argv[1])
runs = {}
for f in sorted(raw.glob("*_batch*.json")):
    side, b = f.stem.split("_batch")
    runs.setdefault(int(b), {})[side] = json.loads(f.read_text())
names = [("cpp", "cpp_eager", "C++ eager"), ("cpp", "cpp_graph", "C++ CUDA graph"),
         ("cpp", "cpp_graph_fused", "C++ CUDA graph, fused"), ("cpp", "cpp_kernels_gemv", "C++ kernels, gemv"),
         ("cpp", "cpp_kernels_fused", "C++ kernels, fused"), ("cpp", "cpp_kernels_attention", "C++ kernels, attention"),
         ("cpp", "cpp_kernels_overlap", "C++ kernels, overlap"),
         ("py", "py_eager", "Python eager"), ("py", "py_reduce_overhead", "Python reduce-overhead"),
         ("py", "py_max_autotune", "Python max-autotune")]
print("| batch | implementation | ms/step | tokens/s | % of the weight-read bound | FLOP/byte (weights; +KV) | ridge |")
print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
for b in sorted(runs):
    for side, key, label in names:
        r = runs[b].get(side)
        if not r or f"{key}_ms" not in r:
            continue
        ms = r[f"{key}_ms"]
        ridge = r.get("ridge_flop_per_byte")
        print(f"| {b} | {label} | {ms:.3f} | {1e3 / ms * b:.1f} | {100 * r['bound_ms'] / ms:.1f}% | "
              f"{r['intensity_weights']:.1f}; {r['intensity']:.1f} | {'%.0f' % ridge if ridge else 'n/a'} |")
bs = sorted(runs)
if len(bs) > 1:
    lo, hi = bs[0], bs[-1]
    print()
    for side, key, label in names:
        a, z = runs[lo].get(side, {}).get(f"{key}_ms"), runs[hi].get(side, {}).get(f"{key}_ms")
        if a and z:
            print(f"- {label}: ms/step at batch {hi} / batch {lo} = {z / a:.2f}x "
                  f"(tokens/s {hi / lo * a / z:.1f}x)")
    print("\nAbout 1x (flat ms/step as the batch grows) is the sign of a bandwidth-bound step.")
r = next(iter(runs[bs[-1]].values()), {}) if bs else {}
if r.get("ridge_batch_weights"):
    rb = r.get("ridge_batch")
    print(f"\nNapkin: compute-bound from batch ~{r['ridge_batch_weights']:.0f} on the weights alone; "
          + (f"~{rb:.0f} with the KV cache" if rb else "never with the KV cache of this context"))
PY
step "table:"
tee -a "$stage/summary.txt" < "$stage/table.md" >&2

cp "$stage/summary.txt" "$stage/table.md" "$OUT/"
tar -C "$stage" -czf "$OUT/raw.tar.gz" . 2>/dev/null
step "outputs in $OUT: $(ls "$OUT" | tr '\n' ' ') ($((SECONDS - start)) s in all)"
cp "$stage/summary.txt" "$OUT/summary.txt"
exit $status
