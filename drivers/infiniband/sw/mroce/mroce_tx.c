// SPDX-License-Identifier: GPL-2.0
/*
 * Transmit: send WQEs, and the answers to READ and ATOMIC requests, become
 * chunks, and chunks become packets.
 *
 * Every chunk gets its stream PSN when it is first sent and keeps it; the
 * requester remembers (ref, offset, length) per stream PSN (struct
 * mroce_chunk), so a chunk the core declares lost is rebuilt from the WQE
 * or the request it belongs to and sent again, on whatever path the core
 * picks, with a new path PSN. Nothing else is kept per packet.
 *
 * Packets carry the payload zero-copy where the memory allows it: pages of
 * pinned user MRs are attached to the skb as page fragments (each holding
 * a page reference until the skb is freed); kernel buffers, inline data,
 * pathological scatter lists and payloads that fit the tailroom the head
 * has anyway are copied into the skb.
 *
 * All of this runs under peer->lock, batched per connection: one lock
 * round builds up to a budget of packets onto the peer's transmit queue,
 * which is sent after the lock is dropped (mroce_peer_unlock()).
 */
#include <linux/skbuff.h>

#include "mroce_counters.h"
#include "mroce_peer.h"
#include "mroce_trace.h"

enum mroce_tx_res {
	MROCE_TX_SENT,		/* one packet queued */
	MROCE_TX_IDLE,		/* this QP has nothing it may send now */
	MROCE_TX_STOP,		/* the connection cannot send now */
};

/* A chunk about to be sent (or sent again). */
struct mroce_txck {
	u8			opcode;
	u8			kind;
	u16			flags;
	u32			ref;
	u32			off;
	u32			len;
	u32			psn;		/* resend: its stream PSN */
	bool			resend;
	struct mroce_swqe	*swqe;
	struct mroce_rdreq	*rd;
};

u32 mroce_tx_mss(const struct mroce_peer *peer, u8 opcode)
{
	return mroce_max_payload(opcode, peer->conn.mtu);
}

/**
 * mroce_tx_resend() - send a chunk again
 * @qp: its QP
 * @psn: the chunk's stream PSN
 * @why: enum mroce_retx_reason, for the mroce_retransmit tracepoint
 * @path: the path of the transmission it replaces, MROCE_TRACE_NO_PATH if
 *        none is known
 * @gen: that path's generation
 * @path_psn: that transmission's path PSN
 *
 * Whoever gives up on a transmission (the core declared it lost, the
 * receiver refused it, the transport was reset) comes here: a chunk still
 * outstanding and not acknowledged is marked for mroce_tx_run() with the
 * reason, which the tracepoint reports when it goes out again.
 */
void mroce_tx_resend(struct mroce_qp *qp, u32 psn, u8 why, u8 path, u8 gen,
		     u32 path_psn)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_chunk *c;

	if (!mroce_xqp_sends(xp) || !xp->chunks)
		return;
	if (psn - xp->stx.una >= xp->stx.next - xp->stx.una ||
	    mroce_stx_is_acked(&xp->stx, psn))
		return;
	c = &xp->chunks[psn & MROCE_STREAM_MASK];
	c->lost_why = why;
	c->lost_path = path;
	c->lost_gen = gen;
	c->lost_psn = path_psn;
	if (!__test_and_set_bit(psn & MROCE_STREAM_MASK, xp->resend))
		xp->n_resend++;
	mroce_tx_queue_qp(xp->peer, qp);
}

/* The connection was reset under the QP: everything unacknowledged goes. */
void mroce_tx_requeue_unacked(struct mroce_peer *peer, struct mroce_qp *qp)
{
	struct mroce_qp_xport *xp = &qp->xport;
	u32 psn;

	lockdep_assert_held(&peer->lock);
	if (mroce_xqp_sends(xp)) {
		for (psn = xp->stx.una; psn != xp->stx.next; psn++)
			mroce_tx_resend(qp, psn, MROCE_RETX_REKEY,
					MROCE_TRACE_NO_PATH, 0, 0);
	}
	mroce_tx_queue_qp(peer, qp);
}

static u8 mroce_tx_opcode(const struct mroce_swqe *w)
{
	switch (w->opcode) {
	case IB_WR_SEND:
		return MROCE_OP_SEND;
	case IB_WR_SEND_WITH_IMM:
		return MROCE_OP_SEND_IMM;
	case IB_WR_SEND_WITH_INV:
		return MROCE_OP_SEND_INV;
	case IB_WR_RDMA_WRITE:
		return MROCE_OP_WRITE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return MROCE_OP_WRITE_IMM;
	case IB_WR_RDMA_READ:
		return MROCE_OP_READ_REQ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return MROCE_OP_ATOMIC_REQ;
	default:
		return 0;
	}
}

static bool mroce_tx_is_rd(const struct mroce_swqe *w)
{
	u8 op = mroce_tx_opcode(w);

	return op == MROCE_OP_READ_REQ || op == MROCE_OP_ATOMIC_REQ;
}

/* Where the chunk [@off, @off + @len) sits in a message of @total bytes. */
static u16 mroce_tx_som_eom(u32 off, u32 len, u32 total)
{
	return (off ? 0 : MROCE_F_SOM) |
	       (off + len == total ? MROCE_F_EOM : 0);
}

/* Wire flags of a request chunk. */
static u16 mroce_tx_flags(const struct mroce_swqe *w, u8 opcode, u32 off,
			  u32 len)
{
	u16 flags;

	if (opcode == MROCE_OP_READ_REQ || opcode == MROCE_OP_ATOMIC_REQ)
		return MROCE_F_SOM | MROCE_F_EOM;
	flags = mroce_tx_som_eom(off, len, w->length);
	if ((flags & MROCE_F_EOM) && (w->send_flags & IB_SEND_SOLICITED) &&
	    opcode != MROCE_OP_WRITE)
		flags |= MROCE_F_SE;
	return flags;
}

/* ------------------------------------------------------------ choosing */

/* The lowest stream PSN waiting to be sent again, if any. */
static bool mroce_tx_pick_resend(struct mroce_qp *qp, struct mroce_txck *ck)
{
	struct mroce_qp_xport *xp = &qp->xport;
	u32 start = xp->stx.una & MROCE_STREAM_MASK;

	while (xp->n_resend) {
		const struct mroce_chunk *c;
		unsigned long idx;
		u32 psn;
		bool ok;

		idx = find_next_bit(xp->resend, MROCE_STREAM_WINDOW, start);
		if (idx >= MROCE_STREAM_WINDOW)
			idx = find_first_bit(xp->resend, MROCE_STREAM_WINDOW);
		if (WARN_ON_ONCE(idx >= MROCE_STREAM_WINDOW)) {
			xp->n_resend = 0;
			return false;
		}
		psn = xp->stx.una + ((idx - start) & MROCE_STREAM_MASK);
		c = &xp->chunks[idx];
		/*
		 * Defensive only: every acknowledgement clears its bit
		 * (mroce_xport_stream_ack()), so no bit should name a PSN
		 * beyond the last one assigned; if one ever did, sending it
		 * would put an old chunk under a new PSN.
		 */
		ok = psn - xp->stx.una < xp->stx.next - xp->stx.una &&
		     !mroce_stx_is_acked(&xp->stx, psn);
		if (ok && c->kind == MROCE_CK_REQ) {
			struct mroce_swqe *w = mroce_wq_slot(&qp->sq, c->ref);

			ok = c->ref - xp->sq_done < xp->sq_next - xp->sq_done &&
			     w->ssn == c->ref &&
			     w->xport.state != MROCE_SW_DONE;
			ck->swqe = w;
			ck->opcode = ok ? mroce_tx_opcode(w) : 0;
		} else if (ok) {
			struct mroce_rdreq *rd = &xp->rd[c->ref &
							 (MROCE_RD_SLOTS - 1)];

			ok = rd->ord == c->ref && (rd->state == MROCE_RD_READY ||
						    rd->state == MROCE_RD_SENT);
			ck->rd = rd;
			ck->opcode = rd->op == MROCE_OP_READ_REQ ?
				MROCE_OP_READ_RESP : MROCE_OP_ATOMIC_RESP;
		}
		if (!ok) {
			__clear_bit(idx, xp->resend);
			xp->n_resend--;
			continue;
		}
		ck->kind = c->kind;
		ck->ref = c->ref;
		ck->off = c->off;
		ck->len = c->len;
		ck->flags = c->flags;
		ck->psn = psn;
		ck->resend = true;
		return true;
	}
	return false;
}

/* The next chunk of the answer to the oldest executed READ/ATOMIC. */
static bool mroce_tx_pick_resp(struct mroce_peer *peer, struct mroce_qp *qp,
			       struct mroce_txck *ck)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_rdreq *rd;

	if (xp->rd_resp == xp->rd_exec || !mroce_xqp_sends(xp))
		return false;
	rd = &xp->rd[xp->rd_resp & (MROCE_RD_SLOTS - 1)];
	if (WARN_ON_ONCE(rd->state != MROCE_RD_READY))
		return false;
	ck->kind = MROCE_CK_RESP;
	ck->ref = rd->ord;
	ck->rd = rd;
	ck->off = rd->sent;
	if (rd->op == MROCE_OP_READ_REQ) {
		ck->opcode = MROCE_OP_READ_RESP;
		ck->len = min(rd->length - rd->sent,
			      mroce_tx_mss(peer, MROCE_OP_READ_RESP));
		ck->flags = mroce_tx_som_eom(ck->off, ck->len, rd->length);
	} else {
		ck->opcode = MROCE_OP_ATOMIC_RESP;
		ck->len = 0;
		ck->flags = MROCE_F_SOM | MROCE_F_EOM;
	}
	return true;
}

/* Execute a local operation (REG_MR, LOCAL_INV) where the SQ reaches it. */
static void mroce_tx_local_op(struct mroce_peer *peer, struct mroce_qp *qp,
			      struct mroce_swqe *w)
{
	enum ib_wc_status st;

	if (w->opcode == IB_WR_REG_MR)
		st = mroce_exec_reg_mr(qp, w);
	else
		st = mroce_exec_local_inv(qp, w);
	w->xport.state = MROCE_SW_DONE;
	if (st != IB_WC_SUCCESS) {
		mroce_comp_fail_qp(peer, qp, w, st);
		return;
	}
	mroce_sq_complete(qp, w, IB_WC_SUCCESS);
	mroce_comp_mark(peer, qp);
}

/*
 * The next chunk of the WQE being segmented, fetching WQEs as needed.
 * Returns false when the QP has nothing to start (or must wait for a
 * fence, the READ/ATOMIC limit or the stream window).
 */
static bool mroce_tx_pick_wqe(struct mroce_peer *peer, struct mroce_qp *qp,
			      struct mroce_txck *ck)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_swqe *w;
	u8 op;

	for (;;) {
		if (xp->state != MROCE_XQP_RTS)
			return false;
		w = xp->cur;
		if (!w) {
			w = mroce_sq_fetch(qp);
			if (!w)
				return false;
			if (WARN_ON_ONCE(w->ssn != xp->sq_next)) {
				mroce_comp_fail_qp(peer, qp, w,
						   IB_WC_LOC_QP_OP_ERR);
				return false;
			}
			xp->sq_next++;
			memset(&w->xport, 0, sizeof(w->xport));
			xp->cur = w;
		}
		if ((w->send_flags & IB_SEND_FENCE) && xp->rd_done != xp->rd_next)
			return false;
		if (w->opcode == IB_WR_REG_MR || w->opcode == IB_WR_LOCAL_INV) {
			xp->cur = NULL;
			mroce_tx_local_op(peer, qp, w);
			continue;
		}
		op = mroce_tx_opcode(w);
		if (!op || (op == MROCE_OP_ATOMIC_REQ &&
			    !(mroce_hs_caps(&peer->conn.hs) & MROCE_CAP_ATOMIC))) {
			xp->cur = NULL;
			mroce_comp_fail_qp(peer, qp, w, IB_WC_LOC_QP_OP_ERR);
			return false;
		}
		if ((op == MROCE_OP_READ_REQ || op == MROCE_OP_ATOMIC_REQ) &&
		    xp->rd_next - xp->rd_done >= xp->max_rd)
			return false;
		if (!mroce_stx_can_assign(&xp->stx))
			return false;
		break;
	}

	ck->kind = MROCE_CK_REQ;
	ck->opcode = op;
	ck->swqe = w;
	ck->ref = w->ssn;
	ck->off = w->xport.sent;
	if (op == MROCE_OP_READ_REQ || op == MROCE_OP_ATOMIC_REQ)
		ck->len = 0;
	else
		ck->len = min(w->length - ck->off, mroce_tx_mss(peer, op));
	ck->flags = mroce_tx_flags(w, op, ck->off, ck->len);
	return true;
}

/* ------------------------------------------------------------ building */

static int mroce_tx_attach(void *priv, struct page *page, unsigned int off,
			   unsigned int len)
{
	struct sk_buff *skb = priv;
	int i = skb_shinfo(skb)->nr_frags;

	if (i && skb_can_coalesce(skb, i, page, off)) {
		skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], len);
	} else {
		if (i >= MAX_SKB_FRAGS)
			return -EMSGSIZE;
		get_page(page);
		skb_fill_page_desc(skb, i, page, off, len);
	}
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return 0;
}

/*
 * An skb holding the chunk's payload (headroom for every header). Returns
 * NULL with *status set to the completion error if the local memory does
 * not check out, or with *status IB_WC_SUCCESS if only memory ran out.
 */
static struct sk_buff *mroce_tx_payload(struct mroce_peer *peer,
					struct mroce_qp *qp,
					const struct mroce_txck *ck,
					enum ib_wc_status *status)
{
	struct mroce_dev *mdev = peer->mdev;
	u32 hdr = mroce_hdr_len(ck->opcode);
	struct mroce_mr_pin *pin = NULL;
	bool zc = false, repinned = false;
	struct sk_buff *skb;
	u64 va = 0;
	int err;

	*status = IB_WC_SUCCESS;
again:
	if (ck->kind == MROCE_CK_REQ)
		zc = qp->is_user && !ck->swqe->is_inline;
	else if (ck->len) {
		va = ck->rd->va + ck->off;
		/* The QP's rkey cache: one lookup per READ, not per chunk. */
		pin = &qp->rd_pin;
		err = mroce_rkey_pin(qp, pin, ck->rd->rkey,
				     IB_ACCESS_REMOTE_READ, va, ck->len, NULL);
		if (err && ck->resend) {
			/*
			 * The requester completes a READ only with every
			 * response chunk, and ULPs invalidate (or re-key) the
			 * MR only after that: a resend that finds the MR gone
			 * is spurious (its ACK was late or lost). The stream
			 * PSN must still be delivered, and the requester drops
			 * it as a duplicate: send it without the data.
			 */
			skb = mroce_net_alloc_skb(mdev, hdr + ck->len, GFP_ATOMIC);
			if (!skb)
				goto nomem;
			skb_reserve(skb, hdr);
			memset(skb_put(skb, ck->len), 0, ck->len);
			return skb;
		}
		if (err) {
			*status = IB_WC_REM_ACCESS_ERR;
			return NULL;
		}
		zc = mroce_mr_pin_is_user(pin);
	}

	/*
	 * One decision, copy or attach, on one head. The header goes in front
	 * later (skb_push()): reserve room for it. A zero-copy chunk's head
	 * is sized for the header alone, but the allocation is rounded up (a
	 * 64 B WRITE's has 72 B of tailroom): a payload that fits there is
	 * copied, as rxe does, rather than attached. A fragment costs a page
	 * reference taken here and dropped when the skb is freed, and the
	 * receiver copies it out with skb_copy_bits() where a payload in the
	 * head is one memcpy.
	 */
	skb = mroce_net_alloc_skb(mdev, hdr + (zc ? 0 : ck->len), GFP_ATOMIC);
	if (!skb)
		goto nomem;
	skb_reserve(skb, hdr);
	if (zc && ck->len > skb_tailroom(skb)) {
		if (pin)
			err = mroce_mr_pin_walk(pin, va, ck->len,
						mroce_tx_attach, skb, NULL);
		else
			err = mroce_swqe_walk(qp, ck->swqe, ck->off, ck->len,
					      mroce_tx_attach, skb, NULL);
		if (!err) {
			skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
			goto out;
		}
		kfree_skb(skb);
		if (err != -EMSGSIZE)
			goto fault;
		/* Too many pieces for one skb: a head that holds the copy. */
		skb = mroce_net_alloc_skb(mdev, hdr + ck->len, GFP_ATOMIC);
		if (!skb)
			goto nomem;
		skb_reserve(skb, hdr);
	}
	if (!ck->len)
		goto out;
	if (pin)
		err = mroce_mr_pin_copy_from(pin, va, skb_put(skb, ck->len),
					     ck->len, NULL);
	else
		err = mroce_swqe_copy_out(qp, ck->swqe, ck->off,
					  skb_put(skb, ck->len), ck->len,
					  NULL);
	if (err) {
		kfree_skb(skb);
		goto fault;
	}
out:
	return skb;

fault:
	/*
	 * The walk is what checks that the rkey cache's MR was not
	 * invalidated, re-registered or deregistered since it was cached:
	 * then look the rkey up again, as a lookup per chunk would.
	 */
	if (pin && err == -ESTALE && !repinned) {
		mroce_mr_unpin(pin);
		repinned = true;
		goto again;
	}
	*status = ck->kind == MROCE_CK_REQ ? IB_WC_LOC_PROT_ERR :
					     IB_WC_REM_ACCESS_ERR;
	return NULL;
nomem:
	mroce_counter_inc(mdev, MROCE_CNT_DROP_NOMEM);
	return NULL;
}

static void mroce_tx_fill(struct mroce_qp *qp, const struct mroce_txck *ck,
			  u32 psn, struct mroce_pkt *pkt)
{
	struct mroce_data *d = &pkt->u.d;

	memset(pkt, 0, sizeof(*pkt));
	pkt->c.opcode = ck->opcode;
	pkt->c.flags = ck->flags;
	pkt->payload_len = ck->len;
	d->stream_id = qp->xport.remote_qpn;
	d->stream_psn = psn;
	d->msg_offset = ck->off;

	if (ck->kind == MROCE_CK_RESP) {
		d->ssn = ck->rd->ssn;
		d->msn = ck->rd->ord;
		d->orig = ck->rd->orig;
		return;
	}

	d->ssn = ck->swqe->ssn;
	d->msn = ck->swqe->xport.msn;
	switch (ck->opcode) {
	case MROCE_OP_SEND_IMM:
	case MROCE_OP_WRITE_IMM:
		d->imm = be32_to_cpu(ck->swqe->ex.imm_data);
		break;
	case MROCE_OP_SEND_INV:
		d->imm = ck->swqe->ex.invalidate_rkey;
		break;
	default:
		break;
	}
	switch (ck->opcode) {
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
	case MROCE_OP_READ_REQ:
		d->va = ck->swqe->wr.rdma.remote_addr;
		d->rkey = ck->swqe->wr.rdma.rkey;
		d->length = ck->swqe->length;
		break;
	case MROCE_OP_ATOMIC_REQ:
		d->va = ck->swqe->wr.atomic.remote_addr;
		d->rkey = ck->swqe->wr.atomic.rkey;
		if (ck->swqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP) {
			d->atomic_op = MROCE_ATOMIC_CMP_SWP;
			d->compare = ck->swqe->wr.atomic.compare_add;
			d->swap_add = ck->swqe->wr.atomic.swap;
		} else {
			d->atomic_op = MROCE_ATOMIC_FETCH_ADD;
			d->swap_add = ck->swqe->wr.atomic.compare_add;
		}
		break;
	default:
		break;
	}
}

/* First transmission: give the chunk its stream PSN and move the cursor. */
static u32 mroce_tx_assign(struct mroce_qp *qp, const struct mroce_txck *ck)
{
	struct mroce_qp_xport *xp = &qp->xport;
	u32 psn = mroce_stx_assign(&xp->stx);
	struct mroce_chunk *c = &xp->chunks[psn & MROCE_STREAM_MASK];

	xp->stx_live = true;
	c->kind = ck->kind;
	c->ref = ck->ref;
	c->off = ck->off;
	c->len = ck->len;
	c->flags = ck->flags;
	/* The slot's previous chunk may have been lost: forget where. */
	c->lost_why = MROCE_RETX_SACK;
	c->lost_path = MROCE_TRACE_NO_PATH;
	c->lost_gen = 0;
	c->lost_psn = 0;

	if (ck->kind == MROCE_CK_RESP) {
		struct mroce_rdreq *rd = ck->rd;

		rd->sent += ck->len;
		if (ck->flags & MROCE_F_EOM) {
			rd->last_psn = psn;
			rd->state = MROCE_RD_SENT;
			xp->rd_resp++;
		}
		return psn;
	}

	{
		struct mroce_swqe *w = ck->swqe;

		if (w->xport.state == MROCE_SW_NEW) {
			w->xport.first_psn = psn;
			w->xport.state = MROCE_SW_SENDING;
			if (mroce_tx_is_rd(w)) {
				w->xport.msn = xp->rd_next;
				xp->rd_ssn[xp->rd_next & (MROCE_MAX_RD_ATOM - 1)] =
					w->ssn;
				xp->rd_next++;
				mroce_conn_owe(&xp->peer->conn);
			} else if (w->opcode != IB_WR_RDMA_WRITE) {
				w->xport.msn = xp->send_msn++;
			}
		}
		w->xport.last_psn = psn;
		w->xport.sent += ck->len;
		if (ck->flags & MROCE_F_EOM) {
			w->xport.state = mroce_tx_is_rd(w) ?
				MROCE_SW_WAIT_RESP : MROCE_SW_SENT;
			xp->cur = NULL;
		}
	}
	return psn;
}

/* Build and queue one packet of @qp. Inlined: one call per packet less. */
static __always_inline enum mroce_tx_res mroce_tx_one(struct mroce_peer *peer,
				      struct mroce_qp *qp, u64 now,
				      struct sk_buff **out)
{
	struct mroce_qp_xport *xp = &qp->xport;
	struct mroce_txck ck = {};
	enum ib_wc_status status;
	enum mroce_tx_status st;
	struct mroce_tx_slot slot;
	struct mroce_pkt pkt;
	struct sk_buff *skb;
	u32 hdr, psn;

	if (xp->hold_until) {
		if (xp->hold_until > now)
			return MROCE_TX_IDLE;	/* mroce_peer_wake() requeues */
		xp->hold_until = 0;
	}
	if (!mroce_tx_pick_resend(qp, &ck) &&
	    !mroce_tx_pick_resp(peer, qp, &ck) &&
	    !mroce_tx_pick_wqe(peer, qp, &ck))
		return MROCE_TX_IDLE;
	if (!ck.resend && !mroce_stx_can_assign(&xp->stx))
		return MROCE_TX_IDLE;	/* an ACK of this QP requeues it */

	st = mroce_conn_tx_reserve(&peer->conn, now, ck.len, -1, &slot);
	switch (st) {
	case MROCE_TX_OK:
		break;
	case MROCE_TX_PACED:
		/* Eligible again once the slot is within the horizon. */
		peer->pace_at = max(slot.depart - READ_ONCE(mroce_prm.pace_horizon),
				    now + 1);
		return MROCE_TX_STOP;
	default:
		return MROCE_TX_STOP;	/* an ACK or a timer resumes */
	}

	skb = mroce_tx_payload(peer, qp, &ck, &status);
	if (!skb) {
		if (status == IB_WC_SUCCESS)
			return MROCE_TX_STOP;	/* no memory: timer retries */
		if (ck.kind == MROCE_CK_REQ) {
			if (xp->cur == ck.swqe)
				xp->cur = NULL;
			mroce_comp_fail_qp(peer, qp, ck.swqe, status);
		} else {
			/* The MR we answer from went away under the request. */
			mroce_comp_fail_qp(peer, qp, NULL, status);
		}
		return MROCE_TX_IDLE;
	}

	if (ck.resend) {
		psn = ck.psn;
		__clear_bit(psn & MROCE_STREAM_MASK, xp->resend);
		xp->n_resend--;
		mroce_counter_inc(peer->mdev, MROCE_CNT_RETRANS_PKTS);
	} else {
		psn = mroce_tx_assign(qp, &ck);
	}
	mroce_conn_tx_commit(&peer->conn, &slot, mroce_cookie(qp, psn), now);
	if (ck.resend)
		mroce_trace_resend(peer, qp, &slot, psn, ck.len);

	mroce_tx_fill(qp, &ck, psn, &pkt);
	if (ck.resend)
		pkt.c.flags |= MROCE_F_RETX;
	mroce_conn_fill(&peer->conn, &slot, &pkt);
	hdr = mroce_hdr_len(ck.opcode);
	if (WARN_ON_ONCE(mroce_encode(&pkt, skb_push(skb, hdr), hdr) != hdr)) {
		kfree_skb(skb);
		return MROCE_TX_STOP;
	}

	mroce_peer_queue_path(peer, skb, slot.path, slot.sport);
	*out = skb;
	return MROCE_TX_SENT;
}

/* Bytes waiting to be sent: the core's view of our backlog. */
static u32 mroce_tx_backlog(struct mroce_peer *peer)
{
	struct mroce_qp *qp;
	u64 bytes = 0;

	list_for_each_entry(qp, &peer->tx_list, xport.tx_node) {
		struct mroce_qp_xport *xp = &qp->xport;

		if (xp->cur)
			bytes += xp->cur->length - xp->cur->xport.sent;
		bytes += (u64)xp->n_resend * peer->conn.mss;
	}
	return min_t(u64, bytes, U32_MAX);
}

/*
 * Whether this run would find nothing to do: no QP on the transmit list, no
 * doorbell's mark, and the core's backlog and watchdog already where the
 * run would leave them (mroce_conn_send_idle(): the backlog 0, the watchdog
 * running or with nothing to guard). Loads only: taking the marks is an
 * atomic test-and-clear even when there are none. Every burst end asks,
 * and on a ping-pong neither burst has anything to send: the ACK's retired
 * the WQE (the next doorbell, on its own CPU, transmits itself) and the
 * data's other side waits for this lock behind received data and
 * transmits itself (mroce_peer_kick()); the data burst's ACK then leaves
 * from the unlock's flush right after it was built (~220 instructions
 * less per round trip, no latency gain resolved: session 39 in
 * docs/transport.md). A mark set after the load is a doorbell whose
 * trylock found our lock taken: every holder releases it through
 * mroce_peer_unlock(), which looks for the mark past the barrier that
 * pairs with the doorbell's on an idle connection, and with data in
 * flight the next ACK's run finds it.
 */
static bool mroce_tx_nothing(const struct mroce_peer *peer)
{
	return list_empty(&peer->tx_list) &&
	       !mroce_peer_kick_marked(peer) &&
	       mroce_conn_send_idle(&peer->conn);
}

/**
 * mroce_tx_run() - transmit what the connection's QPs have, within limits
 * @peer: the connection, locked
 * @now: current time
 * @budget: at most this many packets
 *
 * Round robin over the QPs with work, a burst each, until the budget, the
 * congestion window, the pacer or the work runs out. What the budget left
 * over goes to the peer's work item; what the window left waits for ACKs;
 * what the pacer left waits for the timer.
 */
void mroce_tx_run(struct mroce_peer *peer, u64 now, unsigned int budget)
{
	struct sk_buff *last = NULL, *skb;
	bool stop = false;

	lockdep_assert_held(&peer->lock);
	if (mroce_tx_nothing(peer))
		return;
	mroce_peer_take_kicks(peer);
	if (peer->dead || list_empty(&peer->tx_list))
		goto out;
	if (!mroce_conn_established(&peer->conn)) {
		if (peer->conn.hs.state != MROCE_HS_REQ_SENT)
			mroce_peer_connect(peer, now);
		return;
	}
	if (peer->pace_at > now)
		goto out;
	peer->pace_at = 0;
	/* Runs of one path as long as a burst: bursts form (mroce_pick.c). */
	mroce_conn_set_burst(&peer->conn, mroce_net_burst(peer));
	/* Scan the paths only when it could move tx_cpu here. */
	if (READ_ONCE(peer->tx_cpu) != raw_smp_processor_id() &&
	    mroce_peer_idle(peer))
		WRITE_ONCE(peer->tx_cpu, raw_smp_processor_id());

	while (budget && !stop && !list_empty(&peer->tx_list)) {
		struct mroce_qp *qp = list_first_entry(&peer->tx_list,
						       struct mroce_qp,
						       xport.tx_node);
		unsigned int n;

		for (n = 0; n < MROCE_TX_QP_BURST && budget; n++) {
			enum mroce_tx_res r = mroce_tx_one(peer, qp, now, &skb);

			if (r == MROCE_TX_SENT) {
				budget--;
				last = skb;
				/* Its last packet: no second pick to find so. */
				if (mroce_tx_drained(qp)) {
					list_del_init(&qp->xport.tx_node);
					break;
				}
				continue;
			}
			if (r == MROCE_TX_IDLE)
				list_del_init(&qp->xport.tx_node);
			else
				stop = true;
			break;
		}
		if (!list_empty(&qp->xport.tx_node))
			list_move_tail(&qp->xport.tx_node, &peer->tx_list);
	}

	/* Drained: ask for an ACK now rather than after the delayed-ACK timer. */
	if (last && list_empty(&peer->tx_list))
		mroce_wire_set_ar(last->data, skb_headlen(last));
	if (!budget && !list_empty(&peer->tx_list))
		queue_work_on(peer->tx_cpu, mroce_wq, &peer->tx_work);
out:
	mroce_conn_set_backlog(&peer->conn, mroce_tx_backlog(peer), now);
}
