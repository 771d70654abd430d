#!/usr/bin/env bash
# How long a learner waits for the build: configure, the chapters, the whole tree, the slowest
# translation units, and a one-line edit to a rebuilt binary. Everything starts cold: an empty
# build folder, an empty ccache and an empty Inductor cache (the AOTI packages of chapters
# 05-07 are compiled at build time). torch must already be installed (./workbook setup).
#
#   bench/build_time.sh [--src DIR] [--jobs N] [--out FILE]
#
#   --src DIR    the source tree to measure (default: this clone). Give a worktree of another
#                commit to measure before/after: git worktree add /tmp/before <commit>
#   --jobs N     build jobs (default: nproc; the goals in docs/performance.md are for 2)
#   --out FILE   also write the Markdown table there (default: only stdout)
#
# The build folder, ccache and Inductor cache live in a temporary folder removed at the end. The
# edits append one line of code (not a comment: ccache would see through a comment) and are
# reverted after each measurement, so the tree is left as it was.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT
JOBS=$(nproc)
OUT=""
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --src) SRC=$(cd "${2:?--src needs a folder}" && pwd); shift 2 ;;
    --jobs) JOBS=${2:?--jobs needs a number}; shift 2 ;;
    --out) OUT=${2:?--out needs a file}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build_time.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "build_time.sh: --jobs must be a positive number (got '$JOBS')" >&2; exit 2; }
[ -f "$SRC/CMakeLists.txt" ] && [ -x "$SRC/workbook" ] || { echo "build_time.sh: $SRC is not a workbook tree" >&2; exit 2; }
if [ -n "$OUT" ]; then
  mkdir -p "$(dirname "$OUT")" || { echo "build_time.sh: cannot create the folder of $OUT" >&2; exit 2; }
fi
PREFIX=$("$SRC/scripts/setup.sh" 2>/dev/null | tail -1) || { echo "build_time.sh: torch is not installed (run ./workbook setup)" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/wb-build-time.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export CCACHE_DIR="$TMP/ccache" TORCHINDUCTOR_CACHE_DIR="$TMP/inductor"
export CCACHE_BASEDIR="$SRC" CCACHE_NOHASHDIR=true
B="$TMP/build"
say() { printf '[build_time] %s\n' "$*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

commit=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo "not a git tree")
say "measuring $SRC ($commit) with $JOBS jobs; empty ccache and Inductor cache in $TMP"

t=$(now)
cmake -S "$SRC" -B "$B" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" >"$TMP/configure.log" 2>&1 \
  || { cat "$TMP/configure.log" >&2; exit 1; }
t_configure=$(since "$t")
say "configure: $t_configure s"

mapfile -t chapters <"$B/chapters.txt"
t=$(now)
cmake --build "$B" -j "$JOBS" --target "${chapters[@]}" >"$TMP/chapters.log" 2>&1 \
  || { tail -50 "$TMP/chapters.log" >&2; exit 1; }
t_chapters=$(since "$t")
say "the ${#chapters[@]} chapters: $t_chapters s"

t=$(now)
cmake --build "$B" -j "$JOBS" >"$TMP/all.log" 2>&1 || { tail -50 "$TMP/all.log" >&2; exit 1; }
t_rest=$(since "$t")
t_full=$(awk -v a="$t_chapters" -v b="$t_rest" 'BEGIN { printf "%.1f", a + b }')
say "the rest of the tree: $t_rest s (full build $t_full s)"

# The slowest steps, from ninja's log (start and end in ms, the output path).
# A command with several outputs has one line per output with the same start and end: keep one,
# with its outputs joined.
slowest=$(sed -e "s#$B/##g" "$B/.ninja_log" \
  | awk -F'\t' 'NR > 1 { k = $1 "\t" $2; if (!(k in o)) { o[k] = $4; d[k] = ($2 - $1) / 1000 }
                         else if (index(o[k], $4) == 0) o[k] = o[k] ", " $4 }
                 END { for (k in o) printf "%.1f\t%s\n", d[k], o[k] }' | sort -rn | head -10)

# One line of code appended to FILE, TARGET rebuilt, the line taken out again (and rebuilt, untimed).
edit_time() {
  local file=$1; shift
  local keep="$TMP/edit.keep"
  cp -p "$file" "$keep"
  printf '\n[[maybe_unused]] static const int wb_build_time_probe_%s = %s;\n' "$RANDOM" "$RANDOM" >>"$file"
  local t0 rc=0
  t0=$(now)
  cmake --build "$B" -j "$JOBS" --target "$@" >"$TMP/edit.log" 2>&1 || rc=$?
  local took
  took=$(since "$t0")
  cp -p "$keep" "$file"
  touch "$file"
  [ $rc -eq 0 ] || { tail -30 "$TMP/edit.log" >&2; exit 1; }
  cmake --build "$B" -j "$JOBS" --target "$@" >/dev/null 2>&1
  echo "$took"
}
e_chapter=$(edit_time "$SRC/chapters/01_cold_64/main.cpp" 01_cold_64)
say "edit chapters/01_cold_64/main.cpp -> 01_cold_64: $e_chapter s"
e_exercise=$(edit_time "$SRC/exercises/ex01_1_hot_loop/main.cpp" ex01_1_hot_loop)
say "edit exercises/ex01_1_hot_loop/main.cpp -> ex01_1_hot_loop: $e_exercise s"
e_common=$(edit_time "$SRC/common/torch/src/chapter.cpp" "${chapters[@]}")
say "edit common/torch/src/chapter.cpp -> the ${#chapters[@]} chapters: $e_common s"

report=$(cat <<EOF
Measured by \`bench/build_time.sh --jobs $JOBS\` on $(nproc) cores ($(uname -m)), $(date -u +%Y-%m-%d), tree $commit; empty build folder, ccache and Inductor cache.

| step | seconds |
| --- | --- |
| configure | $t_configure |
| the ${#chapters[@]} chapters (\`./workbook run\`'s build) | $t_chapters |
| full tree (chapters first, then the rest) | $t_full |
| one-line edit: \`chapters/01_cold_64/main.cpp\` → \`01_cold_64\` | $e_chapter |
| one-line edit: \`exercises/ex01_1_hot_loop/main.cpp\` → \`ex01_1_hot_loop\` | $e_exercise |
| one-line edit: \`common/torch/src/chapter.cpp\` → the ${#chapters[@]} chapters | $e_common |

The slowest 10 build steps (\`.ninja_log\`):

| seconds | output |
| --- | --- |
$(printf '%s\n' "$slowest" | awk -F'\t' '{ gsub(/, /, "`, `", $2); printf "| %s | `%s` |\n", $1, $2 }')
EOF
)
printf '%s\n' "$report"
if [ -n "$OUT" ]; then
  printf '%s\n' "$report" >"$OUT.partial" && mv "$OUT.partial" "$OUT"
fi
