#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build cifs.ko and ksmbd.ko with SMB Direct for the test VM.
#
# Debian's 6.1 kernel builds both without SMB Direct (CONFIG_CIFS_SMB_DIRECT
# and CONFIG_SMB_SERVER_SMBDIRECT are off). For the SMB Direct selftests we
# rebuild the two modules from Debian's own linux-source-6.1 -- the same
# source the running kernel was built from -- as external modules against
# /lib/modules/<kver>/build with both options on. Only the test VM loads
# them (vmrun.py stages them into the guest's /lib/modules overlay, where
# updates/ shadows the stock modules); nothing is installed on this machine.
#
# Two things make an out-of-tree build of these directories work:
#   * the option must be set twice: as a make variable (the Makefiles add
#     smbdirect.o / transport_rdma.o with it) and as -DCONFIG_...=1 (the C
#     code tests it with #ifdef, and autoconf.h of the headers says "off");
#   * the headers package ships no scripts/asn1_compiler, so we compile it
#     from the same source and generate the SPNEGO decoders beforehand;
#     kbuild then finds them up to date and never needs the compiler.
#
# Deviations from Debian's source, for the test VM only: the patches in
# this directory (*.patch, applied in name order), each fixing what makes
# Debian 12's cifs or ksmbd crash or fail as shipped:
#   cifs-smbd-destroy-disconnect-work.patch: at umount smbd_destroy() runs
#     in cifsd with SIGKILL pending, so it does not wait for the disconnect;
#     the drain's flush completions queue disconnect_work, which can run
#     after rdma_destroy_id() and oopses in rdma_disconnect() (any RDMA
#     device; mainline fixed it with disable_work_sync(), 2025). See
#     docs/ulp.md.
#   ksmbd-opinfo-put-null.patch: smb2_open() puts a NULL oplock when none
#     was granted and 6.1.192's opinfo_put() lacks mainline's NULL check:
#     the first such CREATE (every mount) oopses the server.
#   ksmbd-tools-3.4-ipc.patch: Debian 12 pairs kernel
# 6.1.192, whose ksmbd checks the payload_sz of ksmbd.mountd's share-config
# answers (a stable backport), with ksmbd-tools 3.4.7, which never fills
# that field in: every tree connect, IPC$ first, fails with
# STATUS_BAD_NETWORK_NAME, over TCP too (ksmbd-tools-3.4-ipc.patch takes
# the size from the message when the field is 0).
#
# The result is cached in build/smb/<kver>-<source version>-<hash>/ (hash of
# this script and the patches);
# a second call costs nothing. Prints the two .ko paths on stdout (what the
# vm-prepare protocol of vmrun.py expects), progress on stderr.
#
# Usage: build.sh [--kver KVER]       exit 0 built or cached, 1 failed
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kver=${MROCE_KVER:-}
while [ $# -gt 0 ]; do
	case $1 in
	--kver) kver=$2; shift 2 ;;
	*) echo "usage: $0 [--kver KVER]" >&2; exit 2 ;;
	esac
done
[ -n "$kver" ] || kver=$("$top/scripts/kver.sh")

say() { echo "smb-build: $*" >&2; }

tarball=/usr/src/linux-source-6.1.tar.xz
kdir=/lib/modules/$kver/build
[ -r "$tarball" ] || { say "$tarball missing (apt-get install linux-source-6.1)"; exit 1; }
[ -e "$kdir/Makefile" ] || { say "no headers for $kver in $kdir"; exit 1; }

# The source must be the kernel's own: Debian versions the two packages
# alike (linux-source-6.1 6.1.192-3 <-> linux-image-6.1.0-57-amd64 6.1.192-3).
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)
imgver=$(dpkg-query -W -f='${Version}' "linux-image-$kver" 2>/dev/null || echo unknown)
if [ "$srcver" != "$imgver" ]; then
	say "linux-source-6.1 $srcver is not the source of linux-image-$kver $imgver"
	exit 1
fi

patches=("$here"/*.patch)
hash=$(cat "$0" "${patches[@]}" | sha1sum | cut -c1-8)
out=$top/build/smb/$kver-$srcver-$hash
if [ -f "$out/cifs.ko" ] && [ -f "$out/ksmbd.ko" ]; then
	echo "$out/cifs.ko"
	echo "$out/ksmbd.ko"
	exit 0
fi

work=$top/build/smb/work-$kver
# Earlier builds for this kernel (another source or script version) go.
rm -rf "$work" "$top/build/smb/$kver-"*
mkdir -p "$work" "$out"
log=$out/build.log
t0=$(date +%s)

say "extracting fs/smb from $tarball (source $srcver)"
tar -xJf "$tarball" -C "$work" --strip-components=1 \
	linux-source-6.1/fs/smb \
	linux-source-6.1/fs/internal.h \
	linux-source-6.1/scripts/asn1_compiler.c \
	linux-source-6.1/include/linux/asn1.h \
	linux-source-6.1/include/linux/asn1_ber_bytecode.h

for p in "${patches[@]}"; do
	say "applying ${p##*/}"
	patch -s -d "$work" -p1 < "$p"
done

say "generating the ASN.1 decoders"
gcc -O2 -I"$work/include" -o "$work/asn1_compiler" "$work/scripts/asn1_compiler.c"
for grammar in client/cifs_spnego_negtokeninit server/ksmbd_spnego_negtokeninit \
		server/ksmbd_spnego_negtokentarg; do
	g=$work/fs/smb/$grammar
	"$work/asn1_compiler" "$g.asn1" "$g.asn1.c" "$g.asn1.h"
done

build() { # build DIR CONFIG_OPTION MAKE_VARS...
	local dir=$1 opt=$2
	shift 2
	say "building $dir with $opt (a few minutes on 2 cores)"
	make -C "$kdir" M="$work/fs/smb/$dir" "$@" "$opt=y" KCFLAGS="-D$opt=1" \
		-j"$(nproc)" modules >> "$log" 2>&1 || {
		say "build of $dir failed; last lines of $log:"
		tail -n 20 "$log" >&2
		exit 1
	}
}
build client CONFIG_CIFS_SMB_DIRECT CONFIG_CIFS=m
build server CONFIG_SMB_SERVER_SMBDIRECT CONFIG_SMB_SERVER=m

# A module that built without its RDMA transport would pass for one with it.
has_sym() { nm "$1" | grep -cw "$2" > /dev/null; }
has_sym "$work/fs/smb/client/cifs.ko" smbd_get_connection ||
	{ say "cifs.ko lacks SMB Direct (smbd_get_connection)"; exit 1; }
has_sym "$work/fs/smb/server/ksmbd.ko" ksmbd_rdma_init ||
	{ say "ksmbd.ko lacks SMB Direct (ksmbd_rdma_init)"; exit 1; }

cp "$work/fs/smb/client/cifs.ko" "$work/fs/smb/server/ksmbd.ko" "$out/"
rm -rf "$work"
say "built in $(( $(date +%s) - t0 ))s: $out"
echo "$out/cifs.ko"
echo "$out/ksmbd.ko"
