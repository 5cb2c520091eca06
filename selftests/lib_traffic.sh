#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for selftests that move RDMA traffic between two endpoints (after
# lib.sh). Work for mroce and for rdma_rxe, so the tools are validated on
# rxe too.
#
#   transport_ready NS DEV     mroce DEV in NS can carry traffic; prints why not
#   gid_index DEV IP           GID table index of IP's RoCE v2 GID on DEV
#   ipv4_gid_index DEV         GID table index of DEV's IPv4 (RoCE v2) GID
#   family_gid_index DEV 4|6   ... of its IPv4 or global IPv6 (RoCE v2) GID
#   perftest_pair NSA DEVA NSB DEVB SERVER_IP TOOL ARGS...
#                              a perftest or ibv_*_pingpong TOOL: server on DEVB
#                              (NSB), client on DEVA (NSA) connecting to
#                              SERVER_IP, each on its IPv4 GID; both must pass.
#                              Knobs (environment): PERFTEST_LOG, the logs
#                              $MROCE_TEST_OUT/$PERFTEST_LOG.{server,client}
#                              (default "perftest"); PERFTEST_TIMEOUT (180 s);
#                              PERFTEST_PORT, the out-of-band TCP port (18515;
#                              two pairs at once need two); PERFTEST_GID_FAMILY
#                              4 (default) or 6: each side's IPv6 GID instead;
#                              PERFTEST_CPUS "S C": the server runs on CPU S,
#                              the client on CPU C (taskset; "" = anywhere);
#                              PERFTEST_BEFORE_CLIENT, a command run once the
#                              server listens, just before the client starts
#                              (a profiler's start: no setup in its window)
#   mroce_pair_run TOOL ARGS...
#                              perftest_pair over mroce_pair_up's topology:
#                              server on mroce_b (netns b), client on mroce_a,
#                              to 10.0.0.2; logs pair-<subtest>-TOOL.* unless
#                              PERFTEST_LOG says otherwise
#   PERFTEST_OPTS              options every perftest (ib_*) run needs here;
#                              perftest_pair adds them, other callers must too
#   rc_pingpong NSA DEVA NSB DEVB SERVER_IP ARGS...
#                              perftest_pair with ibv_rc_pingpong
#   verify_pair NSA DEVA NSB DEVB SERVER_IP ARGS...
#                              mroce_verify between the two (server on B)
#   bench_driver_up DRV [PARAM...]
#                              the benchmarks' devices (after topo_policy 1):
#                              DRV (rxe, or mroce with mroce_load's PARAMs)
#                              loaded, dev0 on veth00 and dev1 on veth01,
#                              their IPv4 GIDs there; bench_driver_down
#                              deletes both and unloads rdma_rxe and mroce
#   build_tools TOOL...        selftests/tools programs: the host's build/tools
#                              if up to date, else built into $MROCE_TEST_OUT/bin;
#                              sets MROCE_TOOLS, or tools_why on failure

MROCE_TOOLS=${MROCE_TOOLS:-$MROCE_TEST_OUT/bin}

# The transport opens its UDP socket (default port 61791, module parameter
# udp_port) when a device is created; until the transport exists nothing
# listens there and traffic tests skip rather than fail.
transport_ready() {
	local ns=$1 dev=$2 port=61791
	[ -r /sys/module/mroce/parameters/udp_port ] &&
		port=$(cat /sys/module/mroce/parameters/udp_port)
	if ! nsexec "$ns" ss -Huln "sport = :$port" | grep -q .; then
		echo "the mroce transport has not landed: no UDP socket on port $port for $dev"
		return 1
	fi
}

gid_index() {
	local want
	want=$(gid_of_ip "$2")
	wait_for 5 has_gid "$1" "$want" || return 1
	gid_list "$1" | awk -v g="$want" '$2 == g && $3 == "RoCE_v2" { print $1; exit }'
}

# The GID index of DEV's (first) IPv4 address (::ffff:a.b.c.d) or global
# IPv6 address (not fe80::), RoCE v2. perftest_pair asks twice per run: a
# few processes here, not gid_list's dozen (seconds under TCG).
family_gid_index() {
	local p=/sys/class/infiniband/$1/ports/1 re f i t best=
	case $2 in
	4) re='^0000:0000:0000:0000:0000:ffff:' ;;
	6) re='^([1-9a-eA-E]|f[0-9a-dA-D]|fe[0-7])' ;;	# not ::, ::ffff:, fe80::/10
	*) return 1 ;;
	esac
	wait_for 5 grep -Eqs "$re" "$p"/gids/* || return 1
	for f in $(grep -Els "$re" "$p"/gids/*); do
		i=${f##*/}
		read -r t < "$p/gid_attrs/types/$i" 2> /dev/null || continue
		[ "$t" = "RoCE v2" ] || continue
		{ [ -z "$best" ] || [ "$i" -lt "$best" ]; } && best=$i
	done
	[ -n "$best" ] && echo "$best"
}
ipv4_gid_index() { family_gid_index "$1" 4; }

# perftest calibrates its cycle counter against gettimeofday() after the
# transfer, to turn cycles into bandwidth. Under TCG on a loaded host the
# fit often fails ("Correlation coefficient r^2 < 0.9"); perftest then
# exits 1 ("Can't produce a report") after a complete transfer, and the
# server, left without the closing handshake, fails too. -F makes it report
# anyway: the exit status then speaks of the transfer alone, the row's
# #bytes and #iterations stay right and its bandwidth columns read 0 (the
# latency tools print inf whether or not -F is given).
PERFTEST_OPTS=(-F)

# perftest and the pingpongs exit non-zero on an error completion or a
# stall; neither checks data (mroce_verify does). The client starts once
# the server listens on its TCP port (the VM may be slow to start it).
perftest_pair() {
	local nsa=$1 deva=$2 nsb=$3 devb=$4 ip=$5 tool=$6 gopt=-x ga gb spid rc src
	local log=$MROCE_TEST_OUT/${PERFTEST_LOG:-perftest} tmo=${PERFTEST_TIMEOUT:-180}
	local port=${PERFTEST_PORT:-18515} fam=${PERFTEST_GID_FAMILY:-4} scpu ccpu spin=() cpin=()
	shift 6
	read -r scpu ccpu <<< "${PERFTEST_CPUS:-}"
	[ -z "$scpu" ] || spin=(taskset -c "$scpu")
	[ -z "$ccpu" ] || cpin=(taskset -c "$ccpu")
	if [[ $tool == ibv_* ]]; then
		gopt=-g
	else
		set -- "${PERFTEST_OPTS[@]}" "$@"
	fi
	[ "$port" = 18515 ] || set -- -p "$port" "$@"
	gb=$(family_gid_index "$devb" "$fam") && ga=$(family_gid_index "$deva" "$fam") || {
		echo "no IPv$fam GID on $deva or $devb"
		return 1
	}
	nsexec "$nsb" timeout "$tmo" "${spin[@]}" "$tool" -d "$devb" "$gopt" "$gb" "$@" > "$log.server" 2>&1 &
	spid=$!
	wait_for 30 tcp_listening "$port" "$nsb"
	[ -z "${PERFTEST_BEFORE_CLIENT:-}" ] || $PERFTEST_BEFORE_CLIENT
	nsexec "$nsa" timeout "$tmo" "${cpin[@]}" "$tool" -d "$deva" "$gopt" "$ga" "$@" "$ip" > "$log.client" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	[ $src -eq 0 ] || rc=1
	_last_output=$(tail -n 4 "$log.client"; tail -n 4 "$log.server")
	[ $rc -eq 0 ] || printf '%s\n' "$_last_output" | sed 's/^/#   /'
	return $rc
}

mroce_pair_run() {
	PERFTEST_LOG=${PERFTEST_LOG:-pair-$_ktap_n-$1} \
		perftest_pair a mroce_a b mroce_b 10.0.0.2 "$@"
}

rc_pingpong() {
	local args=("$@")
	PERFTEST_LOG=pingpong perftest_pair "${args[@]:0:5}" ibv_rc_pingpong "${args[@]:5}"
}

# The benchmarks' devices: rdma_rxe or mroce (which refuses to coexist
# with rxe, so the other is unloaded first) on topo_policy's veth pair.
bench_driver_up() { # bench_driver_up DRV [PARAM...]
	case $1 in
	rxe)
		mroce_unload
		modprobe rdma_rxe || return 1
		rdma link add dev0 type rxe netdev veth00 &&
			rdma link add dev1 type rxe netdev veth01
		;;
	mroce)
		rmmod rdma_rxe 2> /dev/null
		mroce_load "${@:2}" || return 1
		mroce_link_add dev0 veth00 && mroce_link_add dev1 veth01
		;;
	*) false ;;
	esac || return 1
	wait_for 5 has_gid dev0 "$(gid_of_ip 10.0.0.1)" && wait_for 5 has_gid dev1 "$(gid_of_ip 10.0.0.2)" ||
		return 1
	[ "$1" = rxe ] || transport_ready "" dev0 > /dev/null
}

# bench_sent_pkts VAR: packets bench_driver_up's two devices sent so far
# (their sent_pkts), read by builtins only, so that a profile window does
# not fork a process of its own to count.
bench_sent_pkts() {
	local _a=0 _b=0 _hw=/sys/class/infiniband
	read -r _a < "$_hw/dev0/ports/1/hw_counters/sent_pkts"
	read -r _b < "$_hw/dev1/ports/1/hw_counters/sent_pkts"
	printf -v "$1" '%s' "$((_a + _b))"
}

# bench_counts NAME VALUE...: exit with "NAME: 'V' is not a positive
# number" unless every VALUE is one (the benches' knobs).
bench_counts() {
	local name=$1 v
	shift
	for v; do
		[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "$name: '$v' is not a positive number"; exit 1; }
	done
}

# bench_param_sets: mroce's parameter sets of BENCH_MROCE_PARAMS, split at
# '|', into the array psets (one column each: mroce, mroce2, ...); no
# sets is one empty set, and "a |" has an empty second one (mroce as
# installed), which read drops.
bench_param_sets() {
	IFS='|' read -ra psets <<< "${BENCH_MROCE_PARAMS:-}"
	[[ ${BENCH_MROCE_PARAMS:-} =~ \|$ ]] && psets+=("")
	[ ${#psets[@]} -gt 0 ] || psets=("")
}

# bench_nap_init NAME: define nap SECS, a sleep without a process (a read
# that times out on the FIFO /tmp/NAME.tick, which nobody writes), so
# that a timed window forks nothing; plain sleep if no FIFO can be made.
bench_nap_init() {
	local f=/tmp/$1.tick
	bench_tick=
	if mkfifo "$f" 2> /dev/null || [ -p "$f" ]; then
		exec {bench_tick}<> "$f"
	fi
}
nap() {
	if [ -n "${bench_tick:-}" ]; then read -r -t "$1" -u "$bench_tick"; else sleep "$1"; fi
	return 0
}

bench_driver_down() {
	rdma link delete dev0 2> /dev/null
	rdma link delete dev1 2> /dev/null
	rmmod rdma_rxe mroce 2> /dev/null
	return 0
}

# Run CMD DRV for each driver of DRIVERS (words), each brought up afresh
# (mroce with the module parameters of MPARAMS, words) and taken down
# after. A driver that does not come up is reported ("NAME: DRV: setup
# failed") and skipped. Fails if any setup or CMD did.
bench_each_driver() { # bench_each_driver NAME DRIVERS MPARAMS CMD
	local name=$1 drivers=$2 mparams=$3 cmd=$4 drv rc=0
	for drv in $drivers; do
		# shellcheck disable=SC2086 # one word per parameter
		if [ "$drv" = mroce ]; then set -- $mparams; else set --; fi
		if ! bench_driver_up "$drv" "$@"; then
			echo "$name: $drv: setup failed"
			bench_driver_down
			rc=1
			continue
		fi
		"$cmd" "$drv" || rc=1
		bench_driver_down
	done
	return $rc
}

# shellcheck disable=SC2034 # tools_why is for the caller
build_tools() {
	tools_why=
	[ -e /usr/include/infiniband/verbs.h ] || {
		tools_why="libibverbs-dev is not installed (make deps)"
		return 1
	}
	# vmrun.py builds them on the host (build/tools) before booting: a
	# compile under TCG takes over a minute. Use those if up to date.
	if make -q -s -C "$MROCE_SELFTESTS_DIR/tools" O="$MROCE_REPO/build/tools" "$@" 2> /dev/null; then
		MROCE_TOOLS=$MROCE_REPO/build/tools
		return 0
	fi
	make -s -C "$MROCE_SELFTESTS_DIR/tools" O="$MROCE_TOOLS" "$@" \
		> "$MROCE_TEST_OUT/build-tools.log" 2>&1 || {
		tools_why=$(head -c 600 "$MROCE_TEST_OUT/build-tools.log")
		return 1
	}
}

# mroce_verify server on DEVB in NSB, client on DEVA in NSA; the client
# connects its out-of-band TCP to SERVER_IP. Logs: $MROCE_TEST_OUT/verify-N-
# {client,server}.log, N counting runs (check runs us in a subshell, so the
# count lives in a file); verify_last prints the newest prefix.
verify_last() { echo "$MROCE_TEST_OUT/verify-$(cat "$MROCE_TEST_OUT/.verify_n")"; }
# A verifier killed by a signal says so in its own log (its crash handler
# reported where; this names the signal for the shell's view of it).
verify_died() { # verify_died ROLE STATUS LOG
	[ "$2" -gt 128 ] || return 0
	echo "mroce_verify: the $1 was killed by signal $(( $2 - 128 )) (SIG$(kill -l $(( $2 - 128 )) 2> /dev/null))" >> "$3"
}

verify_pair() {
	local nsa=$1 deva=$2 nsb=$3 devb=$4 ip=$5 spid rc src tag n
	shift 5
	n=$(( $(cat "$MROCE_TEST_OUT/.verify_n" 2>/dev/null || echo 0) + 1 ))
	echo "$n" > "$MROCE_TEST_OUT/.verify_n"
	tag=verify-$n
	nsexec "$nsb" "$MROCE_TOOLS/mroce_verify" -d "$devb" "$@" \
		> "$MROCE_TEST_OUT/$tag-server.log" 2>&1 &
	spid=$!
	nsexec "$nsa" "$MROCE_TOOLS/mroce_verify" -d "$deva" -c "$ip" "$@" \
		> "$MROCE_TEST_OUT/$tag-client.log" 2>&1
	rc=$?
	verify_died client $rc "$MROCE_TEST_OUT/$tag-client.log"
	wait "$spid" || { src=$?; rc=1; verify_died server $src "$MROCE_TEST_OUT/$tag-server.log"; }
	_last_output=$(tail -n 5 "$MROCE_TEST_OUT/$tag-client.log"; tail -n 5 "$MROCE_TEST_OUT/$tag-server.log")
	[ $rc -eq 0 ] || printf '%s\n' "$_last_output" | sed 's/^/#   /'
	return $rc
}

# report_lines FILE [PREFIX]: turn a tool's "ok<TAB>what" / "fail<TAB>what<TAB>why"
# lines into subtests named PREFIXwhat
# (other lines become ktap_info). Returns 1 if any line failed.
report_lines() {
	local st desc why rc=0
	while IFS=$'\t' read -r st desc why; do
		case $st in
		ok) ktap_ok "${2:-}$desc" ;;
		fail) ktap_fail "${2:-}$desc" "$why"; rc=1 ;;
		'# '*) ktap_info "${st#\# }${desc:+ $desc}" ;;
		*) [ -n "$st" ] && ktap_info "$st${desc:+ $desc}${why:+ $why}" ;;
		esac
	done < "$1"
	return $rc
}
