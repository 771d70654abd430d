#!/usr/bin/env bash
# One-time: the pages written from NAME.src.md sources become plain pages, their placeholders
# claims in docs/claims/ (`figures convert`, docs/claims/README.md). For a merge of the branch
# that did it onto a main whose sources moved on (a re-record rewrote their numbers): take the
# sources, their pages and the claims files as that main has them, and convert again.
#
#   scripts/convert_pages.sh MAIN_REF     MAIN_REF: the main commit the branch was merged onto
#
# Environment: BUILD_DIR (default build: builds its figures target), or FIGURES (a figures
# binary built from this tree: used as it is). Then run
# `./workbook docs --check` and `build/bin/figures claims`; remove this script and `figures
# convert` once no branch holds a NAME.src.md. Exit 1 when the conversion refuses a source (a
# page that is not what its source generates, a figure off its recording: it says which).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help|"") sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; [ -n "${1:-}" ] && exit 0 || exit 2 ;;
esac
main="$1"
build="${BUILD_DIR:-build}"
git rev-parse --verify -q "$main^{commit}" >/dev/null || { echo "convert_pages.sh: no commit '$main'" >&2; exit 2; }
mapfile -t sources < <(git ls-tree -r --name-only "$main" | grep '\.src\.md$' || true)
if [ ${#sources[@]} -eq 0 ]; then
  echo "convert_pages.sh: $main has no NAME.src.md: nothing to convert" >&2
  exit 0
fi
pages=()
for s in "${sources[@]}"; do pages+=("${s%.src.md}.md"); done
mapfile -t claims < <(git ls-tree --name-only "$main" docs/claims/ | grep '\.json$')
echo "[convert] ${#sources[@]} sources, their pages and ${#claims[@]} claims files as $main has them" >&2
git checkout "$main" -- "${sources[@]}" "${pages[@]}" "${claims[@]}"
# the claims files an earlier conversion made, which that main does not have
for f in docs/claims/*.json; do
  git cat-file -e "$main:$f" 2>/dev/null || { rm -f "$f"; echo "[convert] removed $f (made by the conversion)" >&2; }
done
figures="${FIGURES:-}"
if [ -z "$figures" ]; then
  [ -f "$build/build.ninja" ] || { echo "convert_pages.sh: configure $build first (./workbook build)" >&2; exit 2; }
  cmake --build "$build" --target figures >/dev/null
  figures="$build/bin/figures"
fi
"$figures" convert --root .
git add -A -- "${sources[@]}" "${pages[@]}" docs/claims/
echo "[convert] done: the sources are removed, the pages plain, the changes staged" >&2
