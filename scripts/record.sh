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

failed=()
for ch in $(cat "$build/chapters.txt"); do
  [ -z "$only" ] || [ "$only" = "$ch" ] || continue
  echo "[record] $ch" >&2
  mkdir -p "$stage/$ch"
  cmd=("$build/bin/$ch" --out "$stage/$ch" "$@")
  if ! "${cmd[@]}" > "$stage/$ch/stdout.txt" 2> "$stage/$ch/stderr.txt"; then
    # A failed chapter is reported and left out; the others are still recorded.
    echo "[record] $ch failed (not recorded):" >&2; tail -20 "$stage/$ch/stderr.txt" >&2
    rm -rf "$stage/$ch"; failed+=("$ch"); continue
  fi
  # Paths in the output name the staging folder: show them as the learner's default instead.
  sed -i "s#$stage/#out/#g" "$stage/$ch/stdout.txt"
  find "$stage/$ch" -name .lock -delete
  [ -s "$stage/$ch/stderr.txt" ] || rm -f "$stage/$ch/stderr.txt"
  find "$stage/$ch" -name '*.json' -size +1000k -exec gzip -9 {} +   # big traces travel gzipped
  echo "${cmd[*]}" | sed "s#$stage/#out/#g" > "$stage/$ch/COMMAND"
done

{
  echo "platform: $platform"
  echo "gpu, driver: ${gpu:-none}"
  echo "torch: $torch_info"
  echo "compiler: $(c++ --version | head -1)"
  echo "host: $(uname -srm), $(nproc) cores"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: ${WORKBOOK_GIT_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')}"
  echo "command: scripts/record.sh $build --platform $platform${only:+ --only $only} $*"
} > "$stage/PROVENANCE"

mkdir -p "$dest"
for ch in "$stage"/*/; do
  name=$(basename "$ch")
  rm -rf "$dest/$name.old"; [ -d "$dest/$name" ] && mv "$dest/$name" "$dest/$name.old"
  mv "$ch" "$dest/$name"; rm -rf "$dest/$name.old"
done
if [ -n "$only" ] && [ -f "$dest/PROVENANCE" ]; then
  { echo; echo "# $only re-recorded:"; cat "$stage/PROVENANCE"; } >> "$dest/PROVENANCE"
else
  mv "$stage/PROVENANCE" "$dest/PROVENANCE"
fi
echo "[record] wrote $dest" >&2
[ ${#failed[@]} -eq 0 ] || { echo "[record] FAILED: ${failed[*]}" >&2; exit 1; }
