#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Register mroce's kernel sources with DKMS (/usr/src/mroce-<version>), build
# and install them for a kernel, and install the modprobe.d rules.
# Usage: dkms-install.sh [<kver>]      (default: the running kernel)
# DKMS_ARGS may add options, e.g. --dkmstree/--sourcetree/--installtree for
# a private tree (how the tests exercise this script).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:-$(uname -r)}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
srcroot=${DKMS_SOURCETREE:-/usr/src}
src=$srcroot/mroce-$ver
read -ra args <<< "${DKMS_ARGS:-}"

command -v dkms >/dev/null || { echo "dkms-install: dkms is not installed (apt-get install dkms)" >&2; exit 1; }
[ -e "/lib/modules/$kver/build/Makefile" ] || {
	echo "dkms-install: no headers for $kver (apt-get install linux-headers-$kver)" >&2
	exit 1
}

# A clean source copy: what Kbuild needs, no build products.
if dkms status "${args[@]}" -m mroce -v "$ver" 2>/dev/null | grep -q .; then
	dkms remove "${args[@]}" -m mroce -v "$ver" --all
fi
rm -rf "$src"
mkdir -p "$src"
(cd "$top" && git ls-files -co --exclude-standard -- Kbuild dkms.conf \
	drivers/infiniband/sw/mroce include scripts/modprobe.d |
	grep -Ev '\.(o|ko|mod|mod\.c|cmd|a)$' |
	cpio -pdm --quiet "$src")

# Private trees (a test's) must exist, the install tree with the kernel's
# directory: dkms refuses "no write access to DKMS tree" and to install
# "onto a non-existent kernel".
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
	case ${args[$i]} in
	--dkmstree | --sourcetree) mkdir -p "${args[$((i + 1))]}" ;;
	--installtree) mkdir -p "${args[$((i + 1))]}/$kver" ;;
	esac
done
dkms add "${args[@]}" -m mroce -v "$ver"
dkms build "${args[@]}" -m mroce -v "$ver" -k "$kver"
dkms install "${args[@]}" -m mroce -v "$ver" -k "$kver"
if [ -z "${DKMS_ARGS:-}" ]; then
	install -D -m 0644 "$top/scripts/modprobe.d/mroce.conf" /etc/modprobe.d/mroce.conf
fi
echo "dkms-install: mroce $ver installed for $kver; load it with: modprobe mroce"
