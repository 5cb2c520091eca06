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
