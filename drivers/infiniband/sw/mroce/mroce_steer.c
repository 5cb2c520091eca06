// SPDX-License-Identifier: GPL-2.0
/*
 * Receive steering (module parameter rx_spread, default on).
 *
 * veth, loopback and RPS-less netdevs deliver a packet on the CPU that sent
 * it, so the receive of a connection's data, its ACK, the ACK's processing
 * and the transmissions it clocks all run on the sender's tx_cpu while the
 * other CPUs idle or busy-poll. With rx_spread a bulk data packet is
 * handled on the next online CPU after the one it arrived on (placement,
 * completions and the ACK run there), and an ACK or NAK that may release
 * data on its peer's tx_cpu (what it releases must leave from there
 * anyway): what RPS does, inside the driver. This file only chooses the
 * CPU and keeps the per-flow books; mroce_rx.c's per-CPU queue (the one
 * rx_burst uses) takes the packet there.
 *
 * A packet that waits for an answer stays where it arrived, if its flow is
 * idle: a data packet with AR and a PROBE (a ping-pong's, a tail probe's:
 * the sender waits for their ACK), an ACK or NAK while its peer has nothing
 * queued to send (nothing for tx_cpu to do). A hop would only add an IPI
 * and a tasklet to the round trip -- and the tasklet may wait for
 * ksoftirqd, long enough for a probe timeout (session 12: twice the PTOs
 * per 64 B latency run while PROBEs and ACKs still hopped).
 *
 * Order: a path is FIFO and its receiver takes a PSN out of order for a
 * loss (SACK gap, resend). So the packets of one kind of one peer (a flow,
 * struct mroce_rx_flow) are handled on one CPU at a time, in arrival order:
 * the flow moves only when none of its packets waits or runs anywhere (the
 * RFS rule), and a packet whose flow's CPU is the one it arrived on is
 * handled at once only then; otherwise it queues behind them. Session 11's
 * prototype, without this rule, made up to 260 SACK gaps per bench row at
 * 0 % loss (docs/transport.md). The flow's CPU and its count share one
 * atomic word, so taking a flow is one compare-and-swap, no lock.
 *
 * A packet that stays here while its flow is idle is handled at once and
 * not counted: no atomic, no lock (the ping-pong's path; session 12 paid a
 * spinlock and two atomics for it). Uncounted, it does not keep the flow
 * here while it runs; what another CPU takes meanwhile arrived at the same
 * time on another CPU, and packets sent from two CPUs at once have no
 * order to keep. What arrives after it on this CPU comes after it anyway:
 * a CPU handles its arrivals one at a time.
 */
#include <linux/moduleparam.h>

#include "mroce_peer.h"
#include "mroce_steer.h"

static bool mroce_rx_spread = true;
module_param_named(rx_spread, mroce_rx_spread, bool, 0644);
MODULE_PARM_DESC(rx_spread,
		 "handle received bulk data on the next CPU and ACKs on the sending CPU, in order per connection (default on)");

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
static int mroce_steer_take(struct mroce_rx_flow *flow, int want)
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

/* A packet of @flow was handled. */
static void mroce_steer_flow_done(struct mroce_rx_flow *flow)
{
	/*
	 * Its effects before the count: a CPU that sees the flow idle and
	 * moves it handles the next packet after this one.
	 */
	smp_mb__before_atomic();
	atomic_dec(&flow->state);
}

/**
 * mroce_steer_done() - a steered packet was handled (or dropped)
 * @cookie: mroce_steer_pick()'s
 *
 * Under the RCU read lock; the burst may still hold the peer's lock.
 */
void mroce_steer_done(u64 cookie)
{
	struct mroce_peer *peer = mroce_peer_find_id(cookie >> 8);

	/* Gone meanwhile: nobody steers to its flows any more. */
	if (peer)
		mroce_steer_flow_done(&peer->rx_flow[cookie & 0xff]);
}

/*
 * The CPU @skb's flow should go to if it may move: a packet that waits for
 * an answer, and an ACK that releases nothing, stay here.
 */
static int mroce_steer_want(const struct mroce_peer *peer, u8 kind, u8 op,
			    u16 flags, int here)
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
 * Softirq, under the RCU read lock.
 */
void mroce_steer_pick(struct sk_buff *skb, struct mroce_steer_to *to)
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
