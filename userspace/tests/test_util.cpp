// SPDX-License-Identifier: GPL-2.0
#include "test_util.h"

#include <cstdio>
#include <cstdlib>

namespace mt {

uint64_t test_seed(uint64_t dflt) {
  const char *s = getenv("MROCE_TEST_SEED");
  uint64_t seed = s ? strtoull(s, nullptr, 0) : dflt;
  printf("[ seed ] MROCE_TEST_SEED=%llu\n", (unsigned long long)seed);
  return seed;
}

const uint8_t kAllOpcodes[] = {
    MROCE_OP_SEND,       MROCE_OP_SEND_IMM,   MROCE_OP_SEND_INV,
    MROCE_OP_WRITE,      MROCE_OP_WRITE_IMM,  MROCE_OP_READ_REQ,
    MROCE_OP_READ_RESP,  MROCE_OP_ATOMIC_REQ, MROCE_OP_ATOMIC_RESP,
    MROCE_OP_ACK,        MROCE_OP_NAK,        MROCE_OP_PROBE,
    MROCE_OP_CONN_REQ,   MROCE_OP_CONN_REP,   MROCE_OP_CONN_CLOSE,
    MROCE_OP_UD_SEND,    MROCE_OP_UD_SEND_IMM, MROCE_OP_MAD,
};
const size_t kNumOpcodes = sizeof(kAllOpcodes);

static uint32_t nz32(Rng &r) {
  uint32_t v;
  do {
    v = r.u32();
  } while (!v);
  return v;
}

static uint64_t nz64(Rng &r) {
  uint64_t v;
  do {
    v = r.u64();
  } while (!v);
  return v;
}

// Interesting values more often than uniform ones: wrap points and zero.
static uint32_t edgy32(Rng &r) {
  switch (r.range(0, 5)) {
    case 0: return 0;
    case 1: return 0xffffffffu - static_cast<uint32_t>(r.range(0, 3));
    case 2: return 0x80000000u + static_cast<uint32_t>(r.range(0, 3)) - 2;
    default: return r.u32();
  }
}

static void random_data(Rng &r, mroce_pkt *p, std::vector<uint8_t> *pl) {
  mroce_data *d = &p->u.d;
  uint8_t op = p->c.opcode;
  uint32_t plen = 0;
  bool solo = op == MROCE_OP_READ_REQ || op == MROCE_OP_ATOMIC_REQ ||
              op == MROCE_OP_ATOMIC_RESP;

  p->c.dst_conn = nz32(r);
  p->c.path_id = static_cast<uint8_t>(r.range(0, MROCE_MAX_PATHS - 1));
  p->c.path_gen = static_cast<uint8_t>(r.u32());
  p->c.floor_delta = static_cast<uint8_t>(r.u32());
  p->c.path_psn = edgy32(r);
  d->stream_id = r.u32() & MROCE_QPN_MASK;
  d->stream_psn = edgy32(r);
  d->ssn = edgy32(r);
  d->tx_ts = r.u32();
  d->backlog = static_cast<uint16_t>(r.u32());
  if (r.chance(0.3)) p->c.flags |= MROCE_F_AR;
  if (r.chance(0.3)) p->c.flags |= MROCE_F_RETX;

  if (solo) {
    p->c.flags |= MROCE_F_SOM | MROCE_F_EOM;
    d->msn = r.u32();
    if (op != MROCE_OP_ATOMIC_RESP) {
      d->va = r.u64();
      d->rkey = r.u32();
    }
    if (op == MROCE_OP_READ_REQ) {
      d->length = r.u32();
      if (d->length && d->va > UINT64_MAX - (d->length - 1)) d->va = 0;
    } else if (op == MROCE_OP_ATOMIC_REQ) {
      d->swap_add = r.u64();
      d->compare = r.u64();
      d->atomic_op = static_cast<uint8_t>(r.range(0, 1));
    } else {
      d->orig = r.u64();
    }
    pl->clear();
    return;
  }

  plen = static_cast<uint32_t>(r.range(0, 300));
  d->msg_offset = r.chance(0.3) ? 0 : r.u32() % (0xffffffffu - plen);
  if (op == MROCE_OP_WRITE || op == MROCE_OP_WRITE_IMM) {
    uint32_t end = d->msg_offset + plen;
    d->length = r.chance(0.4) ? end : end + static_cast<uint32_t>(r.range(0, 0xffffffffu - end));
    d->va = r.u64();
    if (d->length && d->va > UINT64_MAX - (d->length - 1)) d->va = r.u32();
    d->rkey = r.u32();
    if (end == d->length) p->c.flags |= MROCE_F_EOM;
  } else if (r.chance(0.5)) {
    p->c.flags |= MROCE_F_EOM;
  }
  if (op != MROCE_OP_WRITE && op != MROCE_OP_READ_RESP)
    d->msn = r.u32();
  if (op == MROCE_OP_READ_RESP) d->msn = r.u32();
  if (op == MROCE_OP_SEND_IMM || op == MROCE_OP_SEND_INV || op == MROCE_OP_WRITE_IMM)
    d->imm = r.u32();
  if (d->msg_offset == 0) p->c.flags |= MROCE_F_SOM;
  if ((p->c.flags & MROCE_F_EOM) && op != MROCE_OP_WRITE &&
      op != MROCE_OP_READ_RESP && r.chance(0.5))
    p->c.flags |= MROCE_F_SE;
  pl->resize(plen);
  for (auto &b : *pl) b = static_cast<uint8_t>(r.u32());
}

void random_packet(Rng &r, uint8_t op, mroce_pkt *p, std::vector<uint8_t> *pl,
                   std::vector<mroce_ack_block> *blocks) {
  memset(p, 0, sizeof(*p));
  pl->clear();
  p->c.opcode = op;
  if (mroce_op_is_data(op)) {
    random_data(r, p, pl);
  } else if (op == MROCE_OP_ACK) {
    p->c.dst_conn = nz32(r);
    p->u.ack.rate_hint = r.u32();
    p->u.ack.conn_ce = r.u32();
    // 0 blocks: a hint-only ACK.
    p->u.ack.n_blocks = static_cast<uint8_t>(r.range(0, MROCE_ACK_MAX_BLOCKS));
    blocks->assign(p->u.ack.n_blocks, mroce_ack_block{});
    for (auto &b : *blocks) {
      b.path_id = static_cast<uint8_t>(r.range(0, MROCE_MAX_PATHS - 1));
      b.path_gen = static_cast<uint8_t>(r.u32());
      b.cum_psn = edgy32(r);
      for (auto &w : b.sack) w = r.chance(0.3) ? 0 : r.u64();
      b.echo_ts = r.u32();
      b.ack_delay = r.u32();
      b.ce_cnt = static_cast<uint16_t>(r.u32());
      b.rx_cnt = static_cast<uint16_t>(r.u32());
    }
    p->u.ack.blocks = blocks->data();
  } else if (op == MROCE_OP_NAK) {
    mroce_nak *n = &p->u.nak;
    n->code = static_cast<uint8_t>(r.range(1, MROCE_NAK_CODE_MAX));
    n->path_id = static_cast<uint8_t>(r.range(0, MROCE_MAX_PATHS - 1));
    n->path_gen = static_cast<uint8_t>(r.u32());
    n->path_psn = r.u32();
    n->stream_id = r.u32() & MROCE_QPN_MASK;
    n->stream_psn = r.u32();
    n->ssn = r.u32();
    p->c.dst_conn = nz32(r);
    if (n->code == MROCE_NAK_RNR) {
      n->arg = r.u32();
    } else if (n->code == MROCE_NAK_UNKNOWN_CONN) {
      p->c.dst_conn = 0;
      n->arg = nz32(r);
    } else if (n->code == MROCE_NAK_STALE_GEN) {
      n->arg = r.u32() & 0xff;
    }
  } else if (op == MROCE_OP_PROBE) {
    p->c.dst_conn = nz32(r);
    p->c.path_id = static_cast<uint8_t>(r.range(0, MROCE_MAX_PATHS - 1));
    p->c.path_gen = static_cast<uint8_t>(r.u32());
    p->c.floor_delta = static_cast<uint8_t>(r.u32());
    p->c.path_psn = edgy32(r);
    p->c.flags = r.chance(0.5) ? MROCE_F_AR : 0;
    p->u.probe.tx_ts = r.u32();
    p->u.probe.backlog = static_cast<uint16_t>(r.u32());
  } else if (op == MROCE_OP_CONN_REQ || op == MROCE_OP_CONN_REP) {
    mroce_hs_msg *h = &p->u.hs;
    h->src_conn = nz32(r);
    h->nonce = nz64(r);
    h->mtu = static_cast<uint16_t>(r.range(MROCE_MIN_MTU, 0xffff));
    h->n_paths = static_cast<uint8_t>(r.range(1, MROCE_MAX_PATHS));
    h->caps = r.u32();
    h->init_rate = r.u32();
    if (op == MROCE_OP_CONN_REP) {
      p->c.dst_conn = nz32(r);
      h->echo_nonce = nz64(r);
    }
  } else if (op == MROCE_OP_CONN_CLOSE) {
    p->c.dst_conn = nz32(r);
    p->u.hs.src_conn = nz32(r);
    p->u.hs.nonce = nz64(r);
    p->u.hs.reason = r.u32();
  } else {  // UD family
    mroce_ud *u = &p->u.ud;
    u->src_qpn = static_cast<uint32_t>(r.range(1, MROCE_QPN_MASK));
    u->qkey = r.u32();
    u->pkey = static_cast<uint16_t>(r.u32());
    if (op == MROCE_OP_MAD) {
      u->dst_qpn = MROCE_GSI_QPN;
      pl->resize(MROCE_MAD_LEN);
    } else {
      u->dst_qpn = static_cast<uint32_t>(r.range(2, MROCE_QPN_MASK));
      pl->resize(r.range(0, 200));
      if (r.chance(0.5)) p->c.flags = MROCE_F_SE;
      if (op == MROCE_OP_UD_SEND_IMM) u->imm = r.u32();
    }
    for (auto &b : *pl) b = static_cast<uint8_t>(r.u32());
  }
  p->payload = pl->data();
  p->payload_len = static_cast<uint32_t>(pl->size());
}

std::vector<uint8_t> encode_full(const mroce_pkt &pkt,
                                 const std::vector<uint8_t> &payload) {
  std::vector<uint8_t> out(MROCE_MAX_HDR_LEN + payload.size());
  uint32_t n = mroce_encode(&pkt, out.data(), MROCE_MAX_HDR_LEN);
  if (!n) return {};
  if (!payload.empty()) memcpy(out.data() + n, payload.data(), payload.size());
  out.resize(n + payload.size());
  return out;
}

static bool same_block(const mroce_ack_block &x, const mroce_ack_block &y) {
  return x.path_id == y.path_id && x.path_gen == y.path_gen &&
         x.cum_psn == y.cum_psn && !memcmp(x.sack, y.sack, sizeof(x.sack)) &&
         x.echo_ts == y.echo_ts && x.ack_delay == y.ack_delay &&
         x.ce_cnt == y.ce_cnt && x.rx_cnt == y.rx_cnt;
}

static mroce_ack_block block_of(const mroce_pkt &p, uint32_t i) {
  mroce_ack_block b{};
  if (p.u.ack.raw_blocks)
    mroce_ack_block_get(&p, i, &b);
  else
    b = p.u.ack.blocks[i];
  return b;
}

// Compares only the fields the opcode carries: the union members of other
// opcodes alias the same bytes.
bool same_packet(const mroce_pkt &a, const mroce_pkt &b) {
  if ((a.c.opcode != b.c.opcode || a.c.flags != b.c.flags ||
       a.c.dst_conn != b.c.dst_conn || a.c.path_id != b.c.path_id ||
       a.c.path_gen != b.c.path_gen || a.c.floor_delta != b.c.floor_delta ||
       a.c.path_psn != b.c.path_psn))
    return false;
  if (a.payload_len != b.payload_len) return false;
  if (a.payload_len && memcmp(a.payload, b.payload, a.payload_len)) return false;
  uint8_t op = a.c.opcode;
  if (mroce_op_is_data(op)) {
    const mroce_data &x = a.u.d, &y = b.u.d;
    return x.stream_id == y.stream_id && x.stream_psn == y.stream_psn &&
           x.ssn == y.ssn && x.msg_offset == y.msg_offset && x.tx_ts == y.tx_ts &&
           x.backlog == y.backlog && x.msn == y.msn && x.imm == y.imm &&
           x.va == y.va && x.rkey == y.rkey && x.length == y.length &&
           x.swap_add == y.swap_add && x.compare == y.compare &&
           x.orig == y.orig && x.atomic_op == y.atomic_op;
  }
  switch (op) {
    case MROCE_OP_ACK:
      if (a.u.ack.rate_hint != b.u.ack.rate_hint || a.u.ack.conn_ce != b.u.ack.conn_ce ||
          a.u.ack.n_blocks != b.u.ack.n_blocks)
        return false;
      for (uint32_t i = 0; i < a.u.ack.n_blocks; i++)
        if (!same_block(block_of(a, i), block_of(b, i))) return false;
      return true;
    case MROCE_OP_NAK:
      return a.u.nak.code == b.u.nak.code && a.u.nak.path_id == b.u.nak.path_id &&
             a.u.nak.path_gen == b.u.nak.path_gen && a.u.nak.path_psn == b.u.nak.path_psn &&
             a.u.nak.stream_id == b.u.nak.stream_id &&
             a.u.nak.stream_psn == b.u.nak.stream_psn && a.u.nak.ssn == b.u.nak.ssn &&
             a.u.nak.arg == b.u.nak.arg;
    case MROCE_OP_PROBE:
      return a.u.probe.tx_ts == b.u.probe.tx_ts && a.u.probe.backlog == b.u.probe.backlog;
    case MROCE_OP_CONN_CLOSE:
      return a.u.hs.src_conn == b.u.hs.src_conn && a.u.hs.nonce == b.u.hs.nonce &&
             a.u.hs.reason == b.u.hs.reason;
    case MROCE_OP_CONN_REQ:
    case MROCE_OP_CONN_REP:
      return a.u.hs.src_conn == b.u.hs.src_conn && a.u.hs.nonce == b.u.hs.nonce &&
             a.u.hs.echo_nonce == b.u.hs.echo_nonce && a.u.hs.mtu == b.u.hs.mtu &&
             a.u.hs.n_paths == b.u.hs.n_paths && a.u.hs.caps == b.u.hs.caps &&
             a.u.hs.init_rate == b.u.hs.init_rate;
    default:
      return a.u.ud.dst_qpn == b.u.ud.dst_qpn && a.u.ud.src_qpn == b.u.ud.src_qpn &&
             a.u.ud.qkey == b.u.ud.qkey && a.u.ud.pkey == b.u.ud.pkey &&
             a.u.ud.imm == b.u.ud.imm;
  }
}

}  // namespace mt
