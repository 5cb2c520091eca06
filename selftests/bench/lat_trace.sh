#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench BENCH=lat_trace: where the time of one 64 B ib_write_lat round
# trip goes, on the wall clock (profile_bench says where the CPU goes; on a
# ping-pong only the work on the critical path counts). For each driver of
# BENCH_DRIVERS, loaded afresh on rdma_bench's veth pair, ftrace's function
# tracer records the entries of a short list of functions of the path
# (post_send, transmit, veth, UDP receive, placement, ACK, completion,
# timers, softirqs; the driver's own and the stack's) over
# BENCH_TRACE_SECONDS (0.5) s of steady ib_write_lat traffic (from
# BENCH_PROFILE_WARM packets after the client started; the run has
# BENCH_TRACE_ITERS iterations, 20000), trace clock "mono" (comparable
# across CPUs). selftests/bench/lat_trace.py merges both CPUs' events into
# one timeline and charges each gap between consecutive events to the pair
# (previous event -> next event): per round trip, the wall-clock time
# between each pair of events, which adds up to the round trip. Tracing
# costs time per event (both drivers alike: compare the shape, not the
# totals). Output: lat_trace.md, and <driver>.trace (the raw trace).
# BENCH_TRACE_GRAPH="fn ...": instead, ftrace's function_graph tracer
# under those functions (set_graph_function), BENCH_TRACE_DEPTH (3)
# levels deep: what each of them spends in its callees, per call
# (<driver>.graph).
# BENCH_MROCE_PARAMS: mroce's module parameters (the first set; ko=PATH
# loads another build).
# vm-timeout: 900
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_traffic.sh"
require_root
require_cmd ib_write_lat

ITERS=${BENCH_TRACE_ITERS:-20000}
SECONDS_ON=${BENCH_TRACE_SECONDS:-0.5}
GRAPH=${BENCH_TRACE_GRAPH:-}
DEPTH=${BENCH_TRACE_DEPTH:-3}
WARM=${BENCH_PROFILE_WARM:-1000}
DRIVERS=${BENCH_DRIVERS:-rxe mroce}
IFS='|' read -r MPARAMS _ <<< "${BENCH_MROCE_PARAMS:-}"
out=$MROCE_TEST_OUT
bench_counts lat_trace "$ITERS" "$DEPTH"

T=/sys/kernel/tracing
[ -e $T/trace ] || mount -t tracefs nodev $T 2> /dev/null
[ -e $T/available_filter_functions ] || { echo "lat_trace: no ftrace function tracer"; exit 1; }

# The functions whose entries are traced (missing ones are skipped: static
# functions may be inlined).
COMMON="ib_uverbs_post_send veth_xmit net_rx_action __do_softirq udp_queue_rcv_one_skb
	hrtimer_start_range_ns hrtimer_try_to_cancel clockevents_program_event
	tasklet_action try_to_wake_up __queue_work schedule"
funcs_mroce="mroce_post_send mroce_peer_kick mroce_tx_run mroce_peer_flush
	mroce_net_xmit_list mroce_encap_recv mroce_rx_skb mroce_rx_burst_end mroce_chunk_skb_to_mr
	mroce_comp_run mroce_cq_post_locked mroce_ack_maybe mroce_ack_flush
	mroce_peer_arm mroce_peer_arm_tasklet mroce_peer_timer_fn mroce_ack_hint_tick
	mroce_peer_unlock mroce_peer_xmit_work mroce_peer_tx_work"
funcs_rxe="rxe_post_send rxe_requester rxe_xmit_packet rxe_udp_encap_recv rxe_rcv
	rxe_responder rxe_mr_copy rxe_completer rxe_cq_post"

mark=/tmp/lat_trace.client
# shellcheck disable=SC2317 # called through PERFTEST_BEFORE_CLIENT
client_starts() { : > "$mark"; }
sent() {
	local a b
	read -r a < /sys/class/net/veth00/statistics/tx_packets
	read -r b < /sys/class/net/veth01/statistics/tx_packets
	echo $((a + b))
}

trace_one() {
	local drv=$1 f n=0 ppid p0 funcs kind=trace buf
	# "N" or, before first use, "N (expanded: M)"
	read -r buf < $T/buffer_size_kb
	[[ $buf != *expanded:* ]] || buf=${buf##*expanded: }
	buf=${buf%%[ )]*}
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	: > $T/set_ftrace_filter
	: > $T/set_graph_function
	if [ -n "$GRAPH" ]; then
		kind=graph
		for f in $GRAPH; do
			echo "$f" >> $T/set_graph_function 2> /dev/null && n=$((n + 1))
		done
		[ "$n" -gt 0 ] || { echo "lat_trace: $drv: none of $GRAPH can be traced"; return 1; }
		echo "$DEPTH" > $T/max_graph_depth
	else
		case $drv in mroce) funcs=$funcs_mroce ;; *) funcs=$funcs_rxe ;; esac
		for f in $COMMON $funcs; do
			echo "$f" >> $T/set_ftrace_filter 2> /dev/null && n=$((n + 1))
		done
	fi
	echo mono > $T/trace_clock
	echo 32768 > $T/buffer_size_kb
	if [ "$kind" = graph ]; then
		echo function_graph > $T/current_tracer
		# (the tracer's own options exist only while it is the tracer)
		echo nofuncgraph-irqs > $T/trace_options
	else
		echo function > $T/current_tracer
	fi
	: > $T/trace
	rm -f "$mark"
	PERFTEST_LOG=lat_trace-$drv PERFTEST_TIMEOUT=300 PERFTEST_BEFORE_CLIENT=client_starts \
		perftest_pair "" dev0 "" dev1 10.0.0.2 ib_write_lat -s 64 -n "$ITERS" > /dev/null &
	ppid=$!
	until [ -e "$mark" ] || exited "$ppid"; do sleep 0.1; done
	p0=$(sent)
	until [ $(($(sent) - p0)) -ge "$WARM" ] || exited "$ppid"; do sleep 0.05; done
	echo 1 > $T/tracing_on
	sleep "$SECONDS_ON"
	echo 0 > $T/tracing_on
	wait "$ppid"
	cp $T/trace "$out/$drv.$kind"
	echo nop > $T/current_tracer
	: > $T/set_ftrace_filter
	: > $T/set_graph_function
	echo 0 > $T/max_graph_depth
	# back to the defaults (the ring buffers are ours to give back)
	echo "$buf" > $T/buffer_size_kb
	echo 1 > $T/tracing_on
	echo "lat_trace: $drv: $n functions traced ($kind), $(grep -vc '^#' "$out/$drv.$kind") lines;" \
		"perftest: $(awk '$1 == 64 && NF >= 5 { print "typical", $5, "us, avg", $6; exit }' \
		"$out/lat_trace-$drv.client" 2> /dev/null)"
}

topo_policy 1 || exit 1
echo "lat_trace: drivers $DRIVERS; $ITERS iterations, traced ${SECONDS_ON} s; clocksource" \
	"$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
traces=()
trace_driver() {
	trace_one "$1" || return 1
	traces+=("$out/$1.$([ -n "$GRAPH" ] && echo graph || echo trace)")
}
rc=0
bench_each_driver lat_trace "$DRIVERS" "$MPARAMS" trace_driver || rc=1
topo_policy_cleanup 1
[ ${#traces[@]} -gt 0 ] || exit 1
python3 "$MROCE_SELFTESTS_DIR/bench/lat_trace.py" ${GRAPH:+--graph} "${traces[@]}" \
	> "$out/lat_trace.md" || rc=1
cat "$out/lat_trace.md"
exit $rc
