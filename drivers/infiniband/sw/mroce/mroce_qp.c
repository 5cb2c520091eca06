// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: create, query, destroy, lookup, and the QP state machine.
 *
 * States are the IB ones (enum ib_qp_state); the transition table and the
 * attributes each transition requires or allows are the RDMA core's
 * (ib_modify_qp_is_ok()), values are checked here. Who moves a QP:
 *
 *   modify_qp       any legal transition; the transport sees it first
 *                   (mroce_xport_qp_modify()) and can veto it.
 *   a failed WQE    RC: -> ERR, UD/GSI: -> SQE (mroce_qp_send_error())
 *   CQ overflow,    -> ERR (mroce_qp_error_deferred()), plus
 *   hostile ring       IB_EVENT_QP_FATAL for a hostile ring
 *   the transport   -> ERR (mroce_qp_set_error(), optionally QP_FATAL)
 *
 * Entering ERR from the data path cannot call into the transport (it may
 * be the caller, holding its own locks), so the QP is marked ERR at once,
 * what the transport never saw is flushed at once, and a work item tells
 * the transport (mroce_xport_qp_error()) and then flushes the rest.
 *
 * Side effects of entering a state: RESET empties the queues without
 * completions; ERR flushes both queues; SQE flushes the send queue; SQD
 * stops fetching and raises IB_EVENT_SQ_DRAINED (if asked) once nothing is
 * in flight; RTS restarts the send queue.
 */
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/xarray.h>

#include "mroce.h"
#include "mroce_verbs.h"

/* Lookups ------------------------------------------------------------- */

/**
 * mroce_qp_get() - find a QP by number
 * @mdev: the device
 * @qpn: QP number (untrusted; 1 is the GSI QP)
 *
 * Any context. Takes the xarray lock rather than RCU: the core frees the
 * QP as soon as destroy_qp returns, and destroy_qp removes the QP from the
 * xarray first, so a QP found under the lock is alive. The transport
 * should keep references it needs often rather than look up per packet.
 *
 * Return: the QP with a reference (mroce_qp_put()), or NULL.
 */
struct mroce_qp *mroce_qp_get(struct mroce_dev *mdev, u32 qpn)
{
	struct mroce_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&mdev->qp_xa, flags);
	qp = xa_load(&mdev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&mdev->qp_xa, flags);
	return qp;
}

void mroce_qp_put(struct mroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/* Events ---------------------------------------------------------------- */

/* Report an affiliated asynchronous event; any context, no verbs locks. */
void mroce_qp_event(struct mroce_qp *qp, enum ib_event_type type)
{
	struct ib_event event;

	if (!qp->ibqp.event_handler)
		return;
	event.device = qp->ibqp.device;
	event.element.qp = &qp->ibqp;
	event.event = type;
	qp->ibqp.event_handler(&event, qp->ibqp.qp_context);
}

/* Error paths ---------------------------------------------------------- */

static bool mroce_wq_copies_over(struct mroce_wq *wq)
{
	unsigned long flags;
	bool over;

	spin_lock_irqsave(&wq->lock, flags);
	over = !wq->copying;
	spin_unlock_irqrestore(&wq->lock, flags);
	return over;
}

/*
 * Wait for a datagram QP's copies under way ("Copies under way" in
 * mroce_wqe.c) once its state was set to ERR or RESET. Process context,
 * modify_mutex held: the state cannot leave ERR or RESET meanwhile. Once
 * it returns no WQE of the QP is handed to the datagram code, and none
 * will be until the QP is back in a state that receives or sends: its
 * WQEs may be flushed or reset. RC QPs have nothing to wait for: their
 * transport let go of their WQEs in mroce_xport_qp_modify() or
 * mroce_xport_qp_error().
 */
static void mroce_qp_wait_copies(struct mroce_qp *qp)
{
	if (!mroce_qp_is_datagram(qp))
		return;
	wait_var_event(&qp->sq.copying, mroce_wq_copies_over(&qp->sq));
	wait_var_event(&qp->rq.copying, mroce_wq_copies_over(&qp->rq));
}

static void mroce_qp_err_work(struct work_struct *work)
{
	struct mroce_qp *qp = container_of(work, struct mroce_qp, err_work);
	unsigned long flags;
	bool notify;

	mutex_lock(&qp->modify_mutex);
	spin_lock_irqsave(&qp->state_lock, flags);
	notify = qp->state == IB_QPS_ERR && !qp->err_notified;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (notify) {
		mroce_xport_qp_error(qp);
		/* UD/GSI: the datagram code's copies are its let-go. */
		mroce_qp_wait_copies(qp);
		spin_lock_irqsave(&qp->state_lock, flags);
		qp->err_notified = true;
		spin_unlock_irqrestore(&qp->state_lock, flags);
		mroce_sq_flush_all(qp);
		mroce_rq_flush_all(qp);
	}
	mutex_unlock(&qp->modify_mutex);
}

/**
 * mroce_qp_error_deferred() - move a QP to ERR from the data path
 * @qp: the QP
 *
 * Any context, no verbs lock held. The transport is told, and what it holds
 * flushed, from a work item.
 */
void mroce_qp_error_deferred(struct mroce_qp *qp)
{
	unsigned long flags;
	bool queue;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state == IB_QPS_RESET || qp->state == IB_QPS_ERR) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return;
	}
	qp->state = IB_QPS_ERR;
	qp->err_notified = false;
	queue = !qp->destroying;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	mroce_sq_flush_pending(qp);
	if (queue)
		queue_work(system_wq, &qp->err_work);
}

/* A send WQE completed in error: RC QPs fail, UD QPs stop their SQ. */
void mroce_qp_send_error(struct mroce_qp *qp)
{
	unsigned long flags;
	bool enter;

	if (qp->ibqp.qp_type == IB_QPT_RC) {
		mroce_qp_error_deferred(qp);
		return;
	}
	spin_lock_irqsave(&qp->state_lock, flags);
	enter = qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD;
	if (enter)
		qp->state = IB_QPS_SQE;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (enter)
		mroce_sq_flush_pending(qp);
}

/* User space broke the ring protocol; tell it, and stop the QP. */
void mroce_qp_hostile(struct mroce_qp *qp)
{
	mroce_qp_error_deferred(qp);
	mroce_qp_event(qp, IB_EVENT_QP_FATAL);
}

/**
 * mroce_qp_set_error() - the transport moves a QP to ERR
 * @qp: the QP
 * @fatal: also report IB_EVENT_QP_FATAL (an error no completion reports)
 *
 * Any context, no verbs lock held; the transport has already let go of
 * every WQE of the QP, so all of them are flushed now.
 */
void mroce_qp_set_error(struct mroce_qp *qp, bool fatal)
{
	enum ib_qp_state old;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	old = qp->state;
	if (old != IB_QPS_RESET) {
		qp->state = IB_QPS_ERR;
		qp->err_notified = true;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (old == IB_QPS_RESET)
		return;

	mroce_sq_flush_all(qp);
	mroce_rq_flush_all(qp);
	if (fatal && old != IB_QPS_ERR)
		mroce_qp_event(qp, IB_EVENT_QP_FATAL);
}

/**
 * mroce_qp_flush() - flush a QP in ERR once the transport let go of it
 * @qp: the QP
 *
 * Any context, no verbs lock held. Every outstanding WQE completes with
 * IB_WC_WR_FLUSH_ERR, in order. Does nothing unless the QP is in ERR.
 */
void mroce_qp_flush(struct mroce_qp *qp)
{
	unsigned long flags;
	bool flush;

	spin_lock_irqsave(&qp->state_lock, flags);
	flush = qp->state == IB_QPS_ERR;
	if (flush)
		qp->err_notified = true;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (flush) {
		mroce_sq_flush_all(qp);
		mroce_rq_flush_all(qp);
	}
}

/* Create / destroy ----------------------------------------------------- */

static int mroce_qp_check_init(const struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	const struct ib_qp_cap *cap = &init->cap;

	if (init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != MROCE_PORT)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (cap->max_send_wr > MROCE_MAX_QP_WR ||
	    cap->max_send_sge > MROCE_MAX_SGE ||
	    cap->max_inline_data > MROCE_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > MROCE_MAX_QP_WR ||
			   cap->max_recv_sge > MROCE_MAX_SGE))
		return -EINVAL;
	/* librxe sends no driver data and expects the two ring infos. */
	if (udata && (udata->inlen ||
		      udata->outlen < sizeof(struct rxe_create_qp_resp)))
		return -EINVAL;
	return 0;
}

int mroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibqp->device);
	struct ib_ucontext *uctx = mroce_uctx(udata);
	struct mroce_qp *qp = to_mqp(ibqp);
	struct rxe_create_qp_resp resp = {};
	struct ib_qp_cap *cap = &init->cap;
	u32 qpn;
	int err;

	BUILD_BUG_ON(sizeof(resp) != 32);

	err = mroce_qp_check_init(init, udata);
	if (err)
		return err;
	if (atomic_inc_return(&mdev->num_qp) > MROCE_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	qp->is_user = !!udata;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	mutex_init(&qp->modify_mutex);
	mutex_init(&qp->db_mutex);
	spin_lock_init(&qp->state_lock);
	INIT_WORK(&qp->err_work, mroce_qp_err_work);
	INIT_LIST_HEAD(&qp->srq_taken);
	/* Guards srq_taken too when there is no RQ of our own. */
	spin_lock_init(&qp->rq.lock);
	INIT_LIST_HEAD(&qp->rq.cq_wait);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->scq = to_mcq(init->send_cq);
	qp->rcq = to_mcq(init->recv_cq);
	qp->srq = init->srq ? to_msrq(init->srq) : NULL;
	qp->attr.port_num = MROCE_PORT;
	qp->attr.path_mtu = IB_MTU_1024;

	err = mroce_wq_init(&qp->sq, uctx, max(cap->max_send_wr, 1U),
			    cap->max_send_sge, cap->max_inline_data, true);
	if (err)
		goto err_count;
	if (!qp->srq) {
		err = mroce_wq_init(&qp->rq, uctx, max(cap->max_recv_wr, 1U),
				    cap->max_recv_sge, 0, false);
		if (err)
			goto err_sq;
	}

	/* What we granted; uverbs returns it and librxe relies on it. */
	cap->max_send_wr = qp->sq.max_wr;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	cap->max_recv_wr = qp->srq ? 0 : qp->rq.max_wr;
	cap->max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;

	/* Reserve the number; the QP becomes visible once complete. */
	if (init->qp_type == IB_QPT_GSI) {
		qpn = MROCE_GSI_QPN;
		err = xa_insert_irq(&mdev->qp_xa, qpn, NULL, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic_irq(&mdev->qp_xa, &qpn, NULL,
					  XA_LIMIT(MROCE_MIN_QPN, MROCE_MAX_QPN),
					  &mdev->qp_next, GFP_KERNEL);
		err = err < 0 ? err : 0;
	}
	if (err)
		goto err_rq;
	ibqp->qp_num = qpn;

	if (udata) {
		if (!qp->srq)
			mroce_queue_mminfo(&qp->rq.uq, &resp.rq_mi);
		mroce_queue_mminfo(&qp->sq.uq, &resp.sq_mi);
		if (ib_copy_to_udata(udata, &resp, sizeof(resp))) {
			err = -EFAULT;
			goto err_qpn;
		}
	}

	err = mroce_xport_qp_create(qp);
	if (err)
		goto err_qpn;
	xa_store_irq(&mdev->qp_xa, qpn, qp, GFP_KERNEL);
	return 0;

err_qpn:
	xa_erase_irq(&mdev->qp_xa, qpn);
err_rq:
	if (!qp->srq)
		mroce_wq_free(&qp->rq);
err_sq:
	mroce_wq_free(&qp->sq);
err_count:
	atomic_dec(&mdev->num_qp);
	return err;
}

/*
 * Completions that waited for CQ room are dropped with their WQEs (reset,
 * destroy). A CQ's room work that holds a reference may park a queue
 * again before the reset empties it; it then finds nothing to retire.
 */
static void mroce_qp_unwait(struct mroce_qp *qp)
{
	mroce_cq_unwait(qp->scq, &qp->sq);
	mroce_cq_unwait(qp->rcq, &qp->rq);
}

/* The transport has let go of the QP: nobody uses its rkey caches. */
static void mroce_qp_unpin_rkeys(struct mroce_qp *qp)
{
	mroce_mr_unpin(&qp->wr_pin);
	mroce_mr_unpin(&qp->rd_pin);
}

int mroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibqp->device);
	struct mroce_qp *qp = to_mqp(ibqp);
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	qp->destroying = true;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	xa_erase_irq(&mdev->qp_xa, mroce_qpn(qp));
	cancel_work_sync(&qp->err_work);
	mroce_xport_qp_destroy(qp);
	mroce_qp_put(qp);
	wait_for_completion(&qp->released);

	/* No completions on destroy; SRQ WQEs in progress are given back. */
	mroce_qp_unwait(qp);
	mroce_qp_release_srq(qp);
	mroce_qp_unpin_rkeys(qp);
	if (!qp->srq)
		mroce_wq_free(&qp->rq);
	mroce_wq_free(&qp->sq);
	mutex_destroy(&qp->db_mutex);
	mutex_destroy(&qp->modify_mutex);
	atomic_dec(&mdev->num_qp);
	return 0;
}

/* Modify --------------------------------------------------------------- */

static int mroce_qp_check_attr(const struct ib_qp_attr *attr, int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != MROCE_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > MROCE_MAX_IB_MTU))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > MROCE_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > MROCE_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > MROCE_MAX_QPN)
		return -EINVAL;
	/* No alternate paths (APM), rate limits or resizing. */
	if (mask & (IB_QP_ALT_PATH | IB_QP_RATE_LIMIT | IB_QP_CAP))
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EOPNOTSUPP;
	return 0;
}

static void mroce_qp_store_attr(struct mroce_qp *qp,
				const struct ib_qp_attr *attr, int mask,
				const struct mroce_av *av)
{
	struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->state_lock);
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV)
		qp->av = *av;
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & MROCE_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & MROCE_PSN_MASK;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
}

/* Back to an empty RESET QP; the transport already dropped it. */
static void mroce_qp_reset(struct mroce_qp *qp)
{
	/* mroce_qp_wait_copies() ran: no datagram copy holds a slot. */
	WARN_ON_ONCE(qp->sq.copying || qp->rq.copying);
	mroce_qp_unwait(qp);
	mroce_qp_unpin_rkeys(qp);
	mutex_lock(&qp->db_mutex);
	mroce_wq_reset(&qp->sq);
	mutex_unlock(&qp->db_mutex);
	if (qp->srq)
		mroce_qp_release_srq(qp);
	else
		mroce_wq_reset(&qp->rq);
}

/* What entering @new does to the queues; modify_mutex held. */
static void mroce_qp_enter(struct mroce_qp *qp, enum ib_qp_state old,
			   enum ib_qp_state new)
{
	unsigned long flags;

	switch (new) {
	case IB_QPS_RESET:
		if (old != IB_QPS_RESET) {
			mroce_qp_wait_copies(qp);
			mroce_qp_reset(qp);
		}
		break;
	case IB_QPS_ERR:
		if (mroce_qp_is_datagram(qp)) {
			/*
			 * A UD/GSI WQE being copied into or out of is
			 * neither flushed nor its pin let go (the consumer
			 * owns a flushed WQE's buffer): wait for those
			 * copies, then allow flushes.
			 */
			mroce_qp_wait_copies(qp);
			spin_lock_irqsave(&qp->state_lock, flags);
			if (qp->state == IB_QPS_ERR)
				qp->err_notified = true;
			spin_unlock_irqrestore(&qp->state_lock, flags);
		}
		mroce_sq_flush_all(qp);
		mroce_rq_flush_all(qp);
		break;
	case IB_QPS_SQE:
		mroce_sq_flush_pending(qp);
		break;
	case IB_QPS_SQD:
		if (old != IB_QPS_SQD)
			mroce_wq_retire(qp, &qp->sq);
		break;
	case IB_QPS_RTS:
		if (old == IB_QPS_RTS)
			break;
		spin_lock_irqsave(&qp->sq.lock, flags);
		qp->sq.stopped = false;
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		mroce_xport_sq_kick(qp);
		break;
	default:
		break;
	}
}

int mroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	enum ib_qp_state cur, new;
	struct mroce_av av = {};
	unsigned long flags;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->modify_mutex);
	spin_lock_irqsave(&qp->state_lock, flags);
	cur = qp->state;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	err = -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		goto out;
	new = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask))
		goto out;
	err = mroce_qp_check_attr(attr, mask);
	if (err)
		goto out;
	if (mask & IB_QP_AV) {
		err = mroce_av_from_attr(&av, &attr->ah_attr);
		if (err)
			goto out;
	}

	err = mroce_xport_qp_modify(qp, attr, mask, cur, new);
	if (err)
		goto out;

	spin_lock_irqsave(&qp->state_lock, flags);
	/* The data path can only have moved us to ERR meanwhile. */
	if (qp->state != cur && new != IB_QPS_RESET && new != IB_QPS_ERR) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		err = -EINVAL;
		goto out;
	}
	mroce_qp_store_attr(qp, attr, mask, &av);
	qp->state = new;
	/*
	 * The transport learnt about ERR/RESET through the modify hook; a
	 * datagram QP's copies under way are waited for in mroce_qp_enter()
	 * first, so until then a post may not flush (mroce_rq_posted()).
	 */
	qp->err_notified = new == IB_QPS_ERR && !mroce_qp_is_datagram(qp);
	if (new == IB_QPS_SQD && cur != IB_QPS_SQD)
		qp->sqd_notify = qp->attr.en_sqd_async_notify;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	mroce_qp_enter(qp, cur, new);
out:
	mutex_unlock(&qp->modify_mutex);
	return err;
}

int mroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_av av;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	av = qp->av;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (ibqp->qp_type == IB_QPT_RC)
		mroce_av_to_attr(&av, &attr->ah_attr);
	attr->sq_draining = attr->qp_state == IB_QPS_SQD &&
			    READ_ONCE(qp->sq.fetch) != READ_ONCE(qp->sq.tail);
	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.max_wr;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;

	memset(init, 0, sizeof(*init));
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = MROCE_PORT;
	return 0;
}
