#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tearing things down under RC traffic must neither crash, leak, hang nor
# leave the kernel log dirty:
#   - applications killed mid-transfer (QPs destroyed with packets, timers
#     and retransmissions in flight), then traffic again on the same
#     connection;
#   - the peer device deleted and re-created (a peer "restart": the old
#     connection id is unknown, so the survivor re-handshakes);
#   - a receiver whose peer was killed: its QP fails, its receives flush;
#   - a peer that disappears for good: the client's QP must end with an
#     error completion, whether it was sending or waiting to receive;
#   - the netdev removed, and the module unloaded, with connections open.
# vm-timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
require_root
require_cmd rdma ip ss ib_write_bw ib_read_bw ibv_rc_pingpong

mroce_pair_up
transport_ready a mroce_a > /dev/null || skip_all "$(transport_ready a mroce_a)"
ga=$(gid_index mroce_a 10.0.0.1) && gb=$(gid_index mroce_b 10.0.0.2) ||
	skip_all "no IPv4 GIDs"

# kill_hard PID...: SIGKILL background jobs and the tools they run (a job
# started as "nsexec NS TOOL &" is a subshell whose child is the tool).
kill_hard() {
	local p
	for p in "$@"; do
		pkill -9 -P "$p" 2> /dev/null
		kill -9 "$p" 2> /dev/null
	done
	return 0
}

# Start a long transfer, let it run, kill both ends.
sent_more() { [ "$(hw_counter mroce_a sent_pkts)" -gt "$sent0" ]; }

# kill_mid TOOL ARGS...: a perftest pair, each side on its own IPv4 GID
# (the two GID tables need not put it at the same index).
kill_mid() {
	local tool=$1 spid cpid
	shift
	set -- "${PERFTEST_OPTS[@]}" "$@"
	nsexec b "$tool" -d mroce_b -x "$gb" "$@" > /dev/null 2>&1 &
	spid=$!
	wait_for 30 tcp_listening 18515 b
	nsexec a "$tool" -d mroce_a -x "$ga" "$@" 10.0.0.2 > /dev/null 2>&1 &
	cpid=$!
	# Mid-transfer: once packets flow (a loaded VM may take a while to
	# connect), plus a moment.
	wait_for 60 sent_more
	sleep 1
	kill_hard "$cpid" "$spid"
	wait "$cpid" "$spid" 2> /dev/null
	return 0
}

sent0=$(hw_counter mroce_a sent_pkts)
kill_mid ib_write_bw -D 30 -s 65536
check "WRITE traffic flowed before the kill" test "$(hw_counter mroce_a sent_pkts)" -gt "$sent0"
sent0=$(hw_counter mroce_a sent_pkts)
kill_mid ib_read_bw -D 30 -s 65536 -q 4
check "traffic works again after killing both ends mid-transfer" \
	mroce_pair_run ibv_rc_pingpong -n 100 -s 4096

# Restart of the peer: delete and re-create mroce_b. mroce_a still holds an
# established connection whose id the new mroce_b does not know.
opened=$(hw_counter mroce_a conn_opened)
mroce_link_del mroce_b
mroce_link_add mroce_b vb b
wait_for 5 has_gid mroce_b "$(gid_of_ip 10.0.0.2)"
gb=$(gid_index mroce_b 10.0.0.2)
check "traffic works with the re-created peer" mroce_pair_run ibv_rc_pingpong -n 100 -s 4096
check "the survivor opened a new connection" test "$(hw_counter mroce_a conn_opened)" -gt "$opened"

# A receiver is not left waiting for a peer that went away: the ib_send_bw
# server has only receives posted when its client is killed. The client's
# QP is destroyed, its side of the connection closes once no QP uses it
# (5 s later), and the server's QP, which took data from the connection's
# old incarnation, fails with its receives flushed.
nsexec b timeout 150 ib_send_bw "${PERFTEST_OPTS[@]}" -d mroce_b -x "$gb" -D 100 > "$MROCE_TEST_OUT/recv.log" 2>&1 &
spid=$!
wait_for 30 tcp_listening 18515 b
sent0=$(hw_counter mroce_a sent_pkts)
nsexec a ib_send_bw "${PERFTEST_OPTS[@]}" -d mroce_a -x "$ga" -D 100 10.0.0.2 > /dev/null 2>&1 &
cpid=$!
wait_for 60 sent_more
kill_hard "$cpid"
wait "$cpid" 2> /dev/null
t0=$(date +%s)
wait "$spid"
rc=$?
t=$(( $(date +%s) - t0 ))
ktap_info "receiver: rc $rc after $t s: $(tail -n 2 "$MROCE_TEST_OUT/recv.log" | tr '\n' ' ')"
check "a receiver whose peer was killed fails within 60 s, not at the end of its 100 s" \
	test "$rc" -ne 0 -a "$rc" -ne 124 -a "$t" -le 60

# A peer that goes away for good mid-pingpong: the server is killed and its
# device deleted. The client's QP must fail instead of waiting forever:
# refused (unknown stream) if it was sending, flushed when the deleted
# device's CONN_CLOSE arrives if it was waiting to receive.
nsexec b ibv_rc_pingpong -d mroce_b -g "$gb" -n 100000 -s 4096 > /dev/null 2>&1 &
spid=$!
wait_for 30 tcp_listening 18515 b
nsexec a timeout 120 ibv_rc_pingpong -d mroce_a -g "$ga" -n 100000 -s 4096 10.0.0.2 \
	> "$MROCE_TEST_OUT/gone.log" 2>&1 &
cpid=$!
sleep 3
kill_hard "$spid"
wait "$spid" 2> /dev/null
mroce_link_del mroce_b
t0=$(date +%s)
wait "$cpid"
rc=$?
ktap_info "client: rc $rc after $(( $(date +%s) - t0 )) s: $(tail -n 2 "$MROCE_TEST_OUT/gone.log" | tr '\n' ' ')"
check "the client's QP failed instead of hanging" test "$rc" -ne 0 -a "$rc" -ne 124
check "with an error completion (refused, or flushed)" \
	grep -Eq 'Failed status|status [0-9]' "$MROCE_TEST_OUT/gone.log"

# Netdev removal with an open connection and a QP that has traffic queued,
# then unload the module.
mroce_link_add mroce_b vb b
wait_for 5 has_gid mroce_b "$(gid_of_ip 10.0.0.2)"
gb=$(gid_index mroce_b 10.0.0.2)
nsexec b ib_write_bw "${PERFTEST_OPTS[@]}" -d mroce_b -x "$gb" -D 60 > /dev/null 2>&1 &
spid=$!
wait_for 30 tcp_listening 18515 b
nsexec a ib_write_bw "${PERFTEST_OPTS[@]}" -d mroce_a -x "$ga" -D 60 10.0.0.2 > /dev/null 2>&1 &
cpid=$!
sleep 3
nsexec a ip link del va
check "mroce_a went away with its netdev" wait_for 30 test ! -e /sys/class/infiniband/mroce_a
kill_hard "$cpid" "$spid"
wait "$cpid" "$spid" 2> /dev/null
check "mroce_b went away with the veth pair" wait_for 30 test ! -e /sys/class/infiniband/mroce_b
check "the module unloads" wait_for 30 mroce_unload
check "kernel log clean" dmesg_clean
topo_netns_cleanup
ktap_finish
