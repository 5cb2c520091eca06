// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof_test.py's harness of the plugin's phase machine: insnprof.c
 * itself, with stubs for the QEMU calls it never makes here (they
 * abort). Runs canned block sequences on two vCPUs through
 * vcpu_tb_exec() and writes the snapshots mroce-1 and rxe-1 into DIR,
 * which holds "phases" and COL.kallsyms.
 * Usage: phases_harness DIR
 */
#include "insnprof.c"

#include "harness_stubs.h"

static struct ent *mk(uint64_t vaddr, uint32_t n, uint8_t end, int sysret)
{
	struct ent *e = lookup(vaddr, n);

	e->end = end;
	e->sp.sysret = (uint8_t)sysret;
	e->sp.tsc = (uint8_t)sysret;	/* something to sum */
	e->mark = mark_of(vaddr);
	return e;
}

/* one run of block e on vCPU vcpu, with mem memory accesses */
static void run(unsigned int vcpu, struct ent *e, unsigned int mem)
{
	e->count++;
	e->loads += mem;
	vcpu_tb_exec(vcpu, e);
}

int main(int argc, char **argv)
{
	static char path[4096];
	struct ent *post, *copy, *cqe, *plain, *ret, *iret, *rpost, *rcopy, *resp, *rcqe;

	if (argc != 2)
		return 2;
	dir = argv[1];
	kallsyms_dir = argv[1];
	snprintf(path, sizeof(path), "%s/phases", dir);
	phases_file = path;
	if (read_specs(phases_file))
		return 1;
	/* translated before the column's markers: marked when they come */
	post = mk(0xffffffffc0101000ULL, 7, END_RET, 0);
	phases_column("mroce");
	copy = mk(0xffffffffc0102000ULL, 5, END_CHAIN, 0);
	cqe = mk(0xffffffffc0103000ULL, 4, END_XPAGE, 0);
	plain = mk(0xffffffff81001000ULL, 3, END_CHAIN, 0);
	ret = mk(0xffffffff81e00100ULL, 2, END_OTHER, 1);
	iret = mk(0xffffffff81e01150ULL, 6, END_RET, 0);

	/* vCPU 0: a complete half */
	run(0, plain, 2);
	run(0, post, 0);
	run(0, plain, 2);
	run(0, copy, 0);
	run(0, plain, 2);
	run(0, cqe, 0);
	run(0, ret, 0);
	/* vCPU 1: no copy, ends at the end marker; a copy outside a half */
	run(1, post, 0);
	run(1, cqe, 0);
	run(1, iret, 0);
	run(1, copy, 0);
	/* vCPU 0: cut by the next post, then a return from phase A */
	run(0, post, 0);
	run(0, copy, 0);
	run(0, post, 0);
	run(0, ret, 0);
	run(0, plain, 2);
	if (snapshot("mroce-1"))
		return 1;
	/* left over at the column's change: dropped, vCPU 1 reset */
	run(0, post, 0);
	run(0, ret, 0);
	run(1, post, 0);

	phases_column("rxe");
	rpost = mk(0xffffffffc0201000ULL, 9, END_RET, 0);
	rcopy = mk(0xffffffffc0202000ULL, 5, END_CHAIN, 0);
	resp = mk(0xffffffffc0203000ULL, 8, END_CHAIN, 0);
	rcqe = mk(0xffffffffc0204000ULL, 4, END_CHAIN, 0);
	run(1, ret, 0);		/* vCPU 1 starts outside: no half */
	run(0, rpost, 0);
	run(0, rcopy, 0);	/* before the gate: still A */
	run(0, resp, 0);
	run(0, rcopy, 0);
	run(0, rcqe, 0);
	run(0, ret, 0);
	run(1, post, 0);	/* mroce's post_send: no marker now */
	return snapshot("rxe-1") ? 1 : 0;
}
