// SPDX-License-Identifier: GPL-2.0
/*
 * Default tunables. The values suit a software device on a LAN or veth (RTTs
 * of tens of microseconds to milliseconds, timer granularity of tens of
 * microseconds); the simulator overrides the timers for fabric RTTs.
 */
#include "mroce_params.h"
#include "mroce_wire.h"

#define US	1000u
#define MS	1000000u

void mroce_params_default(struct mroce_params *p)
{
	memset(p, 0, sizeof(*p));
	p->n_paths = 8;
	p->min_active = 0;
	p->dupthresh = 1;
	/*
	 * Runs only where the caller batches (a run lets a burst leave as one
	 * unit; without one it only makes the spraying coarser), and short:
	 * in the simulator's fabric runs of 8 met every target, runs of 32
	 * missed five (ECMP collisions, failover; docs/transport.md).
	 */
	p->path_run = 8;

	p->min_rto = 1 * MS;
	p->max_rto = 1000 * MS;
	p->init_rto = 10 * MS;
	p->min_pto = 200 * US;
	p->ack_delay = 50 * US;
	p->oversleep = 1 * MS;
	p->rto_probe = 1;
	p->ack_every = 8;
	p->silent_rtts = 4;
	/*
	 * Off until the allowance adapts to false alarms (late blocks acking
	 * overdue packets): in the VM, packets of different paths overtake
	 * each other by more than a quarter srtt and it resent 4x the data.
	 */
	p->reo_wnd = 0;
	p->retry_limit = 7;

	p->init_cwnd = 256 * 1024;
	p->min_cwnd = 8 * 1024;
	p->max_cwnd = 16 * 1024 * 1024;
	p->init_pwnd = 64 * 1024;
	p->min_pwnd = 4 * 1024;
	p->max_pwnd = 2 * 1024 * 1024;
	p->ecn_gain_shift = 4;
	p->ecn_loss_alpha = MROCE_Q10 / 10;
	p->heavy_loss = MROCE_Q10 / 4;
	p->hint_slack = MROCE_Q10 * 11 / 10;
	p->pace_gain = MROCE_Q10 * 5 / 4;
	p->pace_horizon = 0;
	p->min_rate = 10;
	p->hint_srtt = 0;
	/*
	 * Delay-based decrease, off by default: a loaded VM's RTT swings by
	 * 10-100 ms without any queue, which no delay target can tell apart.
	 */
	p->dcc_target = 0;
	p->dcc_beta = MROCE_Q10 * 4 / 5;
	p->dcc_max_mdf = MROCE_Q10 / 2;
	p->dcc_floor = 64 * 1024;

	/*
	 * What a software device can receive is not its link speed (many
	 * virtual links report none): a nominal 10 Gbit/s. The drain cap is
	 * off: without hint_srtt it starves a window-bound sender (§6.4).
	 */
	p->rx_mbps = 10000;
	p->hint_period = 100 * US;
	p->hint_drain = 0;

	p->suspect_loss = MROCE_Q10 / 4;
	p->rekey_score = MROCE_Q10 / 2;
	p->rekey_rel = 2 * MROCE_Q10;
	p->rekey_rounds = 3;
	p->probe_fails = 3;
	p->holdoff_min = 1 * MS;
	p->holdoff_max = 64 * MS;

	p->w_rtt = MROCE_Q10;
	p->w_ecn = 2 * MROCE_Q10;
	p->w_loss = 8 * MROCE_Q10;

	p->hs_timeout = 10 * MS;
	p->hs_retries = 8;
}

bool mroce_params_valid(const struct mroce_params *p)
{
	if (p->n_paths < 1 || p->n_paths > MROCE_MAX_PATHS)
		return false;
	if (p->min_active > p->n_paths || p->dupthresh < 1 ||
	    p->dupthresh > 64)
		return false;
	if (!p->min_rto || p->min_rto > p->max_rto || !p->init_rto ||
	    !p->min_pto || !p->ack_every || p->silent_rtts > 64 ||
	    p->reo_wnd > 4 * MROCE_Q10)
		return false;
	if (!p->min_cwnd || p->min_cwnd > p->init_cwnd ||
	    p->init_cwnd > p->max_cwnd)
		return false;
	if (!p->min_pwnd || p->min_pwnd > p->init_pwnd ||
	    p->init_pwnd > p->max_pwnd)
		return false;
	if (p->ecn_gain_shift < 1 || p->ecn_gain_shift > 10)
		return false;
	if (p->hint_slack < MROCE_Q10 || p->pace_gain < MROCE_Q10 ||
	    !p->min_rate || p->hint_srtt > 4 * MROCE_Q10)
		return false;
	if (p->dcc_max_mdf > MROCE_Q10)
		return false;
	/* A pass per period and device: 10 us is already 100 k/s. */
	if (p->hint_period < 10 * US || p->hint_period > 10 * MS ||
	    p->hint_drain > 1)
		return false;
	if (!p->holdoff_min || p->holdoff_min > p->holdoff_max ||
	    !p->probe_fails || !p->rekey_rounds || p->rekey_rel < MROCE_Q10)
		return false;
	return p->hs_timeout && p->hs_retries;
}
