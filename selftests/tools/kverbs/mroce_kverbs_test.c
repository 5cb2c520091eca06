// SPDX-License-Identifier: GPL-2.0
/*
 * mroce_kverbs_test: what kernel ULPs rely on, checked against a live mroce
 * device through the RDMA core's kernel verbs API only (no mroce symbols).
 *
 *   insmod mroce_kverbs_test.ko dev=mroce_a
 *
 * Runs at load and logs one line per check, "mroce_kverbs_test: ok: ..." or
 * "mroce_kverbs_test: FAIL: ...", then "mroce_kverbs_test: done N failed",
 * and stays loaded until rmmod (it holds nothing by then). Without
 * a transport nothing is sent, so the data-path checks are about posting,
 * flushing and ib_drain_qp(), fast registration bookkeeping, address
 * handles from atomic context and the GSI QP the core created.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *test_dev = "mroce_a";
module_param_named(dev, test_dev, charp, 0444);
MODULE_PARM_DESC(dev, "mroce device to test");

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

static void roce_ah_attr(struct ctx *c, struct rdma_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, &c->gid, 0, c->gid_index, 64, 0);
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

static int to_rts(struct ctx *c, struct ib_qp *qp)
{
	struct ib_qp_attr a = {};
	int err;

	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	a.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   (qp->qp_type == IB_QPT_RC ? IB_QP_ACCESS_FLAGS :
						       IB_QP_QKEY));
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	if (qp->qp_type == IB_QPT_RC) {
		a.path_mtu = IB_MTU_1024;
		a.dest_qp_num = qp->qp_num;
		a.rq_psn = 1;
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 12;
		roce_ah_attr(c, &a.ah_attr);
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
	struct ib_send_wr wr = {};
	struct ib_qp_init_attr ia;
	struct ib_qp *qp;
	u32 i;
	int err = 0;

	qp = mk_qp(c, IB_QPT_RC, NULL, &ia);
	if (IS_ERR(qp) || to_sqd(c, qp)) {
		CHECK(false, "RC QP for the capacity check");
		goto out;
	}
	wr.opcode = IB_WR_RDMA_WRITE;
	for (i = 0; i <= ia.cap.max_send_wr && !err; i++)
		err = ib_post_send(qp, &wr, &bad);
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

static int __init mroce_kverbs_test_init(void)
{
	struct ctx c = {};
	struct ib_mr *frmr = NULL;

	c.ibdev = ib_device_get_by_name(test_dev, RDMA_DRIVER_RXE);
	if (!c.ibdev) {
		pr_err("no RDMA device %s\n", test_dev);
		return -ENODEV;
	}
	c.pd = ib_alloc_pd(c.ibdev, 0);
	c.cq = ib_alloc_cq(c.ibdev, NULL, 256, 0, IB_POLL_DIRECT);
	if (IS_ERR(c.pd) || IS_ERR(c.cq) || find_gid(&c)) {
		CHECK(false, "setup: PD, CQ and an IPv4 GID");
		goto out;
	}

	test_device(&c);
	test_unsafe_rkey(&c);
	test_gsi(&c);
	test_frwr(&c, &frmr);
	test_post_and_drain(&c, frmr);
	test_sq_full(&c);
	test_ud_and_ah(&c);
	test_cq_notify(&c);
	test_srq(&c);
out:
	if (frmr)
		ib_dereg_mr(frmr);
	if (!IS_ERR_OR_NULL(c.cq))
		ib_free_cq(c.cq);
	if (!IS_ERR_OR_NULL(c.pd))
		ib_dealloc_pd(c.pd);
	ib_device_put(c.ibdev);
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
