/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mroce tracepoints (TRACE_SYSTEM mroce): per-path telemetry, path and
 * connection state, retransmissions, congestion control and drops.
 *
 * Every TP_PROTO takes scalars only, at most 12 of them, so that a
 * SEC("raw_tp/mroce_<event>") BPF program can read its arguments on a
 * kernel without module BTF (Debian's): each argument arrives as a u64 in
 * ctx[i], in TP_PROTO order, which is therefore part of the interface and
 * only ever grows at the end. tracefs, perf, trace-cmd and bpftrace's
 * tracepoint:mroce:* see the TP_STRUCT__entry fields below.
 * docs/telemetry.md describes every field and shows readers.
 *
 * Conventions shared by all events:
 *   dev   ib_device index (`rdma dev` shows it: "3: mroce0: ...")
 *   conn  our connection id (the dst_conn our peer puts on the wire)
 *   path  mroce_trace_path(path_id, generation): id in bits 0-7,
 *         generation in bits 8-15; tracefs shows them as path_id/path_gen
 *   times in ns, windows in bytes, rates in Mbit/s
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mroce

#if !defined(MROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define MROCE_TRACE_H

#include <linux/in6.h>
#include <linux/tracepoint.h>

#include "mroce_counters.h"
#include "mroce_health.h"
#include "mroce_hs.h"
#include "mroce_wire.h"

#ifndef MROCE_TRACE_TYPES
#define MROCE_TRACE_TYPES

/* Why a chunk went out again (mroce_retransmit). */
enum mroce_retx_reason {
	MROCE_RETX_SACK,	/* a SACK gap declared the transmission lost */
	MROCE_RETX_RTO,		/* the path's retransmission timer fired */
	MROCE_RETX_PTO,		/* tail-loss probe timer */
	MROCE_RETX_NAK,		/* the receiver refused it (window, RNR) */
	MROCE_RETX_REKEY,	/* moved off a path that was re-keyed/failed */
	MROCE_RETX_TIME,	/* overdue: a later packet was acked elsewhere */
};

/* What moved the connection's congestion state (mroce_cc_update). */
enum mroce_cc_event {
	MROCE_CC_ACK,		/* additive increase on acknowledged data */
	MROCE_CC_ECN,		/* multiplicative decrease on CE marks */
	MROCE_CC_LOSS,		/* decrease on declared loss */
	MROCE_CC_RTO,		/* collapse after a timeout */
	MROCE_CC_HINT,		/* the peer's rate hint changed */
};

/* mroce_chunk.lost_path when the transport does not know it. */
#define MROCE_TRACE_NO_PATH	0xff

static inline u32 mroce_trace_path(u8 path_id, u8 gen)
{
	return path_id | (u32)gen << 8;
}

/* An IPv6 (or v4-mapped) address as two scalars, big-endian halves. */
static inline u64 mroce_trace_addr_hi(const struct in6_addr *a)
{
	return get_unaligned_be64(&a->s6_addr[0]);
}

static inline u64 mroce_trace_addr_lo(const struct in6_addr *a)
{
	return get_unaligned_be64(&a->s6_addr[8]);
}

/*
 * Telemetry the core reports through its callbacks (mroce_trace.c), and the
 * note a chunk carries from the moment it is declared lost to its resend,
 * so that mroce_retransmit says why and where from.
 */
struct mroce_peer;
struct mroce_qp;
struct mroce_tx_slot;
void mroce_trace_conn_rekey(void *ctx, u8 path, u8 old_gen, u16 old_sport,
			    u8 why);
void mroce_trace_conn_cc(void *ctx, u8 why);
/* mroce_cc_update has a listener: the core's mroce_conn_ops.cc_on. */
extern bool mroce_trace_cc_on;
int mroce_trace_cc_reg(void);
void mroce_trace_cc_unreg(void);
void mroce_trace_resend(struct mroce_peer *peer, struct mroce_qp *qp,
			const struct mroce_tx_slot *slot, u32 psn, u32 len);
#endif /* MROCE_TRACE_TYPES */

TRACE_DEFINE_ENUM(MROCE_PATH_ACTIVE);
TRACE_DEFINE_ENUM(MROCE_PATH_SUSPECT);
TRACE_DEFINE_ENUM(MROCE_PATH_PROBING);
TRACE_DEFINE_ENUM(MROCE_PATH_FAILED);
#define show_path_state(s)					\
	__print_symbolic(s,					\
			 { MROCE_PATH_ACTIVE, "ACTIVE" },	\
			 { MROCE_PATH_SUSPECT, "SUSPECT" },	\
			 { MROCE_PATH_PROBING, "PROBING" },	\
			 { MROCE_PATH_FAILED, "FAILED" })

TRACE_DEFINE_ENUM(MROCE_HS_CLOSED);
TRACE_DEFINE_ENUM(MROCE_HS_REQ_SENT);
TRACE_DEFINE_ENUM(MROCE_HS_ESTABLISHED);
TRACE_DEFINE_ENUM(MROCE_HS_FAILED);
#define show_conn_state(s)					\
	__print_symbolic(s,					\
			 { MROCE_HS_CLOSED, "CLOSED" },		\
			 { MROCE_HS_REQ_SENT, "REQ_SENT" },	\
			 { MROCE_HS_ESTABLISHED, "ESTABLISHED" }, \
			 { MROCE_HS_FAILED, "FAILED" })

TRACE_DEFINE_ENUM(MROCE_HEV_PROGRESS);
TRACE_DEFINE_ENUM(MROCE_HEV_RTO);
TRACE_DEFINE_ENUM(MROCE_HEV_BAD);
TRACE_DEFINE_ENUM(MROCE_HEV_DRAINED);
TRACE_DEFINE_ENUM(MROCE_HEV_HOLDOFF_END);
TRACE_DEFINE_ENUM(MROCE_HEV_STALE);
#define show_health_event(e)					\
	__print_symbolic(e,					\
			 { MROCE_HEV_PROGRESS, "progress" },	\
			 { MROCE_HEV_RTO, "rto" },		\
			 { MROCE_HEV_BAD, "bad" },		\
			 { MROCE_HEV_DRAINED, "drained" },	\
			 { MROCE_HEV_HOLDOFF_END, "holdoff_end" }, \
			 { MROCE_HEV_STALE, "stale" })

TRACE_DEFINE_ENUM(MROCE_RETX_SACK);
TRACE_DEFINE_ENUM(MROCE_RETX_RTO);
TRACE_DEFINE_ENUM(MROCE_RETX_PTO);
TRACE_DEFINE_ENUM(MROCE_RETX_NAK);
TRACE_DEFINE_ENUM(MROCE_RETX_REKEY);
TRACE_DEFINE_ENUM(MROCE_RETX_TIME);
#define show_retx_reason(r)					\
	__print_symbolic(r,					\
			 { MROCE_RETX_SACK, "sack" },		\
			 { MROCE_RETX_RTO, "rto" },		\
			 { MROCE_RETX_PTO, "pto" },		\
			 { MROCE_RETX_NAK, "nak" },		\
			 { MROCE_RETX_REKEY, "rekey" },		\
			 { MROCE_RETX_TIME, "time" })

TRACE_DEFINE_ENUM(MROCE_CC_ACK);
TRACE_DEFINE_ENUM(MROCE_CC_ECN);
TRACE_DEFINE_ENUM(MROCE_CC_LOSS);
TRACE_DEFINE_ENUM(MROCE_CC_RTO);
TRACE_DEFINE_ENUM(MROCE_CC_HINT);
#define show_cc_event(e)					\
	__print_symbolic(e,					\
			 { MROCE_CC_ACK, "ack" },		\
			 { MROCE_CC_ECN, "ecn" },		\
			 { MROCE_CC_LOSS, "loss" },		\
			 { MROCE_CC_RTO, "rto" },		\
			 { MROCE_CC_HINT, "hint" })

TRACE_DEFINE_ENUM(MROCE_NAK_RNR);
TRACE_DEFINE_ENUM(MROCE_NAK_INVALID_REQUEST);
TRACE_DEFINE_ENUM(MROCE_NAK_REMOTE_ACCESS);
TRACE_DEFINE_ENUM(MROCE_NAK_REMOTE_OP);
TRACE_DEFINE_ENUM(MROCE_NAK_STREAM_PSN_WINDOW);
TRACE_DEFINE_ENUM(MROCE_NAK_UNKNOWN_CONN);
TRACE_DEFINE_ENUM(MROCE_NAK_UNKNOWN_STREAM);
TRACE_DEFINE_ENUM(MROCE_NAK_STALE_GEN);
#define show_nak_code(c)						\
	__print_symbolic(c,						\
			 { MROCE_NAK_RNR, "RNR" },			\
			 { MROCE_NAK_INVALID_REQUEST, "INVALID_REQUEST" }, \
			 { MROCE_NAK_REMOTE_ACCESS, "REMOTE_ACCESS" },	\
			 { MROCE_NAK_REMOTE_OP, "REMOTE_OP" },		\
			 { MROCE_NAK_STREAM_PSN_WINDOW, "STREAM_PSN_WINDOW" }, \
			 { MROCE_NAK_UNKNOWN_CONN, "UNKNOWN_CONN" },	\
			 { MROCE_NAK_UNKNOWN_STREAM, "UNKNOWN_STREAM" }, \
			 { MROCE_NAK_STALE_GEN, "STALE_GEN" })

/*
 * One sample of a path's state, after an ACK updated it (at most once per
 * ACK and path). ce and lost are cumulative on the path (all generations).
 */
TRACE_EVENT(mroce_path_sample,
	TP_PROTO(u32 dev, u32 conn, u32 path, u16 sport, u8 state, u32 srtt,
		 u32 rttvar, u32 min_rtt, u32 pwnd, u32 inflight, u64 ce,
		 u64 lost),
	TP_ARGS(dev, conn, path, sport, state, srtt, rttvar, min_rtt, pwnd,
		inflight, ce, lost),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, conn)
		__field(u8, path_id)
		__field(u8, path_gen)
		__field(u16, sport)
		__field(u8, state)
		__field(u32, srtt)
		__field(u32, rttvar)
		__field(u32, min_rtt)
		__field(u32, pwnd)
		__field(u32, inflight)
		__field(u64, ce)
		__field(u64, lost)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->conn = conn;
		__entry->path_id = path & 0xff;
		__entry->path_gen = (path >> 8) & 0xff;
		__entry->sport = sport;
		__entry->state = state;
		__entry->srtt = srtt;
		__entry->rttvar = rttvar;
		__entry->min_rtt = min_rtt;
		__entry->pwnd = pwnd;
		__entry->inflight = inflight;
		__entry->ce = ce;
		__entry->lost = lost;
	),
	TP_printk("dev=%u conn=%u path=%u gen=%u sport=%u state=%s srtt=%u rttvar=%u min_rtt=%u pwnd=%u inflight=%u ce=%llu lost=%llu",
		  __entry->dev, __entry->conn, __entry->path_id,
		  __entry->path_gen, __entry->sport,
		  show_path_state(__entry->state), __entry->srtt,
		  __entry->rttvar, __entry->min_rtt, __entry->pwnd,
		  __entry->inflight, __entry->ce, __entry->lost)
);

/*
 * A path's traffic counters (struct mroce_path_stats, cumulative, all
 * generations), emitted together with mroce_path_sample: the per-path
 * packet and byte counts and utilisation `mroce path` shows. A separate
 * event because a raw_tp program sees at most 12 arguments.
 */
TRACE_EVENT(mroce_path_stats,
	TP_PROTO(u32 dev, u32 conn, u32 path, u64 tx_pkts, u64 tx_bytes,
		 u64 acked_pkts, u64 rx_pkts, u64 naks, u64 ptos, u64 rtos,
		 u64 rekeys),
	TP_ARGS(dev, conn, path, tx_pkts, tx_bytes, acked_pkts, rx_pkts, naks,
		ptos, rtos, rekeys),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, conn)
		__field(u8, path_id)
		__field(u8, path_gen)
		__field(u64, tx_pkts)
		__field(u64, tx_bytes)
		__field(u64, acked_pkts)
		__field(u64, rx_pkts)
		__field(u64, naks)
		__field(u64, ptos)
		__field(u64, rtos)
		__field(u64, rekeys)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->conn = conn;
		__entry->path_id = path & 0xff;
		__entry->path_gen = (path >> 8) & 0xff;
		__entry->tx_pkts = tx_pkts;
		__entry->tx_bytes = tx_bytes;
		__entry->acked_pkts = acked_pkts;
		__entry->rx_pkts = rx_pkts;
		__entry->naks = naks;
		__entry->ptos = ptos;
		__entry->rtos = rtos;
		__entry->rekeys = rekeys;
	),
	TP_printk("dev=%u conn=%u path=%u gen=%u tx_pkts=%llu tx_bytes=%llu acked=%llu rx_pkts=%llu naks=%llu ptos=%llu rtos=%llu rekeys=%llu",
		  __entry->dev, __entry->conn, __entry->path_id,
		  __entry->path_gen, __entry->tx_pkts, __entry->tx_bytes,
		  __entry->acked_pkts, __entry->rx_pkts, __entry->naks,
		  __entry->ptos, __entry->rtos, __entry->rekeys)
);

/* A path health transition (enum mroce_path_state). */
TRACE_EVENT(mroce_path_state,
	TP_PROTO(u32 dev, u32 conn, u32 path, u16 sport, u8 old_state,
		 u8 new_state),
	TP_ARGS(dev, conn, path, sport, old_state, new_state),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, conn)
		__field(u8, path_id)
		__field(u8, path_gen)
		__field(u16, sport)
		__field(u8, old_state)
		__field(u8, new_state)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->conn = conn;
		__entry->path_id = path & 0xff;
		__entry->path_gen = (path >> 8) & 0xff;
		__entry->sport = sport;
		__entry->old_state = old_state;
		__entry->new_state = new_state;
	),
	TP_printk("dev=%u conn=%u path=%u gen=%u sport=%u %s -> %s",
		  __entry->dev, __entry->conn, __entry->path_id,
		  __entry->path_gen, __entry->sport,
		  show_path_state(__entry->old_state),
		  show_path_state(__entry->new_state))
);

/* A path moved to a new generation and source port. */
TRACE_EVENT(mroce_path_rekey,
	TP_PROTO(u32 dev, u32 conn, u32 path, u8 new_gen, u16 old_sport,
		 u16 new_sport, u8 reason),
	TP_ARGS(dev, conn, path, new_gen, old_sport, new_sport, reason),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, conn)
		__field(u8, path_id)
		__field(u8, old_gen)
		__field(u8, new_gen)
		__field(u16, old_sport)
		__field(u16, new_sport)
		__field(u8, reason)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->conn = conn;
		__entry->path_id = path & 0xff;
		__entry->old_gen = (path >> 8) & 0xff;
		__entry->new_gen = new_gen;
		__entry->old_sport = old_sport;
		__entry->new_sport = new_sport;
		__entry->reason = reason;
	),
	TP_printk("dev=%u conn=%u path=%u gen=%u->%u sport=%u->%u reason=%s",
		  __entry->dev, __entry->conn, __entry->path_id,
		  __entry->old_gen, __entry->new_gen, __entry->old_sport,
		  __entry->new_sport, show_health_event(__entry->reason))
);

/*
 * A data chunk sent again: where it goes now (path, path_psn) and where it
 * was lost (old_path, old_psn). qpn is the stream id (destination QPN).
 */
TRACE_EVENT(mroce_retransmit,
	TP_PROTO(u32 dev, u32 conn, u32 path, u32 path_psn, u32 qpn,
		 u32 stream_psn, u32 old_path, u32 old_psn, u32 len, u8 reason),
	TP_ARGS(dev, conn, path, path_psn, qpn, stream_psn, old_path, old_psn,
		len, reason),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, conn)
		__field(u8, path_id)
		__field(u8, path_gen)
		__field(u8, old_path_id)
		__field(u8, old_path_gen)
		__field(u32, path_psn)
		__field(u32, old_psn)
		__field(u32, qpn)
		__field(u32, stream_psn)
		__field(u32, len)
		__field(u8, reason)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->conn = conn;
		__entry->path_id = path & 0xff;
		__entry->path_gen = (path >> 8) & 0xff;
		__entry->old_path_id = old_path & 0xff;
		__entry->old_path_gen = (old_path >> 8) & 0xff;
		__entry->path_psn = path_psn;
		__entry->old_psn = old_psn;
		__entry->qpn = qpn;
		__entry->stream_psn = stream_psn;
		__entry->len = len;
		__entry->reason = reason;
	),
	TP_printk("dev=%u conn=%u qpn=%u spsn=%u len=%u %u/%u:%u -> %u/%u:%u reason=%s",
		  __entry->dev, __entry->conn, __entry->qpn,
		  __entry->stream_psn, __entry->len, __entry->old_path_id,
		  __entry->old_path_gen, __entry->old_psn, __entry->path_id,
		  __entry->path_gen, __entry->path_psn,
		  show_retx_reason(__entry->reason))
);

/* A connection's handshake state changed (enum mroce_hs_state). */
TRACE_EVENT(mroce_conn_state,
	TP_PROTO(u32 dev, u32 conn, u32 peer_conn, u64 peer_hi, u64 peer_lo,
		 u8 old_state, u8 new_state, u8 n_paths),
	TP_ARGS(dev, conn, peer_conn, peer_hi, peer_lo, old_state, new_state,
		n_paths),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, conn)
		__field(u32, peer_conn)
		__array(u8, peer, 16)
		__field(u8, old_state)
		__field(u8, new_state)
		__field(u8, n_paths)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->conn = conn;
		__entry->peer_conn = peer_conn;
		put_unaligned_be64(peer_hi, &__entry->peer[0]);
		put_unaligned_be64(peer_lo, &__entry->peer[8]);
		__entry->old_state = old_state;
		__entry->new_state = new_state;
		__entry->n_paths = n_paths;
	),
	TP_printk("dev=%u conn=%u peer=%pI6c peer_conn=%u paths=%u %s -> %s",
		  __entry->dev, __entry->conn, __entry->peer,
		  __entry->peer_conn, __entry->n_paths,
		  show_conn_state(__entry->old_state),
		  show_conn_state(__entry->new_state))
);

/*
 * The connection's congestion controller changed its window or rate. The
 * core only tracks changes while someone listens (mroce_trace_cc_reg()).
 */
TRACE_EVENT_FN(mroce_cc_update,
	TP_PROTO(u32 dev, u32 conn, u32 cwnd, u32 ssthresh, u16 alpha,
		 u32 rate_hint, u32 pacing_rate, u32 inflight, u8 event),
	TP_ARGS(dev, conn, cwnd, ssthresh, alpha, rate_hint, pacing_rate,
		inflight, event),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, conn)
		__field(u32, cwnd)
		__field(u32, ssthresh)
		__field(u16, alpha)
		__field(u32, rate_hint)
		__field(u32, pacing_rate)
		__field(u32, inflight)
		__field(u8, event)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->conn = conn;
		__entry->cwnd = cwnd;
		__entry->ssthresh = ssthresh;
		__entry->alpha = alpha;
		__entry->rate_hint = rate_hint;
		__entry->pacing_rate = pacing_rate;
		__entry->inflight = inflight;
		__entry->event = event;
	),
	TP_printk("dev=%u conn=%u cwnd=%u ssthresh=%u alpha=%u/1024 hint=%u rate=%u inflight=%u event=%s",
		  __entry->dev, __entry->conn, __entry->cwnd,
		  __entry->ssthresh, __entry->alpha, __entry->rate_hint,
		  __entry->pacing_rate, __entry->inflight,
		  show_cc_event(__entry->event)),
	mroce_trace_cc_reg, mroce_trace_cc_unreg
);

/* A NAK sent (sent = 1) or received (sent = 0). */
TRACE_EVENT(mroce_nak,
	TP_PROTO(u32 dev, u32 conn, u8 sent, u8 code, u32 qpn, u32 stream_psn,
		 u32 ssn, u32 arg),
	TP_ARGS(dev, conn, sent, code, qpn, stream_psn, ssn, arg),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, conn)
		__field(u8, sent)
		__field(u8, code)
		__field(u32, qpn)
		__field(u32, stream_psn)
		__field(u32, ssn)
		__field(u32, arg)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->conn = conn;
		__entry->sent = sent;
		__entry->code = code;
		__entry->qpn = qpn;
		__entry->stream_psn = stream_psn;
		__entry->ssn = ssn;
		__entry->arg = arg;
	),
	TP_printk("dev=%u conn=%u %s %s qpn=%u spsn=%u ssn=%u arg=%u",
		  __entry->dev, __entry->conn,
		  __entry->sent ? "sent" : "rcvd",
		  show_nak_code(__entry->code), __entry->qpn,
		  __entry->stream_psn, __entry->ssn, __entry->arg)
);

/*
 * A received packet dropped (or refused with a NAK): reason is the
 * enum mroce_counter the drop was counted under; its name is stored too.
 * opcode is the raw byte (0 if the packet is shorter than the header).
 */
TRACE_EVENT(mroce_rx_drop,
	TP_PROTO(u32 dev, u32 reason, u8 opcode, u32 len, u32 dst_conn,
		 u16 sport),
	TP_ARGS(dev, reason, opcode, len, dst_conn, sport),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, reason)
		__field(u8, opcode)
		__field(u32, len)
		__field(u32, dst_conn)
		__field(u16, sport)
		__string(why, mroce_counter_name(reason))
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->reason = reason;
		__entry->opcode = opcode;
		__entry->len = len;
		__entry->dst_conn = dst_conn;
		__entry->sport = sport;
		mroce_assign_str(why, mroce_counter_name(reason));
	),
	TP_printk("dev=%u %s opcode=0x%02x len=%u dst_conn=%u sport=%u",
		  __entry->dev, __get_str(why), __entry->opcode, __entry->len,
		  __entry->dst_conn, __entry->sport)
);

#endif /* MROCE_TRACE_H */

/* The header is read again by define_trace.h; keep this outside the guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE mroce_trace
#include <trace/define_trace.h>
