/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Environment of the mroce protocol core in user space (unit tests,
 * simulator, fuzzers). Mirrors include/mroce/env/kernel/mroce_env.h name
 * for name; see there.
 */
#ifndef MROCE_ENV_H
#define MROCE_ENV_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <assert.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef U8_MAX
#define U8_MAX ((u8)~0U)
#define U16_MAX ((u16)~0U)
#define U32_MAX ((u32)~0U)
#define U64_MAX ((u64)~0ULL)
#endif

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define MROCE_BUILD_BUG_ON(cond) ((void)sizeof(char[1 - 2 * !!(cond)]))
#define MROCE_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MROCE_READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static inline u16 mroce_get_be16(const u8 *p)
{
	return (u16)((u16)p[0] << 8 | p[1]);
}

static inline u32 mroce_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static inline u64 mroce_get_be64(const u8 *p)
{
	return (u64)mroce_get_be32(p) << 32 | mroce_get_be32(p + 4);
}

static inline void mroce_put_be16(u16 v, u8 *p)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static inline void mroce_put_be32(u32 v, u8 *p)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static inline void mroce_put_be64(u64 v, u8 *p)
{
	mroce_put_be32((u32)(v >> 32), p);
	mroce_put_be32((u32)v, p + 4);
}

static inline u64 mroce_div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 mroce_div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

/* Index of the lowest set bit; v must not be 0. */
static inline u32 mroce_ctz64(u64 v)
{
	return (u32)__builtin_ctzll(v);
}

static inline u32 mroce_popcount64(u64 v)
{
	return (u32)__builtin_popcountll(v);
}

/* 1-based index of the highest set bit, 0 if v is 0 (like the kernel's fls64). */
static inline u32 mroce_fls64(u64 v)
{
	return v ? 64 - (u32)__builtin_clzll(v) : 0;
}

#endif /* MROCE_ENV_H */
