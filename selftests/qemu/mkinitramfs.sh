#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test VM's initramfs: busybox-static, the virtio/9p modules of
# <kver> in dependency order, and our stage-1 /init.
# Usage: mkinitramfs.sh <kver> <output.cpio.gz> [<modroot>]
#   modroot: the modules are under <modroot>/lib/modules/<kver> (default /;
#   the lockdep kernel's are in its cache). Modules built into the kernel
#   are left out.
set -euo pipefail

kver=$1
out=$2
modroot=${3:-/}
here=$(cd "$(dirname "$0")" && pwd)

busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || ! file -L "$busybox" | grep -q 'statically linked'; then
	echo "mkinitramfs: a static busybox is needed (package busybox-static)" >&2
	exit 1
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,newroot,modules}
cp "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
cp "$here/init" "$stage/init"
chmod 755 "$stage/init"

# The modules 9p over virtio-pci needs, each once, dependencies first.
: > "$stage/modules/order"
deps=$(for mod in virtio_pci 9pnet_virtio 9p; do
	/sbin/modprobe -d "$modroot" -S "$kver" --show-depends "$mod"
done)
echo "$deps" | awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' | while read -r ko; do
	# Debian's 6.12 ships its modules xz-compressed (6.1: plain .ko);
	# busybox's insmod wants them plain.
	name=$(basename "$ko")
	case "$ko" in
	*.ko.xz) name=${name%.xz}; xz -dc "$ko" > "$stage/modules/$name" ;;
	*.ko.zst) name=${name%.zst}; zstd -qdc "$ko" > "$stage/modules/$name" ;;
	*.ko.gz) name=${name%.gz}; gzip -dc "$ko" > "$stage/modules/$name" ;;
	*) cp "$ko" "$stage/modules/" ;;
	esac
	echo "$name" >> "$stage/modules/order"
done
builtin=$(echo "$deps" | grep -c '^builtin ' || true)
if [ $(( $(wc -l < "$stage/modules/order") + builtin )) -lt 3 ]; then
	echo "mkinitramfs: could not resolve the 9p/virtio modules of $kver" >&2
	exit 1
fi

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
