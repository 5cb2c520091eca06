// SPDX-License-Identifier: GPL-2.0
/*
 * Keep rdma_rxe out for as long as mroce is loaded (why: see mroce.h).
 *
 * rdma_rxe cannot load without binding UDP port 4791 (the RoCE v2 port) in
 * init_net for IPv4 and IPv6, so we hold exactly those two bindings from
 * module init to exit. Whichever of the two modules loads second fails its
 * bind and refuses to load; we explain why in the kernel log.
 */
#include <linux/atomic.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_verbs.h>

#include "mroce.h"

static struct socket *mroce_guard_sock4;
static struct socket *mroce_guard_sock6;
static atomic_long_t mroce_guard_dropped;

/*
 * Our transport does not speak IBA RoCE v2, so anything arriving on 4791 is
 * not for us: drop it instead of letting it queue on the guard socket.
 */
static int mroce_guard_rcv(struct sock *sk, struct sk_buff *skb)
{
	atomic_long_inc(&mroce_guard_dropped);
	kfree_skb(skb);
	return 0;
}

static void mroce_explain_busy(int family, int err)
{
	const char *fam = family == AF_INET ? "IPv4" : "IPv6";
	struct sock *sk;

	if (err != -EADDRINUSE) {
		pr_err("cannot bind UDP port %u (%s): %d\n", ROCE_V2_UDP_DPORT,
		       fam, err);
		return;
	}

	sk = family == AF_INET ?
		mroce_compat_udp4_lookup(&init_net, htons(ROCE_V2_UDP_DPORT)) :
		NULL;
	if (sk) {
		bool kernel_tunnel = sk->sk_kern_sock && udp_sk(sk)->encap_type;

		sock_put(sk);
		if (!kernel_tunnel) {
			pr_err("UDP port %u is in use by a user-space socket (see: ss -uanp 'sport = :%u'); mroce holds that port to keep rdma_rxe out and cannot load\n",
			       ROCE_V2_UDP_DPORT, ROCE_V2_UDP_DPORT);
			return;
		}
	}
	pr_err("UDP port %u (%s) is held by %s; mroce and rdma_rxe share the rxe user ABI and cannot run together: rmmod rdma_rxe first\n",
	       ROCE_V2_UDP_DPORT, fam,
	       sk ? "a kernel UDP tunnel, most likely rdma_rxe" :
		    "another socket (rdma_rxe if it is loaded)");
}

static int mroce_guard_bind(struct udp_port_cfg *cfg, struct socket **sockp)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = mroce_guard_rcv,
	};
	int err;

	cfg->local_udp_port = htons(ROCE_V2_UDP_DPORT);
	err = udp_sock_create(&init_net, cfg, sockp);
	if (err)
		return err;
	setup_udp_tunnel_sock(&init_net, *sockp, &tcfg);
	return 0;
}

int mroce_exclusive_init(void)
{
	struct udp_port_cfg cfg4 = { .family = AF_INET };
	struct udp_port_cfg cfg6 = {
		.family = AF_INET6,
		.ipv6_v6only = 1,
	};
	int err;

	err = mroce_guard_bind(&cfg4, &mroce_guard_sock4);
	if (err) {
		mroce_explain_busy(AF_INET, err);
		return err;
	}

	err = mroce_guard_bind(&cfg6, &mroce_guard_sock6);
	if (err == -EAFNOSUPPORT || err == -EPFNOSUPPORT) {
		/* IPv6 disabled: rdma_rxe cannot bind it either. */
		mroce_guard_sock6 = NULL;
		return 0;
	}
	if (err) {
		mroce_explain_busy(AF_INET6, err);
		udp_tunnel_sock_release(mroce_guard_sock4);
		mroce_guard_sock4 = NULL;
		return err;
	}
	return 0;
}

void mroce_exclusive_exit(void)
{
	long dropped = atomic_long_read(&mroce_guard_dropped);

	if (mroce_guard_sock6)
		udp_tunnel_sock_release(mroce_guard_sock6);
	udp_tunnel_sock_release(mroce_guard_sock4);
	mroce_guard_sock4 = NULL;
	mroce_guard_sock6 = NULL;
	if (dropped)
		pr_info("dropped %ld packets sent to UDP port %u (IBA RoCE v2)\n",
			dropped, ROCE_V2_UDP_DPORT);
}
