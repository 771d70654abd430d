#!/usr/bin/env bash
# On the H200 (the `device` machine): record the GPU parity fixtures for the `table` tool and a
# big GPU trace for the bench, with Python's torch.profiler, and copy them to $OUT.
#
#   run: bash scripts/gpu/tools_fixtures.sh
#
# Writes $OUT/python/cuda_shapes_flops.{json.gz,tables.json.gz}, cuda_plain.* (commit these two
# pairs into tests/data/python/; tests/test_table_tool.cpp then checks them: extend its
# recordings list to "cuda_*"), and $OUT/bench/cuda_bench_300.json.gz (~100 MB of JSON, for
# docs/performance.md; not committed).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tools_fixtures}
mkdir -p "$OUT/python" "$OUT/bench"
PY=${PY:-python3}
if [ -x "$HOME/.cache/libtorch-workbook/torch-2.11.0/bin/python" ]; then
  PY="$HOME/.cache/libtorch-workbook/torch-2.11.0/bin/python"
fi
"$PY" -c 'import torch; assert torch.cuda.is_available(), "no CUDA device"; print(torch.__version__, torch.cuda.get_device_name())'
"$PY" tests/data/python/make_fixtures.py --device cuda --out "$OUT/python" 2>&1 | tail -n 5
"$PY" tests/data/python/make_fixtures.py --device cuda --bench-steps 300 --out "$OUT/bench" 2>&1 | tail -n 2
ls -la "$OUT/python" "$OUT/bench"
