#!/usr/bin/env bash
# The GeGLU pointwise race on the H200: four contenders timed the same way, in one run.
#   eager gelu + mul, the hand-written kernel, the AOTI package's Triton kernel  (bench/bench_geglu)
#   Python torch.compile's Triton kernel                              (bench/bench_geglu_vs_python.py)
# each with its kernels' own device time (profiler trace, CUPTI: back to back, L2 flushed, right
# after the MLP's gate+up GEMMs) beside its end-to-end time per call (CUDA events).
# Also, to explain the AOTI kernel: re-exports the geglu package with triton.autotune_pointwise=False
# (Inductor's first pointwise config, no compile-time autotuning) and races it too; dumps the Triton
# source of the AOTI kernels (the build's, from the Inductor cache, and the re-export's) and of
# Python's (run_and_get_code), and the wrapper's launch lines.
#
# Needs a build in $BUILD_DIR with bench_geglu (cmake --build $BUILD_DIR --target bench_geglu); builds
# nothing. Run time ~2 minutes (the re-export is most of it; RACE_REEXPORT=0 skips it).
#   Device call: run(command="BUILD_DIR=build scripts/gpu/geglu_race.sh", kind="nvidia-h200")
# Writes into $OUT: race.md (the table for docs/performance.md, ready to paste), summary.txt,
# bench_geglu.md, python.txt and raw.tar.gz (JSON of every measurement, the generated sources, logs).
# Exit 0 when every step ran, 1 otherwise (what ran is packed either way), 2 without a build.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-$PWD/out-geglu-race}"
BUILD_DIR="${BUILD_DIR:-}"
if [ -z "$BUILD_DIR" ] || [ ! -x "$BUILD_DIR/bench/bench_geglu" ]; then
  echo "geglu_race.sh: needs BUILD_DIR with bench/bench_geglu built (got '${BUILD_DIR}')" >&2
  exit 2
fi
mkdir -p "$OUT"
stage=$(mktemp -d)
status=0
step() { echo "[race] $*" | tee -a "$stage/summary.txt" >&2; }
# The Python with CUDA torch that the build's AOTI exports used (CMake cache), else python3.
PY=$(sed -n 's/^WORKBOOK_TORCH_PYTHON:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | head -1)
[ -x "${PY:-}" ] || PY=python3

step "host: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>/dev/null | head -1)"
step "torch: $("$PY" -c 'import torch;print(torch.__version__, torch.version.cuda)' 2>&1 | tail -1)"
step "git: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"

# 1. The build's AOTI package: its wrapper (launch lines: grid, num_warps) and its Triton source,
#    from the Inductor cache of the build's export when it is still on this machine.
mkdir -p "$stage/aoti_build_kernels"
cp "$BUILD_DIR"/aoti/geglu.json "$BUILD_DIR"/aoti/geglu.wrapper.cpp "$BUILD_DIR"/aoti/mlp.json \
  "$BUILD_DIR"/aoti/mlp.wrapper.cpp "$stage/aoti_build_kernels/" 2>/dev/null
for pkg in "$BUILD_DIR"/aoti/geglu.pt2 "$BUILD_DIR"/aoti/mlp.pt2; do
  [ -f "$pkg" ] && "$PY" -c "import sys,zipfile;print('\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))" "$pkg" \
    > "$stage/aoti_build_kernels/$(basename "$pkg").contents.txt" 2>&1
done
n=0
for f in $(grep -rl --include='*.py' -e 'def triton_poi_fused_gelu_mul_0' -e 'def triton_poi_fused__unsafe_view_gelu_mul_0' \
           /tmp/torchinductor_* "${TORCHINDUCTOR_CACHE_DIR:-/nonexistent}" 2>/dev/null | head -20); do
  n=$((n + 1)); cp "$f" "$stage/aoti_build_kernels/cache_${n}_$(basename "$f")"
done
step "build's AOTI package: wrapper copied; $n Triton kernel source(s) found in the Inductor cache"
grep -n "launchKernel\|num_warps\|triton_poi" "$BUILD_DIR"/aoti/geglu.wrapper.cpp "$BUILD_DIR"/aoti/mlp.wrapper.cpp \
  2>/dev/null | head -20 >> "$stage/summary.txt"

# 2. Re-export gelu(g)*u with triton.autotune_pointwise=False, alone on the GPU, its generated code logged.
extra=()
if [ "${RACE_REEXPORT:-1}" != 0 ]; then
  t0=$SECONDS
  mkdir -p "$stage/aoti_autotune_off"
  if TORCHINDUCTOR_CACHE_DIR="$stage/aoti_autotune_off/inductor_cache" TORCH_LOGS=output_code \
     "$PY" chapters/export_aoti.py --model geglu --device cuda --out-dir "$stage/aoti_autotune_off" \
     --inductor-config triton.autotune_pointwise=False > "$stage/aoti_autotune_off/export.log" 2>&1 \
     && grep -q '"available": true' "$stage/aoti_autotune_off/geglu.json"; then
    extra=(--aoti "autotune_pointwise off=$stage/aoti_autotune_off/geglu.json")
    step "re-export (triton.autotune_pointwise=False): ok ($((SECONDS - t0)) s)"
  else
    step "re-export (triton.autotune_pointwise=False): FAILED ($((SECONDS - t0)) s); see aoti_autotune_off/export.log"
    status=1
  fi
  grep -rl --include='*.py' 'def triton_poi_fused' "$stage/aoti_autotune_off/inductor_cache" 2>/dev/null \
    | head -5 | while read -r f; do cp "$f" "$stage/aoti_autotune_off/kernel_$(basename "$f")"; done
  rm -rf "$stage/aoti_autotune_off/inductor_cache" "$stage/aoti_autotune_off/geglu.pt2"
fi

# 3. The C++ contenders.
t0=$SECONDS
"$BUILD_DIR/bench/bench_geglu" --reps 9 --calls 50 --profile-calls 20 "${extra[@]}" \
  --out "$stage/bench_geglu.md" --json "$stage/cpp_race.json" > "$stage/bench_geglu.txt" 2>&1
rc=$?; step "bench_geglu: exit $rc ($((SECONDS - t0)) s)"; [ $rc -eq 0 ] || status=1
grep -E "goal|faster|slower" "$stage/bench_geglu.txt" | tee -a "$stage/summary.txt" >&2

# 4. Python's torch.compile, same GPU, same script; prints the race table of all contenders.
t0=$SECONDS
if [ -f "$stage/cpp_race.json" ]; then cpp=(--cpp-json "$stage/cpp_race.json"); else cpp=(); fi
"$PY" bench/bench_geglu_vs_python.py --out "$stage" "${cpp[@]}" --calls 50 --reps 9 --profile-calls 20 \
  > "$stage/python.txt" 2>&1
rc=$?; step "bench_geglu_vs_python.py: exit $rc ($((SECONDS - t0)) s)"; [ $rc -eq 0 ] || status=1
[ -f "$stage/race.md" ] && cat "$stage/race.md" >&2

# Pack: at most 8 files come back.
for f in race.md summary.txt bench_geglu.md python.txt; do [ -f "$stage/$f" ] && cp "$stage/$f" "$OUT/"; done
tar -C "$stage" -czf "$OUT/raw.tar.gz" . 2>/dev/null
step "outputs in $OUT: $(ls "$OUT" | tr '\n' ' ')"
cp "$stage/summary.txt" "$OUT/summary.txt"
exit $status
