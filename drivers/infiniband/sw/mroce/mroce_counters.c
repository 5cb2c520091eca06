// SPDX-License-Identifier: GPL-2.0
/*
 * hw counters: storage and the RDMA core's alloc_hw_port_stats/get_hw_stats.
 * See mroce_counters.h for the model and docs/telemetry.md for meanings.
 */
#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

#include "mroce_counters.h"

/* The sysfs/netlink name of each counter; order is enum mroce_counter. */
static const struct rdma_stat_desc mroce_counter_descs[] = {
	[MROCE_CNT_SENT_PKTS].name		= "sent_pkts",
	[MROCE_CNT_RCVD_PKTS].name		= "rcvd_pkts",
	[MROCE_CNT_SENT_BYTES].name		= "sent_bytes",
	[MROCE_CNT_RCVD_BYTES].name		= "rcvd_bytes",
	[MROCE_CNT_RDMA_SENDS].name		= "rdma_sends",
	[MROCE_CNT_RDMA_RECVS].name		= "rdma_recvs",
	[MROCE_CNT_SEND_ERR].name		= "send_err",
	[MROCE_CNT_LINK_DOWNED].name		= "link_downed",
	[MROCE_CNT_CQ_OVERFLOW].name		= "cq_overflow",

	[MROCE_CNT_ACKS_SENT].name		= "acks_sent",
	[MROCE_CNT_ACKS_RCVD].name		= "acks_rcvd",
	[MROCE_CNT_NAKS_SENT].name		= "naks_sent",
	[MROCE_CNT_NAKS_RCVD].name		= "naks_rcvd",
	[MROCE_CNT_PROBES_SENT].name		= "probes_sent",
	[MROCE_CNT_RETRANS_PKTS].name		= "retrans_pkts",
	[MROCE_CNT_SACK_GAPS].name		= "sack_gaps",
	[MROCE_CNT_RTO].name			= "rto_timeouts",
	[MROCE_CNT_PTO].name			= "pto_timeouts",
	[MROCE_CNT_SEND_RNR].name		= "send_rnr_err",
	[MROCE_CNT_RCVD_RNR].name		= "rcvd_rnr_err",
	[MROCE_CNT_RETRY_EXCEEDED].name		= "retry_exceeded_err",
	[MROCE_CNT_RNR_RETRY_EXCEEDED].name	= "retry_rnr_exceeded_err",
	[MROCE_CNT_DUP_REQ].name		= "duplicate_request",
	[MROCE_CNT_OUT_OF_WINDOW].name		= "out_of_window",

	[MROCE_CNT_ECN_CE_RCVD].name		= "ecn_ce_rcvd",
	[MROCE_CNT_RATE_HINTS_RCVD].name	= "rate_hints_rcvd",
	[MROCE_CNT_PATH_REKEYS].name		= "path_rekeys",

	[MROCE_CNT_CONN_OPENED].name		= "conn_opened",
	[MROCE_CNT_CONN_FAILED].name		= "conn_failed",
	[MROCE_CNT_CONN_LOST].name		= "conn_lost",
	[MROCE_CNT_CM_DREQ_RESENT].name	= "cm_dreq_resent",
	[MROCE_CNT_CM_DREQ_UNINSURED].name	= "cm_dreq_uninsured",
	[MROCE_CNT_CM_DREQ_EXPIRED].name	= "cm_dreq_expired",

	[MROCE_CNT_DROP_TRUNCATED].name		= "drop_truncated",
	[MROCE_CNT_DROP_BAD_VERSION].name	= "drop_bad_version",
	[MROCE_CNT_DROP_BAD_OPCODE].name	= "drop_bad_opcode",
	[MROCE_CNT_DROP_RESERVED].name		= "drop_reserved",
	[MROCE_CNT_DROP_BAD_FLAGS].name		= "drop_bad_flags",
	[MROCE_CNT_DROP_BAD_LENGTH].name	= "drop_bad_length",
	[MROCE_CNT_DROP_BAD_ACK_BLOCKS].name	= "drop_bad_ack_blocks",
	[MROCE_CNT_DROP_BAD_FIELD].name		= "drop_bad_field",
	[MROCE_CNT_DROP_UNKNOWN_CONN].name	= "drop_unknown_conn",
	[MROCE_CNT_DROP_WRONG_PEER].name	= "drop_wrong_peer",
	[MROCE_CNT_DROP_NOT_CONNECTED].name	= "drop_not_connected",
	[MROCE_CNT_DROP_BAD_PATH].name		= "drop_bad_path",
	[MROCE_CNT_DROP_STALE_GEN].name		= "drop_stale_gen",
	[MROCE_CNT_DROP_UNKNOWN_QP].name	= "drop_unknown_qp",
	[MROCE_CNT_DROP_QP_STATE].name		= "drop_qp_state",
	[MROCE_CNT_DROP_UNEXPECTED].name	= "drop_unexpected",
	[MROCE_CNT_DROP_BAD_RKEY].name		= "drop_bad_rkey",
	[MROCE_CNT_DROP_MR_BOUNDS].name		= "drop_mr_bounds",
	[MROCE_CNT_DROP_ACCESS].name		= "drop_access",
	[MROCE_CNT_DROP_BAD_ATOMIC].name	= "drop_bad_atomic",
	[MROCE_CNT_DROP_RQ_OVERFLOW].name	= "drop_rq_overflow",
	[MROCE_CNT_DROP_NOMEM].name		= "drop_nomem",
	[MROCE_CNT_DROP_RX_QUEUE].name		= "drop_rx_queue",
	[MROCE_CNT_NAKS_SENT_RNR].name		= "naks_sent_rnr",
	[MROCE_CNT_NAKS_SENT_INVALID_REQUEST].name = "naks_sent_invalid_request",
	[MROCE_CNT_NAKS_SENT_REMOTE_ACCESS].name = "naks_sent_remote_access",
	[MROCE_CNT_NAKS_SENT_REMOTE_OP].name	= "naks_sent_remote_op",
	[MROCE_CNT_NAKS_SENT_STREAM_PSN_WINDOW].name = "naks_sent_stream_psn_window",
	[MROCE_CNT_NAKS_SENT_UNKNOWN_CONN].name	= "naks_sent_unknown_conn",
	[MROCE_CNT_NAKS_SENT_UNKNOWN_STREAM].name = "naks_sent_unknown_stream",
	[MROCE_CNT_NAKS_SENT_STALE_GEN].name	= "naks_sent_stale_gen",
	[MROCE_CNT_NAKS_RCVD_RNR].name		= "naks_rcvd_rnr",
	[MROCE_CNT_NAKS_RCVD_INVALID_REQUEST].name = "naks_rcvd_invalid_request",
	[MROCE_CNT_NAKS_RCVD_REMOTE_ACCESS].name = "naks_rcvd_remote_access",
	[MROCE_CNT_NAKS_RCVD_REMOTE_OP].name	= "naks_rcvd_remote_op",
	[MROCE_CNT_NAKS_RCVD_STREAM_PSN_WINDOW].name = "naks_rcvd_stream_psn_window",
	[MROCE_CNT_NAKS_RCVD_UNKNOWN_CONN].name	= "naks_rcvd_unknown_conn",
	[MROCE_CNT_NAKS_RCVD_UNKNOWN_STREAM].name = "naks_rcvd_unknown_stream",
	[MROCE_CNT_NAKS_RCVD_STALE_GEN].name	= "naks_rcvd_stale_gen",
};

/**
 * mroce_counters_init() - allocate a device's counters (all zero)
 * @mdev: the device, before ib_register_device()
 *
 * Return: 0 or -ENOMEM.
 */
int mroce_counters_init(struct mroce_dev *mdev)
{
	/* A hole in the table would be a NULL name: an oops in sysfs. */
	BUILD_BUG_ON(ARRAY_SIZE(mroce_counter_descs) != MROCE_CNT_NR);
	/* mroce_counter_wire_err() maps decoder errors by offset. */
	BUILD_BUG_ON(MROCE_CNT_DROP_BAD_VERSION - MROCE_CNT_DROP_TRUNCATED !=
		     MROCE_WIRE_EVERSION - MROCE_WIRE_ETRUNC);
	BUILD_BUG_ON(MROCE_CNT_DROP_BAD_OPCODE - MROCE_CNT_DROP_TRUNCATED !=
		     MROCE_WIRE_EOPCODE - MROCE_WIRE_ETRUNC);
	BUILD_BUG_ON(MROCE_CNT_DROP_RESERVED - MROCE_CNT_DROP_TRUNCATED !=
		     MROCE_WIRE_ERESERVED - MROCE_WIRE_ETRUNC);
	BUILD_BUG_ON(MROCE_CNT_DROP_BAD_FLAGS - MROCE_CNT_DROP_TRUNCATED !=
		     MROCE_WIRE_EFLAGS - MROCE_WIRE_ETRUNC);
	BUILD_BUG_ON(MROCE_CNT_DROP_BAD_LENGTH - MROCE_CNT_DROP_TRUNCATED !=
		     MROCE_WIRE_ELENGTH - MROCE_WIRE_ETRUNC);
	BUILD_BUG_ON(MROCE_CNT_DROP_BAD_ACK_BLOCKS - MROCE_CNT_DROP_TRUNCATED !=
		     MROCE_WIRE_EBLOCKS - MROCE_WIRE_ETRUNC);
	BUILD_BUG_ON(MROCE_CNT_DROP_BAD_FIELD - MROCE_CNT_DROP_TRUNCATED !=
		     MROCE_WIRE_EFIELD - MROCE_WIRE_ETRUNC);
	/* mroce_counter_nak() maps NAK codes by offset, one block each way. */
	BUILD_BUG_ON(MROCE_CNT_NAKS_SENT_STALE_GEN - MROCE_CNT_NAKS_SENT_RNR !=
		     MROCE_NAK_STALE_GEN - MROCE_NAK_RNR);
	BUILD_BUG_ON(MROCE_CNT_NAKS_SENT_UNKNOWN_STREAM - MROCE_CNT_NAKS_SENT_RNR !=
		     MROCE_NAK_UNKNOWN_STREAM - MROCE_NAK_RNR);
	BUILD_BUG_ON(MROCE_CNT_NAKS_SENT_UNKNOWN_CONN - MROCE_CNT_NAKS_SENT_RNR !=
		     MROCE_NAK_UNKNOWN_CONN - MROCE_NAK_RNR);
	BUILD_BUG_ON(MROCE_CNT_NAKS_SENT_STREAM_PSN_WINDOW - MROCE_CNT_NAKS_SENT_RNR !=
		     MROCE_NAK_STREAM_PSN_WINDOW - MROCE_NAK_RNR);
	BUILD_BUG_ON(MROCE_CNT_NAKS_SENT_REMOTE_OP - MROCE_CNT_NAKS_SENT_RNR !=
		     MROCE_NAK_REMOTE_OP - MROCE_NAK_RNR);
	BUILD_BUG_ON(MROCE_CNT_NAKS_SENT_REMOTE_ACCESS - MROCE_CNT_NAKS_SENT_RNR !=
		     MROCE_NAK_REMOTE_ACCESS - MROCE_NAK_RNR);
	BUILD_BUG_ON(MROCE_CNT_NAKS_SENT_INVALID_REQUEST - MROCE_CNT_NAKS_SENT_RNR !=
		     MROCE_NAK_INVALID_REQUEST - MROCE_NAK_RNR);
	BUILD_BUG_ON(MROCE_CNT_NAKS_RCVD_RNR - MROCE_CNT_NAKS_SENT_RNR !=
		     MROCE_NAK_CODE_MAX);
	BUILD_BUG_ON(MROCE_CNT_NAKS_RCVD_STALE_GEN - MROCE_CNT_NAKS_RCVD_RNR !=
		     MROCE_NAK_STALE_GEN - MROCE_NAK_RNR);

	mdev->counters = alloc_percpu(struct mroce_counters);
	return mdev->counters ? 0 : -ENOMEM;
}

/* Safe on a device whose counters were never allocated. */
void mroce_counters_fini(struct mroce_dev *mdev)
{
	free_percpu(mdev->counters);
	mdev->counters = NULL;
}

/**
 * mroce_counter_read() - the current value of one counter
 * @mdev: the device
 * @id: the counter
 *
 * Return: the sum over every CPU.
 */
u64 mroce_counter_read(struct mroce_dev *mdev, enum mroce_counter id)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(mdev->counters, cpu)->val[id]);
	return sum;
}

/* The sysfs name of a counter, "?" for an id out of range. */
const char *mroce_counter_name(u32 id)
{
	return id < MROCE_CNT_NR ? mroce_counter_descs[id].name : "?";
}

static struct rdma_hw_stats *mroce_alloc_hw_port_stats(struct ib_device *ibdev,
							u32 port_num)
{
	return rdma_alloc_hw_stats_struct(mroce_counter_descs, MROCE_CNT_NR,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * One pass over the CPUs fills every counter, so we always refresh all of
 * them (the core then caches the set for its lifespan) whatever @index asks.
 */
static int mroce_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct mroce_dev *mdev = to_mdev(ibdev);
	const struct mroce_counters *pc;
	int cpu, i;

	if (port != MROCE_PORT || stats->num_counters != MROCE_CNT_NR)
		return -EINVAL;

	memset(stats->value, 0, MROCE_CNT_NR * sizeof(stats->value[0]));
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(mdev->counters, cpu);
		for (i = 0; i < MROCE_CNT_NR; i++)
			stats->value[i] += READ_ONCE(pc->val[i]);
	}
	return MROCE_CNT_NR;
}

const struct ib_device_ops mroce_counters_ops = {
	.alloc_hw_port_stats = mroce_alloc_hw_port_stats,
	.get_hw_stats = mroce_get_hw_stats,
};
