// SPDX-License-Identifier: GPL-2.0
/*
 * ACK and NAK generation.
 *
 * When to acknowledge is the core's decision (mroce_conn_rx_accept() and
 * the delayed-ACK deadline): at once for a packet that asks (AR, the
 * sender's last queued packet), arrives out of order on its path or is a
 * PROBE, otherwise after every few packets or a short delay, whichever
 * comes first. One ACK reports every path with news, so a receive burst
 * spread over all paths costs one ACK per few packets, not one per path.
 *
 * The rate hint every ACK carries is the device's: a water-fill of its
 * receive capacity over the connections it serves (docs/protocol.md §6.4),
 * recomputed at most once per hint period by whichever received packet
 * finds the period over (mroce_ack_hint_tick()).
 */
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "mroce_counters.h"
#include "mroce_hint.h"
#include "mroce_peer.h"
#include "mroce_trace.h"

#define MROCE_ACK_LEN_MAX \
	(MROCE_ACK_BASE_LEN + MROCE_PEER_PATHS * MROCE_ACK_BLOCK_LEN)

/* IB's encoding of min_rnr_timer (IBTA table 45), in microseconds. */
static const u32 mroce_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

u32 mroce_rnr_timer_us(u8 min_rnr_timer)
{
	return mroce_rnr_us[min_rnr_timer & 31];
}

/* Send the ACKs that are due (peer->lock held). */
void mroce_ack_maybe(struct mroce_peer *peer, u64 now)
{
	struct sk_buff *skb;
	unsigned int i;
	u32 len;

	lockdep_assert_held(&peer->lock);
	/* One ACK carries every path; more only if it ran out of blocks. */
	for (i = 0; i < 4 && mroce_conn_ack_due(&peer->conn, now); i++) {
		skb = mroce_net_alloc_skb(peer->mdev, MROCE_ACK_LEN_MAX,
					  GFP_ATOMIC);
		if (!skb)
			return;	/* still due: the timer tries again */
		len = mroce_conn_build_ack(&peer->conn, now, skb_tail_pointer(skb),
					   MROCE_ACK_LEN_MAX);
		if (!len) {
			kfree_skb(skb);
			return;
		}
		skb_put(skb, len);
		mroce_counter_inc(peer->mdev, MROCE_CNT_ACKS_SENT);
		mroce_peer_queue_ctl(peer, skb);
	}
}

static struct sk_buff *mroce_ack_nak_skb(struct mroce_dev *mdev,
					 const struct mroce_pkt *nak)
{
	struct sk_buff *skb;

	skb = mroce_net_alloc_skb(mdev, MROCE_NAK_LEN, GFP_ATOMIC);
	if (!skb)
		return NULL;
	if (mroce_encode(nak, skb_put(skb, MROCE_NAK_LEN), MROCE_NAK_LEN) !=
	    MROCE_NAK_LEN) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/**
 * mroce_ack_nak() - refuse a received data packet or PROBE
 * @peer: its connection, locked
 * @pkt: the refused packet
 * @code: enum mroce_nak_code
 * @arg: RNR delay in us, or the receiver's path generation for STALE_GEN
 *
 * The NAK names the packet by path and stream position so the sender finds
 * the transmission it refers to.
 */
void mroce_ack_nak(struct mroce_peer *peer, const struct mroce_pkt *pkt,
		   u8 code, u32 arg)
{
	struct mroce_pkt nak = {};
	struct mroce_nak *n = &nak.u.nak;
	struct sk_buff *skb;

	lockdep_assert_held(&peer->lock);
	nak.c.opcode = MROCE_OP_NAK;
	nak.c.dst_conn = peer->conn.hs.remote.id;
	n->code = code;
	n->path_id = pkt->c.path_id;
	n->path_gen = pkt->c.path_gen;
	n->path_psn = pkt->c.path_psn;
	if (pkt->c.opcode != MROCE_OP_PROBE) {
		n->stream_id = pkt->u.d.stream_id;
		n->stream_psn = pkt->u.d.stream_psn;
		n->ssn = pkt->u.d.ssn;
	}
	n->arg = arg;

	skb = mroce_ack_nak_skb(peer->mdev, &nak);
	if (!skb)
		return;		/* the sender's timers recover */
	mroce_counter_inc(peer->mdev, MROCE_CNT_NAKS_SENT);
	if (code == MROCE_NAK_RNR)
		mroce_counter_inc(peer->mdev, MROCE_CNT_SEND_RNR);
	trace_mroce_nak(peer->mdev->ibdev.index, peer->id, 1, code,
			n->stream_id, n->stream_psn, n->ssn, arg);
	mroce_peer_queue_ctl(peer, skb);
}

/*
 * Tell a sender that we have no connection @id (we restarted, or closed
 * it): it re-handshakes. Rate limited, since anybody can make us send it.
 */
void mroce_ack_nak_unknown(struct mroce_dev *mdev,
			   const struct mroce_rx_meta *meta, u32 id)
{
	struct mroce_pkt nak = {};
	struct sk_buff *skb;

	if (!__ratelimit(&mdev->xport.nak_rs))
		return;
	nak.c.opcode = MROCE_OP_NAK;
	nak.u.nak.code = MROCE_NAK_UNKNOWN_CONN;
	nak.u.nak.arg = id;
	skb = mroce_ack_nak_skb(mdev, &nak);
	if (!skb)
		return;
	mroce_counter_inc(mdev, MROCE_CNT_NAKS_SENT);
	trace_mroce_nak(mdev->ibdev.index, 0, 1, MROCE_NAK_UNKNOWN_CONN, 0, 0,
			0, id);
	mroce_net_xmit_oneshot(mdev, meta, skb);
}

/* ------------------------------------------------------------- rate hints */

/*
 * What the device can receive. The link speed needs the RTNL to read, which
 * receive cannot take, and many virtual links report none; so it is a
 * parameter, read at every hint period. 0 turns the hints off: ACKs carry
 * 0 ("no hint") and senders are bounded by their own windows only.
 */
static uint mroce_rx_mbps = 10000;
module_param_named(rx_mbps, mroce_rx_mbps, uint, 0644);
MODULE_PARM_DESC(rx_mbps,
		 "receive capacity the rate hints share, Mbit/s (default 10000, 0: no hints)");

/*
 * Shortest hint period. The hints follow demand within a few periods; the
 * incast hold (2 base RTTs) needs periods of about an RTT or less, and a
 * shorter one only costs a pass over the device's peers more often.
 */
#define MROCE_HINT_PERIOD_NS	(100 * NSEC_PER_USEC)

static void mroce_ack_hint_cfg(struct mroce_hint_cfg *cfg, u32 rtt_min)
{
	mroce_hint_cfg_default(cfg, READ_ONCE(mroce_rx_mbps));
	if (rtt_min) {
		cfg->rtt_min = rtt_min;
		cfg->q_target = rtt_min / 2;
	}
}

/**
 * mroce_ack_hint_newcomer() - grant a connection being set up
 * @peer: the new connection, not yet visible to anyone else
 *
 * Its CONN_REQ or CONN_REP carries this as init_rate: the capacity over
 * every connection of the device, counting itself, as an idle one's hint.
 */
void mroce_ack_hint_newcomer(struct mroce_peer *peer)
{
	struct mroce_hint_cfg cfg;

	mroce_ack_hint_cfg(&cfg, 0);
	if (!cfg.capacity)
		return;
	mroce_conn_set_rx_hint(&peer->conn,
			       mroce_hint_newcomer(&cfg,
						   READ_ONCE(peer->mdev->xport.n_peers) + 1));
}

/*
 * One hint period: sample every established connection, water-fill, then
 * hand each its grant and send the ACKs that a fallen grant made due (an
 * idle peer must not restart at a stale one). Peers are locked one at a
 * time, never two at once.
 */
static void mroce_ack_hint_pass(struct mroce_dev *mdev, u64 now, u64 period)
{
	struct mroce_xport_dev *xd = &mdev->xport;
	struct mroce_hint_entry *e;
	struct mroce_peer **up, *peer;
	struct mroce_hint_cfg cfg;
	u32 n = 0, max, i, rtt_min = 0;
	unsigned int bkt;

	mroce_ack_hint_cfg(&cfg, 0);
	max = READ_ONCE(xd->n_peers);
	if (!cfg.capacity || !max)
		return;
	/* One buffer: the entries, then the peer of each. */
	e = kmalloc_array(max, sizeof(*e) + sizeof(*up), GFP_ATOMIC);
	if (!e)
		return;		/* the grants stay as they are a while longer */
	up = (struct mroce_peer **)(e + max);

	rcu_read_lock();
	hash_for_each_rcu(xd->peers, bkt, peer, hnode) {
		struct mroce_conn *c = &peer->conn;
		u32 rtt;

		if (n == max)
			break;	/* added since: counted next period */
		spin_lock_bh(&peer->lock);
		if (!peer->dead && mroce_conn_established(c)) {
			/* Its own base RTT times its incast hold. */
			rtt = c->rtt.min_rtt ? c->rtt.min_rtt : cfg.rtt_min;
			mroce_conn_rx_sample(c, period, rtt, cfg.capacity,
					     &e[n].demand, &e[n].qdelay);
			e[n].weight = 1;
			if (!rtt_min || rtt < rtt_min)
				rtt_min = rtt;
			up[n++] = peer;
		}
		/* Not a bare unlock: a doorbell may have found it taken. */
		mroce_peer_unlock(peer);
	}
	if (n) {
		/* The fabric's base RTT is the least any connection saw. */
		mroce_ack_hint_cfg(&cfg, rtt_min);
		mroce_hint_compute(&cfg, e, n);
	}
	for (i = 0; i < n; i++) {
		peer = up[i];
		spin_lock_bh(&peer->lock);
		if (!peer->dead && mroce_conn_established(&peer->conn)) {
			mroce_conn_set_rx_hint(&peer->conn, e[i].hint);
			mroce_ack_maybe(peer, now);
		}
		mroce_peer_unlock(peer);
	}
	rcu_read_unlock();
	kfree(e);
}

/**
 * mroce_ack_hint_tick() - a packet arrived for the device: hints due?
 * @mdev: the device
 *
 * Called by receive with no peer lock held. At most one pass runs per
 * device at a time, at most one per hint period, and none while nothing
 * arrives: the grants then stay what they were, and the first packet after
 * a quiet spell starts a fresh period.
 */
void mroce_ack_hint_tick(struct mroce_dev *mdev)
{
	struct mroce_xport_dev *xd = &mdev->xport;
	u64 now = mroce_now(), last = READ_ONCE(xd->hint_at);

	if (now - last < MROCE_HINT_PERIOD_NS)
		return;
	if (test_and_set_bit_lock(0, &xd->hint_busy))
		return;
	last = xd->hint_at;
	if (now - last >= MROCE_HINT_PERIOD_NS) {
		WRITE_ONCE(xd->hint_at, now);
		/*
		 * A quiet spell is not part of the sample: what arrived
		 * during it is one period's worth, and a peer that starts
		 * sending must be held from its start (rx_sample).
		 */
		mroce_ack_hint_pass(mdev, now,
				    min_t(u64, now - last,
					  2 * MROCE_HINT_PERIOD_NS));
	}
	clear_bit_unlock(0, &xd->hint_busy);
}
