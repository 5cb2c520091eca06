#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""mroce_ud_mad.py DEV GID_INDEX PEER_DEV PEER_GID_INDEX [COUNT]

Sends COUNT (default 1) 256-byte datagrams shaped as CM DREQs (management
class 0x07, method Send, attribute 0x0015, a fresh transaction ID each)
from an ordinary user UD QP on DEV, from its GID GID_INDEX, to QPN 1 at
PEER_DEV's GID PEER_GID_INDEX: what any process may hand the MAD tunnel
(mroce_cm.sh). mroce sends it as a MAD with the QP's own Q_Key (the
requested 0x80010000 is a controlled one), so the peer's GSI QP drops it.
Prints "sent N"; exits 1 if a send does not complete successfully.
"""
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

from mroce_cm_mad import MAD_LEN, dreq_header


def dreq_shaped():
    hdr = dreq_header(os.urandom(8))
    return hdr + bytes(MAD_LEN - len(hdr))


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    dev, gidx, pdev, pgidx = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    count = int(sys.argv[5]) if len(sys.argv) == 6 else 1
    with Context(name=pdev) as pctx:
        dgid = pctx.query_gid(1, pgidx)
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    cap = QPCap(max_send_wr=16, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
    attr = QPAttr(port_num=1)
    attr.qkey = 0x11111111
    attr.pkey_index = 0
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap), attr)
    gr = GlobalRoute(dgid=dgid, sgid_index=gidx)
    ah = AH(pd, attr=AHAttr(port_num=1, is_global=1, gr=gr))
    mr = MR(pd, MAD_LEN, e.IBV_ACCESS_LOCAL_WRITE)
    for i in range(count):
        mr.write(dreq_shaped(), MAD_LEN)
        wr = SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(mr.buf, MAD_LEN, mr.lkey)])
        wr.set_wr_ud(ah, 1, 0x80010000)
        qp.post_send(wr)
        end = time.monotonic() + 5
        while True:
            n, wcs = cq.poll()
            if n:
                break
            if time.monotonic() > end:
                sys.exit(f'send {i + 1}: no completion in 5 s')
            time.sleep(0.001)
        if wcs[0].status != e.IBV_WC_SUCCESS:
            sys.exit(f'send {i + 1}: completion status {wcs[0].status}')
    print(f'sent {count}')


if __name__ == '__main__':
    main()
