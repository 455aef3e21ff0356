#!/usr/bin/env bash
# Gets what full-system tracing (kpath:NAME, docs/tracing.md "System mode") needs besides the plugin: Debian 12's own
# kernel image, taken from its package WITHOUT installing it on the host (installing a kernel package runs boot-loader
# and initramfs hooks), and checks for qemu-system-x86_64, a static busybox and cpio (scripts/bootstrap.sh installs
# those three). Idempotent: a kernel already in the cache is reused. Prints the vmlinuz path on success; on failure one
# line naming the missing piece on stderr and exit status 1. Beside the image it extracts the few modules the guest's
# disk needs (virtio-blk and ext4 are modules in Debian's config, CONFIG_VIRTIO_BLK=m, CONFIG_EXT4_FS=m) into
# modules-RELEASE/, with load-order.txt listing them dependencies first (from each module's depends= field).
# Usage: scripts/kpath_kernel.sh [CACHE_DIR]   (default $SMTLAB_KPATH_CACHE, else ~/.cache/smtlab/kpath)
# Environment: SMTLAB_KPATH_KERNEL_PACKAGE / SMTLAB_KPATH_KERNEL_VERSION override the pinned package and version.
set -euo pipefail

# Pinned: the kernel behind Debian 12's linux-image-amd64 6.1.192-2 (docs/tracing.md). Traces depend on it, so a
# change of version is a change of every kpath: trace and is made here, on purpose, with the docs.
package=${SMTLAB_KPATH_KERNEL_PACKAGE:-linux-image-6.1.0-56-amd64}
version=${SMTLAB_KPATH_KERNEL_VERSION:-6.1.192-2}
release=${package#linux-image-}
cache=${1:-${SMTLAB_KPATH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/smtlab/kpath}}
# Absolute: the download runs in a folder of its own (cd), where a relative cache path would name nothing.
cache=$(realpath -m -- "$cache")
vmlinuz=$cache/vmlinuz-$release
moddir=$cache/modules-$release
# The guest's disk (fsync on ext4, workloads/kpath/make_initramfs.sh): in load order, each after what it depends on.
modules=(crc16 mbcache jbd2 crc32c_generic ext4 virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev
  virtio_pci virtio_blk)

fail() { echo "kpath: $*" >&2; exit 1; }

command -v qemu-system-x86_64 >/dev/null 2>&1 || fail "qemu-system-x86_64 not found (Debian: qemu-system-x86)"
busybox=$(command -v busybox 2>/dev/null || true)
[[ -n "$busybox" ]] || fail "busybox not found (Debian: busybox-static)"
# A dynamic busybox would need its libraries inside the initramfs.
file_out=$(LC_ALL=C ldd "$busybox" 2>&1 || true)
[[ "$file_out" == *"not a dynamic executable"* || "$file_out" == *"statically linked"* ]] \
  || fail "$busybox is dynamically linked (Debian: busybox-static, not busybox)"
command -v cpio >/dev/null 2>&1 || fail "cpio not found (Debian: cpio)"

if [[ -s "$vmlinuz" && -s "$moddir/load-order.txt" ]]; then
  echo "$vmlinuz"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || fail "no apt-get to download $package=$version; put its vmlinuz at $vmlinuz"
mkdir -p "$cache" || fail "cannot create $cache"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
# _apt cannot write into a root-owned private directory; let it, apt then drops privileges as usual.
chmod 755 "$work"
(cd "$work" && apt-get download "$package=$version" >"$work/apt.log" 2>&1) \
  || fail "apt-get download $package=$version failed: $(grep -v '^W:' "$work/apt.log" | tail -1)"
deb=$(ls "$work"/*.deb 2>/dev/null | head -1)
[[ -n "$deb" ]] || fail "apt-get download $package=$version gave no .deb"
# Only the image and the disk's modules: the package's other 400 MB of modules are not needed.
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" "./boot/vmlinuz-$release" 2>/dev/null \
  || fail "boot/vmlinuz-$release not found in $(basename "$deb")"
members=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -E "/($(IFS='|'; echo "${modules[*]}"))\.ko$" || true)
[[ $(wc -l <<<"$members") -eq ${#modules[@]} ]] || fail "$(basename "$deb") lacks some of the modules ${modules[*]}"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" $members || fail "cannot extract the modules from $(basename "$deb")"
mkdir -p "$work/modules"
for m in "${modules[@]}"; do
  mv "$(find "$work/lib" -name "$m.ko" | head -1)" "$work/modules/" || fail "module $m.ko missing"
  echo "$m" >>"$work/modules/load-order.txt"
done
# Written under a temporary name, renamed when complete: a cut-short copy is never taken for the kernel.
rm -rf "$moddir" && mv "$work/modules" "$moddir" || fail "cannot write $moddir"
mv "$work/boot/vmlinuz-$release" "$vmlinuz.tmp$$" && mv "$vmlinuz.tmp$$" "$vmlinuz" || fail "cannot write $vmlinuz"
echo "$package=$version" > "$cache/kernel-package.txt"
echo "$vmlinuz"
