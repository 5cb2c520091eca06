#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`, run inside the test VM: two endpoints, an mroce device on
# each, and what the RDMA stack and rdma-core see. Grows with every feature.
. "$MROCE_REPO/selftests/lib.sh"
. "$MROCE_REPO/selftests/lib_traffic.sh"

say() { printf '\n=== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "Two endpoints: netns a (va) <-> netns b (vb), one veth pair"
topo_netns || exit 1
run ip -n a -br addr show va
run ip -n b -br addr show vb
run ip netns exec a ping -c 1 -W 2 10.0.0.2 | grep -E 'transmitted|bytes from'

say "One mroce device per endpoint ('rdma link add' loads the module)"
run ip netns exec a rdma link add mroce_a type mroce netdev va || exit 1
run ip netns exec b rdma link add mroce_b type mroce netdev vb || exit 1
run rdma link show
run ip netns exec a rdma link show
wait_for 5 has_gid mroce_a "$(gid_of_ip fd00::1)"
wait_for 5 has_gid mroce_b "$(gid_of_ip fd00::2)"

say "rdma-core sees them through its stock rxe provider"
run ibv_devices
run ibv_devinfo -d mroce_a
say "GID tables (RoCE v2): default GID from the MAC, then one per address"
for dev in mroce_a mroce_b; do
	printf '$ ibv_devinfo -v -d %s | grep GID\n' "$dev"
	ibv_devinfo -v -d "$dev" | grep GID
done

say "Check"
ok=1
for pair in mroce_a:10.0.0.1 mroce_a:fd00::1 mroce_b:10.0.0.2 mroce_b:fd00::2; do
	if has_gid "${pair%%:*}" "$(gid_of_ip "${pair#*:}")"; then
		echo "  ${pair%%:*} has the GID of ${pair#*:}"
	else
		echo "  MISSING: ${pair%%:*} lacks the GID of ${pair#*:}"
		ok=
	fi
done
[ -n "$ok" ] || exit 1
echo "  two registered mroce devices with correct GIDs"

say "RC traffic through rdma-core's rxe provider, carried on the mroce wire"
export MROCE_TEST_OUT=${MROCE_TEST_OUT:-/tmp/mroce-demo}
mkdir -p "$MROCE_TEST_OUT"
why=$(transport_ready a mroce_a) || { echo "  $why"; exit 1; }
echo '$ ibv_rc_pingpong -c -n 200 -s 4096   (-c: the receiver checks every byte)'
rc_pingpong a mroce_a b mroce_b 10.0.0.2 -c -n 200 -s 4096 || exit 1
grep -E 'bytes in|iters in' "$MROCE_TEST_OUT/pingpong.client"

# One 64 KiB ib_write_bw per loss level (perftest_pair adds -F itself,
# PERFTEST_OPTS); the counters show what the transport did about the loss:
# exactly the lost packets are resent.
for loss in 0 1 10; do
	say "ib_write_bw, 64 KiB messages, ${loss} % packet loss on the veth (netem)"
	if [ "$loss" = 0 ]; then netem_clear a va; else netem_set a va loss "${loss}%"; fi
	before=$(hw_counter mroce_a retrans_pkts 2>/dev/null || echo 0)
	PERFTEST_LOG=write_bw perftest_pair a mroce_a b mroce_b 10.0.0.2 \
		ib_write_bw -s 65536 -n 300 || exit 1
	awk '/^ *65536/ { printf "  %s B x %s: %s MB/s average\n", $1, $2, $4 }' \
		"$MROCE_TEST_OUT/write_bw.client"
	echo "  packets resent for this run: $(( $(hw_counter mroce_a retrans_pkts 2>/dev/null || echo 0) - before ))"
done
netem_clear a va

say "Per-connection paths and transport counters (rdma statistic)"
echo '$ rdma statistic show link mroce_a/1'
ip netns exec a rdma statistic show link mroce_a/1 | tr -s ' ' '\n' | awk 'NF' | paste - - |
	awk '/pkts|retrans|sack|rto|pto|rekey/ { printf "  %-16s %s\n", $1, $2 }'
echo
echo "Everything above went over the mroce wire (UDP port $(cat /sys/module/mroce/parameters/udp_port 2>/dev/null || echo 61791))."
