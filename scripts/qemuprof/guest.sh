#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make qemuprof` (scripts/qemuprof/run.sh): 64 B
# ib_write_lat columns, rdma_rxe and mroce alternating (BENCH_QEMUPROF_ROUNDS
# rounds of BENCH_DRIVERS: rxe mroce rxe mroce ...), each with one steady
# window during which the host records the QEMU process with perf
# (scripts/qemuprof/qemuprof.py watch). Per column, on rdma_bench's veth
# pair, one driver loaded at a time: one long ib_write_lat -s 64 -n
# BENCH_QEMUPROF_ITERS; once BENCH_QEMUPROF_WARM seconds have passed after the client
# started, two windows: COL, where the guest asks the host to start
# recording ($MROCE_OUT/COL.start), waits for its go (COL.go), reads the
# devices' sent_pkts and the time, sleeps BENCH_QEMUPROF_WINDOW seconds (no
# process but perftest's runs: a read that times out on a FIFO), reads them
# again and asks the host to stop (COL.stop; COL.done when perf has
# stopped); and COL-np, the same without perf (the host keeps only the
# times and schedstat): what perf's sampling itself costs. Perf's window
# first on odd rounds, the control's on even ones. The round trips in the window
# are the packets sent in it over the packets a round trip sends in the
# whole run (sent_pkts over the run / iterations: the two drivers need not
# send as many packets per round trip). COL.meta (what ran, counters,
# times, perftest's result, where the module and the kernel are loaded)
# is left in $MROCE_TEST_OUT for qemuprof.py. BENCH_QEMUPROF_UPROBES=1: the
# windows COL-np, COL-um and COL-ul, the last two counted on the host with
# uprobes (qemuprof.py: jump-cache misses; and TB lookups). BENCH_MROCE_PARAMS
# with "|" between parameter sets: a mroce column per set (mroce, mroce2, ...).
# vm-timeout: 1800
. "$MROCE_REPO/selftests/lib.sh"
. "$MROCE_REPO/selftests/lib_traffic.sh"
require_root
require_cmd ib_write_lat rdma

ITERS=${BENCH_QEMUPROF_ITERS:-600000}
WINDOW=${BENCH_QEMUPROF_WINDOW:-8}
WARM=${BENCH_QEMUPROF_WARM:-3}
ROUNDS=${BENCH_QEMUPROF_ROUNDS:-2}
DRIVERS=${BENCH_DRIVERS:-rxe mroce}
UPROBES=${BENCH_QEMUPROF_UPROBES:-0}
bench_counts qemuprof "$ITERS" "$WINDOW" "$WARM" "$ROUNDS"
out=$MROCE_TEST_OUT
share=$MROCE_OUT

bench_nap_init qemuprof

# host_ask COL WHAT ANSWER [SECS]: write COL.WHAT into the share, wait for
# the host's COL.ANSWER (builtins only).
host_ask() {
	local i
	: > "$share/$1.$2"
	for ((i = 0; i < ${4:-60} * 20; i++)); do
		[ -e "$share/$1.$3" ] && return 0
		nap 0.05
	done
	return 1
}

# the host watcher announces itself with watcher.ready
if ! host_ask probe probe ready 60; then
	echo "qemuprof: SKIP: no host watcher answers in $share (run it with make qemuprof)"
	exit "$KSFT_SKIP"
fi

mark=/tmp/qemuprof.client
# shellcheck disable=SC2317 # called through PERFTEST_BEFORE_CLIENT
client_starts() { : > "$mark"; }

# BENCH_QEMUPROF_TRACE=1: in the control windows (no perf) also count, in
# the guest, from the window's first sent_pkts read to its last: hrtimer
# and timer_list starts by callback (hist triggers on timer:hrtimer_start,
# timer:timer_start), and LAPIC timer reprograms and reschedule IPIs by
# kernel stack (kprobes on lapic_next_event and native_smp_send_reschedule,
# hist keyed by stacktrace): COL-np.trace.
TRACE=${BENCH_QEMUPROF_TRACE:-0}
tfs=/sys/kernel/tracing
trace_events=(timer/hrtimer_start timer/timer_start kprobes/qp_lapic kprobes/qp_resched)
trace_setup() {
	[ -d "$tfs/events/timer" ] || mount -t tracefs nodev "$tfs" 2> /dev/null
	[ -w "$tfs/kprobe_events" ] || return 1
	echo 'p:qp_lapic lapic_next_event' >> "$tfs/kprobe_events" 2> /dev/null
	echo 'p:qp_resched native_smp_send_reschedule' >> "$tfs/kprobe_events" 2> /dev/null
	return 0
}
trace_key() {
	case $1 in
	timer/*) echo function.sym ;;
	*) echo stacktrace ;;
	esac
}
trace_on() {
	local e
	for e in "${trace_events[@]}"; do
		[ -e "$tfs/events/$e/trigger" ] &&
			echo "hist:keys=$(trace_key "$e"):size=1024" > "$tfs/events/$e/trigger"
	done
}
trace_off() { # FILE: snapshot the counts now
	local e
	for e in "${trace_events[@]}"; do
		echo "== $e"
		[ -e "$tfs/events/$e/hist" ] && cat "$tfs/events/$e/hist"
	done > "$1" 2>&1
}
trace_collect() {
	local e
	for e in "${trace_events[@]}"; do
		[ -e "$tfs/events/$e/trigger" ] &&
			echo "!hist:keys=$(trace_key "$e"):size=1024" > "$tfs/events/$e/trigger" 2> /dev/null
	done
	echo '-:qp_lapic' >> "$tfs/kprobe_events" 2> /dev/null
	echo '-:qp_resched' >> "$tfs/kprobe_events" 2> /dev/null
	return 0
}

# window NAME PID: one window the host watches (NAME.start, NAME.go, ...,
# NAME.stop, NAME.done); sets w_p0 w_p1 w_t0 w_t1 w_pa w_pb, fails if perftest ended
# or the host did not answer.
window() {
	w_p0='' w_p1='' w_t0='' w_t1='' w_pa='' w_pb=''
	if exited "$2"; then
		echo "qemuprof: $1: ib_write_lat ended before the window"
		return 1
	fi
	local tr=0
	if [ "$TRACE" = 1 ] && [[ $1 == *-np ]]; then
		trace_setup && tr=1 || echo "qemuprof: $1: no tracing (tracefs, kprobes)"
	fi
	# w_pa, w_pb: the packets before asking the host to start and after
	# it stopped: the host's window lies between them (uprobes slow the
	# guest's own steps too, so it can be much longer than the guest's)
	bench_sent_pkts w_pa
	host_ask "$1" start go 60 || { echo "qemuprof: $1: the host did not start"; return 1; }
	[ "$tr" = 0 ] || trace_on
	bench_sent_pkts w_p0
	w_t0=$EPOCHREALTIME
	nap "$WINDOW"
	bench_sent_pkts w_p1
	w_t1=$EPOCHREALTIME
	[ "$tr" = 0 ] || trace_off "$out/$1.trace"
	host_ask "$1" stop "done" 120 || { echo "qemuprof: $1: the host did not stop"; return 1; }
	bench_sent_pkts w_pb
	[ "$tr" = 0 ] || trace_collect
	exited "$2" && { echo "qemuprof: $1: ib_write_lat ended in the window"; return 1; }
	return 0
}

# column COL DRV ROUND [PARAM...]: one driver's run with two windows, COL
# (perf records) and COL-np (no perf: the control, what perf itself costs),
# in the order perf first on odd rounds, control first on even ones; with
# BENCH_QEMUPROF_UPROBES=1 three, COL-np, COL-um (the host counts QEMU's
# jump-cache misses and loop exits with uprobes) and COL-ul (those and
# every TB lookup), their order turning with the round. COL's driver
# label (the meta's driver=) is COL up to its round: mroce2-1 is mroce2.
column() {
	local col=$1 drv=$2 round=$3 label=${1%-*} pid ps pe rc=0 w names=() ok modbase ktext
	local -A p0 p1 t0 t1 pa pb wok
	shift 3
	if ! bench_driver_up "$drv" "$@"; then
		echo "qemuprof: $col: $drv did not come up"
		bench_driver_down
		return 1
	fi
	# where the module and the kernel are (QEMU's jump cache is indexed
	# by guest virtual PC: which PCs collide depends on both)
	modbase=$(awk -v m="$([ "$drv" = rxe ] && echo rdma_rxe || echo mroce)" \
		'$1 == m { print $1 "@" $6 }' /proc/modules)
	ktext=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)
	rm -f "$mark"
	PERFTEST_LOG=$col PERFTEST_TIMEOUT=1500 PERFTEST_BEFORE_CLIENT=client_starts \
		perftest_pair "" dev0 "" dev1 10.0.0.2 ib_write_lat -s 64 -n "$ITERS" > /dev/null &
	pid=$!
	until [ -e "$mark" ] || exited "$pid"; do nap 0.1; done
	bench_sent_pkts ps
	nap "$WARM"
	if [ "$UPROBES" = 1 ]; then
		# the order turns with the round: np um ul, ul np um, um ul np
		case $((round % 3)) in
		1) names=("$col-np" "$col-um" "$col-ul") ;;
		2) names=("$col-ul" "$col-np" "$col-um") ;;
		0) names=("$col-um" "$col-ul" "$col-np") ;;
		esac
	elif [ $((round % 2)) -eq 1 ]; then
		names=("$col" "$col-np")
	else
		names=("$col-np" "$col")
	fi
	for w in "${names[@]}"; do
		wok[$w]=0
		if window "$w" "$pid"; then
			wok[$w]=1
		else
			rc=1
		fi
		p0[$w]=$w_p0 p1[$w]=$w_p1 t0[$w]=$w_t0 t1[$w]=$w_t1 pa[$w]=$w_pa pb[$w]=$w_pb
	done
	wait "$pid" || { echo "qemuprof: $col: ib_write_lat failed ($out/$col.client)"; rc=1; }
	bench_sent_pkts pe
	for w in "${names[@]}"; do
		ok=${wok[$w]}
		[ "$rc" -eq 0 ] || ok=0
		{
			echo "column=$w"
			echo "driver=$label"
			echo "modbase=$modbase"
			echo "ktext=$ktext"
			echo "params=$*"
			echo "perf=$([[ $w == *-n? || $w == *-u? ]] && echo 0 || echo 1)"
			echo "iters=$ITERS"
			echo "sent_run=$ps $pe"
			echo "sent_window=${p0[$w]} ${p1[$w]}"
			echo "sent_outer=${pa[$w]} ${pb[$w]}"
			echo "window_t=${t0[$w]} ${t1[$w]}"
			echo "perftest=$(awk '$1 == 64 && NF >= 5 { print; exit }' "$out/$col.client" 2> /dev/null)"
			echo "kernel=$(uname -r)"
			echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
			echo "ok=$ok"
		} > "$out/$w.meta"
		echo "qemuprof: $w ($drv${*:+ $*}): sent_pkts run $ps..$pe window ${p0[$w]}..${p1[$w]}"
	done
	echo "qemuprof: $col: perftest: $(awk '$1 == 64 && NF >= 5 { print; exit }' "$out/$col.client" 2> /dev/null)"
	bench_driver_down
	return $rc
}

# mroce's parameter sets ("|" between them; a set's ko=PATH: that build)
bench_param_sets
echo "qemuprof: drivers $DRIVERS x $ROUNDS rounds; ib_write_lat -s 64 -n $ITERS;" \
	"window ${WINDOW}s after ${WARM}s"
topo_policy 1 || exit 1
rc=0
for ((r = 1; r <= ROUNDS; r++)); do
	for d in $DRIVERS; do
		case $d in
		rxe) column "$d-$r" rxe "$r" || rc=1 ;;
		mroce)
			# a column per parameter set: mroce, mroce2, ...
			for ((i = 0; i < ${#psets[@]}; i++)); do
				lab=mroce$([ "$i" -eq 0 ] || echo $((i + 1)))
				# shellcheck disable=SC2086 # one word per parameter
				column "$lab-$r" mroce "$r" ${psets[i]} || rc=1
			done ;;
		*) echo "qemuprof: unknown driver $d (rxe mroce)"; rc=1 ;;
		esac
	done
done
topo_policy_cleanup 1
: > "$share/all.finished"
exit $rc
