#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: NVMe over Fabrics over mroce against rdma_rxe in ONE VM boot,
# same topology as the NVMe-oF selftest (lib_ulp.sh: veth pair, both ends in
# init_net, policy routed; nvmet-rdma target on a memory-backed null_blk
# namespace, nvme-rdma host), at 0 % and 1 % netem loss on both directions:
#
#   randread 4k     4 KiB random reads, queue depth 32: IOPS
#   read 128k       128 KiB sequential reads, queue depth 16: MB/s
#   write 128k      128 KiB sequential writes, queue depth 16: MB/s
#
# fio runs $BENCH_DURATION seconds (default 10) per row after a 2 s ramp; a
# run that does not end within 60 s more (an I/O stalled in a controller
# reset) is cut off and counts what fio reported, or "stall". The table
# gives mroce/rxe at each loss and each driver's 1 % result against its
# own lossless one (the goal: mroce keeps >= 0.8 of its lossless IOPS).
# CSV and table in $MROCE_TEST_OUT (copied to build/bench/).
#
# The 4 KiB row is a ratio of two short runs on a shared, emulated host,
# where the load can halve or double from one minute to the next: it runs
# $BENCH_ROUNDS times (default 3), the loss levels in alternating order
# (0 1, 1 0, 0 1), a fresh connection each time, and the table shows the
# median; every round's value is in the CSV's note. The 128 KiB rows run in
# the first round only.
#
# Knobs: BENCH_DURATION, BENCH_LOSSES ("0 1"), BENCH_DRIVERS ("rxe mroce"),
# BENCH_ROUNDS.
# vm-timeout: 2400
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_traffic.sh"
. "$(dirname "$0")/../lib_ulp.sh"
. "$(dirname "$0")/../lib_nvmeof.sh"
require_root
require_cmd nvme fio tc rdma

DURATION=${BENCH_DURATION:-10}
LOSSES=${BENCH_LOSSES:-"0 1"}
DRIVERS=${BENCH_DRIVERS:-"rxe mroce"}
ROUNDS=${BENCH_ROUNDS:-3}
JOBS="randread4k read128k write128k"
csv=$MROCE_TEST_OUT/nvmeof_bench.csv
table=$MROCE_TEST_OUT/nvmeof_bench.txt
out=$MROCE_TEST_OUT/nvmeof-runs
mkdir -p "$out"
cd "$MROCE_TEST_OUT" || exit 1
nvmeof_need_modules

declare -A val note rval
t0=$(date +%s)
progress() { printf '[%4ds] %s\n' $(( $(date +%s) - t0 )) "$*"; }

use_driver() {
	DEV_TYPE=$1
	ULP_DEV_A=${DEV_TYPE}_a
	ULP_DEV_B=${DEV_TYPE}_b
}

# run_job DRV LOSS JOB ROUND: one fio row on the host's namespace, into
# rval[DRV,JOB,LOSS,ROUND].
run_job() {
	local drv=$1 loss=$2 job=$3 round=$4 dev log rw bs qd f v
	local key=$drv,$job,$loss,$round
	log=$out/$drv-$job-loss$loss-r$round.log
	case $job in
	randread4k) rw=randread bs=4k qd=32 f=iops ;;
	read128k) rw=read bs=128k qd=16 f=bw ;;
	write128k) rw=write bs=128k qd=16 f=bw ;;
	esac
	dev=$(host_disk) || { rval[$key]=fail; note[$key]="no host disk"; return; }
	timeout -s INT $((DURATION + 60)) fio --filename="$dev" --name="$job" --rw="$rw" \
		--bs="$bs" --iodepth="$qd" --ioengine=libaio --direct=1 --size=512M \
		--time_based --runtime="$DURATION" --ramp_time=2 \
		--output-format=terse --output="$log.terse" > "$log" 2>&1
	case $? in
	0) ;;
	124) note[$key]="cut off after $((DURATION + 60)) s" ;;
	*) note[$key]="fio failed: $(tail -n 1 "$log")" ;;
	esac
	v=$(fio_stat "$log" 1 "${rw#rand}" "$f")
	if [ -z "$v" ]; then
		rval[$key]=${note[$key]:+stall}
		rval[$key]=${rval[$key]:-fail}
	elif [ "$f" = bw ]; then
		rval[$key]=$(awk -v k="$v" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
	else
		rval[$key]=$v
	fi
	progress "$drv $job loss $loss% (round $round): ${rval[$key]} $([ "$f" = bw ] && echo MB/s || echo IOPS)${note[$key]:+ (${note[$key]})}"
}

# The loss levels of round N: odd rounds in the given order, even reversed.
round_losses() {
	local l order=()
	for l in $LOSSES; do
		if [ $(($1 % 2)) -eq 1 ]; then order+=("$l"); else order=("$l" "${order[@]}"); fi
	done
	echo "${order[@]}"
}

# val[DRV,JOB,LOSS] from the rounds: the median of the numbers (a failed
# or stalled round counts as 0; if none has a number, the first round's
# word), with each round's value in the note.
settle() { # settle DRV JOB LOSS
	local k=$1,$2,$3 r all=()
	for r in $(seq "$ROUNDS"); do
		[ -n "${rval[$k,$r]}" ] && all+=("${rval[$k,$r]}")
	done
	[ ${#all[@]} -gt 0 ] || return 0
	if [ ${#all[@]} -eq 1 ] || ! printf '%s\n' "${all[@]}" | grep -Eq '^[0-9.]+$'; then
		val[$k]=${all[0]}
		[ ${#all[@]} -eq 1 ] || note[$k]="rounds: ${all[*]}"
		return 0
	fi
	val[$k]=$(printf '%s\n' "${all[@]}" | awk '{ print ($1 ~ /^[0-9.]+$/) ? $1 : 0 }' | sort -g |
		awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "%s", (m == int(m)) ? m : sprintf("%.1f", m) }')
	note[$k]="rounds: ${all[*]}${note[$k]:+; ${note[$k]}}"
}

run_driver() { # run_driver DRV
	local drv=$1 l j r jobs why
	use_driver "$drv"
	if ! ulp_setup > "$out/$drv-setup.log" 2>&1; then
		why="setup failed: $(tail -n 1 "$out/$drv-setup.log")"
	elif why=$(ulp_cm_missing); then
		:
	elif ! target_up > "$out/$drv-target.log" 2>&1; then
		why="nvmet target failed: $(tail -n 1 "$out/$drv-target.log")"
	else
		why=
	fi
	if [ -z "$why" ]; then
		for r in $(seq "$ROUNDS"); do
			for l in $(round_losses "$r"); do
				jobs=randread4k
				[ "$r" = 1 ] && jobs=$JOBS
				ulp_loss "$l"
				if connect > "$out/$drv-connect-$l-r$r.log" 2>&1; then
					for j in $jobs; do run_job "$drv" "$l" "$j" "$r"; done
				else
					for j in $jobs; do rval[$drv,$j,$l,$r]=fail; done
					note[$drv,connect,$l]="nvme connect failed at $l% loss"
					progress "$drv loss $l% (round $r): nvme connect failed"
				fi
				ulp_loss 0
				disconnect > /dev/null 2>&1
			done
		done
		for l in $LOSSES; do
			for j in $JOBS; do settle "$drv" "$j" "$l"; done
		done
	else
		progress "$drv skipped: $why"
		note[$drv]=$why
		for l in $LOSSES; do
			for j in $JOBS; do val[$drv,$j,$l]="n/a"; done
		done
	fi
	disconnect > /dev/null 2>&1
	target_down
	rmmod nvme_rdma nvme_fabrics 2> /dev/null
	ulp_teardown
	rmmod rdma_rxe mroce 2> /dev/null
}

echo "nvmeof_bench: $DRIVERS, losses $LOSSES %, ${DURATION}s per row, 4 KiB row: median of $ROUNDS rounds"
dmesg_mark
for drv in $DRIVERS; do
	run_driver "$drv"
done

# --- report ------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.3f", a / b; else printf "-" }'; }

echo "driver,job,loss_pct,value,unit,note" > "$csv"
{
	echo
	echo "NVMe-oF over RDMA (nvmet-rdma on null_blk, nvme-rdma host, fio ${DURATION}s; loss on both directions)"
	printf '%-22s %5s | %10s %10s | %9s | %8s %8s\n' job loss rxe mroce mroce/rxe "rxe/0%" "mroce/0%"
	for j in $JOBS; do
		case $j in
		randread4k) name="4 KiB randread IOPS" ;;
		read128k) name="128 KiB read MB/s" ;;
		write128k) name="128 KiB write MB/s" ;;
		esac
		for l in $LOSSES; do
			a=${val[rxe,$j,$l]:--} b=${val[mroce,$j,$l]:--}
			printf '%-22s %4s%% | %10s %10s | %9s | %8s %8s\n' "$name" "$l" "$a" "$b" \
				"$(ratio "$b" "$a")" "$(ratio "$a" "${val[rxe,$j,0]}")" \
				"$(ratio "$b" "${val[mroce,$j,0]}")"
		done
	done
	for k in "${!note[@]}"; do
		echo "($k: ${note[$k]})"
	done
} | tee "$table"
for drv in $DRIVERS; do
	for j in $JOBS; do
		for l in $LOSSES; do
			k=$drv,$j,$l
			[ -n "${val[$k]}" ] || continue
			unit=MB/s
			[ "$j" = randread4k ] && unit=IOPS
			echo "$drv,$j,$l,${val[$k]},$unit,${note[$k]}" >> "$csv"
		done
	done
done
echo "nvmeof_bench: CSV $csv; $(( $(date +%s) - t0 ))s"
dmesg_clean || echo "nvmeof_bench: WARNING: the kernel log shows problems (above)"
