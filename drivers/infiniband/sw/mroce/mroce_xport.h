/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hooks the verbs layer calls into the wire transport, and the places
 * the transport keeps its own state inside verbs objects.
 *
 * The verbs layer (mroce_verbs.h) owns every RDMA object, the user-shared
 * rings and the kernel shadows of work requests. The transport owns the
 * wire: connections, paths, segmentation, acknowledgements and placement.
 * This header is the verbs -> transport direction; mroce_verbs.h documents
 * the transport -> verbs direction (lookups, fetch/complete, copy helpers).
 *
 * mroce_xport_stub.c implements every hook as a no-op so the verbs layer
 * builds and runs alone: queues fill, nothing moves, and a QP moved to ERR
 * flushes everything it holds. The transport replaces that file.
 *
 * Calling context of each hook (no verbs spinlock is ever held across one):
 *
 *   mroce_xport_qp_create()   process context, before the QP is visible to
 *                             lookups. Failure aborts the create.
 *   mroce_xport_qp_destroy()  process context, after the QP was removed
 *                             from lookups and before its memory and
 *                             rings are freed. On return the transport
 *                             holds no reference and no pointer into it.
 *   mroce_xport_qp_modify()   process context, qp->modify_mutex held,
 *                             attributes validated, before the new state
 *                             and attributes are committed. An error
 *                             aborts the modify with the QP unchanged.
 *   mroce_xport_qp_error()    process context, qp->modify_mutex held, when
 *                             the QP entered ERR by some other route than
 *                             modify_qp (bad WQE, CQ overflow, hostile
 *                             ring). After it returns the verbs layer
 *                             flushes every outstanding WQE; the transport
 *                             must not complete them any more.
 *   mroce_xport_sq_kick()     any context (kernel ULPs post from softirq and
 *                             hard irq): new send WQEs are ready for
 *                             mroce_sq_fetch(). Must not sleep.
 *   mroce_xport_rq_kick()     any context: receive WQEs were posted to the
 *                             QP's own RQ (resume after RNR). Must not sleep.
 *   mroce_xport_srq_kick()    any context: receive WQEs were posted to an SRQ.
 */
#ifndef MROCE_XPORT_H
#define MROCE_XPORT_H

#include <rdma/ib_verbs.h>

struct mroce_qp;
struct mroce_srq;

/*
 * Transport state embedded in verbs objects. Empty while the stub is in
 * place; the transport fills them in. The QP part is zeroed at creation,
 * the WQE parts each time a WQE is posted; the verbs layer never touches
 * them otherwise.
 */
struct mroce_qp_xport {
};

struct mroce_swqe_xport {
};

struct mroce_rwqe_xport {
};

int mroce_xport_qp_create(struct mroce_qp *qp);
void mroce_xport_qp_destroy(struct mroce_qp *qp);
int mroce_xport_qp_modify(struct mroce_qp *qp, const struct ib_qp_attr *attr,
			  int mask, enum ib_qp_state old_state,
			  enum ib_qp_state new_state);
void mroce_xport_qp_error(struct mroce_qp *qp);
void mroce_xport_sq_kick(struct mroce_qp *qp);
void mroce_xport_rq_kick(struct mroce_qp *qp);
void mroce_xport_srq_kick(struct mroce_srq *srq);

#endif /* MROCE_XPORT_H */
