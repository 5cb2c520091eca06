// SPDX-License-Identifier: GPL-2.0
/*
 * Path transmit state. Because every transmission takes a fresh path PSN and
 * a path is FIFO, the receiver acknowledging a higher PSN proves that an
 * outstanding lower one was lost; there is no reordering allowance beyond
 * dupthresh and no retransmission ambiguity.
 */
#include "mroce_ptx.h"
#include "mroce_bitmap.h"
#include "mroce_seq.h"

static struct mroce_ptx_rec *rec_of(struct mroce_ptx *t, u32 psn)
{
	return &t->ring[psn % MROCE_PTX_RING];
}

void mroce_ptx_init(struct mroce_ptx *t)
{
	memset(t, 0, sizeof(*t));
}

inline u32 mroce_ptx_send(struct mroce_ptx *t, u32 len, u64 cookie, u64 now)
{
	u32 psn = t->next++;
	struct mroce_ptx_rec *r = rec_of(t, psn);

	r->cookie = cookie;
	r->tx_time = now;
	r->len = len;
	r->state = MROCE_REC_OUT;
	t->inflight += len;
	t->n_out++;
	t->last_tx = now;
	t->sent_floor = t->floor;
	return psn;
}

static void leave_out(struct mroce_ptx *t, struct mroce_ptx_rec *r, u8 state)
{
	r->state = state;
	t->inflight -= r->len;
	t->n_out--;
}

static void advance_floor(struct mroce_ptx *t)
{
	while (t->floor != t->next &&
	       rec_of(t, t->floor)->state != MROCE_REC_OUT)
		t->floor++;
}

static bool block_acks(const struct mroce_ack_block *blk, u32 psn)
{
	u32 d = psn - blk->cum_psn - 1;

	if (mroce_seq_le(psn, blk->cum_psn))
		return true;
	return d < MROCE_SACK_BITS && mroce_bm_test(blk->sack, d);
}

void mroce_ptx_on_block(struct mroce_ptx *t, const struct mroce_ack_block *blk,
			u8 dupthresh, mroce_ptx_fn acked, mroce_ptx_fn lost,
			void *ctx, struct mroce_ptx_ack *res)
{
	u32 span = t->next - t->floor;
	u32 above = 0, i;

	memset(res, 0, sizeof(*res));
	/* A receiver cannot have seen PSNs at or beyond next. */
	if (mroce_seq_ge(blk->cum_psn, t->next)) {
		res->bogus = true;
		return;
	}
	/*
	 * Walk from the newest PSN down: a record is acked if the block covers
	 * it and lost if it is still outstanding with >= dupthresh acked PSNs
	 * above it.
	 */
	for (i = span; i-- > 0;) {
		u32 psn = t->floor + i;
		struct mroce_ptx_rec *r = rec_of(t, psn);

		if (block_acks(blk, psn)) {
			above++;
			if (r->state != MROCE_REC_OUT)
				continue;
			leave_out(t, r, MROCE_REC_ACKED);
			res->acked_pkts++;
			res->acked_bytes += r->len;
			if (r->cookie == MROCE_COOKIE_PROBE)
				res->probe_acked = true;
			acked(ctx, r, psn);
		} else if (r->state == MROCE_REC_OUT && above >= dupthresh) {
			leave_out(t, r, MROCE_REC_LOST);
			res->lost_pkts++;
			res->lost_bytes += r->len;
			lost(ctx, r, psn);
		}
	}
	advance_floor(t);
}

u32 mroce_ptx_on_late_block(struct mroce_ptx *t,
			    const struct mroce_ack_block *blk,
			    mroce_ptx_fn acked, void *ctx)
{
	u32 n = 0, i;

	if (mroce_seq_ge(blk->cum_psn, t->next))
		return 0;
	/*
	 * The receiver moves its cumulative point over holes below the floor
	 * it was told (given up, docs §5.2), so the point proves arrival only
	 * from the newest floor sent on; SACK bits always do.
	 */
	/*
	 * Every PSN of the last ring's worth has its own slot; older ones were
	 * overwritten, and PSNs "below 0" of a young generation are FREE.
	 */
	for (i = 0; i < MROCE_PTX_RING; i++) {
		u32 psn = t->next - MROCE_PTX_RING + i;
		struct mroce_ptx_rec *r = rec_of(t, psn);

		if (r->state != MROCE_REC_LOST || !block_acks(blk, psn) ||
		    (mroce_seq_le(psn, blk->cum_psn) &&
		     mroce_seq_lt(psn, t->sent_floor)))
			continue;
		r->state = MROCE_REC_ACKED;
		n++;
		acked(ctx, r, psn);
	}
	return n;
}

bool mroce_ptx_on_nak(struct mroce_ptx *t, u32 psn, struct mroce_ptx_rec *rec)
{
	struct mroce_ptx_rec *r;

	if (psn - t->floor >= t->next - t->floor)
		return false;
	r = rec_of(t, psn);
	if (r->state != MROCE_REC_OUT)
		return false;
	leave_out(t, r, MROCE_REC_NAKED);
	*rec = *r;
	advance_floor(t);
	return true;
}

u32 mroce_ptx_lose_all(struct mroce_ptx *t, mroce_ptx_fn lost, void *ctx)
{
	u32 n = 0, psn;

	for (psn = t->floor; psn != t->next; psn++) {
		struct mroce_ptx_rec *r = rec_of(t, psn);

		if (r->state != MROCE_REC_OUT)
			continue;
		leave_out(t, r, MROCE_REC_LOST);
		lost(ctx, r, psn);
		n++;
	}
	t->floor = t->next;
	return n;
}

u32 mroce_ptx_lose_older(struct mroce_ptx *t, u64 before, mroce_ptx_fn lost,
			 void *ctx)
{
	u32 n = 0, psn;

	/* PSNs are assigned in transmission order: stop at the first too young. */
	for (psn = t->floor; psn != t->next; psn++) {
		struct mroce_ptx_rec *r = rec_of(t, psn);

		if (r->tx_time >= before)
			break;
		if (r->state != MROCE_REC_OUT)
			continue;
		leave_out(t, r, MROCE_REC_LOST);
		lost(ctx, r, psn);
		n++;
	}
	advance_floor(t);
	return n;
}
