// SPDX-License-Identifier: GPL-2.0
/*
 * Placement arithmetic. Untrusted offsets and lengths from the wire meet
 * caller memory descriptors here, so every addition is checked before use.
 */
#include "mroce_place.h"

enum mroce_place_err mroce_sgl_total(const struct mroce_sge *sgl, u32 n_sge,
				     u32 *total)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < n_sge; i++) {
		if (sgl[i].length && sgl[i].addr > U64_MAX - (sgl[i].length - 1))
			return MROCE_PLACE_EOVERFLOW;
		sum += sgl[i].length;
		if (sum > U32_MAX)
			return MROCE_PLACE_EOVERFLOW;
	}
	*total = (u32)sum;
	return MROCE_PLACE_OK;
}

enum mroce_place_err mroce_sgl_map(const struct mroce_sge *sgl, u32 n_sge,
				   u32 msg_off, u32 len,
				   struct mroce_piece *out, u32 max_out,
				   u32 *n_out)
{
	u64 skip = msg_off, left = len;
	u32 i, n = 0;

	*n_out = 0;
	if ((u64)msg_off + len > U32_MAX)
		return MROCE_PLACE_EOVERFLOW;
	if (!len) {
		enum mroce_place_err err = mroce_sgl_total(sgl, n_sge, &i);

		if (err)
			return err;
		return msg_off <= i ? MROCE_PLACE_OK : MROCE_PLACE_ERANGE;
	}
	for (i = 0; i < n_sge && left; i++) {
		u64 take;

		if (sgl[i].length && sgl[i].addr > U64_MAX - (sgl[i].length - 1))
			return MROCE_PLACE_EOVERFLOW;
		if (skip >= sgl[i].length) {
			skip -= sgl[i].length;
			continue;
		}
		if (n == max_out)
			return MROCE_PLACE_ETOOMANY;
		take = sgl[i].length - skip;
		if (take > left)
			take = left;
		out[n].sge = i;
		out[n].sge_offset = (u32)skip;
		out[n].addr = sgl[i].addr + skip;
		out[n].len = (u32)take;
		n++;
		left -= take;
		skip = 0;
	}
	if (left)
		return MROCE_PLACE_ERANGE;
	*n_out = n;
	return MROCE_PLACE_OK;
}

bool mroce_range_within(u64 base, u64 size, u64 addr, u64 len)
{
	if (addr < base)
		return false;
	if (addr - base > size)
		return false;
	return len <= size - (addr - base);
}

u32 mroce_seg_count(u32 len, u32 seg)
{
	if (!seg)
		return 0;
	if (!len)
		return 1;
	return len / seg + (len % seg ? 1 : 0);
}
