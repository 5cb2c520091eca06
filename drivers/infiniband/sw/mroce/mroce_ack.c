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
 * The receive path adds one rule (mroce_ack_flush()): a receive burst
 * that ends with no more of its connection's packets right behind it
 * acknowledges what it left unacknowledged at once, rather than on the
 * delayed-ACK timer.
 *
 * The rate hint every ACK carries is the device's: a water-fill of its
 * receive capacity over the connections it serves (docs/protocol.md §6.4),
 * recomputed once per hint period while packets arrive. The arrivals clock
 * the passes (at the end of a receive burst: mroce_ack_hint_hold() samples
 * the burst's own connection before its lock is released,
 * mroce_ack_hint_tick() the others after; a device with one connection
 * runs the whole pass in that hold, mroce_ack_hint_alone()): no timer
 * ticks while a device is idle or answers a ping-pong.
 */
#include <linux/slab.h>

#include "mroce_counters.h"
#include "mroce_hint.h"
#include "mroce_peer.h"
#include "mroce_trace.h"

/* What a hint pass saw of a connection when it sampled it. */
struct mroce_hint_seen {
	struct mroce_peer *peer;
	u32 hint;	/* its grant, */
	u32 cap;	/* the grant's incast cap (0 = none) */
	u32 sent;	/* and the grant its peer last heard */
};

#define MROCE_ACK_LEN_MAX \
	(MROCE_ACK_BASE_LEN + MROCE_PEER_PATHS * MROCE_ACK_BLOCK_LEN)

/*
 * One ACK buffer per CPU, allocated ahead, outside any peer lock. An ACK is
 * built under peer->lock, and on the latency path that is the lock the
 * other CPU's doorbell waits for while this CPU acknowledges the data the
 * doorbell's application just saw: an allocation there (with
 * init_on_alloc, two memsets: the sk_buff and its 512-byte head) holds
 * that doorbell up. The end of each receive burst (mroce_ack_hint_tick(),
 * after mroce_peer_unlock()) refills it; ACKs larger than one block, or for
 * a netdev that needs more headroom than the spare has, allocate as before.
 */
#define MROCE_ACK_SPARE_LEN	(MROCE_ACK_BASE_LEN + MROCE_ACK_BLOCK_LEN)
DEFINE_PER_CPU(struct sk_buff *, mroce_ack_spare);

/* This CPU's spare if it fits an ACK of @cap bytes for @mdev, else NULL. */
static struct sk_buff *mroce_ack_spare_take(struct mroce_dev *mdev, u32 cap)
{
	struct sk_buff *skb = this_cpu_xchg(mroce_ack_spare, NULL);

	if (!skb)
		return NULL;
	if (skb_tailroom(skb) >= cap &&
	    skb_headroom(skb) >= MROCE_SKB_HEADROOM(mdev->ndev))
		return skb;
	/* Keep it for the next one-block ACK. */
	if (this_cpu_cmpxchg(mroce_ack_spare, NULL, skb))
		consume_skb(skb);
	return NULL;
}

/* Refill this CPU's spare (no peer lock held). */
static void mroce_ack_spare_fill(struct mroce_dev *mdev)
{
	struct sk_buff *skb;

	if (this_cpu_read(mroce_ack_spare))
		return;
	skb = mroce_net_alloc_skb(mdev, MROCE_ACK_SPARE_LEN, GFP_ATOMIC);
	if (skb && this_cpu_cmpxchg(mroce_ack_spare, NULL, skb))
		consume_skb(skb);
}

/* Module exit: no receive runs any more. */
void mroce_ack_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		consume_skb(per_cpu(mroce_ack_spare, cpu));
		per_cpu(mroce_ack_spare, cpu) = NULL;
	}
}

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

/*
 * Queue the ACKs that are due, or with @all whatever is unreported
 * (peer->lock held), on the responder's control queue (rx_ctlq). One ACK
 * carries every path; more only if it ran out of blocks.
 */
static void mroce_ack_send(struct mroce_peer *peer, u64 now, bool all)
{
	struct sk_buff *skb;
	unsigned int i;
	u32 len, cap;

	mroce_peer_assert_rx(peer);
	if (all && !peer->conn.ack_dirty && !peer->conn.hint_push)
		return;
	for (i = 0; i < 4 && (all || mroce_conn_ack_due(&peer->conn, now));
	     i++) {
		/*
		 * Sized to the paths it reports, not to all of them: the
		 * allocator zeroes what it hands out, and a one-block ACK
		 * then fits a 512-byte slab object instead of a 1 KiB one.
		 */
		cap = min_t(u32, mroce_conn_ack_len(&peer->conn),
			    MROCE_ACK_LEN_MAX);
		skb = mroce_ack_spare_take(peer->mdev, cap);
		if (!skb)
			skb = mroce_net_alloc_skb(peer->mdev, cap, GFP_ATOMIC);
		if (!skb)
			return;	/* still due: the ACK timer tries again */
		/* Nothing left to report ends the loop here. */
		len = mroce_conn_build_ack(&peer->conn, now, skb_tail_pointer(skb),
					   cap);
		if (!len) {
			kfree_skb(skb);
			return;
		}
		skb_put(skb, len);
		mroce_counter_inc(peer->mdev, MROCE_CNT_ACKS_SENT);
		mroce_peer_queue_rx_ctl(peer, skb);
	}
}

/* Send the ACKs that are due (peer->lock held). */
void mroce_ack_maybe(struct mroce_peer *peer, u64 now)
{
	mroce_ack_send(peer, now, false);
}

/*
 * A receive burst ended and the next packet, if any, is not this peer's: send
 * what it left unacknowledged now instead of at the delayed-ACK deadline.
 * That deadline rides the responder's ACK timer (mroce_peer.c), which in
 * a busy or virtualised host fires milliseconds late, long enough for the
 * sender to take the silence for loss. The burst already spread the ACK's
 * cost over its packets.
 */
void mroce_ack_flush(struct mroce_peer *peer, u64 now)
{
	mroce_ack_send(peer, now, true);
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

	mroce_peer_assert_rx(peer);
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
	mroce_counter_nak(peer->mdev, true, code);
	if (code == MROCE_NAK_RNR)
		mroce_counter_inc(peer->mdev, MROCE_CNT_SEND_RNR);
	trace_mroce_nak(peer->mdev->ibdev.index, peer->id, 1, code,
			n->stream_id, n->stream_psn, n->ssn, arg);
	mroce_peer_queue_rx_ctl(peer, skb);
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
	mroce_counter_nak(mdev, true, MROCE_NAK_UNKNOWN_CONN);
	trace_mroce_nak(mdev->ibdev.index, 0, 1, MROCE_NAK_UNKNOWN_CONN, 0, 0,
			0, id);
	mroce_net_xmit_oneshot(mdev, meta, skb);
}

/* ------------------------------------------------------------- rate hints */

/*
 * The hint tunables (rx_mbps, hint_period_us, hint_drain) are knobs:
 * mroce_knobs.c, fields of mroce_prm.
 */
static u64 mroce_hint_period_ns(void)
{
	return READ_ONCE(mroce_prm.hint_period);
}

static void mroce_ack_hint_cfg(struct mroce_hint_cfg *cfg, u32 rtt_min)
{
	mroce_hint_cfg_default(cfg, READ_ONCE(mroce_prm.rx_mbps));
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
 * Room for @n entries in the device's hint buffer. Process context (a peer
 * is being added); the pass uses whatever the buffer holds, so a failed
 * allocation only leaves the newest connections at their last grant.
 */
void mroce_ack_hint_reserve(struct mroce_dev *mdev, u32 n)
{
	struct mroce_xport_dev *xd = &mdev->xport;
	struct mroce_hint_entry *buf, *old;
	u32 cap;

	if (n <= READ_ONCE(xd->hint_cap))
		return;
	cap = max_t(u32, 16, roundup_pow_of_two(n));
	buf = kvmalloc_array(cap, sizeof(*buf) + sizeof(struct mroce_hint_seen),
			     GFP_KERNEL);
	if (!buf)
		return;
	spin_lock_bh(&xd->hint_lock);
	old = xd->hint_buf;
	if (cap > xd->hint_cap) {
		xd->hint_buf = buf;
		WRITE_ONCE(xd->hint_cap, cap);
		buf = NULL;
	}
	spin_unlock_bh(&xd->hint_lock);
	kvfree(buf ? buf : old);
}

/*
 * Samples @c (its peer locked) into @e over @r's period; returns the base
 * RTT the sample used, its own or the fabric's default.
 */
static inline u32 mroce_ack_hint_sample(const struct mroce_hint_run *r,
					struct mroce_conn *c,
					struct mroce_hint_entry *e)
{
	u32 rtt;
	u64 bytes;

	if (r->quiet)
		mroce_conn_rx_quiet(c);
	/* Its own base RTT times its incast hold. */
	rtt = c->rtt.min_rtt ? c->rtt.min_rtt : r->cfg.rtt_min;
	bytes = mroce_conn_rx_sample(c, r->period, rtt, r->cfg.capacity,
				     &e->demand, &e->qdelay);
	/* What arrived, over the time that really passed. */
	e->arrival = mroce_hint_mbps(bytes, r->elapsed);
	e->weight = 1;
	return rtt;
}

/*
 * Hands @peer (locked, established, not dead) its grant @e->hint and sends
 * the ACKs a fallen grant made due.
 */
static void mroce_ack_hint_grant(struct mroce_peer *peer,
				 const struct mroce_hint_entry *e, u64 now)
{
	struct mroce_conn *c = &peer->conn;
	bool push = c->hint_push;

	/*
	 * A fallen grant is pushed (a hint-only ACK if no data is due) only
	 * to a sender it limits, or to an idle one, which would restart at
	 * what it last heard. One sending below its new grant hears it in
	 * its next ACK.
	 */
	mroce_conn_set_rx_hint(c, e->hint);
	if (e->demand && e->demand < e->hint)
		c->hint_push = push;
	mroce_ack_maybe(peer, now);
}

/*
 * Samples @peer, locked by the caller, into the running pass's next entry
 * if it is established and the buffer has room.
 */
static void mroce_ack_hint_take(struct mroce_xport_dev *xd,
				struct mroce_peer *peer)
{
	struct mroce_hint_run *r = &xd->hint_run;
	struct mroce_conn *c = &peer->conn;
	struct mroce_hint_entry *e;
	struct mroce_hint_seen *seen;
	u32 rtt;

	lockdep_assert_held(&peer->lock);
	if (r->n == xd->hint_cap || peer->dead || !mroce_conn_established(c))
		return;
	e = &xd->hint_buf[r->n];
	seen = (struct mroce_hint_seen *)(xd->hint_buf + xd->hint_cap) + r->n;
	rtt = mroce_ack_hint_sample(r, c, e);
	seen->peer = peer;
	seen->hint = c->rx_hint;
	seen->cap = c->rx_cap;
	seen->sent = c->rx_hint_sent;
	if (rtt && (!r->rtt_min || rtt < r->rtt_min))
		r->rtt_min = rtt;
	r->n++;
}

/*
 * Sets up pass @r (the pass bit held) for @elapsed ns since the last one;
 * false if the link's capacity is not known, so no grant can be computed.
 */
static bool mroce_ack_hint_run_init(struct mroce_hint_run *r, u64 now,
				    u64 elapsed, bool quiet)
{
	u64 period;

	mroce_ack_hint_cfg(&r->cfg, 0);
	if (!r->cfg.capacity)
		return false;
	/* Passes run late under load: a long gap is not all one sample. */
	period = mroce_hint_period_ns();
	r->period = clamp_t(u64, elapsed, period, 2 * period);
	r->now = now;
	r->elapsed = elapsed;
	r->quiet = quiet;
	r->n = 0;
	r->rtt_min = 0;
	return true;
}

/*
 * Water-fills the @n sampled entries @e of pass @r, with the drain rate
 * the passes learnt if hint_drain is set (the pass bit orders hint_state).
 */
static void mroce_ack_hint_water(struct mroce_xport_dev *xd,
				 const struct mroce_hint_run *r,
				 struct mroce_hint_entry *e, u32 n)
{
	bool drain = READ_ONCE(mroce_prm.hint_drain);

	if (!drain)
		xd->hint_state = (struct mroce_hint_state){};
	mroce_hint_compute(&r->cfg, drain ? &xd->hint_state : NULL, e, n,
			   r->elapsed);
}

/*
 * Whether a connection that holds grant @cur, capped at @cap, and last
 * sent @sent already has @hint: then the pass leaves it alone.
 */
static bool mroce_ack_hint_held(u32 hint, u32 cap, u32 cur, u32 sent)
{
	if (cap && hint > cap)
		hint = cap;
	return hint && hint == cur && hint == sent;
}

/*
 * Starts a pass (MROCE_HINT_PASS held): takes the buffer's lock and sets
 * up xd->hint_run. False if hints are off or the buffer is busy growing in
 * process context (the pass is skipped then). On true the caller samples
 * (mroce_ack_hint_take()) and ends with mroce_ack_hint_finish(). hint_lock
 * is taken _bh: a burst begins the pass under its peer's lock and finishes
 * it after the unlock.
 */
static bool mroce_ack_hint_start(struct mroce_xport_dev *xd, u64 now,
				 u64 elapsed, bool quiet)
{
	if (!mroce_ack_hint_run_init(&xd->hint_run, now, elapsed, quiet))
		return false;
	if (!spin_trylock_bh(&xd->hint_lock))
		return false;
	if (!xd->hint_cap) {
		spin_unlock_bh(&xd->hint_lock);
		return false;
	}
	return true;
}

/*
 * The rest of a started pass: sample every other established connection
 * (@skip, if not NULL, was sampled under the lock its caller held),
 * water-fill, then hand each its grant and send the ACKs that a fallen
 * grant made due; drops hint_lock. Peers are locked one at a time, never
 * two at once, and only with a trylock: the pass never spins against the
 * data path. A connection whose lock is taken sits this pass out and is
 * sampled at the next (its bytes wait in its counters); one whose grant
 * does not change is not locked a second time. A quiet pass (nothing
 * arrived for a whole period before this one) restarts every connection
 * that sends now on a new busy spell (§6.4's hold).
 */
static void mroce_ack_hint_finish(struct mroce_xport_dev *xd,
				  struct mroce_peer *skip)
{
	struct mroce_hint_run *r = &xd->hint_run;
	struct mroce_hint_entry *e = xd->hint_buf;
	struct mroce_hint_seen *seen;
	struct mroce_peer *peer;
	u32 i, want, met = 0, k, first, bkt;

	seen = (struct mroce_hint_seen *)(e + xd->hint_cap);
	/*
	 * The table has 64 buckets and a device mostly a few peers: a walk of
	 * every bucket was two thirds of a pass's instructions. This walk
	 * starts at the bucket where the last one met its first peer, wraps,
	 * and stops once it has met as many peers as the table holds. One
	 * added meanwhile may be missed, as one whose lock is taken is: the
	 * next pass samples it.
	 */
	want = READ_ONCE(xd->n_peers);
	first = xd->hint_bkt;
	rcu_read_lock();
	for (k = 0; k < HASH_SIZE(xd->peers) && met < want; k++) {
		bkt = (first + k) & (HASH_SIZE(xd->peers) - 1);
		hlist_for_each_entry_rcu(peer, &xd->peers[bkt], hnode) {
			if (!met++)
				xd->hint_bkt = bkt;
			if (peer == skip)
				continue;
			/* _bh: mroce_peer_unlock() ends with spin_unlock_bh(). */
			if (!mroce_peer_trylock(peer))
				continue;
			mroce_ack_hint_take(xd, peer);
			/* Not a bare unlock: a doorbell may have found it taken. */
			mroce_peer_unlock(peer);
		}
	}
	if (r->n) {
		/* The fabric's base RTT is the least any connection saw. */
		mroce_ack_hint_cfg(&r->cfg, r->rtt_min);
		mroce_ack_hint_water(xd, r, e, r->n);
	}
	for (i = 0; i < r->n; i++) {
		/*
		 * Only the pass moves a grant and its cap (the pass bit makes
		 * it one at a time): what it saw still holds. A grant the peer
		 * already has needs no second lock round.
		 */
		if (mroce_ack_hint_held(e[i].hint, seen[i].cap, seen[i].hint,
					seen[i].sent))
			continue;
		peer = seen[i].peer;
		if (!mroce_peer_trylock(peer))
			continue;	/* the next pass hands it out */
		if (!peer->dead && mroce_conn_established(&peer->conn))
			mroce_ack_hint_grant(peer, &e[i], r->now);
		mroce_peer_unlock(peer);
	}
	rcu_read_unlock();
	spin_unlock_bh(&xd->hint_lock);
}

/*
 * With two connections or more, a device that falls quiet takes one more
 * pass: the idle share C/n may be below what a connection that sent alone
 * last heard, and an idle peer would restart at that (the pass pushes the
 * lower grant). With one, idle grants only rise. After an arrival-clocked
 * pass, no peer lock held.
 */
static void mroce_ack_hint_arm_quiet(struct mroce_xport_dev *xd, u64 now)
{
	if (READ_ONCE(xd->n_peers) > 1 &&
	    !test_and_set_bit(MROCE_HINT_ARMED, &xd->hint_flags))
		hrtimer_start(&xd->hint_timer,
			      ns_to_ktime(now + 2 * mroce_hint_period_ns()),
			      HRTIMER_MODE_ABS_SOFT);
}

/*
 * The quiet timer: armed by a pass (with two connections or more) for two
 * periods after it. A later pass meanwhile means the arrivals still clock
 * the hints: it waits for two periods after that one. Otherwise the device
 * fell quiet: one last pass samples every connection idle.
 */
static enum hrtimer_restart mroce_ack_hint_timer(struct hrtimer *timer)
{
	struct mroce_xport_dev *xd = container_of(timer, struct mroce_xport_dev,
						  hint_timer);
	u64 now = mroce_now(), period = mroce_hint_period_ns(), last;

	if (test_and_set_bit(MROCE_HINT_PASS, &xd->hint_flags)) {
		/* A pass runs on the other CPU: look again later. */
		hrtimer_forward_now(timer, ns_to_ktime(period));
		return HRTIMER_RESTART;
	}
	last = xd->hint_at;
	if ((s64)(now - last) < (s64)(2 * period)) {
		clear_bit_unlock(MROCE_HINT_PASS, &xd->hint_flags);
		hrtimer_set_expires(timer, ns_to_ktime(last + 2 * period));
		return HRTIMER_RESTART;
	}
	WRITE_ONCE(xd->hint_at, now);
	if (mroce_ack_hint_start(xd, now, now - last, false))
		mroce_ack_hint_finish(xd, NULL);
	clear_bit(MROCE_HINT_ARMED, &xd->hint_flags);
	clear_bit_unlock(MROCE_HINT_PASS, &xd->hint_flags);
	return HRTIMER_NORESTART;
}

/*
 * The pass of a device that serves one connection, @peer, the burst's own
 * (locked, established), run whole inside the hold the burst has: the
 * same sample, water-fill and grant as mroce_ack_hint_start(),
 * mroce_ack_hint_take() and mroce_ack_hint_finish() over one entry, less
 * what only a second connection needs: no buffer (so no hint_lock; the
 * pass bit alone orders the passes and their drain state), no walk of the
 * peer table, and no second lock round for the grant: an ACK that a fallen
 * grant made due is queued before the burst's unlock, which sends it. On
 * a ping-pong this is the pass that ends a burst in the poster's tail.
 */
static void mroce_ack_hint_alone(struct mroce_xport_dev *xd,
				 struct mroce_peer *peer, u64 now, u64 elapsed,
				 bool quiet)
{
	struct mroce_conn *c = &peer->conn;
	struct mroce_hint_entry e;
	struct mroce_hint_run r;

	if (!mroce_ack_hint_run_init(&r, now, elapsed, quiet))
		return;
	/* The fabric's base RTT is the one connection's. */
	mroce_ack_hint_cfg(&r.cfg, mroce_ack_hint_sample(&r, c, &e));
	mroce_ack_hint_water(xd, &r, &e, 1);
	if (mroce_ack_hint_held(e.hint, c->rx_cap, c->rx_hint,
				c->rx_hint_sent))
		return;
	mroce_ack_hint_grant(peer, &e, now);
}

/**
 * mroce_ack_hint_hold() - a receive burst is about to release its peer
 * @peer: the burst's connection, still locked
 * @now: the clock the burst read last
 *
 * Costs a comparison until a period has passed since the last pass. Then,
 * unless the other CPU runs one, this CPU begins a pass and samples @peer
 * under the hold it is in already, rather than trylocking it again right
 * after the unlock, when the other CPU may hold it for its own receive. If
 * @peer is the device's one connection, the whole pass runs here.
 *
 * Return: true if a pass began; pass it to mroce_ack_hint_tick().
 */
bool mroce_ack_hint_hold(struct mroce_peer *peer, u64 now)
{
	struct mroce_xport_dev *xd = &peer->mdev->xport;
	u64 period = mroce_hint_period_ns(), last;
	bool quiet;

	lockdep_assert_held(&peer->lock);
	if ((s64)(now - READ_ONCE(xd->hint_at)) < (s64)period ||
	    !READ_ONCE(mroce_prm.rx_mbps))
		return false;
	if (test_and_set_bit_lock(MROCE_HINT_PASS, &xd->hint_flags))
		return false;
	/* The other CPU may have run a pass since the first look. */
	last = xd->hint_at;
	if ((s64)(now - last) < (s64)period) {
		clear_bit_unlock(MROCE_HINT_PASS, &xd->hint_flags);
		return false;
	}
	WRITE_ONCE(xd->hint_at, now);
	/*
	 * Two periods since the last pass: nothing arrived for a whole period
	 * (an arrival a period after a pass runs the next), so whoever sends
	 * now starts anew, as a pass of that quiet period would have found.
	 */
	quiet = now - last >= 2 * period;
	/* Not dead: it is in the table, so the one connection it counts. */
	if (READ_ONCE(xd->n_peers) == 1 && !peer->dead &&
	    mroce_conn_established(&peer->conn)) {
		xd->hint_run.live = false;
		mroce_ack_hint_alone(xd, peer, now, now - last, quiet);
		return true;
	}
	xd->hint_run.live = mroce_ack_hint_start(xd, now, now - last, quiet);
	if (xd->hint_run.live)
		mroce_ack_hint_take(xd, peer);
	return true;
}

/**
 * __mroce_ack_hint_tick() - the work of a receive burst's end
 * @peer: the burst's connection, unlocked now
 * @begun: what mroce_ack_hint_hold() returned in the burst's hold
 *
 * Called by mroce_ack_hint_tick() (mroce_peer.h) when there is some: with
 * no peer lock held, in softirq context, within the RCU read section the
 * burst ran in. Refills this CPU's spare ACK buffer if the burst used it,
 * and finishes the pass the hold began: the walk over the device's other
 * connections and the grants.
 */
void __mroce_ack_hint_tick(struct mroce_peer *peer, bool begun)
{
	struct mroce_dev *mdev = peer->mdev;
	struct mroce_xport_dev *xd = &mdev->xport;

	mroce_ack_spare_fill(mdev);
	if (!begun)
		return;
	if (xd->hint_run.live)
		mroce_ack_hint_finish(xd, peer);
	mroce_ack_hint_arm_quiet(xd, xd->hint_at);
	clear_bit_unlock(MROCE_HINT_PASS, &xd->hint_flags);
}

void mroce_ack_hint_init(struct mroce_dev *mdev)
{
	struct mroce_xport_dev *xd = &mdev->xport;

	spin_lock_init(&xd->hint_lock);
	hrtimer_init(&xd->hint_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	xd->hint_timer.function = mroce_ack_hint_timer;
}

/* Device teardown: no connection is left that receive could tick for. */
void mroce_ack_hint_fini(struct mroce_dev *mdev)
{
	struct mroce_xport_dev *xd = &mdev->xport;

	if (!xd->hint_timer.function)
		return;		/* mroce_xport_dev_init() never ran */
	/* Receive paths that found a live peer finish their tick first. */
	synchronize_rcu();
	hrtimer_cancel(&xd->hint_timer);
	kvfree(xd->hint_buf);
	xd->hint_buf = NULL;
	xd->hint_cap = 0;
}
