// SPDX-License-Identifier: GPL-2.0
/*
 * mroce_inject: crafted and malformed mroce packets, built with the
 * protocol core itself (drivers/infiniband/sw/mroce/core, compiled here with
 * include/mroce/env/user: the very files the module runs).
 *
 *   mroce_inject check
 *	Builds every crafted packet and runs the core's decoder on it: each
 *	must decode to the error class it was crafted for (docs/protocol.md
 *	§3.11). Needs no device; proves the crafting (and the decoder).
 *
 *   mroce_inject blast -t DEV --to IP [--from IP] [--port N] [--mutations N]
 *	Sends every malformed packet, plus N random mutations of valid
 *	packets, over UDP to IP:port (the mroce port of device DEV), then
 *	checks that DEV's per-reason drop counters moved by exactly what the
 *	core's decoder says each packet is. Run it from the peer's network
 *	namespace. Packets that decode (some mutations do) are sent too; the
 *	kernel judges them by connection state and the selftest checks the
 *	device stays healthy.
 *
 *   mroce_inject target -d DEV [-P port]
 *   mroce_inject attack -d DEV -c TARGET_IP -t TARGET_DEV -i IFACE [-P port]
 *	A live connection under attack. The target (in the target's netns)
 *	registers a read-write, a read-only and a local-only MR and an RC QP;
 *	the attacker (in the peer's netns) connects a QP from DEV to it,
 *	moves real traffic to establish the mroce connection, learns the
 *	connection id, paths and stream PSNs by sniffing its own device's
 *	packets on IFACE, and then forges packets from the peer's address:
 *	unknown connection, bad path, unknown QP, bad rkey, out-of-bounds and
 *	wrong-rights writes and reads aimed at the real MRs, out-of-window
 *	stream PSN, stale generation, replayed packets, forged ACKs and NAKs.
 *	Each must move its counter on TARGET_DEV and complete nothing at the
 *	target. Refusals the protocol makes fatal (bad rkey, bounds, rights,
 *	misaligned atomic: docs/protocol.md §4.4) must also put the target's
 *	QP in the error state, as an IB responder's class C errors do, so
 *	each of those runs on a fresh QP pair of the same connection. Real
 *	traffic must work after the non-fatal ones, and every MR must hold
 *	exactly what legitimate traffic put there.
 *
 * Output: one line per check, "ok<TAB>what" or "fail<TAB>what<TAB>why";
 * exit status 1 if any check failed, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "mroce_wire.h"
#include "tools_common.h"

#define MAX_PKT		1600

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mroce_inject: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t rng_state = 0x6d726f6365ull;

static uint64_t rnd(void)
{
	uint64_t x = (rng_state += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* ---- crafting -------------------------------------------------------------- */

static const u8 all_ops[] = {
	MROCE_OP_SEND, MROCE_OP_SEND_IMM, MROCE_OP_SEND_INV, MROCE_OP_WRITE,
	MROCE_OP_WRITE_IMM, MROCE_OP_READ_REQ, MROCE_OP_READ_RESP,
	MROCE_OP_ATOMIC_REQ, MROCE_OP_ATOMIC_RESP, MROCE_OP_ACK, MROCE_OP_NAK,
	MROCE_OP_PROBE, MROCE_OP_CONN_REQ, MROCE_OP_CONN_REP,
	MROCE_OP_CONN_CLOSE, MROCE_OP_UD_SEND, MROCE_OP_UD_SEND_IMM, MROCE_OP_MAD,
};

static const char *op_str(u8 op)
{
	static const char *const n[] = {
		[MROCE_OP_SEND] = "SEND", [MROCE_OP_SEND_IMM] = "SEND_IMM",
		[MROCE_OP_SEND_INV] = "SEND_INV", [MROCE_OP_WRITE] = "WRITE",
		[MROCE_OP_WRITE_IMM] = "WRITE_IMM", [MROCE_OP_READ_REQ] = "READ_REQ",
		[MROCE_OP_READ_RESP] = "READ_RESP", [MROCE_OP_ATOMIC_REQ] = "ATOMIC_REQ",
		[MROCE_OP_ATOMIC_RESP] = "ATOMIC_RESP", [MROCE_OP_ACK] = "ACK",
		[MROCE_OP_NAK] = "NAK", [MROCE_OP_PROBE] = "PROBE",
		[MROCE_OP_CONN_REQ] = "CONN_REQ", [MROCE_OP_CONN_REP] = "CONN_REP",
		[MROCE_OP_CONN_CLOSE] = "CONN_CLOSE", [MROCE_OP_UD_SEND] = "UD_SEND",
		[MROCE_OP_UD_SEND_IMM] = "UD_SEND_IMM", [MROCE_OP_MAD] = "MAD",
	};

	return op < sizeof(n) / sizeof(n[0]) && n[op] ? n[op] : "?";
}

/* Fill a representative, valid packet of an opcode; returns its length. */
static u32 base_packet(u8 op, u8 *b, u32 dst_conn, const struct mroce_pkt *tmpl)
{
	struct mroce_pkt p;
	struct mroce_ack_block blk = { 0 };
	u32 n, plen = 0;

	if (tmpl)
		p = *tmpl;
	else
		memset(&p, 0, sizeof(p));
	p.c.opcode = op;
	if (!tmpl) {
		p.c.dst_conn = dst_conn;
		p.c.flags = 0;
	}
	if (mroce_op_is_data(op)) {
		if (!tmpl) {
			p.c.flags = MROCE_F_SOM | MROCE_F_EOM;
			p.c.path_psn = 1;
			p.u.d.stream_id = 0x123;
			p.u.d.stream_psn = 77;
			p.u.d.ssn = 5;
			p.u.d.tx_ts = 1000;
		}
		switch (op) {
		case MROCE_OP_WRITE:
		case MROCE_OP_WRITE_IMM:
			plen = 32;
			if (!tmpl) {
				p.u.d.va = 0x10000;
				p.u.d.rkey = 0x1234;
				p.u.d.length = plen;
			}
			plen = p.u.d.length - p.u.d.msg_offset < plen ?
			       p.u.d.length - p.u.d.msg_offset : plen;
			break;
		case MROCE_OP_READ_REQ:
			if (!tmpl) {
				p.u.d.va = 0x10000;
				p.u.d.rkey = 0x1234;
				p.u.d.length = 4096;
			}
			break;
		case MROCE_OP_ATOMIC_REQ:
			if (!tmpl) {
				p.u.d.va = 0x10000;
				p.u.d.rkey = 0x1234;
			}
			break;
		case MROCE_OP_ATOMIC_RESP:
			break;
		default:
			plen = tmpl ? tmpl->payload_len : 32;
			break;
		}
	} else if (op == MROCE_OP_ACK) {
		n = mroce_encode_ack_head(dst_conn, 0, 0, 1, b, MAX_PKT);
		blk.cum_psn = 10;
		mroce_ack_block_put(&blk, b + n);
		return n + MROCE_ACK_BLOCK_LEN;
	} else if (op == MROCE_OP_NAK) {
		if (!tmpl) {
			p.u.nak.code = MROCE_NAK_RNR;
			p.u.nak.arg = 100;
			p.u.nak.stream_id = 0x123;
		}
	} else if (op == MROCE_OP_PROBE) {
		p.c.path_psn = 3;
	} else if (op == MROCE_OP_CONN_REQ || op == MROCE_OP_CONN_REP ||
		   op == MROCE_OP_CONN_CLOSE) {
		if (!tmpl) {
			p.u.hs.src_conn = 0x55;
			p.u.hs.nonce = 0x1122334455667788ull;
			p.u.hs.mtu = 1024;
			p.u.hs.n_paths = 8;
			if (op == MROCE_OP_CONN_REQ)
				p.c.dst_conn = 0;
			else if (op == MROCE_OP_CONN_REP)
				p.u.hs.echo_nonce = 0x99;
		}
	} else {
		if (!tmpl) {
			p.c.dst_conn = 0;
			p.u.ud.dst_qpn = op == MROCE_OP_MAD ? MROCE_GSI_QPN : 17;
			p.u.ud.src_qpn = 18;
			p.u.ud.qkey = 0x11111111;
			p.u.ud.pkey = 0xffff;
		}
		plen = op == MROCE_OP_MAD ? MROCE_MAD_LEN : 24;
	}
	p.payload_len = plen;
	n = mroce_encode(&p, b, MAX_PKT);
	if (!n)
		die("the core refused to encode a base %s packet", op_str(op));
	memset(b + n, 0xa5, plen);
	return n + plen;
}

struct craft {
	char name[80];
	u8 b[MAX_PKT];
	u32 len;
	int want;		/* enum mroce_wire_err; -1: whatever it decodes to */
};

static struct craft *cases;
static int ncases, capcases;

static struct craft *add(int want, const u8 *b, u32 len, const char *fmt, ...)
{
	struct craft *c;
	va_list ap;

	if (ncases == capcases) {
		capcases = capcases ? 2 * capcases : 512;
		cases = realloc(cases, capcases * sizeof(*cases));
		if (!cases)
			die("out of memory");
	}
	c = &cases[ncases++];
	va_start(ap, fmt);
	vsnprintf(c->name, sizeof(c->name), fmt, ap);
	va_end(ap);
	memcpy(c->b, b, len);
	c->len = len;
	c->want = want;
	return c;
}

/* One base packet with byte off set to val (NO_MOD: none), then extra
 * bytes appended (> 0) or cut off (< 0). */
#define NO_MOD		(~0u)

static void add_mod(int want, u8 op, const char *what, u32 off, u8 val, int extra)
{
	u8 b[MAX_PKT];
	u32 len = base_packet(op, b, 1, NULL);

	if (off < len)
		b[off] = val;
	if (extra > 0) {
		memset(b + len, 0, extra);
		len += extra;
	} else if (extra < 0) {
		len += extra;
	}
	add(want, b, len, "%s: %s", op_str(op), what);
}

/* A packet built from a modified template. */
static void add_tmpl(int want, u8 op, const struct mroce_pkt *t, const char *what)
{
	u8 b[MAX_PKT];
	u32 len = base_packet(op, b, t->c.dst_conn, t);

	add(want, b, len, "%s: %s", op_str(op), what);
}

static void tmpl_init(u8 op, struct mroce_pkt *t)
{
	u8 b[MAX_PKT];
	u32 len = base_packet(op, b, 1, NULL);

	if (mroce_decode(b, len, t) != MROCE_WIRE_OK)
		die("base %s packet does not decode", op_str(op));
	t->payload = NULL;
}

static u16 flags_ok(u8 op)
{
	u16 data = MROCE_F_AR | MROCE_F_RETX | MROCE_F_SOM | MROCE_F_EOM;

	switch (op) {
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
	case MROCE_OP_SEND_INV:
	case MROCE_OP_WRITE_IMM:
		return data | MROCE_F_SE;
	case MROCE_OP_PROBE:
		return MROCE_F_AR;
	case MROCE_OP_UD_SEND:
	case MROCE_OP_UD_SEND_IMM:
		return MROCE_F_SE;
	default:
		return mroce_op_is_data(op) ? data : 0;
	}
}

static void build_cases(int mutations)
{
	struct mroce_pkt t;
	u8 b[MAX_PKT];
	unsigned int i, v, bit;
	u32 len, l, hl;

	/* Truncated at every offset of every header (below 16: once). */
	len = base_packet(MROCE_OP_SEND, b, 1, NULL);
	for (l = 0; l < MROCE_COMMON_LEN; l++)
		add(MROCE_WIRE_ETRUNC, b, l, "truncated to %u bytes", l);
	for (i = 0; i < sizeof(all_ops); i++) {
		u8 op = all_ops[i];

		len = base_packet(op, b, 1, NULL);
		hl = op == MROCE_OP_ACK ? MROCE_ACK_BASE_LEN + MROCE_ACK_BLOCK_LEN :
					  mroce_hdr_len(op);
		for (l = MROCE_COMMON_LEN; l < hl; l++)
			add(MROCE_WIRE_ETRUNC, b, l, "%s truncated to %u of %u header bytes",
			    op_str(op), l, hl);
	}

	/* Version, reserved nibble and byte 11, every unknown opcode. */
	for (v = 0; v < 16; v++)
		if (v != MROCE_WIRE_VERSION)
			add_mod(MROCE_WIRE_EVERSION, MROCE_OP_WRITE, "other version", 0, v << 4, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_SEND, "reserved nibble of byte 0", 0,
		MROCE_WIRE_VERSION << 4 | 0x01, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_ACK, "reserved byte 11", 11, 0x80, 0);
	for (v = 0; v < 256; v++) {
		if (mroce_hdr_len(v))
			continue;
		memset(b, 0, 64);
		b[0] = MROCE_WIRE_VERSION << 4;
		b[1] = v;
		b[7] = 1;
		add(MROCE_WIRE_EOPCODE, b, 64, "unknown opcode 0x%02x", v);
	}

	/* Every flag an opcode does not allow. */
	for (i = 0; i < sizeof(all_ops); i++) {
		u8 op = all_ops[i];

		for (bit = 0; bit < 16; bit++) {
			u16 f = 1u << bit;
			u16 cur;

			if (flags_ok(op) & f)
				continue;
			len = base_packet(op, b, 1, NULL);
			cur = mroce_get_be16(b + 2) | f;
			mroce_put_be16(cur, b + 2);
			add(MROCE_WIRE_EFLAGS, b, len, "%s with flag 0x%04x", op_str(op), f);
		}
	}
	/* Flag rules. */
	tmpl_init(MROCE_OP_SEND, &t);
	t.c.flags = MROCE_F_EOM | MROCE_F_SE;	/* SOM missing at offset 0 */
	add_tmpl(MROCE_WIRE_EFLAGS, MROCE_OP_SEND, &t, "offset 0 without SOM");
	tmpl_init(MROCE_OP_SEND, &t);
	t.u.d.msg_offset = 1024;		/* SOM at offset 1024 */
	add_tmpl(MROCE_WIRE_EFLAGS, MROCE_OP_SEND, &t, "SOM at a non-zero offset");
	tmpl_init(MROCE_OP_SEND, &t);
	t.c.flags = MROCE_F_SOM | MROCE_F_SE;
	add_tmpl(MROCE_WIRE_EFLAGS, MROCE_OP_SEND, &t, "SE without EOM");
	tmpl_init(MROCE_OP_WRITE, &t);
	t.u.d.length = 64;			/* 32 bytes of 64 with EOM */
	add_tmpl(MROCE_WIRE_EFLAGS, MROCE_OP_WRITE, &t, "EOM before the end of the message");
	tmpl_init(MROCE_OP_READ_REQ, &t);
	t.c.flags = MROCE_F_SOM;
	add_tmpl(MROCE_WIRE_EFLAGS, MROCE_OP_READ_REQ, &t, "without EOM");
	tmpl_init(MROCE_OP_ATOMIC_REQ, &t);
	t.c.flags = MROCE_F_EOM;
	t.u.d.msg_offset = 8;
	add_tmpl(MROCE_WIRE_EFLAGS, MROCE_OP_ATOMIC_REQ, &t, "without SOM");

	/* Path fields on packets that are on no path; reserved fields. */
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_ACK, "path_id set", 8, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_NAK, "path_gen set", 9, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_CONN_REQ, "floor_delta set", 10, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_UD_SEND, "path_psn set", 15, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_SEND, "reserved byte 16", 16, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_WRITE, "reserved byte 39", 39, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_ATOMIC_REQ, "reserved byte 75", 75, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_ATOMIC_RESP, "reserved byte 47", 47, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_ACK, "reserved byte 25", 25, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_ACK, "block reserved byte 2", 30, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_NAK, "reserved byte 19", 19, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_NAK, "reserved byte 24", 24, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_PROBE, "reserved byte 22", 22, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_CONN_REQ, "reserved byte 39", 39, 1, 0);
	add_mod(MROCE_WIRE_ERESERVED, MROCE_OP_UD_SEND, "reserved byte 20", 20, 1, 0);

	/* Lengths. */
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_PROBE, "one trailing byte", NO_MOD, 0, 1);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_NAK, "one trailing byte", NO_MOD, 0, 1);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_CONN_REQ, "one trailing byte", NO_MOD, 0, 1);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_CONN_CLOSE, "one trailing byte", NO_MOD, 0, 1);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_ACK, "one byte after the blocks", NO_MOD, 0, 1);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_READ_REQ, "one byte of payload", NO_MOD, 0, 1);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_ATOMIC_REQ, "one byte of payload", NO_MOD, 0, 1);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_ATOMIC_RESP, "one byte of payload", NO_MOD, 0, 1);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_WRITE, "payload beyond the length", NO_MOD, 0, 8);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_MAD, "255-byte MAD", NO_MOD, 0, -1);
	add_mod(MROCE_WIRE_ELENGTH, MROCE_OP_MAD, "257-byte MAD", NO_MOD, 0, 1);
	tmpl_init(MROCE_OP_WRITE, &t);
	t.u.d.va = ~0ull - 15;			/* [va, va + 32) wraps */
	add_tmpl(MROCE_WIRE_ELENGTH, MROCE_OP_WRITE, &t, "address range wraps");
	tmpl_init(MROCE_OP_READ_REQ, &t);
	t.u.d.va = ~0ull - 100;
	add_tmpl(MROCE_WIRE_ELENGTH, MROCE_OP_READ_REQ, &t, "address range wraps");

	/* ACK block counts: one too many, the most a byte holds (0 is a hint-only ACK). */
	add_mod(MROCE_WIRE_EBLOCKS, MROCE_OP_ACK, "17 blocks announced", 24, 17, 0);
	add_mod(MROCE_WIRE_EBLOCKS, MROCE_OP_ACK, "255 blocks announced", 24, 255, 0);

	/* Field values. */
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_SEND, "dst_conn 0", 7, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_PROBE, "dst_conn 0", 7, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_ACK, "dst_conn 0", 7, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_NAK, "code 0", 16, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_NAK, "code 9", 16, 9, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_NAK, "code 255", 16, 255, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_NAK, "dst_conn 0 on RNR", 7, 0, 0);
	tmpl_init(MROCE_OP_NAK, &t);
	t.u.nak.code = MROCE_NAK_REMOTE_ACCESS;
	t.u.nak.arg = 1;
	add_tmpl(MROCE_WIRE_EFIELD, MROCE_OP_NAK, &t, "REMOTE_ACCESS with arg 1");
	t.u.nak.code = MROCE_NAK_UNKNOWN_CONN;
	add_tmpl(MROCE_WIRE_EFIELD, MROCE_OP_NAK, &t, "UNKNOWN_CONN with dst_conn set");
	t.c.dst_conn = 0;
	t.u.nak.arg = 0;
	add_tmpl(MROCE_WIRE_EFIELD, MROCE_OP_NAK, &t, "UNKNOWN_CONN naming id 0");
	tmpl_init(MROCE_OP_NAK, &t);
	t.u.nak.code = MROCE_NAK_STALE_GEN;
	t.u.nak.arg = 256;
	add_tmpl(MROCE_WIRE_EFIELD, MROCE_OP_NAK, &t, "STALE_GEN with generation 256");
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_REQ, "src_conn 0", 19, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_REQ, "nonce 0", 27, 0, 0);
	for (i = 20; i < 27; i++)
		cases[ncases - 1].b[i] = 0;
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_REQ, "mtu 511", 36, 1, 0);
	cases[ncases - 1].b[37] = 0xff;
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_REQ, "0 paths", 38, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_REQ, "65 paths", 38, 65, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_REQ, "dst_conn set", 7, 9, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_REQ, "echo_nonce set", 35, 9, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_REP, "echo_nonce 0", 35, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_REP, "dst_conn 0", 7, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_CONN_CLOSE, "src_conn 0", 19, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_ATOMIC_REQ, "atomic op 2", 72, 2, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_UD_SEND, "to QP1 outside a MAD", 19, 1, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_UD_SEND, "from QP0", 23, 0, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_UD_SEND, "dst_conn set", 7, 1, 0);
	add_mod(MROCE_WIRE_EFIELD, MROCE_OP_MAD, "MAD to QP 2", 19, 2, 0);

	/* Random mutations of valid packets: 1-4 bit flips or a new length. */
	for (i = 0; i < (unsigned int)mutations; i++) {
		u8 op = all_ops[rnd() % sizeof(all_ops)];
		unsigned int k, n = 1 + rnd() % 4;

		len = base_packet(op, b, 1, NULL);
		if (rnd() % 4 == 0) {
			len = rnd() % (len + 8);
		} else {
			for (k = 0; k < n; k++) {
				u32 pos = rnd() % len;

				b[pos] ^= 1u << (rnd() % 8);
			}
		}
		add(-1, b, len, "mutated %s", op_str(op));
	}
}

/*
 * A captured frame may hold several packets: with tx_burst the module sends
 * a burst of one path as one UDP fraglist-GSO skb, and a tap in front of a
 * device that takes such skbs whole (veth, both ends) sees the burst before
 * anything segments it. The frame is then the first packet's Ethernet, IP
 * and UDP header, whose lengths cover the whole burst, its mroce packet, and
 * every further packet with its own IP and UDP header. Nothing in the frame
 * says where the first packet ends (on 6.1 AF_PACKET's vnet header has no
 * UDP GSO type, and the mroce header has no length), so the split looks for
 * the chain instead: the first offset from which IPv4 headers of the same
 * flow, each with a valid header checksum and a consistent UDP length,
 * follow one another exactly to the end of the frame. A lone packet has no
 * such chain inside it short of a forged one, which the sniffer never sees:
 * it only learns from our own device's traffic.
 */
#define MAX_FRAME	(ETH_HLEN + 65536)
#define MAX_SPLIT	2048	/* 64 KiB of the smallest packets */

struct wire_pkt {
	const uint8_t *ip;	/* its IPv4 header */
	uint32_t len;		/* IP header to the end of its mroce packet */
};

static uint16_t ip_csum(const uint8_t *h, uint32_t len)
{
	uint32_t sum = 0, i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (h[i] << 8) | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t be16_at(const uint8_t *p)
{
	return (p[0] << 8) | p[1];
}

/* Is @p a packet of @head's flow, whole within @end? Returns its length. */
static uint32_t flow_pkt(const uint8_t *head, const uint8_t *p, const uint8_t *end)
{
	uint32_t ihl = (head[0] & 15) * 4, len;

	if (end - p < ihl + 8 || p[0] != head[0] || p[9] != IPPROTO_UDP ||
	    memcmp(p + 12, head + 12, 8) || memcmp(p + ihl, head + ihl, 4) ||
	    ip_csum(p, ihl))
		return 0;
	len = be16_at(p + 2);
	if (len < ihl + 8 || len > end - p || be16_at(p + ihl + 4) != len - ihl)
		return 0;
	return len;
}

/* The IPv4/UDP packets in captured frame @f of @n bytes; how many. */
static int frame_split(const uint8_t *f, size_t n, struct wire_pkt *out, int max)
{
	const uint8_t *ip = f + ETH_HLEN, *end, *q, *p;
	uint32_t ihl, tot, len;
	int k;

	if (n < ETH_HLEN + 28 || f[12] != 0x08 || f[13] != 0x00 || ip[0] >> 4 != 4 ||
	    ip[9] != IPPROTO_UDP || (ip[0] & 15) < 5)
		return 0;
	ihl = (ip[0] & 15) * 4;
	tot = be16_at(ip + 2);
	if (tot < ihl + 8 || ETH_HLEN + tot > n)
		return 0;		/* truncated */
	end = ip + tot;
	for (q = ip + ihl + 8 + 1; q + ihl + 8 <= end; q++) {
		if (*q != ip[0])
			continue;
		for (p = q, k = 1; p < end && k < max; p += len, k++) {
			len = flow_pkt(ip, p, end);
			if (!len)
				break;
			out[k].ip = p;
			out[k].len = len;
		}
		if (p == end) {
			out[0].ip = ip;
			out[0].len = q - ip;
			return k;
		}
	}
	out[0].ip = ip;
	out[0].len = tot;
	return 1;
}

/*
 * IPv4 and UDP header for @mlen bytes of mroce packet at @ip + 28; the
 * lengths say @tot (more than the packet for the first one of a burst).
 */
static uint32_t put_hdrs(uint8_t *ip, uint32_t mlen, uint32_t tot)
{
	uint16_t c;

	memset(ip, 0, 28);
	ip[0] = 0x45;
	ip[2] = tot >> 8;
	ip[3] = tot;
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	c = ip_csum(ip, 20);
	ip[10] = c >> 8;
	ip[11] = c;
	ip[20] = MROCE_SPORT_MIN >> 8;
	ip[21] = MROCE_SPORT_MIN & 0xff;
	ip[22] = MROCE_UDP_PORT_DEFAULT >> 8;
	ip[23] = MROCE_UDP_PORT_DEFAULT & 0xff;
	ip[24] = (tot - 20) >> 8;
	ip[25] = tot - 20;
	return 28 + mlen;
}

/*
 * The sniffer's split, on frames built the way a tap sees them: a lone
 * packet, and bursts (the first packet's lengths covering the burst) of
 * data packets, and of control packets small enough to fit one MTU.
 */
static void check_split(void)
{
	static const u8 bursts[][5] = {
		{ MROCE_OP_WRITE },
		{ MROCE_OP_WRITE, MROCE_OP_WRITE, MROCE_OP_SEND, MROCE_OP_ACK, MROCE_OP_PROBE },
		{ MROCE_OP_ACK, MROCE_OP_ACK },
		{ MROCE_OP_MAD, MROCE_OP_WRITE, MROCE_OP_MAD },
	};
	static uint8_t f[MAX_FRAME];
	struct wire_pkt w[8];
	uint32_t off[5], len[5], o, i, j, n;
	struct mroce_pkt p;
	int k, bad = 0;

	for (i = 0; i < sizeof(bursts) / sizeof(bursts[0]); i++) {
		memset(f, 0, ETH_HLEN);
		f[12] = 0x08;
		o = ETH_HLEN;
		for (n = 0; n < 5 && bursts[i][n]; n++) {
			len[n] = base_packet(bursts[i][n], f + o + 28, 1, NULL);
			off[n] = o;
			o += put_hdrs(f + o, len[n], 28 + len[n]);
		}
		put_hdrs(f + ETH_HLEN, len[0], o - ETH_HLEN);
		k = frame_split(f, o, w, 8);
		if (k != (int)n) {
			tc_result(false, "the sniffer splits captured bursts",
			       "burst %u: %d packets of %u", i, k, n);
			bad++;
			continue;
		}
		for (j = 0; j < n; j++)
			if (w[j].ip != f + off[j] || w[j].len != 28 + len[j] ||
			    mroce_decode(w[j].ip + 28, w[j].len - 28, &p) != MROCE_WIRE_OK ||
			    p.c.opcode != bursts[i][j]) {
				tc_result(false, "the sniffer splits captured bursts",
				       "burst %u: packet %u is %u bytes at %td, not %u at %u", i, j,
				       w[j].len, w[j].ip - f, 28 + len[j], off[j]);
				bad++;
				break;
			}
	}
	if (!bad)
		tc_result(true, "the sniffer splits captured bursts into their packets", NULL);
}

static int cmd_check(void)
{
	struct mroce_pkt p;
	int i, bad = 0, per[MROCE_WIRE_NR_ERR] = { 0 };
	u8 b[MAX_PKT];
	u32 len;
	unsigned int k;

	for (k = 0; k < sizeof(all_ops); k++) {
		len = base_packet(all_ops[k], b, 1, NULL);
		if (mroce_decode(b, len, &p) != MROCE_WIRE_OK) {
			tc_result(false, "valid base packets decode", "%s does not", op_str(all_ops[k]));
			bad++;
		}
	}
	if (!bad)
		tc_result(true, "a valid packet of each of the 18 opcodes decodes", NULL);
	check_split();
	build_cases(0);
	bad = 0;
	for (i = 0; i < ncases; i++) {
		enum mroce_wire_err got = mroce_decode(cases[i].b, cases[i].len, &p);

		if ((int)got != cases[i].want) {
			tc_result(false, cases[i].name, "decodes as %s, crafted as %s",
			       mroce_wire_err_name[got], mroce_wire_err_name[cases[i].want]);
			bad++;
		}
		per[cases[i].want]++;
	}
	if (!bad) {
		char what[300];
		int o = 0, e;

		for (e = MROCE_WIRE_ETRUNC; e <= MROCE_WIRE_EFIELD; e++)
			if (per[e])
				o += snprintf(what + o, sizeof(what) - o, " %s %d,",
					      mroce_wire_err_name[e], per[e]);
		what[o - 1] = 0;
		printf("# %d crafted packets:%s\n", ncases, what);
		tc_result(true, "every crafted packet decodes to the class it was crafted for", NULL);
	}
	return tc_nfail ? 1 : 0;
}

/* ---- live device: counters, sending --------------------------------------- */

static const char *tdev;

static long long counter(const char *name)
{
	char path[256], buf[64];
	FILE *f;
	long long v = -1;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", tdev, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = atoll(buf);
	fclose(f);
	return v;
}

/* The hw counter of each decoder class (mroce_counters.c). */
static const char *const class_counter[MROCE_WIRE_NR_ERR] = {
	[MROCE_WIRE_ETRUNC] = "drop_truncated",
	[MROCE_WIRE_EVERSION] = "drop_bad_version",
	[MROCE_WIRE_EOPCODE] = "drop_bad_opcode",
	[MROCE_WIRE_ERESERVED] = "drop_reserved",
	[MROCE_WIRE_EFLAGS] = "drop_bad_flags",
	[MROCE_WIRE_ELENGTH] = "drop_bad_length",
	[MROCE_WIRE_EBLOCKS] = "drop_bad_ack_blocks",
	[MROCE_WIRE_EFIELD] = "drop_bad_field",
};

/* Every counter of the target, to show what else moved. */
#define MAX_CTR 128
static char ctr_name[MAX_CTR][256];
static long long ctr_val[MAX_CTR];
static int nctr;

static void snap_all(void)
{
	char path[256];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters", tdev);
	dir = opendir(path);
	if (!dir)
		return;
	nctr = 0;
	while ((de = readdir(dir)) && nctr < MAX_CTR) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
			continue;
		snprintf(ctr_name[nctr], sizeof(ctr_name[nctr]), "%s", de->d_name);
		ctr_val[nctr] = counter(de->d_name);
		nctr++;
	}
	closedir(dir);
}

/* " name +delta ..." for every counter that moved since snap_all(). */
static const char *moved(void)
{
	static char buf[1024];
	int i, o = 0;

	buf[0] = 0;
	for (i = 0; i < nctr && o < (int)sizeof(buf) - 80; i++) {
		long long d = counter(ctr_name[i]) - ctr_val[i];

		if (d)
			o += snprintf(buf + o, sizeof(buf) - o, " %s +%lld", ctr_name[i], d);
	}
	return o ? buf : " none";
}

static void print_moved(void)
{
	printf("# %s counters that moved:%s\n", tdev, moved());
}

static int udp_fd;
static struct sockaddr_in to_addr;

static void udp_open(const char *from, const char *to, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int tries;

	udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (udp_fd < 0)
		die("socket: %s", strerror(errno));
	if (from && inet_pton(AF_INET, from, &sa.sin_addr) != 1)
		die("bad --from address %s", from);
	/* A source port in the range mroce uses for path entropy. */
	for (tries = 0; tries < 100; tries++) {
		sa.sin_port = htons(MROCE_SPORT_MIN + rnd() % (MROCE_SPORT_MAX - MROCE_SPORT_MIN));
		if (!bind(udp_fd, (struct sockaddr *)&sa, sizeof(sa)))
			break;
	}
	if (tries == 100)
		die("cannot bind a UDP source port: %s", strerror(errno));
	to_addr.sin_family = AF_INET;
	to_addr.sin_port = htons(port);
	if (inet_pton(AF_INET, to, &to_addr.sin_addr) != 1)
		die("bad --to address %s", to);
}

static unsigned long sent;

static void udp_send(const u8 *b, u32 len)
{
	if (sendto(udp_fd, b, len, 0, (struct sockaddr *)&to_addr, sizeof(to_addr)) != (ssize_t)len)
		die("sendto: %s", strerror(errno));
	/* Pace: the veth backlog (1000 packets) must not drop any. */
	if (++sent % 32 == 0)
		usleep(2000);
}

static int cmd_blast(const char *from, const char *to, int port, int mutations)
{
	long long before[MROCE_WIRE_NR_ERR] = { 0 }, after[MROCE_WIRE_NR_ERR] = { 0 };
	int want[MROCE_WIRE_NR_ERR] = { 0 }, i, e, decodes = 0;
	long long rcvd0, rcvd;
	struct mroce_pkt p;
	double deadline;
	bool match;

	build_cases(mutations);
	for (e = MROCE_WIRE_ETRUNC; e <= MROCE_WIRE_EFIELD; e++) {
		before[e] = counter(class_counter[e]);
		if (before[e] < 0)
			die("%s has no hw counter %s", tdev, class_counter[e]);
	}
	rcvd0 = counter("rcvd_pkts");
	snap_all();
	udp_open(from, to, port);
	for (i = 0; i < ncases; i++) {
		enum mroce_wire_err got = mroce_decode(cases[i].b, cases[i].len, &p);

		if (got == MROCE_WIRE_OK)
			decodes++;
		else
			want[got]++;
		udp_send(cases[i].b, cases[i].len);
	}
	printf("# sent %d packets (%d decode: the kernel judges them by state)\n", ncases, decodes);
	/* Counters are read through a 10 ms cache; give the softirq time too. */
	deadline = tc_now_s() + 10;
	do {
		usleep(100000);
		match = true;
		for (e = MROCE_WIRE_ETRUNC; e <= MROCE_WIRE_EFIELD; e++) {
			after[e] = counter(class_counter[e]);
			if (after[e] - before[e] != want[e])
				match = false;
		}
	} while (!match && tc_now_s() < deadline);
	for (e = MROCE_WIRE_ETRUNC; e <= MROCE_WIRE_EFIELD; e++) {
		char what[120];

		snprintf(what, sizeof(what), "%s counted %d malformed packets", class_counter[e], want[e]);
		tc_result(after[e] - before[e] == want[e], what, "moved by %lld", after[e] - before[e]);
	}
	print_moved();
	rcvd = counter("rcvd_pkts");
	if (rcvd >= 0) {
		printf("# rcvd_pkts moved by %lld\n", rcvd - rcvd0);
		tc_result(rcvd - rcvd0 >= ncases, "rcvd_pkts counted every packet", "moved by %lld for %d",
		       rcvd - rcvd0, ncases);
	}
	return tc_nfail ? 1 : 0;
}

/* ---- a live connection under attack --------------------------------------- */

#define MR_LEN		65536
#define AT_LEN		4096
#define RECV_LEN	4096
#define NRECV		32
#define PAT_MR		0x4d52504154ull		/* initial content of the MRs */
#define PAT_W1		0x5752495445ull		/* legit WRITE before the attacks */
#define PAT_W2		0x5752495432ull		/* legit WRITE after them */
#define W1_OFF		0
#define W2_OFF		8192
#define W_LEN		4096
#define POLL_LINES	16		/* completions a POLL answer details */

/* What the target tells the attacker (network order). */
struct target_info {
	uint32_t qpn, psn, mtu, atomic;
	uint8_t gid[16];
	uint64_t rw_addr, ro_addr, lo_addr, at_addr;
	uint32_t rw_rkey, ro_rkey, lo_rkey, at_rkey;
};

struct peer_info {
	uint32_t qpn, psn;
	uint8_t gid[16];
};

static int ctl;

static void ctl_send(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	if (send(ctl, line, n, MSG_NOSIGNAL) != n)
		die("control connection: %s", strerror(errno));
}

static void ctl_recv(char *line, size_t len)
{
	size_t o = 0;

	while (o + 1 < len) {
		ssize_t n = recv(ctl, line + o, 1, 0);

		if (n <= 0)
			die("control connection: %s", n ? strerror(errno) : "closed by the peer");
		if (line[o] == '\n')
			break;
		o++;
	}
	line[o] = 0;
}

static void recv_exact(void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(ctl, p, len, 0);

		if (n <= 0)
			die("control connection closed during setup");
		p += n;
		len -= n;
	}
}

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_port_attr port;
	struct ibv_device_attr attr;
	int gid_idx;
	uint8_t gid[16];
};

/* A fresh RC QP (and CQ) on d, replacing the one it had. */
static void dev_qp_new(struct dev *d)
{
	struct ibv_qp_init_attr ia = { 0 };

	if (d->qp && ibv_destroy_qp(d->qp))
		die("ibv_destroy_qp: %s", strerror(errno));
	if (d->cq && ibv_destroy_cq(d->cq))
		die("ibv_destroy_cq: %s", strerror(errno));
	d->cq = ibv_create_cq(d->ctx, 256, NULL, NULL, 0);
	if (!d->cq)
		die("ibv_create_cq: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = d->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = 1;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = NRECV;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	d->qp = ibv_create_qp(d->pd, &ia);
	if (!d->qp)
		die("ibv_create_qp: %s", strerror(errno));
}

static void dev_open(struct dev *d, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->ctx = tc_open_device(name);
	if (ibv_query_device(d->ctx, &d->attr) || ibv_query_port(d->ctx, 1, &d->port))
		die("cannot query %s", name);
	d->gid_idx = tc_find_ipv4_gid(d->ctx, d->port.gid_tbl_len);
	if (d->gid_idx < 0 || ibv_query_gid(d->ctx, 1, d->gid_idx, (union ibv_gid *)d->gid))
		die("%s has no IPv4 GID", name);
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		die("ibv_alloc_pd on %s: %s", name, strerror(errno));
	dev_qp_new(d);
}

static void dev_connect(struct dev *d, uint32_t dqpn, uint32_t rq_psn, uint32_t sq_psn,
			const uint8_t *dgid, enum ibv_mtu mtu)
{
	struct tc_rc_attr r = { 0 };
	const char *step;
	int err;

	r.mtu = mtu < d->port.active_mtu ? mtu : d->port.active_mtu;
	r.dest_qpn = dqpn;
	r.rq_psn = rq_psn;
	r.sq_psn = sq_psn;
	memcpy(r.dgid, dgid, 16);
	r.sgid_index = d->gid_idx;
	r.rd_atomic = 1;
	r.min_rnr_timer = 12;
	r.timeout = 16;
	r.retry_cnt = 7;
	r.rnr_retry = 7;
	err = tc_qp_to_rts(d->qp, &r, &step);
	if (err)
		die("QP to %s: %s", step, strerror(err));
}

static struct ibv_mr *mr_new(struct dev *d, size_t len, int access, uint64_t key)
{
	void *buf;
	struct ibv_mr *mr;

	if (posix_memalign(&buf, 4096, len))
		die("out of memory");
	tc_pat_fill(buf, len, key, 0);
	mr = ibv_reg_mr(d->pd, buf, len, access);
	if (!mr)
		die("ibv_reg_mr(%zu, 0x%x): %s", len, access, strerror(errno));
	return mr;
}

static void post_recvs(struct dev *d, struct ibv_mr *rb)
{
	int i;

	for (i = 0; i < NRECV; i++) {
		struct ibv_sge sge = { (uintptr_t)rb->addr + i * RECV_LEN, RECV_LEN, rb->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(d->qp, &wr, &bad))
			die("ibv_post_recv failed");
	}
}

/*
 * Target: serve the attacker's control commands until QUIT.
 *   POLL           -> "n <count> ok <successful> state <ibv_qp_state>" +
 *                     one "wc ..." line per completion since the last POLL
 *                     (the first POLL_LINES of them)
 *   NEWQP qpn psn  -> "qp <qpn>": a fresh QP connected to the attacker's
 *                     fresh QP (an access error kills the responder's QP)
 *   CHECK          -> "ok" or "bad <what>": rw holds the pattern except
 *                     the two legit WRITEs, ro/lo/at never change
 */
static int cmd_target(const char *devname, int port)
{
	struct dev d;
	struct ibv_mr *rw, *ro, *lo, *at, *rb;
	struct target_info ti = { 0 };
	struct peer_info pi;
	struct ibv_wc wc[16];
	char line[256];
	int i, n;

	dev_open(&d, devname);
	rw = mr_new(&d, MR_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		    IBV_ACCESS_REMOTE_READ, PAT_MR);
	ro = mr_new(&d, MR_LEN, IBV_ACCESS_REMOTE_READ, PAT_MR + 1);
	lo = mr_new(&d, MR_LEN, IBV_ACCESS_LOCAL_WRITE, PAT_MR + 2);
	at = mr_new(&d, AT_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, PAT_MR + 3);
	rb = mr_new(&d, NRECV * RECV_LEN, IBV_ACCESS_LOCAL_WRITE, PAT_MR + 4);
	tc_tcp_accept(port, 1, &ctl);
	ti.qpn = htonl(d.qp->qp_num);
	ti.psn = htonl(0x1000);
	ti.mtu = htonl(d.port.active_mtu);
	ti.atomic = htonl(d.attr.atomic_cap != IBV_ATOMIC_NONE);
	memcpy(ti.gid, d.gid, 16);
	ti.rw_addr = htobe64((uintptr_t)rw->addr);
	ti.ro_addr = htobe64((uintptr_t)ro->addr);
	ti.lo_addr = htobe64((uintptr_t)lo->addr);
	ti.at_addr = htobe64((uintptr_t)at->addr);
	ti.rw_rkey = htonl(rw->rkey);
	ti.ro_rkey = htonl(ro->rkey);
	ti.lo_rkey = htonl(lo->rkey);
	ti.at_rkey = htonl(at->rkey);
	if (send(ctl, &ti, sizeof(ti), MSG_NOSIGNAL) != sizeof(ti))
		die("control connection: %s", strerror(errno));
	recv_exact(&pi, sizeof(pi));
	dev_connect(&d, ntohl(pi.qpn), ntohl(pi.psn), 0x1000, pi.gid, ntohl(ti.mtu));
	post_recvs(&d, rb);
	ctl_send("ready");

	for (;;) {
		ctl_recv(line, sizeof(line));
		if (!strcmp(line, "POLL")) {
			char buf[POLL_LINES][128];
			struct ibv_qp_attr qa;
			struct ibv_qp_init_attr qia;
			int total = 0, ok = 0, kept = 0;

			while ((n = ibv_poll_cq(d.cq, 16, wc)) > 0) {
				for (i = 0; i < n; i++, total++) {
					ok += wc[i].status == IBV_WC_SUCCESS;
					if (kept == POLL_LINES)
						continue;
					snprintf(buf[kept++], sizeof(buf[0]),
						 "wc wr_id %" PRIu64 " %s opcode %d byte_len %u",
						 (uint64_t)wc[i].wr_id, ibv_wc_status_str(wc[i].status),
						 wc[i].opcode, wc[i].byte_len);
				}
			}
			if (ibv_query_qp(d.qp, &qa, IBV_QP_STATE, &qia))
				qa.qp_state = -1;
			ctl_send("n %d ok %d state %d", total, ok, qa.qp_state);
			for (i = 0; i < kept; i++)
				ctl_send("%s", buf[i]);
		} else if (sscanf(line, "NEWQP %u %u", &pi.qpn, &pi.psn) == 2) {
			fprintf(stderr, "%.3f replacing QP %u\n", tc_now_s(), d.qp->qp_num);
			dev_qp_new(&d);
			fprintf(stderr, "%.3f new QP %u\n", tc_now_s(), d.qp->qp_num);
			dev_connect(&d, pi.qpn, pi.psn, 0x1000, pi.gid, ntohl(ti.mtu));
			post_recvs(&d, rb);
			ctl_send("qp %u", d.qp->qp_num);
		} else if (!strcmp(line, "CHECK")) {
			uint8_t *w = rw->addr;
			long long off;

			if ((off = tc_pat_diff(w, W1_OFF, PAT_MR, 0)) >= 0 ||
			    (off = tc_pat_diff(w + W1_OFF + W_LEN, W2_OFF - W1_OFF - W_LEN, PAT_MR,
					       W1_OFF + W_LEN)) >= 0 ||
			    (off = tc_pat_diff(w + W2_OFF + W_LEN, MR_LEN - W2_OFF - W_LEN, PAT_MR,
					       W2_OFF + W_LEN)) >= 0)
				ctl_send("bad the read-write MR changed outside the legit writes (near offset %lld)",
					 off);
			else if ((off = tc_pat_diff(w + W1_OFF, W_LEN, PAT_W1, 0)) >= 0)
				ctl_send("bad the first legit WRITE is wrong at byte %lld", off);
			else if ((off = tc_pat_diff(w + W2_OFF, W_LEN, PAT_W2, 0)) >= 0)
				ctl_send("bad the second legit WRITE is wrong at byte %lld", off);
			else if ((off = tc_pat_diff(ro->addr, MR_LEN, PAT_MR + 1, 0)) >= 0)
				ctl_send("bad the read-only MR changed at offset %lld", off);
			else if ((off = tc_pat_diff(lo->addr, MR_LEN, PAT_MR + 2, 0)) >= 0)
				ctl_send("bad the local-only MR changed at offset %lld", off);
			else if ((off = tc_pat_diff(at->addr, AT_LEN, PAT_MR + 3, 0)) >= 0)
				ctl_send("bad the atomic MR changed at offset %lld", off);
			else
				ctl_send("ok");
		} else if (!strcmp(line, "QUIT")) {
			ctl_send("bye");
			return 0;
		} else {
			die("unknown command '%s'", line);
		}
	}
}

/* What the sniffer learned about the attacker -> target direction. */
static struct {
	bool conn_known;
	uint32_t conn;			/* dst_conn the target expects */
	bool path_seen[MROCE_MAX_PATHS];
	uint8_t gen[MROCE_MAX_PATHS];
	uint32_t last_psn[MROCE_MAX_PATHS];
	bool stream_known;
	uint32_t stream_psn;		/* highest stream PSN sent to the target QP */
	uint8_t write_pkt[MAX_PKT];	/* a legit WRITE and SEND, for replay */
	uint32_t write_len;
	uint8_t send_pkt[MAX_PKT];
	uint32_t send_len;
} L;

static int pkt_fd;
static struct in_addr my_ip, target_ip;
static uint32_t target_qpn;

static void sniff_open(const char *ifname)
{
	/* ETH_P_ALL: only taps of every protocol see outgoing frames. */
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int rcvbuf = 8 << 20;

	pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (pkt_fd < 0)
		die("AF_PACKET socket: %s (root needed)", strerror(errno));
	sll.sll_ifindex = if_nametoindex(ifname);
	if (!sll.sll_ifindex)
		die("no interface %s here", ifname);
	if (bind(pkt_fd, (struct sockaddr *)&sll, sizeof(sll)))
		die("bind to %s: %s", ifname, strerror(errno));
	/*
	 * Frames wait here until the learning phase reads them, and a burst
	 * charges the whole GSO skb: room for a busy connection's worth.
	 */
	if (setsockopt(pkt_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(pkt_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
}

static struct {
	unsigned int frames, bursts, burst_pkts;
} S;

/* Learn from one of our device's packets to the target. */
static void learn_pkt(const struct wire_pkt *w, int port)
{
	const uint8_t *ip = w->ip, *udp, *m;
	struct mroce_pkt p;
	uint32_t ihl, len;

	ihl = (ip[0] & 15) * 4;
	udp = ip + ihl;
	if (memcmp(ip + 12, &my_ip, 4) || memcmp(ip + 16, &target_ip, 4) ||
	    be16_at(udp + 2) != (uint32_t)port)
		return;
	m = udp + 8;
	len = w->len - ihl - 8;
	if (mroce_decode(m, len, &p) != MROCE_WIRE_OK)
		return;
	if (p.c.dst_conn) {
		L.conn = p.c.dst_conn;
		L.conn_known = true;
	}
	if (!mroce_op_is_data(p.c.opcode) && p.c.opcode != MROCE_OP_PROBE)
		return;
	if (!L.path_seen[p.c.path_id] || p.c.path_gen != L.gen[p.c.path_id] ||
	    (int32_t)(p.c.path_psn - L.last_psn[p.c.path_id]) > 0) {
		L.path_seen[p.c.path_id] = true;
		L.gen[p.c.path_id] = p.c.path_gen;
		L.last_psn[p.c.path_id] = p.c.path_psn;
	}
	if (!mroce_op_is_data(p.c.opcode) || p.u.d.stream_id != target_qpn)
		return;
	if (!L.stream_known || (int32_t)(p.u.d.stream_psn - L.stream_psn) > 0)
		L.stream_psn = p.u.d.stream_psn;
	L.stream_known = true;
	if (p.c.opcode == MROCE_OP_WRITE && len <= MAX_PKT) {
		memcpy(L.write_pkt, m, len);
		L.write_len = len;
	} else if (p.c.opcode == MROCE_OP_SEND && len <= MAX_PKT) {
		memcpy(L.send_pkt, m, len);
		L.send_len = len;
	}
}

/* The selftest logs whether module parameter tx_burst made bursts. */
static void print_sniffed(void)
{
	printf("# sniffed %u frames, %u of them bursts of %u packets in all\n", S.frames,
	       S.bursts, S.burst_pkts);
	fflush(stdout);
}

/*
 * Drain captured frames; learn from our device's packets to the target.
 * Only during the learning phase: our forged packets cross the same wire.
 */
static void sniff(int port)
{
	static uint8_t f[MAX_FRAME];
	static struct wire_pkt w[MAX_SPLIT];
	double deadline = tc_now_s() + 2;
	ssize_t n;
	int k, i;

	while ((n = recv(pkt_fd, f, sizeof(f), 0)) > 0 && tc_now_s() < deadline) {
		k = frame_split(f, n, w, MAX_SPLIT);
		S.frames++;
		if (k > 1) {
			S.bursts++;
			S.burst_pkts += k;
		}
		for (i = 0; i < k; i++)
			learn_pkt(&w[i], port);
	}
}

static struct dev A;
static struct ibv_mr *abuf;
static struct target_info T;

/* Post one work request on the attacker's QP and wait for its completion. */
static bool legit(enum ibv_wr_opcode op, uint32_t len, uint64_t raddr, uint32_t rkey,
		  uint64_t key, char *why, size_t whylen)
{
	struct ibv_sge sge = { (uintptr_t)abuf->addr, len, abuf->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op }, *bad;
	struct ibv_wc wc;
	double deadline = tc_now_s() + 30;
	int n;

	if (op == IBV_WR_RDMA_READ)
		memset(abuf->addr, 0, len);
	else
		tc_pat_fill(abuf->addr, len, key, 0);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(A.qp, &wr, &bad)) {
		snprintf(why, whylen, "ibv_post_send failed");
		return false;
	}
	while ((n = ibv_poll_cq(A.cq, 1, &wc)) == 0 && tc_now_s() < deadline)
		usleep(1000);
	if (n <= 0) {
		snprintf(why, whylen, "no completion in 30 s");
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		snprintf(why, whylen, "completed with %s", ibv_wc_status_str(wc.status));
		return false;
	}
	if (op == IBV_WR_RDMA_READ && tc_pat_diff(abuf->addr, len, key, 0) >= 0) {
		snprintf(why, whylen, "READ returned wrong data at byte %lld",
			 tc_pat_diff(abuf->addr, len, key, 0));
		return false;
	}
	return true;
}

/*
 * Completions the target saw since the last call (-1: the target is gone);
 * how many of them succeeded and its QP's state go to *ok and *state.
 */
static int target_poll(char *first, size_t len, int *ok, int *state)
{
	char line[256];
	int n, i, o, st;

	ctl_send("POLL");
	ctl_recv(line, sizeof(line));
	if (sscanf(line, "n %d ok %d state %d", &n, &o, &st) != 3)
		return -1;
	if (ok)
		*ok = o;
	if (state)
		*state = st;
	if (first)
		*first = 0;
	for (i = 0; i < n && i < POLL_LINES; i++) {
		ctl_recv(line, sizeof(line));
		if (!i && first)
			snprintf(first, len, "%s", line);
	}
	return n;
}

static int target_completions(char *first, size_t len)
{
	return target_poll(first, len, NULL, NULL);
}

/* Forge a data packet on the learned connection and path. */
static uint32_t forge(uint8_t *b, u8 op, uint32_t stream_id, uint32_t spsn,
		      uint64_t va, uint32_t rkey, uint32_t len, int path, int gen_delta)
{
	struct mroce_pkt p = { 0 };
	uint32_t n;

	p.c.opcode = op;
	p.c.flags = MROCE_F_SOM | MROCE_F_EOM | MROCE_F_AR;
	p.c.dst_conn = L.conn;
	p.c.path_id = path;
	p.c.path_gen = L.gen[path] + gen_delta;
	p.c.path_psn = L.last_psn[path] + 1;
	p.u.d.stream_id = stream_id;
	p.u.d.stream_psn = spsn;
	p.u.d.ssn = 0x7777;
	p.u.d.va = va;
	p.u.d.rkey = rkey;
	if (op == MROCE_OP_WRITE) {
		p.u.d.length = len;
		p.payload_len = len;
	} else if (op == MROCE_OP_READ_REQ) {
		p.u.d.length = len;
	} else if (op == MROCE_OP_ATOMIC_REQ) {
		p.u.d.swap_add = 1;
	}
	n = mroce_encode(&p, b, MAX_PKT);
	if (!n)
		die("cannot encode a forged %s", op_str(op));
	memset(b + n, 0xee, p.payload_len);
	return n + p.payload_len;
}

/*
 * Send one forged packet (or a prepared buffer) and expect counter @ctr of
 * the target device to move, and no completion at the target.
 */
/* Send b and wait until counter ctr of the target moves; false if not. */
static bool fire(const char *what, const uint8_t *b, uint32_t len, const char *ctr, int fd)
{
	long long c0 = counter(ctr), c1 = c0;
	double deadline;

	if (c0 < 0) {
		tc_result(false, what, "the target device has no counter %s", ctr);
		return false;
	}
	snap_all();
	if (sendto(fd, b, len, 0, (struct sockaddr *)&to_addr, sizeof(to_addr)) != (ssize_t)len)
		die("sendto: %s", strerror(errno));
	deadline = tc_now_s() + 5;
	while (c1 == c0 && tc_now_s() < deadline) {
		usleep(50000);
		c1 = counter(ctr);
	}
	usleep(100000);
	if (c1 == c0) {
		tc_result(false, what, "%s did not move; moved:%s", ctr, moved());
		return false;
	}
	return true;
}

static void attack(const char *what, const uint8_t *b, uint32_t len, const char *ctr, int fd)
{
	char first[256];
	int n;

	if (!fire(what, b, len, ctr, fd))
		return;
	n = target_completions(first, sizeof(first));
	if (n)
		tc_result(false, what, "the target got %d completion(s): %s", n, first);
	else
		tc_result(true, what, NULL);
}

/*
 * An access the target must refuse with a fatal NAK: like any IB
 * responder (class C errors) its QP goes to the error state, so nothing
 * may complete successfully there: its receives are flushed.
 */
static void attack_fatal(const char *what, const uint8_t *b, uint32_t len, const char *ctr,
			 int fd)
{
	char first[256];
	int n, ok = 0, state = -1;
	double deadline;

	if (!fire(what, b, len, ctr, fd))
		return;
	deadline = tc_now_s() + 5;
	n = target_poll(first, sizeof(first), &ok, &state);
	while (n >= 0 && !ok && state != IBV_QPS_ERR && tc_now_s() < deadline) {
		usleep(50000);
		n = target_poll(NULL, 0, &ok, &state);
	}
	if (ok)
		tc_result(false, what, "the target completed %d work request(s): %s", ok, first);
	else if (state != IBV_QPS_ERR)
		tc_result(false, what, "the target's QP is in state %d, not error", state);
	else
		tc_result(true, what, NULL);
}

/* Discard what the tap holds: our forged packets must not be learned. */
static void sniff_drain(void)
{
	double deadline = tc_now_s() + 0.5;
	uint8_t f[2048];

	/* Bounded: the tap keeps filling while the connection is busy. */
	while (recv(pkt_fd, f, sizeof(f), 0) > 0 && tc_now_s() < deadline)
		;
}

/*
 * A legit WRITE (the first one's data again) and learn from the wire where
 * the stream to the target's current QP stands. Returns the next stream
 * PSN, 0 if it could not be learned.
 */
static uint32_t learn(int udp_port, uint64_t rw, uint32_t rw_rkey, const char *what)
{
	char why[256];

	sniff_drain();
	L.stream_known = false;
	L.write_len = 0;
	if (!legit(IBV_WR_RDMA_WRITE, W_LEN, rw + W1_OFF, rw_rkey, PAT_W1, why, sizeof(why))) {
		tc_result(false, what, "the legit WRITE before it failed: %s", why);
		return 0;
	}
	usleep(200000);
	sniff(udp_port);
	printf("# learned: stream PSN next %u\n", L.stream_psn + 1);
	fflush(stdout);
	if (!L.stream_known) {
		tc_result(false, what, "did not see the legit WRITE on the wire");
		return 0;
	}
	return L.stream_psn + 1;
}

/* Both ends replace their QP: the next refusal will kill the target's. */
static void new_pair(const uint8_t *tgid, uint32_t mtu)
{
	char line[256];

	printf("# new QP pair: replacing QP %u\n", A.qp->qp_num);
	fflush(stdout);
	dev_qp_new(&A);
	ctl_send("NEWQP %u %u", A.qp->qp_num, 0x2000);
	ctl_recv(line, sizeof(line));
	if (sscanf(line, "qp %u", &target_qpn) != 1)
		die("the target could not make a new QP: %s", line);
	dev_connect(&A, target_qpn, 0x1000, 0x2000, tgid, mtu);
	printf("# new QP pair: %u -> %u\n", A.qp->qp_num, target_qpn);
	fflush(stdout);
}

/* A refusal fatal to the target's QP: the forged request and its counter. */
struct fatal_case {
	const char *what, *ctr;
	u8 op;
	uint64_t va;
	uint32_t rkey, len;
};

static int cmd_attack(const char *devname, const char *target, int port, int udp_port,
		      const char *ifname, const char *from2)
{
	struct peer_info pi = { 0 };
	uint8_t b[MAX_PKT];
	char why[256], line[256];
	uint64_t rw, ro, lo, at;
	uint32_t len, base, path = 0, i, rw_rkey;
	int fd2 = -1, n;

	dev_open(&A, devname);
	abuf = mr_new(&A, MR_LEN, IBV_ACCESS_LOCAL_WRITE, 1);
	if (inet_pton(AF_INET, target, &target_ip) != 1)
		die("bad target address %s", target);
	ctl = tc_tcp_connect(target, port);
	{
		/* A target stuck in the kernel must fail the run, not hang it. */
		struct timeval tv = { .tv_sec = 90 };

		setsockopt(ctl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	recv_exact(&T, sizeof(T));
	target_qpn = ntohl(T.qpn);
	rw = be64toh(T.rw_addr);
	ro = be64toh(T.ro_addr);
	lo = be64toh(T.lo_addr);
	at = be64toh(T.at_addr);
	rw_rkey = ntohl(T.rw_rkey);
	pi.qpn = htonl(A.qp->qp_num);
	pi.psn = htonl(0x2000);
	memcpy(pi.gid, A.gid, 16);
	if (send(ctl, &pi, sizeof(pi), MSG_NOSIGNAL) != sizeof(pi))
		die("control connection: %s", strerror(errno));
	dev_connect(&A, target_qpn, 0x1000, 0x2000, T.gid, ntohl(T.mtu));
	ctl_recv(line, sizeof(line));
	if (strcmp(line, "ready"))
		die("the target is not ready: %s", line);
	memcpy(&my_ip, A.gid + 12, 4);
	sniff_open(ifname);
	udp_open(inet_ntoa(my_ip), target, udp_port);
	if (from2) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(MROCE_SPORT_MIN + 7) };

		fd2 = socket(AF_INET, SOCK_DGRAM, 0);
		if (inet_pton(AF_INET, from2, &sa.sin_addr) != 1 ||
		    bind(fd2, (struct sockaddr *)&sa, sizeof(sa)))
			die("cannot bind %s: %s", from2, strerror(errno));
	}

	/* Real traffic first: it establishes the connection we then attack. */
	tc_result(legit(IBV_WR_RDMA_WRITE, W_LEN, rw + W1_OFF, rw_rkey, PAT_W1, why, sizeof(why)),
	       "legit WRITE before the attacks", "%s", why);
	tc_result(legit(IBV_WR_SEND, 100, 0, 0, 3, why, sizeof(why)),
	       "legit SEND before the attacks", "%s", why);
	usleep(300000);		/* let the ACKs settle */
	sniff(udp_port);
	print_sniffed();
	n = target_completions(line, sizeof(line));
	tc_result(n == 1, "the target completed exactly the legit SEND", "%d completions", n);
	if (!L.conn_known || !L.stream_known || !L.send_len || !L.write_len) {
		tc_result(false, "learned the connection from the wire",
		       "conn %d stream %d send %u write %u", L.conn_known, L.stream_known,
		       L.send_len, L.write_len);
		return 1;
	}
	for (i = 0; i < MROCE_MAX_PATHS; i++)
		if (L.path_seen[i] && (!L.path_seen[path] ||
				       (int32_t)(L.last_psn[i] - L.last_psn[path]) > 0))
			path = i;
	base = L.stream_psn + 1;
	printf("# learned: connection %u, path %u gen %u last PSN %u, stream PSN next %u\n",
	       L.conn, path, L.gen[path], L.last_psn[path], base);

	len = forge(b, MROCE_OP_WRITE, target_qpn, base, rw, rw_rkey, 64, path, 0);
	mroce_put_be32(L.conn ^ 0x5a5a5a, b + 4);
	attack("WRITE to an unknown connection id", b, len, "drop_unknown_conn", udp_fd);
	if (fd2 >= 0) {
		len = forge(b, MROCE_OP_WRITE, target_qpn, base, rw, rw_rkey, 64, path, 0);
		attack("WRITE on the connection from another address", b, len, "drop_wrong_peer", fd2);
	}
	len = forge(b, MROCE_OP_WRITE, target_qpn, base, rw, rw_rkey, 64, path, 0);
	b[8] = MROCE_MAX_PATHS - 1;
	attack("WRITE on a path that was never negotiated", b, len, "drop_bad_path", udp_fd);
	len = forge(b, MROCE_OP_WRITE, target_qpn ^ 0x800, base, rw, rw_rkey, 64, path, 0);
	attack("WRITE to an unknown QP", b, len, "drop_unknown_qp", udp_fd);
	len = forge(b, MROCE_OP_WRITE, target_qpn, base + 5000, rw, rw_rkey, 64, path, 0);
	attack("WRITE with a stream PSN far beyond the window", b, len, "out_of_window", udp_fd);
	len = forge(b, MROCE_OP_WRITE, target_qpn, base - 1, rw, rw_rkey, 64, path, -1);
	attack("WRITE on an older path generation", b, len, "drop_stale_gen", udp_fd);
	attack("replayed legit WRITE", L.write_pkt, L.write_len, "duplicate_request", udp_fd);
	attack("replayed legit SEND (must not complete a second receive)", L.send_pkt,
	       L.send_len, "duplicate_request", udp_fd);

	/* Control packets on the live connection. */
	{
		struct mroce_pkt p = { 0 };

		p.c.opcode = MROCE_OP_NAK;
		p.c.dst_conn = L.conn;
		p.u.nak.code = MROCE_NAK_REMOTE_ACCESS;
		p.u.nak.path_id = path;
		p.u.nak.path_gen = L.gen[path];
		p.u.nak.path_psn = 0x7fffffff;
		p.u.nak.stream_id = target_qpn;
		p.u.nak.stream_psn = 0x12345;
		len = mroce_encode(&p, b, MAX_PKT);
		attack("NAK for a transmission the target never made", b, len, "naks_rcvd", udp_fd);

		/*
		 * STALE_GEN on the current generation of one of the target's
		 * own paths: the target re-keys that path (docs/protocol.md
		 * §5.6) and counts the re-key like any other (it once did
		 * not: the NAK's re-key was outside the counters' bracket).
		 * The sniffer learns only our paths' generations, so every
		 * generation is named, newest first: a re-key moves the path
		 * to arg + 1, a generation already named, so (in order) one
		 * NAK matches and the rest are ignored.
		 */
		{
			long long k0 = counter("path_rekeys"), k1 = k0;
			double deadline;
			int g;

			snap_all();
			for (g = 255; g >= 0; g--) {
				memset(&p, 0, sizeof(p));
				p.c.opcode = MROCE_OP_NAK;
				p.c.dst_conn = L.conn;
				p.u.nak.code = MROCE_NAK_STALE_GEN;
				p.u.nak.path_id = path;
				p.u.nak.path_gen = (uint8_t)g;
				p.u.nak.arg = (uint32_t)g;
				len = mroce_encode(&p, b, MAX_PKT);
				sendto(udp_fd, b, len, 0, (struct sockaddr *)&to_addr,
				       sizeof(to_addr));
			}
			deadline = tc_now_s() + 5;
			while (k1 == k0 && tc_now_s() < deadline) {
				usleep(50000);
				k1 = counter("path_rekeys");
			}
			tc_result(k0 >= 0 && k1 > k0,
				  "STALE_GEN NAK on the current generation: the re-key is counted",
				  "path_rekeys %lld -> %lld; moved:%s", k0, k1, moved());
		}

		memset(&p, 0, sizeof(p));
		p.c.opcode = MROCE_OP_CONN_CLOSE;
		p.c.dst_conn = L.conn;
		p.u.hs.src_conn = 0x4242;
		p.u.hs.nonce = 0x0123456789abcdefull;
		len = mroce_encode(&p, b, MAX_PKT);
		/* the close names a nonce the peer never used: ignored */
		n = counter("conn_lost");
		snap_all();
		sendto(udp_fd, b, len, 0, (struct sockaddr *)&to_addr, sizeof(to_addr));
		usleep(300000);
		tc_result(counter("conn_lost") == n, "CONN_CLOSE with a foreign nonce is ignored",
		       "moved:%s", moved());
	}

	/* The connection must still carry real traffic, and nothing else landed. */
	tc_result(legit(IBV_WR_RDMA_WRITE, W_LEN, rw + W2_OFF, rw_rkey, PAT_W2, why, sizeof(why)),
	       "legit WRITE after the attacks", "%s", why);
	tc_result(legit(IBV_WR_SEND, 200, 0, 0, 4, why, sizeof(why)),
	       "legit SEND after the attacks", "%s", why);
	tc_result(legit(IBV_WR_RDMA_READ, W_LEN, rw + W1_OFF, rw_rkey, PAT_W1, why, sizeof(why)),
	       "legit READ after the attacks returns the first WRITE", "%s", why);
	usleep(200000);
	n = target_completions(line, sizeof(line));
	tc_result(n == 1, "the target completed exactly the second legit SEND", "%d completions: %s",
	       n, line);

	/*
	 * Refusals that are fatal to the target's QP (docs/protocol.md §4.4,
	 * IB class C), each on a fresh QP pair of the same connection.
	 */
	{
		const struct fatal_case fatal[] = {
			{ "WRITE with a stale key byte", "drop_bad_rkey",
			  MROCE_OP_WRITE, rw, rw_rkey ^ 0x5a, 64 },
			{ "WRITE with an rkey no MR has", "drop_bad_rkey",
			  MROCE_OP_WRITE, rw, rw_rkey + 0x7700, 64 },
			{ "WRITE across the end of the MR", "drop_mr_bounds",
			  MROCE_OP_WRITE, rw + MR_LEN - 16, rw_rkey, 64 },
			{ "WRITE below the start of the MR", "drop_mr_bounds",
			  MROCE_OP_WRITE, rw - 64, rw_rkey, 64 },
			{ "READ across the end of the MR", "drop_mr_bounds",
			  MROCE_OP_READ_REQ, rw + 4096, rw_rkey, MR_LEN },
			{ "WRITE into a read-only MR", "drop_access",
			  MROCE_OP_WRITE, ro, ntohl(T.ro_rkey), 64 },
			{ "READ from an MR without remote rights", "drop_access",
			  MROCE_OP_READ_REQ, lo, ntohl(T.lo_rkey), 64 },
			{ "READ from an atomic-only MR", "drop_access",
			  MROCE_OP_READ_REQ, at, ntohl(T.at_rkey), 64 },
			{ "misaligned ATOMIC", "drop_bad_atomic",
			  MROCE_OP_ATOMIC_REQ, at + 4, ntohl(T.at_rkey), 0 },
		};

		for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
			new_pair(T.gid, ntohl(T.mtu));
			base = learn(udp_port, rw, rw_rkey, "fresh QP pair");
			if (!base)
				break;
			len = forge(b, fatal[i].op, target_qpn, base, fatal[i].va,
				    fatal[i].rkey, fatal[i].len, path, 0);
			attack_fatal(fatal[i].what, b, len, fatal[i].ctr, udp_fd);
		}
	}
	ctl_send("CHECK");
	ctl_recv(line, sizeof(line));
	tc_result(!strcmp(line, "ok"), "every MR holds exactly what legit traffic put there", "%s",
	       line + (strncmp(line, "bad ", 4) ? 0 : 4));
	ctl_send("QUIT");
	ctl_recv(line, sizeof(line));
	print_sniffed();
	return tc_nfail ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *from = NULL, *to = NULL, *dev = NULL, *peer = NULL, *ifname = NULL;
	const char *from2 = NULL;
	int port = MROCE_UDP_PORT_DEFAULT, mutations = 2000, i, tcp_port = 18700;

	if (argc < 2)
		goto usage;
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc)
			tdev = argv[++i];
		else if (!strcmp(argv[i], "--to") && i + 1 < argc)
			to = argv[++i];
		else if (!strcmp(argv[i], "--from") && i + 1 < argc)
			from = argv[++i];
		else if (!strcmp(argv[i], "--port") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--mutations") && i + 1 < argc)
			mutations = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			rng_state = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-d") && i + 1 < argc)
			dev = argv[++i];
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			peer = argv[++i];
		else if (!strcmp(argv[i], "-i") && i + 1 < argc)
			ifname = argv[++i];
		else if (!strcmp(argv[i], "-P") && i + 1 < argc)
			tcp_port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--from2") && i + 1 < argc)
			from2 = argv[++i];
		else
			goto usage;
	}
	if (!strcmp(argv[1], "check"))
		return cmd_check();
	if (!strcmp(argv[1], "blast") && tdev && to)
		return cmd_blast(from, to, port, mutations);
	if (!strcmp(argv[1], "target") && dev)
		return cmd_target(dev, tcp_port);
	if (!strcmp(argv[1], "attack") && dev && peer && tdev && ifname)
		return cmd_attack(dev, peer, tcp_port, port, ifname, from2);
usage:
	fprintf(stderr, "usage: mroce_inject check\n"
		"       mroce_inject blast -t DEV --to IP [--from IP] [--port N] [--mutations N] [--seed N]\n"
		"       mroce_inject target -d DEV [-P TCP_PORT]\n"
		"       mroce_inject attack -d DEV -c TARGET_IP -t TARGET_DEV -i IFACE [-P TCP_PORT]\n"
		"                           [--port N] [--from2 SECOND_LOCAL_IP]\n");
	return 2;
}
