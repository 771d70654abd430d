#!/usr/bin/env bash
# The tree's C++/CUDA style is .clang-format's, applied by clang-format 14 (Debian 12's).
#
#   scripts/format.sh           reformat every source in place: tracked, and untracked but not
#                               ignored (a new file counts before it is added)
#   scripts/format.sh --check   change nothing; list the files that differ and exit 1 (a ctest runs this)
#
# Other clang-format versions format a few constructs differently, so the check names version 14.
set -euo pipefail
cd "$(dirname "$0")/.."
cf="${CLANG_FORMAT:-clang-format-14}"
command -v "$cf" >/dev/null || { echo "format.sh: $cf not found (apt-get install clang-format-14)" >&2; exit 2; }
# Tracked sources and untracked ones that .gitignore does not exclude; a tracked file already
# deleted from the work tree is left out.
mapfile -t listed < <({ git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh'
                        git ls-files --others --exclude-standard '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh'; } |
                      grep -v '^tests/data/\|^expected_output/' | sort -u)
files=()
for f in "${listed[@]}"; do if [ -f "$f" ]; then files+=("$f"); fi; done
[ "${#files[@]}" -gt 0 ] || { echo "format.sh: no sources found (not a git checkout?)" >&2; exit 2; }
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ "${#bad[@]}" -gt 0 ]; then
    printf 'not formatted by .clang-format (run scripts/format.sh):\n'; printf '  %s\n' "${bad[@]}"; exit 1
  fi
  echo "${#files[@]} sources formatted by .clang-format"
else
  "$cf" -i "${files[@]}"
fi
