// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues.
 *
 * A user CQ is a ring of struct ib_uverbs_wc slots that librxe polls
 * without a system call (it memcpy()s each slot into a struct ibv_wc); a
 * kernel CQ is a private ring of struct ib_wc that poll_cq copies out. The
 * kernel owns the producer index; for user CQs the consumer index is user
 * memory, read once per post to decide whether the ring is full.
 *
 * Overflow puts the CQ in error, as the IB spec says: the completion is
 * dropped, IB_EVENT_CQ_ERR is reported once, later posts fail too, and the
 * caller moves the affected QP to ERR. It is counted (hw counter
 * cq_overflow) and logged, rate-limited, with the CQ's restrack id and
 * owner. Only a successful completion can overflow a CQ: an error one
 * (a flush, above all) that does not fit waits in its work queue, which
 * parks on the CQ's waiters until the consumer made room (see
 * mroce_wqe.c). ULPs size a CQ at exactly their queue depth, an RQ slot is
 * free again once its CQE is posted (not polled), and ib_drain_qp() adds a
 * CQE of its own: with a full CQ of flushes, that is the one a teardown
 * waits for.
 *
 * Notification: req_notify_cq arms for the next completion or the next
 * solicited one (an unsuccessful completion counts as solicited); posting
 * the completion that fires disarms it. The handler is called by the
 * posting path after it dropped its QP and CQ locks (mroce_cq_dispatch()).
 */
#include "mroce.h"
#include "mroce_counters.h"
#include "mroce_verbs.h"

/*
 * librxe copies our slots into struct ibv_wc, whose wc_flags values differ
 * from the kernel's IB_WC_* ones (libibverbs <infiniband/verbs.h>:
 * IBV_WC_GRH 1, IBV_WC_WITH_IMM 2, IBV_WC_IP_CSUM_OK 4, IBV_WC_WITH_INV 8).
 */
#define MROCE_UWC_GRH		(1 << 0)
#define MROCE_UWC_WITH_IMM	(1 << 1)
#define MROCE_UWC_IP_CSUM_OK	(1 << 2)
#define MROCE_UWC_WITH_INV	(1 << 3)

static u32 mroce_uwc_flags(int flags)
{
	u32 uflags = 0;

	if (flags & IB_WC_GRH)
		uflags |= MROCE_UWC_GRH;
	if (flags & IB_WC_WITH_IMM)
		uflags |= MROCE_UWC_WITH_IMM;
	if (flags & IB_WC_IP_CSUM_OK)
		uflags |= MROCE_UWC_IP_CSUM_OK;
	if (flags & IB_WC_WITH_INVALIDATE)
		uflags |= MROCE_UWC_WITH_INV;
	return uflags;
}

static void mroce_wc_to_user(struct ib_uverbs_wc *uwc, const struct ib_wc *wc)
{
	memset(uwc, 0, sizeof(*uwc));
	uwc->wr_id = wc->wr_id;
	uwc->status = wc->status;
	uwc->opcode = wc->opcode;
	uwc->vendor_err = wc->vendor_err;
	uwc->byte_len = wc->byte_len;
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		uwc->ex.invalidate_rkey = wc->ex.invalidate_rkey;
	else
		uwc->ex.imm_data = wc->ex.imm_data;
	uwc->qp_num = wc->qp->qp_num;
	uwc->src_qp = wc->src_qp;
	uwc->wc_flags = mroce_uwc_flags(wc->wc_flags);
	uwc->pkey_index = wc->pkey_index;
	uwc->slid = wc->slid;
	uwc->sl = wc->sl;
	uwc->dlid_path_bits = wc->dlid_path_bits;
	uwc->port_num = MROCE_PORT;
}

/*
 * A ring for @cqe completions in the layout its poller reads; for a user
 * CQ, librxe learns where to map it from the response, which for create
 * and resize alike is one struct mminfo.
 */
static int mroce_cq_ring_init(struct mroce_queue *q, int cqe,
			      struct ib_udata *udata)
{
	struct mminfo mi;
	int err;

	BUILD_BUG_ON(sizeof(struct ib_uverbs_wc) != 48);
	BUILD_BUG_ON(sizeof(struct rxe_create_cq_resp) != sizeof(mi));
	BUILD_BUG_ON(sizeof(struct rxe_resize_cq_resp) != sizeof(mi));

	if (cqe < 1 || cqe > MROCE_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(mi))
		return -EINVAL;
	err = mroce_queue_init(q, mroce_uctx(udata), cqe,
			       udata ? sizeof(struct ib_uverbs_wc) :
				       sizeof(struct ib_wc));
	if (err || !udata)
		return err;

	mroce_queue_mminfo(q, &mi);
	if (ib_copy_to_udata(udata, &mi, sizeof(mi))) {
		mroce_queue_free(q);
		return -EFAULT;
	}
	return 0;
}

/* A user CQ's own retries while completions wait: 1 jiffy up to this. */
#define MROCE_CQ_ROOM_MAX_DELAY	(HZ / 10)

/*
 * Unlock @cq; if @room (a kernel poll took completions, an arm, a resize)
 * and work queues wait for room, retire them now.
 */
static void mroce_cq_unlock_kick(struct mroce_cq *cq, unsigned long flags,
				 bool room)
{
	bool kick = room && !list_empty(&cq->waiters);

	spin_unlock_irqrestore(&cq->lock, flags);
	if (kick)
		mod_delayed_work(system_wq, &cq->room_work, 0);
}

/*
 * The work queues waiting on the CQ retry, each under a reference on its
 * QP (taken while it is listed: destroy_qp unlinks it only after its
 * references drained). One that still finds no room parks again; that
 * happens under cq->lock, like a kernel poll, so a poll either made its
 * room visible to the retry or finds the work queue listed and kicks us.
 */
static void mroce_cq_room_work(struct work_struct *work)
{
	struct mroce_cq *cq = container_of(to_delayed_work(work),
					   struct mroce_cq, room_work);
	struct mroce_wq *wq;
	struct mroce_qp *qp;
	unsigned long flags;
	LIST_HEAD(todo);
	u32 prod;

	spin_lock_irqsave(&cq->lock, flags);
	prod = cq->prod;
	list_splice_init(&cq->waiters, &todo);
	while (!list_empty(&todo)) {
		wq = list_first_entry(&todo, struct mroce_wq, cq_wait);
		list_del_init(&wq->cq_wait);
		qp = mroce_wq_qp(wq);
		if (!refcount_inc_not_zero(&qp->ref))
			continue;
		spin_unlock_irqrestore(&cq->lock, flags);
		mroce_wq_retire(qp, wq);
		mroce_qp_put(qp);
		spin_lock_irqsave(&cq->lock, flags);
	}
	/*
	 * User polls are invisible: retry on our own, at once again after
	 * progress, backing off while the consumer does not poll. (A queue
	 * that parked again above queued us already, with the last delay.)
	 */
	if (cq->is_user && !list_empty(&cq->waiters)) {
		cq->room_delay = cq->prod != prod ? 1 :
				 min_t(unsigned long, cq->room_delay * 2,
				       MROCE_CQ_ROOM_MAX_DELAY);
		queue_delayed_work(system_wq, &cq->room_work, cq->room_delay);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

/**
 * mroce_cq_wait_locked() - park a work queue until the CQ has room
 * @cq: the CQ, locked
 * @wq: a QP's send or receive queue whose next completion did not fit
 *
 * mroce_wq_retire() runs for @wq once a kernel consumer polled or anyone
 * armed the CQ; for a user CQ also on a timer, since its polls never
 * enter the kernel.
 */
void mroce_cq_wait_locked(struct mroce_cq *cq, struct mroce_wq *wq)
{
	lockdep_assert_held(&cq->lock);
	if (!list_empty(&wq->cq_wait))
		return;
	list_add_tail(&wq->cq_wait, &cq->waiters);
	if (cq->is_user && !delayed_work_pending(&cq->room_work))
		queue_delayed_work(system_wq, &cq->room_work, cq->room_delay);
}

/* Forget a work queue's wait (its QP is reset or destroyed). */
void mroce_cq_unwait(struct mroce_cq *cq, struct mroce_wq *wq)
{
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	list_del_init(&wq->cq_wait);
	spin_unlock_irqrestore(&cq->lock, flags);
}

int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	struct mroce_dev *mdev = to_mdev(ibcq->device);
	struct mroce_cq *cq = to_mcq(ibcq);
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	/* The limit first: no ring (and no mmap info for librxe) past it. */
	if (atomic_inc_return(&mdev->num_cq) > MROCE_MAX_CQ) {
		atomic_dec(&mdev->num_cq);
		return -ENOMEM;
	}
	err = mroce_cq_ring_init(&cq->q, attr->cqe, udata);
	if (err) {
		atomic_dec(&mdev->num_cq);
		return err;
	}

	spin_lock_init(&cq->lock);
	INIT_LIST_HEAD(&cq->waiters);
	INIT_DELAYED_WORK(&cq->room_work, mroce_cq_room_work);
	cq->room_delay = 1;
	cq->is_user = !!udata;
	ibcq->cqe = mroce_queue_capacity(&cq->q);
	return 0;
}

int mroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mroce_cq *cq = to_mcq(ibcq);

	/* The core refuses while QPs or SRQs still use the CQ: no waiters. */
	cancel_delayed_work_sync(&cq->room_work);
	mroce_queue_free(&cq->q);
	atomic_dec(&to_mdev(ibcq->device)->num_cq);
	return 0;
}

/**
 * mroce_resize_cq() - move a CQ's completions into a ring of another size
 * @ibcq: the CQ
 * @cqe: entries it must hold now
 * @udata: for a user CQ, where librxe finds the new ring's mmap info
 *
 * librxe holds its CQ lock across the command and then maps the new ring,
 * so no user-space poll runs meanwhile; the transport posts under
 * cq->lock, which the move holds. Completions not yet polled are kept, in
 * order, at the start of the new ring. The old user ring stays mapped in
 * the process until librxe unmaps it (its pages are referenced by the
 * mapping), but the kernel never writes it again.
 *
 * Return: 0, or -EINVAL if @cqe is out of range or smaller than the
 * number of completions waiting.
 */
int mroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	struct mroce_queue nq = {}, old;
	unsigned long flags;
	u32 n, i, from;
	int err;

	if (!udata != !cq->is_user)
		return -EINVAL;
	/* Before the move, so that a failed copy leaves the CQ as it was. */
	err = mroce_cq_ring_init(&nq, cqe, udata);
	if (err)
		return err;

	spin_lock_irqsave(&cq->lock, flags);
	/* The user's consumer index is read once: the copy and count agree. */
	from = mroce_cq_consumer(cq);
	n = mroce_cq_count(cq, from);
	if (n > mroce_queue_capacity(&nq)) {
		spin_unlock_irqrestore(&cq->lock, flags);
		mroce_queue_free(&nq);
		return -EINVAL;
	}
	for (i = 0; i < n; i++)
		memcpy(mroce_queue_slot(&nq, i), mroce_queue_slot(&cq->q, from + i),
		       (size_t)1 << nq.log2_elem);
	old = cq->q;
	cq->q = nq;
	cq->prod = n;
	cq->cons = 0;
	if (cq->is_user)
		mroce_queue_publish_producer(&cq->q, n);
	ibcq->cqe = mroce_queue_capacity(&cq->q);
	mroce_cq_unlock_kick(cq, flags, true);

	mroce_queue_free(&old);
	return 0;
}

/* Make an overflow diagnosable: which CQ, whose, what it dropped first. */
static void mroce_cq_overflowed(struct mroce_cq *cq, const struct ib_wc *wc)
{
	const struct rdma_restrack_entry *res = &cq->ibcq.res;
	struct ib_device *ibdev = cq->ibcq.device;

	mroce_counter_inc(to_mdev(ibdev), MROCE_CNT_CQ_OVERFLOW);
	ibdev_warn_ratelimited(ibdev,
			       "CQ %u (%s, %u entries) overflowed: lost a completion of QP %u (status %d), the CQ is in error\n",
			       res->id,
			       rdma_is_kernel_res(res) ? res->kern_name : "user",
			       mroce_queue_capacity(&cq->q), wc->qp->qp_num,
			       wc->status);
}

/**
 * mroce_cq_post_locked() - add a completion
 * @cq: the CQ, locked
 * @wc: the completion; wc->qp must be set
 * @solicited: the completion belongs to a solicited message
 * @ev: accumulates what to dispatch after the caller drops its locks
 *
 * The completion is not visible to a user-space poller until the caller
 * publishes it, with the others of its burst, by mroce_cq_publish_locked()
 * before it drops the lock; kernel pollers read under the lock.
 *
 * Return: 0, or -EOVERFLOW if the CQ is full or already overflowed.
 */
int mroce_cq_post_locked(struct mroce_cq *cq, const struct ib_wc *wc,
			 bool solicited, struct mroce_cq_ev *ev)
{
	lockdep_assert_held(&cq->lock);

	if (cq->overflow)
		return -EOVERFLOW;
	if (mroce_cq_count(cq, mroce_cq_consumer(cq)) >=
	    mroce_queue_capacity(&cq->q)) {
		cq->overflow = true;
		ev->overflow = true;
		mroce_cq_overflowed(cq, wc);
		return -EOVERFLOW;
	}

	if (cq->is_user)
		mroce_wc_to_user(mroce_queue_slot(&cq->q, cq->prod), wc);
	else
		memcpy(mroce_queue_slot(&cq->q, cq->prod), wc, sizeof(*wc));
	cq->prod++;

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		ev->notify = true;
	}
	return 0;
}

/* Call the handlers a post owes; no verbs lock may be held. */
void mroce_cq_dispatch(struct mroce_cq *cq, struct mroce_cq_ev *ev)
{
	struct ib_cq *ibcq = &cq->ibcq;
	struct ib_event event;

	if (ev->overflow && ibcq->event_handler) {
		event.device = ibcq->device;
		event.element.cq = ibcq;
		event.event = IB_EVENT_CQ_ERR;
		ibcq->event_handler(&event, ibcq->cq_context);
	}
	if (ev->notify && ibcq->comp_handler)
		ibcq->comp_handler(ibcq, ibcq->cq_context);
	ev->notify = false;
	ev->overflow = false;
}

int mroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	unsigned long flags;
	int n = 0;

	/* User CQs are polled in user space; uverbs never gets here. */
	if (cq->is_user)
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num && cq->cons != cq->prod) {
		memcpy(&wc[n++], mroce_queue_slot(&cq->q, cq->cons),
		       sizeof(*wc));
		cq->cons++;
	}
	mroce_cq_unlock_kick(cq, flags, n);
	return n;
}

int mroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	u8 type = flags & IB_CQ_SOLICITED_MASK;
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* Armed for any completion stays armed for any completion. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = type;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    mroce_cq_count(cq, mroce_cq_consumer(cq)))
		ret = 1;
	/* The one system call a user consumer makes: retry now. */
	mroce_cq_unlock_kick(cq, irqflags, true);
	return ret;
}
