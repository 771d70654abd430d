#!/usr/bin/env bash
# Installs what the workbook needs, skipping whatever is already there (safe to re-run).
#
#   Debian packages : Catch2 v3 (bookworm-backports), spdlog, nlohmann-json, CLI11,
#                     simdjson, zlib, ccache, ninja, cmake, clang-format-14 (the style check),
#                     lld (links the LibTorch programs faster; the build uses GNU ld without it),
#                     cmark-gfm (the test that every Markdown table renders)
#   LibTorch        : first match of
#                       1. Torch_DIR or a CMAKE_PREFIX_PATH that holds TorchConfig.cmake
#                       2. the shared venv  ${XDG_CACHE_HOME:-~/.cache}/libtorch-workbook/torch-$TORCH_VERSION
#                       3. an importable `torch` in python3 (as on the GPU machine)
#                       4. otherwise: create that venv and `pip install torch==$TORCH_VERSION`
#
# The venv lives outside the clone so every clone (CI makes a fresh one each run) reuses it.
# Prints, as its last line, the CMAKE_PREFIX_PATH entry for Torch (the caller may capture it).
set -euo pipefail

TORCH_VERSION="${TORCH_VERSION:-2.11.0}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/libtorch-workbook"
VENV="$CACHE_ROOT/torch-$TORCH_VERSION"

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[setup] error:\033[0m %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- Debian packages
need_debs=()
have_deb() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in libspdlog-dev nlohmann-json3-dev libcli11-dev libsimdjson-dev zlib1g-dev ccache ninja-build cmake g++ clang-format-14 lld cmark-gfm; do
  have_deb "$p" || need_debs+=("$p")
done
# Catch2 must be v3 (bookworm itself ships v2).
catch2_v3=0
if have_deb libcatch2-dev; then
  case "$(dpkg-query -W -f='${Version}' libcatch2-dev)" in 3.*) catch2_v3=1 ;; esac
fi

if [ ${#need_debs[@]} -gt 0 ] || [ $catch2_v3 -eq 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo; command -v sudo >/dev/null || die "missing Debian packages (${need_debs[*]} libcatch2-dev>=3) and not root: install them, or re-run as root"
  else SUDO=""; fi
  if [ $catch2_v3 -eq 0 ] && . /etc/os-release && [ "${VERSION_CODENAME:-}" = bookworm ]; then
    if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      log "adding bookworm-backports (Catch2 v3 lives there)"
      mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
      [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
      echo "deb $mirror bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/workbook-backports.list >/dev/null
    fi
    catch2_target=(-t bookworm-backports libcatch2-dev)
  else
    catch2_target=()
    [ $catch2_v3 -eq 1 ] || need_debs+=(libcatch2-dev)
  fi
  log "installing Debian packages: ${need_debs[*]} ${catch2_target[*]:-}"
  $SUDO apt-get update -qq
  export DEBIAN_FRONTEND=noninteractive
  [ ${#need_debs[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${need_debs[@]}" >/dev/null
  [ ${#catch2_target[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${catch2_target[@]}" >/dev/null
else
  log "Debian packages: all present"
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

if p=$(find_torch_in_prefixes); then
  log "LibTorch: given by Torch_DIR/CMAKE_PREFIX_PATH ($p)"
  echo "$p"; exit 0
fi
if [ -f "$VENV/.complete" ] && p=$(torch_prefix_of "$VENV/bin/python"); then
  log "LibTorch: reusing venv $VENV"
  echo "$p"; exit 0
fi
if command -v python3 >/dev/null && p=$(torch_prefix_of python3); then
  log "LibTorch: importable torch $(python3 -c 'import torch;print(torch.__version__)') ($p)"
  echo "$p"; exit 0
fi
command -v python3 >/dev/null || die "python3 is needed to install torch==$TORCH_VERSION from PyPI"
mkdir -p "$CACHE_ROOT"
# One installer at a time per machine; a half-done venv (no .complete stamp) is redone.
exec 9>"$CACHE_ROOT/.lock"; flock 9
if ! [ -f "$VENV/.complete" ]; then
  log "LibTorch: installing torch==$TORCH_VERSION from PyPI into $VENV (several GB, once per machine)"
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/pip" install -q --disable-pip-version-check "torch==$TORCH_VERSION" >&2 \
    || die "pip install torch==$TORCH_VERSION failed (is PyPI reachable?)"
  touch "$VENV/.complete"
fi
p=$(torch_prefix_of "$VENV/bin/python") || die "torch installed but not importable from $VENV"
log "LibTorch: $VENV"
echo "$p"
