// SPDX-License-Identifier: GPL-2.0
/*
 * The transport's hooks into the verbs layer (mroce_xport.h): QPs attach to
 * their connection at RTR, start sending at RTS, let go of their WQEs on
 * ERR and detach at RESET or destroy. Plus module and device setup.
 *
 * RC here. UD and GSI QPs (the QP1 MAD tunnel) have no connection: their
 * send kicks go to mroce_ud.c, as do the UD opcodes in mroce_rx_skb().
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/ipv6.h>

#include "mroce_counters.h"
#include "mroce_knobs.h"
#include "mroce_peer.h"
#include "mroce_ud.h"

/* ------------------------------------------------------------ QP hooks */

static void mroce_xport_free(struct mroce_qp_xport *xp)
{
	kvfree(xp->chunks);
	bitmap_free(xp->resend);
	kfree(xp->rd_ssn);
	kvfree(xp->rmsg);
	kvfree(xp->rd);
	xp->chunks = NULL;
	xp->resend = NULL;
	xp->rd_ssn = NULL;
	xp->rmsg = NULL;
	xp->rd = NULL;
}

int mroce_xport_qp_create(struct mroce_qp *qp)
{
	struct mroce_qp_xport *xp = &qp->xport;
	u32 nmsg;

	INIT_LIST_HEAD(&xp->peer_node);
	INIT_LIST_HEAD(&xp->tx_node);
	INIT_LIST_HEAD(&xp->comp_node);
	if (qp->ibqp.qp_type != IB_QPT_RC)
		return 0;

	/* A message has at least one chunk: the stream window bounds both. */
	nmsg = MROCE_STREAM_WINDOW;
	if (!qp->srq)
		nmsg = min_t(u32, nmsg, roundup_pow_of_two(qp->rq.max_wr + 1));
	xp->rmsg_mask = nmsg - 1;

	xp->chunks = kvcalloc(MROCE_STREAM_WINDOW, sizeof(*xp->chunks),
			      GFP_KERNEL);
	xp->resend = bitmap_zalloc(MROCE_STREAM_WINDOW, GFP_KERNEL);
	xp->rd_ssn = kcalloc(MROCE_MAX_RD_ATOM, sizeof(*xp->rd_ssn),
			     GFP_KERNEL);
	xp->rmsg = kvcalloc(nmsg, sizeof(*xp->rmsg), GFP_KERNEL);
	xp->rd = kvcalloc(MROCE_RD_SLOTS, sizeof(*xp->rd), GFP_KERNEL);
	if (!xp->chunks || !xp->resend || !xp->rd_ssn || !xp->rmsg ||
	    !xp->rd) {
		mroce_xport_free(xp);
		return -ENOMEM;
	}
	return 0;
}

/* Remote and local address of a connected QP, from its GIDs. */
static int mroce_xport_addrs(const struct mroce_av *av, struct in6_addr *raddr,
			     struct in6_addr *laddr, bool *v6)
{
	memcpy(raddr, av->dgid.raw, sizeof(*raddr));
	memcpy(laddr, av->sgid.raw, sizeof(*laddr));
	*v6 = !ipv6_addr_v4mapped(raddr);
	if (*v6 == ipv6_addr_v4mapped(laddr) || ipv6_addr_any(raddr))
		return -EINVAL;
	return 0;
}

/* Leave the connection: RESET or destroy (modify_mutex held). */
static void mroce_xport_detach(struct mroce_qp *qp)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_peer *peer = xp->peer;

	if (!peer)
		return;
	mroce_peer_lock(peer);
	mroce_rx_tomb_add(peer, qp);
	mroce_comp_release(peer, qp);
	list_del_init(&xp->peer_node);
	xa_erase(&peer->qp_xa, mroce_qpn(qp));
	xp->state = MROCE_XQP_IDLE;
	WRITE_ONCE(xp->peer, NULL);
	xp->kicked = false;
	if (!--peer->n_qps && !peer->dead)
		mod_delayed_work(mroce_wq, &peer->gc_work, MROCE_PEER_LINGER);
	mroce_peer_unlock(peer);
	mroce_peer_put(peer);
}

/* Lookups that may meet a peer dying of its linger timeout before giving up. */
#define MROCE_ATTACH_TRIES	100

/* INIT -> RTR: find the connection to the remote GID and join it. */
static int mroce_xport_attach(struct mroce_qp *qp,
			      const struct ib_qp_attr *attr, int mask)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_dev *mdev = mroce_qp_dev(qp);
	struct in6_addr raddr, laddr;
	struct mroce_peer *peer;
	struct mroce_av av;
	unsigned int tries;
	bool v6;
	int err;

	if (mask & IB_QP_AV) {
		err = mroce_av_from_attr(&av, &attr->ah_attr);
		if (err)
			return err;
	} else {
		av = qp->av;
	}
	err = mroce_xport_addrs(&av, &raddr, &laddr, &v6);
	if (err)
		return err;

	for (tries = 0;; tries++) {
		peer = mroce_peer_get(mdev, &raddr, &laddr, v6);
		if (!peer)
			return READ_ONCE(mdev->xport.closing) ? -ENODEV :
								-ENOMEM;
		/*
		 * _bh: qp_xa is also written (erased) under the peer locks,
		 * which the receive softirq takes; its lock taken here with
		 * bottom halves on could deadlock against that (lockdep:
		 * SOFTIRQ-safe -> SOFTIRQ-unsafe). XA_FLAGS_LOCK_BH lets
		 * the allocation drop it the same way.
		 */
		err = xa_insert_bh(&peer->qp_xa, mroce_qpn(qp), qp, GFP_KERNEL);
		if (err) {
			mroce_peer_put(peer);
			return err;
		}
		mroce_peer_lock(peer);
		if (!peer->dead && !READ_ONCE(mdev->xport.closing))
			break;
		/*
		 * Lost a race with the peer's linger timeout, or with
		 * mroce_xport_dev_fail(), which took this lock after setting
		 * closing and so will not see us. A lingering peer is out of
		 * the table a moment after it died: the next lookup makes a
		 * fresh one, so the application never sees the race.
		 */
		err = peer->dead ? -EAGAIN : -ENODEV;
		xa_erase(&peer->qp_xa, mroce_qpn(qp));
		mroce_peer_unlock(peer);	/* alive if only closing */
		mroce_peer_put(peer);
		if (err != -EAGAIN || tries >= MROCE_ATTACH_TRIES)
			return err;
		usleep_range(100, 1000);
	}
	mroce_rx_tomb_clear(peer, mroce_qpn(qp));
	xp->remote_qpn = mask & IB_QP_DEST_QPN ? attr->dest_qp_num :
						 qp->attr.dest_qp_num;
	xp->max_dest_rd = mask & IB_QP_MAX_DEST_RD_ATOMIC ?
		attr->max_dest_rd_atomic : qp->attr.max_dest_rd_atomic;
	xp->min_rnr_timer = mask & IB_QP_MIN_RNR_TIMER ?
		attr->min_rnr_timer : qp->attr.min_rnr_timer;
	mroce_srx_init(&xp->srx, mask & IB_QP_RQ_PSN ? attr->rq_psn :
						       qp->attr.rq_psn);
	xp->gen++;
	xp->bound_nonce = 0;
	xp->rq_base = 0;
	xp->rq_taken = 0;
	xp->rd_exec = 0;
	xp->rd_resp = 0;
	memset(xp->rmsg, 0, (xp->rmsg_mask + 1) * sizeof(*xp->rmsg));
	memset(xp->rd, 0, MROCE_RD_SLOTS * sizeof(*xp->rd));
	/*
	 * A responder may answer READs and ATOMICs in RTR, before it learns
	 * its sq_psn (perftest's servers never leave RTR). Those answers
	 * start the stream at a PSN of our choosing, and the requester adopts
	 * it (mroce_rx_adopt()); RTS keeps a stream that already started.
	 */
	mroce_stx_init(&xp->stx, qp->attr.sq_psn);
	bitmap_zero(xp->resend, MROCE_STREAM_WINDOW);
	xp->n_resend = 0;
	xp->stx_live = false;
	xp->srx_live = false;
	xp->state = MROCE_XQP_RTR;
	WRITE_ONCE(xp->peer, peer);
	list_add_tail(&xp->peer_node, &peer->qps);
	peer->n_qps++;
	if (!mroce_conn_established(&peer->conn) &&
	    peer->conn.hs.state != MROCE_HS_REQ_SENT)
		mroce_peer_connect(peer, mroce_now());
	mroce_peer_unlock(peer);
	return 0;
}

/* RTR -> RTS: the send stream starts at sq_psn. */
static void mroce_xport_start(struct mroce_qp *qp,
			      const struct ib_qp_attr *attr, int mask)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_peer *peer = xp->peer;

	mroce_peer_lock(peer);
	if (!xp->stx_live)
		mroce_stx_init(&xp->stx, mask & IB_QP_SQ_PSN ? attr->sq_psn :
							       qp->attr.sq_psn);
	xp->sq_done = READ_ONCE(qp->sq.fetch);
	xp->sq_next = xp->sq_done;
	xp->cur = NULL;
	xp->send_msn = 0;
	xp->rd_next = 0;
	xp->rd_done = 0;
	xp->hold_until = 0;
	xp->rnr_left = xp->rnr_retry;
	xp->state = MROCE_XQP_RTS;
	mroce_tx_queue_qp(peer, qp);
	mroce_peer_unlock(peer);
}

/* Attributes the data path reads, for any modify of an attached QP. */
static void mroce_xport_attrs(struct mroce_qp *qp,
			      const struct ib_qp_attr *attr, int mask)
{
	struct mroce_qp_xport *xp = &qp->xport;
	u8 max_rd;

	if (mask & IB_QP_ACCESS_FLAGS)
		xp->access = attr->qp_access_flags;
	if (mask & IB_QP_RNR_RETRY)
		xp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		xp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		xp->max_dest_rd = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC) {
		/* 0 would forbid READ/ATOMIC outright; rxe hangs on it. */
		max_rd = clamp_t(u8, attr->max_rd_atomic, 1, MROCE_MAX_RD_ATOM);
		xp->max_rd = max_rd;
	}
	if (!xp->max_rd)
		xp->max_rd = 1;
}

int mroce_xport_qp_modify(struct mroce_qp *qp, const struct ib_qp_attr *attr,
			  int mask, enum ib_qp_state old_state,
			  enum ib_qp_state new_state)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_peer *peer;

	if (qp->ibqp.qp_type != IB_QPT_RC)
		return 0;

	switch (new_state) {
	case IB_QPS_RESET:
		mroce_xport_detach(qp);
		return 0;
	case IB_QPS_ERR:
		peer = xp->peer;
		if (peer) {
			mroce_peer_lock(peer);
			mroce_comp_release(peer, qp);
			mroce_peer_unlock(peer);
		}
		return 0;
	default:
		break;
	}

	peer = xp->peer;
	if (peer)
		mroce_peer_lock(peer);
	mroce_xport_attrs(qp, attr, mask);
	if (peer)
		mroce_peer_unlock(peer);	/* serves doorbells it held off */

	if (new_state == IB_QPS_RTR && old_state == IB_QPS_INIT)
		return mroce_xport_attach(qp, attr, mask);
	if (new_state == IB_QPS_RTS && old_state == IB_QPS_RTR)
		mroce_xport_start(qp, attr, mask);
	return 0;
}

void mroce_xport_qp_error(struct mroce_qp *qp)
{
	struct mroce_peer *peer = qp->xport.peer;

	if (!peer)
		return;
	mroce_peer_lock(peer);
	mroce_comp_release(peer, qp);
	mroce_peer_unlock(peer);
}

void mroce_xport_qp_destroy(struct mroce_qp *qp)
{
	mroce_xport_detach(qp);
	mroce_xport_free(&qp->xport);
}

void mroce_xport_sq_kick(struct mroce_qp *qp)
{
	struct mroce_peer *peer;

	if (qp->ibqp.qp_type != IB_QPT_RC) {
		mroce_ud_sq_kick(qp);
		return;
	}
	rcu_read_lock();
	peer = READ_ONCE(qp->xport.peer);
	if (peer)
		mroce_peer_kick(peer, qp);
	rcu_read_unlock();
}

/*
 * New receive WQEs need no action: a sender refused with RNR retries on
 * its own after the delay the NAK named, as IB prescribes.
 */
void mroce_xport_rq_kick(struct mroce_qp *qp)
{
}

void mroce_xport_srq_kick(struct mroce_srq *srq)
{
}

/* ------------------------------------------------------------ device */

int mroce_xport_dev_init(struct mroce_dev *mdev)
{
	struct mroce_xport_dev *xd = &mdev->xport;

	spin_lock_init(&xd->peer_lock);
	hash_init(xd->peers);
	ratelimit_state_init(&xd->nak_rs, HZ, 100);
	skb_queue_head_init(&xd->accept_q);
	INIT_WORK(&xd->accept_work, mroce_peer_accept_work);
	mroce_ack_hint_init(mdev);
	return mroce_net_get(mdev);
}

/**
 * mroce_xport_dev_fail() - the device's netdev is going away
 * @mdev: the device
 *
 * Process context (the netdev notifier, RTNL held). Nothing can reach the
 * wire any more, so no consumer should wait for an answer: every connected
 * QP goes to ERR with its WQEs flushed and IB_EVENT_QP_FATAL, and no QP can
 * connect again. NVMe-oF, for one, then fails and tears down its queues at
 * once instead of after its I/O and admin timeouts, and the unregistration
 * that follows is not held up by consumers waiting for their I/O. Safe to
 * call again (the notifier repeats NETDEV_UNREGISTER while the netdev
 * waits for its references).
 *
 * Return: true the first time.
 */
bool mroce_xport_dev_fail(struct mroce_dev *mdev)
{
	struct mroce_xport_dev *xd = &mdev->xport;
	struct mroce_peer *peer;
	unsigned int bkt;
	bool first;

	spin_lock_bh(&xd->peer_lock);
	first = !xd->closing;
	WRITE_ONCE(xd->closing, true);
	spin_unlock_bh(&xd->peer_lock);

	rcu_read_lock();
	hash_for_each_rcu(xd->peers, bkt, peer, hnode) {
		mroce_peer_lock(peer);
		if (!peer->dead)
			mroce_peer_fail_qps(peer, mroce_peer_pick_all, 0,
					    IB_WC_WR_FLUSH_ERR);
		mroce_peer_unlock(peer);
	}
	rcu_read_unlock();
	return first;
}

void mroce_xport_dev_fini(struct mroce_dev *mdev)
{
	struct mroce_xport_dev *xd = &mdev->xport;

	spin_lock_bh(&xd->peer_lock);
	xd->closing = true;
	spin_unlock_bh(&xd->peer_lock);
	cancel_work_sync(&xd->accept_work);
	skb_queue_purge(&xd->accept_q);
	mroce_peers_close_all(mdev);
	mroce_mad_dev_fini(mdev);
	mroce_ack_hint_fini(mdev);
	mroce_net_put(mdev);
}

/* ------------------------------------------------------------ module */

int mroce_xport_init(void)
{
	int err;

	err = mroce_knobs_init();
	if (err)
		return err;
	mroce_wq = alloc_workqueue("mroce", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!mroce_wq)
		return -ENOMEM;
	mroce_rx_init();
	err = mroce_net_init();
	if (err)
		destroy_workqueue(mroce_wq);
	return err;
}

void mroce_xport_exit(void)
{
	mroce_mad_exit();
	mroce_net_exit();
	mroce_rx_exit();
	mroce_ack_exit();
	destroy_workqueue(mroce_wq);
}
