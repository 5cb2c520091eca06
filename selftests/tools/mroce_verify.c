// SPDX-License-Identifier: GPL-2.0
/*
 * mroce_verify: an RC data verifier between two RDMA devices.
 *
 *   server:  mroce_verify -d DEV [-P port]
 *   client:  mroce_verify -d DEV -c SERVER_IP [-P port] [options]
 *
 * The server adopts the client's options. Both ends create the same QPs,
 * exchange QP numbers, GIDs and memory keys over TCP, and then run rounds of
 * SEND, SEND_IMM, RDMA WRITE, WRITE_IMM, RDMA READ, CMP_SWP and FETCH_ADD in
 * each direction (both directions at once by default, one thread per role).
 * Every message's size, SGE layout, offsets, immediate and payload derive
 * from (seed, direction, round, QP, message), so the requester and the
 * responder compute the same plan independently.
 *
 * What is checked, every round:
 *   - every work request completes with success, on the right QP, in
 *     posting order (send queue and receive queue), with the right opcode;
 *   - receives: byte_len, the immediate and IBV_WC_WITH_IMM;
 *   - every byte of every buffer area: the responder's receive/write area
 *     must hold exactly the messages' data where they were aimed and the
 *     poison pattern everywhere else (no short, long or stray write); the
 *     requester's area must hold what READs returned and the atomics'
 *     original values, with its send sources untouched;
 *   - atomics: each returned original value and the final memory value
 *     against a model of the operations in order; READ sources never
 *     change (one QP's whole source area every round, in turn);
 *   - guards: every registered area lies inside a larger allocation, at a
 *     seed-chosen offset into its first page (QP 0's areas start on a page
 *     boundary), and the bytes around it -- the rest of its first and last
 *     page and one more page each side -- hold a canary pattern. A
 *     placement just outside an MR or an SGE's MR, within the pages the
 *     kernel pinned or next to them, changes a canary; they are checked
 *     after every round, and the failure names the area, the offset and
 *     this round's messages nearest to it.
 * The first mismatch ends the run with a precise message (which direction,
 * round, QP, message, operation, byte) on both ends; exit status 1.
 * Success prints a summary and exits 0. Exit status 2: usage or setup
 * error (no device, no GID, TCP), 4: nothing to test (e.g. the op list
 * needs atomics the devices do not advertise). A fatal signal (SIGSEGV,
 * SIGBUS, ...) is reported with the thread's role, round and phase, the
 * faulting ip (with its mapping and file offset), sp, address and flags,
 * to stderr and to the peer, and then kills the process as before.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "tools_common.h"

#define MAX_QP		64
#define MAX_SGE		16
#define ATOMIC_WORDS	64
#define GAP_MAX		64		/* random gap between windows */
#define PROTO_MAGIC	0x6d726f63u	/* "mroc" */
#define PROTO_VERSION	4
#define PAGE		4096u		/* guard granule (the VM's page size) */

enum op {
	OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CMP_SWP,
	OP_FETCH_ADD, OP_NR
};

static const char *const op_name[OP_NR] = {
	"SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "CMP_SWP", "FETCH_ADD",
};

static const char *const op_arg[OP_NR] = {
	"send", "send_imm", "write", "write_imm", "read", "cmp_swp", "fetch_add",
};

#define OPS_ATOMIC	((1u << OP_CMP_SWP) | (1u << OP_FETCH_ADD))
#define OPS_ALL		((1u << OP_NR) - 1)

static const uint32_t default_sizes[] = {
	0, 1, 2, 3, 7, 8, 63, 64, 65, 255, 256, 511, 1000, 1023, 1024, 1025,
	2047, 2048, 4095, 4096, 4097, 8191, 8192, 12289, 65535, 65536, 65537,
	262143, 1048576,
};

/* Options; the client sends these to the server (network order on the wire). */
struct params {
	uint32_t magic, version;
	uint32_t nqp;
	uint32_t rounds;	/* 0: until every (op, size) ran once */
	uint32_t seconds;	/* 0: no time bound */
	uint32_t ops;		/* bit mask of enum op */
	uint32_t nsizes;
	uint32_t sizes[64];
	uint32_t max_sge;
	uint32_t dirs;		/* bit 0: client -> server, bit 1: server -> client */
	uint32_t area;		/* bytes per buffer area */
	uint32_t per_round;	/* max messages per QP per round */
	uint32_t rnr_delay_ms;
	uint32_t events;
	uint32_t timeout;
	uint32_t seed_hi, seed_lo;
	uint32_t corrupt_round;	/* test the verifier: flip a byte (0 = never) */
	uint32_t guard_round;	/* test the guards: write past an area (0 = never) */
	uint32_t ack_timeout;	/* QP local ACK timeout exponent */
	uint32_t retry_cnt;
};

struct qp_info {
	uint32_t qpn, psn;
	uint64_t r_addr, s_addr, t_addr;	/* responder areas */
	uint32_t r_rkey, s_rkey, t_rkey, pad;
};

struct hello {
	uint32_t magic, version;
	uint8_t gid[16];
	uint32_t mtu;		/* enum ibv_mtu, active */
	uint32_t atomic;	/* device advertises atomics */
	uint32_t max_rd_atom;
	uint32_t max_sge, max_sge_rd, max_inline;
	uint32_t nqp;
	struct qp_info qp[MAX_QP];
};

/* Round synchronisation messages on a direction's TCP connection. */
enum { SY_ROUND = 1, SY_END, SY_READY, SY_OK, SY_FAIL };

struct sync_msg {
	uint32_t type;
	uint32_t round;
	char text[480];
};

/* One planned message. */
struct msg {
	uint8_t op;
	bool rq;		/* consumes a receive WQE */
	bool inl;		/* IBV_SEND_INLINE */
	uint32_t size;
	uint64_t key;		/* payload pattern key */
	uint32_t imm;
	uint32_t nl;		/* requester SGEs */
	uint64_t l_off[MAX_SGE];
	uint32_t l_len[MAX_SGE];
	uint64_t r_off;		/* WRITE*: in R; READ: in S; atomics: in T */
	uint32_t nr;		/* SEND*: receive SGEs (capacity >= size) */
	uint64_t rr_off[MAX_SGE];
	uint32_t rr_len[MAX_SGE];
	uint64_t swap, compare;
	uint64_t expect_orig;	/* atomics: value before the operation */
	uint64_t wr_id;		/* requester */
	uint64_t rwr_id;	/* responder receive */
};

struct qp_plan {
	uint32_t n;
	struct msg *m;
	uint64_t t_init[ATOMIC_WORDS];
	uint64_t t_final[ATOMIC_WORDS];
};

struct planner {
	uint64_t rng;
	uint32_t (*combo)[2];	/* (op, size) pairs, shuffled */
	uint32_t ncombo, cursor;
	uint32_t ops[OP_NR], nops;
};

/*
 * A registered area inside its guarded allocation: [base, area) and
 * [area + len, base + total) hold the canary pattern named key.
 */
struct guard {
	uint8_t *base;
	size_t total;
	uint8_t *area;
	size_t len;
	uint64_t key;
	uint32_t q;
	char kind;		/* 'l', 'r', 's', 't': which area of QP q */
};

/* Per QP, per role. */
struct qp_ctx {
	struct ibv_qp *qp;
	uint32_t psn;
	/* responder areas (we are responder for the peer's direction) */
	uint8_t *r, *s, *t;
	struct ibv_mr *r_mr, *s_mr, *t_mr;
	/* requester area */
	uint8_t *l;
	struct ibv_mr *l_mr;
	struct guard gl, gr, gs, gt;
	/* completion order */
	uint64_t sq_next_post, sq_next_done;
	uint64_t rq_next_post, rq_next_done;
	uint32_t sq_outstanding;
	struct qp_info peer;
};

struct dir_ctx {
	int d;			/* 0: client -> server, 1: server -> client */
	bool requester;
	int sock;
	struct planner pl;
	struct qp_plan plan[MAX_QP];
	uint8_t *scratch;
	/* where the role's thread is, for failure reports */
	volatile uint32_t round;
	const char *volatile phase;
	/* statistics */
	uint64_t msgs[OP_NR], bytes[OP_NR], rounds, verified;
};

static struct params P;
static bool is_client;
static const char *devname;
static int gid_idx = -1;
static int tcp_port = 18600;
static const char *server;
static int verbose;

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_comp_channel *sch, *rch;
static struct ibv_device_attr dattr;
static struct ibv_port_attr pattr;
static struct qp_ctx Q[MAX_QP];
static struct hello me, peer;
/* Limits both ends agree on (the plan must be the same on both). */
static uint32_t eff_sge, eff_sge_rd, eff_inline;
static uint32_t local_sge, local_inline;
static int ctl_sock;
static struct dir_ctx D[2];
static enum ibv_mtu path_mtu;
static uint32_t nrd;
static struct timespec t_start;

static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
/* The role of the calling thread (NULL: main), for crash reports. */
static __thread struct dir_ctx *my_dc;

static double elapsed(void)
{
	return tc_now_s() - (t_start.tv_sec + t_start.tv_nsec / 1e9);
}

static void send_all(int fd, const void *buf, size_t len);
static const char *dir_name(int d);

/* What each role was doing: printed with any failure. */
static void dump_state(void)
{
	uint32_t q;
	int d;

	for (d = 0; d < 2; d++) {
		if (!(P.dirs & (1u << d)) || !D[d].phase)
			continue;
		fprintf(stderr, "mroce_verify:   %s %s: round %u, %s\n",
			d ? "server->client" : "client->server",
			D[d].requester ? "requester" : "responder", D[d].round, D[d].phase);
	}
	for (q = 0; q < P.nqp && Q[q].qp; q++)
		if (Q[q].sq_next_post != Q[q].sq_next_done ||
		    Q[q].rq_next_post != Q[q].rq_next_done)
			fprintf(stderr, "mroce_verify:   QP %u (QPN %u): %" PRIu64
				" sends and %" PRIu64 " receives outstanding\n", q,
				Q[q].qp->qp_num, Q[q].sq_next_post - Q[q].sq_next_done,
				Q[q].rq_next_post - Q[q].rq_next_done);
}

/* Report the first failure on every channel and exit; later ones are muted. */
static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
	struct sync_msg m = { .type = htonl(SY_FAIL) };
	va_list ap;
	int i;

	pthread_mutex_lock(&fail_lock);
	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	fprintf(stderr, "mroce_verify: FAIL: %s\n", m.text);
	dump_state();
	fflush(stderr);
	for (i = 0; i < 2; i++)
		if (D[i].sock > 0)
			(void)!send(D[i].sock, &m, sizeof(m), MSG_NOSIGNAL);
	if (ctl_sock > 0)
		(void)!send(ctl_sock, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(1);
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mroce_verify: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* ---- crash reports ------------------------------------------------------ */

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGTRAP: return "SIGTRAP";
	case SIGABRT: return "SIGABRT";
	default: return "?";
	}
}

/*
 * The /proc/self/maps line of the mapping holding addr, into line; empty
 * if none. Only calls that are safe in a signal handler (no stdio, no
 * malloc: the heap may be what broke).
 */
static void maps_line(uintptr_t addr, char *line, size_t len)
{
	char buf[4096], *p, *nl, *e;
	size_t have = 0, n;
	ssize_t got;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	line[0] = 0;
	if (fd < 0)
		return;
	while ((got = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += got;
		buf[have] = 0;
		for (p = buf; (nl = memchr(p, '\n', buf + have - p)); p = nl + 1) {
			unsigned long lo, hi;

			*nl = 0;
			lo = strtoul(p, &e, 16);
			if (*e != '-')
				continue;
			hi = strtoul(e + 1, NULL, 16);
			if (addr < lo || addr >= hi)
				continue;
			n = strlen(p) < len - 1 ? strlen(p) : len - 1;
			memcpy(line, p, n);
			line[n] = 0;
			close(fd);
			return;
		}
		have = buf + have - p;
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)	/* a line longer than buf */
			have = 0;
	}
	close(fd);
}

/*
 * A fatal signal: say where (role, round, phase, registers, the mapping
 * of the ip with its file offset) on stderr and to the peer, then die of
 * the signal as without the handler. The CI once lost a server to a GPF
 * inside libc with nothing but the kernel's one-line trap report.
 */
static void crash_handler(int sig, siginfo_t *si, void *ucp)
{
	struct sync_msg m = { .type = htonl(SY_FAIL) };
	struct dir_ctx *dc = my_dc;
	char line[200], role[160];
	uintptr_t ip = 0;
	size_t o;
	int i;

	if (dc)
		snprintf(role, sizeof(role), "%s %s, round %u, %s", dir_name(dc->d),
			 dc->requester ? "requester" : "responder", dc->round,
			 dc->phase ? dc->phase : "starting");
	else
		snprintf(role, sizeof(role), "main thread");
	o = snprintf(m.text, sizeof(m.text), "crashed: %s (signal %d, si_code %d) in the %s, address %p",
		     sig_name(sig), sig, si->si_code, role, si->si_addr);
#ifdef __x86_64__
	{
		const greg_t *g = ((ucontext_t *)ucp)->uc_mcontext.gregs;

		ip = g[REG_RIP];
		if (o < sizeof(m.text))
			o += snprintf(m.text + o, sizeof(m.text) - o,
				      ", ip 0x%lx sp 0x%lx flags 0x%lx%s trap %ld error 0x%lx",
				      (unsigned long)g[REG_RIP], (unsigned long)g[REG_RSP],
				      (unsigned long)g[REG_EFL],
				      g[REG_EFL] & 0x100 ? " (TF set)" : "",
				      (long)g[REG_TRAPNO], (unsigned long)g[REG_ERR]);
	}
#else
	(void)ucp;
#endif
	maps_line(ip, line, sizeof(line));
	if (line[0] && o < sizeof(m.text)) {
		unsigned long lo = strtoul(line, NULL, 16), foff = 0;
		char *f = line;

		/* "lo-hi perms offset dev inode path": the file offset is field 3 */
		for (i = 0; i < 2 && f; i++)
			f = strchr(f + 1, ' ');
		if (f)
			foff = strtoul(f + 1, NULL, 16);
		o += snprintf(m.text + o, sizeof(m.text) - o, "; ip at file offset 0x%lx of: %s",
			      ip - lo + foff, line);
	}
	(void)!write(2, "mroce_verify: FAIL: ", 20);
	(void)!write(2, m.text, strnlen(m.text, sizeof(m.text)));
	(void)!write(2, "\n", 1);
	for (i = 0; i < 2; i++)
		if (D[i].sock > 0)
			(void)!send(D[i].sock, &m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT);
	if (ctl_sock > 0)
		(void)!send(ctl_sock, &m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT);
	/* SA_RESETHAND made the action the default again; SA_NODEFER lets it in. */
	raise(sig);
}

/* Each thread's handler stack: a crash may be a broken stack. */
static void crash_altstack(void)
{
	stack_t ss = { .ss_size = 65536 };

	ss.ss_sp = malloc(ss.ss_size);
	if (ss.ss_sp)
		sigaltstack(&ss, NULL);
}

static void crash_reports_on(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT };
	struct sigaction sa = { .sa_sigaction = crash_handler };
	size_t i;

	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	crash_altstack();
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* ---- patterns ---------------------------------------------------------- */

static inline uint64_t rnd(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return tc_mix64(*s);
}

static inline uint32_t rnd_below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(rnd(s) % n) : 0;
}

static uint64_t key_of(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return tc_mix64(tc_mix64(tc_mix64(tc_mix64(((uint64_t)P.seed_hi << 32 | P.seed_lo) ^ a) ^ b) ^ c) ^ d);
}

/* ---- TCP ------------------------------------------------------------------ */

static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("TCP send to the peer failed: %s", strerror(errno));
		p += n;
		len -= n;
	}
}

/* Receive exactly len bytes within tmo seconds. */
static void recv_tmo(int fd, void *buf, size_t len, const char *what, uint32_t tmo)
{
	double deadline = tc_now_s() + tmo;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *p = buf;
	ssize_t n;

	while (len) {
		int left = (int)((deadline - tc_now_s()) * 1000);

		if (left <= 0)
			fail("timed out after %u s waiting for the peer (%s)", tmo, what);
		if (poll(&pfd, 1, left) <= 0)
			continue;
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("the peer closed the connection while we waited for %s", what);
		p += n;
		len -= n;
	}
}

static void recv_all(int fd, void *buf, size_t len, const char *what)
{
	recv_tmo(fd, buf, len, what, P.timeout);
}

static void sync_send(int fd, uint32_t type, uint32_t round)
{
	struct sync_msg m = { .type = htonl(type), .round = htonl(round) };

	send_all(fd, &m, sizeof(m));
}

static __thread uint32_t last_round;

static uint32_t sync_recv_tmo(int fd, uint32_t want, uint32_t round, const char *what,
			      uint32_t tmo)
{
	struct sync_msg m;
	uint32_t type;

	recv_tmo(fd, &m, sizeof(m), what, tmo);
	type = ntohl(m.type);
	last_round = ntohl(m.round);
	if (type == SY_FAIL) {
		m.text[sizeof(m.text) - 1] = 0;
		pthread_mutex_lock(&fail_lock);
		fprintf(stderr, "mroce_verify: FAIL: the peer reported: %s\n", m.text);
		dump_state();
		_exit(1);
	}
	if (want && (type != want || ntohl(m.round) != round))
		fail("protocol error: expected message %u for round %u, got %u for %u",
		     want, round, type, ntohl(m.round));
	return type;
}

static uint32_t sync_recv(int fd, uint32_t want, uint32_t round, const char *what)
{
	return sync_recv_tmo(fd, want, round, what, P.timeout);
}

/* For waits the peer bounds itself (it reports its own timeouts). */
static uint32_t sync_recv_long(int fd, const char *what)
{
	return sync_recv_tmo(fd, 0, 0, what, 5 * P.timeout);
}

/*
 * A FAIL from the peer may arrive while we wait for completions. Anything
 * else (the responder's OK can overtake our last completions) stays queued.
 */
static void sync_peek(int fd)
{
	struct sync_msg m;

	if (fd > 0 && recv(fd, &m, sizeof(m), MSG_PEEK | MSG_DONTWAIT) == sizeof(m) &&
	    ntohl(m.type) == SY_FAIL)
		sync_recv(fd, 0, 0, "a failure report");
}

/* ---- planning ------------------------------------------------------------ */

static void planner_init(struct planner *pl, int d)
{
	uint32_t i, j, n = 0;

	pl->rng = key_of(0x504c414e, d, 0, 0);
	pl->nops = 0;
	for (i = 0; i < OP_NR; i++)
		if (P.ops & (1u << i))
			pl->ops[pl->nops++] = i;
	pl->combo = calloc((size_t)pl->nops * P.nsizes, sizeof(*pl->combo));
	for (i = 0; i < pl->nops; i++) {
		for (j = 0; j < P.nsizes; j++) {
			uint32_t op = pl->ops[i], size = P.sizes[j];

			if (op == OP_CMP_SWP || op == OP_FETCH_ADD) {
				/* always 8 bytes; a few of each, to chain the model */
				if (j >= 6)
					continue;
				size = 8;
			}
			pl->combo[n][0] = op;
			pl->combo[n][1] = size;
			n++;
		}
	}
	/* Fisher-Yates with the plan's own generator. */
	for (i = n; i > 1; i--) {
		uint32_t k = rnd_below(&pl->rng, i), t0 = pl->combo[i - 1][0], t1 = pl->combo[i - 1][1];

		pl->combo[i - 1][0] = pl->combo[k][0];
		pl->combo[i - 1][1] = pl->combo[k][1];
		pl->combo[k][0] = t0;
		pl->combo[k][1] = t1;
	}
	pl->ncombo = n;
	pl->cursor = 0;
}

static bool planner_done(const struct planner *pl)
{
	return pl->cursor >= pl->ncombo;
}

/* Split len bytes into n >= 1 non-empty pieces (n <= len). */
static void split(uint64_t *rng, uint32_t len, uint32_t n, uint32_t *out)
{
	uint32_t cuts[MAX_SGE + 1], i, j, c;

	cuts[0] = 0;
	for (i = 1; i < n; i++) {
again:
		c = 1 + rnd_below(rng, len - 1);
		for (j = 1; j < i; j++)
			if (cuts[j] == c)
				goto again;
		cuts[i] = c;
	}
	/* insertion sort, n is small */
	for (i = 2; i < n; i++)
		for (j = i; j > 1 && cuts[j - 1] > cuts[j]; j--) {
			c = cuts[j];
			cuts[j] = cuts[j - 1];
			cuts[j - 1] = c;
		}
	cuts[n] = len;
	for (i = 0; i < n; i++)
		out[i] = cuts[i + 1] - cuts[i];
}

static uint32_t pick_nsge(uint64_t *rng, uint32_t size, uint32_t max)
{
	uint32_t n;

	if (!size)
		return 0;
	n = rnd_below(rng, 2) ? 1 : 1 + rnd_below(rng, max);
	return n > size ? size : n;
}

/* Place pieces in an area at *cur with random gaps; false if it does not fit. */
static bool place(uint64_t *rng, uint64_t *cur, uint32_t n, const uint32_t *len,
		  uint64_t *off, uint32_t align)
{
	uint64_t c = *cur;
	uint32_t i;

	for (i = 0; i < n; i++) {
		c += rnd_below(rng, GAP_MAX);
		if (align)
			c = (c + align - 1) & ~(uint64_t)(align - 1);
		off[i] = c;
		c += len[i];
	}
	if (c > P.area)
		return false;
	*cur = c;
	return true;
}

/*
 * Plan round r of direction dc for every QP. Both ends call this in round
 * order with the same parameters and get the same plan.
 */
static void plan_round(struct dir_ctx *dc, uint32_t r, bool extra)
{
	struct planner *pl = &dc->pl;
	uint64_t lcur[MAX_QP] = { 0 }, rcur[MAX_QP] = { 0 };
	bool full[MAX_QP] = { false };
	struct msg *last;
	uint32_t q, nfull = 0, w;
	uint64_t rng = key_of(0x524f554e, dc->d, r, 0);

	for (q = 0; q < P.nqp; q++) {
		struct qp_plan *qp = &dc->plan[q];

		qp->n = 0;
		for (w = 0; w < ATOMIC_WORDS; w++)
			qp->t_init[w] = qp->t_final[w] = key_of(0x41544f4d, dc->d, r, q * ATOMIC_WORDS + w);
	}
	for (q = 0; nfull < P.nqp; q = (q + 1) % P.nqp) {
		struct qp_plan *qp = &dc->plan[q];
		struct msg m = { 0 };
		uint64_t lc, rc;
		uint32_t op, size;

		if (full[q])
			continue;
		if (qp->n + 1 >= P.per_round) {	/* keep a slot for the fence */
			full[q] = true, nfull++;
			continue;
		}
		if (!planner_done(pl)) {
			op = pl->combo[pl->cursor][0];
			size = pl->combo[pl->cursor][1];
		} else if (extra) {
			op = pl->ops[rnd_below(&rng, pl->nops)];
			size = (op == OP_CMP_SWP || op == OP_FETCH_ADD) ? 8 :
				P.sizes[rnd_below(&rng, P.nsizes)];
		} else {
			full[q] = true, nfull++;
			continue;
		}
		m.op = op;
		m.size = size;
		m.key = key_of(0x4d534731, dc->d, r, ((uint64_t)q << 32) | qp->n);
		m.imm = (uint32_t)tc_mix64(m.key);
		m.rq = op == OP_SEND || op == OP_SEND_IMM || op == OP_WRITE_IMM;
		lc = lcur[q];
		rc = rcur[q];
		switch (op) {
		case OP_SEND:
		case OP_SEND_IMM:
		case OP_WRITE:
		case OP_WRITE_IMM:
			m.nl = pick_nsge(&rng, size, eff_sge);
			if (m.nl)
				split(&rng, size, m.nl, m.l_len);
			if (!place(&rng, &lc, m.nl, m.l_len, m.l_off, 0))
				goto no_room;
			m.inl = size <= eff_inline && size && rnd_below(&rng, 4) == 0;
			if (op == OP_WRITE || op == OP_WRITE_IMM) {
				if (!place(&rng, &rc, 1, &size, &m.r_off, 0))
					goto no_room;
			} else {
				uint32_t cap = size + (rnd_below(&rng, 4) ? 0 : rnd_below(&rng, 100));

				m.nr = pick_nsge(&rng, cap, eff_sge);
				if (m.nr)
					split(&rng, cap, m.nr, m.rr_len);
				if (!place(&rng, &rc, m.nr, m.rr_len, m.rr_off, 0))
					goto no_room;
			}
			break;
		case OP_READ:
			m.nl = pick_nsge(&rng, size, eff_sge_rd);
			if (m.nl)
				split(&rng, size, m.nl, m.l_len);
			if (!place(&rng, &lc, m.nl, m.l_len, m.l_off, 0))
				goto no_room;
			m.r_off = rnd_below(&rng, P.area - size + 1);
			break;
		case OP_CMP_SWP:
		case OP_FETCH_ADD:
			m.nl = 1;
			m.l_len[0] = 8;
			if (!place(&rng, &lc, 1, m.l_len, m.l_off, 8))
				goto no_room;
			w = rnd_below(&rng, ATOMIC_WORDS);
			m.r_off = (uint64_t)w * 8;
			m.expect_orig = qp->t_final[w];
			if (op == OP_FETCH_ADD) {
				m.swap = rnd(&rng);
				qp->t_final[w] += m.swap;
			} else {
				m.swap = rnd(&rng);
				m.compare = rnd_below(&rng, 2) ? qp->t_final[w] : rnd(&rng);
				if (m.compare == qp->t_final[w])
					qp->t_final[w] = m.swap;
			}
			break;
		}
		lcur[q] = lc;
		rcur[q] = rc;
		qp->m[qp->n++] = m;
		if (!planner_done(pl))
			pl->cursor++;
		continue;
no_room:
		if (!qp->n && !full[q]) {
			/* An empty QP could not take it: no QP ever will. */
			fail("message %s of %u bytes does not fit a %u-byte area (-a)",
			     op_name[op], size, P.area);
		}
		full[q] = true, nfull++;
	}
	/* Every QP with traffic ends on a receive-consuming message: the fence. */
	for (q = 0; q < P.nqp; q++) {
		struct qp_plan *qp = &dc->plan[q];

		if (!qp->n)
			continue;
		last = &qp->m[qp->n - 1];
		if (last->rq)
			continue;
		last = &qp->m[qp->n++];
		memset(last, 0, sizeof(*last));
		last->op = OP_SEND;
		last->rq = true;
		last->size = 0;
		last->key = key_of(0x46454e43, dc->d, r, q);
	}
}

/* ---- verbs setup --------------------------------------------------------- */

static void *area_alloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len))
		die("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

static const char *guard_name(char kind)
{
	switch (kind) {
	case 'l': return "requester area";
	case 'r': return "receive/write area";
	case 's': return "READ source area";
	default: return "atomic area";
	}
}

/*
 * Allocate a guarded area of len bytes for QP q: it starts at a seed-chosen
 * offset into a page (a multiple of align; 0 for QP 0, whose areas stay
 * page-aligned), with canary bytes from one page before it to one page
 * past the page it ends in. The canaries are the bytes a placement that
 * misses its range by a little (a wrong page offset, an off-by-one page
 * index, an SGE end rounded up) would hit, inside the pinned pages or
 * next to them.
 */
static void guard_alloc(struct guard *g, size_t len, uint32_t q, char kind, uint32_t align)
{
	uint64_t off = 0;

	g->q = q;
	g->kind = kind;
	g->len = len;
	g->key = key_of(0x47554152, is_client, q, (uint64_t)kind);
	if (q)
		off = (1 + g->key % (PAGE - 1)) / align * align;
	g->total = PAGE + ((off + len + PAGE - 1) / PAGE) * PAGE + PAGE;
	g->base = area_alloc(g->total);
	g->area = g->base + PAGE + off;
	tc_pat_fill(g->base, g->area - g->base, g->key, 0);
	tc_pat_fill(g->area + len, g->base + g->total - (g->area + len), g->key,
		    g->area + len - g->base);
}

/* Offset x from range [a, a + n): 0 inside it. */
static uint64_t range_dist(int64_t x, uint64_t a, uint64_t n)
{
	if (x < (int64_t)a)
		return a - x;
	if (x >= (int64_t)(a + n))
		return x - (a + n) + 1;
	return 0;
}

static void add_range(uint64_t *a, uint64_t *n, uint32_t *c, uint64_t off, uint64_t len)
{
	a[*c] = off;
	n[*c] = len;
	(*c)++;
}

/* The message ranges of dc's round plan for QP q in an area of kind k. */
static uint32_t msg_ranges(struct dir_ctx *dc, uint32_t q, char k, uint32_t i,
			   uint64_t *a, uint64_t *n)
{
	struct msg *m = &dc->plan[q].m[i];
	uint32_t j, c = 0;

	switch (k) {
	case 'l':
		for (j = 0; j < m->nl; j++)
			add_range(a, n, &c, m->l_off[j], m->l_len[j]);
		break;
	case 'r':
		if (m->op == OP_WRITE || m->op == OP_WRITE_IMM)
			add_range(a, n, &c, m->r_off, m->size);
		for (j = 0; j < m->nr; j++)
			add_range(a, n, &c, m->rr_off[j], m->rr_len[j]);
		break;
	case 's':
		if (m->op == OP_READ)
			add_range(a, n, &c, m->r_off, m->size);
		break;
	default:
		if (m->op == OP_CMP_SWP || m->op == OP_FETCH_ADD)
			add_range(a, n, &c, m->r_off, 8);
		break;
	}
	return c;
}

/*
 * Check g's canaries; on damage, name the area, where (relative to the
 * area's first byte) and this round's messages of dc nearest to it.
 */
static void guard_check(struct guard *g, struct dir_ctx *dc, uint32_t r)
{
	uint8_t want[PAGE];
	uint64_t pos, n, k, nbad = 0, near_d[4];
	int64_t first = 0, last = 0, x;
	uint8_t got_b = 0, want_b = 0;
	uint32_t near_i[4], nn = 0, i, j, c;
	char hist[400] = "", where[64];
	size_t o = 0;

	for (pos = 0; pos < g->total; pos += n) {
		uint8_t *p = g->base + pos;

		if (p == g->area) {
			n = g->len;
			continue;
		}
		n = p < g->area ? (uint64_t)(g->area - p) : g->total - pos;
		if (n > PAGE)
			n = PAGE;
		tc_pat_fill(want, n, g->key, pos);
		if (!memcmp(p, want, n))
			continue;
		for (k = 0; k < n; k++) {
			if (p[k] == want[k])
				continue;
			x = (int64_t)(p + k - g->area);
			if (!nbad++) {
				first = x;
				got_b = p[k];
				want_b = want[k];
			}
			last = x;
		}
	}
	if (!nbad)
		return;
	/* The (up to) four messages of this round nearest to the first damage. */
	for (i = 0; dc && i < dc->plan[g->q].n; i++) {
		uint64_t a[MAX_SGE + 1], len[MAX_SGE + 1], d = UINT64_MAX;

		c = msg_ranges(dc, g->q, g->kind, i, a, len);
		for (j = 0; j < c; j++)
			if (range_dist(first, a[j], len[j]) < d)
				d = range_dist(first, a[j], len[j]);
		if (d == UINT64_MAX)
			continue;
		if (nn == 4 && d >= near_d[3])
			continue;
		if (nn < 4)
			nn++;
		for (j = nn - 1; j > 0 && near_d[j - 1] > d; j--) {
			near_d[j] = near_d[j - 1];
			near_i[j] = near_i[j - 1];
		}
		near_d[j] = d;
		near_i[j] = i;
	}
	for (j = 0; j < nn && o < sizeof(hist); j++) {
		struct msg *m = &dc->plan[g->q].m[near_i[j]];
		uint64_t a[MAX_SGE + 1], len[MAX_SGE + 1];

		c = msg_ranges(dc, g->q, g->kind, near_i[j], a, len);
		o += snprintf(hist + o, sizeof(hist) - o, "%s msg %u %s %u B", j ? ";" : "",
			      near_i[j], op_name[m->op], m->size);
		for (i = 0; i < c && o < sizeof(hist); i++)
			o += snprintf(hist + o, sizeof(hist) - o, " [%" PRIu64 ",%" PRIu64 ")",
				      a[i], a[i] + len[i]);
	}
	if (dc)
		snprintf(where, sizeof(where), "%s round %u", dir_name(dc->d), r);
	else
		snprintf(where, sizeof(where), "after the last round");
	fail("%s QP %u: guard bytes around the %s (%zu B at page offset %u) changed: "
	     "%" PRIu64 " bytes from offset %" PRId64 " to %" PRId64 " (%s), first 0x%02x, expected 0x%02x; "
	     "this round's nearest messages:%s",
	     where, g->q, guard_name(g->kind), g->len,
	     (unsigned int)((uintptr_t)g->area % PAGE), nbad, first, last,
	     first < 0 ? "before the area" : "past its end", got_b, want_b,
	     nn ? hist : " none");
}

static struct ibv_mr *reg(void *addr, size_t len, int access, const char *what)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);

	if (!mr)
		die("ibv_reg_mr(%s, %zu bytes) failed: %s", what, len, strerror(errno));
	return mr;
}

static void open_device(void)
{
	ctx = tc_open_device(devname);
	if (ibv_query_device(ctx, &dattr) || ibv_query_port(ctx, 1, &pattr))
		die("cannot query %s", devname);
	if (pattr.state != IBV_PORT_ACTIVE)
		die("%s port 1 is not active", devname);
	if (gid_idx < 0)
		gid_idx = tc_find_ipv4_gid(ctx, pattr.gid_tbl_len);
	if (gid_idx < 0)
		die("%s has no IPv4 GID; give one with -g", devname);
	if (ibv_query_gid(ctx, 1, gid_idx, (union ibv_gid *)me.gid))
		die("cannot read GID %d of %s", gid_idx, devname);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
}

static void create_resources(void)
{
	struct ibv_qp_init_attr ia = { 0 };
	uint32_t q, sqd = 128, cqe;
	uint64_t rng = key_of(0x50534e, is_client, 0, 0);

	cqe = P.nqp * (sqd + P.per_round + 2);
	if (P.events) {
		sch = ibv_create_comp_channel(ctx);
		rch = ibv_create_comp_channel(ctx);
		if (!sch || !rch)
			die("ibv_create_comp_channel: %s", strerror(errno));
	}
	scq = ibv_create_cq(ctx, cqe, NULL, sch, 0);
	rcq = ibv_create_cq(ctx, cqe, NULL, rch, 0);
	if (!scq || !rcq)
		die("ibv_create_cq(%u): %s", cqe, strerror(errno));
	if (P.events && (ibv_req_notify_cq(scq, 0) || ibv_req_notify_cq(rcq, 0)))
		die("ibv_req_notify_cq failed");

	ia.send_cq = scq;
	ia.recv_cq = rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = 1;
	ia.cap.max_send_wr = sqd;
	ia.cap.max_recv_wr = P.per_round + 2;
	ia.cap.max_send_sge = local_sge;
	ia.cap.max_recv_sge = local_sge;
	for (q = 0; q < P.nqp; q++) {
		struct qp_ctx *c = &Q[q];

		ia.cap.max_inline_data = 128;
		c->qp = ibv_create_qp(pd, &ia);
		if (!c->qp) {
			ia.cap.max_inline_data = 0;
			c->qp = ibv_create_qp(pd, &ia);
		}
		if (!c->qp)
			die("ibv_create_qp: %s", strerror(errno));
		local_inline = ia.cap.max_inline_data;
		c->psn = rnd(&rng) & 0xffffff;
		guard_alloc(&c->gl, P.area, q, 'l', 1);
		guard_alloc(&c->gr, P.area, q, 'r', 1);
		guard_alloc(&c->gs, P.area, q, 's', 1);
		guard_alloc(&c->gt, ATOMIC_WORDS * 8, q, 't', 8);
		c->l = c->gl.area;
		c->r = c->gr.area;
		c->s = c->gs.area;
		c->t = c->gt.area;
		c->l_mr = reg(c->l, P.area, IBV_ACCESS_LOCAL_WRITE, "requester area");
		c->r_mr = reg(c->r, P.area, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			      "receive/write area");
		c->s_mr = reg(c->s, P.area, IBV_ACCESS_REMOTE_READ, "read source");
		c->t_mr = reg(c->t, ATOMIC_WORDS * 8,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, "atomic area");
		/* READ sources: fixed for the whole run. */
		tc_pat_fill(c->s, P.area, key_of(0x53524331, is_client, q, 0), 0);

		me.qp[q].qpn = htonl(c->qp->qp_num);
		me.qp[q].psn = htonl(c->psn);
		me.qp[q].r_addr = htobe64((uintptr_t)c->r);
		me.qp[q].s_addr = htobe64((uintptr_t)c->s);
		me.qp[q].t_addr = htobe64((uintptr_t)c->t);
		me.qp[q].r_rkey = htonl(c->r_mr->rkey);
		me.qp[q].s_rkey = htonl(c->s_mr->rkey);
		me.qp[q].t_rkey = htonl(c->t_mr->rkey);
	}
}

static void connect_qps(void)
{
	uint32_t q;

	for (q = 0; q < P.nqp; q++) {
		struct qp_ctx *c = &Q[q];
		struct tc_rc_attr r = { 0 };
		const char *step;
		int err;

		c->peer.qpn = ntohl(peer.qp[q].qpn);
		c->peer.psn = ntohl(peer.qp[q].psn);
		c->peer.r_addr = be64toh(peer.qp[q].r_addr);
		c->peer.s_addr = be64toh(peer.qp[q].s_addr);
		c->peer.t_addr = be64toh(peer.qp[q].t_addr);
		c->peer.r_rkey = ntohl(peer.qp[q].r_rkey);
		c->peer.s_rkey = ntohl(peer.qp[q].s_rkey);
		c->peer.t_rkey = ntohl(peer.qp[q].t_rkey);

		r.mtu = path_mtu;
		r.dest_qpn = c->peer.qpn;
		r.rq_psn = c->peer.psn;
		r.sq_psn = c->psn;
		memcpy(r.dgid, peer.gid, 16);
		r.sgid_index = gid_idx;
		r.rd_atomic = nrd;
		r.min_rnr_timer = 1;	/* 0.01 ms: RNR rounds stay short */
		r.timeout = P.ack_timeout;
		r.retry_cnt = P.retry_cnt;
		r.rnr_retry = 7;	/* infinite: RNR rounds must not fail the QP */
		err = tc_qp_to_rts(c->qp, &r, &step);
		if (err)
			die("QP %u to %s: %s", q, step, strerror(err));
	}
}

/* ---- completions --------------------------------------------------------- */

static int qp_index(uint32_t qpn)
{
	uint32_t q;

	for (q = 0; q < P.nqp; q++)
		if (Q[q].qp->qp_num == qpn)
			return (int)q;
	return -1;
}

static const char *dir_name(int d)
{
	return d ? "server->client" : "client->server";
}

/*
 * Poll up to max completions from cq, waiting at most until deadline (in
 * event mode on the channel). Returns the number polled (0 on timeout).
 */
static int get_wcs(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct ibv_wc *wc,
		   int max, double deadline, int sock)
{
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, max, wc);
		if (n < 0)
			fail("ibv_poll_cq failed");
		if (n)
			return n;
		if (tc_now_s() > deadline)
			return 0;
		sync_peek(sock);
		if (ch) {
			struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
			struct ibv_cq *ev_cq;
			void *ev_ctx;

			if (poll(&pfd, 1, 100) <= 0)
				continue;
			if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
				fail("ibv_get_cq_event failed");
			ibv_ack_cq_events(ev_cq, 1);
			if (ibv_req_notify_cq(ev_cq, 0))
				fail("ibv_req_notify_cq failed");
		} else {
			sched_yield();
		}
	}
}

static enum ibv_wc_opcode wc_opcode_of(uint8_t op)
{
	switch (op) {
	case OP_SEND:
	case OP_SEND_IMM:
		return IBV_WC_SEND;
	case OP_WRITE:
	case OP_WRITE_IMM:
		return IBV_WC_RDMA_WRITE;
	case OP_READ:
		return IBV_WC_RDMA_READ;
	case OP_CMP_SWP:
		return IBV_WC_COMP_SWAP;
	default:
		return IBV_WC_FETCH_ADD;
	}
}

static const char *wc_op_str(enum ibv_wc_opcode o)
{
	switch (o) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "?";
	}
}

/* ---- requester ----------------------------------------------------------- */

static void post_msg(struct dir_ctx *dc, uint32_t q, struct msg *m, uint32_t r)
{
	struct qp_ctx *c = &Q[q];
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr = { 0 }, *bad;
	uint32_t i;
	int err;

	for (i = 0; i < m->nl; i++) {
		sge[i].addr = (uintptr_t)c->l + m->l_off[i];
		sge[i].length = m->l_len[i];
		sge[i].lkey = c->l_mr->lkey;
	}
	wr.wr_id = m->wr_id = c->sq_next_post++;
	wr.sg_list = m->nl ? sge : NULL;
	wr.num_sge = m->nl;
	if (m->inl)
		wr.send_flags |= IBV_SEND_INLINE;
	switch (m->op) {
	case OP_SEND:
		wr.opcode = IBV_WR_SEND;
		break;
	case OP_SEND_IMM:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(m->imm);
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		wr.opcode = m->op == OP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl(m->imm);
		wr.wr.rdma.remote_addr = c->peer.r_addr + m->r_off;
		wr.wr.rdma.rkey = c->peer.r_rkey;
		break;
	case OP_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = c->peer.s_addr + m->r_off;
		wr.wr.rdma.rkey = c->peer.s_rkey;
		break;
	case OP_CMP_SWP:
	case OP_FETCH_ADD:
		wr.opcode = m->op == OP_CMP_SWP ? IBV_WR_ATOMIC_CMP_AND_SWP :
						  IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = c->peer.t_addr + m->r_off;
		wr.wr.atomic.rkey = c->peer.t_rkey;
		wr.wr.atomic.compare_add = m->op == OP_CMP_SWP ? m->compare : m->swap;
		wr.wr.atomic.swap = m->swap;
		break;
	}
	err = ibv_post_send(c->qp, &wr, &bad);
	if (err)
		fail("%s round %u QP %u: ibv_post_send(%s, %u bytes, %u SGEs%s) failed: %s",
		     dir_name(dc->d), r, q, op_name[m->op], m->size, m->nl,
		     m->inl ? ", inline" : "", strerror(err));
	c->sq_outstanding++;
}

static struct msg *find_by_wrid(struct dir_ctx *dc, uint32_t q, uint64_t wr_id)
{
	struct qp_plan *qp = &dc->plan[q];
	uint32_t i;

	for (i = 0; i < qp->n; i++)
		if (qp->m[i].wr_id == wr_id)
			return &qp->m[i];
	return NULL;
}

static void describe_outstanding(struct dir_ctx *dc, char *buf, size_t len)
{
	size_t o = 0;
	uint32_t q;

	for (q = 0; q < P.nqp && o < len; q++) {
		struct qp_ctx *c = &Q[q];
		struct msg *m;

		if (c->sq_next_done == c->sq_next_post)
			continue;
		m = find_by_wrid(dc, q, c->sq_next_done);
		o += snprintf(buf + o, len - o, " QP %u: %" PRIu64 " outstanding, oldest %s %u B;",
			      q, c->sq_next_post - c->sq_next_done,
			      m ? op_name[m->op] : "?", m ? m->size : 0);
	}
}

static void requester_complete(struct dir_ctx *dc, uint32_t r, struct ibv_wc *wc)
{
	int q = qp_index(wc->qp_num);
	struct qp_ctx *c;
	struct msg *m;

	if (q < 0)
		fail("%s round %u: send completion for unknown QPN %u", dir_name(dc->d), r,
		     wc->qp_num);
	c = &Q[q];
	m = find_by_wrid(dc, q, wc->wr_id);
	if (wc->status != IBV_WC_SUCCESS)
		fail("%s round %u QP %d: %s of %u bytes (wr_id %" PRIu64 ") completed with %s (%d), vendor_err 0x%x",
		     dir_name(dc->d), r, q, m ? op_name[m->op] : "?", m ? m->size : 0,
		     (uint64_t)wc->wr_id, ibv_wc_status_str(wc->status), wc->status,
		     wc->vendor_err);
	if (wc->wr_id != c->sq_next_done)
		fail("%s round %u QP %d: send completion out of order: wr_id %" PRIu64
		     ", expected %" PRIu64, dir_name(dc->d), r, q, (uint64_t)wc->wr_id,
		     c->sq_next_done);
	if (!m)
		fail("%s round %u QP %d: completion for wr_id %" PRIu64 " that was never posted",
		     dir_name(dc->d), r, q, (uint64_t)wc->wr_id);
	if (wc->opcode != wc_opcode_of(m->op))
		fail("%s round %u QP %d: %s (wr_id %" PRIu64 ") completed as opcode %s (%d)",
		     dir_name(dc->d), r, q, op_name[m->op], (uint64_t)wc->wr_id,
		     wc_op_str(wc->opcode), wc->opcode);
	if ((m->op == OP_CMP_SWP || m->op == OP_FETCH_ADD) && wc->byte_len != 8)
		fail("%s round %u QP %d: %s completion byte_len %u, expected 8",
		     dir_name(dc->d), r, q, op_name[m->op], wc->byte_len);
	c->sq_next_done++;
	c->sq_outstanding--;
}

static void requester_drain(struct dir_ctx *dc, uint32_t r, uint32_t q_want, uint32_t limit)
{
	struct ibv_wc wc[32];
	double deadline = tc_now_s() + P.timeout;
	int n, i;

	for (;;) {
		uint32_t q, busy = 0;

		if (q_want < P.nqp) {
			if (Q[q_want].sq_outstanding <= limit)
				return;
		} else {
			for (q = 0; q < P.nqp; q++)
				busy += Q[q].sq_outstanding;
			if (!busy)
				return;
		}
		n = get_wcs(scq, sch, wc, 32, deadline, dc->sock);
		if (!n) {
			char buf[400] = "";

			describe_outstanding(dc, buf, sizeof(buf));
			fail("%s round %u: no send completion for %u s;%s", dir_name(dc->d), r,
			     P.timeout, buf);
		}
		for (i = 0; i < n; i++)
			requester_complete(dc, r, &wc[i]);
		deadline = tc_now_s() + P.timeout;
	}
}

/* Byte of a message that SGE list (@offs, @lens, @n) puts at area offset @a, or -1. */
static int64_t sge_byte(const uint64_t *offs, const uint32_t *lens, uint32_t n, uint64_t a)
{
	uint64_t pos = 0;
	uint32_t j;

	for (j = 0; j < n; j++) {
		if (a >= offs[j] && a < offs[j] + lens[j])
			return pos + a - offs[j];
		pos += lens[j];
	}
	return -1;
}

/*
 * Name the first wrong byte of QP q's requester (@local) or responder area
 * in the words of the message that put it there: the requester's SGEs
 * (send sources, READ and atomic results), the responder's WRITE targets
 * and receive SGEs; a byte no message covers is a stray write.
 */
static void __attribute__((noreturn)) blame(struct dir_ctx *dc, uint32_t r, uint32_t q,
					    bool local, uint64_t off, uint8_t got, uint8_t want,
					    uint64_t nbad)
{
	struct qp_plan *qp = &dc->plan[q];
	uint32_t i;
	int64_t b;

	for (i = 0; i < qp->n; i++) {
		struct msg *m = &qp->m[i];

		if (local && (b = sge_byte(m->l_off, m->l_len, m->nl, off)) >= 0) {
			const char *what = m->op == OP_READ ? "data the READ returned" :
				(m->op == OP_CMP_SWP || m->op == OP_FETCH_ADD) ?
				"original value the atomic returned" :
				"send source (must not change)";

			fail("%s round %u QP %u msg %u: %s of %u bytes (%u SGEs, wr_id %" PRIu64
			     ", remote offset %" PRIu64 "): byte %" PRId64 " of the %s is 0x%02x, expected 0x%02x (%" PRIu64 " wrong bytes in the requester area)",
			     dir_name(dc->d), r, q, i, op_name[m->op], m->size, m->nl,
			     m->wr_id, m->r_off, b, what, got, want, nbad);
		}
		if (local)
			continue;
		if ((m->op == OP_WRITE || m->op == OP_WRITE_IMM) &&
		    off >= m->r_off && off < m->r_off + m->size)
			fail("%s round %u QP %u msg %u: %s of %u bytes to offset %" PRIu64
			     " (%u SGEs%s): byte %" PRIu64 " is 0x%02x, expected 0x%02x (%" PRIu64 " wrong bytes in the responder area)",
			     dir_name(dc->d), r, q, i, op_name[m->op], m->size, m->r_off, m->nl,
			     m->inl ? ", inline" : "", off - m->r_off, got, want, nbad);
		b = sge_byte(m->rr_off, m->rr_len, m->nr, off);
		if (b >= 0)
			fail("%s round %u QP %u msg %u: %s of %u bytes (%u send SGEs%s, %u receive SGEs): %s %" PRId64 " is 0x%02x, expected 0x%02x (%" PRIu64 " wrong bytes in the responder area)",
			     dir_name(dc->d), r, q, i, op_name[m->op], m->size, m->nl,
			     m->inl ? ", inline" : "", m->nr,
			     b < m->size ? "byte" : "receive buffer byte (past the message end, must stay untouched)",
			     b, got, want, nbad);
	}
	fail("%s round %u QP %u: %s area offset %" PRIu64
	     " (outside every message) is 0x%02x, expected the poison 0x%02x: stray write (%" PRIu64 " wrong bytes)",
	     dir_name(dc->d), r, q, local ? "requester" : "responder", off, got, want, nbad);
}

/* Compare an area against the expected image; blame the first difference. */
static void compare_area(struct dir_ctx *dc, uint32_t r, uint32_t q, bool local,
			 const uint8_t *got, const uint8_t *want, uint64_t len)
{
	uint64_t i, nbad = 0, first = 0;

	if (!memcmp(got, want, len))
		return;
	for (i = 0; i < len; i++)
		if (got[i] != want[i]) {
			if (!nbad)
				first = i;
			nbad++;
		}
	blame(dc, r, q, local, first, got[first], want[first], nbad);
}

static void requester_verify(struct dir_ctx *dc, uint32_t r, uint32_t q)
{
	struct qp_plan *qp = &dc->plan[q];
	struct qp_ctx *c = &Q[q];
	uint8_t *img = dc->scratch;
	uint64_t poison = key_of(0x4c504f49, dc->d, r, q);
	uint32_t i, j;
	uint64_t pos;

	tc_pat_fill(img, P.area, poison, 0);
	for (i = 0; i < qp->n; i++) {
		struct msg *m = &qp->m[i];

		pos = 0;
		for (j = 0; j < m->nl; j++) {
			if (m->op == OP_READ)
				tc_pat_fill(img + m->l_off[j], m->l_len[j],
					 key_of(0x53524331, dc->d, q, 0), m->r_off + pos);
			else if (m->op == OP_CMP_SWP || m->op == OP_FETCH_ADD)
				memcpy(img + m->l_off[j], &m->expect_orig, 8);
			else
				tc_pat_fill(img + m->l_off[j], m->l_len[j], m->key, pos);
			pos += m->l_len[j];
		}
	}
	compare_area(dc, r, q, true, c->l, img, P.area);
}

static void requester_round(struct dir_ctx *dc, uint32_t r)
{
	uint32_t q, i, left, total = 0;
	uint64_t poison;

	/* Poison our area and write the send sources before the round starts. */
	for (q = 0; q < P.nqp; q++) {
		struct qp_plan *qp = &dc->plan[q];
		struct qp_ctx *c = &Q[q];

		poison = key_of(0x4c504f49, dc->d, r, q);
		tc_pat_fill(c->l, P.area, poison, 0);
		for (i = 0; i < qp->n; i++) {
			struct msg *m = &qp->m[i];
			uint64_t pos = 0;
			uint32_t j;

			if (m->op == OP_READ || m->op == OP_CMP_SWP || m->op == OP_FETCH_ADD)
				continue;
			for (j = 0; j < m->nl; j++) {
				tc_pat_fill(c->l + m->l_off[j], m->l_len[j], m->key, pos);
				pos += m->l_len[j];
			}
		}
		total += qp->n;
	}
	dc->round = r;
	dc->phase = "waiting for the responder to get ready";
	sync_send(dc->sock, SY_ROUND, r);
	sync_recv(dc->sock, SY_READY, r, "the responder to get ready");
	dc->phase = "posting";

	/* Interleave the QPs, one message at a time, as the SQs allow. */
	for (i = 0, left = total; left; i++) {
		for (q = 0; q < P.nqp; q++) {
			struct qp_plan *qp = &dc->plan[q];

			if (i >= qp->n)
				continue;
			if (Q[q].sq_outstanding >= 120)
				requester_drain(dc, r, q, 100);
			post_msg(dc, q, &qp->m[i], r);
			dc->msgs[qp->m[i].op]++;
			dc->bytes[qp->m[i].op] += qp->m[i].size;
			left--;
		}
	}
	dc->phase = "waiting for the last send completions";
	requester_drain(dc, r, P.nqp, 0);
	dc->phase = "verifying the requester area";
	for (q = 0; q < P.nqp; q++) {
		requester_verify(dc, r, q);
		guard_check(&Q[q].gl, dc, r);
	}
	dc->phase = "waiting for the responder's verdict";
	sync_recv(dc->sock, SY_OK, r, "the responder's verdict");
	dc->phase = "planning the next round";
	dc->rounds++;
}

static void *requester_thread(void *arg)
{
	struct dir_ctx *dc = arg;
	double t_end = P.seconds ? tc_now_s() + P.seconds : 0, t_report = tc_now_s() + 5;
	uint32_t r;

	my_dc = dc;
	crash_altstack();

	for (r = 0;; r++) {
		bool extra = P.rounds || P.seconds;

		if (P.rounds && r >= P.rounds)
			break;
		if (!P.rounds && !P.seconds && planner_done(&dc->pl))
			break;
		if (P.seconds && tc_now_s() >= t_end && planner_done(&dc->pl))
			break;
		plan_round(dc, r, extra);
		requester_round(dc, r);
		if (verbose || tc_now_s() >= t_report) {
			uint64_t m = 0, b = 0;
			int i;

			for (i = 0; i < OP_NR; i++)
				m += dc->msgs[i], b += dc->bytes[i];
			printf("mroce_verify: %s: round %u done, %" PRIu64 " messages, %.1f MiB verified, %.1f s\n",
			       dir_name(dc->d), r, m, b / 1048576.0, elapsed());
			fflush(stdout);
			t_report = tc_now_s() + 5;
		}
	}
	sync_send(dc->sock, SY_END, r);
	return NULL;
}

/* ---- responder ----------------------------------------------------------- */

static void post_recvs(struct dir_ctx *dc, uint32_t r)
{
	uint32_t q, i, j;

	for (q = 0; q < P.nqp; q++) {
		struct qp_plan *qp = &dc->plan[q];
		struct qp_ctx *c = &Q[q];

		for (i = 0; i < qp->n; i++) {
			struct msg *m = &qp->m[i];
			struct ibv_sge sge[MAX_SGE];
			struct ibv_recv_wr wr = { 0 }, *bad;
			int err;

			if (!m->rq)
				continue;
			for (j = 0; j < m->nr; j++) {
				sge[j].addr = (uintptr_t)c->r + m->rr_off[j];
				sge[j].length = m->rr_len[j];
				sge[j].lkey = c->r_mr->lkey;
			}
			wr.wr_id = m->rwr_id = c->rq_next_post++;
			wr.sg_list = m->nr ? sge : NULL;
			wr.num_sge = m->nr;
			err = ibv_post_recv(c->qp, &wr, &bad);
			if (err)
				fail("%s round %u QP %u: ibv_post_recv(%u SGEs) failed: %s",
				     dir_name(dc->d), r, q, m->nr, strerror(err));
		}
	}
}

static void responder_prepare(struct dir_ctx *dc, uint32_t r)
{
	uint32_t q;

	for (q = 0; q < P.nqp; q++) {
		struct qp_plan *qp = &dc->plan[q];
		struct qp_ctx *c = &Q[q];

		tc_pat_fill(c->r, P.area, key_of(0x52504f49, dc->d, r, q), 0);
		memcpy(c->t, qp->t_init, sizeof(qp->t_init));
	}
}

static struct msg *find_by_rwrid(struct dir_ctx *dc, uint32_t q, uint64_t wr_id)
{
	struct qp_plan *qp = &dc->plan[q];
	uint32_t i;

	for (i = 0; i < qp->n; i++)
		if (qp->m[i].rq && qp->m[i].rwr_id == wr_id)
			return &qp->m[i];
	return NULL;
}

static void responder_complete(struct dir_ctx *dc, uint32_t r, struct ibv_wc *wc)
{
	int q = qp_index(wc->qp_num);
	bool imm;
	struct qp_ctx *c;
	struct msg *m;
	enum ibv_wc_opcode want;

	if (q < 0)
		fail("%s round %u: receive completion for unknown QPN %u", dir_name(dc->d), r,
		     wc->qp_num);
	c = &Q[q];
	m = find_by_rwrid(dc, q, wc->wr_id);
	if (wc->status != IBV_WC_SUCCESS)
		fail("%s round %u QP %d: receive for %s of %u bytes (wr_id %" PRIu64 ") completed with %s (%d)",
		     dir_name(dc->d), r, q, m ? op_name[m->op] : "?", m ? m->size : 0,
		     (uint64_t)wc->wr_id, ibv_wc_status_str(wc->status), wc->status);
	if (wc->wr_id != c->rq_next_done)
		fail("%s round %u QP %d: receive completion out of order: wr_id %" PRIu64
		     ", expected %" PRIu64, dir_name(dc->d), r, q, (uint64_t)wc->wr_id,
		     c->rq_next_done);
	if (!m)
		fail("%s round %u QP %d: receive completion for wr_id %" PRIu64 " never posted",
		     dir_name(dc->d), r, q, (uint64_t)wc->wr_id);
	want = m->op == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	if (wc->opcode != want)
		fail("%s round %u QP %d: %s arrived as %s (%d), expected %s",
		     dir_name(dc->d), r, q, op_name[m->op], wc_op_str(wc->opcode),
		     wc->opcode, wc_op_str(want));
	if (wc->byte_len != m->size)
		fail("%s round %u QP %d: %s of %u bytes (wr_id %" PRIu64 ") arrived with byte_len %u",
		     dir_name(dc->d), r, q, op_name[m->op], m->size, (uint64_t)wc->wr_id,
		     wc->byte_len);
	imm = m->op == OP_SEND_IMM || m->op == OP_WRITE_IMM;
	if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != imm)
		fail("%s round %u QP %d: %s arrived %s IBV_WC_WITH_IMM",
		     dir_name(dc->d), r, q, op_name[m->op], imm ? "without" : "with");
	if (imm && ntohl(wc->imm_data) != m->imm)
		fail("%s round %u QP %d: %s immediate is 0x%08x, expected 0x%08x",
		     dir_name(dc->d), r, q, op_name[m->op], ntohl(wc->imm_data), m->imm);
	c->rq_next_done++;
}

static void responder_verify(struct dir_ctx *dc, uint32_t r, uint32_t q)
{
	struct qp_plan *qp = &dc->plan[q];
	struct qp_ctx *c = &Q[q];
	uint8_t *img = dc->scratch;
	uint32_t i, j, w;
	uint64_t pos, v;

	tc_pat_fill(img, P.area, key_of(0x52504f49, dc->d, r, q), 0);
	for (i = 0; i < qp->n; i++) {
		struct msg *m = &qp->m[i];

		if (m->op == OP_WRITE || m->op == OP_WRITE_IMM)
			tc_pat_fill(img + m->r_off, m->size, m->key, 0);
		pos = 0;
		for (j = 0; j < m->nr && pos < m->size; j++) {
			uint64_t n = m->size - pos < m->rr_len[j] ? m->size - pos : m->rr_len[j];

			tc_pat_fill(img + m->rr_off[j], n, m->key, pos);
			pos += n;
		}
	}
	compare_area(dc, r, q, false, c->r, img, P.area);
	for (w = 0; w < ATOMIC_WORDS; w++) {
		memcpy(&v, c->t + w * 8, 8);
		if (v != qp->t_final[w])
			fail("%s round %u QP %u: atomic word %u holds 0x%016" PRIx64
			     ", expected 0x%016" PRIx64 " after this round's atomics",
			     dir_name(dc->d), r, q, w, v, qp->t_final[w]);
	}
}

/*
 * -X: damage one byte the way a buggy transport would (in the middle of the
 * largest message that landed in the responder area), so the selftest can
 * prove the verifier notices.
 */
static void corrupt_one(struct dir_ctx *dc)
{
	uint32_t q, i, best_q = 0, best_i = 0, best = 0;
	struct msg *m;

	for (q = 0; q < P.nqp; q++)
		for (i = 0; i < dc->plan[q].n; i++) {
			m = &dc->plan[q].m[i];
			if ((m->op == OP_WRITE || m->op == OP_WRITE_IMM ||
			     (m->rq && m->nr)) && m->size > best) {
				best = m->size;
				best_q = q;
				best_i = i;
			}
		}
	if (!best)
		return;
	m = &dc->plan[best_q].m[best_i];
	if (m->op == OP_WRITE || m->op == OP_WRITE_IMM)
		Q[best_q].r[m->r_off + m->size / 2] ^= 0x40;
	else
		Q[best_q].r[m->rr_off[0] + m->rr_len[0] / 2] ^= 0x40;
}

/*
 * READ sources never change: check QP q's whole source area, with img
 * as scratch space; dc is the role checking (NULL: after the last round).
 */
static void read_source_check(uint8_t *img, struct dir_ctx *dc, uint32_t r, uint32_t q)
{
	uint64_t i;

	tc_pat_fill(img, P.area, key_of(0x53524331, is_client, q, 0), 0);
	if (!memcmp(img, Q[q].s, P.area))
		return;
	for (i = 0; Q[q].s[i] == img[i]; i++)
		;
	if (dc)
		fail("%s round %u QP %u: the READ source area changed: byte %" PRIu64
		     " is 0x%02x, expected 0x%02x", dir_name(dc->d), r, q, i, Q[q].s[i], img[i]);
	fail("after the last round QP %u: the READ source area changed: byte %" PRIu64
	     " is 0x%02x, expected 0x%02x", q, i, Q[q].s[i], img[i]);
}

static void *responder_thread(void *arg)
{
	struct dir_ctx *dc = arg;
	struct ibv_wc wc[32];
	uint32_t r, q, i, want, got;
	int n, k;

	my_dc = dc;
	crash_altstack();

	for (r = 0;; r++) {
		uint32_t type;

		dc->round = r;
		dc->phase = "waiting for the requester to start the round";
		/* the requester bounds its own waits and reports failures */
		type = sync_recv_long(dc->sock, "the next round");

		if (type == SY_END)
			break;
		if (type != SY_ROUND || last_round != r)
			fail("protocol error: expected round %u to start, got message %u for %u",
			     r, type, last_round);
		plan_round(dc, r, P.rounds || P.seconds);
		responder_prepare(dc, r);
		want = 0;
		for (q = 0; q < P.nqp; q++)
			for (i = 0; i < dc->plan[q].n; i++)
				want += dc->plan[q].m[i].rq;
		if (P.rnr_delay_ms && (r & 1)) {
			/* Ready before the receives exist: the requester meets RNR. */
			sync_send(dc->sock, SY_READY, r);
			usleep(P.rnr_delay_ms * 1000);
			post_recvs(dc, r);
		} else {
			post_recvs(dc, r);
			sync_send(dc->sock, SY_READY, r);
		}
		dc->phase = "waiting for receive completions";
		for (got = 0; got < want; got += n) {
			n = get_wcs(rcq, rch, wc, 32, tc_now_s() + P.timeout, dc->sock);
			if (!n)
				fail("%s round %u: %u of %u receive completions after %u s",
				     dir_name(dc->d), r, got, want, P.timeout);
			for (k = 0; k < n; k++)
				responder_complete(dc, r, &wc[k]);
		}
			dc->phase = "verifying the responder area";
		if (P.corrupt_round && r + 1 == P.corrupt_round)
			corrupt_one(dc);
		if (P.guard_round && r + 1 == P.guard_round) {
			/* -Z: what a placement one byte too long would do */
			struct guard *g = &Q[P.nqp - 1].gr;

			g->area[g->len] ^= 0x40;
		}
		for (q = 0; q < P.nqp; q++) {
			responder_verify(dc, r, q);
			guard_check(&Q[q].gr, dc, r);
			guard_check(&Q[q].gs, dc, r);
			guard_check(&Q[q].gt, dc, r);
		}
		read_source_check(dc->scratch, dc, r, r % P.nqp);
		sync_send(dc->sock, SY_OK, r);
		dc->rounds++;
	}
	return NULL;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: mroce_verify -d DEV [-c SERVER_IP] [-P PORT] [-g GID_INDEX] [options]\n"
		"  server: without -c; adopts the client's options\n"
		"  -q NQP       QPs (default 4, max %d)\n"
		"  -r ROUNDS    rounds per direction (default: until every op/size ran once)\n"
		"  -t SECONDS   keep going this long (random ops/sizes after the full set)\n"
		"  -o OPS       comma list of send,send_imm,write,write_imm,read,cmp_swp,fetch_add\n"
		"               (default: all; atomics only if both devices advertise them)\n"
		"  -s SIZES     comma list of message sizes in bytes (default 0..1 MiB set)\n"
		"  -m MAXSGE    SGEs per work request, at most (default 4)\n"
		"  -D DIR       c2s, s2c or both (default both, at the same time)\n"
		"  -a BYTES     buffer area per QP and role (default 3 MiB)\n"
		"  -n MSGS      messages per QP per round, at most (default 16)\n"
		"  -R MS        RNR test: on odd rounds receives are posted MS ms late\n"
		"  -e           wait for completion events instead of polling\n"
		"  -T SECONDS   timeout of any wait (default 60)\n"
		"  -S SEED      pattern and plan seed (default 1)\n"
		"  -A EXP       QP ACK timeout, 4.096 us * 2^EXP (default 14, ~67 ms)\n"
		"  -C COUNT     QP retry count (default 7)\n"
		"  -v           one line per round\n"
		"  -X ROUND     testing the verifier: corrupt one received byte in ROUND (1-based)\n"
		"  -Z ROUND     testing the guards: change the byte past the last QP's receive/write\n"
		"               area in ROUND (1-based), as a placement one byte too long would\n",
		MAX_QP);
	exit(2);
}

static uint32_t parse_ops(const char *s)
{
	char *dup = strdup(s), *tok, *save = NULL;
	uint32_t mask = 0;
	int i;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < OP_NR; i++)
			if (!strcmp(tok, op_arg[i]))
				break;
		if (i == OP_NR)
			die("unknown op '%s'", tok);
		mask |= 1u << i;
	}
	free(dup);
	return mask;
}

static void parse_sizes(const char *s)
{
	char *dup = strdup(s), *tok, *save = NULL;

	P.nsizes = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (P.nsizes == 64)
			die("at most 64 sizes");
		P.sizes[P.nsizes++] = (uint32_t)strtoul(tok, NULL, 0);
	}
	free(dup);
}

static void params_hton(struct params *p, bool to_net)
{
	uint32_t *w = (uint32_t *)p;
	size_t i;

	for (i = 0; i < sizeof(*p) / 4; i++)
		w[i] = to_net ? htonl(w[i]) : ntohl(w[i]);
}

static void print_summary(void)
{
	int d, i;

	for (d = 0; d < 2; d++) {
		struct dir_ctx *dc = &D[d];
		uint64_t m = 0, b = 0;
		char buf[300] = "";
		size_t o = 0;

		if (!(P.dirs & (1u << d)))
			continue;
		if (dc->requester) {
			for (i = 0; i < OP_NR; i++) {
				m += dc->msgs[i];
				b += dc->bytes[i];
				if (dc->msgs[i])
					o += snprintf(buf + o, sizeof(buf) - o, " %s %" PRIu64,
						      op_name[i], dc->msgs[i]);
			}
			printf("mroce_verify: %s: %" PRIu64 " rounds, %" PRIu64 " messages (%s ), %.2f MiB, every byte verified\n",
			       dir_name(d), dc->rounds, m, buf, b / 1048576.0);
		} else {
			printf("mroce_verify: %s: responder for %" PRIu64 " rounds, every byte verified\n",
			       dir_name(d), dc->rounds);
		}
	}
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	bool started[2] = { false, false };
	uint64_t seed = 1;
	struct ibv_wc wc;
	int socks[3], opt, d, i;
	uint32_t q;
	const char *ops = NULL;

	P.nqp = 4;
	P.max_sge = 4;
	P.dirs = 3;
	P.area = 3 << 20;
	P.per_round = 16;
	P.timeout = 60;
	P.ack_timeout = 14;
	P.retry_cnt = 7;
	P.nsizes = sizeof(default_sizes) / sizeof(default_sizes[0]);
	memcpy(P.sizes, default_sizes, sizeof(default_sizes));

	while ((opt = getopt(argc, argv, "d:c:P:g:q:r:t:o:s:m:D:a:n:R:eT:S:vX:Z:A:C:h")) != -1) {
		switch (opt) {
		case 'd': devname = optarg; break;
		case 'c': server = optarg; is_client = true; break;
		case 'P': tcp_port = atoi(optarg); break;
		case 'g': gid_idx = atoi(optarg); break;
		case 'q': P.nqp = atoi(optarg); break;
		case 'r': P.rounds = atoi(optarg); break;
		case 't': P.seconds = atoi(optarg); break;
		case 'o': ops = optarg; break;
		case 's': parse_sizes(optarg); break;
		case 'm': P.max_sge = atoi(optarg); break;
		case 'D':
			P.dirs = !strcmp(optarg, "c2s") ? 1 : !strcmp(optarg, "s2c") ? 2 :
				 !strcmp(optarg, "both") ? 3 : 0;
			if (!P.dirs)
				usage();
			break;
		case 'a': P.area = strtoul(optarg, NULL, 0); break;
		case 'n': P.per_round = atoi(optarg); break;
		case 'R': P.rnr_delay_ms = atoi(optarg); break;
		case 'e': P.events = 1; break;
		case 'T': P.timeout = atoi(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'v': verbose = 1; break;
		case 'X': P.corrupt_round = atoi(optarg); break;
		case 'Z': P.guard_round = atoi(optarg); break;
		case 'A': P.ack_timeout = atoi(optarg); break;
		case 'C': P.retry_cnt = atoi(optarg); break;
		default: usage();
		}
	}
	if (!devname || optind != argc)
		usage();
	crash_reports_on();
	P.magic = PROTO_MAGIC;
	P.version = PROTO_VERSION;
	P.seed_hi = seed >> 32;
	P.seed_lo = (uint32_t)seed;
	P.ops = ops ? parse_ops(ops) : OPS_ALL;
	if (P.nqp < 1 || P.nqp > MAX_QP || P.max_sge < 1 || P.max_sge > MAX_SGE ||
	    P.per_round < 2 || P.per_round > 256 || !P.nsizes || P.area < 65536 ||
	    P.ack_timeout > 31 || P.retry_cnt > 7)
		usage();
	for (i = 0; i < (int)P.nsizes; i++)
		if (P.sizes[i] + (uint64_t)GAP_MAX * (P.max_sge + 1) > P.area)
			die("size %u does not fit the %u-byte area (-a)", P.sizes[i], P.area);

	/*
	 * Connections: control, then one per direction. Each starts with its
	 * index: the accept order need not be the connect order (a lost ACK
	 * of one handshake lets the next overtake it).
	 */
	if (is_client) {
		for (i = 0; i < 3; i++) {
			uint32_t tag = htonl(PROTO_MAGIC + i);

			socks[i] = tc_tcp_connect(server, tcp_port);
			send_all(socks[i], &tag, sizeof(tag));
		}
	} else {
		int acc[3];

		tc_tcp_accept(tcp_port, 3, acc);
		socks[0] = socks[1] = socks[2] = -1;
		for (i = 0; i < 3; i++) {
			uint32_t tag;

			recv_tmo(acc[i], &tag, sizeof(tag), "a connection's role", 60);
			tag = ntohl(tag) - PROTO_MAGIC;
			if (tag > 2 || socks[tag] >= 0)
				die("unexpected connection on TCP port %d (tag %u)", tcp_port, tag);
			socks[tag] = acc[i];
		}
	}
	ctl_sock = socks[0];
	D[0].sock = socks[1];
	D[1].sock = socks[2];
	D[0].d = 0;
	D[1].d = 1;
	D[0].requester = is_client;
	D[1].requester = !is_client;

	if (is_client) {
		struct params net = P;

		params_hton(&net, true);
		send_all(ctl_sock, &net, sizeof(net));
	} else {
		recv_tmo(ctl_sock, &P, sizeof(P), "the client's parameters", 60);
		params_hton(&P, false);
		if (P.magic != PROTO_MAGIC || P.version != PROTO_VERSION)
			die("the client speaks another mroce_verify protocol (%08x v%u)",
			    P.magic, P.version);
	}
	clock_gettime(CLOCK_MONOTONIC, &t_start);

	open_device();
	/* What this device can do as responder and requester. */
	nrd = dattr.max_qp_rd_atom < 16 ? dattr.max_qp_rd_atom : 16;
	local_sge = P.max_sge < (uint32_t)dattr.max_sge ? P.max_sge : (uint32_t)dattr.max_sge;
	create_resources();

	me.magic = htonl(PROTO_MAGIC);
	me.version = htonl(PROTO_VERSION);
	me.mtu = htonl(pattr.active_mtu);
	me.atomic = htonl(dattr.atomic_cap != IBV_ATOMIC_NONE);
	me.max_rd_atom = htonl(nrd);
	me.max_sge = htonl(local_sge);
	me.max_sge_rd = htonl(dattr.max_sge_rd);
	me.max_inline = htonl(local_inline);
	me.nqp = htonl(P.nqp);
	send_all(ctl_sock, &me, sizeof(me));
	recv_all(ctl_sock, &peer, sizeof(peer), "the peer's QPs");
	if (ntohl(peer.magic) != PROTO_MAGIC || ntohl(peer.nqp) != P.nqp)
		fail("the peer's hello does not match (magic %08x, %u QPs)", ntohl(peer.magic),
		     ntohl(peer.nqp));
	path_mtu = pattr.active_mtu < ntohl(peer.mtu) ? pattr.active_mtu : ntohl(peer.mtu);
	if (ntohl(peer.max_rd_atom) < nrd)
		nrd = ntohl(peer.max_rd_atom);
	eff_sge = local_sge < ntohl(peer.max_sge) ? local_sge : ntohl(peer.max_sge);
	eff_sge_rd = eff_sge;
	if ((uint32_t)dattr.max_sge_rd < eff_sge_rd)
		eff_sge_rd = dattr.max_sge_rd;
	if (ntohl(peer.max_sge_rd) < eff_sge_rd)
		eff_sge_rd = ntohl(peer.max_sge_rd);
	eff_inline = local_inline < ntohl(peer.max_inline) ? local_inline : ntohl(peer.max_inline);
	if (!eff_sge || !eff_sge_rd)
		fail("a device supports no SGE (max_sge %u, max_sge_rd %u)", eff_sge, eff_sge_rd);
	if (!nrd && (P.ops & ((1u << OP_READ) | OPS_ATOMIC)))
		fail("a device allows no outstanding READ/atomic (max_qp_rd_atom 0)");
	if (!(dattr.atomic_cap != IBV_ATOMIC_NONE && ntohl(peer.atomic)) && (P.ops & OPS_ATOMIC)) {
		if (ops) {
			fprintf(stderr, "mroce_verify: SKIP: atomics were asked for (-o) but %s advertises none\n",
				dattr.atomic_cap == IBV_ATOMIC_NONE ? devname : "the peer's device");
			exit(4);
		}
		printf("mroce_verify: atomics not advertised by %s: CMP_SWP and FETCH_ADD skipped\n",
		       dattr.atomic_cap == IBV_ATOMIC_NONE ? devname : "the peer's device");
		P.ops &= ~OPS_ATOMIC;
	}
	if (!P.ops)
		die("no operation left to test");
	connect_qps();

	printf("mroce_verify: %s %s, %u QPs, MTU %d, %s, ops", is_client ? "client" : "server",
	       devname, P.nqp, 128 << path_mtu,
	       P.dirs == 3 ? "both directions" : dir_name(P.dirs == 2));
	for (i = 0; i < OP_NR; i++)
		if (P.ops & (1u << i))
			printf(" %s", op_arg[i]);
	printf(", %u sizes up to %u B, seed %" PRIu64 "%s%s\n", P.nsizes,
	       P.sizes[P.nsizes - 1], ((uint64_t)P.seed_hi << 32) | P.seed_lo,
	       P.events ? ", completion events" : "", P.rnr_delay_ms ? ", RNR rounds" : "");
	fflush(stdout);

	for (d = 0; d < 2; d++) {
		struct dir_ctx *dc = &D[d];

		if (!(P.dirs & (1u << d)))
			continue;
		planner_init(&dc->pl, d);
		dc->scratch = area_alloc(P.area);
		for (q = 0; q < P.nqp; q++)
			dc->plan[q].m = calloc(P.per_round + 1, sizeof(struct msg));
		if (pthread_create(&th[d], NULL, dc->requester ? requester_thread :
				   responder_thread, dc))
			die("pthread_create failed");
		started[d] = true;
	}
	for (d = 0; d < 2; d++)
		if (started[d])
			pthread_join(th[d], NULL);

	/* Nothing may complete after the last round: no duplicate completions. */
	usleep(200000);
	if (ibv_poll_cq(scq, 1, &wc) > 0 || ibv_poll_cq(rcq, 1, &wc) > 0)
		fail("unexpected completion after the last round: QPN %u wr_id %" PRIu64 " %s status %s",
		     wc.qp_num, (uint64_t)wc.wr_id, wc_op_str(wc.opcode),
		     ibv_wc_status_str(wc.status));
	/* READ sources never change; no guard byte ever does. */
	for (q = 0; q < P.nqp; q++) {
		read_source_check(D[0].scratch ? D[0].scratch : D[1].scratch, NULL, 0, q);
		guard_check(&Q[q].gl, NULL, 0);
		guard_check(&Q[q].gr, NULL, 0);
		guard_check(&Q[q].gs, NULL, 0);
		guard_check(&Q[q].gt, NULL, 0);
	}
	/* Both sides finished and checked: say so, then tear down. */
	sync_send(ctl_sock, SY_OK, 0);
	sync_recv(ctl_sock, SY_OK, 0, "the peer's final verdict");
	print_summary();
	printf("mroce_verify: PASS in %.1f s\n", elapsed());
	for (q = 0; q < P.nqp; q++) {
		ibv_destroy_qp(Q[q].qp);
		ibv_dereg_mr(Q[q].l_mr);
		ibv_dereg_mr(Q[q].r_mr);
		ibv_dereg_mr(Q[q].s_mr);
		ibv_dereg_mr(Q[q].t_mr);
	}
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
