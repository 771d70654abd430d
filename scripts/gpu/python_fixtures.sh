#!/usr/bin/env bash
# On the H200 (the `device` machine): record GPU fixtures with Python's torch.profiler, for the
# tools' parity tests, and copy them to $OUT. Needs no build.
#
#   run: bash scripts/gpu/python_fixtures.sh KIND
#
#   tools   tests/data/python/make_fixtures.py: $OUT/python/cuda_shapes_flops.{json.gz,tables.json.gz},
#           cuda_plain.* (commit these two pairs into tests/data/python/; tests/test_table_tool.cpp
#           then checks them: extend its recordings list to "cuda_*"), and
#           $OUT/bench/cuda_bench_300.json.gz (~100 MB of JSON, for docs/performance.md; not committed).
#   user    tests/data/python/make_user_fixtures.py: an MLP and a ConvNet training step with
#           with_stack=True, Python's key_averages(group_by_stack_n=N).table() next to each, and the
#           MLP at batch 32 and 64: $OUT/python/cuda_{mlp,convnet}_stack.{json.gz,tables.json.gz},
#           cuda_mlp_stack_plain.{json.gz,tables.json.gz} and cuda_mlp_b{32,64}.json.gz. Commit them
#           into tests/data/python/ (tests/test_table_tool.cpp checks --group-by-stack-n against
#           Python's tables on them, tests/test_diff.cpp the batch pair).
#   memory  tests/data/python/make_memory_fixtures.py (profile_memory=True, a training step:
#           forward, backward, AdamW; the same script as the CPU ones): $OUT/python/cuda_memory.
#           {json.gz,tables.json.gz} and cuda_memory_sched.* (4 files). Commit them into
#           tests/data/python/: tests/test_table_tool.cpp ("[memory]") checks every *_memory*
#           fixture there byte for byte against Python's tables, for every sort key, and expects
#           the CUDA ones to have the CUDA Mem / Self CUDA Mem columns. About 30 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
kind=${1:-}
case "$kind" in
  tools) script=make_fixtures.py ;;
  user) script=make_user_fixtures.py ;;
  memory) script=make_memory_fixtures.py ;;
  *) echo "usage: $0 tools|user|memory" >&2; exit 2 ;;
esac
OUT=${OUT:-${TMPDIR:-/tmp}/${kind}_fixtures}
mkdir -p "$OUT/python"
PY=${PY:-python3}
venv_python="$HOME/.cache/libtorch-workbook/torch-$(cat scripts/torch_version.txt)/bin/python"
if [ -x "$venv_python" ]; then
  PY="$venv_python"
fi
"$PY" -c 'import torch; assert torch.cuda.is_available(), "no CUDA device"; print(torch.__version__, torch.cuda.get_device_name())'
"$PY" "tests/data/python/$script" --device cuda --out "$OUT/python" 2>&1 | tail -n 6
if [ "$kind" = tools ]; then
  mkdir -p "$OUT/bench"
  "$PY" tests/data/python/make_fixtures.py --device cuda --bench-steps 300 --out "$OUT/bench" 2>&1 | tail -n 2
  ls -la "$OUT/bench"
fi
ls -la "$OUT/python"
