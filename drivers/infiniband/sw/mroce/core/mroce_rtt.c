// SPDX-License-Identifier: GPL-2.0
/*
 * RTT estimation. Every transmission has its own path PSN, so every sample
 * is unambiguous (no Karn's rule needed); the sample is the echo of the
 * newest arrival minus the receiver's reported ACK delay.
 */
#include "mroce_rtt.h"

void mroce_rtt_init(struct mroce_rtt *r)
{
	memset(r, 0, sizeof(*r));
}
