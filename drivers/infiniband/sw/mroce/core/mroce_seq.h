/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Serial-number arithmetic (RFC 1982 style) for the 32-bit path and stream
 * sequence numbers and the 8-bit path generation. Every comparison of
 * sequence numbers in the core goes through these helpers so that wrap-around
 * is handled in exactly one place.
 */
#ifndef MROCE_SEQ_H
#define MROCE_SEQ_H

#include "mroce_env.h"

/* Signed distance b - a; meaningful while |b - a| < 2^31. */
static inline s32 mroce_seq_diff(u32 b, u32 a)
{
	return (s32)(b - a);
}

static inline bool mroce_seq_lt(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline bool mroce_seq_le(u32 a, u32 b)
{
	return (s32)(a - b) <= 0;
}

static inline bool mroce_seq_gt(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

static inline bool mroce_seq_ge(u32 a, u32 b)
{
	return (s32)(a - b) >= 0;
}

static inline u32 mroce_seq_max(u32 a, u32 b)
{
	return mroce_seq_gt(a, b) ? a : b;
}

/* Path generations are 8 bits; "newer" means ahead by 1..127. */
static inline bool mroce_gen_newer(u8 candidate, u8 current_gen)
{
	return (s8)(u8)(candidate - current_gen) > 0;
}

#endif /* MROCE_SEQ_H */
