// SPDX-License-Identifier: GPL-2.0
/*
 * mroce_verbs_test: every verbs object of an mroce device, driven through
 * rdma-core's stock rxe provider (librxe), with real assertions.
 *
 *   mroce_verbs_test DEVICE           run all checks
 *   mroce_verbs_test DEVICE --traffic PEER
 *                                     ... and those that need a transport,
 *                                     with a second device PEER
 *   mroce_verbs_test DEVICE --hold    create one of each object, print
 *                                     "ready", wait for a line on stdin
 *   mroce_verbs_test DEVICE --rkey-lossy PEER
 *   mroce_verbs_test DEVICE --pairs PEER N
 *                                     the checks mroce_verbs.sh runs with
 *                                     netem losing packets from PEER
 *   mroce_verbs_test DEVICE --dup-after-err PEER BLOCK_CMD UNBLOCK_CMD
 *                                     a resend reaching a QP in ERR; the
 *                                     commands stop/restart PEER's output
 *
 * Output: one line per check, "ok<TAB>description" or
 * "fail<TAB>description<TAB>why"; the exit status is 1 if any check failed.
 *
 * Without a transport nothing is ever sent, so data-path checks are about
 * queues: what gets posted, validated, flushed and completed, and how the
 * kernel treats rings that user space corrupts on purpose. The corruption
 * checks find librxe's mapped rings in /proc/self/maps and write into
 * them, and ring the send doorbell with a raw write() on the uverbs fd.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
/* Before the uapi headers: glibc's <netinet/in.h> must precede <linux/in.h>. */
#include "tools_common.h"
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_device_attr dattr;
static struct ibv_port_attr pattr;
static union ibv_gid gid;
static int gid_idx = -1;

#define CHECK(cond, ...) tc_check(!!(cond), __VA_ARGS__)

/* Fatal setup failure: report it and stop. */
static void die(const char *fmt, ...)
{
	char what[256];
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tc_check(false, "setup: %s (%s)", what, strerror(err));
	exit(1);
}

/* ------------------------------------------------------------ helpers */

static struct ibv_cq *mk_cq(int cqe, struct ibv_comp_channel *ch)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, cqe, NULL, ch, 0);

	if (!cq)
		die("ibv_create_cq");
	return cq;
}

struct qp_spec {
	enum ibv_qp_type type;
	uint32_t swr, rwr, ssge, rsge, inl;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	int sig_all;
};

static struct ibv_qp *try_qp(struct qp_spec *s, struct ibv_qp_init_attr *out)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.srq = s->srq,
		.cap = {
			.max_send_wr = s->swr,
			.max_recv_wr = s->rwr,
			.max_send_sge = s->ssge,
			.max_recv_sge = s->rsge,
			.max_inline_data = s->inl,
		},
		.qp_type = s->type,
		.sq_sig_all = s->sig_all,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (out)
		*out = a;
	return qp;
}

static struct ibv_qp *mk_qp(enum ibv_qp_type type, struct ibv_cq *scq,
			    struct ibv_cq *rcq, uint32_t swr, uint32_t rwr)
{
	struct qp_spec s = {
		.type = type, .swr = swr, .rwr = rwr, .ssge = 2, .rsge = 1,
		.inl = 64, .scq = scq, .rcq = rcq,
	};
	struct ibv_qp *qp = try_qp(&s, NULL);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
		.qkey = 0x11111111,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

static void rc_rtr_attr_to(struct ibv_qp_attr *a, uint32_t dqpn,
			   const union ibv_gid *dgid, int sgid_index)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dqpn;
	a->rq_psn = 0x123456;
	a->max_dest_rd_atomic = 16;
	a->min_rnr_timer = 12;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = *dgid;
	a->ah_attr.grh.sgid_index = sgid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
}

static void rc_rtr_attr(struct ibv_qp_attr *a, uint32_t dqpn)
{
	rc_rtr_attr_to(a, dqpn, &gid, gid_idx);
}

#define RC_RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
		     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
		     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RC_RTS_MASK (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | \
		     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
		     IBV_QP_MAX_QP_RD_ATOMIC)

static void rc_rts_attr(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->sq_psn = 0x654321;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->max_rd_atomic = 16;
}

/* RESET -> INIT -> RTR -> RTS, an RC QP connected to (dqpn, dgid). */
static int rc_connect(struct ibv_qp *qp, uint32_t dqpn,
		      const union ibv_gid *dgid, int sgid_index)
{
	struct ibv_qp_attr a;
	int err = to_init(qp);

	if (err)
		return err;
	/* Both ends start at the same PSN: our rq_psn is the peer's sq_psn. */
	rc_rtr_attr_to(&a, dqpn, dgid, sgid_index);
	a.rq_psn = 0x2468;
	err = ibv_modify_qp(qp, &a, RC_RTR_MASK);
	if (err)
		return err;
	rc_rts_attr(&a);
	a.sq_psn = 0x2468;
	return ibv_modify_qp(qp, &a, RC_RTS_MASK);
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int err;

	if (qp->qp_type != IBV_QPT_UD)
		return rc_connect(qp, qp->qp_num, &gid, gid_idx); /* to itself */
	err = to_init(qp);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int set_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/*
 * Connected but parked: SQD accepts posts and starts none, so what is
 * posted stays queued whether or not a transport is loaded (QPs here are
 * connected to themselves, and a transport would deliver).
 */
static int to_sqd(struct ibv_qp *qp)
{
	return to_rts(qp) ?: set_state(qp, IBV_QPS_SQD);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* Poll up to @n completions, waiting up to @ms for them. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	int got = 0, r, i;

	for (i = 0; i <= ms && got < n; i++) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (got < n)
			usleep(1000);
	}
	return got;
}

/* Wait for an async event of @type on @c (others are skipped). */
static bool wait_async_on(struct ibv_context *c, enum ibv_event_type type,
			  void *elem, int ms)
{
	struct pollfd pfd = { .fd = c->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool hit;

	while (poll(&pfd, 1, ms) > 0) {
		if (ibv_get_async_event(c, &ev))
			return false;
		hit = ev.event_type == type &&
		      (!elem || ev.element.qp == elem || ev.element.cq == elem ||
		       ev.element.srq == elem);
		ibv_ack_async_event(&ev);
		if (hit)
			return true;
	}
	return false;
}

static bool wait_async(enum ibv_event_type type, void *elem, int ms)
{
	return wait_async_on(ctx, type, elem, ms);
}

static void drain_async(void)
{
	while (wait_async(IBV_EVENT_DEVICE_FATAL, (void *)1, 0))
		;
}

/* --- librxe's rings, found through /proc/self/maps -------------------- */

struct maps {
	int n;
	unsigned long start[512], end[512];
};

static void snap_maps(struct maps *m)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	m->n = 0;
	if (!f)
		die("open /proc/self/maps");
	while (fgets(line, sizeof(line), f) && m->n < 512) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx", &m->start[m->n], &m->end[m->n]) == 2)
			m->n++;
	}
	fclose(f);
}

/* The ring mapped between two snapshots whose slots are (not) >= 256 B. */
static struct rxe_queue_buf *new_ring(const struct maps *b,
				      const struct maps *a, bool big_slots)
{
	struct rxe_queue_buf *q;
	int i, j;

	for (i = 0; i < a->n; i++) {
		for (j = 0; j < b->n; j++)
			if (b->start[j] == a->start[i])
				break;
		if (j < b->n)
			continue;
		q = (struct rxe_queue_buf *)a->start[i];
		if ((q->log2_elem_size >= 8) == big_slots)
			return q;
	}
	return NULL;
}

static void *ring_slot(struct rxe_queue_buf *q, uint32_t mask, uint32_t log2,
		       uint32_t idx)
{
	return q->data + ((size_t)(idx & mask) << log2);
}

struct rings {
	struct rxe_queue_buf *sq, *rq;
	uint32_t sq_mask, sq_log2, rq_mask, rq_log2;
};

/* Create a QP and find its send (and receive) ring. */
static struct ibv_qp *mk_qp_rings(struct qp_spec *s, struct rings *r)
{
	struct maps b, a;
	struct ibv_qp *qp;

	snap_maps(&b);
	qp = try_qp(s, NULL);
	if (!qp)
		die("ibv_create_qp");
	snap_maps(&a);
	r->sq = new_ring(&b, &a, true);
	r->rq = s->srq ? NULL : new_ring(&b, &a, false);
	if (!r->sq || (!s->srq && !r->rq))
		die("finding the mapped rings");
	/* Read once, before any test scribbles over the headers. */
	r->sq_mask = r->sq->index_mask;
	r->sq_log2 = r->sq->log2_elem_size;
	if (r->rq) {
		r->rq_mask = r->rq->index_mask;
		r->rq_log2 = r->rq->log2_elem_size;
	}
	return qp;
}

static struct ibv_cq *mk_cq_ring(int cqe, struct rxe_queue_buf **ring)
{
	struct maps b, a;
	struct ibv_cq *cq;
	int i, j;

	snap_maps(&b);
	cq = mk_cq(cqe, NULL);
	snap_maps(&a);
	*ring = NULL;
	for (i = 0; i < a.n && !*ring; i++) {
		for (j = 0; j < b.n; j++)
			if (b.start[j] == a.start[i])
				break;
		if (j == b.n)
			*ring = (struct rxe_queue_buf *)a.start[i];
	}
	if (!*ring)
		die("finding the CQ ring");
	return cq;
}

/* Put one raw WQE at the producer index of a send ring and publish it. */
static struct rxe_send_wqe *sq_put(struct rings *r)
{
	uint32_t prod = __atomic_load_n(&r->sq->producer_index, __ATOMIC_RELAXED);
	struct rxe_send_wqe *w = ring_slot(r->sq, r->sq_mask, r->sq_log2, prod);

	memset(w, 0, 1u << r->sq_log2);
	return w;
}

static void sq_publish(struct rings *r)
{
	uint32_t prod = __atomic_load_n(&r->sq->producer_index, __ATOMIC_RELAXED);

	__atomic_store_n(&r->sq->producer_index, (prod + 1) & r->sq_mask,
			 __ATOMIC_RELEASE);
}

/*
 * The send doorbell, as librxe rings it: the legacy POST_SEND write()
 * command; with @wr_count > 0 it also carries one (empty) WR.
 */
static int raw_post_send(struct ibv_qp *qp, unsigned int wr_count)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
		struct ib_uverbs_send_wr wr;
	} req;
	struct ib_uverbs_post_send_resp resp;
	size_t len = sizeof(req.hdr) + sizeof(req.cmd) +
		     (wr_count ? sizeof(req.wr) : 0);

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = len / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = qp->handle;
	req.cmd.wr_count = wr_count;
	req.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	req.wr.opcode = IBV_WR_SEND;
	if (write(ctx->cmd_fd, &req, len) != (ssize_t)len)
		return errno;
	return 0;
}

static int post_send1(struct ibv_qp *qp, uint64_t wr_id,
		      enum ibv_wr_opcode op, unsigned int flags,
		      struct ibv_sge *sge, int nsge)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = nsge,
		.opcode = op, .send_flags = flags,
	}, *bad;

	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x1234;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = 0x1000;
		wr.wr.atomic.rkey = 0x1234;
	}
	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv1(struct ibv_qp *qp, uint64_t wr_id, struct ibv_sge *sge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* --------------------------------------------------------------- checks */

static void test_device(void)
{
	CHECK(dattr.max_qp_wr >= 1024, "query_device: max_qp_wr %d >= 1024",
	      dattr.max_qp_wr);
	CHECK(dattr.max_sge >= 6, "query_device: max_sge %d >= 6",
	      dattr.max_sge);
	CHECK(dattr.max_cqe >= 1024, "query_device: max_cqe %d >= 1024",
	      dattr.max_cqe);
	CHECK(dattr.max_qp_rd_atom >= 16 && dattr.max_qp_init_rd_atom >= 16,
	      "query_device: max_qp_rd_atom/init %d/%d >= 16",
	      dattr.max_qp_rd_atom, dattr.max_qp_init_rd_atom);
	CHECK(dattr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS,
	      "query_device: MEM_MGT_EXTENSIONS (FRWR) advertised");
	CHECK(!(dattr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      !dattr.max_mw,
	      "query_device: memory windows not advertised (max_mw %d)",
	      dattr.max_mw);
	CHECK(dattr.max_srq > 0 && dattr.max_srq_wr >= 1024,
	      "query_device: SRQs (%d x %d WRs)", dattr.max_srq,
	      dattr.max_srq_wr);
	CHECK(dattr.max_ah > 0 && dattr.max_mr > 0 && dattr.max_pd > 0 &&
	      dattr.max_qp > 0 && dattr.max_cq > 0,
	      "query_device: non-zero object limits");
	CHECK(dattr.atomic_cap == IBV_ATOMIC_NONE || dattr.atomic_cap == IBV_ATOMIC_HCA,
	      "query_device: atomic_cap %d is NONE or HCA", dattr.atomic_cap);
	CHECK(pattr.state == IBV_PORT_ACTIVE, "query_port: port active");
	CHECK(pattr.link_layer == IBV_LINK_LAYER_ETHERNET,
	      "query_port: link layer Ethernet");
	CHECK(gid_idx >= 0, "query_gid: an IPv4 RoCE v2 GID (index %d)", gid_idx);
}

static void test_pd_mr(void)
{
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		 IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr, *mr2;
	struct ibv_pd *pd2;
	char *buf, *ro;
	int i;

	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd2, "alloc_pd");
	CHECK(pd2 && !ibv_dealloc_pd(pd2), "dealloc_pd");

	buf = aligned_alloc(4096, 1 << 20);
	if (!buf)
		die("aligned_alloc");
	mr = ibv_reg_mr(pd, buf, 1 << 20, rw);
	CHECK(mr && mr->lkey && mr->lkey == mr->rkey && mr->length == 1 << 20,
	      "reg_mr 1 MiB: lkey == rkey != 0");
	mr2 = ibv_reg_mr(pd, buf + 3, 5000, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr2 && mr && mr2->lkey != mr->lkey,
	      "reg_mr unaligned 5000 bytes at +3, distinct key");
	CHECK(mr2 && !ibv_dereg_mr(mr2), "dereg_mr (unaligned)");
	mr2 = ibv_reg_mr_iova(pd, buf, 8192, 0x7000000000ull, rw);
	CHECK(mr2, "reg_mr_iova with an iova unlike the address");
	if (mr2)
		ibv_dereg_mr(mr2);

	errno = 0;
	mr2 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_WRITE);
	CHECK(!mr2 && errno == EINVAL,
	      "reg_mr REMOTE_WRITE without LOCAL_WRITE fails EINVAL (%s)",
	      strerror(errno));
	errno = 0;
	mr2 = ibv_reg_mr(pd, buf, 1ull << 40, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr2, "reg_mr of 1 TiB fails (%s)", strerror(errno));
	errno = 0;
	mr2 = ibv_reg_mr(pd, (void *)0x1000, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr2 && errno == EFAULT, "reg_mr of unmapped memory fails EFAULT (%s)",
	      strerror(errno));
	errno = 0;
	mr2 = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr2, "reg_mr of zero bytes fails (%s)", strerror(errno));
	errno = 0;
	mr2 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	CHECK(!mr2, "reg_mr with MW_BIND fails: no memory windows (%s)",
	      strerror(errno));
	for (i = IBV_MW_TYPE_1; i <= IBV_MW_TYPE_2; i++) {
		struct ibv_mw *mw;

		errno = 0;
		mw = ibv_alloc_mw(pd, i);
		CHECK(!mw && errno == EOPNOTSUPP,
		      "alloc_mw type %d fails with EOPNOTSUPP: no memory windows (%s)",
		      i, strerror(errno));
		if (mw)
			ibv_dealloc_mw(mw);
	}

	ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		die("mmap");
	errno = 0;
	mr2 = ibv_reg_mr(pd, ro, 8192, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr2 && errno == EFAULT,
	      "reg_mr LOCAL_WRITE of read-only memory fails EFAULT (%s)",
	      strerror(errno));
	mr2 = ibv_reg_mr(pd, ro, 8192, IBV_ACCESS_REMOTE_READ);
	CHECK(mr2, "reg_mr REMOTE_READ of read-only memory works");
	if (mr2)
		ibv_dereg_mr(mr2);
	munmap(ro, 8192);

	CHECK(mr && !ibv_dereg_mr(mr), "dereg_mr");
	free(buf);
}

static void test_cq(void)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_wc wc;

	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	CHECK(cq && cq->cqe >= 1, "create_cq 1 entry (got %d)", cq ? cq->cqe : -1);
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	CHECK(cq && cq->cqe >= 100, "create_cq 100 entries (got %d)",
	      cq ? cq->cqe : -1);
	CHECK(cq && ibv_poll_cq(cq, 1, &wc) == 0, "poll an empty CQ: 0");
	CHECK(cq && !ibv_req_notify_cq(cq, 0), "req_notify_cq next");
	CHECK(cq && !ibv_req_notify_cq(cq, 1), "req_notify_cq solicited");
	CHECK(cq && !ibv_destroy_cq(cq), "destroy_cq");
	errno = 0;
	cq = ibv_create_cq(ctx, dattr.max_cqe + 1, NULL, NULL, 0);
	CHECK(!cq, "create_cq above max_cqe fails (%s)", strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
	ch = ibv_create_comp_channel(ctx);
	cq = ch ? ibv_create_cq(ctx, 16, NULL, ch, 0) : NULL;
	CHECK(cq, "create_cq on a completion channel");
	if (cq)
		ibv_destroy_cq(cq);
	if (ch)
		ibv_destroy_comp_channel(ch);
}

/* @n receives on a fresh RC QP, flushed into @cq: wr_ids base..base+n-1. */
static void flush_recvs(struct ibv_cq *cq, uint64_t base, int n)
{
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_qp *qp = mk_qp(IBV_QPT_RC, cq, cq, 4, 16);
	int i;

	if (to_init(qp))
		die("RC QP to INIT");
	for (i = 0; i < n; i++) {
		wr.wr_id = base + i;
		if (ibv_post_recv(qp, &wr, &bad))
			die("ibv_post_recv");
	}
	if (set_state(qp, IBV_QPS_ERR))
		die("RC QP to ERR");
	ibv_destroy_qp(qp);
}

/* Polls @n completions and checks they are flushes base..base+n-1. */
static bool poll_flushed(struct ibv_cq *cq, uint64_t base, int n)
{
	struct ibv_wc wc[16];
	int i, got = poll_n(cq, wc, n, 2000);

	for (i = 0; i < got; i++)
		if (wc[i].wr_id != base + i || wc[i].status != IBV_WC_WR_FLUSH_ERR)
			return false;
	return got == n;
}

/*
 * Resizing keeps the completions not yet polled, in order, and librxe
 * switches to the new ring (the mmap info comes back in the response).
 */
static void test_cq_resize(void)
{
	struct ibv_cq *cq = mk_cq(8, NULL);
	struct ibv_wc wc;
	int err;

	flush_recvs(cq, 10, 6);
	CHECK(poll_flushed(cq, 10, 1), "resize: one of 6 flushes polled");
	err = ibv_resize_cq(cq, 3);
	CHECK(err, "resize_cq below the 5 waiting fails (%s)", strerror(err));
	err = ibv_resize_cq(cq, 100);
	CHECK(!err && cq->cqe >= 100, "resize_cq 8 -> 100 with 5 waiting (cqe %d)",
	      cq->cqe);
	CHECK(poll_flushed(cq, 11, 5) && ibv_poll_cq(cq, 1, &wc) == 0,
	      "the 5 waiting completions moved to the new ring, in order");
	flush_recvs(cq, 30, 12);
	CHECK(poll_flushed(cq, 30, 12),
	      "12 new completions land in the resized ring");
	err = ibv_resize_cq(cq, 2);
	CHECK(!err && cq->cqe >= 2 && cq->cqe < 100,
	      "resize_cq down to 2 when empty (cqe %d)", cq->cqe);
	flush_recvs(cq, 50, 2);
	CHECK(poll_flushed(cq, 50, 2), "the shrunk ring works");
	err = ibv_resize_cq(cq, dattr.max_cqe + 1);
	CHECK(err, "resize_cq above max_cqe fails (%s)", strerror(err));
	CHECK(!ibv_destroy_cq(cq), "destroy the resized CQ");
}

static void test_qp_create(void)
{
	struct ibv_cq *cq = mk_cq(64, NULL);
	struct ibv_qp_init_attr ia, qia;
	struct qp_spec s = {
		.type = IBV_QPT_RC, .swr = 100, .rwr = 50, .ssge = 3,
		.rsge = 2, .inl = 64, .scq = cq, .rcq = cq,
	};
	struct ibv_qp_attr qa;
	struct ibv_qp *qp;

	qp = try_qp(&s, &ia);
	CHECK(qp, "create RC QP");
	if (qp) {
		CHECK(ia.cap.max_send_wr >= 100 && ia.cap.max_recv_wr >= 50 &&
		      ia.cap.max_send_sge >= 3 && ia.cap.max_recv_sge >= 2 &&
		      ia.cap.max_inline_data >= 64,
		      "create RC QP: granted caps %u/%u wr, %u/%u sge, %u inline cover the request",
		      ia.cap.max_send_wr, ia.cap.max_recv_wr,
		      ia.cap.max_send_sge, ia.cap.max_recv_sge,
		      ia.cap.max_inline_data);
		CHECK(qp->qp_num >= 16 && qp->qp_num <= 0xffffff,
		      "create RC QP: 24-bit QPN %u", qp->qp_num);
		CHECK(!ibv_query_qp(qp, &qa, IBV_QP_CAP | IBV_QP_STATE, &qia) &&
		      qa.qp_state == IBV_QPS_RESET &&
		      qa.cap.max_send_wr == ia.cap.max_send_wr &&
		      qa.cap.max_recv_wr == ia.cap.max_recv_wr &&
		      qa.cap.max_send_sge == ia.cap.max_send_sge &&
		      qa.cap.max_inline_data == ia.cap.max_inline_data &&
		      qia.qp_type == IBV_QPT_RC,
		      "query_qp: RESET, caps as granted");
		CHECK(!ibv_destroy_qp(qp), "destroy RC QP");
	}

	s.type = IBV_QPT_UD;
	qp = try_qp(&s, &ia);
	CHECK(qp, "create UD QP");
	if (qp)
		ibv_destroy_qp(qp);

	s.type = IBV_QPT_RC;
	s.swr = dattr.max_qp_wr + 1;
	errno = 0;
	qp = try_qp(&s, NULL);
	CHECK(!qp && errno == EINVAL, "create QP above max_qp_wr fails EINVAL");
	if (qp)
		ibv_destroy_qp(qp);
	s.swr = 16;
	s.ssge = dattr.max_sge + 1;
	errno = 0;
	qp = try_qp(&s, NULL);
	CHECK(!qp && errno == EINVAL, "create QP above max_sge fails EINVAL");
	if (qp)
		ibv_destroy_qp(qp);
	s.ssge = 1;
	s.inl = 1 << 20;
	errno = 0;
	qp = try_qp(&s, NULL);
	CHECK(!qp && errno == EINVAL, "create QP with 1 MiB inline fails EINVAL");
	if (qp)
		ibv_destroy_qp(qp);
	s.inl = 0;
	s.type = IBV_QPT_UC;
	errno = 0;
	qp = try_qp(&s, NULL);
	CHECK(!qp, "create UC QP fails: not supported (%s)", strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void test_qp_states(void)
{
	struct ibv_cq *cq = mk_cq(64, NULL);
	struct ibv_qp *qp = mk_qp(IBV_QPT_RC, cq, cq, 16, 16);
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	CHECK(set_state(qp, IBV_QPS_RTS), "RESET -> RTS is illegal");
	CHECK(set_state(qp, IBV_QPS_RTR), "RESET -> RTR is illegal");
	CHECK(set_state(qp, IBV_QPS_INIT), "RESET -> INIT without attributes is illegal");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 2;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS), "RESET -> INIT on port 2 fails");
	a.port_num = 1;
	a.pkey_index = 1;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS), "RESET -> INIT with pkey index 1 fails");
	CHECK(!to_init(qp) && qp_state(qp) == IBV_QPS_INIT, "RESET -> INIT");
	CHECK(!to_init(qp) && qp_state(qp) == IBV_QPS_INIT, "INIT -> INIT");

	rc_rtr_attr(&a, qp->qp_num);
	CHECK(ibv_modify_qp(qp, &a, RC_RTR_MASK & ~IBV_QP_AV),
	      "INIT -> RTR without an address vector fails");
	a.path_mtu = 7;
	CHECK(ibv_modify_qp(qp, &a, RC_RTR_MASK), "INIT -> RTR with path MTU 7 fails");
	rc_rtr_attr(&a, qp->qp_num);
	a.max_dest_rd_atomic = 255;
	CHECK(ibv_modify_qp(qp, &a, RC_RTR_MASK),
	      "INIT -> RTR with 255 responder resources fails");
	rc_rtr_attr(&a, 0x1000000);
	CHECK(ibv_modify_qp(qp, &a, RC_RTR_MASK), "INIT -> RTR with a 25-bit dest QPN fails");
	rc_rtr_attr(&a, qp->qp_num);
	a.ah_attr.is_global = 0;
	CHECK(ibv_modify_qp(qp, &a, RC_RTR_MASK), "INIT -> RTR without a GRH fails (RoCE)");
	rc_rtr_attr(&a, 0xabcde);
	CHECK(!ibv_modify_qp(qp, &a, RC_RTR_MASK) && qp_state(qp) == IBV_QPS_RTR,
	      "INIT -> RTR");

	rc_rts_attr(&a);
	a.timeout = 32;
	CHECK(ibv_modify_qp(qp, &a, RC_RTS_MASK), "RTR -> RTS with timeout 32 fails");
	rc_rts_attr(&a);
	a.retry_cnt = 8;
	CHECK(ibv_modify_qp(qp, &a, RC_RTS_MASK), "RTR -> RTS with retry_cnt 8 fails");
	rc_rts_attr(&a);
	CHECK(ibv_modify_qp(qp, &a, RC_RTS_MASK | IBV_QP_ALT_PATH),
	      "RTR -> RTS with an alternate path fails (no APM)");
	rc_rts_attr(&a);
	CHECK(!ibv_modify_qp(qp, &a, RC_RTS_MASK) && qp_state(qp) == IBV_QPS_RTS,
	      "RTR -> RTS");

	memset(&a, 0, sizeof(a));
	CHECK(!ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
			    IBV_QP_DEST_QPN | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_AV |
			    IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC, &ia) &&
	      a.sq_psn == 0x654321 && a.rq_psn == 0x123456 &&
	      a.dest_qp_num == 0xabcde && a.path_mtu == IBV_MTU_1024 &&
	      a.timeout == 14 && a.retry_cnt == 7 && a.rnr_retry == 7 &&
	      a.max_rd_atomic == 16 && a.max_dest_rd_atomic == 16 &&
	      a.ah_attr.is_global && a.ah_attr.grh.sgid_index == gid_idx &&
	      !memcmp(&a.ah_attr.grh.dgid, &gid, sizeof(gid)),
	      "query_qp returns the attributes set");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	a.en_sqd_async_notify = 1;
	drain_async();
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY) &&
	      qp_state(qp) == IBV_QPS_SQD, "RTS -> SQD");
	CHECK(wait_async(IBV_EVENT_SQ_DRAINED, qp, 2000),
	      "SQD: SQ_DRAINED event for an empty send queue");
	memset(&a, 0, sizeof(a));
	CHECK(!ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) && !a.sq_draining,
	      "SQD: query_qp says not draining");
	CHECK(!set_state(qp, IBV_QPS_RTS) && qp_state(qp) == IBV_QPS_RTS, "SQD -> RTS");
	CHECK(set_state(qp, IBV_QPS_RTR), "RTS -> RTR is illegal");
	CHECK(set_state(qp, IBV_QPS_INIT), "RTS -> INIT is illegal");
	CHECK(!set_state(qp, IBV_QPS_ERR) && qp_state(qp) == IBV_QPS_ERR, "RTS -> ERR");
	CHECK(set_state(qp, IBV_QPS_RTS), "ERR -> RTS is illegal");
	CHECK(!set_state(qp, IBV_QPS_RESET) && qp_state(qp) == IBV_QPS_RESET,
	      "ERR -> RESET");
	CHECK(!to_rts(qp) && qp_state(qp) == IBV_QPS_RTS,
	      "RESET -> INIT -> RTR -> RTS again after a reset");
	CHECK(!set_state(qp, IBV_QPS_RESET), "RTS -> RESET");
	CHECK(!to_init(qp) && !set_state(qp, IBV_QPS_ERR), "INIT -> ERR");
	ibv_destroy_qp(qp);

	qp = mk_qp(IBV_QPT_UD, cq, cq, 16, 16);
	CHECK(!to_rts(qp) && qp_state(qp) == IBV_QPS_RTS, "UD: RESET -> INIT -> RTR -> RTS");
	memset(&a, 0, sizeof(a));
	CHECK(!ibv_query_qp(qp, &a, IBV_QP_QKEY, &ia) && a.qkey == 0x11111111,
	      "UD: query_qp returns the qkey");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/* Post a mix of WRs, move to ERR, check every flush completion. */
static void test_flush(void)
{
	static const struct {
		enum ibv_wr_opcode op;
		unsigned int flags;
		enum ibv_wc_opcode wc;
	} ops[] = {
		{ IBV_WR_SEND, IBV_SEND_SIGNALED, IBV_WC_SEND },
		{ IBV_WR_RDMA_WRITE, 0, IBV_WC_RDMA_WRITE },
		{ IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED, IBV_WC_SEND },
		{ IBV_WR_RDMA_READ, IBV_SEND_SIGNALED, IBV_WC_RDMA_READ },
		{ IBV_WR_SEND, IBV_SEND_INLINE, IBV_WC_SEND },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SIGNALED, IBV_WC_RDMA_WRITE },
	};
	const int nops = sizeof(ops) / sizeof(ops[0]), nrecv = 8;
	struct ibv_cq *scq = mk_cq(256, NULL), *rcq = mk_cq(256, NULL);
	struct ibv_qp *qp = mk_qp(IBV_QPT_RC, scq, rcq, 32, 16);
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc[64];
	struct ibv_sge sge;
	struct ibv_mr *mr;
	char buf[4096];
	bool good;
	int i, n, err = 0;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("reg_mr");
	sge = (struct ibv_sge){ (uintptr_t)buf, 64, mr->lkey };

	CHECK(post_send1(qp, 1, IBV_WR_SEND, 0, &sge, 1) == EINVAL,
	      "post_send in RESET fails EINVAL");
	if (to_init(qp))
		die("QP to INIT");
	CHECK(post_send1(qp, 1, IBV_WR_SEND, 0, &sge, 1) == EINVAL,
	      "post_send in INIT fails EINVAL");
	set_state(qp, IBV_QPS_RESET);
	if (to_sqd(qp))
		die("QP to SQD");

	for (i = 0; i < nrecv; i++)
		err |= post_recv1(qp, 100 + i, &sge);
	CHECK(!err, "post %d receives into the mmap'd RQ", nrecv);
	for (i = 0; i < nops; i++)
		err |= post_send1(qp, 1 + i, ops[i].op, ops[i].flags, &sge, 1);
	CHECK(!err, "post %d sends (SEND, WRITE, SEND_IMM, READ, inline, WRITE_IMM)",
	      nops);
	CHECK(poll_n(scq, wc, 1, 100) == 0 && poll_n(rcq, wc, 1, 0) == 0,
	      "nothing completes while the QP is in SQD");

	CHECK(!set_state(qp, IBV_QPS_ERR), "move the QP with outstanding WQEs to ERR");
	n = poll_n(scq, wc, nops + 1, 2000);
	good = n == nops;
	for (i = 0; good && i < nops; i++)
		good = wc[i].wr_id == (uint64_t)(1 + i) &&
		       wc[i].status == IBV_WC_WR_FLUSH_ERR &&
		       wc[i].opcode == ops[i].wc && wc[i].qp_num == qp->qp_num;
	CHECK(good, "every send WQE flushed once, in order, with wr_id/opcode/qp_num (%d/%d), unsignaled too",
	      n, nops);
	n = poll_n(rcq, wc, nrecv + 1, 2000);
	good = n == nrecv;
	for (i = 0; good && i < nrecv; i++)
		good = wc[i].wr_id == (uint64_t)(100 + i) &&
		       wc[i].status == IBV_WC_WR_FLUSH_ERR &&
		       wc[i].opcode == IBV_WC_RECV && wc[i].qp_num == qp->qp_num;
	CHECK(good, "every receive WQE flushed once, in order (%d/%d)", n, nrecv);

	CHECK(!post_send1(qp, 77, IBV_WR_SEND, 0, &sge, 1) &&
	      poll_n(scq, wc, 1, 2000) == 1 && wc[0].wr_id == 77 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR,
	      "post_send in ERR completes at once with FLUSH_ERR");

	/* The flushes freed the ring: a full queue's worth fits again. */
	for (i = 0, err = 0; i < 32 && !err; i++)
		err = post_send1(qp, 1000 + i, IBV_WR_SEND, 0, &sge, 1);
	n = poll_n(scq, wc, 64, 2000);
	CHECK(!err && n == 32, "32 more posts in ERR all flush (%d)", n);

	CHECK(!set_state(qp, IBV_QPS_RESET) && !to_sqd(qp), "reset and back to SQD");
	if (ibv_query_qp(qp, &qa, IBV_QP_CAP, &qia))
		die("query_qp");
	for (i = 0, err = 0; i < 1000 && !err; i++)
		err = post_send1(qp, 2000 + i, IBV_WR_SEND, 0, &sge, 1);
	CHECK(err == ENOMEM && (uint32_t)(i - 1) == qa.cap.max_send_wr,
	      "the SQ holds exactly its %u granted WQEs, the next post fails ENOMEM (%d)",
	      qa.cap.max_send_wr, i - 1);
	set_state(qp, IBV_QPS_ERR);
	for (i = 0, n = 0; i < 200 && n < (int)qa.cap.max_send_wr; i++) {
		err = ibv_poll_cq(scq, 64, wc);
		if (err > 0)
			n += err;
		else
			usleep(10000);
	}
	CHECK(n == (int)qa.cap.max_send_wr && ibv_poll_cq(scq, 1, wc) == 0,
	      "all %d flush on ERR", n);

	CHECK(raw_post_send(qp, 1) == EINVAL,
	      "a POST_SEND command carrying WRs is refused on a user QP");
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
}

/*
 * A CQ exactly full of flushes, and one flush more: the IB spec lets a full
 * CQ overflow, but the last completion of a QP in ERR is the one a drain
 * waits for (a marker WR posted in ERR, as ib_drain_qp() does). It must
 * wait for room instead: no CQ_ERR, and it arrives, in order, once the
 * consumer polls -- user polls never enter the kernel, so the kernel
 * retries on its own.
 */
static void test_cq_full_flush(void)
{
	struct ibv_cq *cq = mk_cq(8, NULL), *other = mk_cq(8, NULL);
	int i, n, cap = cq->cqe, err = 0;
	struct ibv_sge sge = { 0 };
	struct ibv_wc wc[64];
	struct ibv_qp *qp;
	bool good;

	if (cap + 1 > 64)
		die("CQ full of flushes: CQ larger than expected");
	/* Sends: the last one posted in ERR, when the CQ is already full. */
	qp = mk_qp(IBV_QPT_RC, cq, other, cap + 1, 1);
	if (to_sqd(qp))
		die("QP to SQD");
	drain_async();
	for (i = 0; i < cap; i++)
		err |= post_send1(qp, i, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 0);
	if (err || set_state(qp, IBV_QPS_ERR))
		die("CQ full of flushes: post and ERR");
	err = post_send1(qp, cap, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 0);
	CHECK(!err && !wait_async(IBV_EVENT_CQ_ERR, cq, 300),
	      "a send posted in ERR onto a CQ full of %d flushes: no CQ overflow (%s)",
	      cap, strerror(err));
	n = poll_n(cq, wc, cap + 1, 5000);
	for (i = 0, good = n == cap + 1; good && i < n; i++)
		good = wc[i].wr_id == (uint64_t)i &&
		       wc[i].status == IBV_WC_WR_FLUSH_ERR;
	CHECK(good, "... its flush waits for room and arrives last, busy-polled (%d/%d in order)",
	      n, cap + 1);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);

	/* Receives: one more than a fresh CQ holds, flushed together. */
	cq = mk_cq(8, NULL);
	qp = mk_qp(IBV_QPT_RC, other, cq, 1, cap + 1);
	if (to_init(qp))
		die("QP to INIT");
	for (i = 0; i <= cap; i++)
		err |= post_recv1(qp, 100 + i, &sge);
	if (err || set_state(qp, IBV_QPS_ERR))
		die("CQ full of flushes: receives and ERR");
	CHECK(!wait_async(IBV_EVENT_CQ_ERR, cq, 300),
	      "%d receives flushed into a %d-entry CQ: no CQ overflow", cap + 1, cap);
	n = poll_n(cq, wc, cap, 2000);
	CHECK(!ibv_req_notify_cq(cq, 0), "arm the CQ once the flushes that fit are polled");
	n += poll_n(cq, wc + n, cap + 1 - n, 5000);
	for (i = 0, good = n == cap + 1; good && i < n; i++)
		good = wc[i].wr_id == (uint64_t)(100 + i) &&
		       wc[i].status == IBV_WC_WR_FLUSH_ERR &&
		       wc[i].opcode == IBV_WC_RECV;
	CHECK(good, "... the last receive's flush waited for room and arrives last (%d/%d in order)",
	      n, cap + 1);
	CHECK(ibv_poll_cq(cq, 1, wc) == 0, "... and nothing more");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(other);
}

static void test_notify(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct pollfd pfd;
	struct ibv_cq *cq, *ecq;
	struct ibv_qp *qp;
	struct ibv_wc wc[8];
	struct ibv_sge sge = { 0 };
	void *cq_ctx;
	bool ev;

	if (!ch)
		die("create_comp_channel");
	cq = mk_cq(16, ch);
	qp = mk_qp(IBV_QPT_RC, cq, cq, 8, 8);
	if (to_sqd(qp))
		die("QP to SQD");
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };

	post_send1(qp, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 0);
	set_state(qp, IBV_QPS_ERR);
	CHECK(poll_n(cq, wc, 1, 1000) == 1, "completion without arming");
	CHECK(poll(&pfd, 1, 200) == 0, "no event when the CQ is not armed");

	set_state(qp, IBV_QPS_RESET);
	to_sqd(qp);
	CHECK(!ibv_req_notify_cq(cq, 0), "arm for the next completion");
	post_send1(qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 0);
	set_state(qp, IBV_QPS_ERR);
	ev = poll(&pfd, 1, 2000) == 1 && !ibv_get_cq_event(ch, &ecq, &cq_ctx) &&
	     ecq == cq;
	CHECK(ev, "armed CQ: completion event delivered");
	if (ev)
		ibv_ack_cq_events(cq, 1);
	poll_n(cq, wc, 8, 100);

	set_state(qp, IBV_QPS_RESET);
	to_sqd(qp);
	CHECK(!ibv_req_notify_cq(cq, 1), "arm for solicited completions only");
	post_send1(qp, 3, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 0);
	set_state(qp, IBV_QPS_ERR);
	ev = poll(&pfd, 1, 2000) == 1 && !ibv_get_cq_event(ch, &ecq, &cq_ctx);
	CHECK(ev, "solicited-only arming: an error completion still notifies");
	if (ev)
		ibv_ack_cq_events(cq, 1);
	poll_n(cq, wc, 8, 100);
	CHECK(poll(&pfd, 1, 200) == 0, "one event per arming");

	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
}

/* A WQE the kernel must refuse: error completion, QP leaves RTS. */
static void bad_wqe(const char *what, enum ibv_qp_type type,
		    void (*fill)(struct rxe_send_wqe *w),
		    enum ibv_wc_status want)
{
	struct ibv_cq *cq = mk_cq(16, NULL);
	struct qp_spec s = {
		.type = type, .swr = 8, .rwr = 8, .ssge = 2, .rsge = 1,
		.inl = 64, .scq = cq, .rcq = cq,
	};
	struct rxe_send_wqe *w;
	struct ibv_wc wc[4];
	struct rings r;
	struct ibv_qp *qp;
	int n;

	qp = mk_qp_rings(&s, &r);
	if (to_rts(qp))
		die("QP to RTS");
	w = sq_put(&r);
	w->wr.wr_id = 0xbad;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	fill(w);
	sq_publish(&r);
	CHECK(raw_post_send(qp, 0) == 0, "%s: the doorbell accepts the WQE", what);
	n = poll_n(cq, wc, 2, 2000);
	CHECK(n == 1 && wc[0].wr_id == 0xbad && wc[0].status == want,
	      "%s: completes with %s (got %d: %s)", what,
	      ibv_wc_status_str(want), n, n ? ibv_wc_status_str(wc[0].status) : "-");
	CHECK(qp_state(qp) == (type == IBV_QPT_RC ? IBV_QPS_ERR : IBV_QPS_SQE),
	      "%s: QP moved to %s", what, type == IBV_QPT_RC ? "ERR" : "SQE");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void fill_opcode_ff(struct rxe_send_wqe *w)
{
	w->wr.opcode = 0xff;
}

static void fill_kernel_only(struct rxe_send_wqe *w)
{
	w->wr.opcode = 0x20;	/* IB_WR_REG_MR: kernel ULPs only */
}

static void fill_bind_mw(struct rxe_send_wqe *w)
{
	w->wr.opcode = IBV_WR_BIND_MW;
}

static void fill_atomic_write(struct rxe_send_wqe *w)
{
	w->wr.opcode = IBV_WR_ATOMIC_WRITE;
}

static void fill_many_sge(struct rxe_send_wqe *w)
{
	w->wr.opcode = IBV_WR_SEND;
	w->dma.num_sge = 100000;
}

static void fill_long_inline(struct rxe_send_wqe *w)
{
	w->wr.opcode = IBV_WR_SEND;
	w->wr.send_flags |= IBV_SEND_INLINE;
	w->dma.length = 1 << 30;
}

static void fill_overflowing_sges(struct rxe_send_wqe *w)
{
	w->wr.opcode = IBV_WR_SEND;
	w->dma.num_sge = 2;
	w->dma.sge[0].length = 0xffffffff;
	w->dma.sge[1].length = 0xffffffff;
}

static void fill_ud_no_ah(struct rxe_send_wqe *w)
{
	w->wr.opcode = IBV_WR_SEND;
	w->wr.wr.ud.ah_num = 0;
}

static void fill_ud_write(struct rxe_send_wqe *w)
{
	w->wr.opcode = IBV_WR_RDMA_WRITE;
}

static void test_bad_wqes(void)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc[4];
	struct ibv_sge sge = { 0 };
	int n;

	bad_wqe("opcode 0xff", IBV_QPT_RC, fill_opcode_ff, IBV_WC_LOC_QP_OP_ERR);
	bad_wqe("kernel-only REG_MR opcode", IBV_QPT_RC, fill_kernel_only,
		IBV_WC_LOC_QP_OP_ERR);
	bad_wqe("BIND_MW (no memory windows)", IBV_QPT_RC, fill_bind_mw,
		IBV_WC_LOC_QP_OP_ERR);
	bad_wqe("ATOMIC_WRITE", IBV_QPT_RC, fill_atomic_write,
		IBV_WC_LOC_QP_OP_ERR);
	bad_wqe("100000 SGEs", IBV_QPT_RC, fill_many_sge, IBV_WC_LOC_QP_OP_ERR);
	bad_wqe("1 GiB of inline data", IBV_QPT_RC, fill_long_inline,
		IBV_WC_LOC_LEN_ERR);
	bad_wqe("SGE lengths summing past 4 GiB", IBV_QPT_RC,
		fill_overflowing_sges, IBV_WC_LOC_LEN_ERR);
	bad_wqe("UD send with AH number 0", IBV_QPT_UD, fill_ud_no_ah,
		IBV_WC_LOC_QP_OP_ERR);
	bad_wqe("RDMA WRITE on a UD QP", IBV_QPT_UD, fill_ud_write,
		IBV_WC_LOC_QP_OP_ERR);

	/* Through the normal API: atomics while atomic_cap says NONE. */
	if (dattr.atomic_cap == IBV_ATOMIC_NONE) {
		static uint64_t atomic_res;
		struct ibv_mr *mr = ibv_reg_mr(pd, &atomic_res, sizeof(atomic_res),
					       IBV_ACCESS_LOCAL_WRITE);

		if (!mr)
			die("reg_mr");
		sge = (struct ibv_sge){ (uintptr_t)&atomic_res, 8, mr->lkey };
		cq = mk_cq(16, NULL);
		qp = mk_qp(IBV_QPT_RC, cq, cq, 8, 8);
		if (to_rts(qp))
			die("QP to RTS");
		post_send1(qp, 0xa7, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, &sge, 1);
		post_send1(qp, 0xa8, IBV_WR_SEND, 0, &sge, 1);
		n = poll_n(cq, wc, 3, 2000);
		CHECK(n == 2 && wc[0].wr_id == 0xa7 &&
		      wc[0].status == IBV_WC_LOC_QP_OP_ERR &&
		      wc[0].opcode == IBV_WC_FETCH_ADD &&
		      wc[1].wr_id == 0xa8 && wc[1].status == IBV_WC_WR_FLUSH_ERR,
		      "fetch-and-add without atomic support: error completion, the next WR flushed (%d)",
		      n);
		CHECK(qp_state(qp) == IBV_QPS_ERR, "... and the QP is in ERR");
		ibv_destroy_qp(qp);
		ibv_destroy_cq(cq);
		ibv_dereg_mr(mr);
	}

	/* UD SQE recovers to RTS, as ib_mad does for QP1. */
	cq = mk_cq(16, NULL);
	{
		struct qp_spec s = {
			.type = IBV_QPT_UD, .swr = 8, .rwr = 8, .ssge = 1,
			.rsge = 1, .scq = cq, .rcq = cq,
		};
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTS, .cur_qp_state = IBV_QPS_SQE,
		};
		struct rings r;

		qp = mk_qp_rings(&s, &r);
		to_rts(qp);
		sq_put(&r)->wr.opcode = 0xee;
		sq_publish(&r);
		raw_post_send(qp, 0);
		poll_n(cq, wc, 1, 2000);
		CHECK(qp_state(qp) == IBV_QPS_SQE &&
		      !ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE) &&
		      qp_state(qp) == IBV_QPS_RTS, "UD: SQE -> RTS");
		ibv_destroy_qp(qp);
	}
	ibv_destroy_cq(cq);
}

static void test_hostile(void)
{
	struct ibv_cq *cq, *big;
	struct rxe_queue_buf *cqr;
	struct qp_spec s;
	struct ibv_wc wc[64];
	struct ibv_sge sge = { 0 };
	struct rings r;
	struct ibv_qp *qp;
	uint32_t p;
	int n, err;

	/* A producer index moved behind what was already posted. */
	cq = mk_cq(64, NULL);
	s = (struct qp_spec){ .type = IBV_QPT_RC, .swr = 8, .rwr = 8,
			      .ssge = 1, .rsge = 1, .scq = cq, .rcq = cq };
	qp = mk_qp_rings(&s, &r);
	to_sqd(qp);
	post_send1(qp, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 0);
	post_send1(qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 0);
	drain_async();
	__atomic_store_n(&r.sq->producer_index, 1, __ATOMIC_RELEASE);
	err = raw_post_send(qp, 0);
	CHECK(err == EINVAL, "SQ producer index moved backwards: doorbell fails EINVAL (%s)",
	      strerror(err));
	CHECK(wait_async(IBV_EVENT_QP_FATAL, qp, 2000),
	      "... the QP gets a QP_FATAL async event");
	n = poll_n(cq, wc, 3, 2000);
	CHECK(qp_state(qp) == IBV_QPS_ERR && n == 2 && wc[0].wr_id == 1 &&
	      wc[1].wr_id == 2 && wc[1].status == IBV_WC_WR_FLUSH_ERR,
	      "... and goes to ERR, flushing what it held (%d)", n);
	ibv_destroy_qp(qp);

	/* Garbage in the header geometry is ignored: the kernel has its own. */
	qp = mk_qp_rings(&s, &r);
	to_rts(qp);
	r.sq->log2_elem_size = 3;
	r.sq->index_mask = 0xffffffff;
	p = __atomic_load_n(&r.sq->producer_index, __ATOMIC_RELAXED);
	((struct rxe_send_wqe *)ring_slot(r.sq, r.sq_mask, r.sq_log2, p))->wr.opcode = 0xfe;
	((struct rxe_send_wqe *)ring_slot(r.sq, r.sq_mask, r.sq_log2, p))->wr.wr_id = 0x99;
	__atomic_store_n(&r.sq->producer_index, (p + 1) & r.sq_mask, __ATOMIC_RELEASE);
	raw_post_send(qp, 0);
	n = poll_n(cq, wc, 2, 2000);
	CHECK(n == 1 && wc[0].wr_id == 0x99 && wc[0].status == IBV_WC_LOC_QP_OP_ERR,
	      "SQ header geometry overwritten: the kernel still reads the right slot");
	ibv_destroy_qp(qp);

	/* A huge producer index on the RQ: at most a ring's worth is flushed. */
	big = mk_cq(4096, NULL);
	s.rcq = big;
	qp = mk_qp_rings(&s, &r);
	to_rts(qp);
	__atomic_store_n(&r.rq->producer_index, 0xffffffff, __ATOMIC_RELEASE);
	set_state(qp, IBV_QPS_ERR);
	n = poll_n(big, wc, 64, 1000);
	CHECK(n > 0 && (uint32_t)n <= r.rq_mask,
	      "RQ producer 0xffffffff: flush stops at the ring size (%d <= %u)",
	      n, r.rq_mask);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(big);
	ibv_destroy_cq(cq);

	/*
	 * A CQ consumer index that makes the CQ look full: the flush waits
	 * for room (an error completion never overflows a CQ), and arrives
	 * once the index is sane again.
	 */
	cq = mk_cq_ring(16, &cqr);
	s.scq = s.rcq = cq;
	qp = mk_qp(IBV_QPT_RC, cq, cq, 8, 8);
	to_sqd(qp);
	drain_async();
	p = __atomic_load_n(&cqr->producer_index, __ATOMIC_ACQUIRE);
	__atomic_store_n(&cqr->consumer_index, (p + 1) & cqr->index_mask,
			 __ATOMIC_RELEASE);
	post_send1(qp, 5, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 0);
	set_state(qp, IBV_QPS_ERR);
	CHECK(!wait_async(IBV_EVENT_CQ_ERR, cq, 500) &&
	      __atomic_load_n(&cqr->producer_index, __ATOMIC_ACQUIRE) == p,
	      "CQ consumer index garbage (CQ looks full): the flush waits, no overflow");
	__atomic_store_n(&cqr->consumer_index, p, __ATOMIC_RELEASE);
	n = poll_n(cq, wc, 2, 3000);
	CHECK(n == 1 && wc[0].wr_id == 5 && wc[0].status == IBV_WC_WR_FLUSH_ERR,
	      "... and arrives once the index is sane again (%d)", n);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void test_srq(void)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 2 } };
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_qp_init_attr qia;
	struct ibv_srq_attr sa;
	struct ibv_sge sge = { 0 };
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct qp_spec s;
	int i, err = 0;

	srq = ibv_create_srq(pd, &sia);
	CHECK(srq && sia.attr.max_wr >= 16 && sia.attr.max_sge >= 2,
	      "create_srq: granted %u WRs x %u SGEs", sia.attr.max_wr,
	      sia.attr.max_sge);
	if (!srq)
		return;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	for (i = 0; i < 10; i++) {
		wr.wr_id = i;
		err |= ibv_post_srq_recv(srq, &wr, &bad);
	}
	CHECK(!err, "post_srq_recv 10 WQEs");
	wr.num_sge = 3;
	CHECK(ibv_post_srq_recv(srq, &wr, &bad), "post_srq_recv with 3 SGEs fails");
	sa.srq_limit = 4;
	CHECK(!ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), "modify_srq: arm limit 4");
	memset(&sa, 0, sizeof(sa));
	CHECK(!ibv_query_srq(srq, &sa) && sa.srq_limit == 4 &&
	      sa.max_wr == sia.attr.max_wr, "query_srq returns limit and size");
	sa.srq_limit = 1000;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), "modify_srq: limit above max_wr fails");
	sa.max_wr = 64;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), "modify_srq: resize is refused");

	cq = mk_cq(16, NULL);
	s = (struct qp_spec){ .type = IBV_QPT_RC, .swr = 8, .ssge = 1,
			      .scq = cq, .rcq = cq, .srq = srq };
	qp = try_qp(&s, &qia);
	CHECK(qp && qia.cap.max_recv_wr == 0, "create an RC QP on the SRQ (no RQ of its own)");
	CHECK(qp && ibv_destroy_srq(srq), "destroy_srq refused while a QP uses it");
	if (qp) {
		CHECK(!to_rts(qp) && !set_state(qp, IBV_QPS_ERR) &&
		      poll_n(cq, (struct ibv_wc[4]){}, 4, 200) == 0,
		      "QP error leaves the SRQ's WQEs alone");
		ibv_destroy_qp(qp);
	}
	CHECK(!ibv_destroy_srq(srq), "destroy_srq");
	ibv_destroy_cq(cq);
}

static void test_ah(void)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = { .dgid = gid, .sgid_index = gid_idx, .hop_limit = 64 },
		.port_num = 1,
	};
	struct qp_spec s;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc[2];
	struct ibv_cq *cq;
	struct rings r;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	uint32_t p;
	int n;

	ah = ibv_create_ah(pd, &aa);
	CHECK(ah, "create_ah with a GRH (%s)", ah ? "" : strerror(errno));
	if (!ah)
		return;
	aa.is_global = 0;
	errno = 0;
	CHECK(!ibv_create_ah(pd, &aa), "create_ah without a GRH fails on RoCE");

	cq = mk_cq(16, NULL);
	s = (struct qp_spec){ .type = IBV_QPT_UD, .swr = 8, .rwr = 8,
			      .ssge = 1, .rsge = 1, .scq = cq, .rcq = cq };
	qp = mk_qp_rings(&s, &r);
	to_sqd(qp);
	wr.wr_id = 0x5d;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0x42;
	wr.wr.ud.remote_qkey = 0x11111111;
	CHECK(!ibv_post_send(qp, &wr, &bad), "UD post_send through the AH");
	p = __atomic_load_n(&r.sq->producer_index, __ATOMIC_ACQUIRE);
	CHECK(((struct rxe_send_wqe *)ring_slot(r.sq, r.sq_mask, r.sq_log2, p - 1))
		      ->wr.wr.ud.ah_num != 0,
	      "the UD WQE librxe wrote carries a non-zero ah_num");
	CHECK(poll_n(cq, wc, 1, 200) == 0, "... and the kernel accepted it (no error)");
	set_state(qp, IBV_QPS_ERR);
	n = poll_n(cq, wc, 2, 2000);
	CHECK(n == 1 && wc[0].wr_id == 0x5d && wc[0].status == IBV_WC_WR_FLUSH_ERR,
	      "... until ERR flushes it");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	CHECK(!ibv_destroy_ah(ah), "destroy_ah");
}

/* The index of an IPv4 (::ffff:a.b.c.d) RoCE v2 GID of @c, or -1. */
static int ipv4_gid(struct ibv_context *c, union ibv_gid *g)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(c, 1, &pa))
		return -1;
	i = tc_find_ipv4_gid(c, pa.gid_tbl_len);
	return i < 0 || ibv_query_gid(c, 1, i, g) ? -1 : i;
}

/* Tear down what a traffic test made here and on the peer device. */
static void peer_free(struct ibv_context *ctx2, struct ibv_pd *pd2,
		      struct ibv_srq *srq, struct ibv_qp *qp[2],
		      struct ibv_cq *cq[2], struct ibv_mr *mr[2])
{
	int i;

	for (i = 0; i < 2; i++)
		ibv_destroy_qp(qp[i]);
	if (srq)
		ibv_destroy_srq(srq);
	for (i = 0; i < 2; i++) {
		ibv_destroy_cq(cq[i]);
		if (mr[i])
			ibv_dereg_mr(mr[i]);
	}
	ibv_dealloc_pd(pd2);
	ibv_close_device(ctx2);
}

/*
 * A UD send WQE that fails while its CQ is full: the QP enters SQE at
 * once and the completion waits for room. If the consumer moves the QP
 * back to RTS meanwhile, posting the completion later must not stop the
 * QP a second time.
 */
static void test_parked_error_once(void)
{
	struct ibv_cq *cq = mk_cq(8, NULL), *other = mk_cq(8, NULL);
	struct qp_spec s = {
		.type = IBV_QPT_UD, .swr = 8, .rwr = 8, .ssge = 1, .rsge = 1,
		.scq = cq, .rcq = other,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .cur_qp_state = IBV_QPS_SQE,
	};
	int i, n, cap = cq->cqe;
	struct ibv_wc wc[64];
	struct rings r;
	struct ibv_qp *qp;
	bool good;

	if (cap + 1 > 16)
		die("parked error: CQ larger than expected");
	qp = mk_qp_rings(&s, &r);
	if (to_rts(qp))
		die("parked error: UD QP to RTS");
	flush_recvs(cq, 0, cap);		/* the CQ is full */
	drain_async();
	sq_put(&r)->wr.opcode = 0xee;
	sq_publish(&r);
	raw_post_send(qp, 0);
	for (i = 0; i < 200 && qp_state(qp) != IBV_QPS_SQE; i++)
		usleep(10000);
	CHECK(qp_state(qp) == IBV_QPS_SQE,
	      "parked error: a bad UD WQE while its CQ is full moves the QP to SQE at once");
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE),
	      "parked error: SQE -> RTS before its completion is polled");
	n = poll_n(cq, wc, cap + 1, 5000);
	for (i = 0, good = n == cap + 1; good && i < cap; i++)
		good = wc[i].wr_id == (uint64_t)i &&
		       wc[i].status == IBV_WC_WR_FLUSH_ERR;
	CHECK(good && wc[cap].status == IBV_WC_LOC_QP_OP_ERR,
	      "parked error: the error completion arrives once there is room (%d/%d)",
	      n, cap + 1);
	usleep(200000);
	CHECK(qp_state(qp) == IBV_QPS_RTS,
	      "parked error: posting it did not stop the QP again (state %d)",
	      qp_state(qp));
	CHECK(ibv_poll_cq(cq, 1, wc) == 0, "parked error: nothing more");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(other);
}

/*
 * An RC QP here (on a 64-entry CQ) connected to an RC QP on the peer device
 * that takes its receives from an SRQ of @srq_wr WQEs, on a peer CQ of
 * @cq2_size entries; the peer's PD is for the peer's MRs.
 */
struct srq_pair {
	struct ibv_context	*ctx2;
	struct ibv_pd		*pd2;
	struct ibv_srq		*srq;
	struct ibv_srq_attr	sattr;		/* as granted */
	struct ibv_cq		*cq, *cq2;
	struct ibv_qp		*qp, *qp2;
};

static void srq_pair_open(struct srq_pair *p, const char *peer, uint32_t srq_wr,
			  int cq2_size, const char *what)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = srq_wr, .max_sge = 1 } };
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	union ibv_gid gid2;
	int idx2;

	memset(p, 0, sizeof(*p));
	p->ctx2 = tc_open_device(peer);
	p->pd2 = ibv_alloc_pd(p->ctx2);
	idx2 = ipv4_gid(p->ctx2, &gid2);
	p->srq = p->pd2 ? ibv_create_srq(p->pd2, &sia) : NULL;
	p->sattr = sia.attr;
	p->cq = mk_cq(64, NULL);
	p->cq2 = ibv_create_cq(p->ctx2, cq2_size, NULL, NULL, 0);
	p->qp = mk_qp(IBV_QPT_RC, p->cq, p->cq, 16, 1);
	a.send_cq = a.recv_cq = p->cq2;
	a.srq = p->srq;
	p->qp2 = p->srq && p->cq2 ? ibv_create_qp(p->pd2, &a) : NULL;
	if (idx2 < 0 || !p->qp2 ||
	    rc_connect(p->qp, p->qp2->qp_num, &gid2, gid_idx) ||
	    rc_connect(p->qp2, p->qp->qp_num, &gid, idx2))
		die("%s: peer PD, GID, SRQ, CQ and connected QPs", what);
}

static void srq_pair_close(struct srq_pair *p, struct ibv_mr *mr,
			   struct ibv_mr *mr2)
{
	peer_free(p->ctx2, p->pd2, p->srq, (struct ibv_qp *[]){ p->qp, p->qp2 },
		  (struct ibv_cq *[]){ p->cq, p->cq2 },
		  (struct ibv_mr *[]){ mr, mr2 });
}

/* Post one receive of @len bytes at @buf to an SRQ. */
static int post_srq_recv1(struct ibv_srq *srq, uint64_t wr_id, void *buf,
			  uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/*
 * With a transport: a QP on this device sends to a QP on the peer device
 * that takes its receives from an SRQ armed at 4 of 8 WQEs. Four messages
 * leave exactly 4 (no event), the fifth leaves 3 (one SRQ_LIMIT_REACHED);
 * every byte that arrives is checked.
 */
static void test_srq_limit_traffic(const char *peer)
{
	enum { N = 8, LEN = 32 };
	static char rbuf[N][64], sbuf[N][LEN];
	struct ibv_srq_attr sa = { 0 };
	struct ibv_mr *rmr, *smr;
	struct ibv_wc wc[16];
	struct srq_pair p;
	struct ibv_sge sge;
	int i, j, n, k, got, nrecv = 0, nsend = 0, err = 0;
	bool good = true;

	srq_pair_open(&p, peer, 8, 64, "SRQ traffic");
	rmr = ibv_reg_mr(p.pd2, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
	if (!rmr || !smr)
		die("SRQ traffic: MRs");
	for (i = 0; i < N; i++) {
		err |= post_srq_recv1(p.srq, 100 + i, rbuf[i], sizeof(rbuf[i]),
				      rmr->lkey);
		memset(sbuf[i], 'a' + i, LEN);
	}
	sa.srq_limit = 4;
	err |= ibv_modify_srq(p.srq, &sa, IBV_SRQ_LIMIT);
	if (err)
		die("SRQ traffic: receives and limit");

	for (i = 0; i < 5; i++) {
		sge = (struct ibv_sge){ (uintptr_t)sbuf[i], LEN, smr->lkey };
		post_send1(p.qp, 1 + i, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 1);
		for (n = 0; n < 5000 && (nsend <= i || nrecv <= i); n++) {
			got = ibv_poll_cq(p.cq, 16, wc);
			for (k = 0; k < got; k++, nsend++)
				good = good && wc[k].status == IBV_WC_SUCCESS;
			k = ibv_poll_cq(p.cq2, 16, wc);
			for (j = 0; j < k; j++, nrecv++)
				good = good && nrecv < N &&
				       wc[j].status == IBV_WC_SUCCESS &&
				       wc[j].opcode == IBV_WC_RECV &&
				       wc[j].wr_id == (uint64_t)(100 + nrecv) &&
				       wc[j].byte_len == LEN &&
				       !memcmp(rbuf[nrecv], sbuf[nrecv], LEN);
			if (got <= 0 && k <= 0)
				usleep(2000);
		}
		if (i == 3)
			CHECK(!wait_async_on(p.ctx2, IBV_EVENT_SRQ_LIMIT_REACHED,
					     p.srq, 300),
			      "SRQ traffic: no limit event while 4 WQEs remain");
	}
	CHECK(wait_async_on(p.ctx2, IBV_EVENT_SRQ_LIMIT_REACHED, p.srq, 2000),
	      "SRQ traffic: SRQ_LIMIT_REACHED once 3 remain");
	CHECK(good && nsend == 5 && nrecv == 5,
	      "SRQ traffic: 5 messages into the peer's SRQ, every byte checked (%d sent, %d received)",
	      nsend, nrecv);
	CHECK(!ibv_query_srq(p.srq, &sa) && sa.srq_limit == 0,
	      "SRQ traffic: the fifth message disarmed the limit");
	srq_pair_close(&p, rmr, smr);
}

static void fill_msg(char *buf, int len, int i)
{
	memset(buf, 'A' + i % 26, len);
	memcpy(buf, &i, sizeof(i));
}

/*
 * An RC QP here (@swr send WRs, one receive) connected to an RC QP on the
 * peer device (one send WR, @rwr receives), each on its own CQ and IPv4
 * GID; the peer's PD is for the peer's MRs.
 */
struct rc_pair {
	struct ibv_context	*ctx2;
	struct ibv_pd		*pd2;
	struct ibv_cq		*cq, *cq2;
	struct ibv_qp		*qp, *qp2;
};

static void rc_pair_open(struct rc_pair *p, const char *peer, uint32_t swr,
			 uint32_t rwr, const char *what)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 1, .max_recv_wr = rwr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	union ibv_gid gid2;
	int idx2;

	p->ctx2 = tc_open_device(peer);
	p->pd2 = ibv_alloc_pd(p->ctx2);
	idx2 = ipv4_gid(p->ctx2, &gid2);
	p->cq = mk_cq(8, NULL);
	p->cq2 = ibv_create_cq(p->ctx2, 8, NULL, NULL, 0);
	p->qp = mk_qp(IBV_QPT_RC, p->cq, p->cq, swr, 1);
	a.send_cq = a.recv_cq = p->cq2;
	p->qp2 = p->pd2 && p->cq2 ? ibv_create_qp(p->pd2, &a) : NULL;
	if (idx2 < 0 || !p->qp2 ||
	    rc_connect(p->qp, p->qp2->qp_num, &gid2, gid_idx) ||
	    rc_connect(p->qp2, p->qp->qp_num, &gid, idx2))
		die("%s: peer objects and connection", what);
}

static void rc_pair_close(struct rc_pair *p, struct ibv_mr *mr,
			  struct ibv_mr *mr2)
{
	peer_free(p->ctx2, p->pd2, NULL, (struct ibv_qp *[]){ p->qp, p->qp2 },
		  (struct ibv_cq *[]){ p->cq, p->cq2 },
		  (struct ibv_mr *[]){ mr, mr2 });
}

/* A send buffer here and a receive buffer on the peer, registered, and their SGEs. */
struct rc_bufs {
	struct ibv_mr	*smr, *rmr;
	struct ibv_sge	ssge, rsge;
};

static void rc_bufs_reg(struct rc_bufs *b, const struct rc_pair *p,
			void *sbuf, void *rbuf, uint32_t len, const char *what)
{
	b->rmr = ibv_reg_mr(p->pd2, rbuf, len, IBV_ACCESS_LOCAL_WRITE);
	b->smr = ibv_reg_mr(pd, sbuf, len, 0);
	if (!b->rmr || !b->smr)
		die("%s: MRs", what);
	b->ssge = (struct ibv_sge){ (uintptr_t)sbuf, len, b->smr->lkey };
	b->rsge = (struct ibv_sge){ (uintptr_t)rbuf, len, b->rmr->lkey };
}

/*
 * With a transport: send and receive queues one WQE deep, as
 * ibv_rc_pingpong makes its send queue. Each WR is posted the moment the
 * completion of the one before it is polled, so its slot must be back in
 * the ring by then: a post failing with ENOMEM means the kernel posted a
 * CQE before it gave the slot back (librxe sees a full ring). Every
 * message that arrives is checked byte for byte.
 */
static void test_one_deep(const char *peer)
{
	enum { ITERS = 200, LEN = 256 };
	static char sbuf[LEN], rbuf[LEN], want[LEN];
	int i, sent = 0, rcvd = 0, send_err = 0, recv_err = 0;
	int bad_wc = 0, bad_data = 0;
	struct rc_bufs b;
	struct rc_pair p;
	struct ibv_wc wc;
	double deadline;

	rc_pair_open(&p, peer, 1, 1, "one-deep queues");
	rc_bufs_reg(&b, &p, sbuf, rbuf, LEN, "one-deep queues");
	recv_err = post_recv1(p.qp2, 0, &b.rsge);
	fill_msg(sbuf, LEN, 0);
	send_err = post_send1(p.qp, 0, IBV_WR_SEND, IBV_SEND_SIGNALED, &b.ssge, 1);
	/* Busy polling, as the pingpongs do: the post follows the poll at once. */
	deadline = tc_now_s() + 60;
	for (i = 0; !send_err && !recv_err && (sent < ITERS || rcvd < ITERS);
	     i++) {
		if (!(i & 1023) && tc_now_s() > deadline)
			break;
		if (ibv_poll_cq(p.cq, 1, &wc) == 1) {
			if (wc.status != IBV_WC_SUCCESS ||
			    wc.wr_id != (uint64_t)sent)
				bad_wc++;
			if (++sent < ITERS) {
				fill_msg(sbuf, LEN, sent);
				send_err = post_send1(p.qp, sent, IBV_WR_SEND,
						      IBV_SEND_SIGNALED,
						      &b.ssge, 1);
			}
		}
		if (ibv_poll_cq(p.cq2, 1, &wc) == 1) {
			fill_msg(want, LEN, rcvd);
			if (wc.status != IBV_WC_SUCCESS ||
			    wc.wr_id != (uint64_t)rcvd || wc.byte_len != LEN)
				bad_wc++;
			else if (memcmp(rbuf, want, LEN))
				bad_data++;
			if (++rcvd < ITERS)
				recv_err = post_recv1(p.qp2, rcvd, &b.rsge);
		}
	}
	CHECK(!send_err, "one-deep SQ: each send posted right after the previous completion (%s after %d)",
	      strerror(send_err), sent);
	CHECK(!recv_err, "one-deep RQ: each receive posted right after the previous completion (%s after %d)",
	      strerror(recv_err), rcvd);
	CHECK(sent == ITERS && rcvd == ITERS && !bad_wc && !bad_data,
	      "one-deep queues: %d x %d B sent and received in order, every byte checked (%d/%d done, %d bad completions, %d bad payloads)",
	      ITERS, LEN, sent, rcvd, bad_wc, bad_data);
	rc_pair_close(&p, b.rmr, b.smr);
}

/* A hw counter of the device under test, -1 if unreadable. */
static long long hw_counter(const char *dev, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * With a transport: successful completions do overflow a CQ sized too
 * small for the traffic (the IB spec's CQ error), and every overflow is
 * counted in hw counter cq_overflow.
 */
static void test_cq_overflow_counted(const char *dev, const char *peer)
{
	struct ibv_sge sge = { 0 };
	long long before, after;
	struct rc_pair p;
	int i, err = 0;

	rc_pair_open(&p, peer, 4, 4, "CQ overflow");
	before = hw_counter(dev, "cq_overflow");
	if (ibv_resize_cq(p.cq, 1) || p.cq->cqe != 1)
		die("CQ overflow: resize the CQ to 1 entry");
	drain_async();
	for (i = 0; i < 2; i++)
		err |= post_recv1(p.qp2, i, &sge);
	for (i = 0; i < 2; i++)
		err |= post_send1(p.qp, i, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 0);
	if (err)
		die("CQ overflow: posts");
	CHECK(wait_async(IBV_EVENT_CQ_ERR, p.cq, 10000),
	      "two successful sends into a 1-entry CQ: CQ_ERR (overflow)");
	/* The core caches hw counters for their lifespan (10 ms). */
	for (i = 0; i < 100; i++) {
		usleep(20000);
		after = hw_counter(dev, "cq_overflow");
		if (after != before)
			break;
	}
	usleep(50000);
	after = hw_counter(dev, "cq_overflow");
	CHECK(before >= 0 && after == before + 1,
	      "... counted once in hw counter cq_overflow (%lld -> %lld)",
	      before, after);
	rc_pair_close(&p, NULL, NULL);
}

/* Poll @cq for one completion for up to @ms milliseconds. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	double deadline = tc_now_s() + ms / 1000.0;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0 && tc_now_s() < deadline)
		usleep(1000);
	return n;
}

/*
 * With a transport: a SEND to a QP whose application destroyed it a moment
 * ago (docs/protocol.md §4.4, d339879). The peer's tombstone of the QP
 * refuses the new message "resend later" (NAK STREAM_PSN_WINDOW) while it
 * lasts (2 s): the sender holds and resends it, so an application that
 * races its peer's teardown (ibv_srq_pingpong posts a send its peer no
 * longer waits for, and quits once its earlier sends complete) is not
 * failed by a refusal that comes back first. After the tombstone the
 * refusal is final: NAK UNKNOWN_STREAM, IBV_WC_REM_INV_REQ_ERR, as an IB
 * requester fails once its retries run out.
 */
static void test_send_to_destroyed_qp(const char *peer)
{
	enum { LEN = 64 };
	static char sbuf[LEN], rbuf[LEN];
	long long win0, unk0, win = -1, unk = -1;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS }, wc2;
	struct rc_bufs b;
	double deadline;
	struct rc_pair p;
	int n = 0;

	rc_pair_open(&p, peer, 2, 1, "send to a destroyed QP");
	rc_bufs_reg(&b, &p, sbuf, rbuf, LEN, "send to a destroyed QP");

	/* One message received: the peer's stream is live, so it leaves a tombstone. */
	fill_msg(sbuf, LEN, 1);
	if (post_recv1(p.qp2, 1, &b.rsge) ||
	    post_send1(p.qp, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, &b.ssge, 1))
		die("send to a destroyed QP: first posts");
	CHECK(poll_one(p.cq2, &wc2, 10000) == 1 && wc2.status == IBV_WC_SUCCESS &&
	      poll_one(p.cq, &wc, 10000) == 1 && wc.status == IBV_WC_SUCCESS,
	      "send to a destroyed QP: the first SEND completes at both ends");

	ibv_destroy_qp(p.qp2);
	win0 = hw_counter(peer, "naks_sent_stream_psn_window");
	unk0 = hw_counter(peer, "naks_sent_unknown_stream");
	if (post_send1(p.qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED, &b.ssge, 1))
		die("send to a destroyed QP: second post");
	/*
	 * Two refusals of the new message mean the sender resent it after
	 * the first: it was not failed there. (The core caches hw counters
	 * for 10 ms.)
	 */
	deadline = tc_now_s() + 10;
	while (tc_now_s() < deadline) {
		n = ibv_poll_cq(p.cq, 1, &wc);
		win = hw_counter(peer, "naks_sent_stream_psn_window");
		unk = hw_counter(peer, "naks_sent_unknown_stream");
		if (n || win < 0 || win >= win0 + 2)
			break;
		usleep(2000);
	}
	CHECK(!n && win0 >= 0 && win >= win0 + 2 && unk == unk0,
	      "send to a destroyed QP: refused 'resend later' (STREAM_PSN_WINDOW NAKs %lld -> %lld, UNKNOWN_STREAM %lld -> %lld) and resent, not failed (%s)",
	      win0, win, unk0, unk,
	      n ? ibv_wc_status_str(wc.status) : "no completion");

	/* The tombstone lasts 2 s; then the refusal is final. */
	if (!n)
		n = poll_one(p.cq, &wc, 20000);
	unk = hw_counter(peer, "naks_sent_unknown_stream");
	CHECK(n == 1 && wc.wr_id == 2 && wc.status == IBV_WC_REM_INV_REQ_ERR &&
	      unk > unk0,
	      "send to a destroyed QP: fails IBV_WC_REM_INV_REQ_ERR once the tombstone is gone (%s, UNKNOWN_STREAM NAKs %lld -> %lld)",
	      n == 1 ? ibv_wc_status_str(wc.status) : "no completion",
	      unk0, unk);

	ibv_destroy_qp(p.qp);
	ibv_destroy_cq(p.cq);
	ibv_destroy_cq(p.cq2);
	ibv_dereg_mr(b.rmr);
	ibv_dereg_mr(b.smr);
	ibv_dealloc_pd(p.pd2);
	ibv_close_device(p.ctx2);
}

/*
 * With a transport: a receive from an SRQ that fails while its CQ is full.
 * The peer's CQ fills with successful receives; the next message is longer
 * than the SRQ WQE it lands in. That receive fails: its QP enters ERR at
 * once, but its completion waits for room (no CQ_ERR) and arrives last,
 * after the ones that filled the CQ, once they are polled; and its SRQ
 * slot comes back with it (the SRQ takes max_wr new WQEs).
 */
static void test_srq_error_full_cq(const char *peer)
{
	enum { LEN = 32, SHORT = 16 };
	static char rbuf[16][LEN], sbuf[16][LEN];
	struct ibv_mr *rmr, *smr;
	struct ibv_wc wc[16];
	struct srq_pair p;
	struct ibv_sge sge;
	int i, n, cap, bad = 0, err = 0;

	srq_pair_open(&p, peer, 8, 2, "SRQ error, full CQ");
	rmr = ibv_reg_mr(p.pd2, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
	cap = p.cq2->cqe;
	if (!rmr || !smr || cap + 1 > (int)p.sattr.max_wr || cap + 1 > 16)
		die("SRQ error, full CQ: MRs, a CQ of %d", cap);
	/* @cap receives of LEN bytes, then one of SHORT. */
	for (i = 0; i <= cap; i++) {
		err |= post_srq_recv1(p.srq, 200 + i, rbuf[i],
				      i < cap ? LEN : SHORT, rmr->lkey);
		fill_msg(sbuf[i], LEN, i);
	}
	if (err)
		die("SRQ error, full CQ: receives");
	while (wait_async_on(p.ctx2, IBV_EVENT_CQ_ERR, p.cq2, 0))
		;

	/* One at a time: each lands in the next SRQ WQE, in order. */
	for (i = 0; i <= cap && !bad; i++) {
		sge = (struct ibv_sge){ (uintptr_t)sbuf[i], LEN, smr->lkey };
		if (post_send1(p.qp, i, IBV_WR_SEND, IBV_SEND_SIGNALED, &sge, 1) ||
		    poll_one(p.cq, wc, 10000) != 1 || wc[0].wr_id != (uint64_t)i ||
		    (wc[0].status == IBV_WC_SUCCESS) != (i < cap))
			bad = i + 1;
	}
	CHECK(!bad,
	      "SRQ error, full CQ: %d sends fill the peer's CQ, the next fails at the receiver (bad at %d)",
	      cap, bad - 1);
	CHECK(qp_state(p.qp2) == IBV_QPS_ERR,
	      "SRQ error, full CQ: the receiving QP is in ERR at once, its completion not polled yet");
	CHECK(!wait_async_on(p.ctx2, IBV_EVENT_CQ_ERR, p.cq2, 300),
	      "SRQ error, full CQ: no CQ overflow");
	n = poll_n(p.cq2, wc, cap + 1, 5000);
	for (i = 0, bad = n != cap + 1; !bad && i < n; i++) {
		if (wc[i].wr_id != (uint64_t)(200 + i))
			bad = 1;
		else if (i < cap)
			bad = wc[i].status != IBV_WC_SUCCESS ||
			      wc[i].byte_len != LEN ||
			      memcmp(rbuf[i], sbuf[i], LEN);
		else	/* the responder's QP failed: a flush, as a rule */
			bad = wc[i].status == IBV_WC_SUCCESS;
	}
	CHECK(!bad,
	      "SRQ error, full CQ: %d receives (bytes checked), then the failed one's error completion, once polled (%d/%d)",
	      cap, n, cap + 1);
	CHECK(ibv_poll_cq(p.cq2, 1, wc) == 0, "SRQ error, full CQ: nothing more");
	for (i = 0, err = 0; i < (int)p.sattr.max_wr; i++)
		err |= post_srq_recv1(p.srq, 300 + i, rbuf[0], LEN, rmr->lkey);
	CHECK(!err, "SRQ error, full CQ: every SRQ slot came back (%u posted)",
	      p.sattr.max_wr);
	srq_pair_close(&p, rmr, smr);
}

/* The first byte of @buf[0..@len) that is not @c, or @len. */
static size_t first_not(const void *buf, size_t len, unsigned char c)
{
	const unsigned char *b = buf;
	size_t i;

	for (i = 0; i < len && b[i] == c; i++)
		;
	return i;
}

/*
 * With a transport: a receive SGE of 16 KiB whose MR holds only its first
 * 8 KiB (a buffer sized for the largest message, registered for the ones
 * expected). Messages that fit the MR land, several packets each, through
 * one pin on the part of the SGE inside the MR; one byte more fails the
 * receive (the sender sees IBV_WC_REM_OP_ERR) and nothing is written past
 * the MR.
 */
static void test_sge_past_mr(const char *peer)
{
	enum { SGE = 16384, MRLEN = 8192 };
	static const int lens[] = { 100, 6000, MRLEN };
	static char sbuf[SGE], rbuf[SGE], want[SGE];
	int i, n, n2, bad = 0, untouched;
	struct ibv_wc wc, wc2 = { 0 };
	struct ibv_sge ssge, rsge;
	struct ibv_mr *smr, *rmr;
	struct rc_pair p;

	rc_pair_open(&p, peer, 4, 4, "SGE past its MR");
	rmr = ibv_reg_mr(p.pd2, rbuf, MRLEN, IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(pd, sbuf, SGE, 0);
	if (!rmr || !smr)
		die("SGE past its MR: MRs");

	memset(rbuf, 0x5a, SGE);
	rsge = (struct ibv_sge){ (uintptr_t)rbuf, SGE, rmr->lkey };
	for (i = 0; i < 3; i++) {
		fill_msg(sbuf, lens[i], i);
		ssge = (struct ibv_sge){ (uintptr_t)sbuf, lens[i], smr->lkey };
		if (post_recv1(p.qp2, i, &rsge) ||
		    post_send1(p.qp, i, IBV_WR_SEND, IBV_SEND_SIGNALED,
			       &ssge, 1)) {
			bad++;
			break;
		}
		n = poll_one(p.cq, &wc, 10000);
		n2 = poll_one(p.cq2, &wc2, 10000);
		fill_msg(want, lens[i], i);
		if (n != 1 || wc.status != IBV_WC_SUCCESS || n2 != 1 ||
		    wc2.status != IBV_WC_SUCCESS || wc2.wr_id != (uint64_t)i ||
		    wc2.byte_len != (uint32_t)lens[i] ||
		    memcmp(rbuf, want, lens[i]))
			bad++;
	}
	CHECK(!bad, "SGE past its MR: 100, 6000 and 8192 B messages land in the MR's part, every byte checked (%d bad)",
	      bad);

	memset(rbuf, 0x5a, SGE);
	fill_msg(sbuf, MRLEN + 1, 3);
	ssge = (struct ibv_sge){ (uintptr_t)sbuf, MRLEN + 1, smr->lkey };
	n = n2 = 0;
	if (!post_recv1(p.qp2, 3, &rsge) &&
	    !post_send1(p.qp, 3, IBV_WR_SEND, IBV_SEND_SIGNALED, &ssge, 1)) {
		n = poll_one(p.cq, &wc, 10000);
		n2 = poll_one(p.cq2, &wc2, 10000);
	}
	CHECK(n == 1 && wc.status == IBV_WC_REM_OP_ERR,
	      "SGE past its MR: one byte past the MR fails the send with REM_OP_ERR (%s)",
	      n == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	CHECK(n2 == 1 && wc2.wr_id == 3 && wc2.status != IBV_WC_SUCCESS,
	      "SGE past its MR: the receive completes in error (%s)",
	      n2 == 1 ? ibv_wc_status_str(wc2.status) : "no completion");
	untouched = first_not(rbuf + MRLEN, SGE - MRLEN, 0x5a);
	CHECK(untouched == SGE - MRLEN,
	      "SGE past its MR: nothing written past the MR (first change at +%d)",
	      untouched);
	rc_pair_close(&p, rmr, smr);
}

/*
 * Post @wr (one signaled work request) and wait for its completion: the
 * completion's status, or what went wrong before there was one.
 */
static const char *post1(struct rc_pair *p, struct ibv_send_wr *wr,
			 struct ibv_wc *wc)
{
	struct ibv_send_wr *bad;

	wc->status = IBV_WC_GENERAL_ERR;
	if (ibv_post_send(p->qp, wr, &bad))
		return "post failed";
	if (poll_one(p->cq, wc, 10000) != 1)
		return "no completion";
	return ibv_wc_status_str(wc->status);
}

/* One signaled RDMA WRITE or READ of @sge at @remote_addr; its completion. */
static const char *rdma1(struct rc_pair *p, uint64_t wr_id,
			 enum ibv_wr_opcode op, struct ibv_sge *sge,
			 uint64_t remote_addr, uint32_t rkey, struct ibv_wc *wc)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
	};

	wr.wr.rdma.remote_addr = remote_addr;
	wr.wr.rdma.rkey = rkey;
	return post1(p, &wr, wc);
}

/*
 * A WRITE after its key's MR was deregistered (@what: "rkey" or "lkey",
 * the one that went) fails with @want and leaves @rbuf as it was.
 */
static void write_after_dereg(struct rc_pair *p, uint64_t wr_id,
			      struct ibv_sge *sge, void *rbuf,
			      uint32_t rkey, const char *what,
			      enum ibv_wc_status want)
{
	struct ibv_wc wc;
	const char *st;
	size_t untouched;

	memset(rbuf, 0x5a, sge->length);
	st = rdma1(p, wr_id, IBV_WR_RDMA_WRITE, sge, (uintptr_t)rbuf, rkey,
		   &wc);
	CHECK(wc.status == want,
	      "%s after dereg: a WRITE with the old %s fails with %s (%s)",
	      what, what, ibv_wc_status_str(want), st);
	untouched = first_not(rbuf, sge->length, 0x5a);
	CHECK(untouched == sge->length,
	      "%s after dereg: nothing written into the target buffer (first change at %zu)",
	      what, untouched);
}

/*
 * With a transport: the responder looks an rkey up once per message and
 * caches the MR per QP. WRITE and READ of several packets each through an
 * rkey, then deregister the MR: a WRITE with the old rkey must fail with
 * IBV_WC_REM_ACCESS_ERR and leave the (still mapped) buffer untouched.
 */
static void test_rkey_after_dereg(const char *peer)
{
	enum { LEN = 12000 };
	static char sbuf[LEN], rbuf[LEN], want[LEN], spare[64];
	struct ibv_mr *smr, *rmr, *spare_mr;
	struct ibv_wc wc;
	struct ibv_sge sge;
	struct rc_pair p;
	const char *st;
	uint32_t rkey;

	rc_pair_open(&p, peer, 4, 1, "rkey after dereg");
	rmr = ibv_reg_mr(p.pd2, rbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	smr = ibv_reg_mr(pd, sbuf, LEN, IBV_ACCESS_LOCAL_WRITE);
	spare_mr = ibv_reg_mr(p.pd2, spare, sizeof(spare),
			      IBV_ACCESS_LOCAL_WRITE);
	if (!rmr || !smr || !spare_mr)
		die("rkey after dereg: MRs");
	rkey = rmr->rkey;
	sge = (struct ibv_sge){ (uintptr_t)sbuf, LEN, smr->lkey };

	fill_msg(sbuf, LEN, 7);
	memset(rbuf, 0, LEN);
	st = rdma1(&p, 1, IBV_WR_RDMA_WRITE, &sge, (uintptr_t)rbuf, rkey, &wc);
	CHECK(wc.status == IBV_WC_SUCCESS && !memcmp(rbuf, sbuf, LEN),
	      "rkey after dereg: a %d B WRITE through the rkey lands, every byte checked (%s)",
	      LEN, st);

	memcpy(want, sbuf, LEN);
	memset(sbuf, 0, LEN);
	st = rdma1(&p, 2, IBV_WR_RDMA_READ, &sge, (uintptr_t)rbuf, rkey, &wc);
	CHECK(wc.status == IBV_WC_SUCCESS && !memcmp(sbuf, want, LEN),
	      "rkey after dereg: a %d B READ back through it, every byte checked (%s)",
	      LEN, st);

	CHECK(!ibv_dereg_mr(rmr), "rkey after dereg: dereg_mr on the peer");
	fill_msg(sbuf, LEN, 8);
	write_after_dereg(&p, 3, &sge, rbuf, rkey, "rkey",
			  IBV_WC_REM_ACCESS_ERR);
	rc_pair_close(&p, smr, spare_mr);
}

/*
 * With a transport: deregister an MR while WRITEs into it are in flight.
 * The responder's rkey cache holds a pin on the MR (warmed by WRITEs that
 * complete first), and places each packet through it with only a
 * generation check, inside the receive path's RCU read-side section;
 * dereg_mr bumps the generation and waits for those sections before it
 * lets the pages go. So each WRITE either lands or fails with
 * REM_ACCESS_ERR (the WRITEs behind a failed one are flushed), and once
 * dereg_mr returned nothing more is written into the (still mapped)
 * buffer. Several rounds, each on a fresh pair, so that the dereg falls at
 * different points of the placement.
 */
static void test_dereg_under_traffic(const char *peer)
{
	enum { LEN = 12000, WIN = 8, ROUNDS = 12 };
	static char sbuf[WIN][LEN], rbuf[LEN], snap[LEN];
	int r, i, warm_ok = 0, landed = 0, refused = 0, flushed = 0;
	int other = 0, missing = 0, changed = 0;
	const char *bad_st = NULL;
	struct ibv_mr *smr, *rmr;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct rc_pair p;
	struct ibv_wc wc;

	for (r = 0; r < ROUNDS; r++) {
		rc_pair_open(&p, peer, WIN, 1, "dereg under traffic");
		rmr = ibv_reg_mr(p.pd2, rbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE);
		smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
		if (!rmr || !smr)
			die("dereg under traffic: MRs");
		for (i = 0; i < 2 * WIN; i++) {
			fill_msg(sbuf[i % WIN], LEN, r * 2 * WIN + i);
			sge = (struct ibv_sge){ (uintptr_t)sbuf[i % WIN], LEN,
						smr->lkey };
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = i;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr.rdma.remote_addr = (uintptr_t)rbuf;
			wr.wr.rdma.rkey = rmr->rkey;
			if (ibv_post_send(p.qp, &wr, &bad))
				die("dereg under traffic: post");
			if (i != WIN - 1)
				continue;
			/* The first window lands: the rkey cache is warm. */
			for (; warm_ok < (r + 1) * WIN; warm_ok++)
				if (poll_one(p.cq, &wc, 10000) != 1 ||
				    wc.status != IBV_WC_SUCCESS)
					break;
		}
		/* The second is in flight now. */
		if (ibv_dereg_mr(rmr))
			die("dereg under traffic: dereg_mr");
		memcpy(snap, rbuf, LEN);
		for (i = 0; i < WIN; i++) {
			if (poll_one(p.cq, &wc, 10000) != 1) {
				missing++;
				continue;
			}
			if (wc.status == IBV_WC_SUCCESS) {
				landed++;
			} else if (wc.status == IBV_WC_REM_ACCESS_ERR) {
				refused++;
			} else if (wc.status == IBV_WC_WR_FLUSH_ERR) {
				flushed++;
			} else {
				other++;
				if (!bad_st)
					bad_st = ibv_wc_status_str(wc.status);
			}
		}
		usleep(20000);
		if (memcmp(snap, rbuf, LEN))
			changed++;
		rc_pair_close(&p, smr, NULL);
	}
	CHECK(warm_ok == ROUNDS * WIN,
	      "dereg under traffic: %d rounds of %d %d B WRITEs into an MR, all land (%d ok)",
	      ROUNDS, WIN, LEN, warm_ok);
	CHECK(!missing && !other,
	      "dereg under traffic: %d more each, the MR deregistered while they fly: each lands, fails with REM_ACCESS_ERR or is flushed (%d landed, %d refused, %d flushed, %d other, first other: %s, %d without completion)",
	      WIN, landed, refused, flushed, other, bad_st ? bad_st : "none",
	      missing);
	CHECK(refused > 0,
	      "dereg under traffic: the responder refused a WRITE into the deregistered MR (%d times in %d rounds)",
	      refused, ROUNDS);
	CHECK(!changed,
	      "dereg under traffic: nothing written into the buffer once dereg_mr returned (%d of %d rounds changed)",
	      changed, ROUNDS);
}

/*
 * The requester keeps the last lkey pin of a user RC QP's SQ and lets the
 * next WQE copy it while the MR's generation holds and it covers the
 * WQE's whole SGE. WRITEs from one buffer: 64 B (copied into the packet),
 * then twice LEN (zero-copy, several packets): the first of those misses
 * the cache (a longer SGE) and refills it, the second copies it. Then
 * deregister the source MR: a WRITE from the old lkey must fail with
 * IBV_WC_LOC_PROT_ERR and send nothing, as a lookup per WQE would. Then
 * the same buffer under a new MR on a new QP pair (the first left RTS)
 * works again.
 */
static void test_lkey_after_dereg(const char *peer)
{
	enum { LEN = 12000 };
	static const int lens[] = { 64, LEN, LEN };
	static char sbuf[LEN], rbuf[LEN];
	struct ibv_mr *smr, *rmr;
	struct ibv_wc wc;
	struct ibv_sge sge;
	struct rc_pair p;
	const char *st;
	int i, untouched;

	rc_pair_open(&p, peer, 4, 1, "lkey after dereg");
	rmr = ibv_reg_mr(p.pd2, rbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	smr = ibv_reg_mr(pd, sbuf, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!rmr || !smr)
		die("lkey after dereg: MRs");
	for (i = 0; i < 3; i++) {
		sge = (struct ibv_sge){ (uintptr_t)sbuf, lens[i], smr->lkey };
		fill_msg(sbuf, lens[i], i + 1);
		memset(rbuf, 0, LEN);
		st = rdma1(&p, i + 1, IBV_WR_RDMA_WRITE, &sge, (uintptr_t)rbuf,
			   rmr->rkey, &wc);
		untouched = lens[i] + first_not(rbuf + lens[i], LEN - lens[i], 0);
		CHECK(wc.status == IBV_WC_SUCCESS &&
		      !memcmp(rbuf, sbuf, lens[i]) && untouched == LEN,
		      "lkey after dereg: WRITE %d (%d B) from the same buffer lands, every byte checked, nothing past it (%s)",
		      i + 1, lens[i], st);
	}

	CHECK(!ibv_dereg_mr(smr), "lkey after dereg: dereg_mr of the source");
	fill_msg(sbuf, LEN, 4);
	write_after_dereg(&p, 4, &sge, rbuf, rmr->rkey,
			  "lkey", IBV_WC_LOC_PROT_ERR);
	rc_pair_close(&p, NULL, rmr);

	rc_pair_open(&p, peer, 4, 1, "lkey after dereg");
	rmr = ibv_reg_mr(p.pd2, rbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	smr = ibv_reg_mr(pd, sbuf, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!rmr || !smr)
		die("lkey after dereg: MRs again");
	sge = (struct ibv_sge){ (uintptr_t)sbuf, LEN, smr->lkey };
	fill_msg(sbuf, LEN, 5);
	memset(rbuf, 0, LEN);
	st = rdma1(&p, 5, IBV_WR_RDMA_WRITE, &sge, (uintptr_t)rbuf, rmr->rkey,
		   &wc);
	CHECK(wc.status == IBV_WC_SUCCESS && !memcmp(rbuf, sbuf, LEN),
	      "lkey after dereg: the buffer under a new MR sends again, every byte checked (%s)",
	      st);
	rc_pair_close(&p, smr, rmr);
}

/*
 * With a transport, run by mroce_verbs.sh with netem losing packets from the
 * responder: WRITEs of several packets each with a deregistered rkey, each on
 * a fresh pair, must all fail with IBV_WC_REM_ACCESS_ERR. The responder's QP
 * fails at the first packet it refuses; the others of that message and any
 * resend arrive after that, and the requester completes the WRITE with
 * whichever NAK it handles first (CI once saw REM_INV_REQ_ERR: the packets
 * after the first got UNKNOWN_STREAM from the failed QP, and the first's NAK
 * was handled later). A lost NAK makes that order certain.
 */
static void test_rkey_after_dereg_lossy(const char *peer)
{
	enum { LEN = 12000, ROUNDS = 16 };
	static char sbuf[LEN], rbuf[LEN];
	const char *st, *bad_st = NULL;
	int i, good = 0, other = 0;
	struct ibv_mr *smr, *rmr;
	struct ibv_sge sge;
	struct rc_pair p;
	struct ibv_wc wc;
	uint32_t rkey;

	for (i = 0; i < ROUNDS; i++) {
		rc_pair_open(&p, peer, 4, 1, "rkey after dereg, lossy");
		rmr = ibv_reg_mr(p.pd2, rbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE);
		smr = ibv_reg_mr(pd, sbuf, LEN, IBV_ACCESS_LOCAL_WRITE);
		if (!rmr || !smr)
			die("rkey after dereg, lossy: MRs");
		rkey = rmr->rkey;
		sge = (struct ibv_sge){ (uintptr_t)sbuf, LEN, smr->lkey };
		if (ibv_dereg_mr(rmr))
			die("rkey after dereg, lossy: dereg_mr");
		st = rdma1(&p, 4, IBV_WR_RDMA_WRITE, &sge, (uintptr_t)rbuf,
			   rkey, &wc);
		if (wc.status == IBV_WC_REM_ACCESS_ERR) {
			good++;
		} else {
			other++;
			if (!bad_st)
				bad_st = st;
		}
		rc_pair_close(&p, smr, NULL);
	}
	CHECK(good == ROUNDS,
	      "rkey after dereg, responder losing packets: %d %d B WRITEs with an old rkey, each on a fresh pair, all fail with REM_ACCESS_ERR (%d ok, %d other, first other: %s)",
	      ROUNDS, LEN, good, other, bad_st ? bad_st : "none");
}

/*
 * With a transport, run by mroce_verbs.sh with netem losing packets from the
 * peer: @n fresh RC pairs, each QP taken to RTS (the first one opens the
 * connection to the peer: CONN_REQ, CONN_REP), must all connect and carry
 * one 64 B SEND each. A failed setup is not fatal here: each gets an info
 * line (pair, which step, errno or status, how long it took), and the
 * check counts them.
 */
static void test_pairs_lossy(const char *peer, int n)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	static char sbuf[64], rbuf[64];
	const char *step, *first = "none";
	int i, err, fails = 0, idx2, n1, n2;
	struct ibv_sge ssge, rsge;
	struct ibv_mr *smr, *rmr;
	struct timespec t0, t1;
	struct ibv_wc wc, wc2;
	union ibv_gid gid2;
	struct rc_pair p;
	long ms;

	for (i = 0; i < n; i++) {
		p.ctx2 = tc_open_device(peer);
		p.pd2 = ibv_alloc_pd(p.ctx2);
		idx2 = ipv4_gid(p.ctx2, &gid2);
		p.cq = mk_cq(8, NULL);
		p.cq2 = ibv_create_cq(p.ctx2, 8, NULL, NULL, 0);
		p.qp = mk_qp(IBV_QPT_RC, p.cq, p.cq, 1, 1);
		a.send_cq = a.recv_cq = p.cq2;
		p.qp2 = p.pd2 && p.cq2 ? ibv_create_qp(p.pd2, &a) : NULL;
		smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
		rmr = p.pd2 ? ibv_reg_mr(p.pd2, rbuf, sizeof(rbuf),
					 IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (idx2 < 0 || !p.qp2 || !smr || !rmr)
			die("connect under loss: peer objects");
		ssge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
		rsge = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
		fill_msg(sbuf, sizeof(sbuf), i);
		memset(rbuf, 0, sizeof(rbuf));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		step = "here to RTS";
		err = rc_connect(p.qp, p.qp2->qp_num, &gid2, gid_idx);
		if (!err) {
			step = "peer to RTS";
			err = rc_connect(p.qp2, p.qp->qp_num, &gid, idx2);
		}
		if (!err) {
			step = "SEND";
			err = post_recv1(p.qp2, i, &rsge) ?:
			      post_send1(p.qp, i, IBV_WR_SEND, IBV_SEND_SIGNALED,
					 &ssge, 1);
			if (!err) {
				n1 = poll_one(p.cq, &wc, 10000);
				n2 = poll_one(p.cq2, &wc2, 10000);
				if (n1 != 1 || wc.status != IBV_WC_SUCCESS ||
				    n2 != 1 || wc2.status != IBV_WC_SUCCESS ||
				    memcmp(rbuf, sbuf, sizeof(sbuf)))
					err = EIO;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 +
		     (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (err) {
			if (!fails++)
				first = strerror(err);
			printf("info\tconnect under loss: pair %d: %s failed: %s after %ld ms\n",
			       i, step, strerror(err), ms);
		}
		rc_pair_close(&p, smr, rmr);
	}
	CHECK(!fails,
	      "connect under loss, peer losing packets: %d fresh RC pairs, both QPs to RTS, one 64 B SEND each, bytes checked (%d failed, first: %s)",
	      n, fails, first);
}

/*
 * With a transport, run by mroce_verbs.sh with two shell commands that stop
 * and restart everything the peer sends: a SEND the peer received, whose
 * ACK was lost, reaches the peer's QP again after its application moved it
 * to ERR (rping's client disconnects right after its last receive). The
 * resend is a duplicate of a chunk that QP took: it must be ACKed and the
 * SEND complete successfully here, not be refused (NAK UNKNOWN_STREAM,
 * IBV_WC_REM_INV_REQ_ERR: rping's server "status 9" at 30 % loss).
 */
static void test_dup_after_err(const char *peer, const char *block,
			       const char *unblock)
{
	enum { LEN = 64 };
	static char sbuf[LEN], rbuf[LEN];
	long long dup0, unk0, dup, unk;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS }, wc2;
	const char *what = "resend of a received SEND to a QP in ERR";
	struct rc_bufs b;
	struct rc_pair p;
	int n, n2, i;

	rc_pair_open(&p, peer, 2, 2, what);
	rc_bufs_reg(&b, &p, sbuf, rbuf, LEN, what);

	/* A first message both ways of the ACK: the path RTTs are known. */
	fill_msg(sbuf, LEN, 1);
	if (post_recv1(p.qp2, 1, &b.rsge) ||
	    post_send1(p.qp, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, &b.ssge, 1))
		die("%s: first posts", what);
	if (poll_one(p.cq2, &wc2, 10000) != 1 || wc2.status != IBV_WC_SUCCESS ||
	    poll_one(p.cq, &wc, 10000) != 1 || wc.status != IBV_WC_SUCCESS)
		die("%s: first SEND", what);

	if (system(block))
		die("%s: %s", what, block);
	dup0 = hw_counter(peer, "duplicate_request");
	unk0 = hw_counter(peer, "naks_sent_unknown_stream");
	fill_msg(sbuf, LEN, 2);
	memset(rbuf, 0, LEN);
	if (post_recv1(p.qp2, 2, &b.rsge) ||
	    post_send1(p.qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED, &b.ssge, 1))
		die("%s: posts", what);
	n2 = poll_one(p.cq2, &wc2, 10000);
	/* Received; its ACK is lost. Resends arrive (ACKed, also lost). */
	usleep(50000);
	i = set_state(p.qp2, IBV_QPS_ERR);
	/* Resends now meet the QP in ERR; their answers are lost too. */
	usleep(100000);
	if (system(unblock))
		die("%s: %s", what, unblock);
	n = poll_one(p.cq, &wc, 20000);
	dup = hw_counter(peer, "duplicate_request");
	unk = hw_counter(peer, "naks_sent_unknown_stream");
	CHECK(n2 == 1 && wc2.status == IBV_WC_SUCCESS && !i &&
	      !memcmp(rbuf, sbuf, LEN),
	      "%s: the peer received it, then went to ERR", what);
	CHECK(n == 1 && wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS &&
	      unk == unk0,
	      "%s: ACKed as a duplicate, the SEND completes successfully (%s; peer duplicates %lld -> %lld, UNKNOWN_STREAM NAKs %lld -> %lld)",
	      what, n == 1 ? ibv_wc_status_str(wc.status) : "no completion",
	      dup0, dup, unk0, unk);
	rc_pair_close(&p, b.smr, b.rmr);
}

/* Objects for `rdma res show` to find; wait for the script. */
static int hold(void)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = { .dgid = gid, .sgid_index = gid_idx, .hop_limit = 64 },
		.port_num = 1,
	};
	static char buf[8192];
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_qp *rc, *ud;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	char line[16];

	cq = mk_cq(32, NULL);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	srq = ibv_create_srq(pd, &sia);
	rc = mk_qp(IBV_QPT_RC, cq, cq, 8, 8);
	ud = mk_qp(IBV_QPT_UD, cq, cq, 8, 8);
	ah = ibv_create_ah(pd, &aa);
	if (!mr || !srq || !ah || to_rts(rc))
		die("creating objects to hold");
	printf("ready rc=%u ud=%u mr_lkey=%u\n", rc->qp_num, ud->qp_num, mr->lkey);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	ibv_destroy_ah(ah);
	ibv_destroy_qp(ud);
	ibv_destroy_qp(rc);
	ibv_destroy_srq(srq);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	return 0;
}

/* One signaled atomic of @sge at @va through @rkey; its completion. */
static const char *atomic1(struct rc_pair *p, uint64_t wr_id,
			   enum ibv_wr_opcode op, struct ibv_sge *sge,
			   uint64_t va, uint32_t rkey, uint64_t compare_add,
			   uint64_t swap, struct ibv_wc *wc)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
	};

	wr.wr.atomic.remote_addr = va;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return post1(p, &wr, wc);
}

/*
 * An atomic's operand must be 8-byte aligned in memory; the responder
 * checks the iova (mroce_rx_request()) and relies on the RDMA core, which
 * registers a user MR only if its iova has the address's offset in the
 * page: then an aligned iova is an aligned address and never straddles a
 * page end (mroce_rx_atomic_fn() refuses a split operand all the same).
 * Atomics at a page's last 8 bytes, through an MR whose iova is not its
 * address, change those 8 bytes and nothing else; an iova whose offset in
 * the page differs by 4 is refused at registration.
 */
static void test_atomic_page_end(const char *peer)
{
	enum { LEN = 8192 };
	const int ratomic = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_attr qa = {
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	const uint64_t fill = 0x5a5a5a5a5a5a5a5aull, base = 0x7000000000ull;
	struct ibv_mr *resmr, *mr, *bad_mr;
	static uint64_t res;
	struct ibv_sge sge;
	struct ibv_wc wc;
	unsigned char *rbuf;
	const char *st;
	struct rc_pair p;
	uint64_t got;

	if (dattr.atomic_cap == IBV_ATOMIC_NONE) {
		printf("info\tatomics at a page end: atomic_cap NONE, not checked\n");
		return;
	}
	if (posix_memalign((void **)&rbuf, 4096, LEN))
		die("atomics at a page end: buffer");
	memset(rbuf, 0x5a, LEN);
	rc_pair_open(&p, peer, 4, 4, "atomics at a page end");
	if (ibv_modify_qp(p.qp2, &qa, IBV_QP_ACCESS_FLAGS))
		die("atomics at a page end: REMOTE_ATOMIC on the responder");
	resmr = ibv_reg_mr(pd, &res, sizeof(res), IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr_iova(p.pd2, rbuf, LEN, base, ratomic);
	if (!resmr || !mr)
		die("atomics at a page end: MRs");
	sge = (struct ibv_sge){ (uintptr_t)&res, sizeof(res), resmr->lkey };

	res = 0;
	st = atomic1(&p, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge, base + 0xff8,
		     mr->rkey, 1, 0, &wc);
	memcpy(&got, rbuf + 0xff8, sizeof(got));
	CHECK(wc.status == IBV_WC_SUCCESS && res == fill && got == fill + 1 &&
	      first_not(rbuf, 0xff8, 0x5a) == 0xff8 &&
	      first_not(rbuf + 0x1000, LEN - 0x1000, 0x5a) == LEN - 0x1000,
	      "atomics at a page end: fetch-and-add at the first page's last 8 bytes changes them alone (%s, orig %#" PRIx64 ", now %#" PRIx64 ")",
	      st, res, got);
	st = atomic1(&p, 2, IBV_WR_ATOMIC_CMP_AND_SWP, &sge, base + 0xff8,
		     mr->rkey, fill + 1, 0x0123456789abcdefull, &wc);
	memcpy(&got, rbuf + 0xff8, sizeof(got));
	CHECK(wc.status == IBV_WC_SUCCESS && res == fill + 1 &&
	      got == 0x0123456789abcdefull &&
	      first_not(rbuf + 0x1000, LEN - 0x1000, 0x5a) == LEN - 0x1000,
	      "atomics at a page end: compare-and-swap there too (%s, now %#" PRIx64 ")",
	      st, got);

	errno = 0;
	bad_mr = ibv_reg_mr_iova(p.pd2, rbuf, LEN, base + 4, ratomic);
	CHECK(!bad_mr && errno == EINVAL,
	      "atomics at a page end: an MR whose iova is 4 bytes off its address's offset in the page is refused (%s)",
	      bad_mr ? "registered" : strerror(errno));
	if (bad_mr)
		ibv_dereg_mr(bad_mr);

	rc_pair_close(&p, resmr, mr);
	free(rbuf);
}

/* A UD QP here sending to one on the peer device as fast as it can. */
struct ud_blast {
	struct ibv_qp		*qp;
	struct ibv_cq		*cq;
	struct ibv_ah		*ah;
	struct ibv_sge		sge;
	uint32_t		dqpn;
	volatile bool		stop;
	unsigned long		sent;
};

static void *ud_blast_fn(void *arg)
{
	struct ud_blast *b = arg;
	struct ibv_send_wr wr = {
		.sg_list = &b->sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc[16];
	int out = 0, n;

	wr.wr.ud.ah = b->ah;
	wr.wr.ud.remote_qpn = b->dqpn;
	wr.wr.ud.remote_qkey = 0x11111111;
	while (!b->stop) {
		while (out < 8 && !ibv_post_send(b->qp, &wr, &bad))
			out++;
		n = ibv_poll_cq(b->cq, 16, wc);
		if (n > 0) {
			out -= n;
			b->sent += n;
		}
	}
	while (out > 0 && (n = poll_n(b->cq, wc, 1, 1000)) == 1)
		out--;
	return NULL;
}

/* RESET -> INIT -> RTR -> RTS for a UD QP. */
static int ud_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = 0x11111111,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/*
 * A UD QP has no transport that lets go of a WQE: a datagram arriving
 * takes a receive WQE and copies into it with no lock held. Datagrams keep
 * arriving while the receiving QP goes to ERR (its WQEs flush) and back
 * through RESET, over and over: a WQE that completes as flushed must not
 * have been written, then or a little later (its buffer is the consumer's
 * once the flush is polled), and one that completed must hold a whole
 * datagram and nothing past it. Before the flush waited for the copies
 * under way, a flush could also let go of the MR pin the copy was using
 * (refcount underflow in the kernel log, which mroce_verbs.sh checks).
 *
 * With @use_srq the receiving QP takes its WQEs from an SRQ: those it took
 * are its own to flush (or, on RESET, to give back to the SRQ), those it
 * did not stay posted in the SRQ and are reposted only once completed. A
 * QP takes an SRQ WQE only for a datagram it copies at once, so with the
 * copies waited for, nothing may come out flushed with its buffer written,
 * and nothing taken may go back to the SRQ mid-copy (a later completion
 * of it would hold a torn or second datagram).
 */
static void test_ud_flush_race(const char *peer, double secs, bool use_srq)
{
	enum { R = 32, STRIDE = 2048, GRH = 40 };
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = { .sgid_index = gid_idx, .hop_limit = 64 },
		.port_num = 1,
	};
	unsigned long rounds = 0, good = 0, flushed = 0, written = 0,
		      partial = 0, other = 0;
	struct ibv_qp_init_attr ra = {
		.cap = { .max_send_wr = 1, .max_recv_wr = R,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_srq_init_attr sia = {
		.attr = { .max_wr = R, .max_sge = 1 },
	};
	const char *what = use_srq ? "UD flush race (SRQ)" : "UD flush race";
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	static unsigned char rbuf[R][STRIDE], sbuf[1024];
	struct ibv_srq *srq = NULL;
	struct ibv_context *ctx2;
	struct ibv_mr *rmr, *smr;
	struct ud_blast b = { 0 };
	struct ibv_wc wc[R];
	union ibv_gid gid2;
	struct ibv_qp *rqp;
	struct ibv_cq *rcq;
	struct ibv_pd *pd2;
	uint32_t len;
	pthread_t th;
	bool fl[R], posted[R] = { 0 };
	/* How long each move to ERR and to RESET takes (their flush waits). */
	double end, t0, t_err = 0, t_rst = 0, max_err = 0, max_rst = 0;
	int i, n, k, idx2, out = 0;

	len = 1024;
	if (pattr.active_mtu < IBV_MTU_1024)
		len = 256;
	ctx2 = tc_open_device(peer);
	pd2 = ibv_alloc_pd(ctx2);
	idx2 = ipv4_gid(ctx2, &gid2);
	rcq = ibv_create_cq(ctx2, 2 * R, NULL, NULL, 0);
	if (use_srq && pd2) {
		srq = ibv_create_srq(pd2, &sia);
		ra.srq = srq;
		ra.cap.max_recv_wr = 0;
		ra.cap.max_recv_sge = 0;
	}
	ra.send_cq = ra.recv_cq = rcq;
	rqp = pd2 && rcq && (srq || !use_srq) ? ibv_create_qp(pd2, &ra) : NULL;
	rmr = pd2 ? ibv_reg_mr(pd2, rbuf, sizeof(rbuf),
			       IBV_ACCESS_LOCAL_WRITE) : NULL;
	smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
	b.cq = mk_cq(32, NULL);
	b.qp = mk_qp(IBV_QPT_UD, b.cq, b.cq, 16, 1);
	aa.grh.dgid = gid2;
	b.ah = ibv_create_ah(pd, &aa);
	if (idx2 < 0 || !rqp || !rmr || !smr || !b.ah || ud_up(b.qp) ||
	    ud_up(rqp))
		die("%s: objects", what);
	memset(sbuf, 0x3c, sizeof(sbuf));
	b.sge = (struct ibv_sge){ (uintptr_t)sbuf, len, smr->lkey };
	b.dqpn = rqp->qp_num;
	if (pthread_create(&th, NULL, ud_blast_fn, &b))
		die("%s: thread", what);

	end = tc_now_s() + secs;
	while (tc_now_s() < end) {
		struct ibv_recv_wr wr = { .num_sge = 1 }, *bad;
		struct ibv_sge sge;

		/* Post (again) every WQE that is not posted. */
		for (i = 0; i < R; i++) {
			if (posted[i])
				continue;
			memset(rbuf[i], 0xa5, STRIDE);
			sge = (struct ibv_sge){ (uintptr_t)rbuf[i], GRH + len,
						rmr->lkey };
			wr.wr_id = i;
			wr.sg_list = &sge;
			if (srq ? ibv_post_srq_recv(srq, &wr, &bad) :
				  ibv_post_recv(rqp, &wr, &bad))
				die("%s: post_recv", what);
			posted[i] = true;
			out++;
		}
		/* Let some land, then flush the rest while more arrive. */
		usleep(200 + rounds % 7 * 150);
		t0 = tc_now_s();
		if (ibv_modify_qp(rqp, &err, IBV_QP_STATE))
			die("%s: to ERR", what);
		t0 = tc_now_s() - t0;
		t_err += t0;
		max_err = t0 > max_err ? t0 : max_err;
		memset(fl, 0, sizeof(fl));
		/*
		 * Without an SRQ every WQE completes now. With one, what the
		 * QP took completed by the time the flush returned; what it
		 * did not stays in the SRQ, so stop at the first quiet 2 ms.
		 */
		for (n = 0; out > 0; n += k) {
			k = poll_n(rcq, wc, out, srq ? 2 : 2000);
			if (k < 0 || (!k && !srq))
				die("%s: %d of %d completions", what, n, R);
			if (!k)
				break;
			out -= k;
			for (i = 0; i < k; i++) {
				unsigned int id = wc[i].wr_id % R;
				unsigned char *p = rbuf[id];

				posted[id] = false;
				if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
					fl[id] = true;
					flushed++;
					if (first_not(p, STRIDE, 0xa5) != STRIDE)
						written++;
				} else if (wc[i].status == IBV_WC_SUCCESS &&
					   wc[i].byte_len == GRH + len) {
					good++;
					size_t rest = STRIDE - GRH - len;

					if (first_not(p + GRH, len, 0x3c) != len ||
					    first_not(p + GRH + len, rest,
						      0xa5) != rest)
						partial++;
				} else {
					other++;
				}
			}
		}
		/* A copy that outran its flush lands later, if at all. */
		usleep(1000);
		for (i = 0; i < R; i++)
			if (fl[i] && first_not(rbuf[i], STRIDE, 0xa5) != STRIDE)
				written++;
		t0 = tc_now_s();
		if (ibv_modify_qp(rqp, &reset, IBV_QP_STATE))
			die("%s: to RESET", what);
		t0 = tc_now_s() - t0;
		t_rst += t0;
		max_rst = t0 > max_rst ? t0 : max_rst;
		if (ud_up(rqp))
			die("%s: back to RTS", what);
		rounds++;
	}
	b.stop = true;
	pthread_join(th, NULL);

	printf("info\t%s: %lu rounds, %lu datagrams sent, %lu received, %lu flushed\n",
	       what, rounds, b.sent, good, flushed);
	if (rounds)
		printf("info\t%s: modify to ERR %.3f ms mean, %.3f max; to RESET %.3f ms mean, %.3f max\n",
		       what, t_err * 1e3 / rounds, max_err * 1e3,
		       t_rst * 1e3 / rounds, max_rst * 1e3);
	/*
	 * An SRQ WQE is taken only for a datagram copied at once, so with
	 * the copies waited for none is flushed: do not ask for flushes.
	 */
	CHECK(rounds >= 10 && good > 0 && (srq || flushed > 0),
	      "%s: %lu rounds of receives flushed while datagrams arrive (%lu received, %lu flushed)",
	      what, rounds, good, flushed);
	CHECK(!written,
	      "%s: no flushed receive WQE's buffer was written (%lu were)",
	      what, written);
	CHECK(!partial && !other,
	      "%s: every completed receive holds one whole datagram, nothing past it (%lu partial, %lu other status)",
	      what, partial, other);

	ibv_destroy_qp(b.qp);
	ibv_destroy_ah(b.ah);
	ibv_destroy_cq(b.cq);
	ibv_dereg_mr(smr);
	ibv_destroy_qp(rqp);
	if (srq)
		ibv_destroy_srq(srq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(rmr);
	ibv_dealloc_pd(pd2);
	ibv_close_device(ctx2);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
			"usage: %s DEVICE [--hold | --traffic PEER | --rkey-lossy PEER | --pairs PEER N |\n"
			"\t--dup-after-err PEER BLOCK_CMD UNBLOCK_CMD]\n",
			argv[0]);
		return 2;
	}
	ctx = tc_open_device(argv[1]);
	if (ibv_query_device(ctx, &dattr) || ibv_query_port(ctx, 1, &pattr))
		die("query_device/query_port");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("alloc_pd");
	gid_idx = ipv4_gid(ctx, &gid);
	if (gid_idx < 0) {
		errno = ENOENT;
		die("no IPv4 RoCE v2 GID");
	}

	if (argc > 2 && !strcmp(argv[2], "--hold"))
		return hold();
	if (argc > 4 && !strcmp(argv[2], "--pairs")) {
		test_pairs_lossy(argv[3], atoi(argv[4]));
		goto out;
	}
	if (argc > 5 && !strcmp(argv[2], "--dup-after-err")) {
		test_dup_after_err(argv[3], argv[4], argv[5]);
		goto out;
	}
	if (argc > 3 && !strcmp(argv[2], "--rkey-lossy")) {
		test_rkey_after_dereg_lossy(argv[3]);
		goto out;
	}

	test_device();
	test_pd_mr();
	test_cq();
	test_cq_resize();
	test_qp_create();
	test_qp_states();
	test_flush();
	test_notify();
	test_cq_full_flush();
	test_parked_error_once();
	test_bad_wqes();
	test_hostile();
	test_srq();
	test_ah();
	if (argc > 3 && !strcmp(argv[2], "--traffic")) {
		test_srq_limit_traffic(argv[3]);
		test_srq_error_full_cq(argv[3]);
		test_one_deep(argv[3]);
		test_sge_past_mr(argv[3]);
		test_rkey_after_dereg(argv[3]);
		test_lkey_after_dereg(argv[3]);
		test_dereg_under_traffic(argv[3]);
		test_cq_overflow_counted(argv[1], argv[3]);
		test_send_to_destroyed_qp(argv[3]);
		test_atomic_page_end(argv[3]);
		test_ud_flush_race(argv[3], 4.0, false);
		test_ud_flush_race(argv[3], 4.0, true);
	}

out:
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tc_nfail ? 1 : 0;
}
