#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make insnprof`: guest kernel instructions per 64 B ib_write_lat round
# trip, by function and by group, rdma_rxe against mroce (and mroce
# against mroce2, ... for BENCH_MROCE_PARAMS="ko=build/A.ko | ko=build/B.ko":
# two builds in one boot). Builds the insnprof QEMU plugin (build.sh) and
# mroce.ko, boots the test VM under single-threaded TCG with the plugin
# (vmrun.py --tcg-thread single --plugin), runs selftests/bench/
# insn_profile.sh in it and reports with insnprof.py into
# build/bench/insn_profile.md (raw snapshots, kallsyms and logs stay in the
# run directory, build/insnprof/latest). docs/testing.md, "Instruction
# profile". Instructions are deterministic, not time: see the limits there.
# Knobs (environment): BENCH_DRIVERS ("rxe mroce"), BENCH_MROCE_PARAMS,
# BENCH_INSNPROF_ITERS (5000 round trips a window, about),
# BENCH_INSNPROF_WINDOWS (2), BENCH_INSNPROF_WARM (2000 packets),
# INSNPROF_TOP (40 functions in the tables), INSNPROF_TCG (single or multi,
# below), INSNPROF_PHASES (1: the per-vCPU phases of a half round trip,
# markers in scripts/insnprof/phases; 0: off, no per-block callback),
# INSNPROF_JC (0; 1: simulate QEMU's per-vCPU TB jump cache, a callback
# per block, kernel and user: its lookups and misses per round trip, what
# evicted what), INSNPROF_JCTRACE (0; N: with INSNPROF_JC=1, also the first
# N lookups of every window, COL-I.jtrace next to the snapshots, for
# scripts/insnprof/jcsim.c to re-simulate, e.g. with a module moved).
# Usage: run.sh KVER [vmrun.py options...]
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$1
shift
. "$top/scripts/lib_prof.sh"

prof_check_kos insnprof || exit 1
so=$("$top/scripts/insnprof/build.sh") || exit 1
prof_start insnprof "$kver" || exit 1
# INSNPROF_TCG=single (default): one host thread runs both vCPUs, the
# counts are exact and repeat (an A/A of one mroce.ko in one boot: 0.3 %
# of kernel instructions per round trip), but a busy-polling vCPU keeps
# the thread until an interrupt kicks it, so a round trip takes ~8 ms and
# time-driven work (ticks, timers) weighs more per round trip; multi: a
# thread per vCPU, round trips in tenths of a millisecond, a kernel count
# may lose an add when both vCPUs run the same block at once (rare), user
# space not counted, and the time-driven part moves with the host's load
# (A/A: 5 %) (docs/testing.md).
tcg=${INSNPROF_TCG:-single}
case $tcg in
single) plugin="file=$so,dir={out}" ;;
multi) plugin="file=$so,dir={out},user=off" ;;
*) echo "insnprof: INSNPROF_TCG=$tcg: single or multi" >&2; exit 1 ;;
esac
# the phases: markers resolved in the kallsyms insn_profile.sh copies
# into its output directory ({out}/insn_profile/COL.kallsyms) per column
case ${INSNPROF_PHASES:-1} in
1) plugin+=",phases=$top/scripts/insnprof/phases,kallsyms={out}/insn_profile" ;;
0) ;;
*) echo "insnprof: INSNPROF_PHASES=$INSNPROF_PHASES: 1 or 0" >&2; exit 1 ;;
esac
case ${INSNPROF_JC:-0} in
1) plugin+=",jc=1"
   [[ ${INSNPROF_JCTRACE:-0} =~ ^[0-9]+$ ]] || { echo "insnprof: INSNPROF_JCTRACE=$INSNPROF_JCTRACE: a number" >&2; exit 1; }
   [ "${INSNPROF_JCTRACE:-0}" -gt 0 ] && plugin+=",jctrace=$INSNPROF_JCTRACE" ;;
0) ;;
*) echo "insnprof: INSNPROF_JC=$INSNPROF_JC: 1 or 0" >&2; exit 1 ;;
esac
echo "insnprof: booting the VM (TCG thread=$tcg, plugin $so)"
python3 "$top/selftests/qemu/vmrun.py" --kver "$kver" --plain --out "$run" \
	--clock "${MROCE_VM_CLOCK:-tsc}" --tcg-thread "$tcg" --plugin "$plugin" \
	"$@" selftests/bench/insn_profile.sh
rc=$?
res=
for d in "$run"/boot*/insn_profile; do [ -d "$d" ] && res=$d; done
if [ -z "$res" ] || ! compgen -G "$res/*.snap" > /dev/null; then
	echo "insnprof: no snapshots in $run" >&2
	exit 1
fi
# the jump-cache traces (INSNPROF_JCTRACE) land in the share, next to the
# snapshots' first home: put them with the snapshots
for f in "${res%/*}"/*.jtrace; do [ -f "$f" ] && mv "$f" "$res/"; done
{
	echo "make insnprof at $commit, $(date -u -d "@$t0" '+%F %H:%M UTC'), $(( $(date +%s) - t0 ))s;" \
		"kernel $kver; TCG thread=$tcg; knobs: $(env | grep -E '^(BENCH_[A-Z0-9_]+|MROCE_VM_[A-Z]+|INSNPROF_[A-Z]+)=' | sort | tr '\n' ' ')"
	echo
	python3 "$top/scripts/insnprof/insnprof.py" --tcg "$tcg" --top "${INSNPROF_TOP:-40}" "$res"
} > "$dest/insn_profile.md.new" || rc=1
mv "$dest/insn_profile.md.new" "$dest/insn_profile.md"
echo "insnprof: $dest/insn_profile.md (raw: $res)"
exit $rc
