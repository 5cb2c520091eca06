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
void mroce_rtt_sample(struct mroce_rtt *r, u32 sample);
/* RTO after @backoff consecutive expirations, within [min_rto, max_rto]. */
u32 mroce_rtt_rto(const struct mroce_rtt *r, const struct mroce_params *p,
		  u8 backoff);
u32 mroce_rtt_pto(const struct mroce_rtt *r, const struct mroce_params *p);

#endif /* MROCE_RTT_H */
