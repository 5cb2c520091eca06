/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version and kernel-configuration differences, in one place.
 *
 * Kbuild force-includes this file ahead of every mroce translation unit and
 * defines MROCE_HAVE_* from feature probes (see Kbuild), so the rest of the
 * module is written against the newest API with no #if of its own. Each shim
 * names the kernel that made it unnecessary.
 */
#ifndef MROCE_COMPAT_H
#define MROCE_COMPAT_H

/* Module-wide log prefix; must precede every kernel header. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>

/*
 * get_unaligned_be32() and friends: <asm/unaligned.h> became
 * <linux/unaligned.h> in 6.12 (the old name is gone). Included here for
 * every translation unit, so no other file names either header.
 */
#ifdef MROCE_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* netdev_hold()/netdev_put() with a reference tracker arrived in 6.0. */
#ifndef MROCE_HAVE_NETDEV_HOLD
static inline void mroce_compat_netdev_hold(struct net_device *dev,
					    void *tracker, gfp_t gfp)
{
	dev_hold(dev);
}

static inline void mroce_compat_netdev_put(struct net_device *dev,
					   void *tracker)
{
	dev_put(dev);
}

#define netdev_hold(dev, tracker, gfp) mroce_compat_netdev_hold(dev, tracker, gfp)
#define netdev_put(dev, tracker) mroce_compat_netdev_put(dev, tracker)
#endif

/*
 * ib_device_ops.create_cq is passed the caller's uverbs_attr_bundle (NULL
 * for a kernel CQ) since 6.11; 6.1 passes that bundle's driver_udata.
 * mroce_create_cq() takes the bundle; mroce_create_cq_op is what goes into
 * the ops table.
 */
#ifdef MROCE_HAVE_CREATE_CQ_ATTRS
#define mroce_create_cq_op mroce_create_cq
#else
#include <rdma/uverbs_ioctl.h>

int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct uverbs_attr_bundle *attrs);

static inline int mroce_compat_create_cq(struct ib_cq *ibcq,
					 const struct ib_cq_init_attr *attr,
					 struct ib_udata *udata)
{
	return mroce_create_cq(ibcq, attr, udata ?
			       rdma_udata_to_uverbs_attr_bundle(udata) : NULL);
}

#define mroce_create_cq_op mroce_compat_create_cq
#endif

/*
 * A tracepoint's __assign_str() takes only the field since 6.10 (the source
 * is the one its __string() names); 6.1 wants the source again.
 */
#ifdef MROCE_HAVE_ASSIGN_STR_1
#define mroce_assign_str(dst, src) __assign_str(dst)
#else
#define mroce_assign_str(dst, src) __assign_str(dst, src)
#endif

/*
 * udp4_lib_lookup() is exported only when the kernel has NF_TPROXY or
 * NF_SOCKET. Without it mroce_exclusive.c cannot tell who holds UDP port
 * 4791 and its message says so. Returns a held socket or NULL.
 */
#include <net/udp.h>

static inline struct sock *mroce_compat_udp4_lookup(struct net *net,
						    __be16 port)
{
#ifdef MROCE_HAVE_UDP4_LIB_LOOKUP
	struct sock *sk;

	rcu_read_lock();
	sk = udp4_lib_lookup(net, htonl(INADDR_LOOPBACK), htons(9),
			     htonl(INADDR_LOOPBACK), port, 0);
	rcu_read_unlock();
	return sk;
#else
	return NULL;
#endif
}

#endif /* MROCE_COMPAT_H */
