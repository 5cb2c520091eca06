// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded list of per-device records that end (mroce_memo.h says why and
 * the lock rule).
 */
#include <linux/slab.h>

#include "mroce_memo.h"

/**
 * mroce_memo_add() - keep a new record
 * @m: the memo, locked
 * @r: the record, not yet in a memo
 * @mdev: its device
 *
 * A full memo lets its oldest record go for @r, or refuses @r, as it was
 * defined. A memo with an age starts @r's.
 *
 * Return: whether @r is kept (if not, it is still the caller's).
 */
bool mroce_memo_add(struct mroce_memo *m, struct mroce_memo_rec *r,
		    struct mroce_dev *mdev)
{
	lockdep_assert_held(&m->lock);
	if (m->n >= m->max) {
		if (!m->evict)
			return false;
		mroce_memo_drop(m, list_first_entry(&m->recs,
						    struct mroce_memo_rec, node));
	}
	r->mdev = mdev;
	if (m->age_ms)
		r->expires = jiffies + msecs_to_jiffies(m->age_ms);
	list_add_tail(&r->node, &m->recs);
	WRITE_ONCE(m->n, m->n + 1);
	return true;
}

/* @r, kept in @m (locked), is new again: the youngest, its age restarted. */
void mroce_memo_touch(struct mroce_memo *m, struct mroce_memo_rec *r)
{
	lockdep_assert_held(&m->lock);
	list_move_tail(&r->node, &m->recs);
	if (m->age_ms)
		r->expires = jiffies + msecs_to_jiffies(m->age_ms);
}

/* @r, kept in @m (locked), goes and is freed. */
void mroce_memo_drop(struct mroce_memo *m, struct mroce_memo_rec *r)
{
	lockdep_assert_held(&m->lock);
	list_del(&r->node);
	WRITE_ONCE(m->n, m->n - 1);
	kfree(r);
}

/* The records of @m (locked) that outlived its age go. */
void mroce_memo_expire(struct mroce_memo *m)
{
	struct mroce_memo_rec *r, *tmp;

	lockdep_assert_held(&m->lock);
	list_for_each_entry_safe(r, tmp, &m->recs, node)
		if (!mroce_memo_live(m, r))
			mroce_memo_drop(m, r);
}

/* The records of @mdev (NULL: all) go; takes @m's lock. */
void mroce_memo_forget(struct mroce_memo *m, struct mroce_dev *mdev)
{
	struct mroce_memo_rec *r, *tmp;

	spin_lock_bh(&m->lock);
	list_for_each_entry_safe(r, tmp, &m->recs, node)
		if (!mdev || r->mdev == mdev)
			mroce_memo_drop(m, r);
	spin_unlock_bh(&m->lock);
}
