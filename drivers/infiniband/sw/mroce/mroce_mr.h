/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MR pins, on their own so that per-QP or per-request state can embed
 * them without the verbs header (the WQE shadows do, mroce_verbs.h).
 * The functions are in mroce_verbs.h, next to mroce_mr_get().
 */
#ifndef MROCE_MR_H
#define MROCE_MR_H

#include <linux/types.h>

struct mroce_mr;

/*
 * A pin: a key looked up and checked (state, PD, rights, bounds) once for
 * a whole range -- a message, an SGE, a READ response -- and then used for
 * every packet in that range without a table lookup or a rights check.
 *
 * A pin keeps the struct mroce_mr alive but delays dereg_mr by at most one
 * RCU grace period (uses run in RCU read-side sections): each use checks, with
 * one read and no write to the MR, that its generation is still the pin's
 * (gen: bumped by dereg_mr, and for FRWR MRs by every invalidation and
 * REG_MR). So a pin never outlives the rights it checked: a message that
 * straddles an invalidation fails, even if the MR was re-registered
 * meanwhile under the same key (a per-packet lookup could not tell).
 *
 * A zeroed pin is empty. Users of one pin serialise themselves (WQE pins
 * and the QP's rkey caches are used under the transport's connection
 * lock); mroce_mr_unpin() may run in any context.
 */
struct mroce_mr_pin {
	struct mroce_mr		*mr;		/* NULL: empty */
	u64			iova;		/* the range checked */
	u64			len;
	u32			key;
	u32			gen;
	int			access;		/* the rights checked */
};

#endif /* MROCE_MR_H */
