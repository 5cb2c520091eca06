// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues.
 *
 * An SRQ is a receive queue (struct mroce_wq) that QPs take WQEs from in
 * mroce_rq_take(). A taken WQE sits on the taking QP's srq_taken list until
 * that QP completes (or flushes) it, and its slot is reused only once the
 * SRQ's tail reaches it, so completions on different QPs can finish in any
 * order. The limit event fires once per arming, when a take leaves fewer
 * WQEs than the limit.
 *
 * Resizing (IB_SRQ_MAX_WR) is not supported: librxe accepts -EOPNOTSUPP,
 * and we do not advertise IB_DEVICE_SRQ_RESIZE.
 */
#include <linux/xarray.h>

#include "mroce.h"
#include "mroce_verbs.h"

void mroce_srq_event(struct mroce_srq *srq, enum ib_event_type type)
{
	struct ib_event event;

	if (!srq->ibsrq.event_handler)
		return;
	event.device = srq->ibsrq.device;
	event.element.srq = &srq->ibsrq;
	event.event = type;
	srq->ibsrq.event_handler(&event, srq->ibsrq.srq_context);
}

int mroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibsrq->device);
	struct mroce_srq *srq = to_msrq(ibsrq);
	struct rxe_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	u32 num;
	int err;

	BUILD_BUG_ON(sizeof(resp) != 24);

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > MROCE_MAX_SRQ_WR ||
	    attr->max_sge > MROCE_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	srq->is_user = !!udata;
	err = mroce_wq_init(&srq->rq, mroce_uctx(udata), attr->max_wr,
			    attr->max_sge, 0, false);
	if (err)
		return err;
	srq->limit = attr->srq_limit;

	err = xa_alloc_cyclic_irq(&mdev->srq_xa, &num, srq,
				  XA_LIMIT(1, MROCE_MAX_SRQ), &mdev->srq_next,
				  GFP_KERNEL);
	if (err < 0) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_free;
	}
	srq->srq_num = num;
	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;

	if (udata) {
		mroce_queue_mminfo(&srq->rq.uq, &resp.mi);
		resp.srq_num = num;
		if (ib_copy_to_udata(udata, &resp, sizeof(resp))) {
			err = -EFAULT;
			goto err_erase;
		}
	}
	return 0;

err_erase:
	xa_erase_irq(&mdev->srq_xa, num);
err_free:
	mroce_wq_free(&srq->rq);
	return err;
}

int mroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct mroce_srq *srq = to_msrq(ibsrq);
	unsigned long flags;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.max_wr)
			return -EINVAL;
		spin_lock_irqsave(&srq->rq.lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	return 0;
}

int mroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int mroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	/* The core refuses while QPs still use the SRQ. */
	xa_erase_irq(&to_mdev(ibsrq->device)->srq_xa, srq->srq_num);
	mroce_wq_free(&srq->rq);
	return 0;
}
