#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The in-module self-test of the protocol core (mroce_selftest.c): the
# core's table-driven vectors (core/vectors/*.h, the ones the user-space
# unit tests use) run inside the module at load with selftest=1, and again
# on a write to the parameter. Every vector of every table must have run
# and passed.
. "$(dirname "$0")/lib.sh"
require_root
require_cmd insmod rmmod

param=/sys/module/mroce/parameters/selftest
vec=$MROCE_REPO/drivers/infiniband/sw/mroce/core/vectors

# How many vectors each table has, counted from the headers themselves.
n_wire=$(grep -cP '^\t\t"[a-z0-9_]+", MROCE_WIRE_E?[A-Z]+, ' "$vec/wire_vectors.h")
n_prx=$(grep -cP '^\t\{ "[a-z0-9_]+", ' "$vec/prx_vectors.h")
n_place=$(grep -cP '^\t\t"[a-z0-9_]+",$' "$vec/place_vectors.h")
n_all=$((n_wire + n_prx + n_place))
want="passed $n_all/$n_all (wire $n_wire/$n_wire, prx $n_prx/$n_prx, place $n_place/$n_place)"
ktap_info "vectors in the tables: $n_wire wire, $n_prx prx, $n_place place"

mroce_unload
modprobe -a ib_core ib_uverbs udp_tunnel ip6_udp_tunnel
dmesg_mark

check "tables found (wire > 50, prx > 5, place > 5)" \
	test "$n_wire" -gt 50 -a "$n_prx" -gt 5 -a "$n_place" -gt 5
check "insmod without selftest" insmod "$MROCE_KO"
check_eq "nothing run by default" "not run" "$(cat $param 2>&1)"
check "rmmod" rmmod mroce

check "insmod selftest=1: the load runs every vector and passes" \
	insmod "$MROCE_KO" selftest=1
check_eq "result: every vector of every table passed" "$want" "$(cat $param 2>&1)"
check "kernel log: one pass line with the counts" \
	dmesg_has "mroce: self-test: passed: $n_wire wire, $n_prx prx, $n_place place vectors"
check_fail "kernel log: no failing vector" dmesg_has 'self-test: (FAILED|wire|prx|place) '

check "run again at runtime (echo 1 > selftest)" bash -c "echo 1 > $param"
check_eq "result after the second run" "$want" "$(cat $param 2>&1)"
check_eq "two pass lines in the kernel log" 2 \
	"$(dmesg_since_mark | grep -c 'mroce: self-test: passed:')"
check "writing 0 runs nothing and is accepted" bash -c "echo 0 > $param"
check "a value that is not a boolean is refused" \
	fails_with 'Invalid argument' bash -c "echo maybe > $param"

check "rmmod" rmmod mroce
check "kernel log clean" dmesg_clean
ktap_finish
