#!/usr/bin/env bash
# Before/after check for a refactor: run the tools (table, inspect, diff, timeline) and the
# lessons (recomputed from each recorded report's trace, with its recorded options) over every
# recording in expected_output/, with one build, into one folder. Run it with the build of the
# base commit and with the build of the work tree, then diff the two folders: a refactor that
# keeps behaviour leaves them byte-identical.
#
#   scripts/compare_outputs.sh BUILD_DIR OUT_DIR [EXPECTED_ROOT]
#       BUILD_DIR      a configured build of the tree to test (tools are built here if missing)
#       OUT_DIR        created; one file per (tool, trace), plus exit codes
#       EXPECTED_ROOT  the recordings (default: this tree's expected_output); use the same one
#                      for both runs, so the inputs (and the paths printed) are the same
#   diff -r OUT_BEFORE OUT_AFTER
#
# Example (base = the commit before the refactor):
#   git worktree add /tmp/wtbase b33b702
#   cmake -S /tmp/wtbase -B /tmp/bbase -G Ninja -DCMAKE_PREFIX_PATH="$P"
#   scripts/compare_outputs.sh /tmp/bbase /tmp/cmp/before
#   scripts/compare_outputs.sh build /tmp/cmp/after
#   diff -r /tmp/cmp/before /tmp/cmp/after && echo identical
#
# The lessons tool (scripts/compare/relesson.cpp) is compiled and linked with the flags the
# build uses for tools/inspect, so it builds against either tree without touching it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "$1" && pwd)
OUT=$2
EXP=${3:-$here/../expected_output}
EXP=$(cd "$EXP" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

nice -n 19 ninja -C "$B" -j2 table inspect diff timeline >/dev/null

# relesson: inspect's compile and link lines with the source and object swapped.
obj="$B/relesson.o"
cmds=$(ninja -C "$B" -t commands inspect)
compile=$(grep -F -- 'tools/inspect/main.cpp' <<<"$cmds" | grep -F -- ' -c ' | tail -1)
link=$(tail -1 <<<"$cmds")
src_old=$(grep -oE -- '-c [^ ]*tools/inspect/main.cpp' <<<"$compile" | cut -c4-)
obj_old=$(grep -oE -- '-o [^ ]*main\.cpp\.o' <<<"$compile" | cut -c4-)
compile=${compile//$src_old/$here/compare/relesson.cpp}
compile=${compile//$obj_old/$obj}
compile=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//' <<<"$compile")
link=${link//$obj_old/$obj}
link=$(sed -E 's# -o [^ ]*bin/inspect# -o '"$B"'/relesson#' <<<"$link")
(cd "$B" && eval "nice -n 19 $compile" && eval "$link")

T="$B/bin"
run() {  # run NAME CMD...: stdout+stderr into OUT/NAME, the exit code appended
  local name=$1
  shift
  mkdir -p "$(dirname "$OUT/$name")"
  set +e
  "$@" >"$OUT/$name" 2>&1
  echo "exit $?" >>"$OUT/$name"
  set -e
}

cd "$EXP"
mapfile -t traces < <(find . -name 'trace*.json' -o -name 'trace*.json.gz' | sort)
for t in "${traces[@]}"; do
  r=${t#./}
  run "table/$r.txt" "$T/table" "$t"
  run "table/$r.self_cpu.txt" "$T/table" "$t" --sort-by self_cpu_time_total --row-limit 10
  run "inspect/$r.txt" "$T/inspect" "$t"
  run "inspect/$r.json" "$T/inspect" "$t" --format json
  run "inspect/$r.md" "$T/inspect" "$t" --format markdown
  run "timeline/$r.log" "$T/timeline" "$t" -o "$OUT/timeline/$r.svg"
  d=$(dirname "$t")
  if [ -f "$d/lessons.json" ] && [[ $(basename "$t") == trace.json* ]]; then
    # the chapter's lessons as inspect judges them (its --size/--batch/--dtype from the recording)
    read -r key n batch bytes < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); p=j["options"]["problem"]; print(j["chapter"], p["n"], p["batch"], p["dtype_bytes"])' "$d/lessons.json")
    dt=bf16
    [ "$bytes" = 4 ] && dt=fp32
    args=(--chapter "$key" --batch "$batch" --dtype "$dt")
    [ "$n" -gt 0 ] && args+=(--size "$n")
    run "inspect/$r.chapter.txt" "$T/inspect" "$t" "${args[@]}"
  fi
done

# diff: each chapter's variants against its first, and each platform's run against the other's.
for p in h200 cpu; do
  for ch in "$p"/*/; do
    ch=${ch%/}
    mapfile -t vs < <(find "$ch" -mindepth 2 -maxdepth 2 -name 'trace.json*' | sort)
    for v in "${vs[@]:1}"; do
      run "diff/${v#./}.vs_first.txt" "$T/diff" "${vs[0]}" "$v"
      run "diff/${v#./}.vs_first.json" "$T/diff" "${vs[0]}" "$v" --format json
    done
  done
done
for t in h200/*/trace.json*; do
  c=$(echo cpu/"${t#h200/}" | sed 's/\.gz$//')
  for cc in "$c" "$c.gz"; do
    [ -f "$cc" ] && run "diff/$t.vs_cpu.txt" "$T/diff" "$t" "$cc"
  done
done

# the lessons of every recorded report, recomputed
mapfile -t reports < <(find . -name lessons.json -not -path './*/python/*' -printf '%h\n' | sort)
run "lessons/all.txt" "$B/relesson" "${reports[@]}"
# the paths the tools print under OUT differ between the two runs: name them OUT
find "$OUT" -type f \( -name '*.log' -o -name '*.txt' \) -exec sed -i "s#$OUT#OUT#g" {} +
echo "outputs in $OUT ($(find "$OUT" -type f | wc -l) files)"
