// SPDX-License-Identifier: GPL-2.0
// End-to-end properties of both transport models in the simulator: every
// byte posted is placed exactly once with the right content, messages
// complete in order at both ends, and the network's counters balance, under
// loss, duplication, reordering, blackholes and a lost plane. Payload bytes
// are materialised and checked. Time is simulated, so nothing here depends
// on how fast the host runs.
#include <gtest/gtest.h>

#include <algorithm>

#include "scenarios.h"

using namespace sim;

namespace {

BulkCfg finite(Model m, uint64_t bytes) {
  BulkCfg c;
  c.model = m;
  c.bytes = bytes;
  c.msg = 300 * 1024 + 123;  // not a multiple of the MTU
  c.duration = 50 * kMs;     // upper bound; runs stop when all completed
  c.verify = true;
  c.seed = 42;
  return c;
}

void expect_clean(const BulkResult &r) {
  EXPECT_TRUE(r.all_done) << r.metrics;
  EXPECT_EQ(r.errors, "");
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GT(r.done_at, 0u);
}

const MroceConn &conn(World &w) { return *w.mroce(0).find_conn(1); }

}  // namespace

TEST(MroceDelivery, LosslessWritesAndSendsArriveExactlyOnce) {
  BulkCfg c = finite(Model::kMroce, 6u << 20);
  c.streams = 3;
  c.mix_sends = true;
  uint64_t retx = 1, dups = 1;
  c.inspect = [&](World &w, BulkResult &) {
    retx = conn(w).stats().retx_bytes;
    dups = conn(w).stats().stream_dups + conn(w).core().stats.rx_dup;
    EXPECT_EQ(w.mroce(1).stats().decode_errors, 0u);
    EXPECT_EQ(conn(w).stats().bad_dest, 0u);
    EXPECT_EQ(w.mroce(1).find_conn(0)->stats().bad_dest, 0u);
  };
  BulkResult r = run_bulk(c);
  expect_clean(r);
  EXPECT_EQ(retx, 0u);
  EXPECT_EQ(dups, 0u);
}

TEST(MroceDelivery, RandomLossBothWaysEveryByteOnce) {
  BulkCfg c = finite(Model::kMroce, 8u << 20);
  c.streams = 2;
  c.mix_sends = true;
  c.loss = 0.05;
  BulkResult r = run_bulk(c);
  expect_clean(r);
  EXPECT_GT(r.retx_bytes, 0u);  // the loss did bite
}

// The VM-like closed loop (docs/simulation.md, h): the module's parameters,
// per-packet CPU costs, stalls, late timers, Sends with at most 8
// outstanding, 2 % loss on the data.
TEST(MroceDelivery, ClosedLoopSendsWithStallsAndLateTimers) {
  BulkCfg c = finite(Model::kMroce, 6u << 20);
  c.msg = 64 * 1024;
  c.sends = true;
  c.depth = 8;
  c.module_prm = true;
  c.hint_mbps = 10000;
  c.hint_period = 100 * kUs;
  c.cond.gbps = 10;
  c.cpu_tx = 25 * kUs;
  c.cpu_rx = 20 * kUs;
  c.stall_gap = 2 * kMs;
  c.stall_max = kMs;
  c.timer_late = 2 * kMs;
  c.loss = 0.02;
  c.loss_both_ways = false;
  c.duration = 2000 * kMs;
  uint64_t most = 0;
  c.setup = [&](World &w) {
    Stream *s = w.streams()[0];
    auto repost = s->ledger.on_tx_complete;
    s->ledger.on_tx_complete = [&most, s, repost](uint32_t idx) {
      repost(idx);
      most = std::max<uint64_t>(most, s->ledger.posted_msgs() - s->ledger.tx_msgs());
    };
  };
  BulkResult r = run_bulk(c);
  expect_clean(r);
  EXPECT_GT(r.retx_bytes, 0u);
  EXPECT_EQ(most, 8u);  // the loop kept the depth full, never more
}

TEST(MroceDelivery, DuplicationAndReorderingOnEveryLink) {
  BulkCfg c = finite(Model::kMroce, 6u << 20);
  c.streams = 2;
  c.mix_sends = true;
  uint64_t dup_seen = 0, duplicated = 0;
  c.setup = [&](World &w) {
    for (Port *p : w.fab->all_ports()) {
      p->dup = 0.03;
      p->jitter = 3 * kUs;  // breaks the FIFO order of every path
    }
  };
  c.inspect = [&](World &w, BulkResult &) {
    const MroceConn &rx = *w.mroce(1).find_conn(0);
    dup_seen = rx.core().stats.rx_dup + rx.stats().stream_dups;
    for (Port *p : w.fab->all_ports()) duplicated += p->stats().duplicated;
  };
  BulkResult r = run_bulk(c);
  expect_clean(r);
  EXPECT_GT(duplicated, 0u);
  EXPECT_GT(dup_seen, 0u);  // duplicates reached the receiver and were dropped
}

TEST(MroceDelivery, BlackholedPathIsRekeyedWithoutConnectionFailure) {
  BulkCfg c = finite(Model::kMroce, 16u << 20);
  c.planes = 1;
  uint64_t swallowed = 0, rekeys = 0;
  Port *hole = nullptr;
  c.setup = [&](World &w) {
    w.at(300 * kUs, [&] {
      const MroceConn &cn = conn(w);
      Packet k;
      k.src_ip = ip_of(0, 0);
      k.dst_ip = ip_of(1, 0);
      k.sport = cn.core().paths[0].sport;
      k.dport = MROCE_UDP_PORT_DEFAULT;
      hole = &w.fab->uplink(0, 0, w.fab->spine_for(k));
      hole->blackhole = true;  // silently, for the rest of the run
    });
  };
  c.inspect = [&](World &w, BulkResult &) {
    swallowed = hole->stats().blackholed;
    rekeys = conn(w).core().stats.rekeys;
  };
  BulkResult r = run_bulk(c);
  expect_clean(r);
  EXPECT_GT(swallowed, 0u);  // traffic really went into the hole
  EXPECT_GT(rekeys, 0u);     // and the paths that used it were moved
  EXPECT_GT(r.done_at, 300 * kUs);
}

TEST(MroceDelivery, LosingAWholePlaneKeepsTheConnection) {
  BulkCfg c = finite(Model::kMroce, 24u << 20);
  c.planes = 2;
  c.paths = 8;
  bool plane1_failed = false;
  c.setup = [&](World &w) { w.at(200 * kUs, [&w] { w.fab->set_plane_down(1, true); }); };
  c.inspect = [&](World &w, BulkResult &) {
    // Every path of plane 1 ended up FAILED (waiting out its hold-off) or
    // still PROBING; none carries data.
    const mroce_conn &k = conn(w).core();
    plane1_failed = true;
    for (uint32_t i = 1; i < k.n_paths; i += 2)
      plane1_failed = plane1_failed && k.paths[i].health.state != MROCE_PATH_ACTIVE;
  };
  BulkResult r = run_bulk(c);
  expect_clean(r);
  EXPECT_TRUE(plane1_failed);
  EXPECT_GT(r.done_at, 200 * kUs);
}

TEST(RoceDelivery, RandomLossGoBackNEveryByteOnce) {
  BulkCfg c = finite(Model::kRoce, 4u << 20);
  c.streams = 2;
  c.loss = 0.02;
  BulkResult r = run_bulk(c);
  expect_clean(r);
  EXPECT_GT(r.retx_bytes, 0u);
}

TEST(RoceDelivery, ReorderingIsRecoveredByGoBackN) {
  BulkCfg c = finite(Model::kRoce, 4u << 20);
  c.setup = [&](World &w) {
    for (Port *p : w.fab->all_ports()) {
      p->dup = 0.02;
      p->jitter = 2 * kUs;
    }
  };
  BulkResult r = run_bulk(c);
  expect_clean(r);
}

TEST(RoceDelivery, BlackholedQpRunsOutOfRetries) {
  // The baseline must really suffer the fault mroce survives above.
  BulkCfg c = finite(Model::kRoce, 16u << 20);
  c.verify = false;
  c.duration = 5 * kMs;
  c.setup = [&](World &w) {
    w.at(300 * kUs, [&w] {
      auto *q = dynamic_cast<RoceQp *>(w.streams()[0]);
      Packet k;
      k.src_ip = ip_of(0, 0);
      k.dst_ip = ip_of(1, 0);
      k.sport = q->sport();
      k.dport = 4791;
      w.fab->uplink(0, 0, w.fab->spine_for(k)).blackhole = true;
    });
  };
  BulkResult r = run_bulk(c);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_FALSE(r.all_done);
  EXPECT_EQ(r.errors, "");  // what did arrive arrived exactly once
}

// Scenario (h), short: in the VM's conditions 1 % loss on the data costs the
// protocol about the lost packets, for Writes and Sends (the module's 0.71
// for Send at 1 % in make bench is not the core's). Simulated time: the
// host's speed does not enter.
TEST(MroceGoodput, VmRowLosesLittleMoreThanTheLostPackets) {
  BenchOpts o;
  o.quick = true;
  for (bool send : {false, true}) {
    BulkCfg c = vm_cfg(o);
    c.sends = send;
    BulkResult r0 = run_bulk(c);
    c.loss = 0.01;
    BulkResult r1 = run_bulk(c);
    EXPECT_EQ(r0.errors + r1.errors, "");
    EXPECT_EQ(r0.retx_bytes, 0u);
    EXPECT_GT(r1.retx_bytes, 0u);
    EXPECT_GT(r0.gbps, 0.3) << r0.metrics;
    EXPECT_GE(r1.gbps / r0.gbps, 0.95) << (send ? "Send " : "Write ") << r0.metrics << " / " << r1.metrics;
  }
}
