#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The port follows its netdev: admin up/down and carrier move the port state
# and raise IB_EVENT_PORT_ACTIVE/ERR (seen by ibv_asyncwatch, once per real
# change), and the netdev MTU sets the active IB MTU.
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip ibv_devinfo ibv_asyncwatch stdbuf

active_mtu() { ibv_devinfo -d "$1" | awk '/active_mtu:/ { print $2 }'; }
state_is() { [ "$(port_attr "$1" state)" = "$2" ]; }
events() { grep -o 'IBV_EVENT_PORT_[A-Z]*' "$events_file" | sed 's/IBV_EVENT_PORT_//' | tr '\n' ' '; }
nevents_is() { [ "$(grep -c 'IBV_EVENT_PORT_' "$events_file")" -eq "$1" ]; }
watching() { ls -l "/proc/$watch_pid/fd" 2>/dev/null | grep -q infiniband/uverbs; }

mroce_load
dmesg_mark
topo_netns
mroce_link_add mroce_a va a
events_file=$MROCE_TEST_OUT/asyncwatch.txt
stdbuf -oL ibv_asyncwatch -d mroce_a > "$events_file" 2>&1 &
watch_pid=$!
check "ibv_asyncwatch has the device open" wait_for 10 watching

check_eq "port ACTIVE on a running veth" "4: ACTIVE" "$(port_attr mroce_a state)"
check_eq "physical state LinkUp" "5: LinkUp" "$(port_attr mroce_a phys_state)"

nsexec a ip link set va down
check "admin down: port DOWN" wait_for 5 state_is mroce_a "1: DOWN"
check_eq "admin down: physical state Disabled" "3: Disabled" "$(port_attr mroce_a phys_state)"
check "admin down: PORT_ERR event" wait_for 5 nevents_is 1
nsexec a ip link set va up
check "admin up: port ACTIVE" wait_for 5 state_is mroce_a "4: ACTIVE"
check "admin up: PORT_ACTIVE event" wait_for 5 nevents_is 2

nsexec b ip link set vb down
check "peer down (no carrier): port DOWN" wait_for 5 state_is mroce_a "1: DOWN"
check_eq "no carrier: physical state Polling" "2: Polling" "$(port_attr mroce_a phys_state)"
check "no carrier: PORT_ERR event" wait_for 5 nevents_is 3
nsexec b ip link set vb up
check "carrier back: port ACTIVE" wait_for 5 state_is mroce_a "4: ACTIVE"
check "carrier back: PORT_ACTIVE event" wait_for 5 nevents_is 4

for pair in 1500:1024 9000:4096 4200:2048 2200:2048 2000:1024 1280:1024 700:512 600:256; do
	nsexec a ip link set va mtu "${pair%:*}"
	check_eq "netdev MTU ${pair%:*} -> active MTU ${pair#*:}" "${pair#*:}" "$(active_mtu mroce_a)"
done
check_eq "MTU changes that keep the port usable raise no event" 4 \
	"$(grep -c 'IBV_EVENT_PORT_' "$events_file")"
nsexec a ip link set va mtu 300
check "MTU too small for any IB MTU: port DOWN" wait_for 5 state_is mroce_a "1: DOWN"
check "... with a PORT_ERR event" wait_for 5 nevents_is 5
nsexec a ip link set va mtu 1500
check "MTU 1500 again: port ACTIVE" wait_for 5 state_is mroce_a "4: ACTIVE"
check "... with a PORT_ACTIVE event" wait_for 5 nevents_is 6
check_eq "back to active MTU 1024" 1024 "$(active_mtu mroce_a)"

nsexec a ip link set va up
sleep 1
check_eq "events exactly once per change, in order" "ERR ACTIVE ERR ACTIVE ERR ACTIVE " "$(events)"
kill "$watch_pid"
wait "$watch_pid" 2>/dev/null
check "kernel log: port down/active and MTU changes" \
	dmesg_has 'mroce_a: va mtu 9000: active mtu 4096'
check "kernel log clean" dmesg_clean
ktap_finish
