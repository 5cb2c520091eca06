/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Environment of the mroce protocol core inside the kernel module.
 *
 * The core (drivers/infiniband/sw/mroce/core) includes only "mroce_env.h";
 * the build picks this file or include/mroce/env/user/mroce_env.h by
 * include path, so the core sources carry no #ifdef for their environment.
 * Both headers provide exactly the same names.
 */
#ifndef MROCE_ENV_H
#define MROCE_ENV_H

#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/compiler.h>
#include <linux/build_bug.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/bitops.h>
/* get/put_unaligned_*(): compat.h, force-included ahead of this file */

#define MROCE_BUILD_BUG_ON(cond) BUILD_BUG_ON(cond)
#define MROCE_ARRAY_SIZE(a) ARRAY_SIZE(a)
/*
 * One untorn load of a field another context may store to meanwhile (the
 * run-time tunables of struct mroce_params: mroce_knobs.c): read it once
 * per decision into a local.
 */
#define MROCE_READ_ONCE(x) READ_ONCE(x)

static inline u16 mroce_get_be16(const u8 *p)
{
	return get_unaligned_be16(p);
}

static inline u32 mroce_get_be32(const u8 *p)
{
	return get_unaligned_be32(p);
}

static inline u64 mroce_get_be64(const u8 *p)
{
	return get_unaligned_be64(p);
}

static inline void mroce_put_be16(u16 v, u8 *p)
{
	put_unaligned_be16(v, p);
}

static inline void mroce_put_be32(u32 v, u8 *p)
{
	put_unaligned_be32(v, p);
}

static inline void mroce_put_be64(u64 v, u8 *p)
{
	put_unaligned_be64(v, p);
}

/* 64-by-32 division; plain '/' on u64 does not link on 32-bit kernels. */
static inline u64 mroce_div_u64(u64 dividend, u32 divisor)
{
	return div_u64(dividend, divisor);
}

static inline u64 mroce_div64_u64(u64 dividend, u64 divisor)
{
	return div64_u64(dividend, divisor);
}

static inline u32 mroce_ctz64(u64 v)
{
	return __ffs64(v);
}

static inline u32 mroce_popcount64(u64 v)
{
	return hweight64(v);
}

static inline u32 mroce_fls64(u64 v)
{
	return fls64(v);
}

#endif /* MROCE_ENV_H */
