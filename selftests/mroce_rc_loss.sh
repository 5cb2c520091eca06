#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC traffic between mroce devices in netns a and b while netem on both
# veth ends loses (1 %, 10 %), duplicates and reorders packets. Every
# operation type must deliver every byte (tools/mroce_verify: SEND,
# SEND_IMM, WRITE, WRITE_IMM, READ and both atomics, both directions, 4
# QPs), perftest runs must complete, the retransmission counters must show
# the transport recovered the losses by itself, and no QP may run out of
# retries or end up in error.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
require_root
require_cmd rdma ip ss tc ib_write_bw ib_send_bw ib_read_bw ibv_rc_pingpong

mroce_pair_up
transport_ready a mroce_a > /dev/null || skip_all "$(transport_ready a mroce_a)"
gid_index mroce_a 10.0.0.1 > /dev/null && gid_index mroce_b 10.0.0.2 > /dev/null ||
	skip_all "no IPv4 GIDs"
verify=1
# Not in a subshell: build_tools sets MROCE_TOOLS.
build_tools mroce_verify || { verify=; ktap_info "no mroce_verify: $tools_why"; }

cnt() { hw_counter "$1" "$2"; }
both() { echo $(( $(cnt mroce_a "$1") + $(cnt mroce_b "$1") )); }

# pair TOOL ARGS...: server on mroce_b (netns b), client on mroce_a, each
# on its IPv4 GID; every run keeps its logs (pair-<subtest>-TOOL.*).
pair() {
	PERFTEST_LOG=pair-$_ktap_n-$1 PERFTEST_TIMEOUT=240 \
		perftest_pair a mroce_a b mroce_b 10.0.0.2 "$@"
}

netem_both() {
	netem_set a va "$@" && netem_set b vb "$@"
}

# run_case NAME NETEM-ARGS...: the same traffic under one impairment.
run_case() {
	local name=$1 retx0
	shift
	netem_both "$@" || { ktap_fail "$name: netem $*"; return; }
	retx0=$(both retrans_pkts)
	if [ -n "$verify" ]; then
		check "$name: every byte of every op type arrives (4 QPs, both ways)" \
			verify_pair a mroce_a b mroce_b 10.0.0.2 -q 4 -s 1,4096,65536,262144 -T 120
	fi
	check "$name: ib_write_bw 64 KiB x 60" pair ib_write_bw -s 65536 -n 60
	check "$name: ib_send_bw 64 KiB x 60" pair ib_send_bw -s 65536 -n 60
	check "$name: ib_read_bw 64 KiB x 60" pair ib_read_bw -s 65536 -n 60
	check "$name: ibv_rc_pingpong 200 x 4 KiB" pair ibv_rc_pingpong -n 200 -s 4096
	netem_clear a va
	netem_clear b vb
	ktap_info "$name: $(( $(both retrans_pkts) - retx0 )) packets sent again"
}

run_case "1 % loss" loss 1%
check "1 % loss was recovered by retransmission" test "$(both retrans_pkts)" -gt 0
check "... found by SACK gaps" test "$(both sack_gaps)" -gt 0
run_case "10 % loss" loss 10%
run_case "5 % duplication" duplicate 5%
run_case "reordering (25 % delayed 1 ms)" delay 1ms reorder 75% 50%

# ACK delay spikes: every path of a's connection times out at once and is
# re-keyed while the ACKs of what it sent are still on their way; they come
# back as late ACK blocks of the retired generations, acknowledging chunks
# that wait in the resend queue. (A chunk left queued once acknowledged was
# rebuilt under the stream PSN a window later, and the receiver dropped the
# real chunk of that PSN: receives never completed.)
ack_spikes() {
	while :; do
		netem_set b vb delay 40ms
		sleep 0.4
		netem_set b vb delay 1ms
		sleep 0.4
	done
}
if [ -n "$verify" ]; then
	rekeys0=$(cnt mroce_a path_rekeys)
	ack_spikes &
	spikes=$!
	check "ACK delay spikes (40 ms): every byte of every op type arrives" \
		verify_pair a mroce_a b mroce_b 10.0.0.2 -q 4 -s 1,4096,65536,262144 -t 15 -T 120
	kill "$spikes"
	wait "$spikes" 2> /dev/null
	netem_clear b vb
	rekeys=$(( $(cnt mroce_a path_rekeys) - rekeys0 ))
	ktap_info "ACK delay spikes: $rekeys re-keys of a's paths"
	check "ACK delay spikes: a's paths timed out and were re-keyed" test "$rekeys" -gt 0
fi

check_eq "no QP ran out of retries" 0 "$(both retry_exceeded_err)"
check_eq "no RNR retry exhaustion" 0 "$(both retry_rnr_exceeded_err)"
check "duplicates were dropped by the receiver" test "$(both duplicate_request)" -gt 0
check "kernel log clean" dmesg_clean
ktap_finish
