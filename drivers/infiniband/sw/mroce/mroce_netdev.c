// SPDX-License-Identifier: GPL-2.0
/*
 * Follow the net devices under our RDMA devices: removal, up/down and MTU.
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_verbs.h>

#include "mroce.h"

/* The device can do nothing any more: user space hears it on its async fd. */
static void mroce_netdev_fatal(struct mroce_dev *mdev)
{
	struct ib_event event = {
		.device = &mdev->ibdev,
		.event = IB_EVENT_DEVICE_FATAL,
	};

	ib_dispatch_event(&event);
}

static int mroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct mroce_dev *mdev;

	switch (event) {
	case NETDEV_UNREGISTER:
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		break;
	default:
		return NOTIFY_DONE;
	}

	mdev = mroce_dev_get_by_netdev(ndev);
	if (!mdev)
		return NOTIFY_DONE;

	mroce_port_sync(mdev, true);
	if (event == NETDEV_UNREGISTER) {
		/*
		 * Consumers learn first, so that their teardown does not wait
		 * for answers that can no longer come (an nvme-rdma host
		 * would wait its I/O and admin timeouts, and this netdev with
		 * it): the port goes down, the device is fatal, every QP
		 * fails. The unregistration is queued only once kernel
		 * consumers have run their callbacks for the flushes (bounded:
		 * one may never poll): its work removes the clients first,
		 * and nvme-rdma's remove deletes its controller, which then
		 * ignores a flush instead of starting error recovery. The
		 * netdev repeats this event while it waits for its
		 * references; fail, wait and say it once.
		 */
		if (mroce_xport_dev_fail(mdev)) {
			ibdev_info(&mdev->ibdev,
				   "%s is going away, removing device\n",
				   netdev_name(ndev));
			mroce_netdev_fatal(mdev);
			mroce_comp_wait_polled(mdev);
		}
		/*
		 * Queued: unregistration waits for users of the device and
		 * must not run under RTNL. The netdev's own teardown then
		 * waits for the reference the device holds (see mroce.h).
		 */
		ib_unregister_device_queued(&mdev->ibdev);
	}

	ib_device_put(&mdev->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block mroce_netdev_nb = {
	.notifier_call = mroce_netdev_event,
};

int mroce_netdev_init(void)
{
	int err;

	err = register_netdevice_notifier(&mroce_netdev_nb);
	if (err)
		pr_err("registering the netdev notifier failed: %d\n", err);
	return err;
}

void mroce_netdev_exit(void)
{
	unregister_netdevice_notifier(&mroce_netdev_nb);
}
