// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles and address vectors.
 *
 * Every AH, kernel or user, gets a non-zero number: librxe puts it in each
 * UD send WQE (wr.ud.ah_num). A zero number would make librxe fall back to
 * copying a raw address vector into the WQE, i.e. to letting user space
 * choose arbitrary L2/L3 addresses, which we never accept. UD WQEs from
 * user rings are resolved by number at doorbell time and the vector is
 * copied into the kernel shadow, so destroying an AH never leaves a WQE
 * pointing at freed memory.
 */
#include <linux/xarray.h>
#include <rdma/ib_cache.h>

#include "mroce.h"
#include "mroce_verbs.h"

/**
 * mroce_av_from_attr() - resolve a RoCE v2 address
 * @av: filled on success
 * @attr: from the core: GID attribute and destination MAC already resolved
 *
 * Return: 0, or -EINVAL for anything that is not a RoCE v2 address with a
 * GRH on our port.
 */
int mroce_av_from_attr(struct mroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	enum rdma_network_type type;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    rdma_ah_get_port_num(attr) != MROCE_PORT ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	if (!grh->sgid_attr)
		return -EINVAL;
	type = rdma_gid_attr_network_type(grh->sgid_attr);
	if (type != RDMA_NETWORK_IPV4 && type != RDMA_NETWORK_IPV6)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->sgid = grh->sgid_attr->gid;
	av->dgid = grh->dgid;
	av->flow_label = grh->flow_label;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(attr);
	av->network_type = type;
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	return 0;
}

void mroce_av_to_attr(const struct mroce_av *av, struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, MROCE_PORT);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

/**
 * mroce_ah_lookup_av() - copy the vector of a user-numbered AH
 * @mdev: the device
 * @ah_num: number from a user WQE (untrusted)
 * @pd: the posting QP's PD; the AH must belong to it
 * @av: the copy
 *
 * Return: 0 or -EINVAL.
 */
int mroce_ah_lookup_av(struct mroce_dev *mdev, u32 ah_num, struct ib_pd *pd,
		       struct mroce_av *av)
{
	struct mroce_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	/* The xarray lock, not RCU: the core frees AH memory on destroy. */
	xa_lock_irqsave(&mdev->ah_xa, flags);
	ah = xa_load(&mdev->ah_xa, ah_num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		err = 0;
	}
	xa_unlock_irqrestore(&mdev->ah_xa, flags);
	return err;
}

int mroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibah->device);
	struct mroce_ah *ah = to_mah(ibah);
	struct rxe_create_ah_resp resp = {};
	unsigned long flags;
	u32 num;
	int err;

	err = mroce_av_from_attr(&ah->av, init->ah_attr);
	if (err)
		return err;

	/* Kernel callers may hold spinlocks unless they say otherwise. */
	if (init->flags & RDMA_CREATE_AH_SLEEPABLE) {
		err = xa_alloc_cyclic_irq(&mdev->ah_xa, &num, ah,
					  XA_LIMIT(1, MROCE_MAX_AH),
					  &mdev->ah_next, GFP_KERNEL);
	} else {
		xa_lock_irqsave(&mdev->ah_xa, flags);
		err = __xa_alloc_cyclic(&mdev->ah_xa, &num, ah,
					XA_LIMIT(1, MROCE_MAX_AH),
					&mdev->ah_next, GFP_ATOMIC);
		xa_unlock_irqrestore(&mdev->ah_xa, flags);
	}
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	ah->ah_num = num;

	if (udata && udata->outlen >= sizeof(resp)) {
		resp.ah_num = num;
		if (ib_copy_to_udata(udata, &resp, sizeof(resp))) {
			xa_erase_irq(&mdev->ah_xa, num);
			return -EFAULT;
		}
	}
	return 0;
}

int mroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	mroce_av_to_attr(&to_mah(ibah)->av, attr);
	return 0;
}

int mroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct mroce_dev *mdev = to_mdev(ibah->device);
	unsigned long irqflags;

	xa_lock_irqsave(&mdev->ah_xa, irqflags);
	__xa_erase(&mdev->ah_xa, to_mah(ibah)->ah_num);
	xa_unlock_irqrestore(&mdev->ah_xa, irqflags);
	return 0;
}
