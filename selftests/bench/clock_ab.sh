#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench BENCH=clock_ab: the guest's clocksource A/B in one boot. Under
# TCG the kernel finds the vCPUs' TSCs unsynchronised and would run on the
# emulated HPET (every ktime_get() an emulated MMIO read); the harness
# boots it with tsc=reliable (vmrun.py --clock tsc, as make bench does), which
# keeps the HPET there to switch to. This runs rdma_bench (its BENCH_ROWS,
# BENCH_DRIVERS, BENCH_DURATION, ...) for one round per clocksource of
# BENCH_CLOCKSOURCES ("hpet tsc"), written to
# /sys/devices/system/clocksource/clocksource0/current_clocksource before
# each, in BENCH_ROUNDS interleaved rounds (lib.sh ab_rounds), and prints
# every row's median (min-max) per clocksource and the ratios of the
# medians to the first clocksource (clock_ab.txt; every sample in
# clock_ab_rounds.csv). A guest booted with MROCE_VM_CLOCK=hpet offers
# only the HPET.
# vm-timeout: 3600
. "$(dirname "$0")/../lib.sh"
require_root

cs=/sys/devices/system/clocksource/clocksource0
echo "clock_ab: clocksources offered: $(cat $cs/available_clocksource); current: $(cat $cs/current_clocksource)"
# shellcheck disable=SC2086 # one word per clocksource
set -- ${BENCH_CLOCKSOURCES:-hpet tsc}
for c; do
	grep -qw "$c" $cs/available_clocksource || {
		echo "clock_ab: clocksource $c is not offered (booted with MROCE_VM_CLOCK=hpet?)"
		exit 1
	}
done
boot=$(cat $cs/current_clocksource)
use_clock() {
	echo "$1" > $cs/current_clocksource
	[ "$(cat $cs/current_clocksource)" = "$1" ] || { echo "clock_ab: could not select $1"; return 1; }
}
ab_rounds "${BENCH_ROUNDS:-3}" use_clock "$MROCE_TEST_OUT/clock_ab_rounds.csv" "$@"
rc=$?
echo "$boot" > $cs/current_clocksource
ab_table "$MROCE_TEST_OUT/clock_ab_rounds.csv" clock_ab "$@" | tee "$MROCE_TEST_OUT/clock_ab.txt"
exit $rc
