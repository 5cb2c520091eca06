/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A memo: the few records the MAD tunnel keeps about CM exchanges in
 * flight, per device.
 *
 * Why one container: the tunnel remembers two kinds of thing, the DREQs it
 * sends again until their DREP (mroce_mad.c) and the senders of CM
 * requests it has not answered yet (mroce_net.c). Both must stay small
 * whatever the peers do (at most @max records, all devices together), let
 * an old record go (a DREQ after its last try, an asker after @age_ms),
 * and forget a device that goes. A memo does that once for both.
 *
 * Lock rule: a memo's records are read and changed only under its lock, a
 * spinlock taken with softirqs off (records come and go in softirq
 * context). The functions below that want it held assert that
 * (lockdep_assert_held()); mroce_memo_forget() takes it itself. The count
 * alone may be read without the lock, as a hint (mroce_memo_empty()).
 * Where the lock sits in mroce's lock order: mroce.h.
 *
 * A record is the first member of its user's structure, allocated with
 * kmalloc(): mroce_memo_drop() frees it.
 */
#ifndef MROCE_MEMO_H
#define MROCE_MEMO_H

#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/spinlock.h>

struct mroce_dev;

struct mroce_memo_rec {
	struct list_head	node;
	struct mroce_dev	*mdev;
	unsigned long		expires;	/* jiffies; a memo with an age */
};

struct mroce_memo {
	struct list_head	recs;		/* oldest first */
	spinlock_t		lock;
	unsigned int		n;
	unsigned int		max;
	unsigned int		age_ms;		/* 0: the user ends its records */
	bool			evict;		/* full: the oldest goes, or the new one is refused */
};

#define DEFINE_MROCE_MEMO(name, _max, _age_ms, _evict)			\
	struct mroce_memo name = {					\
		.recs	= LIST_HEAD_INIT(name.recs),			\
		.lock	= __SPIN_LOCK_UNLOCKED(name.lock),		\
		.max	= _max,						\
		.age_ms	= _age_ms,					\
		.evict	= _evict,					\
	}

/* Each record of @m as @pos (the user's type, record in @member); @pos may go. */
#define mroce_memo_for_each(pos, tmp, m, member)			\
	list_for_each_entry_safe(pos, tmp, &(m)->recs, member.node)

bool mroce_memo_add(struct mroce_memo *m, struct mroce_memo_rec *r,
		    struct mroce_dev *mdev);
void mroce_memo_touch(struct mroce_memo *m, struct mroce_memo_rec *r);
void mroce_memo_drop(struct mroce_memo *m, struct mroce_memo_rec *r);
void mroce_memo_expire(struct mroce_memo *m);
void mroce_memo_forget(struct mroce_memo *m, struct mroce_dev *mdev);

/* Whether @r has not outlived its memo's age (always, without an age). */
static inline bool mroce_memo_live(const struct mroce_memo *m,
				   const struct mroce_memo_rec *r)
{
	return !m->age_ms || time_before(jiffies, r->expires);
}

/*
 * Whether mroce_memo_add() would take a record now, under @m's lock: then
 * it does until the lock is dropped (a memo that evicts always has room).
 * For a user that builds a costly record only to have it refused.
 */
static inline bool mroce_memo_has_room(const struct mroce_memo *m)
{
	lockdep_assert_held(&m->lock);
	return m->evict || m->n < m->max;
}

/* A hint without the lock: whether @m holds no record. */
static inline bool mroce_memo_empty(const struct mroce_memo *m)
{
	return !READ_ONCE(m->n);
}

#endif /* MROCE_MEMO_H */
