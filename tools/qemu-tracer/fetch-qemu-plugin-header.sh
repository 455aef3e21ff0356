#!/usr/bin/env bash
# Fetches QEMU's plugin API header (qemu-plugin.h, GPL-2.0-or-later) into DEST_DIR for building the tracer plugin.
# The header is in no Debian binary package, only in the qemu source package; it is fetched, never committed.
# Order: $SMTLAB_QEMU_PLUGIN_HEADER, a copy cached in ~/.cache/smtlab, an installed one, then `apt-get source qemu`
# (needs a deb-src entry; scripts/bootstrap.sh adds one), keeping only include/qemu/qemu-plugin.h.
# Usage: fetch-qemu-plugin-header.sh DEST_DIR   (exit status 0: DEST_DIR/qemu-plugin.h exists; else a one-line reason)
set -euo pipefail

dest=${1:?usage: fetch-qemu-plugin-header.sh DEST_DIR}
mkdir -p "$dest"
fail() { echo "$*" >&2; exit 1; }

qemu_version=$( (qemu-x86_64 --version 2>/dev/null || true) | sed -n 's/.*version \([0-9]*\.[0-9]*\).*/\1/p' | head -1)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/smtlab/qemu-plugin-${qemu_version:-unknown}.h

for candidate in "${SMTLAB_QEMU_PLUGIN_HEADER:-}" "$cache" /usr/include/qemu-plugin.h /usr/include/qemu/qemu-plugin.h; do
  if [[ -n "$candidate" && -f "$candidate" ]]; then
    cp "$candidate" "$dest/qemu-plugin.h"
    exit 0
  fi
done

command -v apt-get >/dev/null 2>&1 || fail "no apt-get: set SMTLAB_QEMU_PLUGIN_HEADER to a qemu-plugin.h of your QEMU version"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source --download-only qemu >"$work/apt.log" 2>&1) \
  || fail "apt-get source qemu failed (no deb-src entry? run scripts/bootstrap.sh): $(tail -1 "$work/apt.log")"
orig=$(ls "$work"/qemu_*.orig.tar.* 2>/dev/null | head -1)
[[ -n "$orig" ]] || fail "apt-get source qemu gave no orig tarball"
tar -xf "$orig" -C "$work" --wildcards '*/include/qemu/qemu-plugin.h' 2>/dev/null \
  || fail "include/qemu/qemu-plugin.h not found in $(basename "$orig")"
header=$(find "$work" -path '*/include/qemu/qemu-plugin.h' | head -1)
[[ -n "$header" ]] || fail "include/qemu/qemu-plugin.h not found in $(basename "$orig")"
cp "$header" "$dest/qemu-plugin.h"
mkdir -p "$(dirname "$cache")" && cp "$header" "$cache" || true
