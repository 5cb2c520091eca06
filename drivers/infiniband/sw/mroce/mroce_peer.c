// SPDX-License-Identifier: GPL-2.0
/*
 * Peers: the kernel side of mroce connections (see mroce_peer.h). The
 * table of a device, creation (at a QP's RTR, or when a peer's CONN_REQ
 * arrives), the handshake as the core drives it, the per-peer timer and
 * transmit work, the transmit queue, and teardown.
 */
#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "mroce_counters.h"
#include "mroce_peer.h"
#include "mroce_trace.h"

struct mroce_params mroce_prm;
struct workqueue_struct *mroce_wq;

/*
 * Connection ids are global, so receive finds a peer by dst_conn alone.
 * BH-safe lock: mroce_peer_get() stores under the device's peer_lock,
 * which receive takes in softirq (mroce_rx_req()), so every other taker
 * of the xarray's lock must keep softirqs off too (lockdep, session 37).
 */
DEFINE_XARRAY_FLAGS(mroce_conn_ids, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
static u32 mroce_conn_next;

static u32 mroce_addr_hash(const struct in6_addr *a)
{
	return jhash2(a->s6_addr32, 4, 0);
}

/* Caller holds rcu_read_lock() or the device's peer_lock. */
struct mroce_peer *mroce_peer_lookup(struct mroce_dev *mdev,
				     const struct in6_addr *raddr)
{
	struct mroce_peer *peer;

	hash_for_each_possible_rcu(mdev->xport.peers, peer, hnode,
				   mroce_addr_hash(raddr)) {
		if (ipv6_addr_equal(&peer->raddr, raddr))
			return peer;
	}
	return NULL;
}

static void mroce_peer_free_work(struct work_struct *work)
{
	struct mroce_peer *peer = container_of(work, struct mroce_peer,
					       free_work);

	/*
	 * Out of every table: wait out the receive paths and doorbells that
	 * found it under RCU, and the timer starts that follow an unlock
	 * (mroce_peer_arm_unlock(): decided before ->dead was set, inside a
	 * read-side section taken before the unlock).
	 */
	synchronize_rcu();
	/*
	 * The timer and the arm tasklet keep each other alive: an expiry's
	 * unlock (softirq) schedules the tasklet, and the tasklet arms the
	 * timer. Only ->dead breaks that cycle (neither arms nor schedules
	 * for a dead peer), so it must hold before either is stopped;
	 * mroce_peer_close() set it before it dropped the table's reference.
	 * Then the tasklet (a run still scheduled arms nothing), the timer
	 * (a callback still running sees ->dead and schedules nothing), and
	 * the works, whose unlock of a dead peer does neither.
	 */
	mroce_peer_lock(peer);
	WARN_ON_ONCE(!peer->dead);
	peer->dead = true;
	mroce_peer_unlock_bare(peer);
	tasklet_kill(&peer->arm_tasklet);
	hrtimer_cancel(&peer->timer);
	/* Set under peer->lock by holders that found ->dead false. */
	del_timer_sync(&peer->wd_timer);
	/*
	 * Started under peer->lock by holders that found ->dead false, i.e.
	 * before the hold above, or by its own callback's retry, which
	 * hrtimer_cancel() waits for and then cancels; a callback that finds
	 * ->dead does nothing.
	 */
	hrtimer_cancel(&peer->ack_timer);
	cancel_work_sync(&peer->tx_work);
	cancel_work_sync(&peer->xmit_work);
	cancel_delayed_work_sync(&peer->gc_work);
	skb_queue_purge(&peer->xmitq);
	skb_queue_purge(&peer->ctlq);
	skb_queue_purge(&peer->rx_ctlq);
	skb_queue_purge(&peer->sendq);
	skb_queue_purge(&peer->sendctl);
	xa_destroy(&peer->qp_xa);
	mroce_net_reset_routes(peer);
	kvfree(peer);
}

/* Process or softirq context; the memory goes from a work item. */
void mroce_peer_put(struct mroce_peer *peer)
{
	if (refcount_dec_and_test(&peer->ref))
		queue_work(mroce_wq, &peer->free_work);
}

static bool mroce_peer_timer_fn(struct mroce_peer *peer, bool wheel);
static enum hrtimer_restart mroce_peer_ack_timer(struct hrtimer *timer);
/* What a hand-off took for this CPU to send (mroce_peer_send()). */
struct mroce_peer_out {
	struct sk_buff_head	q;
	bool			data;	/* ours: ->xmitting is set for us */
};

static __always_inline unsigned int
mroce_peer_handoff(struct mroce_peer *peer, struct mroce_peer_out *out);
static __always_inline void mroce_peer_send(struct mroce_peer *peer,
					    struct mroce_peer_out *out);
static void mroce_peer_arm_tasklet(struct tasklet_struct *t);
static void mroce_peer_tx_work(struct work_struct *work);
static void mroce_peer_xmit_work(struct work_struct *work);
static void mroce_peer_gc_work(struct work_struct *work);

/*
 * An expiry that finds peer->lock taken comes back this much later rather
 * than spinning: the holder is another CPU's receive or doorbell, often the
 * ping-pong's next packet, and it may hold the lock for tens of us in a TCG
 * guest (the spin was ~1.3 us of CPU per 64 B round trip, session 12).
 */
#define MROCE_PEER_TIMER_RETRY_NS	(20 * NSEC_PER_USEC)

static enum hrtimer_restart mroce_peer_timer(struct hrtimer *timer)
{
	struct mroce_peer *peer = container_of(timer, struct mroce_peer,
					       timer);

	if (mroce_peer_timer_fn(peer, false))
		return HRTIMER_NORESTART;
	/*
	 * The holder's arm on its way out may leave the timer alone (its
	 * timer_at is this expiry), so the deadline's work is ours still.
	 * Started anew rather than forwarded: the holder may start the timer
	 * on its CPU while this callback runs (hrtimer_forward() of an
	 * enqueued timer warns); whichever start comes last stands, and an
	 * expiry that finds nothing due costs one lock round.
	 */
	hrtimer_start(timer, ktime_add_ns(ktime_get(),
					  MROCE_PEER_TIMER_RETRY_NS),
		      HRTIMER_MODE_ABS_SOFT);
	return HRTIMER_NORESTART;
}

/*
 * The watchdog's round ended (mroce_peer_wd_arm()): on the timer wheel, in
 * the TIMER softirq of a tick. A busy lock's holder is another CPU's: come
 * back a jiffy later.
 */
static void mroce_peer_wd_timer(struct timer_list *t)
{
	struct mroce_peer *peer = from_timer(peer, t, wd_timer);

	if (!mroce_peer_timer_fn(peer, true) && !READ_ONCE(peer->dead))
		mod_timer(t, jiffies + 1);
}

static struct mroce_peer *mroce_peer_alloc(struct mroce_dev *mdev,
					   const struct in6_addr *raddr,
					   const struct in6_addr *laddr,
					   bool v6)
{
	struct mroce_conn_cfg cfg = {};
	struct mroce_peer *peer;
	u64 nonce;
	int err;

	peer = kvzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return NULL;
	err = xa_alloc_cyclic_bh(&mroce_conn_ids, &peer->id, NULL,
				 XA_LIMIT(1, U32_MAX), &mroce_conn_next,
				 GFP_KERNEL);
	if (err < 0) {
		kvfree(peer);
		return NULL;
	}

	peer->mdev = mdev;
	peer->v6 = v6;
	peer->raddr = *raddr;
	peer->laddr = *laddr;
	peer->net = dev_net(mdev->ndev);
	peer->ctl_sport = get_random_u32_inclusive(MROCE_SPORT_MIN,
						   MROCE_SPORT_MAX);
	refcount_set(&peer->ref, 1);
	spin_lock_init(&peer->lock);
	/* BH: erased under the peer locks (mroce_xport.c). */
	xa_init_flags(&peer->qp_xa, XA_FLAGS_LOCK_BH);
	INIT_LIST_HEAD(&peer->qps);
	INIT_LIST_HEAD(&peer->tx_list);
	INIT_LIST_HEAD(&peer->comp_list);
	skb_queue_head_init(&peer->xmitq);
	skb_queue_head_init(&peer->ctlq);
	skb_queue_head_init(&peer->rx_ctlq);
	spin_lock_init(&peer->send_lock);
	skb_queue_head_init(&peer->sendq);
	skb_queue_head_init(&peer->sendctl);
	peer->timer_at = U64_MAX;
	peer->wake_at = U64_MAX;
	hrtimer_init(&peer->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	peer->timer.function = mroce_peer_timer;
	peer->ack_timer_at = U64_MAX;
	hrtimer_init(&peer->ack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	peer->ack_timer.function = mroce_peer_ack_timer;
	peer->wd_at = U64_MAX;
	timer_setup(&peer->wd_timer, mroce_peer_wd_timer, 0);
	tasklet_setup(&peer->arm_tasklet, mroce_peer_arm_tasklet);
	INIT_WORK(&peer->tx_work, mroce_peer_tx_work);
	INIT_WORK(&peer->free_work, mroce_peer_free_work);
	INIT_WORK(&peer->xmit_work, mroce_peer_xmit_work);
	peer->tx_cpu = raw_smp_processor_id();
	INIT_DELAYED_WORK(&peer->gc_work, mroce_peer_gc_work);

	do {
		nonce = get_random_u64();
	} while (!nonce);
	cfg.prm = &mroce_prm;
	cfg.ops = &mroce_peer_conn_ops;
	cfg.ctx = peer;
	cfg.paths = peer->paths;
	cfg.max_paths = MROCE_PEER_PATHS;
	cfg.local_id = peer->id;
	cfg.nonce = nonce;
	cfg.seed = get_random_u64();
	cfg.mtu = mroce_net_mtu(mdev, v6);
	cfg.caps = MROCE_CAP_ATOMIC;
	mroce_conn_init(&peer->conn, &cfg);
	mroce_ack_hint_newcomer(peer);
	return peer;
}

/* A peer that lost the race to be created: never published. */
static void mroce_peer_discard(struct mroce_peer *peer)
{
	xa_erase_bh(&mroce_conn_ids, peer->id);
	kvfree(peer);
}

/**
 * mroce_peer_get() - the connection to a remote address, created if needed
 * @mdev: the device
 * @raddr: remote address (v4-mapped for IPv4)
 * @laddr: our source address for a new connection
 * @v6: the addresses are IPv6
 *
 * Process context. Return: the peer with a reference, or NULL (no memory,
 * too many peers, device going away).
 */
struct mroce_peer *mroce_peer_get(struct mroce_dev *mdev,
				  const struct in6_addr *raddr,
				  const struct in6_addr *laddr, bool v6)
{
	struct mroce_xport_dev *xd = &mdev->xport;
	struct mroce_peer *peer, *fresh;

	rcu_read_lock();
	peer = mroce_peer_lookup(mdev, raddr);
	if (peer && !refcount_inc_not_zero(&peer->ref))
		peer = NULL;
	rcu_read_unlock();
	if (peer)
		return peer;

	fresh = mroce_peer_alloc(mdev, raddr, laddr, v6);
	if (!fresh)
		return NULL;
	mroce_ack_hint_reserve(mdev, READ_ONCE(xd->n_peers) + 1);

	spin_lock_bh(&xd->peer_lock);
	peer = mroce_peer_lookup(mdev, raddr);
	if (peer && refcount_inc_not_zero(&peer->ref)) {
		spin_unlock_bh(&xd->peer_lock);
		mroce_peer_discard(fresh);
		return peer;
	}
	if (xd->closing || xd->n_peers >= MROCE_MAX_PEERS) {
		spin_unlock_bh(&xd->peer_lock);
		mroce_peer_discard(fresh);
		return NULL;
	}
	hash_add_rcu(xd->peers, &fresh->hnode, mroce_addr_hash(raddr));
	xd->n_peers++;
	refcount_inc(&fresh->ref);	/* the caller's */
	xa_store(&mroce_conn_ids, fresh->id, fresh, GFP_ATOMIC);
	spin_unlock_bh(&xd->peer_lock);
	return fresh;
}

/*
 * Take the peer out of the table and kill it; drops the table's reference.
 * @if_idle: the linger timeout decided to close, but a QP may have attached
 * since; the decision only stands if it is still true under the lock.
 */
static void mroce_peer_close(struct mroce_peer *peer, u32 reason, bool if_idle)
{
	struct mroce_xport_dev *xd = &peer->mdev->xport;
	struct mroce_peer_out out;
	unsigned int handed;

	mroce_peer_lock(peer);
	if (peer->dead) {
		mroce_peer_unlock_bare(peer);
		return;
	}
	if (if_idle && peer->n_qps) {
		/* Alive after all: a doorbell may have found the lock taken. */
		mroce_peer_unlock(peer);
		return;
	}
	if (mroce_conn_established(&peer->conn))
		mroce_peer_send_hs(peer, MROCE_OP_CONN_CLOSE, reason);
	peer->dead = true;
	handed = mroce_peer_handoff(peer, &out);
	mroce_peer_unlock_bare(peer);
	/* Still ours to send: nobody else transmits for a dead peer. */
	if (handed) {
		local_bh_disable();
		mroce_peer_send(peer, &out);
		local_bh_enable();
	}

	spin_lock_bh(&xd->peer_lock);
	hash_del_rcu(&peer->hnode);
	xd->n_peers--;
	spin_unlock_bh(&xd->peer_lock);
	xa_erase_bh(&mroce_conn_ids, peer->id);
	mroce_peer_put(peer);
}

/* A peer without QPs for MROCE_PEER_LINGER closes. */
static void mroce_peer_gc_work(struct work_struct *work)
{
	struct mroce_peer *peer = container_of(to_delayed_work(work),
					       struct mroce_peer, gc_work);

	mroce_peer_close(peer, 0, true);
}

/* Device teardown: every QP is gone; close what is left. */
void mroce_peers_close_all(struct mroce_dev *mdev)
{
	struct mroce_xport_dev *xd = &mdev->xport;
	struct mroce_peer *peer;
	struct hlist_node *tmp;
	unsigned int bkt;

	spin_lock_bh(&xd->peer_lock);
	xd->closing = true;
	spin_unlock_bh(&xd->peer_lock);

	/* No peer can be added any more; the table only shrinks. */
	for (;;) {
		peer = NULL;
		spin_lock_bh(&xd->peer_lock);
		hash_for_each_safe(xd->peers, bkt, tmp, peer, hnode) {
			refcount_inc(&peer->ref);
			break;
		}
		spin_unlock_bh(&xd->peer_lock);
		if (!peer)
			break;
		cancel_delayed_work_sync(&peer->gc_work);
		mroce_peer_close(peer, 1, false);
		mroce_peer_put(peer);
	}
	/* The free works reference the device's netns through the peers. */
	flush_workqueue(mroce_wq);
}

/* --------------------------------------------------------- transmit queue */

/*
 * The build queues' helpers (mroce_peer_queue_path(), _ctl(), _rx_ctl())
 * are inline in mroce_peer.h.
 */

/* Nothing of ours is on the wire: no path has a transmission outstanding. */
bool mroce_peer_idle(const struct mroce_peer *peer)
{
	unsigned int i;

	for (i = 0; i < peer->conn.n_paths; i++) {
		if (peer->paths[i].tx.n_out)
			return false;
	}
	return true;
}

/* ------------------------------------------------ the responder's timer */

/*
 * The ACK timer's callback found peer->lock taken, or acknowledges again after
 * an ACK that found no memory: this much later.
 */
#define MROCE_PEER_ACK_RETRY_NS		(20 * NSEC_PER_USEC)

/*
 * The responder's own timer, for the core's receive-side deadline
 * (mroce_conn_ack_deadline(): an ACK deferred for ack_every or ack_delay,
 * or at once for a fallen grant the hint pass could not push for want of
 * memory), peer->lock held. The peer timer covers the send side only.
 *
 * Started here, under the lock, not after the unlock as the peer timer is
 * (mroce_peer_timer_apply()): that move paid because the peer timer moved
 * at nearly every unlock of a ping-pong; this one is started only when an
 * ACK is deferred -- never on the ping-pong, whose every last packet
 * carries AR and is acknowledged in its own hold -- and only when its
 * deadline comes before the expiry already standing. Only the free work
 * cancels it: an ACK sent before the expiry leaves it queued, and the
 * expiry, finding nothing due, costs one lock round and starts it again
 * at the next deferred ACK's deadline, if any: on bulk traffic at most one
 * expiry per delayed-ACK interval, where a cancel per sent ACK and a start
 * per deferred one would reprogram the CPU's timer twice per ACK. Under the
 * lock the starts are ordered by the lock itself (no sequence to check
 * again after the unlock), and none comes after the free work's cancel:
 * ->dead is checked here, under the lock, and the free work sets it with
 * the lock held before it cancels.
 *
 * ack_timer_at is the expiry last started (U64_MAX once the callback ran
 * under the lock); the timer is queued at or before it, or its callback is
 * on its way, which starts it again for whatever is still due. Inlined into
 * every unlock's hand-off: with no ACK deferred it is one comparison.
 */
static __always_inline void mroce_peer_ack_arm(struct mroce_peer *peer)
{
	u64 t;

	mroce_peer_assert_rx(peer);
	t = mroce_conn_ack_deadline(&peer->conn);
	if (likely(t >= peer->ack_timer_at) || peer->dead)
		return;
	/* The callback's own retry: a deadline still due would loop. */
	t = max(t, peer->ack_floor);
	if (t >= peer->ack_timer_at)
		return;
	peer->ack_timer_at = t;
	hrtimer_start(&peer->ack_timer, ns_to_ktime(t), HRTIMER_MODE_ABS_SOFT);
}

/*
 * The delayed-ACK deadline passed (or a pushed grant is due): under
 * peer->lock, ended by the epilogue like every hold (a doorbell may have
 * found the lock taken and left its mark). Until session 45 the callback
 * took a responder lock alone, rx_lock, which every other holder took
 * after peer->lock: one lock round more per hold, for the one hold that
 * is off the ping-pong (docs/transport.md, "a responder lock"). A busy
 * lock's holder is another CPU's (this is softirq, and every holder
 * disables BH): come back a little later rather than spin -- its hold may
 * end with the ACK anyway (a receive's epilogue sends what is due).
 * ack_timer_at keeps the expiry that fired, which is past: a holder's arm
 * meanwhile starts nothing for a later deadline, and the retry's callback
 * arms for it.
 */
static enum hrtimer_restart mroce_peer_ack_timer(struct hrtimer *timer)
{
	struct mroce_peer *peer = container_of(timer, struct mroce_peer,
					       ack_timer);
	u64 now;

	if (!mroce_peer_trylock(peer)) {
		if (!READ_ONCE(peer->dead))
			hrtimer_start(timer,
				      ktime_add_ns(ktime_get(),
						   MROCE_PEER_ACK_RETRY_NS),
				      HRTIMER_MODE_ABS_SOFT);
		return HRTIMER_NORESTART;
	}
	if (peer->dead) {
		mroce_peer_unlock_bare(peer);
		return HRTIMER_NORESTART;
	}
	now = mroce_now();
	peer->ack_timer_at = U64_MAX;
	peer->ack_floor = now + MROCE_PEER_ACK_RETRY_NS;
	if (mroce_conn_on_ack_timer(&peer->conn, now))
		mroce_ack_maybe(peer, now);
	mroce_peer_unlock(peer);
	return HRTIMER_NORESTART;
}

/* What mroce_peer_handoff() handed over. */
#define MROCE_HANDED_CTL	BIT(0)
#define MROCE_HANDED_DATA	BIT(1)

/*
 * Take what there is to send onto @out (send_lock held): control packets
 * always, first (data queued behind an ACK would hold up the peer's whole
 * window), the data too when we become its sender -- see
 * mroce_peer_flush() for who sends data from where. @own_data: the taker
 * handed data over itself; if it is another CPU's to send, that CPU's
 * work item is kicked.
 */
static __always_inline void mroce_peer_take(struct mroce_peer *peer,
					    struct mroce_peer_out *out,
					    bool own_data)
{
	bool sending;

	lockdep_assert_held(&peer->send_lock);
	__skb_queue_head_init(&out->q);
	out->data = false;
	/*
	 * The data sender lets go of ->xmitting without send_lock
	 * (mroce_peer_send()): it clears the flag, then (full barrier) looks
	 * at the queues. We spliced onto them before we got here. Seen
	 * clear, the flag is ours to act on; seen set, a stale value could
	 * hide a let-go that did not see our packets (our stores may still
	 * be in the store buffer when the load runs), so: a full barrier,
	 * then the flag again -- now one of the two sees the other. Only a
	 * flag seen set pays the barrier: on the ping-pong the sender let go
	 * long before.
	 */
	sending = READ_ONCE(peer->xmitting);
	if (sending) {
		/* Pairs with the sender's smp_store_mb(): see above. */
		smp_mb();
		sending = READ_ONCE(peer->xmitting);
	}
	if (!sending && !skb_queue_empty(&peer->sendq)) {
		if (READ_ONCE(peer->tx_cpu) == smp_processor_id() ||
		    READ_ONCE(peer->dead)) {
			WRITE_ONCE(peer->xmitting, true);
			out->data = true;
		} else if (own_data) {
			queue_work_on(READ_ONCE(peer->tx_cpu), mroce_wq,
				      &peer->xmit_work);
		}
	}
	/*
	 * While another CPU sends data, it takes our control packets too, in
	 * its next round (it stops only with both queues empty): two CPUs
	 * sending into one qdisc let the one that runs it dequeue the
	 * other's data into its own backlog, and a path's packets overtake
	 * each other (a READ responder's data and its ACKs of the READ
	 * requests behind netem: false losses, docs/protocol.md §5.3).
	 */
	if (!sending) {
		skb_queue_splice_tail_init(&peer->sendctl, &out->q);
		if (out->data)
			skb_queue_splice_tail_init(&peer->sendq, &out->q);
	}
}

/*
 * Move what this hold of peer->lock built to the send queues, before the
 * locks are dropped: the order of handoffs is the order of building, so
 * each path's packets stay in path PSN order. The requester's handshake
 * packets go before the responder's ACKs and NAKs of the same hold (no
 * packet needs the other order: ACKs are built only on an established
 * connection, and a CLOSE is built by a hold that marks the peer dead).
 * In the same hold of send_lock, take what this CPU is to send onto @out
 * (mroce_peer_take(): what mroce_peer_flush() would take after the
 * unlock, one lock round fewer). Returns MROCE_HANDED_* of what moved;
 * if any, the caller sends @out after unlocking (mroce_peer_send()),
 * BH-disabled. Inlined: every unlock runs it, mostly to find the queues
 * empty.
 */
static __always_inline unsigned int
mroce_peer_handoff(struct mroce_peer *peer, struct mroce_peer_out *out)
{
	unsigned int handed = 0;

	mroce_peer_assert_both(peer);
	mroce_peer_ack_arm(peer);
	if (!skb_queue_empty(&peer->ctlq) || !skb_queue_empty(&peer->rx_ctlq))
		handed |= MROCE_HANDED_CTL;
	if (!skb_queue_empty(&peer->xmitq))
		handed |= MROCE_HANDED_DATA;
	if (!handed)
		return 0;
	spin_lock(&peer->send_lock);
	skb_queue_splice_tail_init(&peer->ctlq, &peer->sendctl);
	skb_queue_splice_tail_init(&peer->rx_ctlq, &peer->sendctl);
	skb_queue_splice_tail_init(&peer->xmitq, &peer->sendq);
	mroce_peer_take(peer, out, handed & MROCE_HANDED_DATA);
	spin_unlock(&peer->send_lock);
	return handed;
}

/*
 * Send what mroce_peer_take() took (peer->lock not held, BH disabled:
 * receive waits for the whole batch); as the data's sender, then what
 * other CPUs handed over meanwhile, until both queues are empty.
 *
 * Letting go of ->xmitting: until session 46 the sender took send_lock
 * after each batch to look at the queues, and on the 64 B ping-pong found
 * them empty every time (2 lock rounds per round trip). Now it looks
 * without the lock first: packets there (bulk: other CPUs handed over
 * while it sent) -- it stays the sender and takes them under the lock, as
 * before. Empty -- it clears ->xmitting, then (full barrier) looks again.
 * A hand-off splices, then reads ->xmitting, and if it sees it set, a full
 * barrier and again (mroce_peer_take()): the store-buffer pair, so at
 * least one of the two sees the other and no packet is left with nobody
 * sending it. Only a hand-off that lands between the clear and the second
 * look is seen by both: it takes its packets itself (control packets;
 * data only on tx_cpu, else it kicks tx_cpu's work item), and the sender,
 * finding them too, takes under the lock what mroce_peer_take() leaves
 * it. The first look keeps that window to a few instructions after an
 * empty look. (Session 45's let-go, s45-T-sender-letgo.patch, cleared
 * before any look, and its hand-off paid a barrier every time.)
 */
static __always_inline void mroce_peer_send(struct mroce_peer *peer,
					    struct mroce_peer_out *out)
{
	unsigned int rounds;
	bool let_go;

	for (rounds = 0;; rounds++) {
		mroce_net_xmit_list(peer, &out->q);
		if (!out->data)
			break;
		let_go = false;
		if (skb_queue_empty_lockless(&peer->sendq) &&
		    skb_queue_empty_lockless(&peer->sendctl)) {
			/* Store, full barrier: pairs with mroce_peer_take(). */
			smp_store_mb(peer->xmitting, false);
			if (likely(skb_queue_empty_lockless(&peer->sendq) &&
				   skb_queue_empty_lockless(&peer->sendctl)))
				break;
			let_go = true;
		}
		spin_lock(&peer->send_lock);
		/*
		 * Other CPUs hand over while we send, and can do so for as
		 * long as their traffic lasts: this CPU, BH-disabled, would
		 * never get back to its own receive queue or scheduler. A
		 * few rounds, then the rest goes from the work item (still
		 * one sender at a time: the queue keeps its order) -- unless
		 * we let go and another CPU is the sender now.
		 */
		if (rounds == MROCE_FLUSH_ROUNDS) {
			if (!let_go || !READ_ONCE(peer->xmitting)) {
				WRITE_ONCE(peer->xmitting, false);
				queue_work_on(READ_ONCE(peer->tx_cpu), mroce_wq,
					      &peer->xmit_work);
			}
			spin_unlock(&peer->send_lock);
			break;
		}
		if (let_go) {
			/* As a hand-off would; may find nothing left for us. */
			mroce_peer_take(peer, out, true);
		} else {
			skb_queue_splice_tail_init(&peer->sendctl, &out->q);
			skb_queue_splice_tail_init(&peer->sendq, &out->q);
		}
		spin_unlock(&peer->send_lock);
	}
}

/**
 * mroce_peer_flush() - send what the holders of peer->lock handed over
 * @peer: the connection; peer->lock NOT held
 * @own_data: the caller handed over data, so the data is its to send or
 *	      to pass on to tx_cpu
 *
 * Control packets (ACKs, NAKs, handshake) have no path order to keep: they
 * leave from whichever CPU finds them, now, rather than after a work item
 * got the CPU, or a sender waits for them. Data has one sender at a time
 * (->xmitting), and while anything is in flight only on the peer's
 * transmit CPU: veth, loopback and RPS deliver through per-CPU backlogs,
 * so packets sent from two CPUs can overtake each other, and a path's
 * receiver takes a reordered PSN for a loss. A queued data packet is in
 * flight for the core already, so data leaves from tx_cpu, or from any
 * CPU once the peer is dead. An idle connection may start from any CPU
 * (mroce_tx_run() moves tx_cpu there); the ACKs then come back on that CPU
 * and keep the transmissions there. Data some other CPU handed over is
 * that CPU's to send, or to pass on to tx_cpu's work item: taking it from
 * here would send it from the wrong CPU, and a work item for it would be a
 * needless kworker wakeup (one per round trip under ib_write_lat).
 *
 * Nothing here waits for peer->lock: the send queues have their own lock,
 * held only to splice. A sender that took peer->lock again after each
 * batch spun while the other CPU built its doorbell's packet under it
 * (13 us of CPU per 64 B round trip, docs/transport.md), and then sent
 * that packet for it from the wrong CPU.
 *
 * The unlock of peer->lock does the same in two steps: it takes under the
 * send_lock hold of its hand-off (mroce_peer_handoff()), and sends after
 * unlocking (mroce_peer_send()). This is for the transmit work item.
 */
void mroce_peer_flush(struct mroce_peer *peer, bool own_data)
{
	struct mroce_peer_out out;

	local_bh_disable();
	spin_lock(&peer->send_lock);
	mroce_peer_take(peer, &out, own_data);
	spin_unlock(&peer->send_lock);
	mroce_peer_send(peer, &out);
	local_bh_enable();
}

/*
 * Data handed over on another CPU, or left by a sender after its rounds:
 * send it from tx_cpu. No doorbell waits for this (it never held
 * peer->lock), so there are no marks to serve.
 */
static void mroce_peer_xmit_work(struct work_struct *work)
{
	struct mroce_peer *peer = container_of(work, struct mroce_peer,
					       xmit_work);

	mroce_peer_flush(peer, true);
}

/* ------------------------------------------------------------ the timer */

/*
 * A timer armed this much (or less) before the earliest deadline is left
 * alone: it fires a little early and re-arms.
 */
#define MROCE_PEER_TIMER_SLACK_NS	(100 * NSEC_PER_USEC)

/* What a hold decided for the timer, applied after its unlock. */
struct mroce_peer_arm {
	bool	todo;	/* a start or cancel is to follow the unlock */
	u32	seq;	/* peer->timer_seq of the decision */
	u64	prev;	/* timer_at before it: see mroce_peer_timer_apply() */
};

/*
 * The watchdog's rounds (milliseconds: a retransmission timeout plus a
 * round-trip time, and it is not moved per ACK but re-armed when a round
 * ends) ride the timer wheel, which the scheduler tick of a busy CPU runs
 * anyway: on the hrtimer each round was an interrupt of its own, two clock
 * event reprograms and a HRTIMER softirq -- 0.04 expiries per 64 B
 * ib_write_lat round trip, nearly all the peer timer had there
 * (lat_events, session 38). The wheel fires up to a tick or two late,
 * which a round of retries does not mind. Set when watchdog_at moved (once
 * per round); peer->lock held.
 *
 * It reads no clock: the core moves watchdog_at only together with
 * round_at, the clock of the hold that began the round, so their
 * difference is the round's length. The hold that began it arms here as
 * it ends, microseconds later (or, a doorbell that sends, in its arm
 * after the flush, or the next hold's if that one is skipped); the round
 * runs longer by that much, on top of the wheel's jiffy or two. The read
 * was ~0.9 per 64 B round trip in make insnprof (single-threaded TCG,
 * where a round trip lasts milliseconds and a round ends in most).
 */
static __always_inline void mroce_peer_wd_arm(struct mroce_peer *peer)
{
	const struct mroce_conn *c = &peer->conn;
	u64 wd = c->watchdog_at ? c->watchdog_at : U64_MAX;

	if (likely(wd == peer->wd_at))
		return;
	peer->wd_at = wd;
	/* A stale expiry finds nothing due: cheaper than a cancel. */
	if (wd == U64_MAX || peer->dead)
		return;
	mod_timer(&peer->wd_timer, jiffies + 1 +
		  nsecs_to_jiffies(wd > c->round_at ? wd - c->round_at : 0));
}

/*
 * The send side's earliest deadline but the watchdog's (which is on the
 * wheel, mroce_peer_wd_arm()).
 */
static __always_inline u64 mroce_peer_tx_due(struct mroce_conn *c)
{
	u64 t = mroce_conn_tx_deadline(c);

	if (!mroce_conn_established(c) || !c->watchdog_at ||
	    t != c->watchdog_at)
		return t;
	/* The watchdog's is the earliest: the others (paths_due is fresh). */
	t = mroce_earliest(U64_MAX, c->paths_due);
	if (c->hs.state == MROCE_HS_REQ_SENT)
		t = mroce_earliest(t, c->hs.deadline);
	return t;
}

/*
 * The earliest deadline anybody but the responder has (its delayed ACK has
 * its own timer: mroce_peer_ack_arm()), and whether arming for it would
 * touch the timer at all (peer->lock held): false when the timer already
 * stands where it should, within the slack, or nothing is due and none is
 * armed. Inlined: every unlock asks, and mostly hears false.
 *
 * It reads no clock, nor does mroce_peer_wd_arm(): in a VM the clocksource
 * may be an emulated HPET, where each read is a trip to the device model.
 * A deadline already past needs none -- the hrtimer core fires an expiry
 * in the past at once -- except
 * from the timer's own callback: the softirq runs every expiry up to the
 * time it read before the callbacks, so a deadline still due there (work
 * that found no memory) would run again in that loop, and again. The
 * callback's clock (timer_floor) bounds it.
 */
static __always_inline bool mroce_peer_arm_moves(struct mroce_peer *peer,
						 u64 *due)
{
	u64 t;

	mroce_peer_wd_arm(peer);
	t = mroce_peer_tx_due(&peer->conn);
	t = min(t, peer->wake_at);
	if (peer->pace_at)
		t = min(t, peer->pace_at);
	*due = t;
	if (t == U64_MAX)
		return peer->timer_at != U64_MAX;
	/*
	 * An expiry well before the earliest deadline is wasted: push it out
	 * (a PTO cleared by an ACK leaves the RTO or watchdog, milliseconds
	 * later). Small moves are not worth reprogramming the timer.
	 */
	return t < peer->timer_at ||
	       t - peer->timer_at >= MROCE_PEER_TIMER_SLACK_NS;
}

/*
 * timer_at changes (peer->lock held); timer_seq counts the changes for the
 * starts and cancels that follow them outside the lock. timer_at is
 * written first: mroce_peer_timer_apply() reads the sequence (acquire),
 * then timer_at, and so sees a value at least as new as the sequence.
 */
static __always_inline void mroce_peer_timer_set(struct mroce_peer *peer,
						 u64 at)
{
	WRITE_ONCE(peer->timer_at, at);
	/* Pairs with the acquire in mroce_peer_timer_apply(). */
	smp_store_release(&peer->timer_seq, peer->timer_seq + 1);
}

/*
 * Decide where the timer goes for the earliest deadline anybody has
 * (peer->lock held): record it in timer_at and return true when the timer
 * must be started or cancelled, which the caller does once it dropped the
 * lock (mroce_peer_arm_unlock()). Moving a CPU's first timer reprograms
 * its clock event device with irqs off -- in a TCG guest an emulated LAPIC
 * write -- and under the lock the other CPU's receive of the same peer
 * spun on it (17 % of the receive's wait time in session 35's traced run,
 * docs/experiments/s35-T-peerlock.md).
 */
static bool mroce_peer_arm(struct mroce_peer *peer, struct mroce_peer_arm *a)
{
	u64 t;

	lockdep_assert_held(&peer->lock);
	if (peer->dead || !mroce_peer_arm_moves(peer, &t))
		return false;
	a->prev = peer->timer_at;
	/*
	 * t == U64_MAX: nothing is due any more (the ACK cleared the PTO and
	 * RTO): cancel. An expiry now would only take the lock and find
	 * nothing, and under a busy-polling application that lock round is
	 * what makes the next doorbell's trylock fail.
	 */
	mroce_peer_timer_set(peer, t == U64_MAX ? U64_MAX :
				   max(t, peer->timer_floor));
	a->seq = peer->timer_seq;
	a->todo = true;
	return true;
}

/*
 * Start or cancel the timer as the hold that ended decided (@a), with
 * peer->lock dropped and inside the rcu_read_lock() taken before the
 * unlock: the peer's free work cancels the timer only after its
 * synchronize_rcu(), and the decision was taken under the lock with ->dead
 * false, i.e. before mroce_peer_close() could set it, so the grace period
 * covers this start. Without it a start could come after that cancel.
 *
 * Another CPU may decide under the lock after us and start or cancel
 * before we do; ours, coming last, would leave the older expiry (a late
 * PTO or RTO). So: a decision already superseded when we come is left to
 * its successor's owner; after our start or cancel we look at the sequence
 * again, and if it moved meanwhile we apply what stands in timer_at now,
 * until it stays (each round needs another hold's decision during ours).
 * The orderings: a decider writes timer_seq under peer->lock before its
 * own start, which takes the timer base's lock; if that start came before
 * ours, our start's base lock (or our cancel's, when it found the timer
 * queued) orders its sequence write before our re-read. A cancel that
 * found the timer not queued did nothing, so it cannot undo anybody's.
 */
static void mroce_peer_timer_apply(struct mroce_peer *peer,
				   const struct mroce_peer_arm *a)
{
	u32 seq = a->seq;
	int ret;
	u64 at;

	/* Pairs with the release in mroce_peer_timer_set(). */
	if (smp_load_acquire(&peer->timer_seq) != seq)
		return;
	for (;;) {
		at = READ_ONCE(peer->timer_at);
		ret = 0;
		if (at == U64_MAX)
			ret = hrtimer_try_to_cancel(&peer->timer);
		else
			hrtimer_start(&peer->timer, ns_to_ktime(at),
				      HRTIMER_MODE_ABS_SOFT);
		/* Our start or cancel before the re-read. */
		smp_mb();
		if (READ_ONCE(peer->timer_seq) == seq)
			break;
		/* timer_at as new as the sequence: see the first read. */
		seq = smp_load_acquire(&peer->timer_seq);
	}
	/*
	 * Our cancel found the callback running (here: on another CPU, or
	 * this is its own unlock after it started the timer again in an
	 * earlier round): whatever it leaves queued is not ours to know, so
	 * timer_at keeps the expiry it had, as when the cancel ran under the
	 * lock -- the next hold with nothing due cancels again. Only if no
	 * hold decided since ours; a busy lock's holder decides anew anyway.
	 */
	if (ret < 0 && seq == a->seq && mroce_peer_trylock(peer)) {
		if (peer->timer_seq == seq)
			WRITE_ONCE(peer->timer_at, a->prev);
		mroce_peer_unlock_bare(peer);
	}
}

/*
 * Drop peer->lock; with @keep_bh, leave bottom halves disabled for a send
 * that follows (mroce_peer_send(), then local_bh_enable()): one enable
 * rather than an enable in the unlock and a disable and enable around the
 * send.
 */
static __always_inline void mroce_peer_unlock_held(struct mroce_peer *peer,
						   bool keep_bh)
{
	if (!keep_bh) {
		mroce_peer_unlock_bare(peer);
		return;
	}
	spin_unlock(&peer->lock);
}

/*
 * Drop peer->lock (@keep_bh: see mroce_peer_unlock_held()),
 * then start or cancel the timer as decided under it.
 */
static __always_inline void mroce_peer_arm_unlock(struct mroce_peer *peer,
						  const struct mroce_peer_arm *a,
						  bool keep_bh)
{
	if (!a->todo) {
		mroce_peer_unlock_held(peer, keep_bh);
		return;
	}
	rcu_read_lock();
	mroce_peer_unlock_held(peer, keep_bh);
	mroce_peer_timer_apply(peer, a);
	rcu_read_unlock();
}

/*
 * True if the timer now stands where this hold's state needs it (or will,
 * once @a is applied after the unlock); false if the tasklet was left to
 * arm it. In softirq the arm waits for the peer's tasklet (see below), but
 * only when it would move the timer: on a ping-pong the deadline rarely
 * changes across a received packet (nothing in flight before, nothing
 * after), and a tasklet run for nothing was 2.3 runs of a TASKLET softirq,
 * a lock round and an unlock per 64 B round trip, all before the
 * application that polls got its CPU back (lat_trace, session 14).
 */
static bool mroce_peer_arm_later(struct mroce_peer *peer,
				 struct mroce_peer_arm *a)
{
	u64 t;

	lockdep_assert_held(&peer->lock);
	if (!mroce_peer_arm_moves(peer, &t))
		return true;
	/*
	 * The tasklet running on the other CPU (it cannot be this one's: its
	 * own unlock arms in place): scheduled here, this CPU's tasklet
	 * softirq finds it locked and raises itself again, pass after pass,
	 * until that run ends -- 2.6 extra passes per round trip in
	 * make insnprof, and past ten restarts the softirqs go to ksoftirqd.
	 * That run may have tried our lock already and given up, so arm here.
	 */
	if (test_bit(TASKLET_STATE_RUN, &peer->arm_tasklet.state)) {
		mroce_peer_arm(peer, a);
		return true;
	}
	tasklet_schedule(&peer->arm_tasklet);
	return false;
}

/*
 * The epilogue of every entry point: arm, unlock, send. Then the doorbells
 * that found the lock taken while we held it (mroce_peer_kick()): on an
 * idle connection they are ours to transmit.
 *
 * Where the timer is armed is chosen so that it moves as little as
 * possible: each move of a CPU's first timer reprograms its clock event
 * device with irqs off, ~12 us of CPU per 64 B round trip in a TCG guest
 * (docs/transport.md, sessions 10 and 11). On a ping-pong the packet we
 * send sets a PTO and its ACK, delivered on this CPU, clears it again --
 * outside softirq in the local_bh_enable() at the end of our flush, in
 * softirq later in the same NET_RX run. Arming after that, the timer does
 * not move at all; arming before, it moved in and out once per packet:
 *
 *  - outside softirq (a doorbell's system call, a work item) with packets
 *    to send: arm after the flush, one more lock round;
 *  - in softirq (receive, our timer): the peer's arm tasklet arms. A
 *    tasklet scheduled from NET_RX runs after it in the same softirq pass
 *    and before the HRTIMER softirq, where a soft hrtimer expires anyway,
 *    so no deadline fires later for it; a burst of packets for the peer
 *    computes its deadline once.
 */
void __mroce_peer_unlock(struct mroce_peer *peer, bool from_tasklet)
{
	struct mroce_peer_out out;
	struct mroce_peer_arm a;
	unsigned int rounds, handed;
	bool late, armed;
	u32 seq;

	for (rounds = 0;; rounds++) {
		WRITE_ONCE(peer->rx_data, false);
		handed = mroce_peer_handoff(peer, &out);
		late = false;
		armed = true;
		a.todo = false;
		if (from_tasklet || peer->dead)
			mroce_peer_arm(peer, &a);
		else if (in_serving_softirq())
			armed = mroce_peer_arm_later(peer, &a);
		else if (handed)
			late = true;
		else
			mroce_peer_arm(peer, &a);
		/*
		 * The timer stands where this hold left it needed (or will
		 * once our start follows the unlock): say so.
		 */
		if (armed && !late)
			WRITE_ONCE(peer->arm_seq, peer->arm_seq + 1);
		seq = peer->arm_seq;
		/* The hand-off took what we send: BH stays off until sent. */
		mroce_peer_arm_unlock(peer, &a, handed);
		if (handed) {
			mroce_peer_send(peer, &out);
			local_bh_enable();
		}
		/*
		 * A busy lock's holder arms on its way out, after what we
		 * changed: waiting for it here kept the doorbell's system
		 * call -- and the polling application -- in the kernel while
		 * the other CPU placed and acknowledged a packet under it.
		 * So did a hold since ours that put the timer where its
		 * state, which includes ours, needs it (arm_seq moved; not
		 * one that left that to the tasklet): on a ping-pong the
		 * receive of the ACK of the packet just sent, on this CPU
		 * before the flush returned. Arming again would find nothing
		 * to move, for a lock round. What later holds change, they
		 * arm for, as they would have after our arm.
		 */
		if (late && READ_ONCE(peer->arm_seq) == seq &&
		    mroce_peer_trylock(peer)) {
			a.todo = false;
			mroce_peer_arm(peer, &a);
			mroce_peer_arm_unlock(peer, &a, false);
		}
		/*
		 * With data in flight a doorbell's mark waits for the next
		 * ACK, whose mroce_tx_run() takes it; and if the connection
		 * went idle since, whoever idled it held the lock after us
		 * and looks below itself. So only an idle connection pays
		 * for the barrier.
		 */
		if (READ_ONCE(peer->conn.inflight))
			return;
		/*
		 * Pairs with smp_mb__after_atomic() in mroce_peer_kick(): it
		 * sets the mark, then tries the lock; we released the lock,
		 * now we look at the mark. Either its trylock finds the lock
		 * free or we find the mark.
		 */
		smp_mb();
		if (!mroce_peer_kick_marked(peer))
			return;
		/*
		 * Doorbells that keep coming while nothing goes out (a pacer
		 * or window holding every QP) would keep us here: after a
		 * few rounds the work item serves them.
		 */
		if (rounds == MROCE_KICK_ROUNDS) {
			queue_work_on(READ_ONCE(peer->tx_cpu), mroce_wq,
				      &peer->tx_work);
			return;
		}
		if (!mroce_peer_trylock(peer))
			return;
		if (peer->dead || peer->conn.inflight) {
			/* Busy: the next ACK takes the mark (mroce_tx_run()). */
			mroce_peer_unlock_bare(peer);
			return;
		}
		mroce_comp_run(peer);
		mroce_tx_run(peer, mroce_now(), MROCE_TX_BUDGET);
	}
}

static void mroce_peer_arm_tasklet(struct tasklet_struct *t)
{
	struct mroce_peer *peer = from_tasklet(peer, t, arm_tasklet);

	/*
	 * A busy lock is another CPU's, and every holder arms on its way
	 * out (or schedules this tasklet there): spinning here only kept
	 * this CPU's next softirq -- often the ping-pong's next packet --
	 * waiting (1.3 us of CPU per 64 B round trip in the s12 profile).
	 */
	if (!mroce_peer_trylock(peer))
		return;
	__mroce_peer_unlock(peer, true);
}

/*
 * mroce_peer_stats_end()'s counting, once one of the three moved since
 * mroce_peer_stats_begin() (both inline in mroce_peer.h).
 */
void __mroce_peer_stats_end(struct mroce_peer *peer)
{
	const struct mroce_conn_stats *n = &peer->conn.stats;
	struct mroce_dev *mdev = peer->mdev;
	const struct mroce_peer_stats_mark *o = &peer->stats_mark;

	if (n->rtos != o->rtos)
		mroce_counter_add(mdev, MROCE_CNT_RTO, n->rtos - o->rtos);
	if (n->ptos != o->ptos)
		mroce_counter_add(mdev, MROCE_CNT_PTO, n->ptos - o->ptos);
	if (n->rekeys != o->rekeys)
		mroce_counter_add(mdev, MROCE_CNT_PATH_REKEYS,
				  n->rekeys - o->rekeys);
}

/* QPs whose RNR or window hold has run out get back to transmitting. */
static void mroce_peer_wake(struct mroce_peer *peer, u64 now)
{
	struct mroce_qp *qp;
	u64 next = U64_MAX;

	if (peer->wake_at > now)
		return;
	list_for_each_entry(qp, &peer->qps, xport.peer_node) {
		u64 until = qp->xport.hold_until;

		if (!until)
			continue;
		if (until <= now) {
			qp->xport.hold_until = 0;
			mroce_tx_queue_qp(peer, qp);
		} else {
			next = min(next, until);
		}
	}
	peer->wake_at = next;
}

/* False: the lock was busy, nothing done (mroce_peer_timer() retries). */
static bool mroce_peer_timer_fn(struct mroce_peer *peer, bool wheel)
{
	struct mroce_timer_res res;
	u64 now;

	if (!mroce_peer_trylock(peer))
		return READ_ONCE(peer->dead);
	if (peer->dead) {
		mroce_peer_unlock_bare(peer);
		return true;
	}
	now = mroce_now();
	if (wheel) {
		/* The unlock sets the wheel again for what stands then. */
		peer->wd_at = U64_MAX;
	} else {
		/*
		 * Fired: what a hold decided before, and starts after us,
		 * is stale.
		 */
		mroce_peer_timer_set(peer, U64_MAX);
		peer->timer_floor = now + NSEC_PER_USEC;
	}
	if (peer->pace_at && peer->pace_at <= now)
		peer->pace_at = 0;

	mroce_peer_stats_begin(peer);
	/* The send side's share: the ACK timer has the rest. */
	mroce_conn_on_tx_timer(&peer->conn, now, &res);
	mroce_peer_stats_end(peer);
	if (res.hs)
		mroce_peer_hs_result(peer, res.hs, now);
	if (res.probe_mask)
		mroce_peer_probes(peer, res.probe_mask, now);
	if (res.events & MROCE_EV_RETRY_EXHAUSTED) {
		/* The QPs with work fail; the survivors start afresh. */
		mroce_comp_fail_peer(peer, IB_WC_RETRY_EXC_ERR);
		mroce_conn_reset_transport(&peer->conn, now);
	}
	mroce_peer_wake(peer, now);
	mroce_comp_run(peer);
	mroce_tx_run(peer, now, MROCE_TX_BUDGET);
	mroce_peer_unlock(peer);
	return true;
}

static void mroce_peer_tx_work(struct work_struct *work)
{
	struct mroce_peer *peer = container_of(work, struct mroce_peer,
					       tx_work);

	mroce_peer_lock(peer);
	if (!peer->dead) {
		mroce_comp_run(peer);
		mroce_tx_run(peer, mroce_now(), MROCE_TX_BUDGET);
	}
	mroce_peer_unlock(peer);
}

/* mroce_peer_take_kicks() found a mark (mroce_peer.h). */
void __mroce_peer_take_kicks(struct mroce_peer *peer)
{
	struct mroce_qp *qp;

	lockdep_assert_held(&peer->lock);
	if (!test_and_clear_bit(0, &peer->kick_pending))
		return;
	list_for_each_entry(qp, &peer->qps, xport.peer_node) {
		if (READ_ONCE(qp->xport.kicked)) {
			WRITE_ONCE(qp->xport.kicked, false);
			mroce_tx_queue_qp(peer, qp);
		}
	}
}

/*
 * Whether a doorbell that found the lock taken waits for it instead of
 * leaving its mark. On a ping-pong the holder is the other CPU's receive of
 * the packet this application just polled for, still acknowledging it; a
 * mark makes that CPU build our packet too, veth delivers it there, and it
 * is placed inside the other application's own system call, which returns
 * only after that CPU also acknowledged it and processed the ACK
 * (lat_trace, session 14: placement to the other side's next post 79 us
 * against 6-8 us the other way). Waiting, each side sends its own WRITE
 * from its own CPU. Only behind received data (->rx_data): a holder busy
 * with ACKs serves the mark in its own transmit run; waiting behind ACKs
 * too cost ib_send_bw 481 -> 399 Mb/s in one A/B (likely: a bulk sender's
 * transmissions left the softirq CPU). A user QP's doorbell is a system
 * call with bottom halves enabled: it holds no peer lock nor any lock a
 * completion handler takes. Kernel QPs keep the mark (their completion
 * handlers run under peer->lock and may post), and so does a busy
 * connection: its next ACK takes the mark.
 */
static bool mroce_peer_kick_waits(const struct mroce_peer *peer,
				  const struct mroce_qp *qp)
{
	return qp->is_user && in_task() && !irqs_disabled() &&
	       !READ_ONCE(peer->conn.inflight);
}

static void mroce_peer_mark(struct mroce_peer *peer, struct mroce_qp *qp)
{
	WRITE_ONCE(qp->xport.kicked, true);
	set_bit(0, &peer->kick_pending);
}

/**
 * mroce_peer_kick() - @qp of @peer has new work to transmit
 * @peer: the QP's connection
 * @qp: the QP
 *
 * Any context. Marks the QP; whoever transmits for the peer next picks the
 * mark up. On an idle connection that is us, at once (a doorbell costs no
 * context switch). With packets in flight it is the ACK that comes back:
 * transmitting from here as well would send the peer's packets from two
 * CPUs at once, and the receiver's per-CPU backlogs (veth, loopback, RPS)
 * would reorder them within a path, which the receiver takes for loss.
 * Hard irq leaves it to the work item. A busy lock leaves it to the
 * holder (but a user QP's doorbell on an idle connection waits for it:
 * mroce_peer_kick_waits()): every holder of a live peer's lock releases
 * it through mroce_peer_unlock(), which looks for marks after unlocking.
 * Queueing the work item here as well cost a wakeup of a high-priority
 * kworker on a CPU that a busy-polling application holds for about one
 * doorbell in four under ib_write_lat; the wakeup preempts the softirq that
 * carries the ACK, and softirq work then waits for ksoftirqd.
 */
void mroce_peer_kick(struct mroce_peer *peer, struct mroce_qp *qp)
{
	if (mroce_peer_kick_waits(peer, qp)) {
		if (!mroce_peer_trylock(peer)) {
			if (!READ_ONCE(peer->rx_data))
				goto mark;
			mroce_peer_lock(peer);
		}
		/*
		 * Under the lock: put the QP on the transmit list ourselves
		 * rather than mark it for mroce_peer_take_kicks() to find (two
		 * atomic bit operations and a walk of the peer's QPs). Only
		 * while it is still attached here: detach unhooks it under
		 * this lock, and a QP that left must not join our list. Any
		 * other case keeps the mark, as a marking doorbell would.
		 */
		if (qp->xport.peer == peer && !peer->dead)
			mroce_tx_queue_qp(peer, qp);
		else
			mroce_peer_mark(peer, qp);
		goto run;
	}
mark:
	mroce_peer_mark(peer, qp);
	/*
	 * The mark is visible before we look at the lock: a holder that
	 * misses it (its take_kicks ran before set_bit) is one our trylock
	 * fails on; it finds the mark after unlocking (mroce_peer_unlock()).
	 */
	smp_mb__after_atomic();
	if (in_hardirq() || irqs_disabled()) {
		queue_work_on(READ_ONCE(peer->tx_cpu), mroce_wq, &peer->tx_work);
		return;
	}
	if (!mroce_peer_trylock(peer))
		return;
run:
	if (!peer->dead && !peer->conn.inflight) {
		mroce_comp_run(peer);
		mroce_tx_run(peer, mroce_now(), MROCE_TX_BUDGET);
	}
	mroce_peer_unlock(peer);
}

/* ------------------------------------------------------------ handshake */

void mroce_peer_send_hs(struct mroce_peer *peer, u8 opcode, u32 reason)
{
	struct mroce_pkt pkt;
	struct sk_buff *skb;
	u32 len = mroce_hdr_len(opcode);

	mroce_peer_assert_both(peer);
	skb = mroce_net_alloc_skb(peer->mdev, len, GFP_ATOMIC);
	if (!skb)
		return;		/* the handshake timer sends it again */
	mroce_conn_build_hs(&peer->conn, opcode, reason, &pkt);
	if (mroce_encode(&pkt, skb_put(skb, len), len) != len) {
		kfree_skb(skb);
		return;
	}
	mroce_peer_queue_ctl(peer, skb);
}

static void mroce_peer_trace_hs(struct mroce_peer *peer)
{
	u8 state = peer->conn.hs.state;

	if (state == peer->hs_state)
		return;
	trace_mroce_conn_state(peer->mdev->ibdev.index, peer->id,
			       peer->conn.hs.remote.id,
			       mroce_trace_addr_hi(&peer->raddr),
			       mroce_trace_addr_lo(&peer->raddr),
			       peer->hs_state, state, peer->conn.n_paths);
	peer->hs_state = state;
}

/* Does any attached QP have something to send or to wait for? */
static bool mroce_peer_busy(struct mroce_peer *peer)
{
	struct mroce_qp *qp;

	list_for_each_entry(qp, &peer->qps, xport.peer_node) {
		struct mroce_qp_xport *xp = &qp->xport;

		if (mroce_xqp_sends(xp) &&
		    (xp->cur || xp->sq_done != xp->sq_next ||
		     xp->stx.una != xp->stx.next))
			return true;
	}
	return !list_empty(&peer->tx_list);
}

/**
 * mroce_peer_fail_qps() - the transport gives up on some of a peer's QPs
 * @peer: the connection, locked
 * @pick: which attached QPs fail (those in ERR already never do); sets
 *	  *swqe to the send WQE that completes with @status, or leaves it
 *	  NULL when the failure belongs to no WQE (IB_EVENT_QP_FATAL then)
 * @arg: for @pick
 * @status: the completion status of *swqe
 *
 * Each QP picked goes to ERR and every other WQE it holds, posted receives
 * included, completes flushed.
 */
void mroce_peer_fail_qps(struct mroce_peer *peer, mroce_qp_pick_fn pick,
			 u64 arg, enum ib_wc_status status)
{
	struct mroce_qp *qp, *tmp;
	struct mroce_swqe *swqe;

	mroce_peer_assert_both(peer);
	list_for_each_entry_safe(qp, tmp, &peer->qps, xport.peer_node) {
		swqe = NULL;
		if (qp->xport.state != MROCE_XQP_DEAD && pick(qp, arg, &swqe))
			mroce_comp_fail_qp(peer, qp, swqe, status);
	}
}

/*
 * The device can carry nothing any more: every QP, so that consumers see
 * errors now instead of waiting for their own timeouts.
 */
bool mroce_peer_pick_all(struct mroce_qp *qp, u64 arg,
			 struct mroce_swqe **swqe)
{
	return true;
}

/*
 * A QP that exchanged data with an incarnation of the peer other than
 * @nonce (0: with any; the connection is gone) talks to a QP that no longer
 * exists.
 */
static bool mroce_peer_pick_orphan(struct mroce_qp *qp, u64 nonce,
				   struct mroce_swqe **swqe)
{
	/* Both locks held: neither side can be setting it. */
	u64 bound = qp->xport.bound_nonce;

	return bound && bound != nonce;
}

/* Act on what the handshake state machine asks for (peer->lock held). */
void mroce_peer_hs_result(struct mroce_peer *peer, u32 act, u64 now)
{
	struct mroce_dev *mdev = peer->mdev;
	struct mroce_qp *qp;
	u64 nonce;

	mroce_peer_assert_both(peer);
	mroce_peer_trace_hs(peer);
	if (act & MROCE_HS_SEND_REQ)
		mroce_peer_send_hs(peer, MROCE_OP_CONN_REQ, 0);
	if (act & MROCE_HS_SEND_REP)
		mroce_peer_send_hs(peer, MROCE_OP_CONN_REP, 0);

	if (act & (MROCE_HS_UP | MROCE_HS_RESTART)) {
		mroce_counter_inc(mdev, MROCE_CNT_CONN_OPENED);
		nonce = peer->conn.hs.remote.nonce;
		/*
		 * The transport state was reset: nothing in flight will be
		 * reported lost, so every unacknowledged chunk goes again.
		 * QPs that already talked to an earlier incarnation of the
		 * peer talk to QPs that no longer exist.
		 */
		if (act & MROCE_HS_RESTART)
			mroce_counter_inc(mdev, MROCE_CNT_CONN_LOST);
		mroce_peer_fail_qps(peer, mroce_peer_pick_orphan, nonce,
				    IB_WC_WR_FLUSH_ERR);
		list_for_each_entry(qp, &peer->qps, xport.peer_node) {
			if (qp->xport.state != MROCE_XQP_DEAD)
				mroce_tx_requeue_unacked(peer, qp);
		}
	}
	if (act & MROCE_HS_DOWN) {
		if (peer->conn.hs.state == MROCE_HS_FAILED) {
			mroce_counter_inc(mdev, MROCE_CNT_CONN_FAILED);
			mroce_comp_fail_peer(peer, IB_WC_RETRY_EXC_ERR);
		} else {
			mroce_counter_inc(mdev, MROCE_CNT_CONN_LOST);
			/*
			 * The peer closed the connection (a peer closes only
			 * once it has no QPs left, or its device goes) or
			 * forgot it: the QPs ours exchanged data with are
			 * gone. A receiver waiting on one would wait forever.
			 */
			mroce_peer_fail_qps(peer, mroce_peer_pick_orphan, 0,
					    IB_WC_WR_FLUSH_ERR);
			/* QPs not bound to anyone yet start over. */
			if (mroce_peer_busy(peer))
				mroce_peer_connect(peer, now);
		}
	}
	mroce_peer_trace_hs(peer);
}

void mroce_peer_connect(struct mroce_peer *peer, u64 now)
{
	mroce_peer_assert_both(peer);
	mroce_peer_hs_result(peer, mroce_conn_connect(&peer->conn, now), now);
}

/* PROBEs the core asked for: one per path in @mask. */
void mroce_peer_probes(struct mroce_peer *peer, u64 mask, u64 now)
{
	struct mroce_tx_slot slot;
	struct mroce_pkt pkt;
	struct sk_buff *skb;

	lockdep_assert_held(&peer->lock);
	while (mask) {
		u8 path = __ffs64(mask);

		mask &= mask - 1;
		skb = mroce_net_alloc_skb(peer->mdev, MROCE_PROBE_LEN,
					  GFP_ATOMIC);
		if (!skb)
			return;		/* the PTO/RTO asks again */
		if (!mroce_conn_probe(&peer->conn, path, now, &slot)) {
			kfree_skb(skb);
			continue;
		}
		memset(&pkt, 0, sizeof(pkt));
		pkt.c.opcode = MROCE_OP_PROBE;
		pkt.c.flags = MROCE_F_AR;
		mroce_conn_fill(&peer->conn, &slot, &pkt);
		mroce_encode(&pkt, skb_put(skb, MROCE_PROBE_LEN),
			     MROCE_PROBE_LEN);
		mroce_counter_inc(peer->mdev, MROCE_CNT_PROBES_SENT);
		mroce_peer_queue_path(peer, skb, path, slot.sport);
	}
}

/* ----------------------------------------------------- core callbacks */

/*
 * A chunk arrived: by the ACK of its latest transmission, or by a late ACK
 * block (late_acked) proving that a transmission already reported lost got
 * there after all. In the late case the chunk usually still waits in the
 * resend queue; mroce_xport_stream_ack() takes it off.
 */
static void mroce_peer_acked(void *ctx, u64 cookie, u32 len, u8 path)
{
	struct mroce_peer *peer = ctx;
	struct mroce_qp *qp = mroce_xport_cookie_qp(peer, cookie);
	struct mroce_qp_xport *xp;
	u32 psn = (u32)cookie;

	if (!qp)
		return;
	xp = &qp->xport;
	if (!mroce_xport_stream_ack(xp, psn))
		return;
	/*
	 * Requester side; the responder sets it too (mroce_rx_stream()),
	 * both under peer->lock: they store the same nonce, once. The
	 * cmpxchg is from when the responder held a lock of its own.
	 */
	if (!READ_ONCE(xp->bound_nonce))
		cmpxchg64(&xp->bound_nonce, 0, peer->conn.hs.remote.nonce);
	mroce_comp_mark(peer, qp);
}

static void mroce_peer_lost(void *ctx, u64 cookie, u32 len, u8 path,
			    u32 path_psn, u8 why)
{
	static const u8 reason[] = {
		[MROCE_LOSS_SACK] = MROCE_RETX_SACK,
		[MROCE_LOSS_RTO] = MROCE_RETX_RTO,
		[MROCE_LOSS_PTO] = MROCE_RETX_PTO,
		[MROCE_LOSS_REKEY] = MROCE_RETX_REKEY,
		[MROCE_LOSS_TIME] = MROCE_RETX_TIME,
	};
	struct mroce_peer *peer = ctx;
	struct mroce_qp *qp = mroce_xport_cookie_qp(peer, cookie);

	if (!qp)
		return;
	if (path >= MROCE_PEER_PATHS)
		path = MROCE_TRACE_NO_PATH;
	mroce_tx_resend(qp, (u32)cookie,
			why < ARRAY_SIZE(reason) ? reason[why] : MROCE_RETX_SACK,
			path, path < MROCE_PEER_PATHS ? peer->paths[path].gen : 0,
			path_psn);
}

static void mroce_peer_path_state(void *ctx, u8 path, u8 old_state,
				  u8 new_state)
{
	struct mroce_peer *peer = ctx;
	struct mroce_path *p = &peer->paths[path];

	trace_mroce_path_state(peer->mdev->ibdev.index, peer->id,
			       mroce_trace_path(path, p->gen), p->sport,
			       old_state, new_state);
}

/*
 * The watchdog asks, at the end of a round with nothing of ours out:
 * does a live QP still wait for a READ/ATOMIC response (docs §5.5)?
 */
static bool mroce_peer_owed(void *ctx)
{
	struct mroce_peer *peer = ctx;
	struct mroce_qp *qp;

	lockdep_assert_held(&peer->lock);
	list_for_each_entry(qp, &peer->qps, xport.peer_node) {
		if (qp->xport.state == MROCE_XQP_RTS &&
		    qp->xport.rd_done != qp->xport.rd_next)
			return true;
	}
	return false;
}

const struct mroce_conn_ops mroce_peer_conn_ops = {
	.acked = mroce_peer_acked,
	.lost = mroce_peer_lost,
	.path_state = mroce_peer_path_state,
	.rekey = mroce_trace_conn_rekey,
	.cc = mroce_trace_conn_cc,
	.cc_on = &mroce_trace_cc_on,
	.late_acked = mroce_peer_acked,
	.owed = mroce_peer_owed,
};

/* ----------------------------------------------------- passive open */

/*
 * CONN_REQs from addresses we have no peer for. Creating a peer allocates
 * (tens of KiB) and may sleep, so receive queues the request here; the
 * requester repeats it if this queue was full.
 */
void mroce_peer_accept_work(struct work_struct *work)
{
	struct mroce_xport_dev *xd = container_of(work, struct mroce_xport_dev,
						  accept_work);
	struct mroce_dev *mdev = container_of(xd, struct mroce_dev, xport);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&xd->accept_q))) {
		mroce_rx_conn_req(mdev, skb);
		kfree_skb(skb);
	}
}
