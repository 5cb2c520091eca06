/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Receive steering (rx_spread, mroce_steer.c): which CPU handles a received
 * packet. The per-CPU queue that takes it there is mroce_rx.c's. The choice
 * (mroce_steer_pick() and its helpers) is here, inline in the receive.
 */
#ifndef MROCE_STEER_H
#define MROCE_STEER_H

#include <linux/skbuff.h>

#include "mroce_peer.h"

extern bool mroce_rx_spread;	/* module parameter rx_spread */

/* Where mroce_steer_pick() sends a packet. */
struct mroce_steer_to {
	u64	cookie;	/* queued: mroce_steer_done() it once handled */
	/* the connection its header names, if looked up (caller's RCU) */
	struct mroce_peer *peer;
	int	cpu;	/* queue it there */
	bool	now;	/* handle it here at once, not queued */
};

void mroce_steer_done(u64 cookie);

/*
 * struct mroce_rx_flow's state: the CPU above, the packets queued or being
 * handled below. A flow waits on one CPU at a time, so the count stays
 * under one queue (MROCE_RX_QLEN) plus a packet per CPU.
 */
#define MROCE_STEER_CPU_SHIFT	16
#define MROCE_STEER_BUSY	GENMASK(MROCE_STEER_CPU_SHIFT - 1, 0)

/*
 * Count a packet of @flow in; return its CPU, moved to @want if the flow
 * was idle (the CPU bits mean nothing while it is).
 */
static inline int mroce_steer_take(struct mroce_rx_flow *flow, int want)
{
	int old = atomic_read(&flow->state);
	int cpu;

	BUILD_BUG_ON(CONFIG_NR_CPUS >= 1 << (31 - MROCE_STEER_CPU_SHIFT));
	do {
		cpu = old & MROCE_STEER_BUSY ? old >> MROCE_STEER_CPU_SHIFT :
					       want;
	} while (!atomic_try_cmpxchg(&flow->state, &old,
				     (cpu << MROCE_STEER_CPU_SHIFT) |
				     ((old & MROCE_STEER_BUSY) + 1)));
	return cpu;
}

/*
 * The CPU @skb's flow should go to if it may move: a packet that waits for
 * an answer, and an ACK that releases nothing, stay here.
 */
static inline int mroce_steer_want(const struct mroce_peer *peer, u8 kind,
				   u8 op, u16 flags, int here)
{
	int cpu;

	if (kind == MROCE_RX_FLOW_ACK) {
		/* Lockless: a hint; the flow rule keeps the order. */
		if (list_empty(&peer->tx_list))
			return here;
		cpu = READ_ONCE(peer->tx_cpu);
		return cpu_online(cpu) ? cpu : here;
	}
	if (op == MROCE_OP_PROBE || (flags & MROCE_F_AR))
		return here;
	cpu = cpumask_next(here, cpu_online_mask);
	return cpu < nr_cpu_ids ? cpu : cpumask_first(cpu_online_mask);
}

/**
 * mroce_steer_pick() - the CPU a received packet is handled on
 * @skb: data at the mroce header
 * @to: filled in. At once on this CPU, no cookie: rx_spread off, one
 *	CPU, a packet of no flow (handshake, datagrams, an unknown
 *	connection: the receive path counts and answers those), or one that
 *	stays here while its flow is idle. Else queued on @to->cpu, and
 *	mroce_steer_done(@to->cookie) once handled. @to->peer: the
 *	connection the header names, NULL if none was looked up; valid
 *	while the caller's RCU read lock lasts.
 *
 * Softirq, under the RCU read lock. Inline in its one caller,
 * mroce_rx_skb(): a call per received packet less (4 per 64 B round trip;
 * docs/experiments/s45-T-locks.md).
 */
static __always_inline void mroce_steer_pick(struct sk_buff *skb,
					     struct mroce_steer_to *to)
{
	int here = smp_processor_id();
	struct mroce_rx_flow *flow;
	struct mroce_peer *peer;
	int want;
	const u8 *h;
	u8 op, kind;

	to->cookie = 0;
	to->peer = NULL;
	to->cpu = here;
	to->now = true;
	if (!READ_ONCE(mroce_rx_spread) || num_online_cpus() < 2 ||
	    !pskb_may_pull(skb, MROCE_COMMON_LEN))
		return;
	h = skb->data;
	op = h[1];
	if (mroce_op_is_data(op) || op == MROCE_OP_PROBE)
		kind = MROCE_RX_FLOW_DATA;
	else if (op == MROCE_OP_ACK || op == MROCE_OP_NAK)
		kind = MROCE_RX_FLOW_ACK;
	else
		return;
	peer = mroce_peer_find_id(get_unaligned_be32(h + 4));
	if (!peer)
		return;
	/* Handled here and now: mroce_rx_one() need not look it up again. */
	to->peer = peer;
	flow = &peer->rx_flow[kind];
	want = mroce_steer_want(peer, kind, op, get_unaligned_be16(h + 2),
				here);
	if (want == here && !(atomic_read(&flow->state) & MROCE_STEER_BUSY))
		return;
	/* If it went idle since the read: queued here, still in order. */
	to->cpu = mroce_steer_take(flow, want);
	to->now = false;
	to->cookie = (u64)peer->id << 8 | kind;
}

#endif /* MROCE_STEER_H */
