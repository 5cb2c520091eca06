// SPDX-License-Identifier: GPL-2.0
/*
 * The transport's tunables as module parameters: one table, one set/get
 * pair. Each knob is one field of mroce_prm, the parameter set every
 * connection reads live, so a write (modprobe mroce NAME=V, or
 * /sys/module/mroce/parameters/NAME at run time) takes effect at the
 * connections' next decision. Reading gives the value in effect, in the
 * knob's unit; writing -1 restores the knob's default. A value that does not
 * fit its field or breaks an invariant of the core (mroce_params_valid())
 * is refused with -EINVAL and the reason in the kernel log; at load that
 * fails the load.
 *
 * Writes are serialized by the module's kernel_param_lock (taken by sysfs
 * and by mroce_knobs_init()); parameters given at load are set before the
 * module's init runs, so the first write fills mroce_prm with the defaults.
 * A write at run time races with the connections reading mroce_prm (under
 * their peer's lock, not this one): it is checked on a copy and then
 * published field by field with WRITE_ONCE(), and the readers load each
 * tunable field once per decision with MROCE_READ_ONCE() (mroce_env.h), so
 * a decision sees either value of a field, never a torn or changing one.
 * The fields that are not tunables are written only before the first
 * device exists.
 */
#include <linux/moduleparam.h>

#include "mroce_knobs.h"
#include "mroce_peer.h"

struct mroce_knob {
	int dflt;	/* the module's own default in knob units; -1: the core's */
	u32 unit;	/* mroce_params units (ns, bytes, Q10) per knob unit */
	/* Store @v; false if it does not fit the field. */
	bool (*put)(struct mroce_params *p, u64 v);
	u64 (*get)(const struct mroce_params *p);
	/* Copy the field from @p to the live mroce_prm. */
	void (*publish)(const struct mroce_params *p);
};

#define MROCE_KNOB_FIELD(field)						\
static bool mroce_knob_put_##field(struct mroce_params *p, u64 v)	\
{									\
	p->field = v;							\
	return p->field == v;						\
}									\
static u64 mroce_knob_get_##field(const struct mroce_params *p)	\
{									\
	return p->field;						\
}									\
static void mroce_knob_publish_##field(const struct mroce_params *p)	\
{									\
	WRITE_ONCE(mroce_prm.field, p->field);				\
}

#define MROCE_KNOB(name, field, d, u, desc)				\
static struct mroce_knob mroce_knob_##name = {				\
	.dflt = d, .unit = u,						\
	.put = mroce_knob_put_##field, .get = mroce_knob_get_##field,	\
	.publish = mroce_knob_publish_##field,				\
};									\
module_param_cb(name, &mroce_knob_ops, &mroce_knob_##name, 0644);	\
MODULE_PARM_DESC(name, desc)

static bool mroce_prm_filled;

static void mroce_knobs_default(struct mroce_params *p);

/*
 * Before its first RTT sample a connection times out at init_rto: never
 * sooner than min_rto.
 */
static void mroce_knobs_derive(struct mroce_params *p)
{
	struct mroce_params d;

	mroce_params_default(&d);
	p->init_rto = max(d.init_rto, p->min_rto);
}

static void mroce_knobs_fill(void)
{
	if (!mroce_prm_filled)
		mroce_knobs_default(&mroce_prm);
	mroce_prm_filled = true;
}

static int mroce_knob_refuse(const struct kernel_param *kp, const char *val,
			     const char *why)
{
	/* A sysfs write ends in a newline: keep the message on one line. */
	pr_warn("%s=%.*s refused: %s\n", kp->name, (int)strcspn(val, "\n"),
		val, why);
	return -EINVAL;
}

static int mroce_knob_set(const char *val, const struct kernel_param *kp)
{
	const struct mroce_knob *k = kp->arg;
	struct mroce_params t;
	u64 v;
	int n;

	if (kstrtoint(val, 0, &n) || n < -1)
		return mroce_knob_refuse(kp, val, "not an integer >= -1");
	mroce_knobs_fill();
	if (n < 0) {
		mroce_knobs_default(&t);
		v = k->get(&t);
	} else {
		v = (u64)n * k->unit;
	}
	t = mroce_prm;
	if (!k->put(&t, v))
		return mroce_knob_refuse(kp, val, "out of range");
	mroce_knobs_derive(&t);
	if (!mroce_params_valid(&t))
		return mroce_knob_refuse(kp, val,
					 "breaks a transport invariant (docs/protocol.md, Defaults)");
	k->publish(&t);
	WRITE_ONCE(mroce_prm.init_rto, t.init_rto);
	return 0;
}

static int mroce_knob_show(char *buf, const struct kernel_param *kp)
{
	const struct mroce_knob *k = kp->arg;

	mroce_knobs_fill();
	return sysfs_emit(buf, "%llu\n", div_u64(k->get(&mroce_prm), k->unit));
}

static const struct kernel_param_ops mroce_knob_ops = {
	.set = mroce_knob_set,
	.get = mroce_knob_show,
};

MROCE_KNOB_FIELD(min_rto)
MROCE_KNOB_FIELD(pace_horizon)
MROCE_KNOB_FIELD(rto_probe)
MROCE_KNOB_FIELD(rekey_rel)
MROCE_KNOB_FIELD(hint_srtt)
MROCE_KNOB_FIELD(dcc_target)
MROCE_KNOB_FIELD(dcc_floor)
MROCE_KNOB_FIELD(rx_mbps)
MROCE_KNOB_FIELD(hint_period)
MROCE_KNOB_FIELD(hint_drain)
MROCE_KNOB_FIELD(path_run)

/*
 * The core's timer defaults suit a dedicated CPU; a host stack shares its
 * CPUs (and a VM its vCPUs), so an ACK can sit in a runqueue for
 * milliseconds. Tail losses are found by the probe timeout (min_pto) long
 * before the RTO, so a higher RTO floor costs little and avoids spurious
 * retransmissions and path re-keys.
 */
MROCE_KNOB(min_rto_us, min_rto, 10000, NSEC_PER_USEC,
	   "smallest retransmission timeout, us (default 10000)");
/*
 * Kernel timers fire tens of microseconds late (milliseconds under
 * emulation): a packet may leave up to this much ahead of its pacing slot,
 * so the pacer bounds bursts instead of stalling on timer latency.
 */
MROCE_KNOB(pace_horizon_us, pace_horizon, 1000, NSEC_PER_USEC,
	   "pacing burst allowance, us (default 1000)");
MROCE_KNOB(rto_probe, rto_probe, -1, 1,
	   "probe before an RTO, 0 = off (default 1)");
MROCE_KNOB(rekey_rel, rekey_rel, -1, 1,
	   "re-key a path only at this multiple of its siblings' score, Q10 (default 2048)");
/*
 * Off by default: in the VM (docs/protocol.md §6.5) 2048 raised Send at 1 %
 * loss but lowered Read at 1 % loss.
 */
MROCE_KNOB(hint_srtt, hint_srtt, -1, 1,
	   "share of srtt less its standing queue the window covers at 1.25 x the delivered rate, Q10, 0 = off (default 0)");
MROCE_KNOB(dcc_target, dcc_target, -1, 1,
	   "queueing delay that cuts cwnd, ns, 0 = off (default 0)");
MROCE_KNOB(dcc_floor, dcc_floor, -1, 1,
	   "the delay signal cuts cwnd no lower, bytes (default 65536)");
/*
 * The receiver's rate hints (mroce_ack.c). What the device can receive is a
 * parameter, not the link speed: that needs the RTNL, which receive cannot
 * take, and many virtual links report none.
 */
MROCE_KNOB(rx_mbps, rx_mbps, -1, 1,
	   "receive capacity the rate hints share, Mbit/s (default 10000, 0: no hints)");
/*
 * The hints follow demand within a few periods; the incast hold (2 base
 * RTTs) needs periods of about an RTT or less, and a shorter one only costs
 * a pass over the device's peers more often. Arrivals clock the passes (the
 * end of a receive burst a period after the last): no timer per period.
 */
MROCE_KNOB(hint_period_us, hint_period, -1, NSEC_PER_USEC,
	   "rate hint period while packets arrive, us (default 100, 10-10000)");
/*
 * Off by default: it needs the sender's srtt window (hint_srtt) or it
 * starves a window-bound sender, and with it the VM's Write and Read rows
 * lost more at 1 % loss than Send gained (docs/protocol.md §6.4).
 */
MROCE_KNOB(hint_drain, hint_drain, -1, 1,
	   "cut rate hints from the measured drain rate while a queue stands (default 0)");

/*
 * Runs form only with transmit bursts on (tx_burst >= 2, mroce_net.c) and
 * are no longer than a burst: with bursts off each packet is picked alone.
 */
MROCE_KNOB(path_run, path_run, -1, 1,
	   "most packets a connection keeps on a picked path, at most tx_burst; 0 or 1 = none (default 8)");

static const struct mroce_knob *const mroce_knobs[] = {
	&mroce_knob_min_rto_us, &mroce_knob_pace_horizon_us,
	&mroce_knob_rto_probe, &mroce_knob_rekey_rel, &mroce_knob_hint_srtt,
	&mroce_knob_dcc_target, &mroce_knob_dcc_floor, &mroce_knob_rx_mbps,
	&mroce_knob_hint_period_us, &mroce_knob_hint_drain, &mroce_knob_path_run,
};

/* The core's defaults with the module's own where it has one. */
static void mroce_knobs_default(struct mroce_params *p)
{
	const struct mroce_knob *k;
	unsigned int i;

	mroce_params_default(p);
	for (i = 0; i < ARRAY_SIZE(mroce_knobs); i++) {
		k = mroce_knobs[i];
		if (k->dflt >= 0)
			k->put(p, (u64)k->dflt * k->unit);
	}
	mroce_knobs_derive(p);
}

int mroce_knobs_init(void)
{
	bool ok;

	kernel_param_lock(THIS_MODULE);
	mroce_knobs_fill();
	ok = mroce_params_valid(&mroce_prm);
	kernel_param_unlock(THIS_MODULE);
	if (!ok) {
		pr_err("invalid transport parameters\n");
		return -EINVAL;
	}
	return 0;
}
