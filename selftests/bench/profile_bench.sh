#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench BENCH=profile_bench: where the CPU goes, symbol by symbol, for
# rdma_rxe and mroce on rdma_bench's veth pair (one driver loaded at a
# time, each afresh). For each driver of BENCH_DRIVERS and each workload of
# BENCH_PROFILE_WORKLOADS ("lat write send nvme"; BENCH_NVMEOF=0 leaves
# nvme out of the default):
#
#   lat     ib_write_lat 64 B, BENCH_PROFILE_LAT_ITERS iterations (100000)
#   write   ib_write_bw 64 KiB, 1 QP, BENCH_PROFILE_BW_ITERS messages (3000)
#   send    ib_send_bw 64 KiB, 1 QP, as many
#   nvme    NVMe-oF 4 KiB random reads, queue depth 32 (nvmeof_bench's
#           4 KiB row: fio over nvme-rdma to nvmet-rdma on null_blk, both
#           in this guest, lib_nvmeof.sh), BENCH_PROFILE_SECONDS + 4 s;
#           an iteration is one read (the block device's completed reads
#           in the window, exact)
#   nvme128 the same with 128 KiB sequential reads, queue depth 16
#           (nvmeof_bench's 128 KiB read row); only by name
#
# `perf record -a -g -e cpu-clock -F BENCH_PROFILE_FREQ` (999 Hz: TCG has no
# PMU, so the software clock samples; idle CPUs are sampled too) starts
# disabled and is switched over its control FIFO to cover the steady
# traffic only: on from BENCH_PROFILE_WARM (1000) packets after perftest's
# client (or fio) started (its start and the connection stay out) for
# BENCH_PROFILE_SECONDS (4) s or until the traffic stops. Each workload's
# perf.data is reported in the guest while its module is loaded (symbols
# from the live /proc/kallsyms, kptr_restrict=0) into a self-and-children
# table and a per-command one, with the packets both devices sent
# (sent_pkts) and the veth frames in the window, and /proc/stat and
# /proc/softirqs at both ends of it (each CPU's busy time, exact; softirqs
# by kind and CPU);
# selftests/bench/profile_report.py turns them into profile.md (samples per
# iteration and per packet, the top symbols, the share of the driver, of
# mroce's protocol core/, the network stack, scheduling and idle, timers
# and clock, copies, user space; per CPU busy, softirqs per iteration). Kept for a later look:
# <driver>-<workload>.perf.data and <driver>.kallsyms (perf report -i F
# --kallsyms K on the host resolves the same symbols and call graphs).
# BENCH_MROCE_PARAMS: mroce's module parameters (the first set; ko=PATH
# loads another build).
# BENCH_PROFILE_HIST=S (nvme, nvme128; default 0 = off): after the perf window,
# while the same fio run goes on, S seconds of exact event counts
# (instrumented: tracefs hist triggers) into runs/<driver>-<workload>.hist and
# the log, with the reads completed in them: work items and hrtimer
# expiries and starts by function, wakeups by task, context switches by
# task (those of ksoftirqd/N: its runs), softirqs by vector and the task
# they ran in (ksoftirqd/N: the ones it took over), tasklets by function,
# the driver's poll_cq by completions returned, and calls of ib_core's
# softirq and workqueue CQ handlers (a CQ notification each). Per read, they say where an I/O's
# hand-offs and waits are (docs/testing.md, "NVMe-oF 4 KiB").
# vm-timeout: 1200
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_traffic.sh"
. "$(dirname "$0")/../lib_ulp.sh"
. "$(dirname "$0")/../lib_nvmeof.sh"
require_root
require_cmd perf rdma

FREQ=${BENCH_PROFILE_FREQ:-999}
LAT_ITERS=${BENCH_PROFILE_LAT_ITERS:-100000}
BW_ITERS=${BENCH_PROFILE_BW_ITERS:-3000}
WORKLOADS=${BENCH_PROFILE_WORKLOADS:-lat write send nvme}
# as in make bench: BENCH_NVMEOF=0 leaves NVMe-oF out
[ -n "${BENCH_PROFILE_WORKLOADS:-}" ] || [ "${BENCH_NVMEOF:-1}" != 0 ] || WORKLOADS="lat write send"
DRIVERS=${BENCH_DRIVERS:-rxe mroce}
IFS='|' read -r MPARAMS _ <<< "${BENCH_MROCE_PARAMS:-}"
out=$MROCE_TEST_OUT
runs=$out/runs
mkdir -p "$runs"
bench_counts profile_bench "$FREQ" "$LAT_ITERS" "$BW_ITERS"
for w in $WORKLOADS; do
	case $w in
	lat) require_cmd ib_write_lat ;;
	write) require_cmd ib_write_bw ;;
	send) require_cmd ib_send_bw ;;
	nvme | nvme128)
		require_cmd nvme fio
		# (nvmeof_need_modules would skip the whole benchmark)
		for m in null_blk nvmet nvmet_rdma nvme_rdma; do
			modprobe -n "$m" 2> /dev/null && continue
			echo "profile_bench: no kernel module $m: no nvme workload"
			WORKLOADS=${WORKLOADS//nvme128/}
			WORKLOADS=${WORKLOADS/nvme/}
			break
		done
		;;
	*) echo "profile_bench: unknown workload $w (lat write send nvme nvme128)"; exit 1 ;;
	esac
done
for d in $DRIVERS; do
	case $d in rxe | mroce) ;; *) echo "profile_bench: unknown driver $d (rxe mroce)"; exit 1 ;; esac
done

# Kernel addresses in /proc/kallsyms (else perf sees zeros and resolves no
# kernel or module symbol) and system-wide sampling for root.
sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1
perf record -q -a -e cpu-clock -o /tmp/perf.probe -- true > /tmp/perf.probe.log 2>&1 || {
	echo "profile_bench: perf record does not work here:"
	cat /tmp/perf.probe.log
	exit 1
}

# nvme_path: of our subsystem's controller, blk = the stat file of its
# namespace's path device (with native multipath the head disk, which fio
# reads, counts no I/O on 6.1; the path under the controller does) and
# nvme_queues = "queue_count sqsize" (nvme-rdma: one admin queue + one I/O
# queue, i.e. one QP, per CPU it was given; sqsize + 1 entries each).
nvme_path() {
	local c s q z
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2> /dev/null)" = "$NQN" ] || continue
		for s in "$c"/nvme*n*/stat; do
			[ -r "$s" ] || continue
			read -r q < "$c/queue_count"
			read -r z < "$c/sqsize"
			blk=$s nvme_queues="$q $z"
			return 0
		done
	done
	return 1
}

nvme_down() {
	disconnect > /dev/null 2>&1
	target_down
	rmmod nvme_rdma nvme_fabrics 2> /dev/null
	return 0
}

# The perf session of one workload: started disabled, switched over its
# control FIFO (perf answers each command on the ack FIFO).
ctl=/tmp/perf.ctl
ack=/tmp/perf.ack
rm -f "$ctl" "$ack"
mkfifo "$ctl" "$ack" || exit 1
# Opened read-write here: an open of a FIFO never blocks then, whether or
# not perf has opened its end yet.
exec {cfd}<> "$ctl" {afd}<> "$ack"
perf_ctl() { # perf_ctl enable|disable|ping
	local a
	echo "$1" >&"$cfd"
	read -r -t 120 -u "$afd" a && [ "$a" = ack ]
}

# A sleep without a process: a read that times out on a FIFO nobody writes.
bench_nap_init profile

# counters VAR: "packets both devices sent (sent_pkts), frames both veth
# ends sent (tx_packets), reads completed by the block device whose stat
# file is $blk (0 without one)", by builtins: it runs while the traffic does. (Its locals are
# prefixed: printf -v would set a local of the caller's variable's name.)
blk=
counters() {
	local _a=0 _b=0 _c=0 _d=0 _e=0 _hw=/sys/class/infiniband
	read -r _a < "$_hw/dev0/ports/1/hw_counters/sent_pkts"
	read -r _b < "$_hw/dev1/ports/1/hw_counters/sent_pkts"
	read -r _c < /sys/class/net/veth00/statistics/tx_packets
	read -r _d < /sys/class/net/veth01/statistics/tx_packets
	[ -z "$blk" ] || read -r _e _ < "$blk"
	printf -v "$1" '%s' "$((_a + _b)) $((_c + _d)) $_e"
}
# cpustat FILE: /proc/stat's CPU lines and context switches (ctxt),
# /proc/softirqs and both devices' hw_counters ("NAME: dev0 dev1"), by
# builtins.
cpustat() {
	local _l _f _a _b _s=()
	while read -r _l; do
		[[ $_l == cpu* || $_l == ctxt* ]] && _s+=("$_l")
	done < /proc/stat
	_s+=("softirqs")
	while read -r _l; do _s+=("$_l"); done < /proc/softirqs
	_s+=("hw_counters")
	for _f in /sys/class/infiniband/dev0/ports/1/hw_counters/*; do
		[ "${_f##*/}" = lifespan ] && continue
		_a=0 _b=0
		read -r _a < "$_f"
		read -r _b < "/sys/class/infiniband/dev1/ports/1/hw_counters/${_f##*/}"
		_s+=("${_f##*/}: $_a $_b")
	done
	printf '%s\n' "${_s[@]}" > "$1"
}
pkts() { P=${1%% *}; }

# perftest_pair runs in the background: its hook can only leave a mark.
mark=/tmp/profile.client
# shellcheck disable=SC2317 # called through PERFTEST_BEFORE_CLIENT
client_starts() { : > "$mark"; }

# hist_window BASE DRV: the BENCH_PROFILE_HIST counts (see the top).
HIST=${BENCH_PROFILE_HIST:-0}
[[ $HIST =~ ^[0-9]+$ ]] || { echo "profile_bench: BENCH_PROFILE_HIST '$HIST' is not a number"; exit 1; }
TR=/sys/kernel/tracing
# shellcheck disable=SC2054 # "vec,common_pid.execname" is one key list
HIST_EVENTS=(workqueue/workqueue_execute_start:function.sym timer/hrtimer_expire_entry:function.sym
	timer/hrtimer_start:function.sym sched/sched_wakeup:comm sched/sched_switch:prev_comm
	irq/softirq_entry:vec,common_pid.execname irq/tasklet_entry:func.sym kprobes/q_poll:ret
	kprobes/q_cq_softirq:common_pid kprobes/q_cq_wq:common_pid)
hist_window() {
	local base=$1 drv=$2 e ev t i0 i1 poll=mroce_poll_cq
	[ "$drv" = rxe ] && poll=rxe_poll_cq
	[ -d "$TR/events" ] || mount -t tracefs nodev "$TR" || return 1
	{
		echo "r:q_poll $poll ret=\$retval:s32"
		echo "p:q_cq_softirq ib_cq_completion_softirq"
		echo "p:q_cq_wq ib_cq_completion_workqueue"
	} > "$TR/kprobe_events" || return 1
	for e in "${HIST_EVENTS[@]}"; do
		ev=$TR/events/${e%%:*} t="hist:keys=${e#*:}:vals=hitcount:sort=hitcount.descending"
		[ -d "$ev" ] || continue
		echo "$t" > "$ev/trigger" && echo 1 > "$ev/enable"
	done
	read -r i0 _ < "$blk"
	nap "$HIST"
	read -r i1 _ < "$blk"
	{
		echo "# $drv: $HIST s of fio after the perf window: $((i1 - i0)) reads"
		for e in "${HIST_EVENTS[@]}"; do
			ev=$TR/events/${e%%:*} t="hist:keys=${e#*:}:vals=hitcount:sort=hitcount.descending"
			[ -d "$ev" ] || continue
			echo 0 > "$ev/enable"
			echo "## ${e%%:*}"
			# the 60 largest entries and the totals
			grep -v -e '^#' -e '^$' "$ev/hist" | awk 'NR <= 60 || /Totals:|Hits:|Entries:|Dropped:/'
			echo "!$t" > "$ev/trigger"
		done
	} > "$base.hist" 2>&1
	echo > "$TR/kprobe_events"
	sed 's/^/profile_bench: hist: /' "$base.hist"
}

# profile DRV WORKLOAD: one perf session over the steady traffic of one
# perftest run, reported. The window opens once WARM packets have crossed
# since the client started (its start, the connection and the first
# messages stay out) and closes after SECONDS s or when the packet count
# stops moving for a second (the end of the traffic; the teardown stays out).
# Iterations in the window = its packets x the run's iterations / the
# run's packets (from the client's start to its exit): perftest counts
# iterations only for the whole run.
WARM=${BENCH_PROFILE_WARM:-1000}
WINDOW=${BENCH_PROFILE_SECONDS:-4}
profile() {
	local drv=$1 w=$2 tool args iters base data pid ppid ok=0 s0 c0 c1 e1 t0 t1 last cur got n moved
	local dev='' is_nvme=0
	case $w in
	lat) tool=ib_write_lat args=(-s 64 -n "$LAT_ITERS") iters=$LAT_ITERS ;;
	write) tool=ib_write_bw args=(-s 65536 -n "$BW_ITERS" --report_gbits) iters=$BW_ITERS ;;
	send) tool=ib_send_bw args=(-s 65536 -n "$BW_ITERS" --report_gbits) iters=$BW_ITERS ;;
	nvme)
		tool=fio iters=0 is_nvme=1
		args=(--name=randread4k --rw=randread --bs=4k --iodepth=32 --ioengine=libaio
			--direct=1 --size=512M --time_based --runtime=$((WINDOW + 4 + HIST)))
		;;
	nvme128)
		tool=fio iters=0 is_nvme=1
		args=(--name=read128k --rw=read --bs=128k --iodepth=16 --ioengine=libaio
			--direct=1 --size=512M --time_based --runtime=$((WINDOW + 4 + HIST)))
		;;
	esac
	base=$runs/$drv-$w
	data=/tmp/$drv-$w.perf.data
	rm -f "$mark"
	blk=
	if [ "$is_nvme" = 1 ]; then
		# The target and the connection are up before perf starts.
		if ! target_up > "$base.target.log" 2>&1 || ! connect > "$base.connect.log" 2>&1 ||
		   ! dev=$(host_disk); then
			echo "profile_bench: $drv $w: NVMe-oF setup failed ($base.target.log, $base.connect.log)"
			nvme_down
			return 1
		fi
		nvme_path || {
			echo "profile_bench: $drv $w: no NVMe controller of $NQN in sysfs"
			nvme_down
			return 1
		}
	fi
	perf record -a -g -e cpu-clock -F "$FREQ" -D -1 --control "fifo:$ctl,$ack" -N \
		-o "$data" > "$base.record.log" 2>&1 &
	pid=$!
	# perf -a takes seconds to start under TCG (it records every running
	# task first): the window must not wait for it.
	if ! perf_ctl ping; then
		echo "profile_bench: $drv $w: perf did not start ($base.record.log)"
		kill -INT "$pid"
		wait "$pid"
		return 1
	fi
	if [ "$is_nvme" = 1 ]; then
		client_starts
		timeout -s INT $((WINDOW + 60)) fio --filename="$dev" "${args[@]}" \
			--output-format=terse --output="$base.fio.terse" > "$base.fio" 2>&1 &
	else
		PERFTEST_LOG=runs/$drv-$w PERFTEST_TIMEOUT=300 PERFTEST_BEFORE_CLIENT=client_starts \
			perftest_pair "" dev0 "" dev1 10.0.0.2 "$tool" "${args[@]}" > /dev/null &
	fi
	ppid=$!
	until [ -e "$mark" ] || exited "$ppid"; do nap 0.1; done
	counters s0
	pkts "$s0"
	n=$((P + WARM))
	while ! exited "$ppid"; do
		counters cur
		pkts "$cur"
		[ "$P" -ge "$n" ] && break
		nap 0.05
	done
	c0='' c1=''
	if ! exited "$ppid"; then
		perf_ctl enable || echo "profile_bench: perf did not acknowledge 'enable'"
		t0=$EPOCHREALTIME
		counters c0
		cpustat "$base.stat0"
		last=$c0
		# (microseconds: EPOCHREALTIME without its point) Polled 4 times
		# a second: each poll takes a CPU from a busy-polling perftest. A
		# pause of the traffic under 1 s (rxe waits out a retry timer
		# now and then) is no end.
		n=$(( ${t0/./} + WINDOW * 1000000 ))
		moved=${t0/./}
		while ! exited "$ppid"; do
			nap 0.25
			counters cur
			t1=$EPOCHREALTIME
			[ "${t1/./}" -ge "$n" ] && break
			if [ "${cur%% *}" != "${last%% *}" ]; then
				moved=${t1/./}
			elif [ $(( ${t1/./} - moved )) -ge 1000000 ]; then
				break
			fi
			last=$cur
		done
		counters c1
		t1=$EPOCHREALTIME
		cpustat "$base.stat1"
		perf_ctl disable || echo "profile_bench: perf did not acknowledge 'disable'"
		if [ "$is_nvme" = 1 ] && [ "$HIST" != 0 ] && ! exited "$ppid"; then
			hist_window "$base" "$drv" || echo "profile_bench: $drv: no tracefs hist counts"
		fi
	fi
	wait "$ppid" && ok=1
	counters e1
	kill -INT "$pid"
	wait "$pid"
	[ "$is_nvme" = 0 ] || nvme_down
	if [ -z "$c0" ] || [ ! -s "$data" ]; then
		echo "profile_bench: $drv $w: no profile (the traffic ended before the window opened," \
			"or perf failed: $base.record.log)"
		return 1
	fi
	if [ "$is_nvme" = 1 ]; then
		got=$(fio_stat "$base.fio" 1 read iops)
		got=${got:+$got IOPS}
		# the run's reads and packets: the window's are the iterations
		iters=${e1##* }
		iters=$((iters - ${s0##* }))
	else
		got=$(awk -v s="${args[1]}" '$1 == s && NF >= 5 { print; exit }' "$base.client")
	fi
	# Reported here: the module's symbols are in /proc/kallsyms only while
	# it is loaded. One pass gives both: the Samples column is the self count.
	perf report -i "$data" --stdio -n --children --sort dso,sym -g none -t '|' \
		> "$base.report" 2> "$base.report.log"
	perf report -i "$data" --stdio -n --no-children --sort comm -g none -t '|' \
		> "$base.comm" 2>> "$base.report.log"
	local p0 f0 p1 f1 ps pe io0 io1
	read -r p0 f0 io0 <<< "$c0"
	read -r p1 f1 io1 <<< "$c1"
	ps=${s0%% *} pe=${e1%% *}
	{
		echo "driver=$drv"
		echo "workload=$w"
		echo "tool=$tool ${args[*]}"
		echo "ok=$ok"
		echo "run_iterations=$iters"
		echo "run_pkts=$((pe - ps))"
		if [ "$is_nvme" = 1 ]; then
			echo "iterations=$((io1 - io0))"
			echo "nvme_queues=$nvme_queues"
		else
			echo "iterations=$(awk -v w=$((p1 - p0)) -v i="$iters" -v r=$((pe - ps)) \
				'BEGIN { printf "%.1f", (r > 0 ? w * i / r : 0) }')"
		fi
		echo "freq=$FREQ"
		echo "cpus=$(nproc)"
		echo "seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
		echo "driver_pkts=$((p1 - p0))"
		echo "veth_frames=$((f1 - f0))"
		echo "perftest=$got"
		echo "kallsyms=$out/$drv.kallsyms"
	} > "$base.meta"
	cp "$data" "$out/"
	echo "profile_bench: $drv $w: $(grep -m1 '^# Samples' "$base.report" | tr -s ' ');" \
		"$((p1 - p0)) of the run's $((pe - ps)) packets in $(awk -v a="$t0" -v b="$t1" \
		'BEGIN { printf "%.2f", b - a }') s; perftest: ${got:-no result}"
}

echo "profile_bench: drivers $DRIVERS; workloads $WORKLOADS; perf -F $FREQ cpu-clock -a -g;" \
	"lat $LAT_ITERS iterations, bw $BW_ITERS x 64 KiB; mroce parameters: ${MPARAMS:-defaults}"
topo_policy 1 || exit 1
echo "profile_bench: veth MTU $(cat /sys/class/net/veth00/mtu), $(nproc) vCPUs, clocksource" \
	"$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
profile_driver() {
	local w r=0
	# The symbols perf resolved against, for a report on the host.
	cp /proc/kallsyms "$out/$1.kallsyms"
	for w in $WORKLOADS; do profile "$1" "$w" || r=1; done
	return $r
}
rc=0
bench_each_driver profile_bench "$DRIVERS" "$MPARAMS" profile_driver || rc=1
topo_policy_cleanup 1

python3 "$MROCE_SELFTESTS_DIR/bench/profile_report.py" \
	--src "$MROCE_REPO/drivers/infiniband/sw/mroce" --out "$out/profile.md" "$runs"/*.meta || rc=1
cat "$out/profile.md"
exit $rc
