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
 * anyway): what RPS does, inside the driver. This file and mroce_steer.h
 * (the choice, inline in the receive) only choose the CPU and keep the
 * per-flow books; mroce_rx.c's per-CPU queue (the one
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

bool mroce_rx_spread = true;
module_param_named(rx_spread, mroce_rx_spread, bool, 0644);
MODULE_PARM_DESC(rx_spread,
		 "handle received bulk data on the next CPU and ACKs on the sending CPU, in order per connection (default on)");

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
