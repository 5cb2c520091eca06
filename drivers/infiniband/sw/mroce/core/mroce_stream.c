// SPDX-License-Identifier: GPL-2.0
/*
 * Stream windows. The sender never has a chunk with stream PSN >= una + 1024
 * outstanding and una never passes a chunk the receiver lacks, so every
 * chunk that can still arrive falls into the receiver's 1024-entry window:
 * de-duplication is exact, with no per-message state.
 */
#include "mroce_stream.h"
#include "mroce_bitmap.h"
#include "mroce_wire.h"

#define RING_MASK	(MROCE_STREAM_WINDOW - 1)

void mroce_stx_init(struct mroce_stx *s, u32 initial_psn)
{
	memset(s, 0, sizeof(*s));
	s->next = initial_psn;
	s->una = initial_psn;
}

enum mroce_stx_ack mroce_stx_ack(struct mroce_stx *s, u32 psn)
{
	u32 d = psn - s->una, n;

	if (d >= s->next - s->una)
		return (s32)d < 0 ? MROCE_STX_ACK_DUP : MROCE_STX_ACK_INVALID;
	if (mroce_bm_test(s->acked, psn & RING_MASK))
		return MROCE_STX_ACK_DUP;
	mroce_bm_set(s->acked, psn & RING_MASK);
	if (d == 0) {
		/* The only chunk out (a ping-pong): nothing above it to scan. */
		n = s->next - s->una == 1 ? 1 :
			mroce_bm_ring_ones(s->acked, MROCE_STREAM_WORDS, s->una,
					   s->next - s->una);
		mroce_bm_ring_clear(s->acked, MROCE_STREAM_WORDS, s->una, n);
		s->una += n;
	}
	return MROCE_STX_ACK_NEW;
}

bool mroce_stx_is_acked(const struct mroce_stx *s, u32 psn)
{
	u32 d = psn - s->una;

	if ((s32)d < 0)
		return true;
	return d < s->next - s->una && mroce_bm_test(s->acked, psn & RING_MASK);
}

void mroce_srx_init(struct mroce_srx *r, u32 initial_psn)
{
	memset(r, 0, sizeof(*r));
	r->base = initial_psn;
}

enum mroce_srx_verdict mroce_srx_check(const struct mroce_srx *r, u32 psn)
{
	u32 d = psn - r->base;

	if ((s32)d < 0)
		return MROCE_SRX_DUP;
	if (d >= MROCE_STREAM_WINDOW)
		return MROCE_SRX_WINDOW;
	return mroce_bm_test(r->rcv, psn & RING_MASK) ? MROCE_SRX_DUP :
		MROCE_SRX_NEW;
}

enum mroce_srx_verdict mroce_srx_check_data(struct mroce_srx *r,
					    const struct mroce_pkt *pkt,
					    bool fresh, bool asked)
{
	const struct mroce_data *d = &pkt->u.d;
	enum mroce_srx_verdict v = mroce_srx_check(r, d->stream_psn);
	u8 op = pkt->c.opcode;

	if (v == MROCE_SRX_NEW || !fresh ||
	    !mroce_op_is_resp(op))
		return v;
	if (d->msn != 0 || d->msg_offset != 0 || !asked)
		return MROCE_SRX_WINDOW;
	mroce_srx_init(r, d->stream_psn);
	return MROCE_SRX_NEW;
}

void mroce_srx_accept(struct mroce_srx *r, u32 psn, u8 tag)
{
	u32 d = psn - r->base, i = psn & RING_MASK;

	mroce_bm_set(r->rcv, i);
	if (tag & 1)
		mroce_bm_set(r->tag_lo, i);
	if (tag & 2)
		mroce_bm_set(r->tag_hi, i);
	/* Chunks from base to base + ready are all there. */
	if (d == r->ready)
		r->ready += mroce_bm_ring_ones(r->rcv, MROCE_STREAM_WORDS,
					       psn, MROCE_STREAM_WINDOW - d);
}

/*
 * Releases the first @n chunks, of which only the last may be tagged (pop
 * stops at every tag): its tag bits are the only ones to clear.
 */
static inline void release(struct mroce_srx *r, u32 n)
{
	u32 last = (r->base + n - 1) & RING_MASK;

	mroce_bm_ring_clear(r->rcv, MROCE_STREAM_WORDS, r->base, n);
	mroce_bm_clear(r->tag_lo, last);
	mroce_bm_clear(r->tag_hi, last);
	r->base += n;
	r->ready -= n;
}

bool mroce_srx_pop(struct mroce_srx *r, u32 *psn, u8 *tag)
{
	u32 k;

	if (!r->ready)
		return false;
	/* The first chunk with either tag bit: one scan of both rings. */
	k = mroce_bm_ring_next_set2(r->tag_lo, r->tag_hi, MROCE_STREAM_WORDS,
				    r->base, r->ready);
	if (k == r->ready) {
		release(r, r->ready);
		return false;
	}
	*psn = r->base + k;
	*tag = (u8)(mroce_bm_test(r->tag_lo, (r->base + k) & RING_MASK) |
		    mroce_bm_test(r->tag_hi, (r->base + k) & RING_MASK) << 1);
	release(r, k + 1);
	return true;
}
