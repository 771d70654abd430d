#!/usr/bin/env bash
# Prints one SHA-256 over the sources that shape the recorded outputs: the code under chapters/,
# common/ and cmake/, the data compiled in with it (common/*/data/*.json) and the top
# CMakeLists.txt (not the pages: `figures update` rewrites their figures from the recordings). Works
# without git (the GPU machine gets a copy of the tree), so a recording's PROVENANCE can be tied
# to the code that made it on any machine.
set -euo pipefail
cd "$(dirname "$0")/.."
find chapters common cmake CMakeLists.txt -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.py' \
       -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name '*.in' -o -name '*.json' \) -print0 \
  | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
