#!/usr/bin/env bash
# Fetches an NVRTC library (CUDA C -> PTX, no GPU needed) into .cache/nvrtc/ without installing
# anything: Debian trixie non-free's libnvrtc12 (12.4) and libnvrtc-builtins12.4, downloaded with a
# private apt configuration (the system's sources and package state stay untouched) and unpacked
# with dpkg -x. Kiln's Nvrtc binding searches .cache/nvrtc/ (among the standard places), so the
# NVRTC tests then exercise the real library. Needs apt-get, dpkg and network access to
# deb.debian.org; without them it says so and exits 2, and the NVRTC tests skip with that reason.
#   scripts/fetch-nvrtc.sh          fetch unless .cache/nvrtc already holds a libnvrtc.so.*
#   scripts/fetch-nvrtc.sh --force  fetch again
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.cache/nvrtc
if [ "${1:-}" != "--force" ] && ls "$dest"/libnvrtc.so.* >/dev/null 2>&1; then
  echo "fetch-nvrtc: $dest already has $(cd "$dest" && ls libnvrtc.so.* | head -1)"; exit 0
fi
for tool in apt-get dpkg; do
  command -v "$tool" >/dev/null || { echo "fetch-nvrtc: $tool not found; cannot fetch libnvrtc12 (NVRTC tests will skip)" >&2; exit 2; }
done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/sources"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""; [ -f "$keyring" ] && signed="Signed-By: $keyring"
cat > "$work/sources/trixie.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: non-free
$signed
SRC
opts=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$work/sources" -o Dir::State::Lists="$work/lists"
      -o Dir::Cache="$work/cache" -o Debug::NoLocking=1 -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root
      -o Acquire::http::Timeout=15 -o Acquire::Retries=0)
if ! apt-get "${opts[@]}" -qq update >"$work/update.log" 2>&1; then
  echo "fetch-nvrtc: apt-get update of trixie non-free failed (no network?):" >&2; tail -3 "$work/update.log" >&2; exit 2
fi
builtins=$(apt-cache "${opts[@]}" depends libnvrtc12 2>/dev/null | sed -n 's/.*Depends: \(libnvrtc-builtins[0-9.]*\).*/\1/p' | head -1)
(cd "$work" && apt-get "${opts[@]}" -qq download libnvrtc12 ${builtins:-libnvrtc-builtins12.4}) || {
  echo "fetch-nvrtc: apt-get download libnvrtc12 failed" >&2; exit 2; }
mkdir -p "$work/x" "$dest"
for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/x"; done
find "$work/x" -name 'libnvrtc*.so*' -exec cp -a {} "$dest/" \;
echo "fetch-nvrtc: $(cd "$dest" && ls libnvrtc* | tr "\n" " ")in $dest"
