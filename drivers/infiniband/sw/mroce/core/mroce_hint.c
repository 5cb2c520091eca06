// SPDX-License-Identifier: GPL-2.0
/*
 * Rate hint computation. The water level is found by bisection over at most
 * 32 steps rather than by sorting demands, so the work per period is
 * O(32 n) with no scratch memory.
 */
#include "mroce_hint.h"
#include "mroce_params.h"

/* The measured cap never cuts below C / 64 (drain_learn()). */
#define MROCE_HINT_FLOOR_SHIFT 6

/* C: the share of the port's capacity the hints hand out. */
static u64 usable(const struct mroce_hint_cfg *cfg)
{
	return (u64)cfg->capacity * cfg->util / MROCE_Q10;
}

static u64 filled(const struct mroce_hint_entry *e, u32 n, u64 level)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		u64 cap = level * (e[i].weight ? e[i].weight : 1);

		if (e[i].demand)
			sum += e[i].demand < cap ? e[i].demand : cap;
	}
	return sum;
}

/* Q10 share of the capacity a least queueing of @qd ns takes away. */
static u32 drain_cut(const struct mroce_hint_cfg *cfg, u32 qd)
{
	u64 cut;

	if (qd <= cfg->q_target)
		return 0;
	cut = mroce_div64_u64((u64)cfg->k_drain * (qd - cfg->q_target),
			      (u64)qd + cfg->rtt_min);
	return cut > MROCE_Q10 / 2 ? MROCE_Q10 / 2 : (u32)cut;
}

/*
 * The configured capacity is what the port could take, not what this host
 * processes: a busy or virtualised receiver drains far less (a VM 0.1-0.4
 * of 10 Gbit/s), and a capacity-based grant never binds there; the senders'
 * windows then fill a queue of tens of ms, and every loss holds its stream
 * window for the queue's round trip. While a queue stands the receiver is
 * never idle, so what arrives is what it drains, whatever the senders could
 * send: the periods of a queue episode measure that rate and the grant is
 * cut from it, not from the capacity, by half the capacity's cut (at most a
 * quarter): a cut of the drain rate slows the senders below what is
 * processed, where the capacity's cut mostly takes headroom away, and a
 * quarter drains the queue within a few of its round trips without
 * starving the receiver in between. Once the queue is gone (the senders
 * slowed, or were never the cause) the measured cap grows back by an
 * eighth per base RTT until the capacity takes over; it does not jump,
 * since a grant far above the drain rate refills the queue within a round
 * trip. Arrivals below target queueing are demand, not drain, and are
 * never used: an application-limited sender is not ratcheted down.
 */
static void drain_learn(const struct mroce_hint_cfg *cfg,
			struct mroce_hint_state *st, u64 c, u32 qd, u32 cut,
			u64 arrival, u64 period)
{
	u64 rate, cap, floor, span, rtt = cfg->rtt_min ? cfg->rtt_min : 1;

	if (qd == U32_MAX) {
		/*
		 * Nothing arrived while a sender has data for us: no evidence
		 * of the queue either way. A receiver that did not run (its
		 * CPU busy elsewhere) drained nothing in that time, which the
		 * drain rate must count, or it would be the rate of its bursts.
		 */
		if (st->q_ns)
			st->q_ns += period;
		return;
	}
	if (qd <= cfg->q_target) {
		/*
		 * One period of a short queue (a packet that met none) does not
		 * end the episode: only a base RTT and two periods of it do.
		 */
		if (st->q_ns) {
			st->low_ns += period;
			if (st->low_ns < rtt || st->low_ns < 2 * period) {
				st->q_bits += arrival * period;
				st->q_ns += period;
				return;
			}
		}
		st->q_bits = 0;
		st->q_ns = 0;
		st->low_ns = 0;
		if (st->cap) {
			span = period < rtt ? period : rtt;
			cap = st->cap + mroce_div64_u64((u64)st->cap * span,
							8 * rtt) + 1;
			st->cap = cap >= c ? 0 : (u32)cap;
		}
		return;
	}
	st->low_ns = 0;
	st->q_bits += arrival * period;
	st->q_ns += period;
	/* Some round trips of the queue, the older half weighing less. */
	span = 8 * (rtt + qd);
	if (st->q_ns > span) {
		st->q_bits /= 2;
		st->q_ns /= 2;
	}
	/* A receiver takes packets in bursts: one period says little. */
	if (st->q_ns < cfg->rtt_min || st->q_ns <= period)
		return;
	rate = mroce_div64_u64(st->q_bits, st->q_ns);
	if (rate >= c) {
		/* It drains at the capacity: the capacity's cut is right. */
		st->cap = 0;
		return;
	}
	cap = rate * (MROCE_Q10 - cut / 2) / MROCE_Q10;
	/*
	 * A backstop, not a target: a queueing signal that is not a queue at
	 * this port (a drifting clock, another bottleneck shared with senders
	 * that do not yield) would otherwise cut what arrives again and again.
	 */
	floor = c >> MROCE_HINT_FLOOR_SHIFT;
	if (cap < floor)
		cap = floor;
	st->cap = cap >= c ? 0 : (cap ? (u32)cap : 1);
}

u32 mroce_hint_compute(const struct mroce_hint_cfg *cfg,
		       struct mroce_hint_state *st,
		       struct mroce_hint_entry *e, u32 n, u64 period_ns)
{
	u64 c = usable(cfg), arrival = 0, lo, hi;
	u32 i, qd = U32_MAX, cut;
	bool busy = false;

	/*
	 * A queue at our port delays every packet of every connection, so the
	 * least delay any of them saw is the standing queue. Queueing that only
	 * some packets meet (the bursts of synchronised senders) is not, and an
	 * average per connection would trail a drained queue by as many
	 * periods as that connection's packets are apart (many, in an incast).
	 */
	for (i = 0; i < n; i++) {
		arrival += e[i].arrival;
		if (!e[i].demand)
			continue;
		busy = true;
		if (e[i].qdelay < qd)
			qd = e[i].qdelay;
	}
	/* No queueing seen (qd U32_MAX) is no cut. */
	cut = drain_cut(cfg, qd == U32_MAX ? 0 : qd);
	if (st) {
		if (!busy)
			*st = (struct mroce_hint_state){};	/* nothing to learn */
		else
			drain_learn(cfg, st, c, qd, cut, arrival, period_ns);
	}
	/* C_eff = C * max(0.5, 1 - k (qd - qt) / (qd + rtt_min)) */
	c = c * (MROCE_Q10 - cut) / MROCE_Q10;
	if (st && st->cap && st->cap < c)
		c = st->cap;
	if (!c)
		c = 1;

	/* Largest level L with sum(min(d_i, L w_i)) <= C. */
	if (filled(e, n, c) <= c) {
		lo = c;
	} else {
		lo = 0;
		hi = c;
		while (hi - lo > 1) {
			u64 mid = lo + (hi - lo) / 2;

			if (filled(e, n, mid) <= c)
				lo = mid;
			else
				hi = mid;
		}
		if (!lo)
			lo = 1;
	}
	for (i = 0; i < n; i++) {
		u64 h;

		/*
		 * An idle connection may start at any moment, and all of them
		 * at once (an incast): its grant is its share of C among every
		 * connection we serve, so that their first round trip together
		 * sends about one BDP. The first ACK then gives it its share.
		 */
		if (e[i].demand)
			h = lo * (e[i].weight ? e[i].weight : 1);
		else
			h = mroce_div_u64(c, n);
		if (h > c)
			h = c;
		e[i].hint = h ? (u32)h : 1;
	}
	return (u32)c;
}

u32 mroce_hint_newcomer(const struct mroce_hint_cfg *cfg, u32 n_conns)
{
	u64 c = mroce_div_u64(usable(cfg), n_conns ? n_conns : 1);

	return c ? (u32)c : 1;
}
