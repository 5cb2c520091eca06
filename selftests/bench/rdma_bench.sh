#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: mroce against rdma_rxe in ONE VM boot, same veth pair, same
# MTU, same topology (both veth ends in init_net, policy-routed onto the
# wire: the only way rxe works on 6.1), plus kernel TCP (iperf3) as a
# reference. Rows ("TEST:LOSS"):
#
#   write:L send:L read:L   ib_{write,send,read}_bw, 64 KiB, RC, 1 QP, -D $DURATION
#   lat:L                   ib_write_lat, 64 B, $BENCH_LAT_ITERS iterations (1000)
#   tcp:L                   iperf3, TCP, one stream, $DURATION s
#
# L is the netem loss in % on the data direction (requester -> responder
# for write/send, responder -> requester for read, both directions for the
# latency ping-pong), or n0: a netem qdisc at 0 % loss (the control row:
# the qdisc alone costs something, e.g. it turns mroce's GSO bursts off, so
# a lossy row's "/n0" ratio is what loss recovery keeps, apart from netem).
#
# One sample of a row on an emulated 2-core host moves by up to 3.5x from
# minute to minute, so every row runs in $ROUNDS interleaved rounds and the
# tables show the median with the min-max spread; every ratio is one of
# medians. A round loads each driver in turn (mroce refuses to coexist with
# rdma_rxe), runs all its rows, unloads it; odd rounds go in the given
# order, even rounds reversed (drivers and rows), so slow drift in the
# host's speed hits both sides of a ratio alike. mroce's parameter sets
# (columns) also rotate by one place every two rounds (in_round_rotation:
# A B C, C B A, B C A, A C B, ...), so each column runs in every place of
# the round alike. With two
# drivers the first in a round runs its latency rows last and the second
# runs them first: the two drivers' latency samples are back to back (the
# guest's speed is bimodal over minutes; run_driver). With BENCH_LAT_PASS=1
# (the default) a round runs its latency rows apart, after every bulk row:
# each driver is loaded again and every column's latency samples follow
# one another, a module swap (3-5 s) apart, so an A/B's two samples share
# the guest's speed mode (87 % of samples <= 6 s apart did in session 27's
# runs, against 60-70 % of those 7 s or more apart). Kernel TCP runs at
# the end of each round with no RDMA driver loaded.
#
# Goodput = iterations perftest completed in its measured window x size /
# window, window = DURATION - 2 x MARGIN: perftest's own BW column reads 0
# when its clock calibration fails (lib_traffic.sh, PERFTEST_OPTS). A round
# whose row fails (no result, or a latency perftest could not convert to
# time) is left out of that row's median; the table says which and why.
# Progress lines (with an estimate of the time left) as it goes; tables
# and a bar chart at the end; in $MROCE_TEST_OUT (copied to build/bench/ by
# scripts/bench.sh): rdma_bench.txt (the tables plus the mroce hw counters
# each row moved, median per round: resends, RTOs, PTOs, SACK gaps, NAKs,
# RNR NAKs, duplicate requests, and the NAKs by code; read when the traffic
# ends, before perftest's teardown, whose NAKs are counted apart),
# rdma_bench.md (a markdown table),
# rdma_bench.csv (medians, min, max) and rdma_bench_rounds.csv (every round).
#
# Knobs, from the host's environment (make bench BENCH_ROWS="write:0 lat:0"):
#   BENCH_ROUNDS     rounds (default 3)
#   BENCH_ROWS       the rows, e.g. "write:0 write:1 read:n0 lat:0 tcp:0";
#                    default: write, send, read at each of BENCH_LOSSES
#                    ("0 1 10"), lat and tcp at 0 and 1 (those of
#                    BENCH_LOSSES), and with BENCH_CONTROL=1 (default 0)
#                    write:n0 and read:n0; BENCH_TESTS ("write send read lat
#                    tcp") picks tests for the default
#   BENCH_DRIVERS    "rxe mroce" (default), or one of them
#   BENCH_DURATION   seconds per perftest/iperf3 run (default 6),
#   BENCH_MARGIN     perftest's --margin (default 1): 4 s measured
#   BENCH_LAT_ITERS  iterations of each latency sample (default 1000; e.g.
#                    20000: about a second of ping-pong per sample)
#   BENCH_MROCE_PARAMS  mroce module parameters, e.g. "tx_burst=32"; several
#                    sets separated by "|" ("tx_burst=1 | tx_burst=32") make
#                    an A/B in this boot: columns mroce, mroce2, ..., each
#                    row run once per set back to back in every round
#                    (parameters written to sysfs when all are writable at
#                    run time, else mroce reloaded with each set, the sets
#                    then running one after the other within the round).
#                    A set's word ko=PATH loads the module file PATH (built
#                    for the VM's kernel; relative to the repository, and
#                    inside it if the repository is under /tmp: the VM has
#                    its own /tmp) instead of the installed mroce: an A/B of
#                    two builds, e.g. "ko=build/A.ko |"
#   BENCH_LAT_PASS   1 (default): the latency rows of all columns back to
#                    back after the round's bulk rows (a second load of each
#                    driver); 0: each column's latency rows next to its own
#                    bulk rows (the order before session 28)
#   BENCH_TCP_GSO    1 (default): kernel TCP as configured (TSO/GSO on the
#                    veth: netem drops or passes a whole GSO skb of up to
#                    64 KiB); 0: TSO and GSO off on veth00 for the TCP rows,
#                    so netem's loss hits single segments
#   BENCH_LAT_WAIT_MAX  a latency sample whose vCPU threads waited for a
#                    host CPU over this share of the time they wanted one
#                    during its ping-pong is run again (default 0.2; the
#                    host's wait comes from make bench's feed,
#                    scripts/vcpu_feed.py; without it nothing is re-run)
#   BENCH_LAT_RERUNS at most this many re-runs of a latency sample (default
#                    2); the last try is kept whatever its wait. Every
#                    discarded try is listed (rdma_bench.txt, .md,
#                    rdma_bench_discarded.csv), never hidden
#   BENCH_PIN        "S:C": perftest's server runs on CPU S, its client on
#                    CPU C (taskset), for both drivers; "none": wherever
#                    the scheduler puts them (default: none). Every sample
#                    records where they ran and each CPU's user/system/
#                    softirq share (rdma_bench_rounds.csv; BENCH=pin_ab is
#                    the A/B)
# vm-timeout: 5400
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_traffic.sh"
require_root
require_cmd ib_write_bw ib_send_bw ib_read_bw ib_write_lat tc rdma

DURATION=${BENCH_DURATION:-6}
MARGIN=${BENCH_MARGIN:-1}
WINDOW=$((DURATION - 2 * MARGIN))
ROUNDS=${BENCH_ROUNDS:-3}
SIZE=65536
LAT_ITERS=${BENCH_LAT_ITERS:-1000}
DRIVERS=${BENCH_DRIVERS:-"rxe mroce"}
LAT_PASS=${BENCH_LAT_PASS:-1}
TCP_GSO=${BENCH_TCP_GSO:-1}
tcp_note=
[ "$TCP_GSO" = 1 ] || tcp_note=", TSO/GSO off"
rowsel=	# run_driver's rows: bulk, lat, or all ('')
csv=$MROCE_TEST_OUT/rdma_bench.csv
rcsv=$MROCE_TEST_OUT/rdma_bench_rounds.csv
table=$MROCE_TEST_OUT/rdma_bench.txt
md=$MROCE_TEST_OUT/rdma_bench.md
out=$MROCE_TEST_OUT/runs
mkdir -p "$out"
[ "$WINDOW" -ge 2 ] || { echo "BENCH_DURATION must be at least 2 x BENCH_MARGIN + 2"; exit 1; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "BENCH_ROUNDS must be a positive number"; exit 1; }
if ! [[ $LAT_ITERS =~ ^[1-9][0-9]*$ ]] || [ "$LAT_ITERS" -lt 10 ]; then
	echo "BENCH_LAT_ITERS must be a number of at least 10"
	exit 1
fi
# The vCPU wait rule: a share as per mille, for bash's integers.
LAT_WAIT_MAX=${BENCH_LAT_WAIT_MAX:-0.2}
LAT_RERUNS=${BENCH_LAT_RERUNS:-2}
[[ $LAT_WAIT_MAX =~ ^(0?\.([0-9]{1,3})|1(\.0*)?|0)$ ]] ||
	{ echo "BENCH_LAT_WAIT_MAX must be a share between 0 and 1, e.g. 0.2"; exit 1; }
if [[ $LAT_WAIT_MAX == 1* ]]; then
	LAT_WAIT_PM=1000
else
	x=${BASH_REMATCH[2]}000
	LAT_WAIT_PM=$((10#${x:0:3}))
fi
[[ $LAT_RERUNS =~ ^[0-9]$ ]] || { echo "BENCH_LAT_RERUNS must be a number from 0 to 9"; exit 1; }
# make bench's feed of the host's view of the vCPU threads (vcpu_feed.py),
# in the boot's output directory (written since before the boot); absent
# when run otherwise (make vmtest): then nothing is re-run
FEED=
[ -n "${MROCE_OUT:-}" ] && [ -f "$MROCE_OUT/vcpu_feed" ] && FEED=$MROCE_OUT/vcpu_feed
PIN=${BENCH_PIN:-none}
PIN_CPUS=
if [ "$PIN" != none ]; then
	[[ $PIN =~ ^([0-9]+):([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -lt "$(nproc)" ] &&
		[ "${BASH_REMATCH[2]}" -lt "$(nproc)" ] ||
		{ echo "rdma_bench: bad BENCH_PIN '$PIN' (SERVER_CPU:CLIENT_CPU below $(nproc), or none)"; exit 1; }
	PIN_CPUS="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
fi

if [ -n "${BENCH_ROWS:-}" ]; then
	ROWS=$BENCH_ROWS
else
	ROWS=
	for t in ${BENCH_TESTS:-write send read lat tcp}; do
		for l in ${BENCH_LOSSES:-0 1 10}; do
			[[ $t == lat || $t == tcp ]] && [ "$l" != 0 ] && [ "$l" != 1 ] && continue
			ROWS+=" $t:$l"
			[ "$l" = 0 ] && [ "${BENCH_CONTROL:-0}" = 1 ] && [[ $t == write || $t == read ]] &&
				ROWS+=" $t:n0"
		done
	done
fi
# shellcheck disable=SC2086 # one word per row
set -- $ROWS
rows=("$@")
for row in "${rows[@]}"; do
	[[ $row =~ ^(write|send|read|lat|tcp):(n0|[0-9]+(\.[0-9]+)?)$ ]] ||
		{ echo "rdma_bench: bad row '$row' (TEST:LOSS, TEST one of write send read lat tcp, LOSS a % or n0)"; exit 1; }
done
[ ${#rows[@]} -gt 0 ] || { echo "rdma_bench: no rows"; exit 1; }
has_row() { [[ " ${rows[*]} " == *" $1 "* ]]; }
rdma_rows=()
tcp_rows=()
for row in "${rows[@]}"; do
	if [[ $row == tcp:* ]]; then tcp_rows+=("$row"); else rdma_rows+=("$row"); fi
done

declare -A rv note vparams cnt txp frames retx down place win latlog vw vws tries
disc=()	# the latency tries discarded for their vCPU wait (run_row)
# mroce's parameter sets: one column each (mroce, mroce2, ...).
bench_param_sets
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
for drv in $DRIVERS; do
	[[ $drv == rxe || $drv == mroce ]] || { echo "rdma_bench: unknown driver $drv (rxe, mroce)"; exit 1; }
	read -ra c <<< "$(cols_of "$drv")"
	cols+=("${c[@]}")
done
[ ${#rdma_rows[@]} -eq 0 ] && cols=()
has_col() { [[ " ${cols[*]} " == *" $1 "* ]]; }

loss_label() { if [ "$1" = n0 ]; then echo "0% netem"; else echo "$1%"; fi; }
tool_of() { case $1 in lat) echo ib_write_lat ;; tcp) echo iperf3 ;; *) echo "ib_$1_bw" ;; esac; }

t0=$(date +%s)
nrun=0
total=$(( ROUNDS * (${#cols[@]} * ${#rdma_rows[@]} + ${#tcp_rows[@]}) ))
round=0
progress() {
	local el=$(( $(date +%s) - t0 )) eta=
	[ "$nrun" -gt 0 ] && [ "$nrun" -lt "$total" ] &&
		eta=", ~$(( (el * (total - nrun) / nrun + 30) / 60 )) min left"
	printf '[%4ds r%s/%s %3d/%d%s] %s\n' "$el" "$round" "$ROUNDS" "$nrun" "$total" "$eta" "$*"
}

# Counters that explain a row: packets the data sender sent, and
# retransmissions: mroce counts the packets it resent (on the data sender;
# READ responses are resent by the responder); rxe has no such counter, its
# requester (dev0) counts timer retries and NAK-driven (go-back-N) restarts.
ctr() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0; }
vframes() { cat "/sys/class/net/$1/statistics/tx_packets" 2>/dev/null || echo 0; }
retx_of() { # retx_of DRV SENDER
	case $1 in
	rxe) echo $(( $(ctr dev0 completer_retry_err) + $(ctr dev0 rcvd_seq_err) )) ;;
	*) ctr "$2" retrans_pkts ;;
	esac
}

# The mroce counters a row's tables show, summed over both devices: the
# first 7 in the counter table, then the NAKs received by code (one of the
# two devices sent each).
NAK_CODES="rnr invalid_request remote_access remote_op stream_psn_window unknown_conn
unknown_stream stale_gen"
MCTRS="retrans_pkts rto_timeouts pto_timeouts sack_gaps naks_rcvd rcvd_rnr_err duplicate_request"
for c in $NAK_CODES; do MCTRS+=" naks_rcvd_$c"; done
# msnap VAR SENDER: VAR = "MCTRS summed over dev0 and dev1, then SENDER's
# sent_pkts and retrans_pkts", by builtins only (no process: it runs while
# the traffic does). A counter the module lacks (an older ko=) reads 0.
msnap() {
	local c a b out='' hw=/sys/class/infiniband
	for c in $MCTRS; do
		a=0 b=0
		read -r a 2> /dev/null < "$hw/dev0/ports/1/hw_counters/$c"
		read -r b 2> /dev/null < "$hw/dev1/ports/1/hw_counters/$c"
		out+="$((a + b)) "
	done
	for c in sent_pkts retrans_pkts; do
		a=0
		read -r a 2> /dev/null < "$hw/$2/ports/1/hw_counters/$c"
		out+="$a "
	done
	printf -v "$1" '%s' "${out% }"
}
# mctr_delta BEFORE AFTER: the counters' differences, one line.
mctr_delta() {
	printf '%s\n' $1 $2 | awk '{ v[NR] = $1 } END { n = NR / 2
		for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), v[n + i] - v[i] }'
}

bench_nap_init .rdma_bench

# mroce's counters at the end of a row's traffic, not after perftest exits:
# its teardown (a QP destroyed while the peer's last packets are on their
# way draws UNKNOWN_STREAM NAKs) is no part of the row. The requester's
# rdma_sends (successful send-queue completions) stops growing when the
# traffic does; every POLL s, the first look that finds it unchanged takes a
# snapshot (kept only if it never moves again). Sets MEND; the caller's
# command runs in the background as PID.
#
# Where the row ran (both drivers, same polls): the CPU perftest's server
# and client were on at each poll, and each CPU's user, system and softirq
# time over the row (/proc/stat; the receive path runs in softirq context,
# on the CPU that sent the packet into the veth), and what the stack's
# per-CPU backlogs dropped or left for later meanwhile (/proc/net/
# softnet_stat: a veth delivers into the backlog of the sending CPU, at
# most netdev_max_backlog packets). Sets PLACE to "SRV_CPU0_PCT
# CLI_CPU0_PCT SAME_CPU_PCT DROPPED SQUEEZED U/S/SI U/S/SI ..." (percent of
# the polls, packets and times, then percent of each CPU's time).
POLL=0.1
# cpustat VAR: "user system softirq total" of every CPU, in jiffies.
cpustat() {
	local -a a
	local out=''
	while read -r -a a; do
		[[ ${a[0]} == cpu[0-9]* ]] || continue
		out+="$((a[1] + a[2])) $((a[3] + a[6])) $((a[7])) $((a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7] + a[8])) "
	done < /proc/stat
	printf -v "$1" '%s' "$out"
}
# softnet VAR: "dropped time_squeeze", summed over the CPUs.
softnet() {
	local -a a
	local d=0 q=0
	while read -r -a a; do
		d=$((d + 16#${a[1]})) q=$((q + 16#${a[2]}))
	done < /proc/net/softnet_stat
	printf -v "$1" '%s' "$d $q"
}
# perftest_pids TOOL: SPID and CPID, the tool's two processes (the server
# started first), by builtins only.
perftest_pids() {
	local d c p=()
	for d in /proc/[0-9]*; do
		c=
		read -r c 2> /dev/null < "$d/comm"
		[ "$c" = "$1" ] && p+=("${d#/proc/}")
	done
	[ ${#p[@]} -eq 2 ] || return 1
	if [ "${p[0]}" -lt "${p[1]}" ]; then SPID=${p[0]} CPID=${p[1]}; else SPID=${p[1]} CPID=${p[0]}; fi
}
# cpu_of PID: C = the CPU PID last ran on (field 39 of its stat).
cpu_of() {
	local -a pst
	C=
	read -r -a pst 2> /dev/null < "/proc/$1/stat" || return 1
	C=${pst[38]}
}
# place_label PLACE: one line of it for the progress lines.
place_label() {
	local s c same dr sq rest
	read -r s c same dr sq rest <<< "$1"
	echo "on cpu0: server $s%, client $c% (same cpu $same%); usr/sys/si % per cpu: $rest;" \
		"backlog drops $dr, squeezes $sq"
}
# A latency row also brackets its ping-pong with make bench's host feed
# (FEED: the vCPU threads' host run and run-queue ns, vcpu_feed.py): VW0
# is the feed at the last poll before dev0's sent_pkts moved (perftest's
# setup sends nothing over RDMA), VW1 the feed at the first poll that found
# it still again (reset if it moves once more), or after the run. The
# window is the ping-pong plus at most a poll each side.
row_watch() { # row_watch PID DRV SENDER TOOL
	local pid=$1 drv=$2 sender=$3 tool=$4 last=-1 v taken=0 f=/sys/class/infiniband/dev0/ports/1/hw_counters/rdma_sends
	local n=0 s0=0 c0=0 same=0 sc cc st0 st1 sn0 sn1 i out=''
	local pk plast=-1 fprev='' fcur='' feed=
	local -a a b
	MEND=
	VW0='' VW1=''
	[ "$tool" = ib_write_lat ] && [ -n "$FEED" ] && feed=1
	SPID='' CPID=''
	cpustat st0
	softnet sn0
	while kill -0 "$pid" 2> /dev/null; do
		if [ "$drv" = mroce ]; then
			v=0
			read -r v 2> /dev/null < "$f"
			if [ "$v" != "$last" ]; then
				# moved after a pause: the pause's snapshot is not the end
				last=$v taken=0 MEND=
			elif [ $taken = 0 ]; then
				msnap MEND "$sender"
				taken=1
			fi
		fi
		if [ -n "$feed" ]; then
			pk=0 fcur=''
			read -r pk 2> /dev/null < /sys/class/infiniband/dev0/ports/1/hw_counters/sent_pkts
			read -r fcur 2> /dev/null < "$FEED"
			if [ "$plast" = -1 ]; then
				plast=$pk
			elif [ "$pk" != "$plast" ]; then
				[ -n "$VW0" ] || VW0=$fprev
				plast=$pk VW1=''
			elif [ -n "$VW0" ] && [ -z "$VW1" ]; then
				VW1=$fcur
			fi
			fprev=$fcur
		fi
		[ -n "$CPID" ] || perftest_pids "$tool"
		if [ -n "$CPID" ] && cpu_of "$SPID" && sc=$C && cpu_of "$CPID" && cc=$C; then
			n=$((n + 1))
			[ "$sc" = 0 ] && s0=$((s0 + 1))
			[ "$cc" = 0 ] && c0=$((c0 + 1))
			[ "$sc" = "$cc" ] && same=$((same + 1))
		fi
		nap $POLL
	done
	if [ -n "$feed" ] && [ -n "$VW0" ] && [ -z "$VW1" ]; then
		read -r VW1 2> /dev/null < "$FEED"
	fi
	cpustat st1
	softnet sn1
	read -r -a a <<< "$sn0"
	read -r -a b <<< "$sn1"
	sn1="$((b[0] - a[0])) $((b[1] - a[1]))"
	read -r -a a <<< "$st0"
	read -r -a b <<< "$st1"
	for ((i = 0; i + 3 < ${#a[@]}; i += 4)); do
		v=$((b[i + 3] - a[i + 3]))
		[ "$v" -gt 0 ] || v=1
		out+=" $(( (b[i] - a[i]) * 100 / v ))/$(( (b[i + 1] - a[i + 1]) * 100 / v ))/$(( (b[i + 2] - a[i + 2]) * 100 / v ))"
	done
	if [ "$n" -gt 0 ]; then
		PLACE="$((s0 * 100 / n)) $((c0 * 100 / n)) $((same * 100 / n)) $sn1$out"
	else
		PLACE="- - - $sn1$out"
	fi
}

# vcpu_wait: from row_watch's VW0 and VW1, VWPM = how much of the time the
# vCPU threads wanted a host CPU during the ping-pong they spent queued for
# one, per mille (wait / (wait + run), summed over the threads: an idle
# vCPU counts neither), and VWMS = the window in ms; both '' when not
# measured (no feed, no traffic seen, or a new QEMU meanwhile).
vcpu_wait() {
	local t0 n0 r0 w0 t1 n1 r1 w1 x d
	VWPM='' VWMS=''
	read -r t0 n0 r0 w0 <<< "$VW0"
	read -r t1 n1 r1 w1 <<< "$VW1"
	for x in "$t0" "$n0" "$r0" "$w0" "$t1" "$n1" "$r1" "$w1"; do
		[[ $x =~ ^[0-9]+$ ]] || return 0
	done
	d=$(( (r1 - r0) + (w1 - w0) ))
	[ "$n0" = "$n1" ] && [ "$t1" -gt "$t0" ] && [ "$w1" -ge "$w0" ] && [ "$d" -gt 0 ] || return 0
	VWPM=$(( (w1 - w0) * 1000 / d ))
	VWMS=$(( (t1 - t0) / 1000000 ))
}
# share PERMILLE: R = "0.123"
share() { printf -v R '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
# wait_label KEY ROUND: the sample's vCPU wait for its progress line.
wait_label() {
	if [ -z "${vw[$1,$2]:-}" ]; then
		W="vCPU wait not measured (no host feed: make bench gives one)"
	else
		share "${vw[$1,$2]}"
		W="vCPU wait $R of $((vws[$1,$2] / 1000)).$(printf '%02d' $((vws[$1,$2] % 1000 / 10))) s"
	fi
}

set_loss() { # set_loss LEVEL DEV...: 0 clears, n0 is netem at 0 %, else PCT
	local lvl=$1 d
	shift
	for d in "$@"; do
		netem_loss "" "$d" "$lvl"
	done
}

# perftest server on dev1, client on dev0 -> 10.0.0.2; logs LOG.{server,client};
# pinned as BENCH_PIN says. A latency sample gets 5 ms per iteration more
# (BENCH_LAT_ITERS; a slow-mode iteration takes ~0.1 ms).
perftest() { # perftest TOOL LOG ARGS...
	local tool=$1 log=$2 tmo=$((DURATION + 90))
	shift 2
	[ "$tool" = ib_write_lat ] && tmo=$((tmo + LAT_ITERS / 200))
	PERFTEST_LOG=${log#"$MROCE_TEST_OUT"/} PERFTEST_TIMEOUT=$tmo \
		PERFTEST_CPUS=$PIN_CPUS perftest_pair "" dev0 "" dev1 10.0.0.2 "$tool" "$@" > /dev/null
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

failed() { # failed KEY ROUND WHY: the round is left out of KEY's median
	note[$1]+="${note[$1]:+; }round $2: $3"
}

# run_row_once COL TEST LOSS ROUND: one sample into rv[COL,TEST,LOSS,ROUND].
run_row_once() {
	local c=$1 t=$2 l=$3 r=$4 drv=mroce sender=dev0 log got='' c0 c1 p0 r0 f0 vdev k=$1,$2,$3 pid ok
	local w0
	w0=$(date +%s)
	local -a d
	[ "$c" = rxe ] && drv=rxe
	log=$out/$c-$t-loss$l-r$r
	[ "$t" = read ] && sender=dev1	# READ data flows responder -> requester
	[ "$drv" = mroce ] && msnap c0 "$sender"
	p0=$(ctr "$sender" sent_pkts)
	# the sender's veth counts a transmit burst (tx_burst) as one frame
	vdev=veth0${sender#dev}
	f0=$(vframes "$vdev")
	r0=$(retx_of "$drv" "$sender")
	if [ "$t" = lat ]; then
		set_loss "$l" veth00 veth01
		# -U: every iteration's latency too (the report's distribution)
		perftest ib_write_lat "$log" -s 64 -n "$LAT_ITERS" -U &
		pid=$!
		row_watch "$pid" "$drv" "$sender" ib_write_lat
		wait "$pid" && ok=1
		vcpu_wait
		vw[$k,$r]=$VWPM vws[$k,$r]=$VWMS
		if [ -n "$ok" ]; then
			# bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9
			got=$(awk '$1 == 64 && NF >= 8 && ($5 $6 $8) ~ /^[0-9.]+$/ { print $5, $6, $8; exit }' \
				"$log.client")
		fi
		[ -z "$got" ] || latlog[$k,$r]=$log.client
	else
		if [ "$sender" = dev1 ]; then set_loss "$l" veth01; else set_loss "$l" veth00; fi
		perftest "ib_${t}_bw" "$log" -s $SIZE -D "$DURATION" --margin "$MARGIN" --report_gbits &
		pid=$!
		row_watch "$pid" "$drv" "$sender" "ib_${t}_bw"
		wait "$pid" && ok=1
		if [ -n "$ok" ]; then
			got=$(awk -v s=$SIZE '$1 == s && NF >= 5 { print $2; exit }' "$log.client")
		fi
	fi
	set_loss 0 veth00 veth01
	frames[$k,$r]=$(( $(vframes "$vdev") - f0 ))
	place[$k,$r]=$PLACE
	txp[$k,$r]=$(( $(ctr "$sender" sent_pkts) - p0 ))
	retx[$k,$r]=$(( $(retx_of "$drv" "$sender") - r0 ))
	if [ "$drv" = mroce ]; then
		# up to the end of the traffic; what the teardown added, apart
		msnap c1 "$sender"
		[ -n "$MEND" ] || MEND=$c1
		cnt[$k,$r]=$(mctr_delta "$c0" "$MEND")
		read -ra d <<< "$(mctr_delta "$MEND" "$c1")"
		down[$k,$r]=$(( d[4] ))
		read -ra d <<< "${cnt[$k,$r]}"
		txp[$k,$r]=${d[-2]}
		retx[$k,$r]=${d[-1]}
		cnt[$k,$r]=${d[*]:0:${#d[@]}-2}
	fi
	win[$k,$r]="$w0 $(date +%s)"
	nrun=$((nrun + 1))
	if [ -z "$got" ]; then
		failed "$k" "$r" "$(why_failed "$log")"
		progress "$c $(tool_of "$t") loss $(loss_label "$l"): failed ($(why_failed "$log"))"
		return
	fi
	if [ "$t" = lat ]; then
		read -r "rv[$k,$r]" "rv[$k,$r,avg]" "rv[$k,$r,p99]" <<< "$got"
		wait_label "$k" "$r"
		progress "$c ib_write_lat 64 B loss $(loss_label "$l")${TRY:+ (try $TRY)}: typical" \
			"${rv[$k,$r]} us, avg ${rv[$k,$r,avg]} us, p99 ${rv[$k,$r,p99]} us; $W;" \
			"$(place_label "$PLACE")"
	else
		rv[$k,$r,it]=$got
		rv[$k,$r]=$(awk -v i="$got" -v s=$SIZE -v w="$WINDOW" 'BEGIN { printf "%.1f", i * s * 8 / w / 1e6 }')
		progress "$c ib_${t}_bw loss $(loss_label "$l"): ${rv[$k,$r]} Mb/s ($got it," \
			"${txp[$k,$r]} pkts in ${frames[$k,$r]} frames, ${retx[$k,$r]} retx); $(place_label "$PLACE")"
	fi
}

# run_row COL TEST LOSS ROUND: run_row_once; a latency sample whose vCPU
# threads waited for a host CPU over LAT_WAIT_MAX of the time they wanted
# one (vcpu_wait) is run again, at most LAT_RERUNS times, and the last try
# is kept. Session 48: a ping-pong only advances while the vCPU that must
# act next is on a host CPU, so under host contention every half round trip
# waits out host ticks (4, 8, 12 ms) and the sample measures the host's
# scheduler, in either driver's column. A discarded try goes to disc (and
# the tables), its logs to LOG-discardN.{client,server}.
run_row() {
	local c=$1 t=$2 l=$3 r=$4 k=$1,$2,$3 nt=1 log TRY=
	while :; do
		run_row_once "$@"
		[ "$t" = lat ] && [ -n "${rv[$k,$r]:-}" ] && [ -n "${vw[$k,$r]}" ] || break
		[ "${vw[$k,$r]}" -gt "$LAT_WAIT_PM" ] && [ "$nt" -le "$LAT_RERUNS" ] || break
		disc+=("$c $t $l $r $nt ${rv[$k,$r]} ${rv[$k,$r,avg]} ${rv[$k,$r,p99]} ${vw[$k,$r]} ${vws[$k,$r]} ${win[$k,$r]}")
		share "${vw[$k,$r]}"
		log=$out/$c-$t-loss$l-r$r
		mv "$log.client" "$log-discard$nt.client" 2> /dev/null
		mv "$log.server" "$log-discard$nt.server" 2> /dev/null
		unset "rv[$k,$r]" "rv[$k,$r,avg]" "rv[$k,$r,p99]" "latlog[$k,$r]"
		nt=$((nt + 1)) TRY="$nt of up to $((LAT_RERUNS + 1))"
		total=$((total + 1))
		progress "$c ib_write_lat: vCPU wait $R over $LAT_WAIT_MAX: that try is discarded, running it again"
	done
	[ "$t" = lat ] && tries[$k,$r]=$nt
	return 0
}

run_tcp() { # run_tcp LOSS ROUND
	local l=$1 r=$2 log=$out/tcp-loss$1-r$2 spid bps k=tcp,tcp,$1 w0
	w0=$(date +%s)
	# TCP_GSO=0: the sender's segments leave one per skb, so netem loses
	# single packets, not whole GSO skbs (up to 64 KiB) as by default
	[ "$TCP_GSO" = 1 ] || ethtool -K veth00 tso off gso off > /dev/null
	set_loss "$l" veth00
	iperf3 -s -B 10.0.0.2 -1 > "$log.server" 2>&1 &
	spid=$!
	wait_for 10 tcp_listening 5201
	timeout $((DURATION + 30)) iperf3 -c 10.0.0.2 -B 10.0.0.1 -t "$DURATION" -J > "$log.json" 2>&1
	wait "$spid"
	set_loss 0 veth00
	[ "$TCP_GSO" = 1 ] || ethtool -K veth00 tso on gso on > /dev/null
	bps=$(python3 -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6))' "$log.json" 2>/dev/null)
	win[$k,$r]="$w0 $(date +%s)"
	nrun=$((nrun + 1))
	if [ -n "$bps" ]; then
		rv[$k,$r]=$bps
		progress "kernel TCP (iperf3$tcp_note) loss $(loss_label "$l"): $bps Mb/s"
	else
		failed "$k" "$r" "iperf3 gave no result"
		progress "kernel TCP (iperf3) loss $(loss_label "$l"): failed"
	fi
}

setup() { bench_driver_up "$@"; }
teardown() {
	bench_driver_down
	mloaded=-
	return 0
}

# mroce's parameters: each set names some; the others keep their defaults.
# ko=PATH is no parameter: another module file, loaded by each such set.
pnames=$(for c in "${mcols[@]}"; do for kv in ${vparams[$c]}; do echo "${kv%%=*}"; done; done |
	grep -vx ko | sort -u)
has_ko=0
for c in "${mcols[@]}"; do [[ " ${vparams[$c]} " == *" ko="* ]] && has_ko=1; done
declare -A pdef
mrw=	# 1: every named parameter is writable at run time
mloaded=-	# the parameter set mroce was loaded with; - when not loaded
pfile() { echo "/sys/module/mroce/parameters/$1"; }
# mroce_probe: at the first load (no parameters given): the defaults, and
# whether sets can be switched through sysfs. Sets why if mroce is not usable.
mroce_probe() {
	local n
	[ -n "$mrw" ] && return 0
	mrw=1
	for n in $pnames; do
		[ -e "$(pfile "$n")" ] || { why="mroce has no parameter $n"; mrw=; return 1; }
		pdef[$n]=$(cat "$(pfile "$n")")
		[ $(( 0$(stat -c %a "$(pfile "$n")") & 0200 )) -ne 0 ] || mrw=0
	done
	[ $has_ko = 0 ] || mrw=0
	return 0
}
# mroce_use COL: the loaded mroce runs with COL's parameter set.
mroce_use() {
	local c=$1 n kv
	declare -A set=()
	[ -n "$pnames" ] || [ $has_ko = 1 ] || return 0
	for kv in ${vparams[$c]}; do [[ $kv == ko=* ]] || set[${kv%%=*}]=${kv#*=}; done
	if [ "$mrw" = 1 ]; then
		for n in $pnames; do echo "${set[$n]-${pdef[$n]}}" > "$(pfile "$n")" || return 1; done
	elif [ "$mloaded" != "${vparams[$c]}" ]; then
		teardown
		# shellcheck disable=SC2086 # one word per parameter
		setup mroce ${vparams[$c]} || return 1
		mloaded=${vparams[$c]}
	fi
	for n in "${!set[@]}"; do
		[ "$(cat "$(pfile "$n")")" = "${set[$n]}" ] || return 1
	done
}

# run_driver DRV ROUND [POS]: load DRV, every RDMA row of each of its
# columns, unload. POS is the driver's place in the round when two drivers
# run: first (its latency rows go last) or last (they go first), so that
# the two drivers' latency samples are separated only by the module swap.
# The guest's speed is bimodal over minutes (both drivers ~1.4x slower for
# a while): samples minutes apart would pair different modes in a ratio.
run_driver() {
	local drv=$1 r=$2 pos=${3:-} why='' c row t l dcols order=() rorder=() lrows=() orows=()
	read -ra dcols <<< "$(cols_of "$drv")"
	# (no <(...): the guest has no /dev/fd)
	mapfile -t order <<< "$(in_round_rotation "$r" "${dcols[@]}")"
	mapfile -t rorder <<< "$(in_round_order "$r" "${rdma_rows[@]}")"
	for row in "${rorder[@]}"; do
		if [[ $row == lat:* ]]; then lrows+=("$row"); else orows+=("$row"); fi
	done
	case $rowsel:$pos in
	bulk:*) rorder=("${orows[@]}") ;;
	lat:*) rorder=("${lrows[@]}") ;;
	:first) rorder=("${orows[@]}" "${lrows[@]}") ;;
	:last) rorder=("${lrows[@]}" "${orows[@]}") ;;
	esac
	[ ${#rorder[@]} -gt 0 ] || return 0
	if ! setup "$drv"; then
		why="setup failed"
	elif [ "$drv" = mroce ]; then
		mloaded=''
		mroce_probe
	fi
	if [ -n "$why" ]; then
		progress "$drv: $why; its rows are left out of round $r"
		for c in "${order[@]}"; do
			for row in "${rorder[@]}"; do
				failed "$c,${row%%:*},${row#*:}" "$r" "$drv $why"
				nrun=$((nrun + 1))
			done
		done
		teardown
		return
	fi
	progress "$drv loaded: $(ibv_devinfo -d dev0 | awk '/active_mtu/ { print "active MTU", $2 }')"
	# A/B: row by row when the sets switch through sysfs, else set by set.
	if [ "$drv" = rxe ] || [ "$mrw" = 1 ] || [ ${#order[@]} -eq 1 ]; then
		for row in "${rorder[@]}"; do
			t=${row%%:*} l=${row#*:}
			for c in "${order[@]}"; do
				if [ "$drv" = mroce ] && ! mroce_use "$c"; then
					failed "$c,$t,$l" "$r" "could not set mroce ${vparams[$c]}"
					nrun=$((nrun + 1))
					continue
				fi
				run_row "$c" "$t" "$l" "$r"
			done
		done
	else
		for c in "${order[@]}"; do
			if ! mroce_use "$c"; then
				progress "$c: could not load mroce ${vparams[$c]}; its rows are left out of round $r"
				for row in "${rorder[@]}"; do
					failed "$c,${row%%:*},${row#*:}" "$r" "could not load mroce ${vparams[$c]}"
					nrun=$((nrun + 1))
				done
				continue
			fi
			for row in "${rorder[@]}"; do run_row "$c" "${row%%:*}" "${row#*:}" "$r"; done
		done
	fi
	teardown
}

echo "rdma_bench: $ROUNDS rounds of: ${cols[*]:-(no RDMA driver)} x ${rdma_rows[*]:-(no RDMA row)}" \
	"${tcp_rows[*]}; ${DURATION}s runs (${WINDOW}s measured)"
for c in "${mcols[@]}"; do
	has_col "$c" && echo "rdma_bench: $c: mroce ${vparams[$c]:-with its default parameters}"
done
[ ${#tcp_rows[@]} -eq 0 ] || command -v iperf3 > /dev/null || {
	echo "rdma_bench: iperf3 not installed: no TCP reference (make deps)"
	tcp_rows=()
}
topo_policy 1 || exit 1
echo "rdma_bench: veth pair veth00/veth01, MTU $(cat /sys/class/net/veth00/mtu), $(nproc) vCPUs," \
	"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)," \
	"perftest server:client CPUs $PIN"
# The latency pass only when the rounds have latency and bulk rows and
# more than one column to compare.
lat_pass=0
if [ "$LAT_PASS" = 1 ] && [ ${#cols[@]} -gt 1 ]; then
	nl=0
	for row in "${rdma_rows[@]}"; do [[ $row == lat:* ]] && nl=$((nl + 1)); done
	[ "$nl" -gt 0 ] && [ "$nl" -lt ${#rdma_rows[@]} ] && lat_pass=1
fi
[ "$lat_pass" = 0 ] || echo "rdma_bench: latency rows in a pass of their own after each round's bulk rows" \
	"(BENCH_LAT_PASS=1): every column's latency samples back to back"
dmesg_mark
for round in $(seq "$ROUNDS"); do
	# shellcheck disable=SC2086 # one word per driver
	[ ${#cols[@]} -gt 0 ] && {
		mapfile -t dorder <<< "$(in_round_order "$round" $DRIVERS)"
		if [ "$lat_pass" = 1 ]; then
			# bulk rows, then every column's latency rows back to back
			for rowsel in bulk lat; do
				for dv in "${dorder[@]}"; do run_driver "$dv" "$round"; done
			done
			rowsel=
		else
			for i in "${!dorder[@]}"; do
				pos=
				if [ ${#dorder[@]} -gt 1 ]; then
					[ "$i" = 0 ] && pos=first
					[ "$i" = $((${#dorder[@]} - 1)) ] && pos=last
				fi
				run_driver "${dorder[$i]}" "$round" $pos
			done
		fi
	}
	for row in "${tcp_rows[@]}"; do run_tcp "${row#*:}" "$round"; done
done
topo_policy_cleanup 1

# --- report ------------------------------------------------------------------
# Under TCG every process costs tens of milliseconds: the report computes the
# rounds' statistics in one awk run and builds the tables with builtins.
#
# S[KEY] = "median min max n" of the rounds' values of KEY = COL,TEST,LOSS
# (goodput, latency typical) or COL,TEST,LOSS,FIELD (avg, p99: latency, as
# perftest reports it; ip50 ip90 ip99 imax imean gt2x gt500: latency per
# iteration, lat_dists; retx; ctr1..ctr15: the mroce counters of MCTRS;
# pratio: an mroce column's typical 64 B latency over rxe's in the same
# round, the two samples back to back in it (run_driver), for rounds that
# have both).
declare -A S
IFIELDS="ip50 ip90 ip99 imax imean gt2x gt500"
# lat_dists: each latency sample's per-iteration distribution from its -U
# list (lat_dist.py, one process for all; docs/testing.md): rv[KEY,ROUND,F]
# for F in IFIELDS and rv[KEY,ROUND,in] (iterations listed).
lat_dists() {
	local key f i
	local -a args=() vals fields
	read -ra fields <<< "$IFIELDS"
	for key in "${!latlog[@]}"; do args+=("$key=${latlog[$key]}"); done
	[ ${#args[@]} -gt 0 ] || return 0
	# (a file, not <(...): the guest has no /dev/fd)
	python3 "$(dirname "$0")/lat_dist.py" samples "${args[@]}" > "$MROCE_TEST_OUT/.latdist"
	while read -r key f; do
		read -ra vals <<< "$f"
		[ "${vals[-1]}" -gt 0 ] 2> /dev/null || continue
		for i in "${!fields[@]}"; do rv[$key,${fields[$i]}]=${vals[$i]}; done
		rv[$key,in]=${vals[-1]}
	done < "$MROCE_TEST_OUT/.latdist"
	rm -f "$MROCE_TEST_OUT/.latdist"
}
stats() {
	local key a b c r f v i
	{
		for key in "${!rv[@]}"; do
			IFS=, read -r a b c r f <<< "$key"
			[ "$f" = it ] || [ "$f" = in ] || echo "$a,$b,$c${f:+,$f} ${rv[$key]}"
			if [ "$b" = lat ] && [ -z "$f" ] && [ "$a" != rxe ]; then
				ratio "${rv[$key]}" "${rv[rxe,lat,$c,$r]:-}"
				[ "$R" = - ] || echo "$a,lat,$c,pratio $R"
			fi
		done
		for key in "${!retx[@]}"; do echo "${key%,*},retx ${retx[$key]}"; done
		for key in "${!down[@]}"; do echo "${key%,*},down ${down[$key]}"; done
		for key in "${!cnt[@]}"; do
			i=0
			for v in ${cnt[$key]}; do i=$((i + 1)); echo "${key%,*},ctr$i $v"; done
		done
	} | bench_stats -i ',(retx|down|ctr[0-9]+)$' -r ',(pratio|gt2x|gt500)$' > "$MROCE_TEST_OUT/.stats"
	while read -r key v; do S[$key]=$v; done < "$MROCE_TEST_OUT/.stats"
	rm -f "$MROCE_TEST_OUT/.stats"
}

# med KEY [FIELD]: M = the median, or "-".
med() { M=${S[$1${2:+,$2}]:--}; M=${M%% *}; }
# spread KEY [FIELD]: C = "median (min-max)", * if some rounds gave none.
spread() {
	local st=${S[$1${2:+,$2}]}
	if [ -z "$st" ]; then C=-; return; fi
	# shellcheck disable=SC2086 # four words
	set -- $st
	C="$1 ($2-$3)"
	[ "$4" -gt 1 ] || C=$1
	[ "$4" -ge "$ROUNDS" ] || C+="*"
}
# tenths NUMBER: T = NUMBER x 10, rounded down; fails if not a number.
tenths() {
	[[ $1 =~ ^([0-9]+)(\.([0-9]))?[0-9]*$ ]] || return 1
	T=$(( 10#${BASH_REMATCH[1]} * 10 + 10#${BASH_REMATCH[3]:-0} ))
}
# ratio A B: R = A / B with two decimals, "-" if either is not a number.
ratio() {
	local a
	R=-
	tenths "$1" || return 0
	a=$T
	tenths "$2" && [ "$T" -gt 0 ] || return 0
	T=$(( (a * 1000 / T + 5) / 10 ))
	printf -v R '%d.%02d' $((T / 100)) $((T % 100))
}
# mratio KEY1 KEY2 [FIELD]: R = median of KEY1 / median of KEY2.
mratio() { local a; med "$1" "$3"; a=$M; med "$2" "$3"; ratio "$a" "$M"; }

has_rxe=0
has_col rxe && has_col mroce && has_rxe=1
has_n0=0
for row in "${rows[@]}"; do [[ $row == *:n0 ]] && has_n0=1; done
gp_mcols=()
for c in "${mcols[@]}"; do has_col "$c" && gp_mcols+=("$c"); done
bw_rows=()
lat_rows=()
for row in "${rdma_rows[@]}"; do
	if [[ $row == lat:* ]]; then lat_rows+=("$row"); else bw_rows+=("$row"); fi
done

# Table functions append their cells to F; a lone "|" separates groups.
# The goodput table: each column's median (min-max), each mroce column
# against rxe, each column against its own 0 % and 0 % netem rows (what it
# keeps), the later parameter sets against the first, mroce's resends.
gp_head() {
	local c
	F+=("${cols[@]}" "|")
	if [ $has_rxe = 1 ]; then
		for c in "${gp_mcols[@]}"; do F+=("$c/rxe"); done
		F+=("|")
	fi
	for c in "${cols[@]}"; do F+=("$c/0%"); done
	if [ $has_n0 = 1 ]; then
		F+=("|")
		for c in "${cols[@]}"; do F+=("$c/n0"); done
	fi
	if [ ${#gp_mcols[@]} -gt 1 ]; then
		F+=("|")
		for c in "${gp_mcols[@]:1}"; do F+=("$c/${gp_mcols[0]}"); done
	fi
	if [ ${#gp_mcols[@]} -gt 0 ]; then
		F+=("|")
		for c in "${gp_mcols[@]}"; do F+=("$c retx"); done
	fi
}
gp_row() { # gp_row TEST LEVEL
	local t=$1 l=$2 c
	for c in "${cols[@]}"; do spread "$c,$t,$l"; F+=("$C"); done
	F+=("|")
	if [ $has_rxe = 1 ]; then
		for c in "${gp_mcols[@]}"; do mratio "$c,$t,$l" "rxe,$t,$l"; F+=("$R"); done
		F+=("|")
	fi
	for c in "${cols[@]}"; do mratio "$c,$t,$l" "$c,$t,0"; F+=("$R"); done
	if [ $has_n0 = 1 ]; then
		F+=("|")
		for c in "${cols[@]}"; do
			R=-
			[ "$l" != 0 ] && [ "$l" != n0 ] && mratio "$c,$t,$l" "$c,$t,n0"
			F+=("$R")
		done
	fi
	if [ ${#gp_mcols[@]} -gt 1 ]; then
		F+=("|")
		for c in "${gp_mcols[@]:1}"; do mratio "$c,$t,$l" "${gp_mcols[0]},$t,$l"; F+=("$R"); done
	fi
	if [ ${#gp_mcols[@]} -gt 0 ]; then
		F+=("|")
		for c in "${gp_mcols[@]}"; do med "$c,$t,$l" retx; F+=("$M"); done
	fi
}
lat_head() {
	local c
	for c in "${cols[@]}"; do F+=("$c typ" "$c avg" "$c p99" "|"); done
	if [ $has_rxe = 1 ]; then
		for c in "${gp_mcols[@]}"; do F+=("avg $c/rxe"); done
		for c in "${gp_mcols[@]}"; do F+=("typ $c/rxe"); done
	else
		unset 'F[-1]'
	fi
}
lat_row() { # lat_row lat LEVEL
	local k c
	for c in "${cols[@]}"; do
		k=$c,lat,$2
		med "$k"
		F+=("$M")
		spread "$k" avg
		F+=("$C")
		med "$k" p99
		F+=("$M" "|")
	done
	if [ $has_rxe = 1 ]; then
		for c in "${gp_mcols[@]}"; do mratio "$c,lat,$2" "rxe,lat,$2" avg; F+=("$R"); done
		for c in "${gp_mcols[@]}"; do mratio "$c,lat,$2" "rxe,lat,$2"; F+=("$R"); done
	else
		unset 'F[-1]'
	fi
}
tcp_head() { F+=(TCP "TCP/0%"); }
tcp_row() { spread "tcp,tcp,$2"; mratio "tcp,tcp,$2" tcp,tcp,0; F+=("$C" "$R"); }

# print_table HEADER-FUNC ROW-FUNC ROWS...: the header and one line per
# row, each column right-aligned in its widest cell's width.
print_table() {
	local hf=$1 rf=$2 row x i j lines=() w=() F
	shift 2
	F=()
	"$hf"
	lines+=("$(IFS=$'\t'; echo "${F[*]}")")
	for row in "$@"; do
		F=()
		"$rf" "${row%%:*}" "${row#*:}"
		lines+=("$(IFS=$'\t'; echo "${F[*]}")")
	done
	for x in "${lines[@]}"; do
		IFS=$'\t' read -ra F <<< "$x"
		for j in "${!F[@]}"; do [ ${#F[$j]} -le "${w[$j]:-0}" ] || w[j]=${#F[$j]}; done
	done
	for i in "${!lines[@]}"; do
		IFS=$'\t' read -ra F <<< "${lines[$i]}"
		if [ "$i" = 0 ]; then
			printf '%-12s %8s |' test loss
		else
			row=${*:$i:1}
			printf '%-12s %8s |' "$(tool_of "${row%%:*}")" "$(loss_label "${row#*:}")"
		fi
		for j in "${!F[@]}"; do
			if [ "${F[$j]}" = "|" ]; then printf ' |'; else printf " %${w[$j]}s" "${F[$j]}"; fi
		done
		echo
	done
}

# The mroce counters each row moved (median over the rounds).
counter_table() {
	local row c k i s
	echo
	echo "mroce hw counters each row moved, both devices summed, median over the rounds"
	printf '%-13s %8s %-7s | %8s %8s %8s %8s %8s %8s %8s\n' test loss column resends RTOs PTOs \
		"SACK gap" "NAKs" "RNR NAKs" "dup req"
	for row in "${rdma_rows[@]}"; do
		for c in "${gp_mcols[@]}"; do
			k=$c,${row%%:*},${row#*:}
			s=()
			for i in 1 2 3 4 5 6 7; do med "$k" "ctr$i"; s+=("$M"); done
			printf '%-13s %8s %-7s | %8s %8s %8s %8s %8s %8s %8s\n' \
				"$(tool_of "${row%%:*}")" "$(loss_label "${row#*:}")" "$c" "${s[@]}"
		done
	done
	echo "(resends: retrans_pkts; RTOs/PTOs: rto_timeouts/pto_timeouts; SACK gap: sack_gaps;" \
		"NAKs: naks_rcvd; RNR NAKs: rcvd_rnr_err; dup req: duplicate_request; read at the end" \
		"of the traffic, before perftest's teardown; every round's values in rdma_bench_rounds.csv)"
	echo
	echo "NAKs received by code (naks_rcvd_<code>, both devices), median over the rounds;" \
		"teardown: NAKs after the traffic (not in the row)"
	printf '%-13s %8s %-7s | %5s %7s %6s %6s %7s %8s %8s %9s | %8s\n' test loss column RNR \
		INV_REQ ACCESS REM_OP PSN_WIN UNK_CONN UNK_STRM STALE_GEN teardown
	for row in "${rdma_rows[@]}"; do
		for c in "${gp_mcols[@]}"; do
			k=$c,${row%%:*},${row#*:}
			s=()
			for i in 8 9 10 11 12 13 14 15; do med "$k" "ctr$i"; s+=("$M"); done
			med "$k" down
			printf '%-13s %8s %-7s | %5s %7s %6s %6s %7s %8s %8s %9s | %8s\n' \
				"$(tool_of "${row%%:*}")" "$(loss_label "${row#*:}")" "$c" "${s[@]}" "$M"
		done
	done
}

# dist_table: each latency row's per-iteration distribution (lat_dists),
# median over the rounds, one line per column.
dist_table() {
	local row c k f
	local -a s
	echo
	echo "ib_write_lat per iteration (every iteration perftest -U lists), median of the rounds"
	printf '%-13s %8s %-7s | %8s %8s %8s %8s %8s | %7s %9s\n' test loss column p50 p90 p99 \
		max mean ">2x p50" ">500 us"
	for row in "${lat_rows[@]}"; do
		for c in "${cols[@]}"; do
			k=$c,lat,${row#*:}
			s=()
			for f in $IFIELDS; do med "$k" "$f"; s+=("$M"); done
			printf '%-13s %8s %-7s | %8s %8s %8s %8s %8s | %7s %9s\n' ib_write_lat \
				"$(loss_label "${row#*:}")" "$c" "${s[@]}"
		done
	done
	echo "(us, nearest-rank percentiles of all the sample's iterations, the two longest too (perftest's" \
		"avg and p99 above leave them out); >2x p50, >500 us: % of the iterations; every round in" \
		"rdma_bench_rounds.csv; A/B per round: lat_dist.py ab, docs/testing.md)"
}

# bars: the goodput medians as a bar chart, one scale for all of them.
bars() {
	local row c max=0 n bar lbl
	for row in "${bw_rows[@]}"; do
		for c in "${cols[@]}"; do
			med "$c,${row%%:*},${row#*:}"
			tenths "$M" && [ "$T" -gt "$max" ] && max=$T
		done
	done
	[ "$max" -gt 0 ] || return 0
	echo
	ratio "$max" 500
	echo "Goodput medians, Mb/s (# = $R Mb/s)"
	for row in "${bw_rows[@]}"; do
		for c in "${cols[@]}"; do
			med "$c,${row%%:*},${row#*:}"
			n=0
			tenths "$M" && n=$(( (T * 50 + max / 2) / max ))
			printf -v bar '%*s' "$n" ''
			printf -v lbl '%-12s %8s %-6s' "$(tool_of "${row%%:*}")" "$(loss_label "${row#*:}")" "$c"
			printf '%s |%-50s %s\n' "$lbl" "${bar// /#}" "$M"
		done
	done
}

# The markdown table (README-ready): medians (min-max), ratios of medians.
md_cell() { # md_cell KEY [FIELD]: C for markdown
	local st=${S[$1${2:+,$2}]}
	if [ -z "$st" ]; then C="—"; return; fi
	# shellcheck disable=SC2086 # four words
	set -- $st
	C="$1 ($2–$3)"
	[ "$4" -gt 1 ] || C=$1
	[ "$4" -ge "$ROUNDS" ] || C+=" [$4 of $ROUNDS]"
}
md_loss() { case $1 in n0) echo "0 %, netem qdisc" ;; *) echo "$1 %" ;; esac; }
# md_line LABEL TEST LOSS [FIELD]: one line of the markdown table.
md_line() {
	local t=$2 l=$3 f=${4:-} line c
	line="| $1 | $(md_loss "$l") |"
	for c in "${cols[@]}"; do md_cell "$c,$t,$l" $f; line+=" $C |"; done
	if [ $has_rxe = 1 ]; then
		for c in "${gp_mcols[@]}"; do mratio "$c,$t,$l" "rxe,$t,$l" $f; line+=" $R |"; done
	fi
	if [ ${#gp_mcols[@]} -gt 1 ]; then
		for c in "${gp_mcols[@]:1}"; do
			mratio "$c,$t,$l" "${gp_mcols[0]},$t,$l" $f
			line+=" $R |"
		done
	fi
	for c in "${cols[@]}"; do
		R=
		[ "$t" = lat ] || mratio "$c,$t,$l" "$c,$t,0"
		line+=" $R |"
	done
	if [ $has_n0 = 1 ]; then
		for c in "${cols[@]}"; do
			R=
			[ "$t" = lat ] || [ "$l" = 0 ] || [ "$l" = n0 ] || mratio "$c,$t,$l" "$c,$t,n0"
			line+=" $R |"
		done
	fi
	line=${line// - |/ — |}
	echo "${line//  |/ |}"
}
markdown() {
	local c row t l f head line m lo hi n
	head="| row | loss |"
	for c in "${cols[@]}"; do head+=" $c |"; done
	if [ $has_rxe = 1 ]; then for c in "${gp_mcols[@]}"; do head+=" $c/rxe |"; done; fi
	if [ ${#gp_mcols[@]} -gt 1 ]; then for c in "${gp_mcols[@]:1}"; do head+=" $c/${gp_mcols[0]} |"; done; fi
	for c in "${cols[@]}"; do head+=" $c kept |"; done
	if [ $has_n0 = 1 ]; then for c in "${cols[@]}"; do head+=" $c kept vs n0 |"; done; fi
	echo "$head"
	line=${head//[^|]/}
	line=${line//|/|---}
	echo "${line%---}"
	for row in "${rdma_rows[@]}"; do
		t=${row%%:*} l=${row#*:}
		if [ "$t" = lat ]; then
			md_line "64 B write latency, avg µs" "$t" "$l" avg
			md_line "64 B write latency per iteration, p50 µs" "$t" "$l" ip50
			md_line "64 B write latency per iteration, p90 µs" "$t" "$l" ip90
			md_line "64 B write latency per iteration, p99 µs" "$t" "$l" ip99
			md_line "64 B write latency per iteration, max µs" "$t" "$l" imax
			md_line "64 B write iterations > 2x p50, %" "$t" "$l" gt2x
			md_line "64 B write iterations > 500 µs, %" "$t" "$l" gt500
		else
			md_line "$t Mb/s" "$t" "$l"
		fi
	done
	echo
	echo "Median of $ROUNDS interleaved rounds (min–max); ratios are of medians; kept: of the" \
		"same column's 0 % row; 64 KiB RC, 1 QP, ${WINDOW} s measured per sample; latency 64 B," \
		"$LAT_ITERS iterations (avg: perftest's, without the two longest; per iteration: every" \
		"iteration perftest -U lists); [n of $ROUNDS]: only n rounds gave a result."
	if [ $has_rxe = 1 ]; then
		for row in "${lat_rows[@]}"; do
			for c in "${gp_mcols[@]}"; do
				# "median min max n" of the ratios (stats)
				R=-
				read -r m lo hi n <<< "${S[$c,lat,${row#*:},pratio]:-}"
				if [ -n "$n" ]; then
					R="$m ($n rounds)"
					[ "$n" -lt 2 ] || R="$m ($lo-$hi, $n rounds)"
				fi
				echo "64 B latency, $(md_loss "${row#*:}") loss: median of the per-round $c/rxe" \
					"ratios of the typical latency (samples of one round, back to back): $R."
			done
		done
	fi
	for row in "${tcp_rows[@]}"; do
		md_cell "tcp,tcp,${row#*:}"
		echo "Kernel TCP (iperf3, one stream$tcp_note), $(md_loss "${row#*:}") loss: $C Mb/s."
	done
	for c in "${gp_mcols[@]}"; do
		if [ -n "${vparams[$c]}" ]; then
			echo "$c: mroce with ${vparams[$c]}."
		elif [ ${#gp_mcols[@]} -gt 1 ]; then
			echo "$c: mroce as built, default parameters."
		fi
	done
	return 0
}

# The latency tries run_row discarded for their vCPU wait, and the rule.
discards() {
	local d c t l r a typ avg p99 pm ms w0 w1
	echo
	if [ -z "$FEED" ]; then
		echo "ib_write_lat re-runs: off (no host feed of the vCPU threads' wait: make bench gives one)"
		return 0
	fi
	echo "ib_write_lat re-run rule: a sample whose vCPU threads spent over $LAT_WAIT_MAX of the time they" \
		"wanted a host CPU queued for one (host schedstat run_delay / (run_delay + run time), over the" \
		"ping-pong, make bench's feed scripts/vcpu_feed.py) is run again, at most $LAT_RERUNS times; the" \
		"last try is kept whatever its wait (rdma_bench_rounds.csv: lat_vcpu_wait, lat_tries)." \
		"Discarded tries: ${#disc[@]}${disc:+ (typical/avg/p99 us, vCPU wait, window):}"
	for d in "${disc[@]}"; do
		read -r c t l r a typ avg p99 pm ms w0 w1 <<< "$d"
		share "$pm"
		printf '  %s %s loss %s round %s try %s: %s / %s / %s us, vCPU wait %s over %d.%03d s\n' "$c" \
			"$(tool_of "$t")" "$(loss_label "$l")" "$r" "$a" "$typ" "$avg" "$p99" "$R" \
			$((ms / 1000)) $((ms % 1000))
	done
	return 0
}

notes() {
	local k c t l
	for c in "${gp_mcols[@]}"; do
		if [ -n "${vparams[$c]}" ]; then
			echo "($c: mroce with ${vparams[$c]})"
		elif [ ${#gp_mcols[@]} -gt 1 ]; then
			echo "($c: mroce as built, default parameters)"
		fi
	done
	for k in $(printf '%s\n' "${!note[@]}" | sort); do
		IFS=, read -r c t l <<< "$k"
		echo "($c $(tool_of "$t") $(loss_label "$l"): left out of the median: ${note[$k]})"
	done
	return 0
}

lat_dists
stats
{
	echo
	echo "rdma_bench: median of $ROUNDS interleaved rounds (min-max); * = some rounds gave no result (why below)"
	if [ ${#bw_rows[@]} -gt 0 ] && [ ${#cols[@]} -gt 0 ]; then
		echo
		echo "Goodput in Mb/s (64 KiB RC, 1 QP, ${WINDOW}s measured; loss on the data direction)"
		print_table gp_head gp_row "${bw_rows[@]}"
		echo "(X/0%: of X's own 0 % row; X/n0: of X's own 0 % netem row, i.e. what loss recovery" \
			"keeps; ratios of medians; retx = median retrans_pkts of the data sender)"
	fi
	if [ ${#lat_rows[@]} -gt 0 ] && [ ${#cols[@]} -gt 0 ]; then
		echo
		echo "ib_write_lat, 64 B, $LAT_ITERS iterations, us, median of the rounds (loss on both directions)"
		print_table lat_head lat_row "${lat_rows[@]}"
		dist_table
	fi
	if [ ${#tcp_rows[@]} -gt 0 ]; then
		echo
		echo "Reference: kernel TCP (iperf3, one stream$tcp_note, ${DURATION}s), Mb/s"
		print_table tcp_head tcp_row "${tcp_rows[@]}"
	fi
	notes
	[ ${#lat_rows[@]} -eq 0 ] || [ ${#cols[@]} -eq 0 ] || discards
	bars
} | tee "$table"
[ ${#gp_mcols[@]} -gt 0 ] && counter_table >> "$table"
{
	markdown
	[ ${#lat_rows[@]} -eq 0 ] || [ ${#cols[@]} -eq 0 ] || discards
} > "$md"
echo
cat "$md"

# the per-iteration columns (lat_dists) come last, in IFIELDS' order
icols=lat_iter_p50_us,lat_iter_p90_us,lat_iter_p99_us,lat_iter_max_us,lat_iter_mean_us
icols+=,lat_iter_gt2x_pct,lat_iter_gt500us_pct
echo "driver,test,loss_pct,netem,size,window_s,rounds,ok_rounds,median,min,max,unit,lat_typical_us,lat_p99_us,mroce_params,note,$icols" > "$csv"
echo "driver,test,loss_pct,netem,round,size,window_s,goodput_mbps,iterations,lat_typical_us,lat_avg_us,lat_p99_us,sender_pkts,retransmissions,mroce_params,resends,rto,pto,sack_gaps,naks,rnr_naks,dup_requests,$(printf 'naks_rcvd_%s,' $NAK_CODES)teardown_naks,pin,srv_on_cpu0_pct,cli_on_cpu0_pct,same_cpu_pct,backlog_drops,time_squeezes,cpu_usr_sys_si_pct,t_start,t_end,$icols,lat_iters,lat_vcpu_wait,lat_vcpu_wait_s,lat_tries" > "$rcsv"
for c in "${cols[@]}" tcp; do
	for row in "${rows[@]}"; do
		t=${row%%:*} l=${row#*:}
		if [ "$c" = tcp ]; then [ "$t" = tcp ] || continue; else [ "$t" != tcp ] || continue; fi
		k=$c,$t,$l
		loss=${l#n} netem=0
		[ "$l" != 0 ] && netem=1
		f='' unit=Mb/s size=$SIZE win=$WINDOW typ='' p99='' ic=,,,,,,,
		case $t in
		lat)
			f=avg unit=us size=64 win=''
			med "$k"
			typ=$M
			med "$k" p99
			p99=$M
			ic=
			for i in $IFIELDS; do med "$k" "$i"; ic+=",${M#-}"; done
			;;
		tcp) size='' win=$DURATION ;;
		esac
		read -r m lo hi n <<< "${S[$k${f:+,$f}]}"
		echo "$c,$(tool_of "$t"),$loss,$netem,$size,$win,$ROUNDS,${n:-0},$m,$lo,$hi,$unit,$typ,$p99,\"${vparams[$c]}\",\"${note[$k]}\"$ic" >> "$csv"
		for r in $(seq "$ROUNDS"); do
			ctrs=,,,,,,,,,,,,,,,
			[ -n "${cnt[$k,$r]}" ] && ctrs=${cnt[$k,$r]// /,},${down[$k,$r]}
			read -r p1 p2 p3 p4 p5 p6 <<< "${place[$k,$r]:-- - - - -}"
			if [ "$t" = tcp ]; then ctrs+=",,,,,,,"; else ctrs+=",$PIN,$p1,$p2,$p3,$p4,$p5,$p6"; fi
			# the sample's wall-clock window (Unix seconds): make bench
			# matches it against what other host processes used then
			read -r w0 w1 <<< "${win[$k,$r]:-}"
			ctrs+=",$w0,$w1"
			if [ "$t" = lat ]; then
				for i in $IFIELDS; do ctrs+=",${rv[$k,$r,$i]}"; done
				ctrs+=",${rv[$k,$r,in]}"
				# the kept try's vCPU wait (run_row), and how many tries
				R=
				[ -z "${vw[$k,$r]:-}" ] || share "${vw[$k,$r]}"
				x=
				[ -z "${vws[$k,$r]:-}" ] || printf -v x '%d.%03d' $((vws[$k,$r] / 1000)) $((vws[$k,$r] % 1000))
				ctrs+=",$R,$x,${tries[$k,$r]:-}"
			else
				ctrs+=",,,,,,,,,,,"
			fi
			case $t in
			lat) echo "$c,ib_write_lat,$loss,$netem,$r,64,,,,${rv[$k,$r]},${rv[$k,$r,avg]},${rv[$k,$r,p99]},${txp[$k,$r]},${retx[$k,$r]},\"${vparams[$c]}\",$ctrs" ;;
			tcp) echo "tcp,iperf3,$loss,$netem,$r,,$DURATION,${rv[$k,$r]},,,,,,,,$ctrs" ;;
			*) echo "$c,ib_${t}_bw,$loss,$netem,$r,$SIZE,$WINDOW,${rv[$k,$r]},${rv[$k,$r,it]},,,,${txp[$k,$r]},${retx[$k,$r]},\"${vparams[$c]}\",$ctrs" ;;
			esac
		done >> "$rcsv"
	done
done
# every discarded latency try, with the window it ran in (make bench's
# host-load marker reads t_start/t_end)
dcsv=$MROCE_TEST_OUT/rdma_bench_discarded.csv
if [ ${#lat_rows[@]} -gt 0 ] && [ ${#cols[@]} -gt 0 ]; then
	echo "driver,test,loss_pct,netem,round,try,lat_typical_us,lat_avg_us,lat_p99_us,lat_vcpu_wait,lat_vcpu_wait_s,t_start,t_end" > "$dcsv"
	for d in "${disc[@]}"; do
		read -r c t l r a typ avg p99 pm ms w0 w1 <<< "$d"
		share "$pm"
		netem=0
		[ "$l" != 0 ] && netem=1
		printf '%s,ib_write_lat,%s,%s,%s,%s,%s,%s,%s,%s,%d.%03d,%s,%s\n' "$c" "${l#n}" "$netem" "$r" "$a" \
			"$typ" "$avg" "$p99" "$R" $((ms / 1000)) $((ms % 1000)) "$w0" "$w1"
	done >> "$dcsv"
fi
echo "rdma_bench: CSV $csv (medians) and $rcsv (every round); $(( $(date +%s) - t0 ))s"
dmesg_clean || echo "rdma_bench: WARNING: the kernel log shows problems (above)"
