#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""mroce_cm_dreqs.py server IP PORT N
   mroce_cm_dreqs.py client IP PEER_IP PORT N GAP_MS NETDEV UDP_PORT

DREQs at a steady rate, and when each is sent again (mroce_cm.sh).

server: listens on IP:PORT (rdma_cm, RC), accepts N connections, prints
"accepted N" and keeps them until killed (it never disconnects: every
DREQ comes from the client).

client: connects N times from IP to PEER_IP:PORT (asynchronous rdma_cm
IDs), prints "connected N", then disconnects one connection every GAP_MS
ms (rdma_disconnect(), then rdma_destroy_id() as rping does, which ends
ib_cm's own DREQ resends: every later DREQ with the same transaction ID
is the tunnel's copy). Meanwhile it captures the
CM DREQs leaving NETDEV (AF_PACKET, kernel timestamps; mroce's UDP port
UDP_PORT, the MAD 32 bytes into the UDP payload) until each transaction
ID has been seen twice, or 4 s after the last disconnect. Prints one line
per DREQ:
    dreq I sent T_MS resent R_MS
(T_MS from the first DREQ; R_MS the delay from its send to the first
resend, -1 if none was seen), then one summary line of key=value pairs:
    dreqs=N span_ms= max_gap_ms= first_resend_ms= max_resend_ms= unresent=
(first_resend_ms: the first DREQ's delay). Exits 1 if it could not
connect or saw fewer than N DREQs.
"""
import socket
import struct
import sys
import threading
import time

import pyverbs.cm_enums as ce
import pyverbs.enums as e
from pyverbs.cmid import CMID, AddrInfo, CMEvent, CMEventChannel, ConnParam
from pyverbs.qp import QPCap, QPInitAttr

from mroce_cm_mad import dreq_tid

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35
MAD_IN_UDP = 8 + 32      # the UDP header, then the tunnel's MAD header


def qp_attr():
    return QPInitAttr(qp_type=e.IBV_QPT_RC,
                      cap=QPCap(max_send_wr=1, max_recv_wr=1))


def server(ip, port, n):
    listen_id = CMID(creator=AddrInfo(src=ip, src_service=port,
                                      port_space=ce.RDMA_PS_TCP,
                                      flags=ce.RAI_PASSIVE),
                     qp_init_attr=qp_attr())
    listen_id.listen()
    kept = []
    for _ in range(n):
        child = listen_id.get_request()
        child.accept(ConnParam())
        kept.append(child)
    print(f'accepted {n}', flush=True)
    while True:
        time.sleep(3600)


class Sniffer(threading.Thread):
    """The CM DREQs leaving a netdev: [(seconds, tid)], kernel timestamps."""

    def __init__(self, netdev, udp_port):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                  socket.htons(ETH_P_ALL))
        self.sock.bind((netdev, 0))
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.settimeout(0.2)
        self.udp_port = udp_port
        self.seen = []
        self.lock = threading.Lock()
        self.stop = False

    def parse(self, frame):
        if len(frame) < 14 + 20 or frame[12:14] != b'\x08\x00':
            return None
        ip = frame[14:]
        ihl = (ip[0] & 0x0f) * 4
        if ip[9] != 17 or len(ip) < ihl + MAD_IN_UDP:
            return None
        udp = ip[ihl:]
        if struct.unpack('>H', udp[2:4])[0] != self.udp_port:
            return None
        return dreq_tid(bytes(udp[MAD_IN_UDP:]))

    def run(self):
        while not self.stop:
            try:
                data, anc, _, addr = self.sock.recvmsg(2048, 64)
            except socket.timeout:
                continue
            if addr[2] != PACKET_OUTGOING:
                continue
            tid = self.parse(data)
            if tid is None:
                continue
            t = time.time()
            for level, kind, val in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack('qq', val[:16])
                    t = sec + nsec / 1e9
            with self.lock:
                self.seen.append((t, tid))

    def snapshot(self):
        with self.lock:
            return list(self.seen)


def expect(channel, want, what):
    ev = CMEvent(channel)
    got = ev.event_type
    ev.ack_cm_event()
    if got != want:
        raise RuntimeError(f'{what}: event {got}, want {want}')


def connect(channel, ip, peer, port):
    cmid = CMID(creator=channel, port_space=ce.RDMA_PS_TCP)
    cmid.resolve_addr(AddrInfo(src=ip, dst=peer, dst_service=port,
                               port_space=ce.RDMA_PS_TCP))
    expect(channel, ce.RDMA_CM_EVENT_ADDR_RESOLVED, 'resolve_addr')
    cmid.resolve_route()
    expect(channel, ce.RDMA_CM_EVENT_ROUTE_RESOLVED, 'resolve_route')
    cmid.create_qp(qp_attr())
    cmid.connect(ConnParam())
    expect(channel, ce.RDMA_CM_EVENT_ESTABLISHED, 'connect')
    return cmid


def client(ip, peer, port, n, gap_ms, netdev, udp_port):
    # Asynchronous IDs: a synchronous rdma_disconnect() waits for the
    # DISCONNECTED event, which dropped DREPs hold off while ib_cm resends
    # the DREQ (the first version hung to mroce_cm.sh's 90 s timeout).
    channel = CMEventChannel()
    ids = []
    for i in range(n):
        try:
            ids.append(connect(channel, ip, peer, port))
        except Exception as ex:   # pylint: disable=broad-except
            sys.exit(f'connection {i + 1}: {ex}')
    print(f'connected {n}', flush=True)
    sn = Sniffer(netdev, udp_port)
    sn.start()
    t0 = time.monotonic()
    for i, cmid in enumerate(ids):
        cmid.disconnect()
        cmid.close()
        pause = t0 + (i + 1) * gap_ms / 1000 - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    end = time.monotonic() + 4
    while time.monotonic() < end:
        seen = sn.snapshot()
        count = {}
        for _, tid in seen:
            count[tid] = count.get(tid, 0) + 1
        if len(count) >= n and min(count.values()) >= 2:
            break
        time.sleep(0.05)
    sn.stop = True
    sn.join()
    first, resent, order = {}, {}, []
    for t, tid in sn.snapshot():
        if tid not in first:
            first[tid] = t
            order.append(tid)
        elif tid not in resent:
            resent[tid] = t
    if len(order) < n:
        sys.exit(f'{len(order)} DREQs seen leaving {netdev}, want {n}')
    base = first[order[0]]
    gaps = [first[b] - first[a] for a, b in zip(order, order[1:])]
    delays = [resent[tid] - first[tid] if tid in resent else None
              for tid in order]
    for i, tid in enumerate(order):
        print(f'dreq {i + 1} sent {ms(first[tid] - base)} '
              f'resent {ms(delays[i])}')
    got = [d for d in delays if d is not None]
    print(f'dreqs={len(order)} span_ms={ms(first[order[-1]] - base)} '
          f'max_gap_ms={ms(max(gaps, default=0))} '
          f'first_resend_ms={ms(delays[0])} '
          f'max_resend_ms={ms(max(got, default=None))} '
          f'unresent={len(delays) - len(got)}', flush=True)


def ms(seconds):
    """Whole milliseconds, -1 for None."""
    return -1 if seconds is None else round(seconds * 1000)


def main():
    a = sys.argv[1:]
    if len(a) == 4 and a[0] == 'server':
        server(a[1], a[2], int(a[3]))
    elif len(a) == 8 and a[0] == 'client':
        client(a[1], a[2], a[3], int(a[4]), int(a[5]), a[6], int(a[7]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
