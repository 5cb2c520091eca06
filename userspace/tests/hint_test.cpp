// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <numeric>

#include "test_util.h"

extern "C" {
#include "mroce_hint.h"
#include "mroce_params.h"
}

namespace {

mroce_hint_cfg cfg(uint32_t cap) {
  mroce_hint_cfg c;
  mroce_hint_cfg_default(&c, cap);
  return c;
}

TEST(Hint, EqualDemandsShareEqually) {
  auto c = cfg(100000);
  std::vector<mroce_hint_entry> e(8, mroce_hint_entry{100000, 0, 1, 0, 0});
  uint32_t ceff = mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0);
  EXPECT_EQ(ceff, 100000u * c.util / MROCE_Q10);
  for (auto &x : e) EXPECT_NEAR(x.hint, ceff / 8, 2);
}

TEST(Hint, SmallDemandIsSatisfiedAndTheRestSplitsTheRemainder) {
  auto c = cfg(10000);
  std::vector<mroce_hint_entry> e = {{1000, 0, 1, 0, 0}, {20000, 0, 1, 0, 0}, {20000, 0, 1, 0, 0}};
  uint32_t ceff = mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0);
  EXPECT_NEAR(ceff, 9500, 10);  // 0.95 of capacity
  // Water level: (C - 1000) / 2 for the two big ones.
  EXPECT_NEAR(e[1].hint, (ceff - 1000) / 2, 1);
  EXPECT_NEAR(e[2].hint, (ceff - 1000) / 2, 1);
  // The small one's cap is the level too (it may grow into it).
  EXPECT_EQ(e[0].hint, e[1].hint);
}

TEST(Hint, WeightsScaleShares) {
  auto c = cfg(9000);
  std::vector<mroce_hint_entry> e = {{100000, 0, 1, 0, 0}, {100000, 0, 2, 0, 0}};
  uint32_t ceff = mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0);
  EXPECT_NEAR(e[0].hint, ceff / 3, 3);
  EXPECT_NEAR(e[1].hint, 2 * ceff / 3, 3);
}

TEST(Hint, UnderloadedReceiverDoesNotCap) {
  auto c = cfg(100000);
  std::vector<mroce_hint_entry> e = {{1000, 0, 1, 0, 0}, {2000, 0, 1, 0, 0}};
  uint32_t ceff = mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0);
  EXPECT_EQ(e[0].hint, ceff);
  EXPECT_EQ(e[1].hint, ceff);
}

TEST(Hint, IdleConnectionsGetTheirShareAmongAllConnections) {
  auto c = cfg(10000);
  // Idle ones may all start at once: each may send C / (all of them).
  std::vector<mroce_hint_entry> e = {
      {50000, 0, 1, 0, 0}, {50000, 0, 1, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, 1, 0, 0}};
  uint32_t ceff = mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0);
  EXPECT_EQ(e[2].hint, ceff / 4);
  EXPECT_EQ(e[3].hint, ceff / 4);
  EXPECT_EQ(e[0].hint, ceff / 2);  // the active ones share what is in use
}

TEST(Hint, NewcomerIsGrantedItsShareAmongAllConnections) {
  auto c = cfg(10000);
  uint32_t ceff = 10000u * c.util / MROCE_Q10;
  EXPECT_EQ(mroce_hint_newcomer(&c, 1), ceff);
  EXPECT_EQ(mroce_hint_newcomer(&c, 128), ceff / 128);
  EXPECT_EQ(mroce_hint_newcomer(&c, 0), ceff);  // no connection yet: itself
  auto tiny = cfg(1);
  EXPECT_EQ(mroce_hint_newcomer(&tiny, 1000), 1u);  // never 0 ("no hint")
}

TEST(Hint, QueueingShrinksCapacityDownToHalf) {
  auto c = cfg(10000);
  uint32_t full = 10000u * c.util / MROCE_Q10;
  std::vector<mroce_hint_entry> e(4, mroce_hint_entry{50000, c.q_target, 1, 0, 0});
  EXPECT_EQ(mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0), full);  // at target: no drain
  for (auto &x : e) x.qdelay = c.q_target + c.rtt_min;
  uint32_t drained = mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0);
  EXPECT_LT(drained, full);
  EXPECT_GT(drained, full / 2);
  for (auto &x : e) x.qdelay = 100 * c.rtt_min;
  EXPECT_EQ(mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0), full / 2);
}

TEST(Hint, TheLeastQueueingOfAnyConnectionSetsTheDrain) {
  auto c = cfg(10000);
  uint32_t full = 10000u * c.util / MROCE_Q10;
  uint32_t deep = 100 * c.rtt_min;
  // One connection's packets met no queue in the period: the others saw
  // burst queueing, not a standing queue at our port.
  std::vector<mroce_hint_entry> e(4, mroce_hint_entry{50000, deep, 1, 0, 0});
  e[2].qdelay = 0;
  EXPECT_EQ(mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0), full);
  // No packet this period (U32_MAX) is no evidence either way; idle
  // connections do not count.
  e[2].qdelay = UINT32_MAX;
  e[3].demand = 0;
  e[3].qdelay = 0;
  EXPECT_EQ(mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0), full / 2);
  for (auto &x : e) x.qdelay = UINT32_MAX;
  EXPECT_EQ(mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0), full);
}

TEST(Hint, DemandCombinesRateAndBacklog) {
  // 1 MB in 1 ms = 8000 Mbit/s; 12500 B backlog over 100 us = 1000 Mbit/s.
  EXPECT_EQ(mroce_hint_demand(1000000, 1000000, 12500, 100000, 100000), 9000u);
  EXPECT_EQ(mroce_hint_demand(1000000, 1000000, 12500, 100000, 5000), 5000u);
  EXPECT_EQ(mroce_hint_demand(0, 0, 0, 0, 5000), 0u);
}

// Max-min fairness: the hints of active entries never exceed capacity in
// sum (counting each at min(hint, demand)), no unsatisfied entry gets less
// than a satisfied one, and the level is tight.
TEST(HintProperty, WaterFillIsMaxMinFair) {
  mt::Rng rng(mt::test_seed(0x417));
  for (int iter = 0; iter < 2000; iter++) {
    auto c = cfg(static_cast<uint32_t>(rng.range(1000, 400000)));
    size_t n = rng.range(1, 200);
    std::vector<mroce_hint_entry> e(n);
    for (auto &x : e) x = {static_cast<uint32_t>(rng.chance(0.1) ? 0 : rng.range(1, 100000)), 0, 1, 0, 0};
    uint32_t ceff = mroce_hint_compute(&c, nullptr, e.data(), e.size(), 0);
    uint64_t used = 0;
    uint32_t level = 0;
    bool any_capped = false;
    for (auto &x : e) {
      if (!x.demand) continue;
      used += std::min(x.hint, x.demand);
      level = std::max(level, x.hint);
      if (x.hint < x.demand) any_capped = true;
    }
    ASSERT_LE(used, ceff);
    for (auto &x : e) {
      if (x.demand) {
        ASSERT_EQ(x.hint, level);  // equal weights: one level
      }
    }
    if (any_capped) {
      // Raising the level by one would exceed capacity (tight bisection).
      uint64_t more = 0;
      for (auto &x : e)
        if (x.demand) more += std::min<uint64_t>(x.demand, level + 1);
      ASSERT_GT(more, ceff);
    }
  }
}

// ---------------------------------------------------------------- drain cap
// A receiver that processes far less than its configured capacity (a VM:
// 0.3 of 10 Gbit/s) under a standing queue: the grant falls to about what
// arrives, i.e. what it drains, not to half the capacity.

constexpr uint64_t kPeriod = 100000;  // ns, the kernel's hint period

struct Drain {
  mroce_hint_cfg c = cfg(10000);
  mroce_hint_state st{};
  uint32_t full = 10000u * c.util / MROCE_Q10;
  // One pass; every entry reports @qd and an equal part of @arrival.
  uint32_t pass(std::vector<mroce_hint_entry> &e, uint32_t qd, uint32_t arrival) {
    for (auto &x : e) {
      x.qdelay = qd;
      x.arrival = arrival / uint32_t(e.size());
    }
    return mroce_hint_compute(&c, &st, e.data(), uint32_t(e.size()), kPeriod);
  }
};

TEST(HintDrain, StandingQueueCutsTheGrantToAboutTheDrainRate) {
  Drain d;
  std::vector<mroce_hint_entry> e(1, mroce_hint_entry{5000, 0, 1, 0, 0});
  const uint32_t deep = 20000000;  // 20 ms of queue
  // One queued period is not enough evidence (receivers take bursts).
  EXPECT_EQ(d.pass(e, deep, 300), d.full / 2);
  uint32_t ceff = d.pass(e, deep, 300);
  EXPECT_LE(ceff, 300u);
  EXPECT_GE(ceff, 300u * 3 / 4);  // at most a quarter below the drain
  EXPECT_EQ(e[0].hint, ceff);
  // Steady: the same queue and drain keep the same grant (no ratchet).
  for (int i = 0; i < 50; i++) EXPECT_EQ(d.pass(e, deep, 300), ceff);
}

TEST(HintDrain, TheDrainIsMeasuredOverTheQueueEpisodeNotOnePeriod) {
  Drain d;
  std::vector<mroce_hint_entry> e(1, mroce_hint_entry{5000, 0, 1, 0, 0});
  const uint32_t deep = 20000000;
  // Bursts: 600 Mbit/s in one period, nothing in the next (mean 300).
  uint32_t ceff = 0;
  for (int i = 0; i < 40; i++) ceff = d.pass(e, deep, i % 2 ? 0 : 600);
  EXPECT_NEAR(ceff, 300 * 3 / 4, 300 / 8);
}

TEST(HintDrain, PeriodsWithoutArrivalsCountAsTimeNotAsAnEmptyQueue) {
  // A receiver that runs in bursts (its CPU shared): 600 Mbit/s while it
  // runs, one period in three; the periods it did not run say nothing of
  // the queue, but it drained nothing then. The drain rate is 200.
  Drain d;
  std::vector<mroce_hint_entry> e(1, mroce_hint_entry{5000, 0, 1, 0, 0});
  uint32_t ceff = 0;
  for (int i = 0; i < 60; i++)
    ceff = i % 3 ? d.pass(e, UINT32_MAX, 0) : d.pass(e, 20000000, 600);
  EXPECT_NEAR(ceff, 200 * 3 / 4, 200 / 8);
  EXPECT_NE(d.st.cap, 0u);
}

TEST(HintDrain, GrantGrowsBackGraduallyOnceTheQueueDrains) {
  Drain d;
  std::vector<mroce_hint_entry> e(1, mroce_hint_entry{5000, 0, 1, 0, 0});
  d.pass(e, 20000000, 300);
  uint32_t prev = d.pass(e, 20000000, 300);
  ASSERT_LT(prev, 300u);
  // One period without queue is not the end of it (a packet that met
  // none): the cap holds.
  EXPECT_EQ(d.pass(e, 0, 300), prev);
  int passes = 0;
  for (; passes < 100 && d.st.cap; passes++) {
    uint32_t ceff = d.pass(e, 0, 300);  // no queue any more
    EXPECT_GT(ceff, prev);
    // An eighth per base RTT at most: no jump back to the capacity.
    EXPECT_LE(ceff, prev + prev / 8 + 1);
    prev = ceff;
  }
  EXPECT_EQ(d.st.cap, 0u);  // back to the configured capacity
  EXPECT_LT(passes, 40);
  EXPECT_EQ(d.pass(e, 0, 300), d.full);
}

TEST(HintDrain, NoQueueLeavesTheCapacityBasedGrantUnchanged) {
  Drain d;
  std::vector<mroce_hint_entry> e(2, mroce_hint_entry{4000, 0, 1, 0, 0});
  std::vector<mroce_hint_entry> ref = e;
  // An application-limited sender: little arrives, below target queueing.
  for (int i = 0; i < 100; i++) {
    uint32_t ceff = d.pass(e, d.c.q_target, 200);
    for (auto &x : ref) x.qdelay = d.c.q_target;
    EXPECT_EQ(ceff, mroce_hint_compute(&d.c, nullptr, ref.data(), 2, kPeriod));
    EXPECT_EQ(ceff, d.full);
    EXPECT_EQ(e[0].hint, ref[0].hint);
    EXPECT_EQ(d.st.cap, 0u);
  }
}

TEST(HintDrain, IdleForgetsWhatWasLearnt) {
  Drain d;
  std::vector<mroce_hint_entry> e(1, mroce_hint_entry{5000, 0, 1, 0, 0});
  d.pass(e, 20000000, 300);
  d.pass(e, 20000000, 300);
  ASSERT_NE(d.st.cap, 0u);
  e[0].demand = 0;  // idle: the next busy spell starts from the capacity
  EXPECT_EQ(d.pass(e, UINT32_MAX, 0), d.full);
  EXPECT_EQ(d.st.cap, 0u);
  EXPECT_EQ(d.st.q_ns, 0u);
}

TEST(HintDrain, TheCutNeverGoesBelowTheBackstop) {
  Drain d;
  std::vector<mroce_hint_entry> e(1, mroce_hint_entry{5000, 0, 1, 0, 0});
  // A queueing signal with next to nothing arriving (a drifting clock):
  // the measured cap stops at 1/64 of the capacity.
  uint32_t ceff = 0;
  for (int i = 0; i < 20; i++) ceff = d.pass(e, 20000000, 1);
  EXPECT_EQ(ceff, d.full / 64);
}

TEST(HintDrain, IncastSharesTheDrainRateEqually) {
  Drain d;
  std::vector<mroce_hint_entry> e(64, mroce_hint_entry{1000, 0, 1, 0, 0});
  uint32_t ceff = 0;
  for (int i = 0; i < 5; i++) ceff = d.pass(e, 20000000, 640);
  EXPECT_NEAR(ceff, 640 * 3 / 4, 640 / 16);
  for (auto &x : e) EXPECT_NEAR(x.hint, ceff / 64, 1);
}

TEST(HintDrain, AReceiverDrainingAtCapacityGetsTheCapacityBasedGrants) {
  // An incast at a port that really drains at the capacity (the
  // simulator's incast): the measured cap does not bind, every pass gives
  // the hints of the capacity-based cut.
  Drain d;
  std::vector<mroce_hint_entry> e(32, mroce_hint_entry{1000, 0, 1, 0, 0});
  for (uint32_t qd : {0u, 20000u, 100000u, 400000u, 100000u, 30000u, 0u}) {
    std::vector<mroce_hint_entry> ref = e;
    for (auto &x : ref) x.qdelay = qd;
    uint32_t want = mroce_hint_compute(&d.c, nullptr, ref.data(), 32, kPeriod);
    EXPECT_EQ(d.pass(e, qd, 9800), want) << "qd " << qd;
    for (size_t i = 0; i < e.size(); i++) EXPECT_EQ(e[i].hint, ref[i].hint);
  }
}

TEST(HintDrain, MbpsOfBytesOverTime) {
  EXPECT_EQ(mroce_hint_mbps(12500, 100000), 1000u);  // 12.5 kB in 100 us
  EXPECT_EQ(mroce_hint_mbps(12500, 0), 0u);
  EXPECT_EQ(mroce_hint_mbps(~0ull / 8000, 1), UINT32_MAX);
}

}  // namespace
