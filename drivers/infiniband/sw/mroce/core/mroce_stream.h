/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stream windows: the state one RC QP keeps per direction, embedded in the
 * caller's QP object. A stream PSN is assigned to a chunk at its first
 * transmission and reused by every retransmission; the receiver window
 * de-duplicates chunks and releases them for completion in stream order.
 * See docs/protocol.md §4.
 */
#ifndef MROCE_STREAM_H
#define MROCE_STREAM_H

#include "mroce_env.h"

#define MROCE_STREAM_WINDOW	1024
#define MROCE_STREAM_WORDS	(MROCE_STREAM_WINDOW / 64)
/*
 * The windows' bitmaps are rings: stream PSN x has bit x % 1024, and bits of
 * PSNs outside the window are zero. Moving a window clears the bits it
 * leaves behind instead of shifting 1024 bits for every chunk.
 */

/* Sender side. */
struct mroce_stx {
	u32 next;		/* next stream PSN to assign */
	u32 una;		/* lowest stream PSN not acknowledged */
	u64 acked[MROCE_STREAM_WORDS];	/* ring: [una, next) acknowledged */
};

enum mroce_stx_ack {
	MROCE_STX_ACK_NEW,
	MROCE_STX_ACK_DUP,	/* already acknowledged */
	MROCE_STX_ACK_INVALID,	/* never assigned */
};

void mroce_stx_init(struct mroce_stx *s, u32 initial_psn);
/* False while the window is full: una + 1024 has been reached. */
static inline bool mroce_stx_can_assign(const struct mroce_stx *s)
{
	return s->next - s->una < MROCE_STREAM_WINDOW;
}

static inline u32 mroce_stx_assign(struct mroce_stx *s)
{
	return s->next++;
}

enum mroce_stx_ack mroce_stx_ack(struct mroce_stx *s, u32 psn);
bool mroce_stx_is_acked(const struct mroce_stx *s, u32 psn);

/* Receiver side. */
struct mroce_srx {
	u32 base;		/* first stream PSN not yet released */
	u32 ready;		/* received in-order chunks from base on */
	u64 rcv[MROCE_STREAM_WORDS];	/* ring: [base, base + 1024) received */
	u64 tag_lo[MROCE_STREAM_WORDS];	/* ring: 2-bit caller tag per chunk */
	u64 tag_hi[MROCE_STREAM_WORDS];
};

enum mroce_srx_verdict {
	MROCE_SRX_NEW,
	MROCE_SRX_DUP,		/* received before: drop the payload */
	MROCE_SRX_WINDOW,	/* beyond the window: refuse */
};

void mroce_srx_init(struct mroce_srx *r, u32 initial_psn);
enum mroce_srx_verdict mroce_srx_check(const struct mroce_srx *r, u32 psn);
struct mroce_pkt;
/*
 * mroce_srx_check() for a data packet, with the one exception docs §4.3
 * makes: a responder may answer from RTR, before it knows where our
 * requests expect its stream to start. While nothing has arrived on the
 * stream (@fresh) and we asked something (@asked), the first chunk of the
 * answer to our first request (READ_RESP or ATOMIC_RESP, read ordinal 0,
 * offset 0) re-initialises the window to start at it (NEW); any other
 * answer outside the window waits (WINDOW) instead of counting as a
 * duplicate.
 */
enum mroce_srx_verdict mroce_srx_check_data(struct mroce_srx *r,
					    const struct mroce_pkt *pkt,
					    bool fresh, bool asked);
/*
 * Marks @psn (checked NEW) received with a caller tag 0..3; a non-zero tag
 * makes mroce_srx_pop() report the chunk when it is released in order.
 */
void mroce_srx_accept(struct mroce_srx *r, u32 psn, u8 tag);
/*
 * Releases received chunks in stream order and returns the next tagged one.
 * Callers pop until it returns false after every accept, so the window
 * always starts right after the cumulative point.
 */
bool mroce_srx_pop(struct mroce_srx *r, u32 *psn, u8 *tag);
/* Every stream PSN <= this one has been received. */
static inline u32 mroce_srx_cum(const struct mroce_srx *r)
{
	return r->base + r->ready - 1;
}

#endif /* MROCE_STREAM_H */
