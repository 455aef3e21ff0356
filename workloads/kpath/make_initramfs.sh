#!/usr/bin/env bash
# Builds the initramfs of kpath:NAME tracing (docs/tracing.md, "System mode"): Debian's static busybox, the probe
# program (probe.c, its network phase probe_net.c and page-cache phase probe_fs.c, compiled static for generic x86-64),
# the kernel package's disk modules (scripts/kpath_kernel.sh) and an /init that mounts proc, devtmpfs and a tmpfs on
# /tmp, loads the modules, mounts the virtio disk (ext4) on /mnt, brings up loopback, runs `/probe $kpath_count` and
# powers off. Also makes that disk: a 16 MiB ext4 image (mke2fs from e2fsprogs) with its inode tables and journal
# written now, so no lazy-init thread writes during the recording. Both written under temporary names and renamed when
# complete. One line on stderr and exit status 1 when a piece is missing.
# Usage: make_initramfs.sh OUT.cpio.gz MODULES_DIR DISK.img
set -euo pipefail
out=${1:?usage: make_initramfs.sh OUT.cpio.gz MODULES_DIR DISK.img}
moddir=${2:?usage: make_initramfs.sh OUT.cpio.gz MODULES_DIR DISK.img}
disk=${3:?usage: make_initramfs.sh OUT.cpio.gz MODULES_DIR DISK.img}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "kpath: $*" >&2; exit 1; }

busybox=$(command -v busybox 2>/dev/null || true)
[[ -n "$busybox" ]] || fail "busybox not found (Debian: busybox-static)"
command -v cpio >/dev/null 2>&1 || fail "cpio not found (Debian: cpio)"
command -v cc >/dev/null 2>&1 || fail "no C compiler (Debian: gcc, libc6-dev)"
mke2fs=$(PATH=$PATH:/sbin:/usr/sbin command -v mke2fs 2>/dev/null || true)
[[ -n "$mke2fs" ]] || fail "mke2fs not found (Debian: e2fsprogs)"
[[ -s "$moddir/load-order.txt" ]] || fail "no kernel modules in $moddir (scripts/kpath_kernel.sh extracts them)"

root=$(mktemp -d "${TMPDIR:-/tmp}/smtlab-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,proc,sys,dev,tmp,mnt,modules}
cp "$busybox" "$root/bin/busybox"
cp "$moddir"/*.ko "$moddir/load-order.txt" "$root/modules/"
cc -O2 -march=x86-64 -mtune=generic -static -o "$root/probe" "$here/probe.c" "$here/probe_net.c" "$here/probe_fs.c" 2>"$root/cc.log" \
  || fail "compiling the probe (probe.c, probe_net.c, probe_fs.c) failed (static libc needed: Debian libc6-dev): $(head -1 "$root/cc.log")"
rm -f "$root/cc.log"
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
for m in $(cat /modules/load-order.txt); do insmod "/modules/$m.ko" || echo "kpath: insmod $m failed"; done
# The disk appears once virtio_blk has probed it: up to 20 s (a TCG guest on a loaded host is slow).
i=0; while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
mount -t ext4 /dev/vda /mnt || echo "kpath: cannot mount /dev/vda (ext4)"
ip link set lo up
echo "kpath: probe starting"
/probe "${kpath_count:-100}" && echo "kpath: probe ok" || echo "kpath: probe failed"
poweroff -f
INIT
chmod 755 "$root/init"
# 16 MiB, 4 KiB blocks, everything initialised now (lazy init would write the disk from a kernel thread meanwhile).
# No metadata checksums (^metadata_csum): the reference study's ext2/ext3 had none, and with them every metadata
# block and journal commit runs a software crc32c over 4 KiB (a first recording: creat 43 k kernel instructions on
# ext4 with checksums against 8.7 k in tmpfs).
rm -f "$disk.tmp$$"
"$mke2fs" -q -F -t ext4 -O ^metadata_csum -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$disk.tmp$$" 16M >"$root/mke2fs.log" 2>&1 \
  || { rm -f "$disk.tmp$$"; fail "mke2fs failed: $(tail -1 "$root/mke2fs.log")"; }
rm -f "$root/mke2fs.log"
mv "$disk.tmp$$" "$disk"
tmp="$out.tmp$$"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$tmp" || { rm -f "$tmp"; fail "cpio failed"; }
mv "$tmp" "$out"
