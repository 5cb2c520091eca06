/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tunables of the mroce transport. mroce_params_default() is the one place
 * defaults are set; docs/protocol.md "Defaults" lists the same values.
 * Ratios are fixed point with 10 fractional bits (Q10: 1024 = 1.0); times
 * are nanoseconds.
 */
#ifndef MROCE_PARAMS_H
#define MROCE_PARAMS_H

#include "mroce_env.h"

#define MROCE_Q10		1024u

struct mroce_params {
	/* Paths */
	u8 n_paths;		/* paths per connection offered in the handshake */
	u8 min_active;		/* floor of ACTIVE paths; 0 = max(2, n/4) */
	u8 dupthresh;		/* higher PSNs acked before a hole is loss */
	/*
	 * Most packets a connection keeps on a path it picked before it picks
	 * again (a run, docs/protocol.md §5.7), and no more than the caller
	 * sends as one unit (mroce_conn_set_burst(), 1 unless told); 0 or 1 =
	 * a pick per packet.
	 */
	u8 path_run;

	/* Timers */
	u32 min_rto;
	u32 max_rto;
	u32 init_rto;		/* before the first RTT sample */
	u32 min_pto;
	u32 ack_delay;		/* delayed-ACK timer */
	u32 oversleep;		/* a loss deadline this far past: probe first; 0 = off */
	u8 rto_probe;		/* probe before any RTO/silence expiry; 0 = off */
	u16 ack_every;		/* ACK at least every this many data packets */
	u8 silent_rtts;		/* srtts a path may stay silent; 0 = RTO only */
	u16 reo_wnd;		/* Q10 srtt share a packet may trail; 0 = off */
	u8 retry_limit;		/* connection RTO rounds without progress */

	/* Congestion control, bytes of payload */
	u32 init_cwnd;
	u32 min_cwnd;
	u32 max_cwnd;
	u32 init_pwnd;
	u32 min_pwnd;
	u32 max_pwnd;
	u8 ecn_gain_shift;	/* DCTCP g = 2^-shift */
	u16 ecn_loss_alpha;	/* Q10 alpha above which a loss is congestion */
	u16 heavy_loss;		/* Q10 loss fraction of a round that cuts cwnd */
	u16 hint_slack;		/* Q10 window allowance over hint x min RTT */
	u16 pace_gain;		/* Q10 pacing rate over cwnd / srtt */
	u32 pace_horizon;	/* how far ahead of its slot a packet may leave */
	u32 min_rate;		/* Mbit/s; lowest rate a hint can impose */
	u16 hint_srtt;		/* Q10 share of srtt the hinted window covers; 0 = off */
	u32 dcc_target;		/* queueing delay over min RTT that cuts cwnd; 0 = off */
	u16 dcc_beta;		/* Q10 cut per unit of relative excess delay */
	u16 dcc_max_mdf;	/* Q10 largest cut of one round */
	u32 dcc_floor;		/* bytes; the delay signal cuts cwnd no lower */

	/* Rate hints, as a receiver (docs/protocol.md §6.4) */
	u32 rx_mbps;		/* Mbit/s the hints share out; 0 = no hints */
	u32 hint_period;	/* shortest hint period while packets arrive */
	u8 hint_drain;		/* measured drain cap; 0 = off */

	/* Path health */
	u16 suspect_loss;	/* Q10 loss EWMA that makes a path SUSPECT */
	u16 rekey_score;	/* Q10 score above the path mean that re-keys */
	u16 rekey_rel;		/* Q10 ... and this multiple of the siblings' mean */
	u8 rekey_rounds;	/* ... for this many consecutive path rounds */
	u8 probe_fails;		/* unanswered re-keys before FAILED */
	u32 holdoff_min;	/* FAILED hold-off, doubling up to holdoff_max */
	u32 holdoff_max;

	/* Path selection weights, Q10 */
	u16 w_rtt;
	u16 w_ecn;
	u16 w_loss;

	/* Handshake */
	u32 hs_timeout;		/* first CONN_REQ retransmission, doubling */
	u8 hs_retries;
};

void mroce_params_default(struct mroce_params *p);
/* False if a value would break an invariant of the core. */
bool mroce_params_valid(const struct mroce_params *p);

#endif /* MROCE_PARAMS_H */
