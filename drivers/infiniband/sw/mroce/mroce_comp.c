// SPDX-License-Identifier: GPL-2.0
/*
 * Completions.
 *
 * Requester: a SEND or WRITE completes when every chunk of it has been
 * acknowledged, i.e. when the stream's lowest unacknowledged PSN passed its
 * last chunk; a READ or ATOMIC when its answer has been placed. The verbs
 * layer posts the CQEs in SQ order whatever order we complete in.
 *
 * Responder: chunks are placed wherever and whenever they arrive, but the
 * stream window (mroce_srx) releases them in stream order, reporting the
 * ones we tagged: the last chunk of a receive-consuming message (its
 * receive WQE completes: every earlier chunk is in by then), a READ or
 * ATOMIC request (it executes now, after every earlier WRITE landed, as IB
 * orders them), and the last chunk of an answer to one of our requests.
 * Since the peer numbers messages and chunks in the same order, the n-th
 * tag of a kind belongs to the n-th message of that kind; the PSN recorded
 * at arrival double-checks it.
 */
#include <linux/delay.h>

#include "mroce_counters.h"
#include "mroce_peer.h"

static void mroce_comp_advance(struct mroce_qp_xport *xp, struct mroce_qp *qp)
{
	while (xp->sq_done != xp->sq_next &&
	       ((struct mroce_swqe *)mroce_wq_slot(&qp->sq, xp->sq_done))
			->xport.state == MROCE_SW_DONE)
		xp->sq_done++;
}

static void mroce_comp_one(struct mroce_peer *peer, struct mroce_qp *qp,
			   struct mroce_swqe *w)
{
	w->xport.state = MROCE_SW_DONE;
	qp->xport.rnr_left = qp->xport.rnr_retry;
	mroce_counter_inc(peer->mdev, MROCE_CNT_RDMA_SENDS);
	mroce_sq_complete(qp, w, IB_WC_SUCCESS);
}

/* Complete the SENDs and WRITEs whose chunks are all acknowledged. */
static void mroce_comp_scan(struct mroce_peer *peer, struct mroce_qp *qp)
{
	struct mroce_qp_xport *xp = &qp->xport;
	u32 ssn;

	mroce_comp_advance(xp, qp);
	for (ssn = xp->sq_done; ssn != xp->sq_next; ssn++) {
		struct mroce_swqe *w = mroce_wq_slot(&qp->sq, ssn);

		if (w->xport.state == MROCE_SW_DONE ||
		    w->xport.state == MROCE_SW_WAIT_RESP)
			continue;
		if (w->xport.state != MROCE_SW_SENT ||
		    !mroce_psn_before(w->xport.last_psn, xp->stx.una))
			break;
		mroce_comp_one(peer, qp, w);
		if (xp->state != MROCE_XQP_RTS)
			return;
	}
	mroce_comp_advance(xp, qp);
}

/* mroce_comp_run()'s work, for a non-empty comp_list. */
void __mroce_comp_run(struct mroce_peer *peer)
{
	struct mroce_qp *qp;

	while (!list_empty(&peer->comp_list)) {
		qp = list_first_entry(&peer->comp_list, struct mroce_qp,
				      xport.comp_node);
		list_del_init(&qp->xport.comp_node);
		if (qp->xport.state == MROCE_XQP_RTS)
			mroce_comp_scan(peer, qp);
		/*
		 * Stream window, fence or READ limit may have opened for
		 * what waits; a QP with nothing waiting stays off the list.
		 */
		if (!mroce_tx_drained(qp))
			mroce_tx_queue_qp(peer, qp);
	}
}

/* ------------------------------------------------------ in stream order */

static bool mroce_comp_recv(struct mroce_peer *peer, struct mroce_qp *qp,
			    u32 psn)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_rmsg *m = &xp->rmsg[xp->rq_base & xp->rmsg_mask];
	struct ib_wc wc = {};

	mroce_peer_assert_rx(peer);
	if (!m->rwqe || !(m->flags & MROCE_RMSG_EOM) || m->eom_psn != psn)
		return false;
	wc.status = IB_WC_SUCCESS;
	wc.byte_len = m->len;
	wc.src_qp = xp->remote_qpn;
	wc.port_num = MROCE_PORT;
	if (m->flags & MROCE_RMSG_WRITE) {
		wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
		wc.wc_flags = IB_WC_WITH_IMM;
		wc.ex.imm_data = cpu_to_be32(m->ex);
	} else {
		wc.opcode = IB_WC_RECV;
		if (m->flags & MROCE_RMSG_IMM) {
			wc.wc_flags = IB_WC_WITH_IMM;
			wc.ex.imm_data = cpu_to_be32(m->ex);
		} else if (m->flags & MROCE_RMSG_INV) {
			wc.wc_flags = IB_WC_WITH_INVALIDATE;
			wc.ex.invalidate_rkey = m->ex;
			wc.status = mroce_mr_remote_invalidate(qp, m->ex);
		}
	}
	mroce_rq_complete(qp, m->rwqe, &wc, m->flags & MROCE_RMSG_SE);
	mroce_counter_inc(peer->mdev, MROCE_CNT_RDMA_RECVS);
	memset(m, 0, sizeof(*m));
	xp->rq_base++;
	return true;
}

static bool mroce_comp_request(struct mroce_peer *peer, struct mroce_qp *qp,
			       u32 psn)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_rdreq *rd = &xp->rd[xp->rd_exec & (MROCE_RD_SLOTS - 1)];

	mroce_peer_assert_both(peer);
	if (rd->state != MROCE_RD_STORED || rd->ord != xp->rd_exec ||
	    rd->req_psn != psn)
		return false;
	if (rd->op != MROCE_OP_READ_REQ && !mroce_rx_atomic_exec(peer, qp, rd))
		return false;
	rd->state = MROCE_RD_READY;
	xp->rd_exec++;
	mroce_tx_queue_qp(peer, qp);
	return true;
}

static bool mroce_comp_answer(struct mroce_peer *peer, struct mroce_qp *qp,
			      u32 psn)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_swqe *w;
	u32 ssn;

	mroce_peer_assert_both(peer);
	if (xp->rd_done == xp->rd_next)
		return false;
	ssn = xp->rd_ssn[xp->rd_done & (MROCE_MAX_RD_ATOM - 1)];
	w = mroce_wq_slot(&qp->sq, ssn);
	if (w->ssn != ssn || w->xport.state != MROCE_SW_WAIT_RESP ||
	    w->xport.resp_psn != psn)
		return false;
	/* The answer proves the request arrived, whatever its ACK says. */
	mroce_xport_stream_ack(xp, w->xport.first_psn);
	xp->rd_done++;
	mroce_comp_one(peer, qp, w);
	mroce_comp_mark(peer, qp);
	return true;
}

/**
 * mroce_comp_pop() - act on the chunks the stream window releases in order
 * @peer: the connection, locked
 * @qp: a QP that just accepted a chunk
 *
 * A tag that does not match what we recorded at arrival means the peer
 * broke the protocol; the QP goes to error rather than completing the
 * wrong work request.
 */
void mroce_comp_pop(struct mroce_peer *peer, struct mroce_qp *qp)
{
	struct mroce_qp_xport *xp = &qp->xport;
	bool ok;
	u32 psn;
	u8 tag;

	mroce_peer_assert_rx(peer);
	while (xp->state != MROCE_XQP_DEAD &&
	       mroce_srx_pop(&xp->srx, &psn, &tag)) {
		switch (tag) {
		case MROCE_TAG_RECV:
			ok = mroce_comp_recv(peer, qp, psn);
			break;
		case MROCE_TAG_REQ:
			ok = mroce_comp_request(peer, qp, psn);
			break;
		default:
			ok = mroce_comp_answer(peer, qp, psn);
			break;
		}
		if (!ok) {
			mroce_counter_inc(peer->mdev, MROCE_CNT_DROP_UNEXPECTED);
			mroce_comp_fail_qp(peer, qp, NULL, IB_WC_REM_OP_ERR);
		}
	}
}

/* --------------------------------------------------------------- errors */

/* The transport lets go of everything the QP had (it stays attached). */
void mroce_comp_release(struct mroce_peer *peer, struct mroce_qp *qp)
{
	struct mroce_qp_xport *xp = &qp->xport;

	mroce_peer_assert_both(peer);
	/* A new death forgets an old refusal; a second release keeps it. */
	if (xp->state != MROCE_XQP_DEAD)
		xp->refused_code = 0;
	xp->state = MROCE_XQP_DEAD;
	xp->cur = NULL;
	xp->hold_until = 0;
	if (xp->resend)
		bitmap_zero(xp->resend, MROCE_STREAM_WINDOW);
	xp->n_resend = 0;
	list_del_init(&xp->tx_node);
	list_del_init(&xp->comp_node);
	if (xp->rmsg)
		memset(xp->rmsg, 0, (xp->rmsg_mask + 1) * sizeof(*xp->rmsg));
	if (xp->rd)
		memset(xp->rd, 0, MROCE_RD_SLOTS * sizeof(*xp->rd));
}

/**
 * mroce_comp_fail_qp() - the transport gives up on a QP
 * @peer: its connection, locked
 * @qp: the QP
 * @swqe: the send WQE that failed (completes with @status), or NULL when
 *	  the failure belongs to no WQE of ours (responder errors)
 * @status: the completion status
 *
 * Everything else outstanding is flushed by the verbs layer, in order.
 */
void mroce_comp_fail_qp(struct mroce_peer *peer, struct mroce_qp *qp,
			struct mroce_swqe *swqe, enum ib_wc_status status)
{
	struct mroce_qp_xport *xp = &qp->xport;

	mroce_peer_assert_both(peer);
	if (xp->state == MROCE_XQP_DEAD)
		return;
	if (status == IB_WC_RETRY_EXC_ERR)
		mroce_counter_inc(peer->mdev, MROCE_CNT_RETRY_EXCEEDED);
	else if (status == IB_WC_RNR_RETRY_EXC_ERR)
		mroce_counter_inc(peer->mdev, MROCE_CNT_RNR_RETRY_EXCEEDED);
	mroce_comp_release(peer, qp);
	if (swqe && swqe->xport.state != MROCE_SW_DONE) {
		swqe->xport.state = MROCE_SW_DONE;
		mroce_sq_complete(qp, swqe, status);
	}
	mroce_qp_set_error(qp, !swqe);
}

/* A responder-side violation (IB class C): the QP fails without a WQE. */
void mroce_comp_fail_access(struct mroce_peer *peer, struct mroce_qp *qp)
{
	mroce_peer_assert_both(peer);
	if (qp->xport.state == MROCE_XQP_DEAD)
		return;
	mroce_comp_release(peer, qp);
	mroce_qp_set_error(qp, false);
	mroce_qp_event(qp, IB_EVENT_QP_ACCESS_ERR);
}

/* The oldest send WQE we have not completed, or NULL. */
static struct mroce_swqe *mroce_comp_oldest(struct mroce_qp *qp)
{
	struct mroce_qp_xport *xp = &qp->xport;
	u32 ssn;

	for (ssn = xp->sq_done; ssn != xp->sq_next; ssn++) {
		struct mroce_swqe *w = mroce_wq_slot(&qp->sq, ssn);

		if (w->xport.state != MROCE_SW_DONE)
			return w;
	}
	return xp->cur;
}

/* A QP with work outstanding fails, its oldest WQE with the status. */
static bool mroce_comp_pick_busy(struct mroce_qp *qp, u64 arg,
				 struct mroce_swqe **swqe)
{
	struct mroce_qp_xport *xp = &qp->xport;

	if (!mroce_xqp_sends(xp))
		return false;
	*swqe = xp->state == MROCE_XQP_RTS ? mroce_comp_oldest(qp) : NULL;
	return *swqe || xp->stx.una != xp->stx.next ||
	       !list_empty(&xp->tx_node);
}

/*
 * The connection gave up (retries exhausted, handshake failed): every QP
 * with work outstanding fails its oldest WQE with @status.
 */
void mroce_comp_fail_peer(struct mroce_peer *peer, enum ib_wc_status status)
{
	mroce_peer_assert_both(peer);
	mroce_peer_fail_qps(peer, mroce_comp_pick_busy, 0, status);
}

/* ------------------------------------------------- device going away */

/*
 * How long the netdev's unregistration waits for kernel consumers to poll
 * the flushes of a failed device, at most. They poll within a softirq or a
 * work item, well under a millisecond; only a consumer that polls on its
 * own schedule (IB_POLL_DIRECT) may take this long, and it learns at its
 * next poll anyway.
 */
#define MROCE_COMP_POLLED_WAIT_MS	1000

/* Whether a kernel CQ still holds completions nobody polled. */
static bool mroce_comp_cq_unpolled(struct ib_cq *ibcq)
{
	struct mroce_cq *cq;

	if (!ibcq)
		return false;
	cq = to_mcq(ibcq);
	return !cq->is_user && READ_ONCE(cq->cons) != READ_ONCE(cq->prod);
}

/* Whether a kernel consumer has yet to poll a failed QP's completions. */
static bool mroce_comp_unpolled(struct mroce_dev *mdev)
{
	struct mroce_qp *qp;
	unsigned long qpn;
	bool unpolled = false;

	/* Under the lock a QP is alive, and so are its CQs (mroce_qp_get()). */
	xa_lock_irq(&mdev->qp_xa);
	xa_for_each(&mdev->qp_xa, qpn, qp) {
		if (qp->is_user || READ_ONCE(qp->state) != IB_QPS_ERR)
			continue;
		if (mroce_comp_cq_unpolled(qp->ibqp.send_cq) ||
		    mroce_comp_cq_unpolled(qp->ibqp.recv_cq)) {
			unpolled = true;
			break;
		}
	}
	xa_unlock_irq(&mdev->qp_xa);
	return unpolled;
}

/**
 * mroce_comp_wait_polled() - let kernel consumers see a failed device first
 * @mdev: the device, every QP of which mroce_xport_dev_fail() just failed
 *
 * Process context. Waits (bounded) until the kernel consumers have polled
 * the flushed completions, and their pollers running in softirq have also
 * run the completion callbacks, before the caller starts unregistering.
 * The RDMA core's unregistration removes the clients first: nvme-rdma's
 * remove deletes its controllers, and a controller being deleted refuses
 * error recovery, so a flush it polls only after that is ignored and the
 * I/O in flight waits for its timeouts (30 s, then 60 s for the admin
 * queue), the device's unregistration with it, and the netdev's for the
 * references the device holds ("waiting for veth00 to become free",
 * session 14's CI). Polled first, the flush starts the recovery, which
 * fails the I/O at once.
 */
void mroce_comp_wait_polled(struct mroce_dev *mdev)
{
	unsigned long until = jiffies +
			      msecs_to_jiffies(MROCE_COMP_POLLED_WAIT_MS);

	while (mroce_comp_unpolled(mdev) && time_before(jiffies, until))
		usleep_range(500, 1000);
	/*
	 * A poll takes a batch off the CQ before it calls the batch's
	 * callbacks: a softirq poller that emptied the CQ may still be in
	 * them. A grace period waits for softirq handlers that are running.
	 */
	synchronize_net();
}
