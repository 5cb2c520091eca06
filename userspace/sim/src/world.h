// SPDX-License-Identifier: GPL-2.0
// A simulated world: one fabric plus mroce or RoCEv2 endpoints on its hosts,
// created on demand, and the checks every run can make on itself.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mroce_ep.h"
#include "net.h"
#include "roce_ep.h"

namespace sim {

enum class Model { kMroce, kRoce };
const char *model_name(Model m);

// Default conditions of every scenario (scenarios change what they need).
struct Conditions {
  double gbps = 100;
  Time link_delay = 1 * kUs;
  uint64_t buffer = 1 << 20;  // per switch egress port
  EcnCfg ecn{50 * 1024, 200 * 1024, 0.2};
  uint32_t mtu = 4096;  // payload bytes per packet, both models
  FabricCfg fabric(uint32_t planes, uint32_t leaves, uint32_t hosts_per_leaf,
                   uint32_t spines, uint64_t seed) const;
};

class World {
 public:
  World(const FabricCfg &fc, const MroceCfg &mc, const RoceCfg &rc, uint64_t seed);
  EventQueue eq;
  std::unique_ptr<Fabric> fab;
  MroceCfg mcfg;
  RoceCfg rcfg;

  MroceDev &mroce(uint32_t host);
  RoceDev &roce(uint32_t host);
  // A stream from @src to @dst. mroce: a QP on the hosts' shared connection
  // (all planes); RoCE: a QP on @plane.
  Stream *stream(Model m, uint32_t src, uint32_t dst, uint32_t plane = 0);
  std::vector<Stream *> &streams() { return streams_; }
  void run_until(Time t) { eq.run_until(t); }
  // Runs @fn at time @t (fault injection, traffic changes, sampling).
  void at(Time t, std::function<void()> fn);

  // Empty string if every port's counters balance and no packet is
  // unaccounted for; otherwise what is wrong.
  std::string conservation() const;
  // Empty string if no stream's ledger has an error.
  std::string ledger_errors() const;
  uint64_t switch_drops() const;
  // Zero-load RTT of a full data packet and its ACK across the fabric.
  Time base_rtt() const;

 private:
  uint64_t seed_;
  std::vector<std::unique_ptr<MroceDev>> mdev_;
  std::vector<std::unique_ptr<RoceDev>> rdev_;
  std::vector<Stream *> streams_;
  uint32_t next_stream_ = 0;
  std::deque<std::function<void()>> actions_;
  void run_action(uint64_t i) { actions_[i](); }
};

}  // namespace sim
