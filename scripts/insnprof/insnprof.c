// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof: a QEMU (7.2) TCG plugin that counts the guest instructions
 * executed per translation block start address, for snapshots the guest
 * asks for (docs/testing.md, "Instruction profile").
 *
 * Every translated block whose start address is a kernel address
 * (>= 0xffff800000000000) gets one counter per (start address, number of
 * instructions), which an inline add bumps each time the block runs; the
 * instructions it ran are count x n_insns. Blocks in user space all add
 * their instruction count to one counter (user=off: not counted). The
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
 * ("vaddr n_insns count" in hex, hex, decimal; written as NAME.snap.tmp,
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

struct ent {
	uint64_t count;		/* executions; the inline add's target */
	uint64_t vaddr;
	uint32_t n_insns;
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

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct ent *e;

	if (vaddr < KERNEL_START) {
		__atomic_fetch_add(&user_tbs, 1, __ATOMIC_RELAXED);
		if (count_user)
			qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
								 &user_insns, n);
		return;
	}
	pthread_mutex_lock(&lock);
	e = lookup(vaddr, (uint32_t)n);
	translations++;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &e->count, 1);
}

struct row {
	uint64_t vaddr;
	uint64_t count;
	uint32_t n_insns;
};

/* NAME.snap: a header, then every kernel counter that has run. */
static int snapshot(const char *name)
{
	struct row *rows;
	struct chunk *c;
	size_t n = 0, i, cap;
	uint64_t user, ktotal = 0, tr;
	char tmp[4096], final[4096];
	struct timespec ts;
	FILE *f;

	clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&lock);
	user = user_insns;
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
	fprintf(f, "# kernel_insns %" PRIu64 "\n", ktotal);
	fprintf(f, "# kernel_translations %" PRIu64 "\n", tr);
	fprintf(f, "# rows %zu\n", n);
	for (i = 0; i < n; i++)
		fprintf(f, "%" PRIx64 " %" PRIx32 " %" PRIu64 "\n",
			rows[i].vaddr, rows[i].n_insns, rows[i].count);
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
