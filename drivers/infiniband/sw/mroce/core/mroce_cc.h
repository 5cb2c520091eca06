/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Congestion control: ECN-driven AIMD (DCTCP-style EWMA of the marked
 * fraction, once per round) for each path window and for the connection
 * window, capped by the receiver's rate hint. Random loss without ECN is not
 * a congestion signal. See docs/protocol.md §6.
 */
#ifndef MROCE_CC_H
#define MROCE_CC_H

#include "mroce_params.h"

struct mroce_cc_path {
	u32 pwnd;		/* bytes */
	u32 ssthresh;
	u32 round_end;		/* path PSN whose acknowledgement ends the round */
	u32 r_rx;		/* packets received in this round (receiver count) */
	u32 r_ce;		/* ... of which CE-marked */
	u16 alpha;		/* Q10 EWMA of the marked fraction */
	bool cut;		/* window already reduced in this round */
};

struct mroce_cc_conn {
	u32 cwnd;
	u32 ssthresh;
	u32 hint;		/* peer's rate hint, Mbit/s, 0 = none */
	u64 round_end;		/* time that ends the round */
	u32 r_acked;		/* packets acknowledged in this round */
	u32 r_ce;
	u32 r_lost;
	u32 r_min_rtt;		/* smallest RTT sample of this round, 0 = none */
	u32 r_max_rtt;		/* ... largest */
	u32 r_samples;
	u16 alpha;
	bool cut;
	u32 dcc_cuts;		/* rounds the delay signal cut the window */
	u64 r_start;		/* time the round started */
	u64 r_bytes;		/* bytes acknowledged in this round */
	/* For the srtt term only: both 0 while hint_srtt is off. */
	u32 dlv;		/* Mbit/s delivered, recent rounds (decaying max) */
	u32 sq;			/* ns, last round's least RTT over min RTT */
};

void mroce_cc_path_init(struct mroce_cc_path *cc, const struct mroce_params *p,
			u32 next_psn);
/*
 * One ACK block: @acked_bytes newly acknowledged, @rx_pkts/@ce_pkts the
 * receiver's counter deltas, @high the highest path PSN the block covers.
 * Returns true if a round ended.
 */
bool mroce_cc_path_on_ack(struct mroce_cc_path *cc,
			  const struct mroce_params *p, u32 mss,
			  u32 acked_bytes, u32 rx_pkts, u32 ce_pkts, u32 high,
			  u32 next_psn);
/* A loss on the path; returns true if it was taken as congestion. */
bool mroce_cc_path_on_loss(struct mroce_cc_path *cc,
			   const struct mroce_params *p);

void mroce_cc_conn_init(struct mroce_cc_conn *cc, const struct mroce_params *p,
			u32 init_rate);
/*
 * Once per ACK; @srtt sets the round length, @min_rtt is the base the
 * round's smallest RTT sample is measured against (dcc_target).
 */
bool mroce_cc_conn_on_ack(struct mroce_cc_conn *cc,
			  const struct mroce_params *p, u32 mss,
			  u32 acked_bytes, u32 acked_pkts, u32 ce_pkts,
			  u64 now, u32 srtt, u32 min_rtt);
/* An RTT sample of the connection (any path), for the delay signal. */
static inline void mroce_cc_conn_rtt(struct mroce_cc_conn *cc, u32 sample)
{
	if (!sample)
		return;
	if (!cc->r_min_rtt || sample < cc->r_min_rtt)
		cc->r_min_rtt = sample;
	if (sample > cc->r_max_rtt)
		cc->r_max_rtt = sample;
	cc->r_samples++;
}

/* @congestion: the losing path saw ECN (mroce_cc_path_on_loss()). */
void mroce_cc_conn_on_loss(struct mroce_cc_conn *cc,
			   const struct mroce_params *p, u32 lost_pkts,
			   bool congestion);
static inline void mroce_cc_conn_set_hint(struct mroce_cc_conn *cc, u32 hint)
{
	cc->hint = hint;
}

/*
 * Usable window: min(cwnd, max(hint x (min RTT x slack + ack_delay),
 * min(hint, 1.25 x delivered) x (srtt - standing queue) x hint_srtt)).
 */
u32 mroce_cc_window(const struct mroce_cc_conn *cc,
		    const struct mroce_params *p, u32 min_rtt, u32 srtt);
/*
 * Pacing rate in Mbit/s, 0 = unpaced (no RTT known yet): the hint, or less
 * if the congestion window over srtt is less.
 */
u32 mroce_cc_pace_rate(const struct mroce_cc_conn *cc,
		       const struct mroce_params *p, u32 srtt);
/* Bytes a rate in Mbit/s moves in @ns nanoseconds (saturating). */
u32 mroce_rate_bytes(u32 mbps, u64 ns);
/* Nanoseconds @bytes take at @mbps (0 if unpaced). */
static inline u64 mroce_rate_ns(u32 mbps, u32 bytes)
{
	return mbps ? mroce_div_u64((u64)bytes * 8000, mbps) : 0;
}

#endif /* MROCE_CC_H */
