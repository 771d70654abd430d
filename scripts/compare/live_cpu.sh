#!/usr/bin/env bash
# The chapters' live CPU runs, for a before/after comparison of their verdicts: each chapter and
# experiment with --device cpu --check --quiet into OUT_DIR/<run>/, then one line per lesson
# (report, fact, status) into OUT_DIR/verdicts.txt and the exit codes into OUT_DIR/rc.txt.
# Timings differ between runs; the verdicts should not.
#
#   scripts/compare/live_cpu.sh BUILD_DIR OUT_DIR
#   diff BEFORE/verdicts.txt AFTER/verdicts.txt; diff BEFORE/rc.txt AFTER/rc.txt
set -uo pipefail
B=$(cd "$1" && pwd)
OUT=$2
mkdir -p "$OUT"
: > "$OUT/rc.txt"
for ch in $(cat "$B/chapters.txt"); do
  runs=("$ch")
  for e in $("$B/bin/$ch" --list-experiments 2>/dev/null); do runs+=("$ch --experiment $e"); done
  for r in "${runs[@]}"; do
    name=${r// --experiment /.}
    # shellcheck disable=SC2086
    timeout 600 nice -n 19 "$B/bin/"$r --device cpu --check --quiet --out "$OUT/run/$ch" > "$OUT/$name.log" 2>&1
    echo "$name rc=$?" >> "$OUT/rc.txt"
  done
done
find "$OUT/run" -name 'lessons.json' -o -name comparison.json | sort | while read -r f; do
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); [print(j.get("chapter","?"), f["id"], f["status"]) for f in j["facts"]]' "$f"
done > "$OUT/verdicts.txt"
wc -l "$OUT/verdicts.txt" "$OUT/rc.txt"
