// SPDX-License-Identifier: GPL-2.0
/*
 * corebench: the per-packet work of the protocol core, alone and
 * deterministic. Two connections (A and B) run the core calls the module
 * makes for every packet, in the module's order, over packets encoded to
 * and decoded from real wire bytes:
 *
 *   tx_data   mroce_tx_one(): stream PSN, mroce_conn_tx_reserve/commit,
 *             the packet struct filled, mroce_conn_fill, mroce_encode,
 *             AR on the burst's last packet, set_backlog, next_deadline
 *   rx_data   mroce_rx_one(): header length, mroce_decode, rx_check,
 *             stream check, WRITE placement checks, stream accept/pop,
 *             rx_accept, ack_due, next_deadline
 *   tx_ack    mroce_ack_send() at the burst's end: mroce_conn_build_ack
 *             (256-bit SACK blocks, rate hint), next_deadline
 *   rx_ack    header length, mroce_decode, mroce_conn_on_ack (acked
 *             callbacks ack the stream), next_deadline
 *   hint      one rate-hint pass (mroce_ack_hint_pass()'s core calls)
 *
 * Workloads: "lat" is ib_write_lat's 64 B ping-pong (A writes, B ACKs, B
 * writes, A ACKs: four packets per round trip); "bw" is a one-way stream
 * of 1 KiB WRITEs in bursts of 16 with every 53rd data packet dropped
 * (SACK gaps, losses, resends).
 *
 * Time is simulated, so every run sends the same bytes: the FNV-1a hash of
 * every packet on the wire is printed, and a change to the core that must
 * not change the wire must not change it. corebench.sh runs this under
 * callgrind and tabulates instructions (Ir) per packet per step: the
 * regression guard for per-packet CPU cost (docs/simulation.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mroce_conn.h"
#include "mroce_hint.h"
#include "mroce_place.h"
#include "mroce_stream.h"

#define NOINLINE __attribute__((noinline, noclone))
#define US 1000ULL
#define N_PATHS 8
#define RESEND_MAX 1024

struct side {
	const char *name;
	struct mroce_conn conn;
	struct mroce_path paths[N_PATHS];
	struct mroce_stx stx;
	struct mroce_srx srx;
	u32 resend[RESEND_MAX];	/* stream PSNs the core declared lost */
	u32 n_resend;
	u64 acked, lost;
};

static struct mroce_params prm;
static struct side sa = { .name = "A" }, sb = { .name = "B" };
static u64 now;
static u64 wire_hash = 0xcbf29ce484222325ULL;
static u64 wire_pkts;
/* Calls of each step, for the per-call table (corebench.sh). */
static u64 n_tx_data, n_rx_data, n_tx_ack, n_rx_ack, n_hint, n_timers;

struct wire_pkt {
	u8 b[MROCE_MAX_HDR_LEN + 2048];
	u32 len;
};

/* Outside the measured steps: every packet as it goes on the wire. */
static void wire(const struct wire_pkt *w)
{
	u32 i;

	for (i = 0; i < w->len; i++) {
		wire_hash ^= w->b[i];
		wire_hash *= 0x100000001b3ULL;
	}
	wire_pkts++;
}

static void cb_acked(void *ctx, u64 cookie, u32 len, u8 path)
{
	struct side *s = ctx;

	/* mroce_peer_acked() -> mroce_xport_stream_ack() */
	mroce_stx_ack(&s->stx, (u32)cookie);
	s->acked++;
}

static void cb_lost(void *ctx, u64 cookie, u32 len, u8 path, u32 psn, u8 why)
{
	struct side *s = ctx;

	if (s->n_resend < RESEND_MAX)
		s->resend[s->n_resend++] = (u32)cookie;
	s->lost++;
}

static const bool cc_off;
static const struct mroce_conn_ops ops = {
	.acked = cb_acked,
	.lost = cb_lost,
	.cc_on = &cc_off,
	.late_acked = cb_acked,
};

static void die(const char *what)
{
	fprintf(stderr, "corebench: %s (A acked %llu lost %llu, B acked %llu lost %llu)\n",
		what, (unsigned long long)sa.acked, (unsigned long long)sa.lost,
		(unsigned long long)sb.acked, (unsigned long long)sb.lost);
	exit(1);
}

static void side_init(struct side *s, u32 id, u64 seed)
{
	struct mroce_conn_cfg cfg = {
		.prm = &prm, .ops = &ops, .ctx = s, .paths = s->paths,
		.max_paths = N_PATHS, .local_id = id, .nonce = seed * 7 + 1,
		.seed = seed, .mtu = 1500, .caps = MROCE_CAP_ATOMIC,
		.init_rate = 10000,
	};

	mroce_conn_init(&s->conn, &cfg);
	mroce_stx_init(&s->stx, 100);
	mroce_srx_init(&s->srx, 100);
}

static void hs_send(struct side *from, struct side *to, u8 opcode)
{
	struct mroce_pkt pkt;
	struct wire_pkt w;
	u32 act;

	mroce_conn_build_hs(&from->conn, opcode, 0, &pkt);
	w.len = mroce_encode(&pkt, w.b, sizeof(w.b));
	if (!w.len || mroce_decode(w.b, w.len, &pkt) != MROCE_WIRE_OK)
		die("handshake codec");
	act = mroce_conn_on_hs(&to->conn, &pkt, now);
	if (act & MROCE_HS_SEND_REP)
		hs_send(to, from, MROCE_OP_CONN_REP);
}

static void connect_both(void)
{
	if (!(mroce_conn_connect(&sa.conn, now) & MROCE_HS_SEND_REQ))
		die("connect");
	hs_send(&sa, &sb, MROCE_OP_CONN_REQ);
	if (!mroce_conn_established(&sa.conn) ||
	    !mroce_conn_established(&sb.conn))
		die("handshake");
	mroce_conn_set_rx_hint(&sa.conn, 9000);
	mroce_conn_set_rx_hint(&sb.conn, 9000);
}

/* Remote buffer of the WRITEs (placement checks only). */
#define REMOTE_VA	0x7f0000001000ULL
#define REMOTE_LEN	(1u << 20)

/*
 * The payload a sender copies behind the headers (not the core's work, so
 * outside the steps), then the packet goes on the wire.
 */
static void payload(struct wire_pkt *w)
{
	u32 hdr = mroce_hdr_len(w->b[1]);

	memset(w->b + hdr, (u8)mroce_get_be32(w->b + 20), w->len - hdr);
	wire(w);
}

/* mroce_tx_one() and mroce_tx_fill() for a one-chunk WRITE. */
static NOINLINE bool tx_data(struct side *s, u32 len, bool last,
			     struct wire_pkt *w)
{
	struct mroce_tx_slot slot;
	struct mroce_pkt pkt;
	bool resend = s->n_resend != 0;
	u32 psn, hdr;

	n_tx_data++;
	if (!resend && !mroce_stx_can_assign(&s->stx))
		return false;
	if (mroce_conn_tx_reserve(&s->conn, now, len, -1, &slot) != MROCE_TX_OK)
		return false;
	psn = resend ? s->resend[--s->n_resend] : mroce_stx_assign(&s->stx);
	mroce_conn_tx_commit(&s->conn, &slot, psn, now);

	memset(&pkt, 0, sizeof(pkt));
	pkt.c.opcode = MROCE_OP_WRITE;
	pkt.c.flags = MROCE_F_SOM | MROCE_F_EOM | (resend ? MROCE_F_RETX : 0);
	pkt.payload_len = len;
	pkt.u.d.stream_id = 0x11;
	pkt.u.d.stream_psn = psn;
	pkt.u.d.ssn = psn;
	pkt.u.d.va = REMOTE_VA + (u64)(psn % 64) * 1024;
	pkt.u.d.rkey = 0x1234;
	pkt.u.d.length = len;
	mroce_conn_fill(&s->conn, &slot, &pkt);
	hdr = mroce_hdr_len(pkt.c.opcode);
	if (mroce_encode(&pkt, w->b, hdr) != hdr)
		die("encode");
	w->len = hdr + len;
	if (last)
		mroce_wire_set_ar(w->b, hdr);
	mroce_conn_set_backlog(&s->conn, s->n_resend * 1024, now);
	mroce_conn_next_deadline(&s->conn);
	return true;
}

/* mroce_rx_one() .. mroce_rx_data() for a WRITE; true if an ACK is due. */
static NOINLINE bool rx_data(struct side *s, const struct wire_pkt *w)
{
	struct mroce_pkt pkt;
	enum mroce_rx_verdict v;
	u64 dest;
	u32 psn;
	u8 tag;
	bool due;

	n_rx_data++;
	if (mroce_wire_hdr_len(w->b, w->len) > w->len ||
	    mroce_decode(w->b, w->len, &pkt) != MROCE_WIRE_OK)
		die("decode data");
	v = mroce_conn_rx_check(&s->conn, &pkt);
	if (v != MROCE_RX_NEW && v != MROCE_RX_OLD)
		die("rx_check");
	if (mroce_srx_check_data(&s->srx, &pkt, false, false) == MROCE_SRX_NEW) {
		if (!mroce_range_within(REMOTE_VA, REMOTE_LEN, pkt.u.d.va,
					pkt.u.d.length) ||
		    mroce_write_dest(pkt.u.d.va, pkt.u.d.length,
				     pkt.u.d.msg_offset, pkt.payload_len,
				     &dest) != MROCE_PLACE_OK)
			die("placement");
		mroce_srx_accept(&s->srx, pkt.u.d.stream_psn, 0);
		while (mroce_srx_pop(&s->srx, &psn, &tag))
			;
	}
	if (v == MROCE_RX_NEW)
		mroce_conn_rx_accept(&s->conn, &pkt, false, now);
	due = mroce_conn_ack_due(&s->conn, now);
	mroce_conn_next_deadline(&s->conn);
	return due;
}

/* mroce_ack_send(): the ACKs due (or, at a burst's end, all news). */
static NOINLINE u32 tx_ack(struct side *s, bool all, struct wire_pkt *w)
{
	u32 len = 0;

	n_tx_ack++;
	if (all ? s->conn.ack_dirty || s->conn.hint_push :
	    mroce_conn_ack_due(&s->conn, now)) {
		len = mroce_conn_build_ack(&s->conn, now, w->b,
					   mroce_conn_ack_len(&s->conn));
		w->len = len;
	}
	mroce_conn_next_deadline(&s->conn);
	return len;
}

static NOINLINE void rx_ack(struct side *s, const struct wire_pkt *w)
{
	struct mroce_ack_res res;
	struct mroce_pkt pkt;

	n_rx_ack++;
	if (mroce_wire_hdr_len(w->b, w->len) > w->len ||
	    mroce_decode(w->b, w->len, &pkt) != MROCE_WIRE_OK ||
	    pkt.c.opcode != MROCE_OP_ACK)
		die("decode ack");
	mroce_conn_on_ack(&s->conn, &pkt, now, &res);
	if (res.probe_mask || res.events)
		die("unexpected ACK events");
	mroce_conn_next_deadline(&s->conn);
}

/* mroce_ack_hint_pass() for a device with one connection (@s). */
static NOINLINE void hint_pass(struct side *s, u64 period)
{
	struct mroce_hint_entry e = { 0 };
	struct mroce_hint_cfg cfg;
	u32 rtt = s->conn.rtt.min_rtt ? s->conn.rtt.min_rtt : 10 * US;
	u64 bytes;

	n_hint++;
	mroce_hint_cfg_default(&cfg, prm.rx_mbps);
	bytes = mroce_conn_rx_sample(&s->conn, period, rtt, cfg.capacity,
				     &e.demand, &e.qdelay);
	e.arrival = mroce_hint_mbps(bytes, period);
	e.weight = 1;
	cfg.rtt_min = rtt;
	cfg.q_target = rtt / 2;
	mroce_hint_compute(&cfg, NULL, &e, 1, period);
	mroce_conn_set_rx_hint(&s->conn, e.hint);
}

/* Fires what is due (a PTO in the bw run's tail, say) as the module would. */
static NOINLINE void timers(struct side *s)
{
	struct mroce_timer_res res;

	n_timers++;
	if (mroce_conn_next_deadline(&s->conn) <= now)
		mroce_conn_on_timer(&s->conn, now, &res);
}

/* One half of a 64 B ib_write_lat round trip: @s writes, @d ACKs. */
static void lat_half(struct side *s, struct side *d)
{
	struct wire_pkt data, ack;

	if (!tx_data(s, 64, true, &data))
		die("lat: send refused");
	payload(&data);
	now += 10 * US;
	if (!rx_data(d, &data))
		die("lat: AR did not make the ACK due");
	now += 1 * US;
	if (!tx_ack(d, true, &ack))
		die("lat: no ACK");
	wire(&ack);
	now += 10 * US;
	rx_ack(s, &ack);
	now += 2 * US;
}

static NOINLINE void run_lat(u32 iters)
{
	u32 i;

	for (i = 0; i < iters; i++) {
		lat_half(&sa, &sb);
		lat_half(&sb, &sa);
		/* hint_period (100 us) is about two round trips here */
		if (i % 2 == 1) {
			hint_pass(&sa, 100 * US);
			hint_pass(&sb, 100 * US);
		}
	}
}

static NOINLINE void run_bw(u32 iters)
{
	struct wire_pkt data, ack;
	u32 i, k, seq = 0;

	for (i = 0; i < iters; i++) {
		for (k = 0; k < 16; k++) {
			if (!tx_data(&sa, 1024, k == 15, &data))
				break;
			payload(&data);
			now += 1 * US;
			/* Every 53rd packet is lost on the wire. */
			if (++seq % 53 == 0)
				continue;
			if (rx_data(&sb, &data) && tx_ack(&sb, false, &ack)) {
				wire(&ack);
				rx_ack(&sa, &ack);
			}
		}
		now += 5 * US;
		if (tx_ack(&sb, true, &ack)) {
			wire(&ack);
			rx_ack(&sa, &ack);
		}
		now += 5 * US;
		timers(&sa);
		timers(&sb);
		if (i % 4 == 3)
			hint_pass(&sb, 100 * US);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "lat";
	u32 iters = argc > 2 ? (u32)strtoul(argv[2], NULL, 0) : 10000;

	mroce_params_default(&prm);
	/* The module's own defaults (mroce_knobs.c). */
	prm.min_rto = 10000 * US;
	prm.pace_horizon = 1000 * US;
	if (!mroce_params_valid(&prm))
		die("params");
	now = 1000 * US;
	side_init(&sa, 0x1001, 0x5eed1);
	side_init(&sb, 0x2002, 0x5eed2);
	connect_both();
	now += 100 * US;

	if (!strcmp(mode, "lat")) {
		run_lat(iters);
		if (sa.lost || sb.lost || sa.acked != iters || sb.acked != iters)
			die("lat: every WRITE must be acked once, none lost");
	} else if (!strcmp(mode, "bw")) {
		run_bw(iters);
		if (!sa.acked || !sa.lost)
			die("bw: expected acks and losses");
	} else {
		fprintf(stderr, "usage: corebench lat|bw [iterations]\n");
		return 2;
	}
	printf("mode %s iterations %u packets %llu wire_hash %016llx "
	       "acked %llu lost %llu\n", mode, iters,
	       (unsigned long long)wire_pkts, (unsigned long long)wire_hash,
	       (unsigned long long)(sa.acked + sb.acked),
	       (unsigned long long)(sa.lost + sb.lost));
	printf("calls tx_data %llu rx_data %llu tx_ack %llu rx_ack %llu "
	       "hint_pass %llu timers %llu\n", (unsigned long long)n_tx_data,
	       (unsigned long long)n_rx_data, (unsigned long long)n_tx_ack,
	       (unsigned long long)n_rx_ack, (unsigned long long)n_hint,
	       (unsigned long long)n_timers);
	return 0;
}
