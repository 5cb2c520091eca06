#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# SMB Direct: ksmbd serving a share over RDMA on device B, `mount -t cifs
# -o rdma` on device A, files copied both ways at 0 % and 1 % netem loss
# and checked by SHA-256 on the side that received them. First the same
# server and client over plain TCP, so a broken SMB setup is not taken for
# a broken RDMA device. Fails on any checksum mismatch, I/O error, SMB
# reconnect or warning in the kernel log.
#
# Debian's kernel has SMB Direct off in cifs and ksmbd; vmrun.py runs
# selftests/smb/build.sh on the host first (the vm-prepare line below),
# which rebuilds both from Debian's linux-source-6.1 with it on and stages
# them over the stock modules in the guest.
#
# DEV_TYPE=rxe runs it over rdma_rxe (mroce_smb_rxe.sh); ULP_LOSSES
# overrides the loss levels.
# vm-prepare: selftests/smb/build.sh
# vm-timeout: 420
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
. "$(dirname "$0")/lib_ulp.sh"
require_root
require_cmd rdma tc ksmbd.mountd ksmbd.adduser ksmbd.control mount.cifs sha256sum

SMB_USER=mroce
SMB_PASS=mroce-test-pw
SMB_DIR=/tmp/smb
SHARE=$SMB_DIR/share		# what ksmbd serves (device B's side)
MNT=$SMB_DIR/mnt		# where the client mounts it (device A's side)
SRC=$SMB_DIR/src
DST=$SMB_DIR/dst
ULP_BAD_KLOG='CIFS: VFS:|CIFS: .*reconnect|smbd_.*(fail|error)|ksmbd: .*(error|[Ff]ail[^ ]* [^v])|I/O error|RDMA_CM_EVENT_(UNREACHABLE|ADDR_ERROR|ROUTE_ERROR|CONNECT_ERROR)'

# cifs logs two lines at VFS level although all is well: it tries port 5445
# first (iWARP's), then 445 (where ksmbd listens on a RoCE device).
# Our modules are unsigned: loading them taints the kernel, which is fine.
ULP_OK_KLOG='rdma_connect failed port=5445|RDMA transport established|module verification failed'

cd "$MROCE_TEST_OUT" || exit 1

# Our rebuilt modules shadow the stock ones only if vmrun.py staged them.
smb_direct_modules() {
	local m path
	for m in cifs ksmbd; do
		path=$(modinfo -n "$m" 2> /dev/null)
		[[ $path == */updates/* ]] || {
			echo "$m resolves to ${path:-nothing}, not the SMB Direct build"
			return 1
		}
	done
}
why=$(smb_direct_modules) ||
	skip_all "SMB Direct modules not staged ($why); run it through make vmtest, which runs selftests/smb/build.sh"

cleanup() {
	umount -f "$MNT" 2> /dev/null
	ksmbd.control -s > /dev/null 2>&1
	sleep 0.5
	rmmod cifs ksmbd 2> /dev/null
	ulp_teardown
}
trap cleanup EXIT

server_up() {
	mkdir -p "$SHARE" "$MNT" "$SRC" "$DST" || return 1
	# ksmbd maps the SMB account to a local user; the guest's /etc is a
	# writable overlay of the host's, so this user vanishes with the VM.
	id -u "$SMB_USER" > /dev/null 2>&1 ||
		useradd --no-create-home --home-dir "$SHARE" --shell /usr/sbin/nologin "$SMB_USER" ||
		return 1
	chown "$SMB_USER" "$SHARE"
	# Everything else lives here, not in /etc/ksmbd.
	cat > "$SMB_DIR/ksmbd.conf" <<- EOF
	[global]
		server min protocol = SMB3_11
		server signing = disabled
		smb3 encryption = no
		map to guest = never
	[share]
		path = $SHARE
		writeable = yes
		browseable = yes
		guest ok = no
		valid users = $SMB_USER
		force user = $SMB_USER
	EOF
	ksmbd.adduser -a "$SMB_USER" -p "$SMB_PASS" -c "$SMB_DIR/ksmbd.conf" \
		-i "$SMB_DIR/ksmbdpwd.db" > /dev/null || return 1
	modprobe ksmbd || return 1
	# -n: stay in the foreground, so its log (no syslog in the VM) is ours.
	ksmbd.mountd -v -n -c "$SMB_DIR/ksmbd.conf" -u "$SMB_DIR/ksmbdpwd.db" \
		> "$MROCE_TEST_OUT/ksmbd.mountd.log" 2>&1 &
	wait_for 20 tcp_listening 445
}

smb_mount() { # smb_mount [rdma]
	local opts=vers=3.1.1,username=$SMB_USER,password=$SMB_PASS,cache=none,echo_interval=10
	[ "${1:-}" = rdma ] && opts=rdma,$opts
	modprobe cifs || return 1
	timeout 90 mount -t cifs "//$ULP_IP_B/share" "$MNT" -o "$opts" || return 1
	mountpoint -q "$MNT"
}

smb_umount() { timeout 60 umount "$MNT"; }

# The client's connection really is SMB Direct.
mounted_over_rdma() {
	grep -q 'SMBDirect (in hex) protocol version' /proc/fs/cifs/DebugData ||
		{ cat /proc/fs/cifs/DebugData; return 1; }
}

# Files of awkward and large sizes, random content.
make_files() { # make_files DIR
	local s
	mkdir -p "$1" || return 1
	for s in 1 4095 4096 65537 1048576 3000001 8388608; do
		head -c "$s" /dev/urandom > "$1/f$s" || return 1
	done
}

# same_files A B: every file of A is in B with the same SHA-256.
same_files() {
	local a=$1 b=$2
	(cd "$a" && sha256sum -- *) > "$SMB_DIR/sums" || return 1
	(cd "$b" && sha256sum --quiet -c "$SMB_DIR/sums")
}

# copy_both TAG: client -> server and server -> client, checked where the
# bytes landed (the server's own directory, the client's local disk).
copy_both() {
	local tag=$1
	rm -rf "${SRC:?}/$tag" "${DST:?}/$tag" "${SHARE:?}/up-$tag" "${SHARE:?}/down-$tag"
	make_files "$SRC/$tag" && make_files "$SHARE/down-$tag" || return 1
	chown -R "$SMB_USER" "$SHARE/down-$tag"
	mkdir "$MNT/up-$tag" && cp "$SRC/$tag"/* "$MNT/up-$tag/" || { echo "upload failed"; return 1; }
	same_files "$SRC/$tag" "$SHARE/up-$tag" || { echo "the server got other bytes"; return 1; }
	mkdir -p "$DST/$tag" && cp "$MNT/down-$tag"/* "$DST/$tag/" || { echo "download failed"; return 1; }
	same_files "$SHARE/down-$tag" "$DST/$tag" || { echo "the client got other bytes"; return 1; }
}

ulp_setup_or_finish
dmesg_mark
check "ksmbd: share served from $SHARE (ksmbd.mountd with a private config)" server_up
[ "$_ktap_fail" -gt 0 ] && ktap_finish

# --- plain TCP: the SMB setup itself ------------------------------------------
if check "TCP: mount -t cifs //$ULP_IP_B/share (vers 3.1.1)" smb_mount; then
	check "TCP: 12 MiB in 7 files each way, SHA-256 equal on the receiving side" copy_both tcp
	check "TCP: umount" smb_umount
fi
check "TCP: kernel log clean" ulp_klog_clean

# --- SMB Direct ---------------------------------------------------------------
if why=$(ulp_cm_missing); then
	[ "$_ktap_fail" -gt 0 ] && ktap_finish
	skip_all "$why"
fi
for l in $(ulp_losses); do
	dmesg_mark
	ulp_loss "$l"
	rx0=$(cat /sys/class/net/"$ULP_NDEV_B"/statistics/rx_packets)
	if check "$l% loss: mount -t cifs -o rdma over $DEV_TYPE" smb_mount rdma; then
		check "$l% loss: the session runs over SMB Direct" mounted_over_rdma
		check "$l% loss: 12 MiB in 7 files each way, SHA-256 equal on the receiving side" \
			copy_both "rdma$l"
		check "$l% loss: umount" smb_umount
	fi
	ulp_loss 0
	rx1=$(cat /sys/class/net/"$ULP_NDEV_B"/statistics/rx_packets)
	ktap_info "$l% loss: veth rx $((rx1 - rx0)) packets; $ULP_DEV_A sent/received $(ulp_pkts "$ULP_DEV_A")"
	check "$l% loss: no SMB errors, reconnects or warnings in the kernel log" ulp_klog_clean
done
ktap_finish
