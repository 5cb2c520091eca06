#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: every test there is, in one go.
#   1 deps     install missing Debian packages, check kernel image == headers
#   2 modules  build mroce.ko, W=1, zero warnings
#   3 style    checkpatch.pl on every kernel C/H file
#   4 unit     user space with ASan/UBSan, every GoogleTest via ctest
#   5 fuzz     fuzz smoke run (FUZZ_SECONDS, default 30), if fuzzers exist
#   6 vmtest   the harness's Python unit tests (kernel-log parser, VM boot
#              loop, bench sample marker, profile report, latency trace
#              report, bench statistics, latency distribution), every VM
#              selftest plus the kernel-log check
#   7 kernels  each newer kernel series in MROCE_CHECK_KERNELS (default
#              6.12; empty: skip): install its image and headers if missing,
#              build mroce.ko for it with W=1 (in build/kernels/<kver>, the
#              tree's 6.1 build stays), boot it and run its smoke selftests
#              (MROCE_CHECK_KERNEL_TESTS, default mroce_load mroce_verify
#              mroce_kverbs)
# Later stages run even when earlier ones fail (where they can). The last
# line is "N passed, N failed" over every ctest test, style-checked file,
# VM selftest and single-result stage; the exit status is 1 if N failed > 0.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/check
rm -rf "$out"
mkdir -p "$out"
passed=0 failed=0
t_start=$(date +%s)

stage() { printf '\n==> [%s] %s\n' "$1" "$2"; stage_t0=$(date +%s); }
stage_done() { echo "==> $1: $2 ($(( $(date +%s) - stage_t0 ))s)"; }

# Add a JSON summary {"passed": p, "failed": f, ...} to the totals; the
# result line for stage_done is left in $msg. (No $(...): the totals must
# be updated in this shell.)
tally() {
	local p f
	p=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["passed"])' "$1" 2>/dev/null) || p=0
	f=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["failed"])' "$1" 2>/dev/null) || f=1
	passed=$((passed + p)) failed=$((failed + f))
	msg="$p passed, $f failed"
}

single() { # single <name> <rc>
	if [ "$2" -eq 0 ]; then
		passed=$((passed + 1))
		msg="$1: passed"
	else
		failed=$((failed + 1))
		msg="$1: FAILED"
	fi
}

finish() {
	echo
	echo "make check: $(( $(date +%s) - t_start ))s; details in $out and build/vm/latest"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

stage 1/7 deps
"$top/scripts/deps.sh"
rc=$?
single deps $rc
stage_done deps "$msg"
[ "$rc" -eq 0 ] || finish
kver=${KVER:-$("$top/scripts/kver.sh")}

stage 2/7 "modules (KVER=$kver)"
"$top/scripts/build-module.sh" "$kver" > "$out/modules.log" 2>&1
modules_rc=$?
grep -E 'warning:|error:|build-module:' "$out/modules.log"
single "module build (W=1)" $modules_rc
stage_done modules "$msg"

stage 3/7 style
"$top/scripts/style.sh" --summary "$out/style.json" | grep -v '^style: ok '
tally "$out/style.json"
stage_done style "$msg"

stage 4/7 "unit (ASan/UBSan)"
"$top/scripts/unit.sh" --summary "$out/unit.json" > "$out/unit.log" 2>&1
grep -E 'tests passed|tests FAILED|\*\*\*|^unit:|runtime error|ERROR: AddressSanitizer' "$out/unit.log" | head -n 60
tally "$out/unit.json"
stage_done unit "$msg"

stage 5/7 "fuzz smoke (${FUZZ_SECONDS:-30}s)"
if [ -x "$top/userspace/fuzz/run.sh" ]; then
	"$top/userspace/fuzz/run.sh" "${FUZZ_SECONDS:-30}" > "$out/fuzz.log" 2>&1
	rc=$?
	tail -n 15 "$out/fuzz.log"
	single fuzz $rc
	stage_done fuzz "$msg"
else
	stage_done fuzz "no fuzzers yet (userspace/fuzz/run.sh), nothing to run"
fi

stage 6/7 "vmtest (QEMU, kernel $kver)"
# pytest_one <name> <script>: a Python unit-test file, its log shown on failure
pytest_one() {
	local log
	log="$out/$(basename "$2" .py).log"
	python3 "$top/$2" > "$log" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || cat "$log"
	single "$1 ($2)" $rc
	echo "$msg"
}
# The runner's kernel-log parser first: one that missed a report would let
# a broken kernel pass.
pytest_one "kernel-log parser" selftests/qemu/klog_test.py
# the runner's boot loop (a boot that died before the VM came up: shown,
# booted again, not counted; a death after it still fails)
pytest_one "VM boot loop" selftests/qemu/vmrun_test.py
# make bench's marker of the samples that shared the host with others
pytest_one "host load sampler, bench sample marker" scripts/hostload_mark_test.py
# profile_bench's report (its samples by category, per iteration)
pytest_one "profile report" selftests/bench/profile_report_test.py
# lat_trace's report (the gaps between traced events, per round trip)
pytest_one "latency trace report" selftests/bench/lat_trace_test.py
# the benchmarks' statistics (bench_stats; rdma_bench's per-round ratios)
pytest_one "bench statistics" selftests/bench/bench_stats_test.py
# ib_write_lat's per-iteration distribution and the latency A/B (lat_dist)
pytest_one "latency distribution" selftests/bench/lat_dist_test.py
# lat_events' report (events per round trip, per driver, and their stacks)
pytest_one "event census report" selftests/bench/lat_events_test.py
# make insnprof's report (instruction and cost tables, per-vCPU phases) and
# the plugin's phase machine (skipped without cc or QEMU's plugin header)
pytest_one "instruction profile" scripts/insnprof/insnprof_test.py
# make qemuprof's report (perf samples of QEMU by category, per round trip)
pytest_one "host profile of QEMU" scripts/qemuprof/qemuprof_test.py
if [ "$modules_rc" -eq 0 ]; then
	python3 "$top/selftests/qemu/vmrun.py" --kver "$kver" --quiet-pass \
		--summary "$out/vmtest.json" 2>&1 | tee "$out/vmtest.tap"
	tally "$out/vmtest.json"
	stage_done vmtest "$msg"
else
	failed=$((failed + 1))
	stage_done vmtest "not run: the module did not build (1 failed)"
fi

for series in ${MROCE_CHECK_KERNELS-6.12}; do
	stage 7/7 "kernel $series: deps, module (W=1), VM smoke"
	log=$out/kernel-$series.log
	# deps.sh again, now with this kernel's packages: when all is present one
	# dpkg-query, under a second; apart from stage 1 so that a failure
	# of the newer kernel's packages cannot stop the 6.1 stages
	if ! "$top/scripts/deps.sh" --kernel "$series" > "$log" 2>&1; then
		tail -n 5 "$log"
		single "kernel $series deps" 1
		stage_done "kernel $series" "$msg"
		continue
	fi
	k=$("$top/scripts/kver.sh" "$series")
	kout=$top/build/kernels/$k
	"$top/scripts/build-module.sh" --out "$kout" "$k" >> "$log" 2>&1
	rc=$?
	grep -E 'warning:|error:|build-module:' "$log"
	single "module build for $k (W=1)" $rc
	echo "$msg"
	if [ "$rc" -eq 0 ]; then
		# shellcheck disable=SC2086 # a list of test names
		python3 "$top/selftests/qemu/vmrun.py" --kver "$k" \
			--ko "$kout/drivers/infiniband/sw/mroce/mroce.ko" \
			--out "$out/vm-$k" --quiet-pass --summary "$out/vmtest-$k.json" \
			${MROCE_CHECK_KERNEL_TESTS:-mroce_load mroce_verify mroce_kverbs} 2>&1 |
			tee "$out/vmtest-$k.tap"
		tally "$out/vmtest-$k.json"
	else
		failed=$((failed + 1))
		msg="VM smoke not run: the module did not build (1 failed)"
	fi
	stage_done "kernel $series" "$msg"
done
finish
