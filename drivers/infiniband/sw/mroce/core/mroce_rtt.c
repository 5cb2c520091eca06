// SPDX-License-Identifier: GPL-2.0
/*
 * RTT estimation. Every transmission has its own path PSN, so every sample
 * is unambiguous (no Karn's rule needed); the sample is the echo of the
 * newest arrival minus the receiver's reported ACK delay.
 */
#include "mroce_rtt.h"

void mroce_rtt_init(struct mroce_rtt *r)
{
	memset(r, 0, sizeof(*r));
}

void mroce_rtt_sample(struct mroce_rtt *r, u32 sample)
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

u32 mroce_rtt_rto(const struct mroce_rtt *r, const struct mroce_params *p,
		  u8 backoff)
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

u32 mroce_rtt_pto(const struct mroce_rtt *r, const struct mroce_params *p)
{
	u64 pto;

	if (!r->srtt)
		return MROCE_READ_ONCE(p->init_rto) / 2;
	pto = 2 * (u64)r->srtt + p->ack_delay;
	if (pto < p->min_pto)
		pto = p->min_pto;
	return pto > p->max_rto ? p->max_rto : (u32)pto;
}
