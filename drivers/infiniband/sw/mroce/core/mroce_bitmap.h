/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed-size sliding bitmaps (arrays of u64, bit i in word i / 64). The path
 * SACK window (256 bits) and both stream windows (1024 bits) are such
 * bitmaps whose bit 0 is the sequence number just after a cumulative point;
 * advancing the point shifts the bitmap down.
 */
#ifndef MROCE_BITMAP_H
#define MROCE_BITMAP_H

#include "mroce_env.h"

static inline bool mroce_bm_test(const u64 *bm, u32 i)
{
	return (bm[i / 64] >> (i % 64)) & 1;
}

static inline void mroce_bm_set(u64 *bm, u32 i)
{
	bm[i / 64] |= (u64)1 << (i % 64);
}

static inline void mroce_bm_clear(u64 *bm, u32 i)
{
	bm[i / 64] &= ~((u64)1 << (i % 64));
}

/* Drops the lowest @n bits: bit n becomes bit 0. Any @n is allowed. */
void mroce_bm_shift(u64 *bm, u32 nwords, u32 n);
/* Number of consecutive set bits starting at bit 0. */
u32 mroce_bm_leading_ones(const u64 *bm, u32 nwords);
/* Number of set bits at positions >= @from. */
u32 mroce_bm_count_from(const u64 *bm, u32 nwords, u32 from);
/* Lowest set bit in [from, limit), or @limit if none. */
u32 mroce_bm_next_set(const u64 *bm, u32 nwords, u32 from, u32 limit);
/* Inline, as the ring helpers below: once or twice per packet each. */
/* Highest set bit + 1, or 0 if the bitmap is empty. */
static inline u32 mroce_bm_span(const u64 *bm, u32 nwords)
{
	u32 i = nwords;

	while (i--) {
		if (bm[i])
			return i * 64 + mroce_fls64(bm[i]);
	}
	return 0;
}

static inline bool mroce_bm_empty(const u64 *bm, u32 nwords)
{
	u32 i;

	for (i = 0; i < nwords; i++) {
		if (bm[i])
			return false;
	}
	return true;
}

/*
 * Ring bitmaps: bit (x mod size) stands for sequence number x, size =
 * nwords * 64 a power of two. A window over them moves by clearing the bits
 * it leaves, with work proportional to the move, not to the bitmap (a
 * sliding bitmap shifts all of its words at every step).
 */
/*
 * Inline: every stream packet calls them (with a constant @nwords, which
 * the compiler then folds), mostly for a few bits inside one word.
 */
/* Consecutive set bits from bit @start on (wrapping), at most @limit. */
static inline u32 mroce_bm_ring_ones(const u64 *bm, u32 nwords, u32 start,
				     u32 limit)
{
	u32 mask = nwords * 64 - 1, n = 0;

	while (n < limit) {
		u32 pos = (start + n) & mask, bit = pos % 64;
		u64 holes = ~bm[pos / 64] >> bit;

		if (holes) {
			n += mroce_ctz64(holes);
			break;
		}
		n += 64 - bit;
	}
	return n < limit ? n : limit;
}

/*
 * Least k < @limit with bit (@start + k) set in @a or @b (NULL: @a alone),
 * or @limit if none.
 */
static inline u32 mroce_bm_ring_next_set2(const u64 *a, const u64 *b,
					  u32 nwords, u32 start, u32 limit)
{
	u32 mask = nwords * 64 - 1, k = 0;

	while (k < limit) {
		u32 pos = (start + k) & mask, bit = pos % 64;
		u64 w = (a[pos / 64] | (b ? b[pos / 64] : 0)) >> bit;

		if (w) {
			k += mroce_ctz64(w);
			break;
		}
		k += 64 - bit;
	}
	return k < limit ? k : limit;
}

/* Least k < @limit with bit (@start + k) set, or @limit if none. */
static inline u32 mroce_bm_ring_next_set(const u64 *bm, u32 nwords, u32 start,
					 u32 limit)
{
	return mroce_bm_ring_next_set2(bm, NULL, nwords, start, limit);
}

/* Clears @n bits from bit @start on (wrapping). */
static inline void mroce_bm_ring_clear(u64 *bm, u32 nwords, u32 start, u32 n)
{
	u32 mask = nwords * 64 - 1;

	if (n > mask) {
		memset(bm, 0, nwords * sizeof(*bm));
		return;
	}
	while (n) {
		u32 pos = start & mask, bit = pos % 64, take = 64 - bit;
		u64 m;

		if (take > n)
			take = n;
		m = take == 64 ? U64_MAX : ((u64)1 << take) - 1;
		bm[pos / 64] &= ~(m << bit);
		start += take;
		n -= take;
	}
}

#endif /* MROCE_BITMAP_H */
