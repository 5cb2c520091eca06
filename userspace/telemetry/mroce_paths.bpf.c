// SPDX-License-Identifier: GPL-2.0
/*
 * Per-path and per-connection telemetry from the mroce tracepoints.
 *
 * raw_tp programs, not tp_btf: they need no module BTF, which Debian's
 * out-of-tree module builds do not have, and they read scalar arguments
 * only (mroce_tp.h). Each program copies exactly the tracepoint's argument
 * count out of ctx: the kernel refuses to attach a program that reads past
 * the last argument.
 *
 * Aggregation lives in two LRU hashes (a dead connection's rows age out
 * instead of filling the map); the rare state/re-key/handshake events also
 * go to a ring buffer for `mroce path watch`.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "mroce_tp.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MROCE_TP_MAX_PATHS);
	__type(key, struct mroce_path_key);
	__type(value, struct mroce_path_val);
} mroce_paths SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MROCE_TP_MAX_CONNS);
	__type(key, struct mroce_conn_key);
	__type(value, struct mroce_conn_val);
} mroce_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MROCE_TP_RINGBUF_SIZE);
} mroce_events SEC(".maps");

/* Events the ring buffer had no room for (the reader was too slow). */
__u64 mroce_events_lost;

static const struct mroce_path_val zero_path;
static const struct mroce_conn_val zero_conn;

/* Unrolled, so every ctx access has a constant offset below n * 8. */
#define COPY_ARGS(dst, ctx, n)						\
	do {								\
		_Pragma("unroll")					\
		for (int i_ = 0; i_ < (n); i_++)			\
			(dst)[i_] = (ctx)->args[i_];			\
	} while (0)

/*
 * The row for key, created zeroed on first use. Losing an insert race to
 * another CPU is fine: the second lookup finds the winner's row.
 */
static __always_inline void *row_of(void *map, const void *key,
				    const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

static __always_inline struct mroce_path_val *path_of(const __u64 *a)
{
	struct mroce_path_key k = {};

	mroce_tp_path_key_of(&k, a);
	return row_of(&mroce_paths, &k, &zero_path);
}

static __always_inline struct mroce_path_val *path_at(const __u64 *a,
						       __u32 path)
{
	struct mroce_path_key k = {
		.dev = (__u32)a[0], .conn = (__u32)a[1], .path = path & 0xff,
	};

	return row_of(&mroce_paths, &k, &zero_path);
}

static __always_inline struct mroce_conn_val *conn_of(const __u64 *a)
{
	struct mroce_conn_key k = { .dev = (__u32)a[0], .conn = (__u32)a[1] };

	return row_of(&mroce_conns, &k, &zero_conn);
}

static __always_inline void emit(__u32 type, const __u64 *a, __u64 now,
				 __u32 path, __u32 x, __u32 y, __u32 z, __u32 w,
				 __u64 hi, __u64 lo)
{
	struct mroce_tp_event *e;

	e = bpf_ringbuf_reserve(&mroce_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&mroce_events_lost, 1);
		return;
	}
	e->ns = now;
	e->type = type;
	e->dev = (__u32)a[0];
	e->conn = (__u32)a[1];
	e->path = path;
	e->a = x;
	e->b = y;
	e->c = z;
	e->d = w;
	e->peer_hi = hi;
	e->peer_lo = lo;
	bpf_ringbuf_submit(e, 0);
}

SEC("raw_tp/mroce_path_sample")
int mroce_path_sample(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a[MROCE_PS_NR];
	struct mroce_path_val *v;

	COPY_ARGS(a, ctx, MROCE_PS_NR);
	v = path_of(a);
	if (v)
		mroce_tp_on_path_sample(v, a, bpf_ktime_get_ns());
	return 0;
}

SEC("raw_tp/mroce_path_stats")
int mroce_path_stats(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a[MROCE_PST_NR];
	struct mroce_path_val *v;

	COPY_ARGS(a, ctx, MROCE_PST_NR);
	v = path_of(a);
	if (v)
		mroce_tp_on_path_stats(v, a, bpf_ktime_get_ns());
	return 0;
}

SEC("raw_tp/mroce_path_state")
int mroce_path_state(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a[MROCE_PSC_NR];
	struct mroce_path_val *v;
	__u64 now = bpf_ktime_get_ns();

	COPY_ARGS(a, ctx, MROCE_PSC_NR);
	v = path_of(a);
	if (v)
		mroce_tp_on_path_state(v, a, now);
	emit(MROCE_EV_PATH_STATE, a, now, (__u32)a[MROCE_PSC_PATH],
	     (__u32)a[MROCE_PSC_SPORT], (__u32)a[MROCE_PSC_OLD],
	     (__u32)a[MROCE_PSC_NEW], 0, 0, 0);
	return 0;
}

SEC("raw_tp/mroce_path_rekey")
int mroce_path_rekey(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a[MROCE_PRK_NR];
	struct mroce_path_val *v;
	__u64 now = bpf_ktime_get_ns();

	COPY_ARGS(a, ctx, MROCE_PRK_NR);
	v = path_of(a);
	if (v)
		mroce_tp_on_path_rekey(v, a);
	emit(MROCE_EV_PATH_REKEY, a, now, (__u32)a[MROCE_PRK_PATH],
	     (__u32)a[MROCE_PRK_NEW_GEN], (__u32)a[MROCE_PRK_OLD_SPORT],
	     (__u32)a[MROCE_PRK_NEW_SPORT], (__u32)a[MROCE_PRK_REASON], 0, 0);
	return 0;
}

SEC("raw_tp/mroce_retransmit")
int mroce_retransmit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a[MROCE_RTX_NR];
	struct mroce_path_val *v;

	COPY_ARGS(a, ctx, MROCE_RTX_NR);
	v = path_at(a, (__u32)a[MROCE_RTX_PATH]);
	if (v)
		mroce_tp_on_retx_out(v, a);
	/* U32_MAX: the transport does not know where the chunk was lost */
	if ((__u32)a[MROCE_RTX_OLD_PATH] == MROCE_TP_NO_PATH)
		return 0;
	v = path_at(a, (__u32)a[MROCE_RTX_OLD_PATH]);
	if (v)
		mroce_tp_on_retx_lost(v, a);
	return 0;
}

SEC("raw_tp/mroce_conn_state")
int mroce_conn_state(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a[MROCE_CS_NR];
	struct mroce_conn_val *v;
	__u64 now = bpf_ktime_get_ns();

	COPY_ARGS(a, ctx, MROCE_CS_NR);
	v = conn_of(a);
	if (v)
		mroce_tp_on_conn_state(v, a, now);
	emit(MROCE_EV_CONN_STATE, a, now, 0, (__u32)a[MROCE_CS_PEER_CONN],
	     (__u32)a[MROCE_CS_OLD], (__u32)a[MROCE_CS_NEW],
	     (__u32)a[MROCE_CS_N_PATHS], a[MROCE_CS_PEER_HI],
	     a[MROCE_CS_PEER_LO]);
	return 0;
}

SEC("raw_tp/mroce_cc_update")
int mroce_cc_update(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a[MROCE_CC_NR];
	struct mroce_conn_val *v;

	COPY_ARGS(a, ctx, MROCE_CC_NR);
	v = conn_of(a);
	if (v)
		mroce_tp_on_cc_update(v, a, bpf_ktime_get_ns());
	return 0;
}

SEC("raw_tp/mroce_nak")
int mroce_nak(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a[MROCE_NAK_NR];
	struct mroce_conn_val *v;

	COPY_ARGS(a, ctx, MROCE_NAK_NR);
	/* A NAK to an unknown connection (conn 0) belongs to no row. */
	if (!a[MROCE_NAK_CONN])
		return 0;
	v = conn_of(a);
	if (v)
		mroce_tp_on_nak(v, a);
	return 0;
}
