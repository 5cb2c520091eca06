#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe-oF over mroce while I/O is running (fio, 4 KiB random read/write,
# queue depth 16, on the host's namespace):
#   1. nvme disconnect: fio's I/O fails, fio ends; nothing hangs.
#   2. the target's RDMA device is deleted (rdma link delete) and added
#      again, and the target port re-enabled (nvmet does not listen again
#      by itself): the host keeps reconnecting and gets back to "live" on
#      its own; afterwards data written and read back verifies.
#   3. the host's netdev is deleted (the veth pair): both mroce devices go,
#      the host's controller with them, fio's I/O fails, fio ends.
# Every step has a deadline, the kernel log must stay free of warnings,
# hung tasks and the like (I/O errors are expected here), and mroce must
# unload at the end: nothing kept a reference.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
. "$(dirname "$0")/lib_ulp.sh"
. "$(dirname "$0")/lib_nvmeof.sh"
require_root
require_cmd rdma nvme fio

cd "$MROCE_TEST_OUT" || exit 1
nvmeof_need_modules

# The host's controller of our subsystem (nvme0), and its state.
host_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2> /dev/null)" = "$NQN" ] && { echo "${c##*/}"; return 0; }
	done
	return 1
}
ctrl_state() { cat "/sys/class/nvme/$(host_ctrl)/state" 2> /dev/null; }
ctrl_live() { [ "$(ctrl_state)" = live ]; }
no_ctrl() { ! host_ctrl > /dev/null; }

# Background load on the host's disk; its pid in $load_pid.
load_start() { # load_start TAG
	local dev
	dev=$(host_disk) || { echo "no host disk"; return 1; }
	fio --filename="$dev" --ioengine=libaio --direct=1 --iodepth=16 --rw=randrw \
		--bs=4k --size=64M --time_based --runtime=150 --name=load \
		> "load-$1.log" 2>&1 &
	load_pid=$!
	# I/O is flowing: the host sends over the veth. (The multipath head
	# device keeps no I/O statistics.)
	tx0=$(tx_pkts)
	wait_for 30 tx_grew "$tx0" 500 || { echo "no traffic from fio"; return 1; }
	kill -0 "$load_pid"
}

tx_pkts() { cat "/sys/class/net/$ULP_NDEV_A/statistics/tx_packets"; }
tx_grew() { [ $(($(tx_pkts) - $1)) -ge "$2" ]; }

# load_ends SECS: the background fio finished by itself within SECS.
load_ends() {
	wait_for "$1" exited "$load_pid" || { kill -9 "$load_pid"; return 1; }
	wait "$load_pid"
	return 0
}

short_verify() {
	local dev
	dev=$(host_disk) || return 1
	fio_run v-w.log "$dev" write vw:randwrite:4k:0:2M &&
		fio_run v-r.log "$dev" verify vw:randwrite:4k:0:2M
}

ulp_setup_or_finish
ulp_need_cm
check "target: nvmet-rdma on $ULP_IP_B:$PORT, null_blk namespace" target_up
if [ "$_ktap_fail" -gt 0 ]; then
	target_down
	ulp_teardown
	ktap_finish
fi

# --- 1. disconnect under load ---------------------------------------------------
dmesg_mark
if ulp_check_here "connect" connect && ulp_check_here "1: fio is moving data" load_start disc; then
	check "1: nvme disconnect while fio runs" disconnect
	ulp_check_here "1: fio ends (its I/O failed) within 60 s" load_ends 60
	check "1: the controller is gone" wait_for 10 no_ctrl
fi
check "1: kernel log clean (no warning, hang or leak report)" dmesg_clean

# --- 2. target device deleted and re-added under load ----------------------------
disconnect > /dev/null 2>&1
dmesg_mark
if ulp_check_here "connect (reconnect every 2 s, give up after 120 s)" \
	connect --reconnect-delay=2 --ctrl-loss-tmo=120 &&
   ulp_check_here "2: fio is moving data" load_start relink; then
	check "2: rdma link delete $ULP_DEV_B (the target's device) within 30 s" \
		timeout 30 rdma link delete "$ULP_DEV_B"
	check "2: the host notices: controller leaves live" wait_for 60 bash -c \
		"[ \"\$(cat /sys/class/nvme/$(host_ctrl)/state)\" != live ]"
	check "2: $ULP_DEV_B added again" mroce_link_add "$ULP_DEV_B" "$ULP_NDEV_B"
	check "2: nvmet port re-enabled on it" target_port_cycle
	check "2: the host reconnects by itself (live within 90 s)" wait_for 90 ctrl_live
	kill "$load_pid" 2> /dev/null
	ulp_check_here "2: the interrupted fio ends" load_ends 60
	check "2: after the reconnect, 2 MiB written and read back verify" short_verify
	check "2: nvme disconnect" disconnect
fi
check "2: kernel log clean (no warning, hang or leak report)" dmesg_clean

# --- 3. the netdev goes away under load -----------------------------------------
disconnect > /dev/null 2>&1
dmesg_mark
if ulp_check_here "connect" connect && ulp_check_here "3: fio is moving data" load_start netdev; then
	check "3: ip link del $ULP_NDEV_A while fio runs, within 30 s" \
		timeout 30 ip link del "$ULP_NDEV_A"
	check "3: both mroce devices are gone" wait_for 20 bash -c \
		"! [ -e /sys/class/infiniband/$ULP_DEV_A ] && ! [ -e /sys/class/infiniband/$ULP_DEV_B ]"
	check "3: the host's controller is deleted" wait_for 60 no_ctrl
	ulp_check_here "3: fio ends (its I/O failed) within 60 s" load_ends 60
fi
check "3: kernel log clean (no warning, hang or leak report)" dmesg_clean

disconnect > /dev/null 2>&1
target_down
rmmod nvme_rdma nvme_fabrics 2> /dev/null
ulp_teardown
check "mroce unloads: no object outlived its users" mroce_unload
ktap_finish
