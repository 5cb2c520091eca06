#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench BENCH=lat_events: an event census of the 64 B ib_write_lat
# round trip, per driver, in one boot. Instructions per round trip are
# make insnprof's; this counts the events that cost little in instructions
# but much under TCG emulation: clock event reprograms, timer interrupts,
# IPIs, softirqs, tasklets, wakeups and context switches, hrtimer starts,
# cancels and expiries by function, work items, packets.
#
# For each round (BENCH_EVENTS_ROUNDS, 2) and each driver of BENCH_DRIVERS
# (loaded afresh on rdma_bench's veth pair), bpftrace is attached before
# ib_write_lat starts (BENCH_EVENTS_ITERS iterations, 40000) but counts only
# between two marks: from BENCH_PROFILE_WARM (1000) packets after the
# client started, for BENCH_EVENTS_SECONDS (1) s. A round trip is two posts
# (the driver's post_send, one per side). The counts include everything the
# guest did in the window (perftest's busy polling, the kernel's own timers):
# the two drivers' difference is the point. Probes cost time per event, so
# the latency during the window is not the untraced one.
# selftests/bench/lat_events.py turns the JSON dumps into lat_events.md: per
# event, the count per round trip of each driver and their difference, and
# where mroce's clock event reprograms, IPIs and wakeups come from (stacks).
# BENCH_EVENTS_SETS="min full" adds, before each census, a run with only the
# posts and packets counted (DRIVER.min in the table): what the probes cost.
# BENCH_MROCE_PARAMS: mroce's module parameters (the first set; ko=PATH
# loads another build).
# vm-timeout: 900
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_traffic.sh"
require_root
require_cmd ib_write_lat bpftrace

ITERS=${BENCH_EVENTS_ITERS:-40000}
SECONDS_ON=${BENCH_EVENTS_SECONDS:-1}
ROUNDS=${BENCH_EVENTS_ROUNDS:-2}
# probe sets per driver and round: full (the census), min (posts and
# packets only: what the probes cost)
SETS=${BENCH_EVENTS_SETS:-full}
WARM=${BENCH_PROFILE_WARM:-1000}
DRIVERS=${BENCH_DRIVERS:-rxe mroce}
IFS='|' read -r MPARAMS _ <<< "${BENCH_MROCE_PARAMS:-}"
out=$MROCE_TEST_OUT
bench_counts lat_events "$ITERS" "$ROUNDS"

T=/sys/kernel/tracing
[ -e $T/events ] || mount -t tracefs nodev $T 2> /dev/null
on=/tmp/lat_events.on
off=/tmp/lat_events.off

have_tp() { [ -d "$T/events/$1" ]; }
have_fn() { grep -qE "^$1( |\$)" "$T/available_filter_functions" 2> /dev/null; }

# The bpftrace program for driver $1: only probes that exist in this kernel.
# Counting is on between the openat() of $on and that of $off.
program() {
	local drv=$1 post fn a
	case $drv in mroce) post=mroce_post_send ;; *) post=rxe_post_send ;; esac
	cat << EOF
BEGIN { printf("lat_events: attached\\n"); }
tracepoint:syscalls:sys_enter_openat /str(args->filename) == "$on"/ { @on = 1; @t0 = nsecs; }
tracepoint:syscalls:sys_enter_openat /str(args->filename) == "$off" && @on == 1/ {
	@on = 0; @ns = nsecs - @t0; exit();
}
kprobe:$post /@on == 1/ {
	@c["posts"] = count(); @post_cpu[pid, cpu] = count();
	if (@last[pid]) {
		\$d = (nsecs - @last[pid]) / 1000;
		if (\$d < 100) { @c["post to same side's next post < 100 us"] = count(); }
		else if (\$d < 1000) { @c["post to same side's next post 100-1000 us"] = count(); }
		else { @c["post to same side's next post >= 1 ms"] = count(); }
	}
	@last[pid] = nsecs;
}
EOF
	have_fn veth_xmit &&
		echo 'kprobe:veth_xmit /@on == 1/ { @c["packets (veth_xmit)"] = count(); }'
	# set "min": nothing more (what the probes themselves cost)
	if [ "$2" = min ]; then
		echo 'END { clear(@last); }'
		return 0
	fi
	# hrtimers by function; a cancel knows only the timer: remember each
	# timer's function when it is started
	have_tp timer/hrtimer_start && cat << 'EOF'
tracepoint:timer:hrtimer_start { @fn[args->hrtimer] = args->function; }
tracepoint:timer:hrtimer_start /@on == 1/ { @hstart[ksym(args->function)] = count(); }
EOF
	# how far ahead the driver's own hrtimers are set, when started
	if [ "$drv" = mroce ] && have_tp timer/hrtimer_start; then
		for fn in mroce_peer_timer mroce_peer_ack_timer; do
			# (bpftrace's kaddr() does not resolve module symbols)
			a=$(awk -v f="$fn" '$3 == f { print "0x" $1; exit }' /proc/kallsyms)
			[ -n "$a" ] || continue
			cat << EOF
tracepoint:timer:hrtimer_start /@on == 1 && (uint64)args->function == $a/ {
	\$d = (int64)args->expires - (int64)nsecs;
	if (\$d < 0) { @c["$fn start: due already"] = count(); }
	else if (\$d < 100000) { @c["$fn start: due in < 100 us"] = count(); }
	else if (\$d < 1000000) { @c["$fn start: due in 100 us-1 ms"] = count(); }
	else if (\$d < 10000000) { @c["$fn start: due in 1-10 ms"] = count(); }
	else { @c["$fn start: due in >= 10 ms"] = count(); }
}
EOF
		done
	fi
	have_tp timer/hrtimer_cancel &&
		echo 'tracepoint:timer:hrtimer_cancel /@on == 1/ { @hcancel[ksym(@fn[args->hrtimer])] = count(); }'
	have_tp timer/hrtimer_expire_entry &&
		echo 'tracepoint:timer:hrtimer_expire_entry /@on == 1/ { @hexpire[ksym(args->function)] = count(); }'
	have_tp timer/timer_start &&
		echo 'tracepoint:timer:timer_start /@on == 1/ { @tstart[ksym(args->function)] = count(); }'
	have_tp timer/timer_expire_entry &&
		echo 'tracepoint:timer:timer_expire_entry /@on == 1/ { @texpire[ksym(args->function)] = count(); }'
	have_fn clockevents_program_event && cat << 'EOF'
kprobe:clockevents_program_event /@on == 1/ {
	@c["clock event programs"] = count(); @cep_stack[kstack(7)] = count();
}
EOF
	for fn in lapic_next_deadline lapic_next_event hpet_clkevt_set_next_event; do
		have_fn $fn && echo "kprobe:$fn /@on == 1/ { @c[\"$fn\"] = count(); }"
	done
	local tp
	for tp in local_timer_entry reschedule_entry call_function_entry call_function_single_entry \
		irq_work_entry; do
		have_tp irq_vectors/$tp &&
			echo "tracepoint:irq_vectors:$tp /@on == 1/ { @c[\"irq $tp\"] = count(); }"
	done
	# IPIs sent, and from where
	for fn in native_smp_send_reschedule native_send_call_func_single_ipi \
		native_send_call_func_ipi; do
		have_fn $fn && echo "kprobe:$fn /@on == 1/ { @c[\"ipi sent: $fn\"] = count(); @ipi_stack[kstack(7)] = count(); }"
	done
	have_tp irq/irq_handler_entry &&
		echo 'tracepoint:irq:irq_handler_entry /@on == 1/ { @hardirq[str(args->name)] = count(); }'
	have_tp irq/softirq_raise && cat << 'EOF'
tracepoint:irq:softirq_raise /@on == 1/ { @sraise[args->vec] = count(); }
tracepoint:irq:softirq_entry /@on == 1/ { @sentry[args->vec] = count(); }
EOF
	# tasklets: schedules by function (func/callback is at offset 24 of
	# struct tasklet_struct on 64 bit), runs by function where the kernel
	# has the tracepoint
	have_fn __tasklet_schedule &&
		echo 'kprobe:__tasklet_schedule /@on == 1/ { @tsched[ksym(*(uint64 *)(arg0 + 24))] = count(); }'
	have_fn __tasklet_hi_schedule &&
		echo 'kprobe:__tasklet_hi_schedule /@on == 1/ { @tsched[ksym(*(uint64 *)(arg0 + 24))] = count(); }'
	have_tp irq/tasklet_entry &&
		echo 'tracepoint:irq:tasklet_entry /@on == 1/ { @trun[ksym(args->func)] = count(); }'
	# (6.1 has no tasklet_entry tracepoint: the drivers' own tasklet functions)
	for fn in mroce_rx_run mroce_peer_arm_tasklet rxe_do_task; do
		have_fn $fn && echo "kprobe:$fn /@on == 1/ { @c[\"tasklet run: $fn\"] = count(); }"
	done
	have_fn tasklet_action_common &&
		echo 'kprobe:tasklet_action_common /@on == 1/ { @c["tasklet_action_common"] = count(); }'
	have_tp workqueue/workqueue_queue_work && cat << 'EOF'
tracepoint:workqueue:workqueue_queue_work /@on == 1/ { @wqueue[ksym(args->function)] = count(); }
tracepoint:workqueue:workqueue_execute_start /@on == 1/ { @wexec[ksym(args->function)] = count(); }
EOF
	cat << 'EOF'
tracepoint:sched:sched_switch /@on == 1/ { @switch_to[args->next_comm] = count(); }
tracepoint:sched:sched_wakeup /@on == 1 && args->target_cpu == (int32)cpu/ { @wakeup_local[args->comm] = count(); }
tracepoint:sched:sched_wakeup /@on == 1 && args->target_cpu != (int32)cpu/ {
	@wakeup_remote[args->comm] = count(); @rwake_stack[kstack(7)] = count();
}
EOF
	# lock contention: every slow path spins (under TCG each pause leaves
	# the translated block)
	for fn in native_queued_spin_lock_slowpath __pv_queued_spin_lock_slowpath; do
		have_fn $fn && echo "kprobe:$fn /@on == 1/ { @c[\"spinlock slow path\"] = count(); @spin_stack[kstack(6)] = count(); }"
	done
	# system calls of the application (each one a kernel entry and exit,
	# with its page-table switches), page faults, TLB flushes
	have_tp raw_syscalls/sys_enter &&
		echo 'tracepoint:raw_syscalls:sys_enter /@on == 1 && comm == "ib_write_lat"/ { @sys[args->id] = count(); }'
	for tp in exceptions/page_fault_user exceptions/page_fault_kernel; do
		have_tp $tp && echo "tracepoint:${tp/\//:} /@on == 1/ { @c[\"${tp#*/}\"] = count(); }"
	done
	have_tp tlb/tlb_flush &&
		echo 'tracepoint:tlb:tlb_flush /@on == 1/ { @tlb[args->reason] = count(); }'
	# hot functions: only on request (BENCH_EVENTS_HOT=1), each probe hit costs
	if [ "${BENCH_EVENTS_HOT:-0}" = 1 ]; then
		have_fn try_to_wake_up && echo 'kprobe:try_to_wake_up /@on == 1/ { @c["try_to_wake_up"] = count(); }'
		have_fn ktime_get && echo 'kprobe:ktime_get /@on == 1/ { @c["ktime_get"] = count(); }'
	fi
	echo 'END { clear(@fn); clear(@last); }'
	return 0
}

mark=/tmp/lat_events.client
# shellcheck disable=SC2317 # called through PERFTEST_BEFORE_CLIENT
client_starts() { : > "$mark"; }
sent() {
	local a b
	read -r a < /sys/class/net/veth00/statistics/tx_packets
	read -r b < /sys/class/net/veth01/statistics/tx_packets
	echo $((a + b))
}

# the devices' hw counters, summed over both: "name value" lines
hwc() {
	local f v
	for f in /sys/class/infiniband/dev[01]/ports/1/hw_counters/*; do
		[ -f "$f" ] && read -r v < "$f" 2> /dev/null && echo "${f##*/} $v"
	done | awk '{ s[$1] += $2 } END { for (k in s) print k, s[k] }' | sort
}

round=0
count_one() {
	local set
	for set in $SETS; do
		count_set "$1" "$set" || return 1
	done
}

count_set() {
	local drv=$1 set=$2 ppid bpid p0 p1 name=$1-r$round i
	[ "$set" = full ] || name=$drv.$set-r$round
	program "$drv" "$set" > "$out/$name.bt"
	rm -f "$mark" "$on" "$off"
	: > "$out/$name.json"
	bpftrace -f json "$out/$name.bt" > "$out/$name.json" 2> "$out/$name.bt.err" &
	bpid=$!
	# BEGIN runs once every probe is attached
	for ((i = 0; i < 600; i++)); do
		grep -q 'lat_events: attached' "$out/$name.json" 2> /dev/null && break
		exited "$bpid" && break
		sleep 0.2
	done
	if ! grep -q 'lat_events: attached' "$out/$name.json"; then
		echo "lat_events: $drv: bpftrace did not attach: $(head -c 600 "$out/$name.bt.err")"
		kill "$bpid" 2> /dev/null
		wait "$bpid" 2> /dev/null
		return 1
	fi
	PERFTEST_LOG=lat_events-$name PERFTEST_TIMEOUT=600 PERFTEST_BEFORE_CLIENT=client_starts \
		perftest_pair "" dev0 "" dev1 10.0.0.2 ib_write_lat -s 64 -n "$ITERS" > /dev/null &
	ppid=$!
	until [ -e "$mark" ] || exited "$ppid"; do sleep 0.1; done
	p0=$(sent)
	until [ $(($(sent) - p0)) -ge "$WARM" ] || exited "$ppid"; do sleep 0.05; done
	hwc > "$out/$name.hwc0"
	p0=$(sent)
	: > "$on"
	sleep "$SECONDS_ON"
	: > "$off"
	p1=$(sent)
	hwc > "$out/$name.hwc1"
	exited "$ppid" && echo "lat_events: $drv: WARNING: ib_write_lat ended inside the window" \
		"(raise BENCH_EVENTS_ITERS)"
	for ((i = 0; i < 300; i++)); do exited "$bpid" && break; sleep 0.2; done
	kill "$bpid" 2> /dev/null
	wait "$bpid"
	wait "$ppid"
	echo "{\"type\": \"veth\", \"data\": {\"packets\": $((p1 - p0))}}" >> "$out/$name.json"
	# the hw counters that moved, read just outside the window
	join "$out/$name.hwc0" "$out/$name.hwc1" | awk '$3 != $2 { printf "%s\"%s\": %d", n++ ? ", " : "", $1, $3 - $2 }
		END { print "" }' | sed 's/^/{"type": "hwc", "data": {/; s/$/}}/' >> "$out/$name.json"
	echo "lat_events: $drv $set round $round: $(grep -c '"type": "map"' "$out/$name.json") maps;" \
		"perftest: $(awk '$1 == 64 && NF >= 5 { print "typical", $5, "us, avg", $6; exit }' \
		"$out/lat_events-$name.client" 2> /dev/null)"
	jsons+=("$out/$name.json")
}

topo_policy 1 || exit 1
echo "lat_events: drivers $DRIVERS; $ROUNDS rounds, $ITERS iterations, counted ${SECONDS_ON} s;" \
	"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)," \
	"clockevent $(cat /sys/devices/system/clockevents/clockevent0/current_device 2> /dev/null)"
jsons=()
rc=0
for ((round = 1; round <= ROUNDS; round++)); do
	d=$DRIVERS
	# even rounds reverse the order of the drivers
	[ $((round % 2)) = 1 ] || d=$(echo "$DRIVERS" | tr ' ' '\n' | tac | tr '\n' ' ')
	bench_each_driver lat_events "$d" "$MPARAMS" count_one || rc=1
done
topo_policy_cleanup 1
rm -f "$mark" "$on" "$off"
[ ${#jsons[@]} -gt 0 ] || exit 1
python3 "$MROCE_SELFTESTS_DIR/bench/lat_events.py" "${jsons[@]}" > "$out/lat_events.md" || rc=1
cat "$out/lat_events.md"
exit $rc
