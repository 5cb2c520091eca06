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
# run that does not end within 30 s more (an I/O stalled in a controller
# reset: rxe at 1 % loss, every round) is cut off and counts as "stall"
# (what the interrupted fio printed goes to the note). The table
# gives mroce/rxe at each loss and each driver's 1 % result against its
# own lossless one (the goal: mroce keeps >= 0.8 of its lossless IOPS).
# CSV and table in $MROCE_TEST_OUT (copied to build/bench/), and every
# run's value and time in nvmeof_bench_rounds.csv (make bench marks the
# runs that shared the host with other processes there).
#
# The 4 KiB row is a ratio of two short runs on a shared, emulated host,
# where the load can halve or double from one minute to the next: it runs
# in $BENCH_ROUNDS interleaved rounds (default 3). A round sets up each
# column in turn (driver loaded, target up), runs the loss levels, tears it
# down; even rounds reverse the order of the columns and of the loss
# levels, and the columns rotate by one place every two rounds
# (in_round_rotation), a fresh connection each time. The table shows the median; every
# round's value is in the CSV's note; the notes under the table also give
# each mroce column's per-round ratio to rxe (and mroceN's to mroce) with
# their median, the number to read an A/B by. The 128 KiB rows run in the first
# round only, or in the first $BENCH_NVMEOF_BIG_ROUNDS rounds (an A/B
# that may move them needs their spread too).
#
# Knobs: BENCH_DURATION, BENCH_LOSSES ("0 1"; "n0": a netem qdisc that
# loses nothing, against 0's noqueue veth), BENCH_DRIVERS ("rxe mroce"),
# BENCH_ROUNDS, BENCH_NVMEOF_JOBS (the rows, "randread4k read128k
# write128k": e.g. only the 4 KiB row, in more rounds),
# BENCH_NVMEOF_BIG_ROUNDS (1), BENCH_MROCE_PARAMS: mroce module parameters; sets separated
# by "|" make an A/B (columns mroce, mroce2, ...), a set's word ko=PATH
# loads that module file instead (as in rdma_bench.sh).
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
BIG_ROUNDS=${BENCH_NVMEOF_BIG_ROUNDS:-1}
CUTOFF=30
JOBS=${BENCH_NVMEOF_JOBS:-randread4k read128k write128k}
for j in $JOBS; do
	case $j in randread4k | read128k | write128k) ;;
	*) echo "nvmeof_bench: unknown job $j (randread4k read128k write128k)"; exit 1 ;; esac
done
csv=$MROCE_TEST_OUT/nvmeof_bench.csv
rounds_csv=$MROCE_TEST_OUT/nvmeof_bench_rounds.csv
echo "driver,job,loss_pct,round,value,t_start,t_end,note" > "$rounds_csv"
table=$MROCE_TEST_OUT/nvmeof_bench.txt
out=$MROCE_TEST_OUT/nvmeof-runs
mkdir -p "$out"
cd "$MROCE_TEST_OUT" || exit 1
nvmeof_need_modules

declare -A val note rval vparams
t0=$(date +%s)
progress() { printf '[%4ds] %s\n' $(( $(date +%s) - t0 )) "$*"; }

# Columns: rxe, and mroce once per parameter set (mroce, mroce2, ...).
bench_param_sets
cols=()
for drv in $DRIVERS; do
	if [ "$drv" != mroce ]; then
		cols+=("$drv")
		continue
	fi
	for i in "${!psets[@]}"; do
		c=mroce
		[ "$i" -gt 0 ] && c=mroce$((i + 1))
		cols+=("$c")
		read -ra c_words <<< "${psets[$i]}"
		vparams[$c]=${c_words[*]}
	done
done

# use_column COL: lib_ulp.sh's setup will load COL's driver (and set).
use_column() {
	DEV_TYPE=rxe
	[[ $1 == mroce* ]] && DEV_TYPE=mroce
	# shellcheck disable=SC2034 # for lib_ulp.sh and lib_nvmeof.sh
	ULP_DEV_A=${DEV_TYPE}_a ULP_DEV_B=${DEV_TYPE}_b ULP_MROCE_PARAMS=${vparams[$1]}
}

# run_job DRV LOSS JOB ROUND: one fio row on the host's namespace, into
# rval[DRV,JOB,LOSS,ROUND].
run_job() {
	local drv=$1 loss=$2 job=$3 round=$4 dev log rw bs qd f v rc ts te unit
	local key=$drv,$job,$loss,$round
	log=$out/$drv-$job-loss$loss-r$round.log
	case $job in
	randread4k) rw=randread bs=4k qd=32 f=iops ;;
	read128k) rw=read bs=128k qd=16 f=bw ;;
	write128k) rw=write bs=128k qd=16 f=bw ;;
	esac
	dev=$(host_disk) || { rval[$key]=fail; note[$key]="no host disk"; return; }
	ts=$(date +%s)
	timeout -s INT $((DURATION + CUTOFF)) fio --filename="$dev" --name="$job" --rw="$rw" \
		--bs="$bs" --iodepth="$qd" --ioengine=libaio --direct=1 --size=512M \
		--time_based --runtime="$DURATION" --ramp_time=2 \
		--output-format=terse --output="$log.terse" > "$log" 2>&1
	rc=$?
	te=$(date +%s)
	case $rc in
	0) ;;
	124) note[$key]="cut off after $((DURATION + CUTOFF)) s" ;;
	*) note[$key]="fio failed: $(tail -n 1 "$log")" ;;
	esac
	v=$(fio_stat "$log" 1 "${rw#rand}" "$f")
	# What an interrupted fio prints is no rate: its window may hold a
	# queue depth of I/O and almost no time (655 MB/s from a stalled rxe).
	if [ -n "$v" ] && [ "$rc" = 124 ]; then
		note[$key]+="; fio printed $v"
		v=
	fi
	if [ -z "$v" ]; then
		rval[$key]=${note[$key]:+stall}
		rval[$key]=${rval[$key]:-fail}
	elif [ "$f" = bw ]; then
		rval[$key]=$(awk -v k="$v" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
	else
		rval[$key]=$v
	fi
	echo "$drv,$job,$loss,$round,${rval[$key]},$ts,$te,\"${note[$key]}\"" >> "$rounds_csv"
	unit=
	[[ ${rval[$key]} =~ ^[0-9.]+$ ]] && unit=" IOPS"
	[ -n "$unit" ] && [ "$f" = bw ] && unit=" MB/s"
	progress "$drv $job loss $loss% (round $round): ${rval[$key]}$unit${note[$key]:+ (${note[$key]})}"
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
	val[$k]=$(printf '%s\n' "${all[@]}" | awk '{ print "v", ($1 ~ /^[0-9.]+$/) ? $1 : 0 }' |
		bench_stats -c | cut -d' ' -f2)
	note[$k]="rounds: ${all[*]}${note[$k]:+; ${note[$k]}}"
}

# run_column COL ROUND: COL's driver up, the round's loss levels (the
# 128 KiB jobs too in the first BIG_ROUNDS rounds), everything down again.
run_column() {
	local c=$1 r=$2 l j jobs why
	use_column "$c"
	if ! ulp_setup > "$out/$c-setup-r$r.log" 2>&1; then
		why="setup failed: $(tail -n 1 "$out/$c-setup-r$r.log")"
	elif why=$(ulp_cm_missing); then
		:
	elif ! target_up > "$out/$c-target-r$r.log" 2>&1; then
		why="nvmet target failed: $(tail -n 1 "$out/$c-target-r$r.log")"
	else
		why=
	fi
	if [ -z "$why" ]; then
		# shellcheck disable=SC2086 # one word per level
		for l in $(in_round_order "$r" $LOSSES); do
			jobs=
			[[ " $JOBS " == *" randread4k "* ]] && jobs=randread4k
			[ "$r" -le "$BIG_ROUNDS" ] && jobs=$JOBS
			ulp_loss "$l"
			if connect > "$out/$c-connect-$l-r$r.log" 2>&1; then
				for j in $jobs; do run_job "$c" "$l" "$j" "$r"; done
			else
				for j in $jobs; do rval[$c,$j,$l,$r]=fail; done
				note[$c,connect,$l]="nvme connect failed at $l% loss"
				progress "$c loss $l% (round $r): nvme connect failed"
			fi
			ulp_loss 0
			disconnect > /dev/null 2>&1
		done
	else
		progress "$c skipped in round $r: $why"
		note[$c]=$why
	fi
	disconnect > /dev/null 2>&1
	target_down
	rmmod nvme_rdma nvme_fabrics 2> /dev/null
	ulp_teardown
	rmmod rdma_rxe mroce 2> /dev/null
}

echo "nvmeof_bench: ${cols[*]}, losses $LOSSES %, ${DURATION}s per row, 4 KiB row: median of" \
	"$ROUNDS interleaved rounds"
for c in "${cols[@]}"; do
	[ -n "${vparams[$c]}" ] && echo "nvmeof_bench: $c: mroce ${vparams[$c]}"
done
dmesg_mark
for r in $(seq "$ROUNDS"); do
	for c in $(in_round_rotation "$r" "${cols[@]}"); do run_column "$c" "$r"; done
done
for c in "${cols[@]}"; do
	for l in $LOSSES; do
		for j in $JOBS; do settle "$c" "$j" "$l"; done
	done
done

# Paired ratios: a column against another round by round (the two ran a
# minute apart in each round, so the guest's slow mode, which comes and
# goes over minutes, mostly hits both or neither), and their median: what
# an A/B on this host should be read by, not the ratio of the medians.
declare -A pair
paired() { # paired A B JOB LOSS: "r1 r2 ... ; median M" into pair[A/B,JOB,LOSS]
	local a=$1 b=$2 j=$3 l=$4 r x y rs=() med
	for r in $(seq "$ROUNDS"); do
		x=${rval[$a,$j,$l,$r]:-} y=${rval[$b,$j,$l,$r]:-}
		[[ $x =~ ^[0-9.]+$ && $y =~ ^[0-9.]+$ ]] || continue
		rs+=("$(awk -v a="$x" -v b="$y" 'BEGIN { if (b > 0) printf "%.2f", a / b }')")
	done
	[ ${#rs[@]} -gt 1 ] || return 0
	med=$(printf 'v %s\n' "${rs[@]}" | bench_stats -r . | cut -d' ' -f2)
	pair[$a/$b,$j,$l]="${rs[*]}; median $med"
}
pcols=()
for c in "${cols[@]}"; do [[ $c == mroce* ]] && pcols+=("$c"); done
for c in "${pcols[@]}"; do
	for l in $LOSSES; do
		for j in $JOBS; do
			[[ " ${cols[*]} " == *" rxe "* ]] && paired "$c" rxe "$j" "$l"
			[ "$c" = mroce ] || paired "$c" mroce "$j" "$l"
		done
	done
done

# --- report ------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b; else printf "-" }'; }

mcols=()
for c in "${cols[@]}"; do [[ $c == mroce* ]] && mcols+=("$c"); done
# has_rxe: the mroce/rxe ratios (rxe and at least one mroce column)
has_rxe=0
[[ " ${cols[*]} " == *" rxe "* ]] && [ ${#mcols[@]} -gt 0 ] && has_rxe=1
job_name() {
	case $1 in
	randread4k) echo "4 KiB randread IOPS" ;;
	read128k) echo "128 KiB read MB/s" ;;
	write128k) echo "128 KiB write MB/s" ;;
	esac
}
# One table row's cells: each column's value, each mroce column against
# rxe, the later parameter sets against the first, each column against its
# own 0 % row (what it keeps).
cells_of() { # cells_of JOB LOSS
	local j=$1 l=$2 c
	for c in "${cols[@]}"; do echo "${val[$c,$j,$l]:--}"; done
	echo "|"
	if [ $has_rxe = 1 ]; then
		for c in "${mcols[@]}"; do ratio "${val[$c,$j,$l]}" "${val[rxe,$j,$l]}"; echo; done
		echo "|"
	fi
	if [ ${#mcols[@]} -gt 1 ]; then
		for c in "${mcols[@]:1}"; do ratio "${val[$c,$j,$l]}" "${val[mroce,$j,$l]}"; echo; done
		echo "|"
	fi
	for c in "${cols[@]}"; do ratio "${val[$c,$j,$l]}" "${val[$c,$j,0]}"; echo; done
}
head_cells() {
	local c
	printf '%s\n' "${cols[@]}" "|"
	if [ $has_rxe = 1 ]; then
		for c in "${mcols[@]}"; do echo "$c/rxe"; done
		echo "|"
	fi
	if [ ${#mcols[@]} -gt 1 ]; then
		for c in "${mcols[@]:1}"; do echo "$c/mroce"; done
		echo "|"
	fi
	for c in "${cols[@]}"; do echo "$c/0%"; done
}
line() { # line NAME LOSS CELL...
	local x
	printf '%-22s %5s |' "$1" "$2"
	shift 2
	for x in "$@"; do
		if [ "$x" = "|" ]; then printf ' |'; else printf ' %11s' "$x"; fi
	done
	echo
}

echo "driver,job,loss_pct,value,unit,mroce_params,note" > "$csv"
big="round 1"
[ "$BIG_ROUNDS" -le 1 ] || big="median of $(( BIG_ROUNDS < ROUNDS ? BIG_ROUNDS : ROUNDS )) rounds"
{
	echo
	echo "NVMe-oF over RDMA (nvmet-rdma on null_blk, nvme-rdma host, fio ${DURATION}s; loss on both" \
		"directions; 4 KiB: median of $ROUNDS rounds, 128 KiB: $big)"
	mapfile -t f <<< "$(head_cells)"
	line job loss "${f[@]}"
	for j in $JOBS; do
		for l in $LOSSES; do
			mapfile -t f <<< "$(cells_of "$j" "$l")"
			line "$(job_name "$j")" "$l%" "${f[@]}"
		done
	done
	for c in "${mcols[@]}"; do
		[ -n "${vparams[$c]}" ] && echo "($c: mroce with ${vparams[$c]})"
	done
	for k in $(printf '%s\n' "${!note[@]}" | sort); do
		echo "($k: ${note[$k]})"
	done
	for k in $(printf '%s\n' "${!pair[@]}" | sort); do
		echo "(paired ${k%%,*} per round, ${k#*,}%: ${pair[$k]})"
	done
} | tee "$table"
{
	printf '| row | loss |'
	printf ' %s |' "${cols[@]}"
	[ $has_rxe = 0 ] || printf ' %s/rxe |' "${mcols[@]}"
	[ ${#mcols[@]} -lt 2 ] || printf ' %s/mroce |' "${mcols[@]:1}"
	printf ' %s kept |' "${cols[@]}"
	echo
	printf '|---|---|'
	mapfile -t f <<< "$(head_cells | grep -vx '|')"
	for x in "${f[@]}"; do printf -- '---|'; done
	echo
	for j in $JOBS; do
		for l in $LOSSES; do
			mapfile -t f <<< "$(cells_of "$j" "$l" | grep -vx '|')"
			printf '| NVMe-oF %s%s | %s %% |' "$(job_name "$j")" \
				"$([ "$j" = randread4k ] && echo " (median of $ROUNDS)")" "$l"
			printf ' %s |' "${f[@]}"
			echo
		done
	done
} > "$MROCE_TEST_OUT/nvmeof_bench.md"
for c in "${cols[@]}"; do
	for j in $JOBS; do
		for l in $LOSSES; do
			k=$c,$j,$l
			[ -n "${val[$k]}" ] || continue
			unit=MB/s
			[ "$j" = randread4k ] && unit=IOPS
			echo "$c,$j,$l,${val[$k]},$unit,\"${vparams[$c]}\",${note[$k]}" >> "$csv"
		done
	done
done
echo "nvmeof_bench: CSV $csv; $(( $(date +%s) - t0 ))s"
dmesg_clean || echo "nvmeof_bench: WARNING: the kernel log shows problems (above)"
