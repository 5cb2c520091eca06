// SPDX-License-Identifier: GPL-2.0
/*
 * Transport hooks while no transport exists: every hook accepts and does
 * nothing. Posted WQEs therefore wait in their queues until the QP is
 * moved to ERR (which flushes them) or destroyed. The transport replaces
 * this file; see mroce_xport.h for what each hook must do.
 */
#include "mroce.h"
#include "mroce_verbs.h"

int mroce_xport_qp_create(struct mroce_qp *qp)
{
	return 0;
}

void mroce_xport_qp_destroy(struct mroce_qp *qp)
{
}

int mroce_xport_qp_modify(struct mroce_qp *qp, const struct ib_qp_attr *attr,
			  int mask, enum ib_qp_state old_state,
			  enum ib_qp_state new_state)
{
	return 0;
}

void mroce_xport_qp_error(struct mroce_qp *qp)
{
}

void mroce_xport_sq_kick(struct mroce_qp *qp)
{
}

void mroce_xport_rq_kick(struct mroce_qp *qp)
{
}

void mroce_xport_srq_kick(struct mroce_srq *srq)
{
}
