// SPDX-License-Identifier: GPL-2.0
/*
 * Module init/exit and `rdma link add NAME type mroce netdev DEV`.
 */
#include <linux/if_arp.h>
#include <linux/module.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "mroce.h"

DEFINE_MUTEX(mroce_link_mutex);

/* Refuse net devices we cannot (or must not) put an RDMA device on. */
static int mroce_check_netdev(const char *ibdev_name, struct net_device *ndev)
{
	struct ib_device *other;

	lockdep_assert_held(&mroce_link_mutex);

	if (ndev->flags & IFF_LOOPBACK) {
		pr_err("%s: refusing loopback device %s: mroce needs an Ethernet device that reaches the peer\n",
		       ibdev_name, netdev_name(ndev));
		return -EINVAL;
	}
	if (ndev->type != ARPHRD_ETHER) {
		pr_err("%s: refusing %s: not an Ethernet device (ARPHRD type %u)\n",
		       ibdev_name, netdev_name(ndev), ndev->type);
		return -EOPNOTSUPP;
	}

	other = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (other) {
		pr_err("%s: refusing %s: it already has RDMA device %s\n",
		       ibdev_name, netdev_name(ndev), dev_name(&other->dev));
		ib_device_put(other);
		return -EEXIST;
	}

	other = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		pr_err("%s: an RDMA device with this name already exists\n",
		       ibdev_name);
		ib_device_put(other);
		return -EEXIST;
	}
	return 0;
}

static int mroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	int err;

	mutex_lock(&mroce_link_mutex);
	err = mroce_check_netdev(ibdev_name, ndev);
	if (!err)
		err = mroce_dev_add(ibdev_name, ndev);
	mutex_unlock(&mroce_link_mutex);
	return err;
}

static struct rdma_link_ops mroce_link_ops = {
	.type = MROCE_DRV_NAME,
	.newlink = mroce_newlink,
};

static int __init mroce_init(void)
{
	int err;

	/* First, so that nothing is set up while rdma_rxe is loaded. */
	err = mroce_exclusive_init();
	if (err)
		return err;

	err = mroce_xport_init();
	if (err)
		goto err_exclusive;

	err = mroce_netdev_init();
	if (err)
		goto err_xport;

	rdma_link_register(&mroce_link_ops);
	pr_info("loaded\n");
	return 0;

err_xport:
	mroce_xport_exit();
err_exclusive:
	mroce_exclusive_exit();
	return err;
}

static void __exit mroce_exit(void)
{
	/* No new devices (waits for newlink calls in flight) ... */
	rdma_link_unregister(&mroce_link_ops);
	/* ... then remove ours; only mroce may use this id, see mroce.h. */
	ib_unregister_driver(MROCE_DRIVER_ID);
	mroce_netdev_exit();
	mroce_xport_exit();
	mroce_exclusive_exit();
	pr_info("unloaded\n");
}

/* After the RDMA core and the IP stack, like every soft RDMA driver. */
late_initcall(mroce_init);
module_exit(mroce_exit);

MODULE_DESCRIPTION("mroce: multipath loss-tolerant soft RoCE");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK(MROCE_DRV_NAME);
