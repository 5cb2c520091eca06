#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A net device that goes away takes its RDMA device with it -- also while a
# process has the RDMA device open -- whether it is deleted, its namespace
# is destroyed, or the module is removed.
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip ibv_asyncwatch stdbuf

gone() { ! rdma_dev_exists "$1"; }
watching() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q infiniband/uverbs; }

# Start ibv_asyncwatch on DEV; its pid in $watch_pid. Not under check:
# check runs its command in a subshell, which would keep the pid to itself.
watch_dev() {
	stdbuf -oL ibv_asyncwatch -d "$1" > "$MROCE_TEST_OUT/watch-$1.txt" 2>&1 &
	watch_pid=$!
}

mroce_pair_up
watch_dev mroce_a
check "an application holds mroce_a open" wait_for 10 watching "$watch_pid"
start=$(date +%s)
check "deleting the veth pair completes" timeout 30 ip -n a link del va
check "... within 10 s although mroce_a is open" test $(( $(date +%s) - start )) -le 10
check "mroce_a is gone" wait_for 10 gone mroce_a
check "mroce_b (on the peer) is gone" wait_for 10 gone mroce_b
check "the application was told: DEVICE_FATAL" \
	wait_for 10 grep -q IBV_EVENT_DEVICE_FATAL "$MROCE_TEST_OUT/watch-mroce_a.txt"
kill "$watch_pid" 2>/dev/null
check "kernel log: va is going away" dmesg_has 'mroce_a: va is going away, removing device'
topo_netns_cleanup

topo_netns
mroce_link_add mroce_a va a
check "destroying netns a removes mroce_a" bash -c 'ip netns del a'
check "... (asynchronously)" wait_for 20 gone mroce_a
topo_netns_cleanup

ip link add d0 type dummy && ip link set d0 up
mroce_link_add m0 d0
check "ip link del of a dummy removes its device" ip link del d0
check "... m0 is gone" wait_for 10 gone m0

ip link add d0 type dummy && ip link set d0 up
mroce_link_add m0 d0
watch_dev m0
check "an application holds m0 open" wait_for 10 watching "$watch_pid"
check "rmmod mroce with the device open" timeout 30 rmmod mroce
check "m0 is gone" gone m0
# The async event FD stays open after the device is gone (the core closes
# its queue only when the process does): DEVICE_FATAL is how it learns.
check "the application holding m0 was told: DEVICE_FATAL" \
	wait_for 10 grep -q IBV_EVENT_DEVICE_FATAL "$MROCE_TEST_OUT/watch-m0.txt"
kill "$watch_pid" 2>/dev/null
check "the same netdev takes a new device" mroce_link_add m0 d0
check "kernel log clean (no netdev refcount leak)" dmesg_clean
ktap_finish
