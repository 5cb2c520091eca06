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

# (a compressed module, e.g. a DKMS build for Debian's 6.12, keeps its suffix)
installed=/lib/modules/$(uname -r)/updates/mroce.ko${MROCE_KO##*.ko}
check_eq "installed copy is the one modprobe finds" "$installed" "$(modinfo -n mroce)"
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

# The transport's tunables (mroce_knobs.c): set at load and at run time, read
# back in their unit; -1 restores the default; bad values refused.
knobs() {
	local kv n v d
	modprobe -a ib_core ib_uverbs udp_tunnel ip6_udp_tunnel || return 1
	for kv in min_rto_us=20000 pace_horizon_us=500 rto_probe=0 rekey_rel=4096 \
		  hint_srtt=1024 dcc_target=5000000 dcc_floor=131072; do
		n=${kv%%=*} v=${kv#*=}
		insmod "$MROCE_KO" "$kv" || return 1
		[ "$(mroce_param "$n")" = "$v" ] || { echo "$n: $(mroce_param "$n") at load"; return 1; }
		rmmod mroce && insmod "$MROCE_KO" || return 1
		d=$(mroce_param "$n")
		mroce_param "$n" "$v" && [ "$(mroce_param "$n")" = "$v" ] &&
			mroce_param "$n" -1 && [ "$(mroce_param "$n")" = "$d" ] ||
			{ echo "$n: run-time write or -1"; return 1; }
		rmmod mroce || return 1
	done
}
check "tunables at load and at run time" knobs
check "insmod mroce" insmod "$MROCE_KO"
for kv in min_rto_us=0 rekey_rel=1000 rto_probe=256 hint_srtt=x dcc_floor=-2; do
	check_fail "run-time ${kv/=/ = } refused" mroce_param "${kv%%=*}" "${kv#*=}"
done
check_eq "refused values leave the defaults" "10000 2048 1" \
	"$(mroce_param min_rto_us) $(mroce_param rekey_rel) $(mroce_param rto_probe)"
check "rmmod" rmmod mroce
check_fail "insmod min_rto_us=0 fails" insmod "$MROCE_KO" min_rto_us=0
check "kernel log: why it was refused" dmesg_has 'min_rto_us=0 refused: breaks a transport invariant'
check "kernel log: run-time refusal on one line" dmesg_has 'hint_srtt=x refused: not an integer'
check_fail "module is gone" mroce_loaded
check "kernel log: loaded/unloaded messages" dmesg_has 'mroce: unloaded'
check "kernel log clean" dmesg_clean
ktap_finish
