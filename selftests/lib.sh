#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for mroce selftests (kselftest style: exit 0 pass, 1 fail, 4 skip).
# Source it from a test:   . "$(dirname "$0")/lib.sh"
#
# Reporting (KTAP-like subtests; the runner prefixes them with "# "):
#   ktap_ok DESC | ktap_fail DESC [WHY] | ktap_skip DESC WHY | ktap_info MSG
#   check DESC CMD...         subtest passes if CMD succeeds
#   check_fail DESC CMD...    subtest passes if CMD fails
#   check_eq DESC WANT GOT    subtest passes if the strings are equal
#   fails_with ERE CMD...     CMD fails and its output matches ERE (use with check)
#   ktap_finish               print the plan, exit 0/1 (or 4 if all skipped)
#   skip_all WHY              exit 4 now
# Waiting:
#   wait_for SECS CMD...      poll CMD every 0.1 s until it succeeds
#   exited PID                the process is gone or a zombie (wait_for 10 exited $pid)
#   tcp_listening PORT [NETNS] a TCP socket listens on PORT (wait_for 30 tcp_listening ...)
# Module and devices:
#   mroce_load [ko=PATH] [PARAM=VALUE...] / mroce_unload / mroce_loaded
#                             (ko=PATH: that module file, another build)
#   mroce_link_add NAME NETDEV [NETNS] / mroce_link_del NAME / rdma_dev_exists NAME
#   port_attr DEV ATTR        /sys/class/infiniband/DEV/ports/1/ATTR
#   port_active DEV           the port's state is ACTIVE
#   hw_counter DEV NAME       /sys/class/infiniband/DEV/ports/1/hw_counters/NAME
#   gid_list DEV              "index gid type netdev" for every non-zero GID
#   gid_of_ip ADDR            sysfs form of the GID of an IPv4/IPv6 address
#   has_gid DEV GID           DEV's table holds GID as a RoCE v2 entry
#   lacks_gid DEV GID         ... and the opposite
# Topologies (see selftests/README.md for diagrams):
#   topo_netns                netns a/b, veth va (a) <-> vb (b),
#                             10.0.0.1/24 fd00::1/64 on va, 10.0.0.2/24 fd00::2/64 on vb
#   mroce_pair_up             mroce loaded, log marked, topo_netns, mroce_a on va
#                             (netns a), mroce_b on vb (netns b), both with IPv4 GIDs
#   topo_policy [N]           one netns, N veth pairs veth<i>0/veth<i>1 with
#                             10.0.<i>.1/2, forced onto the wire by policy routing
#   nsexec NS CMD...          run CMD in netns NS ("" = init_net)
#   netem_set NS DEV ARGS... / netem_clear NS DEV
# Kernel log:
#   dmesg_mark                remember "now" in the kernel log
#   dmesg_since_mark          kernel log lines after the mark
#   dmesg_has PATTERN         the lines since the mark match an ERE
#   dmesg_clean               no warning/oops/stall/leak report since the mark
#                             (else prints each report's stack, see qemu/klog.py)
# mroce tracepoints (tracefs at $MROCE_TRACING, the trace in $MROCE_TRACING/trace):
#   mroce_trace_on [-f FILTER] EVENT...  the trace emptied, those events of
#                             events/mroce on (each with FILTER)
#   mroce_trace_off EVENT...  those events off, their filters cleared
# Benchmarks:
#   in_round_order R WORD...  the words, reversed in even rounds
#   in_round_rotation R WORD...  A/B columns: rotated per round pair, reversed in even rounds
#   bench_stats [-c] [-i ERE] [-r ERE]  "KEY VALUE" lines in, "KEY MEDIAN MIN MAX N" out
#   ab_rounds / ab_table      an A/B of rdma_bench over variants of the VM
#                             (clock_ab.sh, pin_ab.sh)

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

MROCE_SELFTESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MROCE_REPO=${MROCE_REPO:-$(cd "$MROCE_SELFTESTS_DIR/.." && pwd)}
MROCE_KO=${MROCE_KO:-$MROCE_REPO/drivers/infiniband/sw/mroce/mroce.ko}
MROCE_TEST_OUT=${MROCE_TEST_OUT:-$(mktemp -d)}

_ktap_n=0
_ktap_fail=0
_ktap_skip=0

# When each subtest ended, in milliseconds since lib.sh was sourced, beside
# its number and name: $MROCE_TEST_OUT/subtests.tsv (the VM run keeps it
# under build/vm/). Where a suite's wall time goes -- make check's slow
# ones -- without a change to the TAP output; a failed write is ignored.
_ktap_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
_ktap_t0=$(_ktap_ms)
_ktap_time() {
	{ printf '%d\t%d\t%s\n' "$_ktap_n" $(($(_ktap_ms) - _ktap_t0)) "$1" \
		>> "$MROCE_TEST_OUT/subtests.tsv"; } 2> /dev/null || true
}
ktap_info() { echo "# $*"; }
ktap_ok() { _ktap_n=$((_ktap_n + 1)); _ktap_time "$1"; echo "ok $_ktap_n $1"; }
ktap_fail() {
	_ktap_n=$((_ktap_n + 1)); _ktap_fail=$((_ktap_fail + 1))
	_ktap_time "$1"
	echo "not ok $_ktap_n $1${2:+ # $2}"
}
ktap_skip() {
	_ktap_n=$((_ktap_n + 1)); _ktap_skip=$((_ktap_skip + 1))
	_ktap_time "$1"
	echo "ok $_ktap_n $1 # SKIP $2"
}

ktap_finish() {
	echo "1..$_ktap_n"
	if [ "$_ktap_fail" -gt 0 ]; then
		echo "# $_ktap_fail of $_ktap_n subtests failed"
		exit $KSFT_FAIL
	fi
	if [ "$_ktap_n" -gt 0 ] && [ "$_ktap_skip" -eq "$_ktap_n" ]; then
		exit $KSFT_SKIP
	fi
	exit $KSFT_PASS
}

skip_all() {
	echo "# SKIP: $*"
	exit $KSFT_SKIP
}

# Run CMD, show its output indented on failure.
_run_logged() {
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	_last_output=$out
	return $rc
}

_show_output() {
	[ -n "$_last_output" ] && printf '%s\n' "$_last_output" | sed 's/^/#   /'
	return 0
}

check() {
	local desc=$1
	shift
	if _run_logged "$@"; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "command failed: $*"
		_show_output
	fi
}

check_fail() {
	local desc=$1
	shift
	if _run_logged "$@"; then
		ktap_fail "$desc" "command unexpectedly succeeded: $*"
		_show_output
	else
		ktap_ok "$desc"
	fi
}

# fails_with ERE CMD...: CMD fails and its output (stdout+stderr) matches ERE.
fails_with() {
	local pattern=$1 out
	shift
	out=$("$@" 2>&1) && { echo "$out"; return 1; }
	grep -Eq -- "$pattern" <<< "$out" || { echo "$out"; return 1; }
}

check_eq() {
	if [ "$2" = "$3" ]; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "want '$2', got '$3'"
	fi
}

wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	"$@" >/dev/null 2>&1
}

# A zombie counts as exited: kill -0 succeeds on one, and the shell that
# started the job need not have reaped it yet. No pid is an error, not
# "exited". Builtins only: wait_for polls it ten times a second.
exited() {
	local stat
	[ -n "$1" ] || return 1
	read -r stat 2> /dev/null < "/proc/$1/stat" || return 0
	stat=${stat##*) }
	[ "${stat:0:1}" = Z ]
}

tcp_listening() { nsexec "${2:-}" ss -Htln "sport = :$1" | grep -q .; }

require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip_all "$c not installed"
	done
}

require_root() {
	[ "$(id -u)" -eq 0 ] || skip_all "must run as root (in the test VM: make vmtest)"
}

# --- module and devices -----------------------------------------------------

mroce_loaded() { grep -q '^mroce ' /proc/modules; }
rxe_loaded() { grep -q '^rdma_rxe ' /proc/modules; }
# mroce_load [ko=PATH] [PARAM=VALUE...]: the installed mroce with those
# parameters, or the module file PATH (another build of it, for an A/B of
# code in one boot; relative to the repository; its dependencies come from
# the installed tree).
mroce_load() {
	local w ko='' deps a=()
	for w in "$@"; do
		case $w in
		ko=*) ko=${w#ko=} ;;
		*) a+=("$w") ;;
		esac
	done
	[ -n "$ko" ] || { modprobe mroce "${a[@]}"; return; }
	[[ $ko == /* ]] || ko=$MROCE_REPO/$ko
	deps=$(modinfo -F depends "$ko") || return 1
	# shellcheck disable=SC2086 # one word per module
	[ -z "$deps" ] || modprobe -a ${deps//,/ } || return 1
	insmod "$ko" "${a[@]}"
}
mroce_unload() { ! mroce_loaded || rmmod mroce; }
# mroce_param NAME: a module parameter's value; mroce_param NAME VALUE sets it.
mroce_param() {
	local f=/sys/module/mroce/parameters/$1

	if [ $# -eq 1 ]; then cat "$f"; else echo "$2" > "$f"; fi
}

rdma_dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

mroce_link_add() {
	local name=$1 ndev=$2 ns=${3:-}
	nsexec "$ns" rdma link add "$name" type mroce netdev "$ndev"
}

mroce_link_del() { rdma link delete "$1"; }

port_attr() { cat "/sys/class/infiniband/$1/ports/1/$2"; }
port_active() { [ "$(port_attr "$1" state 2>/dev/null)" = "4: ACTIVE" ]; }
hw_counter() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
# The NAK codes of the per-code hw counters naks_{sent,rcvd}_CODE.
MROCE_NAK_CODES="rnr invalid_request remote_access remote_op stream_psn_window
unknown_conn unknown_stream stale_gen"
# naks_by_code DEV sent|rcvd: the sum of DEV's per-code NAK counters.
naks_by_code() {
	local c n=0 v
	for c in $MROCE_NAK_CODES; do
		read -r v < "/sys/class/infiniband/$1/ports/1/hw_counters/naks_$2_$c" || return 1
		n=$((n + v))
	done
	echo "$n"
}

# One line per populated GID: "index gid type netdev", e.g.
# "1 0000:0000:0000:0000:0000:ffff:0a00:0001 RoCE_v2 va". Reads the table in
# a few processes: one per entry is far too slow in the VM.
gid_list() {
	local p=/sys/class/infiniband/$1/ports/1
	{
		(cd "$p/gids" && grep -s -H . -- *) | sed 's/^/gid:/'
		(cd "$p/gid_attrs/types" && grep -s -H . -- *) | sed 's/^/type:/'
		(cd "$p/gid_attrs/ndevs" && grep -s -H . -- *) | sed 's/^/ndev:/'
	} | awk -F: '
		{ kind = $1; idx = $2; val = substr($0, length(kind) + length(idx) + 3) }
		kind == "gid" && val != "0000:0000:0000:0000:0000:0000:0000:0000" { gid[idx] = val }
		kind == "type" { gsub(/ /, "_", val); type[idx] = val }
		kind == "ndev" { ndev[idx] = val }
		END { for (i in gid) print i, gid[i], type[i], ndev[i] }' | sort -n
}

# The sysfs form of the RoCE v2 GID for an IPv4 or IPv6 address.
gid_of_ip() {
	local ip=$1 head tail groups i n out=
	if [[ $ip == *.* ]]; then
		IFS=. read -r a b c d <<< "$ip"
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$a" "$b" "$c" "$d"
		return
	fi
	if [[ $ip == *::* ]]; then
		head=${ip%%::*} tail=${ip#*::}
		n=0
		[ -n "$head" ] && n=$((n + $(tr -cd : <<< "$head" | wc -c) + 1))
		[ -n "$tail" ] && n=$((n + $(tr -cd : <<< "$tail" | wc -c) + 1))
		groups=$head
		for ((i = n; i < 8; i++)); do groups=${groups:+$groups:}0; done
		[ -n "$tail" ] && groups=$groups:$tail
	else
		groups=$ip
	fi
	IFS=: read -ra g <<< "$groups"
	for i in "${g[@]}"; do out=${out:+$out:}$(printf '%04x' "0x$i"); done
	echo "$out"
}

lacks_gid() { ! has_gid "$@"; }

# Does DEV have GID (full sysfs form) of type RoCE v2 on its table?
has_gid() { gid_list "$1" | awk -v g="$2" '$2 == g && $3 == "RoCE_v2" { f = 1 } END { exit !f }'; }

# --- topologies ------------------------------------------------------------

nsexec() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

#   netns a                     netns b
#   va 10.0.0.1/24 fd00::1/64 --- vb 10.0.0.2/24 fd00::2/64
topo_netns() {
	ip netns add a && ip netns add b || return 1
	ip link add va netns a type veth peer name vb netns b || return 1
	nsexec a ip addr add 10.0.0.1/24 dev va
	nsexec b ip addr add 10.0.0.2/24 dev vb
	nsexec a ip addr add fd00::1/64 dev va nodad
	nsexec b ip addr add fd00::2/64 dev vb nodad
	nsexec a ip link set lo up
	nsexec b ip link set lo up
	nsexec a ip link set va up && nsexec b ip link set vb up
}

topo_netns_cleanup() {
	ip netns del a 2>/dev/null
	ip netns del b 2>/dev/null
	return 0
}

# mroce loaded, log marked, topo_netns with mroce_a on va (netns a) and
# mroce_b on vb (netns b), both ports ACTIVE with their IPv4 GIDs (a port
# follows its veth's carrier, which comes up a moment after the link).
mroce_pair_up() {
	mroce_load
	dmesg_mark
	topo_netns
	mroce_link_add mroce_a va a
	mroce_link_add mroce_b vb b
	wait_for 5 has_gid mroce_a "$(gid_of_ip 10.0.0.1)"
	wait_for 5 has_gid mroce_b "$(gid_of_ip 10.0.0.2)"
	wait_for 5 port_active mroce_a
	wait_for 5 port_active mroce_b
}

# Both ends in init_net; policy routing makes 10.0.i.1 <-> 10.0.i.2 cross the
# veth instead of the local table (the only way rxe works on 6.1).
topo_policy() {
	local n=${1:-1} i a b
	sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.all.accept_local=1 net.ipv4.conf.default.accept_local=1
	ip rule add pref 1000 lookup local 2>/dev/null
	ip rule del pref 0 lookup local 2>/dev/null
	for ((i = 0; i < n; i++)); do
		a=veth${i}0 b=veth${i}1
		ip link add "$a" type veth peer name "$b" || return 1
		sysctl -qw "net.ipv4.conf.$a.rp_filter=0" "net.ipv4.conf.$b.rp_filter=0" \
			"net.ipv4.conf.$a.accept_local=1" "net.ipv4.conf.$b.accept_local=1"
		ip addr add "10.0.$i.1/24" dev "$a"
		ip addr add "10.0.$i.2/24" dev "$b"
		ip link set "$a" up && ip link set "$b" up
		ip route add "10.0.$i.2/32" dev "$a" src "10.0.$i.1" table 100
		ip route add "10.0.$i.1/32" dev "$b" src "10.0.$i.2" table 100
		ip rule add pref 100 iif lo from "10.0.$i.1" to "10.0.$i.2" lookup 100
		ip rule add pref 100 iif lo from "10.0.$i.2" to "10.0.$i.1" lookup 100
	done
}

topo_policy_cleanup() {
	local i
	for ((i = 0; i < ${1:-1}; i++)); do
		ip link del "veth${i}0" 2>/dev/null
	done
	while ip rule del pref 100 2>/dev/null; do :; done
	ip route flush table 100 2>/dev/null
	ip rule add pref 0 lookup local 2>/dev/null
	ip rule del pref 1000 lookup local 2>/dev/null
	return 0
}

netem_set() {
	local ns=$1 dev=$2
	shift 2
	nsexec "$ns" tc qdisc replace dev "$dev" root netem "$@"
}

netem_clear() { nsexec "$1" tc qdisc del dev "$2" root 2>/dev/null; return 0; }

# netem_loss NS DEV LEVEL: the benches' and ULP tests' loss levels in one
# place: 0 is no qdisc at all, nL a netem qdisc losing L % (n0: one that
# loses nothing but still queues every packet), L the same as nL.
netem_loss() {
	if [ "$3" = 0 ]; then
		netem_clear "$1" "$2"
	else
		netem_set "$1" "$2" loss "${3#n}%"
	fi
}

# --- kernel log --------------------------------------------------------------

_dmesg_mark=

dmesg_mark() {
	_dmesg_mark="mroce-test-mark-$$-$RANDOM-$(date +%s%N)"
	echo "$_dmesg_mark" > /dev/kmsg
}

dmesg_since_mark() {
	if [ -z "$_dmesg_mark" ]; then
		dmesg
	else
		dmesg | sed -n "/$_dmesg_mark/,\$p" | sed 1d
	fi
}

dmesg_has() { dmesg_since_mark | grep -Eq -- "$1"; }

# The same check as the runner's (qemu/klog.py): each report's first line
# and stack frames, bounded, repeats counted.
dmesg_clean() {
	dmesg_since_mark | python3 "$MROCE_SELFTESTS_DIR/qemu/klog.py" --max-lines 60 |
		sed 's/^/#   /'
	return "${PIPESTATUS[1]}"
}

# --- mroce tracepoints ----------------------------------------------------------

MROCE_TRACING=/sys/kernel/tracing

# mroce_trace_on [-f FILTER] EVENT...: an empty trace, those events on
# (events already on stay on). Returns 1, changing nothing, when tracefs
# or the mroce events are not there (rdma_rxe runs); 1 also when an event
# or its filter was refused, the rest then still on.
mroce_trace_on() {
	local filter='' e rc=0 ev=$MROCE_TRACING/events/mroce

	if [ "${1:-}" = -f ]; then
		filter=$2
		shift 2
	fi
	[ -w "$MROCE_TRACING/trace" ] && [ -d "$ev" ] || return 1
	echo 0 > "$MROCE_TRACING/tracing_on"
	: > "$MROCE_TRACING/trace"
	for e in "$@"; do
		if [ -n "$filter" ]; then
			echo "$filter" > "$ev/$e/filter" || rc=1
		fi
		echo 1 > "$ev/$e/enable" || rc=1
	done
	echo 1 > "$MROCE_TRACING/tracing_on"
	return $rc
}

# mroce_trace_off EVENT...: those events off and unfiltered (writing 0 to a
# filter file removes the filter); the trace stays for reading.
mroce_trace_off() {
	local e rc=0 ev=$MROCE_TRACING/events/mroce

	[ -d "$ev" ] || return 1
	for e in "$@"; do
		echo 0 > "$ev/$e/enable" || rc=1
		echo 0 > "$ev/$e/filter" || rc=1
	done
	return $rc
}

# --- benchmarks ----------------------------------------------------------------

# in_round_order R WORD...: the words one per line (a word may hold spaces),
# as given in odd rounds and reversed in even ones, so that a slow start or
# a drifting host does not always hit the same column of an interleaved A/B.
in_round_order() {
	local r=$1 i
	shift
	if [ $((r % 2)) -eq 1 ]; then
		printf '%s\n' "$@"
	else
		for ((i = $#; i > 0; i--)); do printf '%s\n' "${!i}"; done
	fi
}

# in_round_rotation R WORD...: the columns of an A/B (several builds or
# parameter sets) one per line, in an order that gives every column every
# place in the round alike: round pair p (rounds 2p+1, 2p+2) rotates the
# words by p, and the pair's second round reverses its first (A B C, C B A;
# B C A, A C B; C A B, B A C; ...). Over 2n rounds each of n columns runs
# in each place twice, and drift within a pair hits both sides alike
# (ABBA). in_round_order only reverses: of three or more columns the
# middle ones never ran first or last, so an effect of the place in the
# round (after the module swap, before the next driver) stuck to them.
in_round_rotation() {
	local r=$1 n=$(($# - 1)) s i
	shift
	[ "$n" -gt 0 ] || return 0
	local -a w=("$@") o=()
	s=$(((r - 1) / 2 % n))
	for ((i = 0; i < n; i++)); do o+=("${w[(s + i) % n]}"); done
	in_round_order "$r" "${o[@]}"
}

# bench_stats [-c] [-i ERE] [-r ERE]: the statistics of the rounds, one awk
# run for every key. In: "KEY VALUE" lines in any order (KEY without blanks,
# VALUE a number). Out, sorted by KEY: "KEY MEDIAN MIN MAX N" (the median of
# an even N is the mean of the middle two). Numbers print with one decimal,
# those of keys matching the -i ERE as integers, those of keys matching the
# -r ERE (ratios) with two, rounded half away from zero (the mean of 1.25
# and 1.30 prints 1.28, not the 1.27 of binary 1.2749...); -c prints whole
# numbers without decimals.
# selftests/bench/bench_stats_test.py holds its known answers.
bench_stats() {
	local compact=0 ints='^$' hund='^$'
	while [ $# -gt 0 ]; do
		case $1 in
		-c) compact=1 ;;
		-i) ints=$2; shift ;;
		-r) hund=$2; shift ;;
		esac
		shift
	done
	sort -k1,1 -k2,2g | awk -v ints="$ints" -v hund="$hund" -v compact=$compact '
		function hundredths(x,  a) {
			a = (x < 0) ? -x : x
			a = int(a * 100 + 0.5 + 1e-9) / 100
			return (x < 0) ? -a : a
		}
		function fmt(x) {
			if (k ~ ints) return sprintf("%d", x)
			if (k ~ hund) return sprintf("%.2f", hundredths(x))
			return (compact && x == int(x)) ? sprintf("%d", x) : sprintf("%.1f", x)
		}
		function flush() {
			if (n) {
				m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
				printf "%s %s %s %s %d\n", k, fmt(m), fmt(v[1]), fmt(v[n]), n
			}
			n = 0
		}
		$1 != k { flush(); k = $1 }
		{ v[++n] = $2 + 0 }
		END { flush() }'
}

# ab_rounds ROUNDS SELECT RCSV VARIANT...: an A/B of a property of the VM
# that rdma_bench cannot switch itself (the clocksource, where perftest
# runs, ...). In each of ROUNDS rounds, for each VARIANT (reversed in even
# rounds): "SELECT VARIANT" (a function of the caller: make it so, or fail),
# then one round of rdma_bench (its BENCH_ROWS, BENCH_DRIVERS, ...: each
# driver loaded afresh) into $MROCE_TEST_OUT/VARIANT-rROUND/. Its progress
# lines and every line that looks like an error go to the terminal (the
# whole output to rdma_bench.log there); its samples are appended to RCSV as
# variant,round,driver,test,loss_pct,value,unit (64 B latency as the tests
# lat_typ and lat_avg). Fails if SELECT does.
ab_rounds() {
	local rounds=$1 select=$2 rcsv=$3 r v dir rc order
	shift 3
	echo "variant,round,driver,test,loss_pct,value,unit" > "$rcsv"
	for r in $(seq "$rounds"); do
		mapfile -t order <<< "$(in_round_order "$r" "$@")"
		for v in "${order[@]}"; do
			"$select" "$v" || return 1
			echo "ab: round $r/$rounds, $v"
			dir=$MROCE_TEST_OUT/$v-r$r
			mkdir -p "$dir"
			MROCE_TEST_OUT=$dir BENCH_ROUNDS=1 bash "$MROCE_SELFTESTS_DIR/bench/rdma_bench.sh" 2>&1 |
				tee "$dir/rdma_bench.log" |
				grep --line-buffered -Ei '^\[|^#|error|fail|warn|bad |must|unknown|refus|cannot|could not|no such' |
				sed -u "s/^/[$v] /"
			rc=${PIPESTATUS[0]}
			[ "$rc" = 0 ] || echo "[$v] rdma_bench exited $rc; its output: $dir/rdma_bench.log"
			# driver,test,loss_pct,netem,round,size,window_s,goodput_mbps,
			# iterations,lat_typical_us,lat_avg_us,...
			awk -F, -v v="$v" -v r="$r" 'NR > 1 && $2 != "iperf3" {
				if ($2 == "ib_write_lat") {
					if ($10 != "") printf "%s,%s,%s,lat_typ,%s,%s,us\n", v, r, $1, $3, $10
					if ($11 != "") printf "%s,%s,%s,lat_avg,%s,%s,us\n", v, r, $1, $3, $11
				} else if ($8 != "") {
					printf "%s,%s,%s,%s,%s,%s,Mb/s\n", v, r, $1, $2, $3, $8
				}
			}' "$dir/rdma_bench_rounds.csv" >> "$rcsv" 2> /dev/null
		done
	done
}

# ab_table RCSV WHAT VARIANT...: each row's median (min-max, n) per variant
# and the ratios of the medians to the first variant's.
ab_table() {
	local rcsv=$1 what=$2 v
	shift 2
	echo "$what: median of the interleaved rounds (min-max, n rounds) per variant;" \
		"ratios of medians to $1"
	printf '%-30s' row
	for v; do printf ' %26s' "$v"; done
	for v in "${@:2}"; do printf ' %10s' "$v/$1"; done
	echo
	awk -F, 'NR > 1 { printf "%s|%s|%s|%s|%s %s\n", $3, $4, $5, $7, $1, $6 }' "$rcsv" |
		bench_stats | awk -v vs="$*" '
		{
			split($1, f, "|")
			row = f[1] " " f[2] " " f[3] "% (" f[4] ")"
			rows[row] = 1
			med[row, f[5]] = $2
			cell[row, f[5]] = sprintf("%s (%s-%s) n=%d", $2, $3, $4, $5)
		}
		END {
			nv = split(vs, v, " ")
			for (row in rows) {
				printf "%-30s", row
				for (i = 1; i <= nv; i++) {
					c = "-"
					if ((row, v[i]) in cell) c = cell[row, v[i]]
					printf " %26s", c
				}
				for (i = 2; i <= nv; i++) {
					c = "-"
					if (((row, v[1]) in med) && ((row, v[i]) in med) && med[row, v[1]] > 0)
						c = sprintf("%.2f", med[row, v[i]] / med[row, v[1]])
					printf " %10s", c
				}
				printf "\n"
			}
		}' | sort
	echo "(Mb/s: goodput, higher is better; us: 64 B ib_write_lat typical/avg, lower is better)"
}
