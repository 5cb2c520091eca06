#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel release mroce is built for.
#   kver.sh        the kernel the test VM boots: the newest installed
#                  /boot/vmlinuz-6.1.*-amd64 that has /lib/modules/$KVER/build
#   kver.sh 6.12   the same for another kernel series (the newer kernels
#                  mroce also builds and runs on: docs/install.md)
#   kver.sh --host the running kernel if its headers are installed (a real
#                  host installing mroce), else the VM kernel
set -eu

series=6.1
case "${1:-}" in
--host)
	host=$(uname -r)
	if [ -e "/lib/modules/$host/build/Makefile" ]; then
		echo "$host"
		exit 0
	fi
	;;
[0-9]*.[0-9]*) series=$1 ;;
"") ;;
*) echo "usage: kver.sh [--host | <series, e.g. 6.12>]" >&2; exit 2 ;;
esac

# Prefer the generic flavour: -cloud-amd64 lacks rdma_rxe, -rt-amd64 is
# slower under emulation. Use those only when nothing else is installed.
cands=
for img in /boot/vmlinuz-"$series".*-amd64; do
	[ -e "$img" ] || continue
	k=${img#/boot/vmlinuz-}
	[ -e "/lib/modules/$k/build/Makefile" ] || continue
	cands="$cands$k
"
done
best=$(printf '%s' "$cands" | grep -Ev -- '-(cloud|rt)-amd64$' | sort -V | tail -n 1)
[ -n "$best" ] || best=$(printf '%s' "$cands" | sort -V | tail -n 1)
if [ -z "$best" ]; then
	hint="make deps"
	[ "$series" = 6.1 ] || hint="scripts/deps.sh --kernel $series"
	echo "kver.sh: no /boot/vmlinuz-$series.*-amd64 with matching /lib/modules/<kver>/build; run '$hint'" >&2
	exit 1
fi
echo "$best"
