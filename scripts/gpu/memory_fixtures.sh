#!/usr/bin/env bash
# On the H200 (the `device` machine): record the CUDA parity fixtures for `table`'s memory
# columns with Python's torch.profiler (profile_memory=True, a training step: forward, backward,
# AdamW), the same script as the CPU ones (tests/data/python/make_memory_fixtures.py), and
# copy them to $OUT. Needs no build. About 30 s.
#
#   run: bash scripts/gpu/memory_fixtures.sh
#
# Writes $OUT/python/cuda_memory.{json.gz,tables.json.gz} and cuda_memory_sched.* (4 files).
# Commit them into tests/data/python/: tests/test_table_tool.cpp ("[memory]") checks every
# *_memory* fixture there byte for byte against Python's tables, for every sort key, and expects
# the CUDA ones to have the CUDA Mem / Self CUDA Mem columns.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/memory_fixtures}
mkdir -p "$OUT/python"
PY=${PY:-python3}
if [ -x "$HOME/.cache/libtorch-workbook/torch-2.11.0/bin/python" ]; then
  PY="$HOME/.cache/libtorch-workbook/torch-2.11.0/bin/python"
fi
"$PY" -c 'import torch; assert torch.cuda.is_available(), "no CUDA device"; print(torch.__version__, torch.cuda.get_device_name())'
"$PY" tests/data/python/make_memory_fixtures.py --device cuda --out "$OUT/python" 2>&1 | tail -n 5
ls -la "$OUT/python"
