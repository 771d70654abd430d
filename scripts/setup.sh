#!/usr/bin/env bash
# Installs what the workbook needs, skipping whatever is already there (safe to re-run).
#
#   scripts/setup.sh                      install (as root or with sudo), print the Torch prefix
#   scripts/setup.sh --plan [OS_RELEASE]  print the plan for that os-release file (default
#                                         /etc/os-release) and exit: installs nothing, reads no
#                                         package database
#
# Supported systems (the plan): Debian 12 (bookworm: Catch2 v3 from bookworm-backports) and
# Ubuntu 24.04 (noble: every package from the distribution). On any other system the setup says
# which packages to install by hand and stops before doing anything (WORKBOOK_OTHER_SYSTEM=1:
# go on with what is installed, straight to LibTorch). WORKBOOK_OS_RELEASE names another
# os-release file than /etc/os-release (the tests use it).
#
#   Packages  : Catch2 v3, spdlog, nlohmann-json, CLI11, simdjson, zlib, ccache, ninja, cmake,
#               clang-format-14 (the style check), lld (links the LibTorch programs faster; the
#               build uses GNU ld without it), cmark-gfm (the test that every Markdown table
#               renders), python3-venv (the torch venv)
#   LibTorch  : the version in scripts/torch_version.txt (TORCH_VERSION overrides it); first match of
#                 1. Torch_DIR or a CMAKE_PREFIX_PATH that holds TorchConfig.cmake (used as given)
#                 2. the shared venv  ${XDG_CACHE_HOME:-~/.cache}/libtorch-workbook/torch-$TORCH_VERSION
#                 3. an importable `torch` in python3 (as on the GPU machine), if its version is
#                    TORCH_VERSION (a CUDA build's +cuNNN suffix aside); another version is said
#                    and skipped
#                 4. otherwise: create that venv and `pip install torch==$TORCH_VERSION`
#
# The venv lives outside the clone so every clone (CI makes a fresh one each run) reuses it.
# Prints, as its last line, the CMAKE_PREFIX_PATH entry for Torch (the caller may capture it).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[setup] error:\033[0m %s\n' "$1" >&2; exit "${2:-1}"; }

# The project's one torch version: scripts/torch_version.txt.
read -r TORCH_VERSION_FILE <"$HERE/torch_version.txt" || die "cannot read $HERE/torch_version.txt"
TORCH_VERSION="${TORCH_VERSION:-$TORCH_VERSION_FILE}"

# ---------------------------------------------------------------- the plan
# Every package the workbook needs, by its Debian/Ubuntu name (Catch2 apart: its source differs).
PACKAGES="libspdlog-dev nlohmann-json3-dev libcli11-dev libsimdjson-dev zlib1g-dev ccache ninja-build cmake g++ clang-format-14 lld cmark-gfm python3-venv"

# setup_plan OS_RELEASE_FILE: the plan for that system, as key=value lines:
#   system=<PRETTY_NAME>     supported=yes|no
#   packages=<names from the distribution>
#   catch2=<where libcatch2-dev (v3) comes from: distribution | bookworm-backports | by hand>
#   add_source=<an apt source to add first, or empty>
#   by_hand=<what to install by hand on an unsupported system, or empty>
# Reads only that file; runs no package tool.
setup_plan() {
  local file=$1 ID="" VERSION_ID="" VERSION_CODENAME="" PRETTY_NAME=""
  [ -r "$file" ] || { echo "error=cannot read $file"; return 2; }
  # The os-release format is shell assignments; read the four keys without running the file.
  local key value
  while IFS='=' read -r key value; do
    value=${value%\"}; value=${value#\"}; value=${value%\'}; value=${value#\'}
    case "$key" in
      ID) ID=$value ;; VERSION_ID) VERSION_ID=$value ;;
      VERSION_CODENAME) VERSION_CODENAME=$value ;; PRETTY_NAME) PRETTY_NAME=$value ;;
    esac
  done <"$file"
  echo "system=${PRETTY_NAME:-${ID:-unknown} ${VERSION_ID}}"
  case "$ID:$VERSION_ID" in
    debian:12)
      echo "supported=yes"
      echo "packages=$PACKAGES"
      echo "catch2=bookworm-backports"
      echo "add_source=deb DEBIAN_MIRROR bookworm-backports main"
      echo "by_hand=" ;;
    ubuntu:24.04)
      echo "supported=yes"
      echo "packages=$PACKAGES"
      echo "catch2=distribution"
      echo "add_source="
      echo "by_hand=" ;;
    *)
      echo "supported=no"
      echo "packages="
      echo "catch2=by hand"
      echo "add_source="
      echo "by_hand=Catch2 v3 (3.x, with its CMake package), spdlog, nlohmann-json 3, CLI11 2, simdjson," \
           "zlib, ccache, ninja, cmake >= 3.25, g++ >= 12, clang-format 14, lld, cmark-gfm, python3 with venv" ;;
  esac
}

plan_value() { printf '%s\n' "$1" | sed -n "s/^$2=//p"; }

if [ "${1:-}" = --plan ]; then
  setup_plan "${2:-/etc/os-release}"
  exit $?
fi
[ $# -eq 0 ] || die "unknown argument '$1' (usage: scripts/setup.sh [--plan [OS_RELEASE_FILE]])" 2

CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/libtorch-workbook"
VENV="$CACHE_ROOT/torch-$TORCH_VERSION"

# ---------------------------------------------------------------- packages
plan=$(setup_plan "${WORKBOOK_OS_RELEASE:-/etc/os-release}") || die "$(plan_value "$plan" error)"
system=$(plan_value "$plan" system)
if [ "$(plan_value "$plan" supported)" != yes ]; then
  if [ "${WORKBOOK_OTHER_SYSTEM:-0}" = 1 ]; then
    log "$system: not a supported system; WORKBOOK_OTHER_SYSTEM=1, so using what is installed"
  else
    die "$system is not a supported system (Debian 12 and Ubuntu 24.04 are). Install by hand:
  $(plan_value "$plan" by_hand)
then run again with WORKBOOK_OTHER_SYSTEM=1 (and Torch_DIR or CMAKE_PREFIX_PATH naming LibTorch $TORCH_VERSION, or nothing: then torch==$TORCH_VERSION comes from PyPI). Nothing was installed."
  fi
else
  need_debs=()
  have_deb() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
  for p in $(plan_value "$plan" packages); do
    have_deb "$p" || need_debs+=("$p")
  done
  # Catch2 must be v3 (bookworm itself ships v2).
  catch2_v3=0
  if have_deb libcatch2-dev; then
    case "$(dpkg-query -W -f='${Version}' libcatch2-dev)" in 3.*) catch2_v3=1 ;; esac
  fi
  catch2_from=$(plan_value "$plan" catch2)
  if [ ${#need_debs[@]} -gt 0 ] || [ $catch2_v3 -eq 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      SUDO=sudo
      command -v sudo >/dev/null || die "$system: missing packages (${need_debs[*]} libcatch2-dev>=3) and not root: install them, or re-run as root"
    else SUDO=""; fi
    catch2_target=()
    if [ $catch2_v3 -eq 0 ] && [ "$catch2_from" = bookworm-backports ]; then
      if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        log "adding bookworm-backports (Catch2 v3 lives there)"
        mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
        [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
        plan_value "$plan" add_source | sed "s|DEBIAN_MIRROR|$mirror|" |
          $SUDO tee /etc/apt/sources.list.d/workbook-backports.list >/dev/null
      fi
      catch2_target=(-t bookworm-backports libcatch2-dev)
    elif [ $catch2_v3 -eq 0 ]; then
      need_debs+=(libcatch2-dev)
    fi
    log "$system: installing ${need_debs[*]} ${catch2_target[*]:-}"
    $SUDO apt-get update -qq
    export DEBIAN_FRONTEND=noninteractive
    [ ${#need_debs[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${need_debs[@]}" >/dev/null
    [ ${#catch2_target[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${catch2_target[@]}" >/dev/null
  else
    log "$system: packages all present"
  fi
fi

# ---------------------------------------------------------------- LibTorch
find_torch_in_prefixes() {
  local IFS=';:'
  for d in ${Torch_DIR:-} ${CMAKE_PREFIX_PATH:-}; do
    [ -n "$d" ] || continue
    for c in "$d/TorchConfig.cmake" "$d/Torch/TorchConfig.cmake" "$d/share/cmake/Torch/TorchConfig.cmake"; do
      [ -f "$c" ] && { echo "$d"; return 0; }
    done
  done
  return 1
}
torch_prefix_of() { "$1" -c 'import torch,sys; sys.stdout.write(torch.utils.cmake_prefix_path)' 2>/dev/null; }
torch_version_of() { "$1" -c 'import torch,sys; sys.stdout.write(torch.__version__)' 2>/dev/null; }

if p=$(find_torch_in_prefixes); then
  log "LibTorch: given by Torch_DIR/CMAKE_PREFIX_PATH ($p); the workbook is made for $TORCH_VERSION"
  echo "$p"; exit 0
fi
if [ -f "$VENV/.complete" ] && p=$(torch_prefix_of "$VENV/bin/python"); then
  log "LibTorch: reusing venv $VENV"
  echo "$p"; exit 0
fi
if command -v python3 >/dev/null && v=$(torch_version_of python3); then
  if [ "${v%%+*}" = "$TORCH_VERSION" ] && p=$(torch_prefix_of python3); then
    log "LibTorch: importable torch $v ($p)"
    echo "$p"; exit 0
  fi
  log "LibTorch: the importable torch is $v, not $TORCH_VERSION (scripts/torch_version.txt), so it is not used: the venv's torch $TORCH_VERSION is"
fi
command -v python3 >/dev/null || die "python3 is needed to install torch==$TORCH_VERSION from PyPI"
mkdir -p "$CACHE_ROOT"
# One installer at a time per machine; a half-done venv (no .complete stamp) is redone.
exec 9>"$CACHE_ROOT/.lock"; flock 9
if ! [ -f "$VENV/.complete" ]; then
  log "LibTorch: installing torch==$TORCH_VERSION from PyPI into $VENV (several GB, once per machine)"
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (apt-get install python3-venv)"
  "$VENV/bin/pip" install -q --disable-pip-version-check "torch==$TORCH_VERSION" >&2 \
    || die "pip install torch==$TORCH_VERSION failed (is PyPI reachable?)"
  touch "$VENV/.complete"
fi
p=$(torch_prefix_of "$VENV/bin/python") || die "torch installed but not importable from $VENV"
log "LibTorch: $VENV"
echo "$p"
