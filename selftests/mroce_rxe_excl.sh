#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mroce and rdma_rxe share the rxe user ABI and driver id and must never be
# loaded together: whichever is loaded first keeps the other out, with a
# clear message, through modprobe (modprobe.d rules) and without it (both
# need UDP port 4791). A user-space socket on 4791 is reported as such.
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip python3
modinfo rdma_rxe >/dev/null 2>&1 || skip_all "this kernel has no rdma_rxe"

mroce_unload
rmmod rdma_rxe 2>/dev/null
dmesg_mark
ip link add d0 type dummy && ip link set d0 up

check "modprobe mroce" modprobe mroce
check "modprobe rdma_rxe is refused with a reason" \
	fails_with 'refusing to load rdma_rxe: mroce is loaded' modprobe rdma_rxe
check_fail "rdma_rxe is not loaded" rxe_loaded
check "bypassing modprobe.d, rdma_rxe still cannot load" \
	fails_with 'Address already in use|could not insert' modprobe --ignore-install rdma_rxe
check_fail "rdma_rxe is still not loaded" rxe_loaded
check_fail "rdma link add type rxe fails" rdma link add r0 type rxe netdev d0
check_fail "... and loaded nothing" rxe_loaded
check "mroce still works" mroce_link_add m0 d0
check "rmmod mroce (removes m0)" rmmod mroce

check "now rdma_rxe loads" modprobe rdma_rxe
check "modprobe mroce is refused with a reason" \
	fails_with 'refusing to load mroce: rdma_rxe is loaded' modprobe mroce
check "insmod of the build-tree mroce.ko is refused" \
	fails_with 'Address already in use' insmod "$MROCE_KO"
check "kernel log tells to rmmod rdma_rxe" \
	dmesg_has 'mroce: UDP port 4791 \(IPv4\) is held by a kernel UDP tunnel, most likely rdma_rxe.*rmmod rdma_rxe first'
check_fail "rdma link add type mroce fails" rdma link add m0 type mroce netdev d0
check_fail "... and loaded nothing" mroce_loaded
check "rxe is untouched: rdma link add type rxe works" rdma link add r0 type rxe netdev d0
check "rdma link delete r0" rdma link delete r0
check "rmmod rdma_rxe" rmmod rdma_rxe
check "mroce loads again" modprobe mroce
check "rmmod mroce" rmmod mroce

python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 4791))
open("'"$MROCE_TEST_OUT"'/bound", "w").close()
time.sleep(60)' &
holder=$!
wait_for 10 test -e "$MROCE_TEST_OUT/bound"
dmesg_mark
check "a user-space socket on 4791 keeps mroce out" fails_with 'Address already in use' modprobe mroce
check "kernel log names a user-space socket" dmesg_has 'UDP port 4791 is in use by a user-space socket'
kill "$holder"
wait "$holder" 2>/dev/null
check "once it is closed mroce loads" modprobe mroce
check "kernel log clean" dmesg_clean
ktap_finish
