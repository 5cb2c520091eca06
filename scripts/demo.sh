#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`, run inside the test VM: two endpoints, an mroce device on
# each, and what the RDMA stack and rdma-core see. Grows with every feature.
. "$MROCE_REPO/selftests/lib.sh"

say() { printf '\n=== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "Two endpoints: netns a (va) <-> netns b (vb), one veth pair"
topo_netns || exit 1
run ip -n a -br addr show va
run ip -n b -br addr show vb
run ip netns exec a ping -c 1 -W 2 10.0.0.2 | grep -E 'transmitted|bytes from'

say "One mroce device per endpoint ('rdma link add' loads the module)"
run ip netns exec a rdma link add mroce_a type mroce netdev va || exit 1
run ip netns exec b rdma link add mroce_b type mroce netdev vb || exit 1
run rdma link show
run ip netns exec a rdma link show
wait_for 5 has_gid mroce_a "$(gid_of_ip fd00::1)"
wait_for 5 has_gid mroce_b "$(gid_of_ip fd00::2)"

say "rdma-core sees them through its stock rxe provider"
run ibv_devices
run ibv_devinfo -d mroce_a
say "GID tables (RoCE v2): default GID from the MAC, then one per address"
for dev in mroce_a mroce_b; do
	printf '$ ibv_devinfo -v -d %s | grep GID\n' "$dev"
	ibv_devinfo -v -d "$dev" | grep GID
done

say "Check"
ok=1
for pair in mroce_a:10.0.0.1 mroce_a:fd00::1 mroce_b:10.0.0.2 mroce_b:fd00::2; do
	if has_gid "${pair%%:*}" "$(gid_of_ip "${pair#*:}")"; then
		echo "  ${pair%%:*} has the GID of ${pair#*:}"
	else
		echo "  MISSING: ${pair%%:*} lacks the GID of ${pair#*:}"
		ok=
	fi
done
[ -n "$ok" ] || exit 1
echo "  two registered mroce devices with correct GIDs"
echo
echo "Data transfer over mroce arrives with the transport (see README.md, Status)."
