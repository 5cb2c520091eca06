// SPDX-License-Identifier: GPL-2.0
/*
 * Connection handshake. There is no tie-break for simultaneous open: both
 * sides address each other by the ids the other allocated, so two crossing
 * CONN_REQs simply establish the one connection from both ends.
 */
#include "mroce_hs.h"

const char *const mroce_hs_state_name[MROCE_HS_NR_STATES] = {
	[MROCE_HS_CLOSED]	= "closed",
	[MROCE_HS_REQ_SENT]	= "req_sent",
	[MROCE_HS_ESTABLISHED]	= "established",
	[MROCE_HS_FAILED]	= "failed",
};

void mroce_hs_init(struct mroce_hs *hs, const struct mroce_hs_offer *local)
{
	memset(hs, 0, sizeof(*hs));
	hs->state = MROCE_HS_CLOSED;
	hs->local = *local;
}

u32 mroce_hs_connect(struct mroce_hs *hs, const struct mroce_params *p,
		     u64 now)
{
	if (hs->state == MROCE_HS_ESTABLISHED ||
	    hs->state == MROCE_HS_REQ_SENT)
		return 0;
	hs->state = MROCE_HS_REQ_SENT;
	hs->retries = 0;
	hs->timeout = p->hs_timeout;
	hs->deadline = now + hs->timeout;
	return MROCE_HS_SEND_REQ;
}

static void adopt(struct mroce_hs *hs, const struct mroce_hs_msg *m)
{
	hs->remote.id = m->src_conn;
	hs->remote.nonce = m->nonce;
	hs->remote.mtu = m->mtu;
	hs->remote.n_paths = m->n_paths;
	hs->remote.caps = m->caps;
	hs->remote.init_rate = m->init_rate;
}

static u32 on_req(struct mroce_hs *hs, const struct mroce_hs_msg *m)
{
	if (hs->state == MROCE_HS_ESTABLISHED) {
		if (m->nonce == hs->remote.nonce)
			return MROCE_HS_SEND_REP;	/* our REP was lost */
		adopt(hs, m);
		return MROCE_HS_SEND_REP | MROCE_HS_RESTART;
	}
	/* Passive open, simultaneous open, or a retry after failure. */
	adopt(hs, m);
	hs->state = MROCE_HS_ESTABLISHED;
	return MROCE_HS_SEND_REP | MROCE_HS_UP;
}

static u32 on_rep(struct mroce_hs *hs, const struct mroce_hs_msg *m)
{
	if (m->echo_nonce != hs->local.nonce)
		return 0;	/* answers an incarnation of ours that is gone */
	if (hs->state == MROCE_HS_REQ_SENT) {
		adopt(hs, m);
		hs->state = MROCE_HS_ESTABLISHED;
		return MROCE_HS_UP;
	}
	if (hs->state == MROCE_HS_ESTABLISHED &&
	    m->nonce != hs->remote.nonce) {
		adopt(hs, m);
		return MROCE_HS_RESTART;
	}
	return 0;
}

u32 mroce_hs_on_msg(struct mroce_hs *hs, const struct mroce_pkt *pkt)
{
	const struct mroce_hs_msg *m = &pkt->u.hs;

	switch (pkt->c.opcode) {
	case MROCE_OP_CONN_REQ:
		return on_req(hs, m);
	case MROCE_OP_CONN_REP:
		return on_rep(hs, m);
	case MROCE_OP_CONN_CLOSE:
		if (hs->state != MROCE_HS_ESTABLISHED ||
		    m->nonce != hs->remote.nonce)
			return 0;
		hs->state = MROCE_HS_CLOSED;
		return MROCE_HS_DOWN;
	}
	return 0;
}

u32 mroce_hs_on_timer(struct mroce_hs *hs, const struct mroce_params *p,
		      u64 now)
{
	if (hs->state != MROCE_HS_REQ_SENT || now < hs->deadline)
		return 0;
	if (++hs->retries > p->hs_retries) {
		hs->state = MROCE_HS_FAILED;
		return MROCE_HS_DOWN;
	}
	if (hs->timeout < U32_MAX / 2)
		hs->timeout *= 2;
	hs->deadline = now + hs->timeout;
	return MROCE_HS_SEND_REQ;
}

u32 mroce_hs_on_unknown(struct mroce_hs *hs, u32 id)
{
	if (hs->state != MROCE_HS_ESTABLISHED || id != hs->remote.id)
		return 0;
	hs->state = MROCE_HS_CLOSED;
	return MROCE_HS_DOWN;
}

u32 mroce_hs_close(struct mroce_hs *hs)
{
	u32 was_up = hs->state == MROCE_HS_ESTABLISHED ? MROCE_HS_DOWN : 0;

	hs->state = MROCE_HS_CLOSED;
	return was_up;
}

void mroce_hs_build(const struct mroce_hs *hs, u8 opcode, u32 reason,
		    struct mroce_pkt *pkt)
{
	struct mroce_hs_msg *m = &pkt->u.hs;

	memset(pkt, 0, sizeof(*pkt));
	pkt->c.opcode = opcode;
	m->src_conn = hs->local.id;
	m->nonce = hs->local.nonce;
	if (opcode == MROCE_OP_CONN_CLOSE) {
		pkt->c.dst_conn = hs->remote.id;
		m->reason = reason;
		return;
	}
	if (opcode == MROCE_OP_CONN_REP) {
		pkt->c.dst_conn = hs->remote.id;
		m->echo_nonce = hs->remote.nonce;
	}
	m->mtu = hs->local.mtu;
	m->n_paths = hs->local.n_paths;
	m->caps = hs->local.caps;
	m->init_rate = hs->local.init_rate;
}

u16 mroce_hs_mtu(const struct mroce_hs *hs)
{
	return hs->local.mtu < hs->remote.mtu ? hs->local.mtu : hs->remote.mtu;
}

u8 mroce_hs_paths(const struct mroce_hs *hs)
{
	return hs->local.n_paths < hs->remote.n_paths ?
		hs->local.n_paths : hs->remote.n_paths;
}

u32 mroce_hs_caps(const struct mroce_hs *hs)
{
	return hs->local.caps & hs->remote.caps;
}
