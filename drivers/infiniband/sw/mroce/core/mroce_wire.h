/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mroce wire format v0: constants, host-order packet structures, and the
 * encoder/decoder. docs/protocol.md is the normative description; every
 * layout here is a byte diagram there.
 *
 * The decoder is the only code that parses untrusted bytes. It validates
 * every field it returns and never reads outside [buf, buf + len).
 */
#ifndef MROCE_WIRE_H
#define MROCE_WIRE_H

#include "mroce_env.h"

#define MROCE_WIRE_VERSION	1
#define MROCE_UDP_PORT_DEFAULT	61791
#define MROCE_SPORT_MIN		0xC000
#define MROCE_SPORT_MAX		0xFFFF

#define MROCE_COMMON_LEN	16
#define MROCE_DATA_LEN		40	/* common + data header */
#define MROCE_ACK_BASE_LEN	28
#define MROCE_ACK_BLOCK_LEN	52
#define MROCE_ACK_MAX_BLOCKS	16
#define MROCE_NAK_LEN		40
#define MROCE_PROBE_LEN		24
#define MROCE_HS_LEN		48
#define MROCE_CLOSE_LEN		32
#define MROCE_UD_LEN		32
#define MROCE_UD_IMM_LEN	36
#define MROCE_MAX_HDR_LEN	(MROCE_ACK_BASE_LEN + \
				 MROCE_ACK_MAX_BLOCKS * MROCE_ACK_BLOCK_LEN)

#define MROCE_SACK_BITS		256
#define MROCE_SACK_WORDS	(MROCE_SACK_BITS / 64)
#define MROCE_MAX_PATHS		64
#define MROCE_QPN_MASK		0x00FFFFFFu
#define MROCE_GSI_QPN		1
#define MROCE_MAD_LEN		256
#define MROCE_MIN_MTU		512	/* smallest mroce packet a peer may advertise */
#define MROCE_BACKLOG_UNIT_SHIFT 12	/* backlog field counts 4 KiB units */

enum mroce_opcode {
	MROCE_OP_SEND		= 0x01,
	MROCE_OP_SEND_IMM	= 0x02,
	MROCE_OP_SEND_INV	= 0x03,
	MROCE_OP_WRITE		= 0x04,
	MROCE_OP_WRITE_IMM	= 0x05,
	MROCE_OP_READ_REQ	= 0x06,
	MROCE_OP_READ_RESP	= 0x07,
	MROCE_OP_ATOMIC_REQ	= 0x08,
	MROCE_OP_ATOMIC_RESP	= 0x09,
	MROCE_OP_ACK		= 0x10,
	MROCE_OP_NAK		= 0x11,
	MROCE_OP_PROBE		= 0x12,
	MROCE_OP_CONN_REQ	= 0x20,
	MROCE_OP_CONN_REP	= 0x21,
	MROCE_OP_CONN_CLOSE	= 0x22,
	MROCE_OP_UD_SEND	= 0x30,
	MROCE_OP_UD_SEND_IMM	= 0x31,
	MROCE_OP_MAD		= 0x32,
};

/* Common-header flags. Which flags an opcode may carry is in the spec. */
#define MROCE_F_AR	0x0001	/* ack requested: receiver ACKs immediately */
#define MROCE_F_RETX	0x0002	/* chunk was sent before (telemetry only) */
#define MROCE_F_SOM	0x0004	/* first chunk of a message (offset 0) */
#define MROCE_F_EOM	0x0008	/* last chunk of a message */
#define MROCE_F_SE	0x0010	/* solicited event */

enum mroce_atomic_op {
	MROCE_ATOMIC_CMP_SWP	= 0,
	MROCE_ATOMIC_FETCH_ADD	= 1,
};

enum mroce_nak_code {
	MROCE_NAK_RNR			= 0x01,
	MROCE_NAK_INVALID_REQUEST	= 0x02,
	MROCE_NAK_REMOTE_ACCESS		= 0x03,
	MROCE_NAK_REMOTE_OP		= 0x04,
	MROCE_NAK_STREAM_PSN_WINDOW	= 0x05,
	MROCE_NAK_UNKNOWN_CONN		= 0x06,
	MROCE_NAK_UNKNOWN_STREAM	= 0x07,
	MROCE_NAK_STALE_GEN		= 0x08,
	MROCE_NAK_CODE_MAX		= MROCE_NAK_STALE_GEN,
};

/* Capability bits exchanged in CONN_REQ/CONN_REP; the result is the AND. */
#define MROCE_CAP_ATOMIC	0x00000001u

enum mroce_wire_err {
	MROCE_WIRE_OK = 0,
	MROCE_WIRE_ETRUNC,	/* shorter than the opcode's header */
	MROCE_WIRE_EVERSION,	/* version nibble is not 0 */
	MROCE_WIRE_EOPCODE,	/* unknown opcode */
	MROCE_WIRE_ERESERVED,	/* a reserved field or bit is not zero */
	MROCE_WIRE_EFLAGS,	/* flag not allowed or inconsistent */
	MROCE_WIRE_ELENGTH,	/* payload/offset/length inconsistent */
	MROCE_WIRE_EBLOCKS,	/* bad ACK block count */
	MROCE_WIRE_EFIELD,	/* field value out of its range */
	MROCE_WIRE_ENOSPC,	/* encode: buffer too small */
	MROCE_WIRE_NR_ERR,
};

extern const char *const mroce_wire_err_name[MROCE_WIRE_NR_ERR];

/* First 16 bytes of every packet. Path fields are zero for non-path opcodes. */
struct mroce_common {
	u8 opcode;
	u16 flags;
	u32 dst_conn;
	u8 path_id;
	u8 path_gen;
	u8 floor_delta;
	u32 path_psn;
};

/*
 * Data header plus the opcode extension, flattened. Fields the opcode does
 * not carry decode as zero and are ignored by the encoder.
 */
struct mroce_data {
	u32 stream_id;		/* destination QPN, 24 bits */
	u32 stream_psn;
	u32 ssn;
	u32 msg_offset;
	u32 tx_ts;
	u16 backlog;		/* sender backlog, 4 KiB units, saturating */
	u32 msn;		/* RQ ordinal (SEND*, WRITE_IMM) or read/atomic ordinal */
	u32 imm;		/* immediate data or invalidated rkey (SEND_INV) */
	u64 va;			/* WRITE*, READ_REQ, ATOMIC_REQ */
	u32 rkey;
	u32 length;		/* WRITE*: message length; READ_REQ: read length */
	u64 swap_add;		/* ATOMIC_REQ */
	u64 compare;		/* ATOMIC_REQ (CMP_SWP) */
	u64 orig;		/* ATOMIC_RESP */
	u8 atomic_op;		/* enum mroce_atomic_op */
};

struct mroce_ack_block {
	u8 path_id;
	u8 path_gen;
	u32 cum_psn;		/* every PSN <= cum_psn is resolved */
	u64 sack[MROCE_SACK_WORDS];	/* word w bit b => cum_psn + 1 + 64w + b */
	u32 echo_ts;		/* tx_ts of the newest packet received on the path */
	u32 ack_delay;		/* ns since that packet arrived */
	u16 ce_cnt;		/* CE-marked packets on (path, gen), wraps */
	u16 rx_cnt;		/* packets accepted on (path, gen), wraps */
};

struct mroce_ack {
	u32 rate_hint;		/* Mbit/s, 0 = no hint */
	u32 conn_ce;		/* CE-marked data packets on the connection, wraps */
	u8 n_blocks;
	const u8 *raw_blocks;	/* decode: validated block bytes */
	const struct mroce_ack_block *blocks;	/* encode: n_blocks blocks */
};

struct mroce_nak {
	u8 code;		/* enum mroce_nak_code */
	u8 path_id;		/* path, gen, psns and ssn of the refused packet */
	u8 path_gen;
	u32 path_psn;
	u32 stream_id;
	u32 stream_psn;
	u32 ssn;
	u32 arg;		/* RNR: delay in us; UNKNOWN_CONN: the id; STALE_GEN: gen */
};

struct mroce_probe {
	u32 tx_ts;
	u16 backlog;		/* as in the data header (a grant request) */
};

/* CONN_REQ, CONN_REP and CONN_CLOSE. */
struct mroce_hs_msg {
	u32 src_conn;		/* id the sender allocated for this connection */
	u64 nonce;		/* sender's incarnation nonce, never 0 */
	u64 echo_nonce;		/* REP: nonce of the REQ answered; REQ: 0 */
	u16 mtu;		/* largest mroce packet the sender accepts */
	u8 n_paths;		/* 1..MROCE_MAX_PATHS */
	u32 caps;
	u32 init_rate;		/* Mbit/s the sender may be sent at initially */
	u32 reason;		/* CONN_CLOSE only */
};

/* UD_SEND, UD_SEND_IMM, MAD. */
struct mroce_ud {
	u32 dst_qpn;
	u32 src_qpn;
	u32 qkey;
	u16 pkey;
	u32 imm;
};

struct mroce_pkt {
	struct mroce_common c;
	union {
		struct mroce_data d;
		struct mroce_ack ack;
		struct mroce_nak nak;
		struct mroce_probe probe;
		struct mroce_hs_msg hs;
		struct mroce_ud ud;
	} u;
	const u8 *payload;	/* decode: points into the input buffer */
	u32 payload_len;
};

/*
 * What the codec knows of each opcode: the table in mroce_wire.c. The small
 * per-packet lookups below are inline, so that a caller outside the core
 * (the module's receive and transmit files) makes no call for them.
 */
enum mroce_op_kind {
	MROCE_KIND_NONE = 0,
	MROCE_KIND_DATA,
	MROCE_KIND_ACK,
	MROCE_KIND_NAK,
	MROCE_KIND_PROBE,
	MROCE_KIND_HS,
	MROCE_KIND_CLOSE,
	MROCE_KIND_UD,
};

struct mroce_op_desc {
	u8 kind;
	u8 hdr_len;
	u16 flags_ok;
};

#define MROCE_OP_TABLE_LEN	(MROCE_OP_MAD + 1)
extern const struct mroce_op_desc mroce_op_table[MROCE_OP_TABLE_LEN];

/* The table's entry of @opcode, NULL if it is not one. */
static inline const struct mroce_op_desc *mroce_op_get(u8 opcode)
{
	if (opcode >= MROCE_OP_TABLE_LEN ||
	    mroce_op_table[opcode].kind == MROCE_KIND_NONE)
		return NULL;
	return &mroce_op_table[opcode];
}

static inline bool mroce_op_is_data(u8 opcode)
{
	const struct mroce_op_desc *d = mroce_op_get(opcode);

	return d && d->kind == MROCE_KIND_DATA;
}

/*
 * READ_RESP and ATOMIC_RESP carry the SSN of the receiver's own request,
 * every other data opcode the sender's: one SSN may name two messages.
 */
static inline bool mroce_op_is_resp(u8 opcode)
{
	return opcode == MROCE_OP_READ_RESP || opcode == MROCE_OP_ATOMIC_RESP;
}
/* Fixed header length of an opcode (ACK: without blocks); 0 if unknown. */
static inline u32 mroce_hdr_len(u8 opcode)
{
	const struct mroce_op_desc *d = mroce_op_get(opcode);

	return d ? d->hdr_len : 0;
}
/*
 * How many leading bytes of a @len-byte packet mroce_decode() reads: its
 * whole header (an ACK with its blocks), never more than @len. @buf must
 * hold the first min(@len, MROCE_WIRE_PEEK_LEN) bytes, which is all it
 * looks at; a receiver makes that many linear, then the result.
 */
#define MROCE_WIRE_PEEK_LEN	MROCE_ACK_BASE_LEN
static inline u32 mroce_wire_hdr_len(const u8 *buf, u32 len)
{
	u32 h;

	if (len < MROCE_COMMON_LEN)
		return len;
	if (buf[1] == MROCE_OP_ACK) {
		if (len < MROCE_ACK_BASE_LEN)
			return len;
		/* More blocks than allowed: the decoder reads no further. */
		h = buf[24] < MROCE_ACK_MAX_BLOCKS ? buf[24] :
			MROCE_ACK_MAX_BLOCKS;
		h = MROCE_ACK_BASE_LEN + h * MROCE_ACK_BLOCK_LEN;
	} else {
		h = mroce_hdr_len(buf[1]);
		if (h < MROCE_COMMON_LEN)
			h = MROCE_COMMON_LEN;	/* unknown opcode */
	}
	return h < len ? h : len;
}
/*
 * Sets AR in the flags of an encoded header (@len bytes of it) whose
 * opcode allows it (data, PROBE); returns false and changes nothing
 * otherwise. Inline, as the two below: the transmit path calls them per
 * packet or per run.
 */
static inline bool mroce_wire_set_ar(u8 *hdr, u32 len)
{
	const struct mroce_op_desc *d;
	u16 flags;

	if (len < MROCE_COMMON_LEN)
		return false;
	d = mroce_op_get(hdr[1]);
	if (!d || !(d->flags_ok & MROCE_F_AR))
		return false;
	flags = mroce_get_be16(hdr + 2) | MROCE_F_AR;
	mroce_put_be16(flags, hdr + 2);
	return true;
}

/* Largest payload of one packet of this opcode under a packet size limit. */
static inline u32 mroce_max_payload(u8 opcode, u32 mtu)
{
	const struct mroce_op_desc *d = mroce_op_get(opcode);

	if (!d || mtu <= d->hdr_len)
		return 0;
	switch (opcode) {
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
	case MROCE_OP_SEND_INV:
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
	case MROCE_OP_READ_RESP:
	case MROCE_OP_UD_SEND:
	case MROCE_OP_UD_SEND_IMM:
		return mtu - d->hdr_len;
	case MROCE_OP_MAD:
		return mtu - d->hdr_len >= MROCE_MAD_LEN ? MROCE_MAD_LEN : 0;
	default:
		return 0;
	}
}

enum mroce_wire_err mroce_decode(const u8 *buf, u32 len, struct mroce_pkt *pkt);
/* Block i < pkt->u.ack.n_blocks of a packet mroce_decode() accepted. */
void mroce_ack_block_get(const struct mroce_pkt *pkt, u32 i,
			 struct mroce_ack_block *blk);

/*
 * Writes the headers of @pkt (not the payload) to @buf and returns their
 * length, or 0 if @cap is too small or a field does not fit its width.
 * pkt->payload_len must be the length of the payload that will follow.
 */
u32 mroce_encode(const struct mroce_pkt *pkt, u8 *buf, u32 cap);
/*
 * The 28-byte head of an ACK announcing @n_blocks blocks; the caller then
 * writes the blocks with mroce_ack_block_put() right behind it.
 */
u32 mroce_encode_ack_head(u32 dst_conn, u32 rate_hint, u32 conn_ce,
			  u8 n_blocks, u8 *buf, u32 cap);
void mroce_ack_block_put(const struct mroce_ack_block *blk, u8 *buf);

#endif /* MROCE_WIRE_H */
