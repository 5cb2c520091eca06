/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RTT estimator and the retransmission (RTO) and tail-loss probe (PTO)
 * timeouts derived from it, RFC 6298 style. See docs/protocol.md §5.5.
 */
#ifndef MROCE_RTT_H
#define MROCE_RTT_H

#include "mroce_params.h"

struct mroce_rtt {
	u32 srtt;		/* ns; 0 until the first sample */
	u32 rttvar;
	u32 min_rtt;
	u32 latest;
};

void mroce_rtt_init(struct mroce_rtt *r);
/* Inline, as the timers below: every ACK samples twice (path, connection). */
static inline void mroce_rtt_sample(struct mroce_rtt *r, u32 sample)
{
	u32 err;

	if (!sample)
		sample = 1;
	r->latest = sample;
	if (!r->srtt) {
		r->srtt = sample;
		r->rttvar = sample / 2;
		r->min_rtt = sample;
		return;
	}
	if (sample < r->min_rtt)
		r->min_rtt = sample;
	err = sample > r->srtt ? sample - r->srtt : r->srtt - sample;
	/* rttvar = 3/4 rttvar + 1/4 |err|; srtt = 7/8 srtt + 1/8 sample */
	r->rttvar = (u32)(((u64)r->rttvar * 3 + err) / 4);
	r->srtt = (u32)(((u64)r->srtt * 7 + sample) / 8);
	if (!r->srtt)
		r->srtt = 1;
}

/* RTO after @backoff consecutive expirations, within [min_rto, max_rto]. */
static inline u32 mroce_rtt_rto(const struct mroce_rtt *r,
				const struct mroce_params *p, u8 backoff)
{
	u32 min_rto = MROCE_READ_ONCE(p->min_rto);
	u64 rto;

	if (r->srtt)
		rto = (u64)r->srtt + 4 * (u64)r->rttvar;
	else
		rto = MROCE_READ_ONCE(p->init_rto);
	if (rto < min_rto)
		rto = min_rto;
	if (backoff > 31)
		backoff = 31;
	rto <<= backoff;
	return rto > p->max_rto ? p->max_rto : (u32)rto;
}

static inline u32 mroce_rtt_pto(const struct mroce_rtt *r,
				const struct mroce_params *p)
{
	u64 pto;

	if (!r->srtt)
		return MROCE_READ_ONCE(p->init_rto) / 2;
	pto = 2 * (u64)r->srtt + p->ack_delay;
	if (pto < p->min_pto)
		pto = p->min_pto;
	return pto > p->max_rto ? p->max_rto : (u32)pto;
}

#endif /* MROCE_RTT_H */
