#!/usr/bin/env bash
# On the H200 (the `device` machine): record the user-shaped GPU fixtures (issue 25) with
# Python's torch.profiler -- an MLP and a ConvNet training step with with_stack=True, Python's
# key_averages(group_by_stack_n=N).table() next to each, and the MLP at batch 32 and 64 -- and
# copy them to $OUT.
#
#   run: bash scripts/gpu/user_fixtures.sh
#
# Writes $OUT/python/cuda_{mlp,convnet}_stack.{json.gz,tables.json.gz},
# cuda_mlp_stack_plain.{json.gz,tables.json.gz} and cuda_mlp_b{32,64}.json.gz: commit them into
# tests/data/python/ (tests/test_table_tool.cpp checks --group-by-stack-n against Python's
# tables on them, tests/test_diff.cpp the batch pair).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/user_fixtures}
mkdir -p "$OUT/python"
PY=${PY:-python3}
if [ -x "$HOME/.cache/libtorch-workbook/torch-2.11.0/bin/python" ]; then
  PY="$HOME/.cache/libtorch-workbook/torch-2.11.0/bin/python"
fi
"$PY" -c 'import torch; assert torch.cuda.is_available(), "no CUDA device"; print(torch.__version__, torch.cuda.get_device_name())'
"$PY" tests/data/python/make_user_fixtures.py --device cuda --out "$OUT/python" 2>&1 | tail -n 6
ls -la "$OUT/python"
