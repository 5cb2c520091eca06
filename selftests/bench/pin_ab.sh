#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench BENCH=pin_ab: where perftest runs, A/B in one boot. For each
# placement of BENCH_PINS ("none 0:1": unpinned, then the server on CPU 0
# and the client on CPU 1; "S:C" as rdma_bench's BENCH_PIN), one round of
# rdma_bench (its BENCH_ROWS, BENCH_DRIVERS, ...: each driver loaded afresh),
# in BENCH_ROUNDS interleaved rounds (lib.sh ab_rounds); every row's median
# (min-max) per placement and the ratios of the medians to the first in
# pin_ab.txt, every sample in pin_ab_rounds.csv, and where each sample's
# processes and softirqs ran in each round's rdma_bench_rounds.csv.
# vm-timeout: 3600
. "$(dirname "$0")/../lib.sh"
require_root

# shellcheck disable=SC2086 # one word per placement
set -- ${BENCH_PINS:-none 0:1}
use_pin() { export BENCH_PIN=$1; }
ab_rounds "${BENCH_ROUNDS:-3}" use_pin "$MROCE_TEST_OUT/pin_ab_rounds.csv" "$@"
rc=$?
ab_table "$MROCE_TEST_OUT/pin_ab_rounds.csv" pin_ab "$@" | tee "$MROCE_TEST_OUT/pin_ab.txt"
exit $rc
