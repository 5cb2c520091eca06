#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RDMA Write goodput under random loss, run in the test VM (make bench).
# Two devices in one guest over a veth pair forced onto the wire by policy
# routing (lib.sh topo_policy); netem drops packets on the data direction.
# Reports Mb/s and the ratio to the same driver's loss-free run, so that
# drivers are compared within one VM run, never across machines.
#
# Today: the rdma_rxe baseline. The transport adds an mroce column
# (DRIVERS="rxe mroce").
#
# vm-timeout: 900
. "$(dirname "$0")/../lib.sh"
require_root
require_cmd ib_write_bw tc

DURATION=${BENCH_DURATION:-10}
MARGIN=2	# perftest -D counts iterations only between two 2 s margins
SIZE=${BENCH_SIZE:-65536}
LOSSES=${BENCH_LOSSES:-"0 1 10"}
DRIVERS=${DRIVERS:-rxe}
csv=$MROCE_TEST_OUT/loss_sweep.csv

# Goodput in Mb/s of one ib_write_bw run from dev0 to dev1 (GID index 1 =
# the IPv4 GID). perftest's own BW column is unreliable under loss (it can
# print 0 although iterations completed), so goodput is computed from the
# iterations completed in its measurement window.
write_bw() {
	local srv=$1 cli=$2 log=$MROCE_TEST_OUT/$3 iters
	timeout $((DURATION + 30)) ib_write_bw -d "$srv" -x 1 -s "$SIZE" -D "$DURATION" -F \
		--report_gbits > "$log.srv" 2>&1 &
	sleep 1
	timeout $((DURATION + 30)) ib_write_bw -d "$cli" -x 1 -s "$SIZE" -D "$DURATION" -F \
		--report_gbits 10.0.0.2 > "$log.cli" 2>&1
	wait
	# "#bytes #iterations BW-peak BW-average MsgRate"
	iters=$(awk -v s="$SIZE" '$1 == s && NF >= 5 { print $2; exit }' "$log.cli")
	[ -n "$iters" ] || { echo "?"; return 1; }
	awk -v i="$iters" -v s="$SIZE" -v d="$((DURATION - 2 * MARGIN))" \
		'BEGIN { printf "%.1f", i * s * 8 / d / 1e6 }'
}

setup() {
	case $1 in
	rxe)
		mroce_unload
		modprobe rdma_rxe || return 1
		rdma link add dev0 type rxe netdev veth00 &&
			rdma link add dev1 type rxe netdev veth01
		;;
	mroce)
		rmmod rdma_rxe 2>/dev/null
		modprobe mroce || return 1
		mroce_link_add dev0 veth00 && mroce_link_add dev1 veth01
		;;
	esac
}

teardown() {
	rdma link delete dev0 2>/dev/null
	rdma link delete dev1 2>/dev/null
	rmmod rdma_rxe mroce 2>/dev/null
	return 0
}

sysctl -qw net.core.netdev_max_backlog=10000
topo_policy 1 || exit 1
echo "driver,loss_pct,size,duration_s,goodput_mbps" > "$csv"
declare -A bw
for drv in $DRIVERS; do
	setup "$drv" || { echo "cannot set up $drv"; exit 1; }
	wait_for 5 has_gid dev0 "$(gid_of_ip 10.0.0.1)"
	for loss in $LOSSES; do
		if [ "$loss" = 0 ]; then netem_clear "" veth00; else netem_set "" veth00 loss "$loss%"; fi
		bw[$drv,$loss]=$(write_bw dev1 dev0 "$drv-loss$loss")
		echo "$drv,$loss,$SIZE,$DURATION,${bw[$drv,$loss]}" >> "$csv"
		echo "# $drv loss ${loss}%: ${bw[$drv,$loss]} Mb/s"
	done
	netem_clear "" veth00
	teardown
done

echo
echo "RDMA Write goodput, $SIZE-byte messages, ${DURATION}s per run, loss on the data direction"
printf '%-8s' "loss"
for drv in $DRIVERS; do printf ' | %-10s %-9s' "$drv Mb/s" "ratio"; done
echo
for loss in $LOSSES; do
	printf '%-8s' "$loss%"
	for drv in $DRIVERS; do
		ratio=$(awk -v a="${bw[$drv,$loss]}" -v b="${bw[$drv,0]}" \
			'BEGIN { if (b + 0 > 0) printf "%.3f", a / b; else print "?" }')
		printf ' | %-10s %-9s' "${bw[$drv,$loss]}" "$ratio"
	done
	echo
done
echo "(CSV: $csv)"
