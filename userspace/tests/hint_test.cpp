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
  std::vector<mroce_hint_entry> e(8, mroce_hint_entry{100000, 0, 1, 0});
  uint32_t ceff = mroce_hint_compute(&c, e.data(), e.size());
  EXPECT_EQ(ceff, 100000u * c.util / MROCE_Q10);
  for (auto &x : e) EXPECT_NEAR(x.hint, ceff / 8, 2);
}

TEST(Hint, SmallDemandIsSatisfiedAndTheRestSplitsTheRemainder) {
  auto c = cfg(10000);
  std::vector<mroce_hint_entry> e = {{1000, 0, 1, 0}, {20000, 0, 1, 0}, {20000, 0, 1, 0}};
  uint32_t ceff = mroce_hint_compute(&c, e.data(), e.size());
  EXPECT_NEAR(ceff, 9500, 10);  // 0.95 of capacity
  // Water level: (C - 1000) / 2 for the two big ones.
  EXPECT_NEAR(e[1].hint, (ceff - 1000) / 2, 1);
  EXPECT_NEAR(e[2].hint, (ceff - 1000) / 2, 1);
  // The small one's cap is the level too (it may grow into it).
  EXPECT_EQ(e[0].hint, e[1].hint);
}

TEST(Hint, WeightsScaleShares) {
  auto c = cfg(9000);
  std::vector<mroce_hint_entry> e = {{100000, 0, 1, 0}, {100000, 0, 2, 0}};
  uint32_t ceff = mroce_hint_compute(&c, e.data(), e.size());
  EXPECT_NEAR(e[0].hint, ceff / 3, 3);
  EXPECT_NEAR(e[1].hint, 2 * ceff / 3, 3);
}

TEST(Hint, UnderloadedReceiverDoesNotCap) {
  auto c = cfg(100000);
  std::vector<mroce_hint_entry> e = {{1000, 0, 1, 0}, {2000, 0, 1, 0}};
  uint32_t ceff = mroce_hint_compute(&c, e.data(), e.size());
  EXPECT_EQ(e[0].hint, ceff);
  EXPECT_EQ(e[1].hint, ceff);
}

TEST(Hint, IdleConnectionsGetTheirShareAmongAllConnections) {
  auto c = cfg(10000);
  // Idle ones may all start at once: each may send C / (all of them).
  std::vector<mroce_hint_entry> e = {
      {50000, 0, 1, 0}, {50000, 0, 1, 0}, {0, 0, 1, 0}, {0, 0, 1, 0}};
  uint32_t ceff = mroce_hint_compute(&c, e.data(), e.size());
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
  std::vector<mroce_hint_entry> e(4, mroce_hint_entry{50000, c.q_target, 1, 0});
  EXPECT_EQ(mroce_hint_compute(&c, e.data(), e.size()), full);  // at target: no drain
  for (auto &x : e) x.qdelay = c.q_target + c.rtt_min;
  uint32_t drained = mroce_hint_compute(&c, e.data(), e.size());
  EXPECT_LT(drained, full);
  EXPECT_GT(drained, full / 2);
  for (auto &x : e) x.qdelay = 100 * c.rtt_min;
  EXPECT_EQ(mroce_hint_compute(&c, e.data(), e.size()), full / 2);
}

TEST(Hint, TheLeastQueueingOfAnyConnectionSetsTheDrain) {
  auto c = cfg(10000);
  uint32_t full = 10000u * c.util / MROCE_Q10;
  uint32_t deep = 100 * c.rtt_min;
  // One connection's packets met no queue in the period: the others saw
  // burst queueing, not a standing queue at our port.
  std::vector<mroce_hint_entry> e(4, mroce_hint_entry{50000, deep, 1, 0});
  e[2].qdelay = 0;
  EXPECT_EQ(mroce_hint_compute(&c, e.data(), e.size()), full);
  // No packet this period (U32_MAX) is no evidence either way; idle
  // connections do not count.
  e[2].qdelay = UINT32_MAX;
  e[3].demand = 0;
  e[3].qdelay = 0;
  EXPECT_EQ(mroce_hint_compute(&c, e.data(), e.size()), full / 2);
  for (auto &x : e) x.qdelay = UINT32_MAX;
  EXPECT_EQ(mroce_hint_compute(&c, e.data(), e.size()), full);
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
    for (auto &x : e) x = {static_cast<uint32_t>(rng.chance(0.1) ? 0 : rng.range(1, 100000)), 0, 1, 0};
    uint32_t ceff = mroce_hint_compute(&c, e.data(), e.size());
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

}  // namespace
