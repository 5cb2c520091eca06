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
/* Highest set bit + 1, or 0 if the bitmap is empty. */
u32 mroce_bm_span(const u64 *bm, u32 nwords);
bool mroce_bm_empty(const u64 *bm, u32 nwords);

/*
 * Ring bitmaps: bit (x mod size) stands for sequence number x, size =
 * nwords * 64 a power of two. A window over them moves by clearing the bits
 * it leaves, with work proportional to the move, not to the bitmap (a
 * sliding bitmap shifts all of its words at every step).
 */
/* Consecutive set bits from bit @start on (wrapping), at most @limit. */
u32 mroce_bm_ring_ones(const u64 *bm, u32 nwords, u32 start, u32 limit);
/* Least k < @limit with bit (@start + k) set, or @limit if none. */
u32 mroce_bm_ring_next_set(const u64 *bm, u32 nwords, u32 start, u32 limit);
/* Clears @n bits from bit @start on (wrapping). */
void mroce_bm_ring_clear(u64 *bm, u32 nwords, u32 start, u32 n);

#endif /* MROCE_BITMAP_H */
