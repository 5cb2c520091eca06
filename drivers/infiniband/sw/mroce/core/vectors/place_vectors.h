/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scatter-gather placement vectors: a message offset and length over a list,
 * and the pieces (or the error) mroce_sgl_map() must produce. Plain C so an
 * in-module self-test can iterate them.
 */
#ifndef MROCE_VECTORS_PLACE_H
#define MROCE_VECTORS_PLACE_H

#include "../mroce_place.h"

#define MROCE_PLACE_VEC_MAX_SGE		4
#define MROCE_PLACE_VEC_MAX_PIECES	4

struct mroce_place_vec {
	const char *name;
	struct mroce_sge sgl[MROCE_PLACE_VEC_MAX_SGE];
	u32 n_sge;
	u32 msg_off;
	u32 len;
	u32 max_out;
	u8 err;			/* enum mroce_place_err */
	u32 n_pieces;
	struct mroce_piece pieces[MROCE_PLACE_VEC_MAX_PIECES];
};

static const struct mroce_place_vec mroce_place_vectors[] = {
	{
		"inside_first_element",
		{ { 0x1000, 100, 1 }, { 0x9000, 50, 1 } }, 2,
		10, 20, 4, MROCE_PLACE_OK, 1,
		{ { 0, 10, 0x100a, 20 } },
	},
	{
		"spans_two_elements",
		{ { 0x1000, 100, 1 }, { 0x9000, 50, 1 } }, 2,
		90, 30, 4, MROCE_PLACE_OK, 2,
		{ { 0, 90, 0x105a, 10 }, { 1, 0, 0x9000, 20 } },
	},
	{
		"skips_empty_elements",
		{ { 0x1000, 0, 1 }, { 0x2000, 8, 1 }, { 0x3000, 0, 1 },
		  { 0x4000, 8, 1 } }, 4,
		4, 8, 4, MROCE_PLACE_OK, 2,
		{ { 1, 4, 0x2004, 4 }, { 3, 0, 0x4000, 4 } },
	},
	{
		"exactly_to_the_end",
		{ { 0x1000, 100, 1 }, { 0x9000, 50, 1 } }, 2,
		100, 50, 4, MROCE_PLACE_OK, 1,
		{ { 1, 0, 0x9000, 50 } },
	},
	{
		"zero_length_anywhere_inside",
		{ { 0x1000, 100, 1 } }, 1,
		100, 0, 4, MROCE_PLACE_OK, 0,
		{ { 0, 0, 0, 0 } },
	},
	{
		"zero_length_past_the_end",
		{ { 0x1000, 100, 1 } }, 1,
		101, 0, 4, MROCE_PLACE_ERANGE, 0,
		{ { 0, 0, 0, 0 } },
	},
	{
		"one_byte_past_the_end",
		{ { 0x1000, 100, 1 }, { 0x9000, 50, 1 } }, 2,
		100, 51, 4, MROCE_PLACE_ERANGE, 0,
		{ { 0, 0, 0, 0 } },
	},
	{
		"offset_past_the_end",
		{ { 0x1000, 100, 1 } }, 1,
		101, 1, 4, MROCE_PLACE_ERANGE, 0,
		{ { 0, 0, 0, 0 } },
	},
	{
		"offset_plus_length_wraps",
		{ { 0x1000, 100, 1 } }, 1,
		0xfffffff0u, 0x20, 4, MROCE_PLACE_EOVERFLOW, 0,
		{ { 0, 0, 0, 0 } },
	},
	{
		"element_address_wraps",
		{ { 0xfffffffffffffff0ull, 0x20, 1 } }, 1,
		0, 8, 4, MROCE_PLACE_EOVERFLOW, 0,
		{ { 0, 0, 0, 0 } },
	},
	{
		"more_pieces_than_room",
		{ { 0x1000, 4, 1 }, { 0x2000, 4, 1 }, { 0x3000, 4, 1 } }, 3,
		0, 12, 2, MROCE_PLACE_ETOOMANY, 0,
		{ { 0, 0, 0, 0 } },
	},
	{
		"empty_list",
		{ { 0, 0, 0 } }, 0,
		0, 1, 4, MROCE_PLACE_ERANGE, 0,
		{ { 0, 0, 0, 0 } },
	},
};

#define MROCE_PLACE_NR_VECTORS MROCE_ARRAY_SIZE(mroce_place_vectors)

#endif /* MROCE_VECTORS_PLACE_H */
