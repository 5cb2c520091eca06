/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UD datagrams and the QP1 MAD tunnel (docs/protocol.md §3.10): what lets
 * ib_mad, ib_cm and rdma_cm run over mroce unchanged.
 *
 *   mroce_ud.c    UD and GSI send queues, receive into posted WQEs with
 *                 the RoCE v2 network header in the first 40 bytes
 *   mroce_mad.c   which opcode a datagram travels as, and the Q_Key and
 *                 P_Key rules of UD and QP1
 *
 * UD has no connection, no ACK and no retransmission: a datagram is one
 * packet, sent when its WQE is fetched and completed as soon as the IP
 * layer took it. Receive happens in softirq, straight from the skb into
 * the receive WQE. Neither direction takes a transport lock; the verbs
 * queues' own locks order concurrent senders and receivers.
 */
#ifndef MROCE_UD_H
#define MROCE_UD_H

#include "mroce_peer.h"

/* mroce_ud.c */
void mroce_ud_sq_kick(struct mroce_qp *qp);
void mroce_ud_rx(struct mroce_dev *mdev, struct sk_buff *skb,
		 const struct mroce_rx_meta *meta, const struct mroce_pkt *pkt);

/* mroce_mad.c */
enum ib_wc_status mroce_mad_tx_prep(struct mroce_qp *qp,
				    const struct mroce_swqe *swqe,
				    struct mroce_pkt *pkt);
bool mroce_mad_rx_allowed(struct mroce_qp *qp, const struct mroce_pkt *pkt);
void mroce_mad_tx_note(struct mroce_dev *mdev, const struct mroce_rx_meta *to,
		       const struct sk_buff *skb, u32 hdr);
void mroce_mad_rx_note(struct mroce_dev *mdev, const struct mroce_rx_meta *meta,
		       const struct sk_buff *skb, const void *mad, u32 len);
void mroce_mad_dev_fini(struct mroce_dev *mdev);
void mroce_mad_exit(void);

#endif /* MROCE_UD_H */
