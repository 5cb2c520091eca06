/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The connection engine: one per (local device, remote IP). It ties the
 * handshake, the path table (transmit and receive state of every path),
 * loss detection, timers, path health and congestion control together so
 * that the kernel module and the simulator drive one implementation.
 *
 * The caller owns all memory (the connection and its path array), serialises
 * the calls on one connection (e.g. a spinlock), passes the time in ns, and
 * keeps per-QP state (struct mroce_stx / mroce_srx) in its QP objects; the
 * connection's size does not depend on the number of QPs.
 *
 * The receive side (rx_check, rx_accept, ack_due, ack_len, build_ack,
 * set_rx_hint, rx_quiet, rx_sample, ack_deadline, on_ack_timer) and the
 * send side (tx_reserve, tx_commit, probe, fill, on_ack, on_nak,
 * set_backlog, set_burst, owe, rx_progress, tx_deadline, on_tx_timer)
 * share no state:
 * a call of one may run concurrently with a call of the other. The rest
 * (init, connect, on_hs, on_unknown, build_hs, reset_transport, and
 * on_timer and next_deadline, which combine the two sides' timers for a
 * caller that serialises both) touch both. docs/protocol.md §9 lists the
 * fields.
 *
 * Driving it (docs/protocol.md "Core API" has the full sequence):
 *   send:    mroce_conn_tx_reserve() -> assign stream PSN, choose cookie ->
 *            mroce_conn_tx_commit() -> mroce_conn_fill() -> encode, send
 *   receive: decode -> mroce_conn_rx_check() -> stream check / place ->
 *            mroce_conn_rx_accept() (or refuse + NAK) -> ACK if due
 *   ACK/NAK: mroce_conn_on_ack() / mroce_conn_on_nak(); the ops callbacks
 *            report acknowledged and lost transmissions by cookie
 *   timers:  mroce_conn_on_timer() at the deadline it (or
 *            mroce_conn_next_deadline()) returns; a caller with a lock per
 *            side runs mroce_conn_on_tx_timer() / mroce_conn_tx_deadline()
 *            under the send side's and mroce_conn_on_ack_timer() /
 *            mroce_conn_ack_deadline() under the receive side's
 */
#ifndef MROCE_CONN_H
#define MROCE_CONN_H

#include "mroce_wire.h"
#include "mroce_params.h"
#include "mroce_prx.h"
#include "mroce_ptx.h"
#include "mroce_rtt.h"
#include "mroce_cc.h"
#include "mroce_health.h"
#include "mroce_hs.h"
#include "mroce_hint.h"

struct mroce_path_stats {
	u64 tx_pkts;
	u64 tx_bytes;
	u64 acked_pkts;
	u64 lost_pkts;
	u64 naks;
	u64 ptos;
	u64 rtos;
	u64 rekeys;
	u64 ce_pkts;		/* CE marks the receiver reported */
	u64 rx_pkts;		/* packets we accepted on the peer's path */
	u64 silent;		/* declared silent while siblings were acked */
};

struct mroce_path {
	/* Sender side: our path with this index. */
	u8 id;
	u8 gen;
	u16 sport;
	u16 last_ce;		/* receiver counters in the last ACK block */
	u16 last_rx;
	u32 score;		/* Q10, docs §5.7 */
	u32 hot;		/* ... without the loss term, at the last round */
	bool tlp;		/* a tail-loss probe is out: its ACK's gaps are PTO's */
	bool held;		/* probed instead of expiring; progress clears it */
	bool probed;		/* a probe went out since the last progress */
	/*
	 * The first packet declared overdue since the path last delivered
	 * (its PSN and send time, 0 = none): the silence rule counts from it.
	 */
	u32 quiet_psn;
	u64 quiet_since;
	u64 rto_at;		/* 0 = not armed */
	u64 pto_at;
	u64 hold;		/* no RTO or silence expiry before this */
	struct mroce_ptx tx;
	/*
	 * The generation the last re-key retired, kept for one RTO: ACK
	 * blocks the receiver sent before it saw the new generation still
	 * acknowledge what arrived (docs §5.6), instead of being stale.
	 */
	struct mroce_ptx old;
	u64 old_until;		/* 0 = none */
	u8 old_gen;
	/*
	 * This path's earliest timer work (mroce_conn_next_deadline()),
	 * valid while its bit in the connection's due_stale is clear.
	 */
	u64 due;
	struct mroce_rtt rtt;
	struct mroce_cc_path cc;
	struct mroce_health health;
	struct mroce_path_stats stats;
	/* Receiver side: the peer's path with this index. */
	struct mroce_prx rx;
};

/* Why a transmission was declared lost (mroce_conn_ops.lost). */
enum mroce_loss_why {
	MROCE_LOSS_SACK,	/* a gap in the path's SACK */
	MROCE_LOSS_RTO,		/* the path's RTO fired, or it fell silent */
	MROCE_LOSS_PTO,		/* a gap the ACK of a tail-loss probe exposed */
	MROCE_LOSS_REKEY,	/* in flight on a path being re-keyed */
	MROCE_LOSS_TIME,	/* overdue: a later packet was acked elsewhere */
};

/* What moved the connection's window or rate (mroce_conn_ops.cc). */
enum mroce_cc_why {
	MROCE_CCW_ACK,		/* acknowledged data grew the window */
	MROCE_CCW_ECN,		/* CE marks cut it */
	MROCE_CCW_LOSS,		/* loss cut it */
	MROCE_CCW_RTO,		/* a path timed out */
	MROCE_CCW_HINT,		/* the peer's grant changed (an ACK, the handshake) */
};

/* Callbacks; called under the caller's lock, never into the connection. */
struct mroce_conn_ops {
	void (*acked)(void *ctx, u64 cookie, u32 len, u8 path);
	/*
	 * @psn: the path PSN the transmission had; @path still has the
	 * generation it was sent on. @why: enum mroce_loss_why.
	 */
	void (*lost)(void *ctx, u64 cookie, u32 len, u8 path, u32 psn, u8 why);
	/* Optional (may be NULL), telemetry: health transitions, ... */
	void (*path_state)(void *ctx, u8 path, u8 old_state, u8 new_state);
	/*
	 * ... a re-key (@path has its new generation and source port; @why
	 * is the enum mroce_health_event that caused it), ...
	 */
	void (*rekey)(void *ctx, u8 path, u8 old_gen, u16 old_sport, u8 why);
	/*
	 * ... and a change of the connection's window, ssthresh, ECN alpha
	 * or the peer's rate hint (@why: enum mroce_cc_why).
	 */
	void (*cc)(void *ctx, u8 why);
	/*
	 * Optional: while *@cc_on is false nobody listens to @cc and the
	 * per-ACK bookkeeping for it is skipped (NULL: always listening).
	 */
	const bool *cc_on;
	/*
	 * Optional: a transmission already reported @lost was acknowledged
	 * after all, by a late ACK block (docs §5.3): its chunk need not be
	 * resent. Only for callers whose cookie still names the chunk then
	 * (not a transmission slot that the loss freed).
	 */
	void (*late_acked)(void *ctx, u64 cookie, u32 len, u8 path);
	/*
	 * Optional: whether any READ/ATOMIC response is still owed to us
	 * (docs §5.5, owed responses). Asked only when a watchdog round ends
	 * with nothing of ours outstanding or queued.
	 */
	bool (*owed)(void *ctx);
};

struct mroce_conn_stats {
	u64 tx_pkts;
	u64 tx_bytes;
	u64 probes;
	u64 acks_rx;
	u64 acked_pkts;
	u64 lost_pkts;
	u64 naks_rx;
	u64 ptos;
	u64 rtos;
	u64 rekeys;
	u64 retry_rounds;
	u64 bogus_blocks;	/* ACK blocks acknowledging PSNs never sent */
	u64 stale_blocks;	/* ACK blocks of another generation */
	u64 late_blocks;	/* ACK blocks of a retired generation or failed path */
	u64 late_acked;		/* packets declared lost that such blocks acked */
	u64 rx_pkts;
	u64 rx_bytes;
	u64 rx_dup;
	u64 rx_old;
	u64 rx_stale;
	u64 rx_bad_path;
	u64 rx_ce;
	u64 acks_tx;
	u64 hint_acks_tx;	/* ACKs sent only to lower the peer's grant */
	u64 silent;		/* paths declared silent (docs §5.5) */
	u64 overdue;		/* packets declared lost by time (docs §5.3) */
};

struct mroce_conn_cfg {
	const struct mroce_params *prm;
	const struct mroce_conn_ops *ops;
	void *ctx;
	struct mroce_path *paths;
	u8 max_paths;		/* entries in @paths, <= MROCE_MAX_PATHS */
	u32 local_id;		/* our connection id, != 0 */
	u64 nonce;		/* random, != 0 */
	u64 seed;		/* path choice and source port randomness */
	u16 mtu;		/* largest mroce packet we accept and send */
	u32 caps;
	u32 init_rate;		/* Mbit/s the peer may start at, 0 = any */
};

struct mroce_conn {
	const struct mroce_params *prm;
	const struct mroce_conn_ops *ops;
	void *ctx;
	struct mroce_path *paths;
	u8 max_paths;
	u8 n_paths;		/* in use once established */
	u16 mtu;		/* negotiated */
	u32 mss;		/* WRITE payload bytes per packet at mtu */
	struct mroce_hs hs;

	/* Sender */
	struct mroce_cc_conn cc;
	struct mroce_rtt rtt;	/* samples of every path */
	u32 inflight;
	u32 backlog;		/* queued bytes, as told by the caller */
	u64 pace_next;
	u64 progress_at;	/* last data acknowledged or refused */
	u64 watchdog_at;	/* connection-level retry timer, 0 = off */
	u64 round_at;		/* start of the current watchdog round */
	u8 retries;		/* watchdog rounds in a row without progress */
	bool owed;		/* a READ/ATOMIC response may be owed to us */
	u64 rng;
	/*
	 * The current run (mroce_pick.c): its path and how many more packets
	 * it may take. burst: what the caller sends as one unit, 0 or 1 = each
	 * packet alone (mroce_conn_set_burst()).
	 */
	u8 run_path;
	u8 run_left;
	u8 burst;
	u64 acked_tx;		/* newest tx time of any acknowledged packet */
	u64 req_at;		/* our only CONN_REQ of this attempt, 0 = none */
	/*
	 * The paths' share of mroce_conn_next_deadline(), cached: the caller
	 * asks after every call (at every unlock), and most calls touch one
	 * path. A path whose deadline inputs change sets its due_stale bit;
	 * one whose deadline reads connection-wide state (srtt, acked_tx:
	 * paths with packets out) has its due_glob bit, and every ACK stales
	 * those. paths_due is the least path deadline while due_stale is 0.
	 */
	u64 due_stale;
	u64 due_glob;
	u64 paths_due;

	/* Receiver */
	u64 ack_dirty;		/* paths with news for the next ACK */
	u64 ack_at;		/* delayed-ACK deadline, 0 = none */
	u16 ack_pending;	/* packets accepted since the last ACK */
	bool ack_now;
	u8 ack_rr;
	u32 rx_hint;		/* our rate hint for the peer, 0 = none */
	u32 rx_hint_sent;	/* the grant the peer last heard from us */
	bool hint_push;		/* the grant fell: an ACK is due, blocks or not */
	u32 rx_ce;
	u32 rx_backlog;		/* bytes the peer has queued for us */
	u64 rx_period_bytes;	/* payload bytes since the last hint sample */
	u64 rx_busy;		/* ns of hint samples with the peer's data, in a row */
	u32 rx_cap;		/* grant a newly busy peer may not exceed, 0 = none */
	u32 owd_base;
	s32 owd_min;
	u32 qdelay;		/* EWMA of OWD above its minimum, ns */
	u32 q_min;		/* least OWD excess since the last sample, or U32_MAX */
	bool owd_valid;

	struct mroce_conn_stats stats;
};

/* Bits of mroce_timer_res.events and mroce_ack_res.events. */
#define MROCE_EV_ACK_DUE		0x01	/* build and send an ACK */
#define MROCE_EV_RETRY_EXHAUSTED	0x02	/* flush QPs: IBV_WC_RETRY_EXC_ERR */
#define MROCE_EV_PATH_STATE		0x04	/* a path changed health state */

struct mroce_timer_res {
	u64 probe_mask;		/* send a PROBE on these paths now */
	u32 events;
	u32 hs;			/* MROCE_HS_* actions */
};

struct mroce_ack_res {
	u32 acked_pkts;
	u32 acked_bytes;
	u32 lost_pkts;
	u32 ce_pkts;		/* CE marks newly reported by the receiver */
	u64 probe_mask;		/* re-keyed paths that need a PROBE now */
	u32 events;
};

enum mroce_tx_status {
	MROCE_TX_OK = 0,
	MROCE_TX_NOTCONN,	/* not established */
	MROCE_TX_WINDOW,	/* connection or every path window full */
	MROCE_TX_PACED,		/* try again at slot->depart */
	MROCE_TX_NOPATH,	/* no ACTIVE path (all probing or failed) */
};

struct mroce_tx_slot {
	u32 len;		/* payload bytes */
	u8 path;
	u8 gen;
	u16 sport;
	u32 psn;		/* set by commit */
	u8 floor_delta;		/* set by commit */
	u32 tx_ts;
	u16 backlog;		/* wire units */
	u64 depart;		/* earliest departure time (EDT) */
	u32 rate;		/* pacing rate used, Mbit/s, 0 = unpaced */
	u64 gap;		/* ns of @len at @rate: the pacing clock's step */
};

enum mroce_rx_verdict {
	MROCE_RX_NEW = 0,	/* check the stream, then accept or refuse */
	MROCE_RX_DUP,		/* duplicate path packet: drop */
	MROCE_RX_OLD,		/* below the path window: stream check only */
	MROCE_RX_STALE,		/* older generation: stream check only; NAK STALE_GEN */
	MROCE_RX_BAD_PATH,	/* path id not negotiated: drop */
	MROCE_RX_NOTCONN,	/* not established: drop */
};

void mroce_conn_init(struct mroce_conn *c, const struct mroce_conn_cfg *cfg);

/* Handshake; the results are MROCE_HS_* bit masks. */
u32 mroce_conn_connect(struct mroce_conn *c, u64 now);
u32 mroce_conn_on_hs(struct mroce_conn *c, const struct mroce_pkt *pkt,
		     u64 now);
u32 mroce_conn_on_unknown(struct mroce_conn *c, u32 id);
void mroce_conn_build_hs(const struct mroce_conn *c, u8 opcode, u32 reason,
			 struct mroce_pkt *pkt);
/* Inline: every core call and deadline computation asks it first. */
static inline bool mroce_conn_established(const struct mroce_conn *c)
{
	return c->hs.state == MROCE_HS_ESTABLISHED && c->n_paths;
}

/* Forgets every path, timer and counter of the transport (peer restart). */
void mroce_conn_reset_transport(struct mroce_conn *c, u64 now);

/* Sending */

/* Whether data in flight, queued or owed to us has no watchdog round. */
static inline bool mroce_conn_watchdog_wanted(const struct mroce_conn *c)
{
	return !c->watchdog_at && (c->inflight || c->backlog || c->owed);
}

/* Starts a watchdog round (mroce_conn_watchdog_wanted() said so). */
void mroce_conn_watchdog_start(struct mroce_conn *c, u64 now);

/*
 * The bytes queued for sending, not yet handed to tx_reserve. Inline: per
 * transmit run, and mostly the watchdog is armed already.
 */
static inline void mroce_conn_set_backlog(struct mroce_conn *c, u32 bytes,
					  u64 now)
{
	c->backlog = bytes;
	if (mroce_conn_watchdog_wanted(c))
		mroce_conn_watchdog_start(c, now);
}

/*
 * How many consecutive packets of one path the caller sends as one unit
 * (a GSO burst): runs of that many packets form, at most path_run.
 */
static inline void mroce_conn_set_burst(struct mroce_conn *c, u32 n)
{
	c->burst = n > 255 ? 255 : (u8)n;
}

/*
 * Whether mroce_conn_set_backlog(c, 0, now) would change nothing: lets a
 * caller with nothing queued skip its send pass.
 */
static inline bool mroce_conn_send_idle(const struct mroce_conn *c)
{
	return !c->backlog && !mroce_conn_watchdog_wanted(c);
}

/*
 * A READ_REQ or ATOMIC_REQ went out for the first time: its response is
 * owed to us, and the watchdog keeps running until ops->owed says none is
 * (docs §5.5). The request itself is in flight, so the watchdog is armed.
 */
static inline void mroce_conn_owe(struct mroce_conn *c)
{
	c->owed = true;
}

/*
 * After rx_accept(), for a data packet its QP took as new to its stream
 * (not a duplicate, not for a dead QP): @resp if a READ/ATOMIC response.
 * The watchdog's progress while a response is owed (docs §5.5). A send-side
 * call despite its name: it reads owed, inflight and backlog and moves the
 * watchdog's progress, none of the receive side's state.
 */
static inline void mroce_conn_rx_progress(struct mroce_conn *c, bool resp,
					  u64 now)
{
	/*
	 * Waiting only for responses owed to us, the peer's data is the
	 * progress (§5.5); with data of our own out or queued, its ACKs are,
	 * and a response all the same: it answers a request of ours that got
	 * through, while what our later requests wait for (their ACKs, our
	 * paths' PROBE answers) may queue behind that response longer than
	 * our RTOs.
	 *
	 * Only data new to its stream counts: a chunk the peer sends again,
	 * because none of our ACKs reaches it, is no proof that anything of
	 * ours gets through; counted, it kept our watchdog from ever failing
	 * a connection whose own direction was dead while the peer's
	 * retransmissions flowed. The progress is that of a watchdog round
	 * (progress() in mroce_conn.c).
	 */
	if (c->owed && ((!c->inflight && !c->backlog) || resp)) {
		c->progress_at = now;
		c->retries = 0;
	}
}

enum mroce_tx_status mroce_conn_tx_reserve(struct mroce_conn *c, u64 now,
					   u32 len, int pref_path,
					   struct mroce_tx_slot *slot);
void mroce_conn_tx_commit(struct mroce_conn *c, struct mroce_tx_slot *slot,
			  u64 cookie, u64 now);
/*
 * Reserves and commits a PROBE on @path (bypasses windows and pacing);
 * false if the path cannot take one (failed, or its PSN span is full).
 */
bool mroce_conn_probe(struct mroce_conn *c, u8 path, u64 now,
		      struct mroce_tx_slot *slot);
/* Fills the connection and path fields of a data packet or PROBE. */
static inline void mroce_conn_fill(const struct mroce_conn *c,
				   const struct mroce_tx_slot *slot,
				   struct mroce_pkt *pkt)
{
	pkt->c.dst_conn = c->hs.remote.id;
	pkt->c.path_id = slot->path;
	pkt->c.path_gen = slot->gen;
	pkt->c.floor_delta = slot->floor_delta;
	pkt->c.path_psn = slot->psn;
	if (pkt->c.opcode == MROCE_OP_PROBE) {
		pkt->u.probe.tx_ts = slot->tx_ts;
		pkt->u.probe.backlog = slot->backlog;
	} else {
		pkt->u.d.tx_ts = slot->tx_ts;
		pkt->u.d.backlog = slot->backlog;
	}
}

/* Feedback */
void mroce_conn_on_ack(struct mroce_conn *c, const struct mroce_pkt *pkt,
		       u64 now, struct mroce_ack_res *res);
/*
 * A NAK for this connection. Returns true and the record's cookie and length
 * if it names an outstanding transmission, which is then resolved without a
 * loss or congestion signal. STALE_GEN re-keys the path (probe_mask).
 */
bool mroce_conn_on_nak(struct mroce_conn *c, const struct mroce_nak *nak,
		       u64 now, u64 *cookie, u32 *len, u64 *probe_mask);

/* Receiving data packets and PROBEs */
enum mroce_rx_verdict mroce_conn_rx_check(struct mroce_conn *c,
					  const struct mroce_pkt *pkt);
/*
 * The packet mroce_conn_rx_check() called NEW was accepted (placed, or a
 * stream duplicate dropped). Returns true if an ACK is due now. The
 * caller then calls mroce_conn_rx_progress() (send side) for data new to
 * its stream.
 */
bool mroce_conn_rx_accept(struct mroce_conn *c, const struct mroce_pkt *pkt,
			  bool ce, u64 now);
/* Whether an ACK is due at @now (inline: asked after every packet). */
static inline bool mroce_conn_ack_due(const struct mroce_conn *c, u64 now)
{
	if (!mroce_conn_established(c))
		return false;
	return c->hint_push || (c->ack_dirty &&
		(c->ack_now || (c->ack_at && now >= c->ack_at)));
}
/*
 * Length of the ACK mroce_conn_build_ack() would build with room for every
 * path it has news of (one ACK, if MROCE_ACK_MAX_BLOCKS allow): what a
 * caller allocates for it. MROCE_ACK_BASE_LEN for a hint-only ACK.
 */
static inline u32 mroce_conn_ack_len(const struct mroce_conn *c)
{
	u32 n = mroce_popcount64(c->ack_dirty);

	if (n > MROCE_ACK_MAX_BLOCKS)
		n = MROCE_ACK_MAX_BLOCKS;
	return MROCE_ACK_BASE_LEN + n * MROCE_ACK_BLOCK_LEN;
}
/* Encodes the next ACK into @buf; returns its length, 0 if none is due. */
u32 mroce_conn_build_ack(struct mroce_conn *c, u64 now, u8 *buf, u32 cap);
/*
 * Sets the rate hint our ACKs carry (Mbit/s, 0 = none; a peer that just
 * started sending is held at the grant it started with, docs §6.4); it is also the
 * init_rate of our next CONN_REQ or CONN_REP. If it fell well below what the
 * peer last heard, an ACK becomes due at once (a hint-only ACK if there is
 * no path news): an idle peer must not restart at a stale grant.
 */
void mroce_conn_set_rx_hint(struct mroce_conn *c, u32 mbps);
/*
 * The receiver got nothing at all for a whole hint period: the peer's next
 * sample with data starts a new busy spell (held at its grant, docs §6.4),
 * as a sample of that quiet period would have made it.
 */
static inline void mroce_conn_rx_quiet(struct mroce_conn *c)
{
	c->rx_busy = 0;
	c->rx_cap = 0;
}

/*
 * Demand and queueing of the peer's traffic since the previous call, for
 * mroce_hint_compute(): fills @demand (Mbit/s) and @qdelay, the least
 * queueing (ns of one-way delay above its minimum) any packet saw since the
 * previous call, U32_MAX if none arrived. Returns the payload bytes that
 * arrived since the previous call: the caller turns them into the arrival
 * rate over the time that really passed (@period_ns is at most a few hint
 * periods, however late the caller runs).
 */
static inline u64 mroce_conn_rx_sample(struct mroce_conn *c, u64 period_ns,
				       u32 rtt, u32 line, u32 *demand,
				       u32 *qdelay)
{
	u64 bytes = c->rx_period_bytes;

	*demand = mroce_hint_demand(c->rx_period_bytes, period_ns,
				    c->rx_backlog, rtt, line);
	if (c->rx_period_bytes || c->rx_backlog) {
		/*
		 * A peer that starts sending (again) keeps the grant it
		 * started with for two round trips and one packet interval at
		 * that grant: the others granted alike may not have been heard
		 * yet (paced, each with a random phase), and the first of an
		 * incast to be heard would otherwise split all of C between
		 * them and overshoot when the rest arrive.
		 */
		if (!c->rx_busy)
			c->rx_cap = c->rx_hint;
		c->rx_busy += period_ns;
		if (c->rx_cap && c->rx_busy >= 2 * (u64)rtt +
		    mroce_rate_ns(c->rx_cap, c->mss))
			c->rx_cap = 0;
	} else {
		c->rx_busy = 0;
		c->rx_cap = 0;
	}
	*qdelay = c->q_min;
	c->q_min = U32_MAX;
	c->rx_period_bytes = 0;
	return bytes;
}

/*
 * Timers. mroce_conn_on_timer() is both sides' work at once, for a caller
 * that serialises them: mroce_conn_on_tx_timer() then
 * mroce_conn_on_ack_timer() (reported as MROCE_EV_ACK_DUE); it returns
 * mroce_conn_next_deadline(). A caller that runs the sides under a lock
 * each calls the two parts, each under its side's lock.
 */
u64 mroce_conn_on_timer(struct mroce_conn *c, u64 now,
			struct mroce_timer_res *res);
/*
 * Send side: handshake retries, every path's PTO/RTO/silence/overdue rules
 * and the watchdog (res->events never has MROCE_EV_ACK_DUE); returns
 * mroce_conn_tx_deadline().
 */
u64 mroce_conn_on_tx_timer(struct mroce_conn *c, u64 now,
			   struct mroce_timer_res *res);
/*
 * Receive side: the delayed-ACK deadline passed, or a fallen grant is
 * pushed. Returns true if ACKs are due (mroce_conn_ack_due()).
 */
bool mroce_conn_on_ack_timer(struct mroce_conn *c, u64 now);

/* The earlier of @a and @b, where 0 means "no deadline" for @b. */
static inline u64 mroce_earliest(u64 a, u64 b)
{
	if (!b)
		return a;
	return b < a ? b : a;
}

/*
 * Receive side: when mroce_conn_on_ack_timer() has work (the delayed-ACK
 * deadline, or at once for a pushed grant), U64_MAX if none.
 */
static inline u64 mroce_conn_ack_deadline(const struct mroce_conn *c)
{
	u64 t = U64_MAX;

	if (!mroce_conn_established(c))
		return t;
	if (c->ack_dirty)
		t = mroce_earliest(t, c->ack_at);
	/* Due at once: any time in the past will do. */
	if (c->hint_push)
		t = mroce_earliest(t, 1);
	return t;
}

/* What the sender itself waits for: the handshake, the watchdog. */
static inline u64 mroce_conn_own_due(const struct mroce_conn *c)
{
	u64 t = U64_MAX;

	if (c->hs.state == MROCE_HS_REQ_SENT)
		t = mroce_earliest(t, c->hs.deadline);
	if (!mroce_conn_established(c))
		return t;
	return mroce_earliest(t, c->watchdog_at);
}

/*
 * The paths' share of mroce_conn_tx_deadline() (established only): the
 * stale paths recomputed, the least of all returned and cached.
 */
u64 mroce_conn_paths_due(struct mroce_conn *c);

/*
 * Send side: earliest time mroce_conn_on_tx_timer() has work, U64_MAX if
 * none. Cheap: it recomputes only what changed since the last call (it
 * updates a cache in @c, hence not const). The parameters it reads
 * (silent_rtts, reo_wnd, ack_delay, min_pto, max_rto) must not change
 * while @c is established. Inline: the module calls it (in
 * mroce_conn_next_deadline()) at every unlock, and after most calls
 * (receives, ACKs built) nothing is stale, so it is a few loads.
 */
static inline u64 mroce_conn_tx_deadline(struct mroce_conn *c)
{
	u64 t = mroce_conn_own_due(c);

	if (!mroce_conn_established(c))
		return t;
	return mroce_earliest(t, c->due_stale ? mroce_conn_paths_due(c) :
			      c->paths_due);
}

/*
 * Earliest time mroce_conn_on_timer() has work, U64_MAX if none: the
 * earlier of both sides' deadlines, for a caller that serialises them.
 */
static inline u64 mroce_conn_next_deadline(struct mroce_conn *c)
{
	u64 ack = mroce_conn_ack_deadline(c), tx = mroce_conn_tx_deadline(c);

	return ack < tx ? ack : tx;
}

/* The same, computed from scratch without the cache (tests, debugging). */
u64 mroce_conn_scan_deadline(const struct mroce_conn *c);

#endif /* MROCE_CONN_H */
