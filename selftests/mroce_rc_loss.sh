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
#
# Whether a 40 ms spike times a path out is not the test's to decide: the
# RTO is srtt + 4 rttvar (at least min_rto_us), and how far the 1 ms phase
# let the estimator decay varies from run to run under TCG (session 45: one
# run in about twelve had no re-key at all). So each spike is measured --
# a's rto_timeouts and path_rekeys around it -- and one that timed nothing
# out makes the next one 250 ms: far above a's RTO under 1 ms of netem
# delay, and a's watchdog counts at most 4 retries in it (rounds of at
# least min_rto_us, 10 ms, doubling: 7 take over 1 s); one that did starts
# again at 40 ms. (Under TCG a spike and its recovery take a few seconds,
# the tc calls most of it: a run has 3 or more.) What the design
# guarantees is then checked spike by spike (core/mroce_health.c): an RTO
# re-keys its path at once, unless it is the third unanswered PROBE of a
# path, which fails the path -- and a failed path is re-keyed when its
# hold-off (64 ms at most) ends, well within the 0.4 s of recovery. So a
# spike with an RTO has a re-key, and the re-keys are at least the RTOs
# less one per path (a path may end the spike failed): n_paths is 8
# (core/mroce_params.c), a connection has at most that many.
spike_paths=8
# ack_spikes FILE: spikes until killed; one line per spike to FILE:
# "DELAY_MS RTOS REKEYS" (a's counters across the spike and its recovery).
ack_spikes() {
	local out=$1 d=40 r0 k0 r k
	while :; do
		r0=$(cnt mroce_a rto_timeouts)
		k0=$(cnt mroce_a path_rekeys)
		netem_set b vb delay "${d}ms"
		sleep 0.4
		netem_set b vb delay 1ms
		sleep 0.4
		r=$(( $(cnt mroce_a rto_timeouts) - r0 ))
		k=$(( $(cnt mroce_a path_rekeys) - k0 ))
		echo "$d $r $k" >> "$out"
		if [ "$r" -gt 0 ]; then d=40; else d=250; fi
	done
}
if [ -n "$verify" ]; then
	spike_log=$MROCE_TEST_OUT/ack-spikes.txt
	: > "$spike_log"
	ack_spikes "$spike_log" &
	spikes=$!
	check "ACK delay spikes (40 or 250 ms): every byte of every op type arrives" \
		verify_pair a mroce_a b mroce_b 10.0.0.2 -q 4 -s 1,4096,65536,262144 -t 15 -T 120
	kill "$spikes"
	wait "$spikes" 2> /dev/null
	netem_clear b vb
	# A spike cut short by the kill has no line: only whole ones count.
	# (No process substitution: the VM has no /dev/fd.)
	# shellcheck disable=SC2046
	set -- $(awk -v paths="$spike_paths" '
		{ n++; r += $2; k += $3
		  if ($2 > 0 && $3 == 0) bare++
		  if ($3 < $2 - paths) short++ }
		END { print n + 0, r + 0, k + 0, bare + 0, short + 0 }' "$spike_log")
	n_spikes=$1 rtos=$2 rekeys=$3 bare=$4 short=$5
	ktap_info "ACK delay spikes (ms/rtos/rekeys): $(awk '{ printf "%s%s/%s/%s", (NR > 1 ? " " : ""), $1, $2, $3 }' "$spike_log")"
	ktap_info "ACK delay spikes: $n_spikes spikes, $rtos RTOs and $rekeys re-keys of a's paths"
	check "ACK delay spikes: a's paths timed out (RTOs counted in a spike)" \
		test "$rtos" -gt 0
	check_eq "ACK delay spikes: every spike with an RTO re-keyed a path" 0 "$bare"
	check_eq "ACK delay spikes: re-keys >= RTOs - $spike_paths paths in every spike" 0 "$short"
	check "ACK delay spikes: a's paths were re-keyed" test "$rekeys" -gt 0
fi

check_eq "no QP ran out of retries" 0 "$(both retry_exceeded_err)"
check_eq "no RNR retry exhaustion" 0 "$(both retry_rnr_exceeded_err)"
check "duplicates were dropped by the receiver" test "$(both duplicate_request)" -gt 0
check "kernel log clean" dmesg_clean
ktap_finish
