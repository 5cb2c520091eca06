// SPDX-License-Identifier: GPL-2.0
/*
 * Sliding bitmap helpers. All loops run over at most the bitmap's words, so
 * the cost per call is bounded by the window size (16 words at most).
 */
#include "mroce_bitmap.h"

void mroce_bm_shift(u64 *bm, u32 nwords, u32 n)
{
	u32 words = n / 64, bits = n % 64, i;

	if (!n)
		return;
	if (n >= nwords * 64) {
		memset(bm, 0, nwords * sizeof(*bm));
		return;
	}
	for (i = 0; i + words < nwords; i++) {
		u64 lo = bm[i + words] >> bits;
		u64 hi = 0;

		if (bits && i + words + 1 < nwords)
			hi = bm[i + words + 1] << (64 - bits);
		bm[i] = lo | hi;
	}
	for (; i < nwords; i++)
		bm[i] = 0;
}

u32 mroce_bm_leading_ones(const u64 *bm, u32 nwords)
{
	u32 i;

	for (i = 0; i < nwords; i++) {
		if (bm[i] != U64_MAX)
			return i * 64 + mroce_ctz64(~bm[i]);
	}
	return nwords * 64;
}

u32 mroce_bm_count_from(const u64 *bm, u32 nwords, u32 from)
{
	u32 i = from / 64, n = 0;

	if (from >= nwords * 64)
		return 0;
	n = mroce_popcount64(bm[i] >> (from % 64));
	for (i++; i < nwords; i++)
		n += mroce_popcount64(bm[i]);
	return n;
}

u32 mroce_bm_next_set(const u64 *bm, u32 nwords, u32 from, u32 limit)
{
	u32 i;
	u64 w;

	if (limit > nwords * 64)
		limit = nwords * 64;
	if (from >= limit)
		return limit;
	i = from / 64;
	w = bm[i] & (U64_MAX << (from % 64));
	for (;;) {
		if (w) {
			u32 bit = i * 64 + mroce_ctz64(w);

			return bit < limit ? bit : limit;
		}
		if (++i >= nwords || i * 64 >= limit)
			return limit;
		w = bm[i];
	}
}

u32 mroce_bm_span(const u64 *bm, u32 nwords)
{
	u32 i = nwords;

	while (i--) {
		if (bm[i])
			return i * 64 + mroce_fls64(bm[i]);
	}
	return 0;
}

bool mroce_bm_empty(const u64 *bm, u32 nwords)
{
	u32 i;

	for (i = 0; i < nwords; i++) {
		if (bm[i])
			return false;
	}
	return true;
}

u32 mroce_bm_ring_ones(const u64 *bm, u32 nwords, u32 start, u32 limit)
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

u32 mroce_bm_ring_next_set(const u64 *bm, u32 nwords, u32 start, u32 limit)
{
	u32 mask = nwords * 64 - 1, k = 0;

	while (k < limit) {
		u32 pos = (start + k) & mask, bit = pos % 64;
		u64 w = bm[pos / 64] >> bit;

		if (w) {
			k += mroce_ctz64(w);
			break;
		}
		k += 64 - bit;
	}
	return k < limit ? k : limit;
}

void mroce_bm_ring_clear(u64 *bm, u32 nwords, u32 start, u32 n)
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
