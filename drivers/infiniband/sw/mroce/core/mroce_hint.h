/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The receiver's fair-share rate hint: a max-min water-fill of the device's
 * receive capacity over its active connections, shrunk by a drain factor
 * when queueing builds up. See docs/protocol.md §6.4.
 */
#ifndef MROCE_HINT_H
#define MROCE_HINT_H

#include "mroce_env.h"
#include "mroce_params.h"

struct mroce_hint_cfg {
	u32 capacity;		/* Mbit/s the device can receive */
	u16 util;		/* Q10 target utilisation */
	u16 k_drain;		/* Q10 drain gain */
	u32 q_target;		/* ns of queueing delay tolerated */
	u32 rtt_min;		/* ns, base RTT of the fabric */
};

struct mroce_hint_entry {
	u32 demand;		/* in: Mbit/s the connection could use, 0 = idle */
	u32 qdelay;		/* in: least queueing of the period, ns; U32_MAX: none */
	u16 weight;		/* in: share weight, >= 1 */
	u32 hint;		/* out: Mbit/s to advertise */
	u32 arrival;		/* in: Mbit/s that arrived over the period */
};

/*
 * What the receiver learnt of its own drain rate, kept from one period to
 * the next (zeroed: nothing learnt). While a queue stands, what arrives is
 * what the receiver could process: @q_bits and @q_ns sum the arrivals of
 * the periods of the current queue episode, @low_ns the time of short
 * queue within it, @cap is the capacity shared that they set, 0 = none
 * (the configured capacity).
 */
struct mroce_hint_state {
	u64 q_bits;		/* Mbit/s x ns of arrivals while queued */
	u64 q_ns;		/* ns of periods while queued */
	u64 low_ns;		/* ns of short queue within the episode */
	u32 cap;		/* Mbit/s, 0 = none */
};

/* The defaults (inline, as the two below: a pass makes them per packet). */
static inline void mroce_hint_cfg_default(struct mroce_hint_cfg *cfg,
					  u32 capacity)
{
	cfg->capacity = capacity;
	cfg->util = MROCE_Q10 * 95 / 100;
	cfg->k_drain = MROCE_Q10;
	cfg->rtt_min = 50 * 1000u;	/* ns */
	cfg->q_target = cfg->rtt_min / 2;
}

/*
 * Computes entry[i].hint for all @n entries (O(32 n)) over a period of
 * @period_ns and returns the capacity that was shared after the drain
 * factor. @st (may be NULL: the configured capacity only) carries the
 * measured drain rate across periods.
 */
u32 mroce_hint_compute(const struct mroce_hint_cfg *cfg,
		       struct mroce_hint_state *st,
		       struct mroce_hint_entry *e, u32 n, u64 period_ns);
/*
 * The grant of a connection that is being set up (its CONN_REQ or CONN_REP
 * carries it as init_rate): the undrained capacity over @n_conns, every
 * connection the device serves counting this one, like an idle one's hint.
 */
u32 mroce_hint_newcomer(const struct mroce_hint_cfg *cfg, u32 n_conns);

/* Mbit/s that @bytes over @period_ns are, at most U32_MAX. */
static inline u32 mroce_hint_mbps(u64 bytes, u64 period_ns)
{
	u64 r;

	if (!period_ns)
		return 0;
	/* bytes * 8 / ns = Gbit/s; * 1000 = Mbit/s */
	r = mroce_div64_u64(bytes * 8000, period_ns);
	return r > U32_MAX ? U32_MAX : (u32)r;
}

/*
 * Demand of one connection: its arrival rate over @period_ns plus its
 * advertised backlog drained within one @rtt, capped at @line Mbit/s.
 */
static inline u32 mroce_hint_demand(u64 bytes, u64 period_ns,
				    u32 backlog_bytes, u32 rtt, u32 line)
{
	u64 d = mroce_hint_mbps(bytes, period_ns);

	if (rtt)
		d += mroce_div_u64((u64)backlog_bytes * 8000, rtt);
	return d > line ? line : (u32)d;
}

#endif /* MROCE_HINT_H */
