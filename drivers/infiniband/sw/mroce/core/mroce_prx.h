/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Receiver state of one path: which path PSNs of the current generation have
 * arrived (cumulative point + 256-bit SACK window), the sender's floor, and
 * what the next ACK block for the path reports. See docs/protocol.md §5.2.
 */
#ifndef MROCE_PRX_H
#define MROCE_PRX_H

#include "mroce_wire.h"

struct mroce_prx {
	u32 cum;		/* every path PSN <= cum is resolved */
	u64 sack[MROCE_SACK_WORDS];	/* bit i => cum + 1 + i received */
	u64 last_rx;		/* arrival time of the newest accepted packet */
	u32 echo_ts;		/* its tx_ts */
	u16 ce_cnt;
	u16 rx_cnt;
	u8 gen;
};

enum mroce_prx_verdict {
	MROCE_PRX_NEW,		/* not seen yet: accept (then mark) or refuse */
	MROCE_PRX_DUP,		/* this path PSN was already received: drop */
	MROCE_PRX_OLD,		/* below the cumulative point: never marked */
	MROCE_PRX_STALE,	/* older generation than the receiver's */
};

void mroce_prx_init(struct mroce_prx *r);
/*
 * Classifies an arriving path packet. Adopts a newer generation (resetting
 * the state) and applies the sender's floor, both of which are facts about
 * the sender independent of whether this packet is then accepted.
 */
enum mroce_prx_verdict mroce_prx_check(struct mroce_prx *r, u8 gen, u32 psn,
				       u8 floor_delta);
/*
 * Marks @psn (which mroce_prx_check() just called NEW) received. Returns true
 * if the packet arrived out of order on its path (it leaves a hole below it,
 * or fills one), which makes the receiver ACK at once.
 */
bool mroce_prx_accept(struct mroce_prx *r, u32 psn, u32 tx_ts, bool ce,
		      u64 now);
void mroce_prx_block(const struct mroce_prx *r, u8 path_id, u64 now,
		     struct mroce_ack_block *blk);

#endif /* MROCE_PRX_H */
