/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Receive steering (rx_spread, mroce_steer.c): which CPU handles a received
 * packet. The per-CPU queue that takes it there is mroce_rx.c's.
 */
#ifndef MROCE_STEER_H
#define MROCE_STEER_H

#include <linux/skbuff.h>

struct mroce_peer;

/* Where mroce_steer_pick() sends a packet. */
struct mroce_steer_to {
	u64	cookie;	/* queued: mroce_steer_done() it once handled */
	/* the connection its header names, if looked up (caller's RCU) */
	struct mroce_peer *peer;
	int	cpu;	/* queue it there */
	bool	now;	/* handle it here at once, not queued */
};

/* The caller holds the RCU read lock. */
void mroce_steer_pick(struct sk_buff *skb, struct mroce_steer_to *to);
void mroce_steer_done(u64 cookie);

#endif /* MROCE_STEER_H */
