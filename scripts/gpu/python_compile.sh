#!/usr/bin/env bash
# The post's torch.compile experiment, profiled by Python's own torch.profiler:
# chapter 01's workload at --size 4096 with --warmup, three ways, in one process each:
#   eager/            no compile (the baseline)
#   compile/          torch.compile(fn)                          (Inductor, default mode)
#   reduce_overhead/  torch.compile(fn, mode="reduce-overhead")   (CUDA graphs)
# Each folder gets trace.json, table.txt, run.json (what ran, on what) and stdout.txt/stderr.txt
# (stderr carries Inductor's generated code: TORCH_LOGS=output_code). PROVENANCE names the
# machine, the torch and the commit. Needs no build: only python3 with torch (and, for
# --compile, the C compiler and Triton that torch.compile uses).
#
# On the H200 (one device call, about 2-4 minutes; nothing is built):
#   run(command="scripts/gpu/python_compile.sh", kind="nvidia-h200")
# Then here: unpack $OUT/python.tgz into expected_output/h200/ (it holds python/), commit.
# Without a GPU (the CPU recording): OUT=/tmp/pyrec PYTHON=... SIZE=64 THREADS=1 scripts/gpu/python_compile.sh
# (THREADS: torch.set_num_threads for the runs; on a small shared VM one thread keeps the 64x64
# ops from waiting on each other's spinning threads.)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-$PWD/out-python-compile}"
PY="${PYTHON:-python3}"
SIZE="${SIZE:-4096}"
THREADS="${THREADS:-0}"
stage=$(mktemp -d /tmp/wb-python-compile-XXXXXX)
dest="$stage/python"
mkdir -p "$dest" "$OUT"
status=0
# Inductor's cache in a fresh folder: every run compiles from scratch and names its graph.
export TORCHINDUCTOR_CACHE_DIR="$stage/inductor_cache"

run() {  # run NAME [flags...]
  local name=$1; shift
  local cmd=("$PY" tools/python/chapter01_python.py --size "$SIZE" --warmup "$@" --out "$dest/$name")
  [ "$THREADS" = 0 ] || cmd+=(--threads "$THREADS")
  echo "${cmd[*]}" | sed "s|$dest|expected_output/<platform>/python|" > "$stage/$name.command"
  if TORCH_LOGS=output_code timeout 240 "${cmd[@]}" > "$stage/$name.stdout" 2> "$stage/$name.stderr"; then
    echo "[python_compile] $name: ok"
  else
    echo "[python_compile] $name: FAILED (exit $?)"; tail -20 "$stage/$name.stderr"; status=1
  fi
  mkdir -p "$dest/$name"
  mv "$stage/$name.command" "$dest/$name/COMMAND"
  mv "$stage/$name.stdout" "$dest/$name/stdout.txt"
  mv "$stage/$name.stderr" "$dest/$name/stderr.txt"
}

run eager
run compile --compile
run reduce_overhead --compile --mode reduce-overhead

{
  echo "What: the post's torch.compile experiment (chapter 01's workload, --size $SIZE --warmup),"
  echo "      profiled by torch.profiler in Python: eager, torch.compile, torch.compile(mode=\"reduce-overhead\")"
  echo "gpu, driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo none)"
  echo "torch: $("$PY" -W ignore -c 'import torch;print(torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1)"
  echo "triton: $("$PY" -W ignore -c 'import triton;print(triton.__version__)' 2>&1 | tail -1)"
  echo "threads: ${THREADS} (0: torch's default)"
  echo "compiler: $(${CC:-cc} --version 2>/dev/null | head -1)"
  echo "host: $(uname -srm), $(nproc) cores"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: ${WORKBOOK_GIT_REV:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
  echo "script: tools/python/chapter01_python.py sha256 $(sha256sum tools/python/chapter01_python.py | cut -c1-16)"
  echo "command: scripts/gpu/python_compile.sh (each folder's COMMAND is its run)"
  echo "Files are what the runs wrote; never edited by hand."
} > "$dest/PROVENANCE"

tar -C "$stage" -czf "$OUT/python.tgz" python
cp "$dest/PROVENANCE" "$OUT/PROVENANCE.txt"
echo "[python_compile] wrote $OUT/python.tgz (unpack into expected_output/<platform>/)"
rm -rf "$stage"
exit $status
