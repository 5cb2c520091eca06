// SPDX-License-Identifier: GPL-2.0
/*
 * Connection engine. See mroce_conn.h for how callers drive it and
 * docs/protocol.md §5-§7 for the behaviour it implements.
 *
 * Every function does work bounded by the path count times the 256-entry
 * path ring, so it can run in softirq context under the caller's lock. The
 * ops callbacks run in the middle of ACK and timer processing and must not
 * call back into the connection.
 */
#include "mroce_conn.h"
#include "mroce_pick.h"
#include "mroce_bitmap.h"
#include "mroce_hint.h"
#include "mroce_seq.h"

/* Where transitions leave work for the caller. */
struct sink {
	u64 *probe_mask;
	u32 *events;
};

struct blk_ctx {
	struct mroce_conn *c;
	struct mroce_path *p;
	u32 data_acked;
	u32 data_bytes;
	u32 data_lost;
	u8 why;			/* enum mroce_loss_why of what is lost now */
};

static u8 min_active(const struct mroce_conn *c)
{
	u8 m = c->prm->min_active;

	if (!m)
		m = c->n_paths / 4 > 2 ? c->n_paths / 4 : 2;
	return m > c->n_paths ? c->n_paths : m;
}

static u32 path_rto(const struct mroce_conn *c, const struct mroce_path *p)
{
	u8 backoff = p->health.state == MROCE_PATH_PROBING ?
		p->health.probe_fails : 0;

	return mroce_rtt_rto(p->rtt.srtt ? &p->rtt : &c->rtt, c->prm, backoff);
}

static u32 path_pto(const struct mroce_conn *c, const struct mroce_path *p)
{
	return mroce_rtt_pto(p->rtt.srtt ? &p->rtt : &c->rtt, c->prm);
}

/*
 * @p's deadline inputs changed (its timers, records, RTT, health): the next
 * mroce_conn_tx_deadline() recomputes it. Every change to them goes
 * through one of the callers; the unit tests check the cache against a full
 * scan after every call of randomized runs.
 */
static void touch(struct mroce_conn *c, const struct mroce_path *p)
{
	c->due_stale |= (u64)1 << p->id;
}

static u16 fresh_sport(struct mroce_conn *c, const struct mroce_path *self)
{
	u32 range = MROCE_SPORT_MAX - MROCE_SPORT_MIN + 1;
	u16 s = MROCE_SPORT_MIN;
	u32 tries, i;

	/* Bounded: a collision among <= 64 of 16384 ports is rare. */
	for (tries = 0; tries < 16; tries++) {
		bool clash = false;

		s = (u16)(MROCE_SPORT_MIN + mroce_prng(&c->rng) % range);
		for (i = 0; i < c->max_paths && !clash; i++)
			clash = c->paths[i].sport == s;
		if (!clash && s != self->sport)
			break;
	}
	return s;
}

/* The connection's congestion state before a call, to report a change. */
struct cc_mark {
	u32 cwnd;
	u32 ssthresh;
	u32 hint;
	u16 alpha;
};

/* Someone listens to cc reports (tracing is on in the kernel). */
static bool cc_watched(const struct mroce_conn *c)
{
	return c->ops->cc && (!c->ops->cc_on || *c->ops->cc_on);
}

static void cc_mark(const struct mroce_conn *c, struct cc_mark *m)
{
	m->cwnd = c->cc.cwnd;
	m->ssthresh = c->cc.ssthresh;
	m->hint = c->cc.hint;
	m->alpha = c->cc.alpha;
}

/* @why unless the hint moved (reported first: it bounds the window). */
static void cc_report(struct mroce_conn *c, const struct cc_mark *m, u8 why)
{
	if (c->cc.hint != m->hint)
		why = MROCE_CCW_HINT;
	else if (c->cc.cwnd == m->cwnd && c->cc.ssthresh == m->ssthresh &&
		 c->cc.alpha == m->alpha)
		return;
	c->ops->cc(c->ctx, why);
}

static void rec_acked(void *ctx, const struct mroce_ptx_rec *r, u32 psn)
{
	struct blk_ctx *b = ctx;

	/* Probes too: either shows that newer packets get through. */
	if (r->tx_time > b->c->acked_tx)
		b->c->acked_tx = r->tx_time;
	if (r->cookie == MROCE_COOKIE_PROBE)
		return;
	b->c->inflight -= r->len;
	b->data_acked++;
	b->data_bytes += r->len;
	b->p->stats.acked_pkts++;
	b->c->stats.acked_pkts++;
	b->c->ops->acked(b->c->ctx, r->cookie, r->len, b->p->id);
}

/*
 * A packet declared lost (its chunk queued for resending) was acknowledged
 * after all: the chunk need not go again, and the peer is making progress.
 * Window, RTT and loss statistics stay as the loss left them.
 */
static void rec_late(void *ctx, const struct mroce_ptx_rec *r, u32 psn)
{
	struct blk_ctx *b = ctx;

	if (r->cookie == MROCE_COOKIE_PROBE)
		return;
	b->data_acked++;
	b->c->stats.late_acked++;
	if (b->c->ops->late_acked)
		b->c->ops->late_acked(b->c->ctx, r->cookie, r->len, b->p->id);
}

static void rec_lost(void *ctx, const struct mroce_ptx_rec *r, u32 psn)
{
	struct blk_ctx *b = ctx;

	if (r->cookie == MROCE_COOKIE_PROBE)
		return;
	b->c->inflight -= r->len;
	b->data_lost++;
	b->p->stats.lost_pkts++;
	b->c->stats.lost_pkts++;
	b->c->ops->lost(b->c->ctx, r->cookie, r->len, b->p->id, psn, b->why);
}

static void path_reset(struct mroce_conn *c, struct mroce_path *p, u8 gen)
{
	p->gen = gen;
	p->last_ce = 0;
	p->last_rx = 0;
	p->score = 0;
	p->hot = 0;
	p->rto_at = 0;
	p->pto_at = 0;
	p->hold = 0;
	p->held = false;
	p->probed = false;
	p->tlp = false;
	p->quiet_since = 0;
	mroce_ptx_init(&p->tx);
	mroce_rtt_init(&p->rtt);
	mroce_cc_path_init(&p->cc, c->prm, 0);
	p->sport = fresh_sport(c, p);
}

/*
 * New source port and generation. What the old generation still had in
 * flight is declared lost here (the caller resends it on other paths); the
 * path then waits in PROBING for its PROBE to be acknowledged.
 */
static void rekey(struct mroce_conn *c, struct mroce_path *p, u8 gen,
		  enum mroce_health_event ev, u64 now, struct sink *sk)
{
	struct blk_ctx b = { .c = c, .p = p, .why = MROCE_LOSS_REKEY };
	u8 old_gen = p->gen;
	u16 old_sport = p->sport;

	mroce_ptx_lose_all(&p->tx, rec_lost, &b);
	/*
	 * ACKs the receiver sent before it saw the new generation are still
	 * on their way: keep what they refer to for one RTO (docs §5.6).
	 */
	p->old = p->tx;
	p->old_gen = old_gen;
	p->old_until = now + path_rto(c, p);
	path_reset(c, p, gen);
	p->stats.rekeys++;
	c->stats.rekeys++;
	if (c->ops->rekey)
		c->ops->rekey(c->ctx, p->id, old_gen, old_sport, (u8)ev);
	/* Covers a PROBE the caller fails to send: the RTO re-keys again. */
	p->rto_at = now + path_rto(c, p);
	*sk->probe_mask |= (u64)1 << p->id;
}

static void health(struct mroce_conn *c, struct mroce_path *p,
		   enum mroce_health_event ev, u8 gen, u64 now, struct sink *sk)
{
	u8 old = p->health.state;

	touch(c, p);
	if (mroce_health_step(&p->health, ev, c->prm, now) ==
	    MROCE_HACT_REKEY)
		rekey(c, p, gen, ev, now, sk);
	if (old == p->health.state)
		return;
	*sk->events |= MROCE_EV_PATH_STATE;
	if (p->health.state == MROCE_PATH_FAILED) {
		p->rto_at = 0;
		p->pto_at = 0;
	}
	if (c->ops->path_state)
		c->ops->path_state(c->ctx, p->id, old, p->health.state);
}

/*
 * One watchdog round (docs §5.8): long enough for the slowest path's RTO to
 * fire and the answer to its retransmission to return, doubling with every
 * round in a row without progress.
 */
static u64 watchdog_round(const struct mroce_conn *c)
{
	u32 rto = mroce_rtt_rto(&c->rtt, c->prm, 0);
	u64 round;
	u32 i;

	for (i = 0; i < c->n_paths; i++) {
		const struct mroce_path *p = &c->paths[i];
		u32 t;

		if (!p->rtt.srtt || p->health.state == MROCE_PATH_FAILED)
			continue;
		t = mroce_rtt_rto(&p->rtt, c->prm, 0);
		if (t > rto)
			rto = t;
	}
	round = (u64)rto << (c->retries < 31 ? c->retries : 31);
	if (round > c->prm->max_rto)
		round = c->prm->max_rto;
	return round + c->rtt.srtt;
}

inline void mroce_conn_watchdog_start(struct mroce_conn *c, u64 now)
{
	c->watchdog_at = now + watchdog_round(c);
	c->round_at = now;
}

/* Inline: per packet sent, and mostly the watchdog is armed already. */
static inline void arm_watchdog(struct mroce_conn *c, u64 now)
{
	if (mroce_conn_watchdog_wanted(c))
		mroce_conn_watchdog_start(c, now);
}

/*
 * The peer acknowledged data (late ones included) or refused some: the
 * current watchdog round counts no retry. Cheap, as it runs per ACK; the
 * round itself is re-armed when it ends.
 */
static void progress(struct mroce_conn *c, u64 now)
{
	c->progress_at = now;
	c->retries = 0;
}

/*
 * Whether the watchdog has anything to guard: our data outstanding or
 * queued, or a response owed to us (re-asked of the caller, which alone
 * knows when the last one completed or its QP failed).
 */
static bool watchdog_busy(struct mroce_conn *c)
{
	if (c->inflight || c->backlog)
		return true;
	if (c->owed && c->ops->owed && !c->ops->owed(c->ctx))
		c->owed = false;
	return c->owed;
}

void mroce_conn_reset_transport(struct mroce_conn *c, u64 now)
{
	u32 i;

	/*
	 * Whatever the peer said last about our rate still stands (a retry
	 * exhaustion does not make it wrong); on_up() puts the handshake's.
	 */
	u32 hint = c->cc.hint ? c->cc.hint : c->hs.remote.init_rate;

	for (i = 0; i < c->max_paths; i++)
		c->paths[i].sport = 0;
	for (i = 0; i < c->max_paths; i++) {
		struct mroce_path *p = &c->paths[i];

		p->id = (u8)i;
		path_reset(c, p, 0);
		p->old_until = 0;	/* nothing of a reset transport is late */
		mroce_health_init(&p->health, c->prm);
		mroce_prx_init(&p->rx);
	}
	mroce_cc_conn_init(&c->cc, c->prm, hint);
	mroce_rtt_init(&c->rtt);
	c->inflight = 0;
	c->run_left = 0;
	c->acked_tx = 0;
	c->hint_push = false;
	c->pace_next = 0;
	c->progress_at = now;
	c->watchdog_at = 0;
	c->round_at = now;
	c->retries = 0;
	c->ack_dirty = 0;
	c->ack_at = 0;
	c->ack_pending = 0;
	c->ack_now = false;
	c->ack_rr = 0;
	c->rx_ce = 0;
	c->rx_backlog = 0;
	c->rx_period_bytes = 0;
	c->rx_busy = 0;
	c->rx_cap = 0;
	c->owd_valid = false;
	c->qdelay = 0;
	c->q_min = U32_MAX;
	c->due_stale = U64_MAX;
}

void mroce_conn_init(struct mroce_conn *c, const struct mroce_conn_cfg *cfg)
{
	struct mroce_hs_offer offer = {
		.id = cfg->local_id,
		.nonce = cfg->nonce,
		.mtu = cfg->mtu,
		.n_paths = cfg->max_paths < cfg->prm->n_paths ?
			cfg->max_paths : cfg->prm->n_paths,
		.caps = cfg->caps,
		.init_rate = cfg->init_rate,
	};

	memset(c, 0, sizeof(*c));
	c->prm = cfg->prm;
	c->ops = cfg->ops;
	c->ctx = cfg->ctx;
	c->paths = cfg->paths;
	c->max_paths = cfg->max_paths;
	c->rng = cfg->seed ? cfg->seed : 0x9E3779B97F4A7C15ULL;
	mroce_hs_init(&c->hs, &offer);
	memset(c->paths, 0, c->max_paths * sizeof(*c->paths));
	mroce_conn_reset_transport(c, 0);
}

static void on_up(struct mroce_conn *c, u64 now)
{
	u8 n = mroce_hs_paths(&c->hs);

	c->n_paths = n < c->max_paths ? n : c->max_paths;
	c->mtu = mroce_hs_mtu(&c->hs);
	c->mss = mroce_max_payload(MROCE_OP_WRITE, c->mtu);
	mroce_conn_reset_transport(c, now);
	/* Both grants are the handshake's: the peer's to us, ours to it. */
	mroce_cc_conn_set_hint(&c->cc, c->hs.remote.init_rate);
	c->rx_hint_sent = c->hs.local.init_rate;
	/* A fresh window and the handshake's grant. */
	if (cc_watched(c))
		c->ops->cc(c->ctx, MROCE_CCW_HINT);
}

static u32 hs_result(struct mroce_conn *c, u32 act, u64 now)
{
	if (act & (MROCE_HS_UP | MROCE_HS_RESTART))
		on_up(c, now);
	if (act & MROCE_HS_DOWN) {
		/* Nothing in flight survives; the caller fails the QPs. */
		mroce_conn_reset_transport(c, now);
		c->n_paths = 0;
	}
	return act;
}

u32 mroce_conn_connect(struct mroce_conn *c, u64 now)
{
	u32 act = mroce_hs_connect(&c->hs, c->prm, now);

	if (act & MROCE_HS_SEND_REQ)
		c->req_at = now;
	return act;
}

u32 mroce_conn_on_hs(struct mroce_conn *c, const struct mroce_pkt *pkt,
		     u64 now)
{
	u32 act = hs_result(c, mroce_hs_on_msg(&c->hs, pkt), now);

	/*
	 * The handshake is the connection's first RTT sample, so that a first
	 * flight lost whole (an incast burst into a full buffer, where no data
	 * ACK ever gives a sample) is probed after a few RTTs, not after
	 * init_rto. Only a REP to a REQ sent once times a round trip
	 * unambiguously; in a simultaneous open the peer's REQ establishes
	 * us and the REP to our REQ arrives afterwards, still one round trip
	 * after that REQ.
	 */
	if (pkt->c.opcode == MROCE_OP_CONN_REP && c->req_at &&
	    pkt->u.hs.echo_nonce == c->hs.local.nonce &&
	    !(act & (MROCE_HS_RESTART | MROCE_HS_DOWN)) &&
	    mroce_conn_established(c)) {
		if (!c->rtt.srtt && now > c->req_at &&
		    now - c->req_at < c->prm->max_rto) {
			mroce_rtt_sample(&c->rtt, (u32)(now - c->req_at));
			c->due_stale |= c->due_glob;
		}
		c->req_at = 0;
	}
	return act;
}

u32 mroce_conn_on_unknown(struct mroce_conn *c, u32 id)
{
	return hs_result(c, mroce_hs_on_unknown(&c->hs, id), 0);
}

void mroce_conn_build_hs(const struct mroce_conn *c, u8 opcode, u32 reason,
			 struct mroce_pkt *pkt)
{
	mroce_hs_build(&c->hs, opcode, reason, pkt);
}

static bool any_active(const struct mroce_conn *c)
{
	u32 i;

	for (i = 0; i < c->n_paths; i++) {
		if (c->paths[i].health.state == MROCE_PATH_ACTIVE)
			return true;
	}
	return false;
}

static void slot_fill(const struct mroce_conn *c, u8 idx, u32 len, u64 now,
		      struct mroce_tx_slot *s)
{
	const struct mroce_path *p = &c->paths[idx];
	u32 units = c->backlog >> MROCE_BACKLOG_UNIT_SHIFT;

	s->len = len;
	s->path = idx;
	s->gen = p->gen;
	s->sport = p->sport;
	s->psn = p->tx.next;
	s->floor_delta = 0;
	s->tx_ts = (u32)now;
	s->backlog = units > U16_MAX ? U16_MAX : (u16)units;
	s->depart = now;
	s->rate = 0;
	s->gap = 0;
}

/*
 * A paced connection that starts from idle leaves at a random point of its
 * first packet interval, not at once. Senders that start at the same instant
 * at the same granted rate (an incast) would otherwise send every packet in
 * lockstep: a burst of one packet per sender each interval, which for many
 * senders is a standing queue of many BDPs. The delay is at most one packet
 * at the rate the receiver granted.
 */
static void pace_phase(struct mroce_conn *c, u32 rate, u32 len, u64 gap,
		       u64 now)
{
	if (!len)
		gap = mroce_rate_ns(rate, 1);
	if (gap > U32_MAX)
		gap = U32_MAX;
	c->pace_next = now + (gap ? (u32)mroce_prng(&c->rng) % (u32)gap : 0);
}

enum mroce_tx_status mroce_conn_tx_reserve(struct mroce_conn *c, u64 now,
					   u32 len, int pref_path,
					   struct mroce_tx_slot *slot)
{
	u32 w, rate;
	u64 gap;
	int idx;

	if (!mroce_conn_established(c))
		return MROCE_TX_NOTCONN;
	w = mroce_cc_window(&c->cc, c->prm, c->rtt.min_rtt, c->rtt.srtt);
	if (c->inflight && (u64)c->inflight + len > w)
		return MROCE_TX_WINDOW;
	rate = mroce_cc_pace_rate(&c->cc, c->prm, c->rtt.srtt);
	/* This packet's pacing gap, once: the commit advances the clock by it. */
	gap = mroce_rate_ns(rate, len);
	if (rate && !c->inflight && c->pace_next + gap < now)
		pace_phase(c, rate, len, gap, now);
	if (rate && c->pace_next > now + MROCE_READ_ONCE(c->prm->pace_horizon)) {
		slot->depart = c->pace_next;
		return MROCE_TX_PACED;
	}
	/* The window cannot have moved since: pacing touched only its clock. */
	idx = mroce_pick_path_w(c, len, pref_path, w);
	if (idx < 0)
		return any_active(c) ? MROCE_TX_WINDOW : MROCE_TX_NOPATH;
	slot_fill(c, (u8)idx, len, now, slot);
	slot->rate = rate;
	slot->gap = gap;
	if (c->pace_next > now)
		slot->depart = c->pace_next;
	return MROCE_TX_OK;
}

static inline void commit(struct mroce_conn *c, struct mroce_tx_slot *s,
			  u64 cookie, u64 now)
{
	struct mroce_path *p = &c->paths[s->path];

	touch(c, p);
	/* A path that drained starts a new silence (docs §5.5). */
	if (!p->tx.n_out)
		p->quiet_since = 0;
	s->psn = mroce_ptx_send(&p->tx, s->len, cookie, now);
	s->floor_delta = mroce_ptx_floor_delta(&p->tx, s->psn);
	if (!p->rto_at)
		p->rto_at = now + path_rto(c, p);
}

void mroce_conn_tx_commit(struct mroce_conn *c, struct mroce_tx_slot *slot,
			  u64 cookie, u64 now)
{
	struct mroce_path *p = &c->paths[slot->path];

	commit(c, slot, cookie, now);
	c->inflight += slot->len;
	if (slot->rate)
		c->pace_next = (c->pace_next > now ? c->pace_next : now) +
			slot->gap;
	p->pto_at = now + path_pto(c, p);
	p->stats.tx_pkts++;
	p->stats.tx_bytes += slot->len;
	c->stats.tx_pkts++;
	c->stats.tx_bytes += slot->len;
	arm_watchdog(c, now);
}

bool mroce_conn_probe(struct mroce_conn *c, u8 path, u64 now,
		      struct mroce_tx_slot *slot)
{
	struct mroce_path *p;

	if (!mroce_conn_established(c) || path >= c->n_paths)
		return false;
	p = &c->paths[path];
	if (p->health.state == MROCE_PATH_FAILED || !mroce_ptx_can_send(&p->tx))
		return false;
	slot_fill(c, path, 0, now, slot);
	commit(c, slot, MROCE_COOKIE_PROBE, now);
	c->stats.probes++;
	return true;
}

/* Once per path round: re-key a path that stands out from its siblings. */
static void round_check(struct mroce_conn *c, struct mroce_path *p, u64 now,
			struct sink *sk)
{
	u64 hot_sum = 0, loss_sum = 0;
	u32 i, active = 0;

	p->hot = mroce_path_hot(c, p);
	p->score = mroce_path_score_hot(c, p, p->hot);
	/*
	 * Neither test of mroce_health_is_bad() can pass for a path whose
	 * loss is under the absolute bar and whose hot score is under the
	 * margin alone (the siblings' mean only raises the bar; scores are far
	 * below U32_MAX); all it would do is clear bad_rounds. A ping-pong ends
	 * a round with every ACK: skip the scan of the siblings then.
	 */
	if (p->health.loss_ewma <= c->prm->suspect_loss &&
	    p->hot <= c->prm->rekey_score && !p->health.bad_rounds)
		return;
	for (i = 0; i < c->n_paths; i++) {
		const struct mroce_path *q = &c->paths[i];

		if (q->health.state != MROCE_PATH_ACTIVE)
			continue;
		active++;
		if (q != p)
			hot_sum += q->hot;
		loss_sum += q->health.loss_ewma;
	}
	if (p->health.state != MROCE_PATH_ACTIVE || active <= min_active(c))
		return;
	/* Against the siblings only: a hot path must not lift its own bar. */
	if (mroce_health_is_bad(&p->health, c->prm, p->hot,
				(u32)mroce_div_u64(hot_sum, active - 1),
				(u32)mroce_div_u64(loss_sum, active)))
		health(c, p, MROCE_HEV_BAD, p->gen + 1, now, sk);
}

static void on_block(struct mroce_conn *c, struct mroce_path *p,
		     const struct mroce_ack_block *blk, u64 now,
		     struct mroce_ack_res *res, struct sink *sk)
{
	const struct mroce_params *prm = c->prm;
	struct blk_ctx b = { .c = c, .p = p,
			     .why = p->tlp ? MROCE_LOSS_PTO : MROCE_LOSS_SACK };
	struct mroce_ptx_ack r;
	u16 d_rx, d_ce;
	u32 high, span;
	bool round;

	touch(c, p);
	mroce_ptx_on_block(&p->tx, blk, prm->dupthresh, rec_acked, rec_lost,
			   &b, &r);
	p->tlp = false;
	if (r.bogus) {
		c->stats.bogus_blocks++;
		return;
	}

	/* Cumulative receiver counters; an older, reordered ACK adds nothing. */
	d_rx = (u16)(blk->rx_cnt - p->last_rx);
	d_ce = (u16)(blk->ce_cnt - p->last_ce);
	if (d_rx >= 0x8000 || d_ce >= 0x8000) {
		d_rx = 0;
		d_ce = 0;
	} else {
		p->last_rx = blk->rx_cnt;
		p->last_ce = blk->ce_cnt;
		if (d_ce > d_rx)
			d_ce = d_rx;
	}
	p->stats.ce_pkts += d_ce;

	if (r.acked_pkts) {
		u32 sample = (u32)now - blk->echo_ts - blk->ack_delay;

		if ((s32)sample > 0 && sample < prm->max_rto) {
			mroce_rtt_sample(&p->rtt, sample);
			mroce_rtt_sample(&c->rtt, sample);
			mroce_cc_conn_rtt(&c->cc, sample);
		}
	}
	mroce_health_outcome(&p->health, r.acked_pkts, r.lost_pkts);
	if (b.data_lost) {
		bool congestion = mroce_cc_path_on_loss(&p->cc, prm);

		mroce_cc_conn_on_loss(&c->cc, prm, b.data_lost, congestion);
	}
	span = mroce_bm_span(blk->sack, MROCE_SACK_WORDS);
	high = blk->cum_psn + span;
	/* The path delivers what was sent after its overdue packets. */
	if (p->quiet_since && mroce_seq_ge(high, p->quiet_psn))
		p->quiet_since = 0;
	round = mroce_cc_path_on_ack(&p->cc, prm, c->mss, b.data_bytes, d_rx,
				     d_ce, high, p->tx.next);

	res->ce_pkts += d_ce;
	res->acked_pkts += b.data_acked;
	res->acked_bytes += b.data_bytes;
	res->lost_pkts += b.data_lost;
	if (r.acked_pkts) {
		p->held = false;
		p->probed = false;
		/* p is touched above; a state change needs the full step. */
		if (!mroce_health_progress_quiet(&p->health))
			health(c, p, MROCE_HEV_PROGRESS, 0, now, sk);
		if (p->tx.n_out) {
			p->rto_at = now + path_rto(c, p);
			p->pto_at = p->health.state == MROCE_PATH_ACTIVE ?
				now + path_pto(c, p) : 0;
		} else {
			p->rto_at = 0;
			p->pto_at = 0;
		}
	}
	if (round)
		round_check(c, p, now, sk);
	if (p->health.state == MROCE_PATH_SUSPECT && !p->tx.n_out)
		health(c, p, MROCE_HEV_DRAINED, p->gen + 1, now, sk);
}

/*
 * Timers armed before the connection's first RTT sample used init_rto. Once
 * any path has measured the RTT, the paths without a sample of their own use
 * the connection's (path_rto/path_pto fall back to it): pull their deadlines
 * in, so that a first flight lost whole on some paths (an incast burst) is
 * probed within RTTs rather than after init_rto.
 */
static void first_rtt_rearm(struct mroce_conn *c)
{
	u32 i;

	for (i = 0; i < c->n_paths; i++) {
		struct mroce_path *p = &c->paths[i];
		u64 t;

		if (p->rtt.srtt || !p->tx.n_out ||
		    p->health.state == MROCE_PATH_FAILED)
			continue;
		touch(c, p);
		t = mroce_ptx_oldest(&p->tx) + path_rto(c, p);
		if (p->rto_at && t < p->rto_at)
			p->rto_at = t;
		t = p->tx.last_tx + path_pto(c, p);
		if (p->pto_at && t < p->pto_at)
			p->pto_at = t;
	}
}

/*
 * A block for a generation the sender already gave up on: the one a re-key
 * retired less than an RTO ago, or the current one of a failed path (its
 * records were declared lost but stay in the ring). Returns the data packets
 * it acknowledged; anything else is stale.
 */
static u32 on_late_block(struct mroce_conn *c, struct mroce_path *p,
			 const struct mroce_ack_block *blk, u64 now)
{
	struct blk_ctx b = { .c = c, .p = p };
	struct mroce_ptx *t;

	if (blk->path_gen == p->gen)
		t = &p->tx;
	else if (blk->path_gen == p->old_gen && p->old_until &&
		 now < p->old_until)
		t = &p->old;
	else
		t = NULL;
	if (!t) {
		c->stats.stale_blocks++;
		return 0;
	}
	touch(c, p);
	c->stats.late_blocks++;
	mroce_ptx_on_late_block(t, blk, rec_late, &b);
	return b.data_acked;
}

/*
 * Time-based loss (docs §5.3). A packet sent before one that was since
 * acknowledged, on any path, and still unanswered a path RTT plus the
 * reordering allowance after it left, is lost. The gap rule cannot see it
 * when nothing later went on its own path: the tail of a path, a sparse
 * stream of READ requests, or a sender stalled on its stream window, which
 * would otherwise wait for a PTO and its probe's round trip, or an RTO.
 */
static u64 overdue_wait(const struct mroce_conn *c, const struct mroce_path *p)
{
	u32 srtt = p->rtt.srtt ? p->rtt.srtt : c->rtt.srtt;

	return srtt + ((u64)srtt * c->prm->reo_wnd >> 10) + c->prm->ack_delay;
}

/*
 * When the oldest outstanding packet of @p is overdue; U64_MAX: not now.
 * @oldest: mroce_ptx_oldest() of @p, read only if it has packets out.
 */
static inline u64 overdue_from(const struct mroce_conn *c,
			       const struct mroce_path *p, u64 oldest)
{
	if (!c->prm->reo_wnd || !c->rtt.srtt || !p->tx.n_out ||
	    (p->health.state != MROCE_PATH_ACTIVE &&
	     p->health.state != MROCE_PATH_SUSPECT))
		return U64_MAX;
	if (!oldest || c->acked_tx <= oldest)
		return U64_MAX;
	return oldest + overdue_wait(c, p);
}

static u64 overdue_at(const struct mroce_conn *c, const struct mroce_path *p)
{
	return overdue_from(c, p, p->tx.n_out ? mroce_ptx_oldest(&p->tx) : 0);
}

/*
 * Declares the overdue packets of @p lost; the path stays as it is (the
 * silence rule still judges it from the first of them). Returns the data
 * packets lost.
 */
static u32 path_overdue(struct mroce_conn *c, struct mroce_path *p, u64 now)
{
	struct blk_ctx b = { .c = c, .p = p, .why = MROCE_LOSS_TIME };
	u64 before = now - overdue_wait(c, p) + 1;
	u64 first = mroce_ptx_oldest(&p->tx);
	u32 psn = p->tx.floor;

	if (before > c->acked_tx)
		before = c->acked_tx;
	touch(c, p);
	if (!mroce_ptx_lose_older(&p->tx, before, rec_lost, &b))
		return 0;
	if (!p->quiet_since) {
		p->quiet_since = first;
		p->quiet_psn = psn;
	}
	c->stats.overdue += b.data_lost;
	mroce_health_outcome(&p->health, 0, b.data_lost);
	if (b.data_lost)
		mroce_cc_conn_on_loss(&c->cc, c->prm, b.data_lost,
				      mroce_cc_path_on_loss(&p->cc, c->prm));
	if (!p->tx.n_out) {
		p->rto_at = 0;
		p->pto_at = 0;
	}
	return b.data_lost;
}

/* Every path's overdue packets, once ACKs or time made them so. */
static u32 conn_overdue(struct mroce_conn *c, u64 now)
{
	u32 i, n = 0;

	/* The rule is off, or has no RTT yet: see overdue_at(). */
	if (!c->prm->reo_wnd || !c->rtt.srtt)
		return 0;
	for (i = 0; i < c->n_paths; i++) {
		struct mroce_path *p = &c->paths[i];

		if (now >= p->hold && now >= overdue_at(c, p))
			n += path_overdue(c, p, now);
	}
	return n;
}

void mroce_conn_on_ack(struct mroce_conn *c, const struct mroce_pkt *pkt,
		       u64 now, struct mroce_ack_res *res)
{
	struct sink sk = { &res->probe_mask, &res->events };
	bool had_rtt = c->rtt.srtt != 0;
	bool watch = cc_watched(c);
	struct cc_mark m;
	u32 i, late = 0;

	memset(res, 0, sizeof(*res));
	c->stats.acks_rx++;
	if (!mroce_conn_established(c))
		return;
	if (watch)
		cc_mark(c, &m);
	/* The connection's srtt and acked_tx may move. */
	c->due_stale |= c->due_glob;
	mroce_cc_conn_set_hint(&c->cc, pkt->u.ack.rate_hint);
	for (i = 0; i < pkt->u.ack.n_blocks; i++) {
		struct mroce_ack_block blk;
		struct mroce_path *p;

		mroce_ack_block_get(pkt, i, &blk);
		if (blk.path_id >= c->n_paths) {
			c->stats.bogus_blocks++;
			continue;
		}
		p = &c->paths[blk.path_id];
		if (blk.path_gen == p->gen &&
		    p->health.state != MROCE_PATH_FAILED) {
			on_block(c, p, &blk, now, res, &sk);
			continue;
		}
		late += on_late_block(c, p, &blk, now);
	}
	if (!had_rtt && c->rtt.srtt)
		first_rtt_rearm(c);
	res->lost_pkts += conn_overdue(c, now);
	/* A hint-only ACK acknowledges nothing and must not end a round. */
	if (pkt->u.ack.n_blocks)
		mroce_cc_conn_on_ack(&c->cc, c->prm, c->mss, res->acked_bytes,
				     res->acked_pkts, res->ce_pkts, now,
				     c->rtt.srtt, c->rtt.min_rtt);
	if (watch)
		cc_report(c, &m, c->cc.cwnd >= m.cwnd ? MROCE_CCW_ACK :
			  res->ce_pkts ? MROCE_CCW_ECN : MROCE_CCW_LOSS);
	if (res->acked_pkts || late)
		progress(c, now);
}

bool mroce_conn_on_nak(struct mroce_conn *c, const struct mroce_nak *nak,
		       u64 now, u64 *cookie, u32 *len, u64 *probe_mask)
{
	u32 events = 0;
	struct sink sk = { probe_mask, &events };
	struct mroce_ptx_rec rec;
	struct mroce_path *p;

	c->stats.naks_rx++;
	if (!mroce_conn_established(c) || nak->path_id >= c->n_paths)
		return false;
	p = &c->paths[nak->path_id];
	if (nak->path_gen != p->gen)
		return false;
	touch(c, p);
	if (nak->code == MROCE_NAK_STALE_GEN) {
		health(c, p, MROCE_HEV_STALE, (u8)(nak->arg + 1), now, &sk);
		return false;
	}
	if (!mroce_ptx_on_nak(&p->tx, nak->path_psn, &rec) ||
	    rec.cookie == MROCE_COOKIE_PROBE)
		return false;
	c->inflight -= rec.len;
	p->stats.naks++;
	/* The packet got through: the path works, whatever the verdict. */
	health(c, p, MROCE_HEV_PROGRESS, 0, now, &sk);
	/*
	 * And the peer answers: a receiver that keeps refusing (RNR while the
	 * application posts no receive) is bounded by the QP's rnr_retry, not
	 * by the connection's retry budget.
	 */
	progress(c, now);
	if (!p->tx.n_out) {
		p->rto_at = 0;
		p->pto_at = 0;
	}
	*cookie = rec.cookie;
	*len = rec.len;
	return true;
}

enum mroce_rx_verdict mroce_conn_rx_check(struct mroce_conn *c,
					  const struct mroce_pkt *pkt)
{
	struct mroce_path *p;

	if (!mroce_conn_established(c))
		return MROCE_RX_NOTCONN;
	if (pkt->c.path_id >= c->n_paths) {
		c->stats.rx_bad_path++;
		return MROCE_RX_BAD_PATH;
	}
	p = &c->paths[pkt->c.path_id];
	switch (mroce_prx_check(&p->rx, pkt->c.path_gen, pkt->c.path_psn,
				pkt->c.floor_delta)) {
	case MROCE_PRX_NEW:
		return MROCE_RX_NEW;
	case MROCE_PRX_DUP:
		c->stats.rx_dup++;
		return MROCE_RX_DUP;
	case MROCE_PRX_OLD:
		c->stats.rx_old++;
		return MROCE_RX_OLD;
	default:
		c->stats.rx_stale++;
		return MROCE_RX_STALE;
	}
}

/* One-way delay above its minimum: the receiver's view of queueing. */
static void owd_update(struct mroce_conn *c, u32 tx_ts, u64 now)
{
	u32 owd = (u32)now - tx_ts;
	s32 rel;
	s64 q;

	if (!c->owd_valid) {
		c->owd_valid = true;
		c->owd_base = owd;
		c->owd_min = 0;
		c->qdelay = 0;
	}
	rel = (s32)(owd - c->owd_base);
	if (rel < c->owd_min)
		c->owd_min = rel;
	q = (s64)rel - c->owd_min;
	if (q > U32_MAX)
		q = U32_MAX;
	c->qdelay = (u32)((s64)c->qdelay + (q - (s64)c->qdelay) / 8);
	if (q < c->q_min)
		c->q_min = (u32)q;
}

bool mroce_conn_rx_accept(struct mroce_conn *c, const struct mroce_pkt *pkt,
			  bool ce, u64 now)
{
	struct mroce_path *p = &c->paths[pkt->c.path_id];
	bool probe = pkt->c.opcode == MROCE_OP_PROBE;
	u32 tx_ts = probe ? pkt->u.probe.tx_ts : pkt->u.d.tx_ts;
	bool ooo;

	ooo = mroce_prx_accept(&p->rx, pkt->c.path_psn, tx_ts, ce, now);
	p->stats.rx_pkts++;
	c->stats.rx_pkts++;
	if (ce) {
		c->rx_ce++;
		c->stats.rx_ce++;
	}
	/* A probe's too: a sender stalled on a lost tail still wants its share. */
	c->rx_backlog = (u32)(probe ? pkt->u.probe.backlog : pkt->u.d.backlog) <<
		MROCE_BACKLOG_UNIT_SHIFT;
	if (!probe) {
		c->stats.rx_bytes += pkt->payload_len;
		c->rx_period_bytes += pkt->payload_len;
		owd_update(c, tx_ts, now);
	}
	c->ack_dirty |= (u64)1 << p->id;
	c->ack_pending++;
	if (ooo || probe || (pkt->c.flags & MROCE_F_AR) ||
	    c->ack_pending >= c->prm->ack_every)
		c->ack_now = true;
	else if (!c->ack_at)
		c->ack_at = now + c->prm->ack_delay;
	return c->ack_now;
}

u32 mroce_conn_build_ack(struct mroce_conn *c, u64 now, u8 *buf, u32 cap)
{
	u64 low = ((u64)1 << c->ack_rr) - 1, todo[2];
	u32 room, n = 0, len, k, pass;

	if (!mroce_conn_established(c) || (!c->ack_dirty && !c->hint_push) ||
	    cap < MROCE_ACK_BASE_LEN + (c->ack_dirty ? MROCE_ACK_BLOCK_LEN : 0))
		return 0;
	room = (cap - MROCE_ACK_BASE_LEN) / MROCE_ACK_BLOCK_LEN;
	if (room > MROCE_ACK_MAX_BLOCKS)
		room = MROCE_ACK_MAX_BLOCKS;
	len = MROCE_ACK_BASE_LEN;
	/*
	 * Round robin so that many busy paths all get reported: the dirty
	 * paths from ack_rr up, then those below it, each in index order.
	 */
	todo[0] = c->ack_dirty & ~low;
	todo[1] = c->ack_dirty & low;
	for (pass = 0; pass < 2; pass++) {
		while (todo[pass] && n < room) {
			struct mroce_ack_block blk;

			k = mroce_ctz64(todo[pass]);
			todo[pass] &= todo[pass] - 1;
			if (k >= c->n_paths)
				break;
			mroce_prx_block(&c->paths[k].rx, (u8)k, now, &blk);
			mroce_ack_block_put(&blk, buf + len);
			len += MROCE_ACK_BLOCK_LEN;
			c->ack_dirty &= ~((u64)1 << k);
			c->ack_rr = k + 1 < c->n_paths ? (u8)(k + 1) : 0;
			n++;
		}
	}
	mroce_encode_ack_head(c->hs.remote.id, c->rx_hint, c->rx_ce, (u8)n,
			      buf, cap);
	if (!c->ack_dirty) {
		c->ack_now = false;
		c->ack_at = 0;
		c->ack_pending = 0;
	}
	if (!n)
		c->stats.hint_acks_tx++;
	c->hint_push = false;
	c->rx_hint_sent = c->rx_hint;
	c->stats.acks_tx++;
	return len;
}

void mroce_conn_set_rx_hint(struct mroce_conn *c, u32 mbps)
{
	u32 told = c->rx_hint_sent;

	if (c->rx_cap && mbps > c->rx_cap)
		mbps = c->rx_cap;
	c->rx_hint = mbps;
	if (!mbps)
		return;
	c->hs.local.init_rate = mbps;
	/*
	 * A grant that fell by more than an eighth is pushed at once: the
	 * peer may be idle and would restart at what it last heard (0 there
	 * means "no limit"). Rises wait for the next ACK; an idle peer asks
	 * for more with its first packets.
	 */
	if (mroce_conn_established(c) && (!told || mbps < told - told / 8))
		c->hint_push = true;
}

/*
 * When a path that carries data is judged silent (docs §5.5): its oldest
 * outstanding packet has waited silent_rtts connection srtts (and at least a
 * tail-loss probe's round trip) while some path acknowledged a packet sent
 * after it. Paths are FIFO, so that packet is not merely late; waiting for
 * the RTO (min_rto, many RTTs) could exhaust the stream windows first.
 * U64_MAX if the rule does not apply now. @oldest as for overdue_from().
 */
static inline u64 silent_from(const struct mroce_conn *c,
			      const struct mroce_path *p, u64 oldest)
{
	u64 wait, probe;

	if (!c->prm->silent_rtts || !c->rtt.srtt || !p->tx.n_out ||
	    (p->health.state != MROCE_PATH_ACTIVE &&
	     p->health.state != MROCE_PATH_SUSPECT))
		return U64_MAX;
	/* Packets declared overdue still count as the path's silence. */
	if (p->quiet_since && (!oldest || p->quiet_since < oldest))
		oldest = p->quiet_since;
	if (!oldest || c->acked_tx <= oldest)
		return U64_MAX;
	wait = (u64)c->prm->silent_rtts * c->rtt.srtt + c->prm->ack_delay;
	probe = (u64)path_pto(c, p) + c->rtt.srtt;
	return oldest + (wait > probe ? wait : probe);
}

static u64 silent_at(const struct mroce_conn *c, const struct mroce_path *p)
{
	return silent_from(c, p, p->tx.n_out ? mroce_ptx_oldest(&p->tx) : 0);
}

/* RTO, or silence: what is outstanding is lost and the path re-keyed. */
static void path_expire(struct mroce_conn *c, struct mroce_path *p, u64 now,
			struct sink *sk)
{
	struct blk_ctx b = { .c = c, .p = p, .why = MROCE_LOSS_RTO };
	bool watch = cc_watched(c);
	struct cc_mark m;

	p->rto_at = 0;
	p->pto_at = 0;
	if (watch)
		cc_mark(c, &m);
	mroce_ptx_lose_all(&p->tx, rec_lost, &b);
	if (b.data_lost)
		mroce_cc_conn_on_loss(&c->cc, c->prm, b.data_lost,
				      mroce_cc_path_on_loss(&p->cc, c->prm));
	if (watch)
		cc_report(c, &m, MROCE_CCW_RTO);
	mroce_health_outcome(&p->health, 0, b.data_lost);
	health(c, p, MROCE_HEV_RTO, p->gen + 1, now, sk);
}

/* Tail-loss probe: its ACK exposes a lost tail as a gap. */
static void path_probe(struct mroce_conn *c, struct mroce_path *p,
		       struct sink *sk)
{
	p->pto_at = 0;
	p->tlp = true;
	p->probed = true;
	p->stats.ptos++;
	c->stats.ptos++;
	*sk->probe_mask |= (u64)1 << p->id;
}

/*
 * A loss deadline found long past says that we were not running (a busy
 * hypervisor, softirqs held off), not that the path lost anything: its
 * ACKs may be waiting in our own receive queue, and the probe that was due
 * before the RTO never went out. Expiring now would resend what arrived
 * and re-key a good path. Probe instead and give the answer one PTO; once
 * until the path makes progress, so a dead path still expires.
 *
 * With rto_probe the same goes for an RTO (not silence: that one has a
 * later packet's ACK as evidence) that finds no probe sent since the path
 * last made progress, on time or not: where RTT swings by more than the
 * RTO's variance allows (a VM), the RTO comes before the PTO and most RTOs
 * were spurious. A PROBING path has its PROBE out already.
 */
static bool path_probe_first(struct mroce_conn *c, struct mroce_path *p,
			     u64 now, struct sink *sk)
{
	const struct mroce_params *prm = c->prm;
	u64 due = U64_MAX, quiet = silent_at(c, p);
	bool rto = p->rto_at && now >= p->rto_at;

	if (p->held)
		return false;
	if (rto)
		due = p->rto_at;
	if (now >= quiet && quiet < due)
		due = quiet;
	if (due == U64_MAX)
		return false;
	if (!(prm->oversleep && now - due > prm->oversleep) &&
	    !(MROCE_READ_ONCE(prm->rto_probe) && rto && !p->probed &&
	      p->health.state != MROCE_PATH_PROBING))
		return false;
	p->held = true;
	p->hold = now + path_pto(c, p);
	path_probe(c, p, sk);
	return true;
}

static void path_timer(struct mroce_conn *c, struct mroce_path *p, u64 now,
		       struct sink *sk)
{
	if (p->health.state == MROCE_PATH_FAILED) {
		if (now >= p->health.holdoff_end)
			health(c, p, MROCE_HEV_HOLDOFF_END, p->gen + 1, now, sk);
		return;
	}
	if (path_probe_first(c, p, now, sk))
		return;
	if (now >= p->hold && now >= overdue_at(c, p)) {
		bool watch = cc_watched(c);
		struct cc_mark m;

		if (watch)
			cc_mark(c, &m);
		path_overdue(c, p, now);
		if (watch)
			cc_report(c, &m, MROCE_CCW_LOSS);
	}
	if (now >= p->hold && p->rto_at && now >= p->rto_at) {
		p->stats.rtos++;
		c->stats.rtos++;
		path_expire(c, p, now, sk);
		return;
	}
	if (now >= p->hold && now >= silent_at(c, p)) {
		p->stats.silent++;
		c->stats.silent++;
		path_expire(c, p, now, sk);
		return;
	}
	if (p->pto_at && now >= p->pto_at)
		path_probe(c, p, sk);
}

u64 mroce_conn_on_tx_timer(struct mroce_conn *c, u64 now,
			   struct mroce_timer_res *res)
{
	struct sink sk = { &res->probe_mask, &res->events };
	u32 i;

	memset(res, 0, sizeof(*res));
	res->hs = hs_result(c, mroce_hs_on_timer(&c->hs, c->prm, now), now);
	if (res->hs & MROCE_HS_SEND_REQ)
		c->req_at = 0;	/* a REP could now answer either REQ */
	if (!mroce_conn_established(c))
		return mroce_conn_tx_deadline(c);

	/* Rare next to the data path: every path may move. */
	c->due_stale = U64_MAX;
	for (i = 0; i < c->n_paths; i++)
		path_timer(c, &c->paths[i], now, &sk);

	if (c->watchdog_at && now >= c->watchdog_at) {
		c->watchdog_at = 0;
		/* A retry is a whole round in which nothing at all moved. */
		if (c->progress_at < c->round_at && watchdog_busy(c)) {
			c->retries++;
			c->stats.retry_rounds++;
			if (c->retries > c->prm->retry_limit)
				res->events |= MROCE_EV_RETRY_EXHAUSTED;
		}
		arm_watchdog(c, now);
	}
	return mroce_conn_tx_deadline(c);
}

bool mroce_conn_on_ack_timer(struct mroce_conn *c, u64 now)
{
	if (!mroce_conn_established(c))
		return false;
	if (c->ack_at && now >= c->ack_at && c->ack_dirty)
		c->ack_now = true;
	return mroce_conn_ack_due(c, now);
}

u64 mroce_conn_on_timer(struct mroce_conn *c, u64 now,
			struct mroce_timer_res *res)
{
	u64 tx = mroce_conn_on_tx_timer(c, now, res), ack;

	if (mroce_conn_on_ack_timer(c, now))
		res->events |= MROCE_EV_ACK_DUE;
	ack = mroce_conn_ack_deadline(c);
	return ack < tx ? ack : tx;
}

static u64 max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

/* The earliest timer work of @p. */
static inline u64 path_due(const struct mroce_conn *c,
			   const struct mroce_path *p)
{
	u64 t = U64_MAX, oldest;

	if (p->health.state == MROCE_PATH_FAILED)
		return mroce_earliest(t, p->health.holdoff_end);
	t = mroce_earliest(t, p->rto_at ? max_u64(p->rto_at, p->hold) : 0);
	t = mroce_earliest(t, p->pto_at);
	/* Neither rule judges a path with nothing out (every ACKed ping). */
	if (!p->tx.n_out)
		return t;
	/* Both rules start from the oldest packet out: find it once. */
	oldest = mroce_ptx_oldest(&p->tx);
	t = mroce_earliest(t, max_u64(silent_from(c, p, oldest), p->hold));
	return mroce_earliest(t, max_u64(overdue_from(c, p, oldest), p->hold));
}

u64 mroce_conn_scan_deadline(const struct mroce_conn *c)
{
	u64 t = mroce_conn_own_due(c), ack = mroce_conn_ack_deadline(c);
	u32 i;

	if (ack < t)
		t = ack;
	if (!mroce_conn_established(c))
		return t;
	for (i = 0; i < c->n_paths; i++)
		t = mroce_earliest(t, path_due(c, &c->paths[i]));
	return t;
}

/* Recomputes the cached deadline of path @i. */
static void due_refresh(struct mroce_conn *c, u32 i)
{
	struct mroce_path *p = &c->paths[i];
	u64 bit = (u64)1 << i;

	p->due = path_due(c, p);
	/*
	 * Only a path with packets out reads the connection's srtt and
	 * acked_tx (silence, overdue): see silent_at(), overdue_at().
	 */
	if (p->tx.n_out && p->health.state != MROCE_PATH_FAILED)
		c->due_glob |= bit;
	else
		c->due_glob &= ~bit;
}

u64 mroce_conn_paths_due(struct mroce_conn *c)
{
	u64 all, stale;
	bool rescan;
	u32 i;

	all = c->n_paths < 64 ? ((u64)1 << c->n_paths) - 1 : U64_MAX;
	stale = c->due_stale & all;
	/*
	 * Every path stale (a reset, a timer): no cached value is kept.
	 * Otherwise most calls touched one path: paths_due moves only if that
	 * path's deadline fell below it, or rose from being it. One loop for
	 * both, so that due_refresh() has one call site and is inlined.
	 */
	rescan = stale == all;
	while (stale) {
		u64 old;

		i = mroce_ctz64(stale);
		stale &= stale - 1;
		old = c->paths[i].due;
		due_refresh(c, i);
		if (rescan)
			continue;
		if (c->paths[i].due <= c->paths_due)
			c->paths_due = c->paths[i].due;
		else if (old == c->paths_due)
			rescan = true;
	}
	if (rescan) {
		c->paths_due = U64_MAX;
		for (i = 0; i < c->n_paths; i++)
			c->paths_due = mroce_earliest(c->paths_due,
						      c->paths[i].due);
	}
	c->due_stale = 0;
	return c->paths_due;
}
