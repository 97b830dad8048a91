#!/usr/bin/env bash
# Fetches ONNX's message definitions (onnx.proto) into .cache/onnx/ for the build of lowering's ONNX importer, which
# generates the Java classes from it with protoc (protobuf-maven-plugin). The file comes from Debian
# trixie's libonnx-dev (ONNX 1.17: IR version 10, opsets up to 22), downloaded with a private apt
# configuration (the system's sources and package state stay untouched) and unpacked with dpkg -x.
# Two lines are changed on the way: the Java package (dev.kiln.onnx.proto, outer class Onnx) is
# added, and `optimize_for = LITE_RUNTIME` is dropped so the classes are protobuf-java's full ones.
# Needs apt-get, dpkg and network access to deb.debian.org the first time; without them it says so
# and exits 2, and the build stops (the importer is never skipped silently).
#   scripts/fetch-onnx-proto.sh          fetch unless .cache/onnx/onnx.proto exists
#   scripts/fetch-onnx-proto.sh --force  fetch again
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.cache/onnx
if [ "${1:-}" != "--force" ] && [ -s "$dest/onnx.proto" ]; then exit 0; fi
fail() { echo "fetch-onnx-proto: $1" >&2
         echo "fetch-onnx-proto: the onnx module needs $dest/onnx.proto (ONNX's onnx.proto, e.g. from Debian's libonnx-dev," \
              "/usr/include/onnx/onnx.proto); put a copy there by hand to build without network" >&2; exit 2; }
for tool in apt-get apt-cache dpkg; do command -v "$tool" >/dev/null || fail "$tool not found; cannot fetch libonnx-dev"; done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/sources"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""; [ -f "$keyring" ] && signed="Signed-By: $keyring"
cat > "$work/sources/trixie.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
$signed
SRC
opts=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$work/sources" -o Dir::State::Lists="$work/lists"
      -o Dir::Cache="$work/cache" -o Debug::NoLocking=1 -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root
      -o Acquire::http::Timeout=15 -o Acquire::Retries=0)
apt-get "${opts[@]}" -qq update >"$work/update.log" 2>&1 || { tail -3 "$work/update.log" >&2; fail "apt-get update of Debian trixie main failed (no network?)"; }
(cd "$work" && apt-get "${opts[@]}" -qq download libonnx-dev) || fail "apt-get download libonnx-dev failed"
mkdir -p "$work/x" "$dest"
dpkg -x "$work"/libonnx-dev_*.deb "$work/x"
src="$work/x/usr/include/onnx/onnx.proto"
[ -s "$src" ] || fail "libonnx-dev has no usr/include/onnx/onnx.proto"
version=$(dpkg-deb -f "$work"/libonnx-dev_*.deb Version)
{ sed -e '/^option optimize_for = LITE_RUNTIME;/d' \
      -e 's/^package onnx;/package onnx;\noption java_package = "dev.kiln.onnx.proto";\noption java_outer_classname = "Onnx";/' "$src"
} > "$dest/onnx.proto.tmp"
grep -q 'java_package = "dev.kiln.onnx.proto"' "$dest/onnx.proto.tmp" || fail "onnx.proto from libonnx-dev $version has no 'package onnx;' line to add the Java package to"
mv "$dest/onnx.proto.tmp" "$dest/onnx.proto"
echo "fetch-onnx-proto: onnx.proto of libonnx-dev $version in $dest"
