// SPDX-License-Identifier: GPL-2.0
#include "net.h"

#include <cassert>
#include <cmath>

namespace sim {

Packet *PacketPool::get() {
  Packet *p;
  if (free_.empty()) {
    all_.emplace_back(new Packet);
    p = all_.back().get();
  } else {
    p = free_.back();
    free_.pop_back();
  }
  live_++;
  p->uid = ++uid_;
  return p;
}

void PacketPool::put(Packet *p) {
  live_--;
  p->bytes.clear();
  p->payload_len = 0;
  p->ce = false;
  p->tag = ~0u;
  p->data = false;
  p->roce = RoceHdr();
  free_.push_back(p);
}

Port::Port(EventQueue &eq, PacketPool &pool, const LinkCfg &cfg, uint64_t seed,
           std::string name)
    : eq_(eq), pool_(pool), cfg_(cfg), rng_(seed), name_(std::move(name)) {}

Time Port::ser(uint32_t bytes) const {
  return Time(std::llround(bytes * 8.0 / cfg_.gbps)) + per_pkt;
}

void Port::send(Packet *p) {
  st_.arrived++;
  if (qbytes_ + p->wire > cfg_.buffer) {
    st_.dropped++;
    pool_.put(p);
    return;
  }
  if (p->ect && !p->ce && cfg_.ecn.enabled() && qbytes_ > cfg_.ecn.kmin) {
    bool mark;
    if (qbytes_ >= cfg_.ecn.kmax || cfg_.ecn.kmin == cfg_.ecn.kmax)
      mark = true;
    else
      mark = rng_.chance(cfg_.ecn.pmax * double(qbytes_ - cfg_.ecn.kmin) /
                         double(cfg_.ecn.kmax - cfg_.ecn.kmin));
    if (mark) {
      p->ce = true;
      st_.marked++;
    }
  }
  st_.enqueued++;
  q_.push_back(p);
  qbytes_ += p->wire;
  if (qbytes_ > st_.peak_bytes) st_.peak_bytes = qbytes_;
  if (!busy_) start();
}

void Port::start() {
  busy_ = true;
  eq_.call<&Port::on_tx_done>(eq_.now() + ser(q_.front()->wire), this);
}

void Port::notify_below(uint64_t below, std::function<void()> fn) {
  waiters_.push_back(Waiter{below, std::move(fn)});
}

void Port::on_tx_done(uint64_t) {
  Packet *p = q_.front();
  q_.pop_front();
  qbytes_ -= p->wire;
  st_.sent++;
  st_.sent_bytes += p->wire;
  if (blackhole) {
    st_.blackholed++;
    pool_.put(p);
  } else if (loss > 0 && (!loss_filter || loss_filter(*p)) && rng_.chance(loss)) {
    st_.lost++;
    pool_.put(p);
  } else {
    if (dup > 0 && rng_.chance(dup)) {
      Packet *c = pool_.get();
      uint64_t uid = c->uid;
      *c = *p;
      c->uid = uid;
      st_.duplicated++;
      on_wire_++;
      Time extra = jitter ? Time(rng_.below(jitter)) : 0;
      eq_.call<&Port::on_arrive>(eq_.now() + cfg_.delay + extra, this, uint64_t(uintptr_t(c)));
    }
    on_wire_++;
    Time extra = jitter ? Time(rng_.below(jitter)) : 0;
    eq_.call<&Port::on_arrive>(stalled(eq_.now() + cfg_.delay + extra), this,
                               uint64_t(uintptr_t(p)));
  }
  if (!q_.empty())
    start();
  else
    busy_ = false;
  if (!waiters_.empty()) {
    // Waiters may enqueue (and register again) from their callback.
    std::vector<Waiter> ready, keep;
    for (auto &w : waiters_)
      (qbytes_ <= w.below ? ready : keep).push_back(std::move(w));
    waiters_ = std::move(keep);
    for (auto &w : ready) w.fn();
  }
}

// Arrivals come in order (without jitter), so stalls are drawn lazily in
// order too.
Time Port::stalled(Time t) {
  if (!stall_gap || !stall_max) return t;
  while (t >= stall_to_) {
    double u = (double(rng_.below(1u << 30)) + 1) / double(1u << 30);
    stall_from_ = stall_to_ + Time(-std::log(u) * double(stall_gap));
    stall_to_ = stall_from_ + Time(rng_.below(stall_max));
  }
  return t >= stall_from_ ? stall_to_ : t;
}

void Port::on_arrive(uint64_t arg) {
  Packet *p = reinterpret_cast<Packet *>(uintptr_t(arg));
  on_wire_--;
  if (blackhole) {
    // The link went down while the packet was on it.
    st_.blackholed++;
    pool_.put(p);
    return;
  }
  st_.delivered++;
  peer_->receive(p, peer_port_);
}

uint64_t ecmp_hash(uint64_t salt, const Packet &p) {
  uint64_t h = mix64(salt ^ p.src_ip);
  h = mix64(h ^ p.dst_ip);
  h = mix64(h ^ (uint64_t(p.sport) << 16 | p.dport));
  return mix64(h ^ 17);
}

int Switch::route(const Packet &p) const {
  const FabricCfg &c = fabric_.cfg;
  uint32_t h = host_of(p.dst_ip);
  if (plane_of(p.dst_ip) != plane_ || h >= fabric_.n_hosts()) return -1;
  uint32_t l = fabric_.leaf_of(h);
  if (spine_) return int(l);
  if (l == index_) return int(h % c.hosts_per_leaf);
  return int(c.hosts_per_leaf + ecmp_hash(salt_, p) % c.spines);
}

void Switch::receive(Packet *p, int) {
  int out = route(*p);
  if (out < 0) {
    unroutable++;
    fabric_.pool.put(p);
    return;
  }
  ports[out]->send(p);
}

void Host::receive(Packet *p, int) {
  Endpoint *ep = p->proto == Proto::kMroce ? mroce : roce;
  if (!ep) {
    unclaimed++;  // never happens in a well-formed scenario; keep it visible
    pool_.put(p);
    return;
  }
  ep->receive(p);
}

Fabric::Fabric(EventQueue &q, const FabricCfg &c) : eq(q), cfg(c) {
  uint32_t nh = c.leaves * c.hosts_per_leaf;
  uint64_t seed = c.seed;
  auto next_seed = [&] { return seed = mix64(seed); };
  for (uint32_t h = 0; h < nh; h++) hosts_.emplace_back(new Host(h, pool));
  leaves_.resize(c.planes);
  spines_.resize(c.planes);
  LinkCfg nic = c.host_link;
  nic.buffer = c.nic_buffer;
  nic.ecn = EcnCfg();
  for (uint32_t pl = 0; pl < c.planes; pl++) {
    std::string pn = "p" + std::to_string(pl);
    for (uint32_t l = 0; l < c.leaves; l++)
      leaves_[pl].emplace_back(new Switch(*this, pl, false, l, next_seed()));
    for (uint32_t s = 0; s < c.spines; s++)
      spines_[pl].emplace_back(new Switch(*this, pl, true, s, next_seed()));
    for (uint32_t l = 0; l < c.leaves; l++) {
      Switch &lf = *leaves_[pl][l];
      for (uint32_t i = 0; i < c.hosts_per_leaf; i++) {
        uint32_t h = l * c.hosts_per_leaf + i;
        std::string hn = pn + ".leaf" + std::to_string(l) + "->h" + std::to_string(h);
        lf.ports.emplace_back(new Port(eq, pool, c.host_link, next_seed(), hn));
      }
      for (uint32_t s = 0; s < c.spines; s++) {
        std::string ln = pn + ".leaf" + std::to_string(l) + "->spine" + std::to_string(s);
        lf.ports.emplace_back(new Port(eq, pool, c.fabric_link, next_seed(), ln));
      }
    }
    for (uint32_t s = 0; s < c.spines; s++)
      for (uint32_t l = 0; l < c.leaves; l++) {
        std::string ln = pn + ".spine" + std::to_string(s) + "->leaf" + std::to_string(l);
        spines_[pl][s]->ports.emplace_back(new Port(eq, pool, c.fabric_link, next_seed(), ln));
      }
    for (uint32_t h = 0; h < nh; h++) {
      std::string hn = pn + ".h" + std::to_string(h) + "->leaf" + std::to_string(leaf_of(h));
      hosts_[h]->ports.emplace_back(new Port(eq, pool, nic, next_seed(), hn));
    }
    // Wiring.
    for (uint32_t h = 0; h < nh; h++) {
      Switch &lf = *leaves_[pl][leaf_of(h)];
      int down = int(h % c.hosts_per_leaf);
      hosts_[h]->ports[pl]->connect(&lf, down);
      lf.ports[down]->connect(hosts_[h].get(), int(pl));
    }
    for (uint32_t l = 0; l < c.leaves; l++)
      for (uint32_t s = 0; s < c.spines; s++) {
        leaves_[pl][l]->ports[c.hosts_per_leaf + s]->connect(spines_[pl][s].get(), int(l));
        spines_[pl][s]->ports[l]->connect(leaves_[pl][l].get(), int(c.hosts_per_leaf + s));
      }
  }
}

std::vector<Port *> Fabric::plane_ports(uint32_t pl) {
  std::vector<Port *> v;
  for (auto &h : hosts_) v.push_back(h->ports[pl].get());
  for (auto &l : leaves_[pl])
    for (auto &p : l->ports) v.push_back(p.get());
  for (auto &s : spines_[pl])
    for (auto &p : s->ports) v.push_back(p.get());
  return v;
}

std::vector<Port *> Fabric::all_ports() {
  std::vector<Port *> v;
  for (uint32_t pl = 0; pl < cfg.planes; pl++) {
    auto pp = plane_ports(pl);
    v.insert(v.end(), pp.begin(), pp.end());
  }
  return v;
}

void Fabric::set_plane_down(uint32_t plane, bool down) {
  for (Port *p : plane_ports(plane)) p->blackhole = down;
}

uint32_t Fabric::spine_for(const Packet &p) const {
  uint32_t l = leaf_of(host_of(p.src_ip));
  return uint32_t(ecmp_hash(leaves_[plane_of(p.src_ip)][l]->salt(), p) % cfg.spines);
}

Time Fabric::one_way(uint32_t bytes) const {
  auto ser = [&](const LinkCfg &l) { return Time(std::llround(bytes * 8.0 / l.gbps)); };
  return 2 * (ser(cfg.host_link) + cfg.host_link.delay) +
         2 * (ser(cfg.fabric_link) + cfg.fabric_link.delay);
}

Time Fabric::base_rtt(uint32_t data, uint32_t ack) const {
  return one_way(data) + one_way(ack);
}

int64_t Fabric::unaccounted() {
  int64_t n = int64_t(pool.live());
  for (Port *p : all_ports()) n -= int64_t(p->queued_pkts() + p->in_flight());
  return n;
}

}  // namespace sim
