// SPDX-License-Identifier: GPL-2.0
/*
 * Path receive state. Refusals (RNR, access errors) are never marked here:
 * the caller marks a path PSN only after the packet was accepted, so the
 * sender learns of a refusal by NAK or, if the NAK is lost, by the hole.
 */
#include "mroce_prx.h"
#include "mroce_bitmap.h"
#include "mroce_seq.h"

void mroce_prx_init(struct mroce_prx *r)
{
	memset(r, 0, sizeof(*r));
	/* Path PSNs start at 0 in every generation. */
	r->cum = U32_MAX;
}

/* Moves the cumulative point to @to, then over any run of received PSNs. */
static void advance(struct mroce_prx *r, u32 to)
{
	u32 n = to - r->cum;

	mroce_bm_shift(r->sack, MROCE_SACK_WORDS, n);
	r->cum = to;
	n = mroce_bm_leading_ones(r->sack, MROCE_SACK_WORDS);
	mroce_bm_shift(r->sack, MROCE_SACK_WORDS, n);
	r->cum += n;
}

inline enum mroce_prx_verdict mroce_prx_check(struct mroce_prx *r, u8 gen,
					      u32 psn, u8 floor_delta)
{
	u32 floor = psn - floor_delta;
	u32 d;

	if (gen != r->gen) {
		if (!mroce_gen_newer(gen, r->gen))
			return MROCE_PRX_STALE;
		mroce_prx_init(r);
		r->gen = gen;
	}
	/* Holes below the floor were given up by the sender: resolve them. */
	if (mroce_seq_gt(floor - 1, r->cum))
		advance(r, floor - 1);
	/*
	 * Now cum >= floor - 1 = psn - floor_delta - 1, so d <= 256: a packet
	 * always lands inside the window, which is why floor_delta has 8 bits.
	 */
	d = psn - r->cum;
	if ((s32)d <= 0)
		return MROCE_PRX_OLD;
	if (mroce_bm_test(r->sack, d - 1))
		return MROCE_PRX_DUP;
	return MROCE_PRX_NEW;
}

inline bool mroce_prx_accept(struct mroce_prx *r, u32 psn, u32 tx_ts,
			     bool ce, u64 now)
{
	u32 i = psn - r->cum - 1;
	bool ooo = i != 0 || !mroce_bm_empty(r->sack, MROCE_SACK_WORDS);

	/* In order with nothing above it: the window just moves by one. */
	if (!ooo) {
		r->cum++;
	} else {
		mroce_bm_set(r->sack, i);
		if (i == 0)
			advance(r, r->cum);
	}
	r->rx_cnt++;
	if (ce)
		r->ce_cnt++;
	r->echo_ts = tx_ts;
	r->last_rx = now;
	return ooo;
}

inline void mroce_prx_block(const struct mroce_prx *r, u8 path_id, u64 now,
			    struct mroce_ack_block *blk)
{
	u64 delay = now > r->last_rx ? now - r->last_rx : 0;

	blk->path_id = path_id;
	blk->path_gen = r->gen;
	blk->cum_psn = r->cum;
	memcpy(blk->sack, r->sack, sizeof(blk->sack));
	blk->echo_ts = r->echo_ts;
	blk->ack_delay = delay > U32_MAX ? U32_MAX : (u32)delay;
	blk->ce_cnt = r->ce_cnt;
	blk->rx_cnt = r->rx_cnt;
}
