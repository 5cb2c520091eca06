/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Path selection: power of two choices among eligible paths by load and
 * score; a retransmission prefers its original path while that is healthy;
 * with runs (path_run) a picked path keeps the next few packets.
 * See docs/protocol.md §5.7.
 */
#ifndef MROCE_PICK_H
#define MROCE_PICK_H

#include "mroce_conn.h"

/* Next value of the connection's xorshift64* generator (every send). */
static inline u64 mroce_prng(u64 *state)
{
	u64 x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Q10 score of a path (RTT inflation, ECN fraction, loss EWMA). */
u32 mroce_path_score(const struct mroce_conn *c, const struct mroce_path *p);
/*
 * The score without its loss term: what tells a congestion hot spot
 * (re-keying helps) from random loss (re-keying does not; the loss rule
 * judges loss against the siblings on its own).
 */
u32 mroce_path_hot(const struct mroce_conn *c, const struct mroce_path *p);
/* mroce_path_score() for a caller that has mroce_path_hot() already. */
static inline u32 mroce_path_score_hot(const struct mroce_conn *c,
				       const struct mroce_path *p, u32 hot)
{
	u64 s = hot + (u64)p->health.loss_ewma * c->prm->w_loss / MROCE_Q10;

	return s > U32_MAX ? U32_MAX : (u32)s;
}

/* Whether @p may take @len more bytes now. */
bool mroce_path_eligible(const struct mroce_conn *c,
			 const struct mroce_path *p, u32 len);
/*
 * Path index for a @len-byte packet, or -1; @pref is -1 or the original.
 * Without @pref the packet joins the connection's run (path_run) while
 * that path may take it, else a new pick starts a run.
 */
int mroce_pick_path(struct mroce_conn *c, u32 len, int pref);
/* The same for a caller that has the connection's mroce_cc_window(). */
int mroce_pick_path_w(struct mroce_conn *c, u32 len, int pref, u32 cwnd);

#endif /* MROCE_PICK_H */
