// SPDX-License-Identifier: GPL-2.0
/*
 * Path selection. Two random candidates instead of the global minimum keep
 * many connections from herding onto the same momentarily best path; the
 * per-path window makes a hot path throttle itself even when picked.
 */
#include "mroce_pick.h"

#define MAX_RTT_INFLATION	(8 * MROCE_Q10)

inline u32 mroce_path_hot(const struct mroce_conn *c,
			  const struct mroce_path *p)
{
	const struct mroce_params *prm = c->prm;
	u64 q = 0, s;

	if (p->rtt.srtt && c->rtt.min_rtt && p->rtt.srtt > c->rtt.min_rtt) {
		q = mroce_div_u64((u64)(p->rtt.srtt - c->rtt.min_rtt) *
				  MROCE_Q10, c->rtt.min_rtt);
		if (q > MAX_RTT_INFLATION)
			q = MAX_RTT_INFLATION;
	}
	s = (q * prm->w_rtt + (u64)p->cc.alpha * prm->w_ecn) / MROCE_Q10;
	return s > U32_MAX ? U32_MAX : (u32)s;
}

u32 mroce_path_score(const struct mroce_conn *c, const struct mroce_path *p)
{
	return mroce_path_score_hot(c, p, mroce_path_hot(c, p));
}

/*
 * What one path may hold: its own window, but at most twice an even split
 * of the connection window over the ACTIVE paths. Without ECN pwnd grows to
 * max_pwnd and stops telling paths apart; measured against this share, a
 * path whose packets sit in a queue (another plane's busy NIC port, a hot
 * link) or in a black hole looks loaded within one RTT, long before its RTT
 * or loss statistics move.
 */
static u32 conn_window(const struct mroce_conn *c)
{
	return mroce_cc_window(&c->cc, c->prm, c->rtt.min_rtt, c->rtt.srtt);
}

static u32 path_share(const struct mroce_conn *c, u32 cwnd)
{
	u32 i, active = 0;
	u64 share;

	for (i = 0; i < c->n_paths; i++)
		active += c->paths[i].health.state == MROCE_PATH_ACTIVE;
	if (!active)
		return U32_MAX;
	share = mroce_div_u64(2ull * cwnd, active);
	if (share < c->prm->min_pwnd)
		share = c->prm->min_pwnd;
	return share > U32_MAX ? U32_MAX : (u32)share;
}

/*
 * path_share() of one pick, computed when first needed: only a path with
 * bytes in flight is measured against it, and on a ping-pong none has any.
 */
struct share {
	const struct mroce_conn *c;
	u32 cwnd;
	u32 val;
	bool known;
};

static inline u32 path_cap(const struct mroce_path *p, struct share *sh)
{
	if (!sh->known) {
		sh->val = path_share(sh->c, sh->cwnd);
		sh->known = true;
	}
	return p->cc.pwnd < sh->val ? p->cc.pwnd : sh->val;
}

static inline bool eligible(const struct mroce_path *p, u32 len,
			    struct share *sh)
{
	if (p->health.state != MROCE_PATH_ACTIVE || !mroce_ptx_can_send(&p->tx))
		return false;
	/* An empty path may always take one packet, whatever its window. */
	return !p->tx.inflight ||
		(u64)p->tx.inflight + len <= path_cap(p, sh);
}

bool mroce_path_eligible(const struct mroce_conn *c,
			 const struct mroce_path *p, u32 len)
{
	struct share sh = { .c = c, .cwnd = conn_window(c) };

	return eligible(p, len, &sh);
}

static inline u64 load(const struct mroce_path *p, struct share *sh)
{
	u32 cap;

	/* An idle path (every ping-pong send) needs no share, no division. */
	if (!p->tx.inflight)
		return p->score / 2;
	cap = path_cap(p, sh);
	return mroce_div_u64((u64)p->tx.inflight * MROCE_Q10, cap ? cap : 1) +
		p->score / 2;
}

/* @x mod @n: a mask for the usual power-of-two path counts, no division. */
static int pick_index(u64 x, u32 n)
{
	return (int)(n & (n - 1) ? x % n : x & (n - 1));
}

int mroce_pick_path(struct mroce_conn *c, u32 len, int pref)
{
	return mroce_pick_path_w(c, len, pref, conn_window(c));
}

/* The power-of-two choice between eligible paths. */
static int pick(struct mroce_conn *c, u32 len, struct share *sh)
{
	int a, b, best = -1;
	u64 best_load = U64_MAX;
	u32 i, start;

	a = pick_index(mroce_prng(&c->rng), c->n_paths);
	b = pick_index(mroce_prng(&c->rng), c->n_paths);
	if (c->n_paths > 1 && b == a)
		b = (a + 1) % c->n_paths;
	if (eligible(&c->paths[a], len, sh)) {
		best = a;
		best_load = load(&c->paths[a], sh);
	}
	if (b != a && eligible(&c->paths[b], len, sh) &&
	    load(&c->paths[b], sh) < best_load)
		best = b;
	if (best >= 0)
		return best;

	/* Both candidates full or unhealthy: take the least loaded other one. */
	start = (u32)(mroce_prng(&c->rng) % c->n_paths);
	for (i = 0; i < c->n_paths; i++) {
		u32 k = (start + i) % c->n_paths;
		u64 l;

		if (!eligible(&c->paths[k], len, sh))
			continue;
		l = load(&c->paths[k], sh);
		if (l < best_load) {
			best_load = l;
			best = (int)k;
		}
	}
	return best;
}

/* Whether @p may take the next packet of a run or a retransmission. */
static inline bool keep(const struct mroce_conn *c, const struct mroce_path *p,
			u32 len, struct share *sh)
{
	return eligible(p, len, sh) &&
		p->health.loss_ewma < c->prm->suspect_loss;
}

/*
 * Runs: a caller that sends consecutive packets of one path as one unit (a
 * GSO burst through the stack) gains only if consecutive packets take the
 * same path, and a pick per packet spreads them over all paths (bursts of
 * 1.1 packets on average, docs/experiments/s48-F-bursts.md). So a picked
 * path keeps the next packets, up to the run length, while it stays
 * eligible and healthy: a full window, a SUSPECT loss rate or a re-key
 * (the path leaves ACTIVE) ends the run at once. Every run starts with the
 * power-of-two choice, so load and loss still steer, in steps of a run.
 */
static u32 run_len(const struct mroce_conn *c)
{
	u32 n = MROCE_READ_ONCE(c->prm->path_run);

	return n < c->burst ? n : c->burst;
}

int mroce_pick_path_w(struct mroce_conn *c, u32 len, int pref, u32 cwnd)
{
	struct share sh = { .c = c, .cwnd = cwnd };
	u32 run;
	int idx;

	if (!c->n_paths)
		return -1;
	/* A retransmission's own path neither joins nor ends a run. */
	if (pref >= 0 && pref < c->n_paths && keep(c, &c->paths[pref], len, &sh))
		return pref;
	if (c->run_left && c->run_path < c->n_paths &&
	    keep(c, &c->paths[c->run_path], len, &sh)) {
		c->run_left--;
		return c->run_path;
	}
	idx = pick(c, len, &sh);
	run = run_len(c);
	c->run_left = 0;
	if (idx >= 0 && run > 1) {
		c->run_path = (u8)idx;
		c->run_left = (u8)(run - 1);
	}
	return idx;
}
