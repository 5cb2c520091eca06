#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics over RDMA: an nvmet target (nvmet-rdma, a memory-backed
# null_blk namespace) on device B, `nvme connect -t rdma` from device A, at
# 0 % and 1 % netem loss on both directions. The bytes are checked where
# they land, not by the side that sent them: the host writes fio crc32c
# patterns over the fabric and the target verifies them on its own disk;
# the target writes patterns locally and the host reads and verifies them
# over the fabric (128 KiB sequential and 4 KiB random, both ways). Fails
# on any I/O error, verify error, I/O timeout, controller reset/reconnect
# or keep-alive expiry in the kernel log.
#
# DEV_TYPE=rxe runs it over rdma_rxe (mroce_nvmeof_rxe.sh); ULP_LOSSES
# overrides the loss levels.
# vm-timeout: 420
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
. "$(dirname "$0")/lib_ulp.sh"
require_root
require_cmd rdma nvme fio tc

NQN=nqn.2024-01.org.mroce:nvmeof-test
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:6d726f63-6500-4000-8000-000000000001
HOSTID=6d726f63-6500-4000-8000-000000000001
PORT=4420
CFG=/sys/kernel/config/nvmet
TGT_DISK=/dev/nullb0
ULP_BAD_KLOG='I/O [0-9]+ (QID [0-9]+ )?timeout|timeout, (reset|abort)|error recovery|Reconnecting in|resetting controller|I/O error|failed with status|keep-alive timer .*expired|fatal error occurred|nvme_rdma.*(error|failed)|RDMA_CM_EVENT_(REJECTED|UNREACHABLE|ADDR_ERROR|ROUTE_ERROR|CONNECT_ERROR)'

cd "$MROCE_TEST_OUT" || exit 1

for m in null_blk nvmet nvmet_rdma nvme_rdma; do
	modprobe -n "$m" 2> /dev/null || skip_all "kernel module $m not available"
done

target_up() {
	modprobe null_blk nr_devices=1 gb=1 memory_backed=1 bs=4096 &&
		modprobe nvmet && modprobe nvmet_rdma || return 1
	[ -d "$CFG" ] || { echo "no $CFG (configfs not mounted?)"; return 1; }
	mkdir "$CFG/subsystems/$NQN" &&
		echo 1 > "$CFG/subsystems/$NQN/attr_allow_any_host" &&
		mkdir "$CFG/subsystems/$NQN/namespaces/1" &&
		echo -n "$TGT_DISK" > "$CFG/subsystems/$NQN/namespaces/1/device_path" &&
		echo 1 > "$CFG/subsystems/$NQN/namespaces/1/enable" &&
		mkdir "$CFG/ports/1" &&
		echo rdma > "$CFG/ports/1/addr_trtype" &&
		echo ipv4 > "$CFG/ports/1/addr_adrfam" &&
		echo "$ULP_IP_B" > "$CFG/ports/1/addr_traddr" &&
		echo "$PORT" > "$CFG/ports/1/addr_trsvcid" &&
		ln -s "$CFG/subsystems/$NQN" "$CFG/ports/1/subsystems/$NQN"
}

target_down() {
	rm -f "$CFG/ports/1/subsystems/$NQN" 2> /dev/null
	rmdir "$CFG/ports/1" 2> /dev/null
	[ -e "$CFG/subsystems/$NQN/namespaces/1/enable" ] &&
		echo 0 > "$CFG/subsystems/$NQN/namespaces/1/enable"
	rmdir "$CFG/subsystems/$NQN/namespaces/1" 2> /dev/null
	rmdir "$CFG/subsystems/$NQN" 2> /dev/null
	rmmod nvmet_rdma nvmet null_blk 2> /dev/null
	return 0
}

# The host's block device of our subsystem, e.g. /dev/nvme0n1.
host_disk() {
	local s b
	for s in /sys/class/nvme-subsystem/*; do
		[ "$(cat "$s/subsysnqn" 2> /dev/null)" = "$NQN" ] || continue
		for b in "$s"/nvme*n* "$s"/nvme*/nvme*n*; do
			[ -e "$b" ] || continue
			b=${b##*/}
			[[ $b == *c*n* ]] && continue	# hidden multipath path
			[ -b "/dev/$b" ] && { echo "/dev/$b"; return 0; }
		done
	done
	return 1
}

connect() {
	modprobe nvme_rdma || return 1
	timeout 60 nvme connect -t rdma -a "$ULP_IP_B" -s "$PORT" -w "$ULP_IP_A" -n "$NQN" \
		--hostnqn="$HOSTNQN" --hostid="$HOSTID" || return 1
	wait_for 10 host_disk
}

disconnect() {
	timeout 60 nvme disconnect -n "$NQN" > /dev/null || return 1
	! wait_for 0 host_disk
}

# fio_run LOG FILE write|verify JOB...: fio jobs one after another, each
# JOB "name:rw:bs:offset:size". write lays down blocks with crc32c verify
# headers; verify replays the same jobs with --verify_only, which reads the
# blocks back and checks every one. Every job must have moved its whole
# range: fio verifies nothing when misconfigured, which would make the test
# unfailable. (One fio per step: starting fio costs seconds under TCG.)
fio_run() {
	local log=$1 file=$2 mode=$3 rc=0 job name rw bs off size got i=0
	local args=(--do_verify=0) dir=write
	shift 3
	[ -b "$file" ] || { echo "$file is not a block device"; return 1; }
	[ "$mode" = verify ] && args=(--verify_only=1 --do_verify=1) dir=read
	local jobs=()
	for job in "$@"; do
		IFS=: read -r name rw bs off size <<< "$job"
		jobs+=(--name="$name" --rw="$rw" --bs="$bs" --offset="$off" --size="$size" --stonewall)
	done
	timeout 180 fio --filename="$file" --ioengine=libaio --direct=1 --iodepth=16 \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 --randrepeat=1 \
		"${args[@]}" --output-format=terse --output="$log.terse" "${jobs[@]}" \
		> "$log" 2>&1 || rc=$?
	for job in "$@"; do
		i=$((i + 1))
		IFS=: read -r name rw bs off size <<< "$job"
		got=$(fio_stat "$log" "$i" "$dir" kb)
		if [ "$(fio_stat "$log" "$i" - error)" != 0 ] ||
		   [ "$((${got:-0} * 1024))" -lt "$(numfmt --from=iec "$size")" ]; then
			echo "fio job $name: error $(fio_stat "$log" "$i" - error), $mode moved ${got:-?} KiB of $size"
			rc=1
		fi
	done
	[ $rc -eq 0 ] && return 0
	tail -n 10 "$log"
	return 1
}

# fio_stat LOG JOB read|write|- FIELD: from fio's terse (v3) report.
fio_stat() {
	local -A at=([error]=5 [kb]=6 [bw]=7 [iops]=8)
	local f=${at[$4]}
	[ "$3" = write ] && [ "$f" -gt 5 ] && f=$((f + 41))
	awk -F';' -v n="$2" -v f="$f" '$1 == 3 && ++i == n { print int($f); exit }' "$1.terse" 2> /dev/null
}

# Throughput of one job, for the log.
fio_bw() { # fio_bw LOG JOB read|write
	echo "$(( $(fio_stat "$1" "$2" "$3" bw) / 1024 )) MiB/s, $(fio_stat "$1" "$2" "$3" iops) IOPS"
}

run_level() {
	local l=$1 dev tx0 tx1
	dmesg_mark
	ulp_loss "$l"
	tx0=$(cat /sys/class/net/"$ULP_NDEV_A"/statistics/tx_packets)
	if ! check "$l% loss: nvme connect -t rdma ($DEV_TYPE)" connect; then
		ulp_loss 0
		return
	fi
	dev=$(host_disk)
	ktap_info "$l% loss: $dev, $(dmesg_since_mark | grep -o 'creating [0-9]* I/O queues' | head -n 1)"

	# Host -> target: what the host wrote over RDMA is on the target's disk.
	check "$l% loss: host writes 16 MiB 128 KiB sequential + 4 MiB 4 KiB random" \
		fio_run "$l-hw.log" "$dev" write w128:write:128k:0:16M w4:randwrite:4k:16M:4M
	ktap_info "$l% loss: write 128 KiB $(fio_bw "$l-hw.log" 1 write), 4 KiB $(fio_bw "$l-hw.log" 2 write)"
	check "$l% loss: the target's disk holds exactly what the host wrote (crc32c)" \
		fio_run "$l-tv.log" "$TGT_DISK" verify w128:write:128k:0:16M w4:randwrite:4k:16M:4M

	# Target -> host: data written locally on the target reads back right.
	fio_run "$l-tw.log" "$TGT_DISK" write r128:write:128k:32M:16M r4:randwrite:4k:48M:4M ||
		ktap_fail "$l% loss: the target writes its local patterns"
	check "$l% loss: host reads 16 MiB 128 KiB sequential + 4 MiB 4 KiB random, verifies (crc32c)" \
		fio_run "$l-hr.log" "$dev" verify r128:write:128k:32M:16M r4:randwrite:4k:48M:4M
	ktap_info "$l% loss: read 128 KiB $(fio_bw "$l-hr.log" 1 read), 4 KiB $(fio_bw "$l-hr.log" 2 read)"

	check "$l% loss: nvme disconnect" disconnect
	ulp_loss 0
	tx1=$(cat /sys/class/net/"$ULP_NDEV_A"/statistics/tx_packets)
	# 40 MiB crossed the veth: far more packets than a local loop would send.
	check "$l% loss: the I/O crossed the veth ($((tx1 - tx0)) packets)" test $((tx1 - tx0)) -gt 10000
	ktap_info "$l% loss: $ULP_DEV_A sent/received $(ulp_pkts "$ULP_DEV_A") packets"
	check "$l% loss: no I/O errors, timeouts, resets or warnings in the kernel log" ulp_klog_clean
}

ulp_setup_or_finish
ulp_need_cm
check "target: nvmet-rdma on $ULP_IP_B:$PORT, null_blk namespace" target_up
if [ $_ktap_fail -gt 0 ]; then
	target_down
	ulp_teardown
	ktap_finish
fi
# The checker itself: a range nobody wrote must fail verification.
check_fail "fio verification catches data that is not the pattern" \
	fio_run unwritten.log "$TGT_DISK" verify never:write:128k:64M:1M
for l in $(ulp_losses); do
	run_level "$l"
	disconnect > /dev/null 2>&1
done
target_down
rmmod nvme_rdma nvme_fabrics 2> /dev/null
ulp_teardown
ktap_finish
