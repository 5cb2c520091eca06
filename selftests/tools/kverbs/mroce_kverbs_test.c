// SPDX-License-Identifier: GPL-2.0
/*
 * mroce_kverbs_test: what kernel ULPs rely on, checked against a live mroce
 * device through the RDMA core's kernel verbs API only (no mroce symbols).
 *
 *   insmod mroce_kverbs_test.ko dev=mroce_a [peer=mroce_b]
 *
 * Runs at load and logs one line per check, "mroce_kverbs_test: ok: ..." or
 * "mroce_kverbs_test: FAIL: ...", then "mroce_kverbs_test: done N failed",
 * and stays loaded until rmmod (it holds nothing by then). On one device
 * the QPs are connected to themselves and parked, so the checks there are
 * about posting, flushing and ib_drain_qp() (also with its CQ full of
 * flushes, the teardown that hung cifs), fast registration bookkeeping,
 * address handles from atomic context and the GSI QP the core created.
 * With a peer device, RC traffic between the two exercises what the ULPs
 * rely on: 1 MiB RDMA WRITE and READ through a fast-registered MR and the
 * local DMA lkey, Send with Invalidate reported in the receive completion,
 * re-registration, local invalidation refusing the stale rkey, and a chain
 * of writes each posted from the previous one's completion handler in
 * softirq, through a remote DMA MR (the unsafe global rkey).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *test_dev = "mroce_a";
module_param_named(dev, test_dev, charp, 0444);
MODULE_PARM_DESC(dev, "mroce device to test");
static char *peer_dev = "";
module_param_named(peer, peer_dev, charp, 0444);
MODULE_PARM_DESC(peer, "a second mroce device: RC traffic between the two");

static int nfail;

static __printf(2, 3) void result(bool pass, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("%s: %pV\n", pass ? "ok" : "FAIL", &vaf);
	va_end(args);
	if (!pass)
		nfail++;
}

#define CHECK(cond, ...) result(!!(cond), __VA_ARGS__)

struct ctx {
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	u32			gid_index;
	union ib_gid		gid;
};

/* Completions seen through wr_cqe, in the order they were reaped. */
struct rec {
	struct ib_cqe		cqe;
	int			n;
	u64			ids[64];
	enum ib_wc_status	status[64];
	enum ib_wc_opcode	opcode[64];
};

struct tagged {
	struct ib_cqe		cqe;
	struct rec		*rec;
	u64			id;
};

static void rec_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct tagged *t = container_of(wc->wr_cqe, struct tagged, cqe);
	struct rec *r = t->rec;

	if (r->n < ARRAY_SIZE(r->ids)) {
		r->ids[r->n] = t->id;
		r->status[r->n] = wc->status;
		r->opcode[r->n] = wc->opcode;
	}
	r->n++;
}

static int find_gid(struct ctx *c)
{
	const struct ib_gid_attr *attr;
	int i;

	for (i = 0; i < c->ibdev->port_data[1].immutable.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(c->ibdev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (rdma_gid_attr_network_type(attr) == RDMA_NETWORK_IPV4) {
			c->gid_index = i;
			c->gid = attr->gid;
			rdma_put_gid_attr(attr);
			return 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

/* An address from our GID (@c) to @dgid. */
static void roce_ah_attr_to(struct ctx *c, union ib_gid *dgid,
			    struct rdma_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, dgid, 0, c->gid_index, 64, 0);
}

static void roce_ah_attr(struct ctx *c, struct rdma_ah_attr *ah)
{
	roce_ah_attr_to(c, &c->gid, ah);
}

static struct ib_qp *mk_qp(struct ctx *c, enum ib_qp_type type,
			   struct ib_srq *srq, struct ib_qp_init_attr *out)
{
	struct ib_qp_init_attr a = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.srq = srq,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = srq ? 0 : 64,
			.max_send_sge = 6,
			.max_recv_sge = srq ? 0 : 2,
			.max_inline_data = 128,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = type,
		.port_num = 1,
	};
	struct ib_qp *qp = ib_create_qp(c->pd, &a);

	if (out)
		*out = a;
	return qp;
}

/* RESET -> RTS; an RC QP is connected to (@dqpn, @dgid). */
static int connect_qp(struct ctx *c, struct ib_qp *qp, u32 dqpn,
		      union ib_gid *dgid)
{
	struct ib_qp_attr a = {};
	int err;

	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	a.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			    IB_ACCESS_REMOTE_READ;
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   (qp->qp_type == IB_QPT_RC ? IB_QP_ACCESS_FLAGS :
						       IB_QP_QKEY));
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	if (qp->qp_type == IB_QPT_RC) {
		a.path_mtu = IB_MTU_1024;
		a.dest_qp_num = dqpn;
		a.rq_psn = 1;
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 12;
		roce_ah_attr_to(c, dgid, &a.ah_attr);
		err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV |
				   IB_QP_PATH_MTU | IB_QP_DEST_QPN |
				   IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
				   IB_QP_MIN_RNR_TIMER);
	} else {
		err = ib_modify_qp(qp, &a, IB_QP_STATE);
	}
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 1;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN |
			    (qp->qp_type == IB_QPT_RC ?
			     IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			     IB_QP_MAX_QP_RD_ATOMIC : 0));
}

static int to_rts(struct ctx *c, struct ib_qp *qp)
{
	return connect_qp(c, qp, qp->qp_num, &c->gid);	/* to itself */
}

/*
 * Connected but parked: SQD accepts posts and starts none, so what is
 * posted stays queued whether or not a transport delivers it (the QPs
 * here are connected to themselves).
 */
static int to_sqd(struct ctx *c, struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_SQD };

	return to_rts(c, qp) ?: ib_modify_qp(qp, &a, IB_QP_STATE);
}

static void test_device(struct ctx *c)
{
	struct ib_device_attr *a = &c->ibdev->attrs;

	CHECK(c->ibdev->kverbs_provider, "the core treats mroce as a kernel verbs provider");
	CHECK(a->max_send_sge >= 6 && a->max_qp_wr >= 1024 && a->max_cqe >= 1024,
	      "ULP minimums: max_send_sge %d, max_qp_wr %d, max_cqe %d",
	      a->max_send_sge, a->max_qp_wr, a->max_cqe);
	CHECK(a->max_fast_reg_page_list_len >= 257,
	      "max_fast_reg_page_list_len %u >= 257 (1 MiB nvme-rdma I/Os)",
	      a->max_fast_reg_page_list_len);
	CHECK(a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS,
	      "MEM_MGT_EXTENSIONS (nvme-rdma, SMB Direct)");
	CHECK(c->pd->local_dma_lkey, "the PD has a local DMA lkey (get_dma_mr)");
}

static void test_unsafe_rkey(struct ctx *c)
{
	struct ib_pd *pd = ib_alloc_pd(c->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);

	CHECK(!IS_ERR(pd) && pd->unsafe_global_rkey,
	      "a PD with an unsafe global rkey (remote DMA MR)");
	if (!IS_ERR(pd))
		ib_dealloc_pd(pd);
}

static void test_gsi(struct ctx *c)
{
	struct ib_qp *qp = mk_qp(c, IB_QPT_GSI, NULL, NULL);

	CHECK(IS_ERR(qp) && PTR_ERR(qp) == -EBUSY,
	      "a second GSI QP is refused: QPN 1 is taken by the core's (%ld)",
	      IS_ERR(qp) ? PTR_ERR(qp) : 0L);
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
}

static void test_frwr(struct ctx *c, struct ib_mr **out)
{
	const int npages = 257;
	struct scatterlist *sgl;
	struct page **pages;
	struct ib_mr *mr;
	int i, n;

	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG,
			 c->ibdev->attrs.max_fast_reg_page_list_len + 1);
	CHECK(IS_ERR(mr), "alloc_mr beyond max_fast_reg_page_list_len fails");
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_SG_GAPS, 16);
	CHECK(IS_ERR(mr), "alloc_mr of SG_GAPS type fails (not advertised)");
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);

	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, npages);
	CHECK(!IS_ERR(mr), "alloc_mr with %d pages", npages);
	*out = IS_ERR(mr) ? NULL : mr;
	if (IS_ERR(mr))
		return;

	/* 1 MiB starting 512 bytes into its first page: 257 pages. */
	pages = kcalloc(npages + 1, sizeof(*pages), GFP_KERNEL);
	sgl = kcalloc(npages + 1, sizeof(*sgl), GFP_KERNEL);
	if (!pages || !sgl)
		goto out;
	for (i = 0; i <= npages; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i])
			goto out;
	}
	sg_init_table(sgl, npages);
	sg_set_page(&sgl[0], pages[0], PAGE_SIZE - 512, 512);
	for (i = 1; i < npages - 1; i++)
		sg_set_page(&sgl[i], pages[i], PAGE_SIZE, 0);
	sg_set_page(&sgl[npages - 1], pages[npages - 1], 512, 0);
	n = ib_dma_map_sg(c->ibdev, sgl, npages, DMA_BIDIRECTIONAL);
	CHECK(n == npages, "dma-map a 257-entry scatterlist (virtual DMA)");
	n = ib_map_mr_sg(mr, sgl, npages, NULL, PAGE_SIZE);
	CHECK(n == npages && mr->length == SZ_1M &&
	      mr->iova == (u64)(uintptr_t)page_address(pages[0]) + 512,
	      "map_mr_sg: 1 MiB in %d of %d entries, iova at the first byte",
	      n, npages);
	ib_dma_unmap_sg(c->ibdev, sgl, npages, DMA_BIDIRECTIONAL);

	/* One entry more than the MR holds: a partial mapping. */
	sg_init_table(sgl, npages + 1);
	for (i = 0; i <= npages; i++)
		sg_set_page(&sgl[i], pages[i], PAGE_SIZE, 0);
	n = ib_map_mr_sg(mr, sgl, npages + 1, NULL, PAGE_SIZE);
	CHECK(n == npages, "map_mr_sg of 258 pages into a 257-page MR maps %d", n);
	/* Back to the 1 MiB mapping for the REG_MR posted later. */
	sg_init_table(sgl, 1);
	sg_set_page(&sgl[0], pages[0], PAGE_SIZE, 0);
	ib_map_mr_sg(mr, sgl, 1, NULL, PAGE_SIZE);
out:
	for (i = 0; pages && i <= npages; i++)
		if (pages[i])
			__free_page(pages[i]);
	kfree(pages);
	kfree(sgl);
}

/*
 * Post a mix of WRs on an RTS QP, check bad WRs are refused with bad_wr,
 * then ib_drain_qp(): every WR must be flushed, in order, and the drain
 * must return (it posts in ERR and waits for those flushes too).
 */
static void test_post_and_drain(struct ctx *c, struct ib_mr *frmr)
{
	static const struct {
		enum ib_wr_opcode op;
		enum ib_wc_opcode wc;
	} ops[] = {
		{ IB_WR_SEND, IB_WC_SEND },
		{ IB_WR_RDMA_WRITE, IB_WC_RDMA_WRITE },
		{ IB_WR_REG_MR, IB_WC_REG_MR },
		{ IB_WR_LOCAL_INV, IB_WC_LOCAL_INV },
		{ IB_WR_SEND_WITH_INV, IB_WC_SEND },
		{ IB_WR_RDMA_READ, IB_WC_RDMA_READ },
	};
	struct tagged tags[ARRAY_SIZE(ops) + 8];
	const struct ib_send_wr *bad;
	const struct ib_recv_wr *rbad;
	struct ib_rdma_wr rdma = {};
	struct ib_reg_wr reg = {};
	struct ib_send_wr wr = {}, w2 = {};
	struct ib_recv_wr rwr = {};
	struct ib_qp_init_attr ia;
	struct ib_qp_attr qa;
	struct rec rec = {};
	struct ib_sge sge;
	struct ib_qp *qp;
	bool good;
	void *buf;
	int i, err;

	buf = kzalloc(4096, GFP_KERNEL);
	qp = mk_qp(c, IB_QPT_RC, NULL, &ia);
	CHECK(!IS_ERR(qp) && ia.cap.max_send_wr >= 64 && ia.cap.max_send_sge >= 6 &&
	      ia.cap.max_inline_data >= 128,
	      "kernel RC QP: caps granted %u wr, %u sge, %u inline",
	      ia.cap.max_send_wr, ia.cap.max_send_sge, ia.cap.max_inline_data);
	if (IS_ERR(qp) || !buf)
		goto out_buf;
	sge = (struct ib_sge){ (u64)(uintptr_t)buf, 64, c->pd->local_dma_lkey };

	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	err = ib_post_send(qp, &wr, &bad);
	CHECK(err == -EINVAL && bad == &wr, "post_send in RESET: -EINVAL, bad_wr set");

	if (to_sqd(c, qp)) {
		CHECK(false, "kernel RC QP to RTS and SQD");
		goto out_qp;
	}
	CHECK(!ib_query_qp(qp, &qa, IB_QP_STATE, &ia) && qa.qp_state == IB_QPS_SQD,
	      "kernel RC QP through RTS (AV from the GID table) to SQD");

	for (i = 0; i < 2; i++) {
		tags[i] = (struct tagged){ .cqe.done = rec_done, .rec = &rec,
					   .id = 100 + i };
		rwr.wr_cqe = &tags[i].cqe;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		err = ib_post_recv(qp, &rwr, &rbad);
		if (err)
			break;
	}
	CHECK(!err, "post_recv two WRs");

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		struct tagged *t = &tags[2 + i];
		struct ib_send_wr *w = &rdma.wr;

		*t = (struct tagged){ .cqe.done = rec_done, .rec = &rec,
				      .id = 1 + i };
		memset(&rdma, 0, sizeof(rdma));
		memset(&reg, 0, sizeof(reg));
		switch (ops[i].op) {
		case IB_WR_REG_MR:
			if (!frmr)
				continue;
			reg.mr = frmr;
			ib_update_fast_reg_key(frmr, ib_inc_rkey(frmr->rkey));
			reg.key = frmr->rkey;
			reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
			w = &reg.wr;
			break;
		case IB_WR_LOCAL_INV:
		case IB_WR_SEND_WITH_INV:
			w->ex.invalidate_rkey = frmr ? frmr->rkey : 0;
			w->sg_list = ops[i].op == IB_WR_SEND_WITH_INV ? &sge : NULL;
			w->num_sge = ops[i].op == IB_WR_SEND_WITH_INV;
			break;
		default:
			rdma.remote_addr = 0x1000;
			rdma.rkey = 0x1234;
			w->sg_list = &sge;
			w->num_sge = 1;
			break;
		}
		w->opcode = ops[i].op;
		w->wr_cqe = &t->cqe;
		w->send_flags = IB_SEND_SIGNALED;
		if (ops[i].op == IB_WR_SEND)
			w->send_flags |= IB_SEND_INLINE;
		err = ib_post_send(qp, w, &bad);
		if (err)
			break;
	}
	CHECK(!err, "post SEND(inline), WRITE, REG_MR, LOCAL_INV, SEND_WITH_INV, READ");

	/* A list whose second WR is a memory-window bind (not supported). */
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IB_WR_SEND;
	wr.next = &w2;
	tags[8] = (struct tagged){ .cqe.done = rec_done, .rec = &rec, .id = 50 };
	wr.wr_cqe = &tags[8].cqe;
	w2.opcode = IB_WR_BIND_MW;
	err = ib_post_send(qp, &wr, &bad);
	CHECK(err == -EINVAL && bad == &w2,
	      "a WR list with a BIND_MW: -EINVAL, bad_wr at the bind, the first posted");

	/* Hangs (and the selftest times out) if a flush goes missing. */
	ib_drain_qp(qp);
	good = rec.n == 2 + ARRAY_SIZE(ops) + 1;
	for (i = 0; good && i < ARRAY_SIZE(ops); i++)
		good = rec.ids[i] == 1 + i && rec.opcode[i] == ops[i].wc &&
		       rec.status[i] == IB_WC_WR_FLUSH_ERR;
	good = good && rec.ids[i] == 50 && rec.status[i] == IB_WC_WR_FLUSH_ERR;
	for (i++; good && i < rec.n; i++)
		good = rec.ids[i] == 100 + i - ARRAY_SIZE(ops) - 1 &&
		       rec.opcode[i] == IB_WC_RECV &&
		       rec.status[i] == IB_WC_WR_FLUSH_ERR;
	CHECK(good, "every WR flushed once, sends then receives, in order (%d completions)",
	      rec.n);
out_qp:
	ib_destroy_qp(qp);
out_buf:
	kfree(buf);
}

static void test_sq_full(struct ctx *c)
{
	const struct ib_send_wr *bad;
	/* An RDMA WRITE: the driver reads the ib_rdma_wr around the WR. */
	struct ib_rdma_wr wr = {};
	struct ib_qp_init_attr ia;
	struct ib_qp *qp;
	u32 i;
	int err = 0;

	qp = mk_qp(c, IB_QPT_RC, NULL, &ia);
	if (IS_ERR(qp) || to_sqd(c, qp)) {
		CHECK(false, "RC QP for the capacity check");
		goto out;
	}
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	for (i = 0; i <= ia.cap.max_send_wr && !err; i++)
		err = ib_post_send(qp, &wr.wr, &bad);
	CHECK(err == -ENOMEM && i - 1 == ia.cap.max_send_wr,
	      "the SQ takes its %u WRs, then -ENOMEM", ia.cap.max_send_wr);
out:
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);	/* no completions on destroy */
}

static void test_ud_and_ah(struct ctx *c)
{
	struct rdma_ah_attr attr;
	const struct ib_send_wr *bad;
	struct ib_ud_wr ud = {};
	struct ib_qp *qp;
	struct ib_qp_attr qa = {};
	struct ib_ah *ah;
	unsigned long flags;
	spinlock_t lock;
	struct ib_wc wc;
	int n, err;

	spin_lock_init(&lock);
	roce_ah_attr(c, &attr);
	spin_lock_irqsave(&lock, flags);
	ah = rdma_create_ah(c->pd, &attr, 0);
	spin_unlock_irqrestore(&lock, flags);
	CHECK(!IS_ERR(ah), "create_ah with interrupts off (not sleepable)");
	if (IS_ERR(ah))
		return;
	memset(&attr, 0, sizeof(attr));
	CHECK(!rdma_query_ah(ah, &attr) && attr.type == RDMA_AH_ATTR_TYPE_ROCE &&
	      rdma_ah_get_ah_flags(&attr) & IB_AH_GRH &&
	      !memcmp(&rdma_ah_read_grh(&attr)->dgid, &c->gid, sizeof(c->gid)),
	      "query_ah returns the GRH");

	qp = mk_qp(c, IB_QPT_UD, NULL, NULL);
	if (IS_ERR(qp) || to_sqd(c, qp)) {
		CHECK(false, "UD QP to SQD");
		goto out;
	}
	ud.wr.opcode = IB_WR_SEND;
	ud.wr.wr_id = 0x5d;
	ud.wr.send_flags = IB_SEND_SIGNALED;
	ud.ah = ah;
	ud.remote_qpn = 0x42;
	ud.remote_qkey = 0x11111111;
	err = ib_post_send(qp, &ud.wr, &bad);
	CHECK(!err, "UD post_send through the AH");
	ud.wr.opcode = IB_WR_RDMA_WRITE;
	CHECK(ib_post_send(qp, &ud.wr, &bad) == -EINVAL,
	      "RDMA WRITE on a UD QP: -EINVAL");
	qa.qp_state = IB_QPS_ERR;
	ib_modify_qp(qp, &qa, IB_QP_STATE);
	n = ib_poll_cq(c->cq, 1, &wc);
	CHECK(n == 1 && wc.wr_id == 0x5d && wc.status == IB_WC_WR_FLUSH_ERR,
	      "the UD send flushes on ERR");
out:
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
	/* Sleeping here would be a "scheduling while atomic" BUG. */
	spin_lock_irqsave(&lock, flags);
	rdma_destroy_ah(ah, 0);
	spin_unlock_irqrestore(&lock, flags);
}

static void count_comp(struct ib_cq *cq, void *cq_context)
{
	atomic_inc(cq_context);
}

/* A raw CQ with our own handler: arming, REPORT_MISSED_EVENTS, dispatch. */
static void test_cq_notify(struct ctx *c)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	const struct ib_send_wr *bad;
	struct ib_send_wr wr = {};
	struct ib_qp_attr a = {};
	struct ib_cq *cq, *saved = c->cq;
	struct ib_qp *qp = NULL;
	atomic_t events = ATOMIC_INIT(0);
	struct ib_wc wc;
	int ret;

	cq = ib_create_cq(c->ibdev, count_comp, NULL, &events, &ca);
	CHECK(!IS_ERR(cq) && cq->cqe >= 16, "create_cq with a completion handler");
	if (IS_ERR(cq))
		return;
	c->cq = cq;
	qp = mk_qp(c, IB_QPT_RC, NULL, NULL);
	c->cq = saved;
	if (IS_ERR(qp) || to_sqd(c, qp)) {
		CHECK(false, "RC QP for notification");
		goto out;
	}
	ret = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS);
	CHECK(ret == 0, "req_notify_cq on an empty CQ reports nothing missed");
	wr.wr_id = 7;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	ib_post_send(qp, &wr, &bad);
	a.qp_state = IB_QPS_ERR;
	ib_modify_qp(qp, &a, IB_QP_STATE);
	CHECK(atomic_read(&events) == 1, "the armed CQ called its handler once (%d)",
	      atomic_read(&events));
	ret = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS);
	CHECK(ret == 1, "req_notify_cq with a completion waiting reports it missed");
	CHECK(ib_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 7 &&
	      wc.status == IB_WC_WR_FLUSH_ERR && wc.qp == qp,
	      "poll_cq returns the flushed send with its QP");
out:
	if (!IS_ERR_OR_NULL(qp))
		ib_destroy_qp(qp);
	ib_destroy_cq(cq);
}

/* Poll an IB_POLL_DIRECT @cq until @r saw @n completions, or for 10 s. */
static void poll_until(struct ib_cq *cq, struct rec *r, int n)
{
	unsigned long until = jiffies + 10 * HZ;

	while (r->n < n && time_before(jiffies, until)) {
		ib_process_cq_direct(cq, -1);
		if (r->n < n)
			msleep(20);
	}
}

static int post_one(struct ib_qp *qp, bool send, struct tagged *t)
{
	struct ib_send_wr swr = {
		.wr_cqe = &t->cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_recv_wr rwr = { .wr_cqe = &t->cqe };

	return send ? ib_post_send(qp, &swr, NULL) : ib_post_recv(qp, &rwr, NULL);
}

/* The @n completions of @r are flushes with ids 0..n-1, in that order. */
static bool rec_flushed(const struct rec *r, int n)
{
	int i;

	if (r->n != n || n > ARRAY_SIZE(r->ids))
		return false;
	for (i = 0; i < n; i++)
		if (r->ids[i] != i || r->status[i] != IB_WC_WR_FLUSH_ERR)
			return false;
	return true;
}

/*
 * What hung cifs at teardown: its receive CQ holds exactly as many
 * completions as it posts receives, so moving the QP to ERR fills the CQ
 * with flushes, and the one completion more -- ib_drain_rq()'s marker,
 * posted in ERR -- is the one it waits for. It must wait for room, not
 * overflow the CQ and vanish. Checked with a WR of our own first (a
 * timeout, not a hang, if it goes missing), then with ib_drain_rq() (or
 * ib_drain_sq() for @send) itself on a CQ full again.
 */
static void test_cq_full_drain(struct ctx *c, bool send)
{
	const char *side = send ? "sq" : "rq";
	struct ib_qp_init_attr a = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 64 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ib_qp *qp = ERR_PTR(-ENOMEM);
	struct tagged *tags;
	struct ib_cq *cq;
	struct rec *rec;
	int i, cap, err = 0;

	tags = kcalloc(64, sizeof(*tags), GFP_KERNEL);
	rec = kzalloc(sizeof(*rec), GFP_KERNEL);
	cq = ib_alloc_cq(c->ibdev, NULL, 7, 0, IB_POLL_DIRECT);
	if (!tags || !rec || IS_ERR(cq)) {
		CHECK(false, "%s: a 7-entry CQ for the full-CQ drain", side);
		goto out;
	}
	cap = cq->cqe;
	a.send_cq = send ? cq : c->cq;
	a.recv_cq = send ? c->cq : cq;
	if (2 * cap + 1 <= 64)
		qp = ib_create_qp(c->pd, &a);
	if (IS_ERR(qp) || to_sqd(c, qp)) {
		CHECK(false, "%s: QP for the full-CQ drain (CQ of %d)", side, cap);
		goto out;
	}
	for (i = 0; i < 64; i++)
		tags[i] = (struct tagged){ .cqe.done = rec_done, .rec = rec,
					   .id = i };
	for (i = 0; i < cap && !err; i++)
		err = post_one(qp, send, &tags[i]);
	err = err ?: ib_modify_qp(qp, &qa, IB_QP_STATE);
	/* The CQ is full of flushes now; this one is one too many. */
	err = err ?: post_one(qp, send, &tags[cap]);
	poll_until(cq, rec, cap + 1);
	CHECK(!err && rec_flushed(rec, cap + 1),
	      "%s: a CQ full of %d flushes, then a WR posted in ERR: its flush waits for room and comes last (%d of %d)",
	      side, cap, rec->n, cap + 1);
	if (err || !rec_flushed(rec, cap + 1)) {
		CHECK(false, "ib_drain_%s with its CQ full of flushes: not tried, it would hang",
		      side);
		goto out;
	}

	/* Full again, each flushed at once, then the drain's marker. */
	for (i = 0; i < cap && !err; i++)
		err = post_one(qp, send, &tags[cap + 1 + i]);
	if (send)
		ib_drain_sq(qp);	/* hangs if the marker's CQE is lost */
	else
		ib_drain_rq(qp);
	CHECK(!err && rec_flushed(rec, 2 * cap + 1),
	      "ib_drain_%s returns with its CQ full of %d flushes, every flush delivered in order (%d)",
	      side, cap, rec->n);
out:
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
	if (!IS_ERR_OR_NULL(cq))
		ib_free_cq(cq);
	kfree(rec);
	kfree(tags);
}

static void test_srq(struct ctx *c)
{
	struct ib_srq_init_attr sia = {
		.attr = { .max_wr = 32, .max_sge = 2, .srq_limit = 0 },
		.srq_type = IB_SRQT_BASIC,
	};
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {};
	struct ib_srq_attr sa = {};
	struct ib_qp_init_attr ia;
	struct ib_srq *srq;
	struct ib_qp *qp;
	int i, err = 0;

	srq = ib_create_srq(c->pd, &sia);
	CHECK(!IS_ERR(srq) && sia.attr.max_wr >= 32, "kernel SRQ (%u WRs)",
	      sia.attr.max_wr);
	if (IS_ERR(srq))
		return;
	for (i = 0; i < 8 && !err; i++) {
		wr.wr_id = i;
		err = ib_post_srq_recv(srq, &wr, &bad);
	}
	CHECK(!err, "post_srq_recv 8 WRs");
	wr.num_sge = 3;
	CHECK(ib_post_srq_recv(srq, &wr, &bad) == -EINVAL && bad == &wr,
	      "post_srq_recv with too many SGEs: -EINVAL");
	sa.srq_limit = 4;
	CHECK(!ib_modify_srq(srq, &sa, IB_SRQ_LIMIT), "modify_srq arms limit 4");
	sa.max_wr = 64;
	CHECK(ib_modify_srq(srq, &sa, IB_SRQ_MAX_WR) == -EOPNOTSUPP,
	      "modify_srq resize: -EOPNOTSUPP");
	qp = mk_qp(c, IB_QPT_RC, srq, &ia);
	CHECK(!IS_ERR(qp) && !ia.cap.max_recv_wr, "RC QP on the SRQ");
	if (!IS_ERR(qp)) {
		wr.num_sge = 0;
		CHECK(ib_post_recv(qp, &wr, &bad) == -EINVAL,
		      "post_recv on a QP with an SRQ: -EINVAL");
		ib_destroy_qp(qp);
	}
	ib_destroy_srq(srq);
}

/*
 * With a peer device: RC traffic the way nvme-rdma and SMB Direct drive
 * it. @a owns a 1 MiB source and a 1 MiB sink, both physically contiguous
 * and addressed through the local DMA lkey (as rdma_rw does); @b exposes
 * 257 scattered pages (1 MiB starting 512 bytes into a page) through a
 * fast-registered MR, as nvme-rdma's host does for one 1 MiB I/O.
 */
struct xfer {
	struct ctx	*a, *b;
	struct ib_qp	*qa, *qb;
	struct ib_mr	*mr;		/* b's FRWR MR */
	struct page	*pages[257];
	struct scatterlist sgl[257];
	u8		*src, *dst;	/* a's 1 MiB buffers */
	u8		*msg;		/* b's receive buffer */
};

#define XFER_PAGES 257

/* The next completion on @cq, waiting generously for a loaded TCG host. */
static bool wait_wc(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long until = jiffies + 30 * HZ;

	do {
		if (ib_poll_cq(cq, 1, wc) == 1)
			return true;
		usleep_range(100, 1000);
	} while (time_before(jiffies, until));
	memset(wc, 0, sizeof(*wc));
	wc->status = IB_WC_GENERAL_ERR;
	return false;
}

/* Post @wr on @qp and wait for its completion on @cq. */
static bool post_wait(struct ib_qp *qp, struct ib_cq *cq,
		      struct ib_send_wr *wr, struct ib_wc *wc)
{
	const struct ib_send_wr *bad;

	wr->send_flags |= IB_SEND_SIGNALED;
	if (ib_post_send(qp, wr, &bad)) {
		memset(wc, 0, sizeof(*wc));
		wc->status = IB_WC_GENERAL_ERR;
		return false;
	}
	return wait_wc(cq, wc) && wc->wr_id == wr->wr_id;
}

/* Bytes of b's MR at [off, off + len) equal @want. */
static bool mr_bytes_are(struct xfer *x, u32 off, const u8 *want, u32 len)
{
	u32 i, pos = 0, n;

	for (i = 0; i < XFER_PAGES && len; i++) {
		struct scatterlist *sg = &x->sgl[i];
		u8 *p = page_address(sg_page(sg)) + sg->offset;

		if (off >= pos + sg->length) {
			pos += sg->length;
			continue;
		}
		n = min(len, pos + sg->length - off);
		if (memcmp(p + (off - pos), want, n))
			return false;
		want += n;
		len -= n;
		off += n;
		pos += sg->length;
	}
	return !len;
}

/* b registers its pages with a fresh key through IB_WR_REG_MR. */
static bool xfer_reg_key(struct xfer *x, u64 wr_id, bool rekey)
{
	struct ib_reg_wr reg = {};
	struct ib_wc wc;

	if (rekey)
		ib_update_fast_reg_key(x->mr, ib_inc_rkey(x->mr->rkey));
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_id = wr_id;
	reg.mr = x->mr;
	reg.key = x->mr->rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		     IB_ACCESS_REMOTE_READ;
	return post_wait(x->qb, x->b->cq, &reg.wr, &wc) &&
	       wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_REG_MR;
}

static bool xfer_reg(struct xfer *x, u64 wr_id)
{
	return xfer_reg_key(x, wr_id, true);
}

static bool xfer_local_inv(struct xfer *x, u64 wr_id)
{
	struct ib_send_wr inv = { .wr_id = wr_id,
				  .opcode = IB_WR_LOCAL_INV,
				  .ex.invalidate_rkey = x->mr->rkey };
	struct ib_wc wc;

	return post_wait(x->qb, x->b->cq, &inv, &wc) &&
	       wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_LOCAL_INV;
}

/* a writes or reads @len bytes at @off of b's MR; the completion status. */
static enum ib_wc_status xfer_rdma(struct xfer *x, enum ib_wr_opcode op,
				   u8 *buf, u32 off, u32 len, u32 rkey,
				   int nsge, u64 wr_id)
{
	struct ib_rdma_wr rdma = {};
	struct ib_sge sge[6];
	struct ib_wc wc;
	u32 done = 0, n;
	int i;

	/* Uneven SGEs, the way a ULP's scatterlist comes. */
	for (i = 0; i < nsge; i++) {
		n = i == nsge - 1 ? len - done : min(len - done, 1u << (4 * i));
		sge[i] = (struct ib_sge){ (u64)(uintptr_t)(buf + done), n,
					  x->a->pd->local_dma_lkey };
		done += n;
	}
	rdma.wr.opcode = op;
	rdma.wr.wr_id = wr_id;
	rdma.wr.sg_list = sge;
	rdma.wr.num_sge = nsge;
	rdma.remote_addr = x->mr->iova + off;
	rdma.rkey = rkey;
	post_wait(x->qa, x->a->cq, &rdma.wr, &wc);
	if (wc.status == IB_WC_SUCCESS &&
	    wc.opcode != (op == IB_WR_RDMA_READ ? IB_WC_RDMA_READ :
						  IB_WC_RDMA_WRITE))
		return IB_WC_GENERAL_ERR;
	return wc.status;
}

/* a sends @len bytes with Invalidate of @rkey; b's receive completion. */
static bool xfer_send_inv(struct xfer *x, u32 len, u32 rkey,
			  struct ib_wc *rwc)
{
	struct ib_sge ssge = { (u64)(uintptr_t)x->src, len,
			       x->a->pd->local_dma_lkey };
	struct ib_sge rsge = { (u64)(uintptr_t)x->msg, PAGE_SIZE,
			       x->b->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 0xb0, .sg_list = &rsge,
				  .num_sge = 1 };
	struct ib_send_wr wr = { .wr_id = 0xa0, .opcode = IB_WR_SEND_WITH_INV,
				 .sg_list = &ssge, .num_sge = 1,
				 .ex.invalidate_rkey = rkey };
	const struct ib_recv_wr *rbad;
	struct ib_wc wc;

	if (ib_post_recv(x->qb, &rwr, &rbad))
		return false;
	if (!post_wait(x->qa, x->a->cq, &wr, &wc) ||
	    wc.status != IB_WC_SUCCESS || wc.opcode != IB_WC_SEND)
		return false;
	return wait_wc(x->b->cq, rwc) && rwc->wr_id == 0xb0;
}

static int xfer_setup(struct xfer *x)
{
	const int order = get_order(SZ_1M);
	struct page *s, *d;
	int i, n;

	s = alloc_pages(GFP_KERNEL, order);
	d = alloc_pages(GFP_KERNEL | __GFP_ZERO, order);
	x->src = s ? page_address(s) : NULL;
	x->dst = d ? page_address(d) : NULL;
	x->msg = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!x->src || !x->dst || !x->msg)
		return -ENOMEM;
	for (i = 0; i < SZ_1M; i++)
		x->src[i] = (i * 7 + i / 4093) & 0xff;

	sg_init_table(x->sgl, XFER_PAGES);
	for (i = 0; i < XFER_PAGES; i++) {
		x->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!x->pages[i])
			return -ENOMEM;
		sg_set_page(&x->sgl[i], x->pages[i],
			    i == 0 ? PAGE_SIZE - 512 :
			    i == XFER_PAGES - 1 ? 512 : PAGE_SIZE,
			    i == 0 ? 512 : 0);
	}
	x->mr = ib_alloc_mr(x->b->pd, IB_MR_TYPE_MEM_REG, XFER_PAGES);
	if (IS_ERR(x->mr)) {
		x->mr = NULL;
		return -ENOMEM;
	}
	if (ib_dma_map_sg(x->b->ibdev, x->sgl, XFER_PAGES,
			  DMA_BIDIRECTIONAL) != XFER_PAGES)
		return -EIO;
	n = ib_map_mr_sg(x->mr, x->sgl, XFER_PAGES, NULL, PAGE_SIZE);
	if (n != XFER_PAGES || x->mr->length != SZ_1M)
		return -EIO;

	x->qa = mk_qp(x->a, IB_QPT_RC, NULL, NULL);
	x->qb = mk_qp(x->b, IB_QPT_RC, NULL, NULL);
	if (IS_ERR(x->qa) || IS_ERR(x->qb))
		return -ENOMEM;
	return connect_qp(x->a, x->qa, x->qb->qp_num, &x->b->gid) ?:
	       connect_qp(x->b, x->qb, x->qa->qp_num, &x->a->gid);
}

static void xfer_teardown(struct xfer *x)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;
	int i;

	/* Flush what is left and reap it, so ib_free_cq() finds nothing. */
	if (!IS_ERR_OR_NULL(x->qa)) {
		ib_modify_qp(x->qa, &qa, IB_QP_STATE);
		while (ib_poll_cq(x->a->cq, 1, &wc) == 1)
			;
		ib_destroy_qp(x->qa);
	}
	if (!IS_ERR_OR_NULL(x->qb)) {
		ib_modify_qp(x->qb, &qa, IB_QP_STATE);
		while (ib_poll_cq(x->b->cq, 1, &wc) == 1)
			;
		ib_destroy_qp(x->qb);
	}
	if (x->mr) {
		ib_dma_unmap_sg(x->b->ibdev, x->sgl, XFER_PAGES,
				DMA_BIDIRECTIONAL);
		ib_dereg_mr(x->mr);
	}
	for (i = 0; i < XFER_PAGES; i++)
		if (x->pages[i])
			__free_page(x->pages[i]);
	if (x->src)
		free_pages((unsigned long)x->src, get_order(SZ_1M));
	if (x->dst)
		free_pages((unsigned long)x->dst, get_order(SZ_1M));
	kfree(x->msg);
}

/*
 * ULPs post from their completion handlers, in softirq (IB_POLL_SOFTIRQ):
 * a chain of RDMA WRITEs where each completion posts the next, into a
 * peer buffer reached through its PD's unsafe global rkey (a remote DMA
 * MR, as some ULPs use).
 */
#define CHAIN_N		16
#define CHAIN_CHUNK	SZ_64K

struct chain {
	struct ib_cqe		cqe;
	struct ib_qp		*qp;
	u8			*src;
	u64			dst;
	u32			rkey;
	u32			lkey;
	int			done;
	int			status;
	bool			all_softirq;
	struct completion	finished;
};

static int chain_post(struct chain *ch)
{
	struct ib_sge sge = { (u64)(uintptr_t)ch->src + ch->done * CHAIN_CHUNK,
			      CHAIN_CHUNK, ch->lkey };
	struct ib_rdma_wr wr = {
		.wr.wr_cqe = &ch->cqe, .wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED, .wr.sg_list = &sge,
		.wr.num_sge = 1, .remote_addr = ch->dst + ch->done * CHAIN_CHUNK,
		.rkey = ch->rkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(ch->qp, &wr.wr, &bad);
}

static void chain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct chain *ch = container_of(wc->wr_cqe, struct chain, cqe);

	ch->all_softirq = ch->all_softirq && in_serving_softirq();
	if (wc->status != IB_WC_SUCCESS) {
		ch->status = wc->status;
		complete(&ch->finished);
		return;
	}
	if (++ch->done == CHAIN_N) {
		complete(&ch->finished);
		return;
	}
	if (chain_post(ch)) {
		ch->status = IB_WC_GENERAL_ERR;
		complete(&ch->finished);
	}
}

static void test_softirq_chain(struct ctx *a, struct ctx *b, u8 *src)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ctx sa = *a, sb = *b;
	struct chain ch = { .cqe.done = chain_done, .src = src,
			    .all_softirq = true };
	struct ib_qp *qb = NULL;
	struct page *dst;
	bool ok;

	init_completion(&ch.finished);
	dst = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(SZ_1M));
	sa.cq = ib_alloc_cq(a->ibdev, NULL, 64, 0, IB_POLL_SOFTIRQ);
	sb.pd = ib_alloc_pd(b->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (!dst || IS_ERR(sa.cq) || IS_ERR(sb.pd)) {
		CHECK(false, "softirq chain: buffer, SOFTIRQ CQ, PD with a global rkey");
		goto out;
	}
	ch.qp = mk_qp(&sa, IB_QPT_RC, NULL, NULL);
	qb = mk_qp(&sb, IB_QPT_RC, NULL, NULL);
	if (IS_ERR(ch.qp) || IS_ERR(qb) ||
	    connect_qp(&sa, ch.qp, qb->qp_num, &b->gid) ||
	    connect_qp(&sb, qb, ch.qp->qp_num, &a->gid)) {
		CHECK(false, "softirq chain: two connected RC QPs");
		goto out;
	}
	ch.dst = (u64)(uintptr_t)page_address(dst);
	ch.rkey = sb.pd->unsafe_global_rkey;
	ch.lkey = a->pd->local_dma_lkey;
	if (chain_post(&ch)) {
		CHECK(false, "softirq chain: the first post");
		goto out;
	}
	ok = wait_for_completion_timeout(&ch.finished, 60 * HZ);
	CHECK(ok && ch.status == IB_WC_SUCCESS && ch.done == CHAIN_N &&
	      !memcmp(page_address(dst), src, CHAIN_N * CHAIN_CHUNK),
	      "softirq chain: %d x 64 KiB WRITEs, each posted by the previous one's handler, bytes checked (%d done, %s)",
	      CHAIN_N, ch.done, ib_wc_status_msg(ch.status));
	CHECK(ok && ch.all_softirq, "softirq chain: every handler ran in softirq");
out:
	if (!IS_ERR_OR_NULL(ch.qp)) {
		ib_modify_qp(ch.qp, &qa, IB_QP_STATE);
		ib_destroy_qp(ch.qp);	/* after the flush it waited for */
	}
	if (!IS_ERR_OR_NULL(qb))
		ib_destroy_qp(qb);
	if (!IS_ERR_OR_NULL(sa.cq))
		ib_free_cq(sa.cq);
	if (!IS_ERR_OR_NULL(sb.pd))
		ib_dealloc_pd(sb.pd);
	if (dst)
		__free_pages(dst, get_order(SZ_1M));
}

static void test_traffic(struct ctx *a, struct ctx *b)
{
	struct xfer *x = kzalloc(sizeof(*x), GFP_KERNEL);
	enum ib_wc_status st;
	struct ib_wc wc;
	bool ok;
	u32 key;

	if (!x) {
		CHECK(false, "traffic: allocate the test state");
		return;
	}
	x->a = a;
	x->b = b;
	if (xfer_setup(x)) {
		CHECK(false, "traffic: buffers, FRWR MR and two connected RC QPs");
		goto out;
	}
	CHECK(xfer_reg(x, 0xb1), "traffic: IB_WR_REG_MR of 257 pages completes on the peer");

	st = xfer_rdma(x, IB_WR_RDMA_WRITE, x->src, 0, SZ_1M, x->mr->rkey, 6, 1);
	CHECK(st == IB_WC_SUCCESS && mr_bytes_are(x, 0, x->src, SZ_1M),
	      "traffic: 1 MiB RDMA WRITE from 6 DMA-lkey SGEs into the FRWR MR, every byte checked (%s)",
	      ib_wc_status_msg(st));
	st = xfer_rdma(x, IB_WR_RDMA_READ, x->dst, 0, SZ_1M, x->mr->rkey, 1, 2);
	CHECK(st == IB_WC_SUCCESS && !memcmp(x->dst, x->src, SZ_1M),
	      "traffic: 1 MiB RDMA READ back out of the FRWR MR, every byte checked (%s)",
	      ib_wc_status_msg(st));

	key = x->mr->rkey;
	ok = xfer_send_inv(x, 100, key, &wc);
	CHECK(ok && wc.status == IB_WC_SUCCESS &&
	      wc.opcode == IB_WC_RECV && wc.byte_len == 100 &&
	      (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
	      wc.ex.invalidate_rkey == key && !memcmp(x->msg, x->src, 100),
	      "traffic: SEND_WITH_INV: the receive reports WITH_INVALIDATE and the rkey, bytes checked (%s, flags %#x)",
	      ib_wc_status_msg(wc.status), wc.wc_flags);
	CHECK(xfer_reg(x, 0xb2),
	      "traffic: the remotely invalidated MR can be registered again (new key)");

	memset(x->src, 0x5a, 4096);
	st = xfer_rdma(x, IB_WR_RDMA_WRITE, x->src, 8192, 4096, x->mr->rkey, 1, 3);
	CHECK(st == IB_WC_SUCCESS && mr_bytes_are(x, 8192, x->src, 4096),
	      "traffic: 4 KiB RDMA WRITE with the new key, bytes checked (%s)",
	      ib_wc_status_msg(st));
	st = xfer_rdma(x, IB_WR_RDMA_READ, x->dst, 8192, 4096, x->mr->rkey, 1,
		       5);
	CHECK(st == IB_WC_SUCCESS && !memcmp(x->dst, x->src, 4096),
	      "traffic: 4 KiB RDMA READ with the new key, bytes checked (%s)",
	      ib_wc_status_msg(st));

	/*
	 * The responder caches an rkey's MR per QP: a registration under the
	 * same key after an invalidation must be looked up again, not refused
	 * as the old registration (nor served from it).
	 */
	key = x->mr->rkey;
	CHECK(xfer_local_inv(x, 0xb6) && xfer_reg_key(x, 0xb7, false) &&
	      x->mr->rkey == key,
	      "traffic: LOCAL_INV, then IB_WR_REG_MR again under the same key");
	memset(x->src, 0xc3, 4096);
	st = xfer_rdma(x, IB_WR_RDMA_WRITE, x->src, 8192, 4096, key, 1, 8);
	CHECK(st == IB_WC_SUCCESS && mr_bytes_are(x, 8192, x->src, 4096),
	      "traffic: a WRITE into the MR registered again under the same key, bytes checked (%s)",
	      ib_wc_status_msg(st));
	memset(x->dst, 0, 4096);
	st = xfer_rdma(x, IB_WR_RDMA_READ, x->dst, 8192, 4096, key, 1, 9);
	CHECK(st == IB_WC_SUCCESS && !memcmp(x->dst, x->src, 4096),
	      "traffic: a READ out of it, bytes checked (%s)",
	      ib_wc_status_msg(st));

	CHECK(xfer_local_inv(x, 0xb3),
	      "traffic: IB_WR_LOCAL_INV completes on the peer");
	st = xfer_rdma(x, IB_WR_RDMA_WRITE, x->src, 0, 64, x->mr->rkey, 1, 4);
	CHECK(st == IB_WC_REM_ACCESS_ERR,
	      "traffic: a WRITE with the locally invalidated rkey fails: %s",
	      ib_wc_status_msg(st));

	test_softirq_chain(a, b, x->src);
out:
	xfer_teardown(x);
	kfree(x);
}

static int ctx_open(struct ctx *c, const char *name)
{
	c->ibdev = ib_device_get_by_name(name, RDMA_DRIVER_RXE);
	if (!c->ibdev) {
		CHECK(false, "open the RDMA device %s", name);
		return -ENODEV;
	}
	c->pd = ib_alloc_pd(c->ibdev, 0);
	c->cq = ib_alloc_cq(c->ibdev, NULL, 256, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->pd) || IS_ERR(c->cq) || find_gid(c)) {
		CHECK(false, "setup of %s: PD, CQ and an IPv4 GID", name);
		return -EIO;
	}
	return 0;
}

static void ctx_close(struct ctx *c)
{
	if (!c->ibdev)
		return;
	if (!IS_ERR_OR_NULL(c->cq))
		ib_free_cq(c->cq);
	if (!IS_ERR_OR_NULL(c->pd))
		ib_dealloc_pd(c->pd);
	ib_device_put(c->ibdev);
}

static int __init mroce_kverbs_test_init(void)
{
	struct ctx c = {}, peer = {};
	struct ib_mr *frmr = NULL;
	struct ib_wc wc;
	int err;

	err = ctx_open(&c, test_dev);
	if (err == -ENODEV)
		return err;
	if (err)
		goto out;

	test_device(&c);
	test_unsafe_rkey(&c);
	test_gsi(&c);
	test_frwr(&c, &frmr);
	test_post_and_drain(&c, frmr);
	test_sq_full(&c);
	test_ud_and_ah(&c);
	test_cq_notify(&c);
	test_cq_full_drain(&c, false);
	test_cq_full_drain(&c, true);
	test_srq(&c);
	if (*peer_dev && !ctx_open(&peer, peer_dev)) {
		while (ib_poll_cq(c.cq, 1, &wc) == 1)
			;	/* leftovers of the tests above */
		test_traffic(&c, &peer);
	}
out:
	if (frmr)
		ib_dereg_mr(frmr);
	ctx_close(&peer);
	ctx_close(&c);
	pr_info("done %d failed\n", nfail);
	return 0;
}

static void __exit mroce_kverbs_test_exit(void)
{
}

module_init(mroce_kverbs_test_init);
module_exit(mroce_kverbs_test_exit);
MODULE_DESCRIPTION("mroce kernel verbs self-test");
MODULE_LICENSE("GPL");
