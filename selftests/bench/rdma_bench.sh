#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: mroce against rdma_rxe in ONE VM boot, same veth pair, same
# MTU, same topology (both veth ends in init_net, policy-routed onto the
# wire: the only way rxe works on 6.1). rdma_rxe runs first and is unloaded,
# then mroce, then kernel TCP (iperf3) as a reference row.
#
#   ib_write_bw, ib_send_bw, ib_read_bw   64 KiB, RC, 1 QP, -D $DURATION
#   ib_write_lat                          64 B, 1000 iterations
#   iperf3                                TCP, one stream
# at 0, 1 and 10 % netem loss (TCP at 0 and 1 %). Loss is applied on the
# data direction of each test (requester -> responder for write/send,
# responder -> requester for read) and on both directions for the latency
# ping-pong. Write and read also run with a netem qdisc at 0 % loss (the
# "0% netem" control row): the qdisc alone costs something (a queue where
# the veth had none; mroce's GSO bursts need a queueless device), so a lossy
# row's "/netem0" ratio is what loss recovery keeps, apart from netem.
#
# Goodput = iterations perftest completed in its measured window x size /
# window, window = DURATION - 2 x perftest's margin (2 s): perftest's own BW
# column reads 0 when its clock calibration fails (lib_traffic.sh,
# PERFTEST_OPTS). A row that fails (no result, or a latency perftest could
# not convert to time) runs once more; the table says so and why. Progress
# lines are printed as it goes, the table and a bar chart at the end, CSV
# in $MROCE_TEST_OUT (copied to build/bench/ by scripts/bench.sh).
#
# The full table (build/bench/rdma_bench.txt) adds the mroce hw counters
# each row moved on both devices: resends, RTOs, PTOs, SACK gaps, NAKs, RNR
# NAKs, duplicate requests.
#
# Knobs, from the host's environment (make bench BENCH_LOSSES="0 1"):
# BENCH_DURATION (default 10), BENCH_LOSSES ("0 1 10"), BENCH_DRIVERS
# ("rxe mroce"), BENCH_TESTS ("write send read lat tcp"), BENCH_CONTROL (1:
# the 0 % netem rows; 0: none), BENCH_MROCE_PARAMS: mroce module parameters,
# e.g. "tx_burst=32"; several sets separated by "|" (e.g. "tx_burst=1 |
# tx_burst=32") make an A/B in this boot: columns mroce, mroce2, ..., each
# row run once per set back to back (parameters written to sysfs when all
# are writable at run time, else mroce reloaded with them).
# vm-timeout: 4800
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_traffic.sh"
require_root
require_cmd ib_write_bw ib_send_bw ib_read_bw ib_write_lat tc rdma

DURATION=${BENCH_DURATION:-10}
MARGIN=2
WINDOW=$((DURATION - 2 * MARGIN))
SIZE=65536
LOSSES=${BENCH_LOSSES:-"0 1 10"}
DRIVERS=${BENCH_DRIVERS:-"rxe mroce"}
TESTS=${BENCH_TESTS:-"write send read lat tcp"}
CONTROL=${BENCH_CONTROL:-1}
csv=$MROCE_TEST_OUT/rdma_bench.csv
table=$MROCE_TEST_OUT/rdma_bench.txt
out=$MROCE_TEST_OUT/runs
mkdir -p "$out"
[ "$WINDOW" -ge 2 ] || { echo "BENCH_DURATION must be at least $((2 * MARGIN + 2))"; exit 1; }

declare -A val note iters txp retx cnt vparams
# mroce's parameter sets: one column each (mroce, mroce2, ...).
IFS='|' read -ra psets <<< "${BENCH_MROCE_PARAMS:-}"
[ ${#psets[@]} -gt 0 ] || psets=("")
mcols=()
for i in "${!psets[@]}"; do
	c=mroce
	[ "$i" -gt 0 ] && c=mroce$((i + 1))
	mcols+=("$c")
	read -ra c_words <<< "${psets[$i]}"
	vparams[$c]=${c_words[*]}
done
cols_of() { if [ "$1" = mroce ]; then echo "${mcols[*]}"; else echo "$1"; fi; }
cols=()
for drv in $DRIVERS; do read -ra c <<< "$(cols_of "$drv")"; cols+=("${c[@]}"); done

# Loss levels of a test: write and read get the 0 % netem control row.
levels_of() {
	local l
	for l in $LOSSES; do
		echo "$l"
		[ "$l" = 0 ] && [ "$CONTROL" = 1 ] && [[ $1 == write || $1 == read ]] && echo n0
	done
}
loss_label() { if [ "$1" = n0 ]; then echo "0% netem"; else echo "$1%"; fi; }

t0=$(date +%s)
nrun=0
total=0
for c in "${cols[@]}"; do
	for t in $TESTS; do
		[ "$t" = tcp ] && continue
		for l in $(levels_of "$t"); do total=$((total + 1)); done
	done
done
[[ " $TESTS " == *" tcp "* ]] && total=$((total + 2))

progress() { printf '[%3ds %2d/%d] %s\n' $(( $(date +%s) - t0 )) "$nrun" "$total" "$*"; }

# Counters that explain a row: packets the data sender sent, and
# retransmissions: mroce counts the packets it resent (on the data sender;
# READ responses are resent by the responder); rxe has no such counter, its
# requester (dev0) counts timer retries and NAK-driven (go-back-N) restarts.
ctr() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0; }
retx_of() { # retx_of DRV SENDER
	case $1 in
	rxe) echo $(( $(ctr dev0 completer_retry_err) + $(ctr dev0 rcvd_seq_err) )) ;;
	*) ctr "$2" retrans_pkts ;;
	esac
}

# The mroce counters a row's table shows, summed over both devices.
MCTRS="retrans_pkts rto_timeouts pto_timeouts sack_gaps naks_rcvd rcvd_rnr_err duplicate_request"
mctrs() { local c; for c in $MCTRS; do echo $(( $(ctr dev0 "$c") + $(ctr dev1 "$c") )); done; }

set_loss() { # set_loss LEVEL DEV...: 0 clears, n0 is netem at 0 %, else PCT
	local lvl=$1 d
	shift
	for d in "$@"; do
		if [ "$lvl" = 0 ]; then netem_clear "" "$d"; else netem_set "" "$d" loss "${lvl#n}%"; fi
	done
}

# perftest server on dev1, client on dev0 -> 10.0.0.2; logs LOG.{server,client}.
perftest() { # perftest TOOL LOG ARGS...
	local tool=$1 log=$2
	shift 2
	PERFTEST_LOG=${log#"$MROCE_TEST_OUT"/} PERFTEST_TIMEOUT=$((DURATION + 90)) \
		perftest_pair "" dev0 "" dev1 10.0.0.2 "$tool" "$@" > /dev/null
}

# why_failed LOG: what either side said went wrong, in one line. A latency
# row is only good if perftest could convert cycles to time: when its clock
# calibration fails it prints inf.
why_failed() {
	local why
	if awk '$1 == 64 && $5 ~ /inf|nan/ { f = 1 } END { exit !f }' "$1.client" 2> /dev/null; then
		echo "perftest's clock calibration failed (latency inf)"
		return
	fi
	why=$(grep -hEi -m1 "error|fail|couldn't|unable|timed? ?out|refused" \
		"$1.client" "$1.server" 2> /dev/null | head -n 1 | tr -s ' \t' ' ' | sed 's/^ //')
	echo "${why:-no result row}"
}

# twice KEY LOG LABEL MEASURE...: run MEASURE, which sets $got (empty: no
# result), and once more if it failed, keeping the first attempt's logs as
# LOG.try1.{client,server}. The row's note says why an attempt failed;
# returns 1 (and the row reads "fail") if both did.
twice() {
	local key=$1 log=$2 label=$3 try why c0
	shift 3
	for try in 1 2; do
		got=
		[[ $key == mroce* ]] && c0=$(mctrs)
		"$@"
		# (no <(...) here: the guest has no /dev/fd)
		[[ $key == mroce* ]] &&
			cnt[$key]=$(printf '%s\n' "$c0" "$(mctrs)" |
				awk '{ v[NR] = $1 } END { n = NR / 2
					for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), v[n + i] - v[i] }')
		[ -n "$got" ] && break
		why=$(why_failed "$log")
		[ $try = 2 ] && break
		progress "$label: failed ($why); once more"
		mv "$log.client" "$log.try1.client" 2> /dev/null
		mv "$log.server" "$log.try1.server" 2> /dev/null
	done
	if [ -n "$got" ]; then
		[ $try = 2 ] && note[$key]="second attempt; the first failed: $why"
		return 0
	fi
	val[$key]=fail
	note[$key]="failed twice: $why"
	return 1
}

bw_once() { # bw_once DRV TEST LOSS LOG SENDER
	local drv=$1 t=$2 loss=$3 log=$4 sender=$5 p0 r0
	if [ "$sender" = dev1 ]; then set_loss "$loss" veth01; else set_loss "$loss" veth00; fi
	p0=$(ctr "$sender" sent_pkts)
	r0=$(retx_of "$drv" "$sender")
	if perftest "ib_${t}_bw" "$log" -s $SIZE -D "$DURATION" --margin $MARGIN --report_gbits; then
		got=$(awk -v s=$SIZE '$1 == s && NF >= 5 { print $2; exit }' "$log.client")
	fi
	set_loss 0 veth00 veth01
	txp[$drv,$t,$loss]=$(( $(ctr "$sender" sent_pkts) - p0 ))
	retx[$drv,$t,$loss]=$(( $(retx_of "$drv" "$sender") - r0 ))
}

run_bw() { # run_bw DRV TEST LOSS
	local drv=$1 t=$2 loss=$3 log=$out/$1-$2-loss$3 sender=dev0 got
	local key=$drv,$t,$loss
	[ "$t" = read ] && sender=dev1	# READ data flows responder -> requester
	if twice "$key" "$log" "$drv ib_${t}_bw loss $loss%" \
		bw_once "$drv" "$t" "$loss" "$log" "$sender"; then
		iters[$key]=$got
		val[$key]=$(awk -v i="$got" -v s=$SIZE -v w="$WINDOW" 'BEGIN { printf "%.1f", i * s * 8 / w / 1e6 }')
	fi
	nrun=$((nrun + 1))
	progress "$drv ib_${t}_bw loss $(loss_label "$loss"): ${val[$key]} Mb/s (${iters[$key]:-?} it, ${txp[$key]} pkts, ${retx[$key]} retx)"
}

lat_once() { # lat_once LOSS LOG
	set_loss "$1" veth00 veth01
	if perftest ib_write_lat "$2" -s 64 -n 1000; then
		# bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9
		got=$(awk '$1 == 64 && NF >= 8 && ($5 $6 $8) ~ /^[0-9.]+$/ { print $5, $6, $8; exit }' \
			"$2.client")
	fi
	set_loss 0 veth00 veth01
}

run_lat() { # run_lat DRV LOSS
	local drv=$1 loss=$2 log=$out/$1-lat-loss$2 got
	local key=$drv,lat,$loss
	twice "$key" "$log" "$drv ib_write_lat loss $loss%" lat_once "$loss" "$log" &&
		read -r "val[$key]" "val[$key,avg]" "val[$key,p99]" <<< "$got"
	nrun=$((nrun + 1))
	progress "$drv ib_write_lat 64 B loss $loss%: typical ${val[$key]} us, avg ${val[$key,avg]:-?} us, p99 ${val[$key,p99]:-?} us"
}

run_tcp() { # run_tcp LOSS
	local loss=$1 log=$out/tcp-loss$1 spid bps
	set_loss "$loss" veth00
	iperf3 -s -B 10.0.0.2 -1 > "$log.server" 2>&1 &
	spid=$!
	wait_for 10 tcp_listening 5201
	timeout $((DURATION + 30)) iperf3 -c 10.0.0.2 -B 10.0.0.1 -t "$DURATION" -J > "$log.json" 2>&1
	wait "$spid"
	set_loss 0 veth00
	bps=$(python3 -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6))' "$log.json" 2>/dev/null)
	val[tcp,tcp,$loss]=${bps:-fail}
	nrun=$((nrun + 1))
	progress "kernel TCP (iperf3) loss $loss%: ${val[tcp,tcp,$loss]} Mb/s"
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
		rmmod rdma_rxe 2> /dev/null
		modprobe mroce "${@:2}" || return 1
		mroce_link_add dev0 veth00 && mroce_link_add dev1 veth01
		;;
	esac || return 1
	wait_for 5 has_gid dev0 "$(gid_of_ip 10.0.0.1)" && wait_for 5 has_gid dev1 "$(gid_of_ip 10.0.0.2)"
}

teardown() {
	rdma link delete dev0 2> /dev/null
	rdma link delete dev1 2> /dev/null
	rmmod rdma_rxe mroce 2> /dev/null
	return 0
}

echo "rdma_bench: $DRIVERS, tests: $TESTS, losses: $LOSSES %, ${DURATION}s runs (${WINDOW}s measured)"
topo_policy 1 || exit 1
echo "rdma_bench: veth pair veth00/veth01, MTU $(cat /sys/class/net/veth00/mtu), $(nproc) vCPUs"
# mroce's parameters: each set names some; the others keep their defaults
# (read once at the first load), so switching sets is exact.
pnames=$(for c in "${mcols[@]}"; do for kv in ${vparams[$c]}; do echo "${kv%%=*}"; done; done |
	sort -u)
declare -A pdef
mcur=
pfile() { echo "/sys/module/mroce/parameters/$1"; }
# mroce_use COL: the loaded mroce runs with COL's parameter set.
mroce_use() {
	local c=$1 n v kv rw=1 want=()
	declare -A set=()
	for kv in ${vparams[$c]}; do set[${kv%%=*}]=${kv#*=}; done
	for n in $pnames; do
		want+=("$n=${set[$n]-${pdef[$n]}}")
		[ $(( 0$(stat -c %a "$(pfile "$n")") & 0200 )) -ne 0 ] || rw=0
	done
	[ ${#want[@]} -gt 0 ] || return 0
	if [ $rw = 1 ]; then
		for kv in "${want[@]}"; do echo "${kv#*=}" > "$(pfile "${kv%%=*}")" || return 1; done
	elif [ "$mcur" != "$c" ]; then
		teardown
		setup mroce "${want[@]}" && transport_ready "" dev0 > /dev/null || return 1
	fi
	mcur=$c
	for kv in "${want[@]}"; do
		[ "$(cat "$(pfile "${kv%%=*}")")" = "${kv#*=}" ] || return 1
	done
}

dmesg_mark
for drv in $DRIVERS; do
	why=
	if ! setup "$drv"; then
		why="setup failed"
	elif [ "$drv" = mroce ] && ! why=$(transport_ready "" dev0); then
		:
	else
		why=
	fi
	if [ -z "$why" ] && [ "$drv" = mroce ]; then
		for n in $pnames; do
			[ -e "$(pfile "$n")" ] || why="mroce has no parameter $n"
			pdef[$n]=$(cat "$(pfile "$n")" 2> /dev/null)
		done
		for c in "${mcols[@]}"; do
			echo "rdma_bench: $c: mroce ${vparams[$c]:-with its default parameters}"
		done
	fi
	read -ra dcols <<< "$(cols_of "$drv")"
	if [ -n "$why" ]; then
		echo "rdma_bench: $drv skipped: $why"
		for c in "${dcols[@]}"; do
			for t in $TESTS; do
				[ "$t" = tcp ] && continue
				for l in $(levels_of "$t"); do val[$c,$t,$l]="n/a"; nrun=$((nrun + 1)); done
			done
			note[$c]=$why
		done
		teardown
		continue
	fi
	echo "rdma_bench: $drv: $(ibv_devinfo -d dev0 | awk '/active_mtu/ { print "active MTU", $2 }')"
	for t in $TESTS; do
		for l in $(levels_of "$t"); do
			# An A/B runs each row once per set, back to back.
			for c in "${dcols[@]}"; do
				if [ "$drv" = mroce ] && ! mroce_use "$c"; then
					val[$c,$t,$l]=fail
					note[$c,$t,$l]="could not set mroce ${vparams[$c]}"
					nrun=$((nrun + 1))
					continue
				fi
				case $t in
				write|send|read) run_bw "$c" "$t" "$l" ;;
				lat) run_lat "$c" "$l" ;;
				esac
			done
		done
	done
	teardown
done
if [[ " $TESTS " == *" tcp "* ]]; then
	if command -v iperf3 > /dev/null; then
		for l in 0 1; do run_tcp "$l"; done
	else
		echo "rdma_bench: iperf3 not installed: no TCP reference (make deps)"
	fi
fi
topo_policy_cleanup 1

# --- report ------------------------------------------------------------------
# bars: the goodput rows as a bar chart, one scale for all of them.
bars() {
	local t l c v max=0
	for t in write send read; do
		for l in $(levels_of "$t"); do
			for c in "${cols[@]}"; do
				v=${val[$c,$t,$l]}
				[[ $v =~ ^[0-9.]+$ ]] && awk -v a="$v" -v b="$max" 'BEGIN { exit !(a > b) }' &&
					max=$v
			done
		done
	done
	[ "$max" != 0 ] || return 0
	echo
	echo "Goodput, Mb/s (# = $(awk -v m="$max" 'BEGIN { printf "%.2f", m / 50 }') Mb/s)"
	for t in write send read; do
		[[ " $TESTS " == *" $t "* ]] || continue
		for l in $(levels_of "$t"); do
			for c in "${cols[@]}"; do
				v=${val[$c,$t,$l]:--}
				awk -v lbl="$(printf '%-12s %8s %-6s' "ib_${t}_bw" "$(loss_label "$l")" "$c")" \
					-v v="$v" -v m="$max" '
					BEGIN { n = (v ~ /^[0-9.]+$/) ? int(v * 50 / m + 0.5) : 0
						s = ""; for (i = 0; i < n; i++) s = s "#"
						printf "%s |%-50s %s\n", lbl, s, v }'
			done
		done
	done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.3f", a / b; else printf "-" }'; }

# cells W TEXT...: each TEXT right-aligned in at least W columns (wider
# if its header is): one table row, groups split by a lone "|".
cells() {
	local w=$1 x
	shift
	for x in "$@"; do
		if [ "$x" = "|" ]; then printf ' |'; else printf " %${w}s" "$x"; fi
	done
}

has_rxe=0
[[ " ${cols[*]} " == *" rxe "* ]] && has_rxe=1
# The goodput table's columns: goodput of each column, each mroce column
# against rxe, each against its own 0 %, each against its own 0 % netem
# row (what loss recovery keeps, netem apart), the later parameter sets
# against the first, the mroce columns' resends.
gp_head() {
	local c
	for c in "${cols[@]}"; do echo "$c"; done
	echo "|"
	if [ $has_rxe = 1 ]; then
		for c in "${mcols[@]}"; do [[ " ${cols[*]} " == *" $c "* ]] && echo "$c/rxe"; done
		echo "|"
	fi
	for c in "${cols[@]}"; do echo "$c/0%"; done
	if [ "$CONTROL" = 1 ]; then
		echo "|"
		for c in "${cols[@]}"; do echo "$c/n0"; done
	fi
	if [ ${#mcols[@]} -gt 1 ]; then
		echo "|"
		for c in "${mcols[@]:1}"; do echo "$c/mroce"; done
	fi
	echo "|"
	for c in "${mcols[@]}"; do [[ " ${cols[*]} " == *" $c "* ]] && echo "$c retx"; done
}
gp_row() { # gp_row TEST LEVEL
	local t=$1 l=$2 c n0=-
	for c in "${cols[@]}"; do echo "${val[$c,$t,$l]:--}"; done
	echo "|"
	if [ $has_rxe = 1 ]; then
		for c in "${mcols[@]}"; do
			[[ " ${cols[*]} " == *" $c "* ]] && ratio "${val[$c,$t,$l]}" "${val[rxe,$t,$l]}" && echo
		done
		echo "|"
	fi
	for c in "${cols[@]}"; do ratio "${val[$c,$t,$l]}" "${val[$c,$t,0]}"; echo; done
	if [ "$CONTROL" = 1 ]; then
		echo "|"
		for c in "${cols[@]}"; do
			[ "$l" != 0 ] && [ "$l" != n0 ] && n0=${val[$c,$t,n0]}
			ratio "${val[$c,$t,$l]}" "$n0"
			echo
		done
	fi
	if [ ${#mcols[@]} -gt 1 ]; then
		echo "|"
		for c in "${mcols[@]:1}"; do ratio "${val[$c,$t,$l]}" "${val[mroce,$t,$l]}"; echo; done
	fi
	echo "|"
	for c in "${mcols[@]}"; do [[ " ${cols[*]} " == *" $c "* ]] && echo "${retx[$c,$t,$l]:--}"; done
}

goodput_table() {
	local t l head w=10
	mapfile -t head <<< "$(gp_head)"
	for t in "${head[@]}"; do [ ${#t} -le "$w" ] || w=${#t}; done
	echo
	echo "Goodput in Mb/s (64 KiB RC, 1 QP, ${WINDOW}s window; loss on the data direction)"
	printf '%-12s %8s |' test loss
	cells "$w" "${head[@]}"
	echo
	for t in write send read; do
		[[ " $TESTS " == *" $t "* ]] || continue
		for l in $(levels_of "$t"); do
			printf '%-12s %8s |' "ib_${t}_bw" "$(loss_label "$l")"
			mapfile -t head <<< "$(gp_row "$t" "$l")"
			cells "$w" "${head[@]}"
			echo
		done
	done
	echo "(X/0%: of X's own 0 % row; X/n0: of X's own 0 % netem row, i.e. what loss recovery keeps;" \
		"retx = retrans_pkts of the data sender; rxe: requester's completer_retry_err + rcvd_seq_err in the CSV)"
}

lat_table() {
	local l c row=()
	echo
	echo "ib_write_lat, 64 B, 1000 iterations, us (loss on both directions)"
	for c in "${cols[@]}"; do row+=("$c typ" "$c avg" "$c p99" "|"); done
	[ $has_rxe = 1 ] || unset 'row[-1]'
	if [ $has_rxe = 1 ]; then
		for c in "${mcols[@]}"; do [[ " ${cols[*]} " == *" $c "* ]] && row+=("avg $c/rxe"); done
	fi
	printf '%-6s |' loss
	cells 10 "${row[@]}"
	echo
	for l in $LOSSES; do
		row=()
		for c in "${cols[@]}"; do
			row+=("${val[$c,lat,$l]:--}" "${val[$c,lat,$l,avg]:--}" "${val[$c,lat,$l,p99]:--}" "|")
		done
		[ $has_rxe = 1 ] || unset 'row[-1]'
		if [ $has_rxe = 1 ]; then
			for c in "${mcols[@]}"; do
				[[ " ${cols[*]} " == *" $c "* ]] &&
					row+=("$(ratio "${val[$c,lat,$l,avg]}" "${val[rxe,lat,$l,avg]}")")
			done
		fi
		printf '%5s%% |' "$l"
		cells 10 "${row[@]}"
		echo
	done
}

# The mroce counters each row moved: for the full table in the file.
counter_table() {
	local t l c levels
	echo
	echo "mroce hw counters each row moved, both devices summed"
	printf '%-13s %8s %-7s | %8s %8s %8s %8s %8s %8s %8s\n' test loss column resends RTOs PTOs \
		"SACK gap" "NAKs" "RNR NAKs" "dup req"
	for t in write send read lat; do
		[[ " $TESTS " == *" $t "* ]] || continue
		levels=$(levels_of "$t")
		for l in $levels; do
			for c in "${mcols[@]}"; do
				[ -n "${cnt[$c,$t,$l]}" ] || continue
				# shellcheck disable=SC2086 # the counters, one word each
				printf '%-13s %8s %-7s | %8s %8s %8s %8s %8s %8s %8s\n' \
					"$([ "$t" = lat ] && echo ib_write_lat || echo "ib_${t}_bw")" \
					"$(loss_label "$l")" "$c" ${cnt[$c,$t,$l]}
			done
		done
	done
	echo "(resends: retrans_pkts; RTOs/PTOs: rto_timeouts/pto_timeouts; SACK gap: sack_gaps;" \
		"NAKs: naks_rcvd; RNR NAKs: rcvd_rnr_err; dup req: duplicate_request)"
}

echo "driver,test,loss_pct,size,window_s,goodput_mbps,iterations,lat_typical_us,lat_avg_us,lat_p99_us,sender_pkts,retransmissions,netem,mroce_params,resends,rto,pto,sack_gaps,naks,rnr_naks,dup_requests" > "$csv"
{
	goodput_table
	[[ " $TESTS " == *" lat "* ]] && lat_table
	if [ -n "${val[tcp,tcp,0]}" ]; then
		echo
		echo "Reference: kernel TCP (iperf3, one stream, ${DURATION}s), Mb/s"
		printf '%-6s | %10s %10s\n' loss TCP "TCP/0%"
		for l in 0 1; do
			printf '%5s%% | %10s %10s\n' "$l" "${val[tcp,tcp,$l]}" "$(ratio "${val[tcp,tcp,$l]}" "${val[tcp,tcp,0]}")"
		done
	fi
	for c in "${mcols[@]}"; do
		[ -n "${vparams[$c]}" ] && echo "($c: mroce with ${vparams[$c]})"
	done
	for c in "${cols[@]}"; do
		[ -n "${note[$c]}" ] && echo "($c: ${note[$c]})"
	done
	for k in $(printf '%s\n' "${!note[@]}" | sort); do
		[[ $k == *,* ]] || continue
		IFS=, read -r d t l <<< "$k"
		[ "$t" = lat ] && t=write_lat || t=${t}_bw
		echo "($d ib_$t $(loss_label "$l"): ${note[$k]})"
	done
	bars
} | tee "$table"
counter_table >> "$table"
echo "rdma_bench: per-row mroce counters in the full table (build/bench/rdma_bench.txt)"
for c in "${cols[@]}"; do
	for t in write send read lat; do
		for l in $(levels_of "$t"); do
			k=$c,$t,$l
			[ -n "${val[$k]}" ] || continue
			loss=${l#n} netem=0
			[ "$l" != 0 ] && netem=1
			ctrs=,,,,,,
			[ -n "${cnt[$k]}" ] && ctrs=${cnt[$k]// /,}
			if [ "$t" = lat ]; then
				echo "$c,ib_write_lat,$loss,64,,,1000,${val[$k]},${val[$k,avg]},${val[$k,p99]},,,$netem,\"${vparams[$c]}\",$ctrs" >> "$csv"
			else
				echo "$c,ib_${t}_bw,$loss,$SIZE,$WINDOW,${val[$k]},${iters[$k]},,,,${txp[$k]},${retx[$k]},$netem,\"${vparams[$c]}\",$ctrs" >> "$csv"
			fi
		done
	done
done
for l in 0 1; do
	[ -n "${val[tcp,tcp,$l]}" ] && echo "tcp,iperf3,$l,,$DURATION,${val[tcp,tcp,$l]},,,,,,,$((l > 0)),,,,,,,," >> "$csv"
done
echo "rdma_bench: CSV $csv; $(( $(date +%s) - t0 ))s"
dmesg_clean || echo "rdma_bench: WARNING: the kernel log shows problems (above)"
