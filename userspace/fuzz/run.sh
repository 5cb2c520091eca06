#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the libFuzzer targets (the packet decoder and the connection
# engine) with clang -fsanitize=fuzzer,address,undefined and runs both, in
# parallel, for SECONDS each (default 60), starting from a seed corpus
# generated from the wire test vectors, plus the inputs that once found a
# bug (userspace/fuzz/regress/<target>-<what>, replayed by ctest as well).
# Crash inputs are kept in build/fuzz/artifacts/ and make the script fail.
#
# Usage: userspace/fuzz/run.sh [SECONDS]
set -euo pipefail

secs=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
core=$top/drivers/infiniband/sw/mroce/core
env=$top/include/mroce/env/user
out=$top/build/fuzz
cc=${CLANG:-clang}
cxx=${CLANGXX:-clang++}

command -v "$cxx" > /dev/null || { echo "fuzz: $cxx not found (apt-get install clang)"; exit 1; }
mkdir -p "$out/obj" "$out/artifacts" "$out/corpus/wire" "$out/corpus/conn"

san="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
flags="-g -O1 -I$env -I$core"
objs=()
for src in "$core"/*.c; do
	objs+=("$out/obj/$(basename "${src%.c}").o")
done
# shellcheck disable=SC2086
printf '%s\n' "$core"/*.c | xargs -P "$(nproc)" -I{} sh -c \
	'"$0" $1 -std=gnu11 -c "$2" -o "$3/obj/$(basename "$2" .c).o"' \
	"$cc" "$flags $san" {} "$out"
for t in wire conn; do
	"$cxx" $flags $san -std=c++17 "$top/userspace/fuzz/${t}_fuzz.cpp" "${objs[@]}" \
		-o "$out/${t}_fuzz"
done
# The seed writer links the same (instrumented) core objects, without
# libFuzzer's main.
"$cxx" $flags -std=c++17 -fsanitize=fuzzer-no-link,address,undefined \
	"$top/userspace/fuzz/seeds.cpp" "${objs[@]}" -o "$out/seeds"
"$out/seeds" "$out/corpus/wire" "$out/corpus/conn"
for f in "$top"/userspace/fuzz/regress/*; do
	[ -e "$f" ] || continue
	t=$(basename "$f"); t=${t%%-*}
	cp "$f" "$out/corpus/$t/"
done

echo "fuzz: running wire_fuzz and conn_fuzz for ${secs}s each"
pids=()
for t in wire conn; do
	# -max_len covers the largest ACK (860 B) and a MAD; records cap conn input.
	"$out/${t}_fuzz" "$out/corpus/$t" -max_total_time="$secs" -max_len=4096 \
		-artifact_prefix="$out/artifacts/${t}-" -print_final_stats=1 \
		> "$out/$t.log" 2>&1 &
	pids+=($!)
done
rc=0
for i in 0 1; do
	wait "${pids[$i]}" || rc=1
done
for t in wire conn; do
	runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$out/$t.log")
	cov=$(grep -oE 'cov: [0-9]+' "$out/$t.log" | tail -n 1)
	echo "fuzz: $t: ${runs:-0} runs, ${cov:-cov: ?}, corpus $(ls "$out/corpus/$t" | wc -l) inputs"
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
