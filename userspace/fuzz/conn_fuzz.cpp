// SPDX-License-Identifier: GPL-2.0
// libFuzzer target for the connection engine: an established connection
// with data in flight receives an arbitrary sequence of packets from its
// peer (hostile ACK blocks, NAKs, data, probes, handshake messages) mixed
// with clock advances and further sends. After every step the engine's
// accounting must still add up.
//
// Input: records of [kind u8][len u8][len bytes]:
//   kind % 4 == 0  packet for the connection (decoded first; invalid ones
//                  are dropped like the module drops them)
//   kind % 4 == 1  advance the clock by the record's first 4 bytes (ns,
//                  at most ~1 s) and run the timers
//   kind % 4 == 2  send (first byte % 16) more data packets
//   kind % 4 == 3  build an ACK for what we received; with kind bit 2 set,
//                  first take a hint sample (period from bytes 0-1, µs) and
//                  set the rate hint (bytes 2-5, Mbit/s), and hand the ACK
//                  to the peer, which has nothing in flight
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "mroce_conn.h"
}

namespace {

struct Ctx {
  uint64_t acked = 0, lost = 0, naked = 0, sent = 0, late = 0;
};

void on_acked(void *c, uint64_t, uint32_t, uint8_t) { static_cast<Ctx *>(c)->acked++; }
void on_lost(void *c, uint64_t, uint32_t, uint8_t, uint32_t, uint8_t) { static_cast<Ctx *>(c)->lost++; }
// A late ACK block revokes a loss already reported: the transmission has
// ended (as lost) and must not be counted a second time.
void on_late(void *c, uint64_t, uint32_t, uint8_t) { static_cast<Ctx *>(c)->late++; }

#define CHECK(x) \
  do {           \
    if (!(x)) abort(); \
  } while (0)

void check_invariants(const mroce_conn &c, const Ctx &ctx) {
  uint64_t inflight = 0, out_data = 0;
  for (int i = 0; i < c.n_paths; i++) {
    const mroce_path &p = c.paths[i];
    CHECK(p.tx.next - p.tx.floor <= MROCE_PTX_SPAN);
    uint32_t n_out = 0, bytes = 0;
    for (uint32_t psn = p.tx.floor; psn != p.tx.next; psn++) {
      const mroce_ptx_rec &r = p.tx.ring[psn % MROCE_PTX_RING];
      if (r.state != MROCE_REC_OUT) continue;
      n_out++;
      bytes += r.len;
      if (r.cookie != MROCE_COOKIE_PROBE) out_data++;
    }
    CHECK(n_out == p.tx.n_out);
    CHECK(bytes == p.tx.inflight);
    CHECK(p.health.state < MROCE_PATH_NR_STATES);
    CHECK(p.health.loss_ewma <= MROCE_Q10);
    CHECK(p.cc.pwnd >= c.prm->min_pwnd && p.cc.pwnd <= c.prm->max_pwnd);
    inflight += p.tx.inflight;
  }
  CHECK(inflight == c.inflight);
  CHECK(c.cc.cwnd >= c.prm->min_cwnd && c.cc.cwnd <= c.prm->max_cwnd);
  // Every data transmission ends exactly once: acked, lost or refused.
  CHECK(ctx.sent == ctx.acked + ctx.lost + ctx.naked + out_data);
  CHECK(ctx.late <= ctx.lost);
}

void send_some(mroce_conn &c, Ctx &ctx, uint64_t now, int n) {
  for (int i = 0; i < n; i++) {
    mroce_tx_slot slot;
    if (mroce_conn_tx_reserve(&c, now, 1000, -1, &slot) != MROCE_TX_OK) return;
    mroce_conn_tx_commit(&c, &slot, ctx.sent++, now);
  }
}

void probe(mroce_conn &c, uint64_t mask, uint64_t now) {
  for (int i = 0; i < 64; i++) {
    mroce_tx_slot slot;
    if (mask & (1ull << i)) mroce_conn_probe(&c, static_cast<uint8_t>(i), now, &slot);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mroce_params prm;
  static bool init;
  if (!init) {
    mroce_params_default(&prm);
    init = true;
  }
  Ctx ctx;
  mroce_conn_ops ops = {on_acked, on_lost, nullptr, nullptr, nullptr, nullptr, on_late, nullptr};
  mroce_path paths_a[8], paths_b[8];
  mroce_conn a, b;
  mroce_conn_cfg cfg{};
  cfg.prm = &prm;
  cfg.ops = &ops;
  cfg.ctx = &ctx;
  cfg.max_paths = 8;
  cfg.mtu = 1500;
  cfg.paths = paths_a;
  cfg.local_id = 1;
  cfg.nonce = 11;
  cfg.seed = 5;
  mroce_conn_init(&a, &cfg);
  cfg.paths = paths_b;
  cfg.local_id = 2;
  cfg.nonce = 22;
  mroce_conn_init(&b, &cfg);

  uint64_t now = 1000000000;
  mroce_pkt req, rep;
  mroce_conn_connect(&a, now);
  mroce_conn_build_hs(&a, MROCE_OP_CONN_REQ, 0, &req);
  mroce_conn_on_hs(&b, &req, now);
  mroce_conn_build_hs(&b, MROCE_OP_CONN_REP, 0, &rep);
  mroce_conn_on_hs(&a, &rep, now);
  send_some(a, ctx, now, 40);

  size_t off = 0;
  while (off + 2 <= size) {
    uint8_t kind = data[off], len = data[off + 1];
    off += 2;
    if (off + len > size) break;
    std::vector<uint8_t> rec(data + off, data + off + len);
    off += len;
    switch (kind % 4) {
      case 0: {
        mroce_pkt pkt;
        if (mroce_decode(rec.data(), len, &pkt) != MROCE_WIRE_OK) break;
        if (pkt.c.opcode == MROCE_OP_ACK) {
          mroce_ack_res res;
          mroce_conn_on_ack(&a, &pkt, now, &res);
          probe(a, res.probe_mask, now);
        } else if (pkt.c.opcode == MROCE_OP_NAK) {
          uint64_t cookie, probes = 0;
          uint32_t l;
          if (pkt.u.nak.code == MROCE_NAK_UNKNOWN_CONN) {
            if (mroce_conn_on_unknown(&a, pkt.u.nak.arg) & MROCE_HS_DOWN) {
              // Down: the transport is forgotten, nothing is in flight.
              CHECK(a.inflight == 0 && !mroce_conn_established(&a));
              return 0;
            }
          } else if (mroce_conn_on_nak(&a, &pkt.u.nak, now, &cookie, &l, &probes)) {
            CHECK(cookie < ctx.sent);
            ctx.naked++;
          }
          probe(a, probes, now);
        } else if (pkt.c.opcode >= MROCE_OP_CONN_REQ && pkt.c.opcode <= MROCE_OP_CONN_CLOSE) {
          uint32_t act = mroce_conn_on_hs(&a, &pkt, now);
          // A restart or close forgets everything in flight.
          if (act & (MROCE_HS_RESTART | MROCE_HS_DOWN)) {
            CHECK(a.inflight == 0);
            ctx.sent = ctx.acked + ctx.lost + ctx.naked;
          }
          if (!mroce_conn_established(&a)) return 0;
        } else if (mroce_op_is_data(pkt.c.opcode) || pkt.c.opcode == MROCE_OP_PROBE) {
          if (mroce_conn_rx_check(&a, &pkt) == MROCE_RX_NEW)
            mroce_conn_rx_accept(&a, &pkt, len & 1, now);
        }
        break;
      }
      case 1: {
        uint32_t dt = 0;
        for (size_t i = 0; i < 4 && i < rec.size(); i++) dt = dt << 8 | rec[i];
        now += dt & 0x3fffffff;
        mroce_timer_res res;
        uint64_t next = mroce_conn_on_timer(&a, now, &res);
        CHECK(next == UINT64_MAX || next > now || mroce_conn_ack_due(&a, now) ||
              res.probe_mask || next >= now);
        probe(a, res.probe_mask, now);
        break;
      }
      case 2:
        send_some(a, ctx, now, rec.empty() ? 1 : rec[0] % 16);
        break;
      case 3: {
        const bool hint = (kind & 4) && rec.size() >= 6;
        if (hint) {
          uint32_t demand, qd, mbps = 0, line = 100000;
          uint64_t period = (uint64_t(rec[0]) << 8 | rec[1]) * 1000;
          for (size_t i = 2; i < 6; i++) mbps = mbps << 8 | rec[i];
          mroce_conn_rx_sample(&a, period, 10000, line, &demand, &qd);
          CHECK(demand <= line);
          mroce_conn_set_rx_hint(&a, mbps);
          // A peer that just started is held at its grant; falls apply.
          CHECK(a.rx_hint <= mbps);
          CHECK(!mbps || a.rx_hint);
          if (a.rx_hint && a.rx_hint_sent &&
              a.rx_hint < a.rx_hint_sent - a.rx_hint_sent / 8)
            CHECK(mroce_conn_ack_due(&a, now));
        }
        uint8_t buf[MROCE_MAX_HDR_LEN];
        uint32_t n = mroce_conn_build_ack(&a, now, buf, sizeof(buf));
        if (n) {
          mroce_pkt pkt;
          CHECK(mroce_decode(buf, n, &pkt) == MROCE_WIRE_OK);
          CHECK(pkt.u.ack.rate_hint == a.rx_hint);
          CHECK(!a.hint_push);
          if (hint) {
            mroce_ack_res res;
            mroce_conn_on_ack(&b, &pkt, now, &res);
            CHECK(res.acked_pkts == 0 && b.inflight == 0);
          }
        }
        break;
      }
    }
    check_invariants(a, ctx);
  }
  return 0;
}
