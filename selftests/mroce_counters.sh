#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hw counters and tracepoints: every counter exists in sysfs and in
# `rdma statistic`, starts at zero and agrees between the two; link_downed
# follows the port; the mroce tracepoints are registered with their fields
# and a BPF program can attach to them. Once the transport carries traffic:
# packet and byte counters match the traffic, retransmission counters move
# under netem loss and stay put without it.
# vm-timeout: 420
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip tc

# The interface (docs/telemetry.md); a rename is an incompatible change.
COUNTERS="sent_pkts rcvd_pkts sent_bytes rcvd_bytes rdma_sends rdma_recvs
send_err link_downed cq_overflow acks_sent acks_rcvd naks_sent naks_rcvd probes_sent
retrans_pkts sack_gaps rto_timeouts pto_timeouts send_rnr_err rcvd_rnr_err
retry_exceeded_err retry_rnr_exceeded_err duplicate_request out_of_window
ecn_ce_rcvd rate_hints_rcvd path_rekeys conn_opened conn_failed conn_lost
cm_dreq_resent cm_dreq_uninsured cm_dreq_expired
drop_truncated drop_bad_version drop_bad_opcode drop_reserved drop_bad_flags
drop_bad_length drop_bad_ack_blocks drop_bad_field drop_unknown_conn
drop_wrong_peer drop_not_connected drop_bad_path drop_stale_gen
drop_unknown_qp drop_qp_state drop_unexpected drop_bad_rkey drop_mr_bounds
drop_access drop_bad_atomic drop_rq_overflow drop_nomem drop_rx_queue
$(for c in $MROCE_NAK_CODES; do echo "naks_sent_$c"; done)
$(for c in $MROCE_NAK_CODES; do echo "naks_rcvd_$c"; done)"

TRACEPOINTS="mroce_path_sample mroce_path_state mroce_path_rekey
mroce_retransmit mroce_conn_state mroce_cc_update mroce_nak mroce_rx_drop"

. "$(dirname "$0")/lib_traffic.sh"

# "name value" lines for every counter of DEV, from sysfs and from rdma.
sysfs_counters() {
	(cd "/sys/class/infiniband/$1/ports/1/hw_counters" && grep -H . -- *) |
		sed 's/:/ /' | grep -v '^lifespan ' | sort
}
rdma_counters() {
	rdma -j statistic show link "$1/1" | python3 -c '
import json, sys
for link in json.load(sys.stdin):
    for k, v in link.items():
        if isinstance(v, int) and k not in ("ifindex", "port"):
            print(k, v)
' | sort
}

state_is() { [ "$(port_attr "$1" state)" = "$2" ]; }

mroce_pair_up

hw=/sys/class/infiniband/mroce_a/ports/1/hw_counters
missing=
for c in $COUNTERS; do
	[ -r "$hw/$c" ] || missing="$missing $c"
done
check_eq "every counter is in hw_counters" "" "$missing"
check_eq "no counter beyond the documented set" \
	"$(echo $COUNTERS | tr ' ' '\n' | sort | tr '\n' ' ')" \
	"$(ls "$hw" | grep -vx lifespan | sort | tr '\n' ' ')"
check_eq "a fresh device counts nothing" "" \
	"$(sysfs_counters mroce_a | awk '$2 != 0')"
check_eq "rdma statistic shows the same counters and values" \
	"$(sysfs_counters mroce_a)" "$(rdma_counters mroce_a)"
check "rdma statistic show (text) lists mroce_a" \
	bash -c "rdma statistic show | grep -q 'link mroce_a/1 .*drop_bad_rkey 0'"

nsexec a ip link set va down
wait_for 5 state_is mroce_a "1: DOWN"
check_eq "link_downed counts a port going down" 1 "$(hw_counter mroce_a link_downed)"
nsexec a ip link set va up
wait_for 5 state_is mroce_a "4: ACTIVE"
check_eq "... and not coming back up" 1 "$(hw_counter mroce_a link_downed)"
# A flap faster than linkwatch (one ip process): vb's carrier loss and
# return usually reach mroce_b as one NETDEV_CHANGE that finds the carrier
# up again; it must count anyway.
printf 'link set va down\nlink set va up\n' | nsexec a ip -batch -
wait_for 5 state_is mroce_a "4: ACTIVE"
# The lifespan (10 ms) caches values; wait past it.
sleep 0.1
check_eq "a second down counts again" 2 "$(hw_counter mroce_a link_downed)"
check_eq "rdma statistic agrees" 2 \
	"$(rdma_counters mroce_a | awk '$1 == "link_downed" { print $2 }')"
# Carrier events reach mroce_b asynchronously (linkwatch): poll.
counter_ge() { [ "$(hw_counter "$1" "$2")" -ge "$3" ]; }
wait_for 10 counter_ge mroce_b link_downed 2
sleep 0.1
check_eq "the peer lost carrier each time: mroce_b counted too" 2 "$(hw_counter mroce_b link_downed)"
wait_for 10 state_is mroce_b "4: ACTIVE"
check_eq "... and its port is active again" "4: ACTIVE" "$(port_attr mroce_b state)"
ip link add d0 type dummy
ip link set d0 up
mroce_link_add mroce_d d0
check_eq "a device on another netdev is independent" 0 "$(hw_counter mroce_d link_downed)"

# Tracepoints: registered under events/mroce with the documented fields.
ev=$MROCE_TRACING/events/mroce
for tp in $TRACEPOINTS; do
	check "tracepoint $tp registered" test -r "$ev/$tp/format"
done
# "field:u32 dev;	offset:8;..." -> dev (arrays: "u8 peer[16]" -> peer)
fields() {
	sed -n 's/^[[:space:]]*field:[^;]*[[:space:]]\([a-z_0-9]*\)\(\[[0-9]*\]\)\{0,1\};.*/\1/p' "$ev/$1/format" |
		grep -v '^common_' | tr '\n' ' '
}
check_eq "mroce_path_sample fields" \
	"dev conn path_id path_gen sport state srtt rttvar min_rtt pwnd inflight ce lost " \
	"$(fields mroce_path_sample)"
check_eq "mroce_cc_update fields" \
	"dev conn cwnd ssthresh alpha rate_hint pacing_rate inflight event " \
	"$(fields mroce_cc_update)"
# tp_all 0|1: every tracepoint off or on through lib.sh's helpers (the ones
# the other tests use), then each one's enable file must read so.
tp_all() {
	local tp
	# shellcheck disable=SC2086 # a list of tracepoint names
	if [ "$1" = 1 ]; then mroce_trace_on $TRACEPOINTS; else mroce_trace_off $TRACEPOINTS; fi ||
		return 1
	for tp in $TRACEPOINTS; do
		[ "$(cat "$ev/$tp/enable")" = "$1" ] || { echo "$tp: enable reads not $1"; return 1; }
	done
}
check "every tracepoint can be enabled" tp_all 1
check "every tracepoint can be disabled" tp_all 0
if command -v bpftrace > /dev/null; then
	# Attaching proves the tracepoint is usable from BPF; firing needs traffic.
	check "bpftrace attaches to every mroce tracepoint" timeout 120 \
		bpftrace -e 'tracepoint:mroce:* { @[probe] = count(); } interval:s:1 { exit(); }'
else
	ktap_skip "bpftrace attaches to mroce tracepoints" "bpftrace not installed"
fi

# --- with traffic ------------------------------------------------------------
if ! why=$(transport_ready a mroce_a); then
	ktap_skip "counters follow traffic" "$why"
	check "kernel log clean" dmesg_clean
	ktap_finish
fi

delta() { echo $(( $(hw_counter "$1" "$2") - ${3:-0} )); }
snap() { for c in sent_pkts rcvd_pkts sent_bytes rcvd_bytes retrans_pkts sack_gaps \
	duplicate_request rto_timeouts pto_timeouts; do
	printf '%s_%s=%s\n' "$1" "$c" "$(hw_counter "$1" "$c")"; done; }
eval "$(snap mroce_a)"
eval "$(snap mroce_b)"
# Every packet alone (tx_burst=1, set here whatever the default): a burst
# of a path's packets leaves as one GSO skb, which the veth counts as one
# frame, and the check below is that each packet counted went out.
txb0=$(mroce_param tx_burst)
mroce_param tx_burst 1 || ktap_fail "tx_burst=1: set the module parameter"
tx_before=$(nsexec a cat /sys/class/net/va/statistics/tx_packets)
check "ibv_rc_pingpong 1000 x 4 KiB" rc_pingpong a mroce_a b mroce_b 10.0.0.2 -n 1000 -s 4096
# The last ACKs (and any late retransmission) may still be on the wire,
# and the connection's CONN_CLOSE (32 B) leaves 5 s after its last QP
# (MROCE_PEER_LINGER), which on a slow kernel falls among these checks
# (session 47, debug kernel: packets equal when read, then 6.5 s after the
# run a's sent_bytes 32 above b's rcvd_bytes). So packets and bytes are
# read together, until a's sent and b's received agree in both (10 s
# bound: a counting error still fails the checks, with the last values).
settled() {
	sent=$(delta mroce_a sent_pkts "$mroce_a_sent_pkts")
	rcvd=$(delta mroce_b rcvd_pkts "$mroce_b_rcvd_pkts")
	sent_bytes=$(delta mroce_a sent_bytes "$mroce_a_sent_bytes")
	rcvd_bytes=$(delta mroce_b rcvd_bytes "$mroce_b_rcvd_bytes")
	[ "$sent" = "$rcvd" ] && [ "$sent_bytes" = "$rcvd_bytes" ]
}
wait_for 10 settled
tx=$(( $(nsexec a cat /sys/class/net/va/statistics/tx_packets) - tx_before ))
ktap_info "mroce_a sent $sent packets, mroce_b received $rcvd, va transmitted $tx"
check "sent_pkts counts at least one packet per message" test "$sent" -ge 1000
check "every packet sent was received (no loss configured)" test "$rcvd" -eq "$sent"
check "sent_pkts <= packets the netdev transmitted (tx_burst=1)" test "$sent" -le "$tx"
mroce_param tx_burst "$txb0"
check "sent_bytes covers the payload (4 MB)" test "$sent_bytes" -ge 4096000
check_eq "sent_bytes(a) = rcvd_bytes(b)" "$sent_bytes" "$rcvd_bytes"
# Nothing is lost on the veth, but a loaded host can delay a packet or an
# ACK past a timer, or reorder two CPUs' packets: a retransmission then
# is spurious, so its original arrived too and the receiver must drop
# exactly one of the two as a duplicate.
retx_now() { echo $(( $(delta mroce_a retrans_pkts "$mroce_a_retrans_pkts") + $(delta mroce_b retrans_pkts "$mroce_b_retrans_pkts") )); }
dups_now() { echo $(( $(delta mroce_a duplicate_request "$mroce_a_duplicate_request") + $(delta mroce_b duplicate_request "$mroce_b_duplicate_request") )); }
# A late timer may still be resending the last message: let it land.
retx_settled() { [ "$(retx_now)" = "$(dups_now)" ]; }
wait_for 10 retx_settled
retx=$(retx_now)
ktap_info "without loss: $retx retransmissions; a: $(delta mroce_a rto_timeouts "$mroce_a_rto_timeouts") RTO," \
	"$(delta mroce_a pto_timeouts "$mroce_a_pto_timeouts") PTO, $(delta mroce_a sack_gaps "$mroce_a_sack_gaps") SACK gaps;" \
	"b: $(delta mroce_b rto_timeouts "$mroce_b_rto_timeouts") RTO, $(delta mroce_b pto_timeouts "$mroce_b_pto_timeouts") PTO," \
	"$(delta mroce_b sack_gaps "$mroce_b_sack_gaps") SACK gaps"
check_eq "without loss, every retransmission arrived as a duplicate" "$retx" "$(dups_now)"

# The documented bpftrace example (docs/telemetry.md) watches what follows:
# a lossy run (retransmissions) and five 1-byte packets (drop_truncated).
bt=$MROCE_SELFTESTS_DIR/tools/bpf/mroce_events.bt
bt_out=$MROCE_TEST_OUT/mroce_events.txt
if command -v bpftrace > /dev/null; then
	# Stopped with SIGINT once the traffic is done; its own limit is a
	# bound only, above the lossy run's time on the debug kernel (session
	# 47: 93 s, and a 60 s limit ended the trace before the truncated
	# packets were sent).
	bpftrace "$bt" 300 > "$bt_out" 2>&1 &
	bt_pid=$!
	wait_for 60 grep -q 'tracing mroce' "$bt_out"
fi
eval "$(snap mroce_a)"
trunc0=$(hw_counter mroce_b drop_truncated)
netem_set a va loss 5%
check "ibv_rc_pingpong under 5 % loss" rc_pingpong a mroce_a b mroce_b 10.0.0.2 -n 300 -s 4096
netem_clear a va
for i in 1 2 3 4 5; do
	nsexec a bash -c 'echo -n x > /dev/udp/10.0.0.2/61791'
done
sleep 0.5
check_eq "drop_truncated counted five 1-byte packets" 5 \
	"$(( $(hw_counter mroce_b drop_truncated) - trunc0 ))"
check "retrans_pkts moves under loss" test "$(delta mroce_a retrans_pkts "$mroce_a_retrans_pkts")" -gt 0
check "sack_gaps or timeouts declared the losses" test \
	"$(( $(delta mroce_a sack_gaps "$mroce_a_sack_gaps") + $(hw_counter mroce_a rto_timeouts) + $(hw_counter mroce_a pto_timeouts) ))" -gt 0
check "conn_opened counted the connection" test "$(hw_counter mroce_a conn_opened)" -ge 1
for d in mroce_a mroce_b; do
	for dir in sent rcvd; do
		check_eq "$d: the NAKs by code add up to naks_$dir" \
			"$(hw_counter $d naks_$dir)" "$(naks_by_code $d $dir)"
	done
done
if [ -n "${bt_pid:-}" ]; then
	kill -INT "$bt_pid" 2> /dev/null
	wait "$bt_pid"
	check "bpftrace example: saw the five truncated packets" \
		grep -Eq '^@drops\[[0-9]+, drop_truncated\]: ([5-9]|[1-9][0-9]+)$' "$bt_out"
	check "bpftrace example: saw retransmissions" grep -q '^@retx\[' "$bt_out"
	[ "$_ktap_fail" -eq 0 ] || sed 's/^/#   /' "$bt_out"
fi
check "kernel log clean" dmesg_clean
ktap_finish
