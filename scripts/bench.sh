#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: every selftests/bench/*.sh (or BENCH="name ...") in one VM
# boot. The terminal gets each benchmark's progress lines and tables; the
# results of this run, and only of this run, go to build/bench/:
#   <bench>.txt, <bench>.csv   each benchmark's table and CSV
#   rdma_bench.png             goodput against loss (if gnuplot is installed)
#   run.txt                    what was measured: commit, kernel, host load
# The module build's output stays in build/modules.log unless it fails.
# Usage: bench.sh KVER [vmrun.py options...]
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kver=$1
shift
dest=$top/build/bench
run=$top/build/vm/bench-$(date +%Y%m%d-%H%M%S)
commit=$(git -C "$top" describe --always --dirty --abbrev=12 2> /dev/null || echo "not a git checkout")
load() { cut -d' ' -f1-3 /proc/loadavg; }

if [ -n "${BENCH:-}" ]; then
	benches=()
	for b in $BENCH; do benches+=("selftests/bench/${b%.sh}.sh"); done
else
	# rdma_bench first: its table is the one most runs are for.
	benches=(selftests/bench/rdma_bench.sh)
	for b in "$top"/selftests/bench/*.sh; do
		[ "${b##*/}" = rdma_bench.sh ] || benches+=("${b#"$top"/}")
	done
fi

echo "bench: commit $commit; building mroce.ko for $kver (build/modules.log)"
if ! "$top/scripts/build-module.sh" "$kver" > /dev/null; then
	echo "bench: the module did not build (build/modules.log)" >&2
	exit 1
fi
t0=$(date +%s)
load0=$(load)
echo "bench: ${benches[*]##*/}; host: $(nproc) CPUs, load $load0; booting the VM" \
	"(TCG; the full set takes 30-40 min)"
python3 "$top/selftests/qemu/vmrun.py" --kver "$kver" --plain --out "$run" "$@" "${benches[@]}"
rc=$?
"$top/selftests/bench/collect-results" "$run" "$dest" || rc=1
secs=$(( $(date +%s) - t0 ))
{
	echo "commit:      $commit"
	echo "VM run:      $(date -u -d "@$t0" '+%F %T UTC'), ${secs}s"
	echo "VM kernel:   $kver (QEMU TCG, 2 vCPUs)"
	echo "host:        $(nproc) CPUs, load average $load0 at the start, $(load) at the end"
	echo "benchmarks:  ${benches[*]##*/}"
	echo "VM logs:     $run"
} > "$dest/run.txt"
echo "bench: ${secs}s; host load $(load) at the end (was $load0); results in $dest:" \
	"$(cd "$dest" && ls | tr '\n' ' ')"
[ $rc -eq 0 ] || echo "bench: a benchmark failed or the VM did not finish (see above)" >&2
exit $rc
