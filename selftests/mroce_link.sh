#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma link add/show/delete: autoload of the module, devices in init_net and
# in other network namespaces, identity (parent, GUIDs), many devices, and
# rmmod with devices still present.
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip

# EUI-64 node GUID as sysfs prints it, from a MAC address.
guid_of_mac() {
	local IFS=:
	set -- $1
	printf '%02x%s:%s%s:%s%s:%s%s\n' $((0x$1 ^ 2)) "$2" "$3" ff fe "$4" "$5" "$6"
}

mroce_unload
dmesg_mark
ip link add d0 type dummy && ip link set d0 up

check_fail "mroce is not loaded yet" mroce_loaded
check "rdma link add autoloads mroce" mroce_link_add mroce0 d0
check "module was loaded by the request" mroce_loaded
check "rdma link show: ACTIVE, LINK_UP" \
	bash -c "rdma link show mroce0/1 | grep -q 'state ACTIVE physical_state LINK_UP'"
check "rdma link show names the netdev" \
	bash -c "rdma link show mroce0/1 | grep -q 'netdev d0'"
check_eq "sysfs parent is the netdev" d0 "$(cat /sys/class/infiniband/mroce0/parent)"
mac=$(cat /sys/class/net/d0/address)
check_eq "node GUID is the EUI-64 of the MAC" "$(guid_of_mac "$mac")" \
	"$(cat /sys/class/infiniband/mroce0/node_guid)"
check_eq "system image GUID likewise" "$(guid_of_mac "$mac")" \
	"$(cat /sys/class/infiniband/mroce0/sys_image_guid)"
check_eq "node type CA" "1: CA" "$(cat /sys/class/infiniband/mroce0/node_type)"
check_eq "node description" mroce "$(cat /sys/class/infiniband/mroce0/node_desc)"
check "rdma dev show" bash -c "rdma dev show mroce0 | grep -q 'node_type ca'"
check "kernel log: added on d0" dmesg_has 'mroce0: added on d0'

check "rdma link delete" mroce_link_del mroce0
check_fail "device is gone" rdma_dev_exists mroce0
check "the same name can be reused" mroce_link_add mroce0 d0
check "and deleted again" mroce_link_del mroce0

topo_netns
check "add from inside netns a" mroce_link_add mroce_a va a
check "add from inside netns b" mroce_link_add mroce_b vb b
check_eq "both listed" 2 "$(rdma link show | grep -c 'link mroce_[ab]/1 ')"
check "netns a sees mroce_a on va" \
	bash -c "ip netns exec a rdma link show mroce_a/1 | grep -q 'netdev va'"
check "delete from init_net" mroce_link_del mroce_a
check "delete from netns b" nsexec b rdma link delete mroce_b

many() {
	local i
	for i in $(seq 1 8); do
		ip link add "dd$i" type dummy && mroce_link_add "m$i" "dd$i" || return 1
	done
}
check "eight devices on eight netdevs" many
check "and one on the veth" mroce_link_add mroce_a va a
check_eq "nine devices registered" 9 "$(ls /sys/class/infiniband | wc -l)"
check "rmmod with nine devices present" rmmod mroce
check_eq "no RDMA device left" 0 "$(ls /sys/class/infiniband | wc -l)"
check "the netdevs are untouched" ip link show dd8
check "module loads again afterwards" modprobe mroce
check "kernel log clean" dmesg_clean
ktap_finish
