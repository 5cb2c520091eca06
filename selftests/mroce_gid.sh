#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The GID table follows the netdev's addresses: the default (link-local,
# from the MAC) GID plus one RoCE v2 GID per IPv4 and IPv6 address, added
# and removed as addresses come and go, seen in sysfs and by ibv_devinfo.
. "$(dirname "$0")/lib.sh"
require_root
require_cmd rdma ip ibv_devinfo

# Link-local address derived from a MAC (EUI-64), in GID form.
default_gid() {
	local IFS=:
	set -- $1
	printf 'fe80:0000:0000:0000:%02x%s:%sff:fe%s:%s%s\n' $((0x$1 ^ 2)) "$2" "$3" "$4" "$5" "$6"
}

gid_at() { gid_list "$1" | awk -v i="$2" '$1 == i { print $2 }'; }
foreign_gids() { gid_list "$1" | awk -v n="$2" '$4 != n'; }
only_gid_is() { [ "$(gid_list "$1" | awk '{ print $2 }')" = "$2" ]; }
devinfo_lacks() { ! ibv_devinfo -v -d "$1" | grep -E -- "$2"; }

mroce_load
dmesg_mark
topo_netns
mroce_link_add mroce_a va a
va_gid=$(default_gid "$(nsexec a cat /sys/class/net/va/address)")

check "default GID from the MAC" wait_for 5 has_gid mroce_a "$va_gid"
check_eq "GID index 0 is the default GID" "$va_gid" "$(gid_at mroce_a 0)"
check "IPv4 10.0.0.1 -> ::ffff:10.0.0.1" wait_for 5 has_gid mroce_a "$(gid_of_ip 10.0.0.1)"
check "IPv6 fd00::1" wait_for 5 has_gid mroce_a "$(gid_of_ip fd00::1)"
check_eq "every GID belongs to va" "" "$(foreign_gids mroce_a va)"
check "no GID of the peer's address" lacks_gid mroce_a "$(gid_of_ip 10.0.0.2)"

nsexec a ip addr add 10.1.2.3/24 dev va
check "added IPv4 10.1.2.3 appears" wait_for 5 has_gid mroce_a "$(gid_of_ip 10.1.2.3)"
nsexec a ip addr add fd01::7/64 dev va nodad
check "added IPv6 fd01::7 appears" wait_for 5 has_gid mroce_a "$(gid_of_ip fd01::7)"

devinfo=$(ibv_devinfo -v -d mroce_a)
for want in "::ffff:10.0.0.1, RoCE v2" "::ffff:10.1.2.3, RoCE v2" "fd00::1, RoCE v2" \
	    "fd01::7, RoCE v2"; do
	check "ibv_devinfo -v shows $want" grep -qF -- "$want" <<< "$devinfo"
done

nsexec a ip addr del 10.1.2.3/24 dev va
check "removed IPv4 10.1.2.3 disappears" wait_for 5 lacks_gid mroce_a "$(gid_of_ip 10.1.2.3)"
nsexec a ip addr del fd01::7/64 dev va
check "removed IPv6 fd01::7 disappears" wait_for 5 lacks_gid mroce_a "$(gid_of_ip fd01::7)"
check "ibv_devinfo no longer shows them" devinfo_lacks mroce_a '10\.1\.2\.3|fd01::7'
check "10.0.0.1 survived" has_gid mroce_a "$(gid_of_ip 10.0.0.1)"

nsexec a ip addr flush dev va
check "after flushing every address only the default GID is left" \
	wait_for 5 only_gid_is mroce_a "$va_gid"
nsexec a ip addr add 10.0.0.1/24 dev va
check "re-added IPv4 comes back" wait_for 5 has_gid mroce_a "$(gid_of_ip 10.0.0.1)"
check "kernel log clean" dmesg_clean
ktap_finish
