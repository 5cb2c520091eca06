#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 400
#
# Kernel verbs as kernel ULPs use them: tools/kverbs/mroce_kverbs_test.ko
# drives an mroce device through the RDMA core's kernel API only -- local
# DMA lkey, kernel QPs/CQs/SRQs, posting with bad_wr, ib_drain_qp() (also
# with its CQ full of flushes), FRWR for 1 MiB I/Os, address handles from
# atomic context, the GSI QP -- and,
# with the transport, RC traffic to a second device: 1 MiB WRITE/READ
# through an FRWR MR, Send with Invalidate, local invalidation. It logs one
# line per check, which become the subtests here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
require_root
require_cmd rdma ip make insmod
kver=$(uname -r)
[ -e "/lib/modules/$kver/build/Makefile" ] || skip_all "no kernel headers for $kver"

# `make modules` builds it next to mroce.ko (the top Kbuild; also
# build-module.sh --out for another kernel); here if stale or built for
# another kernel.
src=$MROCE_SELFTESTS_DIR/tools/kverbs
ko=${MROCE_KO%/drivers/infiniband/sw/mroce/mroce.ko}/selftests/tools/kverbs/mroce_kverbs_test.ko
if [ ! -e "$ko" ] || [ "$ko" -ot "$src/mroce_kverbs_test.c" ] ||
   [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" != "$kver" ]; then
	kdir=$MROCE_TEST_OUT/kverbs
	mkdir -p "$kdir"
	cp "$src/Kbuild" "$src/mroce_kverbs_test.c" "$kdir/"
	make -s -C "/lib/modules/$kver/build" M="$kdir" modules \
		> "$MROCE_TEST_OUT/kbuild.log" 2>&1 || {
		ktap_fail "build the test module" "$(tail -c 300 "$MROCE_TEST_OUT/kbuild.log")"
		ktap_finish
	}
	ko=$kdir/mroce_kverbs_test.ko
fi

mroce_pair_up

args=(dev=mroce_a)
if why=$(transport_ready a mroce_a); then
	args+=(peer=mroce_b)
else
	ktap_skip "kernel RC traffic between mroce_a and mroce_b" "$why"
fi
check "insmod mroce_kverbs_test ${args[*]}" insmod "$ko" "${args[@]}"
dmesg_since_mark | sed -n 's/^\[[^]]*\] mroce_kverbs_test: //p' > "$MROCE_TEST_OUT/kverbs.out"
while read -r st desc; do
	case $st in
	ok:) ktap_ok "$desc" ;;
	FAIL:) ktap_fail "$desc" ;;
	esac
done < "$MROCE_TEST_OUT/kverbs.out"
check "the test module ran to the end" dmesg_has 'mroce_kverbs_test: done 0 failed'
check "rmmod mroce_kverbs_test" rmmod mroce_kverbs_test
check "rdma link delete (no object leaked)" mroce_link_del mroce_a
check "rdma link delete (peer)" mroce_link_del mroce_b
topo_netns_cleanup
check "kernel log clean" dmesg_clean
ktap_finish
