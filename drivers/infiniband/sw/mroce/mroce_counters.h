/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device-wide hw counters, exported through the RDMA core: they appear in
 * /sys/class/infiniband/<dev>/ports/1/hw_counters/<name> and in
 * `rdma statistic show link <dev>/1`. docs/telemetry.md explains each one.
 *
 * Storage is one array of u64 per CPU, so bumping a counter is a single
 * this_cpu_add(): no lock, no atomic, safe in any context (process,
 * softirq, hard irq). Readers sum over the possible CPUs; a sum taken while
 * writers run is a snapshot, not an atomic cut, which is all a counter
 * needs. Counters never go backwards and are never reset (rdma_rxe
 * behaves the same way); tools take deltas.
 *
 * Names follow rdma_rxe's where the meaning is the same (sent_pkts,
 * rcvd_pkts, duplicate_request, rcvd_rnr_err, ...), so scripts written for
 * rxe keep working.
 */
#ifndef MROCE_COUNTERS_H
#define MROCE_COUNTERS_H

#include <linux/percpu.h>

#include "mroce.h"
#include "mroce_wire.h"

enum mroce_counter {
	/* Traffic: every mroce packet, data and control, IP/UDP excluded. */
	MROCE_CNT_SENT_PKTS,
	MROCE_CNT_RCVD_PKTS,
	MROCE_CNT_SENT_BYTES,
	MROCE_CNT_RCVD_BYTES,
	MROCE_CNT_RDMA_SENDS,		/* send work requests completed */
	MROCE_CNT_RDMA_RECVS,		/* receive work requests completed */
	MROCE_CNT_SEND_ERR,		/* the IP layer refused a packet */
	MROCE_CNT_LINK_DOWNED,		/* port went from ACTIVE to DOWN */
	MROCE_CNT_CQ_OVERFLOW,		/* a CQ overflowed (went into error) */

	/* Reliability. */
	MROCE_CNT_ACKS_SENT,
	MROCE_CNT_ACKS_RCVD,
	MROCE_CNT_NAKS_SENT,		/* every code, RNR included */
	MROCE_CNT_NAKS_RCVD,
	MROCE_CNT_PROBES_SENT,
	MROCE_CNT_RETRANS_PKTS,		/* data packets sent again */
	MROCE_CNT_SACK_GAPS,		/* packets declared lost from a SACK gap */
	MROCE_CNT_RTO,			/* retransmission timeouts */
	MROCE_CNT_PTO,			/* probe (tail-loss) timeouts */
	MROCE_CNT_SEND_RNR,		/* RNR NAKs sent */
	MROCE_CNT_RCVD_RNR,		/* RNR NAKs received */
	MROCE_CNT_RETRY_EXCEEDED,	/* QP errored: retry_cnt exhausted */
	MROCE_CNT_RNR_RETRY_EXCEEDED,	/* QP errored: rnr_retry exhausted */
	MROCE_CNT_DUP_REQ,		/* duplicate data packets dropped */
	MROCE_CNT_OUT_OF_WINDOW,	/* beyond the path or stream window */

	/* Congestion and paths. */
	MROCE_CNT_ECN_CE_RCVD,		/* CE-marked data packets received */
	MROCE_CNT_RATE_HINTS_RCVD,	/* ACKs carrying a non-zero rate hint */
	MROCE_CNT_PATH_REKEYS,

	/* Connections (one per peer, shared by its QPs). */
	MROCE_CNT_CONN_OPENED,
	MROCE_CNT_CONN_FAILED,		/* handshake gave up */
	MROCE_CNT_CONN_LOST,		/* peer restarted or closed it */
	MROCE_CNT_CM_DREQ_RESENT,	/* CM DREQs the MAD tunnel sent again */
	MROCE_CNT_CM_DREQ_UNINSURED,	/* ... sent without a copy: memo full, no memory */
	MROCE_CNT_CM_DREQ_EXPIRED,	/* ... copies dropped after their last try, no DREP */

	/*
	 * Received packets dropped (or refused with a NAK), by reason. The
	 * decoder classes come first and in enum mroce_wire_err order, so
	 * mroce_counter_wire_err() is an addition.
	 */
	MROCE_CNT_DROP_TRUNCATED,
	MROCE_CNT_DROP_BAD_VERSION,
	MROCE_CNT_DROP_BAD_OPCODE,
	MROCE_CNT_DROP_RESERVED,
	MROCE_CNT_DROP_BAD_FLAGS,
	MROCE_CNT_DROP_BAD_LENGTH,
	MROCE_CNT_DROP_BAD_ACK_BLOCKS,
	MROCE_CNT_DROP_BAD_FIELD,
	/* Well-formed, but refused by the state it addresses. */
	MROCE_CNT_DROP_UNKNOWN_CONN,	/* no connection with that dst_conn */
	MROCE_CNT_DROP_WRONG_PEER,	/* dst_conn belongs to another address */
	MROCE_CNT_DROP_NOT_CONNECTED,	/* connection not established */
	MROCE_CNT_DROP_BAD_PATH,	/* path id not negotiated */
	MROCE_CNT_DROP_STALE_GEN,	/* older path generation */
	MROCE_CNT_DROP_UNKNOWN_QP,	/* no such QP, or not ours to this peer */
	MROCE_CNT_DROP_QP_STATE,	/* QP cannot receive (not RTR/RTS) */
	MROCE_CNT_DROP_UNEXPECTED,	/* opcode the QP does not expect now */
	MROCE_CNT_DROP_BAD_RKEY,	/* no MR, stale key, invalidated, other PD */
	MROCE_CNT_DROP_MR_BOUNDS,	/* range outside the MR */
	MROCE_CNT_DROP_ACCESS,		/* MR lacks the remote right asked for */
	MROCE_CNT_DROP_BAD_ATOMIC,	/* misaligned or not advertised */
	MROCE_CNT_DROP_RQ_OVERFLOW,	/* SEND larger than its receive WQE */
	MROCE_CNT_DROP_NOMEM,		/* no memory to process the packet */
	MROCE_CNT_DROP_RX_QUEUE,	/* the receiving CPU's queue was full */

	/*
	 * NAKs by code (a part of naks_sent / naks_rcvd each), in enum
	 * mroce_nak_code order from MROCE_NAK_RNR: mroce_counter_nak() adds.
	 */
	MROCE_CNT_NAKS_SENT_RNR,
	MROCE_CNT_NAKS_SENT_INVALID_REQUEST,
	MROCE_CNT_NAKS_SENT_REMOTE_ACCESS,
	MROCE_CNT_NAKS_SENT_REMOTE_OP,
	MROCE_CNT_NAKS_SENT_STREAM_PSN_WINDOW,
	MROCE_CNT_NAKS_SENT_UNKNOWN_CONN,
	MROCE_CNT_NAKS_SENT_UNKNOWN_STREAM,
	MROCE_CNT_NAKS_SENT_STALE_GEN,
	MROCE_CNT_NAKS_RCVD_RNR,
	MROCE_CNT_NAKS_RCVD_INVALID_REQUEST,
	MROCE_CNT_NAKS_RCVD_REMOTE_ACCESS,
	MROCE_CNT_NAKS_RCVD_REMOTE_OP,
	MROCE_CNT_NAKS_RCVD_STREAM_PSN_WINDOW,
	MROCE_CNT_NAKS_RCVD_UNKNOWN_CONN,
	MROCE_CNT_NAKS_RCVD_UNKNOWN_STREAM,
	MROCE_CNT_NAKS_RCVD_STALE_GEN,

	MROCE_CNT_NR
};

struct mroce_counters {
	u64 val[MROCE_CNT_NR];
};

int mroce_counters_init(struct mroce_dev *mdev);
void mroce_counters_fini(struct mroce_dev *mdev);
u64 mroce_counter_read(struct mroce_dev *mdev, enum mroce_counter id);
const char *mroce_counter_name(u32 id);

extern const struct ib_device_ops mroce_counters_ops;

/* Any context; cheap enough for every packet. */
static inline void mroce_counter_add(struct mroce_dev *mdev,
				     enum mroce_counter id, u64 n)
{
	this_cpu_add(mdev->counters->val[id], n);
}

static inline void mroce_counter_inc(struct mroce_dev *mdev,
				     enum mroce_counter id)
{
	this_cpu_inc(mdev->counters->val[id]);
}

/*
 * A NAK sent (@sent) or received with @code: naks_sent or naks_rcvd and
 * the code's own counter. A code the decoder would refuse counts in the
 * total only.
 */
static inline void mroce_counter_nak(struct mroce_dev *mdev, bool sent,
				     u8 code)
{
	enum mroce_counter first = sent ? MROCE_CNT_NAKS_SENT_RNR :
					  MROCE_CNT_NAKS_RCVD_RNR;

	mroce_counter_inc(mdev, sent ? MROCE_CNT_NAKS_SENT :
				       MROCE_CNT_NAKS_RCVD);
	if (code >= MROCE_NAK_RNR && code <= MROCE_NAK_CODE_MAX)
		mroce_counter_inc(mdev, first + (code - MROCE_NAK_RNR));
}

/* The drop counter of a decoder error. */
static inline enum mroce_counter mroce_counter_wire_err(enum mroce_wire_err err)
{
	/* OK and ENOSPC never come out of mroce_decode(); stay in bounds. */
	if (unlikely(err < MROCE_WIRE_ETRUNC || err > MROCE_WIRE_EFIELD))
		return MROCE_CNT_DROP_BAD_FIELD;
	return MROCE_CNT_DROP_TRUNCATED + (err - MROCE_WIRE_ETRUNC);
}

#endif /* MROCE_COUNTERS_H */
