#!/usr/bin/env bash
# Builds the initramfs of kpath:NAME tracing (docs/tracing.md, "System mode"): Debian's static busybox, the probe
# program (probe.c, compiled static for generic x86-64) and an /init that mounts proc, devtmpfs and a tmpfs on /tmp,
# brings up loopback, runs `/probe $kpath_count` and powers off. Written under a temporary name and renamed when
# complete. One line on stderr and exit status 1 when a piece is missing.
# Usage: make_initramfs.sh OUT.cpio.gz
set -euo pipefail
out=${1:?usage: make_initramfs.sh OUT.cpio.gz}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "kpath: $*" >&2; exit 1; }

busybox=$(command -v busybox 2>/dev/null || true)
[[ -n "$busybox" ]] || fail "busybox not found (Debian: busybox-static)"
command -v cpio >/dev/null 2>&1 || fail "cpio not found (Debian: cpio)"
command -v cc >/dev/null 2>&1 || fail "no C compiler (Debian: gcc, libc6-dev)"

root=$(mktemp -d "${TMPDIR:-/tmp}/smtlab-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,proc,sys,dev,tmp}
cp "$busybox" "$root/bin/busybox"
cc -O2 -march=x86-64 -mtune=generic -static -o "$root/probe" "$here/probe.c" 2>"$root/cc.log" \
  || fail "compiling probe.c failed (static libc needed: Debian libc6-dev): $(head -1 "$root/cc.log")"
rm -f "$root/cc.log"
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
ip link set lo up
echo "kpath: probe starting"
/probe "${kpath_count:-100}" && echo "kpath: probe ok" || echo "kpath: probe failed"
poweroff -f
INIT
chmod 755 "$root/init"
tmp="$out.tmp$$"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$tmp" || { rm -f "$tmp"; fail "cpio failed"; }
mv "$tmp" "$out"
