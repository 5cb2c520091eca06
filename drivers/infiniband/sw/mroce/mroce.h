/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mroce: an RDMA device over an Ethernet net device, carrying RDMA over a
 * loss-tolerant multipath UDP transport. Shared definitions of the module.
 *
 * Files
 * -----
 *   mroce_main.c       module init/exit, `rdma link add` (rdma_link_ops)
 *   mroce_dev.c        ib_device allocation, registration, queries, caps
 *   mroce_netdev.c     netdev notifier: unregister, up/down, MTU
 *   mroce_exclusive.c  keeps rdma_rxe out (shared driver id, see below)
 *   mroce_counters.c   hw counters (per-CPU; `rdma statistic`, sysfs)
 *   mroce_trace.c      tracepoints (mroce_trace.h), read by eBPF/perf
 *   core/              pure protocol core shared with user space
 *
 * A feature (verbs, transport, counters) adds its own files to Kbuild's
 * mroce-y, its ib_device_ops table to mroce_feature_ops[] in mroce_dev.c,
 * its per-device state to struct mroce_dev, its per-device setup to
 * mroce_dev_add() (before ib_register_device()) and its teardown to
 * mroce_dealloc_driver(), and module-wide setup to mroce_init()/mroce_exit()
 * in mroce_main.c (ordered, with goto unwind).
 *
 * Why rdma_rxe must never be loaded with us
 * -----------------------------------------
 * mroce registers with driver id RDMA_DRIVER_RXE and uverbs ABI 2 so that
 * rdma-core's stock rxe provider binds to it. rdma_rxe looks its devices up
 * by (netdev, RDMA_DRIVER_RXE) and container_of()s the result into its own
 * struct, and its module exit unregisters every RDMA_DRIVER_RXE device, so
 * the two sharing a kernel would corrupt memory. mroce_exclusive.c holds
 * UDP port 4791 (rdma_rxe's tunnel port) for the module's lifetime: whoever
 * loads second fails to bind and refuses to load. Code here may therefore
 * assume every RDMA_DRIVER_RXE device is an mroce device, but still checks
 * ops.owner where it dereferences one (mroce_dev_get_by_netdev()).
 *
 * Locking strategy
 * ----------------
 * Lock order, outermost first:
 *
 *   1. mroce_link_mutex   (mroce_main.c, global, sleeping)
 *      Serialises device creation: the "does this netdev already have an
 *      RDMA device / is this name taken" checks and the registration that
 *      follows. Never taken from a netdev notifier or with RTNL held.
 *   2. RTNL               (held by the networking core around notifiers)
 *      Every write of port state (mroce_port_sync()) happens under RTNL, so
 *      the notifier and device creation see netdev state changes in one
 *      order and cannot lose an up/down or MTU event.
 *   3. mroce_dev.port_lock (per device, spinlock, leaf)
 *      Protects struct mroce_port. Readers (query_port, later the data
 *      path) take it alone; writers also hold RTNL. Nothing is called with
 *      it held: no allocation, no sleeping, no calls into the RDMA core
 *      (events are dispatched after it is dropped).
 *   4. the memo locks      (mroce_memo.h, global, BH spinlocks)
 *      mroce_dreqs.lock: the CM DREQs the MAD tunnel keeps until their
 *      DREP (mroce_mad.c); mroce_askers.lock: the senders of CM requests
 *      not answered yet (mroce_net.c). Taken with no other mroce lock held
 *      (the UD send and receive paths run outside the connections' locks).
 *      Under mroce_dreqs.lock only an skb allocation and the IP transmit of
 *      a kept copy; under mroce_askers.lock only the list's own work and
 *      an atomic allocation.
 *
 * The RDMA core calls our ops with its own locks (devices_rwsem,
 * unregistration_lock) held, so no op may take mroce_link_mutex. Ops may
 * take RTNL (ib_get_eth_speed() does) only where the core does not hold it.
 * Functions that need a lock assert it with lockdep_assert_held() or
 * ASSERT_RTNL().
 *
 * Lifetime
 * --------
 * A struct mroce_dev lives from ib_alloc_device() in mroce_dev_add() until
 * the RDMA core calls ops.dealloc_driver (after the last op returned). It
 * holds a tracked reference on its netdev for that whole time, so ops may
 * dereference mdev->ndev freely; the netdev's own unregistration waits for
 * that reference, which NETDEV_UNREGISTER releases by queueing the device's
 * unregistration.
 */
#ifndef MROCE_H
#define MROCE_H

#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mroce_xport.h"

#define MROCE_DRV_NAME		"mroce"

/* rdma-core's rxe provider binds to this driver id and ABI version. */
#define MROCE_DRIVER_ID		RDMA_DRIVER_RXE
#define MROCE_UVERBS_ABI_VERSION 2

#define MROCE_PORT		1	/* IB ports are numbered from 1 */
#define MROCE_GID_TBL_LEN	128
#define MROCE_MAX_IB_MTU	IB_MTU_4096

/*
 * Bytes a packet carries besides RDMA payload: the largest IP header (IPv6)
 * and UDP, plus our transport headers. The transport replaces
 * MROCE_XPORT_HDR_MAX with the real worst case from docs/protocol.md; the
 * active MTU every consumer sees follows from it (mroce_mtu_from_netdev()).
 */
#define MROCE_IP_UDP_HDR_MAX	(40 + 8)
#define MROCE_XPORT_HDR_MAX	64
#define MROCE_WIRE_OVERHEAD	(MROCE_IP_UDP_HDR_MAX + MROCE_XPORT_HDR_MAX)

/* State of our single port, derived from the netdev. See port_lock. */
struct mroce_counters;

struct mroce_port {
	enum ib_port_state	state;
	enum ib_mtu		active_mtu;	/* 0 when the netdev MTU is too small */
	unsigned int		netdev_mtu;
	unsigned int		carrier_downs;	/* ndev->carrier_down_count, last sync */
};

struct mroce_dev {
	struct ib_device	ibdev;		/* must stay first: ib_alloc_device() */

	struct net_device	*ndev;
	netdevice_tracker	ndev_tracker;

	/* What we advertise; see mroce_init_caps() for the rules. */
	struct ib_device_attr	attr;

	spinlock_t		port_lock;	/* protects port */
	struct mroce_port	port;

	/* Verbs objects (mroce_verbs.h): lookup tables, allocation cursors. */
	struct xarray		qp_xa;		/* qpn -> struct mroce_qp */
	struct xarray		mr_xa;		/* key >> 8 -> struct mroce_mr */
	struct xarray		ah_xa;		/* ah_num -> struct mroce_ah */
	struct xarray		srq_xa;		/* srq_num -> struct mroce_srq */
	u32			qp_next, mr_next, ah_next, srq_next;
	atomic_t		num_pd, num_cq, num_qp;

	/* hw counters, per CPU (mroce_counters.h); no lock. */
	struct mroce_counters __percpu *counters;

	/* The wire transport (mroce_xport.h): connections, sockets. */
	struct mroce_xport_dev	xport;
};

struct mroce_ucontext {
	struct ib_ucontext	ibuc;
};

static inline struct mroce_dev *to_mdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mroce_dev, ibdev);
}

/* mroce_main.c */
extern struct mutex mroce_link_mutex;

/* mroce_dev.c */
int mroce_dev_add(const char *ibdev_name, struct net_device *ndev);
struct mroce_dev *mroce_dev_get_by_netdev(struct net_device *ndev);
void mroce_port_sync(struct mroce_dev *mdev, bool notify);
enum ib_mtu mroce_mtu_from_netdev(unsigned int netdev_mtu);

/*
 * mroce_comp.c: what a device-level file calls (the netdev notifier). The
 * transport's files share their internal API, which takes a connection
 * (struct mroce_peer), in mroce_peer.h.
 */
void mroce_comp_wait_polled(struct mroce_dev *mdev);

/* mroce_netdev.c */
int mroce_netdev_init(void);
void mroce_netdev_exit(void);

/* mroce_exclusive.c */
int mroce_exclusive_init(void);
void mroce_exclusive_exit(void);

#endif /* MROCE_H */
