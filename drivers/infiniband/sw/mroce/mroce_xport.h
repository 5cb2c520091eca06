/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hooks the verbs layer calls into the wire transport, and the places
 * the transport keeps its own state inside verbs objects.
 *
 * The verbs layer (mroce_verbs.h) owns every RDMA object, the user-shared
 * rings and the kernel shadows of work requests. The transport owns the
 * wire: connections, paths, segmentation, acknowledgements and placement.
 * This header is the verbs -> transport direction; mroce_verbs.h documents
 * the transport -> verbs direction (lookups, fetch/complete, copy helpers).
 * The transport's own design (contexts, locking, lifetime) is described in
 * docs/transport.md and mroce_peer.h.
 *
 * Calling context of each hook (no verbs spinlock is ever held across one):
 *
 *   mroce_xport_qp_create()   process context, before the QP is visible to
 *                             lookups. Failure aborts the create.
 *   mroce_xport_qp_destroy()  process context, after the QP was removed
 *                             from lookups and before its memory and
 *                             rings are freed. On return the transport
 *                             holds no reference and no pointer into it.
 *   mroce_xport_qp_modify()   process context, qp->modify_mutex held,
 *                             attributes validated, before the new state
 *                             and attributes are committed. An error
 *                             aborts the modify with the QP unchanged.
 *   mroce_xport_qp_error()    process context, qp->modify_mutex held, when
 *                             the QP entered ERR by some other route than
 *                             modify_qp (bad WQE, CQ overflow, hostile
 *                             ring). After it returns the verbs layer
 *                             flushes every outstanding WQE; the transport
 *                             must not complete them any more.
 *   mroce_xport_sq_kick()     any context (kernel ULPs post from softirq and
 *                             hard irq): new send WQEs are ready for
 *                             mroce_sq_fetch(). Must not sleep.
 *   mroce_xport_rq_kick()     any context: receive WQEs were posted to the
 *                             QP's own RQ (resume after RNR). Must not sleep.
 *   mroce_xport_srq_kick()    any context: receive WQEs were posted to an SRQ.
 *
 * Device and module setup (called from mroce_dev.c / mroce_main.c):
 *
 *   mroce_xport_init()/exit()          module load/unload
 *   mroce_xport_dev_init()             process context, before the device
 *                                      is registered
 *   mroce_xport_dev_fail()             netdev notifier, NETDEV_UNREGISTER:
 *                                      every QP fails now
 *   mroce_xport_dev_fini()             ops.dealloc_driver: every QP is gone
 */
#ifndef MROCE_XPORT_H
#define MROCE_XPORT_H

#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/ratelimit.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "mroce_hint.h"
#include "mroce_stream.h"

struct mroce_dev;
struct mroce_qp;
struct mroce_srq;
struct mroce_swqe;
struct mroce_rwqe;
struct mroce_peer;
struct mroce_netns;

/* xport.hint_flags */
enum {
	MROCE_HINT_PASS,	/* a CPU runs a hint pass */
	MROCE_HINT_ARMED,	/* the quiet timer is armed */
};

/*
 * A rate-hint pass in progress (mroce_ack.c; MROCE_HINT_PASS held, and
 * hint_lock from mroce_ack_hint_start() on): a receive burst begins it
 * under its peer's lock and finishes it after the unlock.
 */
struct mroce_hint_run {
	struct mroce_hint_cfg	cfg;
	u64			now;
	u64			elapsed;	/* ns since the last pass */
	u64			period;		/* ns sampled, elapsed clamped */
	u32			n;		/* entries sampled so far */
	u32			rtt_min;	/* least base RTT among them */
	bool			quiet;		/* a whole period went quiet */
	bool			live;		/* started: hint_lock held */
};

/* Per-device transport state (struct mroce_dev.xport). */
struct mroce_xport_dev {
	spinlock_t		peer_lock;	/* writers of peers[] */
	DECLARE_HASHTABLE(peers, 6);		/* remote address -> peer, RCU */
	u32			n_peers;
	struct mroce_netns	*nn;		/* the UDP sockets of our netns */
	struct ratelimit_state	nak_rs;		/* NAKs to unknown connections */
	/* CONN_REQs for peers we do not know yet, opened in process context. */
	struct sk_buff_head	accept_q;
	struct work_struct	accept_work;
	bool			closing;
	/*
	 * Rate hints (mroce_ack.c): the timer for a device that fell quiet,
	 * the start of the period the next pass samples (written under
	 * MROCE_HINT_PASS), and the pass's buffer (hint_cap entries, then as many
	 * snapshots of their peers), which grows in process context under
	 * hint_lock; the drain rate the passes learnt (hint_state, under
	 * MROCE_HINT_PASS, which every pass holds) and the peer-table bucket
	 * where the next pass starts its walk (hint_bkt, under hint_lock).
	 */
	struct hrtimer		hint_timer;
	u64			hint_at;
	unsigned long		hint_flags;	/* MROCE_HINT_* bits */
	spinlock_t		hint_lock;
	u32			hint_cap;
	struct mroce_hint_entry	*hint_buf;
	struct mroce_hint_state	hint_state;
	u32			hint_bkt;
	struct mroce_hint_run	hint_run;	/* under MROCE_HINT_PASS */
};

/* A stream PSN's slot in the per-QP arrays of MROCE_STREAM_WINDOW entries. */
#define MROCE_STREAM_MASK	(MROCE_STREAM_WINDOW - 1)

/*
 * What the requester remembers about one chunk of a QP's outgoing stream,
 * indexed by stream PSN modulo the stream window, so that a lost chunk can
 * be rebuilt byte-identical without keeping its packet.
 */
struct mroce_chunk {
	u32	ref;		/* REQ: SSN of the send WQE; RESP: read ordinal */
	u32	off;		/* msg_offset */
	u16	len;		/* payload bytes */
	u8	kind;		/* enum mroce_chunk_kind */
	u8	flags;		/* wire SOM/EOM/SE */
	/* Why and where it was last lost, for mroce_retransmit (mroce_trace.c). */
	u8	lost_why;	/* enum mroce_retx_reason */
	u8	lost_path;	/* path id, MROCE_TRACE_NO_PATH if unknown */
	u8	lost_gen;
	u32	lost_psn;	/* path PSN */
};

/* A message arriving into a receive WQE, by RQ ordinal. */
struct mroce_rmsg {
	struct mroce_rwqe	*rwqe;
	u32			len;		/* message length, set at EOM */
	u32			ex;		/* immediate data or invalidated rkey */
	u32			eom_psn;
	u8			flags;		/* MROCE_RMSG_* */
};

/* A READ or ATOMIC request this QP answers, by read ordinal. */
struct mroce_rdreq {
	u64	va;
	u64	swap_add;
	u64	compare;
	u64	orig;		/* ATOMIC: the value before the operation */
	u32	rkey;
	u32	length;
	u32	ssn;
	u32	ord;		/* read ordinal (msn) */
	u32	req_psn;	/* stream PSN of the request */
	u32	sent;		/* response bytes segmented */
	u32	last_psn;	/* stream PSN of the last response chunk */
	u8	op;		/* MROCE_OP_READ_REQ, or the atomic op + 1 */
	u8	state;		/* enum mroce_rd_state */
};

/* The transport's part of a QP; see mroce_peer.h for who touches what. */
struct mroce_qp_xport {
	struct mroce_peer	*peer;		/* from RTR on */
	struct list_head	peer_node;	/* peer->qps */
	struct list_head	tx_node;	/* peer->tx_list: has work */
	struct list_head	comp_node;	/* peer->comp_list: check */
	u8			state;		/* enum mroce_xqp_state */
	u8			gen;		/* cookie generation */
	bool			kicked;		/* doorbell left for tx_work */
	u64			bound_nonce;	/* peer incarnation, 0 = none */
	bool			stx_live;	/* a stream PSN was assigned */
	bool			srx_live;	/* a chunk was accepted */

	/* Attributes the data path needs, cached at modify time. */
	u32			remote_qpn;
	u8			rnr_retry;
	u8			min_rnr_timer;
	u8			max_rd;		/* outstanding READ/ATOMIC we issue */
	u8			max_dest_rd;	/* ... we answer */
	int			access;		/* qp_access_flags: remote ops allowed */

	/* Requester. */
	struct mroce_stx	stx;
	struct mroce_chunk	*chunks;	/* MROCE_STREAM_WINDOW entries */
	unsigned long		*resend;	/* bit per chunk to send again */
	u32			n_resend;
	u32			sq_done;	/* oldest SSN not completed by us */
	u32			sq_next;	/* next SSN mroce_sq_fetch() gives */
	struct mroce_swqe	*cur;		/* WQE being segmented */
	u32			send_msn;	/* next RQ ordinal we consume */
	u32			rd_next;	/* next read ordinal we issue */
	u32			rd_done;	/* oldest read ordinal not completed */
	u32			*rd_ssn;	/* read ordinal -> SSN */
	u8			rnr_left;
	u64			hold_until;	/* no resends before (RNR, window) */

	/* Responder. */
	struct mroce_srx	srx;
	struct mroce_rmsg	*rmsg;
	u32			rmsg_mask;
	u32			rq_base;	/* oldest RQ ordinal not completed */
	u32			rq_taken;	/* ordinals with a receive WQE */
	struct mroce_rdreq	*rd;		/* MROCE_RD_SLOTS entries */
	u32			rd_exec;	/* next read ordinal to execute */
	u32			rd_resp;	/* next read ordinal to answer */
	/*
	 * The refusal that failed the QP (IB class C), kept while it is DEAD:
	 * later chunks of that message get its NAK code, not UNKNOWN_STREAM
	 * (mroce_rx_stream()). 0 = none; cleared on entering DEAD.
	 */
	u8			refused_code;	/* enum mroce_nak_code */
	bool			refused_answer;	/* READ_RESP/ATOMIC_RESP ssn */
	u32			refused_ssn;
};

/* The transport's part of a send WQE. */
struct mroce_swqe_xport {
	u32	first_psn;
	u32	last_psn;
	u32	sent;		/* bytes segmented */
	u32	msn;		/* RQ ordinal or read ordinal */
	u32	resp_psn;	/* READ/ATOMIC: stream PSN of the final response */
	u8	state;		/* enum mroce_swqe_state */
};

struct mroce_rwqe_xport {
};

int mroce_xport_init(void);
void mroce_xport_exit(void);
/* Frees the ACK buffers kept per CPU (mroce_ack.c). */
void mroce_ack_exit(void);
int mroce_xport_dev_init(struct mroce_dev *mdev);
bool mroce_xport_dev_fail(struct mroce_dev *mdev);
void mroce_xport_dev_fini(struct mroce_dev *mdev);

int mroce_xport_qp_create(struct mroce_qp *qp);
void mroce_xport_qp_destroy(struct mroce_qp *qp);
int mroce_xport_qp_modify(struct mroce_qp *qp, const struct ib_qp_attr *attr,
			  int mask, enum ib_qp_state old_state,
			  enum ib_qp_state new_state);
void mroce_xport_qp_error(struct mroce_qp *qp);
void mroce_xport_sq_kick(struct mroce_qp *qp);
void mroce_xport_rq_kick(struct mroce_qp *qp);
void mroce_xport_srq_kick(struct mroce_srq *srq);

#endif /* MROCE_XPORT_H */
