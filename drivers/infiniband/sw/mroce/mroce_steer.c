// SPDX-License-Identifier: GPL-2.0
/*
 * Receive steering (module parameter rx_spread, default off).
 *
 * veth, loopback and RPS-less netdevs deliver a packet on the CPU that sent
 * it, so the receive of a connection's data, its ACK, the ACK's processing
 * and the transmissions it clocks all run on the sender's tx_cpu while the
 * other CPUs idle or busy-poll. With rx_spread a data or PROBE packet is
 * handled on the next online CPU after the one it arrived on (placement,
 * completions and the ACK run there), and an ACK or NAK on its peer's
 * tx_cpu (the transmissions it releases must leave from there anyway), each
 * through a per-CPU queue and a tasklet that an IPI schedules: what RPS
 * does, inside the driver.
 *
 * Order: a path is FIFO and its receiver takes a PSN out of order for a
 * loss (SACK gap, resend). So the packets of one kind of one peer (a flow,
 * struct mroce_rx_flow) are handled on one CPU at a time, in arrival order:
 * the flow moves only when none of its packets waits or runs anywhere (the
 * RFS rule), and a packet whose flow's CPU is the one it arrived on is
 * handled at once only then; otherwise it queues behind them. Session 11's
 * prototype, without this rule, made up to 260 SACK gaps per bench row at
 * 0 % loss (docs/transport.md). A packet that asks for an immediate ACK
 * (AR: a ping-pong's) is handled where it arrived if its flow is idle: a
 * hop would only add latency.
 *
 * A steered batch is handled in bursts (a connection's consecutive packets
 * under one hold of its lock, ACKs every ack_every packets as always, an
 * owed ACK at the end of the batch): the hop has already put the packets
 * behind the stack's receive pass, so batching delays them no further.
 */
#include <asm/unaligned.h>
#include <linux/interrupt.h>
#include <linux/moduleparam.h>
#include <linux/smp.h>

#include "mroce_peer.h"
#include "mroce_steer.h"

#define MROCE_STEER_BURST	64	/* packets per lock hold, at most */

static bool mroce_rx_spread;
module_param_named(rx_spread, mroce_rx_spread, bool, 0644);
MODULE_PARM_DESC(rx_spread,
		 "handle received data on the next CPU and ACKs on the sending CPU, in order per connection (default off)");

struct mroce_steer_cpu {
	struct sk_buff_head	q;	/* q.lock: any CPU queues */
	call_single_data_t	csd;	/* schedules run on its CPU */
	struct tasklet_struct	run;
};

static DEFINE_PER_CPU(struct mroce_steer_cpu, mroce_steer_cpu);

static void mroce_steer_kick(void *arg)
{
	struct mroce_steer_cpu *sc = arg;

	tasklet_schedule(&sc->run);
}

static void mroce_steer_noop(void *arg)
{
}

/* A packet of @flow was handled. */
static void mroce_steer_flow_done(struct mroce_rx_flow *flow)
{
	/*
	 * Its effects before the count: a CPU that sees the flow idle and
	 * moves it handles the next packet after this one.
	 */
	smp_mb__before_atomic();
	atomic_dec(&flow->busy);
}

static u64 mroce_steer_cookie(const struct mroce_peer *peer, u8 kind)
{
	return (u64)peer->id << 8 | kind;
}

/* mroce_rx_list()'s callback: RCU read side. */
static void mroce_steer_done(u64 cookie)
{
	struct mroce_peer *peer = mroce_peer_find_id(cookie >> 8);

	/* Gone meanwhile: nobody steers to its flows any more. */
	if (peer)
		mroce_steer_flow_done(&peer->rx_flow[cookie & 0xff]);
}

static void mroce_steer_run(struct tasklet_struct *t)
{
	struct mroce_steer_cpu *sc = from_tasklet(sc, t, run);
	struct sk_buff_head local;

	__skb_queue_head_init(&local);
	spin_lock(&sc->q.lock);
	skb_queue_splice_init(&sc->q, &local);
	spin_unlock(&sc->q.lock);
	mroce_rx_list(&local, MROCE_STEER_BURST, mroce_steer_done);
}

/*
 * The peer whose flow @skb belongs to, its kind, and the CPU the flow goes
 * to if it may move; NULL: not steered (handshake, datagrams, an unknown
 * connection: the receive path counts and answers those). RCU read side.
 */
static struct mroce_peer *mroce_steer_flow_of(struct sk_buff *skb, u8 *kind,
					      int *want)
{
	int here = smp_processor_id();
	struct mroce_peer *peer;
	const u8 *h;
	u8 op;

	if (!pskb_may_pull(skb, MROCE_COMMON_LEN))
		return NULL;
	h = skb->data;
	op = h[1];
	if (mroce_op_is_data(op) || op == MROCE_OP_PROBE)
		*kind = MROCE_RX_FLOW_DATA;
	else if (op == MROCE_OP_ACK || op == MROCE_OP_NAK)
		*kind = MROCE_RX_FLOW_ACK;
	else
		return NULL;
	peer = mroce_peer_find_id(get_unaligned_be32(h + 4));
	if (!peer)
		return NULL;
	if (*kind == MROCE_RX_FLOW_ACK) {
		*want = READ_ONCE(peer->tx_cpu);
		if (!cpu_online(*want))
			*want = here;
	} else if (get_unaligned_be16(h + 2) & MROCE_F_AR) {
		*want = here;
	} else {
		*want = cpumask_next(here, cpu_online_mask);
		if (*want >= nr_cpu_ids)
			*want = cpumask_first(cpu_online_mask);
	}
	return peer;
}

/**
 * mroce_steer_skb() - handle a received packet on its flow's CPU
 * @skb: data at the mroce header
 * @meta: as for mroce_rx_skb()
 *
 * Now if that is this CPU and the flow is idle, else queued there.
 * Softirq. Return: true if @skb was taken; false: not steered (rx_spread
 * off, one CPU, or a packet that belongs to no flow), the caller handles it.
 */
bool mroce_steer_skb(struct sk_buff *skb, const struct mroce_rx_meta *meta)
{
	struct mroce_steer_cpu *sc;
	struct mroce_rx_flow *flow;
	struct mroce_peer *peer;
	int here, cpu, want;
	bool kick, idle;
	u8 kind;

	if (!READ_ONCE(mroce_rx_spread) || !in_softirq() ||
	    num_online_cpus() < 2)
		return false;
	here = smp_processor_id();
	rcu_read_lock();
	peer = mroce_steer_flow_of(skb, &kind, &want);
	if (!peer) {
		rcu_read_unlock();
		return false;
	}
	flow = &peer->rx_flow[kind];
	spin_lock(&peer->rx_steer_lock);
	if (!atomic_read(&flow->busy))
		flow->cpu = want;
	cpu = flow->cpu;
	/* Dropped to 0 since the read: it may stay here all the same. */
	idle = atomic_inc_return(&flow->busy) == 1;
	if (cpu == here && idle) {
		spin_unlock(&peer->rx_steer_lock);
		mroce_rx_now(skb, meta);
		mroce_steer_flow_done(flow);
		rcu_read_unlock();
		return true;
	}
	mroce_rx_park(skb, meta, mroce_steer_cookie(peer, kind));
	sc = per_cpu_ptr(&mroce_steer_cpu, cpu);
	/* Under the flow's lock: queued in the order they were steered. */
	spin_lock(&sc->q.lock);
	__skb_queue_tail(&sc->q, skb);
	kick = skb_queue_len(&sc->q) == 1;
	spin_unlock(&sc->q.lock);
	spin_unlock(&peer->rx_steer_lock);
	rcu_read_unlock();
	if (cpu == here)
		tasklet_schedule(&sc->run);
	else if (kick)
		/*
		 * -EBUSY: the last kick is still on its way and schedules
		 * the tasklet after this packet was queued.
		 */
		smp_call_function_single_async(cpu, &sc->csd);
	return true;
}

void mroce_steer_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct mroce_steer_cpu *sc = per_cpu_ptr(&mroce_steer_cpu, cpu);

		skb_queue_head_init(&sc->q);
		INIT_CSD(&sc->csd, mroce_steer_kick, sc);
		tasklet_setup(&sc->run, mroce_steer_run);
	}
}

/* After the sockets closed and synchronize_net(): nothing steers any more. */
void mroce_steer_exit(void)
{
	struct sk_buff *skb;
	unsigned int cpu;

	/* Kicks still on their way run before this one (FIFO per CPU). */
	on_each_cpu(mroce_steer_noop, NULL, 1);
	for_each_possible_cpu(cpu) {
		struct mroce_steer_cpu *sc = per_cpu_ptr(&mroce_steer_cpu, cpu);

		tasklet_kill(&sc->run);
		while ((skb = __skb_dequeue(&sc->q))) {
			dev_put(skb->dev);
			kfree_skb(skb);
		}
	}
}
