#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-sim: build the simulator (Release), run the scenarios of issue 3
# item 6 (a-f) for mroce and the RoCEv2 model side by side, print the result
# tables on stdout (progress on stderr) and write CSV files and PNG plots to
# build/bench-sim/. Targets are reported (PASS/MISS), never asserted: the
# exit status is 0 unless the simulator fails to build or run.
#
# Environment: BENCH_SEED (default 1), BENCH_QUICK=1 (short runs),
# BENCH_JOBS (parallel scenarios, default nproc), MROCE_SIM_PRM (override
# mroce tunables, e.g. "ack_every=4", for exploration).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/bench-sim
obj=$out/obj
seed=${BENCH_SEED:-1}
jobs=${BENCH_JOBS:-$(nproc)}
quick=
[ "${BENCH_QUICK:-0}" = 1 ] && quick=--quick
start=$(date +%s)

log() { echo "bench-sim: $*" >&2; }

# Debian packages this needs; gnuplot only for the plots.
ensure() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -q '^installed$' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	local sudo=
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || return 1
		sudo=sudo
	fi
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
		{ $sudo apt-get update -q >&2 && $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; }
}

ensure cmake g++ libgtest-dev || { log "cannot install the build tools"; exit 1; }
mkdir -p "$out"
log "building the simulator (Release) in $obj"
if ! cmake -S "$top/userspace" -B "$obj" -DCMAKE_BUILD_TYPE=Release > "$out/build.log" 2>&1 ||
   ! cmake --build "$obj" --target mroce-sim -j "$(nproc)" >> "$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	log "build failed (log: $out/build.log)"
	exit 1
fi
sim=$obj/sim/mroce-sim

log "running scenarios a-h (seed $seed, $jobs in parallel)${quick:+, quick}"
[ -n "${MROCE_SIM_PRM:-}" ] && log "mroce tunables overridden: $MROCE_SIM_PRM"
pids=()
for s in a b c d e f g h; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
	"$sim" bench "$s" --seed "$seed" --out "$out" $quick > "$out/$s.txt" &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
if [ $rc -ne 0 ]; then
	log "a scenario failed"
	exit 1
fi

{
	echo "mroce simulator benchmark (userspace/sim): mroce vs the RoCEv2 model, seed $seed"
	[ -n "${MROCE_SIM_PRM:-}" ] && echo "mroce tunables overridden: $MROCE_SIM_PRM"
	for s in a b c d e f g h; do cat "$out/$s.txt"; done
} | tee "$out/results.txt"

if ensure gnuplot-nox && command -v gnuplot >/dev/null; then
	(
		cd "$out"
		gnuplot <<-'EOF'
			set datafile separator ","
			set terminal pngcairo size 900,560 font "sans,11" noenhanced
			set output "goodput_vs_loss.png"
			set title "Goodput under i.i.d. random loss (1 connection, 100 Gb/s, base RTT 9.4 us)"
			set xlabel "random loss on the receiver's access link (%)"
			set ylabel "goodput (Gb/s)"
			set key top right
			set grid
			set yrange [0:*]
			plot "< grep ',mroce,' a_loss.csv" using ($1*100):3 \
				with linespoints lw 2 pt 7 title "mroce (8 paths)", \
			     "< grep ',rocev2,' a_loss.csv" using ($1*100):3 \
				with linespoints lw 2 pt 5 title "RoCEv2 model (go-back-N, DCQCN)"
			set output "failure_timeline.png"
			set title "Goodput through a blackholed uplink and a lost plane (4 planes)"
			set xlabel "time (us)"
			set ylabel "goodput (Gb/s, 20 us bins)"
			plot "< grep ',mroce,' c_timeline.csv" using 1:3 with lines lw 2 title "mroce", \
			     "< grep ',rocev2,' c_timeline.csv" using 1:3 with lines lw 2 title "RoCEv2 model"
		EOF
	) && log "plots: $out/goodput_vs_loss.png $out/failure_timeline.png" ||
		log "gnuplot failed; CSVs are in $out"
else
	log "gnuplot unavailable: no PNG (CSVs are in $out)"
fi
log "results: $out/results.txt, CSV: $out/*.csv ($(( $(date +%s) - start ))s)"
