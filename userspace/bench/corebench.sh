#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Instructions the protocol core spends per packet, counted by callgrind
# over corebench (userspace/bench/corebench.c): deterministic, independent of
# host load, so two trees compare exactly. Builds the core as the module
# does (-O2), runs both workloads, writes a table per workload.
# Usage: corebench.sh [--out DIR] [--iters N]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/corebench
iters=2000
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	*) echo "usage: $0 [--out DIR] [--iters N]" >&2; exit 2 ;;
	esac
done

for tool in valgrind callgrind_annotate cmake python3; do
	if ! command -v "$tool" > /dev/null; then
		echo "corebench: $tool is missing (apt-get install -y valgrind cmake python3)" >&2
		exit 1
	fi
done

build=$out/build
mkdir -p "$out"
cmake -S "$top/userspace" -B "$build" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_C_FLAGS_RELEASE="-O2 -g" -DMROCE_PARTS=bench > "$out/build.log"
cmake --build "$build" --target corebench -j "$(nproc)" >> "$out/build.log"

report=$out/corebench.md
: > "$report"
for mode in lat bw; do
	"$build/bench/corebench" "$mode" "$iters" > "$out/$mode.txt"
	valgrind --tool=callgrind --callgrind-out-file="$out/$mode.callgrind" \
		--collect-atstart=no --toggle-collect="run_$mode" \
		"$build/bench/corebench" "$mode" "$iters" > /dev/null 2> "$out/$mode.valgrind"
	callgrind_annotate --inclusive=yes --threshold=100 "$out/$mode.callgrind" \
		> "$out/$mode.incl" 2> /dev/null
	callgrind_annotate --threshold=100 "$out/$mode.callgrind" \
		> "$out/$mode.self" 2> /dev/null
	python3 - "$mode" "$out" >> "$report" <<'EOF'
import re, sys

mode, out = sys.argv[1], sys.argv[2]
run = open(f"{out}/{mode}.txt").read().split("\n")
head = dict(zip(run[0].split()[0::2], run[0].split()[1::2]))
calls = dict(zip(run[1].split()[1::2], map(int, run[1].split()[2::2])))
pkts = int(head["packets"])

def costs(path):
    res = {}
    for line in open(path):
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S+):(\S+) \[", line)
        if m:
            ir = int(m.group(1).replace(",", ""))
            # gcc's clones (foo.constprop.0) count as foo
            key = (m.group(2), m.group(3).split(".")[0])
            res[key] = res.get(key, 0) + ir
    return res

incl, self_ = costs(f"{out}/{mode}.incl"), costs(f"{out}/{mode}.self")
def fn(d, name):
    return sum(v for (f, n), v in d.items() if n == name)

steps = ["tx_data", "rx_data", "tx_ack", "rx_ack", "hint_pass", "timers"]
# The core's work only: the driver's payload copies and hashing are outside.
total = sum(fn(incl, s) for s in steps)
print(f"## corebench {mode}: {head['iterations']} iterations, {pkts} packets "
      f"on the wire (hash {head['wire_hash']}, acked {head['acked']}, lost {head['lost']})\n")
print("| step | calls | Ir/call |")
print("|---|---:|---:|")
for s in steps:
    n = calls.get(s, 0)
    print(f"| {s} | {n} | {fn(incl, s) / n:.0f} |" if n else f"| {s} | 0 | - |")
print(f"| **all steps, per packet** | {pkts} | **{total / pkts:.0f}** |\n")
print("Core functions, self Ir per packet (>= 1 % of the run):\n")
print("| function | Ir/packet | share |")
print("|---|---:|---:|")
core = sorted(((v, n) for (f, n), v in self_.items() if "/core/" in f), reverse=True)
for v, n in core:
    if v >= total / 100:
        print(f"| {n} | {v / pkts:.1f} | {100 * v / total:.1f} % |")
print()
EOF
done
cat "$report"
echo "corebench: $report (callgrind files in $out)"
