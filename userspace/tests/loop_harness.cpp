// SPDX-License-Identifier: GPL-2.0
#include "loop_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace mt {

namespace {

// Cookie of a data chunk: stream index and stream PSN.
uint64_t cookie_of(uint32_t s, uint32_t psn) { return (uint64_t)s << 32 | psn; }
uint32_t cookie_stream(uint64_t c) { return static_cast<uint32_t>(c >> 32); }
uint32_t cookie_psn(uint64_t c) { return static_cast<uint32_t>(c); }

// Stream ids on the wire are QPNs; stream s of an endpoint is QPN 0x100 + s.
uint32_t qpn_of(uint32_t s) { return 0x100 + s; }

// Remote addresses: WRITE message m lands at kWriteVa * (m + 1); READs read
// the responder's region at kReadVa; FETCH_ADD targets kAtomicVa.
constexpr uint64_t kWriteVa = 0x10000000ull;
constexpr uint64_t kReadVa = 0x700000000000ull;
constexpr uint64_t kAtomicVa = 0x710000000000ull;

// Stream tags (docs/protocol.md §4.2).
constexpr uint8_t kTagRecv = 1, kTagRequest = 2, kTagResponse = 3;

bool is_request(MsgKind k) { return k == MsgKind::kRead || k == MsgKind::kAtomic; }

uint8_t opcode_of(MsgKind k) {
  switch (k) {
    case MsgKind::kWrite: return MROCE_OP_WRITE;
    case MsgKind::kSend: return MROCE_OP_SEND;
    case MsgKind::kRead: return MROCE_OP_READ_REQ;
    case MsgKind::kAtomic: return MROCE_OP_ATOMIC_REQ;
    case MsgKind::kReadResp: return MROCE_OP_READ_RESP;
    default: return MROCE_OP_ATOMIC_RESP;
  }
}

}  // namespace

Message write_msg(std::vector<uint8_t> data) { return Message{MsgKind::kWrite, std::move(data)}; }
Message send_msg(std::vector<uint8_t> data) { return Message{MsgKind::kSend, std::move(data)}; }
Message read_msg(uint32_t off, uint32_t len) {
  Message m{MsgKind::kRead, {}};
  m.read_off = off;
  m.read_len = len;
  return m;
}
Message region_write_msg(uint32_t off, std::vector<uint8_t> data) {
  Message m{MsgKind::kWrite, std::move(data)};
  m.region_off = off;
  return m;
}
Message fetch_add_msg(uint64_t add) {
  Message m{MsgKind::kAtomic, {}};
  m.add = add;
  return m;
}

std::vector<uint8_t> pattern(int from, uint32_t s, uint32_t m, size_t len) {
  std::vector<uint8_t> v(len);
  uint32_t x = 0x9e3779b9u * (from + 1) ^ (s * 0x85ebca6bu) ^ (m * 0xc2b2ae35u);
  for (auto &b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<uint8_t>(x);
  }
  return v;
}

Endpoint::Endpoint(Loop *loop, int index, const mroce_params *prm, const EndpointCfg &c,
                   uint64_t seed)
    : cfg(c), loop_(loop), index_(index), rng_(seed) {
  paths.resize(c.paths);
  ops_.acked = cb_acked;
  ops_.lost = cb_lost;
  ops_.late_acked = cb_acked;  // cookies name (stream, stream PSN)
  ops_.rekey = cb_rekey;
  mroce_conn_cfg cc{};
  cc.prm = prm;
  cc.ops = &ops_;
  cc.ctx = this;
  cc.paths = paths.data();
  cc.max_paths = c.paths;
  cc.local_id = c.conn_id;
  cc.nonce = rng_.u64() | 1;
  cc.seed = rng_.u64();
  cc.mtu = c.mtu;
  cc.caps = MROCE_CAP_ATOMIC;
  mroce_conn_init(&conn, &cc);
  tx_.resize(c.streams);
  rx.resize(c.streams);
  for (uint32_t s = 0; s < c.streams; s++) {
    // Both ends agree on initial stream PSNs (as verbs sq_psn / rq_psn).
    mroce_stx_init(&tx_[s].stx, 1000u * (index + 1) + s);
    mroce_srx_init(&rx[s].srx, 1000u * (2 - index) + s);
    rx[s].region = pattern(index, s, 0xffff, kRegionSize);
  }
}

void Endpoint::queue(uint32_t s, Message m) {
  TxStream &t = tx_[s];
  t.msg_last_psn.push_back(0);
  t.pending.push_back(static_cast<uint32_t>(t.msgs.size()));
  t.msgs.push_back(std::move(m));
}

void Endpoint::post(uint32_t s, Message m) {
  TxStream &t = tx_[s];
  if (m.kind == MsgKind::kSend) m.msn = t.next_rq_msn++;
  if (is_request(m.kind)) {
    m.msn = t.next_rd_msn++;
    t.reads.push_back({static_cast<uint32_t>(t.msgs.size()), {}, 0, false});
  }
  queue(s, std::move(m));
}

bool Endpoint::all_sent_completed() const {
  for (auto &t : tx_)
    if (t.completed != t.msgs.size()) return false;
  return true;
}

bool Endpoint::all_received_completed(const Endpoint &peer) const {
  for (uint32_t s = 0; s < rx.size(); s++)
    if (rx[s].completed.size() != peer.tx_[s].next_rq_msn) return false;
  return true;
}

std::string Endpoint::verify_from(const Endpoint &peer) const {
  for (uint32_t s = 0; s < rx.size(); s++) {
    const RxStream &r = rx[s];
    const TxStream &t = peer.tx_[s];
    std::string in = " (stream " + std::to_string(s) + ")";
    for (auto &pl : r.placed)
      if (pl.second != 1) return "stream psn placed twice: " + std::to_string(pl.first) + in;
    for (size_t i = 0; i < r.completed.size(); i++)
      if (r.completed[i] != i) return "receive completed out of order at " + std::to_string(i) + in;
    for (uint32_t m = 0; m < t.msgs.size(); m++) {
      const Message &msg = t.msgs[m];
      std::string where = " msg " + std::to_string(m) + in;
      if (msg.kind == MsgKind::kWrite && msg.region_off >= 0) {
        continue;  // checked through the READs that follow it
      } else if (msg.kind == MsgKind::kWrite && !msg.data.empty()) {
        if (r.write_mem.size() <= m || r.write_mem[m] != msg.data) return "WRITE bytes differ" + where;
      } else if (msg.kind == MsgKind::kSend) {
        if (r.recv_buf.size() <= msg.msn || r.recv_len[msg.msn] != msg.data.size())
          return "SEND length differs" + where;
        if (!msg.data.empty() && memcmp(r.recv_buf[msg.msn].data(), msg.data.data(), msg.data.size()))
          return "SEND bytes differ" + where;
      }
    }
    // What our READs and FETCH_ADDs got back from the peer's memory.
    const TxStream &mine = tx_[s];
    const RxStream &theirs = peer.rx[s];
    uint64_t sum = 0;
    for (size_t ord = 0; ord < mine.reads.size(); ord++) {
      const ReadState &rs = mine.reads[ord];
      const Message &req = mine.msgs[rs.msg];
      std::string where = " read ordinal " + std::to_string(ord) + in;
      if (!rs.done) return "READ/ATOMIC not completed" + where;
      if (req.kind == MsgKind::kRead) {
        std::vector<uint8_t> want(theirs.region.begin() + req.read_off,
                                  theirs.region.begin() + req.read_off + req.read_len);
        if (rs.buf != want) return "READ bytes differ" + where;
      } else {
        if (rs.orig != sum) return "FETCH_ADD original differs" + where;
        sum += req.add;
      }
    }
    if (theirs.counter != sum) return "FETCH_ADD total differs (executed twice?)" + in;
  }
  if (st.placement_errors) return "placement errors";
  if (st.order_errors) return "order errors";
  return "";
}

void Endpoint::cb_rekey(void *ctx, uint8_t, uint8_t, uint16_t, uint8_t why) {
  auto *e = static_cast<Endpoint *>(ctx);
  if (why < sizeof(e->st.rekeys_why) / sizeof(e->st.rekeys_why[0])) e->st.rekeys_why[why]++;
}

void Endpoint::cb_acked(void *ctx, uint64_t cookie, uint32_t, uint8_t) {
  auto *e = static_cast<Endpoint *>(ctx);
  uint32_t s = cookie_stream(cookie);
  mroce_stx_ack(&e->tx_[s].stx, cookie_psn(cookie));
  e->complete_tx(s);
}

void Endpoint::cb_lost(void *ctx, uint64_t cookie, uint32_t, uint8_t path, uint32_t, uint8_t) {
  // No calls into the connection from here: just queue the chunk.
  static_cast<Endpoint *>(ctx)->retx_.push_back({cookie, path, 0});
}

// A WQE completes when all its chunks and everything before them on the
// stream are acknowledged (una passes its last chunk), READ and ATOMIC only
// once their response has arrived, and all in posting order.
void Endpoint::complete_tx(uint32_t s) {
  TxStream &t = tx_[s];
  while (t.completed < t.msgs.size()) {
    const Message &m = t.msgs[t.completed];
    bool segmented = std::find(t.pending.begin(), t.pending.end(), t.completed) == t.pending.end();
    if (!segmented || (int32_t)(t.msg_last_psn[t.completed] - t.stx.una) >= 0) break;
    if (is_request(m.kind) && !t.reads[m.msn].done) break;
    t.completed++;
    st.completions_tx++;
  }
  // Chunks below una are no longer needed for retransmission.
  for (auto it = t.chunks.begin(); it != t.chunks.end();) {
    if ((int32_t)(it->first - t.stx.una) < 0)
      it = t.chunks.erase(it);
    else
      ++it;
  }
}

void Endpoint::update_backlog(uint64_t now) {
  uint64_t bytes = 0;
  for (auto &t : tx_)
    for (uint32_t m : t.pending) bytes += t.msgs[m].data.size();
  bytes += retx_.size() * cfg.mtu;
  mroce_conn_set_backlog(&conn, static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX)), now);
}

void Endpoint::connect(uint64_t now) { handle_hs(mroce_conn_connect(&conn, now)); }

void Endpoint::handle_hs(uint32_t act) {
  mroce_pkt pkt;
  if (act & MROCE_HS_SEND_REQ) {
    mroce_conn_build_hs(&conn, MROCE_OP_CONN_REQ, 0, &pkt);
    send_packet(pkt, nullptr, 0, MROCE_SPORT_MIN, false);
  }
  if (act & MROCE_HS_SEND_REP) {
    mroce_conn_build_hs(&conn, MROCE_OP_CONN_REP, 0, &pkt);
    send_packet(pkt, nullptr, 0, MROCE_SPORT_MIN, false);
  }
}

void Endpoint::send_packet(const mroce_pkt &pkt, const uint8_t *payload, uint32_t len,
                           uint16_t sport, bool ect) {
  std::vector<uint8_t> buf(MROCE_MAX_HDR_LEN + len);
  mroce_pkt p = pkt;
  p.payload_len = len;
  uint32_t n = mroce_encode(&p, buf.data(), MROCE_MAX_HDR_LEN);
  if (!n) {
    st.bad_packets++;
    return;
  }
  if (len) memcpy(buf.data() + n, payload, len);
  buf.resize(n + len);
  loop_->transmit(index_, sport, std::move(buf), ect);
}

void Endpoint::nak(const mroce_pkt &pkt, uint8_t code, uint32_t arg) {
  mroce_pkt n{};
  n.c.opcode = MROCE_OP_NAK;
  n.c.dst_conn = conn.hs.remote.id;
  n.u.nak.code = code;
  n.u.nak.path_id = pkt.c.path_id;
  n.u.nak.path_gen = pkt.c.path_gen;
  n.u.nak.path_psn = pkt.c.path_psn;
  n.u.nak.stream_id = pkt.u.d.stream_id;
  n.u.nak.stream_psn = pkt.u.d.stream_psn;
  n.u.nak.ssn = pkt.u.d.ssn;
  n.u.nak.arg = arg;
  st.naks_tx++;
  send_packet(n, nullptr, 0, MROCE_SPORT_MIN, false);
}

void Endpoint::send_probes(uint64_t mask, uint64_t now) {
  for (uint32_t i = 0; mask; i++, mask >>= 1) {
    if (!(mask & 1)) continue;
    mroce_tx_slot slot;
    if (!mroce_conn_probe(&conn, static_cast<uint8_t>(i), now, &slot)) continue;
    mroce_pkt pkt{};
    pkt.c.opcode = MROCE_OP_PROBE;
    pkt.c.flags = MROCE_F_AR;
    mroce_conn_fill(&conn, &slot, &pkt);
    send_packet(pkt, nullptr, 0, slot.sport, true);
  }
}

void Endpoint::send_acks(uint64_t now) {
  uint8_t buf[MROCE_MAX_HDR_LEN];
  while (mroce_conn_ack_due(&conn, now)) {
    uint32_t n = mroce_conn_build_ack(&conn, now, buf, sizeof(buf));
    if (!n) break;
    loop_->transmit(index_, MROCE_SPORT_MIN, std::vector<uint8_t>(buf, buf + n), false);
  }
}

void Endpoint::build_packet(uint32_t s, uint32_t psn, const TxChunk &ch, bool retx, mroce_pkt *pkt) {
  const Message &msg = tx_[s].msgs[ch.msg];
  pkt->c.opcode = opcode_of(msg.kind);
  pkt->c.flags = (ch.off == 0 ? MROCE_F_SOM : 0) | (ch.eom ? MROCE_F_EOM : 0) | (retx ? MROCE_F_RETX : 0);
  mroce_data &d = pkt->u.d;
  d.stream_id = qpn_of(s);
  d.stream_psn = psn;
  d.ssn = ch.msg;
  d.msg_offset = ch.off;
  d.msn = msg.msn;
  switch (msg.kind) {
    case MsgKind::kWrite:
      d.va = msg.region_off >= 0 ? kReadVa + msg.region_off : kWriteVa * (ch.msg + 1);
      d.rkey = 0x1000 + s;
      d.length = static_cast<uint32_t>(msg.data.size());
      break;
    case MsgKind::kRead:
      d.va = kReadVa + msg.read_off;
      d.rkey = 0x2000 + s;
      d.length = msg.read_len;
      break;
    case MsgKind::kAtomic:
      d.va = kAtomicVa;
      d.rkey = 0x3000 + s;
      d.swap_add = msg.add;
      d.atomic_op = MROCE_ATOMIC_FETCH_ADD;
      break;
    case MsgKind::kReadResp:
      d.ssn = msg.req_ssn;
      break;
    case MsgKind::kAtomicResp:
      d.ssn = msg.req_ssn;
      d.orig = msg.orig;
      break;
    default:
      break;
  }
}

// Sends as much as windows, pacing and paths allow: retransmissions first
// (on their original path when healthy), then new chunks round-robin.
void Endpoint::pump(uint64_t now) {
  paced_until_ = 0;
  last_now_ = now;
  if (!mroce_conn_established(&conn)) return;
  uint32_t payload_max = mroce_max_payload(MROCE_OP_WRITE, conn.mtu);
  for (int guard = 0; guard < 100000; guard++) {
    uint32_t s = 0, psn = 0;
    int pref = -1;
    bool is_retx = false;
    TxChunk ch{};

    // Drop retransmissions that were acknowledged meanwhile, then take the
    // first one that is due (RNR holds some back).
    retx_.erase(std::remove_if(retx_.begin(), retx_.end(),
                               [&](const Retx &r) {
                                 uint32_t rs = cookie_stream(r.cookie), rp = cookie_psn(r.cookie);
                                 return mroce_stx_is_acked(&tx_[rs].stx, rp) ||
                                        !tx_[rs].chunks.count(rp);
                               }),
                retx_.end());
    auto due = std::find_if(retx_.begin(), retx_.end(),
                            [&](const Retx &r) { return r.not_before <= now; });
    if (due != retx_.end()) {
      s = cookie_stream(due->cookie);
      psn = cookie_psn(due->cookie);
      ch = tx_[s].chunks[psn];
      pref = due->path;
      is_retx = true;
    } else {
      // A new chunk from the next stream with a pending message.
      bool found = false;
      for (uint32_t k = 0; k < tx_.size() && !found; k++) {
        uint32_t cand = (rr_ + k) % tx_.size();
        TxStream &t = tx_[cand];
        if (t.pending.empty() || !mroce_stx_can_assign(&t.stx)) continue;
        uint32_t m = t.pending.front();
        uint32_t total = static_cast<uint32_t>(t.msgs[m].data.size());
        uint32_t seg = std::min(mroce_max_payload(opcode_of(t.msgs[m].kind), conn.mtu), payload_max);
        ch.msg = m;
        ch.off = t.seg_off;
        ch.len = std::min(seg, total - t.seg_off);
        ch.eom = t.seg_off + ch.len == total;
        s = cand;
        found = true;
      }
      if (!found) break;
    }

    mroce_tx_slot slot;
    mroce_tx_status stt = mroce_conn_tx_reserve(&conn, now, ch.len, pref, &slot);
    if (stt == MROCE_TX_PACED) {
      paced_until_ = slot.depart;
      break;
    }
    if (stt != MROCE_TX_OK) break;

    TxStream &t = tx_[s];
    if (is_retx) {
      retx_.erase(due);
      st.retransmits++;
    } else {
      psn = mroce_stx_assign(&t.stx);
      t.chunks[psn] = ch;
      t.seg_off += ch.len;
      if (ch.eom) {
        t.msg_last_psn[ch.msg] = psn;
        t.pending.pop_front();
        t.seg_off = 0;
      }
      rr_ = (s + 1) % tx_.size();
    }
    mroce_conn_tx_commit(&conn, &slot, cookie_of(s, psn), now);

    mroce_pkt pkt{};
    build_packet(s, psn, ch, is_retx, &pkt);
    mroce_conn_fill(&conn, &slot, &pkt);
    bool last = retx_.empty();
    for (auto &tt : tx_) last = last && tt.pending.empty();
    if (last) pkt.c.flags |= MROCE_F_AR;
    st.chunks_sent++;
    const Message &msg = t.msgs[ch.msg];
    send_packet(pkt, ch.len ? msg.data.data() + ch.off : nullptr, ch.len, slot.sport, true);
  }
  update_backlog(now);
}

// Validates a NEW chunk and places it (directly, in any order); returns
// false with the NAK code if it must be refused.
bool Endpoint::accept_chunk(uint32_t s, const mroce_pkt &pkt, uint8_t *tag, uint8_t *code) {
  RxStream &r = rx[s];
  const mroce_data &d = pkt.u.d;
  bool eom = pkt.c.flags & MROCE_F_EOM;
  uint32_t psn = d.stream_psn;
  *tag = 0;
  switch (pkt.c.opcode) {
    case MROCE_OP_WRITE: {
      uint64_t dest, base = kWriteVa * (d.ssn + 1);
      if (d.va >= kReadVa && d.va < kReadVa + kRegionSize) {
        // Into the READ region: bounds-checked like an MR.
        if (mroce_write_dest(d.va, d.length, d.msg_offset, pkt.payload_len, &dest) != MROCE_PLACE_OK ||
            !mroce_range_within(kReadVa, kRegionSize, dest, pkt.payload_len)) {
          *code = MROCE_NAK_REMOTE_ACCESS;
          return false;
        }
        if (pkt.payload_len) memcpy(r.region.data() + (dest - kReadVa), pkt.payload, pkt.payload_len);
        return true;
      }
      if (mroce_write_dest(d.va, d.length, d.msg_offset, pkt.payload_len, &dest) != MROCE_PLACE_OK ||
          dest < base) {
        st.placement_errors++;
        *code = MROCE_NAK_REMOTE_ACCESS;
        return false;
      }
      if (r.write_mem.size() <= d.ssn) r.write_mem.resize(d.ssn + 1);
      auto &mem = r.write_mem[d.ssn];
      if (mem.size() < d.length) mem.resize(d.length);
      if (pkt.payload_len) memcpy(mem.data() + (dest - base), pkt.payload, pkt.payload_len);
      return true;
    }
    case MROCE_OP_SEND: {
      // No receive WQE posted for this msn: RNR, and the path PSN stays
      // unmarked (refusals are never SACKed).
      if (d.msn >= cfg.rq_depth) {
        *code = MROCE_NAK_RNR;
        return false;
      }
      if (r.recv_buf.size() <= d.msn) {
        r.recv_buf.resize(d.msn + 1);
        r.recv_len.resize(d.msn + 1);
      }
      // One 1 MiB receive buffer per WQE, walked as a four-element SGL to
      // exercise the placement helper.
      auto &buf = r.recv_buf[d.msn];
      if (buf.empty()) buf.resize(1 << 20);
      mroce_sge sgl[4];
      for (int i = 0; i < 4; i++)
        sgl[i] = {reinterpret_cast<uint64_t>(buf.data()) + i * (1 << 18), 1 << 18, 1};
      mroce_piece pieces[4];
      uint32_t n;
      if (mroce_sgl_map(sgl, 4, d.msg_offset, pkt.payload_len, pieces, 4, &n) != MROCE_PLACE_OK) {
        st.placement_errors++;
        *code = MROCE_NAK_REMOTE_OP;
        return false;
      }
      uint32_t done = 0;
      for (uint32_t i = 0; i < n; i++) {
        memcpy(reinterpret_cast<void *>(pieces[i].addr), pkt.payload + done, pieces[i].len);
        done += pieces[i].len;
      }
      if (eom) {
        r.recv_len[d.msn] = d.msg_offset + pkt.payload_len;
        r.tag_msn[psn] = d.msn;
        *tag = kTagRecv;
      }
      return true;
    }
    case MROCE_OP_READ_REQ:
    case MROCE_OP_ATOMIC_REQ: {
      bool ok = pkt.c.opcode == MROCE_OP_READ_REQ
                    ? mroce_range_within(kReadVa, kRegionSize, d.va, d.length)
                    : d.va == kAtomicVa;
      if (!ok) {
        *code = MROCE_NAK_REMOTE_ACCESS;
        return false;
      }
      // Executed later, in stream order, when the chunk is released.
      r.reqs[psn] = {pkt.c.opcode, d.ssn, d.msn, d.length, d.va, d.swap_add};
      *tag = kTagRequest;
      return true;
    }
    case MROCE_OP_READ_RESP:
    case MROCE_OP_ATOMIC_RESP: {
      TxStream &t = tx_[s];
      if (d.msn >= t.reads.size()) {
        *code = MROCE_NAK_INVALID_REQUEST;
        return false;
      }
      ReadState &rs = t.reads[d.msn];
      if (pkt.c.opcode == MROCE_OP_ATOMIC_RESP) {
        rs.orig = d.orig;
      } else {
        uint32_t want = t.msgs[rs.msg].read_len;
        if ((uint64_t)d.msg_offset + pkt.payload_len > want) {
          *code = MROCE_NAK_REMOTE_OP;
          return false;
        }
        rs.buf.resize(want);
        if (pkt.payload_len) memcpy(rs.buf.data() + d.msg_offset, pkt.payload, pkt.payload_len);
      }
      if (eom) {
        r.tag_msn[psn] = d.msn;
        *tag = kTagResponse;
      }
      return true;
    }
  }
  *code = MROCE_NAK_INVALID_REQUEST;
  return false;
}

// A tagged chunk released in stream order (docs/protocol.md §4.2).
void Endpoint::on_released(uint32_t s, uint32_t psn, uint8_t tag) {
  RxStream &r = rx[s];
  if (tag == kTagRequest) {
    PendingReq q = r.reqs[psn];
    r.reqs.erase(psn);
    if (q.msn != r.next_req_msn++) st.order_errors++;
    Message resp{};
    resp.msn = q.msn;
    resp.req_ssn = q.ssn;
    if (q.opcode == MROCE_OP_READ_REQ) {
      resp.kind = MsgKind::kReadResp;
      resp.data.assign(r.region.begin() + (q.va - kReadVa), r.region.begin() + (q.va - kReadVa) + q.length);
    } else {
      resp.kind = MsgKind::kAtomicResp;
      resp.orig = r.counter;
      r.counter += q.add;
    }
    st.executed++;
    queue(s, std::move(resp));  // the responder's own reliable data
    return;
  }
  uint32_t msn = r.tag_msn[psn];
  r.tag_msn.erase(psn);
  if (tag == kTagRecv) {
    if (msn != r.next_recv_msn++) st.order_errors++;
    r.completed.push_back(msn);
    st.completions_rx++;
  } else if (tag == kTagResponse) {
    if (msn != r.next_resp_msn++) st.order_errors++;
    tx_[s].reads[msn].done = true;
    complete_tx(s);
  }
}

void Endpoint::on_data(const mroce_pkt &pkt, bool ce, uint64_t now) {
  mroce_rx_verdict v = mroce_conn_rx_check(&conn, &pkt);
  if (v == MROCE_RX_NOTCONN || v == MROCE_RX_BAD_PATH || v == MROCE_RX_DUP) return;
  if (v == MROCE_RX_STALE) nak(pkt, MROCE_NAK_STALE_GEN, paths[pkt.c.path_id].rx.gen);
  if (pkt.c.opcode == MROCE_OP_PROBE) {
    if (v == MROCE_RX_NEW && mroce_conn_rx_accept(&conn, &pkt, ce, now)) send_acks(now);
    return;
  }
  uint32_t s = pkt.u.d.stream_id - 0x100;
  if (s >= rx.size()) {
    if (v == MROCE_RX_NEW) nak(pkt, MROCE_NAK_UNKNOWN_STREAM, 0);
    return;
  }
  RxStream &r = rx[s];
  mroce_srx_verdict sv = mroce_srx_check(&r.srx, pkt.u.d.stream_psn);
  if (sv == MROCE_SRX_WINDOW) {
    if (v == MROCE_RX_NEW) nak(pkt, MROCE_NAK_STREAM_PSN_WINDOW, 0);
    return;
  }
  if (sv == MROCE_SRX_NEW) {
    uint8_t tag, code;
    if (!accept_chunk(s, pkt, &tag, &code)) {
      if (v == MROCE_RX_NEW) nak(pkt, code, code == MROCE_NAK_RNR ? cfg.rnr_delay_us : 0);
      return;
    }
    r.placed[pkt.u.d.stream_psn]++;
    st.chunks_placed++;
    mroce_srx_accept(&r.srx, pkt.u.d.stream_psn, tag);
    uint32_t psn;
    while (mroce_srx_pop(&r.srx, &psn, &tag)) on_released(s, psn, tag);
  } else {
    st.stream_dups++;  // delivered before: only the path learns of it
  }
  if (v == MROCE_RX_NEW && mroce_conn_rx_accept(&conn, &pkt, ce, now)) send_acks(now);
}

void Endpoint::receive(const std::vector<uint8_t> &bytes, bool ce, uint64_t now) {
  mroce_pkt pkt;
  if (mroce_decode(bytes.data(), static_cast<uint32_t>(bytes.size()), &pkt) != MROCE_WIRE_OK) {
    st.bad_packets++;
    return;
  }
  switch (pkt.c.opcode) {
    case MROCE_OP_CONN_REQ:
    case MROCE_OP_CONN_REP:
    case MROCE_OP_CONN_CLOSE:
      handle_hs(mroce_conn_on_hs(&conn, &pkt, now));
      break;
    case MROCE_OP_ACK: {
      if (pkt.c.dst_conn != cfg.conn_id) return;
      mroce_ack_res res;
      mroce_conn_on_ack(&conn, &pkt, now, &res);
      send_probes(res.probe_mask, now);
      break;
    }
    case MROCE_OP_NAK: {
      st.naks_rx++;
      uint64_t cookie, probes = 0;
      uint32_t len;
      bool found = mroce_conn_on_nak(&conn, &pkt.u.nak, now, &cookie, &len, &probes);
      send_probes(probes, now);
      if (found)
        retx_.push_back({cookie, -1, pkt.u.nak.code == MROCE_NAK_RNR ? now + pkt.u.nak.arg * 1000ull : now});
      break;
    }
    default:
      if (pkt.c.dst_conn != cfg.conn_id) return;
      on_data(pkt, ce, now);
  }
  pump(now);
}

void Endpoint::on_timer(uint64_t now) {
  mroce_timer_res res;
  mroce_conn_on_timer(&conn, now, &res);
  handle_hs(res.hs);
  if (res.events & MROCE_EV_RETRY_EXHAUSTED) st.retry_exhausted++;
  send_probes(res.probe_mask, now);
  send_acks(now);
  pump(now);
}

void Endpoint::check_deadline() {
  uint64_t scan = mroce_conn_scan_deadline(&conn);
  uint64_t cached = mroce_conn_next_deadline(&conn);
  st.deadline_checks++;
  if (cached == scan) return;
  // The first mismatch fails the test; the rest are only counted.
  if (!st.deadline_mismatches++)
    ADD_FAILURE() << "endpoint " << cfg.conn_id << ": cached deadline " << cached
                  << " != full scan " << scan << " at check " << st.deadline_checks;
}

uint64_t Endpoint::next_wakeup() {
  check_deadline();
  uint64_t t = mroce_conn_next_deadline(&conn);
  if (paced_until_) t = std::min(t, paced_until_);
  // Held retransmissions wake us when they become due; due ones are sent by
  // the pump as soon as windows allow (an ACK or timer will call it).
  for (auto &r : retx_)
    if (r.not_before > last_now_) t = std::min(t, r.not_before);
  return t;
}

Loop::Loop(const NetCfg &net, const mroce_params *prm, const EndpointCfg &a, const EndpointCfg &b,
           uint64_t seed)
    : net_(net), rng_(seed) {
  link_tail_.assign(2 * net.links.size(), 0);
  eps_[0] = std::make_unique<Endpoint>(this, 0, prm, a, seed * 3 + 1);
  eps_[1] = std::make_unique<Endpoint>(this, 1, prm, b, seed * 5 + 2);
}

int Loop::link_of(uint16_t sport) const {
  // ECMP: a hash of the source port picks the link.
  uint32_t h = sport * 0x9e3779b1u;
  h ^= h >> 15;
  return static_cast<int>(h % net_.links.size());
}

void Loop::transmit(int from, uint16_t sport, std::vector<uint8_t> bytes, bool ect) {
  int link = link_of(sport);
  const LinkCfg &l = net_.links[link];
  if (l.blackhole || rng_.chance(l.loss) || (net_.drop && net_.drop(from, bytes))) {
    dropped++;
    return;
  }
  int copies = rng_.chance(l.dup) ? 2 : 1;
  duplicated += copies - 1;
  for (int c = 0; c < copies; c++) {
    uint64_t &tail = link_tail_[from * net_.links.size() + link];
    uint64_t at = now_ + l.delay_ns + rng_.range(0, net_.jitter_ns);
    if (!rng_.chance(l.reorder)) {
      // FIFO per link and direction: never overtake the previous packet.
      at = std::max(at, tail + 1);
      tail = at;
    }
    bool ce = ect && rng_.chance(l.ce);
    q_.push({at, seq_++, 1 - from, ce, bytes});
  }
}

bool Loop::run(const std::function<bool()> &done, uint64_t limit_ns) {
  uint64_t end = now_ + limit_ns;
  eps_[0]->pump(now_);
  eps_[1]->pump(now_);
  for (uint64_t iter = 0; !done(); iter++) {
    if (iter > 50000000) return false;  // a livelock is a failure, not a hang
    uint64_t t = std::min(eps_[0]->next_wakeup(), eps_[1]->next_wakeup());
    if (!q_.empty()) t = std::min(t, q_.top().at);
    if (t == UINT64_MAX || t > end) return false;
    now_ = std::max(now_, t);
    while (!q_.empty() && q_.top().at <= now_) {
      InFlight p = q_.top();
      q_.pop();
      delivered++;
      eps_[p.to]->receive(p.bytes, p.ce, now_);
      eps_[p.to]->check_deadline();
    }
    for (auto &e : eps_)
      if (e->next_wakeup() <= now_) {
        e->on_timer(now_);
        e->check_deadline();
      }
  }
  return true;
}

}  // namespace mt
