// SPDX-License-Identifier: GPL-2.0
/*
 * mroce wire format v1 codec. Layouts and validation rules are specified in
 * docs/protocol.md ("Wire format"); the comments here only explain choices.
 *
 * Decoding is strict on purpose: a packet is either exactly one canonical
 * encoding of a struct mroce_pkt or it is rejected. Reserved bits must be
 * zero and control packets must have their exact length, so that a later
 * wire version can give those bits meaning without old receivers silently
 * misreading them.
 */
#include "mroce_wire.h"

#define DATA_FLAGS	(MROCE_F_AR | MROCE_F_RETX | MROCE_F_SOM | MROCE_F_EOM)
#define SOLO_FLAGS	(MROCE_F_SOM | MROCE_F_EOM)

const struct mroce_op_desc mroce_op_table[MROCE_OP_TABLE_LEN] = {
	[MROCE_OP_SEND]		= { MROCE_KIND_DATA, MROCE_DATA_LEN + 4, DATA_FLAGS | MROCE_F_SE },
	[MROCE_OP_SEND_IMM]	= { MROCE_KIND_DATA, MROCE_DATA_LEN + 8, DATA_FLAGS | MROCE_F_SE },
	[MROCE_OP_SEND_INV]	= { MROCE_KIND_DATA, MROCE_DATA_LEN + 8, DATA_FLAGS | MROCE_F_SE },
	[MROCE_OP_WRITE]	= { MROCE_KIND_DATA, MROCE_DATA_LEN + 16, DATA_FLAGS },
	[MROCE_OP_WRITE_IMM]	= { MROCE_KIND_DATA, MROCE_DATA_LEN + 24, DATA_FLAGS | MROCE_F_SE },
	[MROCE_OP_READ_REQ]	= { MROCE_KIND_DATA, MROCE_DATA_LEN + 20, DATA_FLAGS },
	[MROCE_OP_READ_RESP]	= { MROCE_KIND_DATA, MROCE_DATA_LEN + 4, DATA_FLAGS },
	[MROCE_OP_ATOMIC_REQ]	= { MROCE_KIND_DATA, MROCE_DATA_LEN + 36, DATA_FLAGS },
	[MROCE_OP_ATOMIC_RESP]	= { MROCE_KIND_DATA, MROCE_DATA_LEN + 16, DATA_FLAGS },
	[MROCE_OP_ACK]		= { MROCE_KIND_ACK, MROCE_ACK_BASE_LEN, 0 },
	[MROCE_OP_NAK]		= { MROCE_KIND_NAK, MROCE_NAK_LEN, 0 },
	[MROCE_OP_PROBE]	= { MROCE_KIND_PROBE, MROCE_PROBE_LEN, MROCE_F_AR },
	[MROCE_OP_CONN_REQ]	= { MROCE_KIND_HS, MROCE_HS_LEN, 0 },
	[MROCE_OP_CONN_REP]	= { MROCE_KIND_HS, MROCE_HS_LEN, 0 },
	[MROCE_OP_CONN_CLOSE]	= { MROCE_KIND_CLOSE, MROCE_CLOSE_LEN, 0 },
	[MROCE_OP_UD_SEND]	= { MROCE_KIND_UD, MROCE_UD_LEN, MROCE_F_SE },
	[MROCE_OP_UD_SEND_IMM]	= { MROCE_KIND_UD, MROCE_UD_IMM_LEN, MROCE_F_SE },
	[MROCE_OP_MAD]		= { MROCE_KIND_UD, MROCE_UD_LEN, 0 },
};

const char *const mroce_wire_err_name[MROCE_WIRE_NR_ERR] = {
	[MROCE_WIRE_OK]		= "ok",
	[MROCE_WIRE_ETRUNC]	= "truncated",
	[MROCE_WIRE_EVERSION]	= "bad_version",
	[MROCE_WIRE_EOPCODE]	= "bad_opcode",
	[MROCE_WIRE_ERESERVED]	= "reserved_set",
	[MROCE_WIRE_EFLAGS]	= "bad_flags",
	[MROCE_WIRE_ELENGTH]	= "bad_length",
	[MROCE_WIRE_EBLOCKS]	= "bad_ack_blocks",
	[MROCE_WIRE_EFIELD]	= "bad_field",
	[MROCE_WIRE_ENOSPC]	= "no_space",
};

/* Data and PROBEs travel on a path and carry the path fields. */
static bool on_path(u8 kind)
{
	return kind == MROCE_KIND_DATA || kind == MROCE_KIND_PROBE;
}

/* True if [va, va + len) does not wrap the 64-bit address space. */
static bool range_ok(u64 va, u64 len)
{
	return len == 0 || va <= U64_MAX - (len - 1);
}

static enum mroce_wire_err decode_data(const u8 *b, u32 len, u32 hdr_len,
				       struct mroce_pkt *pkt)
{
	struct mroce_data *d = &pkt->u.d;
	const u8 *x = b + MROCE_DATA_LEN;
	u16 flags = pkt->c.flags;
	u32 plen = len - hdr_len;
	u32 end;

	if (b[16] != 0 || mroce_get_be16(b + 38) != 0)
		return MROCE_WIRE_ERESERVED;
	d->stream_id = mroce_get_be32(b + 16);
	d->stream_psn = mroce_get_be32(b + 20);
	d->ssn = mroce_get_be32(b + 24);
	d->msg_offset = mroce_get_be32(b + 28);
	d->tx_ts = mroce_get_be32(b + 32);
	d->backlog = mroce_get_be16(b + 36);

	if (!!(flags & MROCE_F_SOM) != (d->msg_offset == 0))
		return MROCE_WIRE_EFLAGS;
	if ((flags & MROCE_F_SE) && !(flags & MROCE_F_EOM))
		return MROCE_WIRE_EFLAGS;
	if (plen > U32_MAX - d->msg_offset)
		return MROCE_WIRE_ELENGTH;
	end = d->msg_offset + plen;

	switch (pkt->c.opcode) {
	case MROCE_OP_SEND:
	case MROCE_OP_READ_RESP:
		d->msn = mroce_get_be32(x);
		break;
	case MROCE_OP_SEND_IMM:
	case MROCE_OP_SEND_INV:
		d->msn = mroce_get_be32(x);
		d->imm = mroce_get_be32(x + 4);
		break;
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
		d->va = mroce_get_be64(x);
		d->rkey = mroce_get_be32(x + 8);
		d->length = mroce_get_be32(x + 12);
		if (pkt->c.opcode == MROCE_OP_WRITE_IMM) {
			d->msn = mroce_get_be32(x + 16);
			d->imm = mroce_get_be32(x + 20);
		}
		if (end > d->length || !range_ok(d->va, d->length))
			return MROCE_WIRE_ELENGTH;
		if (!!(flags & MROCE_F_EOM) != (end == d->length))
			return MROCE_WIRE_EFLAGS;
		break;
	case MROCE_OP_READ_REQ:
		d->va = mroce_get_be64(x);
		d->rkey = mroce_get_be32(x + 8);
		d->length = mroce_get_be32(x + 12);
		d->msn = mroce_get_be32(x + 16);
		if (plen != 0 || !range_ok(d->va, d->length))
			return MROCE_WIRE_ELENGTH;
		if ((flags & SOLO_FLAGS) != SOLO_FLAGS)
			return MROCE_WIRE_EFLAGS;
		break;
	case MROCE_OP_ATOMIC_REQ:
		d->va = mroce_get_be64(x);
		d->swap_add = mroce_get_be64(x + 8);
		d->compare = mroce_get_be64(x + 16);
		d->rkey = mroce_get_be32(x + 24);
		d->msn = mroce_get_be32(x + 28);
		d->atomic_op = x[32];
		if (x[33] || x[34] || x[35])
			return MROCE_WIRE_ERESERVED;
		if (d->atomic_op > MROCE_ATOMIC_FETCH_ADD)
			return MROCE_WIRE_EFIELD;
		if (plen != 0)
			return MROCE_WIRE_ELENGTH;
		if ((flags & SOLO_FLAGS) != SOLO_FLAGS)
			return MROCE_WIRE_EFLAGS;
		break;
	case MROCE_OP_ATOMIC_RESP:
		d->msn = mroce_get_be32(x);
		if (mroce_get_be32(x + 4) != 0)
			return MROCE_WIRE_ERESERVED;
		d->orig = mroce_get_be64(x + 8);
		if (plen != 0)
			return MROCE_WIRE_ELENGTH;
		if ((flags & SOLO_FLAGS) != SOLO_FLAGS)
			return MROCE_WIRE_EFLAGS;
		break;
	}
	return MROCE_WIRE_OK;
}

static enum mroce_wire_err decode_ack(const u8 *b, u32 len,
				      struct mroce_pkt *pkt)
{
	struct mroce_ack *a = &pkt->u.ack;
	u32 need, i;

	a->rate_hint = mroce_get_be32(b + 16);
	a->conn_ce = mroce_get_be32(b + 20);
	a->n_blocks = b[24];
	if (b[25] || mroce_get_be16(b + 26))
		return MROCE_WIRE_ERESERVED;
	/* No block: a hint-only ACK (docs/protocol.md §3.6). */
	if (a->n_blocks > MROCE_ACK_MAX_BLOCKS)
		return MROCE_WIRE_EBLOCKS;
	need = MROCE_ACK_BASE_LEN + a->n_blocks * MROCE_ACK_BLOCK_LEN;
	if (len < need)
		return MROCE_WIRE_ETRUNC;
	if (len > need)
		return MROCE_WIRE_ELENGTH;
	for (i = 0; i < a->n_blocks; i++) {
		const u8 *blk = b + MROCE_ACK_BASE_LEN + i * MROCE_ACK_BLOCK_LEN;

		if (blk[2] || blk[3])
			return MROCE_WIRE_ERESERVED;
		if (blk[0] >= MROCE_MAX_PATHS)
			return MROCE_WIRE_EFIELD;
	}
	a->raw_blocks = a->n_blocks ? b + MROCE_ACK_BASE_LEN : NULL;
	return MROCE_WIRE_OK;
}

static enum mroce_wire_err decode_nak(const u8 *b, struct mroce_pkt *pkt)
{
	struct mroce_nak *n = &pkt->u.nak;

	n->code = b[16];
	n->path_id = b[17];
	n->path_gen = b[18];
	n->path_psn = mroce_get_be32(b + 20);
	n->stream_id = mroce_get_be32(b + 24);
	n->stream_psn = mroce_get_be32(b + 28);
	n->ssn = mroce_get_be32(b + 32);
	n->arg = mroce_get_be32(b + 36);
	if (b[19] || b[24])
		return MROCE_WIRE_ERESERVED;
	if (n->code == 0 || n->code > MROCE_NAK_CODE_MAX ||
	    n->path_id >= MROCE_MAX_PATHS)
		return MROCE_WIRE_EFIELD;
	/* Whoever does not know a connection cannot address the reply to it. */
	if (n->code == MROCE_NAK_UNKNOWN_CONN)
		return pkt->c.dst_conn == 0 && n->arg != 0 ?
			MROCE_WIRE_OK : MROCE_WIRE_EFIELD;
	if (pkt->c.dst_conn == 0)
		return MROCE_WIRE_EFIELD;
	if (n->code == MROCE_NAK_STALE_GEN)
		return n->arg <= U8_MAX ? MROCE_WIRE_OK : MROCE_WIRE_EFIELD;
	if (n->code != MROCE_NAK_RNR && n->arg != 0)
		return MROCE_WIRE_EFIELD;
	return MROCE_WIRE_OK;
}

static enum mroce_wire_err decode_hs(const u8 *b, struct mroce_pkt *pkt)
{
	struct mroce_hs_msg *h = &pkt->u.hs;
	bool req = pkt->c.opcode == MROCE_OP_CONN_REQ;

	h->src_conn = mroce_get_be32(b + 16);
	h->nonce = mroce_get_be64(b + 20);
	if (pkt->c.opcode == MROCE_OP_CONN_CLOSE) {
		h->reason = mroce_get_be32(b + 28);
		if (pkt->c.dst_conn == 0 || h->src_conn == 0 || h->nonce == 0)
			return MROCE_WIRE_EFIELD;
		return MROCE_WIRE_OK;
	}
	h->echo_nonce = mroce_get_be64(b + 28);
	h->mtu = mroce_get_be16(b + 36);
	h->n_paths = b[38];
	h->caps = mroce_get_be32(b + 40);
	h->init_rate = mroce_get_be32(b + 44);
	if (b[39])
		return MROCE_WIRE_ERESERVED;
	if (h->src_conn == 0 || h->nonce == 0 || h->mtu < MROCE_MIN_MTU ||
	    h->n_paths == 0 || h->n_paths > MROCE_MAX_PATHS)
		return MROCE_WIRE_EFIELD;
	if (req != (pkt->c.dst_conn == 0) || req != (h->echo_nonce == 0))
		return MROCE_WIRE_EFIELD;
	return MROCE_WIRE_OK;
}

static enum mroce_wire_err decode_ud(const u8 *b, u32 len, u32 hdr_len,
				     struct mroce_pkt *pkt)
{
	struct mroce_ud *u = &pkt->u.ud;

	if (b[16] || b[20] || mroce_get_be16(b + 30))
		return MROCE_WIRE_ERESERVED;
	u->dst_qpn = mroce_get_be32(b + 16);
	u->src_qpn = mroce_get_be32(b + 20);
	u->qkey = mroce_get_be32(b + 24);
	u->pkey = mroce_get_be16(b + 28);
	if (pkt->c.opcode == MROCE_OP_UD_SEND_IMM)
		u->imm = mroce_get_be32(b + 32);
	if (pkt->c.dst_conn != 0 || u->src_qpn == 0)
		return MROCE_WIRE_EFIELD;
	/* QP1 traffic travels only as MAD, and QP0 does not exist on Ethernet. */
	if (pkt->c.opcode == MROCE_OP_MAD) {
		if (u->dst_qpn != MROCE_GSI_QPN)
			return MROCE_WIRE_EFIELD;
		if (len - hdr_len != MROCE_MAD_LEN)
			return MROCE_WIRE_ELENGTH;
	} else if (u->dst_qpn <= MROCE_GSI_QPN) {
		return MROCE_WIRE_EFIELD;
	}
	return MROCE_WIRE_OK;
}

enum mroce_wire_err mroce_decode(const u8 *buf, u32 len, struct mroce_pkt *pkt)
{
	const struct mroce_op_desc *desc;
	bool path_op;

	memset(pkt, 0, sizeof(*pkt));
	if (len < MROCE_COMMON_LEN)
		return MROCE_WIRE_ETRUNC;
	if (buf[0] >> 4 != MROCE_WIRE_VERSION)
		return MROCE_WIRE_EVERSION;
	if (buf[0] & 0x0f || buf[11])
		return MROCE_WIRE_ERESERVED;
	pkt->c.opcode = buf[1];
	desc = mroce_op_get(pkt->c.opcode);
	if (!desc)
		return MROCE_WIRE_EOPCODE;
	if (len < desc->hdr_len)
		return MROCE_WIRE_ETRUNC;
	pkt->c.flags = mroce_get_be16(buf + 2);
	pkt->c.dst_conn = mroce_get_be32(buf + 4);
	pkt->c.path_id = buf[8];
	pkt->c.path_gen = buf[9];
	pkt->c.floor_delta = buf[10];
	pkt->c.path_psn = mroce_get_be32(buf + 12);
	if (pkt->c.flags & ~desc->flags_ok)
		return MROCE_WIRE_EFLAGS;

	path_op = on_path(desc->kind);
	if (!path_op && (buf[8] || buf[9] || buf[10] || pkt->c.path_psn))
		return MROCE_WIRE_ERESERVED;
	/* No connection has more paths; the path count is checked later. */
	if (path_op && (pkt->c.dst_conn == 0 ||
			pkt->c.path_id >= MROCE_MAX_PATHS))
		return MROCE_WIRE_EFIELD;

	switch (desc->kind) {
	case MROCE_KIND_DATA:
		pkt->payload = buf + desc->hdr_len;
		pkt->payload_len = len - desc->hdr_len;
		return decode_data(buf, len, desc->hdr_len, pkt);
	case MROCE_KIND_ACK:
		if (pkt->c.dst_conn == 0)
			return MROCE_WIRE_EFIELD;
		return decode_ack(buf, len, pkt);
	case MROCE_KIND_UD:
		pkt->payload = buf + desc->hdr_len;
		pkt->payload_len = len - desc->hdr_len;
		return decode_ud(buf, len, desc->hdr_len, pkt);
	default:
		break;
	}

	/* The remaining control packets have exactly their header length. */
	if (len != desc->hdr_len)
		return MROCE_WIRE_ELENGTH;
	switch (desc->kind) {
	case MROCE_KIND_NAK:
		return decode_nak(buf, pkt);
	case MROCE_KIND_PROBE:
		pkt->u.probe.tx_ts = mroce_get_be32(buf + 16);
		pkt->u.probe.backlog = mroce_get_be16(buf + 20);
		return mroce_get_be16(buf + 22) ? MROCE_WIRE_ERESERVED :
			MROCE_WIRE_OK;
	default:
		return decode_hs(buf, pkt);
	}
}

inline void mroce_ack_block_get(const struct mroce_pkt *pkt, u32 i,
				struct mroce_ack_block *blk)
{
	const u8 *b = pkt->u.ack.raw_blocks + i * MROCE_ACK_BLOCK_LEN;
	u32 w;

	blk->path_id = b[0];
	blk->path_gen = b[1];
	blk->cum_psn = mroce_get_be32(b + 4);
	for (w = 0; w < MROCE_SACK_WORDS; w++)
		blk->sack[w] = mroce_get_be64(b + 8 + 8 * w);
	blk->echo_ts = mroce_get_be32(b + 40);
	blk->ack_delay = mroce_get_be32(b + 44);
	blk->ce_cnt = mroce_get_be16(b + 48);
	blk->rx_cnt = mroce_get_be16(b + 50);
}

inline void mroce_ack_block_put(const struct mroce_ack_block *blk, u8 *b)
{
	u32 w;

	b[0] = blk->path_id;
	b[1] = blk->path_gen;
	b[2] = 0;
	b[3] = 0;
	mroce_put_be32(blk->cum_psn, b + 4);
	for (w = 0; w < MROCE_SACK_WORDS; w++)
		mroce_put_be64(blk->sack[w], b + 8 + 8 * w);
	mroce_put_be32(blk->echo_ts, b + 40);
	mroce_put_be32(blk->ack_delay, b + 44);
	mroce_put_be16(blk->ce_cnt, b + 48);
	mroce_put_be16(blk->rx_cnt, b + 50);
}

inline u32 mroce_encode_ack_head(u32 dst_conn, u32 rate_hint, u32 conn_ce,
				 u8 n_blocks, u8 *buf, u32 cap)
{
	if (cap < MROCE_ACK_BASE_LEN || n_blocks > MROCE_ACK_MAX_BLOCKS)
		return 0;
	memset(buf, 0, MROCE_ACK_BASE_LEN);
	buf[0] = MROCE_WIRE_VERSION << 4;
	buf[1] = MROCE_OP_ACK;
	mroce_put_be32(dst_conn, buf + 4);
	mroce_put_be32(rate_hint, buf + 16);
	mroce_put_be32(conn_ce, buf + 20);
	buf[24] = n_blocks;
	return MROCE_ACK_BASE_LEN;
}

static void encode_data(const struct mroce_pkt *pkt, u8 *b)
{
	const struct mroce_data *d = &pkt->u.d;
	u8 *x = b + MROCE_DATA_LEN;

	mroce_put_be32(d->stream_id, b + 16);
	mroce_put_be32(d->stream_psn, b + 20);
	mroce_put_be32(d->ssn, b + 24);
	mroce_put_be32(d->msg_offset, b + 28);
	mroce_put_be32(d->tx_ts, b + 32);
	mroce_put_be16(d->backlog, b + 36);

	switch (pkt->c.opcode) {
	case MROCE_OP_SEND:
	case MROCE_OP_READ_RESP:
		mroce_put_be32(d->msn, x);
		break;
	case MROCE_OP_SEND_IMM:
	case MROCE_OP_SEND_INV:
		mroce_put_be32(d->msn, x);
		mroce_put_be32(d->imm, x + 4);
		break;
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
	case MROCE_OP_READ_REQ:
		mroce_put_be64(d->va, x);
		mroce_put_be32(d->rkey, x + 8);
		mroce_put_be32(d->length, x + 12);
		if (pkt->c.opcode == MROCE_OP_READ_REQ) {
			mroce_put_be32(d->msn, x + 16);
		} else if (pkt->c.opcode == MROCE_OP_WRITE_IMM) {
			mroce_put_be32(d->msn, x + 16);
			mroce_put_be32(d->imm, x + 20);
		}
		break;
	case MROCE_OP_ATOMIC_REQ:
		mroce_put_be64(d->va, x);
		mroce_put_be64(d->swap_add, x + 8);
		mroce_put_be64(d->compare, x + 16);
		mroce_put_be32(d->rkey, x + 24);
		mroce_put_be32(d->msn, x + 28);
		x[32] = d->atomic_op;
		break;
	case MROCE_OP_ATOMIC_RESP:
		mroce_put_be32(d->msn, x);
		mroce_put_be64(d->orig, x + 8);
		break;
	}
}

static void encode_ctrl(const struct mroce_pkt *pkt, u8 *b, u8 kind)
{
	const struct mroce_nak *n = &pkt->u.nak;
	const struct mroce_hs_msg *h = &pkt->u.hs;
	const struct mroce_ud *u = &pkt->u.ud;

	switch (kind) {
	case MROCE_KIND_NAK:
		b[16] = n->code;
		b[17] = n->path_id;
		b[18] = n->path_gen;
		mroce_put_be32(n->path_psn, b + 20);
		mroce_put_be32(n->stream_id, b + 24);
		mroce_put_be32(n->stream_psn, b + 28);
		mroce_put_be32(n->ssn, b + 32);
		mroce_put_be32(n->arg, b + 36);
		break;
	case MROCE_KIND_PROBE:
		mroce_put_be32(pkt->u.probe.tx_ts, b + 16);
		mroce_put_be16(pkt->u.probe.backlog, b + 20);
		break;
	case MROCE_KIND_HS:
	case MROCE_KIND_CLOSE:
		mroce_put_be32(h->src_conn, b + 16);
		mroce_put_be64(h->nonce, b + 20);
		if (kind == MROCE_KIND_CLOSE) {
			mroce_put_be32(h->reason, b + 28);
			break;
		}
		mroce_put_be64(h->echo_nonce, b + 28);
		mroce_put_be16(h->mtu, b + 36);
		b[38] = h->n_paths;
		mroce_put_be32(h->caps, b + 40);
		mroce_put_be32(h->init_rate, b + 44);
		break;
	case MROCE_KIND_UD:
		mroce_put_be32(u->dst_qpn, b + 16);
		mroce_put_be32(u->src_qpn, b + 20);
		mroce_put_be32(u->qkey, b + 24);
		mroce_put_be16(u->pkey, b + 28);
		if (pkt->c.opcode == MROCE_OP_UD_SEND_IMM)
			mroce_put_be32(u->imm, b + 32);
		break;
	}
}

/*
 * Values wider than their wire field cannot be encoded faithfully, and a
 * path id no connection can have would not decode.
 */
static bool fields_fit(const struct mroce_pkt *pkt, u8 kind)
{
	u32 i;

	if (on_path(kind) && pkt->c.path_id >= MROCE_MAX_PATHS)
		return false;
	switch (kind) {
	case MROCE_KIND_DATA:
		return !(pkt->u.d.stream_id & ~MROCE_QPN_MASK) &&
			pkt->u.d.atomic_op <= MROCE_ATOMIC_FETCH_ADD;
	case MROCE_KIND_NAK:
		return !(pkt->u.nak.stream_id & ~MROCE_QPN_MASK) &&
			pkt->u.nak.path_id < MROCE_MAX_PATHS;
	case MROCE_KIND_UD:
		return !((pkt->u.ud.dst_qpn | pkt->u.ud.src_qpn) &
			 ~MROCE_QPN_MASK);
	case MROCE_KIND_ACK:
		if (pkt->u.ack.n_blocks > MROCE_ACK_MAX_BLOCKS ||
		    (pkt->u.ack.n_blocks && !pkt->u.ack.blocks))
			return false;
		for (i = 0; i < pkt->u.ack.n_blocks; i++)
			if (pkt->u.ack.blocks[i].path_id >= MROCE_MAX_PATHS)
				return false;
		return true;
	default:
		return true;
	}
}

u32 mroce_encode(const struct mroce_pkt *pkt, u8 *buf, u32 cap)
{
	const struct mroce_op_desc *desc = mroce_op_get(pkt->c.opcode);
	bool path_op;
	u32 len, i;

	if (!desc || !fields_fit(pkt, desc->kind))
		return 0;
	len = desc->hdr_len;
	if (desc->kind == MROCE_KIND_ACK)
		len += pkt->u.ack.n_blocks * MROCE_ACK_BLOCK_LEN;
	if (cap < len)
		return 0;
	memset(buf, 0, len);

	buf[0] = MROCE_WIRE_VERSION << 4;
	buf[1] = pkt->c.opcode;
	mroce_put_be16(pkt->c.flags, buf + 2);
	mroce_put_be32(pkt->c.dst_conn, buf + 4);
	path_op = on_path(desc->kind);
	if (path_op) {
		buf[8] = pkt->c.path_id;
		buf[9] = pkt->c.path_gen;
		buf[10] = pkt->c.floor_delta;
		mroce_put_be32(pkt->c.path_psn, buf + 12);
	}

	if (desc->kind == MROCE_KIND_DATA) {
		encode_data(pkt, buf);
	} else if (desc->kind == MROCE_KIND_ACK) {
		mroce_encode_ack_head(pkt->c.dst_conn, pkt->u.ack.rate_hint,
				      pkt->u.ack.conn_ce, pkt->u.ack.n_blocks,
				      buf, cap);
		for (i = 0; i < pkt->u.ack.n_blocks; i++)
			mroce_ack_block_put(&pkt->u.ack.blocks[i],
					    buf + MROCE_ACK_BASE_LEN +
					    i * MROCE_ACK_BLOCK_LEN);
	} else {
		encode_ctrl(pkt, buf, desc->kind);
	}
	return len;
}
