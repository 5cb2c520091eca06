#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build mroce.ko for one kernel with W=1 and fail on any compiler warning.
# Usage: build-module.sh [--out <dir>] [--kdir <dir>] <kver> [extra kbuild args...]
#   --out <dir>  build in <dir> instead of the source tree (a tree of
#                symlinks to the sources; the objects land there), so a
#                build for another kernel (make check's 6.12 stage) leaves
#                the tree's build for the VM kernel alone. The module is
#                <dir>/drivers/infiniband/sw/mroce/mroce.ko, the log
#                <dir>/modules.log.
#   --kdir <dir> the kernel build tree to build against (default
#                /lib/modules/<kver>/build; the lockdep kernel's is in its
#                cache: selftests/qemu/lockdep-kernel.sh)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=
kdir=
while :; do
	case ${1:-} in
	--out) out=$2; shift 2 ;;
	--kdir) kdir=$2; shift 2 ;;
	*) break ;;
	esac
done
kver=$1
shift
kdir=${kdir:-/lib/modules/$kver/build}
if [ ! -e "$kdir/Makefile" ]; then
	echo "build-module: no kernel headers at $kdir (package linux-headers-$kver); run 'make deps'" >&2
	exit 1
fi

if [ -n "$out" ]; then
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	# What Kbuild reads (the list dkms-install.sh copies, plus the kernel
	# verbs test module), as symlinks; links to files gone from the tree
	# go. make follows the links, so an edited source is rebuilt as in the
	# tree.
	find "$out" -type l -delete
	(cd "$top" && git ls-files -co --exclude-standard -- Kbuild \
		drivers/infiniband/sw/mroce include selftests/tools/kverbs |
		grep -Ev '\.(o|ko|mod|mod\.c|cmd|a)$') |
	while read -r f; do
		mkdir -p "$out/$(dirname "$f")"
		ln -s "$top/$f" "$out/$f"
	done
	mdir=$out
	log=$out/modules.log
else
	mkdir -p "$top/build"
	mdir=$top
	log=$top/build/modules.log
fi
set +e
make -C "$kdir" M="$mdir" W=1 "$@" modules 2>&1 | tee "$log"
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
ko=$mdir/drivers/infiniband/sw/mroce/mroce.ko
vermagic=$(/sbin/modinfo -F vermagic "$ko" | cut -d' ' -f1)
if [ "$vermagic" != "$kver" ]; then
	echo "build-module: $ko has vermagic $vermagic, expected $kver" >&2
	exit 1
fi
echo "build-module: $ko built for $kver"
