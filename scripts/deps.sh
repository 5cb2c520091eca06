#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages mroce's build, tests and demo need, if any is
# missing (fast when all are present), then check that the kernel the test
# VM boots and the headers the module is built against are the same ABI.
# Usage: deps.sh [--kernel <series>]... [extra-package...]
#   --kernel 6.12  also a newer kernel to build and boot (make check's
#                  newer-kernel stage): unless `kver.sh 6.12` finds an image
#                  with its headers, install Debian's meta packages
#                  linux-image-6.12-amd64 and linux-headers-6.12-amd64
#                  (image and headers of one version)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

kernels=()
while [ "${1:-}" = --kernel ]; do
	kernels+=("$2")
	shift 2
done
newer=()
for series in "${kernels[@]}"; do
	"$here/kver.sh" "$series" >/dev/null 2>&1 ||
		newer+=("linux-image-$series-amd64" "linux-headers-$series-amd64")
done

pkgs=(
	# kernel, its headers and source (checkpatch), VM
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	qemu-system-x86 busybox-static kmod cpio file xz-utils procps
	build-essential bc dwarves
	# RDMA user space and network tools used by tests and the demo
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest python3-pyverbs
	libibverbs-dev
	iproute2 iputils-ping ethtool tcpdump iperf3
	# kernel ULP and tracing tools (later issues)
	nvme-cli fio ksmbd-tools cifs-utils bpftool bpftrace libbpf-dev
	# user space (C++17, GoogleTest, sanitizers, fuzzers); the CLI's BPF
	# skeleton finds libbpf through pkg-config (libbpf.pc needs libelf, zlib)
	cmake g++ libgtest-dev libgmock-dev clang libclang-rt-14-dev python3
	pkg-config libelf-dev zlib1g-dev
	# make bench-sim plots
	gnuplot-nox
	# make corebench (callgrind)
	valgrind
	"${newer[@]}"
	"$@"
)

# One dpkg-query for all; it lists nothing for packages it never heard of.
declare -A state=()
while read -r pkg status; do
	state[$pkg]=$status
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${pkgs[@]}" 2>/dev/null || true)
missing=()
for pkg in "${pkgs[@]}"; do
	[ "${state[$pkg]:-}" = installed ] || missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	sudo=
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || {
			echo "deps: not root and no sudo; run as root: apt-get install ${missing[*]}" >&2
			exit 1
		}
		sudo=sudo
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -q
	$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The VM boots /boot/vmlinuz-$kver; the module is built against
# /lib/modules/$kver/build. Both must come from the same kernel build.
kver=$("$here/kver.sh") || exit 1
img_ver=$(dpkg-query -W -f='${Version}' "linux-image-$kver" 2>/dev/null || true)
hdr_ver=$(dpkg-query -W -f='${Version}' "linux-headers-$kver" 2>/dev/null || true)
if [ -z "$img_ver" ] || [ "$img_ver" != "$hdr_ver" ]; then
	echo "deps: linux-image-$kver (${img_ver:-not installed}) and linux-headers-$kver (${hdr_ver:-not installed}) differ;" >&2
	echo "deps: install both at the same version: apt-get install linux-image-$kver linux-headers-$kver" >&2
	exit 1
fi
if [ ! -r "/boot/vmlinuz-$kver" ]; then
	echo "deps: /boot/vmlinuz-$kver is not readable by $(id -un)" >&2
	exit 1
fi
echo "deps: all present; VM kernel $kver, image and headers $img_ver"
for series in "${kernels[@]}"; do
	k=$("$here/kver.sh" "$series") || exit 1
	echo "deps: kernel $series: $k (image and headers)"
done
