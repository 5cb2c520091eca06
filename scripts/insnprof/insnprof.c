// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof: a QEMU (7.2) TCG plugin that counts the guest instructions
 * executed per translation block start address, for snapshots the guest
 * asks for (docs/testing.md, "Instruction profile").
 *
 * Every translated block whose start address is a kernel address
 * (>= 0xffff800000000000) gets one counter per (start address, number of
 * instructions), which an inline add bumps each time the block runs; the
 * instructions it ran are count x n_insns. Two more inline adds per
 * instruction count the block's guest memory accesses as they happen
 * (loads, stores: each one a softmmu TLB lookup under TCG). At
 * translation the block's bytes are decoded for what TCG does at its end
 * (struct ent's end: a return, an indirect jump or call, a direct one to
 * another page: each a TB lookup through lookup_tb_ptr instead of a
 * chained jump) and for the instructions TCG runs as helpers (locked
 * atomics, wrmsr, rdtsc, port I/O, other system instructions); those are
 * static per block, so executions x them is what ran. Blocks in user
 * space all add their instruction count, executions and memory accesses
 * to three counters (user=off: not counted). The
 * inline adds are not atomic: under -accel tcg,thread=single the counts
 * are exact; with a host thread per vCPU (thread=multi) an add is lost
 * when two vCPUs bump the same counter within nanoseconds: rare for a
 * kernel block, constant for the one user-space counter, which both
 * vCPUs' busy-polling processes hammer (and whose cache line they then
 * fight over): run thread=multi with user=off.
 *
 * Snapshots: a thread polls the directory dir= (the harness's writable
 * output share) every poll_ms= (default 2) ms for files NAME.req; for
 * each it writes every kernel counter that ever ran to NAME.snap
 * ("vaddr n_insns count loads stores end atomics wrmsr tsc io sys":
 * vaddr and n_insns in hex, the rest decimal; written as NAME.snap.tmp,
 * then renamed), removes NAME.req and creates NAME.done. The guest
 * waits for NAME.done.
 *
 * Phases (phases=FILE kallsyms=DIR, session 41): each vCPU's kernel
 * blocks are attributed to the phase of a half round trip that vCPU is
 * in, delimited by markers hit on that vCPU: post (the driver's post_send
 * in the poster's write()) starts phase A; the copy into the peer's MR
 * starts C1; the completion posted starts C2; the return to user (a block
 * with sysret, or an end marker) closes the half. FILE lists the markers
 * by kind and symbol ("post mroce_post_send", "copy rxe_mr_copy
 * rxe_responder": a copy that counts only after the second symbol ran in
 * the same phase A); for each column (a request NAME COL-N with a new
 * COL) they are resolved in DIR/COL.kallsyms, the guest's copy made
 * while that driver is loaded, and every vCPU starts outside a half. A
 * callback per kernel block (only with phases=) bumps the block's count
 * in the vCPU's phase (a row's last four columns: outside, A, C1, C2) and
 * the vCPU's running half; each half that ends (returned to user, or cut
 * by the next post) is a line "h vcpu flags" + per phase (A, C1, C2)
 * "insns blocks mem16 lookups atomics tsc" in the next snapshot (mem16:
 * the block's memory accesses per run so far x 16, summed).
 *
 * Jump cache (jc=1[,jctrace=N], session 43): QEMU's per-vCPU TB jump
 * cache simulated, every block (kernel and user) with an exec callback;
 * see "jc=1" below.
 *
 * Usage: qemu-system-x86_64 -accel tcg,thread=single \
 *            -plugin file=insnprof.so,dir=/path/the/guest/writes[,phases=FILE,kallsyms=DIR][,jc=1[,jctrace=N]]
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_START 0xffff800000000000ULL
#define HASH_BITS 20
#define CHUNK 65536

/* How a block ends: what TCG does to find the next one. */
enum end_kind {
	/* no branch: an instruction that ends the block (sti, popf, wrmsr,
	 * ...), the page's end or the length limit
	 */
	END_OTHER,
	END_CHAIN,	/* direct jump, call or jcc within the block's page: chained */
	END_XJCC,	/* jcc with a target on another page (taken or not: unknown) */
	END_XPAGE,	/* direct jmp/call to another page: TB lookup */
	END_INDIRECT,	/* jmp/call through a register or memory: TB lookup */
	END_RET,	/* ret, iret: TB lookup */
};

/* Instructions TCG runs as (slow) helpers or with atomics, per block. */
struct special {
	uint8_t atomics;	/* lock prefix, xchg with memory */
	uint8_t wrmsr;
	uint8_t tsc;		/* rdtsc, rdtscp */
	uint8_t io;		/* in, out, ins, outs */
	uint8_t sys;		/* rdmsr, cpuid, invlpg, mov to cr, hlt, swapgs, syscall, sysret */
	uint8_t sysret;		/* of sys: sysret (a return to user; not in the snapshot) */
};

/* The phases of a half round trip on one vCPU (phases=). */
enum phase { PH_OUT, PH_A, PH_C1, PH_C2, N_PH };

/* Markers: the phase boundaries, by the address a block starts at. */
enum mark_kind { MK_NONE, MK_POST, MK_COPY, MK_CQE, MK_END, MK_GATE };
#define MK_KIND 0x0f
#define MK_GATED 0x10	/* a copy that counts only after the gate ran in phase A */

/* What a half accumulates per phase. */
enum half_val { HV_INSNS, HV_BLOCKS, HV_MEM16, HV_LOOKUPS, HV_ATOMICS, HV_TSC, N_HV };

/* A half's flags: what was seen, how it ended. */
#define HF_COPY 1	/* the copy marker, in phase A */
#define HF_CQE 2	/* the completion marker, in phase A or C1 */
#define HF_RET 4	/* ended by the return to user */
#define HF_CUT 8	/* ended by the next post before a return */

struct ent {
	uint64_t count;		/* executions; the inline add's target */
	uint64_t loads;		/* memory loads of its instructions (inline) */
	uint64_t stores;	/* memory stores (inline) */
	uint64_t vaddr;
	uint32_t n_insns;
	uint8_t end;		/* enum end_kind */
	uint8_t mark;		/* enum mark_kind | MK_GATED (phases=) */
	struct special sp;
	uint64_t ph[N_PH];	/* executions by the running vCPU's phase (phases=) */
	struct ent *next;	/* hash chain */
};

struct chunk {
	struct ent e[CHUNK];
	size_t used;
	struct chunk *prev;
};

static struct ent *table[1u << HASH_BITS];
static struct chunk *chunks;
static size_t n_ents;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t user_insns;	/* all user-space blocks' instructions */
static uint64_t user_tbs;	/* user-space blocks translated */
static uint64_t user_blocks;	/* user-space blocks executed */
static uint64_t user_loads, user_stores;
static uint64_t translations;	/* kernel blocks translated */

static char *dir;
static unsigned int poll_ms = 2;
static int count_user = 1;
static pthread_t poller;
static volatile int stopping;
static int poller_running;

/* phases= */
#define MAX_MARKS 32
#define MAX_VCPUS 64
struct mark_spec {
	char name[128];
	uint8_t kind;
	char gate[128];		/* empty: none */
};

struct mark {
	uint64_t vaddr;
	uint8_t mark;		/* enum mark_kind | MK_GATED */
	char name[128];
};

struct vstate {
	unsigned int gen;	/* phase_gen it was reset at */
	uint8_t phase;		/* enum phase */
	uint8_t gate;		/* the gate ran in this phase A */
	uint32_t flags;		/* HF_* so far */
	uint64_t v[N_PH - 1][N_HV];
};

struct half {
	uint32_t vcpu, flags;
	uint64_t v[N_PH - 1][N_HV];
};

static char *phases_file, *kallsyms_dir;
static struct mark_spec specs[MAX_MARKS];
static int n_specs;
static struct mark marks[MAX_MARKS];
static int n_marks;
static char cur_col[1024];
static unsigned int phase_gen;	/* bumped at a column's change (atomic) */
static struct vstate vst[MAX_VCPUS];
static struct half *halves;	/* since the last snapshot; under hlock */
static size_t n_halves, cap_halves;
static pthread_mutex_t hlock = PTHREAD_MUTEX_INITIALIZER;

static unsigned int hash(uint64_t vaddr, uint32_t n)
{
	uint64_t h = (vaddr ^ ((uint64_t)n << 47)) * 0x9e3779b97f4a7c15ULL;

	return (unsigned int)(h >> (64 - HASH_BITS));
}

/* The counter of (vaddr, n); created on first use. Under lock. */
static struct ent *lookup(uint64_t vaddr, uint32_t n)
{
	unsigned int h = hash(vaddr, n);
	struct ent *e;

	for (e = table[h]; e; e = e->next)
		if (e->vaddr == vaddr && e->n_insns == n)
			return e;
	if (!chunks || chunks->used == CHUNK) {
		struct chunk *c = calloc(1, sizeof(*c));

		if (!c) {
			fprintf(stderr, "insnprof: out of memory\n");
			abort();
		}
		c->prev = chunks;
		chunks = c;
	}
	e = &chunks->e[chunks->used++];
	e->vaddr = vaddr;
	e->n_insns = n;
	e->next = table[h];
	table[h] = e;
	n_ents++;
	return e;
}

#define PAGE_MASK_4K (~0xfffULL)

static int32_t rd32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* What the jump-cache simulation (jc=) needs of a block's last instruction. */
struct jinfo {
	uint64_t dest;		/* a direct branch's target (have_dest) */
	uint8_t have_dest;
	uint8_t fall;		/* the next instruction may follow (jcc, rep string) */
	uint8_t eob;		/* JEOB_*: it leaves the block for TCG's main loop */
	uint8_t flush;		/* JFL_*: a TLB flush (and so of the jump cache) */
};

/* How an instruction ends its block without a branch (QEMU 7.2's i386 translator) */
#define JEOB_EXIT 1	/* back to the main loop (exit_tb 0 or an exception): a lookup */
#define JEOB_INHIBIT 2	/* that, and the next block translated with interrupts inhibited */
/* TLB flushes (QEMU 7.2 clears the vCPU's jump cache on a full one) */
#define JFL_FULL 1	/* mov to cr3 or cr4 (cr4: if a paging bit changes) */
#define JFL_PAGE 2	/* invlpg: two pages' 64-slot groups cleared; not simulated */

/*
 * Decode one x86-64 instruction's legacy/REX prefixes and opcode (enough
 * for the kinds above; anything else is END_OTHER and no special). If
 * end is not NULL, the instruction is the block's last: classify how the
 * block ends (and, ji not NULL, fill it in). tb_page: the block's first
 * page (TCG chains a direct jump only to the page the block starts in).
 */
static void decode(const uint8_t *b, size_t len, uint64_t pc, uint64_t tb_page,
		   struct special *sp, uint8_t *end, struct jinfo *ji)
{
	size_t i = 0;
	int lock = 0, rep = 0, kind = END_OTHER, eob = 0, flush = 0;
	uint64_t next = pc + len, dest = 0;
	int have_dest = 0, jcc = 0;
	uint8_t op, m;

	while (i < len && (b[i] == 0xf0 || b[i] == 0xf2 || b[i] == 0xf3 || b[i] == 0x66 ||
			   b[i] == 0x67 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e ||
			   b[i] == 0x26 || b[i] == 0x64 || b[i] == 0x65)) {
		if (b[i] == 0xf0)
			lock = 1;
		if (b[i] == 0xf2 || b[i] == 0xf3)
			rep = 1;
		i++;
	}
	if (i < len && (b[i] & 0xf0) == 0x40)	/* REX */
		i++;
	if (i >= len)
		return;
	op = b[i];
	m = i + 1 < len ? b[i + 1] : 0;		/* modrm, or the 0f map's opcode */
	if (lock)
		sp->atomics++;
	if (op == 0x0f) {
		uint8_t m2 = i + 2 < len ? b[i + 2] : 0;
		uint8_t reg2 = (m2 >> 3) & 7;

		/* the 0f instructions after which QEMU 7.2 ends the block for
		 * its main loop: wrmsr, sysenter/sysexit, syscall, sysret, ud2,
		 * clts, rsm, mov to a CR or DR, clac/stac, xsetbv, wrpkru,
		 * monitor/mwait, lgdt/lidt/lmsw/invlpg, xrstor
		 */
		if (m == 0x30 || m == 0x34 || m == 0x35 || m == 0x05 || m == 0x07 || m == 0x0b ||
		    m == 0x06 || m == 0xaa || m == 0x22 || m == 0x23 ||
		    (m == 0x01 && (m2 == 0xca || m2 == 0xcb || m2 == 0xd1 || m2 == 0xef ||
				   m2 == 0xc8 || m2 == 0xc9 || (m2 >= 0xf0 && m2 < 0xf8) ||
				   (m2 < 0xc0 && (reg2 == 2 || reg2 == 3 || reg2 == 6 || reg2 == 7)))) ||
		    (m == 0xae && m2 < 0xc0 && reg2 == 5))
			eob = JEOB_EXIT;
		if (m == 0x22 && (reg2 == 3 || reg2 == 4))
			flush = JFL_FULL;
		if (m == 0x01 && m2 < 0xc0 && reg2 == 7)
			flush = JFL_PAGE;
		if (m == 0x30) {
			sp->wrmsr++;
		} else if (m == 0x31) {
			sp->tsc++;
		} else if (m == 0x01 && m2 == 0xf9) {
			sp->tsc++;
		} else if (m == 0x07) {
			sp->sys++;
			sp->sysret = 1;
		} else if (m == 0x32 || m == 0xa2 || m == 0x22 || m == 0x05 ||
			   (m == 0x01 && (m2 == 0xf8 || ((m2 & 0x38) == 0x38 && m2 < 0xc0)))) {
			sp->sys++;
		} else if (m >= 0x80 && m <= 0x8f && i + 6 <= len) {
			dest = next + (int64_t)rd32(b + i + 2);
			have_dest = jcc = 1;
		}
	} else if ((op == 0x86 || op == 0x87) && (m >> 6) != 3) {
		if (!lock)
			sp->atomics++;
	} else if ((op >= 0xe4 && op <= 0xe7) || (op >= 0xec && op <= 0xef) ||
		   (op >= 0x6c && op <= 0x6f)) {
		sp->io++;
	} else if (op == 0xf4) {
		sp->sys++;
		eob = JEOB_EXIT;
	} else if (op == 0x9d || op == 0xcc || op == 0xcd || op == 0xce || (rep && op == 0x90)) {
		eob = JEOB_EXIT;	/* popf, int3, int, into, pause */
	} else if (op == 0xfb || op == 0x17 || (op == 0x8e && ((m >> 3) & 7) == 2)) {
		eob = JEOB_INHIBIT;	/* sti, pop ss, mov to ss */
	} else if (rep && ((op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf))) {
		/* a rep string op: one iteration per block run, then a chained
		 * jump back to itself (or on)
		 */
		kind = END_CHAIN;
		dest = pc;
		have_dest = jcc = 1;
	} else if (op == 0xc3 || op == 0xc2 || op == 0xcb || op == 0xca || op == 0xcf) {
		kind = END_RET;
	} else if (op == 0xff && (((m >> 3) & 7) == 2 || ((m >> 3) & 7) == 4 ||
				  ((m >> 3) & 7) == 3 || ((m >> 3) & 7) == 5)) {
		kind = END_INDIRECT;
	} else if ((op == 0xe8 || op == 0xe9) && i + 5 <= len) {
		dest = next + (int64_t)rd32(b + i + 1);
		have_dest = 1;
	} else if (op == 0xeb && i + 2 <= len) {
		dest = next + (int64_t)(int8_t)b[i + 1];
		have_dest = 1;
	} else if (((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3)) && i + 2 <= len) {
		dest = next + (int64_t)(int8_t)b[i + 1];
		have_dest = jcc = 1;
	}
	if (!end)
		return;
	if (have_dest) {
		int off = (dest & PAGE_MASK_4K) != tb_page ||
			  (jcc && (next & PAGE_MASK_4K) != tb_page);

		kind = !off ? END_CHAIN : jcc ? END_XJCC : END_XPAGE;
	}
	*end = (uint8_t)kind;
	if (ji) {
		ji->dest = dest;
		ji->have_dest = (uint8_t)(have_dest && kind != END_RET && kind != END_INDIRECT);
		ji->fall = (uint8_t)(jcc || kind == END_OTHER);
		ji->eob = (uint8_t)eob;
		ji->flush = (uint8_t)flush;
	}
}

/* The marker a block starting at vaddr is (MK_NONE: none). Under lock. */
static uint8_t mark_of(uint64_t vaddr)
{
	int i;

	for (i = 0; i < n_marks; i++)
		if (marks[i].vaddr == vaddr)
			return marks[i].mark;
	return MK_NONE;
}

static int is_lookup(uint8_t end)
{
	return end == END_XPAGE || end == END_INDIRECT || end == END_RET;
}

/* Close vCPU vcpu's half: record it (flags | how), back outside. */
static void half_close(unsigned int vcpu, struct vstate *s, uint32_t how)
{
	struct half *h;

	pthread_mutex_lock(&hlock);
	if (n_halves == cap_halves) {
		size_t cap = cap_halves ? 2 * cap_halves : 4096;
		struct half *n = realloc(halves, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&hlock);
			fprintf(stderr, "insnprof: out of memory\n");
			abort();
		}
		halves = n;
		cap_halves = cap;
	}
	h = &halves[n_halves++];
	h->vcpu = vcpu;
	h->flags = s->flags | how;
	memcpy(h->v, s->v, sizeof(h->v));
	pthread_mutex_unlock(&hlock);
	s->phase = PH_OUT;
	s->gate = 0;
	s->flags = 0;
	memset(s->v, 0, sizeof(s->v));
}

/*
 * A kernel block runs on vCPU vcpu (phases=): a marker moves the vCPU's
 * phase (before the block counts: a function's entry belongs to the
 * phase it starts); the block counts in that phase; a return to user
 * (after it counts) closes the half.
 */
static void vcpu_tb_exec(unsigned int vcpu, void *udata)
{
	struct ent *e = udata;
	struct vstate *s;
	unsigned int gen;
	uint64_t *v;

	if (vcpu >= MAX_VCPUS)
		return;
	s = &vst[vcpu];
	gen = __atomic_load_n(&phase_gen, __ATOMIC_RELAXED);
	if (s->gen != gen) {
		memset(s, 0, sizeof(*s));
		s->gen = gen;
	}
	switch (e->mark & MK_KIND) {
	case MK_POST:
		if (s->phase != PH_OUT)
			half_close(vcpu, s, HF_CUT);
		s->phase = PH_A;
		break;
	case MK_GATE:
		if (s->phase == PH_A)
			s->gate = 1;
		break;
	case MK_COPY:
		if (s->phase == PH_A && (!(e->mark & MK_GATED) || s->gate)) {
			s->phase = PH_C1;
			s->flags |= HF_COPY;
		}
		break;
	case MK_CQE:
		if (s->phase == PH_A || s->phase == PH_C1) {
			s->phase = PH_C2;
			s->flags |= HF_CQE;
		}
		break;
	}
	e->ph[s->phase]++;
	if (s->phase == PH_OUT)
		return;
	v = s->v[s->phase - 1];
	v[HV_INSNS] += e->n_insns;
	v[HV_BLOCKS]++;
	if (e->count)
		v[HV_MEM16] += 16 * (e->loads + e->stores) / e->count;
	v[HV_LOOKUPS] += is_lookup(e->end);
	v[HV_ATOMICS] += e->sp.atomics;
	v[HV_TSC] += e->sp.tsc;
	if ((e->mark & MK_KIND) == MK_END || e->sp.sysret)
		half_close(vcpu, s, HF_RET);
}

/*
 * The inline counters of a block: per run, n_insns added to *insns (if
 * not NULL) and 1 to *runs; per memory access of its instructions, 1 to
 * *loads or *stores.
 */
static void count_block(struct qemu_plugin_tb *tb, size_t n, uint64_t *insns, uint64_t *runs,
			uint64_t *loads, uint64_t *stores)
{
	size_t i;

	if (insns)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, insns, n);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, runs, 1);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		qemu_plugin_register_vcpu_mem_inline(insn, QEMU_PLUGIN_MEM_R,
						     QEMU_PLUGIN_INLINE_ADD_U64, loads, 1);
		qemu_plugin_register_vcpu_mem_inline(insn, QEMU_PLUGIN_MEM_W,
						     QEMU_PLUGIN_INLINE_ADD_U64, stores, 1);
	}
}

/*
 * jc=1 (session 43): QEMU 7.2's per-vCPU TB jump cache (tb_jmp_cache),
 * simulated. QEMU finds the block to run next through that cache
 * whenever it does not jump straight on from a chained block: after a
 * ret/iret, an indirect jmp/call, a direct one (or a jcc edge, or the
 * fall through at a page's end) to another page than the one its block
 * starts on, after an instruction that leaves the block for the main loop
 * (struct jinfo's eob), after an interrupt or exception, and into a block
 * whose bytes span two pages (never chained to). The cache is 4096
 * slots, direct mapped, per vCPU, indexed by jc_hash(pc); a miss costs a
 * walk of QEMU's global hash table (qht) and refills the slot. Every
 * block (kernel and user) gets an exec callback that classifies its entry
 * from the block that ran before it on the same vCPU and, for a lookup,
 * runs the simulated cache. Keyed by the start pc (and the
 * interrupt-inhibit flag, the only block flag that changes in a kernel
 * or user run here); the vCPU's cache is cleared on a full TLB flush
 * (mov to cr3/cr4), as QEMU does; invlpg (clears two 64-slot groups) and
 * QEMU's own flushes (a block invalidated: with x86's pc-relative blocks
 * every vCPU's whole cache) are not seen (invlpg is counted).
 * A snapshot has the counts since the previous one (not cumulative, unlike
 * the block counters; the first holds the boot's): "jk KIND PREV_USER USER
 * lookups misses" per kind of entry and space (1: user) of the block
 * before and of the block looked up, "jp PC lookups misses" per pc looked
 * up, "jx PC EVICTED_BY misses" per pair (0: an empty slot), "# jc_flushes",
 * "# jc_invlpg".
 * jctrace=N: also the first N lookups after each snapshot, in order, to
 * NAME.jtrace at the next (struct jrec; jcsim.c re-simulates them).
 */
#define JC_BITS 12
#define JC_SIZE (1u << JC_BITS)

/*
 * The slot of pc: the low 6 bits are pc[5:0] ^ pc[11:6] (a page's blocks
 * share 64 slots), the high 6 bits pc[17:12] ^ pc[23:18] (pages whose
 * numbers agree in that fold share the same 64). QEMU 7.2 softmmu,
 * TARGET_PAGE_BITS 12 (accel/tcg/tb-hash.h, tb_jmp_cache_hash_func).
 */
static unsigned int jc_hash(uint64_t pc)
{
	unsigned int in_page = (unsigned int)((pc ^ (pc >> 6)) & 0x3f);
	unsigned int page = (unsigned int)(((pc >> 12) ^ (pc >> 18)) & 0x3f);

	return page << 6 | in_page;
}

/* Why a block is entered through a lookup (JK_NONE: a chained jump). */
enum jc_kind {
	JK_NONE, JK_FIRST, JK_RET, JK_IND, JK_XPAGE, JK_XJCC, JK_PAGEEND, JK_EOB, JK_TWOPAGE,
	JK_ASYNC, N_JK
};
static const char *const jk_names[N_JK] = {
	"none", "first", "ret", "indirect", "xpage", "xjcc", "pageend", "eob", "twopage", "async"
};
#define JK_FLUSH 0xff	/* a trace record: the vCPU's cache cleared */

/* A translated block, as the simulation needs it. */
struct jtb {
	uint64_t pc, next, dest;	/* next: after its last instruction */
	uint32_t n_insns;
	uint8_t end, have_dest, fall, eob, flush, two;	/* two: spans two pages */
	struct jtb *hnext;
};

/* A trace record (jctrace=). */
struct jrec {
	uint64_t pc;
	uint8_t vcpu, kind, tag, miss;	/* kind JK_FLUSH: the cache cleared */
	uint32_t pad;
};

struct jpc {			/* per pc looked up */
	uint64_t pc, lookups, misses;
	struct jpc *hnext;
};

struct jpair {			/* per (missed pc, the pc whose entry it evicted) */
	uint64_t pc, by, misses;
	struct jpair *hnext;
};

struct jvcpu {
	uint64_t slot[JC_SIZE];	/* the pc cached in each slot (0: empty) */
	uint8_t tag[JC_SIZE];	/* and its inhibit flag */
	const struct jtb *prev;	/* the block that ran last */
	uint8_t prev_tag;
	uint8_t flush;		/* prev flushed the TLB: clear before the next lookup */
};

#define JHASH_BITS 18
static int jc_on;
static size_t jtrace_cap;
static struct jrec *jtrace;
static size_t jtrace_n;
static struct jvcpu *jv[MAX_VCPUS];
static struct jtb *jtbs[1u << JHASH_BITS];
static struct jpc *jpcs[1u << JHASH_BITS];
static struct jpair *jpairs[1u << JHASH_BITS];
static uint64_t jk_stat[N_JK][2][2][2];	/* kind, prev user, user: lookups, misses */
static uint64_t jc_flushes, jc_invlpg;
static pthread_mutex_t jlock = PTHREAD_MUTEX_INITIALIZER;

static unsigned int jh(uint64_t a, uint64_t b)
{
	return (unsigned int)(((a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xc2b2ae3d27d4eb4fULL)) >>
			      (64 - JHASH_BITS));
}

static void *jalloc(size_t size)
{
	void *p = calloc(1, size);

	if (!p) {
		fprintf(stderr, "insnprof: out of memory\n");
		abort();
	}
	return p;
}

/* The shared struct jtb of a block like *t (one per distinct block). Under jlock. */
static const struct jtb *jtb_get(const struct jtb *t)
{
	unsigned int h = jh(t->pc, t->next ^ t->dest ^ ((uint64_t)t->n_insns << 40));
	struct jtb *e;

	for (e = jtbs[h]; e; e = e->hnext)
		if (e->pc == t->pc && e->next == t->next && e->dest == t->dest &&
		    e->n_insns == t->n_insns && e->end == t->end && e->have_dest == t->have_dest &&
		    e->fall == t->fall && e->eob == t->eob && e->flush == t->flush && e->two == t->two)
			return e;
	e = jalloc(sizeof(*e));
	*e = *t;
	e->hnext = jtbs[h];
	jtbs[h] = e;
	return e;
}

/* A block's struct jtb from its start, length, end and last instruction's jinfo (next, two: set). */
static void jtb_make(struct jtb *jt, uint64_t vaddr, uint32_t n, uint8_t end,
		     const struct jinfo *ji)
{
	jt->pc = vaddr;
	jt->n_insns = n;
	jt->end = end;
	jt->dest = ji->have_dest ? ji->dest : 0;
	jt->have_dest = ji->have_dest;
	jt->fall = ji->fall;
	jt->eob = ji->eob;
	jt->flush = ji->flush;
}

/*
 * How the block at pc (two: its bytes span two pages) is entered after
 * prev ran on the same vCPU (prev_tag: prev ran with interrupts
 * inhibited, i.e. right after a sti; NULL: nothing ran yet).
 */
static int jc_entry(const struct jtb *prev, int prev_tag, uint64_t pc, int two)
{
	uint64_t edge;

	if (!prev)
		return JK_FIRST;
	/* after sti TCG translates one instruction and leaves the block */
	if (prev->eob || prev_tag)
		return JK_EOB;
	switch (prev->end) {
	case END_RET:
		return JK_RET;
	case END_INDIRECT:
		return JK_IND;
	case END_XPAGE:
		return JK_XPAGE;
	}
	/* a chained kind (direct jump or jcc, or no branch): which edge? */
	if (prev->have_dest && pc == prev->dest)
		edge = prev->dest;
	else if (prev->fall && pc == prev->next)
		edge = prev->next;
	else
		return JK_ASYNC;	/* neither: an interrupt or exception came between */
	if ((edge & PAGE_MASK_4K) != (prev->pc & PAGE_MASK_4K))
		return prev->end == END_OTHER ? JK_PAGEEND : JK_XJCC;
	return two ? JK_TWOPAGE : JK_NONE;
}

static void jc_count_pair(uint64_t pc, uint64_t by)
{
	unsigned int h = jh(pc, by);
	struct jpair *p;

	for (p = jpairs[h]; p; p = p->hnext)
		if (p->pc == pc && p->by == by)
			break;
	if (!p) {
		p = jalloc(sizeof(*p));
		p->pc = pc;
		p->by = by;
		p->hnext = jpairs[h];
		jpairs[h] = p;
	}
	p->misses++;
}

static void jc_trace(uint64_t pc, unsigned int vcpu, int kind, int tag, int miss)
{
	struct jrec *r;

	if (jtrace_n >= jtrace_cap)
		return;
	r = &jtrace[jtrace_n++];
	r->pc = pc;
	r->vcpu = (uint8_t)vcpu;
	r->kind = (uint8_t)kind;
	r->tag = (uint8_t)tag;
	r->miss = (uint8_t)miss;
	r->pad = 0;
}

/*
 * One lookup of (pc, tag) in the vCPU's simulated cache: 1 on a miss
 * (the slot then holds pc); *by: the pc that the slot held (0: empty).
 */
static int jc_access(struct jvcpu *s, uint64_t pc, int tag, uint64_t *by)
{
	unsigned int i = jc_hash(pc);

	if (s->slot[i] == pc && s->tag[i] == tag)
		return 0;
	*by = s->slot[i];
	s->slot[i] = pc;
	s->tag[i] = (uint8_t)tag;
	return 1;
}

static void jc_clear(struct jvcpu *s)
{
	memset(s->slot, 0, sizeof(s->slot));
	memset(s->tag, 0, sizeof(s->tag));
}

/* A block runs on vCPU vcpu (jc=1). */
static void vcpu_jc_exec(unsigned int vcpu, void *udata)
{
	const struct jtb *t = udata;
	struct jvcpu *s;
	uint64_t by = 0;
	int kind, tag, miss, pu, u;

	if (vcpu >= MAX_VCPUS)
		return;
	s = jv[vcpu];
	if (!s) {
		s = jalloc(sizeof(*s));
		jv[vcpu] = s;
	}
	kind = jc_entry(s->prev, s->prev_tag, t->pc, t->two);
	tag = s->prev && !s->prev_tag && s->prev->eob == JEOB_INHIBIT;
	pu = s->prev && s->prev->pc < KERNEL_START;
	s->prev = t;
	s->prev_tag = (uint8_t)tag;
	if (s->flush || t->flush == JFL_PAGE) {
		pthread_mutex_lock(&jlock);
		if (s->flush) {
			jc_clear(s);
			jc_flushes++;
			jc_trace(0, vcpu, JK_FLUSH, 0, 0);
		}
		if (t->flush == JFL_PAGE)
			jc_invlpg++;
		pthread_mutex_unlock(&jlock);
		s->flush = 0;
	}
	s->flush = t->flush == JFL_FULL;
	if (kind == JK_NONE)
		return;
	miss = jc_access(s, t->pc, tag, &by);
	u = t->pc < KERNEL_START;
	pthread_mutex_lock(&jlock);
	jk_stat[kind][pu][u][0]++;
	jk_stat[kind][pu][u][1] += miss;
	{
		unsigned int h = jh(t->pc, 0);
		struct jpc *p;

		for (p = jpcs[h]; p; p = p->hnext)
			if (p->pc == t->pc)
				break;
		if (!p) {
			p = jalloc(sizeof(*p));
			p->pc = t->pc;
			p->hnext = jpcs[h];
			jpcs[h] = p;
		}
		p->lookups++;
		p->misses += miss;
	}
	if (miss)
		jc_count_pair(t->pc, by);
	jc_trace(t->pc, vcpu, kind, tag, miss);
	pthread_mutex_unlock(&jlock);
}

/* The jc lines of a snapshot, and the trace since the last one. */
static void jc_snapshot(FILE *f, const char *name)
{
	char tmp[4096], final[4096];
	struct jrec *tr;
	size_t n, i;
	int k, a, b;
	FILE *t;

	pthread_mutex_lock(&jlock);
	fprintf(f, "# jc_flushes %" PRIu64 "\n", jc_flushes);
	fprintf(f, "# jc_invlpg %" PRIu64 "\n", jc_invlpg);
	for (k = 1; k < N_JK; k++)
		for (a = 0; a < 2; a++)
			for (b = 0; b < 2; b++)
				if (jk_stat[k][a][b][0])
					fprintf(f, "jk %s %d %d %" PRIu64 " %" PRIu64 "\n", jk_names[k],
						a, b, jk_stat[k][a][b][0], jk_stat[k][a][b][1]);
	for (i = 0; i < (1u << JHASH_BITS); i++) {
		struct jpc *p, *pn;
		struct jpair *q, *qn;

		for (p = jpcs[i]; p; p = pn) {
			fprintf(f, "jp %" PRIx64 " %" PRIu64 " %" PRIu64 "\n", p->pc, p->lookups,
				p->misses);
			pn = p->hnext;
			free(p);
		}
		for (q = jpairs[i]; q; q = qn) {
			fprintf(f, "jx %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", q->pc, q->by, q->misses);
			qn = q->hnext;
			free(q);
		}
		jpcs[i] = NULL;
		jpairs[i] = NULL;
	}
	memset(jk_stat, 0, sizeof(jk_stat));
	jc_flushes = jc_invlpg = 0;
	tr = NULL;
	n = 0;
	if (jtrace_cap) {
		/* hand the buffer over; the next window records into a new one */
		tr = jtrace;
		n = jtrace_n;
		jtrace = calloc(jtrace_cap, sizeof(*jtrace));
		jtrace_n = jtrace ? 0 : jtrace_cap;
	}
	pthread_mutex_unlock(&jlock);
	if (!tr)
		return;
	snprintf(tmp, sizeof(tmp), "%s/%s.jtrace.tmp", dir, name);
	snprintf(final, sizeof(final), "%s/%s.jtrace", dir, name);
	t = fopen(tmp, "wb");
	if (t) {
		if (fwrite(tr, sizeof(*tr), n, t) != n || fclose(t) || rename(tmp, final))
			fprintf(stderr, "insnprof: %s: %s\n", final, strerror(errno));
	}
	free(tr);
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct special sp = { 0 };
	uint8_t end = END_OTHER;
	struct jinfo ji = { 0 };
	struct jtb jt = { 0 };
	struct ent *e;

	if (jc_on) {
		/* every block, kernel and user: the cache is the vCPU's */
		for (i = 0; i < n; i++) {
			struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
			uint64_t a = qemu_plugin_insn_vaddr(insn);
			size_t len = qemu_plugin_insn_size(insn);

			decode(qemu_plugin_insn_data(insn), len, a, vaddr & PAGE_MASK_4K, &sp,
			       i == n - 1 ? &end : NULL, i == n - 1 ? &ji : NULL);
			if (i == n - 1) {
				jt.next = a + len;
				jt.two = ((a + len - 1) & PAGE_MASK_4K) != (vaddr & PAGE_MASK_4K);
			}
		}
		jtb_make(&jt, vaddr, (uint32_t)n, end, &ji);
		pthread_mutex_lock(&jlock);
		qemu_plugin_register_vcpu_tb_exec_cb(tb, vcpu_jc_exec, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)jtb_get(&jt));
		pthread_mutex_unlock(&jlock);
	}
	if (vaddr < KERNEL_START) {
		__atomic_fetch_add(&user_tbs, 1, __ATOMIC_RELAXED);
		if (count_user)
			count_block(tb, n, &user_insns, &user_blocks, &user_loads, &user_stores);
		return;
	}
	for (i = 0; !jc_on && i < n; i++) {	/* (jc=1 decoded them above) */
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		decode(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn),
		       qemu_plugin_insn_vaddr(insn), vaddr & PAGE_MASK_4K, &sp,
		       i == n - 1 ? &end : NULL, NULL);
	}
	pthread_mutex_lock(&lock);
	e = lookup(vaddr, (uint32_t)n);
	translations++;
	e->end = end;
	e->sp = sp;
	e->mark = mark_of(vaddr);
	pthread_mutex_unlock(&lock);
	count_block(tb, n, NULL, &e->count, &e->loads, &e->stores);
	if (phases_file)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, vcpu_tb_exec, QEMU_PLUGIN_CB_NO_REGS, e);
}

struct row {
	uint64_t vaddr;
	uint64_t count;
	uint64_t loads, stores;
	uint32_t n_insns;
	uint8_t end;
	struct special sp;
	uint64_t ph[N_PH];
};

/* NAME.snap: a header, then every kernel counter that has run. */
static int snapshot(const char *name)
{
	struct row *rows;
	struct half *hs;
	struct chunk *c;
	size_t n = 0, i, j, cap, nh;
	uint64_t user, ublocks, uloads, ustores, ktotal = 0, tr;
	char tmp[4096], final[4096];
	struct timespec ts;
	FILE *f;

	clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&lock);
	user = user_insns;
	ublocks = user_blocks;
	uloads = user_loads;
	ustores = user_stores;
	tr = translations;
	cap = n_ents;
	rows = malloc((cap + 1) * sizeof(*rows));
	if (!rows) {
		pthread_mutex_unlock(&lock);
		return -1;
	}
	for (c = chunks; c; c = c->prev)
		for (i = 0; i < c->used; i++) {
			uint64_t cnt = c->e[i].count;

			if (!cnt)
				continue;
			rows[n].vaddr = c->e[i].vaddr;
			rows[n].n_insns = c->e[i].n_insns;
			rows[n].count = cnt;
			rows[n].loads = c->e[i].loads;
			rows[n].stores = c->e[i].stores;
			rows[n].end = c->e[i].end;
			rows[n].sp = c->e[i].sp;
			memcpy(rows[n].ph, c->e[i].ph, sizeof(rows[n].ph));
			ktotal += cnt * c->e[i].n_insns;
			n++;
		}
	pthread_mutex_unlock(&lock);
	/* the halves that ended since the last snapshot */
	pthread_mutex_lock(&hlock);
	hs = halves;
	nh = n_halves;
	halves = NULL;
	n_halves = cap_halves = 0;
	pthread_mutex_unlock(&hlock);

	snprintf(tmp, sizeof(tmp), "%s/%s.snap.tmp", dir, name);
	snprintf(final, sizeof(final), "%s/%s.snap", dir, name);
	f = fopen(tmp, "w");
	if (!f) {
		free(rows);
		free(hs);
		return -1;
	}
	fprintf(f, "# insnprof snapshot %s\n", name);
	fprintf(f, "# host_time %lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	fprintf(f, "# user_insns %" PRIu64 "\n", user);
	fprintf(f, "# user_blocks %" PRIu64 "\n", ublocks);
	fprintf(f, "# user_loads %" PRIu64 "\n", uloads);
	fprintf(f, "# user_stores %" PRIu64 "\n", ustores);
	fprintf(f, "# kernel_insns %" PRIu64 "\n", ktotal);
	fprintf(f, "# kernel_translations %" PRIu64 "\n", tr);
	fprintf(f, "# rows %zu\n", n);
	if (phases_file) {
		fprintf(f, "# phase_column %s\n", cur_col[0] ? cur_col : "-");
		for (i = 0; i < (size_t)n_marks; i++)
			fprintf(f, "# marker %" PRIx64 " %u %u %s\n", marks[i].vaddr,
				(unsigned int)(marks[i].mark & MK_KIND),
				(unsigned int)!!(marks[i].mark & MK_GATED), marks[i].name);
		fprintf(f, "# halves %zu\n", nh);
	}
	if (jc_on)
		jc_snapshot(f, name);
	fprintf(f, "# columns vaddr n_insns count loads stores end atomics wrmsr tsc io sys%s\n",
		phases_file ? " out a c1 c2" : "");
	for (i = 0; i < n; i++) {
		fprintf(f, "%" PRIx64 " %" PRIx32 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %u %u %u %u %u %u",
			rows[i].vaddr, rows[i].n_insns, rows[i].count, rows[i].loads,
			rows[i].stores, rows[i].end, rows[i].sp.atomics, rows[i].sp.wrmsr,
			rows[i].sp.tsc, rows[i].sp.io, rows[i].sp.sys);
		if (phases_file)
			for (j = 0; j < N_PH; j++)
				fprintf(f, " %" PRIu64, rows[i].ph[j]);
		fputc('\n', f);
	}
	for (i = 0; i < nh; i++) {
		fprintf(f, "h %u %u", hs[i].vcpu, hs[i].flags);
		for (j = 0; j < (N_PH - 1) * N_HV; j++)
			fprintf(f, " %" PRIu64, hs[i].v[j / N_HV][j % N_HV]);
		fputc('\n', f);
	}
	free(rows);
	free(hs);
	if (fclose(f) || rename(tmp, final))
		return -1;
	return 0;
}

static const char *const kind_names[] = { "", "post", "copy", "cqe", "end", "gate" };

/* FILE (phases=): "KIND SYMBOL [GATE]" lines, # comments. */
static int read_specs(const char *path)
{
	char line[512], kind[32], name[128], gate[128];
	FILE *f = fopen(path, "r");
	int k, n;

	if (!f) {
		fprintf(stderr, "insnprof: phases=%s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		gate[0] = 0;
		n = sscanf(line, "%31s %127s %127s", kind, name, gate);
		if (n < 2)
			continue;
		for (k = MK_POST; k <= MK_END; k++)
			if (!strcmp(kind, kind_names[k]))
				break;
		if (k > MK_END || n_specs == MAX_MARKS || (gate[0] && k != MK_COPY)) {
			fprintf(stderr, "insnprof: phases=%s: bad line: %s", path, line);
			fclose(f);
			return -1;
		}
		specs[n_specs].kind = (uint8_t)k;
		strcpy(specs[n_specs].name, name);
		strcpy(specs[n_specs].gate, gate);
		n_specs++;
	}
	fclose(f);
	return 0;
}

static void add_mark(uint64_t vaddr, uint8_t mark, const char *name)
{
	if (n_marks == MAX_MARKS || mark_of(vaddr))
		return;
	marks[n_marks].vaddr = vaddr;
	marks[n_marks].mark = mark;
	snprintf(marks[n_marks].name, sizeof(marks[n_marks].name), "%s", name);
	n_marks++;
}

/*
 * A request for column col (NAME col-N): if col is not the current one,
 * resolve the markers in its kallsyms (the first text symbol of each
 * name), mark the blocks, and start every vCPU outside a half.
 */
static void phases_column(const char *col)
{
	char path[4096], line[512], name[256];
	unsigned long long addr;
	uint64_t gaddr[MAX_MARKS] = { 0 }, saddr[MAX_MARKS] = { 0 };
	struct chunk *c;
	char type;
	FILE *f;
	int i;
	size_t k;

	if (!strcmp(col, cur_col))
		return;
	snprintf(path, sizeof(path), "%s/%s.kallsyms", kallsyms_dir, col);
	f = fopen(path, "r");
	if (!f)
		fprintf(stderr, "insnprof: %s: %s: no phase markers\n", path, strerror(errno));
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    !strchr("tTwW", type))
			continue;
		for (i = 0; i < n_specs; i++) {
			if (!saddr[i] && !strcmp(name, specs[i].name))
				saddr[i] = addr;
			if (!gaddr[i] && specs[i].gate[0] && !strcmp(name, specs[i].gate))
				gaddr[i] = addr;
		}
	}
	if (f)
		fclose(f);
	pthread_mutex_lock(&lock);
	n_marks = 0;
	for (i = 0; i < n_specs; i++) {
		if (!saddr[i] || (specs[i].gate[0] && !gaddr[i]))
			continue;
		add_mark(saddr[i], specs[i].kind | (specs[i].gate[0] ? MK_GATED : 0), specs[i].name);
		if (specs[i].gate[0])
			add_mark(gaddr[i], MK_GATE, specs[i].gate);
	}
	for (c = chunks; c; c = c->prev)
		for (k = 0; k < c->used; k++)
			c->e[k].mark = mark_of(c->e[k].vaddr);
	snprintf(cur_col, sizeof(cur_col), "%s", col);
	__atomic_fetch_add(&phase_gen, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&hlock);
	n_halves = 0;
	pthread_mutex_unlock(&hlock);
	for (i = 0; i < n_marks; i++)
		fprintf(stderr, "insnprof: %s: marker %s %s at %" PRIx64 "%s\n", col,
			kind_names[marks[i].mark & MK_KIND], marks[i].name, marks[i].vaddr,
			marks[i].mark & MK_GATED ? " (gated)" : "");
}

static void handle_requests(void)
{
	char path[4096], name[1024];
	struct dirent *d;
	DIR *dp = opendir(dir);
	size_t len;
	FILE *f;

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		len = strlen(d->d_name);
		if (len <= 4 || len >= sizeof(name) || strcmp(d->d_name + len - 4, ".req"))
			continue;
		memcpy(name, d->d_name, len - 4);
		name[len - 4] = 0;
		if (phases_file) {
			char *dash = strrchr(name, '-');

			if (dash && dash != name && dash[1] && strspn(dash + 1, "0123456789") ==
			    strlen(dash + 1)) {
				*dash = 0;
				phases_column(name);
				*dash = '-';
			}
		}
		if (snapshot(name))
			fprintf(stderr, "insnprof: snapshot %s failed: %s\n", name, strerror(errno));
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s.done", dir, name);
		f = fopen(path, "w");
		if (f)
			fclose(f);
	}
	closedir(dp);
}

static void *poll_thread(void *arg)
{
	struct timespec ts = { poll_ms / 1000, (poll_ms % 1000) * 1000000L };

	(void)arg;
	while (!stopping) {
		handle_requests();
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	if (poller_running) {
		stopping = 1;
		pthread_join(poller, NULL);
		poller_running = 0;
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	if (!info->system_emulation) {
		fprintf(stderr, "insnprof: system emulation only\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "dir=", 4)) {
			dir = strdup(argv[i] + 4);
		} else if (!strncmp(argv[i], "poll_ms=", 8)) {
			poll_ms = (unsigned int)strtoul(argv[i] + 8, NULL, 0);
			if (!poll_ms)
				poll_ms = 1;
		} else if (!strncmp(argv[i], "phases=", 7)) {
			phases_file = strdup(argv[i] + 7);
		} else if (!strncmp(argv[i], "kallsyms=", 9)) {
			kallsyms_dir = strdup(argv[i] + 9);
		} else if (!strncmp(argv[i], "jc=", 3)) {
			jc_on = atoi(argv[i] + 3) != 0;
		} else if (!strncmp(argv[i], "jctrace=", 8)) {
			jtrace_cap = strtoul(argv[i] + 8, NULL, 0);
		} else if (!strncmp(argv[i], "user=", 5)) {
			bool on;

			if (!qemu_plugin_bool_parse("user", argv[i] + 5, &on)) {
				fprintf(stderr, "insnprof: user=%s: on or off\n", argv[i] + 5);
				return -1;
			}
			count_user = on;
		} else {
			fprintf(stderr,
				"insnprof: unknown argument %s (dir=, poll_ms=, user=, phases=, kallsyms=, jc=, jctrace=)\n",
				argv[i]);
			return -1;
		}
	}
	if (!dir) {
		fprintf(stderr, "insnprof: dir= missing\n");
		return -1;
	}
	if (jtrace_cap && !jc_on) {
		fprintf(stderr, "insnprof: jctrace= needs jc=1\n");
		return -1;
	}
	if (jtrace_cap) {
		jtrace = calloc(jtrace_cap, sizeof(*jtrace));
		if (!jtrace) {
			fprintf(stderr, "insnprof: jctrace=%zu: out of memory\n", jtrace_cap);
			return -1;
		}
	}
	if (phases_file && (!kallsyms_dir || read_specs(phases_file))) {
		fprintf(stderr, "insnprof: phases= needs kallsyms= and a readable marker list\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	if (pthread_create(&poller, NULL, poll_thread, NULL)) {
		fprintf(stderr, "insnprof: cannot start the polling thread\n");
		return -1;
	}
	poller_running = 1;
	return 0;
}
