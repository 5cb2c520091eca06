#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad `rdma link` requests get clear errors and change nothing: a
# nonexistent netdev, the loopback device, a non-Ethernet device, a netdev
# that already has an RDMA device, a duplicate name, deleting twice.
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip

mroce_load
dmesg_mark
ip link add d0 type dummy && ip link set d0 up
ip link add d1 type dummy && ip link set d1 up
modprobe tun && ip tuntap add mode tun name tun0 && ip link set tun0 up

check "nonexistent netdev: No such device" \
	fails_with 'No such device' rdma link add bad0 type mroce netdev nosuchdev
check "loopback: refused" fails_with 'Invalid argument' rdma link add bad0 type mroce netdev lo
check "loopback: kernel log says why" dmesg_has 'bad0: refusing loopback device lo'
check "non-Ethernet (tun): refused" \
	fails_with 'Operation not supported' rdma link add bad0 type mroce netdev tun0
check "non-Ethernet: kernel log says why" dmesg_has 'bad0: refusing tun0: not an Ethernet device'

check "first device on d0" mroce_link_add m0 d0
check "second device on d0: refused" fails_with 'File exists' rdma link add m1 type mroce netdev d0
check "second device: kernel log names the existing one" \
	dmesg_has 'm1: refusing d0: it already has RDMA device m0'
check "duplicate name: refused" fails_with 'File exists' rdma link add m0 type mroce netdev d1
check "duplicate name: kernel log says why" \
	dmesg_has 'm0: an RDMA device with this name already exists'
check "names with a format character: refused" \
	fails_with 'Invalid argument' rdma link add 'm%d' type mroce netdev d1
check_eq "failed requests left nothing behind" m0 "$(ls /sys/class/infiniband)"

check "d1 still takes a device" mroce_link_add m1 d1
check "delete it" mroce_link_del m1
check "delete it twice: refused" fails_with 'Wrong device name' rdma link delete m1
check "delete a device that never existed: refused" \
	fails_with 'Wrong device name' rdma link delete nosuchdev
check_eq "m0 is still active" "4: ACTIVE" "$(port_attr m0 state)"
check "kernel log clean" dmesg_clean
ktap_finish
