#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 480
#
# rdma-core sees mroce through its stock rxe provider (driver id RXE, uverbs
# ABI 2): ibv_devices and ibv_devinfo -v list it as a RoCE v2 device. With
# the transport, perftest in its completion-event mode (-e: sleep in
# ibv_get_cq_event, re-arm with ibv_req_notify_cq) between the two devices.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
require_root
require_cmd rdma ip ibv_devices ibv_devinfo

field() { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' <<< "$devinfo"; }
uverbs_of() {
	local d
	for d in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$d/ibdev")" = "$1" ] && echo "$d"
	done
}

mroce_pair_up
wait_for 5 has_gid mroce_a "$(gid_of_ip fd00::1)"

guid=$(tr -d : < /sys/class/infiniband/mroce_a/node_guid)
check "ibv_devices lists mroce_a with its node GUID" \
	bash -c "ibv_devices | grep -Eq '^[[:space:]]*mroce_a[[:space:]]+$guid\$'"
check "ibv_devices lists mroce_b" bash -c "ibv_devices | grep -q mroce_b"
check "ibv_devinfo -l lists both" bash -c "[ \$(ibv_devinfo -l | grep -c mroce_) -eq 2 ]"

uverbs=$(uverbs_of mroce_a)
check "uverbs device node exists" test -c "/dev/infiniband/${uverbs##*/}"
check_eq "uverbs ABI version 2 (rxe)" 2 "$(cat "$uverbs/abi_version" 2>/dev/null)"

# Opening the device needs a provider: ibv_devinfo fails without one, and
# libibverbs warns about devices it has no driver for.
devinfo=$(IBV_SHOW_WARNINGS=1 ibv_devinfo -v -d mroce_a 2>"$MROCE_TEST_OUT/devinfo.err")
check "ibv_devinfo -v opens the device (the rxe provider bound)" test -n "$devinfo"
check_eq "no libibverbs warnings" "" "$(cat "$MROCE_TEST_OUT/devinfo.err")"
check_eq "transport" "InfiniBand (0)" "$(field transport)"
check_eq "node_guid" "$(cat /sys/class/infiniband/mroce_a/node_guid)" "$(field node_guid)"
check_eq "vendor_id" "0xffffff" "$(field vendor_id)"
check_eq "phys_port_cnt" 1 "$(field phys_port_cnt)"
check_eq "port state" "PORT_ACTIVE (4)" "$(field state)"
check_eq "link_layer" Ethernet "$(field link_layer)"
check_eq "active_mtu on a 1500-byte veth" "1024 (3)" "$(field active_mtu)"
check_eq "max_mtu" "4096 (5)" "$(field max_mtu)"
check_eq "phys_state" "LINK_UP (5)" "$(field phys_state)"
check_eq "pkey_tbl_len" 1 "$(field pkey_tbl_len)"
check_eq "gid_tbl_len" 128 "$(field gid_tbl_len)"
for want in "::ffff:10.0.0.1, RoCE v2" "fd00::1, RoCE v2"; do
	check "GID $want" grep -qF -- "$want" <<< "$devinfo"
done
check "link-local default GID" grep -Eq 'GID\[  0\]:[[:space:]]+fe80::.*, RoCE v2' <<< "$devinfo"
check_eq "only RoCE v2 GIDs" 0 "$(grep 'GID\[' <<< "$devinfo" | grep -vc 'RoCE v2')"
check "mroce_b shows its own address" bash -c \
	"ibv_devinfo -v -d mroce_b | grep -qF '::ffff:10.0.0.2, RoCE v2'"

# Each run keeps its own logs ($MROCE_TEST_OUT/pair-<n>-<tool>.{client,server});
# perftest_pair keeps a failed clock calibration from failing a good run.
if why=$(transport_ready a mroce_a); then
	check "ib_send_bw -e: completions through CQ events" \
		mroce_pair_run ib_send_bw -e -s 4096 -n 100
	check "ib_read_bw -e" mroce_pair_run ib_read_bw -e -s 16384 -n 50
	check "ib_send_lat -e" mroce_pair_run ib_send_lat -e -s 64 -n 100
else
	ktap_skip "perftest with completion events (-e)" "$why"
fi
check "kernel log clean" dmesg_clean
ktap_finish
