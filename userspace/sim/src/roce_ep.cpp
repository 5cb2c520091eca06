// SPDX-License-Identifier: GPL-2.0
#include "roce_ep.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace sim {

namespace {
constexpr uint16_t kRocePort = 4791;
bool psn_lt(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }
}  // namespace

size_t RoceQp::state_bytes() {
  // What the model keeps per QP besides queued work: requester PSNs,
  // counters and timers, DCQCN state, responder PSN/NAK/CNP state.
  return sizeof(uint32_t) * 8 + sizeof(int) + sizeof(Time) * 5 + sizeof(double) * 4 +
         sizeof(int) * 2 + sizeof(uint64_t) + 4 * sizeof(bool);
}

RoceQp::RoceQp(RoceDev &dev, uint32_t qpn, uint32_t plane, uint32_t id, bool verify)
    : Stream(id, verify), dev_(dev), qpn_(qpn), plane_(plane) {
  sport_ = uint16_t(0xC000 | (mix64(uint64_t(dev.host_) << 32 | qpn) & 0x3FFF));
  line_ = dev.f_.host(dev.host_).nic(plane).cfg().gbps;
  rc_ = rt_ = line_;
}

void RoceQp::post(uint32_t len, Op op) {
  uint32_t idx = ledger.post(len, dev_.f_.eq.now());
  sq_.push_back(Wr{idx, len, op});
  // Like a doorbell: work posted in the same instant is seen together.
  ready_timer_.arm(dev_.f_.eq, dev_.f_.eq.now());
}

bool RoceQp::can_send() const {
  if (error_) return false;
  if (next_ != max_) return true;  // go-back-N resend pending
  return !sq_.empty() && max_ - una_ < dev_.cfg_.window;
}

// Make the QP eligible for the NIC once its rate limiter allows.
void RoceQp::kick() {
  if (queued_ || !can_send()) return;
  Time now = dev_.f_.eq.now();
  if (next_tx_ > now) {
    ready_timer_.arm(dev_.f_.eq, next_tx_);
    return;
  }
  dev_.ready(this);
}

void RoceQp::on_ready_timer() { kick(); }

Packet *RoceQp::build_next() {
  const RoceCfg &cfg = dev_.cfg_;
  if (next_ == max_) {
    const Wr &w = sq_.front();
    uint32_t len = std::min(cfg.mtu, w.len - sq_off_);
    Desc d{w.idx, sq_off_, len, w.len, sq_off_ == 0, sq_off_ + len == w.len, w.op};
    sq_off_ += len;
    if (sq_off_ == w.len) {
      sq_.pop_front();
      sq_off_ = 0;
    }
    desc_.push_back(d);
    max_++;
  } else {
    retx_bytes += desc_[next_ - una_].len;
  }
  const Desc &d = desc_[next_ - una_];
  Packet *p = dev_.f_.pool.get();
  address(p, Proto::kRoce, dev_.host_, peer_host_, plane_, sport_, kRocePort, true,
          dev_.f_.eq.now());
  p->tag = ledger.stream();
  p->data = true;
  p->payload_len = d.len;
  RoceHdr &h = p->roce;
  h.op = RoceHdr::kData;
  h.qpn = rqpn_;
  h.psn = next_;
  h.msg = d.idx;
  h.off = d.off;
  h.msg_len = d.msg_len;
  h.first = d.first;
  h.last = d.last;
  h.ackreq = d.last || ++noack_ >= cfg.ack_every || next_ + 1 - una_ >= cfg.window;
  if (h.ackreq) noack_ = 0;
  p->wire = kWireOverhead + kRoceBth + kRoceIcrc + d.len +
            (d.first && d.op == Op::kWrite ? kRoceReth : 0);
  if (cfg.verify) {
    p->bytes.resize(d.len);
    ledger.fill(d.idx, d.off, d.len, p->bytes.data());
  }
  next_++;
  if (rto_.deadline() == kNever) rto_.arm(dev_.f_.eq, dev_.f_.eq.now() + cfg.timeout);
  // Rate limiter and DCQCN byte counter.
  Time now = dev_.f_.eq.now();
  next_tx_ = std::max(next_tx_, now) + Time(std::llround(p->wire * 8.0 / rc_));
  if (recovering_) {
    bytes_since_ += p->wire;
    if (bytes_since_ >= cfg.dcqcn.byte_stage) {
      bytes_since_ = 0;
      rate_increase(false);
    }
  }
  return p;
}

void RoceQp::send_ctl(RoceHdr::Op op, uint32_t psn) {
  Packet *p = dev_.f_.pool.get();
  address(p, Proto::kRoce, dev_.host_, peer_host_, plane_, sport_, kRocePort, false,
          dev_.f_.eq.now());
  p->roce.op = op;
  p->roce.qpn = rqpn_;
  p->roce.psn = psn;
  p->wire = kWireOverhead + kRoceBth + kRoceIcrc + (op == RoceHdr::kCnp ? 16 : kRoceAeth);
  dev_.f_.host(dev_.host_).nic(plane_).send(p);
}

void RoceQp::progress_to(uint32_t psn, Time now) {
  // Everything before @psn is acknowledged.
  bool moved = false;
  while (psn_lt(una_, psn) && una_ != max_) {
    const Desc &d = desc_.front();
    if (d.last) ledger.tx_complete(d.idx, now);
    desc_.pop_front();
    una_++;
    moved = true;
  }
  if (psn_lt(next_, una_)) next_ = una_;
  if (moved) {
    retries_ = 0;
    rto_.cancel();
    if (una_ != max_) rto_.arm(dev_.f_.eq, now + dev_.cfg_.timeout);
  }
}

void RoceQp::on_ack(uint32_t psn, Time now) {
  progress_to(psn + 1, now);
  kick();
}

void RoceQp::on_nak(uint32_t psn, Time now) {
  naks_rx++;
  uint32_t before = una_;
  progress_to(psn, now);
  if (una_ == before && ++retries_ > dev_.cfg_.retry_cnt) {
    error_ = true;
    return;
  }
  // Go back N: resend from the PSN the responder expects.
  if (psn_lt(psn, next_) && !psn_lt(psn, una_)) next_ = psn;
  kick();
}

void RoceQp::on_rto() {
  if (error_ || una_ == max_) return;
  timeouts++;
  if (++retries_ > dev_.cfg_.retry_cnt) {
    error_ = true;  // IBV_WC_RETRY_EXC_ERR
    return;
  }
  next_ = una_;
  rto_.arm(dev_.f_.eq, dev_.f_.eq.now() + dev_.cfg_.timeout);
  kick();
}

void RoceQp::on_cnp(Time now) {
  const DcqcnCfg &c = dev_.cfg_.dcqcn;
  cnps_rx++;
  if (!c.enabled) return;
  // Alpha decays once per period without a CNP; apply the periods since the
  // last update lazily, then fold in this CNP.
  if (alpha_at_) {
    uint64_t n = (now - alpha_at_) / c.alpha_period;
    alpha_ *= std::pow(1 - c.g, double(n));
  }
  alpha_at_ = now;
  rt_ = rc_;
  rc_ = std::max(c.min_gbps, rc_ * (1 - alpha_ / 2));
  alpha_ = (1 - c.g) * alpha_ + c.g;
  t_stage_ = b_stage_ = 0;
  bytes_since_ = 0;
  recovering_ = true;
  rate_timer_.cancel();
  rate_timer_.arm(dev_.f_.eq, now + c.rate_period);
}

void RoceQp::on_rate_timer() {
  if (!recovering_) return;
  rate_increase(true);
  if (recovering_) rate_timer_.arm(dev_.f_.eq, dev_.f_.eq.now() + dev_.cfg_.dcqcn.rate_period);
}

void RoceQp::rate_increase(bool timer) {
  const DcqcnCfg &c = dev_.cfg_.dcqcn;
  (timer ? t_stage_ : b_stage_)++;
  int hi = std::max(t_stage_, b_stage_), lo = std::min(t_stage_, b_stage_);
  if (hi < c.fast_stages) {
    // fast recovery: halve the distance to the target
  } else if (lo >= c.fast_stages) {
    rt_ += c.hai_gbps;
  } else {
    rt_ += c.ai_gbps;
  }
  rt_ = std::min(rt_, line_);
  rc_ = std::min((rt_ + rc_) / 2, line_);
  if (rc_ >= line_ * 0.9999) {
    rc_ = line_;
    recovering_ = false;
  }
}

void RoceQp::on_data(Packet *p) {
  const RoceHdr &h = p->roce;
  RoceQp *s = peer_;
  Time now = dev_.f_.eq.now();
  const DcqcnCfg &dc = dev_.cfg_.dcqcn;
  if (p->ce && dc.enabled && (!cnp_sent_ || now - last_cnp_ >= dc.cnp_interval)) {
    cnp_sent_ = true;
    last_cnp_ = now;
    send_ctl(RoceHdr::kCnp, 0);
  }
  if (h.psn == epsn_) {
    s->ledger.place(h.msg, h.off, p->payload_len,
                    dev_.cfg_.verify ? p->bytes.data() : nullptr, now);
    if (h.last) s->ledger.rx_complete(h.msg, now);
    epsn_++;
    nak_sent_ = false;
    if (h.ackreq) send_ctl(RoceHdr::kAck, epsn_ - 1);
  } else if (psn_lt(h.psn, epsn_)) {
    // Duplicate: acknowledge again so a go-back-N sender learns where we are.
    send_ctl(RoceHdr::kAck, epsn_ - 1);
  } else if (!nak_sent_) {
    nak_sent_ = true;
    send_ctl(RoceHdr::kNak, epsn_);
  }
}

RoceDev::RoceDev(Fabric &f, uint32_t host, const RoceCfg &cfg, uint64_t seed)
    : f_(f), host_(host), cfg_(cfg), rng_(seed) {
  f.host(host).roce = this;
  ready_.resize(f.host(host).planes());
  nic_wait_.resize(f.host(host).planes(), false);
}

RoceQp *RoceDev::pair(RoceDev &src, RoceDev &dst, uint32_t plane, uint32_t stream_id) {
  uint32_t a = src.next_qpn_++, b = dst.next_qpn_++;
  auto *s = new RoceQp(src, a, plane, stream_id, src.cfg_.verify);
  auto *d = new RoceQp(dst, b, plane, stream_id, dst.cfg_.verify);
  src.qps_[a].reset(s);
  dst.qps_[b].reset(d);
  s->rqpn_ = b;
  d->rqpn_ = a;
  s->peer_host_ = dst.host_;
  d->peer_host_ = src.host_;
  s->peer_ = d;
  d->peer_ = s;
  d->sport_ = s->sport_;
  return s;
}

void RoceDev::ready(RoceQp *q) {
  q->queued_ = true;
  ready_[q->plane_].push_back(q);
  kick(q->plane_);
}

void RoceDev::kick(uint32_t plane) {
  Port &nic = f_.host(host_).nic(plane);
  auto &rq = ready_[plane];
  while (!rq.empty()) {
    if (nic.queued_bytes() >= cfg_.nic_limit) {
      if (!nic_wait_[plane]) {
        nic_wait_[plane] = true;
        nic.notify_below(cfg_.nic_limit / 2, [this, plane] {
          nic_wait_[plane] = false;
          kick(plane);
        });
      }
      return;
    }
    RoceQp *q = rq.front();
    rq.pop_front();
    q->queued_ = false;
    if (!q->can_send()) continue;
    nic.send(q->build_next());
    q->kick();
  }
}

void RoceDev::receive(Packet *p) {
  auto it = qps_.find(p->roce.qpn);
  if (it == qps_.end()) {
    unknown_qp++;
    f_.pool.put(p);
    return;
  }
  RoceQp *q = it->second.get();
  Time now = f_.eq.now();
  switch (p->roce.op) {
    case RoceHdr::kData:
      q->on_data(p);
      break;
    case RoceHdr::kAck:
      if (!q->error_) q->on_ack(p->roce.psn, now);
      break;
    case RoceHdr::kNak:
      if (!q->error_) q->on_nak(p->roce.psn, now);
      break;
    case RoceHdr::kCnp:
      q->on_cnp(now);
      break;
  }
  f_.pool.put(p);
}

}  // namespace sim
