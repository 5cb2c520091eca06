// SPDX-License-Identifier: GPL-2.0
#include "mroce_ep.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>

namespace sim {

namespace {
constexpr uint64_t kVaBase = 0x10000000000ULL;
constexpr uint32_t kRkey = 0x1234;
constexpr uint32_t kNoChunk = ~0u;
// Each message has its own 4 GiB window of the remote address space, so the
// receiver can recompute the destination every packet must carry.
uint64_t va_of(uint32_t idx) { return kVaBase + (uint64_t(idx) << 32); }
uint8_t wire_op(Op op) { return op == Op::kWrite ? MROCE_OP_WRITE : MROCE_OP_SEND; }
}  // namespace

// Exploration aid: MROCE_SIM_PRM="name=value,name=value" overrides tunables
// in every run (the benchmark prints the overrides it ran with).
static void env_params(mroce_params &p) {
  if (const char *env = getenv("MROCE_SIM_PRM")) {
    std::string s = env;
    for (size_t pos = 0; pos < s.size();) {
      size_t end = s.find(',', pos);
      if (end == std::string::npos) end = s.size();
      std::string kv = s.substr(pos, end - pos);
      size_t eq = kv.find('=');
      if (eq != std::string::npos)
        mroce_param_set(p, kv.substr(0, eq), strtoull(kv.c_str() + eq + 1, nullptr, 0));
      pos = end + 1;
    }
  }
}

mroce_params mroce_sim_params() {
  mroce_params p;
  mroce_params_default(&p);
  p.min_rto /= 10;
  p.max_rto /= 10;
  p.init_rto /= 10;
  p.min_pto /= 10;
  p.ack_delay /= 10;
  p.holdoff_min /= 10;
  p.holdoff_max /= 10;
  p.hs_timeout /= 10;
  p.dcc_target /= 10;
  env_params(p);
  return p;
}

mroce_params mroce_module_params() {
  mroce_params p;
  mroce_params_default(&p);
  p.min_rto = 10 * 1000 * 1000;
  p.init_rto = std::max(p.init_rto, p.min_rto);
  p.pace_horizon = 1000 * 1000;
  env_params(p);
  return p;
}

bool mroce_param_set(mroce_params &p, const std::string &n, uint64_t v) {
#define F(x)                        \
  if (n == #x) {                    \
    p.x = decltype(p.x)(v);         \
    return true;                    \
  }
  F(n_paths) F(min_active) F(dupthresh) F(min_rto) F(max_rto) F(init_rto) F(min_pto)
  F(ack_delay) F(ack_every) F(silent_rtts) F(reo_wnd) F(retry_limit) F(init_cwnd) F(min_cwnd) F(max_cwnd) F(init_pwnd)
  F(min_pwnd) F(max_pwnd) F(ecn_gain_shift) F(ecn_loss_alpha) F(heavy_loss) F(hint_slack)
  F(pace_gain) F(pace_horizon) F(min_rate) F(suspect_loss) F(rekey_score) F(rekey_rounds)
  F(probe_fails) F(holdoff_min) F(holdoff_max) F(w_rtt) F(w_ecn) F(w_loss) F(hs_timeout)
  F(hs_retries) F(oversleep) F(rto_probe) F(hint_srtt) F(dcc_target) F(dcc_beta) F(dcc_max_mdf)
  F(dcc_floor) F(rekey_rel)
#undef F
  return false;
}

MroceCfg::MroceCfg() : prm(mroce_sim_params()) {}

// ---------------------------------------------------------------- QP

MroceQp::MroceQp(MroceConn &conn, uint32_t qpn, uint32_t id, bool verify)
    : Stream(id, verify), conn_(conn), qpn_(qpn) {
  mroce_stx_init(&stx_, 0);
  mroce_srx_init(&srx_, 0);
}

void MroceQp::post(uint32_t len, Op op) {
  uint32_t msn = op == Op::kSend ? next_msn_++ : 0;
  uint32_t idx = ledger.post(len, conn_.dev_.f_.eq.now(), msn);
  sq_.push_back(Wr{idx, len, op, msn});
  conn_.unsent_ += len;
  conn_.activate(this);
  // Like a doorbell: work posted in the same instant is seen together
  // (and advertised as backlog) before the first packet leaves.
  conn_.pace_.arm(conn_.dev_.f_.eq, conn_.dev_.f_.eq.now());
}

double MroceQp::rate_gbps() const { return conn_.rate_gbps(); }

bool MroceQp::failed() const { return conn_.failed(); }

// ---------------------------------------------------------------- connection

MroceConn::MroceConn(MroceDev &dev, uint32_t peer, uint32_t local_id)
    : dev_(dev), peer_(peer), paths_(dev.cfg_.prm.n_paths) {
  ops_.acked = &MroceConn::ops_acked;
  ops_.lost = &MroceConn::ops_lost;
  ops_.path_state = &MroceConn::ops_path_state;
  mroce_conn_cfg cc;
  memset(&cc, 0, sizeof(cc));
  cc.prm = &dev.cfg_.prm;
  cc.ops = &ops_;
  cc.ctx = this;
  cc.paths = paths_.data();
  cc.max_paths = uint8_t(paths_.size());
  cc.local_id = local_id;
  cc.nonce = dev.rng_.next() | 1;
  cc.seed = dev.rng_.next() | 1;
  cc.mtu = dev.cfg_.mtu;
  cc.caps = MROCE_CAP_ATOMIC;
  cc.init_rate = dev.cfg_.init_rate;
  mroce_conn_init(&c_, &cc);
}

MroceConn::~MroceConn() = default;

uint32_t MroceConn::plane_of_path(uint32_t path) const {
  return path % dev_.host().planes();
}

size_t MroceConn::core_bytes() const {
  return sizeof(mroce_conn) + paths_.size() * sizeof(mroce_path);
}

double MroceConn::rate_gbps() const {
  const mroce_params *p = &dev_.cfg_.prm;
  double line = 0;
  for (uint32_t i = 0; i < dev_.host().planes(); i++) line += dev_.host().nic(i).cfg().gbps;
  if (!established()) return 0;
  uint32_t pace = mroce_cc_pace_rate(&c_.cc, p, c_.rtt.srtt);
  double r = pace ? pace / 1000.0 : line;
  // What the window lets through at the RTT the last ACK measured (srtt
  // would trail a queue that has drained by many ACKs).
  if (c_.rtt.latest) {
    uint32_t w = mroce_cc_window(&c_.cc, p, c_.rtt.min_rtt, c_.rtt.srtt);
    r = std::min(r, w * 8.0 / c_.rtt.latest);
  }
  return std::min(r, line);
}

void MroceConn::connect() { on_hs_actions(mroce_conn_connect(&c_, dev_.f_.eq.now())); }

void MroceConn::emit(Packet *p, uint32_t plane, uint16_t sport, bool ect) {
  address(p, Proto::kMroce, dev_.host_, peer_, plane, sport, MROCE_UDP_PORT_DEFAULT, ect,
          dev_.f_.eq.now());
  p->wire = uint32_t(p->bytes.size()) + (dev_.cfg_.verify ? 0 : p->payload_len) + kWireOverhead;
  dev_.host().nic(plane).send(p);
}

void MroceConn::send_hs(uint8_t opcode) {
  mroce_pkt pkt;
  mroce_conn_build_hs(&c_, opcode, 0, &pkt);
  Packet *p = dev_.f_.pool.get();
  p->bytes.resize(MROCE_HS_LEN);
  uint32_t n = mroce_encode(&pkt, p->bytes.data(), uint32_t(p->bytes.size()));
  assert(n == MROCE_HS_LEN);
  p->bytes.resize(n);
  // A handshake retry tries the next plane, so one dead plane cannot stop it.
  emit(p, hs_tries_++ % dev_.host().planes(),
       uint16_t(MROCE_SPORT_MIN + dev_.rng_.below(0x4000)), false);
}

void MroceConn::on_hs_actions(uint32_t act) {
  if (act & MROCE_HS_SEND_REQ) send_hs(MROCE_OP_CONN_REQ);
  if (act & MROCE_HS_SEND_REP) send_hs(MROCE_OP_CONN_REP);
  if (act & MROCE_HS_DOWN) {
    st_.hs_down++;
    failed_ = true;
  }
  if (act & (MROCE_HS_UP | MROCE_HS_RESTART)) {
    // Transport state was reset: whatever was in flight is resent.
    for (auto &kv : qps_) activate(kv.second);
    pump();
  }
  arm();
}

void MroceConn::activate(MroceQp *q) {
  if (q->active_) return;
  q->active_ = true;
  active_.push_back(q);
}

void MroceConn::arm() {
  uint64_t t = mroce_conn_next_deadline(&c_);
  if (t == U64_MAX) return;
  // A late timer (a loaded host): drawn once per deadline, so re-arming for
  // the same deadline does not redraw.
  if (dev_.cfg_.timer_late && t != deadline_) {
    deadline_ = t;
    late_ = Time(dev_.rng_.below(dev_.cfg_.timer_late));
  }
  timer_.arm(dev_.f_.eq, dev_.cfg_.timer_late ? std::max<Time>(t, dev_.f_.eq.now()) + late_ : t);
}

void MroceConn::on_timer() {
  Time now = dev_.f_.eq.now();
  mroce_timer_res r;
  mroce_conn_on_timer(&c_, now, &r);
  on_hs_actions(r.hs);
  if (r.events & MROCE_EV_RETRY_EXHAUSTED) {
    // What the device does: flush every QP with IBV_WC_RETRY_EXC_ERR.
    st_.retry_exhausted++;
    failed_ = true;
  }
  send_probes(r.probe_mask);
  if (r.events & MROCE_EV_ACK_DUE) flush_acks();
  pump();
  arm();
}

void MroceConn::ops_acked(void *ctx, uint64_t cookie, uint32_t, uint8_t) {
  static_cast<MroceConn *>(ctx)->chunk_acked(cookie);
}

void MroceConn::ops_lost(void *ctx, uint64_t cookie, uint32_t, uint8_t, uint32_t, uint8_t) {
  static_cast<MroceConn *>(ctx)->chunk_lost(cookie);
}

void MroceConn::ops_path_state(void *ctx, uint8_t path, uint8_t from, uint8_t to) {
  auto *c = static_cast<MroceConn *>(ctx);
  c->path_events_.push_back(PathEvent{c->dev_.f_.eq.now(), path, from, to});
}

void MroceConn::chunk_acked(uint64_t cookie) {
  Chunk &ch = chunks_[cookie];
  MroceQp *q = ch.qp;
  if (mroce_stx_ack(&q->stx_, ch.spsn) != MROCE_STX_ACK_NEW) st_.stream_dups++;
  ch.qp = nullptr;
  free_chunks_.push_back(uint32_t(cookie));
  check_completions(q);
  if (q->has_unsent()) activate(q);
}

void MroceConn::chunk_lost(uint64_t cookie) {
  Chunk &ch = chunks_[cookie];
  ch.qp->retx_.push_back(uint32_t(cookie));
  ch.qp->retx_bytes += ch.len;
  st_.retx_bytes += ch.len;
  unsent_ += ch.len;
  activate(ch.qp);
}

void MroceConn::check_completions(MroceQp *q) {
  Time now = dev_.f_.eq.now();
  while (!q->cpl_.empty() && mroce_seq_lt(q->cpl_.front().first, q->stx_.una)) {
    q->ledger.tx_complete(q->cpl_.front().second, now);
    q->cpl_.pop_front();
  }
}

void MroceConn::send_probes(uint64_t mask) {
  Time now = dev_.f_.eq.now();
  for (uint32_t i = 0; mask; i++, mask >>= 1) {
    if (!(mask & 1)) continue;
    mroce_tx_slot s;
    if (!mroce_conn_probe(&c_, uint8_t(i), now, &s)) continue;
    mroce_pkt pkt;
    memset(&pkt, 0, sizeof(pkt));
    pkt.c.opcode = MROCE_OP_PROBE;
    pkt.c.flags = MROCE_F_AR;
    mroce_conn_fill(&c_, &s, &pkt);
    Packet *p = dev_.f_.pool.get();
    p->bytes.resize(MROCE_PROBE_LEN);
    uint32_t n = mroce_encode(&pkt, p->bytes.data(), uint32_t(p->bytes.size()));
    assert(n == MROCE_PROBE_LEN);
    (void)n;
    emit(p, plane_of_path(s.path), s.sport, true);
  }
}

void MroceConn::send_chunk(const Chunk &ch, uint32_t id, const mroce_tx_slot &slot, bool ar) {
  mroce_pkt pkt;
  memset(&pkt, 0, sizeof(pkt));
  pkt.c.opcode = wire_op(ch.op);
  uint16_t f = 0;
  if (ch.off == 0) f |= MROCE_F_SOM;
  if (ch.off + ch.len == ch.msg_len) f |= MROCE_F_EOM;
  if (ch.sent) f |= MROCE_F_RETX;
  if (ar) f |= MROCE_F_AR;
  pkt.c.flags = f;
  mroce_data &d = pkt.u.d;
  d.stream_id = ch.qp->rqpn_;
  d.stream_psn = ch.spsn;
  d.ssn = ch.idx;
  d.msg_offset = ch.off;
  if (ch.op == Op::kWrite) {
    d.va = va_of(ch.idx);
    d.rkey = kRkey;
    d.length = ch.msg_len;
  } else {
    d.msn = ch.msn;
  }
  pkt.payload_len = ch.len;
  mroce_conn_fill(&c_, &slot, &pkt);

  Packet *p = dev_.f_.pool.get();
  p->bytes.resize(64);
  uint32_t n = mroce_encode(&pkt, p->bytes.data(), uint32_t(p->bytes.size()));
  assert(n);
  p->bytes.resize(n);
  p->payload_len = ch.len;
  if (dev_.cfg_.verify) {
    p->bytes.resize(n + ch.len);
    ch.qp->ledger.fill(ch.idx, ch.off, ch.len, p->bytes.data() + n);
  }
  p->tag = ch.qp->ledger.stream();
  p->data = true;
  (void)id;
  emit(p, plane_of_path(slot.path), slot.sport, true);
}

void MroceConn::pump() {
  if (pumping_ || failed_ || !established()) return;
  pumping_ = true;
  Fabric &f = dev_.f_;
  Time now = f.eq.now();
  block_ = kBlockNone;
  while (!active_.empty()) {
    MroceQp *q = active_.front();
    uint32_t id = kNoChunk, len;
    int pref = -1;
    bool fresh = false;
    Op op = Op::kWrite;
    if (!q->retx_.empty()) {
      id = q->retx_.front();
      len = chunks_[id].len;
      pref = chunks_[id].path;
    } else if (q->has_unsent() && mroce_stx_can_assign(&q->stx_)) {
      const MroceQp::Wr &w = q->sq_.front();
      op = w.op;
      uint32_t mss = mroce_max_payload(wire_op(op), c_.mtu);
      len = std::min(mss, w.len - q->sq_off_);
      fresh = true;
    } else {
      if (q->has_unsent()) block_ = kBlockStream;
      active_.pop_front();
      q->active_ = false;
      continue;
    }
    mroce_conn_set_backlog(&c_, uint32_t(std::min<uint64_t>(unsent_, U32_MAX)), now);
    mroce_tx_slot slot;
    enum mroce_tx_status st = mroce_conn_tx_reserve(&c_, now, len, pref, &slot);
    if (st == MROCE_TX_PACED) {
      pace_.arm(f.eq, slot.depart +
                          (dev_.cfg_.timer_late ? Time(dev_.rng_.below(dev_.cfg_.timer_late)) : 0));
      block_ = kBlockPaced;
      break;
    }
    if (st != MROCE_TX_OK) {  // an ACK or a timer resumes us
      block_ = kBlockWindow;
      break;
    }
    uint32_t plane = plane_of_path(slot.path);
    Port &nic = dev_.host().nic(plane);
    if (nic.queued_bytes() >= dev_.cfg_.nic_limit) {
      block_ = kBlockNic;
      if (!nic_wait_) {
        nic_wait_ = true;
        nic.notify_below(dev_.cfg_.nic_limit / 2, [this] {
          nic_wait_ = false;
          pump();
        });
      }
      break;
    }
    if (fresh) {
      MroceQp::Wr &w = q->sq_.front();
      if (free_chunks_.empty()) {
        free_chunks_.push_back(uint32_t(chunks_.size()));
        chunks_.push_back(Chunk());
      }
      id = free_chunks_.back();
      free_chunks_.pop_back();
      Chunk &ch = chunks_[id];
      ch = Chunk{q, w.idx, q->sq_off_, len, w.len, mroce_stx_assign(&q->stx_), w.msn, w.op, -1, false};
      q->sq_off_ += len;
      if (q->sq_off_ == w.len) {
        q->cpl_.emplace_back(ch.spsn, w.idx);
        q->sq_.pop_front();
        q->sq_off_ = 0;
      }
    } else {
      q->retx_.pop_front();
    }
    unsent_ -= len;
    Chunk &ch = chunks_[id];
    ch.path = slot.path;
    mroce_conn_tx_commit(&c_, &slot, id, now);
    send_chunk(ch, id, slot, unsent_ == 0);
    ch.sent = true;
    active_.pop_front();
    active_.push_back(q);
  }
  pumping_ = false;
  arm();
}

void MroceConn::flush_acks() {
  Time now = dev_.f_.eq.now();
  while (mroce_conn_ack_due(&c_, now)) {
    Packet *p = dev_.f_.pool.get();
    p->bytes.resize(MROCE_MAX_HDR_LEN);
    uint32_t n = mroce_conn_build_ack(&c_, now, p->bytes.data(), uint32_t(p->bytes.size()));
    if (!n) {
      dev_.f_.pool.put(p);
      break;
    }
    p->bytes.resize(n);
    emit(p, ack_plane_, ack_sport_, false);
  }
}

void MroceConn::send_nak(uint8_t code, const mroce_pkt &in, uint32_t arg) {
  mroce_pkt pkt;
  memset(&pkt, 0, sizeof(pkt));
  pkt.c.opcode = MROCE_OP_NAK;
  pkt.c.dst_conn = c_.hs.remote.id;
  mroce_nak &k = pkt.u.nak;
  k.code = code;
  k.path_id = in.c.path_id;
  k.path_gen = in.c.path_gen;
  k.path_psn = in.c.path_psn;
  if (mroce_op_is_data(in.c.opcode)) {
    k.stream_id = in.u.d.stream_id;
    k.stream_psn = in.u.d.stream_psn;
    k.ssn = in.u.d.ssn;
  }
  k.arg = arg;
  Packet *p = dev_.f_.pool.get();
  p->bytes.resize(MROCE_NAK_LEN);
  uint32_t n = mroce_encode(&pkt, p->bytes.data(), uint32_t(p->bytes.size()));
  assert(n == MROCE_NAK_LEN);
  (void)n;
  st_.naks_tx++;
  emit(p, ack_plane_, ack_sport_, false);
}

void MroceConn::place(MroceQp *q, const mroce_pkt &pkt, bool verify) {
  const mroce_data &d = pkt.u.d;
  Ledger &lg = q->peer_->ledger;
  Time now = dev_.f_.eq.now();
  if (pkt.c.opcode == MROCE_OP_WRITE || pkt.c.opcode == MROCE_OP_WRITE_IMM) {
    uint64_t dest;
    if (d.va != va_of(d.ssn) || d.length != lg.msg_len(d.ssn) ||
        mroce_write_dest(d.va, d.length, d.msg_offset, pkt.payload_len, &dest) != MROCE_PLACE_OK ||
        dest != d.va + d.msg_offset)
      st_.bad_dest++;
  } else if (d.msn != lg.msg_tag(d.ssn)) {
    st_.bad_dest++;
  }
  lg.place(d.ssn, d.msg_offset, pkt.payload_len, verify ? pkt.payload : nullptr, now);
  if (pkt.c.flags & MROCE_F_EOM) q->eom_[d.stream_psn] = d.ssn;
}

void MroceConn::rx_data(const mroce_pkt &pkt, Packet *p) {
  Time now = dev_.f_.eq.now();
  enum mroce_rx_verdict v = mroce_conn_rx_check(&c_, &pkt);
  if (v == MROCE_RX_DUP || v == MROCE_RX_BAD_PATH || v == MROCE_RX_NOTCONN) return;
  ack_plane_ = plane_of(p->dst_ip);
  ack_sport_ = p->sport;
  uint32_t gen_arg = c_.paths[pkt.c.path_id].rx.gen;
  if (pkt.c.opcode != MROCE_OP_PROBE) {
    auto it = qps_.find(pkt.u.d.stream_id);
    if (it == qps_.end()) {
      send_nak(MROCE_NAK_UNKNOWN_STREAM, pkt, 0);
      return;
    }
    MroceQp *q = it->second;
    switch (mroce_srx_check(&q->srx_, pkt.u.d.stream_psn)) {
      case MROCE_SRX_WINDOW:
        st_.window_naks++;
        send_nak(MROCE_NAK_STREAM_PSN_WINDOW, pkt, 0);
        return;
      case MROCE_SRX_DUP:
        st_.stream_dups++;
        break;
      case MROCE_SRX_NEW: {
        place(q, pkt, dev_.cfg_.verify);
        mroce_srx_accept(&q->srx_, pkt.u.d.stream_psn, (pkt.c.flags & MROCE_F_EOM) ? 1 : 0);
        uint32_t psn;
        uint8_t tag;
        while (mroce_srx_pop(&q->srx_, &psn, &tag)) {
          auto e = q->eom_.find(psn);
          if (e == q->eom_.end()) {
            st_.bad_dest++;
            continue;
          }
          q->peer_->ledger.rx_complete(e->second, now);
          q->eom_.erase(e);
        }
        break;
      }
    }
  }
  if (v == MROCE_RX_NEW)
    mroce_conn_rx_accept(&c_, &pkt, p->ce, now);
  else if (v == MROCE_RX_STALE)
    send_nak(MROCE_NAK_STALE_GEN, pkt, gen_arg);
  flush_acks();
}

void MroceConn::rx(const mroce_pkt &pkt, Packet *p) {
  Time now = dev_.f_.eq.now();
  switch (pkt.c.opcode) {
    case MROCE_OP_CONN_REQ:
    case MROCE_OP_CONN_REP:
    case MROCE_OP_CONN_CLOSE:
      on_hs_actions(mroce_conn_on_hs(&c_, &pkt, now));
      return;
    case MROCE_OP_ACK: {
      mroce_ack_res r;
      mroce_conn_on_ack(&c_, &pkt, now, &r);
      send_probes(r.probe_mask);
      break;
    }
    case MROCE_OP_NAK: {
      uint64_t cookie = 0, mask = 0;
      uint32_t len = 0;
      if (pkt.u.nak.code == MROCE_NAK_UNKNOWN_CONN) {
        on_hs_actions(mroce_conn_on_unknown(&c_, pkt.u.nak.arg));
        return;
      }
      if (mroce_conn_on_nak(&c_, &pkt.u.nak, now, &cookie, &len, &mask)) {
        if (pkt.u.nak.code == MROCE_NAK_STREAM_PSN_WINDOW || pkt.u.nak.code == MROCE_NAK_RNR) {
          chunk_lost(cookie);  // resend later, not a loss signal
        } else {
          failed_ = true;  // fatal NAK: the QP would go to error
        }
      }
      send_probes(mask);
      break;
    }
    default:
      rx_data(pkt, p);
      break;
  }
  pump();
  arm();
}

// ---------------------------------------------------------------- device

MroceDev::MroceDev(Fabric &f, uint32_t host, const MroceCfg &cfg, uint64_t seed)
    : f_(f), host_(host), cfg_(cfg), rng_(seed), scratch_(70000, 0) {
  f.host(host).mroce = this;
}

MroceDev::~MroceDev() = default;

std::vector<MroceConn *> MroceDev::conns() {
  std::vector<MroceConn *> v;
  for (auto &c : conns_) v.push_back(c.get());
  return v;
}

MroceConn &MroceDev::create(uint32_t peer) {
  conns_.emplace_back(new MroceConn(*this, peer, uint32_t(conns_.size() + 1)));
  MroceConn &c = *conns_.back();
  by_peer_[peer] = &c;
  if (cfg_.hints) {
    // The handshake grants the newcomer its share among every connection
    // this device serves (established or still in its handshake).
    mroce_hint_cfg hc = hint_cfg();
    mroce_conn_set_rx_hint(&c.c_, mroce_hint_newcomer(&hc, uint32_t(conns_.size())));
  }
  if (!hint_running_ && cfg_.hints) {
    hint_running_ = true;
    f_.eq.call<&MroceDev::hint_tick>(f_.eq.now() + cfg_.hint_period, this);
  }
  return c;
}

MroceConn *MroceDev::find_conn(uint32_t peer) {
  auto it = by_peer_.find(peer);
  return it == by_peer_.end() ? nullptr : it->second;
}

MroceConn &MroceDev::conn_to(uint32_t peer) {
  if (MroceConn *c = find_conn(peer)) return *c;
  MroceConn &c = create(peer);
  c.connect();
  return c;
}

MroceQp *MroceDev::new_qp(MroceConn &c, uint32_t stream_id) {
  qps_.emplace_back(new MroceQp(c, next_qpn_++, stream_id, cfg_.verify));
  MroceQp *q = qps_.back().get();
  c.add_qp(q);
  return q;
}

MroceQp *MroceDev::pair(MroceDev &src, MroceDev &dst, uint32_t stream_id) {
  // The sending side connects; the receiving side's connection waits for
  // the CONN_REQ (a QP that only receives never needs to open one).
  MroceConn &cs = src.conn_to(dst.host_);
  MroceConn *found = dst.find_conn(src.host_);
  MroceConn &cd = found ? *found : dst.create(src.host_);
  MroceQp *s = src.new_qp(cs, stream_id);
  MroceQp *d = dst.new_qp(cd, stream_id);
  s->rqpn_ = d->qpn_;
  d->rqpn_ = s->qpn_;
  s->peer_ = d;
  d->peer_ = s;
  return s;
}

void MroceDev::receive(Packet *p) {
  st_.rx_pkts++;
  // Without payload verification only the header travels; decode it from a
  // buffer whose tail is zeros so the decoder sees the full packet length.
  const uint8_t *buf;
  uint32_t len;
  if (cfg_.verify) {
    buf = p->bytes.data();
    len = uint32_t(p->bytes.size());
  } else {
    memcpy(scratch_.data(), p->bytes.data(), p->bytes.size());
    buf = scratch_.data();
    len = uint32_t(p->bytes.size()) + p->payload_len;
  }
  mroce_pkt pkt;
  if (mroce_decode(buf, len, &pkt) != MROCE_WIRE_OK) {
    st_.decode_errors++;
    f_.pool.put(p);
    return;
  }
  MroceConn *c = nullptr;
  if (pkt.c.opcode == MROCE_OP_CONN_REQ) {
    uint32_t peer = host_of(p->src_ip);
    c = find_conn(peer);
    if (!c) c = &create(peer);
  } else if (pkt.c.dst_conn >= 1 && pkt.c.dst_conn <= conns_.size()) {
    c = conns_[pkt.c.dst_conn - 1].get();
  }
  if (!c) {
    st_.unknown_conn++;
    f_.pool.put(p);
    return;
  }
  c->rx(pkt, p);
  f_.pool.put(p);
}

uint32_t MroceDev::capacity_mbps() {
  if (cfg_.hint_mbps) return cfg_.hint_mbps;
  uint32_t cap = 0;
  for (uint32_t i = 0; i < host().planes(); i++)
    cap += uint32_t(host().nic(i).cfg().gbps * 1000);
  return cap;
}

mroce_hint_cfg MroceDev::hint_cfg() {
  mroce_hint_cfg hc;
  mroce_hint_cfg_default(&hc, capacity_mbps());
  hc.rtt_min = uint32_t(cfg_.base_rtt);
  hc.q_target = uint32_t(cfg_.base_rtt / 2);
  return hc;
}

void MroceDev::hint_tick() {
  Time now = f_.eq.now();
  uint32_t cap = capacity_mbps();
  mroce_hint_cfg hc = hint_cfg();
  hint_scratch_.clear();
  std::vector<MroceConn *> up;
  for (auto &c : conns_) {
    if (!c->established()) continue;
    mroce_hint_entry e;
    memset(&e, 0, sizeof(e));
    uint64_t bytes = mroce_conn_rx_sample(&c->c_, cfg_.hint_period, uint32_t(cfg_.base_rtt), cap,
                                          &e.demand, &e.qdelay);
    e.arrival = mroce_hint_mbps(bytes, cfg_.hint_period);
    e.weight = 1;
    hint_scratch_.push_back(e);
    up.push_back(c.get());
  }
  if (!hint_scratch_.empty()) {
    mroce_hint_compute(&hc, cfg_.hint_drain ? &hint_state_ : nullptr, hint_scratch_.data(),
                       uint32_t(hint_scratch_.size()), cfg_.hint_period);
    for (size_t i = 0; i < up.size(); i++) {
      mroce_conn_set_rx_hint(&up[i]->c_, hint_scratch_[i].hint);
      // A grant that fell is pushed at once (a hint-only ACK to an idle peer).
      up[i]->flush_acks();
      up[i]->arm();
    }
  }
  f_.eq.call<&MroceDev::hint_tick>(now + cfg_.hint_period, this);
}

}  // namespace sim
