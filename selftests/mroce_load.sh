#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Loading and unloading mroce: insmod from the build tree, modprobe of the
# installed copy, repeated cycles, and the UDP 4791 guard it holds while
# loaded.
. "$(dirname "$0")/lib.sh"
require_root
require_cmd modprobe ss

guard_sockets() { ss -Huan 'sport = :4791' | wc -l; }

mroce_unload
dmesg_mark

check "ib_core, ib_uverbs and the UDP tunnel modules load" \
	modprobe -a ib_core ib_uverbs udp_tunnel ip6_udp_tunnel
check "insmod from the build tree" insmod "$MROCE_KO"
check "module is live" grep -q '^mroce .* Live' /proc/modules
check_eq "UDP 4791 held for IPv4 and IPv6" 2 "$(guard_sockets)"
check "rmmod" rmmod mroce
check_eq "UDP 4791 released" 0 "$(guard_sockets)"

check "installed copy is the one modprobe finds" \
	bash -c '[ "$(modinfo -n mroce)" = /lib/modules/$(uname -r)/updates/mroce.ko ]'
check "modprobe mroce" modprobe mroce
check "modprobe -r mroce" modprobe -r mroce

cycles() {
	local i
	for i in 1 2 3 4 5; do
		# modprobe -r also unloaded the now unused dependencies
		modprobe -a ib_core ib_uverbs udp_tunnel ip6_udp_tunnel || return 1
		insmod "$MROCE_KO" && rmmod mroce || return 1
		modprobe mroce && modprobe -r mroce || return 1
	done
}
check "10 load/unload cycles" cycles
check_fail "module is gone" mroce_loaded
check "kernel log: loaded/unloaded messages" dmesg_has 'mroce: unloaded'
check "kernel log clean" dmesg_clean
ktap_finish
