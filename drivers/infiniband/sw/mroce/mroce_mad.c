// SPDX-License-Identifier: GPL-2.0
/*
 * The QP1 MAD tunnel and the addressing rules of datagrams (mroce_ud.h).
 *
 * RoCE v2 carries the management QP's MADs as ordinary UD packets to QP1.
 * mroce has its own wire, so QP1 traffic travels as the MAD opcode
 * (docs/protocol.md §3.10): dst_qpn 1, exactly one 256-byte MAD, on the
 * mroce UDP port. That is all ib_mad needs to run the IB connection
 * manager (ib_cm, rdma_cm's REQ/REP/RTU/DREQ and SIDR for UD) over an mroce
 * link unchanged; the management datagram class does not matter here.
 *
 * Q_Keys follow the IBA (10.2.5, 11.4.1.1): a send whose Q_Key has the high
 * bit set (a "controlled" key, QP1's 0x80010000 among them) uses the QP's
 * own Q_Key instead, so an unprivileged QP cannot forge QP1's; a receive is
 * accepted only with the receiving QP's Q_Key. There is one partition, the
 * default one: P_Key 0xffff is sent, and any full or limited member of the
 * default partition is accepted.
 */
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_mad.h>

#include "mroce_counters.h"
#include "mroce_memo.h"
#include "mroce_ud.h"

#define MROCE_QKEY_CONTROLLED	0x80000000u

/* The Q_Key of a QP, as modify_qp last set it. */
static u32 mroce_mad_qp_qkey(struct mroce_qp *qp)
{
	return READ_ONCE(qp->attr.qkey);
}

/**
 * mroce_mad_tx_prep() - the wire headers of a datagram
 * @qp: the sending UD or GSI QP
 * @swqe: its send WQE (IB_WR_SEND or IB_WR_SEND_WITH_IMM, a UD address)
 * @pkt: filled: opcode, QPNs, Q_Key, P_Key, immediate
 *
 * Return: IB_WC_SUCCESS, or the completion error of a datagram the wire
 * cannot carry (QP0, a MAD that is not exactly one MAD).
 */
enum ib_wc_status mroce_mad_tx_prep(struct mroce_qp *qp,
				    const struct mroce_swqe *swqe,
				    struct mroce_pkt *pkt)
{
	u32 dqpn = swqe->wr.ud.remote_qpn & MROCE_QPN_MASK;
	u32 qkey = swqe->wr.ud.remote_qkey;
	bool imm = swqe->opcode == IB_WR_SEND_WITH_IMM;

	memset(pkt, 0, sizeof(*pkt));
	if (dqpn == 0)
		return IB_WC_LOC_QP_OP_ERR;	/* no QP0 on Ethernet */
	if (dqpn == MROCE_GSI_QPN) {
		if (imm)
			return IB_WC_LOC_QP_OP_ERR;
		if (swqe->length != MROCE_MAD_LEN)
			return IB_WC_LOC_LEN_ERR;
		pkt->c.opcode = MROCE_OP_MAD;
	} else {
		pkt->c.opcode = imm ? MROCE_OP_UD_SEND_IMM : MROCE_OP_UD_SEND;
		if (swqe->send_flags & IB_SEND_SOLICITED)
			pkt->c.flags = MROCE_F_SE;
		if (imm)
			pkt->u.ud.imm = be32_to_cpu(swqe->ex.imm_data);
	}
	if (qkey & MROCE_QKEY_CONTROLLED)
		qkey = mroce_mad_qp_qkey(qp);

	pkt->u.ud.dst_qpn = dqpn;
	pkt->u.ud.src_qpn = mroce_qpn(qp);
	pkt->u.ud.qkey = qkey;
	pkt->u.ud.pkey = IB_DEFAULT_PKEY_FULL;
	return IB_WC_SUCCESS;
}

/**
 * mroce_mad_rx_allowed() - may @qp receive this datagram
 * @qp: the UD or GSI QP its dst_qpn names
 * @pkt: the decoded UD_SEND, UD_SEND_IMM or MAD
 *
 * Return: whether the Q_Key and P_Key admit it.
 */
bool mroce_mad_rx_allowed(struct mroce_qp *qp, const struct mroce_pkt *pkt)
{
	const struct mroce_ud *u = &pkt->u.ud;

	if ((u->pkey & IB_DEFAULT_PKEY_PARTIAL) != IB_DEFAULT_PKEY_PARTIAL)
		return false;
	return u->qkey == mroce_mad_qp_qkey(qp);
}

/*
 * The DREQ's insurance.
 *
 * ib_cm sends a DREQ again until the DREP comes, but a consumer that
 * destroys its cm_id right after rdma_disconnect() (rping and most
 * user-space clients do) cancels those retries: cm_destroy_id() in
 * DREQ_SENT cancels the MAD and enters timewait. One lost DREQ then leaves
 * the peer's cm_id ESTABLISHED for good, and a peer that waits for
 * RDMA_CM_EVENT_DISCONNECTED waits forever (a flushed QP does not tell
 * rdma_cm anything). So the tunnel keeps a copy of every CM DREQ it sends
 * and sends it again until a DREP with the same transaction ID comes back,
 * MROCE_DREQ_TRIES times at most. The peer's ib_cm answers every DREQ with
 * a DREP, also a duplicate and also one for an ID it no longer has
 * (cm_issue_drep()), and a duplicate DREQ changes nothing there.
 */
#define MROCE_CM_ATTR_REQ	cpu_to_be16(0x0010)
#define MROCE_CM_ATTR_MRA	cpu_to_be16(0x0011)
#define MROCE_CM_ATTR_REJ	cpu_to_be16(0x0012)
#define MROCE_CM_ATTR_REP	cpu_to_be16(0x0013)
#define MROCE_CM_ATTR_RTU	cpu_to_be16(0x0014)
#define MROCE_CM_ATTR_DREQ	cpu_to_be16(0x0015)
#define MROCE_CM_ATTR_DREP	cpu_to_be16(0x0016)
#define MROCE_CM_ATTR_SIDR_REQ	cpu_to_be16(0x0017)
#define MROCE_CM_ATTR_SIDR_REP	cpu_to_be16(0x0018)
#define MROCE_CM_ATTR_APR	cpu_to_be16(0x001a)
#define MROCE_DREQ_TRIES	10
#define MROCE_DREQ_FIRST_MS	250	/* the first gap; it doubles up to: */
#define MROCE_DREQ_GAP_MS	2000
#define MROCE_DREQ_MAX		64	/* kept at once, all devices */

struct mroce_dreq {
	struct mroce_memo_rec	rec;	/* first: the memo frees it */
	struct mroce_rx_meta	to;
	__be64			tid;
	unsigned long		due;
	unsigned int		gap_ms;
	unsigned int		tries;
	u32			len;
	u8			pkt[];	/* from the mroce header on */
};
static_assert(offsetof(struct mroce_dreq, rec) == 0);

/*
 * Full, a new DREQ goes uninsured (ib_cm's own retries still run for a
 * consumer that keeps its cm_id), and counts in cm_dreq_uninsured, as
 * does each of ib_cm's resends of it that finds the memo still full. A
 * bound is what matters: a peer that never answers must not grow the memo
 * without end. A copy ends at its DREP, or one gap (2 s) after its last
 * try, counted in cm_dreq_expired; not by age. ib_cm's own resend of that
 * DREQ after it expired (a consumer that kept its cm_id) makes a new copy:
 * ib_cm's retries bound that. mroce_cm.sh fills the memo and lets a copy
 * expire (docs/testing.md).
 */
static DEFINE_MROCE_MEMO(mroce_dreqs, MROCE_DREQ_MAX, 0, false);
static void mroce_dreq_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(mroce_dreq_work, mroce_dreq_work_fn);

/*
 * The work runs when the earliest copy is due: mroce_dreq_arm() queues it
 * for a copy's due time only if that comes before the time it is queued
 * for, never later (a new copy moving it to 250 ms after itself would
 * postpone every older copy's resend for as long as new copies keep
 * coming less than 250 ms apart; mroce_cm.sh). Both under the memo's
 * lock; armed from the queueing until the work takes the lock, so the
 * work, once it runs, sees every copy added before it took the lock.
 */
static bool mroce_dreq_armed;
static unsigned long mroce_dreq_at;	/* jiffies; while armed */

static void mroce_dreq_arm(unsigned long due)
{
	unsigned long now = jiffies;

	lockdep_assert_held(&mroce_dreqs.lock);
	if (mroce_dreq_armed && !time_before(due, mroce_dreq_at))
		return;
	mod_delayed_work(mroce_wq, &mroce_dreq_work,
			 time_after(due, now) ? due - now : 0);
	mroce_dreq_armed = true;
	mroce_dreq_at = due;
}

/* The header of a CM MAD (any attribute), or NULL. */
static const struct ib_mad_hdr *mroce_mad_cm(const void *mad, u32 len)
{
	const struct ib_mad_hdr *h = mad;

	if (len < sizeof(*h) || h->mgmt_class != IB_MGMT_CLASS_CM ||
	    h->method != IB_MGMT_METHOD_SEND)
		return NULL;
	return h;
}

static void mroce_dreq_xmit(struct mroce_dreq *d)
{
	struct sk_buff *skb;

	lockdep_assert_held(&mroce_dreqs.lock);
	skb = mroce_net_alloc_skb(d->rec.mdev, d->len, GFP_ATOMIC);
	if (!skb)
		return;		/* the next try */
	memcpy(skb_put(skb, d->len), d->pkt, d->len);
	/* The netdev may have changed namespace since the first send. */
	d->to.net = dev_net(d->rec.mdev->ndev);
	mroce_counter_inc(d->rec.mdev, MROCE_CNT_CM_DREQ_RESENT);
	mroce_net_xmit_oneshot(d->rec.mdev, &d->to, skb);
}

static void mroce_dreq_work_fn(struct work_struct *work)
{
	unsigned long now = jiffies, next = 0;
	struct mroce_dreq *d, *tmp;
	bool pending = false;

	spin_lock_bh(&mroce_dreqs.lock);
	mroce_dreq_armed = false;
	mroce_memo_for_each(d, tmp, &mroce_dreqs, rec) {
		if (time_before_eq(d->due, now)) {
			if (d->tries++ >= MROCE_DREQ_TRIES) {
				/* No DREP in one gap after the last try. */
				mroce_counter_inc(d->rec.mdev,
						  MROCE_CNT_CM_DREQ_EXPIRED);
				mroce_memo_drop(&mroce_dreqs, &d->rec);
				continue;
			}
			mroce_dreq_xmit(d);
			d->due = now + msecs_to_jiffies(d->gap_ms);
			d->gap_ms = min(2 * d->gap_ms, MROCE_DREQ_GAP_MS);
		}
		if (!pending || time_before(d->due, next))
			next = d->due;
		pending = true;
	}
	if (pending)
		mroce_dreq_arm(time_after(next, now) ? next : now + 1);
	spin_unlock_bh(&mroce_dreqs.lock);
}

/**
 * mroce_mad_tx_note() - a MAD is about to leave through the tunnel
 * @mdev: the sending device
 * @to: its route (mroce_net_xmit_oneshot())
 * @skb: the packet, from the mroce header on
 * @hdr: the length of the mroce header (the MAD follows)
 *
 * Keeps a copy of a CM DREQ (see above). A REP, REJ or SIDR REP answers
 * the peer's request: the neighbour code need not remember the asker any
 * longer (mroce_net_note_asker()). Only the GSI QP's MADs count: any UD
 * QP, a user's too, may send a datagram to QPN 1 (the peer's GSI QP drops
 * it for its Q_Key), and one shaped as a DREQ must neither take a place
 * in the memo nor be resent. Softirqs off.
 */
void mroce_mad_tx_note(struct mroce_dev *mdev, const struct mroce_rx_meta *to,
		       const struct sk_buff *skb, u32 hdr)
{
	struct mroce_dreq *d, *tmp;
	const struct ib_mad_hdr *h;
	struct mroce_pkt pkt;

	h = mroce_mad_cm(skb->data + hdr, skb->len - hdr);
	if (!h)
		return;
	if (mroce_decode(skb->data, skb->len, &pkt) != MROCE_WIRE_OK ||
	    pkt.u.ud.src_qpn != MROCE_GSI_QPN)
		return;
	if (h->attr_id == MROCE_CM_ATTR_REP ||
	    h->attr_id == MROCE_CM_ATTR_REJ ||
	    h->attr_id == MROCE_CM_ATTR_SIDR_REP)
		mroce_net_asker_answered(mdev, to);
	if (h->attr_id != MROCE_CM_ATTR_DREQ)
		return;
	spin_lock_bh(&mroce_dreqs.lock);
	mroce_memo_for_each(d, tmp, &mroce_dreqs, rec) {
		/* ib_cm's own retry: the copy is already kept. */
		if (d->rec.mdev == mdev && d->tid == h->tid)
			goto out;
	}
	/* Full: no copy to make and free again (the lock is held to the add). */
	if (!mroce_memo_has_room(&mroce_dreqs))
		goto uninsured;
	d = kmalloc(struct_size(d, pkt, skb->len), GFP_ATOMIC);
	if (!d)
		goto uninsured;
	d->to = *to;
	d->tid = h->tid;
	d->gap_ms = MROCE_DREQ_FIRST_MS;
	d->due = jiffies + msecs_to_jiffies(d->gap_ms);
	d->gap_ms *= 2;
	d->tries = 0;
	d->len = skb->len;
	memcpy(d->pkt, skb->data, skb->len);
	if (mroce_memo_add(&mroce_dreqs, &d->rec, mdev)) {
		mroce_dreq_arm(d->due);
		goto out;
	}
	kfree(d);	/* full: the add decides */
uninsured:
	mroce_counter_inc(mdev, MROCE_CNT_CM_DREQ_UNINSURED);
out:
	spin_unlock_bh(&mroce_dreqs.lock);
}

/*
 * A CM MAD that answers one we sent: the peer got ours. A REP answers our
 * REQ, an RTU our REP, a DREP our DREQ; an MRA, a REJ, an SIDR REP or an
 * APR answer something of ours too. (A REQ, a DREQ or a LAP proves
 * nothing about our direction.)
 */
static bool mroce_mad_cm_answer(const struct ib_mad_hdr *h)
{
	switch (h->attr_id) {
	case MROCE_CM_ATTR_MRA:
	case MROCE_CM_ATTR_REJ:
	case MROCE_CM_ATTR_REP:
	case MROCE_CM_ATTR_RTU:
	case MROCE_CM_ATTR_DREP:
	case MROCE_CM_ATTR_SIDR_REP:
	case MROCE_CM_ATTR_APR:
		return true;
	}
	return false;
}

/**
 * mroce_mad_rx_note() - a MAD arrived through the tunnel
 * @mdev: the receiving device
 * @meta: its outer addresses
 * @skb: its packet
 * @mad: the MAD
 * @len: its length
 *
 * A DREP ends the insurance of the DREQ it answers. A CM answer confirms
 * the neighbour entry towards its sender, or gives a FAILED one the
 * sender's MAC (mroce_net_confirm_sender()): nothing else does while a
 * connection is being set up, and an entry that lost REQs or REPs kept in
 * use for more than delay_first_probe_time (5 s) is probed by unicast
 * ARP, which loss can make FAILED just before the QP's RTR has the RDMA
 * core resolve the peer's MAC with a 1 s limit (docs/testing.md). A REQ or
 * SIDR REQ confirms nothing but teaches an entry without a usable address
 * its sender's MAC, and has it taught again should the entry fail before
 * our answer, when the server's RTR resolves it (mroce_net_note_asker()).
 * Called only for a MAD the GSI QP accepts (mroce_mad_rx_allowed()); a
 * forged DREP can at most end one insurance early, which leaves ib_cm's
 * own behaviour. Softirq context.
 */
void mroce_mad_rx_note(struct mroce_dev *mdev, const struct mroce_rx_meta *meta,
		       const struct sk_buff *skb, const void *mad, u32 len)
{
	struct mroce_dreq *d, *tmp;
	const struct ib_mad_hdr *h;

	h = mroce_mad_cm(mad, len);
	if (!h)
		return;
	if (mroce_mad_cm_answer(h))
		mroce_net_confirm_sender(mdev, meta, skb);
	else if (h->attr_id == MROCE_CM_ATTR_REQ ||
		 h->attr_id == MROCE_CM_ATTR_SIDR_REQ)
		mroce_net_note_asker(mdev, meta, skb);
	if (h->attr_id != MROCE_CM_ATTR_DREP)
		return;
	spin_lock_bh(&mroce_dreqs.lock);
	mroce_memo_for_each(d, tmp, &mroce_dreqs, rec) {
		if (d->rec.mdev == mdev && d->tid == h->tid) {
			mroce_memo_drop(&mroce_dreqs, &d->rec);
			break;
		}
	}
	spin_unlock_bh(&mroce_dreqs.lock);
}

/* The device goes: forget its DREQs and askers (none is sent after this). */
void mroce_mad_dev_fini(struct mroce_dev *mdev)
{
	mroce_net_forget_askers(mdev);
	mroce_memo_forget(&mroce_dreqs, mdev);
}

/* Module exit, every device gone. */
void mroce_mad_exit(void)
{
	cancel_delayed_work_sync(&mroce_dreq_work);
	WARN_ON(!mroce_memo_empty(&mroce_dreqs));
}
