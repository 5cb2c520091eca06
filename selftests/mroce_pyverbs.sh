#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own test suite (pyverbs; Debian ships it, partly gzipped, in
# python3-pyverbs), every test of it, against mroce_a: one subtest per test
# (tools/mroce_pyverbs_run.py). Traffic tests run against the device's own
# loopback. A failure listed in pyverbs_known.txt is reported, not failed;
# any other failure fails (a regression); a listed test that passes is
# named so the list shrinks. docs/pyverbs.md explains every skip and known
# failure, with the rdma_rxe reference.
# vm-timeout: 1500
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip gunzip
py=/usr/bin/python3
srcdir=/usr/share/doc/rdma-core/tests
[ -d "$srcdir" ] && "$py" -c 'import pyverbs' 2> /dev/null ||
	skip_all "python3-pyverbs is not installed (make deps)"

mroce_load
dmesg_mark
topo_netns
mroce_link_add mroce_a va a
wait_for 5 has_gid mroce_a "$(gid_of_ip 10.0.0.1)"
gid=$(gid_list mroce_a | awk -v g="$(gid_of_ip 10.0.0.1)" '$2 == g { print $1; exit }')

dir=$MROCE_TEST_OUT/pyverbs-tests
cp -r "$srcdir" "$dir" && gunzip -f "$dir"/*.gz
modules=$(cd "$dir" && ls test_*.py | sed 's/\.py$//')

# The huge-page tests skip without 2 MiB pages; 32 of them is 64 MiB.
hugepages=$(sysctl -n vm.nr_hugepages)
sysctl -qw vm.nr_hugepages=32
start=$(date +%s)
res=$MROCE_TEST_OUT/pyverbs.out
# shellcheck disable=SC2086
nsexec a "$py" "$MROCE_SELFTESTS_DIR/tools/mroce_pyverbs_run.py" "$dir" mroce_a "$gid" \
	$modules > "$res" 2> "$MROCE_TEST_OUT/pyverbs.stderr"
sysctl -qw vm.nr_hugepages="$hugepages"
summary=$(sed -n 's/^# \(.* passed.*\)/\1/p' "$res")
[ -n "$summary" ] || ktap_fail "the pyverbs run finished" "$(tail -c 300 "$MROCE_TEST_OUT/pyverbs.stderr")"
ktap_info "pyverbs on mroce_a: $summary in $(( $(date +%s) - start ))s"

known=$MROCE_SELFTESTS_DIR/pyverbs_known.txt
is_known() { grep -q "^$1	" "$known"; }
regressions=0
while IFS=$'\t' read -r kind id why; do
	case $kind in
	fail)
		if is_known "$id"; then
			ktap_info "known failure: $id: $why"
		else
			ktap_fail "$id" "$why"
			regressions=$((regressions + 1))
		fi
		;;
	ok)
		is_known "$id" && ktap_info "passes now, remove it from pyverbs_known.txt: $id"
		;;
	esac
done < "$res"
check_eq "no failure outside pyverbs_known.txt" 0 "$regressions"
ktap_info "tests that took 5 s or more (the CI cost):"
awk -F'\t' '$1 == "#slow" { printf "#   %4ss  %s\n", $3, $2 }' "$res" | sort -k2,2nr
# The device's counters over the whole run: what a failure went through.
ktap_info "mroce_a hw counters that moved: $(grep -H . /sys/class/infiniband/mroce_a/ports/1/hw_counters/* 2> /dev/null |
	awk -F: '$2 != 0 { sub(".*/", "", $1); printf "%s=%s ", $1, $2 }')"
ktap_info "skips by reason:"
awk -F'\t' '$1 == "skip" { n[$3]++ } END { for (r in n) printf "#   %3d  %s\n", n[r], r }' "$res" |
	sort -k2,2nr
check "rdma link delete (no object leaked)" mroce_link_del mroce_a
check "kernel log clean" dmesg_clean
ktap_finish
