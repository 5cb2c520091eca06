#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: every selftests/bench/*.sh (or BENCH="name ...";
# BENCH_NVMEOF=0 leaves nvmeof_bench out) in one VM boot. The terminal gets
# each benchmark's progress lines and tables; the results of this run, and
# only of this run, go to build/bench/:
#   <bench>.txt, <bench>.csv   each benchmark's table and CSV
#   rdma_bench.md              rdma_bench's table in markdown
#   rdma_bench_rounds.csv      every round's sample
#   rdma_bench_lat.txt         the 64 B latency A/B round by round (two or
#                              more columns: rxe and mroce, or two builds)
#                              (rdma_bench.txt and .md end with the A/B
#                              verdicts: lat_dist.py verdict)
#   rdma_bench.png             goodput against loss (if gnuplot is installed)
#   run.txt                    what was measured: commit, kernel, host load
# Every table file starts with the commit and how busy the host was: the
# 1-minute load average before the build (with the CPUs busy over 2 s then:
# the average lags minutes behind, e.g. after another run's VM) and at the
# end, and the CPUs other processes (everything but this bench's VM) used
# meanwhile; a busy host makes TCG numbers meaningless, and the header and
# the terminal then say so loudly. The module build's output stays in
# build/modules.log unless it fails.
# Usage: bench.sh KVER [vmrun.py options...]
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kver=$1
shift
dest=$top/build/bench
run=$top/build/vm/bench-$(date +%Y%m%d-%H%M%S)
commit=$(git -C "$top" describe --always --dirty --abbrev=12 2> /dev/null)
# A private tree (git archive) has no history: name it and its sources.
[ -n "$commit" ] || commit="$top (no git; sources sha1 $(cd "$top" &&
	find drivers include -name '*.[ch]' | sort | xargs cat | sha1sum | cut -c1-12))"
load() { cut -d' ' -f1-3 /proc/loadavg; }
load0=$(load)
busy() { awk -v x="$1" -v lim="$2" 'BEGIN { exit !(x > lim) }'; }
# The CPUs in use now, over 2 s: the load average lags by minutes (after
# another run's VM it reads 1.5-2 on a host that is idle again).
cpus_busy() {
	local a b
	a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat)
	sleep 2
	b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat)
	awk -v a="$a" -v b="$b" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz / 2 }'
}
busy0=$(cpus_busy)

if [ -n "${BENCH:-}" ]; then
	benches=()
	for b in $BENCH; do benches+=("selftests/bench/${b%.sh}.sh"); done
else
	# rdma_bench first: its table is the one most runs are for.
	benches=(selftests/bench/rdma_bench.sh)
	for b in "$top"/selftests/bench/*.sh; do
		[ "${b##*/}" = rdma_bench.sh ] && continue
		[ "${b##*/}" = nvmeof_bench.sh ] && [ "${BENCH_NVMEOF:-1}" = 0 ] && continue
		# the A/B experiments (one property of the VM each) and the
		# latency trace (ftrace slows what it watches): only by name
		# (insn_profile needs make insnprof's QEMU plugin)
		case ${b##*/} in clock_ab.sh | pin_ab.sh | lat_trace.sh | lat_events.sh | insn_profile.sh) continue ;; esac
		benches+=("${b#"$top"/}")
	done
fi
if busy "${load0%% *}" 1.5 && busy "$busy0" 0.5; then
	echo "bench: WARNING: the host is busy (load average $load0, $busy0 CPUs busy before the build):" \
		"TCG results on a shared host are NOT trustworthy; run under /work/team/vmrun --perf or wait" >&2
fi

# shellcheck source=scripts/lib_prof.sh
. "$top/scripts/lib_prof.sh"
prof_check_kos bench || exit 1
echo "bench: commit $commit; building mroce.ko for $kver (build/modules.log)"
if ! "$top/scripts/build-module.sh" "$kver" > /dev/null; then
	echo "bench: the module did not build (build/modules.log)" >&2
	exit 1
fi
t0=$(date +%s)
echo "bench: ${benches[*]##*/}; host: $(nproc) CPUs, load $load0; booting the VM" \
	"(TCG; the default set takes about 25 min on a quiet host)"
mkdir -p "$run"
# Who else uses the host while the VM runs (this script's process tree is
# the bench; the sampler warns at once when others take over 1 CPU), and
# second by second, to mark the samples someone else shared the host with.
python3 "$top/scripts/hostload.py" $$ "$run/hostload.txt" 10 "$run/hostload.timeline" &
sampler=$!
# The vCPU threads' host run-queue wait, 20 times a second, into the boot's
# output directory: rdma_bench reads it around each latency ping-pong and
# runs a sample again whose vCPUs mostly waited for a host CPU
# (BENCH_LAT_WAIT_MAX; docs/testing.md).
python3 "$top/scripts/vcpu_feed.py" $$ "$run" &
feeder=$!
# On the TSC (tsc=reliable): the cheap clock of real hosts, where the
# drivers' clock reads cost what they cost there; vmrun.py's default, the
# HPET, is for correctness runs (docs/testing.md). MROCE_VM_CLOCK and
# VMARGS="--clock ..." override.
# MROCE_VM_PIN (default 0): 1 pins each vCPU thread to a host CPU of its
# own (vmrun.py --pin; docs/testing.md "Pinning the vCPU threads").
python3 "$top/selftests/qemu/vmrun.py" --kver "$kver" --plain --out "$run" \
	--clock "${MROCE_VM_CLOCK:-tsc}" --pin "${MROCE_VM_PIN:-0}" "$@" "${benches[@]}"
rc=$?
kill "$sampler" "$feeder" 2> /dev/null
wait "$sampler" "$feeder"
load1=$(load)
others=$(cat "$run/hostload.txt" 2> /dev/null)
oavg=$(echo "$others" | sed -n 's/.*others_avg=\([0-9.]*\).*/\1/p')
omax=$(echo "$others" | sed -n 's/.*others_max=\([0-9.]*\).*/\1/p')
secs=$(( $(date +%s) - t0 ))
hostline="host: $(nproc) CPUs; 1-min load average ${load0%% *} before the bench ($busy0 CPUs busy then),"
hostline+=" ${load1%% *} at the end"
hostline+=" (this VM's vCPUs count up to 2 of it); other processes used ${oavg:-?} CPUs on average,"
hostline+=" ${omax:-?} at most (10 s samples)"
warn=
busy "${load0%% *}" 1.5 && busy "$busy0" 0.5 &&
	warn="the load average was ${load0%% *} and $busy0 CPUs were busy before the bench"
busy "${oavg:-0}" 0.5 && warn+="${warn:+; }other processes used ${oavg} CPUs on average"
busy "${omax:-0}" 1.5 && warn+="${warn:+; }other processes used up to ${omax} CPUs at times"
[ -n "$warn" ] && warn="WARNING: HOST WAS BUSY ($warn): these numbers are NOT trustworthy"
"$top/selftests/bench/collect-results" "$run" "$dest" || rc=1
# Per sample: the most CPU other host processes used during it (a column
# of the *_rounds.csv files); samples above half a CPU are listed. A
# benchmark without rounds (profile_bench) has none to mark.
marks=
if [ -s "$run/hostload.timeline" ] && compgen -G "$dest/*_rounds.csv" > /dev/null; then
	marks=$(python3 "$top/scripts/hostload_mark.py" "$run/hostload.timeline" "$dest"/*_rounds.csv)
fi
# The 64 B latency round by round, each mroce column against rxe and
# mroceN against mroce: per-round ratios, the guest's speed mode of each
# sample, medians over the rounds both ran in the same mode (lat_dist.py
# ab; after the marks, so SUSPECT samples show).
if [ -s "$dest/rdma_bench_rounds.csv" ]; then
	python3 "$top/selftests/bench/lat_dist.py" ab "$dest/rdma_bench_rounds.csv" \
		> "$dest/rdma_bench_lat.txt" 2>&1
	if grep -q '^ib_write_lat' "$dest/rdma_bench_lat.txt"; then
		echo
		cat "$dest/rdma_bench_lat.txt"
	else
		rm -f "$dest/rdma_bench_lat.txt"
	fi
fi
# The A/B verdicts: per pair of columns and row, the median of the paired
# per-round ratios with a 95 % sign-test interval (latency: same-mode
# pairs only; SUSPECT samples left out; lat_dist.py verdict). They end
# rdma_bench.txt and rdma_bench.md and go to the terminal.
if [ -s "$dest/rdma_bench_rounds.csv" ]; then
	verdict=$(python3 "$top/selftests/bench/lat_dist.py" verdict "$dest/rdma_bench_rounds.csv" 2>&1)
	if grep -q '^verdict ' <<< "$verdict"; then
		echo
		echo "$verdict"
		[ ! -f "$dest/rdma_bench.txt" ] || printf '\n%s\n' "$verdict" >> "$dest/rdma_bench.txt"
		# shellcheck disable=SC2016 # the backquotes are markdown's
		[ ! -f "$dest/rdma_bench.md" ] ||
			printf '\n```\n%s\n```\n' "$verdict" >> "$dest/rdma_bench.md"
	fi
fi
# The guest's clocksource (vmrun.py --clock, MROCE_VM_CLOCK): every
# timestamp the drivers take costs what it costs on that clock.
clock=$(cat "$run"/boot*/clocksource 2> /dev/null | sort -u | paste -sd/)
clock="guest clocksource ${clock:-unknown}"
# and its user-space ASLR (vmrun.py --aslr, MROCE_VM_ASLR): 0 = off
aslr=$(cat "$run"/boot*/randomize_va_space 2> /dev/null | sort -u | paste -sd/)
clock+=", randomize_va_space ${aslr:-unknown}"
# and where its vCPU threads ran (vmrun.py --pin, MROCE_VM_PIN)
pinned=$(cat "$run"/boot*/pin.txt 2> /dev/null | sed 's/ thread [0-9]*//' | sort -u | paste -sd,)
clock+=", vCPU threads ${pinned:-not pinned}"
head="make bench at $commit, $(date -u -d "@$t0" '+%F %H:%M UTC'), ${secs}s; $clock; $hostline"
for f in "$dest"/*.txt "$dest"/*.md; do
	[ -f "$f" ] || continue
	{
		echo "$head"
		[ -z "$warn" ] || echo "$warn"
		[ -z "$marks" ] || echo "$marks"
		cat "$f"
	} > "$f.new" && mv "$f.new" "$f"
done
{
	echo "commit:      $commit"
	echo "VM run:      $(date -u -d "@$t0" '+%F %T UTC'), ${secs}s"
	echo "VM kernel:   $kver (QEMU TCG, 2 vCPUs, $clock)"
	echo "host:        $(nproc) CPUs, load average $load0 before the bench, $load1 at the end"
	echo "others:      ${others:-not sampled} (CPUs used by all but this bench)"
	[ -z "$warn" ] || echo "$warn"
	[ -z "$marks" ] || echo "$marks"
	echo "benchmarks:  ${benches[*]##*/}"
	echo "knobs:       $(env | grep -E '^(BENCH_[A-Z0-9_]+|MROCE_VM_[A-Z]+)=' | sort | tr '\n' ' ')"
	echo "VM logs:     $run"
} > "$dest/run.txt"
echo "bench: ${secs}s; $hostline"
[ -z "$warn" ] || echo "bench: $warn" >&2
[ -z "$marks" ] || echo "$marks" >&2
echo "bench: results in $dest: $(cd "$dest" && ls | tr '\n' ' ')"
[ $rc -eq 0 ] || echo "bench: a benchmark failed or the VM did not finish (see above)" >&2
exit $rc
