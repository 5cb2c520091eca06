#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --no-tree (from Debian's linux-source-6.1) over every kernel
# C/H file: the module, its protocol core and the kernel-side headers under
# include/. A file passes only with zero ERRORs and zero WARNINGs.
# Usage: style.sh [--summary <file.json>] [file...]
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
summary=
if [ "${1:-}" = "--summary" ]; then
	summary=$2
	shift 2
fi

tools=$top/build/checkpatch
cp=$tools/linux-source-6.1/scripts/checkpatch.pl
if [ ! -x "$cp" ]; then
	tarball=/usr/src/linux-source-6.1.tar.xz
	[ -r "$tarball" ] || { echo "style: $tarball missing (package linux-source-6.1); run 'make deps'" >&2; exit 1; }
	echo "style: extracting checkpatch.pl from $tarball (once)"
	mkdir -p "$tools"
	tar -xJf "$tarball" -C "$tools" linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch || exit 1
fi

if [ $# -eq 0 ]; then
	mapfile -t files < <(cd "$top" && git ls-files -co --exclude-standard -- \
		'drivers/infiniband/sw/mroce/*.[ch]' 'include/*.h' |
		grep -v '^include/mroce/env/user/' | grep -v '\.mod\.c$' | sort -u)
else
	files=("$@")
fi

# checkpatch takes ~0.5 s a file: run them in parallel, report in order.
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT
printf '%s\0' "${files[@]}" | (cd "$top" && xargs -0 -P "$(nproc)" -I{} \
	sh -c 'out=$("$1" --no-tree --terse --show-types -f "$2" 2>&1); printf "rc=%s\n%s\n" $? "$out" > "$3/$(echo "$2" | tr / _)"' \
	sh "$cp" {} "$res")

pass=0 fail=0
for f in "${files[@]}"; do
	out=$(cat "$res/$(echo "$f" | tr / _)" 2>/dev/null)
	if [ "$(head -n1 <<< "$out")" != rc=0 ] || grep -Eq ': (ERROR|WARNING):' <<< "$out"; then
		echo "style: FAIL $f"
		tail -n +2 <<< "$out" | sed 's/^/    /'
		fail=$((fail + 1))
	else
		echo "style: ok   $f"
		pass=$((pass + 1))
	fi
done
echo "style: $pass passed, $fail failed"
[ -z "$summary" ] || echo "{\"passed\": $pass, \"failed\": $fail}" > "$summary"
[ "$fail" -eq 0 ]
