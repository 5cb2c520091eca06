#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make qemuprof`: host CPU of the QEMU process per 64 B ib_write_lat round
# trip, by category (JIT code, TB lookup, softmmu slow path, translation,
# cpu_exec loop, MMIO/APIC/timers/BQL, clock, atomics, host kernel, ...),
# per vCPU thread, rdma_rxe against mroce. Builds mroce.ko, boots the test
# VM QEMUPROF_BOOTS times in the normal multi-threaded TCG mode (no
# plugin), runs scripts/qemuprof/guest.sh in each boot (columns rxe mroce
# rxe mroce ..., BENCH_QEMUPROF_ROUNDS rounds, one steady window of
# BENCH_QEMUPROF_WINDOW s each) while `qemuprof.py watch` records the host
# with perf (cpu-clock, QEMUPROF_FREQ Hz, call graphs, system-wide) over
# each window only, and reports with `qemuprof.py report` into
# build/bench/qemu_profile.md (raw perf data, memory maps, schedstat,
# guest metadata: build/qemuprof/latest). Timing matters: run it as
# `/work/team/vmrun --perf make qemuprof` on a quiet host. Needs root
# (perf -a) and perf. docs/testing.md, "Host profile of QEMU".
# Knobs (environment): QEMUPROF_BOOTS (3), QEMUPROF_FREQ (1000; on this
# 2-CPU host 4 kHz slows the RT ~1.6x, 1 kHz ~1.1x: the control windows
# measure it), QEMUPROF_CALLGRAPH (fp; dwarf: full user chains, dear),
# BENCH_QEMUPROF_ROUNDS (2), BENCH_QEMUPROF_WINDOW (8), BENCH_QEMUPROF_WARM
# (3), BENCH_QEMUPROF_ITERS (600000), BENCH_MROCE_PARAMS (mroce's module
# parameter sets, "|" between them: columns mroce, mroce2, ...),
# QEMUPROF_TOP (25 functions), QEMUPROF_UPROBES (0; 1: instead of the perf
# window, two counted with host uprobes on QEMU's TB lookup helper, the
# jump cache's miss path, translation and loop exits: per RT, per vCPU
# thread; besides the control window).
# Usage: run.sh KVER [vmrun.py options...]
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$1
shift
. "$top/scripts/lib_prof.sh"
boots=${QEMUPROF_BOOTS:-3}
[[ $boots =~ ^[1-9][0-9]*$ ]] || { echo "qemuprof: QEMUPROF_BOOTS=$boots: a positive number" >&2; exit 1; }
command -v perf > /dev/null || { echo "qemuprof: perf not installed" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "qemuprof: needs root (perf record -a)" >&2; exit 1; }
prof_check_kos qemuprof || exit 1
# QEMUPROF_UPROBES=1: the windows count with uprobes instead of sampling
case ${QEMUPROF_UPROBES:-0} in
0) ;;
1) export BENCH_QEMUPROF_UPROBES=1 ;;
*) echo "qemuprof: QEMUPROF_UPROBES=$QEMUPROF_UPROBES: 0 or 1" >&2; exit 1 ;;
esac
prof_start qemuprof "$kver" || exit 1
mkdir -p "$run/qemuprof"
rc=0
for ((b = 1; b <= boots; b++)); do
	# one vmrun.py run per boot: its boot directory is $run/b$b/boot1
	python3 "$top/scripts/qemuprof/qemuprof.py" watch "$run/b$b" > "$run/watch-$b.log" 2>&1 &
	wpid=$!
	echo "qemuprof: boot $b of $boots (TCG thread=multi; watcher pid $wpid)"
	python3 "$top/selftests/qemu/vmrun.py" --kver "$kver" --plain --out "$run/b$b" \
		--clock "${MROCE_VM_CLOCK:-tsc}" --max-boots 1 "$@" scripts/qemuprof/guest.sh || rc=1
	: > "$run/b$b/qemuprof/stop"
	wait "$wpid"
	cat "$run/watch-$b.log"
done
# perf script and the classification run after the last boot (they would
# take host CPU from a profiled window)
{
	echo "make qemuprof at $commit, $(date -u -d "@$t0" '+%F %H:%M UTC'), $(( $(date +%s) - t0 ))s;" \
		"kernel $kver; TCG thread=multi; $boots boot(s); perf -F ${QEMUPROF_FREQ:-1000};" \
		"knobs: $(env | grep -E '^(BENCH_[A-Z0-9_]+|MROCE_VM_[A-Z]+|QEMUPROF_[A-Z]+)=' | sort | tr '\n' ' ')"
	echo
	python3 "$top/scripts/qemuprof/qemuprof.py" report --top "${QEMUPROF_TOP:-25}" "$run"/b*
} > "$dest/qemu_profile.md.new" || rc=1
mv "$dest/qemu_profile.md.new" "$dest/qemu_profile.md"
echo "qemuprof: $dest/qemu_profile.md (raw: $run)"
exit $rc
