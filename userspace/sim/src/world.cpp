// SPDX-License-Identifier: GPL-2.0
#include "world.h"

namespace sim {

const char *model_name(Model m) { return m == Model::kMroce ? "mroce" : "rocev2"; }

FabricCfg Conditions::fabric(uint32_t planes, uint32_t leaves, uint32_t hpl, uint32_t spines,
                             uint64_t seed) const {
  FabricCfg f;
  f.planes = planes;
  f.leaves = leaves;
  f.hosts_per_leaf = hpl;
  f.spines = spines;
  f.seed = seed;
  LinkCfg l;
  l.gbps = gbps;
  l.delay = link_delay;
  l.buffer = buffer;
  l.ecn = ecn;
  f.host_link = l;
  f.fabric_link = l;
  return f;
}

World::World(const FabricCfg &fc, const MroceCfg &mc, const RoceCfg &rc, uint64_t seed)
    : mcfg(mc), rcfg(rc), seed_(seed) {
  FabricCfg f = fc;
  f.seed = mix64(seed ^ 0xFAB);
  fab.reset(new Fabric(eq, f));
  mdev_.resize(fab->n_hosts());
  rdev_.resize(fab->n_hosts());
  mcfg.base_rtt = base_rtt();
}

Time World::base_rtt() const {
  uint32_t data = mcfg.mtu + kWireOverhead;
  uint32_t ack = MROCE_ACK_BASE_LEN + MROCE_ACK_BLOCK_LEN + kWireOverhead;
  return fab->base_rtt(data, ack);
}

MroceDev &World::mroce(uint32_t h) {
  if (!mdev_[h]) mdev_[h].reset(new MroceDev(*fab, h, mcfg, mix64(seed_ ^ (0x3000 + h))));
  return *mdev_[h];
}

RoceDev &World::roce(uint32_t h) {
  if (!rdev_[h]) rdev_[h].reset(new RoceDev(*fab, h, rcfg, mix64(seed_ ^ (0x5000 + h))));
  return *rdev_[h];
}

Stream *World::stream(Model m, uint32_t src, uint32_t dst, uint32_t plane) {
  Stream *s;
  if (m == Model::kMroce)
    s = MroceDev::pair(mroce(src), mroce(dst), next_stream_++);
  else
    s = RoceDev::pair(roce(src), roce(dst), plane, next_stream_++);
  streams_.push_back(s);
  return s;
}

void World::at(Time t, std::function<void()> fn) {
  actions_.push_back(std::move(fn));
  eq.call<&World::run_action>(t, this, actions_.size() - 1);
}

std::string World::conservation() const {
  std::string err;
  int64_t held = int64_t(fab->pool.live());
  for (Port *p : fab->all_ports()) {
    const PortStats &s = p->stats();
    if (s.arrived != s.enqueued + s.dropped)
      err += p->name() + ": arrived != enqueued + dropped; ";
    if (s.enqueued != s.sent + p->queued_pkts())
      err += p->name() + ": enqueued != sent + queued; ";
    if (s.sent + s.duplicated != s.lost + s.blackholed + s.delivered + p->in_flight())
      err += p->name() + ": sent + duplicated != lost + blackholed + delivered + on wire; ";
    held -= int64_t(p->queued_pkts() + p->in_flight());
  }
  // Between events endpoints hold no packets: every live one is in a queue
  // or on a wire.
  if (held != 0) err += "packets unaccounted for: " + std::to_string(held) + "; ";
  for (uint32_t h = 0; h < fab->n_hosts(); h++)
    if (fab->host(h).unclaimed) err += "host " + std::to_string(h) + " got unclaimed packets; ";
  return err;
}

std::string World::ledger_errors() const {
  std::string err;
  for (Stream *s : streams_)
    if (s->ledger.errors().total())
      err += "stream " + std::to_string(s->ledger.stream()) + ": " + s->ledger.errors().str() + "; ";
  return err;
}

uint64_t World::switch_drops() const {
  uint64_t d = 0;
  for (Port *p : fab->all_ports()) d += p->stats().dropped;
  return d;
}

}  // namespace sim
