#!/usr/bin/env bash
# Unpack the project's Debian C++ dependencies into a folder that can travel to the
# GPU machine (which has no package access). Run it here, in the project's root:
#
#   scripts/device-deps.sh                    # writes .deps/ (add /.deps/ to .git/info/exclude)
#
# then name `.deps` in the device call's `carry` and configure there with
#   -DCMAKE_PREFIX_PATH="$PWD/.deps/usr;$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')"
#
# Packages can be added as arguments: device-deps.sh libfoo-dev libfoo1
set -euo pipefail
dest="${DEST:-.deps}"
pkgs=(libcatch2-dev libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 nlohmann-json3-dev libcli11-dev libsimdjson-dev libsimdjson14 zlib1g-dev "$@")
work="$(mktemp -d)"
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
# Use the Debian mirror this machine is already configured with.
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)
[ -n "$mirror" ] || mirror=$(awk '/^deb / && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || { echo "no Debian mirror found in this machine's apt configuration" >&2; exit 1; }
printf 'deb %s bookworm main\ndeb %s bookworm-backports main\n' "$mirror" "$mirror" > "$work/sources.list"
o=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
   -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")
apt-get "${o[@]}" update -qq
# Catch2 v3 (libcatch2-dev) lives in bookworm-backports; the rest in bookworm.
( cd "$work/debs" && apt-get "${o[@]}" download -qq -t bookworm-backports libcatch2-dev \
  && apt-get "${o[@]}" download -qq "${pkgs[@]:1}" )
rm -rf "$dest"; mkdir -p "$dest"
for f in "$work"/debs/*.deb; do dpkg -x "$f" "$dest"; done
# Debian puts cmake configs under usr/lib/x86_64-linux-gnu/cmake: make the prefix self-contained.
du -sh "$dest"; ls "$dest/usr/lib/x86_64-linux-gnu/cmake"
rm -rf "$work"
