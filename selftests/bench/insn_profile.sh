#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make insnprof` (scripts/insnprof/run.sh): guest kernel
# instructions per 64 B ib_write_lat round trip, by function, for rdma_rxe
# and mroce (docs/testing.md, "Instruction profile"). Needs the VM booted
# with the insnprof QEMU plugin (scripts/insnprof/insnprof.c) watching
# $MROCE_OUT; skips without it.
#
# For each column (rxe, then mroce with each parameter set of
# BENCH_MROCE_PARAMS: mroce, mroce2, ...; a set's ko=PATH loads that
# module file), on rdma_bench's veth pair, one driver loaded at a time:
# the guest's /proc/kallsyms is copied out while the driver is loaded
# (<col>.kallsyms: KASLR and module addresses of this load), then one
# long ib_write_lat -s 64 runs; once BENCH_INSNPROF_WARM packets have
# crossed after the client started (its start and the connection stay
# out), the plugin is asked for snapshots of its counters, one now and one
# after each of BENCH_INSNPROF_WINDOWS windows of about
# BENCH_INSNPROF_ITERS round trips (2 x ITERS packets sent: the window
# ends by the devices' sent_pkts; the round trips in it are counted
# exactly from the snapshots themselves, by the calls of
# ib_uverbs_post_send, two per round trip). perftest then finishes its
# run. <col>-<i>.snap (the snapshots), <col>.meta (what ran, the devices'
# sent_pkts at each snapshot, perftest's result) are left for
# scripts/insnprof/insnprof.py on the host.
# vm-timeout: 3600
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_traffic.sh"
require_root
require_cmd ib_write_lat rdma

ITERS=${BENCH_INSNPROF_ITERS:-5000}
WINDOWS=${BENCH_INSNPROF_WINDOWS:-2}
WARM=${BENCH_INSNPROF_WARM:-2000}
DRIVERS=${BENCH_DRIVERS:-rxe mroce}
bench_counts insn_profile "$ITERS" "$WINDOWS" "$WARM"
# mroce's parameter sets: one column each (mroce, mroce2, ...), as in rdma_bench
bench_param_sets
out=$MROCE_TEST_OUT
share=$MROCE_OUT

bench_nap_init insnprof

# snap_req NAME: ask the plugin for snapshot NAME (it polls the share
# every 2 ms); snap_wait NAME [SECS]: wait for it (builtins only: no
# process runs in a window but perftest's); snap_collect NAME...: move
# them to $out once the traffic is over.
snap_req() { : > "$share/$1.req"; }
snap_wait() {
	local i
	for ((i = 0; i < ${2:-120} * 20; i++)); do
		[ -e "$share/$1.done" ] && return 0
		nap 0.05
	done
	return 1
}
snap_collect() {
	local s
	for s in "$@"; do
		rm -f "$share/$s.done" "$share/$s.req"
		mv "$share/$s.snap" "$out/" 2> /dev/null
	done
}

snap_req probe
if ! snap_wait probe 30; then
	echo "insn_profile: SKIP: no insnprof plugin answers in $share (run it with make insnprof)"
	exit "$KSFT_SKIP"
fi
snap_collect probe
rm -f "$out/probe.snap"

mark=/tmp/insnprof.client
# shellcheck disable=SC2317 # called through PERFTEST_BEFORE_CLIENT
client_starts() { : > "$mark"; }

# profile COL DRV [PARAM...]: one driver's windows.
profile() {
	local col=$1 drv=$2 n pid p0 p i rc=0 pk=() names=() t0 t
	shift 2
	if ! bench_driver_up "$drv" "$@"; then
		echo "insn_profile: $col: $drv did not come up"
		bench_driver_down
		return 1
	fi
	cp /proc/kallsyms "$out/$col.kallsyms"
	# enough iterations for the warm-up and every window even at 2
	# packets a round trip; the rest runs after the last snapshot
	n=$((WARM + 2 * WINDOWS * ITERS + 1000))
	rm -f "$mark"
	PERFTEST_LOG=$col PERFTEST_TIMEOUT=1800 PERFTEST_BEFORE_CLIENT=client_starts \
		perftest_pair "" dev0 "" dev1 10.0.0.2 ib_write_lat -s 64 -n "$n" > /dev/null &
	pid=$!
	until [ -e "$mark" ] || exited "$pid"; do nap 0.1; done
	bench_sent_pkts p0
	while ! exited "$pid"; do
		bench_sent_pkts p
		[ "$p" -ge $((p0 + WARM)) ] && break
		nap 0.2
	done
	t0=$EPOCHREALTIME
	for ((i = 0; i <= WINDOWS; i++)); do
		if [ "$i" -gt 0 ]; then
			while ! exited "$pid"; do
				nap 0.5
				bench_sent_pkts p
				[ "$p" -ge $((pk[i - 1] + 2 * ITERS)) ] && break
			done
		fi
		exited "$pid" && { echo "insn_profile: $col: ib_write_lat ended before window $i"; rc=1; break; }
		bench_sent_pkts p
		pk+=("$p")
		names+=("$col-$i")
		snap_req "$col-$i"
		snap_wait "$col-$i" || { echo "insn_profile: $col: snapshot $i timed out"; rc=1; break; }
	done
	t=$EPOCHREALTIME
	wait "$pid" || { echo "insn_profile: $col: ib_write_lat failed ($out/$col.client)"; rc=1; }
	snap_collect "${names[@]}"
	{
		echo "column=$col"
		echo "driver=$drv"
		echo "params=$*"
		echo "tool=ib_write_lat -s 64 -n $n"
		echo "windows=$WINDOWS"
		echo "sent_pkts=${pk[*]}"
		echo "seconds=$(awk -v a="$t0" -v b="$t" 'BEGIN { printf "%.2f", b - a }')"
		echo "perftest=$(awk '$1 == 64 && NF >= 5 { print; exit }' "$out/$col.client" 2> /dev/null)"
		echo "kernel=$(uname -r)"
		echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
		echo "ok=$((rc == 0))"
	} > "$out/$col.meta"
	echo "insn_profile: $col ($drv${*:+ $*}): ${#pk[@]} snapshots, sent_pkts ${pk[*]};" \
		"perftest: $(sed -n 's/^perftest=//p' "$out/$col.meta")"
	bench_driver_down
	return $rc
}

sysctl -qw kernel.kptr_restrict=0
echo "insn_profile: drivers $DRIVERS; $WINDOWS windows of ~$ITERS round trips after $WARM packets;" \
	"mroce parameter sets: $(printf '[%s] ' "${psets[@]}")"
topo_policy 1 || exit 1
rc=0
for d in $DRIVERS; do
	case $d in
	rxe) profile rxe rxe || rc=1 ;;
	mroce)
		for ((k = 0; k < ${#psets[@]}; k++)); do
			col=mroce
			[ "$k" -eq 0 ] || col=mroce$((k + 1))
			# shellcheck disable=SC2086 # one word per parameter
			profile "$col" mroce ${psets[k]} || rc=1
		done
		;;
	*) echo "insn_profile: unknown driver $d (rxe mroce)"; rc=1 ;;
	esac
done
topo_policy_cleanup 1
exit $rc
