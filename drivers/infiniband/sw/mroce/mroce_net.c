// SPDX-License-Identifier: GPL-2.0
/*
 * UDP tunnel sockets, routes and the IP/UDP encapsulation of mroce packets.
 *
 * Receive: every network namespace that has an mroce device gets one IPv4
 * and one IPv6 kernel UDP socket on the mroce port (module parameter
 * udp_port), refcounted by its devices. The UDP stack verifies the checksum
 * and hands each datagram to mroce_encap_recv() in softirq; that reads the
 * outer addresses and the ECN field while the IP header is still in place
 * and passes the mroce header on to mroce_rx_skb().
 *
 * Transmit: the transport builds the mroce header and payload; this file
 * adds UDP (checksum offloaded as CHECKSUM_PARTIAL) and IP, with a route
 * looked up in the device's namespace with the device's netdev as the
 * egress and cached per path (the source port is part of the flow, so an
 * ECMP fabric may route each path differently).
 */
#include <linux/etherdevice.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/udp.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_fib.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/neighbour.h>
#include <net/net_namespace.h>
#include <net/netevent.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/sch_generic.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

#include "mroce_counters.h"
#include "mroce_memo.h"
#include "mroce_peer.h"

static ushort mroce_udp_port = MROCE_UDP_PORT_DEFAULT;
module_param_named(udp_port, mroce_udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port, "UDP port of the mroce transport (default 61791)");

/* The sockets of one namespace; lives in the namespace's generic area. */
struct mroce_netns {
	struct net	*net;
	unsigned int	users;		/* devices in this namespace */
	struct socket	*sock4;
	struct socket	*sock6;		/* NULL when IPv6 is unavailable */
};

static unsigned int mroce_net_id;
static DEFINE_MUTEX(mroce_net_mutex);	/* users, sock4, sock6 */

u16 mroce_net_port(void)
{
	return mroce_udp_port;
}

/* Largest mroce packet (UDP payload) the netdev carries unfragmented. */
u16 mroce_net_mtu(const struct mroce_dev *mdev, bool v6)
{
	u32 mtu = READ_ONCE(mdev->ndev->mtu);
	u32 hdrs = (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
		   sizeof(struct udphdr);

	mtu = mtu > hdrs ? mtu - hdrs : 0;
	return min_t(u32, mtu, U16_MAX);
}

static int mroce_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	/*
	 * Every field is set below: no stack zeroing for it on every packet
	 * (INIT_STACK_ALL_ZERO, as Debian's kernels are built).
	 */
	struct mroce_rx_meta meta __uninitialized;

	meta.net = sock_net(sk);
	meta.dev = skb->dev;
	meta.sport = udp_hdr(skb)->source;
	/* ECN first: the IP header is about to be pulled off. */
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		meta.v6 = false;
		meta.ce = INET_ECN_is_ce(iph->tos);
		ipv6_addr_set_v4mapped(iph->saddr, &meta.saddr);
		ipv6_addr_set_v4mapped(iph->daddr, &meta.daddr);
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		meta.v6 = true;
		meta.ce = INET_ECN_is_ce(ipv6_get_dsfield(ip6h));
		meta.saddr = ip6h->saddr;
		meta.daddr = ip6h->daddr;
	}
	__skb_pull(skb, sizeof(struct udphdr));
	mroce_rx_skb(skb, &meta);
	return 0;
}

static struct socket *mroce_sock_open(struct net *net, bool v6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = mroce_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(mroce_udp_port),
	};
	struct socket *sock;
	int err;

	if (v6) {
		cfg.family = AF_INET6;
		cfg.local_ip6 = in6addr_any;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
		cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}
	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sock, &tcfg);
	return sock;
}

static void mroce_socks_close(struct mroce_netns *nn)
{
	if (nn->sock6)
		udp_tunnel_sock_release(nn->sock6);
	if (nn->sock4)
		udp_tunnel_sock_release(nn->sock4);
	nn->sock6 = NULL;
	nn->sock4 = NULL;
}

/**
 * mroce_net_get() - make sure the device's namespace has our sockets
 * @mdev: a device being set up (process context)
 *
 * Return: 0, or the error of opening the IPv4 socket (port in use, ...).
 */
int mroce_net_get(struct mroce_dev *mdev)
{
	struct net *net = dev_net(mdev->ndev);
	struct mroce_netns *nn = net_generic(net, mroce_net_id);
	struct socket *sock;
	int err = 0;

	mutex_lock(&mroce_net_mutex);
	if (!nn->users) {
		sock = mroce_sock_open(net, false);
		if (IS_ERR(sock)) {
			err = PTR_ERR(sock);
			pr_err("cannot open UDP port %u: %d\n", mroce_udp_port,
			       err);
			goto out;
		}
		nn->sock4 = sock;
		sock = mroce_sock_open(net, true);
		if (IS_ERR(sock))
			pr_info("no IPv6 socket on UDP port %u (%ld): IPv4 only\n",
				mroce_udp_port, PTR_ERR(sock));
		else
			nn->sock6 = sock;
	}
	nn->users++;
	mdev->xport.nn = nn;
out:
	mutex_unlock(&mroce_net_mutex);
	return err;
}

void mroce_net_put(struct mroce_dev *mdev)
{
	struct mroce_netns *nn = mdev->xport.nn;

	if (!nn)
		return;
	mutex_lock(&mroce_net_mutex);
	if (!--nn->users)
		mroce_socks_close(nn);
	mutex_unlock(&mroce_net_mutex);
	mdev->xport.nn = NULL;
}

static __net_init int mroce_netns_init(struct net *net)
{
	struct mroce_netns *nn = net_generic(net, mroce_net_id);

	nn->net = net;
	return 0;
}

static __net_exit void mroce_netns_exit(struct net *net)
{
	struct mroce_netns *nn = net_generic(net, mroce_net_id);

	/*
	 * The namespace's netdevs, and with them our devices, are gone by now
	 * (netdev unregistration waits for the reference each device holds).
	 * Anything left means a device outlived its netdev: don't leak the
	 * sockets of a dead namespace.
	 */
	mutex_lock(&mroce_net_mutex);
	WARN_ON_ONCE(nn->users);
	mroce_socks_close(nn);
	nn->users = 0;
	mutex_unlock(&mroce_net_mutex);
}

static struct pernet_operations mroce_net_ops = {
	.init = mroce_netns_init,
	.exit = mroce_netns_exit,
	.id = &mroce_net_id,
	.size = sizeof(struct mroce_netns),
};

static struct notifier_block mroce_net_neigh_nb;

int mroce_net_init(void)
{
	int err = register_pernet_subsys(&mroce_net_ops);

	if (err)
		return err;
	err = register_netevent_notifier(&mroce_net_neigh_nb);
	if (err)
		unregister_pernet_subsys(&mroce_net_ops);
	return err;
}

void mroce_net_exit(void)
{
	unregister_netevent_notifier(&mroce_net_neigh_nb);
	mroce_net_forget_askers(NULL);
	unregister_pernet_subsys(&mroce_net_ops);
}

/* Payload bytes after the headers; headroom for link, IP and UDP. */
struct sk_buff *mroce_net_alloc_skb(struct mroce_dev *mdev, u32 len, gfp_t gfp)
{
	unsigned int headroom = MROCE_SKB_HEADROOM(mdev->ndev);
	struct sk_buff *skb;

	skb = alloc_skb(headroom + len, gfp);
	if (skb)
		skb_reserve(skb, headroom);
	return skb;
}

/*
 * Route from @laddr to @raddr leaving through the device's netdev, with a
 * reference. The source address is always @laddr: a connection's own, or
 * the one a packet we answer was sent to.
 */
static struct dst_entry *mroce_route(struct net *net, struct mroce_dev *mdev,
				     bool v6, const struct in6_addr *laddr,
				     const struct in6_addr *raddr,
				     __be16 sport)
{
	if (!v6) {
		struct flowi4 fl4 = {
			.flowi4_oif = mdev->ndev->ifindex,
			.flowi4_proto = IPPROTO_UDP,
			.daddr = raddr->s6_addr32[3],
			.saddr = laddr->s6_addr32[3],
			.fl4_sport = sport,
			.fl4_dport = htons(mroce_udp_port),
		};
		struct rtable *rt;

		rt = ip_route_output_key(net, &fl4);
		return IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
	}
	{
		struct flowi6 fl6 = {
			.flowi6_oif = mdev->ndev->ifindex,
			.flowi6_proto = IPPROTO_UDP,
			.daddr = *raddr,
			.saddr = *laddr,
			.fl6_sport = sport,
			.fl6_dport = htons(mroce_udp_port),
		};

		return ip6_dst_lookup_flow(net, NULL, &fl6, NULL);
	}
}

/*
 * The route of one of a connection's paths (or of its control packets),
 * cached for every CPU in peer->dst[]: the cache holds a reference, and a
 * route is replaced or dropped as a whole. Senders use it under RCU
 * without taking one of their own, as ip_queue_xmit() uses a connected
 * socket's: a packet leaves with it as a noref dst, and whatever keeps
 * the packet past the RCU section (a qdisc, the neighbour queue,
 * nf_queue) takes a reference then (skb_dst_force()). A route that went
 * stale (dst_check(): routing changed, the netdev went away) is dropped
 * and looked up again.
 */
struct mroce_route {
	struct dst_entry	*dst;
	u32			cookie;		/* IPv6's dst_check() cookie */
	bool			rt4;		/* a plain IPv4 route: see below */
	struct rcu_head		rcu;
};

static void mroce_route_free(struct mroce_route *r)
{
	/* The dst itself is freed an RCU grace period after its last put. */
	dst_release(r->dst);
	kfree_rcu(r, rcu);
}

/* Behind an empty or stale cache slot: look up, cache, set on @skb. */
static noinline struct dst_entry *
mroce_net_route_slow(struct mroce_peer *peer, unsigned int i, __be16 sport,
		     struct sk_buff *skb)
{
	struct mroce_route *r, *old;
	struct dst_entry *dst;

	dst = mroce_route(peer->net, peer->mdev, peer->v6, &peer->laddr,
			  &peer->raddr, sport);
	if (IS_ERR(dst))
		return dst;
	r = kmalloc(sizeof(*r), GFP_ATOMIC);
	if (!r) {
		skb_dst_set(skb, dst);	/* this packet's alone */
		return dst;
	}
	r->dst = dst;
	r->cookie = peer->v6 ? rt6_get_cookie((struct rt6_info *)dst) : 0;
	/* Not an IPsec bundle, whose check is xfrm's own. */
	r->rt4 = !peer->v6 && dst->ops->family == AF_INET && !dst_xfrm(dst) &&
		 dst->obsolete == DST_OBSOLETE_FORCE_CHK;
	old = unrcu_pointer(xchg(&peer->dst[i], RCU_INITIALIZER(r)));
	if (old)
		mroce_route_free(old);
	skb_dst_set_noref(skb, dst);
	return dst;
}

/*
 * dst_check() of a cached route, a plain IPv4 route's inline: what
 * ipv4_dst_check() (a call per packet) checks -- the route is not obsolete
 * (a PMTU or redirect update, or its netdev went: dst_dev_put()) and
 * routing did not change since it was made (the namespace's route
 * generation, which every route, rule, address or device change bumps:
 * rt_cache_flush()).
 */
static __always_inline bool mroce_route_valid(struct mroce_route *r)
{
	const struct dst_entry *dst = r->dst;

	if (unlikely(!r->rt4))
		return dst_check(r->dst, r->cookie);
	return likely(READ_ONCE(dst->obsolete) == DST_OBSOLETE_FORCE_CHK) &&
	       container_of(dst, struct rtable, dst)->rt_genid ==
	       rt_genid_ipv4(dev_net(dst->dev));
}

/*
 * The route of path slot @i (MROCE_CTL_DST: control packets) for @skb,
 * set on it; inside an RCU read-side section (rcu_read_lock(), or BH
 * disabled) until the packet is handed to IP.
 */
static __always_inline struct dst_entry *
mroce_net_route(struct mroce_peer *peer, unsigned int i, __be16 sport,
		struct sk_buff *skb)
{
	struct mroce_route *r = rcu_dereference_check(peer->dst[i],
						      rcu_read_lock_bh_held());

	if (likely(r)) {
		if (likely(mroce_route_valid(r))) {
			skb_dst_set_noref(skb, r->dst);
			return r->dst;
		}
		if (unrcu_pointer(cmpxchg(&peer->dst[i], RCU_INITIALIZER(r),
					  NULL)) == r)
			mroce_route_free(r);
	}
	return mroce_net_route_slow(peer, i, sport, skb);
}

/**
 * mroce_net_reset_routes() - forget a connection's cached routes
 * @peer: the connection; its netdev or addresses changed, or it is freed
 */
void mroce_net_reset_routes(struct mroce_peer *peer)
{
	struct mroce_route *r;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(peer->dst); i++) {
		r = unrcu_pointer(xchg(&peer->dst[i], NULL));
		if (r)
			mroce_route_free(r);
	}
}

/*
 * ip4_dst_hoplimit() without its own RCU read-side section (a call each
 * way): every caller is inside one (the route's, see mroce_net_route()).
 */
static __always_inline u8 mroce_net_ttl(const struct dst_entry *dst)
{
	u32 ttl = dst_metric_raw(dst, RTAX_HOPLIMIT);

	if (ttl)
		return ttl;
	return READ_ONCE(dev_net(dst->dev)->ipv4.sysctl_ip_default_ttl);
}

/*
 * UDP and IPv4 headers onto an mroce packet whose route is set. Every
 * mroce packet goes with DF (none is larger than mroce_net_mtu()): an
 * atomic datagram, whose ID means nothing to the receiver (RFC 6864 4.1).
 * So the ID is 0, as the IP layer makes it for a DF datagram of an
 * unconnected socket (ip_select_ident_segs()), instead of a
 * per-destination counter hashed and bumped for every packet (a burst
 * segmented on its way numbers its segments from 0). The UDP checksum is
 * left to the device: CHECKSUM_PARTIAL with the pseudo-header sum in
 * place, as udp_set_csum() makes it for a packet without checksum state
 * (every packet we send is a fresh one of ours); validate_xmit_skb()
 * computes it in front of a netdev that cannot, so it is on the wire
 * either way. The IP total length and header checksum are the caller's:
 * a lone packet gets them from ip_local_out(), a burst's segments carry
 * their own.
 */
static __always_inline struct iphdr *
mroce_net_push4(struct sk_buff *skb, const struct dst_entry *dst, __be32 saddr,
		__be32 daddr, __be16 sport, u8 tos)
{
	unsigned int ulen = skb->len + sizeof(struct udphdr);
	struct udphdr *uh;
	struct iphdr *iph;

	iph = skb_push(skb, sizeof(*iph) + sizeof(*uh));
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, sizeof(*iph));
	uh = (struct udphdr *)(iph + 1);
	uh->source = sport;
	uh->dest = htons(mroce_udp_port);
	uh->len = htons(ulen);
	uh->check = ~udp_v4_check(ulen, saddr, daddr, 0);
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = (unsigned char *)uh - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);

	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tos;
	iph->frag_off = htons(IP_DF);
	iph->id = 0;
	iph->ttl = mroce_net_ttl(dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = saddr;
	iph->daddr = daddr;
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	return iph;
}

/* UDP and IPv6 headers onto an mroce packet whose route is set. */
static void mroce_net_push6(struct sk_buff *skb, const struct in6_addr *saddr,
			    const struct in6_addr *daddr, __be16 sport, u8 tos)
{
	struct ipv6hdr *ip6h;
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = sport;
	uh->dest = htons(mroce_udp_port);
	uh->len = htons(skb->len);
	uh->check = 0;
	udp6_set_csum(false, skb, saddr, daddr, skb->len);

	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, tos, 0);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = ip6_dst_hoplimit(skb_dst(skb));
	ip6h->saddr = *saddr;
	ip6h->daddr = *daddr;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
}

/* Encapsulate a packet whose route is set and hand it to the IP layer. */
static __always_inline void mroce_encap_xmit(struct net *net,
					     struct mroce_dev *mdev,
					     struct sk_buff *skb, bool v6,
					     const struct in6_addr *saddr,
					     const struct in6_addr *daddr,
					     __be16 sport, u8 tos)
{
	unsigned int len = skb->len;
	int err;

	if (likely(!v6)) {
		mroce_net_push4(skb, skb_dst(skb), saddr->s6_addr32[3],
				daddr->s6_addr32[3], sport, tos);
		err = ip_local_out(net, NULL, skb);
	} else {
		mroce_net_push6(skb, saddr, daddr, sport, tos);
		err = ip6_local_out(net, NULL, skb);
	}

	if (unlikely(net_xmit_eval(err))) {
		mroce_counter_inc(mdev, MROCE_CNT_SEND_ERR);
		return;
	}
	mroce_counter_inc(mdev, MROCE_CNT_SENT_PKTS);
	mroce_counter_add(mdev, MROCE_CNT_SENT_BYTES, len);
}

/*
 * The peer acknowledged data of ours since the last packet: this one
 * confirms the neighbour (ip_finish_output2(), as a TCP socket's
 * sk_dst_confirm() does), so the entry stays REACHABLE while the
 * connection makes progress instead of being re-probed by ARP.
 */
static __always_inline void mroce_net_confirm(struct mroce_peer *peer,
					      struct sk_buff *skb)
{
	if (unlikely(READ_ONCE(peer->neigh_confirm))) {
		WRITE_ONCE(peer->neigh_confirm, false);
		skb_set_dst_pending_confirm(skb, 1);
	}
}

/* mroce_net_xmit() with rcu_read_lock() held. */
static __always_inline void mroce_net_xmit_rcu(struct mroce_peer *peer,
					       struct sk_buff *skb)
{
	const struct mroce_skb_cb *cb = mroce_cb(skb);
	__be16 sport = htons(cb->sport);
	struct dst_entry *dst;

	dst = mroce_net_route(peer, cb->dst, sport, skb);
	if (IS_ERR(dst)) {
		mroce_counter_inc(peer->mdev, MROCE_CNT_SEND_ERR);
		kfree_skb(skb);
		return;
	}
	mroce_net_confirm(peer, skb);
	mroce_encap_xmit(peer->net, peer->mdev, skb, peer->v6, &peer->laddr,
			 &peer->raddr, sport, cb->tos);
}

/**
 * mroce_net_xmit() - send one packet the peer built
 * @peer: the connection
 * @skb: mroce header and payload; mroce_cb() says path, port and ECN
 *
 * Process or softirq context, peer->lock not held (the IP layer may take
 * its time, and loopback delivery must not find the lock taken).
 */
void mroce_net_xmit(struct mroce_peer *peer, struct sk_buff *skb)
{
	rcu_read_lock();
	mroce_net_xmit_rcu(peer, skb);
	rcu_read_unlock();
}

/*
 * A burst of packets on one path leaves as one skb: the first packet with
 * the others on its frag_list, marked UDP fraglist GSO. Each keeps its own
 * IP and UDP header, so whoever segments it (the receiving UDP socket after
 * veth, or validate_xmit_skb() in front of a netdev without fraglist GSO)
 * gets exactly the packets we built; the stack in between (netfilter,
 * neighbour, qdisc, veth, the backlog, ip_rcv()) is passed once per burst
 * instead of once per packet. Only on IPv4, and only where the egress
 * device has no queueing discipline: netem, a shaper or a policer would
 * treat the burst as one packet (drop, delay or duplicate all of it).
 */
/*
 * On by default since session 49: with the core's path runs (path_run) a
 * burst carries ~8 packets, and on the quiet host 64 KiB WRITEs at 0 %
 * went 1.52x (8 rounds) and 1.60x (5 of 5 rounds) and SENDs 1.31x the
 * goodput of per-packet sends, as CPU-bound as before
 * (docs/experiments/s49-T-path-runs.md, s49-F-walks-lend-bursts.md). A
 * capture on the netdev (tcpdump, the sniffer of
 * selftests/tools/mroce_inject.c) sees a burst as one frame: tx_burst=1
 * to capture each packet alone. Behind a qdisc (netem, a shaper) packets
 * still leave one by one (mroce_net_may_burst()).
 */
static uint mroce_tx_burst = 32;
module_param_named(tx_burst, mroce_tx_burst, uint, 0644);
MODULE_PARM_DESC(tx_burst,
		 "most packets of one path sent as one GSO skb (default 32; 0/1: each alone)");

#define MROCE_NET_HDRS		(sizeof(struct iphdr) + sizeof(struct udphdr))

/*
 * Most packets of one path mroce_net_xmit_list() sends as one skb: the
 * core's path runs are no longer (mroce_conn_set_burst()).
 */
unsigned int mroce_net_burst(const struct mroce_peer *peer)
{
	return peer->v6 ? 1 : READ_ONCE(mroce_tx_burst);
}

/*
 * @skb may follow @head (and packets of @total bytes with their headers)
 * in a burst: same path, no larger than @head (gso_size, the first
 * packet's size, is what the IP layer checks against the MTU) and the
 * burst's IP length still fits 16 bits.
 */
static bool mroce_net_joins(struct sk_buff *head, struct sk_buff *skb,
			    unsigned int total)
{
	struct mroce_skb_cb *a = mroce_cb(head), *b = mroce_cb(skb);

	return a->dst == b->dst && a->sport == b->sport && a->tos == b->tos &&
	       skb->len <= head->len &&
	       total + skb->len + MROCE_NET_HDRS <= U16_MAX;
}

static bool mroce_net_may_burst(const struct mroce_peer *peer,
				const struct dst_entry *dst)
{
	struct net_device *dev = dst->dev;
	struct Qdisc *q;

	if (peer->v6 || !dev || !(dev->features & NETIF_F_SG))
		return false;
	q = rcu_dereference_bh(dev->qdisc);
	return q && !q->enqueue;	/* noqueue */
}

/* UDP and IPv4 header of one packet of a burst. */
static void mroce_net_push4_burst(struct sk_buff *skb,
				  const struct dst_entry *dst, __be32 saddr,
				  __be32 daddr, __be16 sport, u8 tos)
{
	struct iphdr *iph;

	iph = mroce_net_push4(skb, dst, saddr, daddr, sport, tos);
	iph->tot_len = htons(skb->len);
	ip_send_check(iph);
}

/*
 * Send @head (its route set) and the @n - 1 packets after it in @q as one
 * GSO skb.
 */
static void mroce_net_xmit_burst(struct mroce_peer *peer, struct sk_buff *head,
				 struct sk_buff_head *q, unsigned int n)
{
	const struct dst_entry *dst = skb_dst(head);
	__be16 sport = htons(mroce_cb(head)->sport);
	__be32 src = peer->laddr.s6_addr32[3], dst4 = peer->raddr.s6_addr32[3];
	u8 tos = mroce_cb(head)->tos;
	struct skb_shared_info *sh;
	struct sk_buff *skb, **tail;
	unsigned int bytes = head->len, len0 = head->len, i;
	int err;

	/* First, while the checksum seed is still the first packet's own. */
	mroce_net_push4_burst(head, dst, src, dst4, sport, tos);
	tail = &skb_shinfo(head)->frag_list;
	for (i = 1; i < n; i++) {
		skb = __skb_dequeue(q);
		bytes += skb->len;
		mroce_net_push4_burst(skb, dst, src, dst4, sport, tos);
		*tail = skb;
		tail = &skb->next;
		head->len += skb->len;
		head->data_len += skb->len;
		head->truesize += skb->truesize;
	}
	*tail = NULL;

	/*
	 * The UDP length covers the burst (the receiver's UDP layer trims to
	 * it before it segments); the checksum seed stays the first packet's,
	 * whose length segmentation puts back into its header.
	 */
	udp_hdr(head)->len = htons(head->len - sizeof(struct iphdr));
	sh = skb_shinfo(head);
	sh->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	sh->gso_size = len0;
	sh->gso_segs = n;

	err = ip_local_out(peer->net, NULL, head);
	if (unlikely(net_xmit_eval(err))) {
		mroce_counter_add(peer->mdev, MROCE_CNT_SEND_ERR, n);
		return;
	}
	mroce_counter_add(peer->mdev, MROCE_CNT_SENT_PKTS, n);
	mroce_counter_add(peer->mdev, MROCE_CNT_SENT_BYTES, bytes);
}

/**
 * mroce_net_xmit_list() - send the packets the peer queued, in order
 * @peer: the connection
 * @q: private queue of built packets (mroce_cb() says path, port and ECN);
 *     emptied
 *
 * As mroce_net_xmit() for each; consecutive packets of one path go as a
 * burst where the egress allows it. BH disabled by the caller, which makes
 * the whole call one RCU read-side section (synchronize_rcu() waits for
 * BH-disabled code too): the cached routes and what the IP layer reads
 * under RCU need no rcu_read_lock() of ours, a call each way per call
 * under PREEMPT_RCU.
 */
void mroce_net_xmit_list(struct mroce_peer *peer, struct sk_buff_head *q)
{
	bool bursts = !peer->v6 && READ_ONCE(mroce_tx_burst) >= 2;
	struct sk_buff *skb, *next;

	RCU_LOCKDEP_WARN(!rcu_read_lock_bh_held(),
			 "transmit needs BH disabled");
	while ((skb = __skb_dequeue(q))) {
		struct mroce_skb_cb *cb = mroce_cb(skb);
		__be16 sport = htons(cb->sport);
		unsigned int n = 1, total = skb->len + MROCE_NET_HDRS;
		struct dst_entry *dst;

		next = skb_peek(q);
		if (!bursts || !next || !mroce_net_joins(skb, next, total)) {
			mroce_net_xmit_rcu(peer, skb);
			continue;
		}
		dst = mroce_net_route(peer, cb->dst, sport, skb);
		if (IS_ERR(dst)) {
			mroce_counter_inc(peer->mdev, MROCE_CNT_SEND_ERR);
			kfree_skb(skb);
			continue;
		}
		mroce_net_confirm(peer, skb);
		if (!mroce_net_may_burst(peer, dst)) {
			mroce_encap_xmit(peer->net, peer->mdev, skb, false,
					 &peer->laddr, &peer->raddr, sport,
					 cb->tos);
			continue;
		}
		skb_queue_walk(q, next) {
			if (n >= READ_ONCE(mroce_tx_burst) ||
			    !mroce_net_joins(skb, next, total))
				break;
			total += next->len + MROCE_NET_HDRS;
			n++;
		}
		mroce_net_xmit_burst(peer, skb, q, n);
	}
}

/* Whether @dst reaches its destination directly (no gateway). */
static bool mroce_route_onlink(const struct dst_entry *dst, bool v6)
{
	if (v6)
		return !(container_of(dst, struct rt6_info, dst)->rt6i_flags &
			 RTF_GATEWAY);
	return !container_of(dst, struct rtable, dst)->rt_gw_family;
}

/*
 * The neighbour entry our packets to the sender of @skb leave through,
 * with a reference, or NULL. @confirm: the sender proved it got what we
 * sent, confirm the route's neighbour (any route). An entry is returned
 * only for a directly reachable sender whose frame came in on the device
 * the route leaves by: then the frame's source MAC is the sender's own.
 */
static struct neighbour *mroce_net_sender_neigh(struct mroce_dev *mdev,
						const struct mroce_rx_meta *meta,
						const struct sk_buff *skb,
						bool confirm)
{
	const void *daddr = meta->v6 ? (const void *)&meta->saddr :
				       (const void *)&meta->saddr.s6_addr32[3];
	struct neighbour *n = NULL;
	struct dst_entry *dst;

	dst = mroce_route(meta->net, mdev, meta->v6, &meta->daddr,
			  &meta->saddr, htons(MROCE_SPORT_MIN));
	if (IS_ERR(dst))
		return NULL;
	if (confirm)
		dst_confirm_neigh(dst, daddr);
	if (dst->dev == meta->dev && dst->dev->type == ARPHRD_ETHER &&
	    mroce_route_onlink(dst, meta->v6) &&
	    skb_mac_header_was_set(skb) &&
	    skb_mac_header(skb) + ETH_HLEN <= skb->data)
		n = dst_neigh_lookup(dst, daddr);
	dst_release(dst);
	return n;
}

/* An entry without a usable address (FAILED, INCOMPLETE, new) learns @mac. */
static void mroce_net_learn(struct neighbour *n, const u8 *mac)
{
	if (!(READ_ONCE(n->nud_state) & NUD_VALID))
		neigh_update(n, mac, NUD_STALE, NEIGH_UPDATE_F_OVERRIDE, 0);
}

/**
 * mroce_net_confirm_sender() - the sender of a packet proved we reach it
 * @mdev: the receiving device
 * @meta: the packet's outer addresses
 * @skb: the packet (its Ethernet header is read)
 *
 * For a packet that answers one of ours (a CM REP to our REQ, ...): the
 * peer got what we sent, so the neighbour entry our packets to it leave
 * through is confirmed, as TCP does on forward progress, and stays
 * REACHABLE instead of going DELAY -> PROBE, where lost unicast ARP
 * probes make it FAILED.
 *
 * An entry that is already FAILED or INCOMPLETE (or absent) learns the
 * frame's source MAC as STALE, as ARP learns the sender of a request
 * addressed to us (neigh_event_ns()): only for a directly reachable peer
 * whose frame came in on the device the route leaves by. STALE is still
 * verified by the neighbour code (a unicast probe on use); what it buys
 * is that a QP's RTR, which has the RDMA core resolve the peer's MAC with
 * a 1 s limit (ib_resolve_eth_dmac()), finds an entry right after the
 * REP instead of waiting for a broadcast ARP exchange that loss can
 * delay past that limit. Softirq context.
 */
void mroce_net_confirm_sender(struct mroce_dev *mdev,
			      const struct mroce_rx_meta *meta,
			      const struct sk_buff *skb)
{
	struct neighbour *n = mroce_net_sender_neigh(mdev, meta, skb, true);

	if (n) {
		mroce_net_learn(n, eth_hdr(skb)->h_source);
		neigh_release(n);
	}
}

/*
 * The askers: senders of a CM request (REQ, SIDR REQ) we have not answered
 * yet.
 *
 * The RDMA core resolves an asker's MAC twice with a 1 s limit: when
 * ib_cm takes the REQ (cm_init_av_for_response(); if that fails, the REQ
 * is dropped without a word and the peer resends it about 4 s later), and
 * again when a user-space server's rdma_accept() moves its QP to RTR
 * (ib_resolve_eth_dmac(); if that fails, the server's rdma_accept() fails
 * and the peer is rejected, reason 28). Between the two the entry can
 * fail: it was STALE, DELAY or PROBE when the REQ came, its unicast probes
 * are lost, and it goes FAILED; rdma_cm has sent the peer an MRA, so no
 * REQ resend comes to teach it again, and the RTR then needs one broadcast
 * ARP exchange to succeed within its second.
 *
 * A request proves nothing about our direction, so it never confirms an
 * entry. It does show which MAC the asker sends from, which is all an
 * ARP request addressed to us shows too, and ARP learns that as STALE
 * (neigh_event_ns(), even over a valid entry). So: a request teaches an
 * entry without a usable address the frame's source MAC as STALE, and
 * while the request is unanswered (MROCE_ASKER_MS at most) an entry for
 * the asker that goes FAILED learns it again (a netevent notifier). STALE
 * is verified by the neighbour code before it is trusted for long: used,
 * it goes DELAY, then PROBE by unicast ARP, and FAILED if nothing answers.
 * A gone asker costs a few probes every few seconds until our answer or
 * the limit; a forged REQ can put its MAC in an entry that has none
 * usable, or that fails, for that minute at most -- one forged ARP
 * request does as much at any time. Only a sender that is directly
 * reachable and came in on the device the route leaves by is remembered
 * (mroce_net_sender_neigh()), at most MROCE_ASKERS_MAX of them.
 */
#define MROCE_ASKER_MS		60000	/* rdma_cm's MRA asks for ~68 s */
#define MROCE_ASKERS_MAX	64

struct mroce_asker {
	struct mroce_memo_rec	rec;	/* first: the memo frees it */
	const struct net_device	*dev;	/* compared, never dereferenced */
	struct in6_addr		addr;	/* as mroce_rx_meta's saddr */
	bool			v6;
	u8			mac[ETH_ALEN];
};
static_assert(offsetof(struct mroce_asker, rec) == 0);

/* Full, the oldest asker goes: it has waited longest. */
static DEFINE_MROCE_MEMO(mroce_askers, MROCE_ASKERS_MAX, MROCE_ASKER_MS, true);

/* The unexpired asker @addr of @mdev; expired ones go. */
static struct mroce_asker *mroce_asker_find(struct mroce_dev *mdev, bool v6,
					    const struct in6_addr *addr)
{
	struct mroce_asker *a, *tmp;

	lockdep_assert_held(&mroce_askers.lock);
	mroce_memo_expire(&mroce_askers);
	mroce_memo_for_each(a, tmp, &mroce_askers, rec)
		if (a->rec.mdev == mdev && a->v6 == v6 &&
		    ipv6_addr_equal(&a->addr, addr))
			return a;
	return NULL;
}

/**
 * mroce_net_note_asker() - a CM request came in
 * @mdev: the receiving device
 * @meta: its outer addresses
 * @skb: its packet (the Ethernet header is read)
 *
 * Teaches the neighbour entry towards the sender its MAC if the entry has
 * none usable, and remembers the sender until our answer (see above).
 * Softirq context.
 */
void mroce_net_note_asker(struct mroce_dev *mdev,
			  const struct mroce_rx_meta *meta,
			  const struct sk_buff *skb)
{
	struct neighbour *n = mroce_net_sender_neigh(mdev, meta, skb, false);
	const u8 *mac;
	struct mroce_asker *a;

	if (!n)
		return;
	mac = eth_hdr(skb)->h_source;
	mroce_net_learn(n, mac);
	neigh_release(n);

	spin_lock_bh(&mroce_askers.lock);
	a = mroce_asker_find(mdev, meta->v6, &meta->saddr);
	if (a) {
		mroce_memo_touch(&mroce_askers, &a->rec);
	} else {
		a = kzalloc(sizeof(*a), GFP_ATOMIC);
		if (!a)
			goto out;
		a->v6 = meta->v6;
		a->addr = meta->saddr;
		mroce_memo_add(&mroce_askers, &a->rec, mdev);
	}
	a->dev = meta->dev;
	ether_addr_copy(a->mac, mac);
out:
	spin_unlock_bh(&mroce_askers.lock);
}

/**
 * mroce_net_asker_answered() - we answered a CM request (REP, REJ, SIDR REP)
 * @mdev: the sending device
 * @to: the answer's route (mroce_net_xmit_oneshot())
 *
 * The RTR before a REP is done, so the asker need not be remembered.
 */
void mroce_net_asker_answered(struct mroce_dev *mdev,
			      const struct mroce_rx_meta *to)
{
	struct mroce_asker *a;

	if (mroce_memo_empty(&mroce_askers))
		return;
	spin_lock_bh(&mroce_askers.lock);
	a = mroce_asker_find(mdev, to->v6, &to->saddr);
	if (a)
		mroce_memo_drop(&mroce_askers, &a->rec);
	spin_unlock_bh(&mroce_askers.lock);
}

/* @mdev goes: forget its askers. */
void mroce_net_forget_askers(struct mroce_dev *mdev)
{
	mroce_memo_forget(&mroce_askers, mdev);
}

/* Whether neighbour @n is the entry towards asker @a. */
static bool mroce_asker_is(const struct mroce_asker *a,
			   const struct neighbour *n)
{
	if (n->dev != a->dev)
		return false;
	if (!a->v6)
		return n->tbl->family == AF_INET &&
		       *(const __be32 *)n->primary_key == a->addr.s6_addr32[3];
	return n->tbl->family == AF_INET6 &&
	       ipv6_addr_equal((const struct in6_addr *)n->primary_key,
			       &a->addr);
}

/*
 * A neighbour entry changed state: one towards an unanswered asker that
 * went FAILED learns the asker's MAC again. The neighbour code calls this
 * with the entry unlocked; the update notifies again, as STALE.
 */
static int mroce_net_neigh_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	struct neighbour *n = ptr;
	struct mroce_asker *a, *tmp;
	bool found = false;
	u8 mac[ETH_ALEN];

	if (event != NETEVENT_NEIGH_UPDATE || mroce_memo_empty(&mroce_askers) ||
	    READ_ONCE(n->nud_state) != NUD_FAILED || READ_ONCE(n->dead))
		return NOTIFY_DONE;
	spin_lock_bh(&mroce_askers.lock);
	mroce_memo_for_each(a, tmp, &mroce_askers, rec) {
		if (mroce_memo_live(&mroce_askers, &a->rec) &&
		    mroce_asker_is(a, n)) {
			ether_addr_copy(mac, a->mac);
			found = true;
			break;
		}
	}
	spin_unlock_bh(&mroce_askers.lock);
	if (found)
		mroce_net_learn(n, mac);
	return NOTIFY_DONE;
}

static struct notifier_block mroce_net_neigh_nb = {
	.notifier_call = mroce_net_neigh_event,
};

/* Reply to the sender of a received packet without a connection (NAK). */
void mroce_net_xmit_oneshot(struct mroce_dev *mdev,
			    const struct mroce_rx_meta *meta,
			    struct sk_buff *skb)
{
	__be16 sport = htons(get_random_u32_inclusive(MROCE_SPORT_MIN,
						      MROCE_SPORT_MAX));
	struct dst_entry *dst;

	dst = mroce_route(meta->net, mdev, meta->v6, &meta->daddr,
			  &meta->saddr, sport);
	if (IS_ERR(dst)) {
		mroce_counter_inc(mdev, MROCE_CNT_SEND_ERR);
		kfree_skb(skb);
		return;
	}
	skb_dst_set(skb, dst);
	mroce_encap_xmit(meta->net, mdev, skb, meta->v6, &meta->daddr,
			 &meta->saddr, sport, 0);
}
