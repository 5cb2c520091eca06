// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions.
 *
 * Keys: lkey == rkey == index << 8 | key byte. The index names the MR in
 * mdev->mr_xa for the MR's whole life; the key byte starts random (so a
 * peer cannot guess the keys of a fresh MR) and, for fast-register MRs,
 * is replaced by the one the ULP chose on every IB_WR_REG_MR
 * (ib_update_fast_reg_key()), which makes stale rkeys miss.
 *
 * Three kinds, one translation each (mroce_mr_walk()):
 *   DMA   the local DMA lkey: addresses are kernel virtual addresses in the
 *         direct map (we register with a NULL DMA device, so the core's
 *         ib_dma_* helpers hand out exactly those), checked with
 *         virt_addr_valid() page by page.
 *   USER  user memory pinned with ib_umem_get(): a page array, so an iova
 *         finds its page in O(1).
 *   FAST  fast-register (FRWR): map_mr_sg() fills a list of page-size
 *         aligned kernel addresses; IB_WR_REG_MR makes it valid with the
 *         iova, length, rights and key byte the WR carries; LOCAL_INV or a
 *         remote Send-with-Invalidate makes it invalid again.
 *
 * Lookups (mroce_mr_get()) run under RCU from any context and return a
 * counted reference after checking key, state, PD, rights and bounds.
 * dereg_mr removes the index, waits for those references and frees after a
 * grace period.
 *
 * Pins (mroce_mr_pin_sge(), mroce_rkey_pin()) do that lookup and check
 * once for a whole SGE or message and let the data path use the MR per
 * packet with only a generation compare, in an RCU read-side section (the
 * caller's, where it has BH or preemption disabled): no atomic, no lock
 * call, no write to the MR's cacheline, which every CPU's packets would share
 * (the local DMA lkey serves all kernel SGEs). dereg_mr makes the
 * generation miss, waits for lookups, then for a grace period, then frees
 * the pages; see struct mroce_mr_pin. The MR struct lives until dereg_mr
 * and the last pin are both done with it (hold).
 */
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>

#include "mroce.h"
#include "mroce_verbs.h"

#define MROCE_ACCESS_REMOTE	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC)
#define MROCE_ACCESS_ALL	(IB_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE)

static inline u32 mroce_key_index(u32 key)
{
	return key >> 8;
}

/* Rights the IB spec requires to come with LOCAL_WRITE. */
static bool mroce_access_ok(int access)
{
	if (access & ~MROCE_ACCESS_ALL)
		return false;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

static struct mroce_mr *mroce_mr_alloc(struct ib_pd *pd,
				       enum mroce_mr_type type)
{
	struct mroce_dev *mdev = to_mdev(pd->device);
	struct mroce_mr *mr;
	u32 index;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = type;
	spin_lock_init(&mr->lock);
	seqcount_spinlock_init(&mr->seq, &mr->lock);
	refcount_set(&mr->ref, 1);
	refcount_set(&mr->hold, 1);
	init_completion(&mr->released);

	/* Published only when fully set up: see mroce_mr_publish(). */
	err = xa_alloc_cyclic_irq(&mdev->mr_xa, &index, NULL,
				  XA_LIMIT(1, MROCE_MAX_MR), &mdev->mr_next,
				  GFP_KERNEL);
	if (err < 0) {
		kfree(mr);
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}
	mr->key = index << 8 | get_random_u8();
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return mr;
}

static void mroce_mr_publish(struct mroce_dev *mdev, struct mroce_mr *mr)
{
	xa_store_irq(&mdev->mr_xa, mroce_key_index(mr->key), mr, GFP_KERNEL);
}

/* Undo mroce_mr_alloc() for an MR nobody could look up yet. */
static void mroce_mr_discard(struct mroce_dev *mdev, struct mroce_mr *mr)
{
	xa_erase_irq(&mdev->mr_xa, mroce_key_index(mr->key));
	kvfree(mr->pages);
	kvfree(mr->page_list);
	kfree(mr);
}

struct ib_mr *mroce_get_dma_mr(struct ib_pd *pd, int access)
{
	struct mroce_mr *mr;

	if (!mroce_access_ok(access))
		return ERR_PTR(-EINVAL);
	mr = mroce_mr_alloc(pd, MROCE_MR_DMA);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->access = access;
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->valid = true;
	mroce_mr_publish(to_mdev(pd->device), mr);
	return &mr->ibmr;
}

struct ib_mr *mroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(pd->device);
	struct sg_page_iter iter;
	struct ib_umem *umem;
	struct mroce_mr *mr;
	u64 end;
	u32 n;
	int err;

	/* Hints we may ignore; everything else must be something we do. */
	access &= ~(IB_ACCESS_OPTIONAL | IB_ACCESS_HUGETLB);
	if (!mroce_access_ok(access))
		return ERR_PTR(access & ~MROCE_ACCESS_ALL ? -EOPNOTSUPP : -EINVAL);
	if (!length || length > MROCE_MAX_MR_SIZE ||
	    check_add_overflow(iova, length, &end))
		return ERR_PTR(-EINVAL);

	mr = mroce_mr_alloc(pd, MROCE_MR_USER);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	/* Pinned writable only if we may ever write into it. */
	umem = ib_umem_get(pd->device, start, length, access);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_discard;
	}

	mr->npages = ib_umem_num_pages(umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_release;
	}
	n = 0;
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (n == mr->npages)
			break;
		mr->pages[n++] = sg_page_iter_page(&iter);
	}
	if (n != mr->npages) {
		err = -EFAULT;
		goto err_release;
	}

	mr->umem = umem;
	mr->offset = ib_umem_offset(umem);
	mr->access = access;
	mr->iova = iova;
	mr->length = length;
	mr->valid = true;
	mroce_mr_publish(mdev, mr);
	return &mr->ibmr;

err_release:
	ib_umem_release(umem);
err_discard:
	mroce_mr_discard(mdev, mr);
	return ERR_PTR(err);
}

struct ib_mr *mroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct mroce_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > MROCE_MAX_FRWR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = mroce_mr_alloc(pd, MROCE_MR_FAST);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->page_list = kvcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->page_list) {
		mroce_mr_discard(to_mdev(pd->device), mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	mroce_mr_publish(to_mdev(pd->device), mr);
	return &mr->ibmr;
}

static int mroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct mroce_mr *mr = to_mmr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->page_list[mr->npages++] = addr;
	return 0;
}

int mroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct mroce_mr *mr = to_mmr(ibmr);

	/* Our pages are kernel pages; smaller FR pages would not map 1:1. */
	if (ibmr->page_size < PAGE_SIZE || !is_power_of_2(ibmr->page_size))
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, mroce_set_page);
}

/* The struct goes once dereg_mr and every pin let go (lookups use RCU). */
static void mroce_mr_drop_hold(struct mroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->hold))
		kfree_rcu(mr, rcu);
}

int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mroce_mr *mr = to_mmr(ibmr);
	struct mroce_dev *mdev = to_mdev(ibmr->device);
	unsigned long flags;

	xa_erase_irq(&mdev->mr_xa, mroce_key_index(mr->key));
	/* Every pin misses from here on, whatever the MR's type. */
	spin_lock_irqsave(&mr->lock, flags);
	write_seqcount_begin(&mr->seq);
	mr->valid = false;
	mr->dead = true;
	mr->gen++;
	write_seqcount_end(&mr->seq);
	spin_unlock_irqrestore(&mr->lock, flags);
	mroce_mr_put(mr);
	/* References are short (one request's check); pins do not count. */
	wait_for_completion(&mr->released);
	/*
	 * A pin walk that read the old generation may still be in its page
	 * walk: those run in RCU read-side sections (rcu_read_lock(), or
	 * BH or preemption disabled, which synchronize_rcu_expedited()
	 * waits for as well: mroce_mr_read_begin()). Pins are taken with a
	 * reference held, so after the wait above pinned is final.
	 */
	if (READ_ONCE(mr->pinned))
		synchronize_rcu_expedited();

	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kvfree(mr->page_list);
	mr->pages = NULL;
	mr->page_list = NULL;
	mroce_mr_drop_hold(mr);
	return 0;
}

/*
 * The RCU read-side section a lookup (the MR may be freed an RCU grace
 * period after dereg_mr) or a pin's use (mroce_mr_pin_walk()) needs.
 * Receive and the transmit paths run with bottom halves or preemption
 * disabled, which is one already: since the RCU flavours were
 * consolidated, synchronize_rcu() and synchronize_rcu_expedited() wait for
 * such sections too, so dereg_mr's wait covers them. Only a preemptible
 * caller takes rcu_read_lock(), which under PREEMPT_RCU is a call each way.
 */
static __always_inline bool mroce_mr_read_begin(void)
{
	if (!preemptible())
		return false;
	rcu_read_lock();
	return true;
}

static __always_inline void mroce_mr_read_end(bool locked)
{
	if (locked)
		rcu_read_unlock();
}

/* What a lookup saw of the MR: a pin's view of it. */
struct mroce_mr_seen {
	u32	gen;
	u64	iova;
	u64	length;
};

static __always_inline void __mroce_mr_put(struct mroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/*
 * The lookup and checks of mroce_mr_get(); also reports what it saw.
 * What the checks read changes only under mr->lock inside seq (REG_MR,
 * invalidation, dereg_mr), so it is read consistent without taking the
 * lock: no atomic and no write to the MR's cacheline for the check.
 */
static __always_inline struct mroce_mr *
mroce_mr_lookup(struct mroce_dev *mdev, struct ib_pd *pd, int access,
		u64 iova, u64 len, bool is_rkey, u32 key,
		struct mroce_mr_seen *seen, enum mroce_mr_err *why)
{
	enum mroce_mr_err err;
	struct mroce_mr *mr;
	unsigned int seq;
	bool locked;

	locked = mroce_mr_read_begin();
	mr = xa_load(&mdev->mr_xa, mroce_key_index(key));
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	mroce_mr_read_end(locked);
	if (!mr) {
		err = MROCE_MR_NO_KEY;
		goto out;
	}

	do {
		seq = read_seqcount_begin(&mr->seq);
		err = MROCE_MR_OK;
		if (mr->key != key)
			err = MROCE_MR_STALE_KEY;
		else if (!mr->valid)
			err = MROCE_MR_INVALID;
		else if (mr->ibmr.pd != pd)
			err = MROCE_MR_PD;
		else if ((access & ~mr->access) ||
			 (is_rkey && !(access & MROCE_ACCESS_REMOTE)))
			err = MROCE_MR_ACCESS;
		else if (iova < mr->iova || len > mr->length ||
			 iova - mr->iova > mr->length - len)
			err = MROCE_MR_BOUNDS;
		seen->gen = mr->gen;
		seen->iova = mr->iova;
		seen->length = mr->length;
	} while (read_seqcount_retry(&mr->seq, seq));

	if (err) {
		__mroce_mr_put(mr);
		mr = NULL;
	}
out:
	mroce_mr_why(why, err);
	return mr;
}

/**
 * mroce_mr_get() - look up a key and check an access through it
 * @mdev: the device
 * @key: lkey or rkey (untrusted)
 * @pd: the PD of the QP doing the access; the MR must belong to it
 * @access: IB_ACCESS_* rights the access needs: 0 for a local read,
 *	    IB_ACCESS_LOCAL_WRITE for a local write, IB_ACCESS_REMOTE_* for
 *	    accesses a peer asked for
 * @iova: first byte accessed
 * @len: bytes accessed
 * @is_rkey: @key came from the wire, so at least one remote right is needed
 * @why: on failure, the reason (for NAKs and counters); may be NULL
 *
 * Any context. The range check is overflow-safe for any @iova and @len.
 *
 * Return: the MR with a reference (mroce_mr_put()), or NULL.
 */
struct mroce_mr *mroce_mr_get(struct mroce_dev *mdev, u32 key,
			      struct ib_pd *pd, int access, u64 iova, u64 len,
			      bool is_rkey, enum mroce_mr_err *why)
{
	struct mroce_mr_seen seen;

	return mroce_mr_lookup(mdev, pd, access, iova, len, is_rkey, key,
			       &seen, why);
}

void mroce_mr_put(struct mroce_mr *mr)
{
	__mroce_mr_put(mr);
}

/* The translation state a walk uses, read once under the lock. */
struct mroce_mr_view {
	u64		iova;
	u64		length;
	unsigned int	shift;
	unsigned int	offset;
	u32		npages;
};

static __always_inline int mroce_mr_chunk(const struct mroce_mr *mr,
					  const struct mroce_mr_view *v,
					  u64 iova, u64 len,
					  struct page **page, unsigned int *off,
					  unsigned int *chunk)
{
	u64 pos = iova - v->iova + v->offset;
	unsigned long kva;
	u64 idx, room;

	switch (mr->type) {
	case MROCE_MR_USER:
		idx = pos >> PAGE_SHIFT;
		if (idx >= v->npages)
			return -EFAULT;
		*page = mr->pages[idx];
		*off = pos & ~PAGE_MASK;
		room = PAGE_SIZE - *off;
		break;
	case MROCE_MR_FAST:
		idx = pos >> v->shift;
		if (idx >= v->npages)
			return -EFAULT;
		kva = mr->page_list[idx] + (pos & ((1ULL << v->shift) - 1));
		if (!virt_addr_valid((void *)kva))
			return -EFAULT;
		*page = virt_to_page((void *)kva);
		*off = offset_in_page(kva);
		room = PAGE_SIZE - *off;
		break;
	default:
		kva = iova;
		if (kva != iova || !virt_addr_valid((void *)kva))
			return -EFAULT;
		*page = virt_to_page((void *)kva);
		*off = offset_in_page(kva);
		room = PAGE_SIZE - *off;
		break;
	}
	*chunk = min(len, room);
	return 0;
}

static __always_inline void mroce_mr_view(const struct mroce_mr *mr,
					  struct mroce_mr_view *v)
{
	v->iova = mr->iova;
	v->length = mr->length;
	v->shift = mr->page_shift;
	v->offset = mr->offset;
	v->npages = mr->npages;
}

/*
 * Whether a pin of generation @gen still names the registration it
 * checked. Every change of valid bumps gen (REG_MR needs an invalid MR), so
 * a matching gen means still valid, and not deregistered: no lock needed.
 */
static __always_inline bool mroce_mr_gen_ok(const struct mroce_mr *mr,
					    u32 gen)
{
	return READ_ONCE(mr->gen) == gen;
}

/*
 * Take a view of @mr. Only FRWR MRs change before dereg_mr, and only under
 * seq, so the view is read without writing to the MR. With @gen: false if
 * the MR was invalidated, re-registered or deregistered since generation
 * *@gen.
 */
static __always_inline bool mroce_mr_snapshot(struct mroce_mr *mr,
					      const u32 *gen,
					      struct mroce_mr_view *v)
{
	unsigned int seq;
	bool ok;

	if (mr->type != MROCE_MR_FAST) {
		mroce_mr_view(mr, v);
		return !gen || mroce_mr_gen_ok(mr, *gen);
	}
	do {
		seq = read_seqcount_begin(&mr->seq);
		ok = !gen || mr->gen == *gen;
		mroce_mr_view(mr, v);
	} while (read_seqcount_retry(&mr->seq, seq));
	return ok;
}

/*
 * Visit [iova, iova + len) through a view; the range is checked here.
 * Inline, so that a caller with a constant @fn calls (or inlines) it
 * directly instead of through a retpoline.
 */
static __always_inline int mroce_mr_walk_view(struct mroce_mr *mr,
					      const struct mroce_mr_view *v,
					      u64 iova, u64 len,
					      mroce_chunk_fn fn, void *priv)
{
	unsigned int off, chunk;
	struct page *page;
	int err;

	if (iova < v->iova || len > v->length ||
	    iova - v->iova > v->length - len)
		return -EFAULT;

	while (len) {
		err = mroce_mr_chunk(mr, v, iova, len, &page, &off, &chunk);
		if (err)
			return err;
		err = fn(priv, page, off, chunk);
		if (err)
			return err;
		iova += chunk;
		len -= chunk;
	}
	return 0;
}

/**
 * mroce_mr_walk() - visit [iova, iova + len) of an MR page by page
 * @mr: a referenced MR whose range was checked by mroce_mr_get()
 * @iova: first byte
 * @len: bytes
 * @fn: called for each piece
 * @priv: passed to @fn
 *
 * Rechecks the range against the MR's current state, so a concurrent
 * invalidate or re-registration can make the walk fail but never make it
 * leave the MR's pages.
 *
 * Return: 0, -EFAULT if the range is (no longer) inside the MR, or what
 * @fn returned.
 */
int mroce_mr_walk(struct mroce_mr *mr, u64 iova, u64 len,
		  mroce_chunk_fn fn, void *priv)
{
	struct mroce_mr_view v;

	mroce_mr_snapshot(mr, NULL, &v);
	return mroce_mr_walk_view(mr, &v, iova, len, fn, priv);
}

/* ---------------------------------------------------------------- pins */

/* The last byte of a non-empty range, or U64_MAX if it runs past it. */
static u64 mroce_range_last(u64 start, u64 len)
{
	u64 last;

	if (check_add_overflow(start, len - 1, &last))
		return U64_MAX;
	return last;
}

/*
 * The lookup and checks of mroce_mr_get() for [@iova, @iova + @len), then a
 * pin on as much of [@lo, @last] as the MR holds (that range holds the one
 * checked). What @pin held before is let go first.
 */
static __always_inline int
mroce_mr_pin_range(struct mroce_dev *mdev, struct ib_pd *pd, u32 key,
		   int access, u64 iova, u64 len, bool is_rkey, u64 lo,
		   u64 last, struct mroce_mr_pin *pin, enum mroce_mr_err *why)
{
	struct mroce_mr_seen seen;
	struct mroce_mr *mr;

	mroce_mr_unpin(pin);
	mr = mroce_mr_lookup(mdev, pd, access, iova, len, is_rkey, key, &seen,
			     why);
	if (!mr)
		return -EACCES;
	lo = max(lo, seen.iova);
	last = min(last, mroce_range_last(seen.iova, seen.length));
	/* We hold a reference, so dereg_mr has not dropped its hold yet. */
	refcount_inc(&mr->hold);
	/* ... nor read pinned: it will wait for our walks (RCU). */
	if (!READ_ONCE(mr->pinned))
		WRITE_ONCE(mr->pinned, true);
	__mroce_mr_put(mr);
	pin->mr = mr;
	pin->iova = lo;
	pin->len = last - lo + 1;
	pin->key = key;
	pin->gen = seen.gen;
	pin->access = access;
	return 0;
}

/**
 * mroce_mr_pin_sge() - pin as much of an SGE as its MR holds
 * @mdev: the device
 * @pd: the PD of the QP doing the accesses
 * @access: the rights every use needs
 * @sge: the SGE (its lkey, address and length are untrusted)
 * @iova: first byte needed now, inside @sge
 * @len: bytes needed now (at least 1)
 * @pin: where to keep it; what it held before is let go first
 * @why: on failure, the reason; may be NULL
 *
 * Any context. The checks are mroce_mr_get()'s for [@iova, @iova + @len);
 * later uses need only mroce_mr_pin_walk(). An SGE may be larger than its
 * MR (a receive buffer that takes short messages): only the bytes a
 * message touches must lie in the MR. So the pin covers all of the SGE
 * that lies in the MR: every later access to the SGE inside the MR uses
 * the pin, and one outside it fails its own pin -- one lookup per SGE
 * either way.
 *
 * Return: 0, or -EACCES (@pin is then empty).
 */
int mroce_mr_pin_sge(struct mroce_dev *mdev, struct ib_pd *pd, int access,
		     const struct ib_sge *sge, u64 iova, u64 len,
		     struct mroce_mr_pin *pin, enum mroce_mr_err *why)
{
	return mroce_mr_pin_range(mdev, pd, sge->lkey, access, iova, len,
				  false, sge->addr,
				  mroce_range_last(sge->addr, sge->length),
				  pin, why);
}

/* Let go of a pin (any context); an empty pin is left alone. */
void mroce_mr_unpin(struct mroce_mr_pin *pin)
{
	if (!pin->mr)
		return;
	mroce_mr_drop_hold(pin->mr);
	pin->mr = NULL;
}

/*
 * Copy actors the pin paths below inline (mroce_chunk_fn). Both copy
 * through mroce_memcpy(): a small payload (a 64 B WRITE's, a small READ
 * response's) is copied without memcpy()'s string instructions, which
 * TCG runs one block per byte ("rep movsb") or per word ("rep movsq").
 */
static __always_inline int __mroce_chunk_from_mr(void *priv, struct page *page,
						 unsigned int off,
						 unsigned int len)
{
	struct mroce_copy *c = priv;
	const u8 *src = kmap_local_page(page);

	mroce_memcpy(c->dst, src + off, len);
	kunmap_local(src);
	c->dst += len;
	return 0;
}

static __always_inline int __mroce_chunk_skb_to_mr(void *priv,
						   struct page *page,
						   unsigned int off,
						   unsigned int len)
{
	struct mroce_copy *c = priv;
	void *kaddr = kmap_local_page(page);
	int err = 0;

	/* A small packet's payload is in the head: skb_copy_bits() would. */
	if (likely(c->skb_off >= 0 &&
		   c->skb_off + len <= skb_headlen(c->skb)))
		mroce_memcpy(kaddr + off, c->skb->data + c->skb_off, len);
	else
		err = skb_copy_bits(c->skb, c->skb_off, kaddr + off, len);
	kunmap_local(kaddr);
	if (err)
		return -EFAULT;
	flush_dcache_page(page);
	c->skb_off += len;
	return 0;
}

/* mroce_mr_pin_walk(), inline for callers with a constant @fn. */
static __always_inline int __mroce_mr_pin_walk(struct mroce_mr_pin *pin,
					       u64 iova, u64 len,
					       mroce_chunk_fn fn, void *priv,
					       enum mroce_mr_err *why)
{
	struct mroce_mr *mr = pin->mr;
	struct mroce_mr_view v;
	bool locked;
	int err;

	mroce_mr_why(why, MROCE_MR_OK);
	if (unlikely(!mr || iova < pin->iova || len > pin->len ||
		     iova - pin->iova > pin->len - len)) {
		mroce_mr_why(why, MROCE_MR_BOUNDS);
		return -EFAULT;
	}
	locked = mroce_mr_read_begin();
	if (likely(mroce_mr_snapshot(mr, &pin->gen, &v))) {
		err = mroce_mr_walk_view(mr, &v, iova, len, fn, priv);
		if (unlikely(err == -EFAULT))
			mroce_mr_why(why, MROCE_MR_BOUNDS);
	} else {
		mroce_mr_why(why, READ_ONCE(mr->dead) ? MROCE_MR_NO_KEY :
							MROCE_MR_INVALID);
		err = -ESTALE;
	}
	mroce_mr_read_end(locked);
	return err;
}

/**
 * mroce_mr_pin_walk() - visit part of a pinned range page by page
 * @pin: a pin from mroce_mr_pin_sge() or mroce_rkey_pin()
 * @iova: first byte, inside the pinned range
 * @len: bytes
 * @fn: called for each piece, in an RCU read-side section (it must not
 *	sleep)
 * @priv: passed to @fn
 * @why: on -ESTALE or -EFAULT, the reason; may be NULL
 *
 * No table lookup, no rights check and no atomic: only whether the MR's
 * generation is still the pin's, i.e. it was neither deregistered nor, for
 * FRWR MRs, invalidated or re-registered since the pin was taken. That is
 * the one generation check a use of a pin makes: it must be inside the
 * walk's RCU read section, since dereg_mr keeps the pages only until that
 * ends.
 *
 * Return: 0; -EFAULT if the range is outside the pin (MROCE_MR_BOUNDS);
 * -ESTALE if the MR was deregistered (MROCE_MR_NO_KEY) or invalidated or
 * re-registered (MROCE_MR_INVALID) since the pin was taken -- a WQE's pin
 * fails its access then, an rkey cache looks the key up again; or what
 * @fn returned.
 */
int mroce_mr_pin_walk(struct mroce_mr_pin *pin, u64 iova, u64 len,
		      mroce_chunk_fn fn, void *priv, enum mroce_mr_err *why)
{
	return __mroce_mr_pin_walk(pin, iova, len, fn, priv, why);
}

/**
 * mroce_mr_pin_copy_from() - copy part of a pinned range out
 * @pin: a pin from mroce_mr_pin_sge() or mroce_rkey_pin()
 * @iova: first byte, inside the pinned range
 * @dst: kernel buffer
 * @len: bytes
 * @why: on -ESTALE or -EFAULT, the reason; may be NULL
 *
 * mroce_mr_pin_walk() with the copy inlined: the packets built from a send
 * WQE and from a READ request copy through here, a direct call where the
 * walk would reach its chunk function through an indirect call (a
 * retpoline thunk in distribution kernels).
 *
 * Return: as mroce_mr_pin_walk().
 */
int mroce_mr_pin_copy_from(struct mroce_mr_pin *pin, u64 iova, void *dst,
			   u32 len, enum mroce_mr_err *why)
{
	struct mroce_copy c = { .dst = dst };

	return __mroce_mr_pin_walk(pin, iova, len, __mroce_chunk_from_mr, &c,
				   why);
}

/*
 * Whether a pin's pages are user pages pinned for the MR's life: those may
 * be attached to an skb with a page reference (zero-copy transmit).
 */
bool mroce_mr_pin_is_user(const struct mroce_mr_pin *pin)
{
	return pin->mr && pin->mr->type == MROCE_MR_USER;
}

/* A miss of the rkey cache: look the key up and pin the whole MR. */
static noinline int mroce_rkey_repin(struct mroce_qp *qp,
				     struct mroce_mr_pin *pin, u32 rkey,
				     int access, u64 iova, u64 len,
				     enum mroce_mr_err *why)
{
	return mroce_mr_pin_range(mroce_qp_dev(qp), qp->ibqp.pd, rkey, access,
				  iova, len, true, 0, U64_MAX, pin, why);
}

/* mroce_rkey_pin(), the hit inline. */
static __always_inline int __mroce_rkey_pin(struct mroce_qp *qp,
					    struct mroce_mr_pin *pin, u32 rkey,
					    int access, u64 iova, u64 len,
					    enum mroce_mr_err *why)
{
	if (likely(mroce_mr_pin_covers(pin, rkey, access, iova, len))) {
		mroce_mr_why(why, MROCE_MR_OK);
		return 0;
	}
	return mroce_rkey_repin(qp, pin, rkey, access, iova, len, why);
}

/**
 * mroce_rkey_pin() - make a QP's rkey cache cover an access from the wire
 * @qp: the responder QP (the MR must be in its PD)
 * @pin: the cache, qp->wr_pin or qp->rd_pin; serialised by the caller
 * @rkey: from the packet (untrusted)
 * @access: the remote right the access needs
 * @iova: first byte
 * @len: bytes (at least 1)
 * @why: on failure, the reason; may be NULL
 *
 * A hit costs a compare of key, rights and range; a miss is
 * mroce_mr_get()'s lookup and checks, and pins the whole MR, so the rest of
 * the message (and later messages into the same MR) hit. Whether the MR
 * was invalidated, re-registered or deregistered since is checked once, by
 * the walk that uses the pin: it returns -ESTALE, and the caller lets go
 * of the pin and calls here again, which looks the key up again. So the
 * cache refuses exactly what a lookup per packet would.
 *
 * Return: 0, or -EACCES (@pin is then empty).
 */
int mroce_rkey_pin(struct mroce_qp *qp, struct mroce_mr_pin *pin, u32 rkey,
		   int access, u64 iova, u64 len, enum mroce_mr_err *why)
{
	return __mroce_rkey_pin(qp, pin, rkey, access, iova, len, why);
}

/**
 * mroce_rkey_copy_in_skb() - place WRITE payload through the QP's rkey cache
 * @qp: the responder QP; under the transport's connection lock
 * @rkey: from the packet (untrusted)
 * @iova: destination (untrusted)
 * @skb: the packet
 * @skb_off: where its payload starts
 * @len: payload bytes (at least 1)
 * @why: on failure, the reason (for the NAK's counter)
 *
 * Return: 0; -EACCES or -EFAULT (NAK the packet).
 */
int mroce_rkey_copy_in_skb(struct mroce_qp *qp, u32 rkey, u64 iova,
			   const struct sk_buff *skb, int skb_off, u32 len,
			   enum mroce_mr_err *why)
{
	struct mroce_copy c = { .skb = skb, .skb_off = skb_off };
	int err, tries;

	for (tries = 0; tries < 2; tries++) {
		err = __mroce_rkey_pin(qp, &qp->wr_pin, rkey,
				       IB_ACCESS_REMOTE_WRITE, iova, len, why);
		if (unlikely(err))
			return err;
		err = __mroce_mr_pin_walk(&qp->wr_pin, iova, len,
					  __mroce_chunk_skb_to_mr, &c, why);
		if (likely(err != -ESTALE))
			return err;
		/* Stale since it was cached: look the rkey up again (once). */
		mroce_mr_unpin(&qp->wr_pin);
	}
	return -EACCES;
}

int mroce_chunk_to_mr(void *priv, struct page *page, unsigned int off,
		      unsigned int len)
{
	struct mroce_copy *c = priv;

	memcpy_to_page(page, off, c->src, len);
	c->src += len;
	return 0;
}

int mroce_chunk_skb_to_mr(void *priv, struct page *page, unsigned int off,
			  unsigned int len)
{
	return __mroce_chunk_skb_to_mr(priv, page, off, len);
}

/* Find an FRWR MR of @pd by its full key; NULL if none. Referenced. */
static struct mroce_mr *mroce_frwr_get(struct mroce_dev *mdev,
				       struct ib_pd *pd, u32 key)
{
	struct mroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&mdev->mr_xa, mroce_key_index(key));
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	if (mr && (mr->type != MROCE_MR_FAST || mr->ibmr.pd != pd)) {
		mroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

static int mroce_mr_invalidate(struct mroce_dev *mdev, struct ib_pd *pd,
			       u32 key)
{
	struct mroce_mr *mr = mroce_frwr_get(mdev, pd, key);
	unsigned long flags;
	int err = 0;

	if (!mr)
		return -EINVAL;
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != key) {
		err = -EINVAL;
	} else {
		write_seqcount_begin(&mr->seq);
		mr->valid = false;
		mr->gen++;
		write_seqcount_end(&mr->seq);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	mroce_mr_put(mr);
	return err;
}

/**
 * mroce_mr_remote_invalidate() - a Send with Invalidate arrived for @qp
 * @qp: the receiving QP
 * @rkey: the key the peer asked us to invalidate
 *
 * Return: IB_WC_SUCCESS, or IB_WC_REM_INV_REQ_ERR if @rkey does not name a
 * fast-register MR of the QP's PD.
 */
enum ib_wc_status mroce_mr_remote_invalidate(struct mroce_qp *qp, u32 rkey)
{
	if (mroce_mr_invalidate(mroce_qp_dev(qp), qp->ibqp.pd, rkey))
		return IB_WC_REM_INV_REQ_ERR;
	return IB_WC_SUCCESS;
}

/**
 * mroce_exec_local_inv() - execute an IB_WR_LOCAL_INV in SQ order
 * @qp: the QP
 * @swqe: the WQE
 *
 * Return: the completion status.
 */
enum ib_wc_status mroce_exec_local_inv(struct mroce_qp *qp,
				       const struct mroce_swqe *swqe)
{
	if (mroce_mr_invalidate(mroce_qp_dev(qp), qp->ibqp.pd,
				swqe->ex.invalidate_rkey))
		return IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

/**
 * mroce_exec_reg_mr() - execute an IB_WR_REG_MR in SQ order
 * @qp: the QP
 * @swqe: the WQE (iova and length were taken from the MR when posted)
 *
 * Return: the completion status.
 */
enum ib_wc_status mroce_exec_reg_mr(struct mroce_qp *qp,
				    const struct mroce_swqe *swqe)
{
	struct mroce_mr *mr = swqe->wr.reg.mr;
	unsigned int shift, fbo;
	enum ib_wc_status status = IB_WC_SUCCESS;
	unsigned long flags;
	u64 span;

	if (mr->ibmr.pd != qp->ibqp.pd ||
	    mroce_key_index(swqe->wr.reg.key) != mroce_key_index(mr->key) ||
	    !mroce_access_ok(swqe->wr.reg.access))
		return IB_WC_LOC_PROT_ERR;

	shift = ilog2(mr->ibmr.page_size);
	fbo = swqe->wr.reg.iova & ((1ULL << shift) - 1);

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->valid) {
		/* IBTA: a fast register needs the MR in the free state. */
		status = IB_WC_LOC_QP_OP_ERR;
	} else if (check_add_overflow(swqe->wr.reg.length, (u64)fbo, &span) ||
		   span > ((u64)mr->npages << shift)) {
		status = IB_WC_LOC_LEN_ERR;
	} else {
		write_seqcount_begin(&mr->seq);
		mr->key = swqe->wr.reg.key;
		mr->access = swqe->wr.reg.access;
		mr->iova = swqe->wr.reg.iova;
		mr->length = swqe->wr.reg.length;
		mr->page_shift = shift;
		mr->offset = fbo;
		mr->valid = true;
		mr->gen++;
		write_seqcount_end(&mr->seq);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return status;
}
