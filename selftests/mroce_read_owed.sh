#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
#
# A READ whose request was acknowledged but whose response stops coming
# (the responder's egress goes dead mid-response: its own retries run out
# and it fails its QP, telling nobody) must end on the requester with an
# error completion within the retry budget (docs/protocol.md §5.5, owed
# responses), not hang. Server (responder) on mroce_b, client on mroce_a:
# b's egress is slowed so the 8 MiB response takes seconds, then loses
# everything once the response is under way.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
require_root
require_cmd rdma ip tc ib_read_bw

mroce_pair_up
transport_ready a mroce_a > /dev/null || skip_all "$(transport_ready a mroce_a)"
ga=$(family_gid_index mroce_a 4) && gb=$(family_gid_index mroce_b 4) ||
	skip_all "no IPv4 GIDs"
nsexec a ping -c 1 -W 2 10.0.0.2 > /dev/null	# neighbours resolved first

log=$MROCE_TEST_OUT/read_owed
exc0=$(hw_counter mroce_a retry_exceeded_err)
a_counters() {
	local c v
	for c in /sys/class/infiniband/mroce_a/ports/1/hw_counters/*; do
		v=$(cat "$c"); [ "$v" = 0 ] || printf '%s=%s ' "${c##*/}" "$v"
	done; echo
}
# The response is flowing: 1 MiB of it reached the requester (its READ_REQ
# was acknowledged long ago).
response_flows() { [ "$(hw_counter mroce_a rcvd_bytes)" -ge 1048576 ]; }
netem_set b vb rate 8mbit
nsexec b timeout 180 ib_read_bw -F -d mroce_b -x "$gb" -s 8388608 -n 5 \
	> "$log.server" 2>&1 &
spid=$!
wait_for 30 tcp_listening 18515 b
t0=$(date +%s)
nsexec a timeout 150 ib_read_bw -F -d mroce_a -x "$ga" -s 8388608 -n 5 10.0.0.2 \
	> "$log.client" 2>&1 &
cpid=$!
# The loss must hit the READ response, not perftest's TCP exchange before
# it: a guest slow to start the client (session 32's fresh-clone CI) lost
# that exchange to a fixed 3 s timer, and the client hung in TCP without
# ever posting a READ (mroce_a sent no packet). So the response flows first.
client_gone() { ! kill -0 "$cpid"; }
wait_for 40 eval 'response_flows || client_gone'
response_flows
flowing=$?
exc_loss=$(hw_counter mroce_a retry_exceeded_err)
netem_set b vb loss 100% || echo "netem loss failed" > "$log.diag"
tl=$(date +%s)
# Diagnostics aside: in a busy guest reading every counter takes seconds.
( echo "loss at +$((tl - t0)) s: $(a_counters)"
  nsexec b tc -s qdisc show dev vb
  sleep 5; a_counters ) >> "$log.diag" 2>&1 &
dpid=$!
# When the READ failed: the client's exit comes later (its teardown).
exhausted() { [ "$(hw_counter mroce_a retry_exceeded_err)" -gt "$exc0" ]; }
wait_for 75 exhausted
dt=$(( $(date +%s) - tl ))
wait "$dpid"
wait "$cpid"
rc=$?
nsexec b tc -s qdisc show dev vb >> "$log.diag" 2>&1
ktap_info "READ failed by $dt s after the loss, client exit $rc $(( $(date +%s) - tl )) s after it (124: timed out); $(tail -n 2 "$log.client" | tr '\n' ' ')"
sed 's/^/#   /' "$log.diag" "$log.client"
check "the READ response flowed before the loss" test "$flowing" = 0
check "no retry exhaustion while it flowed (before the loss)" test "$exc_loss" = "$exc0"
check "the READ requester ends with an error (not a hang)" test "$rc" -ne 0 -a "$rc" -ne 124
# The budget: retry_limit + 1 rounds of at most max_rto plus srtt, which
# the response's queue inflates (1-2 s); 16-27 s seen, a hang is for ever.
check "... within 45 s of the loss" test "$dt" -lt 45
check "... and the READ's status is RETRY_EXC_ERR (12)" grep -q 'status 12' "$log.client"
check "... counted as retry exhaustion on the requester" \
	test "$(hw_counter mroce_a retry_exceeded_err)" -gt "$exc0"
netem_clear b vb
kill "$spid" 2> /dev/null
wait "$spid" 2> /dev/null
ktap_finish
