#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make vmtest-lockdep: the VM selftests on the lockdep kernel (Debian's
# 6.1 source with PROVE_LOCKING, built or reused by
# selftests/qemu/lockdep-kernel.sh), with mroce.ko built for it in
# build/lockdep (the tree's build for Debian's kernel stays as it is).
# A lock-order inversion or a failed lockdep_assert_held() is a kernel-log
# report, so the test during which it happens fails (klog.py).
# Usage: vmtest-lockdep.sh [vmrun.py options] [TEST ...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
vars=$("$top/selftests/qemu/lockdep-kernel.sh" | grep -E '^LOCKDEP_[A-Z]+=')
eval "$vars"
out=$top/build/lockdep
# KASAN's stack redzones make frames larger than the kernel's 2048-byte
# limit (an error: the debug kernel has CONFIG_WERROR): the frame-size
# check is the W=1 builds' for Debian's kernels, not this one's.
if ! "$top/scripts/build-module.sh" --out "$out" --kdir "$LOCKDEP_KDIR" "$LOCKDEP_KVER" \
	KCFLAGS=-Wno-frame-larger-than > /dev/null; then
	echo "vmtest-lockdep: building mroce.ko for $LOCKDEP_KVER failed (log: $out/modules.log)" >&2
	exit 1
fi
echo "vmtest-lockdep: booting $LOCKDEP_IMAGE ($LOCKDEP_KVER)"
exec python3 "$top/selftests/qemu/vmrun.py" --kver "$LOCKDEP_KVER" \
	--kernel "$LOCKDEP_IMAGE" --modroot "$LOCKDEP_MODROOT" \
	--ko "$out/drivers/infiniband/sw/mroce/mroce.ko" "$@"
