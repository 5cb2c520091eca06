/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Receive steering (rx_spread): which CPU handles a received packet
 * (mroce_steer.c), and the receive entry points it hands packets to
 * (mroce_rx.c).
 */
#ifndef MROCE_STEER_H
#define MROCE_STEER_H

#include <linux/skbuff.h>

struct mroce_rx_meta;

/* mroce_steer.c */
bool mroce_steer_skb(struct sk_buff *skb, const struct mroce_rx_meta *meta);
void mroce_steer_init(void);
void mroce_steer_exit(void);

/* mroce_rx.c */
void mroce_rx_park(struct sk_buff *skb, const struct mroce_rx_meta *meta,
		   u64 cookie);
void mroce_rx_now(struct sk_buff *skb, const struct mroce_rx_meta *meta);
void mroce_rx_list(struct sk_buff_head *list, unsigned int burst,
		   void (*done)(u64 cookie));

#endif /* MROCE_STEER_H */
