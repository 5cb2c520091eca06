#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install a built mroce.ko: /lib/modules/<kver>/updates/mroce.ko, depmod,
# and /etc/modprobe.d/mroce.conf (the rdma_rxe exclusion rules). Used by
# `make install` and by the test VM, so the VM tests what users get. A
# compressed module (mroce.ko.xz or .zst: what DKMS installs for kernels
# whose modules are compressed, Debian's 6.12) keeps its suffix, and
# replaces any other form of mroce there.
# Usage: install-module.sh --ko <mroce.ko[.xz|.zst]> [--kver <kver>] [--root <dir>]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ko= kver= root=
while [ $# -gt 0 ]; do
	case $1 in
	--ko) ko=$2; shift 2 ;;
	--kver) kver=$2; shift 2 ;;
	--root) root=$2; shift 2 ;;
	*) echo "usage: $0 --ko <mroce.ko> [--kver <kver>] [--root <dir>]" >&2; exit 2 ;;
	esac
done
[ -n "$ko" ] || { echo "install-module: --ko is required" >&2; exit 2; }
[ -f "$ko" ] || { echo "install-module: $ko not found; run 'make modules'" >&2; exit 1; }
[ -n "$kver" ] || kver=$(/sbin/modinfo -F vermagic "$ko" | cut -d' ' -f1)

vermagic=$(/sbin/modinfo -F vermagic "$ko" | cut -d' ' -f1)
if [ "$vermagic" != "$kver" ]; then
	echo "install-module: $ko is built for $vermagic, not $kver; rebuild with 'make modules KVER=$kver'" >&2
	exit 1
fi

dest=$root/lib/modules/$kver/updates
name=mroce.ko${ko##*.ko}
rm -f "$dest"/mroce.ko "$dest"/mroce.ko.*
install -D -m 0644 "$ko" "$dest/$name"
install -D -m 0644 "$here/modprobe.d/mroce.conf" "$root/etc/modprobe.d/mroce.conf"
if [ -n "$root" ]; then
	/sbin/depmod -b "$root" "$kver"
else
	/sbin/depmod "$kver"
fi
echo "install-module: installed $dest/$name and $root/etc/modprobe.d/mroce.conf for $kver"
