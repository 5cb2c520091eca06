// SPDX-License-Identifier: GPL-2.0
/*
 * jcsim: the insnprof plugin's jump-cache simulation (insnprof.c, jc=1)
 * off line, on the lookups a jctrace= run recorded, and its test harness
 * (insnprof_test.py). The very code of the plugin: insnprof.c included,
 * the QEMU calls stubbed.
 *
 *   jcsim hash PC...          the slot of each pc (hex in, decimal out)
 *   jcsim sim [-F] TRACE [MOVE]...
 *                             re-simulate TRACE (a COL-I.jtrace): "lookups
 *                             misses"; MOVE LO:HI:PAGES first moves every pc
 *                             in [LO, HI) (hex) by PAGES (decimal, signed)
 *                             4 KiB pages, as another load address would
 *   jcsim sweep [-F] TRACE LO:HI FROM TO [MOVE]...
 *                             for each PAGES in [FROM, TO): "PAGES lookups
 *                             misses misses_in_range misses_by_range" with
 *                             [LO, HI) moved by PAGES (and the MOVEs)
 *   -F: leave the recorded cache flushes out (as if no full TLB flush ran)
 *   jcsim machine DIR         canned blocks (real x86 bytes, decoded as the
 *                             plugin does) through the plugin's exec callback
 *                             on two vCPUs; writes DIR/jc-1.snap, DIR/jc-1.jtrace
 *
 * A move by whole pages keeps every block's offset in its page, so which
 * entries are lookups does not change (a module is loaded page aligned);
 * only the slots do.
 */
#include "insnprof.c"
#include "harness_stubs.h"

#define MAX_MOVES 8
struct move {
	uint64_t lo, hi;
	int64_t pages;
};

static int parse_move(const char *arg, struct move *m, int with_pages)
{
	char *e;

	m->lo = strtoull(arg, &e, 16);
	if (*e != ':')
		return -1;
	m->hi = strtoull(e + 1, &e, 16);
	m->pages = 0;
	if (with_pages) {
		if (*e != ':')
			return -1;
		m->pages = strtoll(e + 1, &e, 10);
	}
	return *e || m->hi <= m->lo ? -1 : 0;
}

static uint64_t moved(uint64_t pc, const struct move *mv, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (pc >= mv[i].lo && pc < mv[i].hi)
			return pc + (uint64_t)(mv[i].pages * 4096);
	return pc;
}

static int no_flush;	/* -F */

static struct jrec *read_trace(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	struct jrec *r;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "jcsim: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	*n = (size_t)size / sizeof(*r);
	r = jalloc(*n * sizeof(*r) + 1);
	if (fread(r, sizeof(*r), *n, f) != *n) {
		fprintf(stderr, "jcsim: %s: short read\n", path);
		exit(1);
	}
	fclose(f);
	return r;
}

/*
 * Simulate the trace with the moves; *in, *by_in: the misses of a pc in
 * [lo, hi) (after the moves) / of a pc whose entry one in [lo, hi) evicted.
 */
static void simulate(const struct jrec *r, size_t n, const struct move *mv, int nmv,
		     uint64_t lo, uint64_t hi, uint64_t *lookups, uint64_t *misses,
		     uint64_t *in, uint64_t *by_in)
{
	static struct jvcpu vc[256];
	size_t i;

	memset(vc, 0, sizeof(vc));
	*lookups = *misses = *in = *by_in = 0;
	for (i = 0; i < n; i++) {
		uint64_t pc, by = 0;

		if (r[i].kind == JK_FLUSH) {
			if (!no_flush)
				jc_clear(&vc[r[i].vcpu]);
			continue;
		}
		pc = moved(r[i].pc, mv, nmv);
		(*lookups)++;
		if (!jc_access(&vc[r[i].vcpu], pc, r[i].tag, &by))
			continue;
		(*misses)++;
		*in += pc >= lo && pc < hi;
		*by_in += by >= lo && by < hi;
	}
}

/* A canned block: start, instructions, and its last instruction's bytes at last_pc. */
static const struct jtb *blk(uint64_t pc, uint32_t n, uint64_t last_pc, const char *hex)
{
	uint8_t b[16];
	size_t len = strlen(hex) / 2, i;
	struct special sp = { 0 };
	struct jinfo ji = { 0 };
	uint8_t end = END_OTHER;
	struct jtb jt = { 0 };

	for (i = 0; i < len; i++)
		sscanf(hex + 2 * i, "%2hhx", &b[i]);
	decode(b, len, last_pc, pc & PAGE_MASK_4K, &sp, &end, &ji);
	jtb_make(&jt, pc, n, end, &ji);
	jt.next = last_pc + len;
	jt.two = ((last_pc + len - 1) & PAGE_MASK_4K) != (pc & PAGE_MASK_4K);
	return jtb_get(&jt);
}

static void run(unsigned int vcpu, const struct jtb *t)
{
	vcpu_jc_exec(vcpu, (void *)t);
}

static int machine(const char *d)
{
	const uint64_t k = 0xffffffff81000000ULL;
	const struct jtb *a, *b, *c, *dd, *e, *f, *g, *h, *x, *y, *u, *w, *cr3, *sp;

	dir = (char *)d;
	jc_on = 1;
	jtrace_cap = 1000;
	jtrace = jalloc(jtrace_cap * sizeof(*jtrace));
	/* call rel32 to k+0x100 (same page): chained */
	a = blk(k, 3, k + 0x8, "e8f3000000");
	b = blk(k + 0x100, 2, k + 0x104, "c3");			/* ret */
	/* the return site: jmp rel32 to k+0x201000 (another page) */
	c = blk(k + 0xd, 1, k + 0xd, "e9eb0f2000");
	dd = blk(k + 0x201000, 1, k + 0x201000, "fb");		/* sti */
	e = blk(k + 0x201001, 1, k + 0x201001, "90");		/* one nop, inhibited */
	/* je rel8 +0x10: both edges on the page: chained */
	f = blk(k + 0x201002, 2, k + 0x201004, "7410");
	/* call *%rax (indirect) */
	g = blk(k + 0x201016, 1, k + 0x201016, "ffd0");
	/* the slot of b (4): 65 pages on, the same in-page offset */
	h = blk(k + 0x41100, 1, k + 0x41100, "c3");
	/* a block whose last instruction ends on the next page */
	x = blk(k + 0x202ff8, 2, k + 0x202ffc, "e801000000");
	/* jmp rel32 to x, on its page: but x spans two pages */
	y = blk(k + 0x202f00, 1, k + 0x202f00, "e9f3000000");
	u = blk(0x401000, 3, 0x401008, "c3");			/* user: ret */
	w = blk(k + 0x201006, 1, k + 0x201006, "0f01cb");	/* stac */
	cr3 = blk(k + 0x300000, 1, k + 0x300000, "0f22d8");	/* mov %rax, %cr3 */
	sp = blk(k + 0x201008, 1, k + 0x201008, "f390");	/* pause */

	run(0, a);	/* first */
	run(0, b);	/* chained */
	run(0, c);	/* ret: miss */
	run(0, dd);	/* xpage: miss */
	run(0, e);	/* after sti: eob, tagged: miss */
	run(0, f);	/* after the inhibited block: eob: miss */
	run(0, e);	/* neither of f's edges: async: miss (e without the tag: another block) */
	run(0, f);	/* e is not inhibited now: falls through to f: chained */
	run(0, g);	/* f's je taken to 0x201016: chained */
	run(0, h);	/* indirect: miss (slot 4 empty: b came chained) */
	run(0, b);	/* ret: miss, b evicts h */
	run(0, c);	/* ret: hit */
	run(0, x);	/* after c's jmp to another page (not to x: still that kind): miss */
	run(0, x);	/* x's call goes to another page: xpage: hit */
	run(1, u);	/* vCPU 1: first; its own cache: miss */
	run(1, u);	/* user ret: hit */
	run(1, a);	/* user ret to kernel (as after a syscall): ret: miss */
	run(0, w);	/* after x (xpage end): xpage: miss */
	run(0, sp);	/* after stac: eob: miss */
	run(0, cr3);	/* after pause: eob: miss */
	run(0, c);	/* cr3 flushed the cache: eob: miss */
	run(0, dd);	/* xpage: miss (flushed) */
	run(0, a);	/* after sti: eob: miss (flushed); a runs inhibited */
	run(0, b);	/* after an inhibited block: eob: miss */
	run(0, y);	/* ret: miss */
	run(0, x);	/* chained but for x's two pages: twopage: miss (flushed) */
	return snapshot("jc-1") ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct move mv[MAX_MOVES], range;
	uint64_t l, m, in, by;
	int i, nmv = 0;
	size_t n;
	struct jrec *r;

	if (argc >= 2 && !strcmp(argv[1], "hash")) {
		for (i = 2; i < argc; i++)
			printf("%u\n", jc_hash(strtoull(argv[i], NULL, 16)));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "machine"))
		return machine(argv[2]);
	if (argc >= 3 && !strcmp(argv[2], "-F")) {
		no_flush = 1;
		argv[2] = argv[1];
		argv++;
		argc--;
	}
	if (argc >= 3 && !strcmp(argv[1], "sim")) {
		for (i = 3; i < argc && nmv < MAX_MOVES; i++)
			if (parse_move(argv[i], &mv[nmv++], 1))
				goto usage;
		r = read_trace(argv[2], &n);
		simulate(r, n, mv, nmv, 0, 0, &l, &m, &in, &by);
		printf("%" PRIu64 " %" PRIu64 "\n", l, m);
		return 0;
	}
	if (argc >= 6 && !strcmp(argv[1], "sweep")) {
		long from = strtol(argv[4], NULL, 10), to = strtol(argv[5], NULL, 10), p;

		if (parse_move(argv[3], &range, 0))
			goto usage;
		nmv = 1;
		for (i = 6; i < argc && nmv < MAX_MOVES; i++)
			if (parse_move(argv[i], &mv[nmv++], 1))
				goto usage;
		r = read_trace(argv[2], &n);
		for (p = from; p < to; p++) {
			mv[0] = range;
			mv[0].pages = p;
			simulate(r, n, mv, nmv, range.lo + (uint64_t)(p * 4096),
				 range.hi + (uint64_t)(p * 4096), &l, &m, &in, &by);
			printf("%ld %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p, l, m, in, by);
		}
		return 0;
	}
usage:
	fprintf(stderr, "usage: jcsim hash PC... | sim [-F] TRACE [LO:HI:PAGES]... | "
		"sweep [-F] TRACE LO:HI FROM TO [LO:HI:PAGES]... | machine DIR\n");
	return 2;
}
