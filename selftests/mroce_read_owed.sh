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
# everything.
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
netem_set b vb rate 8mbit
nsexec b timeout 60 ib_read_bw -F -d mroce_b -x "$gb" -s 8388608 -n 5 \
	> "$log.server" 2>&1 &
spid=$!
wait_for 30 tcp_listening 18515 b
( sleep 3; netem_set b vb loss 100% || echo "netem loss failed"
  nsexec b tc -s qdisc show dev vb
  for t in 0 5; do
	sleep $t
	for c in /sys/class/infiniband/mroce_a/ports/1/hw_counters/*; do
		v=$(cat "$c"); [ "$v" = 0 ] || printf '%s=%s ' "${c##*/}" "$v"
	done; echo
  done
  nsexec b tc -s qdisc show dev vb ) > "$log.diag" 2>&1 &
kpid=$!
t0=$(date +%s)
nsexec a timeout 60 ib_read_bw -F -d mroce_a -x "$ga" -s 8388608 -n 5 10.0.0.2 \
	> "$log.client" 2>&1
rc=$?
dt=$(( $(date +%s) - t0 ))
wait "$kpid"
ktap_info "client exit $rc after ${dt} s (60 s: timed out); $(tail -n 2 "$log.client" | tr '\n' ' ')"
sed 's/^/#   /' "$log.diag" "$log.client"
check "the READ requester ends with an error (not a hang)" test "$rc" -ne 0 -a "$rc" -ne 124
check "... within 30 s" test "$dt" -lt 30
check "... and the READ's status is RETRY_EXC_ERR (12)" grep -q 'status 12' "$log.client"
check "... counted as retry exhaustion on the requester" \
	test "$(hw_counter mroce_a retry_exceeded_err)" -gt "$exc0"
netem_clear b vb
kill "$spid" 2> /dev/null
wait "$spid" 2> /dev/null
ktap_finish
