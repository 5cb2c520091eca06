// SPDX-License-Identifier: GPL-2.0
#include "loop_harness.h"

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

// Tag a receiver gives a chunk in its stream window: 1 = SEND EOM (completes
// the next receive WQE when released in order).
constexpr uint8_t kTagRecv = 1;

}  // namespace

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
  }
}

void Endpoint::post(uint32_t s, Message m) {
  TxStream &t = tx_[s];
  t.msg_msn.push_back(m.kind == MsgKind::kSend ? t.next_msn++ : 0);
  t.msg_last_psn.push_back(0);
  t.pending.push_back(static_cast<uint32_t>(t.msgs.size()));
  t.msgs.push_back(std::move(m));
}

bool Endpoint::all_sent_completed() const {
  for (auto &t : tx_)
    if (t.completed != t.msgs.size()) return false;
  return true;
}

bool Endpoint::all_received_completed(const Endpoint &peer) const {
  for (uint32_t s = 0; s < rx.size(); s++) {
    uint32_t sends = 0;
    for (auto &m : peer.tx_[s].msgs) sends += m.kind == MsgKind::kSend;
    if (rx[s].completed.size() != sends) return false;
  }
  return true;
}

std::string Endpoint::verify_from(const Endpoint &peer) const {
  for (uint32_t s = 0; s < rx.size(); s++) {
    const RxStream &r = rx[s];
    const TxStream &t = peer.tx_[s];
    for (auto &pl : r.placed)
      if (pl.second != 1) return "stream psn placed twice: " + std::to_string(pl.first);
    for (size_t i = 0; i < r.completed.size(); i++)
      if (r.completed[i] != i) return "receive completed out of order at " + std::to_string(i);
    for (uint32_t m = 0; m < t.msgs.size(); m++) {
      const auto &data = t.msgs[m].data;
      std::string where = "stream " + std::to_string(s) + " msg " + std::to_string(m);
      if (t.msgs[m].kind == MsgKind::kWrite) {
        if (data.empty()) continue;
        if (r.write_mem.size() <= m || r.write_mem[m] != data) return "WRITE bytes differ: " + where;
      } else {
        uint32_t msn = t.msg_msn[m];
        if (r.recv_buf.size() <= msn || r.recv_len[msn] != data.size())
          return "SEND length differs: " + where;
        if (!data.empty() && memcmp(r.recv_buf[msn].data(), data.data(), data.size()))
          return "SEND bytes differ: " + where;
      }
    }
  }
  if (st.placement_errors) return "placement errors";
  if (st.order_errors) return "order errors";
  return "";
}

void Endpoint::cb_acked(void *ctx, uint64_t cookie, uint32_t, uint8_t) {
  auto *e = static_cast<Endpoint *>(ctx);
  uint32_t s = cookie_stream(cookie);
  mroce_stx_ack(&e->tx_[s].stx, cookie_psn(cookie));
  e->complete_tx(s);
}

void Endpoint::cb_lost(void *ctx, uint64_t cookie, uint32_t, uint8_t path) {
  auto *e = static_cast<Endpoint *>(ctx);
  e->retx_.push_back({cookie, path, 0});
}

// A message completes at the sender when all of its chunks and all earlier
// messages are acknowledged: the stream's una passes its last chunk.
void Endpoint::complete_tx(uint32_t s) {
  TxStream &t = tx_[s];
  while (t.completed < t.msgs.size()) {
    bool segmented = std::find(t.pending.begin(), t.pending.end(), t.completed) == t.pending.end();
    if (!segmented || (int32_t)(t.msg_last_psn[t.completed] - t.stx.una) >= 0) break;
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

void Endpoint::connect(uint64_t now) { handle_hs(mroce_conn_connect(&conn, now), now); }

void Endpoint::handle_hs(uint32_t act, uint64_t now) {
  mroce_pkt pkt;
  if (act & MROCE_HS_SEND_REQ) {
    mroce_conn_build_hs(&conn, MROCE_OP_CONN_REQ, 0, &pkt);
    send_packet(pkt, nullptr, 0, MROCE_SPORT_MIN, false);
  }
  if (act & MROCE_HS_SEND_REP) {
    mroce_conn_build_hs(&conn, MROCE_OP_CONN_REP, 0, &pkt);
    send_packet(pkt, nullptr, 0, MROCE_SPORT_MIN, false);
  }
  (void)now;
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

// Sends as much as windows, pacing and paths allow: retransmissions first
// (on their original path when healthy), then new chunks round-robin.
void Endpoint::pump(uint64_t now) {
  paced_until_ = 0;
  last_now_ = now;
  if (!mroce_conn_established(&conn)) return;
  uint32_t payload_max = mroce_max_payload(MROCE_OP_WRITE, conn.mtu);
  for (int guard = 0; guard < 100000; guard++) {
    uint32_t s = 0, psn = 0, len = 0;
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
      len = ch.len;
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
        uint32_t hdr_op = t.msgs[m].kind == MsgKind::kWrite ? MROCE_OP_WRITE : MROCE_OP_SEND;
        uint32_t seg = mroce_max_payload(hdr_op, conn.mtu);
        seg = std::min(seg, payload_max);
        ch.msg = m;
        ch.off = t.seg_off;
        ch.len = std::min(seg, total - t.seg_off);
        ch.eom = t.seg_off + ch.len == total;
        s = cand;
        len = ch.len;
        found = true;
      }
      if (!found) break;
    }

    mroce_tx_slot slot;
    mroce_tx_status stt = mroce_conn_tx_reserve(&conn, now, len, pref, &slot);
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

    const Message &msg = t.msgs[ch.msg];
    mroce_pkt pkt{};
    pkt.c.opcode = msg.kind == MsgKind::kWrite ? MROCE_OP_WRITE : MROCE_OP_SEND;
    pkt.c.flags = (ch.off == 0 ? MROCE_F_SOM : 0) | (ch.eom ? MROCE_F_EOM : 0) |
                  (is_retx ? MROCE_F_RETX : 0);
    mroce_conn_fill(&conn, &slot, &pkt);
    pkt.u.d.stream_id = qpn_of(s);
    pkt.u.d.stream_psn = psn;
    pkt.u.d.ssn = ch.msg;
    pkt.u.d.msg_offset = ch.off;
    if (msg.kind == MsgKind::kWrite) {
      pkt.u.d.va = 0x10000000ull * (ch.msg + 1);
      pkt.u.d.rkey = 0x1000 + s;
      pkt.u.d.length = static_cast<uint32_t>(msg.data.size());
    } else {
      pkt.u.d.msn = t.msg_msn[ch.msg];
    }
    bool last = retx_.empty();
    for (auto &tt : tx_) last = last && tt.pending.empty();
    if (last) pkt.c.flags |= MROCE_F_AR;
    st.chunks_sent++;
    send_packet(pkt, msg.data.data() + ch.off, ch.len, slot.sport, true);
  }
  update_backlog(now);
}

// Direct placement: WRITE bytes go to the message's buffer at va + offset,
// SEND bytes to the receive buffer of WQE `msn` at the offset.
bool Endpoint::place(RxStream &r, const mroce_pkt &pkt) {
  const mroce_data &d = pkt.u.d;
  if (pkt.c.opcode == MROCE_OP_WRITE) {
    uint64_t dest;
    uint64_t base = 0x10000000ull * (d.ssn + 1);
    if (mroce_write_dest(d.va, d.length, d.msg_offset, pkt.payload_len, &dest) != MROCE_PLACE_OK ||
        dest < base) {
      st.placement_errors++;
      return false;
    }
    if (r.write_mem.size() <= d.ssn) r.write_mem.resize(d.ssn + 1);
    auto &mem = r.write_mem[d.ssn];
    if (mem.size() < d.length) mem.resize(d.length);
    if (pkt.payload_len) memcpy(mem.data() + (dest - base), pkt.payload, pkt.payload_len);
    return true;
  }
  // SEND: one contiguous 1 MiB receive buffer per WQE, walked as an SGL of
  // four elements to exercise the placement helper.
  if (r.recv_buf.size() <= d.msn) {
    r.recv_buf.resize(d.msn + 1);
    r.recv_len.resize(d.msn + 1);
  }
  auto &buf = r.recv_buf[d.msn];
  if (buf.empty()) buf.resize(1 << 20);
  mroce_sge sgl[4];
  for (int i = 0; i < 4; i++) sgl[i] = {reinterpret_cast<uint64_t>(buf.data()) + i * (1 << 18), 1 << 18, 1};
  mroce_piece pieces[4];
  uint32_t n;
  if (mroce_sgl_map(sgl, 4, d.msg_offset, pkt.payload_len, pieces, 4, &n) != MROCE_PLACE_OK) {
    st.placement_errors++;
    return false;
  }
  uint32_t done = 0;
  for (uint32_t i = 0; i < n; i++) {
    memcpy(reinterpret_cast<void *>(pieces[i].addr), pkt.payload + done, pieces[i].len);
    done += pieces[i].len;
  }
  if (pkt.c.flags & MROCE_F_EOM) r.recv_len[d.msn] = d.msg_offset + pkt.payload_len;
  return true;
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
    // Receive-queue check before placement: no WQE posted -> RNR, and the
    // path PSN is not marked (refusals are never SACKed).
    if (pkt.c.opcode == MROCE_OP_SEND && pkt.u.d.msn >= cfg.rq_depth) {
      if (v == MROCE_RX_NEW) nak(pkt, MROCE_NAK_RNR, cfg.rnr_delay_us);
      return;
    }
    if (!place(r, pkt)) {
      if (v == MROCE_RX_NEW) nak(pkt, MROCE_NAK_REMOTE_ACCESS, 0);
      return;
    }
    r.placed[pkt.u.d.stream_psn]++;
    st.chunks_placed++;
    bool recv_eom = pkt.c.opcode == MROCE_OP_SEND && (pkt.c.flags & MROCE_F_EOM);
    if (recv_eom) r.eom_msn[pkt.u.d.stream_psn] = pkt.u.d.msn;
    mroce_srx_accept(&r.srx, pkt.u.d.stream_psn, recv_eom ? kTagRecv : 0);
    uint32_t psn;
    uint8_t tag;
    while (mroce_srx_pop(&r.srx, &psn, &tag)) {
      uint32_t msn = r.eom_msn[psn];
      r.eom_msn.erase(psn);
      if (msn != r.next_complete_msn) st.order_errors++;
      r.next_complete_msn = msn + 1;
      r.completed.push_back(msn);
      st.completions_rx++;
    }
  } else {
    st.stream_dups++;
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
      handle_hs(mroce_conn_on_hs(&conn, &pkt, now), now);
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
      if (found && pkt.u.nak.code == MROCE_NAK_RNR)
        retx_.push_back({cookie, -1, now + pkt.u.nak.arg * 1000ull});
      else if (found)
        retx_.push_back({cookie, -1, now});
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
  handle_hs(res.hs, now);
  if (res.events & MROCE_EV_RETRY_EXHAUSTED) st.retry_exhausted++;
  send_probes(res.probe_mask, now);
  send_acks(now);
  pump(now);
}

uint64_t Endpoint::next_wakeup() const {
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
    }
    for (auto &e : eps_)
      if (e->next_wakeup() <= now_) e->on_timer(now_);
  }
  return true;
}

}  // namespace mt
