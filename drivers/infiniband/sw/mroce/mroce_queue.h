/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rings shared with user space in the rxe layout, and kernel-private rings.
 *
 * A user ring is a struct rxe_queue_buf header (include/uapi/rdma/
 * rdma_user_rxe.h) followed by 2^n slots of 2^k bytes, in vmalloc_user()
 * memory that librxe maps. The header carries log2_elem_size and index_mask
 * for librxe and the two indices, each on its own cache line. User space can
 * write all of it at any time, so the kernel:
 *   - keeps its own copy of the geometry and never reads it back;
 *   - owns exactly one index per ring (the consumer of a send/receive ring,
 *     the producer of a completion ring), kept as a private free-running
 *     counter and published masked with a release store;
 *   - reads the user's index once per use with an acquire load and masks it.
 * Kernel-private rings (kernel QPs and CQs) use the same geometry with no
 * header; only the kernel touches them.
 *
 * Free-running u32 counters make the arithmetic simple: the number of
 * entries between two counters is their difference, the slot of a counter
 * is counter & mask.
 */
#ifndef MROCE_QUEUE_H
#define MROCE_QUEUE_H

#include <linux/log2.h>
#include <linux/types.h>
#include <rdma/rdma_user_rxe.h>

struct mroce_mmap_entry;
struct ib_ucontext;

struct mroce_queue {
	void			*data;		/* slot 0 */
	struct rxe_queue_buf	*ubuf;		/* user ring header, or NULL */
	size_t			size;		/* bytes allocated */
	u32			mask;		/* slots - 1 */
	u32			log2_elem;	/* log2 of the slot size */
	struct mroce_mmap_entry	*mmap;		/* user rings: how librxe maps us */
};

/**
 * mroce_queue_slots() - number of slots for a requested capacity
 * @capacity: entries the ring must be able to hold
 *
 * One slot always stays empty so that full and empty differ.
 */
static inline u32 mroce_queue_slots(u32 capacity)
{
	return roundup_pow_of_two(capacity + 1);
}

static inline void *mroce_queue_slot(const struct mroce_queue *q, u32 idx)
{
	return q->data + ((size_t)(idx & q->mask) << q->log2_elem);
}

static inline u32 mroce_queue_capacity(const struct mroce_queue *q)
{
	return q->mask;
}

/*
 * The user-owned index of a ring, read once, with acquire semantics so the
 * slot contents the user wrote before moving it are visible, and masked so
 * a garbage value can never address outside the ring.
 */
static inline u32 mroce_queue_user_producer(const struct mroce_queue *q)
{
	/* Pairs with librxe's release store after it wrote the slot. */
	return smp_load_acquire(&q->ubuf->producer_index) & q->mask;
}

static inline u32 mroce_queue_user_consumer(const struct mroce_queue *q)
{
	/* Pairs with librxe's release store after it read the slot. */
	return smp_load_acquire(&q->ubuf->consumer_index) & q->mask;
}

/* Publish the kernel-owned index; slot writes before it become visible. */
static inline void mroce_queue_publish_producer(struct mroce_queue *q, u32 idx)
{
	/* Pairs with librxe's acquire load before it reads the slot. */
	smp_store_release(&q->ubuf->producer_index, idx & q->mask);
}

static inline void mroce_queue_publish_consumer(struct mroce_queue *q, u32 idx)
{
	/* Our reads of the slot are done before librxe may reuse it. */
	smp_store_release(&q->ubuf->consumer_index, idx & q->mask);
}

/**
 * mroce_queue_user_count() - entries the user has produced beyond @kidx
 * @q: a user send/receive ring
 * @kidx: the kernel's free-running index of the next entry to read
 */
static inline u32 mroce_queue_user_count(const struct mroce_queue *q, u32 kidx)
{
	return (mroce_queue_user_producer(q) - kidx) & q->mask;
}

int mroce_queue_init(struct mroce_queue *q, struct ib_ucontext *uctx,
		     u32 capacity, size_t elem_size);
void mroce_queue_free(struct mroce_queue *q);
void mroce_queue_reset(struct mroce_queue *q);
void mroce_queue_mminfo(const struct mroce_queue *q, struct mminfo *mi);

#endif /* MROCE_QUEUE_H */
