/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mroce verbs objects and the interface the transport builds on.
 *
 * Files
 * -----
 *   mroce_verbs.c   ops table, PD, per-device verbs state, object limits
 *   mroce_mr.c      memory regions: user (ib_umem), DMA, fast-register;
 *                   key lookup with bounds and rights checks; MR data walks;
 *                   pins (struct mroce_mr_pin in mroce_mr.h)
 *   mroce_cq.c      completion queues, notification, overflow
 *   mroce_qp.c      QP create/query/destroy and the QP state machine
 *   mroce_wqe.c     work requests: posting (kernel lists, user rings),
 *                   validation into kernel shadows, fetch/complete/take,
 *                   flush, and scatter-gather data movement
 *   mroce_srq.c     shared receive queues
 *   mroce_ah.c      address handles and address vectors
 *   mroce_queue.c   ring geometry (user rings in the rxe layout)
 *   mroce_mmap.c    mapping user rings
 *   mroce_xport.h   hooks into the transport (mroce_xport_stub.c for now)
 *
 * Work queues and shadows
 * -----------------------
 * Every send queue, receive queue and SRQ has a kernel-private shadow ring
 * of fixed-size slots (struct mroce_swqe / struct mroce_rwqe plus room for
 * the SGE list or inline data). Nothing the transport uses ever lives in
 * user-writable memory:
 *
 *   - Kernel QPs: post_send/post_recv validate each ib_*_wr and write it
 *     straight into the shadow.
 *   - User QPs: librxe writes rxe_send_wqe entries into the mmap'd SQ and
 *     rings the doorbell (post_send with no WRs); the doorbell copies each
 *     new entry, field by field and exactly once, into the shadow and
 *     validates the copy. Receive WQEs have no doorbell, so each one is
 *     copied and validated when the transport takes it.
 *
 * A send queue has three free-running counters: head (entries in the
 * shadow), fetch (handed to the transport) and tail (retired). The user
 * ring's consumer index is tail: it moves only when a WQE completes, so user
 * space can never have more than the SQ depth outstanding, and the shadow
 * slot of an in-flight WQE is never reused.
 *
 * The transport, per QP:
 *
 *   mroce_sq_fetch(qp)            next send WQE (stable pointer) or NULL
 *   mroce_sq_complete(qp, w, st)  in any order; CQEs are posted in SQ order
 *   mroce_rq_take(qp, &w)         next receive WQE (-EAGAIN = RNR)
 *   mroce_rq_complete(qp, w, ..)  in any order; CQEs are posted in RQ order
 *   mroce_qp_set_error(qp, fatal) the transport gives up on the QP
 *
 * Locking
 * -------
 * Order, outermost first:
 *
 *   1. qp->modify_mutex  (sleeping) modify_qp, destroy_qp and the deferred
 *      error work; mroce_xport_qp_modify()/_qp_error() run under it.
 *      qp->db_mutex (sleeping) nests inside: a user SQ doorbell copies
 *      WQEs into the shadow under it, outside the spinlocks.
 *   2. the transport's per-connection lock (owned by the transport). It may
 *      call every mroce_sq_*, mroce_rq_*, mroce_qp_get/put, mroce_mr_get/put
 *      and copy helper with it held.
 *   3. qp->state_lock    qp->state and the attributes query_qp reports.
 *      Readers on the data path use READ_ONCE(qp->state).
 *   4. qp->sq.lock | qp->rq.lock   never held together
 *   5. srq->rq.lock      (inside qp->rq.lock)
 *   6. mr->lock          FRWR key/state/bounds (leaf; taken alone)
 *   7. cq->lock          innermost
 *
 * All spinlocks are irq-safe: kernel ULPs may post from any context. No
 * verbs spinlock is held while calling a transport hook, a completion
 * handler or an event handler: completion handlers run after the posting
 * path dropped the QP and CQ locks, so a handler may poll the CQ and post
 * to the QP. Transport hooks are never called with qp->state_lock or a
 * queue lock held, so the transport may take its connection lock in them.
 *
 * Object lifetime against the transport: QP and MR lookups return a counted
 * reference; destroy_qp and dereg_mr remove the object from lookup, then
 * wait for the references to drain. QPs are looked up under the xarray lock
 * rather than RCU because the RDMA core frees a QP's memory as soon as
 * destroy_qp returns; MRs (our own allocations) are freed after an RCU grace
 * period and looked up under RCU. Pins (mroce_mr.h) take no reference per
 * use: a pin walk runs under rcu_read_lock() and checks the MR's generation,
 * and dereg_mr lets a grace period pass before it releases pinned pages.
 */
#ifndef MROCE_VERBS_H
#define MROCE_VERBS_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/seqlock.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/uverbs_ioctl.h>

#include "mroce.h"
#include "mroce_mr.h"
#include "mroce_queue.h"
#include "mroce_xport.h"

/*
 * Limits. mroce_init_caps() advertises these; the verbs code enforces the
 * same constants, so what query_device reports is exactly what works.
 */
#define MROCE_MAX_QP		0x10000
#define MROCE_MAX_QP_WR		16383		/* 2^14 slots, one kept empty */
#define MROCE_MAX_SGE		32
#define MROCE_MAX_SGE_RD	32
#define MROCE_MAX_INLINE	512		/* = MROCE_MAX_SGE * 16 */
#define MROCE_MAX_CQ		0x10000
#define MROCE_MAX_CQE		65535
#define MROCE_MAX_PD		0x10000
#define MROCE_MAX_MR		0x40000
#define MROCE_MAX_MR_SIZE	(1ULL << 36)	/* bounds the page array */
#define MROCE_MAX_FRWR_PAGES	512		/* nvme-rdma needs >= 257 */
#define MROCE_MAX_SRQ		0x10000
#define MROCE_MAX_SRQ_WR	16383
#define MROCE_MAX_AH		0x10000
#define MROCE_MAX_RD_ATOM	128		/* per QP, both directions */
#define MROCE_MAX_MSG_SIZE	(1U << 31)	/* byte_len is 32 bits */
#define MROCE_GSI_QPN		1
#define MROCE_MIN_QPN		16		/* 0..15 reserved */
#define MROCE_MAX_QPN		0xffffff	/* 24-bit QP numbers */
#define MROCE_PSN_MASK		0xffffff

/* ------------------------------------------------------------------ PD */

struct mroce_pd {
	struct ib_pd	ibpd;
};

static inline struct mroce_pd *to_mpd(struct ib_pd *pd)
{
	return container_of(pd, struct mroce_pd, ibpd);
}

/* ------------------------------------------------------------------ AV */

/*
 * Where to send: resolved from a RoCE rdma_ah_attr (GRH mandatory) when an
 * AH is created or a connected QP gets IB_QP_AV. The GIDs of a RoCE v2
 * device are IP addresses (rdma_gid2ip()); network_type says which family.
 */
struct mroce_av {
	union ib_gid		sgid;
	union ib_gid		dgid;
	u32			flow_label;
	u8			sgid_index;
	u8			hop_limit;
	u8			traffic_class;
	u8			sl;
	u8			dmac[ETH_ALEN];
	u8			network_type;	/* RDMA_NETWORK_IPV4 / _IPV6 */
};

struct mroce_ah {
	struct ib_ah		ibah;
	struct mroce_av		av;
	u32			ah_num;		/* never 0: librxe needs it */
};

static inline struct mroce_ah *to_mah(struct ib_ah *ah)
{
	return container_of(ah, struct mroce_ah, ibah);
}

/* ------------------------------------------------------------------ MR */

enum mroce_mr_type {
	MROCE_MR_DMA,		/* kernel virtual addresses, the local DMA lkey */
	MROCE_MR_USER,		/* pinned user memory (ib_umem) */
	MROCE_MR_FAST,		/* fast-register (FRWR): IB_WR_REG_MR/LOCAL_INV */
};

struct mroce_mr {
	struct ib_mr		ibmr;
	enum mroce_mr_type	type;

	/*
	 * What lookups check, under lock. For FRWR MRs these change when a
	 * REG_MR or invalidation executes; for the others they are fixed
	 * until dereg_mr. seq lets pin walks read them without writing to
	 * the MR's cacheline (written under lock, read by FRWR pin walks).
	 */
	spinlock_t		lock;
	seqcount_spinlock_t	seq;
	u32			key;		/* lkey == rkey */
	bool			valid;
	bool			dead;		/* dereg_mr started */
	bool			pinned;		/* ever pinned: dereg_mr waits */
	int			access;		/* IB_ACCESS_* */
	u64			iova;
	u64			length;

	/* Translation. USER: pages[]; FAST: page_list[] (kernel VAs). */
	unsigned int		page_shift;	/* FAST: log2 of ibmr.page_size */
	unsigned int		offset;		/* USER: iova's offset in pages[0] */
	u32			npages;
	u32			max_pages;
	struct page		**pages;
	u64			*page_list;
	struct ib_umem		*umem;

	/*
	 * Bumped by every REG_MR, invalidation and by dereg_mr: pins taken
	 * before miss. Each change of valid comes with one, so a pin whose
	 * gen still matches names the registration it checked.
	 */
	u32			gen;

	/*
	 * ref counts lookups and walks through them in progress (short);
	 * dereg_mr waits for them, then, if the MR was ever pinned, for an
	 * RCU grace period (pin walks run under rcu_read_lock()), and only
	 * then releases the pages. hold keeps the struct itself alive for
	 * pins (struct mroce_mr_pin), which never block dereg_mr.
	 */
	refcount_t		ref;
	refcount_t		hold;
	struct completion	released;
	struct rcu_head		rcu;
};

static inline struct mroce_mr *to_mmr(struct ib_mr *mr)
{
	return container_of(mr, struct mroce_mr, ibmr);
}

/* Why a key lookup failed: the transport NAKs and counts by reason. */
enum mroce_mr_err {
	MROCE_MR_OK,
	MROCE_MR_NO_KEY,	/* no MR with this key index */
	MROCE_MR_STALE_KEY,	/* index exists, key byte differs */
	MROCE_MR_INVALID,	/* FRWR not registered / invalidated */
	MROCE_MR_PD,		/* MR belongs to another PD */
	MROCE_MR_ACCESS,	/* rights missing */
	MROCE_MR_BOUNDS,	/* range outside the MR, or length overflow */
};

/*
 * Report a reason through a @why argument, which every function that takes
 * one allows to be NULL (the caller does not want it). Inlined with a
 * constant or known @why, the test folds away.
 */
static __always_inline void mroce_mr_why(enum mroce_mr_err *why,
					 enum mroce_mr_err err)
{
	if (why)
		*why = err;
}

/*
 * Called for each physically contiguous piece of a walked range, in order.
 * @page and @off address the first byte (off < PAGE_SIZE), len never
 * crosses a page. A non-zero return stops the walk and is returned.
 */
typedef int (*mroce_chunk_fn)(void *priv, struct page *page,
			      unsigned int off, unsigned int len);

struct mroce_mr *mroce_mr_get(struct mroce_dev *mdev, u32 key,
			      struct ib_pd *pd, int access, u64 iova, u64 len,
			      bool is_rkey, enum mroce_mr_err *why);
void mroce_mr_put(struct mroce_mr *mr);

/* Pins (struct mroce_mr_pin, mroce_mr.h): one check for a whole range. */
int mroce_mr_pin_sge(struct mroce_dev *mdev, struct ib_pd *pd, int access,
		     const struct ib_sge *sge, u64 iova, u64 len,
		     struct mroce_mr_pin *pin, enum mroce_mr_err *why);
void mroce_mr_unpin(struct mroce_mr_pin *pin);
int mroce_mr_pin_walk(struct mroce_mr_pin *pin, u64 iova, u64 len,
		      mroce_chunk_fn fn, void *priv, enum mroce_mr_err *why);
int mroce_mr_pin_copy_from(struct mroce_mr_pin *pin, u64 iova, void *dst,
			   u32 len, enum mroce_mr_err *why);
bool mroce_mr_pin_is_user(const struct mroce_mr_pin *pin);

/**
 * mroce_mr_pin_covers() - whether a pin already checked this access
 * @pin: the pin (may be empty)
 * @key: the key the access names
 * @access: the rights it needs
 * @iova: first byte
 * @len: bytes
 *
 * For callers that keep a pin per QP or per WQE as a cache: true means
 * mroce_mr_pin_walk() may be used for the access instead of a new pin.
 * Inline (session 46): a send WQE's walk asks once per SGE, and a call
 * costs a TB lookup at its return under TCG.
 */
static __always_inline bool
mroce_mr_pin_covers(const struct mroce_mr_pin *pin, u32 key, int access,
		    u64 iova, u64 len)
{
	return pin->mr && pin->key == key && !(access & ~pin->access) &&
	       iova >= pin->iova && len <= pin->len &&
	       iova - pin->iova <= pin->len - len;
}

/**
 * mroce_mr_pin_clone() - copy a pin whose MR is still as it was checked
 * @dst: the pin to fill (empty)
 * @src: a pin (not empty)
 *
 * For a cache of pins. The MR's generation has not moved since @src's
 * lookup, so its registration, and with it what that lookup checked for
 * @src's key, rights and range (state, PD, rights, bounds), still holds:
 * @dst is what a lookup now would have pinned for an access that
 * mroce_mr_pin_covers(@src, ...) accepts, by a user in the same PD. It
 * keeps @src's generation, so an invalidation after this makes its walks
 * fail as it would a fresh pin's. Reading gen without the MR's seqcount is
 * enough: the walks check it again under it.
 *
 * Return: false if the MR changed since @src was taken (@dst stays empty;
 * look the key up again).
 */
static __always_inline bool mroce_mr_pin_clone(struct mroce_mr_pin *dst,
					       const struct mroce_mr_pin *src)
{
	struct mroce_mr *mr = src->mr;

	if (READ_ONCE(mr->gen) != src->gen)
		return false;
	/* @src holds the struct, so hold is not zero. */
	refcount_inc(&mr->hold);
	*dst = *src;
	return true;
}

/* The responder's rkey caches (struct mroce_qp's wr_pin and rd_pin). */
int mroce_rkey_pin(struct mroce_qp *qp, struct mroce_mr_pin *pin, u32 rkey,
		   int access, u64 iova, u64 len, enum mroce_mr_err *why);
int mroce_rkey_copy_in_skb(struct mroce_qp *qp, u32 rkey, u64 iova,
			   const struct sk_buff *skb, int skb_off, u32 len,
			   enum mroce_mr_err *why);
int mroce_mr_walk(struct mroce_mr *mr, u64 iova, u64 len,
		  mroce_chunk_fn fn, void *priv);
enum ib_wc_status mroce_mr_remote_invalidate(struct mroce_qp *qp, u32 rkey);

/* Copy actors for mroce_mr_walk(), shared with the SGE walkers. */
struct mroce_copy {
	union {
		const void	*src;
		void		*dst;
	};
	const struct sk_buff	*skb;
	int			skb_off;
};

/* The largest copy mroce_copy_small() takes. */
#define MROCE_COPY_SMALL	64

/*
 * Copy @len bytes, at most MROCE_COPY_SMALL, between buffers that do not
 * overlap, without memcpy(). With a length known only at run time the
 * compiler calls memcpy(), which on CPUs with ERMS is "rep movsb": QEMU's
 * TCG, which every test and benchmark here runs under, executes that as
 * one block and one softmmu store per byte (session 46: 66 blocks for
 * the 64 B payload of an ib_write_lat packet). Two copies of a fixed
 * size, one from the start and one up to the end, cover every length
 * from that size to twice it (the bytes in the middle are written twice
 * with the same value); fixed sizes compile to plain moves.
 */
static __always_inline void mroce_copy_small(void *dst, const void *src,
					     unsigned int len)
{
	u8 *d = dst;
	const u8 *s = src;

	if (len >= 16) {
		if (len >= 32) {
			memcpy(d, s, 32);
			memcpy(d + len - 32, s + len - 32, 32);
		} else {
			memcpy(d, s, 16);
			memcpy(d + len - 16, s + len - 16, 16);
		}
	} else if (len >= 8) {
		memcpy(d, s, 8);
		memcpy(d + len - 8, s + len - 8, 8);
	} else if (len >= 4) {
		memcpy(d, s, 4);
		memcpy(d + len - 4, s + len - 4, 4);
	} else if (len) {
		/* 1, 2 or 3 bytes: the first, the middle and the last. */
		d[0] = s[0];
		d[len / 2] = s[len / 2];
		d[len - 1] = s[len - 1];
	}
}

/*
 * memcpy() for copies of any length: the small ones, which are most of
 * a latency benchmark's (a 64 B payload, a 16 B scatter list), through
 * mroce_copy_small().
 */
static __always_inline void mroce_memcpy(void *dst, const void *src,
					 size_t len)
{
	if (len <= MROCE_COPY_SMALL)
		mroce_copy_small(dst, src, len);
	else
		memcpy(dst, src, len);
}

int mroce_chunk_to_mr(void *priv, struct page *page, unsigned int off,
		      unsigned int len);
int mroce_chunk_skb_to_mr(void *priv, struct page *page, unsigned int off,
			  unsigned int len);

/* ------------------------------------------------------------------ CQ */

struct mroce_cq {
	struct ib_cq		ibcq;
	spinlock_t		lock;
	struct mroce_queue	q;	/* ib_uverbs_wc (user) or ib_wc slots */
	u32			prod;	/* free-running */
	u32			cons;	/* kernel CQs only */
	u8			notify;	/* 0, IB_CQ_SOLICITED, IB_CQ_NEXT_COMP */
	bool			overflow;
	bool			is_user;

	/*
	 * Work queues whose next completion is an error that did not fit
	 * (struct mroce_wq's cq_wait, under lock): room_work retires them
	 * once the consumer made room. Kernel polls and every arm kick it;
	 * user polls are invisible, so for a user CQ it also retries on its
	 * own, backing off to room_delay.
	 */
	struct list_head	waiters;
	struct delayed_work	room_work;
	unsigned long		room_delay;	/* jiffies */
};

static inline struct mroce_cq *to_mcq(struct ib_cq *cq)
{
	return container_of(cq, struct mroce_cq, ibcq);
}

/* What a posting path owes a CQ once it has dropped its locks. */
struct mroce_cq_ev {
	bool			notify;		/* call comp_handler */
	bool			overflow;	/* report IB_EVENT_CQ_ERR */
};

/* ----------------------------------------------------------- work queues */

/*
 * The kernel shadow of a send WQE. Stable from mroce_sq_fetch() until
 * mroce_sq_complete(); the transport reads it and owns only ->xport.
 */
struct mroce_swqe {
	u64			wr_id;
	u32			ssn;		/* free-running SQ index */
	u32			opcode;		/* enum ib_wr_opcode */
	u32			send_flags;	/* IB_SEND_* */
	u32			length;		/* message bytes */
	u32			num_sge;	/* 0 when inline */
	bool			is_inline;	/* data in inline_data[] */
	bool			done;		/* verbs-private */
	u8			status;		/* verbs-private */
	u32			pin_sge;	/* verbs-private: pin is sge[i] */
	struct mroce_mr_pin	pin;		/* verbs-private, see wqe.c */
	union {
		__be32		imm_data;
		u32		invalidate_rkey;
	} ex;
	union {
		struct {
			u64	remote_addr;
			u32	rkey;
		} rdma;
		struct {
			u64	remote_addr;
			u64	compare_add;
			u64	swap;
			u32	rkey;
		} atomic;
		struct {
			u32	remote_qpn;
			u32	remote_qkey;
			u16	pkey_index;
			struct mroce_av av;
		} ud;
		struct {
			struct mroce_mr *mr;	/* the ULP keeps it alive */
			u64	iova;		/* ib_mr iova/length at post */
			u64	length;
			u32	key;
			int	access;
		} reg;
	} wr;
	struct mroce_swqe_xport	xport;
	union {
		DECLARE_FLEX_ARRAY(struct ib_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/*
 * The kernel shadow of a receive WQE, from the QP's RQ or from an SRQ.
 * Stable from mroce_rq_take() until mroce_rq_complete(); the transport
 * reads the first four fields and owns only ->xport.
 */
struct mroce_rwqe {
	u64			wr_id;
	u32			seq;		/* free-running RQ/SRQ index */
	u32			num_sge;
	u32			length;		/* sum of the SGE lengths */

	/* verbs-private */
	bool			done;		/* completed; wc is valid */
	bool			solicited;
	bool			retired;	/* SRQ: the slot may be reused */
	struct mroce_qp		*owner;		/* SRQ: the QP that took it */
	struct list_head	qp_node;	/* SRQ: on owner->srq_taken */
	struct ib_wc		wc;
	u32			pin_sge;	/* pin is sge[pin_sge] */
	struct mroce_mr_pin	pin;		/* see mroce_wqe.c */

	struct mroce_rwqe_xport	xport;
	struct ib_sge		sge[];
};

struct mroce_wq {
	spinlock_t		lock;
	struct mroce_queue	uq;		/* the user ring (user objects) */
	void			*shadow;	/* kernel-private slots */
	u32			stride;		/* bytes per shadow slot */
	u32			mask;		/* slots - 1 */
	u32			max_wr;		/* capacity: mask */
	u32			max_sge;
	u32			max_inline;	/* SQ only */
	u32			head;		/* entries in the shadow */
	u32			fetch;		/* SQ: handed out; RQ: taken */
	u32			tail;		/* retired */
	u32			copying;	/* UD/GSI: handed out, not completed */
	bool			stopped;	/* SQ: a bad WQE blocks the rest */
	bool			parked;		/* the tail waits for CQ room */
	bool			is_send;	/* mroce_swqe slots, else rwqe */
	struct list_head	cq_wait;	/* on its CQ's waiters, cq->lock */
	/*
	 * The SQ of an RC QP: the last pin a send WQE took, which the next
	 * WQE's pin copies instead of a lookup (mroce_sge_pin()). Used under
	 * the transport's connection lock, like the WQE pins.
	 */
	struct mroce_mr_pin	lkey_cache;
};

static inline void *mroce_wq_slot(const struct mroce_wq *wq, u32 idx)
{
	return wq->shadow + (size_t)(idx & wq->mask) * wq->stride;
}

/* ------------------------------------------------------------------ SRQ */

struct mroce_srq {
	struct ib_srq		ibsrq;
	struct mroce_wq		rq;
	u32			limit;		/* armed when non-zero */
	u32			srq_num;
	bool			is_user;
};

static inline struct mroce_srq *to_msrq(struct ib_srq *srq)
{
	return container_of(srq, struct mroce_srq, ibsrq);
}

/* ------------------------------------------------------------------ QP */

struct mroce_qp {
	struct ib_qp		ibqp;
	bool			is_user;

	refcount_t		ref;
	struct completion	released;

	struct mutex		modify_mutex;
	struct mutex		db_mutex;	/* user SQ doorbell vs reset */
	spinlock_t		state_lock;
	enum ib_qp_state	state;
	bool			err_notified;	/* transport told; flush allowed */
	bool			sqd_notify;	/* SQ_DRAINED event still due */
	bool			destroying;	/* no more deferred error work */
	struct work_struct	err_work;

	/* Attributes as last modified; read under state_lock. */
	struct ib_qp_attr	attr;
	struct mroce_av		av;		/* RC primary path (IB_QP_AV) */
	bool			sq_sig_all;

	struct mroce_wq		sq;
	struct mroce_wq		rq;		/* unused with an SRQ */
	struct mroce_srq	*srq;
	struct list_head	srq_taken;	/* rwqes taken from srq, rq.lock */

	struct mroce_cq		*scq;
	struct mroce_cq		*rcq;

	/*
	 * The responder's one-entry rkey caches: incoming WRITEs and the
	 * READ responses we build look the rkey up once per message, not
	 * per packet (mroce_rkey_pin()). Used under the transport's
	 * connection lock; let go on reset and destroy.
	 */
	struct mroce_mr_pin	wr_pin;
	struct mroce_mr_pin	rd_pin;

	struct mroce_qp_xport	xport;
};

static inline struct mroce_qp *to_mqp(struct ib_qp *qp)
{
	return container_of(qp, struct mroce_qp, ibqp);
}

static inline struct mroce_dev *mroce_qp_dev(const struct mroce_qp *qp)
{
	return to_mdev(qp->ibqp.device);
}

static inline u32 mroce_qpn(const struct mroce_qp *qp)
{
	return qp->ibqp.qp_num;
}

/* UD and GSI: no transport holds their WQEs (see mroce_qp_wait_copies()). */
static inline bool mroce_qp_is_datagram(const struct mroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/* The QP of a send or receive queue (not of an SRQ's). */
static inline struct mroce_qp *mroce_wq_qp(struct mroce_wq *wq)
{
	return wq->is_send ? container_of(wq, struct mroce_qp, sq) :
			     container_of(wq, struct mroce_qp, rq);
}

/* Lookups (any context). */
struct mroce_qp *mroce_qp_get(struct mroce_dev *mdev, u32 qpn);
void mroce_qp_put(struct mroce_qp *qp);

/* Send queue. */
struct mroce_swqe *mroce_sq_fetch(struct mroce_qp *qp);
void mroce_sq_complete(struct mroce_qp *qp, struct mroce_swqe *swqe,
		       enum ib_wc_status status);

/* Receive queue (or the QP's SRQ). */
int mroce_rq_take(struct mroce_qp *qp, struct mroce_rwqe **out);
void mroce_rq_complete(struct mroce_qp *qp, struct mroce_rwqe *rwqe,
		       const struct ib_wc *wc, bool solicited);

/* Local operations, executed by the transport in SQ order. */
enum ib_wc_status mroce_exec_reg_mr(struct mroce_qp *qp,
				    const struct mroce_swqe *swqe);
enum ib_wc_status mroce_exec_local_inv(struct mroce_qp *qp,
				       const struct mroce_swqe *swqe);

/* State. */
void mroce_qp_set_error(struct mroce_qp *qp, bool fatal);
void mroce_qp_flush(struct mroce_qp *qp);
void mroce_qp_event(struct mroce_qp *qp, enum ib_event_type type);

/* Scatter-gather data movement at a byte offset into the message. */
int mroce_swqe_copy_out(struct mroce_qp *qp, const struct mroce_swqe *swqe,
			u32 msg_off, void *dst, u32 len,
			enum mroce_mr_err *why);
int mroce_swqe_walk(struct mroce_qp *qp, const struct mroce_swqe *swqe,
		    u32 msg_off, u32 len, mroce_chunk_fn fn, void *priv,
		    enum mroce_mr_err *why);
int mroce_swqe_copy_in(struct mroce_qp *qp, const struct mroce_swqe *swqe,
		       u32 msg_off, const void *src, u32 len,
		       enum mroce_mr_err *why);
int mroce_swqe_copy_in_skb(struct mroce_qp *qp, const struct mroce_swqe *swqe,
			   u32 msg_off, const struct sk_buff *skb, int skb_off,
			   u32 len, enum mroce_mr_err *why);
int mroce_rwqe_copy_in(struct mroce_qp *qp, const struct mroce_rwqe *rwqe,
		       u32 msg_off, const void *src, u32 len,
		       enum mroce_mr_err *why);
int mroce_rwqe_copy_in_skb(struct mroce_qp *qp, const struct mroce_rwqe *rwqe,
			   u32 msg_off, const struct sk_buff *skb, int skb_off,
			   u32 len, enum mroce_mr_err *why);

/* ------------------------------------------------------- internal glue */

/* The user context of a user verb, NULL for a kernel one. */
static inline struct ib_ucontext *mroce_uctx(struct ib_udata *udata)
{
	struct mroce_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct mroce_ucontext, ibuc);

	return uc ? &uc->ibuc : NULL;
}

extern const struct ib_device_ops mroce_verbs_ops;

void mroce_verbs_dev_init(struct mroce_dev *mdev);
void mroce_verbs_dev_fini(struct mroce_dev *mdev);

/* mroce_mmap.c */
struct mroce_mmap_entry *mroce_mmap_insert(struct ib_ucontext *uctx,
					   void *vaddr, size_t size);
void mroce_mmap_remove(struct mroce_mmap_entry *e);
u64 mroce_mmap_offset(const struct mroce_mmap_entry *e);
int mroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void mroce_mmap_free(struct rdma_user_mmap_entry *rdma);

/* mroce_ah.c */
int mroce_av_from_attr(struct mroce_av *av, const struct rdma_ah_attr *attr);
void mroce_av_to_attr(const struct mroce_av *av, struct rdma_ah_attr *attr);
int mroce_ah_lookup_av(struct mroce_dev *mdev, u32 ah_num, struct ib_pd *pd,
		       struct mroce_av *av);
int mroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int mroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int mroce_destroy_ah(struct ib_ah *ibah, u32 flags);

/* mroce_mr.c */
struct ib_mr *mroce_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *mroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *mroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);
int mroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/* mroce_cq.c */
int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct uverbs_attr_bundle *attrs);
int mroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int mroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int mroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int mroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int mroce_cq_post_locked(struct mroce_cq *cq, const struct ib_wc *wc,
			 bool solicited, struct mroce_cq_ev *ev);
void mroce_cq_dispatch(struct mroce_cq *cq, struct mroce_cq_ev *ev);
void mroce_cq_wait_locked(struct mroce_cq *cq, struct mroce_wq *wq);
void mroce_cq_unwait(struct mroce_cq *cq, struct mroce_wq *wq);

/*
 * The CQ helpers of every completion, inline: each call that is not costs
 * a TB lookup at its return under TCG (docs/experiments/s45-T-locks.md).
 */
/* The consumer index: the user's, read once, or the kernel poller's. */
static inline u32 mroce_cq_consumer(const struct mroce_cq *cq)
{
	return cq->is_user ? mroce_queue_user_consumer(&cq->q) : cq->cons;
}

/*
 * Completions not yet polled, counted from consumer index @from. Masked:
 * the user's index is published masked, and the count of a kernel CQ never
 * exceeds the mask anyway.
 */
static inline u32 mroce_cq_count(const struct mroce_cq *cq, u32 from)
{
	return (cq->prod - from) & cq->q.mask;
}

/*
 * mroce_cq_room_locked() - completions the CQ can take now
 * @cq: the CQ, locked
 *
 * Return: the free slots (a lower bound for a user CQ, whose consumer may
 * move on meanwhile); U32_MAX once the CQ overflowed, since its
 * completions are dropped anyway and nothing should wait for room.
 */
static inline u32 mroce_cq_room_locked(struct mroce_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	if (cq->overflow)
		return U32_MAX;
	return mroce_queue_capacity(&cq->q) -
	       mroce_cq_count(cq, mroce_cq_consumer(cq));
}

/*
 * Make the completions posted so far visible to user space: one release
 * store per burst, before the lock is dropped and before any handler runs
 * (mroce_cq_dispatch()), so a woken poller finds them.
 */
static inline void mroce_cq_publish_locked(struct mroce_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	if (cq->is_user)
		mroce_queue_publish_producer(&cq->q, cq->prod);
}

/* mroce_qp.c */
int mroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int mroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int mroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int mroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void mroce_qp_error_deferred(struct mroce_qp *qp);
void mroce_qp_send_error(struct mroce_qp *qp);
void mroce_qp_hostile(struct mroce_qp *qp);

/* mroce_wqe.c */
int mroce_wq_init(struct mroce_wq *wq, struct ib_ucontext *uctx, u32 max_wr,
		  u32 max_sge, u32 max_inline, bool is_send);
void mroce_wq_free(struct mroce_wq *wq);
void mroce_wq_reset(struct mroce_wq *wq);
size_t mroce_swqe_room(u32 max_sge, u32 max_inline);
int mroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int mroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int mroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
void mroce_sq_flush_pending(struct mroce_qp *qp);
void mroce_sq_flush_all(struct mroce_qp *qp);
void mroce_rq_flush_all(struct mroce_qp *qp);
void mroce_wq_retire(struct mroce_qp *qp, struct mroce_wq *wq);
void mroce_qp_release_srq(struct mroce_qp *qp);

/* mroce_srq.c */
int mroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int mroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int mroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int mroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
void mroce_srq_event(struct mroce_srq *srq, enum ib_event_type type);

#endif /* MROCE_VERBS_H */
