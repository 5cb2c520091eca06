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
