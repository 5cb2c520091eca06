// SPDX-License-Identifier: GPL-2.0
/*
 * Work requests: posting, validation into kernel shadows, the hand-off to
 * the transport (fetch/complete, take/complete), flushing, and moving data
 * between a WQE's scatter-gather list and the transport's buffers.
 *
 * See "Work queues and shadows" and "Locking" in mroce_verbs.h.
 *
 * Completion order. The transport may complete WQEs in any order; each one
 * is marked done in its shadow and retired from the tail in queue order, so
 * CQEs always come out in posting order. A WQE that fails validation is
 * kept in the queue, marked done with its error, and never handed to the
 * transport: when the tail reaches it, its error CQE is posted and the QP
 * leaves RTS (ERR for RC, SQE for UD/GSI), which flushes what follows.
 *
 * Flushing. WQEs the transport never saw (send WQEs after the fetch index,
 * receive WQEs not taken) can be flushed at any time. WQEs the transport
 * holds are flushed only after it let go of them: it asked for the error
 * itself (mroce_qp_set_error()) or was told (modify_qp to ERR or the
 * deferred error work, see mroce_qp.c).
 *
 * Copies under way. UD and GSI QPs have no transport that could let go of
 * their WQEs: the datagram code (mroce_ud.c) takes or fetches a WQE, copies
 * through its SGEs and MR pin with no lock held, and completes it at once.
 * So for them each WQE handed out is counted in wq->copying until it
 * completes, and the take or fetch checks the QP state under the same
 * wq->lock that counts it. Whoever moves the QP to ERR or RESET stores the
 * state first and then waits, before flushing or resetting, until it sees
 * wq->copying at 0 under wq->lock (mroce_qp_wait_copies(), mroce_qp.c): a
 * take or fetch in a later hold of the lock sees the new state and hands
 * out nothing, one in an earlier hold was counted. No atomics on the data
 * path: the counter and the state check ride on the lock take and
 * complete hold anyway, and a completion wakes the waiter only when the
 * count drops to 0 in a state that hands out nothing.
 */
#include <linux/highmem.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "mroce.h"
#include "mroce_verbs.h"

#define MROCE_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

/* ------------------------------------------------------------ geometry */

/* Bytes after a send WQE's header: its SGE list or its inline data. */
size_t mroce_swqe_room(u32 max_sge, u32 max_inline)
{
	return ALIGN(max_t(size_t, max_sge * sizeof(struct ib_sge), max_inline),
		     sizeof(struct ib_sge));
}

/**
 * mroce_wq_init() - allocate a send or receive queue
 * @wq: zeroed by the caller
 * @uctx: share a ring with this user context, or NULL for a kernel queue
 * @max_wr: requested depth (at least 1)
 * @max_sge: requested SGEs per WQE
 * @max_inline: requested inline bytes (send queues)
 * @is_send: send queue (rxe_send_wqe ring) or receive queue/SRQ
 *
 * The granted depth, SGE count and inline size can be larger than asked;
 * they are left in @wq for create_qp/create_srq to report.
 *
 * Return: 0 or a negative errno.
 */
int mroce_wq_init(struct mroce_wq *wq, struct ib_ucontext *uctx, u32 max_wr,
		  u32 max_sge, u32 max_inline, bool is_send)
{
	size_t room, hdr, uhdr;
	u32 slots;
	int err;

	BUILD_BUG_ON(sizeof(struct rxe_sge) != sizeof(struct ib_sge));
	BUILD_BUG_ON(offsetof(struct rxe_sge, lkey) !=
		     offsetof(struct ib_sge, lkey));
	BUILD_BUG_ON(sizeof(struct rxe_send_wqe) != 208);
	BUILD_BUG_ON(sizeof(struct rxe_recv_wqe) != 40);
	BUILD_BUG_ON(sizeof(struct rxe_send_wr) != 144);
	BUILD_BUG_ON(offsetof(struct rxe_send_wqe, dma) != 184);
	BUILD_BUG_ON(offsetof(struct rxe_recv_wqe, dma) != 16);
	BUILD_BUG_ON(offsetof(struct rxe_send_wr, wr.ud.ah_num) != 36);

	spin_lock_init(&wq->lock);
	INIT_LIST_HEAD(&wq->cq_wait);
	wq->is_send = is_send;
	if (is_send) {
		room = mroce_swqe_room(max_sge, max_inline);
		wq->max_sge = min_t(u32, room / sizeof(struct ib_sge),
				    MROCE_MAX_SGE);
		wq->max_inline = min_t(u32, room, MROCE_MAX_INLINE);
		hdr = sizeof(struct mroce_swqe);
		uhdr = sizeof(struct rxe_send_wqe);
	} else {
		room = max_sge * sizeof(struct ib_sge);
		wq->max_sge = max_sge;
		hdr = sizeof(struct mroce_rwqe);
		uhdr = sizeof(struct rxe_recv_wqe);
	}

	slots = mroce_queue_slots(max_wr);
	wq->mask = slots - 1;
	wq->max_wr = wq->mask;
	wq->stride = ALIGN(hdr + room, sizeof(u64));
	wq->shadow = kvcalloc(slots, wq->stride, GFP_KERNEL);
	if (!wq->shadow)
		return -ENOMEM;

	if (uctx) {
		err = mroce_queue_init(&wq->uq, uctx, max_wr, uhdr + room);
		if (err) {
			kvfree(wq->shadow);
			wq->shadow = NULL;
			return err;
		}
		WARN_ON_ONCE(wq->uq.mask != wq->mask);
	}
	return 0;
}

/*
 * Let go of the MR pins of the WQEs still in the queue (destroy, reset).
 * SRQ WQEs taken by a QP are let go when the QP gives them back.
 */
static void mroce_wq_unpin_all(struct mroce_wq *wq)
{
	u32 i;

	mroce_mr_unpin(&wq->lkey_cache);
	for (i = wq->tail; i != wq->head; i++) {
		if (wq->is_send)
			mroce_mr_unpin(&((struct mroce_swqe *)
					 mroce_wq_slot(wq, i))->pin);
		else
			mroce_mr_unpin(&((struct mroce_rwqe *)
					 mroce_wq_slot(wq, i))->pin);
	}
}

void mroce_wq_free(struct mroce_wq *wq)
{
	if (wq->shadow)
		mroce_wq_unpin_all(wq);
	if (wq->uq.data)
		mroce_queue_free(&wq->uq);
	kvfree(wq->shadow);
	wq->shadow = NULL;
}

/* Empty, as after modify to RESET. Callers exclude every other user. */
void mroce_wq_reset(struct mroce_wq *wq)
{
	unsigned long flags;

	spin_lock_irqsave(&wq->lock, flags);
	mroce_wq_unpin_all(wq);
	wq->head = 0;
	wq->fetch = 0;
	wq->tail = 0;
	wq->stopped = false;
	wq->parked = false;
	if (wq->uq.data)
		mroce_queue_reset(&wq->uq);
	spin_unlock_irqrestore(&wq->lock, flags);
}

/* ---------------------------------------------------- copies under way */

/*
 * May a WQE be handed out: for a datagram QP, only if @open, the QP state
 * read under wq->lock, still hands out WQEs (see the top of this file).
 * RC QPs pass: their transport lets go of its WQEs itself.
 */
static __always_inline bool mroce_wq_may_copy_locked(struct mroce_qp *qp,
						      struct mroce_wq *wq,
						      bool open)
{
	lockdep_assert_held(&wq->lock);
	return open || !mroce_qp_is_datagram(qp);
}

/* A datagram QP's WQE was handed out: counted until it completes. */
static __always_inline void mroce_wq_copy_begin_locked(struct mroce_qp *qp,
							struct mroce_wq *wq)
{
	lockdep_assert_held(&wq->lock);
	if (mroce_qp_is_datagram(qp))
		wq->copying++;
}

/*
 * The copy of a datagram QP's WQE is over. Returns whether to wake a
 * waiter in mroce_qp_wait_copies(): the count dropped to 0 and the state
 * (@open as above) hands out nothing more. A waiter stored that state and
 * queued itself before it looked at the count under wq->lock; if it
 * looked before us and saw our copy, our hold of the lock comes after its
 * own, so we see its state now and wake_up_var() sees it queued.
 */
static __always_inline bool mroce_wq_copy_end_locked(struct mroce_qp *qp,
						      struct mroce_wq *wq,
						      bool open)
{
	lockdep_assert_held(&wq->lock);
	if (!mroce_qp_is_datagram(qp) || WARN_ON_ONCE(!wq->copying))
		return false;
	return !--wq->copying && !open;
}

/* ------------------------------------------------------ send validation */

static enum ib_wc_opcode mroce_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Whether a filled-in shadow asks for something this QP does: opcode for
 * the QP type, atomic operand rules. Opcodes we do not implement (memory
 * windows, atomic write, flush, masked atomics, LSO) land in the default
 * case and fail the WQE.
 */
static __always_inline enum ib_wc_status
mroce_swqe_check(struct mroce_qp *qp, const struct mroce_swqe *swqe)
{
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		if (swqe->opcode == IB_WR_SEND ||
		    swqe->opcode == IB_WR_SEND_WITH_IMM)
			return IB_WC_SUCCESS;
		return IB_WC_LOC_QP_OP_ERR;
	}

	switch (swqe->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		return IB_WC_SUCCESS;
	case IB_WR_RDMA_READ:
		return swqe->is_inline ? IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		/*
		 * atomic_cap is always IB_ATOMIC_HCA; whether the peer
		 * executes atomics is negotiated per connection and checked
		 * by the transport when it sends (MROCE_CAP_ATOMIC).
		 */
		if (swqe->is_inline || (swqe->wr.atomic.remote_addr & 7))
			return IB_WC_LOC_QP_OP_ERR;
		return swqe->length < sizeof(u64) ? IB_WC_LOC_LEN_ERR :
						     IB_WC_SUCCESS;
	case IB_WR_REG_MR:
		/* Only kernel posts build these; see mroce_swqe_from_wr(). */
		return swqe->wr.reg.mr ? IB_WC_SUCCESS : IB_WC_LOC_QP_OP_ERR;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

/* Sum SGE lengths without overflow; 0 or IB_WC_LOC_LEN_ERR. */
static enum ib_wc_status mroce_sge_sum(const struct ib_sge *sge, u32 n,
				       u32 *length)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < n; i++)
		sum += sge[i].length;
	if (sum > MROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	*length = sum;
	return IB_WC_SUCCESS;
}

/* Kept in the queue, never fetched, completed with @status in order. */
static void mroce_swqe_fail(struct mroce_swqe *swqe, enum ib_wc_status status)
{
	swqe->done = true;
	swqe->status = status;
}

static __always_inline void mroce_swqe_init(struct mroce_swqe *swqe, u32 ssn)
{
	memset(swqe, 0, offsetof(struct mroce_swqe, sge));
	swqe->ssn = ssn;
}

/*
 * Copy one user send WQE into the shadow. Every field of the user entry
 * that we use is read exactly once (READ_ONCE into a local or the shadow;
 * the SGE list and inline data with one copy each) and only the copies
 * are checked and used, so user space changing the ring under us can at
 * worst change what it asked for, never what we validated. Only the fields
 * the opcode needs are read, straight into the shadow; the SGE lengths are
 * summed from the shadow's copy. The copies are mroce_memcpy(): a list of
 * up to four SGEs (16 B each) or up to 64 B of inline data is copied
 * without memcpy()'s "rep movsb" (one TCG block per byte: 18 blocks for
 * ib_write_lat's one SGE, session 48). mroce_copy_small() may read a byte
 * of the ring twice, but writes it once into the shadow per read, and
 * only the shadow is used after the copy: the same as one torn memcpy().
 */
static void mroce_swqe_from_user(struct mroce_qp *qp, struct mroce_swqe *swqe,
				 const struct rxe_send_wqe *u, u32 ssn)
{
	const struct rxe_send_wr *uwr = &u->wr;
	struct mroce_wq *sq = &qp->sq;
	enum ib_wc_status status;
	u32 opcode, num_sge, length;

	mroce_swqe_init(swqe, ssn);
	opcode = READ_ONCE(uwr->opcode);
	swqe->opcode = opcode;
	swqe->wr_id = READ_ONCE(uwr->wr_id);
	swqe->send_flags = READ_ONCE(uwr->send_flags) & MROCE_SEND_FLAGS;

	switch (opcode) {
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND_WITH_IMM:
		swqe->ex.imm_data = READ_ONCE(uwr->ex.imm_data);
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		swqe->ex.invalidate_rkey = READ_ONCE(uwr->ex.invalidate_rkey);
		break;
	default:
		break;
	}

	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		swqe->wr.rdma.remote_addr = READ_ONCE(uwr->wr.rdma.remote_addr);
		swqe->wr.rdma.rkey = READ_ONCE(uwr->wr.rdma.rkey);
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		swqe->wr.atomic.remote_addr =
			READ_ONCE(uwr->wr.atomic.remote_addr);
		swqe->wr.atomic.compare_add =
			READ_ONCE(uwr->wr.atomic.compare_add);
		swqe->wr.atomic.swap = READ_ONCE(uwr->wr.atomic.swap);
		swqe->wr.atomic.rkey = READ_ONCE(uwr->wr.atomic.rkey);
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		if (qp->ibqp.qp_type == IB_QPT_RC)
			break;
		swqe->wr.ud.remote_qpn = READ_ONCE(uwr->wr.ud.remote_qpn) &
					 MROCE_MAX_QPN;
		swqe->wr.ud.remote_qkey = READ_ONCE(uwr->wr.ud.remote_qkey);
		swqe->wr.ud.pkey_index = READ_ONCE(uwr->wr.ud.pkey_index);
		if (mroce_ah_lookup_av(mroce_qp_dev(qp),
				       READ_ONCE(uwr->wr.ud.ah_num),
				       qp->ibqp.pd, &swqe->wr.ud.av)) {
			mroce_swqe_fail(swqe, IB_WC_LOC_QP_OP_ERR);
			return;
		}
		break;
	default:
		/* Rejected by mroce_swqe_check(). */
		break;
	}

	/* Local invalidation moves no data. */
	if (opcode != IB_WR_LOCAL_INV) {
		if (swqe->send_flags & IB_SEND_INLINE) {
			length = READ_ONCE(u->dma.length);
			if (length > sq->max_inline) {
				mroce_swqe_fail(swqe, IB_WC_LOC_LEN_ERR);
				return;
			}
			mroce_memcpy(swqe->inline_data, u->dma.inline_data,
				     length);
			swqe->is_inline = true;
			swqe->length = length;
		} else {
			num_sge = READ_ONCE(u->dma.num_sge);
			if (num_sge > sq->max_sge) {
				mroce_swqe_fail(swqe, IB_WC_LOC_QP_OP_ERR);
				return;
			}
			mroce_memcpy(swqe->sge, u->dma.sge,
				     num_sge * sizeof(struct ib_sge));
			swqe->num_sge = num_sge;
			status = mroce_sge_sum(swqe->sge, num_sge,
					       &swqe->length);
			if (status) {
				mroce_swqe_fail(swqe, status);
				return;
			}
		}
	}

	status = mroce_swqe_check(qp, swqe);
	if (status)
		mroce_swqe_fail(swqe, status);
}

/* A kernel ULP's ib_send_wr into the shadow; -EINVAL if it is invalid. */
static int mroce_swqe_from_wr(struct mroce_qp *qp, struct mroce_swqe *swqe,
			      const struct ib_send_wr *wr, u32 ssn)
{
	struct mroce_wq *sq = &qp->sq;
	const struct ib_reg_wr *reg;
	const struct ib_ud_wr *ud;
	u8 *p;
	int i;

	mroce_swqe_init(swqe, ssn);
	swqe->wr_id = wr->wr_id;
	swqe->opcode = wr->opcode;
	swqe->send_flags = wr->send_flags & MROCE_SEND_FLAGS;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND_WITH_IMM:
		swqe->ex.imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		swqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		swqe->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		swqe->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		swqe->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		swqe->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		swqe->wr.atomic.swap = atomic_wr(wr)->swap;
		swqe->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		if (qp->ibqp.qp_type == IB_QPT_RC)
			break;
		ud = ud_wr(wr);
		if (!ud->ah || ud->ah->pd != qp->ibqp.pd ||
		    ud->remote_qpn > MROCE_MAX_QPN)
			return -EINVAL;
		swqe->wr.ud.remote_qpn = ud->remote_qpn;
		swqe->wr.ud.remote_qkey = ud->remote_qkey;
		swqe->wr.ud.pkey_index = ud->pkey_index;
		swqe->wr.ud.av = to_mah(ud->ah)->av;
		break;
	case IB_WR_REG_MR:
		reg = reg_wr(wr);
		if (!reg->mr || reg->mr->device != qp->ibqp.device ||
		    to_mmr(reg->mr)->type != MROCE_MR_FAST)
			return -EINVAL;
		swqe->wr.reg.mr = to_mmr(reg->mr);
		swqe->wr.reg.iova = reg->mr->iova;
		swqe->wr.reg.length = reg->mr->length;
		swqe->wr.reg.key = reg->key;
		swqe->wr.reg.access = reg->access;
		break;
	default:
		/* Rejected by mroce_swqe_check(). */
		break;
	}

	if (wr->opcode != IB_WR_LOCAL_INV && wr->opcode != IB_WR_REG_MR) {
		if (wr->num_sge < 0 || wr->num_sge > sq->max_sge)
			return -EINVAL;
		if (mroce_sge_sum(wr->sg_list, wr->num_sge, &swqe->length))
			return -EINVAL;
		if (swqe->send_flags & IB_SEND_INLINE) {
			/*
			 * The ULP may reuse the buffers as soon as we return;
			 * with virtual DMA their addresses are kernel VAs.
			 */
			if (swqe->length > sq->max_inline)
				return -EINVAL;
			p = swqe->inline_data;
			for (i = 0; i < wr->num_sge; i++) {
				memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
				p += wr->sg_list[i].length;
			}
			swqe->is_inline = true;
		} else {
			memcpy(swqe->sge, wr->sg_list,
			       wr->num_sge * sizeof(struct ib_sge));
			swqe->num_sge = wr->num_sge;
		}
	}

	return mroce_swqe_check(qp, swqe) ? -EINVAL : 0;
}

/* ----------------------------------------------------------- send queue */

/* What a queue operation owes once it has dropped the queue lock. */
struct mroce_wq_ev {
	struct mroce_cq_ev	cq;
	bool			error;		/* a WQE failed: leave RTS */
	bool			overflow;	/* a CQE was lost: QP to ERR */
	bool			drained;	/* SQ: SQD reached, SQ_DRAINED */
};

/* Most posts owe nothing after the locks: a doorbell, an unsignalled WQE. */
static bool mroce_wq_ev_owed(const struct mroce_wq_ev *ev)
{
	return ev->cq.notify || ev->cq.overflow || ev->error ||
	       ev->overflow || ev->drained;
}

static void mroce_swqe_wc(struct mroce_qp *qp, const struct mroce_swqe *swqe,
			  struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = swqe->wr_id;
	wc->status = swqe->status;
	wc->opcode = mroce_wc_opcode(swqe->opcode);
	wc->byte_len = swqe->length;
	wc->qp = &qp->ibqp;
	wc->port_num = MROCE_PORT;
}

/* The CQE of a done receive WQE, read before its slot is given back. */
static bool mroce_rwqe_wc(struct mroce_qp *qp, const struct mroce_rwqe *rwqe,
			  struct ib_wc *wc)
{
	*wc = rwqe->wc;
	wc->wr_id = rwqe->wr_id;
	wc->qp = &qp->ibqp;
	return rwqe->solicited;
}

/* The CQE of the done WQE in slot @idx, which owes one; returns solicited. */
static bool mroce_wq_slot_wc(struct mroce_qp *qp, struct mroce_wq *wq,
			     u32 idx, struct ib_wc *wc)
{
	if (!wq->is_send)
		return mroce_rwqe_wc(qp, mroce_wq_slot(wq, idx), wc);
	mroce_swqe_wc(qp, mroce_wq_slot(wq, idx), wc);
	return false;
}

/* Post one CQE, cq->lock held; a lost one takes the QP to ERR. */
static void mroce_wq_cqe_locked(struct mroce_cq *cq, const struct ib_wc *wc,
				bool solicited, struct mroce_wq_ev *ev)
{
	lockdep_assert_held(&cq->lock);
	if (mroce_cq_post_locked(cq, wc, solicited, &ev->cq))
		ev->overflow = true;
}

/* The pin of the WQE in slot @idx if it is done, else NULL. */
static struct mroce_mr_pin *mroce_wq_done_pin(struct mroce_wq *wq, u32 idx)
{
	struct mroce_swqe *swqe;
	struct mroce_rwqe *rwqe;

	if (wq->is_send) {
		swqe = mroce_wq_slot(wq, idx);
		return swqe->done ? &swqe->pin : NULL;
	}
	rwqe = mroce_wq_slot(wq, idx);
	return rwqe->done ? &rwqe->pin : NULL;
}

/* Whether the done WQE in slot @idx owes a CQE; @status: its status. */
static bool mroce_wq_slot_owes(const struct mroce_qp *qp, struct mroce_wq *wq,
			       u32 idx, enum ib_wc_status *status)
{
	struct mroce_swqe *swqe;

	if (!wq->is_send) {
		*status = ((struct mroce_rwqe *)mroce_wq_slot(wq, idx))->wc.status;
		return true;
	}
	swqe = mroce_wq_slot(wq, idx);
	*status = swqe->status;
	return swqe->status != IB_WC_SUCCESS || qp->sq_sig_all ||
	       (swqe->send_flags & IB_SEND_SIGNALED);
}

/*
 * Whether a completion may retire now, given the CQ room left (@room, from
 * mroce_cq_room_locked(), counted down here). A successful one always may:
 * if it does not fit, the CQ overflows, as the IB spec says for a consumer
 * that sized its CQ too small for its traffic. An error one -- most often
 * a flush, the last thing a QP produces and what ib_drain_qp() and every
 * teardown wait for -- only if it fits: otherwise its WQE keeps its slot
 * and the queue parks on the CQ (mroce_wq_park_locked()) until the
 * consumer makes room, so no such completion is ever dropped. The queue
 * has stopped anyway (an RC QP is in ERR, a UD SQ in SQE).
 */
static bool mroce_cqe_fits(enum ib_wc_status status, u32 *room)
{
	if (*room) {
		(*room)--;
		return true;
	}
	if (status != IB_WC_SUCCESS)
		return false;
	*room = U32_MAX;	/* the CQ overflows: nothing waits from here */
	return true;
}

/*
 * The one place where a failed WQE (not a flush) takes its QP out of RTS:
 * when it reaches the tail of its queue, whether its CQE is posted at once
 * or it parks on the CQ first -- in which case the retry that posts it
 * later must not do it again (a UD QP may be back in RTS by then).
 */
static void mroce_wq_tail_status(struct mroce_wq *wq, enum ib_wc_status status,
				 struct mroce_wq_ev *ev)
{
	lockdep_assert_held(&wq->lock);
	if (status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR &&
	    !wq->parked)
		ev->error = true;
}

/* The tail WQE's CQE does not fit: wait on @cq for room. */
static void mroce_wq_park_locked(struct mroce_wq *wq, struct mroce_cq *cq)
{
	lockdep_assert_held(&wq->lock);
	wq->parked = true;
	mroce_cq_wait_locked(cq, wq);
}

/*
 * Retire the done WQEs at the tail of a send or receive queue (not an
 * SRQ's), in order: give their slots back and post their CQEs under one
 * hold of the CQ lock, then publish the queue's consumer index and the
 * CQ's producer index, in that order, with one store each.
 *
 * The slots go back first: an application that posts its next WR as soon
 * as it polled a completion (ibv_rc_pingpong, with a one-deep send queue)
 * must find the slot free, or librxe sees a full ring and fails the post
 * with ENOMEM. The release store of the CQ's producer index orders the
 * queue's consumer index before the CQEs for anyone who reads them with
 * acquire, as librxe does; kernel pollers read under the CQ lock. A
 * kernel post reads the free room under wq->lock; a user SQ doorbell reads
 * tail without it, so each step of tail is a release store made after the
 * slot's last use (see mroce_sq_doorbell()).
 */
static void mroce_wq_retire_locked(struct mroce_qp *qp, struct mroce_wq *wq,
				   struct mroce_cq *cq, struct mroce_wq_ev *ev)
{
	enum ib_wc_status status;
	struct mroce_mr_pin *pin;
	u32 from = wq->tail, room = 0;
	bool locked = false, solicited;
	struct ib_wc wc;

	lockdep_assert_held(&wq->lock);
	while (wq->tail != wq->fetch) {
		pin = mroce_wq_done_pin(wq, wq->tail);
		if (!pin)
			break;
		if (mroce_wq_slot_owes(qp, wq, wq->tail, &status)) {
			if (!locked) {
				spin_lock(&cq->lock);
				locked = true;
				room = mroce_cq_room_locked(cq);
			}
			mroce_wq_tail_status(wq, status, ev);
			if (!mroce_cqe_fits(status, &room)) {
				mroce_wq_park_locked(wq, cq);
				break;
			}
			solicited = mroce_wq_slot_wc(qp, wq, wq->tail, &wc);
			mroce_wq_cqe_locked(cq, &wc, solicited, ev);
		}
		wq->parked = false;
		mroce_mr_unpin(pin);
		/*
		 * Release: every read of this slot and the unpin above are
		 * done before a user doorbell, which reads tail without
		 * wq->lock (mroce_sq_doorbell()), may see the slot free and
		 * overwrite it.
		 */
		smp_store_release(&wq->tail, wq->tail + 1);
	}
	if (from != wq->tail && qp->is_user)
		mroce_queue_publish_consumer(&wq->uq, wq->tail);
	if (locked) {
		mroce_cq_publish_locked(cq);
		spin_unlock(&cq->lock);
	}
}

/* Retire the done WQEs at the tail of the SQ, in order (see above). */
static void mroce_sq_retire_locked(struct mroce_qp *qp, struct mroce_wq_ev *ev)
{
	struct mroce_wq *sq = &qp->sq;

	lockdep_assert_held(&sq->lock);
	mroce_wq_retire_locked(qp, sq, qp->scq, ev);

	if (qp->sqd_notify && sq->tail == sq->fetch &&
	    READ_ONCE(qp->state) == IB_QPS_SQD) {
		qp->sqd_notify = false;
		ev->drained = true;
	}
}

/*
 * A WQE that failed validation sits at the fetch index: step over it so it
 * retires (with its error) once everything before it has, and hand out
 * nothing after it.
 */
static void mroce_sq_skip_failed_locked(struct mroce_qp *qp)
{
	struct mroce_wq *sq = &qp->sq;
	struct mroce_swqe *swqe;

	lockdep_assert_held(&sq->lock);
	if (sq->stopped || sq->fetch == sq->head)
		return;
	swqe = mroce_wq_slot(sq, sq->fetch);
	if (swqe->done) {
		sq->fetch++;
		sq->stopped = true;
	}
}

/* Mark [from, head) flushed (keeping earlier errors) and retire. */
static void mroce_sq_flush_locked(struct mroce_qp *qp, u32 from,
				  struct mroce_wq_ev *ev)
{
	struct mroce_wq *sq = &qp->sq;
	struct mroce_swqe *swqe;

	lockdep_assert_held(&sq->lock);
	for (; from != sq->head; from++) {
		swqe = mroce_wq_slot(sq, from);
		if (!swqe->done)
			mroce_swqe_fail(swqe, IB_WC_WR_FLUSH_ERR);
	}
	sq->fetch = sq->head;
	mroce_sq_retire_locked(qp, ev);
}

static void __mroce_sq_after(struct mroce_qp *qp, struct mroce_wq_ev *ev)
{
	mroce_cq_dispatch(qp->scq, &ev->cq);
	if (ev->drained)
		mroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
	if (ev->overflow)
		mroce_qp_error_deferred(qp);
	else if (ev->error)
		mroce_qp_send_error(qp);
}

/*
 * What a pass over the SQ owes after its unlock: mostly nothing (a
 * completion handler's dispatch, an event), so the test is inline -- a
 * call per post, fetch and completion less.
 */
static __always_inline void mroce_sq_after(struct mroce_qp *qp,
					   struct mroce_wq_ev *ev)
{
	if (mroce_wq_ev_owed(ev))
		__mroce_sq_after(qp, ev);
}

/* Flush the WQEs the transport never saw; safe at any time. */
void mroce_sq_flush_pending(struct mroce_qp *qp)
{
	struct mroce_wq_ev ev = {};
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	mroce_sq_flush_locked(qp, qp->sq.fetch, &ev);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	mroce_sq_after(qp, &ev);
}

/* Flush every outstanding send WQE; only once the transport let go. */
void mroce_sq_flush_all(struct mroce_qp *qp)
{
	struct mroce_wq_ev ev = {};
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	mroce_sq_flush_locked(qp, qp->sq.tail, &ev);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	mroce_sq_after(qp, &ev);
}

/*
 * New WQEs were published under the SQ lock; returns the QP state they
 * were published in. In RTS: step over a failed one at the fetch index,
 * and retire what that let through. Only WQEs handed out (tail != fetch)
 * can be done, so with none the retire pass would find nothing;
 * SQ_DRAINED is not due in RTS (entering SQD raises it itself).
 */
static enum ib_qp_state mroce_sq_posted_locked(struct mroce_qp *qp,
					       struct mroce_wq_ev *ev)
{
	struct mroce_wq *sq = &qp->sq;
	enum ib_qp_state state = READ_ONCE(qp->state);

	lockdep_assert_held(&sq->lock);
	if (state != IB_QPS_RTS)
		return state;
	mroce_sq_skip_failed_locked(qp);
	if (sq->tail != sq->fetch)
		mroce_sq_retire_locked(qp, ev);
	return state;
}

/*
 * New WQEs are in the shadow: start, fail or flush them per QP state;
 * @state: what mroce_sq_posted_locked() returned when they were published.
 */
static void mroce_sq_posted(struct mroce_qp *qp, enum ib_qp_state state,
			    struct mroce_wq_ev *ev)
{
	switch (state) {
	case IB_QPS_RTS:
		mroce_sq_after(qp, ev);
		mroce_xport_sq_kick(qp);
		break;
	case IB_QPS_SQE:
	case IB_QPS_ERR:
		mroce_sq_flush_pending(qp);
		break;
	default:
		/* SQD: held until the QP returns to RTS. */
		break;
	}
}

/**
 * mroce_sq_fetch() - hand the next send WQE to the transport
 * @qp: the QP
 *
 * Any context. Only in RTS. The WQE stays valid, unchanged, until the
 * transport passes it to mroce_sq_complete() or the QP is flushed after
 * the transport let go of it (see mroce_xport.h).
 *
 * Return: the WQE, or NULL if there is none to send now.
 */
struct mroce_swqe *mroce_sq_fetch(struct mroce_qp *qp)
{
	struct mroce_wq *sq = &qp->sq;
	struct mroce_swqe *swqe = NULL;
	struct mroce_wq_ev ev = {};
	unsigned long flags;

	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		return NULL;

	spin_lock_irqsave(&sq->lock, flags);
	mroce_sq_skip_failed_locked(qp);
	if (!sq->stopped && sq->fetch != sq->head &&
	    mroce_wq_may_copy_locked(qp, sq,
				     READ_ONCE(qp->state) == IB_QPS_RTS)) {
		mroce_wq_copy_begin_locked(qp, sq);
		swqe = mroce_wq_slot(sq, sq->fetch);
		sq->fetch++;
	} else {
		mroce_sq_retire_locked(qp, &ev);
	}
	spin_unlock_irqrestore(&sq->lock, flags);
	mroce_sq_after(qp, &ev);
	return swqe;
}

/**
 * mroce_sq_complete() - the transport is done with a send WQE
 * @qp: the QP
 * @swqe: from mroce_sq_fetch()
 * @status: IB_WC_SUCCESS or the error to report
 *
 * Any context, no verbs lock held. WQEs may be completed in any order; the
 * CQEs are posted in SQ order (errors always, successes if signalled), and
 * the user ring's consumer index advances with them. A failed WQE takes an
 * RC QP to ERR and a UD QP to SQE. Completing a WQE that was already
 * flushed is ignored.
 */
void mroce_sq_complete(struct mroce_qp *qp, struct mroce_swqe *swqe,
		       enum ib_wc_status status)
{
	struct mroce_wq *sq = &qp->sq;
	struct mroce_wq_ev ev = {};
	unsigned long flags;
	bool wake;

	spin_lock_irqsave(&sq->lock, flags);
	if (swqe->ssn - sq->tail < sq->fetch - sq->tail &&
	    mroce_wq_slot(sq, swqe->ssn) == swqe && !swqe->done) {
		mroce_swqe_fail(swqe, status);
		mroce_sq_retire_locked(qp, &ev);
	}
	wake = mroce_wq_copy_end_locked(qp, sq,
					READ_ONCE(qp->state) == IB_QPS_RTS);
	spin_unlock_irqrestore(&sq->lock, flags);
	mroce_sq_after(qp, &ev);
	if (unlikely(wake))
		wake_up_var(&sq->copying);
}

/*
 * A doorbell in RESET, INIT or RTR: posting there is an error, so the WQEs
 * librxe just added are not posted. Consume them from the ring without a
 * completion, so they cannot resurface once the QP reaches RTS.
 */
static void mroce_sq_refuse_user(struct mroce_qp *qp)
{
	struct mroce_wq *sq = &qp->sq;
	unsigned long flags;
	u32 n;

	mutex_lock(&qp->db_mutex);
	spin_lock_irqsave(&sq->lock, flags);
	n = mroce_queue_user_count(&sq->uq, sq->head);
	if (n <= sq->max_wr - (sq->head - sq->tail)) {
		sq->head += n;
		sq->fetch += n;
		sq->tail += n;
		mroce_queue_publish_consumer(&sq->uq, sq->tail);
	}
	spin_unlock_irqrestore(&sq->lock, flags);
	mutex_unlock(&qp->db_mutex);
}

/*
 * The user SQ doorbell: copy what librxe added to the ring into the shadow.
 * The copy runs under db_mutex, outside the spinlock: the slots past head
 * belong to nobody else, and only a doorbell or a reset moves head.
 *
 * The free room is computed without sq->lock. head is ours: only a
 * doorbell, a refused doorbell or a reset move it, all under db_mutex,
 * which we hold. tail is the consumer's: the retire pass moves it under
 * sq->lock, one release store per slot after the slot's last read and its
 * unpin (mroce_wq_retire_locked()); a reset or a refused doorbell moves it
 * under db_mutex too, so not now. We read it with an acquire load, which
 * pairs with that release: the slots it shows free are free, and our
 * writes into them (the copy below) cannot be ordered before the load. A
 * stale value only shows fewer free slots than there are, and is never
 * older than the tail the doorbell that last moved head saw (db_mutex
 * orders us after it), so head - tail never exceeds max_wr.
 *
 * The user's producer index is read first. librxe fills slots only up to
 * the consumer index we published, and we publish it with a release store
 * after the tail store it stands for; librxe's release of its producer
 * index, read here with acquire, then makes that tail store visible to the
 * tail load that follows (release-acquire chains are transitive). So an
 * honest librxe, even with another thread posting while we run, never
 * shows more new entries than the room we compute: reading tail first
 * would let a retire plus a post by another thread slip in between and
 * make a valid doorbell look hostile.
 */
static int mroce_sq_doorbell(struct mroce_qp *qp)
{
	struct mroce_wq *sq = &qp->sq;
	struct mroce_wq_ev ev = {};
	enum ib_qp_state state;
	unsigned long flags;
	u32 head, room, n, i;

	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		mroce_sq_refuse_user(qp);
		return -EINVAL;
	default:
		break;
	}

	mutex_lock(&qp->db_mutex);
	head = sq->head;
	n = mroce_queue_user_count(&sq->uq, head);
	/* After the producer index; pairs with the retire's release (above). */
	room = sq->max_wr - (head - smp_load_acquire(&sq->tail));
	if (n > room) {
		/* More than the free slots: the producer index is garbage. */
		mutex_unlock(&qp->db_mutex);
		mroce_qp_hostile(qp);
		return -EINVAL;
	}
	for (i = 0; i < n; i++)
		mroce_swqe_from_user(qp, mroce_wq_slot(sq, head + i),
				     mroce_queue_slot(&sq->uq, head + i),
				     head + i);

	if (!n) {
		mutex_unlock(&qp->db_mutex);
		return 0;
	}
	/* Publish head and step over a failed WQE in one hold. */
	spin_lock_irqsave(&sq->lock, flags);
	sq->head = head + n;
	state = mroce_sq_posted_locked(qp, &ev);
	spin_unlock_irqrestore(&sq->lock, flags);
	mutex_unlock(&qp->db_mutex);

	mroce_sq_posted(qp, state, &ev);
	return 0;
}

int mroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_wq *sq = &qp->sq;
	struct mroce_wq_ev ev = {};
	enum ib_qp_state state;
	unsigned long flags;
	int err = 0;

	/* User QPs post through their ring; a NULL list is the doorbell. */
	if (qp->is_user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		return mroce_sq_doorbell(qp);
	}

	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		*bad_wr = wr;
		return -EINVAL;
	default:
		break;
	}

	spin_lock_irqsave(&sq->lock, flags);
	for (; wr; wr = wr->next) {
		if (sq->head - sq->tail >= sq->max_wr) {
			err = -ENOMEM;
			break;
		}
		err = mroce_swqe_from_wr(qp, mroce_wq_slot(sq, sq->head), wr,
					 sq->head);
		if (err)
			break;
		sq->head++;
	}
	state = mroce_sq_posted_locked(qp, &ev);
	spin_unlock_irqrestore(&sq->lock, flags);
	if (err)
		*bad_wr = wr;

	mroce_sq_posted(qp, state, &ev);
	return err;
}

/* -------------------------------------------------------- receive queue */

static void mroce_rwqe_init(struct mroce_rwqe *rwqe, u32 seq)
{
	memset(rwqe, 0, offsetof(struct mroce_rwqe, sge));
	INIT_LIST_HEAD(&rwqe->qp_node);
	rwqe->seq = seq;
}

/* Mark a receive WQE complete with just a status (flush, bad WQE). */
static void mroce_rwqe_fail(struct mroce_rwqe *rwqe, enum ib_wc_status status)
{
	memset(&rwqe->wc, 0, sizeof(rwqe->wc));
	rwqe->wc.status = status;
	rwqe->wc.opcode = IB_WC_RECV;
	rwqe->done = true;
}

/*
 * Copy one user receive WQE; each field read once (the SGE list as in
 * mroce_swqe_from_user()). Marks bad ones done.
 */
static void mroce_rwqe_from_user(struct mroce_wq *wq, struct mroce_rwqe *rwqe,
				 const struct rxe_recv_wqe *u, u32 seq)
{
	u32 num_sge;

	mroce_rwqe_init(rwqe, seq);
	rwqe->wr_id = READ_ONCE(u->wr_id);
	num_sge = READ_ONCE(u->dma.num_sge);
	if (num_sge > wq->max_sge) {
		mroce_rwqe_fail(rwqe, IB_WC_LOC_QP_OP_ERR);
		return;
	}
	mroce_memcpy(rwqe->sge, u->dma.sge, num_sge * sizeof(struct ib_sge));
	rwqe->num_sge = num_sge;
	if (mroce_sge_sum(rwqe->sge, num_sge, &rwqe->length))
		mroce_rwqe_fail(rwqe, IB_WC_LOC_LEN_ERR);
}

static int mroce_rwqe_from_wr(struct mroce_wq *wq, struct mroce_rwqe *rwqe,
			      const struct ib_recv_wr *wr, u32 seq)
{
	if (wr->num_sge < 0 || wr->num_sge > wq->max_sge)
		return -EINVAL;
	mroce_rwqe_init(rwqe, seq);
	if (mroce_sge_sum(wr->sg_list, wr->num_sge, &rwqe->length))
		return -EINVAL;
	rwqe->wr_id = wr->wr_id;
	rwqe->num_sge = wr->num_sge;
	memcpy(rwqe->sge, wr->sg_list, wr->num_sge * sizeof(struct ib_sge));
	return 0;
}

/* Kernel post_recv / post_srq_recv into a receive queue's shadow. */
static int mroce_rwq_post(struct mroce_wq *wq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&wq->lock, flags);
	for (; wr; wr = wr->next) {
		if (wq->head - wq->tail >= wq->max_wr) {
			err = -ENOMEM;
			break;
		}
		err = mroce_rwqe_from_wr(wq, mroce_wq_slot(wq, wq->head), wr,
					 wq->head);
		if (err)
			break;
		wq->head++;
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * Take the next receive WQE of a queue, lock held. User rings are read
 * here, one entry at a time, since librxe posts receives without a system
 * call.
 *
 * Return: 0; -EAGAIN if empty; -EINVAL if the WQE is malformed (taken,
 * already marked done with an error); -EPIPE if the user producer index is
 * impossible.
 */
static int mroce_rwq_take_locked(struct mroce_wq *wq, bool is_user,
				 struct mroce_rwqe **out)
{
	struct mroce_rwqe *rwqe;

	lockdep_assert_held(&wq->lock);
	if (is_user) {
		if (!mroce_queue_user_count(&wq->uq, wq->head))
			return -EAGAIN;
		if (wq->head - wq->tail >= wq->max_wr)
			return -EPIPE;
		mroce_rwqe_from_user(wq, mroce_wq_slot(wq, wq->head),
				     mroce_queue_slot(&wq->uq, wq->head),
				     wq->head);
		wq->head++;
	} else if (wq->fetch == wq->head) {
		return -EAGAIN;
	}
	rwqe = mroce_wq_slot(wq, wq->fetch);
	wq->fetch++;
	*out = rwqe;
	return rwqe->done ? -EINVAL : 0;
}

/* Free SRQ slots at the tail whose QPs are done with them. */
static void mroce_srq_retire_locked(struct mroce_srq *srq)
{
	struct mroce_wq *wq = &srq->rq;
	u32 old_tail = wq->tail;
	struct mroce_rwqe *rwqe;

	lockdep_assert_held(&wq->lock);
	while (wq->tail != wq->fetch) {
		rwqe = mroce_wq_slot(wq, wq->tail);
		if (!rwqe->retired)
			break;
		wq->tail++;
	}
	if (wq->tail != old_tail && srq->is_user)
		mroce_queue_publish_consumer(&wq->uq, wq->tail);
}

/* Give an SRQ WQE back to its SRQ, done or abandoned; SRQ lock held. */
static void mroce_srq_release_locked(struct mroce_srq *srq,
				     struct mroce_rwqe *rwqe)
{
	lockdep_assert_held(&srq->rq.lock);
	mroce_mr_unpin(&rwqe->pin);
	list_del_init(&rwqe->qp_node);
	rwqe->owner = NULL;
	rwqe->retired = true;
}

/*
 * Post CQEs for the done receive WQEs a QP took from its SRQ, in take
 * order, as mroce_wq_retire_locked() does for a queue of its own: each
 * slot goes back to the SRQ, then its CQE is posted, all under one hold of
 * the SRQ lock and, inside it, of the CQ lock; the SRQ's consumer index is
 * published before the CQ's producer index. A failed WQE whose CQE does
 * not fit keeps its slot and parks the QP's receive queue on the CQ.
 */
static void mroce_rq_retire_locked(struct mroce_qp *qp, struct mroce_wq_ev *ev)
{
	struct mroce_srq *srq = qp->srq;
	struct mroce_cq *cq = qp->rcq;
	struct mroce_rwqe *rwqe, *next;
	enum ib_wc_status status;
	struct ib_wc wc;
	bool solicited;
	u32 room;

	lockdep_assert_held(&qp->rq.lock);

	if (!srq) {
		mroce_wq_retire_locked(qp, &qp->rq, cq, ev);
		return;
	}
	rwqe = list_first_entry_or_null(&qp->srq_taken, struct mroce_rwqe,
					qp_node);
	if (!rwqe || !rwqe->done)
		return;

	spin_lock(&srq->rq.lock);
	spin_lock(&cq->lock);
	room = mroce_cq_room_locked(cq);
	list_for_each_entry_safe(rwqe, next, &qp->srq_taken, qp_node) {
		if (!rwqe->done)
			break;
		status = rwqe->wc.status;
		mroce_wq_tail_status(&qp->rq, status, ev);
		if (!mroce_cqe_fits(status, &room)) {
			mroce_wq_park_locked(&qp->rq, cq);
			break;
		}
		qp->rq.parked = false;
		solicited = mroce_rwqe_wc(qp, rwqe, &wc);
		mroce_srq_release_locked(srq, rwqe);
		mroce_wq_cqe_locked(cq, &wc, solicited, ev);
	}
	mroce_srq_retire_locked(srq);
	mroce_cq_publish_locked(cq);
	spin_unlock(&cq->lock);
	spin_unlock(&srq->rq.lock);
}

static void mroce_rq_after(struct mroce_qp *qp, struct mroce_wq_ev *ev)
{
	if (!mroce_wq_ev_owed(ev))
		return;
	mroce_cq_dispatch(qp->rcq, &ev->cq);
	if (ev->overflow || ev->error)
		mroce_qp_error_deferred(qp);
}

/**
 * mroce_wq_retire() - retire what is done at the tail of a QP's queue
 * @qp: the QP
 * @wq: &qp->sq or &qp->rq (the SRQ WQEs the QP took, with an SRQ)
 *
 * Any context, no verbs lock held. For the CQ's room work once a consumer
 * made room for the completions waiting, and for a QP entering SQD with
 * nothing in flight (SQ_DRAINED is raised now).
 */
void mroce_wq_retire(struct mroce_qp *qp, struct mroce_wq *wq)
{
	struct mroce_wq_ev ev = {};
	unsigned long flags;

	spin_lock_irqsave(&wq->lock, flags);
	if (wq->is_send)
		mroce_sq_retire_locked(qp, &ev);
	else
		mroce_rq_retire_locked(qp, &ev);
	spin_unlock_irqrestore(&wq->lock, flags);
	if (wq->is_send)
		mroce_sq_after(qp, &ev);
	else
		mroce_rq_after(qp, &ev);
}

static bool mroce_qp_receives(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD || state == IB_QPS_SQE;
}

static int mroce_srq_take(struct mroce_qp *qp, struct mroce_rwqe **out)
{
	struct mroce_srq *srq = qp->srq;
	struct mroce_rwqe *rwqe = NULL;
	struct mroce_wq_ev ev = {};
	bool limit = false;
	unsigned long flags;
	u32 avail;
	int err;

	spin_lock_irqsave(&qp->rq.lock, flags);
	if (!mroce_wq_may_copy_locked(qp, &qp->rq,
			mroce_qp_receives(READ_ONCE(qp->state)))) {
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		return -ENOTCONN;
	}
	spin_lock(&srq->rq.lock);
	err = mroce_rwq_take_locked(&srq->rq, srq->is_user, &rwqe);
	if (!err)
		mroce_wq_copy_begin_locked(qp, &qp->rq);
	if (!err || err == -EINVAL) {
		rwqe->owner = qp;
		list_add_tail(&rwqe->qp_node, &qp->srq_taken);
	}
	if (!err && srq->limit) {
		avail = srq->is_user ?
			mroce_queue_user_count(&srq->rq.uq, srq->rq.head) :
			srq->rq.head - srq->rq.fetch;
		if (avail < srq->limit) {
			/* One event per arming, as the IB spec says. */
			srq->limit = 0;
			limit = true;
		}
	}
	spin_unlock(&srq->rq.lock);
	if (err == -EINVAL)
		mroce_rq_retire_locked(qp, &ev);
	spin_unlock_irqrestore(&qp->rq.lock, flags);

	mroce_rq_after(qp, &ev);
	if (limit)
		mroce_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	if (err == -EPIPE) {
		mroce_qp_hostile(qp);
		err = -EINVAL;
	}
	if (!err)
		*out = rwqe;
	return err;
}

/**
 * mroce_rq_take() - the receive WQE for the next incoming message
 * @qp: the receiving QP (its own RQ or its SRQ)
 * @out: the WQE, stable until mroce_rq_complete() or a flush the
 *	 transport agreed to
 *
 * Any context, no verbs lock held.
 *
 * Return: 0; -EAGAIN if none is posted (RNR); -EINVAL if the WQE user
 * space posted is malformed or its ring index impossible -- the WQE is
 * completed in error and the QP is on its way to ERR, so NAK the message;
 * -ENOTCONN if the QP is not in a state that receives.
 */
int mroce_rq_take(struct mroce_qp *qp, struct mroce_rwqe **out)
{
	struct mroce_wq *rq = &qp->rq;
	struct mroce_wq_ev ev = {};
	struct mroce_rwqe *rwqe;
	unsigned long flags;
	int err;

	if (!mroce_qp_receives(READ_ONCE(qp->state)))
		return -ENOTCONN;
	if (qp->srq)
		return mroce_srq_take(qp, out);

	spin_lock_irqsave(&rq->lock, flags);
	if (!mroce_wq_may_copy_locked(qp, rq,
			mroce_qp_receives(READ_ONCE(qp->state)))) {
		spin_unlock_irqrestore(&rq->lock, flags);
		return -ENOTCONN;
	}
	err = mroce_rwq_take_locked(rq, qp->is_user, &rwqe);
	if (!err)
		mroce_wq_copy_begin_locked(qp, rq);
	if (err == -EINVAL)
		mroce_rq_retire_locked(qp, &ev);
	spin_unlock_irqrestore(&rq->lock, flags);

	mroce_rq_after(qp, &ev);
	if (err == -EPIPE) {
		mroce_qp_hostile(qp);
		err = -EINVAL;
	}
	if (!err)
		*out = rwqe;
	return err;
}

/**
 * mroce_rq_complete() - a message has been placed into a receive WQE
 * @qp: the QP
 * @rwqe: from mroce_rq_take()
 * @wc: status, opcode (IB_WC_RECV or IB_WC_RECV_RDMA_WITH_IMM), byte_len,
 *	wc_flags, ex, and for UD src_qp, pkey_index, sl, smac, vlan_id and
 *	network_hdr_type; wr_id and qp are filled in here
 * @solicited: the message asked for a solicited event
 *
 * Any context, no verbs lock held. May be called in any order; CQEs are
 * posted in the order the WQEs were taken. Completing a WQE that was
 * already flushed is ignored.
 */
void mroce_rq_complete(struct mroce_qp *qp, struct mroce_rwqe *rwqe,
		       const struct ib_wc *wc, bool solicited)
{
	struct mroce_wq *rq = &qp->rq;
	struct mroce_wq_ev ev = {};
	unsigned long flags;
	bool mine, wake;

	spin_lock_irqsave(&rq->lock, flags);
	if (qp->srq)
		mine = rwqe->owner == qp && !rwqe->done;
	else
		mine = rwqe->seq - rq->tail < rq->fetch - rq->tail &&
		       mroce_wq_slot(rq, rwqe->seq) == rwqe && !rwqe->done;
	if (mine) {
		rwqe->wc = *wc;
		rwqe->solicited = solicited;
		rwqe->done = true;
		mroce_rq_retire_locked(qp, &ev);
	}
	wake = mroce_wq_copy_end_locked(qp, rq,
			mroce_qp_receives(READ_ONCE(qp->state)));
	spin_unlock_irqrestore(&rq->lock, flags);
	mroce_rq_after(qp, &ev);
	if (unlikely(wake))
		wake_up_var(&rq->copying);
}

/* Flush every outstanding receive WQE; only once the transport let go. */
void mroce_rq_flush_all(struct mroce_qp *qp)
{
	struct mroce_wq *rq = &qp->rq;
	struct mroce_wq_ev ev = {};
	struct mroce_rwqe *rwqe;
	unsigned long flags;
	u32 i, n;

	spin_lock_irqsave(&rq->lock, flags);
	if (qp->srq) {
		list_for_each_entry(rwqe, &qp->srq_taken, qp_node)
			if (!rwqe->done)
				mroce_rwqe_fail(rwqe, IB_WC_WR_FLUSH_ERR);
	} else {
		if (qp->is_user) {
			/* Pull in what librxe posted; never past the tail. */
			n = mroce_queue_user_count(&rq->uq, rq->head);
			n = min(n, rq->max_wr - (rq->head - rq->tail));
			for (i = 0; i < n; i++, rq->head++)
				mroce_rwqe_from_user(rq,
					mroce_wq_slot(rq, rq->head),
					mroce_queue_slot(&rq->uq, rq->head),
					rq->head);
		}
		for (i = rq->tail; i != rq->head; i++) {
			rwqe = mroce_wq_slot(rq, i);
			if (!rwqe->done)
				mroce_rwqe_fail(rwqe, IB_WC_WR_FLUSH_ERR);
		}
		rq->fetch = rq->head;
	}
	mroce_rq_retire_locked(qp, &ev);
	spin_unlock_irqrestore(&rq->lock, flags);
	mroce_rq_after(qp, &ev);
}

/* On destroy/reset: give taken SRQ WQEs back without completions. */
void mroce_qp_release_srq(struct mroce_qp *qp)
{
	struct mroce_rwqe *rwqe, *next;
	struct mroce_srq *srq = qp->srq;
	unsigned long flags;

	if (!srq)
		return;
	spin_lock_irqsave(&qp->rq.lock, flags);
	spin_lock(&srq->rq.lock);
	list_for_each_entry_safe(rwqe, next, &qp->srq_taken, qp_node)
		mroce_srq_release_locked(srq, rwqe);
	mroce_srq_retire_locked(srq);
	spin_unlock(&srq->rq.lock);
	qp->rq.parked = false;
	spin_unlock_irqrestore(&qp->rq.lock, flags);
}

static void mroce_rq_posted(struct mroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (state == IB_QPS_ERR) {
		if (READ_ONCE(qp->err_notified))
			mroce_rq_flush_all(qp);
	} else if (mroce_qp_receives(state)) {
		mroce_xport_rq_kick(qp);
	}
}

int mroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	int err;

	/* User QPs post to their ring; QPs with an SRQ have no RQ. */
	if (qp->is_user || qp->srq || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = mroce_rwq_post(&qp->rq, wr, bad_wr);
	mroce_rq_posted(qp);
	return err;
}

int mroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct mroce_srq *srq = to_msrq(ibsrq);
	int err;

	if (srq->is_user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = mroce_rwq_post(&srq->rq, wr, bad_wr);
	mroce_xport_srq_kick(srq);
	return err;
}

/* ------------------------------------------------------ data movement */

/**
 * mroce_sgl_seek() - find the SGE that holds byte @msg_off of a message
 * @sge: the list
 * @num_sge: its length
 * @msg_off: offset into the message
 * @idx: the SGE index (num_sge if @msg_off is exactly the end)
 * @off: the offset inside that SGE
 *
 * The one place that maps message offsets to SGEs; a shared walker in
 * core/ can replace it.
 *
 * Return: false if @msg_off lies beyond the list.
 */
static bool mroce_sgl_seek(const struct ib_sge *sge, u32 num_sge, u32 msg_off,
			   u32 *idx, u32 *off)
{
	u32 i;

	for (i = 0; i < num_sge; i++) {
		if (msg_off < sge[i].length) {
			*idx = i;
			*off = msg_off;
			return true;
		}
		msg_off -= sge[i].length;
	}
	*idx = num_sge;
	*off = 0;
	return msg_off == 0;
}

/* A WQE's scatter list and its one-entry pin cache. */
struct mroce_sgl {
	const struct ib_sge	*sge;
	u32			num_sge;
	u32			length;		/* sum of the SGE lengths */
	struct mroce_mr_pin	*pin;
	u32			*pin_sge;
	struct mroce_mr_pin	*cache;		/* the queue's, or NULL */
};

/*
 * A new pin for SGE @i of a WQE: a copy of the queue's cache if that
 * covers the whole SGE and its MR did not change since, else a lookup,
 * which then refills the cache. The whole SGE, not only this piece: a
 * WQE's pin must cover every later packet of the SGE that a lookup's pin
 * would, or a later packet would look the key up again in the middle of
 * the message (a WQE's pin never re-pins, mroce_sge_pin_for()). A user's
 * send WQEs mostly name the buffers the last one did (ib_write_lat: every
 * one), and the copy skips the key lookup and the reference round of the
 * lookup (two locked atomics); the hold a pin takes stays. Kernel QPs do
 * not use the cache: their SGEs name a new buffer with the local DMA lkey
 * each time, and a pin covers only its SGE.
 */
static int mroce_sge_pin(struct mroce_qp *qp, const struct mroce_sgl *l,
			 u32 i, u64 addr, u32 piece, int access,
			 enum mroce_mr_err *why)
{
	const struct ib_sge *sge = &l->sge[i];
	int err;

	if (l->cache && mroce_mr_pin_covers(l->cache, sge->lkey, access,
					    sge->addr, sge->length)) {
		/* A new WQE's pin is empty: no call to let it go. */
		if (l->pin->mr)
			mroce_mr_unpin(l->pin);
		if (likely(mroce_mr_pin_clone(l->pin, l->cache)))
			return 0;
	}
	err = mroce_mr_pin_sge(mroce_qp_dev(qp), qp->ibqp.pd, access, sge,
			       addr, piece, l->pin, why);
	if (err || !l->cache)
		return err;
	mroce_mr_unpin(l->cache);
	mroce_mr_pin_clone(l->cache, l->pin);
	return 0;
}

/*
 * Make the WQE's pin cover @piece bytes at @addr of SGE @i (as much of the
 * SGE as its MR holds, see mroce_mr_pin_sge()). Segmentation and placement
 * mostly move through a message in order, so one pin per WQE, on the SGE
 * last used, saves the key lookup and rights check for every packet but
 * the first of each SGE.
 */
static __always_inline int mroce_sge_pin_for(struct mroce_qp *qp,
					     const struct mroce_sgl *l, u32 i,
					     u64 addr, u32 piece, int access,
					     enum mroce_mr_err *why)
{
	int err;

	if (likely(*l->pin_sge == i &&
		   mroce_mr_pin_covers(l->pin, l->sge[i].lkey, access, addr,
				       piece)))
		return 0;
	err = mroce_sge_pin(qp, l, i, addr, piece, access, why);
	if (!err)
		*l->pin_sge = i;
	return err;
}

/*
 * What a message walk does with each piece, through the WQE's pin on the
 * piece's SGE: mroce_sgl_visit_walk() or mroce_sgl_visit_copy_out().
 */
typedef int (*mroce_sgl_visit_fn)(struct mroce_mr_pin *pin, u64 addr,
				  u32 len, void *priv, enum mroce_mr_err *why);

/*
 * Visit bytes [msg_off, msg_off + len) of a message described by an SGE
 * list, through each SGE's lkey, checked for @access in the QP's PD. Only
 * mroce_sgl_walk() and mroce_sgl_copy_out() expand it, each with its own
 * constant @visit, so a piece costs a direct call (or none) and neither
 * caller can reach the other's action by passing the wrong argument.
 *
 * Return: 0; -EFAULT if the range does not fit the list or an MR's pages
 * (*why = MROCE_MR_BOUNDS); -EACCES if a key does not check out, or its MR
 * changed since the WQE pinned it (*why says why); or what @visit's chunk
 * function returned.
 */
static __always_inline int __mroce_sgl_walk(struct mroce_qp *qp,
					    const struct mroce_sgl *l,
					    u32 msg_off, u32 len, int access,
					    mroce_sgl_visit_fn visit,
					    void *priv,
					    enum mroce_mr_err *why)
{
	const struct ib_sge *sge = l->sge;
	u32 num_sge = l->num_sge;
	u32 i, off, piece;
	u64 addr;
	int err;

	mroce_mr_why(why, MROCE_MR_OK);
	if (msg_off > l->length || len > l->length - msg_off ||
	    !mroce_sgl_seek(sge, num_sge, msg_off, &i, &off))
		goto bounds;

	while (len) {
		if (i == num_sge)
			goto bounds;
		piece = min(len, sge[i].length - off);
		if (!piece) {
			i++;
			off = 0;
			continue;
		}
		if (check_add_overflow(sge[i].addr, (u64)off, &addr))
			goto bounds;
		err = mroce_sge_pin_for(qp, l, i, addr, piece, access, why);
		if (!err)
			err = visit(l->pin, addr, piece, priv, why);
		if (err) {
			if (err == -EFAULT)
				mroce_mr_why(why, MROCE_MR_BOUNDS);
			/*
			 * A WQE's pin never re-pins: its message fails with
			 * the rights the MR had when the pin was taken.
			 */
			return err == -ESTALE ? -EACCES : err;
		}
		len -= piece;
		i++;
		off = 0;
	}
	return 0;

bounds:
	mroce_mr_why(why, MROCE_MR_BOUNDS);
	return -EFAULT;
}

/* A chunk function and its argument, for mroce_sgl_visit_walk(). */
struct mroce_sgl_chunk {
	mroce_chunk_fn	fn;
	void		*priv;
};

static int mroce_sgl_visit_walk(struct mroce_mr_pin *pin, u64 addr, u32 len,
				void *priv, enum mroce_mr_err *why)
{
	const struct mroce_sgl_chunk *ck = priv;

	return mroce_mr_pin_walk(pin, addr, len, ck->fn, ck->priv, why);
}

/*
 * The send packets' copy: mroce_mr_pin_copy_from() has the copy inlined,
 * one direct call per piece instead of an indirect call per page piece
 * to a chunk function (a retpoline thunk in distribution kernels).
 */
static int mroce_sgl_visit_copy_out(struct mroce_mr_pin *pin, u64 addr,
				    u32 len, void *priv,
				    enum mroce_mr_err *why)
{
	struct mroce_copy *c = priv;
	int err;

	err = mroce_mr_pin_copy_from(pin, addr, c->dst, len, why);
	if (!err)
		c->dst += len;
	return err;
}

/* Call @fn for the pages behind part of a message (__mroce_sgl_walk()). */
static int mroce_sgl_walk(struct mroce_qp *qp, const struct mroce_sgl *l,
			  u32 msg_off, u32 len, int access, mroce_chunk_fn fn,
			  void *priv, enum mroce_mr_err *why)
{
	struct mroce_sgl_chunk ck = { .fn = fn, .priv = priv };

	return __mroce_sgl_walk(qp, l, msg_off, len, access,
				mroce_sgl_visit_walk, &ck, why);
}

/* Copy part of a message out to @dst (__mroce_sgl_walk()); no rights. */
static int mroce_sgl_copy_out(struct mroce_qp *qp, const struct mroce_sgl *l,
			      u32 msg_off, void *dst, u32 len,
			      enum mroce_mr_err *why)
{
	struct mroce_copy c = { .dst = dst };

	return __mroce_sgl_walk(qp, l, msg_off, len, 0,
				mroce_sgl_visit_copy_out, &c, why);
}

/* A range outside the message: report it as a bounds error. */
static int mroce_msg_bounds(enum mroce_mr_err *why)
{
	mroce_mr_why(why, MROCE_MR_BOUNDS);
	return -EFAULT;
}

/*
 * The SQ's lkey cache, for the send WQEs of a user's RC QP: the transport
 * walks those only under the connection lock of the QP's peer, which
 * serialises the cache as it does the WQE pins. UD and GSI sends may run
 * on several CPUs at once (mroce_ud.c): no cache.
 */
static struct mroce_mr_pin *mroce_sq_lkey_cache(struct mroce_qp *qp)
{
	return qp->is_user && qp->ibqp.qp_type == IB_QPT_RC ?
	       &qp->sq.lkey_cache : NULL;
}

/*
 * The scatter list of a send WQE. Its pin cache is verbs-private state
 * that changes under the transport's const view of the WQE, like a cache
 * should: whoever walks a WQE's data owns it at that moment (the
 * transport, under its connection lock), and it is let go only when the
 * WQE retires.
 */
static __always_inline struct mroce_sgl
mroce_swqe_sgl(struct mroce_qp *qp, const struct mroce_swqe *swqe)
{
	struct mroce_swqe *w = (struct mroce_swqe *)swqe;

	return (struct mroce_sgl){
		.sge = w->sge, .num_sge = w->num_sge, .length = w->length,
		.pin = &w->pin, .pin_sge = &w->pin_sge,
		.cache = mroce_sq_lkey_cache(qp),
	};
}

static int mroce_swqe_msg_walk(struct mroce_qp *qp,
			       const struct mroce_swqe *swqe, u32 msg_off,
			       u32 len, int access, mroce_chunk_fn fn,
			       void *priv, enum mroce_mr_err *why)
{
	struct mroce_sgl l = mroce_swqe_sgl(qp, swqe);

	return mroce_sgl_walk(qp, &l, msg_off, len, access, fn, priv, why);
}

static int mroce_rwqe_msg_walk(struct mroce_qp *qp,
			       const struct mroce_rwqe *rwqe, u32 msg_off,
			       u32 len, mroce_chunk_fn fn, void *priv,
			       enum mroce_mr_err *why)
{
	struct mroce_rwqe *w = (struct mroce_rwqe *)rwqe;
	struct mroce_sgl l = {
		.sge = w->sge, .num_sge = w->num_sge, .length = w->length,
		.pin = &w->pin, .pin_sge = &w->pin_sge,
	};

	return mroce_sgl_walk(qp, &l, msg_off, len, IB_ACCESS_LOCAL_WRITE, fn,
			      priv, why);
}

/**
 * mroce_swqe_copy_out() - copy part of a send WQE's message
 * @qp: the QP
 * @swqe: the WQE (inline data or SGEs read through their lkeys)
 * @msg_off: offset into the message
 * @dst: kernel buffer
 * @len: bytes
 * @why: on -EACCES/-EFAULT, the reason; may be NULL
 *
 * For building packets from a send WQE. Any context.
 *
 * Return: 0, -EFAULT or -EACCES (complete the WQE with IB_WC_LOC_PROT_ERR).
 */
int mroce_swqe_copy_out(struct mroce_qp *qp, const struct mroce_swqe *swqe,
			u32 msg_off, void *dst, u32 len,
			enum mroce_mr_err *why)
{
	struct mroce_sgl l;

	if (swqe->is_inline) {
		if (msg_off > swqe->length || len > swqe->length - msg_off)
			return mroce_msg_bounds(why);
		mroce_memcpy(dst, swqe->inline_data + msg_off, len);
		return 0;
	}
	l = mroce_swqe_sgl(qp, swqe);
	return mroce_sgl_copy_out(qp, &l, msg_off, dst, len, why);
}

/**
 * mroce_swqe_walk() - visit the pages behind part of a send WQE's message
 * @qp: the QP
 * @swqe: the WQE; not inline (copy inline data with mroce_swqe_copy_out())
 * @msg_off: offset into the message
 * @len: bytes
 * @fn: called per page piece, e.g. to attach it to an skb as a frag with
 *	a page reference (zero-copy transmit)
 * @priv: for @fn
 * @why: on -EACCES/-EFAULT, the reason; may be NULL
 *
 * Return: 0, -EOPNOTSUPP for inline WQEs, -EFAULT, -EACCES, or @fn's error.
 */
int mroce_swqe_walk(struct mroce_qp *qp, const struct mroce_swqe *swqe,
		    u32 msg_off, u32 len, mroce_chunk_fn fn, void *priv,
		    enum mroce_mr_err *why)
{
	if (swqe->is_inline)
		return -EOPNOTSUPP;
	return mroce_swqe_msg_walk(qp, swqe, msg_off, len, 0, fn, priv, why);
}

/**
 * mroce_swqe_copy_in() - write into a send WQE's local buffers
 * @qp: the QP
 * @swqe: an RDMA READ or atomic WQE (its SGEs receive the data)
 * @msg_off: offset into the message
 * @src: kernel buffer
 * @len: bytes
 * @why: on error, the reason; may be NULL
 *
 * For READ responses and atomic results. Needs IB_ACCESS_LOCAL_WRITE.
 *
 * Return: 0, -EFAULT or -EACCES.
 */
int mroce_swqe_copy_in(struct mroce_qp *qp, const struct mroce_swqe *swqe,
		       u32 msg_off, const void *src, u32 len,
		       enum mroce_mr_err *why)
{
	struct mroce_copy c = { .src = src };

	if (swqe->is_inline)
		return mroce_msg_bounds(why);
	return mroce_swqe_msg_walk(qp, swqe, msg_off, len,
				   IB_ACCESS_LOCAL_WRITE, mroce_chunk_to_mr,
				   &c, why);
}

/* As mroce_swqe_copy_in(), from @len bytes of @skb at @skb_off. */
int mroce_swqe_copy_in_skb(struct mroce_qp *qp, const struct mroce_swqe *swqe,
			   u32 msg_off, const struct sk_buff *skb, int skb_off,
			   u32 len, enum mroce_mr_err *why)
{
	struct mroce_copy c = { .skb = skb, .skb_off = skb_off };

	if (swqe->is_inline)
		return mroce_msg_bounds(why);
	return mroce_swqe_msg_walk(qp, swqe, msg_off, len,
				   IB_ACCESS_LOCAL_WRITE, mroce_chunk_skb_to_mr,
				   &c, why);
}

/**
 * mroce_rwqe_copy_in() - place bytes into a receive WQE
 * @qp: the QP
 * @rwqe: from mroce_rq_take()
 * @msg_off: offset into the message (for UD: the 40-byte GRH area first)
 * @src: kernel buffer
 * @len: bytes
 * @why: on error, the reason; may be NULL
 *
 * Return: 0; -EFAULT if the message does not fit the WQE (complete it with
 * IB_WC_LOC_LEN_ERR); -EACCES if an lkey does not allow it
 * (IB_WC_LOC_PROT_ERR).
 */
int mroce_rwqe_copy_in(struct mroce_qp *qp, const struct mroce_rwqe *rwqe,
		       u32 msg_off, const void *src, u32 len,
		       enum mroce_mr_err *why)
{
	struct mroce_copy c = { .src = src };

	return mroce_rwqe_msg_walk(qp, rwqe, msg_off, len, mroce_chunk_to_mr,
				   &c, why);
}

/* As mroce_rwqe_copy_in(), from @len bytes of @skb at @skb_off. */
int mroce_rwqe_copy_in_skb(struct mroce_qp *qp, const struct mroce_rwqe *rwqe,
			   u32 msg_off, const struct sk_buff *skb, int skb_off,
			   u32 len, enum mroce_mr_err *why)
{
	struct mroce_copy c = { .skb = skb, .skb_off = skb_off };

	return mroce_rwqe_msg_walk(qp, rwqe, msg_off, len,
				   mroce_chunk_skb_to_mr, &c, why);
}
