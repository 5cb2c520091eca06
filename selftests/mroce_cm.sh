#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RDMA CM over mroce: the connection manager's MADs cross the wire through
# QP1 (the MAD tunnel), UD QPs carry datagrams with the RoCE v2 network
# header in front, and the stock rdma-core tools work unchanged:
#   rping -V          RC via rdma_cm; the client checks every byte the
#                     server RDMA-READ and RDMA-WROTE back
#   ucmatose          RC connect, send, disconnect
#   udaddy            UD via rdma_cm (SIDR): address handles from the CM
#   ibv_ud_pingpong   UD without the CM, receive buffers checked (-c)
#   ib_send_bw -R     perftest connected through rdma_cm
# at 0 % loss, and the reliable ones (rping, ucmatose, ib_send_bw -R) again
# at 1 % netem loss on both directions: lost MADs are the CM's to retry,
# lost data the transport's. Datagrams are unreliable by definition, so
# the UD tools run lossless only. At 0 %, tc filters drop exactly one CM
# MAD (a DREQ, REQ, REP or RTU; and a REP while the client's ARP entry is
# gone) and rping must still connect, verify and disconnect; so must it
# when the server's ARP entry for the client is gone as the REQ comes, or
# fails before a late rdma_accept(), while the client's ARP is dropped.
# With every DREP dropped, the tunnel resends rping's DREQ 10 times and
# then drops its copy, counted in cm_dreq_expired. With DREQs coming 100
# ms apart, each copy is still first resent 250 ms after its DREQ. Twice,
# ucmatose disconnects 80 connections at once with every DREP dropped: the tunnel
# keeps its 64 DREQ copies, counts exactly 16 DREQs uninsured, and all 80
# disconnect once DREPs pass.
#
# DEV_TYPE=rxe runs it over rdma_rxe (mroce_cm_rxe.sh).
# vm-timeout: 480
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
. "$(dirname "$0")/lib_ulp.sh"
require_root
require_cmd rdma rping ucmatose udaddy ibv_ud_pingpong ib_send_bw tc
ULP_BAD_KLOG='RDMA_CM_EVENT_(UNREACHABLE|ADDR_ERROR|ROUTE_ERROR|CONNECT_ERROR)'

cd "$MROCE_TEST_OUT" || exit 1

# An rdma_cm ID listens on PORT (what servers started in the background
# must reach before their client starts).
cm_listening() { rdma resource show cm_id 2> /dev/null | grep -q "LISTEN.*:$1 "; }
# At least N rdma_cm IDs (any side, any state) use PORT.
cm_ids_at_least() { [ "$(rdma resource show cm_id 2> /dev/null | grep -c ":$1 ")" -ge "$2" ]; }

# pair NAME READY SERVER... -- CLIENT...: the server in the background, the
# client once READY (a command) holds; both must exit 0. Output in NAME-*.
pair() {
	local name=$1 ready=$2 srv=() cli=() spid rc=0 src
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout "${pair_timeout:-120}" "${srv[@]}" > "$name-server.log" 2>&1 &
	spid=$!
	if ! wait_for 20 $ready; then
		echo "$name: the server did not come up"
		kill "$spid" 2> /dev/null
		wait "$spid"
		tail -n 5 "$name-server.log"
		return 1
	fi
	timeout "${pair_timeout:-120}" "${cli[@]}" > "$name-client.log" 2>&1 || rc=$?
	# The client's failure is the first cause; else the server's counts.
	wait "$spid" || { src=$?; [ $rc -ne 0 ] || rc=$src; }
	if [ $rc -ne 0 ]; then
		echo "$name: exit $rc; client:"
		tail -n 8 "$name-client.log"
		echo "server:"
		tail -n 8 "$name-server.log"
	fi
	return $rc
}

rping_run() { # rping_run TAG SIZE COUNT
	pair "rping-$1" "cm_listening 7175" \
		rping -s -V -a "$ULP_IP_B" -p 7175 -S "$2" -C "$3" -- \
		rping -c -V -a "$ULP_IP_B" -I "$ULP_IP_A" -p 7175 -S "$2" -C "$3"
}

# The checker: rping -V fails when the bytes differ. (rping validates by
# comparing the RDMA READ and WRITE buffers; a count of 0 would verify
# nothing, so the run must also say it completed every ping.)
rping_verified() { # rping_verified TAG COUNT
	rping_run "$@" || return 1
	! grep -qi 'mismatch\|error' "rping-$1-client.log"
}

ucmatose_run() { # ucmatose_run TAG
	pair "ucmatose-$1" "cm_listening 7471" \
		ucmatose -b "$ULP_IP_B" -p 7471 -C 20 -S 1000 -- \
		ucmatose -s "$ULP_IP_B" -b "$ULP_IP_A" -p 7471 -C 20 -S 1000
}

# udaddy has no port option: it uses 7174, as rping does by default.
udaddy_run() {
	pair udaddy "cm_listening 7174" \
		udaddy -b "$ULP_IP_B" -C 20 -- \
		udaddy -s "$ULP_IP_B" -b "$ULP_IP_A" -C 20
}

ud_pingpong_run() {
	local ga gb
	ga=$(gid_index "$ULP_DEV_A" "$ULP_IP_A") && gb=$(gid_index "$ULP_DEV_B" "$ULP_IP_B") ||
		{ echo "no IPv4 GIDs"; return 1; }
	pair ud_pingpong "tcp_listening 18515" \
		ibv_ud_pingpong -d "$ULP_DEV_B" -g "$gb" -s 1024 -n 200 -c -- \
		ibv_ud_pingpong -d "$ULP_DEV_A" -g "$ga" -s 1024 -n 200 -c "$ULP_IP_B"
}

# A stalled ib_send_bw -R is recorded while it is stuck. A run takes 0-12 s
# in the VM (426 loops at 1 and 3 % loss, session 40); one still running
# SEND_BW_SNAP_AFTER s after it started is written down before pair()'s
# timeout kills it: both devices' counters, the QPs and CM IDs, both
# processes' kernel stacks, the mroce events of the run (the per-ACK path
# samples left out) and the kernel log. The step then fails, naming the
# file, whether or not the run ends before the timeout. Until session 41 a
# failed run was run once more, for an old failure (the client's post_recv
# on perftest's one-deep RDMA CM QP refused at the start): librxe found the
# receive ring still full right after it polled the receive's CQE, fixed
# by d5e62de, which gives the slot back first (docs/ulp.md).
SEND_BW_SNAP_AFTER=60
SEND_BW_EVENTS=(mroce_retransmit mroce_conn_state mroce_nak mroce_rx_drop mroce_path_state mroce_path_rekey)

# The processes and QPs first: they are what a stall freezes, and each
# command costs a good part of a second under TCG.
send_bw_snapshot() { # send_bw_snapshot FILE
	local d p
	{
		date -u
		for p in $(pgrep -x ib_send_bw); do
			echo "== pid $p: $(tr '\0' ' ' < "/proc/$p/cmdline")"
			echo "state $(cut -d ' ' -f 3 "/proc/$p/stat"), wchan $(cat "/proc/$p/wchan")"
			cat "/proc/$p/stack"
		done
		echo "== rdma res show qp -d"; rdma res show qp -d
		echo "== rdma res show cm_id"; rdma res show cm_id
		for d in "$ULP_DEV_A" "$ULP_DEV_B"; do
			echo "== $d: the hw counters that are not 0"
			grep -Hvx 0 "/sys/class/infiniband/$d/ports/1/hw_counters/"* |
				sed 's|.*/||; s|:| |'
		done
		echo "== mroce events of this run"
		[ -r "$MROCE_TRACING/trace" ] && grep -v '^#' "$MROCE_TRACING/trace" | tail -n 3000
		echo "== kernel log since the test began"
		dmesg_since_mark | tail -n 100
	} > "$1" 2>&1
}

send_bw_run() { # send_bw_run TAG: the pair; send_bw-TAG-stall.txt if it stalled
	local snap=send_bw-$1-stall.txt done=send_bw-$1.done watcher rc=0
	rm -f "$snap" "$done"
	mroce_trace_on "${SEND_BW_EVENTS[@]}" || true	# none over rdma_rxe
	(for ((i = 0; i < SEND_BW_SNAP_AFTER; i++)); do
		[ -e "$done" ] && exit 0
		sleep 1
	done
	pgrep -x ib_send_bw > /dev/null && send_bw_snapshot "$snap") &
	watcher=$!
	pair "send_bw-$1" "cm_listening 18516" \
		ib_send_bw "${PERFTEST_OPTS[@]}" -d "$ULP_DEV_B" -R -p 18516 -s 65536 -n 200 -- \
		ib_send_bw "${PERFTEST_OPTS[@]}" -d "$ULP_DEV_A" -R -p 18516 -s 65536 -n 200 "$ULP_IP_B" || rc=$?
	: > "$done"
	wait "$watcher"
	mroce_trace_off "${SEND_BW_EVENTS[@]}" || true
	if [ -e "$snap" ]; then
		echo "still running after $SEND_BW_SNAP_AFTER s: a stall; snapshot in $MROCE_TEST_OUT/$snap"
		rc=1
	fi
	return $rc
}

# perftest prints its result row only after a complete run.
send_bw_done() { grep -Eq '^ *65536 +200 ' "send_bw-$1-client.log"; }

# A lost CM MAD (docs/protocol.md §3.10). A tc filter on one side's egress
# drops the CM MADs of one attribute (u32 at fixed offsets: IPv4 without
# options, UDP to the mroce port, the 32-byte MAD header of §3.10, then the
# MAD: class at +1, attribute at +16) until it has dropped one, then goes.
#
# DREQ: rping's client destroys its cm_id right after rdma_disconnect(),
# which cancels ib_cm's own DREQ resends: if that one DREQ is lost, only
# the tunnel's copy tells the server, whose rping otherwise waits for
# DISCONNECTED until killed. REQ, REP, RTU: connection setup must survive
# one lost MAD of each (ib_cm resends REQ and REP; a lost RTU is answered
# by the REP's resend).
MAD_AT=$((20 + 8 + 32))
CM_REQ=0x0010 CM_REP=0x0013 CM_RTU=0x0014 CM_DREQ=0x0015
mad_drop_add() { # mad_drop_add NDEV ATTR
	local port
	port=$(cat /sys/module/mroce/parameters/udp_port) || return 1
	tc qdisc add dev "$1" clsact &&
		tc filter add dev "$1" egress pref 7 protocol ip u32 \
			match ip protocol 17 0xff match u16 "$port" 0xffff at 22 \
			match u8 0x07 0xff at $((MAD_AT + 1)) \
			match u16 "$2" 0xffff at $((MAD_AT + 16)) action drop
}
mad_dropped() { tc -s filter show dev "$1" egress | grep -Eq 'dropped [1-9]'; }
mad_drop_del() { tc qdisc del dev "$1" clsact 2> /dev/null || true; }

# lost_mad_run TAG NDEV ATTR: rping -V 64 B x 5 with the first MAD of ATTR
# leaving NDEV dropped.
lost_mad_run() {
	local tag=$1 ndev=$2 attr=$3 rc=0 watcher i t0=$SECONDS
	mad_drop_add "$ndev" "$attr" || { mad_drop_del "$ndev"; return 1; }
	# 50 ms polls: the tunnel's first DREQ resend comes 250 ms after the drop.
	rm -f "lost$tag.dropped"
	(for i in $(seq 1200); do
		if mad_dropped "$ndev"; then
			: > "lost$tag.dropped"
			break
		fi
		sleep 0.05
	done
	mad_drop_del "$ndev") &
	watcher=$!
	pair_timeout=30 rping_verified "lost$tag" 64 5 || rc=1
	if [ ! -e "lost$tag.dropped" ]; then
		echo "the filter dropped no $tag (are its offsets wrong?)"
		rc=1
	fi
	kill "$watcher" 2> /dev/null
	wait "$watcher"
	mad_drop_del "$ndev"
	ktap_info "lost $tag: rping took $((SECONDS - t0)) s"
	return $rc
}

# The REP is lost and, meanwhile, the client's neighbour entry for the
# server fails and ARP fails (the server's replies are dropped for 7 s):
# what 30 % loss does when lost REQs or REPs keep the entry in use past
# delay_first_probe_time and its unicast ARP probes are lost too. The
# client's RTR, right after the resent REP, has the RDMA core resolve the
# server's MAC with a fixed 1 s limit (ib_resolve_eth_dmac()); without a
# usable entry it fails with ETIMEDOUT and rdma_cm rejects (status 28, the
# QP left in INIT). The tunnel gives such an entry the REP's source MAC.
#
# The entry is made FAILED, not deleted: one that failed its probes keeps
# its MAC, and that matters. rdma_cm (cma_netevent_callback(), in Debian's
# 6.1 too) ends a connecting ID with UNREACHABLE -110 when the entry for
# its destination is updated with a MAC other than the one it resolved. A
# deleted entry comes back empty when anything is sent to the server
# during the ARP outage -- the CONN_CLOSE of the previous check's mroce
# connection, which lingers 5 s after its last QP, did -- and goes FAILED
# without a MAC 3 s later; when that came before the REP's resend (4 s
# after the REP), the check failed (3 of 25 loops, and once in CI).
lost_rep_arp_run() {
	local rc=0 watcher i t0=$SECONDS
	mad_drop_add "$ULP_NDEV_B" $CM_REP || { mad_drop_del "$ULP_NDEV_B"; return 1; }
	rm -f lostreparp.dropped
	(for i in $(seq 600); do
		if mad_dropped "$ULP_NDEV_B"; then
			tc filter del dev "$ULP_NDEV_B" egress pref 7
			tc filter add dev "$ULP_NDEV_B" egress pref 8 protocol arp \
				u32 match u32 0 0 action drop
			ip neigh change "$ULP_IP_B" dev "$ULP_NDEV_A" nud failed &&
				: > lostreparp.dropped
			sleep 7
			break
		fi
		sleep 0.05
	done
	mad_drop_del "$ULP_NDEV_B") &
	watcher=$!
	pair_timeout=40 rping_verified lostreparp 64 5 || rc=1
	if [ ! -e lostreparp.dropped ]; then
		echo "the filter dropped no REP (are its offsets wrong?), or the client had no entry to fail"
		rc=1
	fi
	kill "$watcher" 2> /dev/null
	wait "$watcher"
	mad_drop_del "$ULP_NDEV_B"
	ktap_info "lost REP + ARP: rping took $((SECONDS - t0)) s"
	return $rc
}

# arp_block NDEV / arp_unblock NDEV: drop every ARP frame leaving NDEV.
arp_block() {
	tc qdisc add dev "$1" clsact 2> /dev/null
	tc filter add dev "$1" egress pref 8 protocol arp u32 match u32 0 0 action drop
}
arp_unblock() { tc qdisc del dev "$1" clsact 2> /dev/null || true; }

# The client's entry for the server gets its MAC (STALE), so that the
# client resolves the server without ARP while its ARP frames are dropped.
client_knows_server() {
	ip neigh replace "$ULP_IP_B" dev "$ULP_NDEV_A" \
		lladdr "$(cat "/sys/class/net/$ULP_NDEV_B/address")" nud stale
}

# The server's entry for the client is gone and ARP fails (the client's
# ARP frames are dropped for 14 s) when the REQ comes. ib_cm resolves the
# client's MAC as it takes the REQ (1 s limit); without an entry that
# fails and the REQ is dropped without a word, and so is each resend
# (about 4 s apart) until ARP works again. The tunnel teaches the entry
# the REQ's source MAC: rping must be done well within those 14 s.
req_arp_run() {
	local rc=0 t0 pid i
	client_knows_server || return 1
	arp_block "$ULP_NDEV_A" || { arp_unblock "$ULP_NDEV_A"; return 1; }
	ip neigh del "$ULP_IP_A" dev "$ULP_NDEV_B" 2> /dev/null
	rm -f reqarp.rc
	t0=$SECONDS
	(pair_timeout=40 rping_verified reqarp 64 5; echo $? > reqarp.rc) &
	pid=$!
	for ((i = 0; i < 140; i++)); do
		[ -e reqarp.rc ] && break
		sleep 0.1
	done
	arp_unblock "$ULP_NDEV_A"
	wait "$pid"
	[ "$(cat reqarp.rc 2> /dev/null)" = 0 ] || rc=1
	if [ $rc -eq 0 ] && [ "$i" -ge 120 ]; then
		echo "rping took $((SECONDS - t0)) s: the REQs waited for ARP"
		rc=1
	fi
	ktap_info "REQ + ARP failure: rping took $((SECONDS - t0)) s"
	return $rc
}

# The server's entry for the client left PROBE without an answer.
server_entry_probed() {
	! ip neigh show "$ULP_IP_A" dev "$ULP_NDEV_B" | grep -q 'PROBE\|REACHABLE' &&
		grep -q "^$ULP_IP_A dev $ULP_NDEV_B .*PROBE" lateacc-neigh.log
}

# The server's RTR at rdma_accept() meets a FAILED entry for the client.
# The RDMA core resolves the client's MAC when ib_cm takes the REQ and
# again at the user QP's RTR, each time with a 1 s limit. rdma_cm answers
# a REQ its consumer has not accepted yet with an MRA, so the client sends
# no more REQs; if the entry fails in between (its unicast probes lost, as
# at 30 % loss), RTR needs one broadcast ARP exchange within its second,
# rdma_accept() fails otherwise and the client is rejected (status 28).
# Made deterministic: the rping server is stopped (SIGSTOP) while the
# kernel takes the REQ, the client's ARP frames are dropped, the server's
# entry is put in PROBE, goes FAILED by its own timer, and only then does
# the server run on to accept. The tunnel has a pending asker's MAC
# taught to an entry that fails (mroce_net_note_asker()).
late_accept_arp_run() {
	local rc=0 spid rpid=0 cpid mon mac i t0=$SECONDS
	mac=$(cat "/sys/class/net/$ULP_NDEV_A/address") || return 1
	client_knows_server || return 1
	rm -f lateacc-*.log
	timeout 60 rping -s -V -a "$ULP_IP_B" -p 7176 -S 64 -C 5 > lateacc-server.log 2>&1 &
	spid=$!
	if wait_for 20 cm_listening 7176; then
		rpid=$(pgrep -P "$spid" -x rping)
	fi
	if [ -z "$rpid" ] || ! kill -STOP "$rpid"; then
		echo "the rping server did not come up"
		kill "$spid" 2> /dev/null
		wait "$spid"
		return 1
	fi
	ip monitor neigh > lateacc-neigh.log 2>&1 &
	mon=$!
	timeout 60 rping -c -V -a "$ULP_IP_B" -I "$ULP_IP_A" -p 7176 -S 64 -C 5 > lateacc-client.log 2>&1 &
	cpid=$!
	# The server's connection cm_id: the kernel took the REQ.
	if ! wait_for 15 cm_ids_at_least 7176 3; then
		echo "the server's kernel took no REQ"
		rc=1
	fi
	arp_block "$ULP_NDEV_A"
	ip neigh replace "$ULP_IP_A" dev "$ULP_NDEV_B" lladdr "$mac" nud probe || rc=1
	# Its probes unanswered, the entry goes FAILED (reported as STALE when
	# the tunnel has taught it again by then: netlink reads the state
	# after the netevent notifiers ran).
	if ! wait_for 10 server_entry_probed; then
		echo "the server's entry for the client did not fail"
		rc=1
	fi
	ip neigh show "$ULP_IP_A" dev "$ULP_NDEV_B" | sed 's/^/at accept: /'
	kill -CONT "$rpid"
	# The RTR is over within its second; then ARP may work again.
	sleep 3
	arp_unblock "$ULP_NDEV_A"
	wait "$cpid" || { echo "client: exit $?"; rc=1; }
	wait "$spid" || { echo "server: exit $?"; rc=1; }
	kill "$mon" 2> /dev/null
	wait "$mon"
	if [ $rc -ne 0 ] || grep -qi 'mismatch\|error' lateacc-client.log; then
		rc=1
		echo "client:"; tail -n 8 lateacc-client.log
		echo "server:"; tail -n 8 lateacc-server.log
		echo "the server's neighbour events:"; tail -n 12 lateacc-neigh.log
	fi
	ktap_info "late accept + FAILED entry: $((SECONDS - t0)) s"
	return $rc
}

lost_dreq_run() {
	local before rc=0
	before=$(hw_counter "$ULP_DEV_A" cm_dreq_resent) || return 1
	lost_mad_run dreq "$ULP_NDEV_A" $CM_DREQ || rc=1
	ktap_info "lost DREQ: cm_dreq_resent +$(($(hw_counter "$ULP_DEV_A" cm_dreq_resent) - before))"
	[ $rc -eq 0 ] && [ "$(hw_counter "$ULP_DEV_A" cm_dreq_resent)" -gt "$before" ]
}

# The tunnel's memo of DREQ copies at and beyond its capacity (mroce_mad.c:
# 64 copies, all devices together; the test reaches it only through
# mroce_mad_tx_note(), whose mroce_memo_has_room() turns a DREQ away).
# ucmatose's server disconnects N > 64 connections at once while every
# DREP from the client is dropped: the server's tunnel keeps a copy of 64
# DREQs and sends the other N - 64 uninsured, counting each in
# cm_dreq_uninsured -- exactly N - 64, read before ib_cm resends any of
# them (its DREQ timeout is about 4 s; uninsured_read) -- and resends the
# 64 copies. Then DREPs pass again: each copy ends at its DREP (none
# expires), ib_cm's resends of the uninsured DREQs find room and are
# answered, and both ucmatose exit 0 with all N disconnected. A second
# round must find all 64 places free again (exactly N - 64 uninsured once
# more): a copy that never ended, or a count that leaked, makes it more.
DREQ_MEMO=64
DREQ_MEMO_N=$((DREQ_MEMO + 16))
CM_DREP=0x0016
dreq_resends() {
	echo $(($(hw_counter "$ULP_DEV_A" cm_dreq_resent) + $(hw_counter "$ULP_DEV_B" cm_dreq_resent)))
}
# The memo holds no copy: no resend on either device for 3 s (a copy is
# resent at least every 2 s, and goes 2 s after its last try).
dreq_memo_empty() {
	local i r
	for ((i = 0; i < 10; i++)); do
		r=$(dreq_resends) || return 1
		sleep 3
		[ "$(dreq_resends)" = "$r" ] && return 0
	done
	return 1
}
# usec: the time in microseconds.
usec() { echo "${EPOCHREALTIME/./}"; }
# counter DEV NAME: hw_counter by a builtin.
counter() { local v; read -r v < "/sys/class/infiniband/$1/ports/1/hw_counters/$2" && echo "$v"; }

# mad_count_add NDEV ATTR: count (not drop) the CM MADs of ATTR leaving
# NDEV; mad_count NDEV: how many left. The filter goes with mad_drop_del.
mad_count_add() {
	local port
	port=$(cat /sys/module/mroce/parameters/udp_port) || return 1
	tc qdisc add dev "$1" clsact &&
		tc filter add dev "$1" egress pref 9 protocol ip u32 \
			match ip protocol 17 0xff match u16 "$port" 0xffff at 22 \
			match u8 0x07 0xff at $((MAD_AT + 1)) \
			match u16 "$2" 0xffff at $((MAD_AT + 16)) action ok
}
mad_count() { tc -s filter show dev "$1" egress pref 9 | awk '/Sent .* pkt/ { print $4; exit }'; }
mad_drops() { tc -s filter show dev "$1" egress | sed -n 's/.*(dropped \([0-9]*\).*/\1/p' | head -n 1; }
# since DEV NAME BEFORE: how much DEV's counter NAME moved since BEFORE.
since() { echo $(($(counter "$1" "$2") - $3)); }
# reach DEV NAME BEFORE N: it moved N at least.
reach() { [ "$(since "$1" "$2" "$3")" -ge "$4" ]; }

# A user's datagram to QPN 1 is not one of the CM's MADs
# (mroce_mad_tx_note()). An ordinary UD QP on the client sends 3
# datagrams shaped as CM DREQs to the server's QPN 1
# (tools/mroce_ud_mad.py; the server's GSI QP drops them for their Q_Key,
# so no DREP ever comes). The tunnel must keep no copy: a tc filter counts
# exactly the 3 leaving the client, and no DREQ is resent or counted
# uninsured in the next 2 s (a copy is resent 0.25 and 0.75 s after it
# was made). Each such datagram was kept (mroce before session 38): resent
# 10 times over 16 s, holding one of the 64 places, so one process could
# leave every real DREQ uninsured.
USER_DREQS=3
user_dreq_run() {
	local ga gb r0 u0 dr du n rc=0
	ga=$(gid_index "$ULP_DEV_A" "$ULP_IP_A") && gb=$(gid_index "$ULP_DEV_B" "$ULP_IP_B") ||
		{ echo "no IPv4 GIDs"; return 1; }
	if ! dreq_memo_empty; then
		echo "the tunnel still resends DREQs: the memo is not empty"
		return 1
	fi
	r0=$(counter "$ULP_DEV_A" cm_dreq_resent) &&
		u0=$(counter "$ULP_DEV_A" cm_dreq_uninsured) || return 1
	mad_count_add "$ULP_NDEV_A" $CM_DREQ || { mad_drop_del "$ULP_NDEV_A"; return 1; }
	/usr/bin/python3 "$MROCE_SELFTESTS_DIR/tools/mroce_ud_mad.py" \
		"$ULP_DEV_A" "$ga" "$ULP_DEV_B" "$gb" $USER_DREQS || rc=1
	sleep 2
	n=$(mad_count "$ULP_NDEV_A")
	mad_drop_del "$ULP_NDEV_A"
	dr=$(since "$ULP_DEV_A" cm_dreq_resent "$r0")
	du=$(since "$ULP_DEV_A" cm_dreq_uninsured "$u0")
	echo "user DREQ-shaped datagrams: $n left the client, $dr resent, $du uninsured" > userdreq.txt
	if [ "$n" != $USER_DREQS ] || [ "$dr" != 0 ] || [ "$du" != 0 ]; then
		echo "$n DREQs left the client in 2 s ($dr resent, $du uninsured), want $USER_DREQS (none resent)"
		rc=1
	fi
	return $rc
}

# A DREQ copy that is never answered expires (mroce_mad.c). rping -V 64 B
# x 1 while every CM DREP leaving the server is dropped: the client's DREQ
# reaches the server, whose CM answers it and every resend of it, and no
# answer comes back. rping's client destroys its cm_id right after
# disconnecting, so ib_cm sends the DREQ once and every later DREQ leaving
# the client is the tunnel's. The copy must be resent exactly
# DREQ_TRIES times, at 0.25, 0.75, 1.75, 3.75 s and then every 2 s (the
# 10th at 15.75 s after the DREQ, so not before 15 s after rping started),
# then dropped one gap later (17.75 s) and counted once in
# cm_dreq_expired; then nothing: a tc filter on the client counts exactly
# 1 + DREQ_TRIES DREQs leaving it, no more come within two gaps of the
# drop, and the memo is empty for the rounds below.
DREQ_TRIES=10
dreq_expiry_run() {
	local r0 e0 u0 t0 t10 dr de n rc=0
	if ! dreq_memo_empty; then
		echo "the tunnel still resends DREQs: the memo is not empty"
		return 1
	fi
	r0=$(counter "$ULP_DEV_A" cm_dreq_resent) && e0=$(counter "$ULP_DEV_A" cm_dreq_expired) &&
		u0=$(counter "$ULP_DEV_A" cm_dreq_uninsured) || return 1
	if ! mad_count_add "$ULP_NDEV_A" $CM_DREQ || ! mad_drop_add "$ULP_NDEV_B" $CM_DREP; then
		mad_drop_del "$ULP_NDEV_A"
		mad_drop_del "$ULP_NDEV_B"
		return 1
	fi
	t0=$(usec)
	pair_timeout=30 rping_verified expire 64 1 || rc=1
	# The 10th resend 15.75 s after the DREQ; 30 s bound the wait.
	if ! wait_for 30 reach "$ULP_DEV_A" cm_dreq_resent "$r0" $DREQ_TRIES; then
		echo "$(since "$ULP_DEV_A" cm_dreq_resent "$r0") resends in 30 s, want $DREQ_TRIES"
		rc=1
	fi
	t10=$(usec)
	# Dropped 2 s after the 10th: 5 s bound the wait; then two more gaps
	# show that nothing is resent after it.
	wait_for 5 reach "$ULP_DEV_A" cm_dreq_expired "$e0" 1
	sleep 4
	dr=$(since "$ULP_DEV_A" cm_dreq_resent "$r0")
	de=$(since "$ULP_DEV_A" cm_dreq_expired "$e0")
	n=$(mad_count "$ULP_NDEV_A")
	echo "DREQ expiry: $dr resends, the 10th seen $(((t10 - t0) / 1000)) ms after rping started;" \
		"$de expired; $n DREQs left the client, $(mad_drops "$ULP_NDEV_B") DREPs dropped" > dreqexpiry.txt
	mad_drop_del "$ULP_NDEV_A"
	mad_drop_del "$ULP_NDEV_B"
	if [ "$dr" != $DREQ_TRIES ]; then
		echo "the copy was resent $dr times, want $DREQ_TRIES"
		rc=1
	fi
	if [ $((t10 - t0)) -lt 15000000 ]; then
		echo "the 10th resend came $(((t10 - t0) / 1000)) ms after rping started, want 15 s at least"
		rc=1
	fi
	if [ "$de" != 1 ]; then
		echo "cm_dreq_expired +$de, want +1"
		rc=1
	fi
	if [ "$n" != $((1 + DREQ_TRIES)) ]; then
		echo "$n DREQs left the client, want $((1 + DREQ_TRIES)) (one from ib_cm, $DREQ_TRIES resends)"
		rc=1
	fi
	if [ "$(counter "$ULP_DEV_A" cm_dreq_uninsured)" != "$u0" ]; then
		echo "the DREQ went uninsured"
		rc=1
	fi
	return $rc
}

# New copies do not postpone an older copy's resend (mroce_mad.c: the
# memo's work runs when the earliest copy is due). The client connects
# STEADY_N times through rdma_cm and disconnects one connection every
# STEADY_GAP_MS ms while every CM DREP leaving the server is dropped
# (tools/mroce_cm_dreqs.py; it destroys each cm_id right after its DREQ,
# as rping does, so each later DREQ with that transaction ID is the
# tunnel's), and times the DREQs leaving the client (AF_PACKET, kernel
# timestamps). Each copy's first resend is due 250 ms after its DREQ: it
# must come within STEADY_LATE_MS, and the first copy's well before the
# last DREQ. Until session 39 each new copy moved the memo's work to 250
# ms after it, so with new copies less than 250 ms apart the first copy
# was resent only 250 ms after the last: after (STEADY_N - 1) *
# STEADY_GAP_MS + 250 ms. Then DREPs pass: every copy ends at its DREP at
# its next resend (none expires, none went uninsured).
STEADY_N=24 STEADY_GAP_MS=100 STEADY_LATE_MS=1000
dreq_steady_run() {
	local r0 e0 u0 spid out f rc=0
	if ! dreq_memo_empty; then
		echo "the tunnel still resends DREQs: the memo is not empty"
		return 1
	fi
	r0=$(counter "$ULP_DEV_A" cm_dreq_resent) && e0=$(counter "$ULP_DEV_A" cm_dreq_expired) &&
		u0=$(counter "$ULP_DEV_A" cm_dreq_uninsured) || return 1
	timeout 120 /usr/bin/python3 "$MROCE_SELFTESTS_DIR/tools/mroce_cm_dreqs.py" \
		server "$ULP_IP_B" 7473 $STEADY_N > dreqsteady-server.log 2>&1 &
	spid=$!
	if ! wait_for 20 cm_listening 7473; then
		echo "the server did not come up"; cat dreqsteady-server.log
		kill "$spid" 2> /dev/null
		wait "$spid"
		return 1
	fi
	mad_drop_add "$ULP_NDEV_B" $CM_DREP || { mad_drop_del "$ULP_NDEV_B"; kill "$spid"; wait "$spid"; return 1; }
	timeout 90 /usr/bin/python3 "$MROCE_SELFTESTS_DIR/tools/mroce_cm_dreqs.py" \
		client "$ULP_IP_A" "$ULP_IP_B" 7473 $STEADY_N $STEADY_GAP_MS \
		"$ULP_NDEV_A" "$(cat /sys/module/mroce/parameters/udp_port)" > dreqsteady-client.log 2>&1 || rc=1
	mad_drop_del "$ULP_NDEV_B"
	out=$(tail -n 1 dreqsteady-client.log)
	echo "steady DREQs: $out" > dreqsteady.txt
	if [ $rc -ne 0 ] || [[ "$out" != dreqs=* ]]; then
		echo "the client failed:"; tail -n 5 dreqsteady-client.log
		rc=1
	else
		declare -A kv
		for f in $out; do kv[${f%%=*}]=${f#*=}; done
		if [ "${kv[dreqs]}" != $STEADY_N ] || [ "${kv[unresent]}" != 0 ]; then
			echo "${kv[dreqs]} DREQs seen, ${kv[unresent]} never resent; want $STEADY_N, all resent"
			rc=1
		fi
		if [ "${kv[max_resend_ms]}" -gt $STEADY_LATE_MS ]; then
			echo "a copy was first resent ${kv[max_resend_ms]} ms after its DREQ, want $STEADY_LATE_MS at most (due at 250)"
			sed -n 's/^dreq /  dreq /p' dreqsteady-client.log | head -n $STEADY_N
			rc=1
		fi
		if [ "${kv[first_resend_ms]}" -lt 0 ] || [ "${kv[first_resend_ms]}" -ge "${kv[span_ms]}" ]; then
			echo "the first copy was resent ${kv[first_resend_ms]} ms after its DREQ, not before the last DREQ (${kv[span_ms]} ms)"
			rc=1
		fi
		# Without new copies closer than 250 ms the check proves nothing.
		[ "${kv[max_gap_ms]}" -lt 250 ] ||
			ktap_info "steady DREQs: a gap of ${kv[max_gap_ms]} ms (>= 250): this run could not see a postponement"
	fi
	kill "$spid" 2> /dev/null
	wait "$spid" 2> /dev/null
	# Each copy's next resend (at most 1.75 s after its DREQ) meets a DREP.
	if ! dreq_memo_empty; then
		echo "the copies did not end once DREPs passed"
		rc=1
	fi
	if [ "$(since "$ULP_DEV_A" cm_dreq_expired "$e0")" != 0 ] ||
		[ "$(since "$ULP_DEV_A" cm_dreq_uninsured "$u0")" != 0 ]; then
		echo "cm_dreq_expired +$(since "$ULP_DEV_A" cm_dreq_expired "$e0")," \
			"cm_dreq_uninsured +$(since "$ULP_DEV_A" cm_dreq_uninsured "$u0"), want +0 each"
		rc=1
	fi
	echo "steady DREQs: $out; $(since "$ULP_DEV_A" cm_dreq_resent "$r0") resends in all" > dreqsteady.txt
	return $rc
}

uninsured_since() { # uninsured_since BEFORE: the server's count since then
	echo $(($(hw_counter "$ULP_DEV_B" cm_dreq_uninsured) - $1))
}

# uninsured_read BEFORE N: the server's uninsured DREQs since BEFORE in
# _du, read 1 s after they reached N (the 64 copies are resent 250 ms
# after they were made, and a memo that turned away more than N has done
# so by then), and _du_exact=1 when that is the count of DREQs ib_cm sent
# once. ib_cm sends an uninsured DREQ again while the memo is still full
# (counted again) after its DREQ timeout, 4.096 s (cm_convert_to_ms() of
# rdma_cm's CM response timeout 20) from the send's completion, which
# comes after the tunnel counted it: so the count is read at the latest
# 3 s after the last poll that saw none, and is exact if the read was
# done within 3.5 s of that poll. (1 s after the N-th read at a fixed time
# counted ib_cm's resends when the N DREQs took more than 3 s to go.)
# Polled every 50 ms; fails after 60 s short of N.
uninsured_read() {
	local u0=$1 want=$2 f tb ta t0 t1 tn=0 v
	f=/sys/class/infiniband/$ULP_DEV_B/ports/1/hw_counters/cm_dreq_uninsured
	_du=0 _du_exact=0 _du_how=
	t0=${EPOCHREALTIME/./}
	t1=$t0
	while :; do
		tb=${EPOCHREALTIME/./}
		read -r v < "$f" || break
		ta=${EPOCHREALTIME/./}
		_du=$((v - u0))
		[ "$_du" -eq 0 ] && t1=$tb
		[ "$tn" = 0 ] && [ "$_du" -ge "$want" ] && tn=$ta
		if [ "$tn" != 0 ] && { [ "$ta" -ge $((tn + 1000000)) ] || [ "$ta" -ge $((t1 + 3000000)) ]; }; then
			[ $((ta - t1)) -le 3500000 ] && _du_exact=1
			break
		fi
		[ "$ta" -ge $((t0 + 60000000)) ] && break
		sleep 0.05
	done
	_du_how="read $(((ta - t1) / 1000)) ms after the last poll that saw none ($((tn ? (tn - t1) / 1000 : -1)) ms to $want), $( ((_du_exact)) && echo exact || echo 'not exact')"
	if [ "$tn" = 0 ]; then
		echo "$_du DREQs went uninsured in 60 s, fewer than $want"
		return 1
	fi
}

# dreq_memo_round TAG: one round as above; its numbers in dreqmemo-TAG.txt.
dreq_memo_round() {
	local tag=$1 n=$DREQ_MEMO_N u0 r0 e0 du dr spid cpid rc=0 t0=$SECONDS
	if ! dreq_memo_empty; then
		echo "the tunnel still resends DREQs: the memo is not empty"
		return 1
	fi
	u0=$(hw_counter "$ULP_DEV_B" cm_dreq_uninsured) &&
		r0=$(hw_counter "$ULP_DEV_B" cm_dreq_resent) &&
		e0=$(hw_counter "$ULP_DEV_B" cm_dreq_expired) || return 1
	mad_drop_add "$ULP_NDEV_A" $CM_DREP || { mad_drop_del "$ULP_NDEV_A"; return 1; }
	timeout 120 ucmatose -b "$ULP_IP_B" -p 7472 -c $n -C 1 -S 100 \
		> "dreqmemo-$tag-server.log" 2>&1 &
	spid=$!
	if ! wait_for 20 cm_listening 7472; then
		echo "the ucmatose server did not come up"
		kill "$spid" 2> /dev/null
		wait "$spid"
		mad_drop_del "$ULP_NDEV_A"
		return 1
	fi
	timeout 120 ucmatose -s "$ULP_IP_B" -b "$ULP_IP_A" -p 7472 -c $n -C 1 -S 100 \
		> "dreqmemo-$tag-client.log" 2>&1 &
	cpid=$!
	# The server disconnects all N at once, after N connects and sends.
	uninsured_read "$u0" $((n - DREQ_MEMO)) || rc=1
	du=$_du
	dr=$(($(hw_counter "$ULP_DEV_B" cm_dreq_resent) - r0))
	mad_drop_del "$ULP_NDEV_A"
	if [ "$_du_exact" = 1 ] && [ "$du" != $((n - DREQ_MEMO)) ]; then
		echo "$du of $n DREQs went uninsured, want $((n - DREQ_MEMO)) (a memo of $DREQ_MEMO)"
		rc=1
	elif [ "$_du_exact" = 0 ] &&
		{ [ "$du" -lt $((n - DREQ_MEMO)) ] || [ "$du" -gt $((2 * (n - DREQ_MEMO))) ]; }; then
		echo "$du of $n DREQs went uninsured, want $((n - DREQ_MEMO)) to" \
			"$((2 * (n - DREQ_MEMO))) (a memo of $DREQ_MEMO; read too late to count ib_cm's resends out)"
		rc=1
	fi
	if [ "$dr" -lt $DREQ_MEMO ]; then
		echo "$dr DREQ copies resent 1 s after the memo filled, want $DREQ_MEMO at least"
		rc=1
	fi
	wait "$cpid" || { echo "client: exit $?"; rc=1; }
	wait "$spid" || { echo "server: exit $?"; rc=1; }
	if [ "$(grep -c '^disconnected' "dreqmemo-$tag-server.log")" != 1 ] ||
		grep -q 'cmatose: event\|failing' "dreqmemo-$tag-server.log" "dreqmemo-$tag-client.log"; then
		echo "ucmatose did not disconnect all $n"
		rc=1
	fi
	if [ "$(hw_counter "$ULP_DEV_B" cm_dreq_expired)" != "$e0" ]; then
		echo "$(($(hw_counter "$ULP_DEV_B" cm_dreq_expired) - e0)) DREQ copies expired, want all ended at their DREP"
		rc=1
	fi
	if [ $rc -ne 0 ]; then
		echo "client:"; tail -n 8 "dreqmemo-$tag-client.log"
		echo "server:"; tail -n 8 "dreqmemo-$tag-server.log"
	fi
	echo "round $tag: $n DREQs, $du uninsured ($_du_how), $dr copies resent by then;" \
		"then $(uninsured_since "$u0") uninsured in all, $((SECONDS - t0)) s" > "dreqmemo-$tag.txt"
	return $rc
}

# step DESC CMD...: a subtest that also says how long it took; returns
# whether it passed.
step() {
	local desc=$1 f0=$_ktap_fail t0=$SECONDS
	shift
	check "$desc" "$@"
	ktap_info "  took $((SECONDS - t0)) s"
	[ "$_ktap_fail" -eq "$f0" ]
}

ulp_setup_or_finish
ulp_need_cm
dmesg_mark
for l in $(ulp_losses); do
	ulp_loss "$l"
	step "$l% loss: rping -V, 64 B x 20, every byte checked" rping_verified "s$l" 64 20
	step "$l% loss: rping -V, 60000 B x 20, every byte checked" rping_verified "l$l" 60000 20
	step "$l% loss: ucmatose, 20 x 1000 B sends" ucmatose_run "$l"
	if step "$l% loss: ib_send_bw -R (perftest through rdma_cm), 200 x 64 KiB" send_bw_run "$l"; then
		check "$l% loss: ib_send_bw -R reported its result" send_bw_done "$l"
		ktap_info "$l% loss: ib_send_bw -R: $(awk '$1 == 65536 { print $4 " MB/s" }' "send_bw-$l-client.log")"
	fi
	if [ "$l" = 0 ]; then
		step "udaddy: UD through rdma_cm (SIDR), 20 datagrams" udaddy_run
		step "ibv_ud_pingpong -c: 200 x 1 KiB datagrams, buffers checked" ud_pingpong_run
		if [ "$DEV_TYPE" = mroce ]; then
			step "the client's DREQ is lost: the tunnel resends it, the server disconnects" lost_dreq_run
			if /usr/bin/python3 -c 'import pyverbs' 2> /dev/null; then
				step "a user UD QP's DREQ-shaped datagrams to QPN 1: the tunnel keeps no copy, resends none" user_dreq_run
				[ -e userdreq.txt ] && ktap_info "$(cat userdreq.txt)"
			else
				ktap_skip "a user UD QP's DREQ-shaped datagrams to QPN 1" "python3-pyverbs is not installed (make deps)"
			fi
			step "no DREP comes back: the DREQ copy is resent $DREQ_TRIES times, then expires, counted in cm_dreq_expired" dreq_expiry_run
			[ -e dreqexpiry.txt ] && ktap_info "$(cat dreqexpiry.txt)"
			if /usr/bin/python3 -c 'import pyverbs' 2> /dev/null; then
				step "$STEADY_N DREQs $STEADY_GAP_MS ms apart, DREPs dropped: each copy is first resent on time (new copies do not postpone it)" dreq_steady_run
				[ -e dreqsteady.txt ] && ktap_info "$(cat dreqsteady.txt)"
			else
				ktap_skip "DREQs $STEADY_GAP_MS ms apart: each copy resent on time" "python3-pyverbs is not installed (make deps)"
			fi
			for r in 1 2; do
				step "DREQ memo round $r: $DREQ_MEMO_N DREQs, DREPs dropped: $DREQ_MEMO kept, $((DREQ_MEMO_N - DREQ_MEMO)) uninsured and counted; all disconnect once DREPs pass" dreq_memo_round $r
				[ -e "dreqmemo-$r.txt" ] && ktap_info "$(cat "dreqmemo-$r.txt")"
			done
			step "the client's REQ is lost: rping still connects and verifies" lost_mad_run req "$ULP_NDEV_A" $CM_REQ
			step "the server's REP is lost: rping still connects and verifies" lost_mad_run rep "$ULP_NDEV_B" $CM_REP
			step "the client's RTU is lost: rping still connects and verifies" lost_mad_run rtu "$ULP_NDEV_A" $CM_RTU
			step "the REP is lost and the client's ARP entry fails: the resent REP lets RTR resolve the MAC" lost_rep_arp_run
			step "the server's ARP entry for the client fails as the REQ comes: the REQ's MAC lets ib_cm take it" req_arp_run
			step "the server accepts late and its ARP entry for the client fails meanwhile: the REQ's MAC lets RTR resolve it" late_accept_arp_run
		fi
	fi
	ulp_loss 0
done
ktap_info "$ULP_DEV_A sent/received $(ulp_pkts "$ULP_DEV_A") packets"
check "the kernel log has no warnings or CM errors" ulp_klog_clean
ulp_teardown
ktap_finish
