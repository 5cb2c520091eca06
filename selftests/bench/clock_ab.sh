#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench BENCH=clock_ab: the guest's clocksource A/B in one boot. Under
# TCG the default clocksource is the emulated HPET (the kernel finds the
# vCPUs' TSCs unsynchronised), so every ktime_get() is an emulated MMIO
# read; booted with tsc=reliable the TSC is the clocksource and the HPET is
# still there to switch to. This runs rdma_bench (its BENCH_ROWS,
# BENCH_DRIVERS, BENCH_DURATION, ...) for one round per clocksource of
# BENCH_CLOCKSOURCES ("hpet tsc"), written to
# /sys/devices/system/clocksource/clocksource0/current_clocksource before
# each, in BENCH_ROUNDS interleaved rounds (odd rounds in the given order,
# even rounds reversed), and prints every row's median (min-max) per
# clocksource and the ratios of the medians to the first clocksource.
# Needs the guest booted with tsc=reliable (VMARGS="--append tsc=reliable"
# or MROCE_VM_APPEND=tsc=reliable), else only one clocksource is offered.
# vm-timeout: 3600
. "$(dirname "$0")/../lib.sh"
require_root

ROUNDS=${BENCH_ROUNDS:-3}
CLOCKS=${BENCH_CLOCKSOURCES:-hpet tsc}
cs=/sys/devices/system/clocksource/clocksource0
top=$MROCE_TEST_OUT
echo "clock_ab: clocksources offered: $(cat $cs/available_clocksource); current: $(cat $cs/current_clocksource)"
for c in $CLOCKS; do
	grep -qw "$c" $cs/available_clocksource || {
		echo "clock_ab: clocksource $c is not offered (boot with tsc=reliable?)"
		exit 1
	}
done
# shellcheck disable=SC2086 # one word per clocksource
set -- $CLOCKS
clocks=("$@")
rcsv=$top/clock_ab_rounds.csv
echo "clocksource,round,driver,test,loss_pct,value,unit" > "$rcsv"
for r in $(seq "$ROUNDS"); do
	mapfile -t order <<< "$(in_round_order "$r" "${clocks[@]}")"
	for c in "${order[@]}"; do
		echo "$c" > $cs/current_clocksource
		[ "$(cat $cs/current_clocksource)" = "$c" ] || { echo "clock_ab: could not select $c"; exit 1; }
		echo "clock_ab: round $r/$ROUNDS, clocksource $c"
		mkdir -p "$top/$c-r$r"
		MROCE_TEST_OUT=$top/$c-r$r BENCH_ROUNDS=1 bash "$(dirname "$0")/rdma_bench.sh" |
			grep -E '^\[' | sed "s/^/[$c] /"
		# driver,test,loss_pct,netem,round,size,window_s,goodput_mbps,
		# iterations,lat_typical_us,lat_avg_us,...
		awk -F, -v c="$c" -v r="$r" 'NR > 1 && $2 != "iperf3" {
			if ($2 == "ib_write_lat") {
				if ($10 != "") printf "%s,%s,%s,lat_typ,%s,%s,us\n", c, r, $1, $3, $10
				if ($11 != "") printf "%s,%s,%s,lat_avg,%s,%s,us\n", c, r, $1, $3, $11
			} else if ($8 != "") {
				printf "%s,%s,%s,%s,%s,%s,Mb/s\n", c, r, $1, $2, $3, $8
			}
		}' "$top/$c-r$r/rdma_bench_rounds.csv" >> "$rcsv"
	done
done
echo "$(cat $cs/available_clocksource | cut -d' ' -f1)" > $cs/current_clocksource

# Medians (min-max) per row and clocksource; ratios of medians to the first.
table=$top/clock_ab.txt
{
	echo "clock_ab: median of $ROUNDS interleaved rounds (min-max, n rounds) per clocksource;" \
		"ratios of medians to ${clocks[0]}"
	printf '%-28s' row
	for c in "${clocks[@]}"; do printf ' %26s' "$c"; done
	for c in "${clocks[@]:1}"; do printf ' %10s' "$c/${clocks[0]}"; done
	echo
	awk -F, -v clocks="${clocks[*]}" '
		NR == 1 { next }
		{ k = $3 " " $4 " " $5 "%"; keys[k] = $7; n = ++cnt[k, $1]; v[k, $1, n] = $6 }
		function med(k, c,   n, i, j, t, a) {
			n = cnt[k, c]
			if (!n) return ""
			for (i = 1; i <= n; i++) a[i] = v[k, c, i] + 0
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			lo = a[1]; hi = a[n]
			return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		END {
			nc = split(clocks, cl, " ")
			for (k in keys) {
				printf "%-28s", k " (" keys[k] ")"
				for (i = 1; i <= nc; i++) {
					m[i] = med(k, cl[i])
					if (m[i] == "") printf " %26s", "-"
					else printf " %26s", sprintf("%.1f (%.1f-%.1f) n=%d", m[i], lo, hi, cnt[k, cl[i]])
				}
				for (i = 2; i <= nc; i++)
					printf " %10s", (m[1] > 0 && m[i] != "") ? sprintf("%.2f", m[i] / m[1]) : "-"
				printf "\n"
			}
		}' "$rcsv" | sort
	echo "(Mb/s: goodput, higher is better; us: 64 B ib_write_lat typical/avg, lower is better)"
} | tee "$table"
