// SPDX-License-Identifier: GPL-2.0
/*
 * Receive: demultiplexing, validation, placement and the responder.
 *
 * Every packet is decoded by the core (mroce_decode()), which validates
 * every field it returns; what depends on our state is checked here:
 * connection id and the sender's address, path and stream windows, QP
 * number and state, receive WQEs, rkeys, MR bounds and rights, lengths
 * against scatter lists. A bad packet is counted by reason and dropped, or
 * refused with a NAK where docs/protocol.md says so; it never reaches a
 * WQE or memory it does not belong to.
 *
 * Data is placed on arrival, out of order, straight from the skb into the
 * destination pages (one copy: zero-copy frags from the sending side stay
 * frags up to here). WRITEs carry their destination, SENDs their receive
 * WQE's ordinal (msn), READ_RESPs the read ordinal of our request. Stream
 * PSNs de-duplicate; completions and READ/ATOMIC execution wait for stream
 * order (mroce_comp_pop()).
 *
 * Everything after the connection lookup runs under peer->lock. With
 * rx_burst > 1 packets are handled in bursts (mroce_rx_skb()): a run of
 * packets for one connection takes the lock once and pays once for what
 * follows them (ACKs, completions, transmitting, the timer, the flush).
 */
#include <linux/inetdevice.h>
#include <linux/interrupt.h>
#include <linux/moduleparam.h>
#include <net/addrconf.h>

#include "mroce_counters.h"
#include "mroce_peer.h"
#include "mroce_place.h"
#include "mroce_steer.h"
#include "mroce_trace.h"
#include "mroce_ud.h"

enum mroce_rx_res {
	MROCE_RX_ACCEPT,	/* placed (or a stream duplicate): path-accept */
	MROCE_RX_REFUSE,	/* NAK it */
	MROCE_RX_FATAL,		/* NAK it, and the responder QP fails too */
	MROCE_RX_DROP,		/* ignore it */
	MROCE_RX_IGNORE,	/* path-accept it, but the stream never sees it */
};

struct mroce_rx_ctx {
	struct mroce_peer	*peer;
	struct mroce_qp		*qp;
	struct sk_buff		*skb;
	const struct mroce_pkt	*pkt;
	u32			hdr;	/* payload offset in the skb */
	u8			tag;	/* for mroce_srx_accept() */
	u8			code;	/* NAK code */
	u32			arg;	/* NAK argument */
	bool			dup;	/* the stream had it already */
};

/*
 * Receive in bursts: packets are collected per CPU as they arrive and
 * handled after the stack's receive batch (a tasklet, same softirq pass
 * as a rule), each run of packets for one connection under one hold of
 * its lock. 0 or 1: each packet on arrival, alone -- the default until an
 * A/B shows bursts win. Session 49, with transmit bursts on: rx_burst=16
 * did worse than 1 (64 KiB WRITE 0 % 1.23x against 1.60x of per-packet
 * sends, and a 1.27x longer 64 B median latency; 5 rounds). Likely why:
 * the tasklet is a second softirq; when the first ran long (2 ms, easily
 * reached under TCG) it waits for ksoftirqd, so an ACK can come late
 * enough for a spurious RTO (docs/transport.md).
 */
static uint mroce_rx_burst = 1;
module_param_named(rx_burst, mroce_rx_burst, uint, 0644);
MODULE_PARM_DESC(rx_burst,
		 "packets of one connection per receive burst, 0/1 = none (default 1)");

static bool mroce_rx_ack_flush = true;
module_param_named(rx_ack_flush, mroce_rx_ack_flush, bool, 0644);
MODULE_PARM_DESC(rx_ack_flush,
		 "acknowledge at the end of a receive burst, not at the delayed-ACK deadline (default on)");

/* The device a packet was addressed to (held: ib_device_put()). */
static struct mroce_dev *mroce_rx_dev(const struct mroce_rx_meta *meta)
{
	struct net_device *ndev = meta->dev;

	if (!ndev)
		return NULL;
	/* Loopback: the address says which of our netdevs was meant. */
	if (ndev->flags & IFF_LOOPBACK) {
		if (meta->v6)
			ndev = ipv6_dev_find(meta->net, &meta->daddr, NULL);
		else
			ndev = __ip_dev_find(meta->net, meta->daddr.s6_addr32[3],
					     false);
		if (!ndev)
			return NULL;
	}
	return mroce_dev_get_by_netdev(ndev);
}

static void mroce_rx_count(struct mroce_dev *mdev, enum mroce_counter why,
			   const struct mroce_pkt *pkt, struct sk_buff *skb,
			   const struct mroce_rx_meta *meta)
{
	mroce_counter_inc(mdev, why);
	trace_mroce_rx_drop(mdev->ibdev.index, why, pkt ? pkt->c.opcode : 0,
			    skb->len, pkt ? pkt->c.dst_conn : 0,
			    ntohs(meta->sport));
}

/* A packet dropped before we know its connection. */
static void mroce_rx_drop(const struct mroce_rx_meta *meta,
			  enum mroce_counter why, const struct mroce_pkt *pkt,
			  struct sk_buff *skb)
{
	struct mroce_dev *mdev = mroce_rx_dev(meta);

	if (!mdev)
		return;
	mroce_counter_inc(mdev, MROCE_CNT_RCVD_PKTS);
	mroce_counter_add(mdev, MROCE_CNT_RCVD_BYTES, skb->len);
	mroce_rx_count(mdev, why, pkt, skb, meta);
	ib_device_put(&mdev->ibdev);
}

static void mroce_rx_peer_count(struct mroce_rx_ctx *rc, enum mroce_counter why)
{
	mroce_counter_inc(rc->peer->mdev, why);
	trace_mroce_rx_drop(rc->peer->mdev->ibdev.index, why,
			    rc->pkt->c.opcode, rc->skb->len,
			    rc->pkt->c.dst_conn, 0);
}

/*
 * A stream duplicate (a chunk the stream, or the tombstone of its QP, had
 * already): counted, marked for the ACK that answers it, and accepted.
 */
static enum mroce_rx_res mroce_rx_dup_res(struct mroce_rx_ctx *rc)
{
	mroce_rx_peer_count(rc, MROCE_CNT_DUP_REQ);
	rc->dup = true;
	return MROCE_RX_ACCEPT;
}

static enum mroce_rx_res mroce_rx_nak_res(struct mroce_rx_ctx *rc, u8 code,
					  u32 arg, bool fatal)
{
	rc->code = code;
	rc->arg = arg;
	return fatal ? MROCE_RX_FATAL : MROCE_RX_REFUSE;
}

static enum mroce_counter mroce_rx_mr_counter(enum mroce_mr_err why)
{
	switch (why) {
	case MROCE_MR_BOUNDS:
		return MROCE_CNT_DROP_MR_BOUNDS;
	case MROCE_MR_ACCESS:
		return MROCE_CNT_DROP_ACCESS;
	default:
		return MROCE_CNT_DROP_BAD_RKEY;
	}
}

/* ------------------------------------------------------------ responder */

/*
 * The receive WQE of RQ ordinal @msn, taking WQEs in order up to it.
 * Returns NULL and sets the result (RNR, or a fatal error) when it can't.
 */
static struct mroce_rmsg *mroce_rx_rmsg(struct mroce_rx_ctx *rc, u32 msn,
					enum mroce_rx_res *res)
{
	struct mroce_qp *qp = rc->qp;
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_rwqe *rwqe;
	int err;

	mroce_peer_assert_rx(rc->peer);
	if (mroce_psn_before(msn, xp->rq_base)) {
		/* Its message completed already: the stream says otherwise. */
		mroce_rx_peer_count(rc, MROCE_CNT_DROP_UNEXPECTED);
		*res = mroce_rx_nak_res(rc, MROCE_NAK_INVALID_REQUEST, 0, true);
		return NULL;
	}
	if (msn - xp->rq_base > xp->rmsg_mask)
		goto rnr;
	while (msn - xp->rq_base >= xp->rq_taken - xp->rq_base) {
		err = mroce_rq_take(qp, &rwqe);
		if (err == -EINVAL) {
			/* User space posted garbage; the QP is failing. */
			mroce_rx_peer_count(rc, MROCE_CNT_DROP_QP_STATE);
			*res = mroce_rx_nak_res(rc, MROCE_NAK_REMOTE_OP, 0, false);
			return NULL;
		}
		if (err)
			goto rnr;
		xp->rmsg[xp->rq_taken & xp->rmsg_mask].rwqe = rwqe;
		xp->rq_taken++;
	}
	return &xp->rmsg[msn & xp->rmsg_mask];

rnr:
	*res = mroce_rx_nak_res(rc, MROCE_NAK_RNR,
				mroce_rnr_timer_us(xp->min_rnr_timer), false);
	return NULL;
}

/* SEND, SEND_IMM, SEND_INV, WRITE, WRITE_IMM. */
static enum mroce_rx_res mroce_rx_msg(struct mroce_rx_ctx *rc)
{
	const struct mroce_data *d = &rc->pkt->u.d;
	struct mroce_qp *qp = rc->qp;
	u8 op = rc->pkt->c.opcode;
	u16 flags = rc->pkt->c.flags;
	u32 len = rc->pkt->payload_len;
	struct mroce_rmsg *m = NULL;
	enum mroce_rx_res res;
	enum mroce_mr_err why;
	u64 dest;
	int err;

	if (op != MROCE_OP_WRITE) {
		m = mroce_rx_rmsg(rc, d->msn, &res);
		if (!m)
			return res;
	}

	if (op == MROCE_OP_WRITE || op == MROCE_OP_WRITE_IMM) {
		if (len) {
			if (mroce_write_dest(d->va, d->length, d->msg_offset,
					     len, &dest) != MROCE_PLACE_OK) {
				mroce_rx_peer_count(rc, MROCE_CNT_DROP_MR_BOUNDS);
				return mroce_rx_nak_res(rc,
					MROCE_NAK_REMOTE_ACCESS, 0, true);
			}
			/* The QP's rkey cache: one lookup per message. */
			err = mroce_rkey_copy_in_skb(qp, d->rkey, dest, rc->skb,
						     rc->hdr, len, &why);
			if (err) {
				mroce_rx_peer_count(rc, mroce_rx_mr_counter(why));
				return mroce_rx_nak_res(rc,
					MROCE_NAK_REMOTE_ACCESS, 0, true);
			}
		}
		if (op == MROCE_OP_WRITE)
			return MROCE_RX_ACCEPT;
		if (flags & MROCE_F_EOM) {
			m->len = d->length;
			m->ex = d->imm;
			m->flags = MROCE_RMSG_WRITE | MROCE_RMSG_IMM;
		}
	} else {
		if (len > m->rwqe->length ||
		    d->msg_offset > m->rwqe->length - len) {
			mroce_rx_peer_count(rc, MROCE_CNT_DROP_RQ_OVERFLOW);
			return mroce_rx_nak_res(rc, MROCE_NAK_REMOTE_OP, 0, true);
		}
		if (len) {
			err = mroce_rwqe_copy_in_skb(qp, m->rwqe, d->msg_offset,
						     rc->skb, rc->hdr, len,
						     &why);
			if (err) {
				mroce_rx_peer_count(rc, mroce_rx_mr_counter(why));
				return mroce_rx_nak_res(rc, MROCE_NAK_REMOTE_OP,
							0, true);
			}
		}
		if (flags & MROCE_F_EOM) {
			m->len = d->msg_offset + len;
			m->flags = 0;
			if (op == MROCE_OP_SEND_IMM) {
				m->ex = d->imm;
				m->flags = MROCE_RMSG_IMM;
			} else if (op == MROCE_OP_SEND_INV) {
				/*
				 * Invalidated when the message completes in
				 * stream order (mroce_comp_recv()): earlier
				 * WRITEs into that MR may still be on the way.
				 */
				m->ex = d->imm;
				m->flags = MROCE_RMSG_INV;
			}
		}
	}
	if (flags & MROCE_F_EOM) {
		m->flags |= MROCE_RMSG_EOM;
		if (flags & MROCE_F_SE)
			m->flags |= MROCE_RMSG_SE;
		m->eom_psn = d->stream_psn;
		rc->tag = MROCE_TAG_RECV;
	}
	return MROCE_RX_ACCEPT;
}

/* READ_REQ and ATOMIC_REQ: check now, execute in stream order. */
static enum mroce_rx_res mroce_rx_request(struct mroce_rx_ctx *rc)
{
	const struct mroce_data *d = &rc->pkt->u.d;
	struct mroce_qp_xport *xp = &rc->qp->xport;
	bool atomic = rc->pkt->c.opcode == MROCE_OP_ATOMIC_REQ;
	struct mroce_rdreq *rd;
	enum mroce_mr_err why;
	struct mroce_mr *mr;
	u32 len, access;

	mroce_peer_assert_both(rc->peer);
	/* At most max_dest_rd_atomic requests pending, as we promised. */
	if (mroce_psn_before(d->msn, xp->rd_exec) ||
	    d->msn - xp->rd_resp >= min_t(u32, xp->max_dest_rd,
					  MROCE_RD_SLOTS / 2)) {
		mroce_rx_peer_count(rc, MROCE_CNT_OUT_OF_WINDOW);
		return mroce_rx_nak_res(rc, MROCE_NAK_INVALID_REQUEST, 0, true);
	}
	rd = &xp->rd[d->msn & (MROCE_RD_SLOTS - 1)];
	if (rd->state == MROCE_RD_SENT &&
	    mroce_psn_before(rd->last_psn, xp->stx.una))
		rd->state = MROCE_RD_FREE;
	if (rd->state != MROCE_RD_FREE) {
		/* Our answer to the slot's last request is not yet ACKed. */
		mroce_rx_peer_count(rc, MROCE_CNT_OUT_OF_WINDOW);
		return mroce_rx_nak_res(rc, MROCE_NAK_STREAM_PSN_WINDOW, 0,
					false);
	}

	if (atomic) {
		if (d->va & 7) {
			mroce_rx_peer_count(rc, MROCE_CNT_DROP_BAD_ATOMIC);
			return mroce_rx_nak_res(rc, MROCE_NAK_INVALID_REQUEST,
						0, true);
		}
		len = sizeof(u64);
		access = IB_ACCESS_REMOTE_ATOMIC;
	} else {
		len = d->length;
		access = IB_ACCESS_REMOTE_READ;
	}
	if (len) {
		mr = mroce_mr_get(rc->peer->mdev, d->rkey, rc->qp->ibqp.pd,
				  access, d->va, len, true, &why);
		if (!mr) {
			mroce_rx_peer_count(rc, mroce_rx_mr_counter(why));
			return mroce_rx_nak_res(rc, MROCE_NAK_REMOTE_ACCESS, 0,
						true);
		}
		mroce_mr_put(mr);
	}

	memset(rd, 0, sizeof(*rd));
	rd->va = d->va;
	rd->rkey = d->rkey;
	rd->length = atomic ? 0 : d->length;
	rd->swap_add = d->swap_add;
	rd->compare = d->compare;
	rd->ssn = d->ssn;
	rd->ord = d->msn;
	rd->req_psn = d->stream_psn;
	rd->op = atomic ? d->atomic_op + 1 : MROCE_OP_READ_REQ;
	rd->state = MROCE_RD_STORED;
	rc->tag = MROCE_TAG_REQ;
	return MROCE_RX_ACCEPT;
}

static int mroce_rx_atomic_fn(void *priv, struct page *page, unsigned int off,
			      unsigned int len)
{
	struct mroce_rdreq *rd = priv;
	u8 *kaddr;
	u64 *p;
	u64 old;

	/*
	 * The request's iova is 8-byte aligned, and so is its address: the
	 * RDMA core registers a user MR only if its iova has the address's
	 * offset in the page, FRWR pages are page aligned, and the DMA MR's
	 * iova is the address. Should that ever not hold, a piece of an
	 * operand split by a page end must not get a full-width cmpxchg,
	 * which would write past the page: the request fails instead.
	 */
	if (len != sizeof(u64) || (off & 7))
		return -EINVAL;
	kaddr = kmap_local_page(page);
	p = (u64 *)(kaddr + off);

	/* Atomic against the CPUs too, not only against other requests. */
	if (rd->op - 1 == MROCE_ATOMIC_CMP_SWP) {
		old = cmpxchg64(p, rd->compare, rd->swap_add);
	} else {
		old = READ_ONCE(*p);
		while (!try_cmpxchg64(p, &old, old + rd->swap_add))
			;
	}
	rd->orig = old;
	kunmap_local(kaddr);
	return 0;
}

/* Execute an ATOMIC in stream order; false if its MR went away meanwhile. */
bool mroce_rx_atomic_exec(struct mroce_peer *peer, struct mroce_qp *qp,
			  struct mroce_rdreq *rd)
{
	struct mroce_mr *mr;
	int err;

	mr = mroce_mr_get(peer->mdev, rd->rkey, qp->ibqp.pd,
			  IB_ACCESS_REMOTE_ATOMIC, rd->va, sizeof(u64), true,
			  NULL);
	if (!mr)
		return false;
	err = mroce_mr_walk(mr, rd->va, sizeof(u64), mroce_rx_atomic_fn, rd);
	mroce_mr_put(mr);
	return !err;
}

/* ------------------------------------------------------------ requester */

/* READ_RESP and ATOMIC_RESP: the answers to our own requests. */
static enum mroce_rx_res mroce_rx_answer(struct mroce_rx_ctx *rc)
{
	const struct mroce_data *d = &rc->pkt->u.d;
	struct mroce_qp *qp = rc->qp;
	struct mroce_qp_xport *xp = &qp->xport;
	u32 len = rc->pkt->payload_len;
	struct mroce_swqe *w;
	int err;
	u32 ssn;

	mroce_peer_assert_both(rc->peer);
	if (xp->state != MROCE_XQP_RTS ||
	    d->msn - xp->rd_done >= xp->rd_next - xp->rd_done)
		goto unexpected;
	ssn = xp->rd_ssn[d->msn & (MROCE_MAX_RD_ATOM - 1)];
	w = mroce_wq_slot(&qp->sq, ssn);
	if (w->ssn != ssn || d->ssn != ssn ||
	    w->xport.state != MROCE_SW_WAIT_RESP || w->xport.msn != d->msn)
		goto unexpected;

	if (rc->pkt->c.opcode == MROCE_OP_READ_RESP) {
		if (w->opcode != IB_WR_RDMA_READ || len > w->length ||
		    d->msg_offset > w->length - len ||
		    !!(rc->pkt->c.flags & MROCE_F_EOM) !=
		    (d->msg_offset + len == w->length))
			goto unexpected;
		if (len) {
			err = mroce_swqe_copy_in_skb(qp, w, d->msg_offset,
						     rc->skb, rc->hdr, len,
						     NULL);
			if (err) {
				mroce_comp_fail_qp(rc->peer, qp, w,
						   IB_WC_LOC_PROT_ERR);
				return MROCE_RX_ACCEPT;
			}
		}
		if (!(rc->pkt->c.flags & MROCE_F_EOM))
			return MROCE_RX_ACCEPT;
	} else {
		u64 orig = d->orig;

		if (w->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
		    w->opcode != IB_WR_ATOMIC_FETCH_AND_ADD)
			goto unexpected;
		err = mroce_swqe_copy_in(qp, w, 0, &orig,
					 min_t(u32, w->length, sizeof(orig)),
					 NULL);
		if (err) {
			mroce_comp_fail_qp(rc->peer, qp, w, IB_WC_LOC_PROT_ERR);
			return MROCE_RX_ACCEPT;
		}
	}
	w->xport.resp_psn = d->stream_psn;
	rc->tag = MROCE_TAG_RESP;
	return MROCE_RX_ACCEPT;

unexpected:
	/* Acknowledged on its path so the sender stops resending it. */
	mroce_rx_peer_count(rc, MROCE_CNT_DROP_UNEXPECTED);
	return MROCE_RX_IGNORE;
}

/* The QP access right a remote operation needs (0: none needed). */
static int mroce_rx_needs(u8 opcode)
{
	switch (opcode) {
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
		return IB_ACCESS_REMOTE_WRITE;
	case MROCE_OP_READ_REQ:
		return IB_ACCESS_REMOTE_READ;
	case MROCE_OP_ATOMIC_REQ:
		return IB_ACCESS_REMOTE_ATOMIC;
	default:
		return 0;
	}
}

/*
 * Tombstones (docs/protocol.md §4.4). The peer's last retransmissions may
 * arrive after the application destroyed the QP: the first copy got
 * through, its ACK was lost. They are duplicates, and acknowledging them is
 * the truth, where refusing them (UNKNOWN_STREAM) fails a sender whose data
 * arrived. A peer keeps the last few retired streams for longer than a
 * sender retries one chunk (max_rto, 1 s).
 */
#define MROCE_TOMB_NS		(2 * NSEC_PER_SEC)

void mroce_rx_tomb_add(struct mroce_peer *peer, struct mroce_qp *qp)
{
	const struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_tomb *t;

	mroce_peer_assert_both(peer);
	if (!xp->srx_live)
		return;
	t = &peer->tombs[peer->tomb_next++ % MROCE_PEER_TOMBS];
	t->qpn = mroce_qpn(qp);
	t->end = xp->srx.base + xp->srx.ready;
	t->until = mroce_now() + MROCE_TOMB_NS;
}

/* A new stream with this QPN starts afresh: no tombstone speaks for it. */
void mroce_rx_tomb_clear(struct mroce_peer *peer, u32 qpn)
{
	unsigned int i;

	mroce_peer_assert_both(peer);
	for (i = 0; i < MROCE_PEER_TOMBS; i++) {
		if (peer->tombs[i].qpn == qpn)
			peer->tombs[i].until = 0;
	}
}

enum mroce_tomb_res {
	MROCE_TOMB_NONE,	/* no tombstone speaks for the packet */
	MROCE_TOMB_DUP,		/* a chunk the QP that is gone had received */
	MROCE_TOMB_AFTER,	/* the stream went on after its QP was gone */
};

/* What the tombstones of QPN @qpn say about its stream PSN @psn. */
static enum mroce_tomb_res mroce_rx_tomb(struct mroce_peer *peer, u32 qpn,
					 u32 psn)
{
	u64 now = 0;
	unsigned int i;

	mroce_peer_assert_rx(peer);
	for (i = 0; i < MROCE_PEER_TOMBS; i++) {
		const struct mroce_tomb *t = &peer->tombs[i];

		if (!t->until || t->qpn != qpn)
			continue;
		if (!now)
			now = mroce_now();
		if (now >= t->until)
			continue;
		if (t->end - psn - 1 < MROCE_STREAM_WINDOW)
			return MROCE_TOMB_DUP;
		if (psn - t->end < MROCE_STREAM_WINDOW)
			return MROCE_TOMB_AFTER;
	}
	return MROCE_TOMB_NONE;
}

/* The stream part of a data packet: which QP, which chunk, placement. */
static enum mroce_rx_res mroce_rx_stream(struct mroce_rx_ctx *rc)
{
	const struct mroce_data *d = &rc->pkt->u.d;
	struct mroce_qp_xport *xp;
	enum mroce_rx_res res;
	int needs;

	mroce_peer_assert_rx(rc->peer);
	rc->qp = mroce_xport_find_qp(rc->peer, d->stream_id);
	switch (rc->qp ? MROCE_TOMB_NONE :
		mroce_rx_tomb(rc->peer, d->stream_id, d->stream_psn)) {
	case MROCE_TOMB_DUP:
		return mroce_rx_dup_res(rc);
	case MROCE_TOMB_AFTER:
		/*
		 * A new chunk for a QP its application just destroyed: the
		 * sender's WQE fails, but not before an IB requester's would
		 * (no responder: it retries until its ACK timeout runs out).
		 * Failing it at once broke ibv_srq_pingpong, whose server
		 * posts a send or two the client, having counted its
		 * iterations, will never take, and quits once its own
		 * earlier sends complete: the refusal of the extra one came
		 * back before that. So: resend later while the tombstone
		 * lasts (no loss or congestion signal), UNKNOWN_STREAM after.
		 */
		mroce_rx_peer_count(rc, MROCE_CNT_DROP_UNKNOWN_QP);
		return mroce_rx_nak_res(rc, MROCE_NAK_STREAM_PSN_WINDOW, 0,
					false);
	default:
		break;
	}
	if (!rc->qp) {
		mroce_rx_peer_count(rc, MROCE_CNT_DROP_UNKNOWN_QP);
		return mroce_rx_nak_res(rc, MROCE_NAK_UNKNOWN_STREAM, 0, false);
	}
	xp = &rc->qp->xport;
	if (xp->state == MROCE_XQP_DEAD) {
		/*
		 * A retransmission of a chunk the QP received before it went
		 * to ERR (rdma_disconnect() right after the last receive; the
		 * ACK was lost): a duplicate, ACKed as the tombstone of a
		 * destroyed QP would. Refusing it failed the sender's last
		 * WQE, whose data had arrived, with REM_INV_REQ_ERR. Not a
		 * READ or ATOMIC request: the answer it waits for will not
		 * come from a QP in ERR, and an ACK would leave its requester
		 * waiting where the refusal fails it.
		 */
		if (xp->srx_live && rc->pkt->c.opcode != MROCE_OP_READ_REQ &&
		    rc->pkt->c.opcode != MROCE_OP_ATOMIC_REQ &&
		    mroce_srx_check(&xp->srx, d->stream_psn) == MROCE_SRX_DUP) {
			return mroce_rx_dup_res(rc);
		}
		mroce_rx_peer_count(rc, MROCE_CNT_DROP_QP_STATE);
		/*
		 * A chunk of the message whose refusal failed the QP gets that
		 * refusal again (§4.4): its chunks arrive in any order over
		 * the paths, its NAKs may be reordered or lost, and the sender
		 * fails the WQE with whichever NAK it handles first. An
		 * invalid rkey must read REM_ACCESS_ERR from every chunk, not
		 * REM_INV_REQ_ERR from those after the first.
		 */
		if (xp->refused_code && d->ssn == xp->refused_ssn &&
		    mroce_op_is_resp(rc->pkt->c.opcode) == xp->refused_answer)
			return mroce_rx_nak_res(rc, xp->refused_code, 0, false);
		return mroce_rx_nak_res(rc, MROCE_NAK_UNKNOWN_STREAM, 0, false);
	}

	/* perftest's servers answer READs from RTR: their stream may start anywhere. */
	switch (mroce_srx_check_data(&xp->srx, rc->pkt, !xp->srx_live,
				     xp->rd_next != 0)) {
	case MROCE_SRX_DUP:
		return mroce_rx_dup_res(rc);
	case MROCE_SRX_WINDOW:
		mroce_rx_peer_count(rc, MROCE_CNT_OUT_OF_WINDOW);
		return mroce_rx_nak_res(rc, MROCE_NAK_STREAM_PSN_WINDOW, 0,
					false);
	default:
		break;
	}

	/* The QP's own access flags gate what the peer may do to us. */
	needs = mroce_rx_needs(rc->pkt->c.opcode);
	if (needs && !(xp->access & needs)) {
		mroce_rx_peer_count(rc, MROCE_CNT_DROP_ACCESS);
		return mroce_rx_nak_res(rc, MROCE_NAK_INVALID_REQUEST, 0, true);
	}

	rc->tag = 0;
	switch (rc->pkt->c.opcode) {
	case MROCE_OP_READ_REQ:
	case MROCE_OP_ATOMIC_REQ:
		res = mroce_rx_request(rc);
		break;
	case MROCE_OP_READ_RESP:
	case MROCE_OP_ATOMIC_RESP:
		res = mroce_rx_answer(rc);
		break;
	default:
		res = mroce_rx_msg(rc);
		break;
	}
	if (res != MROCE_RX_ACCEPT || xp->state == MROCE_XQP_DEAD)
		return res;

	mroce_srx_accept(&xp->srx, d->stream_psn, rc->tag);
	xp->srx_live = true;
	/*
	 * New data in the window is forward progress too: past its first
	 * window the peer sends it only once our ACKs arrive. A side that only
	 * receives (a WRITE target, a SEND receiver) confirms the peer's
	 * neighbour this way, or its entry goes stale and is probed by ARP
	 * like an unconfirmed sender's (see the ACK case in mroce_rx_conn()).
	 */
	if (!READ_ONCE(rc->peer->neigh_confirm))
		WRITE_ONCE(rc->peer->neigh_confirm, true);
	/* Responder side; the requester's is in mroce_peer_acked(). */
	if (!READ_ONCE(xp->bound_nonce))
		cmpxchg64(&xp->bound_nonce, 0, rc->peer->conn.hs.remote.nonce);
	mroce_comp_pop(rc->peer, rc->qp);
	return MROCE_RX_ACCEPT;
}

static void mroce_rx_data(struct mroce_peer *peer, struct sk_buff *skb,
			  const struct mroce_rx_meta *meta,
			  const struct mroce_pkt *pkt, u64 now)
{
	struct mroce_rx_ctx rc = {
		.peer = peer,
		.skb = skb,
		.pkt = pkt,
		.hdr = mroce_hdr_len(pkt->c.opcode),
	};
	enum mroce_rx_verdict v;
	enum mroce_rx_res res;

	v = mroce_conn_rx_check(&peer->conn, pkt);
	switch (v) {
	case MROCE_RX_NOTCONN:
		mroce_rx_peer_count(&rc, MROCE_CNT_DROP_NOT_CONNECTED);
		return;
	case MROCE_RX_BAD_PATH:
		mroce_rx_peer_count(&rc, MROCE_CNT_DROP_BAD_PATH);
		return;
	case MROCE_RX_DUP:
		mroce_rx_peer_count(&rc, MROCE_CNT_DUP_REQ);
		return;
	case MROCE_RX_STALE:
		mroce_rx_peer_count(&rc, MROCE_CNT_DROP_STALE_GEN);
		mroce_ack_nak(peer, pkt, MROCE_NAK_STALE_GEN,
			      peer->paths[pkt->c.path_id].rx.gen);
		break;
	default:
		break;
	}
	if (meta->ce)
		mroce_counter_inc(peer->mdev, MROCE_CNT_ECN_CE_RCVD);

	if (pkt->c.opcode == MROCE_OP_PROBE) {
		if (v == MROCE_RX_NEW)
			mroce_conn_rx_accept(&peer->conn, pkt, meta->ce, now);
		return;
	}

	res = mroce_rx_stream(&rc);
	switch (res) {
	case MROCE_RX_ACCEPT:
	case MROCE_RX_IGNORE:
		if (v != MROCE_RX_NEW)
			break;
		mroce_conn_rx_accept(&peer->conn, pkt, meta->ce, now);
		if (res == MROCE_RX_ACCEPT && !rc.dup)
			mroce_conn_rx_progress(&peer->conn,
					       mroce_op_is_resp(pkt->c.opcode),
					       now);
		break;
	case MROCE_RX_REFUSE:
	case MROCE_RX_FATAL:
		mroce_ack_nak(peer, pkt, rc.code, rc.arg);
		/* IB class C: the responder's QP fails with the requester's. */
		if (res == MROCE_RX_FATAL &&
		    rc.qp->xport.state != MROCE_XQP_DEAD) {
			struct mroce_qp_xport *xp = &rc.qp->xport;

			mroce_comp_fail_access(peer, rc.qp);
			/* After: entering DEAD clears the record. */
			xp->refused_code = rc.code;
			xp->refused_ssn = pkt->u.d.ssn;
			xp->refused_answer = mroce_op_is_resp(pkt->c.opcode);
		}
		break;
	default:
		break;
	}
}

/* --------------------------------------------------------------- NAKs */

/* The QP and stream PSN a NAK refers to when the core no longer knows. */
static struct mroce_qp *mroce_rx_nak_qp(struct mroce_peer *peer,
					const struct mroce_nak *n)
{
	struct mroce_qp *qp;

	list_for_each_entry(qp, &peer->qps, xport.peer_node) {
		struct mroce_qp_xport *xp = &qp->xport;

		if (mroce_xqp_sends(xp) && xp->remote_qpn == n->stream_id &&
		    n->stream_psn - xp->stx.una < xp->stx.next - xp->stx.una)
			return qp;
	}
	return NULL;
}

/* The send WQE a chunk of ours belongs to, if it is a request chunk. */
static struct mroce_swqe *mroce_rx_chunk_wqe(struct mroce_qp *qp, u32 psn)
{
	struct mroce_qp_xport *xp = &qp->xport;
	const struct mroce_chunk *c;
	struct mroce_swqe *w;

	c = &xp->chunks[psn & MROCE_STREAM_MASK];
	if (c->kind != MROCE_CK_REQ ||
	    c->ref - xp->sq_done >= xp->sq_next - xp->sq_done)
		return NULL;
	w = mroce_wq_slot(&qp->sq, c->ref);
	return w->ssn == c->ref && w->xport.state != MROCE_SW_DONE ? w : NULL;
}

static void mroce_rx_hold(struct mroce_peer *peer, struct mroce_qp *qp,
			  u64 until)
{
	struct mroce_qp_xport *xp = &qp->xport;

	xp->hold_until = max(xp->hold_until, until);
	peer->wake_at = min(peer->wake_at, xp->hold_until);
	list_del_init(&xp->tx_node);
}

static void mroce_rx_nak(struct mroce_peer *peer, const struct mroce_pkt *pkt,
			 u64 now)
{
	const struct mroce_nak *n = &pkt->u.nak;
	struct mroce_qp *qp = NULL;
	u64 cookie = 0, probes = 0;
	struct mroce_qp_xport *xp;
	enum ib_wc_status st;
	bool known;
	u32 len, psn;

	mroce_counter_nak(peer->mdev, false, n->code);
	trace_mroce_nak(peer->mdev->ibdev.index, peer->id, 0, n->code,
			n->stream_id, n->stream_psn, n->ssn, n->arg);
	/*
	 * A STALE_GEN NAK re-keys its path inside the core: counted in
	 * path_rekeys like the re-keys of an ACK or a timer.
	 */
	mroce_peer_stats_begin(peer);
	known = mroce_conn_on_nak(&peer->conn, n, now, &cookie, &len, &probes);
	mroce_peer_stats_end(peer);
	if (probes)
		mroce_peer_probes(peer, probes, now);
	/* A path matter, settled by the core (re-keyed if current). */
	if (n->code == MROCE_NAK_STALE_GEN)
		return;
	if (known) {
		qp = mroce_xport_cookie_qp(peer, cookie);
		psn = (u32)cookie;
	} else {
		qp = mroce_rx_nak_qp(peer, n);
		psn = n->stream_psn;
	}
	if (!qp)
		return;
	xp = &qp->xport;

	switch (n->code) {
	case MROCE_NAK_RNR:
		mroce_counter_inc(peer->mdev, MROCE_CNT_RCVD_RNR);
		/* NAKs of one episode (the burst sent before it) count once. */
		if (!xp->hold_until && xp->rnr_retry != 7) {
			if (!xp->rnr_left) {
				mroce_comp_fail_qp(peer, qp,
						   mroce_rx_chunk_wqe(qp, psn),
						   IB_WC_RNR_RETRY_EXC_ERR);
				return;
			}
			xp->rnr_left--;
		}
		mroce_tx_resend(qp, psn, MROCE_RETX_NAK, n->path_id, n->path_gen,
				n->path_psn);
		mroce_rx_hold(peer, qp, now + (u64)n->arg * NSEC_PER_USEC);
		return;
	case MROCE_NAK_STREAM_PSN_WINDOW:
		mroce_tx_resend(qp, psn, MROCE_RETX_NAK, n->path_id, n->path_gen,
				n->path_psn);
		mroce_rx_hold(peer, qp, now + max_t(u64, peer->conn.rtt.srtt,
						    100 * NSEC_PER_USEC));
		return;
	case MROCE_NAK_REMOTE_ACCESS:
		st = IB_WC_REM_ACCESS_ERR;
		break;
	case MROCE_NAK_REMOTE_OP:
		st = IB_WC_REM_OP_ERR;
		break;
	default:	/* INVALID_REQUEST, UNKNOWN_STREAM */
		st = IB_WC_REM_INV_REQ_ERR;
		break;
	}
	mroce_comp_fail_qp(peer, qp, mroce_rx_chunk_wqe(qp, psn), st);
}

/* --------------------------------------------------------------- demux */

/*
 * One mroce_path_sample and mroce_path_stats per path an ACK reported on,
 * after the core applied it: what `mroce path` and eBPF tools read.
 */
static void mroce_rx_trace_ack(struct mroce_peer *peer,
			       const struct mroce_pkt *pkt)
{
	u32 dev = peer->mdev->ibdev.index;
	struct mroce_ack_block blk;
	u64 seen = 0;
	u32 i;

	if (!trace_mroce_path_sample_enabled() &&
	    !trace_mroce_path_stats_enabled())
		return;
	for (i = 0; i < pkt->u.ack.n_blocks; i++) {
		const struct mroce_path *p;
		u32 path;

		mroce_ack_block_get(pkt, i, &blk);
		if (blk.path_id >= peer->conn.n_paths ||
		    (seen & BIT_ULL(blk.path_id)))
			continue;
		seen |= BIT_ULL(blk.path_id);
		p = &peer->paths[blk.path_id];
		path = mroce_trace_path(blk.path_id, p->gen);
		trace_mroce_path_sample(dev, peer->id, path, p->sport,
					p->health.state, p->rtt.srtt,
					p->rtt.rttvar, p->rtt.min_rtt,
					p->cc.pwnd, p->tx.inflight,
					p->stats.ce_pkts, p->stats.lost_pkts);
		trace_mroce_path_stats(dev, peer->id, path, p->stats.tx_pkts,
				       p->stats.tx_bytes, p->stats.acked_pkts,
				       /* the responder's: a racy read */
				       READ_ONCE(p->stats.rx_pkts),
				       p->stats.naks,
				       p->stats.ptos, p->stats.rtos,
				       p->stats.rekeys);
	}
}

/*
 * A run of packets for one connection handled under one hold of its lock:
 * the work that follows a packet -- ACKs, completions, transmitting what
 * the packets released, re-arming the timer, the flush -- is done once
 * per burst (mroce_rx_burst_end()).
 */
struct mroce_rx_burst {
	struct mroce_peer	*peer;	/* locked; NULL between bursts */
	unsigned int		n;	/* packets handled in this burst */
	bool			data;	/* data accepted: an ACK may be owed */
	bool			cut;	/* an ACK is due: end the burst now */
	unsigned int		max;	/* packets per burst */
	u64			now;	/* read at the burst's first packet */
};

/*
 * The epilogue of a burst: ACKs, completions, what the packets released for
 * sending, then mroce_peer_unlock() (timer, flush). @idle: the next packet,
 * if any, is not this peer's, so an ACK it owes goes now rather than at the
 * delayed-ACK deadline (mroce_ack_flush()).
 */
static __always_inline void mroce_rx_burst_close(struct mroce_rx_burst *bu,
						 bool idle)
{
	struct mroce_peer *peer = bu->peer;
	u64 now = bu->now;	/* a clock read is costly in a VM (HPET) */
	bool hint;

	if (bu->data) {
		if (idle && bu->max > 1 && READ_ONCE(mroce_rx_ack_flush))
			mroce_ack_flush(peer, now);
		else
			mroce_ack_maybe(peer, now);
	}
	mroce_comp_run(peer);
	/* What a packet at a time would have had, within reason. */
	mroce_tx_run(peer, now, MROCE_TX_BUDGET * clamp(bu->n, 1U, 4U));
	/*
	 * A due rate-hint pass samples this peer under this hold -- if the
	 * burst received data or a PROBE. A pass reads only what those bring
	 * (mroce_conn_rx_accept(): the arrivals of the period, the backlog
	 * their headers advertise, the least one-way delay), and its grants
	 * leave on the ACKs of data (or at once when one fell): after a
	 * burst of ACKs alone nothing it reads has moved, and the next burst
	 * with data runs the pass over the whole time since the last one. On
	 * a ping-pong every other burst is the ACK of our own WRITE, and its
	 * pass ran between our completion and the return to user (make
	 * insnprof, session 43).
	 */
	hint = bu->data && mroce_ack_hint_hold(peer, now);
	mroce_peer_unlock(peer);
	mroce_ack_hint_tick(peer, hint);
	bu->peer = NULL;
	bu->n = 0;
	bu->data = false;
	bu->cut = false;
}

/*
 * The burst's end where a packet ends it (mroce_rx_one(): the ACK it owes,
 * the burst's length; every packet of a ping-pong) is inlined there; the
 * other ends call this.
 */
static noinline void __mroce_rx_burst_end(struct mroce_rx_burst *bu, bool idle)
{
	mroce_rx_burst_close(bu, idle);
}

/*
 * Most calls find no burst: every packet ends the one before it (none, on
 * a ping-pong) and mroce_rx_skb() the one after it (ended already), two of
 * three calls per received packet -- so the test is not worth a call.
 */
static inline void mroce_rx_burst_end(struct mroce_rx_burst *bu, bool idle)
{
	if (bu->peer)
		__mroce_rx_burst_end(bu, idle);
}

/*
 * Everything addressed to an existing connection (peer->lock held); the
 * epilogue is the caller's.
 */
static void mroce_rx_conn(struct mroce_peer *peer, struct sk_buff *skb,
			  const struct mroce_rx_meta *meta,
			  const struct mroce_pkt *pkt,
			  struct mroce_rx_burst *bu)
{
	struct mroce_ack_res res;
	u64 now;

	/*
	 * One clock read per burst, at its first packet, under the lock the
	 * burst holds, so no other hold's clock comes between its packets
	 * (the core's clock never runs backwards). A read is a helper call
	 * under TCG, a trip to the device model on an HPET. A burst is short:
	 * rx_burst packets (1 by default, so every packet still reads), 64 at
	 * most when steered, and it ends at every ACK it owes. Its later
	 * packets' RTT samples come out short by the time the burst took so
	 * far, at most that; the epilogue already stamps everything it sends
	 * with this one clock (mroce_tx_run()).
	 */
	if (!bu->n)
		bu->now = mroce_now();
	now = bu->now;
	mroce_counter_inc(peer->mdev, MROCE_CNT_RCVD_PKTS);
	mroce_counter_add(peer->mdev, MROCE_CNT_RCVD_BYTES, skb->len);

	switch (pkt->c.opcode) {
	case MROCE_OP_ACK:
		mroce_counter_inc(peer->mdev, MROCE_CNT_ACKS_RCVD);
		if (pkt->u.ack.rate_hint)
			mroce_counter_inc(peer->mdev,
					  MROCE_CNT_RATE_HINTS_RCVD);
		mroce_peer_stats_begin(peer);
		mroce_conn_on_ack(&peer->conn, pkt, now, &res);
		mroce_peer_stats_end(peer);
		mroce_rx_trace_ack(peer, pkt);
		/*
		 * Our packets got there: proof the neighbour entry is right,
		 * as TCP's forward progress is. The next packet out confirms
		 * it (mroce_net.c); otherwise the entry goes stale every
		 * reachable time and is probed by unicast ARP, and under loss
		 * it fails (three probes lost, 13 % at 30 % both ways): every
		 * path, all over one neighbour, goes silent for a second or
		 * more -- long enough to exhaust the connection's retries.
		 */
		if (res.acked_pkts && !READ_ONCE(peer->neigh_confirm))
			WRITE_ONCE(peer->neigh_confirm, true);
		if (res.lost_pkts)
			mroce_counter_add(peer->mdev, MROCE_CNT_SACK_GAPS,
					  res.lost_pkts);
		if (res.probe_mask)
			mroce_peer_probes(peer, res.probe_mask, now);
		break;
	case MROCE_OP_NAK:
		mroce_rx_nak(peer, pkt, now);
		break;
	case MROCE_OP_CONN_REP:
	case MROCE_OP_CONN_CLOSE:
		mroce_peer_hs_result(peer, mroce_conn_on_hs(&peer->conn, pkt,
							    now), now);
		break;
	default:
		/* A doorbell finding the lock taken waits for us (kick_waits). */
		WRITE_ONCE(peer->rx_data, true);
		mroce_rx_data(peer, skb, meta, pkt, now);
		bu->data = true;
		/* The ACK ratio (or AR, reordering, a PROBE) ends the burst. */
		bu->cut = mroce_conn_ack_due(&peer->conn, now);
		break;
	}
	bu->n++;
}

struct mroce_accept_cb {
	struct in6_addr	saddr;
	struct in6_addr	daddr;
	bool		v6;
};

/* CONN_REQ: to the peer of its source address, created if need be. */
static void mroce_rx_req(struct sk_buff *skb, const struct mroce_rx_meta *meta,
			 const struct mroce_pkt *pkt)
{
	struct mroce_xport_dev *xd;
	struct mroce_accept_cb *cb;
	struct mroce_peer *peer;
	struct mroce_dev *mdev;

	mdev = mroce_rx_dev(meta);
	if (!mdev) {
		kfree_skb(skb);
		return;
	}
	xd = &mdev->xport;
	mroce_counter_inc(mdev, MROCE_CNT_RCVD_PKTS);
	mroce_counter_add(mdev, MROCE_CNT_RCVD_BYTES, skb->len);

	rcu_read_lock();
	peer = mroce_peer_lookup(mdev, &meta->saddr);
	if (peer) {
		u64 now;

		mroce_peer_lock(peer);
		/* Under the lock: the core's clock never runs backwards. */
		now = mroce_now();
		if (!peer->dead)
			mroce_peer_hs_result(peer,
					     mroce_conn_on_hs(&peer->conn, pkt,
							      now), now);
		if (!peer->dead)
			mroce_tx_run(peer, now, MROCE_TX_BUDGET);
		mroce_peer_unlock(peer);
		rcu_read_unlock();
		consume_skb(skb);
		goto out;
	}
	rcu_read_unlock();

	/* A new peer: its connection is opened in process context. */
	BUILD_BUG_ON(sizeof(*cb) > sizeof(skb->cb));
	cb = (struct mroce_accept_cb *)skb->cb;
	cb->saddr = meta->saddr;
	cb->daddr = meta->daddr;
	cb->v6 = meta->v6;
	spin_lock_bh(&xd->peer_lock);
	if (!xd->closing && skb_queue_len(&xd->accept_q) < 64) {
		skb_queue_tail(&xd->accept_q, skb);
		queue_work(mroce_wq, &xd->accept_work);
		skb = NULL;
	}
	spin_unlock_bh(&xd->peer_lock);
	if (skb) {
		mroce_rx_count(mdev, MROCE_CNT_DROP_NOMEM, pkt, skb, meta);
		kfree_skb(skb);
	}
out:
	ib_device_put(&mdev->ibdev);
}

/* Process context: open the connection a queued CONN_REQ asks for. */
void mroce_rx_conn_req(struct mroce_dev *mdev, struct sk_buff *skb)
{
	const struct mroce_accept_cb *cb = (void *)skb->cb;
	struct mroce_peer *peer;
	struct mroce_pkt pkt;
	u64 now;

	if (mroce_decode(skb->data, skb->len, &pkt) != MROCE_WIRE_OK)
		return;
	peer = mroce_peer_get(mdev, &cb->saddr, &cb->daddr, cb->v6);
	if (!peer) {
		mroce_counter_inc(mdev, MROCE_CNT_DROP_NOMEM);
		return;
	}
	mroce_peer_lock(peer);
	if (!peer->dead) {
		now = mroce_now();
		mroce_peer_hs_result(peer, mroce_conn_on_hs(&peer->conn, &pkt,
							    now), now);
		/* Idle until a QP attaches; linger like any other peer. */
		if (!peer->n_qps)
			mod_delayed_work(mroce_wq, &peer->gc_work,
					 MROCE_PEER_LINGER);
	}
	mroce_peer_unlock(peer);
	mroce_peer_put(peer);
}

/* NAK UNKNOWN_CONN: the peer lost the connection we sent on. */
static void mroce_rx_unknown(const struct mroce_rx_meta *meta,
			     const struct mroce_pkt *pkt, unsigned int len)
{
	struct mroce_peer *peer;
	struct mroce_dev *mdev;
	u64 now;

	mdev = mroce_rx_dev(meta);
	if (!mdev)
		return;
	mroce_counter_inc(mdev, MROCE_CNT_RCVD_PKTS);
	mroce_counter_add(mdev, MROCE_CNT_RCVD_BYTES, len);
	mroce_counter_nak(mdev, false, pkt->u.nak.code);
	rcu_read_lock();
	peer = mroce_peer_lookup(mdev, &meta->saddr);
	if (peer) {
		mroce_peer_lock(peer);
		if (!peer->dead) {
			now = mroce_now();
			trace_mroce_nak(mdev->ibdev.index, peer->id, 0,
					MROCE_NAK_UNKNOWN_CONN, 0, 0, 0,
					pkt->u.nak.arg);
			mroce_peer_hs_result(peer,
					     mroce_conn_on_unknown(&peer->conn,
								   pkt->u.nak.arg),
					     now);
		}
		mroce_peer_unlock(peer);
	}
	rcu_read_unlock();
	ib_device_put(&mdev->ibdev);
}

/* How much of the packet must be linear for the decoder. */
static u32 mroce_rx_hdr_len(struct sk_buff *skb)
{
	if (!pskb_may_pull(skb, min_t(u32, skb->len, MROCE_WIRE_PEEK_LEN)))
		return 0;
	return mroce_wire_hdr_len(skb->data, skb->len);
}

/*
 * One packet. Packets for the connection @bu holds are handled without
 * letting go of its lock; a packet for another connection, or one for a
 * slow path below (they take peer locks of their own), ends that burst
 * first. The caller holds the RCU read lock across the burst, which covers
 * the peer looked up here too (a read-side section of our own was two
 * more calls per packet under PREEMPT_RCU; docs/experiments/s44-T-calls.md).
 */
static void mroce_rx_one(struct sk_buff *skb, const struct mroce_rx_meta *meta,
			 struct mroce_rx_burst *bu, struct mroce_peer *hint)
{
	enum mroce_wire_err err;
	struct mroce_peer *peer;
	struct mroce_pkt pkt;
	u32 hdr;

	/* An empty datagram is the shortest truncated packet. */
	if (!skb->len) {
		mroce_rx_drop(meta, MROCE_CNT_DROP_TRUNCATED, NULL, skb);
		goto free;
	}
	hdr = mroce_rx_hdr_len(skb);
	if (!hdr || !pskb_may_pull(skb, hdr)) {
		mroce_rx_drop(meta, MROCE_CNT_DROP_NOMEM, NULL, skb);
		goto free;
	}
	/* The decoder reads only headers, which are linear now. */
	err = mroce_decode(skb->data, skb->len, &pkt);
	if (err) {
		mroce_rx_drop(meta, mroce_counter_wire_err(err), NULL, skb);
		goto free;
	}

	switch (pkt.c.opcode) {
	case MROCE_OP_CONN_REQ:
		mroce_rx_burst_end(bu, true);
		mroce_rx_req(skb, meta, &pkt);
		return;
	case MROCE_OP_NAK:
		if (!pkt.c.dst_conn) {
			mroce_rx_burst_end(bu, true);
			mroce_rx_unknown(meta, &pkt, skb->len);
			goto free;
		}
		break;
	case MROCE_OP_UD_SEND:
	case MROCE_OP_UD_SEND_IMM:
	case MROCE_OP_MAD: {
		struct mroce_dev *mdev;

		/* Datagrams and the QP1 MAD tunnel: mroce_ud.c. */
		mroce_rx_burst_end(bu, true);
		mdev = mroce_rx_dev(meta);
		if (mdev) {
			mroce_ud_rx(mdev, skb, meta, &pkt);
			ib_device_put(&mdev->ibdev);
		}
		goto free;
	}
	default:
		break;
	}

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "receive outside RCU");
	/*
	 * Steering looked it up already, or the burst holds it; a peer closed
	 * since is ->dead, as the table's would be (same RCU section). The
	 * held one's id still names it: the burst checked ->dead when it took
	 * the lock it still holds, and close sets ->dead under that lock
	 * before the id leaves the table; ids are handed out cyclically over
	 * 32 bits, so none comes back within a packet either.
	 */
	if (!hint || hint->id != pkt.c.dst_conn)
		hint = bu->peer;
	if (hint && hint->id == pkt.c.dst_conn)
		peer = hint;
	else
		peer = mroce_peer_find_id(pkt.c.dst_conn);
	if (!peer || !net_eq(peer->net, meta->net)) {
		struct mroce_dev *mdev = mroce_rx_dev(meta);

		if (mdev) {
			mroce_counter_inc(mdev, MROCE_CNT_RCVD_PKTS);
			mroce_counter_add(mdev, MROCE_CNT_RCVD_BYTES, skb->len);
			mroce_rx_count(mdev, MROCE_CNT_DROP_UNKNOWN_CONN, &pkt,
				       skb, meta);
			/* Don't answer a NAK with a NAK. */
			if (pkt.c.opcode != MROCE_OP_NAK)
				mroce_ack_nak_unknown(mdev, meta,
						      pkt.c.dst_conn);
			ib_device_put(&mdev->ibdev);
		}
		goto free;
	}
	if (!ipv6_addr_equal(&peer->raddr, &meta->saddr)) {
		mroce_counter_inc(peer->mdev, MROCE_CNT_RCVD_PKTS);
		mroce_counter_add(peer->mdev, MROCE_CNT_RCVD_BYTES, skb->len);
		mroce_counter_inc(peer->mdev, MROCE_CNT_DROP_WRONG_PEER);
		goto free;
	}
	if (peer != bu->peer) {
		mroce_rx_burst_end(bu, true);
		mroce_peer_lock(peer);
		if (peer->dead) {
			mroce_peer_unlock_bare(peer);
			goto free;
		}
		bu->peer = peer;
	}
	mroce_rx_conn(peer, skb, meta, &pkt, bu);
	if (bu->cut || bu->n >= bu->max)
		mroce_rx_burst_close(bu, false);
free:
	consume_skb(skb);
}

/* ------------------------------------------- the per-CPU receive queue */

/*
 * Packets handled later on a CPU: after the stack's receive batch in bursts
 * (rx_burst > 1, on the CPU they arrived on), or on the CPU receive
 * steering chose (rx_spread, mroce_steer.c). One queue per CPU, any CPU
 * adds to it (q.lock), its tasklet empties it, an IPI schedules that from
 * another CPU.
 */
#define MROCE_RX_QLEN	1024	/* packets waiting per CPU, at most */
#define MROCE_RX_RUN	256	/* packets per tasklet run */
#define MROCE_RX_STEER_BURST	64	/* steered: per lock hold, at most */

struct mroce_rx_cpu {
	struct sk_buff_head	q;
	call_single_data_t	csd;	/* schedules run on its CPU */
	struct tasklet_struct	run;
};

static DEFINE_PER_CPU(struct mroce_rx_cpu, mroce_rx_cpu);

/* struct mroce_rx_meta while the packet waits; the device is skb->dev. */
struct mroce_rx_cb {
	struct in6_addr	saddr;
	struct in6_addr	daddr;
	__be16		sport;
	bool		v6;
	bool		ce;
	u64		cookie;		/* mroce_steer_done()'s, 0: none */
};

static struct mroce_rx_cb *mroce_rx_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct mroce_rx_cb) > sizeof_field(struct sk_buff,
								cb));
	return (struct mroce_rx_cb *)skb->cb;
}

/* Park @meta in @skb while it waits; holds the device until it is handled. */
static void mroce_rx_park(struct sk_buff *skb, const struct mroce_rx_meta *meta,
			  u64 cookie)
{
	struct mroce_rx_cb *cb = mroce_rx_cb(skb);

	cb->saddr = meta->saddr;
	cb->daddr = meta->daddr;
	cb->sport = meta->sport;
	cb->v6 = meta->v6;
	cb->ce = meta->ce;
	cb->cookie = cookie;
	skb->dev = meta->dev;
	dev_hold(skb->dev);
}

/* The waiting packet's meta; the caller drops the device after handling. */
static void mroce_rx_unpark(struct sk_buff *skb, struct mroce_rx_meta *meta)
{
	const struct mroce_rx_cb *cb = mroce_rx_cb(skb);

	meta->saddr = cb->saddr;
	meta->daddr = cb->daddr;
	meta->sport = cb->sport;
	meta->v6 = cb->v6;
	meta->ce = cb->ce;
	meta->dev = skb->dev;
	/* A live device's namespace is live: no reference of its own. */
	meta->net = dev_net(meta->dev);
}

/*
 * The tasklet: the queue in bursts. A steered batch is handled in bursts of
 * up to MROCE_RX_STEER_BURST whatever rx_burst says: the hop has already
 * put those packets behind the stack's receive pass, so batching delays
 * them no further.
 */
static void mroce_rx_run(struct tasklet_struct *t)
{
	struct mroce_rx_cpu *rxc = from_tasklet(rxc, t, run);
	unsigned int burst = max(READ_ONCE(mroce_rx_burst), 1U);
	struct mroce_rx_burst bu = { .max = burst };
	struct mroce_rx_meta meta;
	struct sk_buff_head local;
	struct sk_buff *skb;
	unsigned int n;
	u64 cookie;

	__skb_queue_head_init(&local);
	spin_lock(&rxc->q.lock);
	for (n = 0; n < MROCE_RX_RUN && (skb = __skb_dequeue(&rxc->q)); n++)
		__skb_queue_tail(&local, skb);
	spin_unlock(&rxc->q.lock);

	rcu_read_lock();
	while ((skb = __skb_dequeue(&local))) {
		cookie = mroce_rx_cb(skb)->cookie;
		mroce_rx_unpark(skb, &meta);
		bu.max = cookie ? max(burst, MROCE_RX_STEER_BURST) : burst;
		mroce_rx_one(skb, &meta, &bu, NULL);
		dev_put(meta.dev);
		if (cookie)
			mroce_steer_done(cookie);
	}
	mroce_rx_burst_end(&bu, true);
	rcu_read_unlock();
	/* A lockless peek: a packet queued after it saw empty kicks anew. */
	if (!skb_queue_empty_lockless(&rxc->q))
		tasklet_schedule(t);
}

static void mroce_rx_kick(void *arg)
{
	struct mroce_rx_cpu *rxc = arg;

	tasklet_schedule(&rxc->run);
}

/* Wait for @skb's turn on @cpu's queue. Softirq; consumes @skb. */
static void mroce_rx_queue(int cpu, struct sk_buff *skb,
			   const struct mroce_rx_meta *meta, u64 cookie)
{
	struct mroce_rx_cpu *rxc = per_cpu_ptr(&mroce_rx_cpu, cpu);
	bool kick;

	spin_lock(&rxc->q.lock);
	if (skb_queue_len(&rxc->q) >= MROCE_RX_QLEN) {
		spin_unlock(&rxc->q.lock);
		/* Behind by a whole queue: not the time to reorder. */
		mroce_rx_drop(meta, MROCE_CNT_DROP_RX_QUEUE, NULL, skb);
		kfree_skb(skb);
		if (cookie) {
			rcu_read_lock();
			mroce_steer_done(cookie);
			rcu_read_unlock();
		}
		return;
	}
	mroce_rx_park(skb, meta, cookie);
	__skb_queue_tail(&rxc->q, skb);
	kick = skb_queue_len(&rxc->q) == 1;
	/*
	 * Another CPU: also when packets wait there already but its tasklet
	 * is not running them. A softirq pass that ran out of its budget
	 * leaves what is raised to ksoftirqd, which shares that CPU with a
	 * busy-polling application for a scheduler slice or more, and an
	 * ACK waiting that long is late enough for a probe or a
	 * retransmission timeout (rx_spread's spurious resends, sessions 12
	 * and 13); an IPI's exit runs a raised tasklet at once, ksoftirqd or
	 * not. Under q.lock: the csd is that CPU's, shared by every CPU that
	 * queues to it, and smp_call_function_single_async() takes it with
	 * a plain test and set. -EBUSY: the last kick is still on its way
	 * and schedules the tasklet after this packet was queued.
	 */
	if (cpu != smp_processor_id() &&
	    (kick || !test_bit(TASKLET_STATE_RUN, &rxc->run.state)))
		smp_call_function_single_async(cpu, &rxc->csd);
	spin_unlock(&rxc->q.lock);
	if (kick && cpu == smp_processor_id())
		tasklet_schedule(&rxc->run);
}

/**
 * mroce_rx_skb() - one received mroce packet
 * @skb: data at the mroce header (UDP stripped, checksum verified)
 * @meta: outer addresses, ECN, namespace, ingress device (skb->dev)
 *
 * Softirq context. Consumes @skb.
 */
void mroce_rx_skb(struct sk_buff *skb, const struct mroce_rx_meta *meta)
{
	struct mroce_rx_burst bu = { .max = 1 };
	struct mroce_steer_to to = {};

	rcu_read_lock();
	if (in_softirq()) {
		mroce_steer_pick(skb, &to);
		/* Bursts: after the stack's batch, on this CPU. */
		if (!to.now || READ_ONCE(mroce_rx_burst) > 1) {
			rcu_read_unlock();
			mroce_rx_queue(to.cpu, skb, meta, to.cookie);
			return;
		}
	}
	mroce_rx_one(skb, meta, &bu, to.peer);
	mroce_rx_burst_end(&bu, true);
	rcu_read_unlock();
}

void mroce_rx_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct mroce_rx_cpu *rxc = per_cpu_ptr(&mroce_rx_cpu, cpu);

		skb_queue_head_init(&rxc->q);
		INIT_CSD(&rxc->csd, mroce_rx_kick, rxc);
		tasklet_setup(&rxc->run, mroce_rx_run);
	}
}

static void mroce_rx_noop(void *arg)
{
}

/* After the sockets closed: nothing queues any more. */
void mroce_rx_exit(void)
{
	struct sk_buff *skb;
	unsigned int cpu;

	synchronize_net();
	/* Kicks still on their way run before this one (FIFO per CPU). */
	on_each_cpu(mroce_rx_noop, NULL, 1);
	for_each_possible_cpu(cpu) {
		struct mroce_rx_cpu *rxc = per_cpu_ptr(&mroce_rx_cpu, cpu);

		tasklet_kill(&rxc->run);
		while ((skb = __skb_dequeue(&rxc->q))) {
			dev_put(skb->dev);
			kfree_skb(skb);
		}
	}
}
