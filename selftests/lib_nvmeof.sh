#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics helpers for the NVMe-oF selftests and benchmark. Source
# after lib_ulp.sh. The target (nvmet-rdma, a memory-backed null_blk
# namespace) listens on $ULP_IP_B, the host connects from $ULP_IP_A.
#
#   nvmeof_need_modules        skip_all unless the kernel has the modules
#   target_up / target_down    configure / remove the nvmet target
#   connect [nvme-connect args] / disconnect
#   host_disk                  the host's block device of our subsystem
#   fio_run LOG FILE write|verify JOB...   fio with crc32c verification
#   fio_stat LOG JOB read|write|- FIELD    one number from fio's terse log
#   fio_bw LOG JOB read|write  "N MiB/s, N IOPS" for the log

NQN=nqn.2024-01.org.mroce:nvmeof-test
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:6d726f63-6500-4000-8000-000000000001
HOSTID=6d726f63-6500-4000-8000-000000000001
PORT=4420
CFG=/sys/kernel/config/nvmet
TGT_DISK=/dev/nullb0

# Skip unless the kernel has everything NVMe-oF over RDMA needs.
nvmeof_need_modules() {
	local m
	for m in null_blk nvmet nvmet_rdma nvme_rdma; do
		modprobe -n "$m" 2> /dev/null || skip_all "kernel module $m not available"
	done
}

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

connect() { # connect [extra nvme-connect options]
	modprobe nvme_rdma || return 1
	timeout 60 nvme connect -t rdma -a "$ULP_IP_B" -s "$PORT" -w "$ULP_IP_A" -n "$NQN" \
		--hostnqn="$HOSTNQN" --hostid="$HOSTID" "$@" || return 1
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

# nvmet destroys a listener whose RDMA device went away and does not listen
# again by itself (it repairs only address changes): take the port down and
# up, as an administrator would.
target_port_cycle() {
	rm -f "$CFG/ports/1/subsystems/$NQN" &&
		ln -s "$CFG/subsystems/$NQN" "$CFG/ports/1/subsystems/$NQN"
}
