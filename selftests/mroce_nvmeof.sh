#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics over RDMA: an nvmet target (nvmet-rdma, a memory-backed
# null_blk namespace) on device B, `nvme connect -t rdma` from device A, at
# 0 % and 1 % netem loss on both directions. The bytes are checked where
# they land, not by the side that sent them: the host writes fio crc32c
# patterns over the fabric and the target verifies them on its own disk;
# the target writes patterns locally and the host reads and verifies them
# over the fabric (128 KiB sequential and 4 KiB random, both ways). Fails
# on any I/O error, verify error, I/O timeout, controller reset/reconnect
# or keep-alive expiry in the kernel log.
#
# DEV_TYPE=rxe runs it over rdma_rxe (mroce_nvmeof_rxe.sh); ULP_LOSSES
# overrides the loss levels.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_traffic.sh"
. "$(dirname "$0")/lib_ulp.sh"
. "$(dirname "$0")/lib_nvmeof.sh"
require_root
require_cmd rdma nvme fio tc

ULP_BAD_KLOG='I/O [0-9]+ (QID [0-9]+ )?timeout|timeout, (reset|abort)|error recovery|Reconnecting in|resetting controller|I/O error|failed with status|keep-alive timer .*expired|fatal error occurred|nvme_rdma.*(error|failed)|RDMA_CM_EVENT_(REJECTED|UNREACHABLE|ADDR_ERROR|ROUTE_ERROR|CONNECT_ERROR)'

cd "$MROCE_TEST_OUT" || exit 1
nvmeof_need_modules

# Bytes both ways on the host's veth. Not frames: mroce's transmit bursts
# (on by default since session 49) leave a run of packets as one frame.
veth_bytes() {
	local d=/sys/class/net/$ULP_NDEV_A/statistics
	echo $(( $(cat "$d/tx_bytes") + $(cat "$d/rx_bytes") ))
}

run_level() {
	local l=$1 dev tx0 tx1
	dmesg_mark
	ulp_loss "$l"
	tx0=$(veth_bytes)
	if ! check "$l% loss: nvme connect -t rdma ($DEV_TYPE)" connect; then
		ulp_loss 0
		return
	fi
	dev=$(host_disk)
	ktap_info "$l% loss: $dev, $(dmesg_since_mark | grep -o 'creating [0-9]* I/O queues' | head -n 1)"

	# Host -> target: what the host wrote over RDMA is on the target's disk.
	check "$l% loss: host writes 8 MiB 128 KiB sequential + 2 MiB 4 KiB random" \
		fio_run "$l-hw.log" "$dev" write w128:write:128k:0:8M w4:randwrite:4k:16M:2M
	ktap_info "$l% loss: write 128 KiB $(fio_bw "$l-hw.log" 1 write), 4 KiB $(fio_bw "$l-hw.log" 2 write)"
	check "$l% loss: the target's disk holds exactly what the host wrote (crc32c)" \
		fio_run "$l-tv.log" "$TGT_DISK" verify w128:write:128k:0:8M w4:randwrite:4k:16M:2M

	# Target -> host: data written locally on the target reads back right.
	fio_run "$l-tw.log" "$TGT_DISK" write r128:write:128k:32M:8M r4:randwrite:4k:48M:2M ||
		ktap_fail "$l% loss: the target writes its local patterns"
	check "$l% loss: host reads 8 MiB 128 KiB sequential + 2 MiB 4 KiB random, verifies (crc32c)" \
		fio_run "$l-hr.log" "$dev" verify r128:write:128k:32M:8M r4:randwrite:4k:48M:2M
	ktap_info "$l% loss: read 128 KiB $(fio_bw "$l-hr.log" 1 read), 4 KiB $(fio_bw "$l-hr.log" 2 read)"

	check "$l% loss: nvme disconnect" disconnect
	ulp_loss 0
	tx1=$(veth_bytes)
	# 20 MiB of data crossed the veth (10 MiB each way), headers on top.
	check "$l% loss: the I/O crossed the veth ($((tx1 - tx0)) bytes)" \
		test $((tx1 - tx0)) -gt $((20 << 20))
	ktap_info "$l% loss: $ULP_DEV_A sent/received $(ulp_pkts "$ULP_DEV_A") packets"
	check "$l% loss: no I/O errors, timeouts, resets or warnings in the kernel log" ulp_klog_clean
}

ulp_setup_or_finish
ulp_need_cm
check "target: nvmet-rdma on $ULP_IP_B:$PORT, null_blk namespace" target_up
if [ $_ktap_fail -gt 0 ]; then
	target_down
	ulp_teardown
	ktap_finish
fi
# The checker itself: a range nobody wrote must fail verification.
check_fail "fio verification catches data that is not the pattern" \
	fio_run unwritten.log "$TGT_DISK" verify never:write:128k:64M:1M
for l in $(ulp_losses); do
	run_level "$l"
	disconnect > /dev/null 2>&1
done
target_down
rmmod nvme_rdma nvme_fabrics 2> /dev/null
ulp_teardown
ktap_finish
