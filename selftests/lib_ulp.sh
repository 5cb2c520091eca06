#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the RDMA CM and kernel-ULP selftests (rping & co, NVMe-oF,
# SMB Direct, lifecycle). Source after lib.sh and lib_traffic.sh.
#
# The same scripts run over mroce and over rdma_rxe (DEV_TYPE=mroce|rxe), so
# every test is first shown to pass on the reference. Topology: both veth
# ends in init_net, policy-routed onto the wire (topo_policy), because rxe on
# 6.1 cannot work across namespaces and because nvme-rdma, nvmet-rdma, cifs
# and ksmbd create their CM IDs in init_net anyway:
#
#   dev A = $ULP_DEV_A on veth00 10.0.0.1   <-- veth -->   dev B = $ULP_DEV_B on veth01 10.0.0.2
#   (client / host / initiator)                            (server / target)
#
#   ulp_setup                 topology, module (mroce: with $ULP_MROCE_PARAMS), both
#                             devices, GIDs
#   ulp_teardown              undo it (also safe after a partial setup)
#   ulp_need_cm               skip_all unless DEV_TYPE can run RDMA CM
#   ulp_loss LEVEL            netem_loss on both directions (0 clears, nL a qdisc)
#   ulp_losses                the loss levels to run: ULP_LOSSES or "0 1"
#                             (rxe: "0"; it collapses at 1 %, vm-harness §7)
#   ulp_klog_has_ulp_errors   the kernel log since the mark shows ULP errors:
#                             lines matching $ULP_BAD_KLOG but not
#                             $ULP_OK_KLOG (both set by each test)

DEV_TYPE=${DEV_TYPE:-mroce}
ULP_IP_A=10.0.0.1
ULP_IP_B=10.0.0.2
ULP_NDEV_A=veth00
ULP_NDEV_B=veth01
ULP_DEV_A=${DEV_TYPE}_a
ULP_DEV_B=${DEV_TYPE}_b
ULP_BAD_KLOG=${ULP_BAD_KLOG:-}

case $DEV_TYPE in
mroce|rxe) ;;
*) echo "DEV_TYPE must be mroce or rxe, not '$DEV_TYPE'"; exit 1 ;;
esac

ulp_losses() {
	if [ -n "${ULP_LOSSES:-}" ]; then
		echo "$ULP_LOSSES"
	elif [ "$DEV_TYPE" = rxe ]; then
		echo 0
	else
		echo 0 1
	fi
}

ulp_setup() {
	local backlog
	topo_policy 1 || return 1
	# Kernel consumers that do not bind a source address (the SMB Direct
	# client resolves with src = NULL) would otherwise find 10.0.0.2 in the
	# local table and loop back inside device B: send them over the wire
	# too. (Its own preference: the kernel takes it for a duplicate of
	# topo_policy's "from 10.0.0.1 to 10.0.0.2" rule otherwise.)
	ip rule add pref 99 iif lo to "$ULP_IP_B" lookup 100 || return 1
	case $DEV_TYPE in
	rxe)
		mroce_unload
		modprobe rdma_rxe || return 1
		# rxe 6.1 WARNs and flushes QPs when the veth backlog (1000)
		# overflows under load; a deeper backlog keeps the reference
		# clean (mroce runs with the default and must cope).
		backlog=$(sysctl -n net.core.netdev_max_backlog)
		[ "$backlog" -ge 10000 ] || sysctl -qw net.core.netdev_max_backlog=10000
		rdma link add "$ULP_DEV_A" type rxe netdev "$ULP_NDEV_A" &&
			rdma link add "$ULP_DEV_B" type rxe netdev "$ULP_NDEV_B" || return 1
		;;
	mroce)
		rmmod rdma_rxe 2> /dev/null
		# ULP_MROCE_PARAMS: module parameters (or ko=PATH), for benchmarks
		# shellcheck disable=SC2086 # one word per parameter
		mroce_load ${ULP_MROCE_PARAMS:-} || return 1
		mroce_link_add "$ULP_DEV_A" "$ULP_NDEV_A" &&
			mroce_link_add "$ULP_DEV_B" "$ULP_NDEV_B" || return 1
		;;
	esac
	wait_for 5 has_gid "$ULP_DEV_A" "$(gid_of_ip "$ULP_IP_A")" &&
		wait_for 5 has_gid "$ULP_DEV_B" "$(gid_of_ip "$ULP_IP_B")"
}

# The setup as the first subtest; without it nothing else can run.
ulp_setup_or_finish() {
	check "setup: veth pair, $DEV_TYPE devices $ULP_DEV_A and $ULP_DEV_B" ulp_setup
	if [ "$_ktap_fail" -gt 0 ]; then
		ulp_teardown
		ktap_finish
	fi
}

ulp_teardown() {
	rdma link delete "$ULP_DEV_A" 2> /dev/null
	rdma link delete "$ULP_DEV_B" 2> /dev/null
	ip rule del pref 99 2> /dev/null
	topo_policy_cleanup 1
	return 0
}

# RDMA CM needs, besides the RC transport, UD/QP1 (the MAD tunnel) and the
# port's CM capability; until mroce has them, the tests skip with the reason.
ulp_cm_missing() {
	local why cap
	[ "$DEV_TYPE" = rxe ] && return 1
	if ! why=$(transport_ready "" "$ULP_DEV_A"); then
		echo "$why"
		return 0
	fi
	cap=$(port_attr "$ULP_DEV_A" cap_mask 2> /dev/null)
	if [ -z "$cap" ] || [ $(( cap & (1 << 16) )) -eq 0 ]; then
		echo "mroce has no RDMA CM yet (port cap_mask ${cap:-?} lacks IB_PORT_CM_SUP: no UD/QP1 MAD tunnel)"
		return 0
	fi
	return 1
}

ulp_need_cm() {
	local why
	if why=$(ulp_cm_missing); then
		ulp_teardown
		skip_all "$why"
	fi
}

ulp_loss() {
	local pct=$1 d
	for d in "$ULP_NDEV_A" "$ULP_NDEV_B"; do netem_loss "" "$d" "$pct"; done
}

ulp_klog_has_ulp_errors() {
	local bad
	[ -n "$ULP_BAD_KLOG" ] || return 1
	bad=$(dmesg_since_mark | grep -E -- "$ULP_BAD_KLOG" |
		grep -Ev -- "${ULP_OK_KLOG:-^\$}") || return 1
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/#   kernel: /'
	return 0
}

# A subtest: the kernel log since the mark has neither warnings nor ULP errors.
ulp_klog_clean() { dmesg_clean && ! ulp_klog_has_ulp_errors; }

# RDMA device statistics of one device, for the log: "sent/received packets".
ulp_pkts() {
	local p=/sys/class/infiniband/$1/ports/1
	if [ -r "$p/hw_counters/sent_pkts" ]; then
		echo "$(cat "$p/hw_counters/sent_pkts")/$(cat "$p/hw_counters/rcvd_pkts")"
	else
		echo "?/?"
	fi
}

# As check, but CMD runs in this shell, so it may set variables, start and
# wait for background jobs. Returns whether the subtest passed.
ulp_check_here() {
	local desc=$1 log=$MROCE_TEST_OUT/.ulp_check.log
	shift
	if "$@" > "$log" 2>&1; then
		ktap_ok "$desc"
		return 0
	fi
	ktap_fail "$desc" "command failed: $*"
	sed 's/^/#   /' "$log"
	return 1
}
