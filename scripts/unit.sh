#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the user-space tree with AddressSanitizer + UBSan and run every
# GoogleTest through ctest.
# Usage: unit.sh [--summary <file.json>] [ctest args...]
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
summary=
if [ "${1:-}" = "--summary" ]; then
	summary=$2
	shift 2
fi
build=${UNIT_BUILD:-$top/build/userspace}
log=$top/build/unit.log
mkdir -p "$top/build"

write_summary() {
	[ -z "$summary" ] || echo "{\"passed\": $1, \"failed\": $2}" > "$summary"
}

if ! cmake -S "$top/userspace" -B "$build" -DMROCE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug > "$log" 2>&1 ||
   ! cmake --build "$build" -j "$(nproc)" >> "$log" 2>&1; then
	tail -n 40 "$log"
	echo "unit: build failed (log: $log)"
	write_summary 0 1
	exit 1
fi

ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@" 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}
# "100% tests passed, 0 tests failed out of 57"
line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<< "$line")
failed=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<< "$line")
if [ -z "$line" ]; then
	if grep -q 'No tests were found' "$log"; then
		total=0 failed=0
	else
		total=1 failed=1
	fi
fi
write_summary $((total - failed)) "$failed"
exit "$rc"
