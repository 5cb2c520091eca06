/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connection handshake state machine (CONN_REQ / CONN_REP / CONN_CLOSE).
 * Each side allocates the id it wants to be addressed by; nonces identify
 * incarnations, so a peer restart is recognised by a new nonce. See
 * docs/protocol.md §7.
 */
#ifndef MROCE_HS_H
#define MROCE_HS_H

#include "mroce_wire.h"
#include "mroce_params.h"

enum mroce_hs_state {
	MROCE_HS_CLOSED = 0,
	MROCE_HS_REQ_SENT,
	MROCE_HS_ESTABLISHED,
	MROCE_HS_FAILED,
	MROCE_HS_NR_STATES,
};

extern const char *const mroce_hs_state_name[MROCE_HS_NR_STATES];

/* Actions and events returned by the handshake functions (a bit mask). */
#define MROCE_HS_SEND_REQ	0x01	/* send CONN_REQ (mroce_hs_build) */
#define MROCE_HS_SEND_REP	0x02	/* send CONN_REP */
#define MROCE_HS_UP		0x04	/* connection became ESTABLISHED */
#define MROCE_HS_RESTART	0x08	/* peer restarted: the old incarnation is gone */
#define MROCE_HS_DOWN		0x10	/* failed, closed or lost by the peer */

struct mroce_hs_offer {
	u32 id;			/* our connection id, != 0 */
	u64 nonce;		/* our incarnation nonce, != 0 */
	u16 mtu;
	u8 n_paths;
	u32 caps;
	u32 init_rate;		/* Mbit/s the peer may start at, 0 = any */
};

struct mroce_hs {
	u8 state;		/* enum mroce_hs_state */
	u8 retries;
	u32 timeout;
	u64 deadline;		/* REQ_SENT: next CONN_REQ */
	struct mroce_hs_offer local;
	struct mroce_hs_offer remote;	/* valid from ESTABLISHED on */
};

void mroce_hs_init(struct mroce_hs *hs, const struct mroce_hs_offer *local);
u32 mroce_hs_connect(struct mroce_hs *hs, const struct mroce_params *p,
		     u64 now);
/* A decoded CONN_REQ, CONN_REP or CONN_CLOSE for this connection. */
u32 mroce_hs_on_msg(struct mroce_hs *hs, const struct mroce_pkt *pkt);
u32 mroce_hs_on_timer(struct mroce_hs *hs, const struct mroce_params *p,
		      u64 now);
/* NAK UNKNOWN_CONN naming @id: the peer has lost us. */
u32 mroce_hs_on_unknown(struct mroce_hs *hs, u32 id);
/* Local close; the caller sends CONN_CLOSE if it was ESTABLISHED. */
u32 mroce_hs_close(struct mroce_hs *hs);
/* Builds CONN_REQ, CONN_REP or CONN_CLOSE (@reason) from the state. */
void mroce_hs_build(const struct mroce_hs *hs, u8 opcode, u32 reason,
		    struct mroce_pkt *pkt);

/* Negotiated values, meaningful once ESTABLISHED. */
u16 mroce_hs_mtu(const struct mroce_hs *hs);
u8 mroce_hs_paths(const struct mroce_hs *hs);
u32 mroce_hs_caps(const struct mroce_hs *hs);

#endif /* MROCE_HS_H */
