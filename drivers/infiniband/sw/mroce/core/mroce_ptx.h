/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sender state of one path generation: path PSN assignment, a ring of the
 * last 256 transmissions, ACK processing ("a gap on a path is loss") and the
 * floor. See docs/protocol.md §5.3.
 */
#ifndef MROCE_PTX_H
#define MROCE_PTX_H

#include "mroce_wire.h"

#define MROCE_PTX_RING		256
/*
 * At most this many path PSNs from the floor to the next PSN. Keeps
 * floor_delta in 8 bits and every PSN the sender may send inside the
 * receiver's 256-bit window (whose cumulative point is >= floor - 1).
 */
#define MROCE_PTX_SPAN		255
#define MROCE_COOKIE_PROBE	U64_MAX

enum mroce_rec_state {
	MROCE_REC_FREE = 0,
	MROCE_REC_OUT,		/* transmitted, fate unknown */
	MROCE_REC_ACKED,
	MROCE_REC_LOST,		/* declared lost; the chunk is resent elsewhere */
	MROCE_REC_NAKED,	/* refused by the receiver (NAK) */
};

struct mroce_ptx_rec {
	u64 cookie;		/* caller's handle of the chunk sent */
	u64 tx_time;
	u32 len;		/* payload bytes */
	u8 state;		/* enum mroce_rec_state */
};

struct mroce_ptx {
	u32 next;		/* next path PSN to assign */
	u32 floor;		/* lowest PSN still MROCE_REC_OUT, or next */
	u32 sent_floor;		/* floor the newest transmission carried */
	u32 inflight;		/* bytes in MROCE_REC_OUT records */
	u16 n_out;		/* MROCE_REC_OUT records */
	u64 last_tx;		/* time of the newest transmission */
	struct mroce_ptx_rec ring[MROCE_PTX_RING];
};

/* Called once per record that leaves MROCE_REC_OUT by an ACK or loss. */
typedef void (*mroce_ptx_fn)(void *ctx, const struct mroce_ptx_rec *rec,
			     u32 psn);

struct mroce_ptx_ack {
	u32 acked_pkts;
	u32 acked_bytes;
	u32 lost_pkts;
	u32 lost_bytes;
	bool probe_acked;
	bool bogus;		/* acknowledged PSNs never sent: block ignored */
};

void mroce_ptx_init(struct mroce_ptx *t);
static inline bool mroce_ptx_can_send(const struct mroce_ptx *t)
{
	return t->next - t->floor < MROCE_PTX_SPAN;
}

/* Records a transmission of @len bytes and returns its path PSN. */
u32 mroce_ptx_send(struct mroce_ptx *t, u32 len, u64 cookie, u64 now);
static inline u8 mroce_ptx_floor_delta(const struct mroce_ptx *t, u32 psn)
{
	return (u8)(psn - t->floor);
}

/*
 * Applies one ACK block of this path's current generation. @acked is called
 * for each newly acknowledged record, @lost for each record now known lost
 * (at least @dupthresh higher PSNs acknowledged).
 */
void mroce_ptx_on_block(struct mroce_ptx *t, const struct mroce_ack_block *blk,
			u8 dupthresh, mroce_ptx_fn acked, mroce_ptx_fn lost,
			void *ctx, struct mroce_ptx_ack *res);
/*
 * Applies one ACK block to records this path already declared lost: those of
 * a generation a re-key retired, or of a path that failed. @acked is called
 * for each lost record the block covers (the packet did arrive, late), which
 * becomes MROCE_REC_ACKED; returns their count. Byte counts are not touched:
 * the loss already took the records out of flight.
 */
u32 mroce_ptx_on_late_block(struct mroce_ptx *t,
			    const struct mroce_ack_block *blk,
			    mroce_ptx_fn acked, void *ctx);
/* Marks the record of @psn refused; false if it is not outstanding. */
bool mroce_ptx_on_nak(struct mroce_ptx *t, u32 psn,
		      struct mroce_ptx_rec *rec);
/* Declares every outstanding record lost (RTO, re-key). Returns the count. */
u32 mroce_ptx_lose_all(struct mroce_ptx *t, mroce_ptx_fn lost, void *ctx);
/*
 * Declares lost every OUT record sent before @before (time), oldest first;
 * returns how many.
 */
u32 mroce_ptx_lose_older(struct mroce_ptx *t, u64 before, mroce_ptx_fn lost,
			 void *ctx);
/*
 * Oldest outstanding transmission time, or 0 if none. Inline: the
 * deadline of a path with packets out needs it after every send.
 */
static inline u64 mroce_ptx_oldest(const struct mroce_ptx *t)
{
	u32 psn;

	for (psn = t->floor; psn != t->next; psn++) {
		const struct mroce_ptx_rec *r = &t->ring[psn % MROCE_PTX_RING];

		if (r->state == MROCE_REC_OUT)
			return r->tx_time;
	}
	return 0;
}

#endif /* MROCE_PTX_H */
