/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Path health state machine: ACTIVE, SUSPECT (draining, takes no new data),
 * PROBING (freshly re-keyed, waiting for its PROBE to be acknowledged) and
 * FAILED (re-keys unanswered; waits a doubling hold-off before the next
 * attempt). See docs/protocol.md §5.6.
 */
#ifndef MROCE_HEALTH_H
#define MROCE_HEALTH_H

#include "mroce_params.h"

enum mroce_path_state {
	MROCE_PATH_ACTIVE = 0,
	MROCE_PATH_SUSPECT,
	MROCE_PATH_PROBING,
	MROCE_PATH_FAILED,
	MROCE_PATH_NR_STATES,
};

extern const char *const mroce_path_state_name[MROCE_PATH_NR_STATES];

enum mroce_health_event {
	MROCE_HEV_PROGRESS,	/* the current generation acknowledged data */
	MROCE_HEV_RTO,		/* retransmission timeout (or PROBE unanswered) */
	MROCE_HEV_BAD,		/* loss or score rule judged the path bad */
	MROCE_HEV_DRAINED,	/* nothing outstanding any more */
	MROCE_HEV_HOLDOFF_END,	/* FAILED hold-off is over */
	MROCE_HEV_STALE,	/* the receiver saw a newer generation */
};

enum mroce_health_action {
	MROCE_HACT_NONE,
	MROCE_HACT_REKEY,	/* caller re-keys the path and sends a PROBE */
};

struct mroce_health {
	u8 state;		/* enum mroce_path_state */
	u8 probe_fails;		/* consecutive unanswered re-keys */
	u8 bad_rounds;		/* consecutive path rounds over the score bar */
	u8 rto_backoff;		/* consecutive RTOs without progress */
	u16 loss_ewma;		/* Q10 fraction of transmissions lost */
	u32 holdoff;		/* next FAILED hold-off */
	u64 holdoff_end;	/* FAILED: when to try again */
};

void mroce_health_init(struct mroce_health *h, const struct mroce_params *p);
enum mroce_health_action mroce_health_step(struct mroce_health *h,
					    enum mroce_health_event ev,
					    const struct mroce_params *p,
					    u64 now);
/*
 * MROCE_HEV_PROGRESS's part for every state: the RTO backoff resets.
 * mroce_health_step() calls it first, so this is the one place of that
 * rule; inline for every ACK. False if the step must still run: a PROBING
 * path's answered PROBE changes its state.
 */
static inline bool mroce_health_progress_quiet(struct mroce_health *h)
{
	h->rto_backoff = 0;
	return h->state != MROCE_PATH_PROBING;
}

/* Feeds transmission outcomes into the loss EWMA (gain 1/16 per record). */
static inline void mroce_health_outcome(struct mroce_health *h, u32 acked,
					u32 lost)
{
	u32 e = h->loss_ewma;

	/*
	 * Gain 1/16, rounded away from the current value so the EWMA reaches
	 * both 0 and 1.0. Bounded: at most one ring of records per ACK block.
	 */
	while (lost--)
		e += (MROCE_Q10 - e + 15) / 16;
	while (acked--)
		e -= (e + 15) / 16;
	h->loss_ewma = (u16)e;
}

/*
 * Once per path round: should the path be re-keyed for being much worse
 * than its siblings? @score is the path's hot score (Q10, RTT and ECN
 * terms, docs §5.7), @mean_score that of its ACTIVE siblings; @mean_loss
 * is the mean loss EWMA of the connection's ACTIVE paths.
 */
bool mroce_health_is_bad(struct mroce_health *h, const struct mroce_params *p,
			 u32 score, u32 mean_score, u32 mean_loss);

#endif /* MROCE_HEALTH_H */
