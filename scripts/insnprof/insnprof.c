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
 * Usage: qemu-system-x86_64 -accel tcg,thread=single \
 *            -plugin file=insnprof.so,dir=/path/the/guest/writes
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
};

struct ent {
	uint64_t count;		/* executions; the inline add's target */
	uint64_t loads;		/* memory loads of its instructions (inline) */
	uint64_t stores;	/* memory stores (inline) */
	uint64_t vaddr;
	uint32_t n_insns;
	uint8_t end;		/* enum end_kind */
	struct special sp;
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

/*
 * Decode one x86-64 instruction's legacy/REX prefixes and opcode (enough
 * for the kinds above; anything else is END_OTHER and no special). If
 * end is not NULL, the instruction is the block's last: classify how the
 * block ends. tb_page: the block's first page (TCG chains a direct jump
 * only to the page the block starts in).
 */
static void decode(const uint8_t *b, size_t len, uint64_t pc, uint64_t tb_page,
		   struct special *sp, uint8_t *end)
{
	size_t i = 0;
	int lock = 0, rep = 0, kind = END_OTHER;
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

		if (m == 0x30) {
			sp->wrmsr++;
		} else if (m == 0x31) {
			sp->tsc++;
		} else if (m == 0x01 && m2 == 0xf9) {
			sp->tsc++;
		} else if (m == 0x32 || m == 0xa2 || m == 0x22 || m == 0x05 || m == 0x07 ||
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
	} else if (rep && ((op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf))) {
		/* a rep string op: one iteration per block run, then a chained
		 * jump back to itself (or on)
		 */
		kind = END_CHAIN;
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
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct special sp = { 0 };
	uint8_t end = END_OTHER;
	struct ent *e;

	if (vaddr < KERNEL_START) {
		__atomic_fetch_add(&user_tbs, 1, __ATOMIC_RELAXED);
		if (!count_user)
			return;
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &user_insns, n);
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &user_blocks, 1);
		for (i = 0; i < n; i++) {
			struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

			qemu_plugin_register_vcpu_mem_inline(insn, QEMU_PLUGIN_MEM_R,
							     QEMU_PLUGIN_INLINE_ADD_U64,
							     &user_loads, 1);
			qemu_plugin_register_vcpu_mem_inline(insn, QEMU_PLUGIN_MEM_W,
							     QEMU_PLUGIN_INLINE_ADD_U64,
							     &user_stores, 1);
		}
		return;
	}
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		decode(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn),
		       qemu_plugin_insn_vaddr(insn), vaddr & PAGE_MASK_4K, &sp,
		       i == n - 1 ? &end : NULL);
	}
	pthread_mutex_lock(&lock);
	e = lookup(vaddr, (uint32_t)n);
	translations++;
	e->end = end;
	e->sp = sp;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &e->count, 1);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		qemu_plugin_register_vcpu_mem_inline(insn, QEMU_PLUGIN_MEM_R,
						     QEMU_PLUGIN_INLINE_ADD_U64, &e->loads, 1);
		qemu_plugin_register_vcpu_mem_inline(insn, QEMU_PLUGIN_MEM_W,
						     QEMU_PLUGIN_INLINE_ADD_U64, &e->stores, 1);
	}
}

struct row {
	uint64_t vaddr;
	uint64_t count;
	uint64_t loads, stores;
	uint32_t n_insns;
	uint8_t end;
	struct special sp;
};

/* NAME.snap: a header, then every kernel counter that has run. */
static int snapshot(const char *name)
{
	struct row *rows;
	struct chunk *c;
	size_t n = 0, i, cap;
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
			ktotal += cnt * c->e[i].n_insns;
			n++;
		}
	pthread_mutex_unlock(&lock);

	snprintf(tmp, sizeof(tmp), "%s/%s.snap.tmp", dir, name);
	snprintf(final, sizeof(final), "%s/%s.snap", dir, name);
	f = fopen(tmp, "w");
	if (!f) {
		free(rows);
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
	fprintf(f, "# columns vaddr n_insns count loads stores end atomics wrmsr tsc io sys\n");
	for (i = 0; i < n; i++)
		fprintf(f, "%" PRIx64 " %" PRIx32 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %u %u %u %u %u %u\n",
			rows[i].vaddr, rows[i].n_insns, rows[i].count, rows[i].loads,
			rows[i].stores, rows[i].end, rows[i].sp.atomics, rows[i].sp.wrmsr,
			rows[i].sp.tsc, rows[i].sp.io, rows[i].sp.sys);
	free(rows);
	if (fclose(f) || rename(tmp, final))
		return -1;
	return 0;
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
		} else if (!strncmp(argv[i], "user=", 5)) {
			bool on;

			if (!qemu_plugin_bool_parse("user", argv[i] + 5, &on)) {
				fprintf(stderr, "insnprof: user=%s: on or off\n", argv[i] + 5);
				return -1;
			}
			count_user = on;
		} else {
			fprintf(stderr, "insnprof: unknown argument %s (dir=, poll_ms=, user=)\n",
				argv[i]);
			return -1;
		}
	}
	if (!dir) {
		fprintf(stderr, "insnprof: dir= missing\n");
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
