// SPDX-License-Identifier: GPL-2.0
/*
 * The ib_device: allocation, registration with the RDMA core, the query ops
 * and the capabilities we advertise.
 */
#include <linux/etherdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "mroce.h"
#include "mroce_verbs.h"
#include "mroce_counters.h"

/*
 * Device capabilities, in one place. The rule: advertise only what works
 * today, so that every consumer (rdma-core, kernel ULPs, ibv_devinfo) is
 * told the truth. A limit of 0 means "not supported yet"; each feature
 * raises its limits here when it lands.
 */
static void mroce_init_caps(struct mroce_dev *mdev)
{
	struct ib_device_attr *attr = &mdev->attr;

	memset(attr, 0, sizeof(*attr));
	/* 0xffffff: no IEEE OUI, as for other software devices. */
	attr->vendor_id = 0xffffff;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_pkeys = 1;
	/* Responder atomics use cmpxchg on the target: atomic for CPUs too. */
	attr->atomic_cap = IB_ATOMIC_HCA;
	/*
	 * Only feeds the connection manager's retransmit-timeout arithmetic
	 * (4.096 us * 2^n); 15 (~134 ms) suits a software device.
	 */
	attr->local_ca_ack_delay = 15;
	addrconf_addr_eui48((u8 *)&attr->sys_image_guid, mdev->ndev->dev_addr);

	/* Verbs objects: the limits mroce_verbs.h enforces. */
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID;
	attr->max_mr_size = MROCE_MAX_MR_SIZE;
	attr->page_size_cap = (u32)PAGE_MASK;	/* FRWR: any 2^n >= PAGE_SIZE */
	attr->max_qp = MROCE_MAX_QP;
	attr->max_qp_wr = MROCE_MAX_QP_WR;
	attr->max_send_sge = MROCE_MAX_SGE;
	attr->max_recv_sge = MROCE_MAX_SGE;
	attr->max_sge_rd = MROCE_MAX_SGE_RD;
	attr->max_cq = MROCE_MAX_CQ;
	attr->max_cqe = MROCE_MAX_CQE;
	attr->max_mr = MROCE_MAX_MR;
	attr->max_pd = MROCE_MAX_PD;
	attr->max_qp_rd_atom = MROCE_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = MROCE_MAX_RD_ATOM;
	attr->max_res_rd_atom = MROCE_MAX_RD_ATOM * MROCE_MAX_QP;
	attr->max_srq = MROCE_MAX_SRQ;
	attr->max_srq_wr = MROCE_MAX_SRQ_WR;
	attr->max_srq_sge = MROCE_MAX_SGE;
	attr->max_ah = MROCE_MAX_AH;
	attr->max_fast_reg_page_list_len = MROCE_MAX_FRWR_PAGES;
}

/* Port properties that do not follow the netdev; see mroce_query_port(). */
static const struct ib_port_attr mroce_port_caps = {
	.max_mtu	= MROCE_MAX_IB_MTU,
	.gid_tbl_len	= MROCE_GID_TBL_LEN,
	.pkey_tbl_len	= 1,
	.max_vl_num	= 1,		/* VL0 only */
	.max_msg_sz	= MROCE_MAX_MSG_SIZE,	/* what post_send accepts */
	.port_cap_flags	= IB_PORT_CM_SUP,	/* QP1 MADs: mroce_mad.c */
};

/**
 * mroce_mtu_from_netdev() - the IB MTU a netdev MTU can carry
 * @netdev_mtu: MTU of the underlying net device, in bytes
 *
 * The largest IB MTU whose payload still fits in one netdev frame with our
 * worst-case headers (MROCE_WIRE_OVERHEAD), capped at MROCE_MAX_IB_MTU.
 *
 * Return: an enum ib_mtu, or 0 if not even IB_MTU_256 fits.
 */
enum ib_mtu mroce_mtu_from_netdev(unsigned int netdev_mtu)
{
	enum ib_mtu mtu;

	if (netdev_mtu < MROCE_WIRE_OVERHEAD + 256)
		return 0;
	mtu = ib_mtu_int_to_enum(netdev_mtu - MROCE_WIRE_OVERHEAD);
	return min(mtu, MROCE_MAX_IB_MTU);
}

/**
 * mroce_port_sync() - recompute port state and MTU from the netdev
 * @mdev: the device
 * @notify: dispatch IB_EVENT_PORT_ACTIVE/ERR if the state changed
 *
 * The port is active when the netdev is up, has carrier (operstate up) and
 * its MTU fits at least an IB_MTU_256 payload. Called with RTNL held so
 * that successive calls see netdev changes in order.
 */
void mroce_port_sync(struct mroce_dev *mdev, bool notify)
{
	struct net_device *ndev = mdev->ndev;
	enum ib_port_state old_state, state;
	unsigned int carrier_downs, downs;
	enum ib_mtu old_mtu, mtu;
	struct ib_event event;

	ASSERT_RTNL();

	mtu = mroce_mtu_from_netdev(ndev->mtu);
	state = netif_running(ndev) && netif_oper_up(ndev) && mtu ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
	if (!mtu)
		mtu = IB_MTU_256;
	carrier_downs = atomic_read(&ndev->carrier_down_count);

	spin_lock_bh(&mdev->port_lock);
	old_state = mdev->port.state;
	old_mtu = mdev->port.active_mtu;
	downs = carrier_downs - mdev->port.carrier_downs;
	mdev->port.state = state;
	mdev->port.active_mtu = mtu;
	mdev->port.netdev_mtu = ndev->mtu;
	mdev->port.carrier_downs = carrier_downs;
	spin_unlock_bh(&mdev->port_lock);

	/*
	 * Carrier changes reach us through linkwatch, which coalesces them: a
	 * flap shorter than its latency (the far end of a veth taken down and
	 * up again) arrives as one NETDEV_CHANGE that finds the carrier up.
	 * The netdev counts every carrier loss, so count the ones we missed;
	 * a port that goes down without losing carrier (admin down of a
	 * dummy) still counts once.
	 */
	if (old_state == IB_PORT_ACTIVE) {
		if (state != IB_PORT_ACTIVE)
			downs = max(downs, 1U);
		if (downs)
			mroce_counter_add(mdev, MROCE_CNT_LINK_DOWNED, downs);
	}

	if (!notify)
		return;
	if (mtu != old_mtu)
		ibdev_info(&mdev->ibdev, "%s mtu %u: active mtu %d\n",
			   netdev_name(ndev), ndev->mtu, ib_mtu_enum_to_int(mtu));
	if (state == old_state)
		return;

	ibdev_info(&mdev->ibdev, "port %s\n",
		   state == IB_PORT_ACTIVE ? "active" : "down");
	event.device = &mdev->ibdev;
	event.element.port_num = MROCE_PORT;
	event.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR;
	ib_dispatch_event(&event);
}

/**
 * mroce_dev_get_by_netdev() - the mroce device bound to a netdev, if any
 * @ndev: the net device
 *
 * Return: the device with a registration reference (drop it with
 * ib_device_put(&mdev->ibdev)), or NULL.
 */
struct mroce_dev *mroce_dev_get_by_netdev(struct net_device *ndev)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_netdev(ndev, MROCE_DRIVER_ID);
	if (!ibdev)
		return NULL;
	if (ibdev->ops.owner != THIS_MODULE) {
		ib_device_put(ibdev);
		return NULL;
	}
	return to_mdev(ibdev);
}

static int mroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *uhw)
{
	/* The rxe ABI has no driver-specific query data. */
	if (uhw->inlen || uhw->outlen)
		return -EINVAL;

	*attr = to_mdev(ibdev)->attr;
	return 0;
}

static int mroce_query_port(struct ib_device *ibdev, u32 port_num,
			    struct ib_port_attr *attr)
{
	struct mroce_dev *mdev = to_mdev(ibdev);
	struct mroce_port port;

	spin_lock_bh(&mdev->port_lock);
	port = mdev->port;
	spin_unlock_bh(&mdev->port_lock);

	/* The core zeroed *attr; fill what we know. */
	*attr = mroce_port_caps;
	attr->state = port.state;
	attr->active_mtu = port.active_mtu;
	if (port.state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (netif_running(mdev->ndev))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;

	/*
	 * Fails only while the netdev is being unregistered; the port is
	 * down then and its speed meaningless, so report the slowest rather
	 * than failing the whole query.
	 */
	if (ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int mroce_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			    u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static enum rdma_link_layer mroce_get_link_layer(struct ib_device *ibdev,
						 u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int mroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				    struct ib_port_immutable *immutable)
{
	/*
	 * RoCE v2 only: the core then fills the GID table from the netdev's
	 * IPv4/IPv6 addresses (roce_gid_mgmt) and rdma_cm resolves routes
	 * through the netdev.
	 */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = mroce_port_caps.pkey_tbl_len;
	immutable->gid_tbl_len = mroce_port_caps.gid_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int mroce_alloc_ucontext(struct ib_ucontext *ibuc,
				struct ib_udata *udata)
{
	/* librxe exchanges no driver data when it opens a context. */
	return 0;
}

static void mroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Called when the device goes away (its netdev was removed, `rdma link
 * delete`, rmmod) while user space still has it open: the core has already
 * destroyed every object of the context. Providing this op is what lets
 * unregistration proceed instead of waiting for every process to close the
 * device. Whoever adds user mappings must zap them here (or create them with
 * rdma_user_mmap_io()/entries, which the core zaps itself).
 */
static void mroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static void mroce_dealloc_driver(struct ib_device *ibdev)
{
	struct mroce_dev *mdev = to_mdev(ibdev);

	mroce_xport_dev_fini(mdev);
	mroce_counters_fini(mdev);
	mroce_verbs_dev_fini(mdev);
	netdev_put(mdev->ndev, &mdev->ndev_tracker);
}

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct mroce_dev *mdev =
		rdma_device_to_drv_device(device, struct mroce_dev, ibdev);

	return sysfs_emit(buf, "%s\n", netdev_name(mdev->ndev));
}
static DEVICE_ATTR_RO(parent);

static struct attribute *mroce_dev_attrs[] = {
	&dev_attr_parent.attr,
	NULL
};

static const struct attribute_group mroce_dev_attr_group = {
	.attrs = mroce_dev_attrs,
};

/* Device-level ops; the verbs objects are in mroce_verbs_ops. */
static const struct ib_device_ops mroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = MROCE_DRIVER_ID,
	.uverbs_abi_ver = MROCE_UVERBS_ABI_VERSION,

	.alloc_ucontext = mroce_alloc_ucontext,
	.dealloc_driver = mroce_dealloc_driver,
	.dealloc_ucontext = mroce_dealloc_ucontext,
	.device_group = &mroce_dev_attr_group,
	.disassociate_ucontext = mroce_disassociate_ucontext,
	.get_link_layer = mroce_get_link_layer,
	.get_port_immutable = mroce_get_port_immutable,
	.query_device = mroce_query_device,
	.query_pkey = mroce_query_pkey,
	.query_port = mroce_query_port,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, mroce_ucontext, ibuc),
};

/*
 * Each feature contributes its own ops table. The core copies an op only
 * into a slot still empty, so a feature can't silently override another.
 */
static const struct ib_device_ops *const mroce_feature_ops[] = {
	&mroce_dev_ops,
	&mroce_verbs_ops,
	&mroce_counters_ops,
};

static void mroce_init_ibdev(struct mroce_dev *mdev)
{
	struct ib_device *ibdev = &mdev->ibdev;
	int i;

	strscpy(ibdev->node_desc, MROCE_DRV_NAME, sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	/*
	 * Completions run wherever the event that retires them runs, so a
	 * vector selects nothing here; but nvme-rdma and nvmet-rdma size their
	 * I/O queues by this count, and one queue serialises every CPU's I/O.
	 */
	ibdev->num_comp_vectors = num_possible_cpus();
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, mdev->ndev->dev_addr);
	/* librxe issues these two as write() commands, not ioctls. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);

	for (i = 0; i < ARRAY_SIZE(mroce_feature_ops); i++)
		ib_set_device_ops(ibdev, mroce_feature_ops[i]);
}

/*
 * Bring the freshly registered device in line with its netdev. A netdev
 * unregistration that ran before our registration became visible could not
 * find us, so check for it here, under RTNL like the notifier.
 */
static int mroce_dev_settle(struct mroce_dev *mdev, struct net_device *ndev)
{
	bool gone;

	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED;
	if (!gone)
		mroce_port_sync(mdev, true);
	rtnl_unlock();

	if (gone) {
		pr_err("%s: net device %s went away during creation\n",
		       dev_name(&mdev->ibdev.dev), netdev_name(ndev));
		ib_unregister_device_and_put(&mdev->ibdev);
		return -ENODEV;
	}
	ibdev_info(&mdev->ibdev, "added on %s\n", netdev_name(ndev));
	ib_device_put(&mdev->ibdev);
	return 0;
}

/**
 * mroce_dev_add() - create and register an mroce device on a netdev
 * @ibdev_name: name of the new RDMA device
 * @ndev: the (validated) Ethernet net device, held by the caller
 *
 * Return: 0 or a negative errno.
 */
int mroce_dev_add(const char *ibdev_name, struct net_device *ndev)
{
	struct mroce_dev *mdev;
	struct ib_device *ibdev;
	int err;

	lockdep_assert_held(&mroce_link_mutex);

	mdev = ib_alloc_device(mroce_dev, ibdev);
	if (!mdev)
		return -ENOMEM;
	ibdev = &mdev->ibdev;

	/* From here on errors unwind through ib_dealloc_device(). */
	mdev->ndev = ndev;
	netdev_hold(ndev, &mdev->ndev_tracker, GFP_KERNEL);
	spin_lock_init(&mdev->port_lock);
	mroce_verbs_dev_init(mdev);
	mroce_init_caps(mdev);
	mroce_init_ibdev(mdev);
	err = mroce_counters_init(mdev);
	if (err)
		goto err_dealloc;
	err = mroce_xport_dev_init(mdev);
	if (err)
		goto err_dealloc;

	rtnl_lock();
	mroce_port_sync(mdev, false);
	rtnl_unlock();

	err = ib_device_set_netdev(ibdev, ndev, MROCE_PORT);
	if (err)
		goto err_dealloc;

	/*
	 * A concurrent `rdma link delete` may free the device as soon as it is
	 * registered; our device reference keeps the memory, and the
	 * registration reference taken below keeps it registered while we
	 * settle it.
	 */
	get_device(&ibdev->dev);
	err = ib_register_device(ibdev, ibdev_name, NULL);
	if (err) {
		pr_err("%s: registering with the RDMA core failed: %d\n",
		       ibdev_name, err);
		ib_dealloc_device(ibdev);
		put_device(&ibdev->dev);
		return err;
	}

	err = 0;
	if (ib_device_try_get(ibdev))
		err = mroce_dev_settle(mdev, ndev);
	put_device(&ibdev->dev);
	return err;

err_dealloc:
	ib_dealloc_device(ibdev);
	return err;
}
