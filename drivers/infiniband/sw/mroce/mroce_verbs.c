// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs ops table, protection domains and the per-device verbs state.
 */
#include <linux/xarray.h>

#include "mroce.h"
#include "mroce_verbs.h"

static int mroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibpd->device);

	if (atomic_inc_return(&mdev->num_pd) > MROCE_MAX_PD) {
		atomic_dec(&mdev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

static int mroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_mdev(ibpd->device)->num_pd);
	return 0;
}

/*
 * Everything the RDMA core marks mandatory for a kernel verbs provider is
 * here (query_device/query_port/get_port_immutable live in mroce_dev.c), so
 * ib_mad, ib_cm, rdma_cm and kernel ULPs bind to the device.
 */
const struct ib_device_ops mroce_verbs_ops = {
	.alloc_mr = mroce_alloc_mr,
	.alloc_pd = mroce_alloc_pd,
	.create_ah = mroce_create_ah,
	.create_cq = mroce_create_cq_op,
	.create_qp = mroce_create_qp,
	.create_srq = mroce_create_srq,
	.create_user_ah = mroce_create_ah,
	.dealloc_pd = mroce_dealloc_pd,
	.dereg_mr = mroce_dereg_mr,
	.destroy_ah = mroce_destroy_ah,
	.destroy_cq = mroce_destroy_cq,
	.destroy_qp = mroce_destroy_qp,
	.destroy_srq = mroce_destroy_srq,
	.get_dma_mr = mroce_get_dma_mr,
	.map_mr_sg = mroce_map_mr_sg,
	.mmap = mroce_mmap,
	.mmap_free = mroce_mmap_free,
	.modify_qp = mroce_modify_qp,
	.modify_srq = mroce_modify_srq,
	.poll_cq = mroce_poll_cq,
	.post_recv = mroce_post_recv,
	.post_send = mroce_post_send,
	.post_srq_recv = mroce_post_srq_recv,
	.query_ah = mroce_query_ah,
	.query_qp = mroce_query_qp,
	.query_srq = mroce_query_srq,
	.reg_user_mr = mroce_reg_user_mr,
	.req_notify_cq = mroce_req_notify_cq,
	.resize_cq = mroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, mroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, mroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, mroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, mroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, mroce_srq, ibsrq),
};

/* Before ib_register_device(): the tables every lookup uses. */
void mroce_verbs_dev_init(struct mroce_dev *mdev)
{
	/* QPs and AHs are created and looked up from any context. */
	xa_init_flags(&mdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&mdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&mdev->mr_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&mdev->srq_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	mdev->qp_next = MROCE_MIN_QPN;
	atomic_set(&mdev->num_pd, 0);
	atomic_set(&mdev->num_cq, 0);
}

/*
 * From dealloc_driver: the core destroyed every object first, so the tables
 * are empty unless an object leaked.
 */
void mroce_verbs_dev_fini(struct mroce_dev *mdev)
{
	WARN_ON(!xa_empty(&mdev->qp_xa));
	WARN_ON(!xa_empty(&mdev->mr_xa));
	WARN_ON(!xa_empty(&mdev->ah_xa));
	WARN_ON(!xa_empty(&mdev->srq_xa));
	xa_destroy(&mdev->qp_xa);
	xa_destroy(&mdev->mr_xa);
	xa_destroy(&mdev->ah_xa);
	xa_destroy(&mdev->srq_xa);
}
