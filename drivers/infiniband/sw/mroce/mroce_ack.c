// SPDX-License-Identifier: GPL-2.0
/*
 * ACK and NAK generation.
 *
 * When to acknowledge is the core's decision (mroce_conn_rx_accept() and
 * the delayed-ACK deadline): at once for a packet that asks (AR, the
 * sender's last queued packet), arrives out of order on its path or is a
 * PROBE, otherwise after every few packets or a short delay, whichever
 * comes first. One ACK reports every path with news, so a receive burst
 * spread over all paths costs one ACK per few packets, not one per path.
 */
#include "mroce_counters.h"
#include "mroce_peer.h"
#include "mroce_trace.h"

#define MROCE_ACK_LEN_MAX \
	(MROCE_ACK_BASE_LEN + MROCE_PEER_PATHS * MROCE_ACK_BLOCK_LEN)

/* IB's encoding of min_rnr_timer (IBTA table 45), in microseconds. */
static const u32 mroce_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

u32 mroce_rnr_timer_us(u8 min_rnr_timer)
{
	return mroce_rnr_us[min_rnr_timer & 31];
}

/* Send the ACKs that are due (peer->lock held). */
void mroce_ack_maybe(struct mroce_peer *peer, u64 now)
{
	struct sk_buff *skb;
	unsigned int i;
	u32 len;

	lockdep_assert_held(&peer->lock);
	/* One ACK carries every path; more only if it ran out of blocks. */
	for (i = 0; i < 4 && mroce_conn_ack_due(&peer->conn, now); i++) {
		skb = mroce_net_alloc_skb(peer->mdev, MROCE_ACK_LEN_MAX,
					  GFP_ATOMIC);
		if (!skb)
			return;	/* still due: the timer tries again */
		len = mroce_conn_build_ack(&peer->conn, now, skb_tail_pointer(skb),
					   MROCE_ACK_LEN_MAX);
		if (!len) {
			kfree_skb(skb);
			return;
		}
		skb_put(skb, len);
		mroce_counter_inc(peer->mdev, MROCE_CNT_ACKS_SENT);
		mroce_peer_queue_ctl(peer, skb);
	}
}

static struct sk_buff *mroce_ack_nak_skb(struct mroce_dev *mdev,
					 const struct mroce_pkt *nak)
{
	struct sk_buff *skb;

	skb = mroce_net_alloc_skb(mdev, MROCE_NAK_LEN, GFP_ATOMIC);
	if (!skb)
		return NULL;
	if (mroce_encode(nak, skb_put(skb, MROCE_NAK_LEN), MROCE_NAK_LEN) !=
	    MROCE_NAK_LEN) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/**
 * mroce_ack_nak() - refuse a received data packet or PROBE
 * @peer: its connection, locked
 * @pkt: the refused packet
 * @code: enum mroce_nak_code
 * @arg: RNR delay in us, or the receiver's path generation for STALE_GEN
 *
 * The NAK names the packet by path and stream position so the sender finds
 * the transmission it refers to.
 */
void mroce_ack_nak(struct mroce_peer *peer, const struct mroce_pkt *pkt,
		   u8 code, u32 arg)
{
	struct mroce_pkt nak = {};
	struct mroce_nak *n = &nak.u.nak;
	struct sk_buff *skb;

	lockdep_assert_held(&peer->lock);
	nak.c.opcode = MROCE_OP_NAK;
	nak.c.dst_conn = peer->conn.hs.remote.id;
	n->code = code;
	n->path_id = pkt->c.path_id;
	n->path_gen = pkt->c.path_gen;
	n->path_psn = pkt->c.path_psn;
	if (pkt->c.opcode != MROCE_OP_PROBE) {
		n->stream_id = pkt->u.d.stream_id;
		n->stream_psn = pkt->u.d.stream_psn;
		n->ssn = pkt->u.d.ssn;
	}
	n->arg = arg;

	skb = mroce_ack_nak_skb(peer->mdev, &nak);
	if (!skb)
		return;		/* the sender's timers recover */
	mroce_counter_inc(peer->mdev, MROCE_CNT_NAKS_SENT);
	if (code == MROCE_NAK_RNR)
		mroce_counter_inc(peer->mdev, MROCE_CNT_SEND_RNR);
	trace_mroce_nak(peer->mdev->ibdev.index, peer->id, 1, code,
			n->stream_id, n->stream_psn, n->ssn, arg);
	mroce_peer_queue_ctl(peer, skb);
}

/*
 * Tell a sender that we have no connection @id (we restarted, or closed
 * it): it re-handshakes. Rate limited, since anybody can make us send it.
 */
void mroce_ack_nak_unknown(struct mroce_dev *mdev,
			   const struct mroce_rx_meta *meta, u32 id)
{
	struct mroce_pkt nak = {};
	struct sk_buff *skb;

	if (!__ratelimit(&mdev->xport.nak_rs))
		return;
	nak.c.opcode = MROCE_OP_NAK;
	nak.u.nak.code = MROCE_NAK_UNKNOWN_CONN;
	nak.u.nak.arg = id;
	skb = mroce_ack_nak_skb(mdev, &nak);
	if (!skb)
		return;
	mroce_counter_inc(mdev, MROCE_CNT_NAKS_SENT);
	trace_mroce_nak(mdev->ibdev.index, 0, 1, MROCE_NAK_UNKNOWN_CONN, 0, 0,
			0, id);
	mroce_net_xmit_oneshot(mdev, meta, skb);
}
