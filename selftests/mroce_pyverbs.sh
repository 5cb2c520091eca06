#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 900
#
# rdma-core's own pyverbs tests (Debian's python3-pyverbs), the ones that
# exercise objects rather than traffic: device, port, GID and P_Key queries,
# PD, MR, CQ and extended CQ, QP creation/modify/query for every QP type,
# AH, plus the capability probes that must skip cleanly (atomics, memory
# windows, device memory, dma-buf, ODP, resize). One subtest per pyverbs
# test; the traffic tests run with the transport's selftests.
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip gunzip
py=/usr/bin/python3
srcdir=/usr/share/doc/rdma-core/tests
[ -d "$srcdir" ] && "$py" -c 'import pyverbs' 2>/dev/null ||
	skip_all "python3-pyverbs is not installed (make deps)"

tests=(
	test_device.DeviceTest test_device.DMTest test_pd test_addr
	test_cq.CQAPITest test_cq.CQTest test_cqex.CQEXAPITest
	test_mr.MRTest.test_reg_mr_bad_flags test_mr.MRTest.test_mr_rereg_access
	test_mr.MRTest.test_mr_rereg_addr test_mr.MWTest test_mr.DeviceMemoryAPITest
	test_mr.DmaBufMRTest test_qp.QPTest test_atomic test_odp
	test_fork.ForkAPITest
)

mroce_load
dmesg_mark
topo_netns
mroce_link_add mroce_a va a
wait_for 5 has_gid mroce_a "$(gid_of_ip 10.0.0.1)"
gid=$(gid_list mroce_a | awk -v g="$(gid_of_ip 10.0.0.1)" '$2 == g { print $1; exit }')

# The tests are partly gzipped in the package: unpack a private copy.
dir=$MROCE_TEST_OUT/pyverbs-tests
cp -r "$srcdir" "$dir" && gunzip -f "$dir"/*.gz

"$py" "$MROCE_SELFTESTS_DIR/tools/mroce_pyverbs_run.py" "$dir" mroce_a "$gid" \
	"${tests[@]}" > "$MROCE_TEST_OUT/pyverbs.out" 2>&1
while IFS=$'\t' read -r st name why; do
	case $st in
	ok) ktap_ok "$name" ;;
	skip) ktap_skip "$name" "$why" ;;
	fail) ktap_fail "$name" "$why" ;;
	'#'*) ktap_info "pyverbs: ${st#\# } $name $why" ;;
	esac
done < "$MROCE_TEST_OUT/pyverbs.out"
grep -q '^# .* passed' "$MROCE_TEST_OUT/pyverbs.out" ||
	ktap_fail "the pyverbs run finished" "$(tail -c 300 "$MROCE_TEST_OUT/pyverbs.out")"

check "rdma link delete (no object leaked)" mroce_link_del mroce_a
topo_netns_cleanup
check "kernel log clean" dmesg_clean
ktap_finish
