// SPDX-License-Identifier: GPL-2.0
/*
 * Ring allocation and geometry; see mroce_queue.h for the sharing rules.
 */
#include <linux/cache.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "mroce.h"
#include "mroce_verbs.h"

/* Largest ring we build: bounds every shift below. */
#define MROCE_QUEUE_MAX_SLOTS	(1U << 20)
#define MROCE_QUEUE_MAX_ELEM	(1U << 16)

/**
 * mroce_queue_init() - allocate a ring
 * @q: the ring, zeroed by the caller
 * @uctx: the user context to share it with, or NULL for a kernel ring
 * @capacity: entries it must hold
 * @elem_size: bytes per entry; rounded up to a power of two of at least a
 *	       cache line, as librxe expects
 *
 * Return: 0 or a negative errno.
 */
int mroce_queue_init(struct mroce_queue *q, struct ib_ucontext *uctx,
		     u32 capacity, size_t elem_size)
{
	size_t hdr = uctx ? sizeof(struct rxe_queue_buf) : 0;
	struct mroce_mmap_entry *e;
	u32 slots;
	void *buf;

	BUILD_BUG_ON(sizeof(struct rxe_queue_buf) != 384);
	BUILD_BUG_ON(offsetof(struct rxe_queue_buf, producer_index) != 128);
	BUILD_BUG_ON(offsetof(struct rxe_queue_buf, consumer_index) != 256);

	if (capacity >= MROCE_QUEUE_MAX_SLOTS || elem_size > MROCE_QUEUE_MAX_ELEM)
		return -EINVAL;
	slots = mroce_queue_slots(capacity);
	q->log2_elem = order_base_2(max_t(size_t, elem_size, SMP_CACHE_BYTES));
	q->mask = slots - 1;
	q->size = hdr + ((size_t)slots << q->log2_elem);

	if (!uctx) {
		buf = kvzalloc(q->size, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
		q->data = buf;
		return 0;
	}

	/* Zeroed, page-granular, and marked mappable into user space. */
	buf = vmalloc_user(q->size);
	if (!buf)
		return -ENOMEM;
	q->ubuf = buf;
	q->data = q->ubuf->data;
	q->ubuf->log2_elem_size = q->log2_elem;
	q->ubuf->index_mask = q->mask;

	e = mroce_mmap_insert(uctx, buf, PAGE_ALIGN(q->size));
	if (IS_ERR(e)) {
		q->ubuf = NULL;
		q->data = NULL;
		return PTR_ERR(e);
	}
	q->mmap = e;
	/* librxe maps the whole allocation. */
	q->size = PAGE_ALIGN(q->size);
	return 0;
}

void mroce_queue_free(struct mroce_queue *q)
{
	if (q->mmap)
		mroce_mmap_remove(q->mmap);	/* frees the memory, eventually */
	else
		kvfree(q->data);
	memset(q, 0, sizeof(*q));
}

/* Back to empty, as after a QP is moved to RESET. */
void mroce_queue_reset(struct mroce_queue *q)
{
	if (!q->ubuf)
		return;
	mroce_queue_publish_producer(q, 0);
	mroce_queue_publish_consumer(q, 0);
}

/* What librxe needs to map a user ring. */
void mroce_queue_mminfo(const struct mroce_queue *q, struct mminfo *mi)
{
	memset(mi, 0, sizeof(*mi));
	if (!q->mmap)
		return;
	mi->offset = mroce_mmap_offset(q->mmap);
	mi->size = q->size;
}
