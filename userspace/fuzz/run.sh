#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the libFuzzer targets (the packet decoder and the connection
# engine) with clang -fsanitize=fuzzer,address,undefined and runs both, in
# parallel, for SECONDS each (default 60), starting from a seed corpus
# generated from the wire test vectors, plus the inputs that once found a
# bug (userspace/fuzz/regress/<target>-<what>, replayed by ctest as well).
# The corpus grows across runs in build/fuzz/corpus. Crash inputs are kept
# in build/fuzz/artifacts/ and make the script fail.
#
# Usage: userspace/fuzz/run.sh [SECONDS]
set -euo pipefail

secs=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
core=$top/drivers/infiniband/sw/mroce/core
fuzz=$top/userspace/fuzz
env=$top/include/mroce/env/user
out=$top/build/fuzz
cc=${CLANG:-clang}
cxx=${CLANGXX:-clang++}
targets=(wire conn)

command -v "$cxx" > /dev/null || { echo "fuzz: $cxx not found (apt-get install clang)"; exit 1; }
mkdir -p "$out/obj" "$out/artifacts"

flags=(-g -O1 "-I$env" "-I$core")
san=("-fsanitize=fuzzer,address,undefined" -fno-sanitize-recover=undefined)

# Rebuild only when a source changed since the last build.
stale=no
for t in "${targets[@]}"; do
	[ -x "$out/${t}_fuzz" ] || stale=yes
done
[ -x "$out/seeds" ] || stale=yes
if [ "$stale" = no ] && [ -n "$(find "$core" "$env" "$fuzz" -newer "$out/seeds" \
		\( -name '*.[ch]' -o -name '*.cpp' -o -name run.sh \) -print -quit)" ]; then
	stale=yes
fi
if [ "$stale" = yes ]; then
	echo "fuzz: building with $cxx"
	objs=()
	pids=()
	for src in "$core"/*.c; do
		obj=$out/obj/$(basename "${src%.c}").o
		objs+=("$obj")
		"$cc" "${flags[@]}" "${san[@]}" -std=gnu11 -c "$src" -o "$obj" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	for t in "${targets[@]}"; do
		"$cxx" "${flags[@]}" "${san[@]}" -std=c++17 "$fuzz/${t}_fuzz.cpp" "${objs[@]}" \
			-o "$out/${t}_fuzz"
	done
	# The seed writer links the same instrumented objects, without
	# libFuzzer's main.
	"$cxx" "${flags[@]}" -std=c++17 "-fsanitize=fuzzer-no-link,address,undefined" \
		"$fuzz/seeds.cpp" "${objs[@]}" -o "$out/seeds"
fi

for t in "${targets[@]}"; do
	mkdir -p "$out/corpus/$t"
done
"$out/seeds" "$out/corpus/wire" "$out/corpus/conn"
for f in "$fuzz"/regress/*; do
	[ -e "$f" ] || continue
	t=$(basename "$f")
	cp "$f" "$out/corpus/${t%%-*}/"
done

echo "fuzz: running ${targets[*]} for ${secs}s each"
pids=()
for t in "${targets[@]}"; do
	# -max_len covers the largest ACK (860 B), a MAD and conn sequences.
	"$out/${t}_fuzz" "$out/corpus/$t" -max_total_time="$secs" -max_len=4096 \
		-artifact_prefix="$out/artifacts/${t}-" -print_final_stats=1 \
		> "$out/$t.log" 2>&1 &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
for t in "${targets[@]}"; do
	runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$out/$t.log")
	cov=$(grep -oE 'cov: [0-9]+' "$out/$t.log" | tail -n 1)
	inputs=$(find "$out/corpus/$t" -type f | wc -l)
	echo "fuzz: $t: ${runs:-0} runs, ${cov:-cov: ?}, corpus $inputs inputs"
	if grep -qE 'ERROR: (AddressSanitizer|libFuzzer)|runtime error|deadly signal' "$out/$t.log"; then
		grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$out/$t.log" | head -n 10
		rc=1
	fi
done
if [ "$rc" -ne 0 ]; then
	echo "fuzz: FAILED (logs in $out, crash inputs in $out/artifacts)"
	exit 1
fi
echo "fuzz: ok, no crashes"
