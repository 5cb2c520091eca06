#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build mroce.ko for one kernel with W=1 and fail on any compiler warning.
# Usage: build-module.sh <kver> [extra kbuild args...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kver=$1
shift
kdir=/lib/modules/$kver/build
if [ ! -e "$kdir/Makefile" ]; then
	echo "build-module: no kernel headers at $kdir (package linux-headers-$kver); run 'make deps'" >&2
	exit 1
fi

mkdir -p "$top/build"
log=$top/build/modules.log
set +e
make -C "$kdir" M="$top" W=1 "$@" modules 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
	echo "build-module: kbuild failed (log: $log)" >&2
	exit "$rc"
fi
if grep -E 'warning:|error:' "$log" >/dev/null; then
	echo "build-module: the build produced warnings (W=1 must be clean):" >&2
	grep -E 'warning:|error:' "$log" >&2
	exit 1
fi
ko=$top/drivers/infiniband/sw/mroce/mroce.ko
vermagic=$(/sbin/modinfo -F vermagic "$ko" | cut -d' ' -f1)
if [ "$vermagic" != "$kver" ]; then
	echo "build-module: $ko has vermagic $vermagic, expected $kver" >&2
	exit 1
fi
echo "build-module: $ko built for $kver"
