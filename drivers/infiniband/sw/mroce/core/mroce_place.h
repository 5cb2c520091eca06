/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Placement arithmetic: where the bytes of a chunk go. Maps a message offset
 * and length onto a scatter-gather list and checks remote ranges, with every
 * sum checked for overflow. See docs/protocol.md §4.4.
 */
#ifndef MROCE_PLACE_H
#define MROCE_PLACE_H

#include "mroce_env.h"

struct mroce_sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

struct mroce_piece {
	u32 sge;		/* index into the list */
	u32 sge_offset;		/* byte offset inside that element */
	u64 addr;		/* sge addr + sge_offset */
	u32 len;
};

enum mroce_place_err {
	MROCE_PLACE_OK = 0,
	MROCE_PLACE_ERANGE,	/* beyond the end of the list or the range */
	MROCE_PLACE_EOVERFLOW,	/* an address or length sum wraps */
	MROCE_PLACE_ETOOMANY,	/* more pieces than the output holds */
};

/* Total bytes of a list; EOVERFLOW if it exceeds 2^32 - 1 or an element wraps. */
enum mroce_place_err mroce_sgl_total(const struct mroce_sge *sgl, u32 n_sge,
				     u32 *total);
/* Pieces of [msg_off, msg_off + len) of the message laid over @sgl. */
enum mroce_place_err mroce_sgl_map(const struct mroce_sge *sgl, u32 n_sge,
				   u32 msg_off, u32 len,
				   struct mroce_piece *out, u32 max_out,
				   u32 *n_out);
/* True if [addr, addr + len) lies within [base, base + size). */
bool mroce_range_within(u64 base, u64 size, u64 addr, u64 len);
/*
 * Destination of a WRITE chunk: va + msg_off, checked to stay inside the
 * message [va, va + length).
 */
static inline enum mroce_place_err mroce_write_dest(u64 va, u32 length,
						    u32 msg_off, u32 len,
						    u64 *dest)
{
	if ((u64)msg_off + len > length)
		return MROCE_PLACE_ERANGE;
	if (length && va > U64_MAX - (length - 1))
		return MROCE_PLACE_EOVERFLOW;
	*dest = va + msg_off;
	return MROCE_PLACE_OK;
}
/* Chunks a message of @len bytes needs at @seg payload bytes per chunk. */
u32 mroce_seg_count(u32 len, u32 seg);

#endif /* MROCE_PLACE_H */
