// SPDX-License-Identifier: GPL-2.0
/*
 * Path health. A path that times out is re-keyed at once (its outstanding
 * data was already declared lost and resent elsewhere). A path judged bad by
 * statistics first drains (SUSPECT) so that re-keying it does not turn
 * packets that are still in flight into spurious retransmissions.
 */
#include "mroce_health.h"

const char *const mroce_path_state_name[MROCE_PATH_NR_STATES] = {
	[MROCE_PATH_ACTIVE]	= "active",
	[MROCE_PATH_SUSPECT]	= "suspect",
	[MROCE_PATH_PROBING]	= "probing",
	[MROCE_PATH_FAILED]	= "failed",
};

void mroce_health_init(struct mroce_health *h, const struct mroce_params *p)
{
	memset(h, 0, sizeof(*h));
	h->state = MROCE_PATH_ACTIVE;
	h->holdoff = p->holdoff_min;
}

static enum mroce_health_action health_rekey(struct mroce_health *h)
{
	h->state = MROCE_PATH_PROBING;
	h->bad_rounds = 0;
	h->rto_backoff = 0;
	return MROCE_HACT_REKEY;
}

enum mroce_health_action mroce_health_step(struct mroce_health *h,
					    enum mroce_health_event ev,
					    const struct mroce_params *p,
					    u64 now)
{
	switch (ev) {
	case MROCE_HEV_PROGRESS:
		/* The rule for every state lives in the header. */
		if (mroce_health_progress_quiet(h))
			return MROCE_HACT_NONE;
		/* The re-keyed path's PROBE was answered: it works. */
		h->state = MROCE_PATH_ACTIVE;
		h->probe_fails = 0;
		h->holdoff = p->holdoff_min;
		h->loss_ewma = 0;
		return MROCE_HACT_NONE;
	case MROCE_HEV_RTO:
		if (h->state == MROCE_PATH_FAILED)
			return MROCE_HACT_NONE;
		if (h->state != MROCE_PATH_PROBING)
			return health_rekey(h);
		if (++h->probe_fails < p->probe_fails)
			return health_rekey(h);
		h->state = MROCE_PATH_FAILED;
		h->holdoff_end = now + h->holdoff;
		h->holdoff = h->holdoff > p->holdoff_max / 2 ?
			p->holdoff_max : h->holdoff * 2;
		return MROCE_HACT_NONE;
	case MROCE_HEV_BAD:
		if (h->state == MROCE_PATH_ACTIVE)
			h->state = MROCE_PATH_SUSPECT;
		return MROCE_HACT_NONE;
	case MROCE_HEV_DRAINED:
		return h->state == MROCE_PATH_SUSPECT ? health_rekey(h) :
			MROCE_HACT_NONE;
	case MROCE_HEV_HOLDOFF_END:
		return h->state == MROCE_PATH_FAILED ? health_rekey(h) :
			MROCE_HACT_NONE;
	case MROCE_HEV_STALE:
		return h->state == MROCE_PATH_FAILED ? MROCE_HACT_NONE :
			health_rekey(h);
	}
	return MROCE_HACT_NONE;
}

inline bool mroce_health_is_bad(struct mroce_health *h,
				const struct mroce_params *p, u32 score,
				u32 mean_score, u32 mean_loss)
{
	/*
	 * Loss: far above both an absolute bar and the siblings' mean, so that
	 * uniform random loss (every path alike) never re-keys anything.
	 */
	if (h->loss_ewma > p->suspect_loss && h->loss_ewma > 2 * mean_loss)
		return true;
	/*
	 * Congestion hot spot (PLB-like): persistently and clearly worse than
	 * its siblings, by a margin and by a factor. The factor keeps RTT
	 * jitter that inflates every path (a descheduled VM) from picking
	 * one of them by chance.
	 */
	if (score > mean_score + p->rekey_score &&
	    (u64)score * MROCE_Q10 > (u64)mean_score * MROCE_READ_ONCE(p->rekey_rel)) {
		if (++h->bad_rounds >= p->rekey_rounds)
			return true;
	} else {
		h->bad_rounds = 0;
	}
	return false;
}
