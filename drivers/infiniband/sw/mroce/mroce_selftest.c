// SPDX-License-Identifier: GPL-2.0
/*
 * In-module self-test of the protocol core.
 *
 * The core is plain C that the user-space unit tests check against
 * table-driven vectors (core/vectors/). The module compiles the same files
 * with another compiler configuration, another environment header and the
 * kernel's byte-order helpers; this runs the same tables inside the module,
 * so a core that the kernel build got wrong is caught before it talks to a
 * peer:
 *
 *   modprobe mroce selftest=1          run at load; the load fails if any
 *                                      vector fails
 *   echo 1 > /sys/module/mroce/parameters/selftest
 *                                      run again (the write fails with EIO)
 *   cat /sys/module/mroce/parameters/selftest
 *                                      the last result
 *
 * Every failing vector is logged with what was expected; a pass logs one
 * line with the counts. The core is pure, so nothing here needs a device.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "vectors/wire_vectors.h"
#include "vectors/prx_vectors.h"
#include "vectors/place_vectors.h"

enum { ST_WIRE, ST_PRX, ST_PLACE, ST_NR };

static const char *const st_table[ST_NR] = { "wire", "prx", "place" };

/* Last result; reads and writes of the parameter are serialised by the kernel. */
static struct {
	bool ran;
	u32 run[ST_NR];
	u32 failed[ST_NR];
} st_last;

/* Too big for the stack. */
struct st_scratch {
	struct mroce_pkt pkt;
	struct mroce_ack_block blocks[MROCE_ACK_MAX_BLOCKS];
	u8 out[MROCE_WIRE_VEC_MAX_LEN];
	struct mroce_prx prx;
	struct mroce_piece pieces[MROCE_PLACE_VEC_MAX_PIECES];
};

/* Decode as specified, then re-encode to exactly the same bytes. */
static bool st_wire(const struct mroce_wire_vec *v, struct st_scratch *s)
{
	struct mroce_pkt *pkt = &s->pkt;
	const struct mroce_wire_vec_field *f;
	enum mroce_wire_err err;
	u32 i, n;

	err = mroce_decode(v->bytes, v->len, pkt);
	if (err != v->err) {
		pr_err("self-test: wire %s: decoder says %s, want %s\n", v->name,
		       (u32)err < MROCE_WIRE_NR_ERR ? mroce_wire_err_name[err] : "?",
		       mroce_wire_err_name[v->err]);
		return false;
	}
	if (err != MROCE_WIRE_OK)
		return true;
	for (f = v->f; f->id != MROCE_VF_END; f++) {
		u64 got = mroce_wire_vec_get(pkt, f->id);

		if (got != f->val) {
			pr_err("self-test: wire %s: field %u is %#llx, want %#llx\n",
			       v->name, f->id, got, f->val);
			return false;
		}
	}
	if (pkt->c.opcode == MROCE_OP_ACK && pkt->u.ack.n_blocks) {
		for (i = 0; i < pkt->u.ack.n_blocks; i++)
			mroce_ack_block_get(pkt, i, &s->blocks[i]);
		pkt->u.ack.blocks = s->blocks;
		pkt->u.ack.raw_blocks = NULL;
	}
	n = mroce_encode(pkt, s->out, sizeof(s->out));
	if (!n || n + pkt->payload_len != v->len || memcmp(s->out, v->bytes, n)) {
		pr_err("self-test: wire %s: re-encoding gives other bytes (%u + %u of %u)\n",
		       v->name, n, pkt->payload_len, v->len);
		return false;
	}
	return true;
}

/* A path's SACK window through a sequence of arrivals. */
static bool st_prx(const struct mroce_prx_vec *v, struct st_scratch *s)
{
	struct mroce_prx *r = &s->prx;
	u32 i;

	mroce_prx_init(r);
	for (i = 0; i < v->n_steps; i++) {
		const struct mroce_prx_step *st = &v->s[i];
		int verdict = mroce_prx_check(r, st->gen, st->psn,
					      st->floor_delta);

		if (verdict == MROCE_PRX_NEW && st->accept)
			mroce_prx_accept(r, st->psn, 0, false, 0);
		if (verdict != st->verdict || r->cum != st->cum ||
		    r->sack[0] != st->sack0) {
			pr_err("self-test: prx %s step %u: verdict %d cum %#x sack %#llx, want %u %#x %#llx\n",
			       v->name, i, verdict, r->cum, r->sack[0],
			       st->verdict, st->cum, st->sack0);
			return false;
		}
	}
	return true;
}

/* A message offset mapped onto a scatter-gather list. */
static bool st_place(const struct mroce_place_vec *v, struct st_scratch *s)
{
	enum mroce_place_err err;
	u32 k, n = 0;

	err = mroce_sgl_map(v->sgl, v->n_sge, v->msg_off, v->len, s->pieces,
			    v->max_out, &n);
	if (err != v->err || (err == MROCE_PLACE_OK && n != v->n_pieces)) {
		pr_err("self-test: place %s: error %d with %u pieces, want %u with %u\n",
		       v->name, err, n, v->err, v->n_pieces);
		return false;
	}
	for (k = 0; err == MROCE_PLACE_OK && k < n; k++) {
		const struct mroce_piece *got = &s->pieces[k];
		const struct mroce_piece *want = &v->pieces[k];

		if (got->sge != want->sge || got->sge_offset != want->sge_offset ||
		    got->addr != want->addr || got->len != want->len) {
			pr_err("self-test: place %s: piece %u differs\n",
			       v->name, k);
			return false;
		}
	}
	return true;
}

/* Runs every table; returns the number of failed vectors, or -ENOMEM. */
static int mroce_selftest_run(void)
{
	struct st_scratch *s;
	u32 i, failed = 0;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	memset(&st_last, 0, sizeof(st_last));
	for (i = 0; i < MROCE_WIRE_NR_VECTORS; i++)
		st_last.failed[ST_WIRE] += !st_wire(&mroce_wire_vectors[i], s);
	st_last.run[ST_WIRE] = MROCE_WIRE_NR_VECTORS;
	for (i = 0; i < MROCE_PRX_NR_VECTORS; i++)
		st_last.failed[ST_PRX] += !st_prx(&mroce_prx_vectors[i], s);
	st_last.run[ST_PRX] = MROCE_PRX_NR_VECTORS;
	for (i = 0; i < MROCE_PLACE_NR_VECTORS; i++)
		st_last.failed[ST_PLACE] += !st_place(&mroce_place_vectors[i], s);
	st_last.run[ST_PLACE] = MROCE_PLACE_NR_VECTORS;
	st_last.ran = true;
	kfree(s);

	for (i = 0; i < ST_NR; i++)
		failed += st_last.failed[i];
	if (failed)
		pr_err("self-test: FAILED: %u of %u wire, %u of %u prx, %u of %u place vectors\n",
		       st_last.failed[ST_WIRE], st_last.run[ST_WIRE],
		       st_last.failed[ST_PRX], st_last.run[ST_PRX],
		       st_last.failed[ST_PLACE], st_last.run[ST_PLACE]);
	else
		pr_info("self-test: passed: %u wire, %u prx, %u place vectors (wire v%u)\n",
			st_last.run[ST_WIRE], st_last.run[ST_PRX],
			st_last.run[ST_PLACE], MROCE_WIRE_VERSION);
	return failed;
}

static int mroce_selftest_set(const char *val, const struct kernel_param *kp)
{
	bool run;
	int ret = kstrtobool(val, &run);

	if (ret)
		return ret;
	if (!run)
		return 0;
	/* At load time this fails the load: a broken core must not talk. */
	ret = mroce_selftest_run();
	return ret < 0 ? ret : ret ? -EIO : 0;
}

/* "passed 120/120 (wire 95/95, ...)" or "FAILED 118/120 (...)": passed/run. */
static int mroce_selftest_get(char *buf, const struct kernel_param *kp)
{
	u32 i, run = 0, failed = 0, ok[ST_NR];

	if (!st_last.ran)
		return sysfs_emit(buf, "not run\n");
	for (i = 0; i < ST_NR; i++) {
		run += st_last.run[i];
		failed += st_last.failed[i];
		ok[i] = st_last.run[i] - st_last.failed[i];
	}
	return sysfs_emit(buf, "%s %u/%u (%s %u/%u, %s %u/%u, %s %u/%u)\n",
			  failed ? "FAILED" : "passed", run - failed, run,
			  st_table[ST_WIRE], ok[ST_WIRE], st_last.run[ST_WIRE],
			  st_table[ST_PRX], ok[ST_PRX], st_last.run[ST_PRX],
			  st_table[ST_PLACE], ok[ST_PLACE], st_last.run[ST_PLACE]);
}

static const struct kernel_param_ops mroce_selftest_ops = {
	.set = mroce_selftest_set,
	.get = mroce_selftest_get,
};
module_param_cb(selftest, &mroce_selftest_ops, NULL, 0644);
MODULE_PARM_DESC(selftest,
		 "1: run the protocol core's test vectors (at load: fail the load if any fails); read: last result");
