#!/usr/bin/env bash
# Every Markdown file renders as a reader sees it: each table written in the source comes out as
# a table when rendered by a real CommonMark + GFM renderer (cmark-gfm, as GitHub's is built on).
#
#   scripts/check_markdown.sh             every tracked .md (and untracked, not ignored) file
#   scripts/check_markdown.sh FILE...     those files
#
# A table is counted in the source by its delimiter row (| --- | --- |) outside fenced code. The
# file fails when it renders fewer <table>s than that, or when a rendered paragraph starts with
# a pipe: a table that broke (a comment or a blank line between its rows) and shows as text.
# A file that holds a figure marker (<!--fig) fails too: a page is read raw, and its figures are
# plain numbers, tied to the recordings by docs/claims/*.json (docs/claims/README.md).
# Exit 1 naming each broken file and the rows that show as text; 2 when cmark-gfm is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
renderer="${CMARK_GFM:-cmark-gfm}"
command -v "$renderer" >/dev/null || { echo "check_markdown.sh: $renderer not found (apt-get install cmark-gfm)" >&2; exit 2; }
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <({ git ls-files '*.md'; git ls-files --others --exclude-standard '*.md'; } |
                       grep -v '^tests/data/' | sort -u)
fi
[ "${#files[@]}" -gt 0 ] || { echo "check_markdown.sh: no Markdown files found" >&2; exit 2; }

bad=0 checked=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  checked=$((checked + 1))
  # Delimiter rows outside ``` / ~~~ fences.
  want=$(awk '/^ *(```|~~~)/ { fence = !fence; next }
              !fence && /^ *\|? *:?-+:? *(\| *:?-+:? *)+\|? *$/ { n++ }
              END { print n + 0 }' "$f")
  html=$("$renderer" -e table "$f")
  got=$(grep -c '<table>' <<<"$html" || true)
  broken=$(grep -n '^<p>|' <<<"$html" | cut -c1-160 || true)
  markers=$(grep -c '<!--fig' "$f" || true)
  [ "$markers" != 0 ] || markers=""
  if [ "$got" -lt "$want" ] || [ -n "$broken" ] || [ -n "$markers" ]; then
    bad=$((bad + 1))
    echo "$f: $want table(s) written, $got rendered"
    [ -z "$broken" ] || sed 's/^/    shows as text: /' <<<"$broken"
    [ -z "$markers" ] || echo "    $markers line(s) with a figure marker (<!--fig), the first: line" \
      "$(grep -n -m1 '<!--fig' "$f" | cut -d: -f1); tie the figure with a claim in docs/claims/ instead"
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "$bad of $checked Markdown file(s) have a table that does not render (cmark-gfm -e table FILE shows it) or a figure marker"
  exit 1
fi
echo "$checked Markdown files: every table renders, no figure marker"
