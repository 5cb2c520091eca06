// SPDX-License-Identifier: GPL-2.0
/*
 * Instantiates the tracepoints declared in mroce_trace.h. Callers include
 * mroce_trace.h and call trace_mroce_<event>(); a disabled tracepoint costs
 * a static branch.
 *
 * Also the telemetry the protocol core reports through its optional
 * callbacks (re-keys, congestion state), and the loss notes behind
 * mroce_retransmit: when the core (or a NAK) declares a chunk lost, its
 * chunk record remembers why and on which path transmission; the resend
 * reports that. All of it runs under peer->lock.
 */
#include "mroce_peer.h"

#define CREATE_TRACE_POINTS
#include "mroce_trace.h"

/* mroce_conn_ops.rekey */
void mroce_trace_conn_rekey(void *ctx, u8 path, u8 old_gen, u16 old_sport,
			    u8 why)
{
	struct mroce_peer *peer = ctx;
	const struct mroce_path *p = &peer->paths[path];

	trace_mroce_path_rekey(peer->mdev->ibdev.index, peer->id,
			       mroce_trace_path(path, old_gen), p->gen,
			       old_sport, p->sport, why);
}

/*
 * Set while mroce_cc_update has a probe (tracefs, perf, BPF): the core
 * compares congestion state around every ACK only for a listener.
 */
bool mroce_trace_cc_on;

int mroce_trace_cc_reg(void)
{
	WRITE_ONCE(mroce_trace_cc_on, true);
	return 0;
}

void mroce_trace_cc_unreg(void)
{
	WRITE_ONCE(mroce_trace_cc_on, false);
}

/* mroce_conn_ops.cc */
void mroce_trace_conn_cc(void *ctx, u8 why)
{
	static const u8 event[] = {
		[MROCE_CCW_ACK] = MROCE_CC_ACK,
		[MROCE_CCW_ECN] = MROCE_CC_ECN,
		[MROCE_CCW_LOSS] = MROCE_CC_LOSS,
		[MROCE_CCW_RTO] = MROCE_CC_RTO,
		[MROCE_CCW_HINT] = MROCE_CC_HINT,
	};
	struct mroce_peer *peer = ctx;
	const struct mroce_conn *c = &peer->conn;

	if (!trace_mroce_cc_update_enabled() || why >= ARRAY_SIZE(event))
		return;
	trace_mroce_cc_update(peer->mdev->ibdev.index, peer->id, c->cc.cwnd,
			      c->cc.ssthresh, c->cc.alpha, c->cc.hint,
			      mroce_cc_pace_rate(&c->cc, c->prm, c->rtt.srtt),
			      c->inflight, event[why]);
}

/* A chunk goes out again on @slot: from where, and why. */
void mroce_trace_resend(struct mroce_peer *peer, struct mroce_qp *qp,
			const struct mroce_tx_slot *slot, u32 psn, u32 len)
{
	const struct mroce_chunk *c;
	u32 old_path = U32_MAX;

	if (!trace_mroce_retransmit_enabled())
		return;
	c = &qp->xport.chunks[psn & MROCE_STREAM_MASK];
	if (c->lost_path != MROCE_TRACE_NO_PATH)
		old_path = mroce_trace_path(c->lost_path, c->lost_gen);
	trace_mroce_retransmit(peer->mdev->ibdev.index, peer->id,
			       mroce_trace_path(slot->path, slot->gen),
			       slot->psn, mroce_qpn(qp), psn, old_path,
			       c->lost_psn, len, c->lost_why);
}
