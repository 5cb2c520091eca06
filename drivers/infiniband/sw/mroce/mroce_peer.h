/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel side of mroce connections, and the transport's internal API.
 *
 * A peer is one connection: one per (device, remote IP address), shared by
 * every RC QP of the device that talks to that address. It embeds the
 * protocol core's connection engine (core/mroce_conn.h) with its path
 * array, and adds what the kernel needs around it: routes, a timer, a
 * transmit context, the QPs attached to it, and a lifetime.
 *
 * Files of the transport
 * ----------------------
 *   mroce_net.c    UDP tunnel sockets (one pair per netns), routes, the
 *                  IP/UDP encapsulation of every packet we send
 *   mroce_peer.c   the peer table, handshake driving, timer, lifetime
 *   mroce_tx.c     requester and responder transmit: WQEs and READ/ATOMIC
 *                  answers become chunks become packets (zero-copy)
 *   mroce_rx.c     receive demux, validation, placement, responder
 *   mroce_comp.c   requester completions and in-order receive completions
 *   mroce_ack.c    ACK and NAK generation
 *   mroce_xport.c  the verbs hooks (mroce_xport.h)
 *
 * Locking (extends mroce.h and mroce_verbs.h; outermost first)
 * -------------------------------------------------------------
 *   qp->modify_mutex          (verbs) hooks that attach/detach QPs
 *   mdev->xport.peer_lock     peer table writers; never held with 2.
 *   2. peer->lock             (BH-safe spinlock) everything of one
 *                             connection: the core engine (every call into
 *                             it), the attached QPs' transport state
 *                             (struct mroce_qp_xport, the ->xport of their
 *                             WQEs), the transmit and completion lists and
 *                             the transmit queue, and the responder's share
 *                             (its control queue rx_ctlq and ACK timer;
 *                             mroce_peer_assert_rx() names it). The data
 *                             path calls the verbs helpers (mroce_sq_*,
 *                             mroce_rq_*, copy and MR helpers) with it held,
 *                             as mroce_verbs.h allows; they take
 *                             qp->state_lock, queue locks, mr->lock and
 *                             cq->lock inside it. The responder had a lock
 *                             of its own, peer->rx_lock, taken right after
 *                             this one by every holder but the ACK timer's
 *                             callback; since session 45 the callback takes
 *                             this one and rx_lock is gone (one lock round
 *                             per hold fewer; docs/transport.md, "a
 *                             responder lock").
 *   3. peer->send_lock        (BH) the send queues and peer->xmitting;
 *                             innermost, held for a splice only. The data
 *                             sender lets go of ->xmitting without it once
 *                             it found the queues empty (a barrier pair
 *                             with the hand-off: mroce_peer_send()).
 *
 * Nothing sleeps under peer->lock. Completion handlers run under it (a
 * verbs helper may call one), and a handler may post: the kick hooks
 * therefore never spin on peer->lock -- they try it once and otherwise
 * leave a mark, which every holder of a live peer's lock looks for on its
 * way out (mroce_peer_unlock(); a bare spin_unlock would lose it).
 *
 * Contexts
 * --------
 *   receive     softirq, UDP encap_rcv: data, ACKs, NAKs, handshake
 *   timer       one soft hrtimer per peer at the earliest deadline the
 *               core's send side (or an RNR hold, or pacing) asks for;
 *               softirq
 *   ACK timer   the responder's soft hrtimer for the delayed-ACK deadline
 *               (mroce_peer_ack_arm()); softirq, peer->lock by trylock
 *   hints       the receiver rate hints (mroce_ack.c): one pass per hint
 *               period, run by the receive burst that ends a period
 *               after the last (softirq; peer->lock by trylock only);
 *               a soft hrtimer per device with two or more connections
 *               for the pass after they all fall quiet
 *   tx work     a work item per peer for transmit work that could not be
 *               done inline (doorbell from hard irq, budget exhausted,
 *               more doorbells or queue refills than one BH-disabled
 *               stretch serves: MROCE_KICK_ROUNDS, MROCE_FLUSH_ROUNDS)
 *   doorbell    a user or kernel post that finds the peer idle transmits
 *               directly (latency); a user QP's waits for a lock busy
 *               with received data (mroce_peer_kick_waits())
 * All of them build packets under peer->lock onto the peer's build queues
 * (data and PROBEs on peer->xmitq, handshake packets on peer->ctlq; ACKs
 * and NAKs, built by the responder, on peer->rx_ctlq), hand
 * them to the send queues before dropping it, and send after
 * (mroce_peer_flush()). The send queues have a lock of their own,
 * held only to splice: a sender never waits for a holder of peer->lock
 * that is building (a data packet takes microseconds). Data has one sender
 * at a time (peer->xmitting), on tx_cpu, so each path's packets leave in
 * path PSN order; control packets leave from whichever CPU handed them.
 *
 * Lifetime
 * --------
 * The device's peer table holds one reference, every attached QP one. A
 * peer without QPs lingers (MROCE_PEER_LINGER) so that back-to-back
 * connections reuse it, then closes. Receive looks peers up by connection
 * id under RCU and checks ->dead under the lock; peers are freed after an
 * RCU grace period, after their timer and work were cancelled. In-flight
 * skbs hold only page references (zero-copy frags) and their route, never
 * a QP or a peer.
 */
#ifndef MROCE_PEER_H
#define MROCE_PEER_H

#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/in6.h>
#include <linux/refcount.h>
#include <net/inet_ecn.h>

#include "mroce.h"
#include "mroce_conn.h"
#include "mroce_verbs.h"

#define MROCE_PEER_PATHS	8		/* path slots per connection */
#define MROCE_CTL_DST		MROCE_PEER_PATHS	/* route of control packets */
#define MROCE_MAX_PEERS		4096		/* per device */
#define MROCE_RD_SLOTS		256		/* >= 2 x MROCE_MAX_RD_ATOM */
#define MROCE_PEER_LINGER	(5 * HZ)
#define MROCE_TX_BUDGET		64		/* packets per inline batch */
#define MROCE_TX_QP_BURST	16		/* packets per QP before the next */
/* Bounds of what one BH-disabled stretch does for other CPUs (mroce_peer.c) */
#define MROCE_FLUSH_ROUNDS	4	/* transmit queue refills sent */
#define MROCE_KICK_ROUNDS	4	/* doorbells served after unlocking */

/* Headroom of every packet we build: link, IPv6 (the larger), UDP. */
#define MROCE_SKB_HEADROOM(ndev) \
	(LL_RESERVED_SPACE(ndev) + sizeof(struct ipv6hdr) + sizeof(struct udphdr))

enum mroce_xqp_state {
	MROCE_XQP_IDLE = 0,	/* not attached (RESET, INIT) */
	MROCE_XQP_RTR,		/* attached, receives */
	MROCE_XQP_RTS,		/* attached, sends too */
	MROCE_XQP_DEAD,		/* ERR: the transport let go of its WQEs */
};

enum mroce_chunk_kind {
	MROCE_CK_REQ = 1,	/* a chunk of a send WQE */
	MROCE_CK_RESP,		/* a READ_RESP or ATOMIC_RESP we answer with */
};

enum mroce_swqe_state {
	MROCE_SW_NEW = 0,	/* fetched, nothing sent */
	MROCE_SW_SENDING,	/* some chunks sent */
	MROCE_SW_SENT,		/* every chunk sent, waiting for their ACKs */
	MROCE_SW_WAIT_RESP,	/* READ/ATOMIC sent, waiting for the answer */
	MROCE_SW_DONE,		/* completed (by us) */
};

enum mroce_rd_state {
	MROCE_RD_FREE = 0,
	MROCE_RD_STORED,	/* arrived, waits for its turn in stream order */
	MROCE_RD_READY,		/* executed; the answer is being sent */
	MROCE_RD_SENT,		/* answered; slot free once acknowledged */
};

/* Tags on received chunks, reported back in stream order (mroce_srx_pop). */
enum mroce_rx_tag {
	MROCE_TAG_RECV = 1,	/* last chunk of an RQ-consuming message */
	MROCE_TAG_REQ,		/* READ or ATOMIC request to execute */
	MROCE_TAG_RESP,		/* last chunk of an answer to our request */
};

#define MROCE_RMSG_EOM		0x01
#define MROCE_RMSG_IMM		0x02
#define MROCE_RMSG_INV		0x04
#define MROCE_RMSG_SE		0x08
#define MROCE_RMSG_WRITE	0x10	/* RDMA WRITE with immediate */

/* Packets the peer's sender has queued: data/probes on a path, or control. */
struct mroce_skb_cb {
	u16	sport;
	u8	dst;		/* path index or MROCE_CTL_DST */
	u8	tos;		/* ECT(0) for data and PROBEs */
};

static inline struct mroce_skb_cb *mroce_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct mroce_skb_cb) > sizeof(skb->cb));
	return (struct mroce_skb_cb *)skb->cb;
}

/* A receive stream that left the connection (mroce_rx_tomb_add()). */
#define MROCE_PEER_TOMBS	8

struct mroce_tomb {
	u64	until;		/* 0: unused */
	u32	qpn;
	u32	end;		/* every stream PSN before it had arrived */
};

/*
 * Receive steering (rx_spread, mroce_steer.c): the CPU that handles one kind
 * of a peer's incoming packets (data and PROBEs; ACKs and NAKs), and how
 * many of them are queued there or being handled. The flow moves to
 * another CPU only when none of them waits or runs, so they are handled
 * one at a time in arrival order: a path's receiver takes a PSN out of
 * order for a loss.
 */
enum mroce_rx_flow_kind {
	MROCE_RX_FLOW_DATA,
	MROCE_RX_FLOW_ACK,
	MROCE_RX_FLOWS
};

struct mroce_rx_flow {
	atomic_t	state;	/* CPU and count: mroce_steer_take() */
};

/* conn.stats' send-side timer counts before a core call (peer->lock). */
struct mroce_peer_stats_mark {
	u64	rtos;
	u64	ptos;
	u64	rekeys;
};

struct mroce_peer {
	struct mroce_dev	*mdev;
	struct hlist_node	hnode;		/* mdev->xport.peers */
	refcount_t		ref;
	u32			id;		/* our connection id */
	bool			v6;		/* addresses are IPv6 proper */
	struct in6_addr		raddr;		/* v4-mapped for IPv4 */
	struct in6_addr		laddr;
	struct net		*net;
	u16			ctl_sport;

	spinlock_t		lock;		/* everything but send_lock's */
	bool			dead;
	unsigned long		kick_pending;	/* bit 0: a QP has ->kicked */
	bool			rx_data;	/* the holder received data */
	u32			arm_seq;	/* holds that left the timer armed */
	u32			timer_seq;	/* timer_at's changes (release) */
	/* the peer ACKed our data or sent new data: confirm its neighbour */
	bool			neigh_confirm;
	struct mroce_conn	conn;
	struct mroce_path	paths[MROCE_PEER_PATHS];
	/* the paths' and control packets' routes (mroce_net.c) */
	struct mroce_route __rcu *dst[MROCE_PEER_PATHS + 1];
	struct xarray		qp_xa;		/* local QPN -> QP (writes: peer->lock) */
	struct list_head	qps;		/* attached QPs */
	struct list_head	tx_list;	/* QPs with something to send */
	struct list_head	comp_list;	/* QPs with completions to check */
	struct sk_buff_head	xmitq;		/* built: data and PROBEs, path order */
	struct sk_buff_head	ctlq;		/* built: handshake packets */
	/* the responder's: ACKs and NAKs it built */
	struct sk_buff_head	rx_ctlq;
	/* its delayed-ACK timer (mroce_peer_ack_arm()) */
	u64			ack_timer_at;	/* last start, U64_MAX = none */
	u64			ack_floor;	/* no expiry before */
	spinlock_t		send_lock;	/* the three below */
	bool			xmitting;	/* a CPU is sending sendq's data */
	struct sk_buff_head	sendq;		/* handed over: data, path order */
	struct sk_buff_head	sendctl;	/* handed over: control */
	u32			n_qps;
	u32			backlog;	/* bytes queued, not yet sent */
	/* armed expiry, U64_MAX = none; started or cancelled after the unlock */
	u64			timer_at;
	u64			timer_floor;	/* no expiry before: mroce_peer_arm() */
	/* conn.watchdog_at the wheel timer is set for, U64_MAX = none */
	u64			wd_at;
	u64			wake_at;	/* earliest QP hold expiry */
	u64			pace_at;	/* paced: resume transmitting */
	u8			hs_state;	/* last state seen, for tracing */
	u8			tomb_next;
	struct mroce_tomb	tombs[MROCE_PEER_TOMBS];
	struct mroce_peer_stats_mark stats_mark; /* mroce_peer_stats_end() */
	struct hrtimer		timer;
	struct hrtimer		ack_timer;	/* the responder's */
	struct timer_list	wd_timer;	/* the watchdog's rounds */
	struct tasklet_struct	arm_tasklet;	/* softirq: arm after NET_RX */
	struct work_struct	tx_work;
	struct work_struct	free_work;
	struct work_struct	xmit_work;	/* flush on tx_cpu */
	int			tx_cpu;		/* see mroce_peer_flush() */
	struct mroce_rx_flow	rx_flow[MROCE_RX_FLOWS];
	struct delayed_work	gc_work;
};

/* Module-wide transport parameters (mroce_peer.c). */
extern struct mroce_params mroce_prm;
extern struct workqueue_struct *mroce_wq;

static inline u64 mroce_now(void)
{
	return ktime_get_ns();
}

/*
 * Whether a doorbell left its mark on @peer (bit 0 of ->kick_pending, set
 * by mroce_peer_mark(), taken by mroce_peer_take_kicks()). A plain load:
 * callers that must see a mark set behind a lock they released order it
 * themselves (mroce_peer_unlock()'s barrier).
 */
static inline bool mroce_peer_kick_marked(const struct mroce_peer *peer)
{
	return test_bit(0, &peer->kick_pending);
}

/*
 * A QP sends from RTR on: a responder answers READs and ATOMICs before (or
 * without ever) reaching RTS, as IB allows; requests need RTS.
 */
static inline bool mroce_xqp_sends(const struct mroce_qp_xport *xp)
{
	return xp->state == MROCE_XQP_RTR || xp->state == MROCE_XQP_RTS;
}

/*
 * Whether an RTS or RTR QP has nothing to send: no WQE being segmented, no
 * chunk to send again, no READ/ATOMIC answer due, no WQE posted past the
 * fetch index. Under peer->lock; the SQ indexes are read without the SQ
 * lock: a doorbell that moves head kicks the QP after it (mroce_peer_kick()
 * runs it or leaves a mark for this holder's unlock), so a WQE posted
 * behind the check is not missed. Lets mroce_tx_run() drop a QP after its
 * last packet, and mroce_comp_run() not requeue one after an ACK, without
 * an SQ fetch that takes the SQ lock to find the ring empty.
 */
static inline bool mroce_tx_drained(const struct mroce_qp *qp)
{
	const struct mroce_qp_xport *xp = &qp->xport;

	return !xp->cur && !xp->n_resend && xp->rd_resp == xp->rd_exec &&
	       READ_ONCE(qp->sq.head) == READ_ONCE(qp->sq.fetch);
}

/* Serial-number order of 32-bit PSNs. */
static inline bool mroce_psn_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

/* Cookie the core hands back for a transmission: QPN, generation, PSN. */
static inline u64 mroce_cookie(const struct mroce_qp *qp, u32 psn)
{
	return (u64)(mroce_qpn(qp) & MROCE_QPN_MASK) << 40 |
	       (u64)qp->xport.gen << 32 | psn;
}

/* mroce_net.c */
struct mroce_rx_meta {
	struct in6_addr	saddr;
	struct in6_addr	daddr;
	struct net	*net;
	struct net_device *dev;		/* ingress device */
	__be16		sport;
	bool		v6;
	bool		ce;
};

int mroce_net_init(void);
void mroce_net_exit(void);
int mroce_net_get(struct mroce_dev *mdev);
void mroce_net_put(struct mroce_dev *mdev);
u16 mroce_net_port(void);
u16 mroce_net_mtu(const struct mroce_dev *mdev, bool v6);
void mroce_net_xmit(struct mroce_peer *peer, struct sk_buff *skb);
void mroce_net_xmit_list(struct mroce_peer *peer, struct sk_buff_head *q);
unsigned int mroce_net_burst(const struct mroce_peer *peer);
void mroce_net_xmit_oneshot(struct mroce_dev *mdev,
			    const struct mroce_rx_meta *meta,
			    struct sk_buff *skb);
void mroce_net_confirm_sender(struct mroce_dev *mdev,
			      const struct mroce_rx_meta *meta,
			      const struct sk_buff *skb);
void mroce_net_note_asker(struct mroce_dev *mdev,
			  const struct mroce_rx_meta *meta,
			  const struct sk_buff *skb);
void mroce_net_asker_answered(struct mroce_dev *mdev,
			      const struct mroce_rx_meta *to);
void mroce_net_forget_askers(struct mroce_dev *mdev);
void mroce_net_reset_routes(struct mroce_peer *peer);
struct sk_buff *mroce_net_alloc_skb(struct mroce_dev *mdev, u32 len,
				    gfp_t gfp);

/* mroce_peer.c */
struct mroce_peer *mroce_peer_get(struct mroce_dev *mdev,
				  const struct in6_addr *raddr,
				  const struct in6_addr *laddr, bool v6);
void mroce_peer_put(struct mroce_peer *peer);
struct mroce_peer *mroce_peer_lookup(struct mroce_dev *mdev,
				     const struct in6_addr *raddr);
void __mroce_peer_unlock(struct mroce_peer *peer, bool from_tasklet);
void mroce_peer_flush(struct mroce_peer *peer, bool own_data);
bool mroce_peer_idle(const struct mroce_peer *peer);
void __mroce_peer_stats_end(struct mroce_peer *peer);
void mroce_peer_hs_result(struct mroce_peer *peer, u32 act, u64 now);
void mroce_peer_send_hs(struct mroce_peer *peer, u8 opcode, u32 reason);
void mroce_peer_connect(struct mroce_peer *peer, u64 now);
void mroce_peer_probes(struct mroce_peer *peer, u64 mask, u64 now);
void mroce_peer_kick(struct mroce_peer *peer, struct mroce_qp *qp);
void __mroce_peer_take_kicks(struct mroce_peer *peer);
void mroce_peer_accept_work(struct work_struct *work);
void mroce_peers_close_all(struct mroce_dev *mdev);
typedef bool (*mroce_qp_pick_fn)(struct mroce_qp *qp, u64 arg,
				 struct mroce_swqe **swqe);
void mroce_peer_fail_qps(struct mroce_peer *peer, mroce_qp_pick_fn pick,
			 u64 arg, enum ib_wc_status status);
bool mroce_peer_pick_all(struct mroce_qp *qp, u64 arg,
			 struct mroce_swqe **swqe);
extern const struct mroce_conn_ops mroce_peer_conn_ops;

/* mroce_tx.c */
void mroce_tx_run(struct mroce_peer *peer, u64 now, unsigned int budget);
void mroce_tx_requeue_unacked(struct mroce_peer *peer, struct mroce_qp *qp);
void mroce_tx_resend(struct mroce_qp *qp, u32 psn, u8 why, u8 path, u8 gen,
		     u32 path_psn);
u32 mroce_tx_mss(const struct mroce_peer *peer, u8 opcode);

/* mroce_rx.c */
void mroce_rx_skb(struct sk_buff *skb, const struct mroce_rx_meta *meta);
void mroce_rx_init(void);
void mroce_rx_exit(void);
void mroce_rx_conn_req(struct mroce_dev *mdev, struct sk_buff *skb);
void mroce_rx_tomb_add(struct mroce_peer *peer, struct mroce_qp *qp);
void mroce_rx_tomb_clear(struct mroce_peer *peer, u32 qpn);
bool mroce_rx_atomic_exec(struct mroce_peer *peer, struct mroce_qp *qp,
			  struct mroce_rdreq *rd);

/*
 * The connection lock. The responder had one of its own (docs/transport.md,
 * "a responder lock apart from the requester's"), taken right after
 * peer->lock by every holder but the ACK timer's callback: two lock rounds
 * per hold, and a trylock that had to spin on the inner one. Since the
 * callback takes peer->lock too (mroce_peer_ack_timer()) there is one. The
 * two assertions still name which side's state a function touches; both
 * check peer->lock.
 */
static __always_inline void mroce_peer_lock(struct mroce_peer *peer)
{
	spin_lock_bh(&peer->lock);
}

static __always_inline bool mroce_peer_trylock(struct mroce_peer *peer)
{
	return spin_trylock_bh(&peer->lock);
}

/* Without the epilogue: dead peers, and holds that changed nothing. */
static __always_inline void mroce_peer_unlock_bare(struct mroce_peer *peer)
{
	spin_unlock_bh(&peer->lock);
}

/* The responder's state. */
#define mroce_peer_assert_rx(peer)	lockdep_assert_held(&(peer)->lock)
/* State of both sides (QP failure, handshake, attach/detach). */
#define mroce_peer_assert_both(peer)	lockdep_assert_held(&(peer)->lock)

/*
 * Small helpers of the per-packet path, inline: each call that is not
 * costs a TB lookup at its return under TCG, and the return sites of a
 * module's hot calls crowd its pages' jump-cache slots
 * (docs/experiments/s43-H-jump-cache.md, s44-T-calls.md).
 */

/*
 * End a hold of peer->lock: the epilogue (mroce_peer.c, "the epilogue of
 * every entry point") -- arm, hand over, unlock, send, serve the marks.
 */
static inline void mroce_peer_unlock(struct mroce_peer *peer)
{
	__mroce_peer_unlock(peer, false);
}

/*
 * The peer with connection id @id, or NULL. Caller holds rcu_read_lock();
 * the peer may be dead (check under its lock).
 */
extern struct xarray mroce_conn_ids;

static inline struct mroce_peer *mroce_peer_find_id(u32 id)
{
	return xa_load(&mroce_conn_ids, id);
}

static __always_inline void mroce_peer_queue(struct sk_buff_head *q,
					     struct sk_buff *skb, u8 dst,
					     u16 sport, u8 tos)
{
	struct mroce_skb_cb *cb = mroce_cb(skb);

	memset(cb, 0, sizeof(*cb));
	cb->dst = dst;
	cb->sport = sport;
	cb->tos = tos;
	__skb_queue_tail(q, skb);
}

/* A data packet or PROBE, sent on @path with the core's source port. */
static inline void mroce_peer_queue_path(struct mroce_peer *peer,
					 struct sk_buff *skb, u8 path,
					 u16 sport)
{
	lockdep_assert_held(&peer->lock);
	mroce_peer_queue(&peer->xmitq, skb, path, sport, INET_ECN_ECT_0);
}

/*
 * A handshake packet (peer->lock held): the control route, not
 * ECN-capable.
 */
static inline void mroce_peer_queue_ctl(struct mroce_peer *peer,
					struct sk_buff *skb)
{
	lockdep_assert_held(&peer->lock);
	mroce_peer_queue(&peer->ctlq, skb, MROCE_CTL_DST, peer->ctl_sport, 0);
}

/*
 * An ACK or NAK, built by the responder (peer->lock held): the control
 * route too, from the responder's own queue, which the unlock that ends the
 * hold hands over after the handshake packets (mroce_peer_handoff()).
 */
static inline void mroce_peer_queue_rx_ctl(struct mroce_peer *peer,
					   struct sk_buff *skb)
{
	mroce_peer_assert_rx(peer);
	mroce_peer_queue(&peer->rx_ctlq, skb, MROCE_CTL_DST, peer->ctl_sport,
			 0);
}

/*
 * The core counts timer events in its own statistics; the device counters
 * take their deltas around each call that can move them (peer->lock held).
 * Only the three send-side counters compared below are copied: the rest of
 * conn.stats holds the responder's receive counters too, which the ACK
 * timer's callback moves without these (docs/transport.md, "a responder
 * lock", section 2).
 */
static inline void mroce_peer_stats_begin(struct mroce_peer *peer)
{
	const struct mroce_conn_stats *n = &peer->conn.stats;

	lockdep_assert_held(&peer->lock);
	peer->stats_mark.rtos = n->rtos;
	peer->stats_mark.ptos = n->ptos;
	peer->stats_mark.rekeys = n->rekeys;
}

/* Mostly nothing moved: the counters only when something did. */
static inline void mroce_peer_stats_end(struct mroce_peer *peer)
{
	const struct mroce_conn_stats *n = &peer->conn.stats;
	const struct mroce_peer_stats_mark *o = &peer->stats_mark;

	if (n->rtos != o->rtos || n->ptos != o->ptos ||
	    n->rekeys != o->rekeys)
		__mroce_peer_stats_end(peer);
}

/*
 * Put the QPs doorbells marked on the transmit list (peer->lock held). A
 * plain load first: most runs find no mark (a waiting doorbell queues its
 * QP itself), and the test-and-clear is a locked atomic. A mark set after
 * the load is a doorbell whose trylock failed on our lock: the unlock
 * looks for it past its barrier (mroce_peer.c, the epilogue).
 */
static inline void mroce_peer_take_kicks(struct mroce_peer *peer)
{
	lockdep_assert_held(&peer->lock);
	if (mroce_peer_kick_marked(peer))
		__mroce_peer_take_kicks(peer);
}

/* @qp has something to send (peer->lock held): on the transmit list. */
static inline void mroce_tx_queue_qp(struct mroce_peer *peer,
				     struct mroce_qp *qp)
{
	struct mroce_qp_xport *xp = &qp->xport;

	lockdep_assert_held(&peer->lock);
	if (mroce_xqp_sends(xp) && list_empty(&xp->tx_node))
		list_add_tail(&xp->tx_node, &peer->tx_list);
}

/* mroce_comp.c (its device-level call is in mroce.h) */
/* @qp's acknowledgements moved: mroce_comp_run() looks at it. */
static inline void mroce_comp_mark(struct mroce_peer *peer,
				   struct mroce_qp *qp)
{
	struct mroce_qp_xport *xp = &qp->xport;

	lockdep_assert_held(&peer->lock);
	if (list_empty(&xp->comp_node))
		list_add_tail(&xp->comp_node, &peer->comp_list);
}
void __mroce_comp_run(struct mroce_peer *peer);
/*
 * Process the QPs whose acknowledgements moved since the last call. Inline
 * test: most of the calls (every unlocking epilogue that took no ACK) find
 * the list empty.
 */
static inline void mroce_comp_run(struct mroce_peer *peer)
{
	lockdep_assert_held(&peer->lock);
	if (!list_empty(&peer->comp_list))
		__mroce_comp_run(peer);
}
void mroce_comp_pop(struct mroce_peer *peer, struct mroce_qp *qp);
void mroce_comp_fail_qp(struct mroce_peer *peer, struct mroce_qp *qp,
			struct mroce_swqe *swqe, enum ib_wc_status status);
void mroce_comp_fail_access(struct mroce_peer *peer, struct mroce_qp *qp);
void mroce_comp_fail_peer(struct mroce_peer *peer, enum ib_wc_status status);
void mroce_comp_release(struct mroce_peer *peer, struct mroce_qp *qp);

/* mroce_ack.c */
void mroce_ack_maybe(struct mroce_peer *peer, u64 now);
void mroce_ack_flush(struct mroce_peer *peer, u64 now);
void mroce_ack_nak(struct mroce_peer *peer, const struct mroce_pkt *pkt,
		   u8 code, u32 arg);
void mroce_ack_nak_unknown(struct mroce_dev *mdev,
			   const struct mroce_rx_meta *meta, u32 id);
u32 mroce_rnr_timer_us(u8 min_rnr_timer);
void mroce_ack_hint_newcomer(struct mroce_peer *peer);
bool mroce_ack_hint_hold(struct mroce_peer *peer, u64 now);
void mroce_ack_hint_reserve(struct mroce_dev *mdev, u32 n);
void mroce_ack_hint_init(struct mroce_dev *mdev);
void mroce_ack_hint_fini(struct mroce_dev *mdev);

/*
 * mroce_xport.c's per-packet helpers (H), and mroce_ack.c's inline check
 * before its per-burst call: static inline, so the 64 B round trip makes
 * no call for them (each return is a TB lookup under TCG,
 * docs/experiments/s45-H-inline.md). The rest of this file is T's; this
 * block to #endif is H's.
 */

/* The QP attached to @peer under local QPN @qpn (peer->lock held). */
static inline struct mroce_qp *mroce_xport_find_qp(struct mroce_peer *peer,
						   u32 qpn)
{
	struct mroce_qp *qp;

	lockdep_assert_held(&peer->lock);
	qp = xa_load(&peer->qp_xa, qpn);
	if (!qp || qp->xport.peer != peer || qp->xport.state == MROCE_XQP_IDLE)
		return NULL;
	return qp;
}

/* The sending QP a core cookie names, if it still sends on this peer. */
static inline struct mroce_qp *mroce_xport_cookie_qp(struct mroce_peer *peer,
						     u64 cookie)
{
	struct mroce_qp *qp;

	if (cookie == MROCE_COOKIE_PROBE)
		return NULL;
	qp = mroce_xport_find_qp(peer, cookie >> 40);
	if (!qp || qp->xport.gen != (u8)(cookie >> 32) ||
	    !mroce_xqp_sends(&qp->xport))
		return NULL;
	return qp;
}

/*
 * Stream PSN @psn of @xp reached the peer (peer->lock held): record it and
 * take the chunk off the resend queue. Every acknowledgement goes through
 * here -- the ACK of a transmission, a late ACK block, a READ/ATOMIC answer
 * proving its request arrived -- because the queue is a bitmap indexed by
 * PSN modulo the stream window: a bit left behind once una passes the chunk
 * names the PSN a window later, a chunk not yet assigned, which
 * mroce_tx_pick_resend() would otherwise rebuild from this chunk's record
 * and the receiver would take for the real one. Returns true if the
 * acknowledgement is news.
 */
static inline bool mroce_xport_stream_ack(struct mroce_qp_xport *xp, u32 psn)
{
	if (mroce_stx_ack(&xp->stx, psn) != MROCE_STX_ACK_NEW)
		return false;
	if (xp->n_resend &&
	    __test_and_clear_bit(psn & MROCE_STREAM_MASK, xp->resend))
		xp->n_resend--;
	return true;
}

/* This CPU's spare ACK buffer (mroce_ack.c); NULL once an ACK took it. */
DECLARE_PER_CPU(struct sk_buff *, mroce_ack_spare);
void __mroce_ack_hint_tick(struct mroce_peer *peer, bool begun);

/**
 * mroce_ack_hint_tick() - a receive burst for the device ended
 * @peer: the burst's connection, unlocked now
 * @begun: what mroce_ack_hint_hold() returned in the burst's hold
 *
 * Softirq, no peer lock held, within the burst's RCU read section. The
 * call (__mroce_ack_hint_tick()) only if it has work: a hint pass began,
 * or this CPU's spare ACK buffer was used and needs a refill. A burst of
 * ACKs alone has neither.
 */
static inline void mroce_ack_hint_tick(struct mroce_peer *peer, bool begun)
{
	if (begun || !this_cpu_read(mroce_ack_spare))
		__mroce_ack_hint_tick(peer, begun);
}

#endif /* MROCE_PEER_H */
