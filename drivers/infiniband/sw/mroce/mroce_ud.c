// SPDX-License-Identifier: GPL-2.0
/*
 * UD and GSI queue pairs on the wire (mroce_ud.h).
 *
 * Send: a kick drains the send queue, one packet per WQE, each sent to the
 * address in the WQE's address vector and completed once the IP layer has
 * it. Kicks come from every context a ULP posts in; IP output needs at most
 * softirq, so a kick from hard irq (or with interrupts off) is handed to a
 * work item, as is whatever exceeds one batch. Several CPUs may drain the
 * same queue at once: mroce_sq_fetch() hands each WQE to one of them and
 * mroce_sq_complete() restores SQ order for the completions.
 *
 * Receive: the destination QP is found by number, the datagram is checked
 * against its type, state, Q_Key and P_Key, and lands in the next receive
 * WQE behind the 40-byte network header area that RoCE v2 defines: the
 * IPv6 header, or 20 zero bytes and the IPv4 header. The completion says
 * which (IB_WC_WITH_NETWORK_HDR_TYPE) so that ib_init_ah_attr_from_wc()
 * and ibv_init_ah_from_wc() can address the reply. Datagrams with nowhere
 * to go are counted and dropped, never answered: UD is unreliable.
 *
 * Nothing here lets go of a WQE: every WQE fetched or taken is copied with
 * no lock held and then completed, each time. Until its completion it is
 * counted as a copy under way (mroce_wqe.c), and a QP entering ERR or
 * RESET waits for those copies before it flushes or empties its queues
 * (mroce_qp_wait_copies()): so each fetch and take is completed here, on
 * every path, and nothing waits for a modify while it holds a WQE.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "mroce_counters.h"
#include "mroce_ud.h"

#define MROCE_GRH_LEN		40	/* sizeof(struct ib_grh) */
#define MROCE_UD_BATCH		64	/* WQEs per kick before deferring */

/*
 * QPs whose send queue the work item drains. Membership uses the QP's
 * xport.tx_node (only RC QPs join a peer's tx_list) and holds a QP
 * reference, so destroy_qp waits for the work to have let go.
 */
static LIST_HEAD(mroce_ud_pending);
static DEFINE_SPINLOCK(mroce_ud_lock);
static void mroce_ud_work_fn(struct work_struct *work);
static DECLARE_WORK(mroce_ud_work, mroce_ud_work_fn);

static void mroce_ud_defer(struct mroce_qp *qp)
{
	unsigned long flags;
	bool queued = false;

	spin_lock_irqsave(&mroce_ud_lock, flags);
	if (list_empty(&qp->xport.tx_node) && refcount_inc_not_zero(&qp->ref)) {
		list_add_tail(&qp->xport.tx_node, &mroce_ud_pending);
		queued = true;
	}
	spin_unlock_irqrestore(&mroce_ud_lock, flags);
	if (queued)
		queue_work(mroce_wq, &mroce_ud_work);
}

/* The route of a datagram, in the form mroce_net_xmit_oneshot() takes. */
static int mroce_ud_dest(struct mroce_dev *mdev, const struct mroce_av *av,
			 struct mroce_rx_meta *to)
{
	memset(to, 0, sizeof(*to));
	to->net = dev_net(mdev->ndev);
	to->v6 = av->network_type == RDMA_NETWORK_IPV6;
	/* "Reply" to the destination, from our GID. */
	memcpy(&to->saddr, av->dgid.raw, sizeof(to->saddr));
	memcpy(&to->daddr, av->sgid.raw, sizeof(to->daddr));
	if (to->v6 == ipv6_addr_v4mapped(&to->saddr) ||
	    to->v6 == ipv6_addr_v4mapped(&to->daddr) ||
	    ipv6_addr_any(&to->saddr))
		return -EINVAL;
	return 0;
}

static enum ib_wc_status mroce_ud_send(struct mroce_qp *qp,
				       const struct mroce_swqe *swqe)
{
	struct mroce_dev *mdev = mroce_qp_dev(qp);
	enum ib_wc_status st;
	struct mroce_rx_meta to;
	struct mroce_pkt pkt;
	struct sk_buff *skb;
	u32 hdr, len = swqe->length;

	st = mroce_mad_tx_prep(qp, swqe, &pkt);
	if (st != IB_WC_SUCCESS)
		return st;
	if (mroce_ud_dest(mdev, &swqe->wr.ud.av, &to))
		return IB_WC_LOC_QP_OP_ERR;
	/* One datagram, one packet: nothing larger than the path MTU. */
	hdr = mroce_hdr_len(pkt.c.opcode);
	if (len > mroce_max_payload(pkt.c.opcode, mroce_net_mtu(mdev, to.v6)))
		return IB_WC_LOC_LEN_ERR;

	skb = mroce_net_alloc_skb(mdev, hdr + len, GFP_ATOMIC);
	if (!skb)
		return IB_WC_LOC_QP_OP_ERR;
	pkt.payload_len = len;
	if (mroce_encode(&pkt, skb_put(skb, hdr), hdr) != hdr) {
		kfree_skb(skb);
		return IB_WC_LOC_QP_OP_ERR;
	}
	if (len && mroce_swqe_copy_out(qp, swqe, 0, skb_put(skb, len), len,
				       NULL)) {
		kfree_skb(skb);
		return IB_WC_LOC_PROT_ERR;
	}
	if (pkt.c.opcode == MROCE_OP_MAD)
		mroce_mad_tx_note(mdev, &to, skb, hdr);
	mroce_net_xmit_oneshot(mdev, &to, skb);
	return IB_WC_SUCCESS;
}

/*
 * Send one batch of WQEs with softirqs off (the transmit path's context);
 * if the queue may hold more, the rest goes to the work item.
 */
static void mroce_ud_sq_run(struct mroce_qp *qp)
{
	unsigned int budget = MROCE_UD_BATCH;
	struct mroce_swqe *swqe = NULL;

	local_bh_disable();
	while (budget--) {
		swqe = mroce_sq_fetch(qp);
		if (!swqe)
			break;
		mroce_sq_complete(qp, swqe, mroce_ud_send(qp, swqe));
	}
	local_bh_enable();
	if (swqe)
		mroce_ud_defer(qp);
}

static void mroce_ud_work_fn(struct work_struct *work)
{
	struct mroce_qp *qp;

	for (;;) {
		spin_lock_irq(&mroce_ud_lock);
		qp = list_first_entry_or_null(&mroce_ud_pending,
					      struct mroce_qp, xport.tx_node);
		if (qp)
			list_del_init(&qp->xport.tx_node);
		spin_unlock_irq(&mroce_ud_lock);
		if (!qp)
			return;

		mroce_ud_sq_run(qp);
		mroce_qp_put(qp);
		cond_resched();
	}
}

/**
 * mroce_ud_sq_kick() - send what was posted to a UD or GSI QP
 * @qp: the QP
 *
 * Any context (see mroce_xport_sq_kick()).
 */
void mroce_ud_sq_kick(struct mroce_qp *qp)
{
	if (in_hardirq() || irqs_disabled()) {
		mroce_ud_defer(qp);
		return;
	}
	mroce_ud_sq_run(qp);
}

/* The RoCE v2 network header of a received packet, as ib_grh bytes. */
static int mroce_ud_grh(const struct sk_buff *skb, bool v6,
			u8 grh[MROCE_GRH_LEN])
{
	memset(grh, 0, MROCE_GRH_LEN);
	if (v6) {
		if (skb_network_offset(skb) > -(int)sizeof(struct ipv6hdr))
			return -EINVAL;
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	} else {
		struct iphdr *iph = (struct iphdr *)(grh + MROCE_GRH_LEN -
						     sizeof(*iph));

		if (skb_network_offset(skb) > -(int)sizeof(*iph))
			return -EINVAL;
		memcpy(iph, ip_hdr(skb), sizeof(*iph));
		/*
		 * Consumers tell IPv4 from IPv6 by a valid 20-byte header
		 * checksum (ib_get_rdma_header_version()): drop any options.
		 */
		if (iph->ihl != 5) {
			iph->ihl = 5;
			iph->check = 0;
			iph->check = ip_fast_csum((u8 *)iph, iph->ihl);
		}
	}
	return 0;
}

/**
 * mroce_ud_rx() - a UD_SEND, UD_SEND_IMM or MAD packet arrived
 * @mdev: the device it was addressed to
 * @skb: at the mroce header; the decoder accepted it. Not consumed.
 * @meta: outer addresses
 * @pkt: the decoded headers
 *
 * Softirq context.
 */
void mroce_ud_rx(struct mroce_dev *mdev, struct sk_buff *skb,
		 const struct mroce_rx_meta *meta, const struct mroce_pkt *pkt)
{
	const struct mroce_ud *u = &pkt->u.ud;
	u32 off = pkt->payload - skb->data;
	u32 len = pkt->payload_len;
	enum mroce_counter why;
	struct mroce_rwqe *rwqe;
	struct ib_wc wc = {};
	u8 grh[MROCE_GRH_LEN];
	struct mroce_qp *qp;
	int err;

	mroce_counter_inc(mdev, MROCE_CNT_RCVD_PKTS);
	mroce_counter_add(mdev, MROCE_CNT_RCVD_BYTES, skb->len);

	qp = mroce_qp_get(mdev, u->dst_qpn);
	if (!qp) {
		mroce_counter_inc(mdev, MROCE_CNT_DROP_UNKNOWN_QP);
		return;
	}
	/* The decoder guarantees MAD <=> QP1. */
	if (qp->ibqp.qp_type != IB_QPT_UD && qp->ibqp.qp_type != IB_QPT_GSI) {
		why = MROCE_CNT_DROP_UNKNOWN_QP;
		goto drop;
	}
	if (!mroce_mad_rx_allowed(qp, pkt)) {
		why = MROCE_CNT_DROP_ACCESS;
		goto drop;
	}
	if (pkt->c.opcode == MROCE_OP_MAD)
		mroce_mad_rx_note(mdev, meta, skb, pkt->payload, len);
	if (mroce_ud_grh(skb, meta->v6, grh)) {
		why = MROCE_CNT_DROP_TRUNCATED;
		goto drop;
	}

	err = mroce_rq_take(qp, &rwqe);
	if (err) {
		/* -EAGAIN: no WQE posted; UD has no RNR, the datagram is lost. */
		why = err == -EAGAIN ? MROCE_CNT_DROP_RQ_OVERFLOW :
				       MROCE_CNT_DROP_QP_STATE;
		goto drop;
	}

	wc.status = IB_WC_SUCCESS;
	if (MROCE_GRH_LEN + len > rwqe->length) {
		mroce_counter_inc(mdev, MROCE_CNT_DROP_RQ_OVERFLOW);
		wc.status = IB_WC_LOC_LEN_ERR;
	} else if (mroce_rwqe_copy_in(qp, rwqe, 0, grh, MROCE_GRH_LEN, NULL) ||
		   mroce_rwqe_copy_in_skb(qp, rwqe, MROCE_GRH_LEN, skb, off, len,
					  NULL)) {
		wc.status = IB_WC_LOC_PROT_ERR;
	}
	wc.opcode = IB_WC_RECV;
	wc.byte_len = MROCE_GRH_LEN + len;
	wc.src_qp = u->src_qpn;
	wc.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	wc.network_hdr_type = meta->v6 ? RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4;
	if (pkt->c.opcode == MROCE_OP_UD_SEND_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = cpu_to_be32(u->imm);
	}
	mroce_rq_complete(qp, rwqe, &wc, pkt->c.flags & MROCE_F_SE);
	mroce_qp_put(qp);
	return;

drop:
	mroce_counter_inc(mdev, why);
	mroce_qp_put(qp);
}
