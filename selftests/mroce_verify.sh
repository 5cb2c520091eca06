#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC data verification with tools/mroce_verify: SEND, SEND_IMM, WRITE,
# WRITE_IMM, READ, CMP_SWP and FETCH_ADD from 0 B to 1 MiB (odd sizes,
# unaligned offsets, up to 4 SGEs, inline), several QPs, both directions at
# once; every byte, immediate, byte_len, completion order and atomic result
# is checked.
#
# First the verifier itself is validated on rdma_rxe (policy-routed veth
# pair, as rxe on 6.1 needs): it must pass there, and must fail with a
# precise message when a byte is corrupted on purpose, in a message or
# next to an MR (the guard bytes around every registered area). Then the same runs go
# between two mroce devices in network namespaces a and b (skipped until the
# transport carries traffic), with the module's defaults (transmit bursts
# on since session 49), again with receive steering off (rx_spread=0, the
# non-default setting), once more with receive and transmit bursts off
# (module parameters rx_burst=1, tx_burst=1: every packet alone), and with
# receive bursts (rx_burst=16) under netem loss, duplication and
# reordering. The same verifier under each of those impairments alone is
# in mroce_rc_loss.sh.
# vm-timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
require_root
require_cmd rdma ip make cc

build_tools mroce_verify || {
	[[ $tools_why == *libibverbs-dev* ]] && skip_all "$tools_why"
	ktap_fail "build tools/mroce_verify" "$tools_why"
	ktap_finish
}

# The verifier must notice damage: corrupt one received byte in round 2.
catches_corruption() {
	local out
	verify_pair "$@" -r 3 -X 2 > /dev/null 2>&1 && return 1
	out=$(cat "$(verify_last)"-*.log | grep -v 'peer reported' | grep 'FAIL:' | head -n 1)
	ktap_info "verifier said: ${out#*FAIL: }"
	[[ $out == *"round 1 QP"*"is 0x"*", expected 0x"* ]]
}

# ... and a write next to a registered area (-Z: the byte past the last
# QP's receive/write area, which starts inside a page, changed in round 2):
# the guard bytes around every MR must catch it.
catches_guard_write() {
	local out
	verify_pair "$@" -r 3 -Z 2 > /dev/null 2>&1 && return 1
	out=$(cat "$(verify_last)"-*.log | grep -v 'peer reported' | grep 'FAIL:' | head -n 1)
	ktap_info "verifier said: ${out#*FAIL: }"
	[[ $out == *"round 1 QP 1: guard bytes around the receive/write area"*"1 bytes from offset 3145728 to 3145728 (past its end)"* ]]
}

# --- the verifier on rdma_rxe ----------------------------------------------
if modprobe -n rdma_rxe 2> /dev/null; then
	mroce_unload
	modprobe rdma_rxe
	dmesg_mark
	# rxe 6.1 WARNs in rxe_completer and flushes its QPs when the veth
	# backlog (1000) overflows under bidirectional load ("Failed sending
	# ACK"); a deeper backlog keeps the reference clean. mroce runs with
	# the default below: it must survive such drops.
	backlog=$(sysctl -n net.core.netdev_max_backlog)
	sysctl -qw net.core.netdev_max_backlog=10000
	topo_policy 1
	rdma link add rxe0 type rxe netdev veth00
	rdma link add rxe1 type rxe netdev veth01
	wait_for 5 has_gid rxe0 "$(gid_of_ip 10.0.0.1)"
	wait_for 5 has_gid rxe1 "$(gid_of_ip 10.0.0.2)"
	# -A 18: a ~1 s ACK timeout. With the default ~67 ms, rxe retries READs
	# spuriously under TCG and 6.1's completer then WARNs (rxe_comp.c:756)
	# and flushes the QP: an rxe bug, not what this validates.
	check "rxe: every op and size, 4 QPs, both directions" \
		verify_pair "" rxe0 "" rxe1 10.0.0.2 -q 4 -A 18
	ktap_info "$(grep -h 'messages (' "$(verify_last)"-client.log | tail -n 1)"
	check "rxe: completion events and RNR rounds (receives posted late), 2 QPs" \
		verify_pair "" rxe0 "" rxe1 10.0.0.2 -q 2 -A 18 -e -r 4 -R 30 -s 1,4096,65536
	check "rxe: the verifier detects a corrupted byte" \
		catches_corruption "" rxe0 "" rxe1 10.0.0.2 -q 1 -A 18 -s 100,5000,70000
	check "rxe: the guard bytes catch a write next to an MR" \
		catches_guard_write "" rxe0 "" rxe1 10.0.0.2 -q 2 -A 18 -s 100,5000,70000
	rdma link delete rxe0
	rdma link delete rxe1
	topo_policy_cleanup 1
	sysctl -qw net.core.netdev_max_backlog="$backlog"
	rmmod rdma_rxe
	check "rxe: kernel log clean" dmesg_clean
else
	ktap_skip "the verifier on rdma_rxe" "rdma_rxe is not available in this kernel"
fi

# --- mroce -----------------------------------------------------------------
mroce_pair_up
if ! why=$(transport_ready a mroce_a); then
	ktap_skip "mroce: verified RC traffic" "$why"
	check "kernel log clean" dmesg_clean
	ktap_finish
fi
# Evidence of which receive path ran: kprobes count the receive tasklet
# (mroce_rx_run: a packet queued for a CPU, by steering or rx_burst) and
# the end of each steered packet (mroce_steer_done: rx_spread sent it to a
# CPU's queue). Armed only for the runs whose counts a check reads
# (kp_arm): every hit is an int3 trap, and the other runs -- the random
# traffic above all -- are better run on an unperturbed kernel (session 46:
# a one-off GPF of the verifier under TCG during random traffic with both
# armed). Disarming keeps the counts (kprobe_profile). The one random run
# armed is rx_spread=0's, whose correct receive path never reaches either
# probed function: it is checked without a single probe hit.
tracing=/sys/kernel/tracing
probes=
kp_add() { # kp_add NAME FUNCTION
	echo "p:$1 mroce:$2" >> "$tracing/kprobe_events" 2> /dev/null &&
		echo 1 > "$tracing/events/kprobes/$1/enable" && probes+=" $1"
}
kp_arm() { # kp_arm 1|0: arm or disarm every probe of ours
	local kp
	for kp in $probes; do echo "$1" > "$tracing/events/kprobes/$kp/enable"; done
}
kp_hits() { awk -v e="$1" '$1 == e { n = $2 } END { print n + 0 }' "$tracing/kprobe_profile"; }
kp_add mroce_verify_rx_run mroce_rx_run
kp_add mroce_verify_steered mroce_steer_done
check_eq "kprobes count the receive tasklet and steered packets" \
	" mroce_verify_rx_run mroce_verify_steered" "$probes"
va_frames() { nsexec a cat /sys/class/net/va/statistics/tx_packets; }
steered0=$(kp_hits mroce_verify_steered)
frames0=$(va_frames)
sent0=$(hw_counter mroce_a sent_pkts)
check "mroce: every op and size, 4 QPs, both directions" \
	verify_pair a mroce_a b mroce_b 10.0.0.2 -q 4
# For the default bursts' evidence (below).
def_frames=$(( $(va_frames) - frames0 ))
def_sent=$(( $(hw_counter mroce_a sent_pkts) - sent0 ))
kp_arm 0
ktap_info "$(grep -h 'messages (' "$(verify_last)"-client.log | tail -n 1)"
steered=$(( $(kp_hits mroce_verify_steered) - steered0 ))
ktap_info "rx_spread=$(mroce_param rx_spread) (the default): $steered packets steered to another CPU"
if [ "$(nproc)" -ge 2 ]; then
	check "rx_spread on by default: received bulk data was steered to another CPU" \
		test "$steered" -gt 0
else
	ktap_skip "rx_spread on by default: received bulk data was steered" "one CPU: nothing to steer to"
fi
check "mroce: completion events, 1 QP, 1 SGE" \
	verify_pair a mroce_a b mroce_b 10.0.0.2 -q 1 -m 1 -e -s 0,1,4097,65536,1048576
check "mroce: 16 QPs sharing one connection" \
	verify_pair a mroce_a b mroce_b 10.0.0.2 -q 16 -a 1048576 -s 1,100,4096,65537
check "mroce: RNR rounds (receives posted late)" \
	verify_pair a mroce_a b mroce_b 10.0.0.2 -q 2 -r 4 -R 30 -s 1,4096,65536
check "mroce: 14 s of random traffic" \
	verify_pair a mroce_a b mroce_b 10.0.0.2 -q 4 -t 14 -S 7
check "mroce: send_rnr_err counted the RNR NAKs" \
	test "$(hw_counter mroce_b send_rnr_err)" -gt 0
check_eq "mroce: naks_sent_rnr counted them too" \
	"$(hw_counter mroce_b send_rnr_err)" "$(hw_counter mroce_b naks_sent_rnr)"
check "mroce: the sender counted the RNR NAKs it received (naks_rcvd_rnr)" \
	test "$(hw_counter mroce_a naks_rcvd_rnr)" -gt 0
for d in mroce_a mroce_b; do
	for dir in sent rcvd; do
		check_eq "mroce: $d's NAKs by code add up to naks_$dir" \
			"$(hw_counter $d naks_$dir)" "$(naks_by_code $d $dir)"
	done
done

# --- receive steering off ---------------------------------------------------
# rx_spread (mroce_steer.c, default on) moves bulk data to the next CPU and
# ACKs to the sender's transmit CPU; off, every packet is handled where it
# arrived, at once (with rx_burst=1, set here whatever the default: receive
# bursts queue packets for the tasklet too): the receive path rx_spread's
# queues bypass. The same verification with it off; no packet may be
# steered and none may go through the receive tasklet.
spread0=$(mroce_param rx_spread)
rx0=$(mroce_param rx_burst)
if mroce_param rx_spread 0 && [ "$(mroce_param rx_spread)" = N ] &&
	mroce_param rx_burst 1; then
	steered0=$(kp_hits mroce_verify_steered)
	runs0=$(kp_hits mroce_verify_rx_run)
	kp_arm 1
	check "rx_spread=0: every op and size, 4 QPs, both directions" \
		verify_pair a mroce_a b mroce_b 10.0.0.2 -q 4
	steered=$(( $(kp_hits mroce_verify_steered) - steered0 ))
	runs=$(( $(kp_hits mroce_verify_rx_run) - runs0 ))
	# Still armed for the random run: with rx_spread=0 and rx_burst=1
	# neither probed function is on the receive path (no packet is
	# queued, so no tasklet runs and no steered packet ends), so a
	# correct driver takes no probe hit at all during it -- the random
	# traffic runs as unperturbed as disarmed, and only a packet that
	# breaks the rule below would reach a probe.
	check "rx_spread=0: 5 s of random traffic" \
		verify_pair a mroce_a b mroce_b 10.0.0.2 -q 4 -t 5 -S 13
	kp_arm 0
	steered_t=$(( $(kp_hits mroce_verify_steered) - steered0 - steered ))
	runs_t=$(( $(kp_hits mroce_verify_rx_run) - runs0 - runs ))
	ktap_info "rx_spread=0: $steered packets steered, $runs receive tasklet runs (every-op run);" \
		"$steered_t, $runs_t (random run)"
	check_eq "rx_spread=0: no packet was steered to another CPU (every-op, random run)" \
		"0 0" "$steered $steered_t"
	check_eq "rx_spread=0: no packet went through the receive tasklet (every-op, random run)" \
		"0 0" "$runs $runs_t"
else
	ktap_fail "set module parameters rx_spread=0 rx_burst=1"
fi
mroce_param rx_spread "$spread0"
mroce_param rx_burst "$rx0"

# --- receive and transmit bursts ---------------------------------------------
# Two module parameters change the data path: rx_burst > 1 (mroce_rx.c:
# received packets wait in a per-CPU queue for a tasklet that handles each
# connection's run of them under one lock hold) and tx_burst > 1
# (mroce_net.c: a run of a path's packets leaves as one UDP fraglist-GSO
# skb; the core hands out runs of up to path_run packets of one path).
# The runs above used the defaults (tx_burst=32 since session 49): with
# transmit bursts on, va must have carried fewer frames than mroce packets
# (veth counts a GSO skb once). Then the same verification with both off,
# every packet alone: va's frames at least mroce's packets. Then receive
# bursts (rx_burst=16, set here) under loss and reordering (a netem qdisc
# turns transmit bursts off: they only leave where the netdev has none);
# evidence that the tasklet ran: a kprobe on mroce_rx_run.
rx_runs() { kp_hits mroce_verify_rx_run; }
rx0=$(mroce_param rx_burst)
tx0=$(mroce_param tx_burst)
ktap_info "defaults rx_burst=$rx0 tx_burst=$tx0: mroce_a sent $def_sent packets in $def_frames frames (every-op run)"
if [ "$tx0" -gt 1 ]; then
	check "tx_burst=$tx0 (the default): packets left in bursts (fewer frames than packets)" \
		test "$def_frames" -lt "$def_sent"
fi
if mroce_param rx_burst 1 && mroce_param tx_burst 1; then
	frames0=$(va_frames)
	sent0=$(hw_counter mroce_a sent_pkts)
	check "bursts off (rx_burst=1 tx_burst=1): every op and size, 4 QPs, both directions" \
		verify_pair a mroce_a b mroce_b 10.0.0.2 -q 4
	check "bursts off (rx_burst=1 tx_burst=1): 8 s of random traffic" \
		verify_pair a mroce_a b mroce_b 10.0.0.2 -q 4 -t 8 -S 11
	frames=$(( $(va_frames) - frames0 ))
	sent=$(( $(hw_counter mroce_a sent_pkts) - sent0 ))
	ktap_info "bursts off: mroce_a sent $sent packets in $frames frames"
	check "tx_burst=1: every packet left alone (no fewer frames than packets)" \
		test "$frames" -ge "$sent"
else
	ktap_fail "set module parameters rx_burst=1 tx_burst=1"
fi
# netem on both ends: transmit bursts off, receive bursts see gaps,
# duplicates and packets out of order.
if mroce_param rx_burst 16 &&
	netem_set a va loss 1% duplicate 1% delay 1ms reorder 75% 50% &&
	netem_set b vb loss 1% duplicate 1% delay 1ms reorder 75% 50%; then
	runs0=$(rx_runs)
	retx0=$(( $(hw_counter mroce_a retrans_pkts) + $(hw_counter mroce_b retrans_pkts) ))
	kp_arm 1
	check "rx_burst=16, 1 % loss, duplicates, reordering: every op, 2 QPs, both directions" \
		verify_pair a mroce_a b mroce_b 10.0.0.2 -q 2 -s 1,100,4096,65537,262144 -T 120
	kp_arm 0
	ktap_info "rx_burst=16 under loss: $(( $(rx_runs) - runs0 )) tasklet runs," \
		"$(( $(hw_counter mroce_a retrans_pkts) + $(hw_counter mroce_b retrans_pkts) - retx0 ))" \
		"packets sent again"
	check "rx_burst=16 under loss: packets went through the receive tasklet" \
		test "$(( $(rx_runs) - runs0 ))" -gt 0
else
	ktap_fail "rx_burst=16 and netem on va and vb"
fi
netem_clear a va
netem_clear b vb
mroce_param rx_burst "$rx0"
mroce_param tx_burst "$tx0"
for kp in $probes; do
	echo 0 > "$tracing/events/kprobes/$kp/enable"
	echo "-:$kp" >> "$tracing/kprobe_events"
done
check "kernel log clean" dmesg_clean
ktap_finish
