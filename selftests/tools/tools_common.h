/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Plumbing shared by the selftest tools: open an RDMA device by name, find
 * its IPv4 RoCE v2 GID, bring an RC QP to RTS, out-of-band TCP, and the
 * position-addressable byte patterns the tools fill and check buffers with.
 * Header-only: each tool is one C file plus this.
 */
#ifndef MROCE_TOOLS_COMMON_H
#define MROCE_TOOLS_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* Each tool defines it: report a setup error and exit non-zero. */
static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...);

/*
 * Checks: each one a line that report_lines (selftests/lib_traffic.sh) makes a
 * KTAP subtest of, "ok<TAB>what" or "fail<TAB>what[<TAB>why]"; tc_nfail
 * counts the failures (a tool exits 1 if any).
 */
static int tc_nfail __attribute__((unused));

static inline void tc_line(bool pass, const char *what, const char *why)
{
	printf("%s\t%s%s%s\n", pass ? "ok" : "fail", what, why ? "\t" : "", why ? why : "");
	fflush(stdout);
	if (!pass)
		tc_nfail++;
}

/* A check named @what; only a failure prints why, formatted from @why_fmt. */
static inline void __attribute__((format(printf, 3, 4)))
tc_result(bool pass, const char *what, const char *why_fmt, ...)
{
	char why[1024];
	va_list ap;

	if (pass || !why_fmt) {
		tc_line(pass, what, NULL);
		return;
	}
	va_start(ap, why_fmt);
	vsnprintf(why, sizeof(why), why_fmt, ap);
	va_end(ap);
	tc_line(false, what, why);
}

/* A check whose formatted name says all, passing or failing. */
static inline void __attribute__((format(printf, 2, 3)))
tc_check(bool pass, const char *what_fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, what_fmt);
	vsnprintf(what, sizeof(what), what_fmt, ap);
	va_end(ap);
	tc_line(pass, what, NULL);
}

/* Monotonic seconds, for deadlines and timestamps. */
static inline double tc_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline uint64_t tc_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Byte p of the pattern named key: any window of it can be regenerated. */
static inline uint8_t tc_pat_byte(uint64_t key, uint64_t p)
{
	return (uint8_t)(tc_mix64(key ^ (p >> 3) * 0xd6e8feb86659fd93ull) >> ((p & 7) * 8));
}

static inline void tc_pat_fill(uint8_t *dst, uint64_t len, uint64_t key, uint64_t pos)
{
	uint64_t i = 0, w;

	while (i < len && ((pos + i) & 7)) {
		dst[i] = tc_pat_byte(key, pos + i);
		i++;
	}
	for (; i + 8 <= len; i += 8) {
		w = tc_mix64(key ^ ((pos + i) >> 3) * 0xd6e8feb86659fd93ull);
		memcpy(dst + i, &w, 8);		/* little-endian: byte 0 = low */
	}
	for (; i < len; i++)
		dst[i] = tc_pat_byte(key, pos + i);
}

/* First offset where buf differs from the pattern, or -1. */
static inline long long tc_pat_diff(const uint8_t *buf, uint64_t len, uint64_t key, uint64_t pos)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != tc_pat_byte(key, pos + i))
			return (long long)i;
	return -1;
}

/* The index of the IPv4-mapped GID (::ffff:a.b.c.d) on port 1, or -1. */
static inline int tc_find_ipv4_gid(struct ibv_context *ctx, int tbl_len)
{
	union ibv_gid g;
	int i;

	for (i = 0; i < tbl_len; i++) {
		if (ibv_query_gid(ctx, 1, i, &g))
			continue;
		if (!g.global.subnet_prefix && !g.raw[8] && !g.raw[9] &&
		    g.raw[10] == 0xff && g.raw[11] == 0xff)
			return i;
	}
	return -1;
}

static inline struct ibv_context *tc_open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die("cannot open RDMA device %s", name);
	return ctx;
}

struct tc_rc_attr {
	enum ibv_mtu mtu;
	uint32_t dest_qpn, rq_psn, sq_psn;
	uint8_t dgid[16];
	int sgid_index;
	uint8_t rd_atomic;	/* max_rd_atomic and max_dest_rd_atomic */
	uint8_t min_rnr_timer, timeout, retry_cnt, rnr_retry;
};

/* RESET -> INIT -> RTR -> RTS; returns 0 or the failing step's errno. */
static inline int tc_qp_to_rts(struct ibv_qp *qp, const struct tc_rc_attr *r, const char **step)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	*step = "INIT";
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = r->mtu;
	a.dest_qp_num = r->dest_qpn;
	a.rq_psn = r->rq_psn;
	a.max_dest_rd_atomic = r->rd_atomic;
	a.min_rnr_timer = r->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = r->sgid_index;
	memcpy(a.ah_attr.grh.dgid.raw, r->dgid, 16);
	*step = "RTR";
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = r->timeout;
	a.retry_cnt = r->retry_cnt;
	a.rnr_retry = r->rnr_retry;
	a.sq_psn = r->sq_psn;
	a.max_rd_atomic = r->rd_atomic;
	*step = "RTS";
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Accept n connections on one listening socket (no connection is refused). */
static inline void tc_tcp_accept(int port, int n, int *fds)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, ls, i;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		die("socket: %s", strerror(errno));
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 8))
		die("cannot listen on TCP port %d: %s", port, strerror(errno));
	for (i = 0; i < n; i++) {
		fds[i] = accept(ls, NULL, NULL);
		if (fds[i] < 0)
			die("accept: %s", strerror(errno));
		setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	close(ls);
}

/* Connect, retrying for ~10 s while the server starts. */
static inline int tc_tcp_connect(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1, tries;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		die("bad address '%s' (IPv4 dotted quad)", host);
	for (tries = 0; tries < 100; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket: %s", strerror(errno));
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		close(fd);
		usleep(100000);
	}
	die("cannot connect to %s:%d: %s", host, port, strerror(errno));
}

#endif /* MROCE_TOOLS_COMMON_H */
