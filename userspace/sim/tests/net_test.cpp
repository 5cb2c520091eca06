// SPDX-License-Identifier: GPL-2.0
// The simulator's own building blocks: event order, link timing, queues,
// marking, ECMP, and the payload ledger's ability to catch transport bugs.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "ledger.h"
#include "net.h"

using namespace sim;

namespace {

struct Recorder {
  std::vector<uint64_t> seen;
  void on(uint64_t a) { seen.push_back(a); }
};

// A node that keeps what arrives and when.
class Sink : public Node {
 public:
  explicit Sink(EventQueue &eq, PacketPool &pool) : eq_(eq), pool_(pool) {}
  void receive(Packet *p, int) override {
    at.push_back(eq_.now());
    uids.push_back(p->uid);
    ce.push_back(p->ce);
    pool_.put(p);
  }
  std::vector<Time> at;
  std::vector<uint64_t> uids;
  std::vector<bool> ce;

 private:
  EventQueue &eq_;
  PacketPool &pool_;
};

Packet *make(PacketPool &pool, uint32_t wire, bool ect = false) {
  Packet *p = pool.get();
  p->wire = wire;
  p->ect = ect;
  return p;
}

}  // namespace

TEST(EventQueue, SameTimeEventsRunInSchedulingOrder) {
  EventQueue eq;
  Recorder r;
  for (uint64_t i = 0; i < 50; i++) eq.call<&Recorder::on>(100 - (i % 3), &r, i);
  eq.run_until(1000);
  ASSERT_EQ(r.seen.size(), 50u);
  // Sorted by time (98, 99, 100), ties by insertion order.
  std::vector<uint64_t> want;
  for (uint64_t k : {2, 1, 0})
    for (uint64_t i = 0; i < 50; i++)
      if (i % 3 == k) want.push_back(i);
  EXPECT_EQ(r.seen, want);
}

TEST(EventQueue, RunUntilLeavesLaterEventsPending) {
  EventQueue eq;
  Recorder r;
  eq.call<&Recorder::on>(10, &r, 1);
  eq.call<&Recorder::on>(20, &r, 2);
  eq.run_until(15);
  EXPECT_EQ(r.seen, std::vector<uint64_t>{1});
  EXPECT_EQ(eq.now(), 15u);
  EXPECT_EQ(eq.pending(), 1u);
}

struct TimerOwner {
  int fired = 0;
  void tick() { fired++; }
};

TEST(EventQueue, TimerFiresOncePerArmAndHonoursEarlierDeadline) {
  EventQueue eq;
  TimerOwner o;
  Timer<&TimerOwner::tick, TimerOwner> t(&o);
  t.arm(eq, 100);
  t.arm(eq, 50);   // earlier: replaces
  t.arm(eq, 200);  // later: ignored while 50 is pending
  eq.run_until(60);
  EXPECT_EQ(o.fired, 1);
  eq.run_until(1000);
  EXPECT_EQ(o.fired, 1);  // the stale events at 100 and 200 do nothing
  t.arm(eq, 1500);
  t.cancel();
  eq.run_until(2000);
  EXPECT_EQ(o.fired, 1);
}

TEST(Port, SerialisationAndPropagationTiming) {
  EventQueue eq;
  PacketPool pool;
  LinkCfg c;
  c.gbps = 100;
  c.delay = 1000;
  Port port(eq, pool, c, 1, "p");
  Sink sink(eq, pool);
  port.connect(&sink, 0);
  port.send(make(pool, 1250));  // 100 ns at 100 Gb/s
  port.send(make(pool, 1250));
  eq.run_until(10000);
  ASSERT_EQ(sink.at.size(), 2u);
  EXPECT_EQ(sink.at[0], 1100u);
  EXPECT_EQ(sink.at[1], 1200u);  // queued behind the first
  EXPECT_EQ(pool.live(), 0u);
}

TEST(Port, DropTailAtBufferAndCountersBalance) {
  EventQueue eq;
  PacketPool pool;
  LinkCfg c;
  c.buffer = 10000;
  Port port(eq, pool, c, 1, "p");
  Sink sink(eq, pool);
  port.connect(&sink, 0);
  for (int i = 0; i < 20; i++) port.send(make(pool, 1000));
  // The first starts serialising at once but still counts until it is sent.
  EXPECT_EQ(port.stats().enqueued, 10u);
  EXPECT_EQ(port.stats().dropped, 10u);
  eq.run_until(1000000);
  const PortStats &s = port.stats();
  EXPECT_EQ(s.arrived, 20u);
  EXPECT_EQ(s.arrived, s.enqueued + s.dropped);
  EXPECT_EQ(s.enqueued, s.sent);
  EXPECT_EQ(s.sent, s.delivered);
  EXPECT_EQ(sink.uids.size(), 10u);
  EXPECT_EQ(s.peak_bytes, 10000u);
  EXPECT_EQ(pool.live(), 0u);
}

TEST(Port, StepEcnMarksOnlyEctPacketsAboveThreshold) {
  EventQueue eq;
  PacketPool pool;
  LinkCfg c;
  c.ecn = EcnCfg{3000, 3000, 1.0};
  Port port(eq, pool, c, 1, "p");
  Sink sink(eq, pool);
  port.connect(&sink, 0);
  for (int i = 0; i < 6; i++) port.send(make(pool, 1000, true));
  port.send(make(pool, 1000, false));
  eq.run_until(1000000);
  // Queue before each enqueue: 0,1000,...,5000 -> marked when > 3000.
  EXPECT_EQ(sink.ce, (std::vector<bool>{false, false, false, false, true, true, false}));
  EXPECT_EQ(port.stats().marked, 2u);
}

TEST(Port, BlackholeAndLossSwallowButCount) {
  EventQueue eq;
  PacketPool pool;
  LinkCfg c;
  Port port(eq, pool, c, 7, "p");
  Sink sink(eq, pool);
  port.connect(&sink, 0);
  port.loss = 0.5;
  for (int i = 0; i < 1000; i++) port.send(make(pool, 100));
  eq.run_until(kMs);
  EXPECT_GT(port.stats().lost, 400u);
  EXPECT_LT(port.stats().lost, 600u);
  port.loss = 0;
  port.blackhole = true;
  for (int i = 0; i < 10; i++) port.send(make(pool, 100));
  eq.run_until(2 * kMs);
  const PortStats &s = port.stats();
  EXPECT_EQ(s.blackholed, 10u);
  EXPECT_EQ(s.sent, s.lost + s.blackholed + s.delivered);
  EXPECT_EQ(sink.uids.size(), s.delivered);
  EXPECT_EQ(pool.live(), 0u);
}

TEST(Port, PerPacketCostAndStallsDelayButKeepOrder) {
  EventQueue eq;
  PacketPool pool;
  LinkCfg c;
  c.gbps = 100;
  c.delay = 1000;
  Port port(eq, pool, c, 5, "p");
  Sink sink(eq, pool);
  port.connect(&sink, 0);
  port.per_pkt = 400;  // a CPU's 400 ns per packet on top of 100 ns on the wire
  port.send(make(pool, 1250));
  port.send(make(pool, 1250));
  eq.run_until(10000);
  ASSERT_EQ(sink.at.size(), 2u);
  EXPECT_EQ(sink.at[0], 1500u);
  EXPECT_EQ(sink.at[1], 2000u);

  // Stalls: nothing arrives before it would without them, some arrive later,
  // all in the order sent.
  port.per_pkt = 0;
  port.stall_gap = 2 * kUs;
  port.stall_max = 5 * kUs;
  sink.at.clear();
  sink.uids.clear();
  std::vector<uint64_t> sent;
  Time t0 = eq.now();
  for (int i = 0; i < 500; i++) {  // 625 KB: within the buffer
    Packet *p = make(pool, 1250);
    sent.push_back(p->uid);
    port.send(p);
  }
  eq.run_until(t0 + kMs);
  ASSERT_EQ(sink.uids.size(), 500u);
  EXPECT_EQ(sink.uids, sent);
  EXPECT_TRUE(std::is_sorted(sink.at.begin(), sink.at.end()));
  uint32_t late = 0;
  for (size_t i = 0; i < sink.at.size(); i++) {
    Time unstalled = t0 + 100 * (i + 1) + 1000;
    EXPECT_GE(sink.at[i], unstalled);
    late += sink.at[i] > unstalled;
  }
  EXPECT_GT(late, 100u);
  EXPECT_EQ(pool.live(), 0u);
}

TEST(Port, DuplicationAndJitterReorderButConserve) {
  EventQueue eq;
  PacketPool pool;
  LinkCfg c;
  Port port(eq, pool, c, 3, "p");
  Sink sink(eq, pool);
  port.connect(&sink, 0);
  port.dup = 0.2;
  port.jitter = 5 * kUs;
  std::vector<uint64_t> sent;
  for (int i = 0; i < 500; i++) {
    Packet *p = make(pool, 1000);
    sent.push_back(p->uid);
    port.send(p);
  }
  eq.run_until(kMs);
  const PortStats &s = port.stats();
  EXPECT_GT(s.duplicated, 50u);
  EXPECT_EQ(s.delivered, s.sent + s.duplicated);
  EXPECT_EQ(sink.uids.size(), 500u + s.duplicated);
  EXPECT_FALSE(std::is_sorted(sink.at.begin(), sink.at.end()) &&
               std::equal(sent.begin(), sent.end(), sink.uids.begin()));
  EXPECT_EQ(pool.live(), 0u);
}

TEST(Ecmp, SameTupleSamePathAndSourcePortsSpread) {
  EventQueue eq;
  FabricCfg fc;
  fc.leaves = 2;
  fc.spines = 4;
  Fabric f(eq, fc);
  Packet k;
  k.src_ip = ip_of(0, 0);
  k.dst_ip = ip_of(1, 0);
  k.dport = 61791;
  std::vector<int> per_spine(4, 0);
  for (uint32_t sp = 0xC000; sp < 0xC000 + 256; sp++) {
    k.sport = uint16_t(sp);
    uint32_t s = f.spine_for(k);
    ASSERT_EQ(s, f.spine_for(k));
    ASSERT_LT(s, 4u);
    per_spine[s]++;
  }
  for (int n : per_spine) {
    EXPECT_GT(n, 40);  // 64 expected each
    EXPECT_LT(n, 90);
  }
}

TEST(Fabric, PacketCrossesLeafSpineLeafToItsHost) {
  EventQueue eq;
  FabricCfg fc;
  fc.leaves = 2;
  fc.hosts_per_leaf = 2;
  fc.spines = 2;
  fc.planes = 2;
  Fabric f(eq, fc);
  struct Catch : Endpoint {
    std::vector<uint32_t> got;
    PacketPool *pool;
    void receive(Packet *p) override {
      got.push_back(p->src_ip);
      pool->put(p);
    }
  } ep;
  ep.pool = &f.pool;
  f.host(3).mroce = &ep;
  Packet *p = f.pool.get();
  p->src_ip = ip_of(0, 1);
  p->dst_ip = ip_of(3, 1);
  p->wire = 1000;
  f.host(0).nic(1).send(p);
  eq.run_until(kMs);
  EXPECT_EQ(ep.got, std::vector<uint32_t>{ip_of(0, 1)});
  EXPECT_EQ(eq.now(), kMs);
  // Exactly one packet crossed one uplink and one downlink of plane 1.
  uint64_t up = 0, down = 0;
  for (uint32_t s = 0; s < 2; s++) {
    up += f.uplink(1, 0, s).stats().delivered;
    down += f.downlink(1, s, 1).stats().delivered;
    EXPECT_EQ(f.uplink(0, 0, s).stats().arrived, 0u);
  }
  EXPECT_EQ(up, 1u);
  EXPECT_EQ(down, 1u);
  EXPECT_EQ(f.to_host(1, 3).stats().delivered, 1u);
}

TEST(Ledger, AcceptsExactlyOnceInOrder) {
  Ledger l(1, true);
  uint32_t a = l.post(10, 0), b = l.post(6, 0);
  std::vector<uint8_t> buf(10);
  l.fill(a, 5, 5, buf.data());
  l.place(a, 5, 5, buf.data(), 1);
  l.fill(a, 0, 5, buf.data());
  l.place(a, 0, 5, buf.data(), 2);
  l.rx_complete(a, 3);
  l.tx_complete(a, 4);
  l.fill(b, 0, 6, buf.data());
  l.place(b, 0, 6, buf.data(), 5);
  l.rx_complete(b, 6);
  l.tx_complete(b, 7);
  EXPECT_EQ(l.errors().total(), 0u) << l.errors().str();
  EXPECT_TRUE(l.all_done());
  EXPECT_EQ(l.placed_bytes(), 16u);
}

TEST(Ledger, CatchesDuplicateOverlappingAndOutOfRangePlacement) {
  Ledger l(1, false);
  uint32_t a = l.post(100, 0);
  l.place(a, 0, 50, nullptr, 0);
  l.place(a, 40, 20, nullptr, 0);  // overlaps 10 bytes
  EXPECT_EQ(l.errors().dup_bytes, 10u);
  l.place(a, 90, 20, nullptr, 0);  // beyond the message
  l.place(a + 5, 0, 1, nullptr, 0);  // no such message
  EXPECT_EQ(l.errors().bad_place, 2u);
}

TEST(Ledger, CatchesWrongBytesOrderAndEarlyCompletion) {
  Ledger l(1, true);
  uint32_t a = l.post(8, 0), b = l.post(8, 0);
  std::vector<uint8_t> buf(8);
  l.fill(a, 0, 8, buf.data());
  buf[3] ^= 1;
  l.place(a, 0, 8, buf.data(), 0);
  EXPECT_EQ(l.errors().content, 1u);
  l.rx_complete(b, 0);  // b before a
  EXPECT_EQ(l.errors().rx_order, 1u);
  l.tx_complete(a, 0);
  l.tx_complete(b, 0);  // b was never placed
  EXPECT_EQ(l.errors().tx_early, 1u);
  EXPECT_FALSE(l.all_done());
}

TEST(Meter, BinsAndRates) {
  Meter m(10);
  m.add(0, 100);
  m.add(15, 100);
  m.add(25, 100);
  EXPECT_EQ(m.bytes(0, 20), 200u);
  EXPECT_EQ(m.bytes(10, 30), 200u);
  EXPECT_DOUBLE_EQ(m.gbps(0, 30), 300 * 8 / 30.0);
  EXPECT_EQ(m.total(), 300u);
}

TEST(Jain, EqualIsOneAndSkewIsLess) {
  EXPECT_DOUBLE_EQ(jain({1, 1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(jain({1, 0, 0, 0}), 0.25);
}
