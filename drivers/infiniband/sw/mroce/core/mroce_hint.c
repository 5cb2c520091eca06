// SPDX-License-Identifier: GPL-2.0
/*
 * Rate hint computation. The water level is found by bisection over at most
 * 32 steps rather than by sorting demands, so the work per period is
 * O(32 n) with no scratch memory.
 */
#include "mroce_hint.h"
#include "mroce_params.h"

#define US 1000u

void mroce_hint_cfg_default(struct mroce_hint_cfg *cfg, u32 capacity)
{
	cfg->capacity = capacity;
	cfg->util = MROCE_Q10 * 95 / 100;
	cfg->k_drain = MROCE_Q10;
	cfg->rtt_min = 50 * US;
	cfg->q_target = cfg->rtt_min / 2;
}

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

u32 mroce_hint_compute(const struct mroce_hint_cfg *cfg,
		       struct mroce_hint_entry *e, u32 n)
{
	u64 c = usable(cfg);
	u64 lo, hi;
	u32 i, qd = U32_MAX;

	/*
	 * A queue at our port delays every packet of every connection, so the
	 * least delay any of them saw is the standing queue. Queueing that only
	 * some packets meet (the bursts of synchronised senders) is not, and an
	 * average per connection would trail a drained queue by as many
	 * periods as that connection's packets are apart (many, in an incast).
	 */
	for (i = 0; i < n; i++) {
		if (e[i].demand && e[i].qdelay < qd)
			qd = e[i].qdelay;
	}
	if (qd == U32_MAX)
		qd = 0;
	if (qd > cfg->q_target) {
		/* C_eff = C * max(0.5, 1 - k (qd - qt) / (qd + rtt_min)) */
		u64 cut = mroce_div64_u64((u64)cfg->k_drain * (qd - cfg->q_target),
					  (u64)qd + cfg->rtt_min);

		c = cut >= MROCE_Q10 / 2 ? c / 2 :
			c * (MROCE_Q10 - cut) / MROCE_Q10;
	}
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

u32 mroce_hint_demand(u64 bytes, u64 period_ns, u32 backlog_bytes, u32 rtt,
		      u32 line)
{
	u64 d = 0;

	/* bytes * 8 / ns = Gbit/s; * 1000 = Mbit/s */
	if (period_ns)
		d += mroce_div64_u64(bytes * 8000, period_ns);
	if (rtt)
		d += mroce_div_u64((u64)backlog_bytes * 8000, rtt);
	return d > line ? line : (u32)d;
}
