/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mroce tracepoints as a raw_tp BPF program sees them, and the
 * aggregation its maps hold. Shared by the BPF object (mroce_paths.bpf.c)
 * and the C++ reader, so both agree on every layout; plain C that compiles
 * under clang -target bpf, gcc and g++.
 *
 * A raw_tp program gets the tracepoint's TP_PROTO arguments as u64s in
 * ctx[i], in declaration order (drivers/infiniband/sw/mroce/mroce_trace.h).
 * That order is an interface: the enums below mirror it and a unit test
 * compares them with the kernel header, so a reorder fails the build's
 * tests instead of silently mislabelling RTTs.
 *
 * Concurrency: samples of one connection are emitted under that
 * connection's lock, so two CPUs rarely update one entry at once; counters
 * use atomic adds anyway, and a "latest sample" is whatever store landed
 * last (a reader can see a sample torn between two ACKs, never a wrong
 * counter).
 */
#ifndef MROCE_TP_H
#define MROCE_TP_H

#include <linux/types.h>

#define MROCE_TP_MAX_PATHS	8192
#define MROCE_TP_MAX_CONNS	2048
#define MROCE_TP_RINGBUF_SIZE	(256 * 1024)

/* ctx[] positions, one enum per tracepoint (TP_PROTO order). */
enum mroce_tp_path_sample {
	MROCE_PS_DEV, MROCE_PS_CONN, MROCE_PS_PATH, MROCE_PS_SPORT,
	MROCE_PS_STATE, MROCE_PS_SRTT, MROCE_PS_RTTVAR, MROCE_PS_MIN_RTT,
	MROCE_PS_PWND, MROCE_PS_INFLIGHT, MROCE_PS_CE, MROCE_PS_LOST,
	MROCE_PS_NR
};

enum mroce_tp_path_stats {
	MROCE_PST_DEV, MROCE_PST_CONN, MROCE_PST_PATH, MROCE_PST_TX_PKTS,
	MROCE_PST_TX_BYTES, MROCE_PST_ACKED_PKTS, MROCE_PST_RX_PKTS,
	MROCE_PST_NAKS, MROCE_PST_PTOS, MROCE_PST_RTOS, MROCE_PST_REKEYS,
	MROCE_PST_NR
};

enum mroce_tp_path_state {
	MROCE_PSC_DEV, MROCE_PSC_CONN, MROCE_PSC_PATH, MROCE_PSC_SPORT,
	MROCE_PSC_OLD, MROCE_PSC_NEW,
	MROCE_PSC_NR
};

enum mroce_tp_path_rekey {
	MROCE_PRK_DEV, MROCE_PRK_CONN, MROCE_PRK_PATH, MROCE_PRK_NEW_GEN,
	MROCE_PRK_OLD_SPORT, MROCE_PRK_NEW_SPORT, MROCE_PRK_REASON,
	MROCE_PRK_NR
};

enum mroce_tp_retransmit {
	MROCE_RTX_DEV, MROCE_RTX_CONN, MROCE_RTX_PATH, MROCE_RTX_PATH_PSN,
	MROCE_RTX_QPN, MROCE_RTX_STREAM_PSN, MROCE_RTX_OLD_PATH,
	MROCE_RTX_OLD_PSN, MROCE_RTX_LEN, MROCE_RTX_REASON,
	MROCE_RTX_NR
};

enum mroce_tp_conn_state {
	MROCE_CS_DEV, MROCE_CS_CONN, MROCE_CS_PEER_CONN, MROCE_CS_PEER_HI,
	MROCE_CS_PEER_LO, MROCE_CS_OLD, MROCE_CS_NEW, MROCE_CS_N_PATHS,
	MROCE_CS_NR
};

enum mroce_tp_cc_update {
	MROCE_CC_DEV, MROCE_CC_CONN, MROCE_CC_CWND, MROCE_CC_SSTHRESH,
	MROCE_CC_ALPHA, MROCE_CC_RATE_HINT, MROCE_CC_PACING_RATE,
	MROCE_CC_INFLIGHT, MROCE_CC_EVENT,
	MROCE_CC_NR
};

enum mroce_tp_nak {
	MROCE_NAK_DEV, MROCE_NAK_CONN, MROCE_NAK_SENT, MROCE_NAK_CODE,
	MROCE_NAK_QPN, MROCE_NAK_STREAM_PSN, MROCE_NAK_SSN, MROCE_NAK_ARG,
	MROCE_NAK_NR
};

/* Value sets the kernel header defines (enum mroce_retx_reason, ...). */
#define MROCE_TP_RETX_REASONS	6	/* sack rto pto nak rekey time */
#define MROCE_TP_NO_PATH	0xffffffffu	/* mroce_retransmit: old_path unknown */
#define MROCE_TP_CC_EVENTS	5	/* ack ecn loss rto hint */
#define MROCE_TP_PATH_STATES	4	/* ACTIVE SUSPECT PROBING FAILED */
#define MROCE_TP_CONN_STATES	4	/* CLOSED REQ_SENT ESTABLISHED FAILED */
#define MROCE_TP_CONN_ESTABLISHED 2

/* One row per (device, connection, path id); the generation is a value. */
struct mroce_path_key {
	__u32 dev;
	__u32 conn;
	__u32 path;	/* path id, bits 0-7 of the tracepoint's path */
};

struct mroce_path_val {
	/* mroce_path_sample: the latest one, and how many were seen */
	__u64 sample_ns;	/* bpf_ktime_get_ns() of it; 0: none yet */
	__u64 samples;
	__u64 srtt_sum;		/* mean srtt over an interval: d(sum)/d(samples) */
	__u32 gen;
	__u32 sport;
	__u32 state;
	__u32 srtt;		/* ns */
	__u32 rttvar;
	__u32 min_rtt;
	__u32 pwnd;		/* bytes */
	__u32 inflight;
	__u64 ce;		/* cumulative on the path (kernel) */
	__u64 lost;
	/* mroce_path_stats: cumulative on the path (kernel) */
	__u64 stats_ns;
	__u64 tx_pkts;
	__u64 tx_bytes;
	__u64 acked_pkts;
	__u64 rx_pkts;
	__u64 naks;
	__u64 ptos;
	__u64 rtos;
	__u64 rekeys;
	/* counted here, from events seen while attached */
	__u64 retx_out;		/* retransmissions sent on this path */
	__u64 retx_out_bytes;
	__u64 retx_lost[MROCE_TP_RETX_REASONS]; /* chunks lost here, resent */
	__u64 state_changes;
	__u64 state_ns;		/* last mroce_path_state */
	__u64 rekey_events;
};

struct mroce_conn_key {
	__u32 dev;
	__u32 conn;
};

struct mroce_conn_val {
	/* mroce_conn_state: the latest one */
	__u64 state_ns;		/* 0: no transition seen while attached */
	__u64 peer_hi;		/* IPv6 (or v4-mapped) address, big-endian halves */
	__u64 peer_lo;
	__u32 peer_conn;
	__u32 state;
	__u32 n_paths;
	__u32 pad;
	__u64 state_changes;
	/* mroce_cc_update: the latest one, and events by kind */
	__u64 cc_ns;
	__u32 cwnd;
	__u32 ssthresh;
	__u32 alpha;		/* /1024 */
	__u32 rate_hint;	/* Mbit/s */
	__u32 pacing_rate;	/* Mbit/s */
	__u32 inflight;
	__u64 cc_events[MROCE_TP_CC_EVENTS];
	/* mroce_nak */
	__u64 naks_sent;
	__u64 naks_rcvd;
};

/* Rare events, for `mroce path watch`'s log (ring buffer records). */
enum mroce_tp_event_type {
	MROCE_EV_PATH_STATE = 1,	/* a = sport, b = old, c = new */
	MROCE_EV_PATH_REKEY,		/* a = new gen, b/c = old/new sport, d = reason */
	MROCE_EV_CONN_STATE,		/* a = peer_conn, b = old, c = new, d = paths */
};

struct mroce_tp_event {
	__u64 ns;
	__u32 type;
	__u32 dev;
	__u32 conn;
	__u32 path;	/* id | generation << 8, as traced */
	__u32 a, b, c, d;
	__u64 peer_hi;
	__u64 peer_lo;
};

#ifndef MROCE_TP_INLINE
#define MROCE_TP_INLINE static inline __attribute__((always_inline))
#endif
#define MROCE_TP_ADD(p, n) ((void)__sync_fetch_and_add((p), (n)))

/*
 * The update each event makes; a[] holds the tracepoint's arguments
 * (ctx[0..N-1]), now the time of the event.
 */
MROCE_TP_INLINE void mroce_tp_path_key_of(struct mroce_path_key *k,
					  const __u64 *a)
{
	/* dev, conn and path are the first three arguments of every path event */
	k->dev = (__u32)a[0];
	k->conn = (__u32)a[1];
	k->path = (__u32)a[2] & 0xff;
}

MROCE_TP_INLINE void mroce_tp_on_path_sample(struct mroce_path_val *v,
					     const __u64 *a, __u64 now)
{
	v->sample_ns = now;
	v->gen = ((__u32)a[MROCE_PS_PATH] >> 8) & 0xff;
	v->sport = (__u16)a[MROCE_PS_SPORT];
	v->state = (__u8)a[MROCE_PS_STATE];
	v->srtt = (__u32)a[MROCE_PS_SRTT];
	v->rttvar = (__u32)a[MROCE_PS_RTTVAR];
	v->min_rtt = (__u32)a[MROCE_PS_MIN_RTT];
	v->pwnd = (__u32)a[MROCE_PS_PWND];
	v->inflight = (__u32)a[MROCE_PS_INFLIGHT];
	v->ce = a[MROCE_PS_CE];
	v->lost = a[MROCE_PS_LOST];
	MROCE_TP_ADD(&v->srtt_sum, (__u32)a[MROCE_PS_SRTT]);
	MROCE_TP_ADD(&v->samples, 1);
}

MROCE_TP_INLINE void mroce_tp_on_path_stats(struct mroce_path_val *v,
					    const __u64 *a, __u64 now)
{
	v->stats_ns = now;
	v->tx_pkts = a[MROCE_PST_TX_PKTS];
	v->tx_bytes = a[MROCE_PST_TX_BYTES];
	v->acked_pkts = a[MROCE_PST_ACKED_PKTS];
	v->rx_pkts = a[MROCE_PST_RX_PKTS];
	v->naks = a[MROCE_PST_NAKS];
	v->ptos = a[MROCE_PST_PTOS];
	v->rtos = a[MROCE_PST_RTOS];
	v->rekeys = a[MROCE_PST_REKEYS];
}

MROCE_TP_INLINE void mroce_tp_on_path_state(struct mroce_path_val *v,
					    const __u64 *a, __u64 now)
{
	v->state = (__u8)a[MROCE_PSC_NEW];
	v->sport = (__u16)a[MROCE_PSC_SPORT];
	v->state_ns = now;
	MROCE_TP_ADD(&v->state_changes, 1);
}

MROCE_TP_INLINE void mroce_tp_on_path_rekey(struct mroce_path_val *v,
					    const __u64 *a)
{
	v->gen = (__u8)a[MROCE_PRK_NEW_GEN];
	v->sport = (__u16)a[MROCE_PRK_NEW_SPORT];
	MROCE_TP_ADD(&v->rekey_events, 1);
}

/* The path a chunk now goes out on: it carries a retransmission. */
MROCE_TP_INLINE void mroce_tp_on_retx_out(struct mroce_path_val *v,
					  const __u64 *a)
{
	MROCE_TP_ADD(&v->retx_out, 1);
	MROCE_TP_ADD(&v->retx_out_bytes, (__u32)a[MROCE_RTX_LEN]);
}

/* The path the chunk was lost on, counted by why it was declared lost. */
MROCE_TP_INLINE void mroce_tp_on_retx_lost(struct mroce_path_val *v,
					   const __u64 *a)
{
	__u32 r = (__u8)a[MROCE_RTX_REASON];

	if (r < MROCE_TP_RETX_REASONS)
		MROCE_TP_ADD(&v->retx_lost[r], 1);
}

MROCE_TP_INLINE void mroce_tp_on_conn_state(struct mroce_conn_val *v,
					    const __u64 *a, __u64 now)
{
	v->state_ns = now;
	v->peer_conn = (__u32)a[MROCE_CS_PEER_CONN];
	v->peer_hi = a[MROCE_CS_PEER_HI];
	v->peer_lo = a[MROCE_CS_PEER_LO];
	v->state = (__u8)a[MROCE_CS_NEW];
	v->n_paths = (__u8)a[MROCE_CS_N_PATHS];
	MROCE_TP_ADD(&v->state_changes, 1);
}

MROCE_TP_INLINE void mroce_tp_on_cc_update(struct mroce_conn_val *v,
					   const __u64 *a, __u64 now)
{
	__u32 e = (__u8)a[MROCE_CC_EVENT];

	v->cc_ns = now;
	v->cwnd = (__u32)a[MROCE_CC_CWND];
	v->ssthresh = (__u32)a[MROCE_CC_SSTHRESH];
	v->alpha = (__u16)a[MROCE_CC_ALPHA];
	v->rate_hint = (__u32)a[MROCE_CC_RATE_HINT];
	v->pacing_rate = (__u32)a[MROCE_CC_PACING_RATE];
	v->inflight = (__u32)a[MROCE_CC_INFLIGHT];
	if (e < MROCE_TP_CC_EVENTS)
		MROCE_TP_ADD(&v->cc_events[e], 1);
}

MROCE_TP_INLINE void mroce_tp_on_nak(struct mroce_conn_val *v, const __u64 *a)
{
	if ((__u8)a[MROCE_NAK_SENT])
		MROCE_TP_ADD(&v->naks_sent, 1);
	else
		MROCE_TP_ADD(&v->naks_rcvd, 1);
}

#endif /* MROCE_TP_H */
