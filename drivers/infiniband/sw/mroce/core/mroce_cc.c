// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion control. The path window keeps one hot ECMP route from being
 * overloaded while others are idle; the connection window is the one
 * controller all QPs to the peer share. Both react to ECN once per round
 * (DCTCP: cut by alpha / 2) and grow by one MSS per round otherwise. A loss
 * counts as congestion only when ECN shows the path is congested; random
 * corruption and black holes are the path machinery's business.
 */
#include "mroce_cc.h"
#include "mroce_seq.h"

static u16 ewma_alpha(u16 alpha, u32 marked, u32 total, u8 shift)
{
	u32 f, a = alpha;

	if (!total)
		return alpha;
	if (marked > total)
		marked = total;
	/* No mark (nearly every round): f is 0 without the division. */
	f = marked ? (u32)mroce_div_u64((u64)marked * MROCE_Q10, total) : 0;
	if (f > a)
		a += (f - a + (1u << shift) - 1) >> shift;
	else
		a -= (a - f) >> shift;
	return (u16)(a > MROCE_Q10 ? MROCE_Q10 : a);
}

static u32 clamp_u32(u64 v, u32 lo, u32 hi)
{
	return v < lo ? lo : v > hi ? hi : (u32)v;
}

/* Per ACK: CE ends slow start; in slow start the window grows by the acked bytes. */
static void ack_step(u32 *w, u32 *ssthresh, u32 acked_bytes, u32 ce_pkts,
		     u32 lo, u32 hi)
{
	if (ce_pkts)
		*ssthresh = *w;
	else if (*w < *ssthresh)
		*w = clamp_u32((u64)*w + acked_bytes, lo, hi);
}

/* End of a round: cut by alpha / 2 if anything was marked, else + 1 MSS. */
static void round_step(u32 *w, u32 *ssthresh, bool cut, u16 alpha,
		       u32 marked, u32 mss, u32 lo, u32 hi)
{
	if (marked) {
		if (!cut)
			*w = clamp_u32(*w - ((u64)*w * alpha >> 11), lo, hi);
		*ssthresh = *w;
	} else if (*w >= *ssthresh) {
		*w = clamp_u32((u64)*w + mss, lo, hi);
	}
}

/* Multiplicative decrease to num/den of the window, once per round. */
static void cut_once(u32 *w, u32 *ssthresh, bool *cut, u32 num, u32 den,
		     u32 lo, u32 hi)
{
	if (*cut)
		return;
	*w = clamp_u32(mroce_div_u64((u64)*w * num, den), lo, hi);
	*ssthresh = *w;
	*cut = true;
}

void mroce_cc_path_init(struct mroce_cc_path *cc, const struct mroce_params *p,
			u32 next_psn)
{
	memset(cc, 0, sizeof(*cc));
	cc->pwnd = p->init_pwnd;
	cc->ssthresh = p->max_pwnd;
	cc->round_end = next_psn;
}

bool mroce_cc_path_on_ack(struct mroce_cc_path *cc,
			  const struct mroce_params *p, u32 mss,
			  u32 acked_bytes, u32 rx_pkts, u32 ce_pkts, u32 high,
			  u32 next_psn)
{
	cc->r_rx += rx_pkts;
	cc->r_ce += ce_pkts;
	ack_step(&cc->pwnd, &cc->ssthresh, acked_bytes, ce_pkts, p->min_pwnd,
		 p->max_pwnd);
	if (mroce_seq_lt(high, cc->round_end))
		return false;

	cc->alpha = ewma_alpha(cc->alpha, cc->r_ce, cc->r_rx,
			       p->ecn_gain_shift);
	round_step(&cc->pwnd, &cc->ssthresh, cc->cut, cc->alpha, cc->r_ce, mss,
		   p->min_pwnd, p->max_pwnd);
	cc->r_rx = 0;
	cc->r_ce = 0;
	cc->cut = false;
	cc->round_end = next_psn;
	return true;
}

bool mroce_cc_path_on_loss(struct mroce_cc_path *cc,
			   const struct mroce_params *p)
{
	if (cc->alpha <= p->ecn_loss_alpha && !cc->r_ce)
		return false;
	cut_once(&cc->pwnd, &cc->ssthresh, &cc->cut, 1, 2, p->min_pwnd,
		 p->max_pwnd);
	return true;
}

void mroce_cc_conn_init(struct mroce_cc_conn *cc, const struct mroce_params *p,
			u32 init_rate)
{
	memset(cc, 0, sizeof(*cc));
	cc->cwnd = p->init_cwnd;
	cc->ssthresh = p->max_cwnd;
	cc->hint = init_rate;
}

/*
 * Swift-like decrease on queueing delay: the round's smallest RTT sample
 * over the connection's min RTT. The smallest, not srtt: a standing queue
 * delays every packet of the round, while a receiver that was descheduled
 * (a VM) or an ACK held back delays some, and one prompt sample clears the
 * round. A standing queue is also steady: the excess must exceed twice the
 * round's own spread (largest - smallest sample, of at least two), or it
 * is jitter, which a window cut does not shorten and which otherwise holds
 * the window at the floor. The cut grows with the excess (beta x excess /
 * delay, at most max_mdf) and stops at dcc_floor.
 */
static bool delay_step(struct mroce_cc_conn *cc, const struct mroce_params *p,
		       u32 min_rtt)
{
	u32 d = cc->r_min_rtt, floor, w;
	u32 target = MROCE_READ_ONCE(p->dcc_target);
	u32 dfloor = MROCE_READ_ONCE(p->dcc_floor);
	u64 f;

	floor = dfloor > p->min_cwnd ? dfloor : p->min_cwnd;
	/* At or below the floor the other signals alone move the window. */
	if (!target || cc->r_samples < 2 || !min_rtt ||
	    d <= min_rtt || d - min_rtt <= target ||
	    d - min_rtt <= 2 * (u64)(cc->r_max_rtt - d) || cc->cwnd <= floor)
		return false;
	f = mroce_div_u64((u64)(d - min_rtt - target) * p->dcc_beta, d);
	if (f > p->dcc_max_mdf)
		f = p->dcc_max_mdf;
	w = cc->cwnd - (u32)((u64)cc->cwnd * f / MROCE_Q10);
	cc->cwnd = w < floor ? floor : w;
	cc->ssthresh = cc->cwnd;
	cc->dcc_cuts++;
	return true;
}

/*
 * What the round says for the hinted window's srtt term (mroce_cc_window()):
 * the rate the receiver took, and the queue that stood all round. A round
 * whose ACKs came late (a receiver that was descheduled) measures less
 * than it drained and the next one more: the rate is a maximum that decays
 * by a quarter per round, not the last round's. The standing queue is the
 * round's smallest RTT sample over the base (delay_step()); a round with
 * fewer than two samples says nothing about it and keeps the last value.
 */
static void round_rates(struct mroce_cc_conn *cc, u64 now, u32 min_rtt)
{
	u64 rate = 0, span = now - cc->r_start;

	if (cc->r_start && span)
		rate = mroce_div64_u64(cc->r_bytes * 8000, span);
	if (rate > U32_MAX)
		rate = U32_MAX;
	if (rate < cc->dlv - cc->dlv / 4)
		rate = cc->dlv - cc->dlv / 4;
	cc->dlv = (u32)rate;
	if (cc->r_samples >= 2 && min_rtt)
		cc->sq = cc->r_min_rtt > min_rtt ? cc->r_min_rtt - min_rtt : 0;
}

bool mroce_cc_conn_on_ack(struct mroce_cc_conn *cc,
			  const struct mroce_params *p, u32 mss,
			  u32 acked_bytes, u32 acked_pkts, u32 ce_pkts,
			  u64 now, u32 srtt, u32 min_rtt)
{
	u32 period = srtt ? srtt : MROCE_READ_ONCE(p->init_rto);
	u32 seen;

	cc->r_acked += acked_pkts;
	cc->r_ce += ce_pkts;
	cc->r_bytes += acked_bytes;
	ack_step(&cc->cwnd, &cc->ssthresh, acked_bytes, ce_pkts, p->min_cwnd,
		 p->max_cwnd);
	if (!cc->round_end) {
		cc->round_end = now + period;
		cc->r_start = now;
	}
	if (now < cc->round_end)
		return false;

	/*
	 * Only the srtt term reads them: with it off, a division per round
	 * on the ACK path buys nothing, and a rate kept from before it was
	 * turned off would size its first window once it is on again.
	 */
	if (MROCE_READ_ONCE(p->hint_srtt)) {
		round_rates(cc, now, min_rtt);
	} else {
		cc->dlv = 0;
		cc->sq = 0;
	}
	seen = cc->r_acked + cc->r_lost;
	cc->alpha = ewma_alpha(cc->alpha, cc->r_ce, cc->r_acked,
			       p->ecn_gain_shift);
	if (!cc->r_ce && cc->r_lost >= 2 &&
	    (u64)cc->r_lost * MROCE_Q10 >= (u64)seen * p->heavy_loss) {
		/*
		 * A large share lost without any ECN: a fabric that does not
		 * mark. Back off so the connection cannot collapse it.
		 */
		cut_once(&cc->cwnd, &cc->ssthresh, &cc->cut, 7, 10,
			 p->min_cwnd, p->max_cwnd);
	} else if (cc->r_ce || cc->cut || !delay_step(cc, p, min_rtt)) {
		round_step(&cc->cwnd, &cc->ssthresh, cc->cut, cc->alpha,
			   cc->r_ce, mss, p->min_cwnd, p->max_cwnd);
	}
	cc->r_acked = 0;
	cc->r_ce = 0;
	cc->r_lost = 0;
	cc->r_min_rtt = 0;
	cc->r_max_rtt = 0;
	cc->r_samples = 0;
	cc->cut = false;
	cc->round_end = now + period;
	cc->r_start = now;
	cc->r_bytes = 0;
	return true;
}

void mroce_cc_conn_on_loss(struct mroce_cc_conn *cc,
			   const struct mroce_params *p, u32 lost_pkts,
			   bool congestion)
{
	cc->r_lost += lost_pkts;
	/* Correlated with ECN: real overload (incast overflow), not noise. */
	if (congestion || cc->r_ce)
		cut_once(&cc->cwnd, &cc->ssthresh, &cc->cut, 7, 10,
			 p->min_cwnd, p->max_cwnd);
}

u32 mroce_rate_bytes(u32 mbps, u64 ns)
{
	/* Mbit/s * ns / 8000 = bytes; split to avoid overflow. */
	u64 b = mroce_div_u64((u64)mbps * (ns / 1000), 8) +
		mroce_div_u64((u64)mbps * (ns % 1000), 8000);

	return b > U32_MAX ? U32_MAX : (u32)b;
}

inline u32 mroce_cc_window(const struct mroce_cc_conn *cc,
			  const struct mroce_params *p, u32 min_rtt, u32 srtt)
{
	u32 hint = cc->hint, w, s;
	u64 t;

	if (!hint || !min_rtt)
		return cc->cwnd;
	if (hint < p->min_rate)
		hint = p->min_rate;
	/*
	 * The receiver may hold its ACK for up to ack_delay (min RTT excludes
	 * that hold), and what it holds is still in flight: without it the
	 * window stalls between ACKs well below the hinted rate.
	 */
	t = (u64)min_rtt * p->hint_slack / MROCE_Q10 + p->ack_delay;
	w = mroce_rate_bytes(hint, t);
	/*
	 * A software receiver also holds its ACKs while its CPU is busy or
	 * descheduled (a VM: min RTT 0.1 ms, srtt 1-50 ms). That is no queue
	 * at its port, and a window of hint x min RTT cuts the sender to a
	 * fraction of what the receiver drains. The srtt term covers those
	 * holds, but not at the hint: a hint from a configured capacity can
	 * be ten times what a VM drains, and a window of hint x srtt then
	 * fills a queue that inflates srtt, which widens the window again
	 * (session 9: Write at 1 % loss 176-325 against 268-442 Mb/s, with
	 * RTOs and duplicate resends). So it covers what the receiver took
	 * in the last rounds plus a quarter, to find more if there is more,
	 * and srtt less the queue that stood a whole round: a queue the
	 * window filled widens it no further, and the quarter bounds the
	 * queue to about a quarter of the round trip.
	 */
	s = MROCE_READ_ONCE(p->hint_srtt);
	if (s && srtt && cc->dlv) {
		u64 rate = (u64)cc->dlv + cc->dlv / 4;
		u32 ws;

		if (rate > hint)
			rate = hint;
		t = srtt > cc->sq ? srtt - cc->sq : 0;
		ws = mroce_rate_bytes((u32)rate, t * s / MROCE_Q10);
		if (ws > w)
			w = ws;
	}
	if (w < p->min_cwnd)
		w = p->min_cwnd;
	return w < cc->cwnd ? w : cc->cwnd;
}

inline u32 mroce_cc_pace_rate(const struct mroce_cc_conn *cc,
			      const struct mroce_params *p, u32 srtt)
{
	u64 rate;
	u32 hint = cc->hint;

	if (!srtt)
		return hint ? (hint < p->min_rate ? p->min_rate : hint) : 0;
	/*
	 * From cwnd, not from the hinted window: that one is hint x min RTT
	 * already, and dividing it by an srtt that a queue inflated (and
	 * that decays over many ACKs once the queue is gone) would pace far
	 * below the hint long after the receiver asked for it. What is in
	 * flight stays bounded by the hinted window.
	 */
	rate = mroce_div_u64((u64)cc->cwnd * 8000 * p->pace_gain / MROCE_Q10,
			     srtt);
	if (hint) {
		if (hint < p->min_rate)
			hint = p->min_rate;
		if (rate > hint)
			rate = hint;
	}
	if (rate < p->min_rate)
		rate = p->min_rate;
	return rate > U32_MAX ? U32_MAX : (u32)rate;
}
