/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Path receive (SACK window) scenarios: packets arriving on one path, what
 * mroce_prx_check() must say, and the cumulative point and first SACK word
 * after each step. Plain C so an in-module self-test can iterate them.
 */
#ifndef MROCE_VECTORS_PRX_H
#define MROCE_VECTORS_PRX_H

#include "../mroce_prx.h"

#define MROCE_PRX_VEC_MAX_STEPS 8

struct mroce_prx_step {
	u8 gen;
	u32 psn;
	u8 floor_delta;
	u8 accept;		/* mark it received if the verdict is NEW */
	u8 verdict;		/* enum mroce_prx_verdict */
	u32 cum;		/* after the step */
	u64 sack0;		/* first SACK word after the step */
};

struct mroce_prx_vec {
	const char *name;
	u32 n_steps;
	struct mroce_prx_step s[MROCE_PRX_VEC_MAX_STEPS];
};

#define NEW_ MROCE_PRX_NEW
#define CUM0 0xffffffffu	/* nothing received in a fresh generation */

static const struct mroce_prx_vec mroce_prx_vectors[] = {
	{ "in_order", 3, {
		{ 0, 0, 0, 1, NEW_, 0, 0 },
		{ 0, 1, 1, 1, NEW_, 1, 0 },
		{ 0, 2, 2, 1, NEW_, 2, 0 } } },
	{ "gap_then_fill", 3, {
		{ 0, 0, 0, 1, NEW_, 0, 0 },
		{ 0, 2, 2, 1, NEW_, 0, 0x2 },
		{ 0, 1, 1, 1, NEW_, 2, 0 } } },
	{ "duplicate_above_cum", 3, {
		{ 0, 0, 0, 1, NEW_, 0, 0 },
		{ 0, 2, 2, 1, NEW_, 0, 0x2 },
		{ 0, 2, 2, 1, MROCE_PRX_DUP, 0, 0x2 } } },
	{ "old_below_cum", 3, {
		{ 0, 0, 0, 1, NEW_, 0, 0 },
		{ 0, 1, 1, 1, NEW_, 1, 0 },
		{ 0, 0, 0, 1, MROCE_PRX_OLD, 1, 0 } } },
	{ "floor_resolves_hole", 4, {
		{ 0, 0, 0, 1, NEW_, 0, 0 },
		{ 0, 3, 1, 1, NEW_, 1, 0x2 },	/* floor 2: psn 1 given up */
		{ 0, 1, 0, 1, MROCE_PRX_OLD, 1, 0x2 },	/* late original */
		{ 0, 2, 0, 1, NEW_, 3, 0 } } },
	{ "floor_jumps_past_received", 2, {
		{ 0, 5, 5, 1, NEW_, CUM0, 0x20 },	/* floor 0: nothing skipped */
		{ 0, 9, 1, 1, NEW_, 7, 0x2 } } },	/* floor 8: 0..7 resolved */
	{ "window_edge", 3, {
		{ 0, 255, 255, 1, NEW_, CUM0, 0 },	/* bit 255 */
		{ 0, 256, 255, 1, NEW_, 0, 0 },	/* floor 1 resolves psn 0 */
		{ 0, 1, 0, 1, NEW_, 1, 0 } } },
	{ "refused_is_not_marked", 3, {
		{ 0, 0, 0, 0, NEW_, CUM0, 0 },	/* refused (e.g. RNR) */
		{ 0, 1, 1, 1, NEW_, CUM0, 0x2 },
		{ 0, 0, 0, 1, NEW_, 1, 0 } } },	/* the retry fills it */
	{ "new_generation_resets", 4, {
		{ 0, 0, 0, 1, NEW_, 0, 0 },
		{ 0, 1, 1, 1, NEW_, 1, 0 },
		{ 1, 0, 0, 1, NEW_, 0, 0 },
		{ 0, 2, 2, 1, MROCE_PRX_STALE, 0, 0 } } },
	{ "generation_wraps", 4, {
		{ 127, 0, 0, 1, NEW_, 0, 0 },
		{ 254, 0, 0, 1, NEW_, 0, 0 },
		{ 0, 3, 3, 1, NEW_, CUM0, 0x8 },	/* 0 is newer than 254 */
		{ 200, 5, 5, 1, MROCE_PRX_STALE, CUM0, 0x8 } } },
};

#undef NEW_
#undef CUM0

#define MROCE_PRX_NR_VECTORS MROCE_ARRAY_SIZE(mroce_prx_vectors)

#endif /* MROCE_VECTORS_PRX_H */
