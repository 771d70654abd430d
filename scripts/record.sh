#!/usr/bin/env bash
# Records the expected outputs from REAL runs of every chapter on this machine:
#   expected_output/<platform>/<chapter>/{stdout.txt,table.txt,trace.json[.gz],lessons.*,timeline.svg}
#   expected_output/<platform>/PROVENANCE
# Never edit those files by hand; re-run this instead.
#
#   scripts/record.sh BUILD_DIR [--platform NAME] [--only CHAPTER] [-- extra chapter flags]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: scripts/record.sh BUILD_DIR [--platform NAME] [--only CHAPTER]}"; shift
platform=""; only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --platform) platform="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "record: unknown flag $1" >&2; exit 2 ;;
  esac
done
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
if [ -z "$platform" ]; then
  case "$gpu" in
    *H200*) platform=h200 ;; *H100*) platform=h100 ;; *A100*) platform=a100 ;;
    "") platform=cpu ;;
    *) platform=$(echo "${gpu%%,*}" | tr 'A-Z ' 'a-z_') ;;
  esac
fi
dest="expected_output/$platform"
mkdir -p expected_output
stage=$(mktemp -d "expected_output/.record-$platform-XXXXXX")
trap 'rm -rf "$stage"' EXIT

py=$(grep -E '^WORKBOOK_TORCH_PYTHON:' "$build/CMakeCache.txt" | cut -d= -f2- || true)
[ -n "$py" ] || py=python3
torch_info=$("$py" -c 'import torch;print(torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null || echo unknown)

# Provenance: a recording is tied to a commit and to a hash of the sources that made it
# (scripts/source_hash.sh), so it must come from a clean, committed tree. On a machine without
# git, or where the tree is a copy (the GPU machine), name the commit with WORKBOOK_GIT_REV.
src_hash=$(scripts/source_hash.sh)
if [ -n "${WORKBOOK_GIT_REV:-}" ]; then
  # A copy of a commit (the GPU machine's tree may carry an unrelated .git): the commit is named
  # by the caller, and the source hash below ties the recording to the code either way.
  rev="$WORKBOOK_GIT_REV (named by WORKBOOK_GIT_REV)"
elif git rev-parse --git-dir > /dev/null 2>&1; then
  rev=$(git rev-parse HEAD)
  if [ -n "$(git status --porcelain -- chapters common cmake CMakeLists.txt)" ] && [ "${WORKBOOK_RECORD_DIRTY:-0}" != 1 ]; then
    echo "record: chapters/, common/ or cmake/ have uncommitted changes; commit first (a recording must name the code that made it), or set WORKBOOK_RECORD_DIRTY=1 for a scratch recording" >&2
    exit 2
  fi
  [ -z "$(git status --porcelain -- chapters common cmake CMakeLists.txt)" ] || rev="$rev (with local changes)"
else
  echo "record: no git here: set WORKBOOK_GIT_REV to the commit this tree is a copy of" >&2
  exit 2
fi

# One run: the chapter's default, or one of its experiments (into <chapter>/<experiment>/).
record_run() {  # record_run CHAPTER FOLDER [flags...]
  local ch=$1 dir=$2; shift 2
  local cmd=("$build/bin/$ch" --out "$stage/$ch" "$@" "${extra[@]}")
  mkdir -p "$dir"
  if ! "${cmd[@]}" > "$dir/stdout.txt" 2> "$dir/stderr.txt"; then
    echo "[record] ${cmd[*]} failed:" >&2; tail -20 "$dir/stderr.txt" >&2
    return 1
  fi
  # Paths in the output name the staging folder: show them as the learner's default instead.
  sed -i "s#$stage/#out/#g" "$dir/stdout.txt"
  [ -s "$dir/stderr.txt" ] || rm -f "$dir/stderr.txt"
  echo "${cmd[*]}" | sed "s#$stage/#out/#g" > "$dir/COMMAND"
}

extra=("$@")
failed=()
diff_pairs=("05_compiled_addmm eager addmm" "06_linear eager no_bias" "06_linear eager aoti"
            "07_geglu_mlp eager aoti" "07_geglu_mlp eager handwritten")
for ch in $(cat "$build/chapters.txt"); do
  [ -z "$only" ] || [ "$only" = "$ch" ] || continue
  echo "[record] $ch" >&2
  ok=1
  record_run "$ch" "$stage/$ch" || ok=0
  for e in $("$build/bin/$ch" --list-experiments 2>/dev/null); do
    echo "[record] $ch --experiment $e" >&2
    record_run "$ch" "$stage/$ch/$e" --experiment "$e" || ok=0
  done
  if [ $ok = 0 ]; then  # a failed chapter is reported and left out; the others are still recorded
    rm -rf "$stage/$ch"; failed+=("$ch"); continue
  fi
  find "$stage/$ch" -name .lock -delete
  # The chapters' before/after pairs, as `diff` shows them (the READMEs point at these files).
  for pair in "${diff_pairs[@]}"; do
    read -r pch a b <<< "$pair"
    [ "$pch" = "$ch" ] && [ -f "$stage/$ch/$a/trace.json" ] && [ -f "$stage/$ch/$b/trace.json" ] || continue
    rc=0; "$build/bin/diff" "$stage/$ch/$a/trace.json" "$stage/$ch/$b/trace.json" > "$stage/$ch/diff_${a}_${b}.txt" || rc=$?
    [ $rc = 3 ] || { echo "[record] diff $ch $a $b: exit $rc (3 = the traces differ)" >&2; failed+=("$ch:diff_${a}_${b}"); }
  done
  # The reports name their trace by the path the run wrote: show the learner's default (out/).
  find "$stage/$ch" -type f \( -name '*.txt' -o -name 'lessons.json' -o -name 'comparison.json' \) \
    -exec sed -i "s#$stage/#out/#g" {} +
  find "$stage/$ch" -name '*.json' -size +1000k -exec gzip -9 {} +   # big traces travel gzipped
done

{
  echo "platform: $platform"
  echo "gpu, driver: ${gpu:-none}"
  echo "torch: $torch_info"
  echo "compiler: $(c++ --version | head -1)"
  echo "host: $(uname -srm), $(nproc) cores"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $rev"
  echo "sources: sha256 $src_hash (scripts/source_hash.sh)"
  echo "command: scripts/record.sh $build --platform $platform${only:+ --only $only} $*"
} > "$stage/PROVENANCE"

mkdir -p "$dest"
for ch in "$stage"/*/; do
  name=$(basename "$ch")
  rm -rf "$dest/$name.old"; [ -d "$dest/$name" ] && mv "$dest/$name" "$dest/$name.old"
  mv "$ch" "$dest/$name"; rm -rf "$dest/$name.old"
done
if [ -n "$only" ] && [ -f "$dest/PROVENANCE" ]; then
  # The first block says how the whole platform was recorded; each re-recorded chapter keeps one
  # block, its latest: an earlier block for the same chapter is dropped, not piled up.
  awk -v ch="$only" '
    /^$/ { blank++; next }
    /^# .* re-recorded:$/ { skip = ($0 == "# " ch " re-recorded:") }
    { if (skip) { blank = 0; next } while (blank > 0) { print ""; blank-- } print }
  ' "$dest/PROVENANCE" > "$dest/PROVENANCE.tmp"
  { echo; echo "# $only re-recorded:"; cat "$stage/PROVENANCE"; } >> "$dest/PROVENANCE.tmp"
  mv "$dest/PROVENANCE.tmp" "$dest/PROVENANCE"
else
  mv "$stage/PROVENANCE" "$dest/PROVENANCE"
fi
echo "[record] wrote $dest" >&2
# The pages quote these recordings: rewrite every figure the claims files tie by "ref" that moved,
# in the page and in its claim (tools/figures, docs/claims/README.md; ./workbook docs --update
# does the same).
if [ -x "$build/bin/figures" ]; then
  "$build/bin/figures" update --root . || echo "[record] figures update reported problems (see above)" >&2
else
  echo "[record] $build/bin/figures not built: run '$build/bin/figures update' to re-sync the pages' figures" >&2
fi
[ ${#failed[@]} -eq 0 ] || { echo "[record] FAILED: ${failed[*]}" >&2; exit 1; }
