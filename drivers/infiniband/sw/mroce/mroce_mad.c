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
#include <rdma/ib_mad.h>

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
