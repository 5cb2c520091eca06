// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <set>

#include "test_util.h"

extern "C" {
#include "mroce_prx.h"
#include "vectors/prx_vectors.h"
}

namespace {

TEST(SackRxVectors, EveryScenarioStepMatches) {
  for (size_t v = 0; v < MROCE_PRX_NR_VECTORS; v++) {
    const mroce_prx_vec &vec = mroce_prx_vectors[v];
    mroce_prx r;
    mroce_prx_init(&r);
    for (uint32_t i = 0; i < vec.n_steps; i++) {
      const mroce_prx_step &s = vec.s[i];
      int verdict = mroce_prx_check(&r, s.gen, s.psn, s.floor_delta);
      EXPECT_EQ(verdict, s.verdict) << vec.name << " step " << i;
      if (verdict == MROCE_PRX_NEW && s.accept) mroce_prx_accept(&r, s.psn, 0, false, 0);
      EXPECT_EQ(r.cum, s.cum) << vec.name << " step " << i;
      EXPECT_EQ(r.sack[0], s.sack0) << vec.name << " step " << i;
    }
  }
}

TEST(SackRx, DuplicateBelowCumulativeIsReported) {
  mroce_prx r;
  mroce_prx_init(&r);
  ASSERT_EQ(mroce_prx_check(&r, 0, 0, 0), MROCE_PRX_NEW);
  mroce_prx_accept(&r, 0, 0, false, 0);
  EXPECT_EQ(mroce_prx_check(&r, 0, 0, 0), MROCE_PRX_OLD);
}

TEST(SackRx, AcceptReportsOutOfOrderArrival) {
  mroce_prx r;
  mroce_prx_init(&r);
  ASSERT_EQ(mroce_prx_check(&r, 0, 0, 0), MROCE_PRX_NEW);
  EXPECT_FALSE(mroce_prx_accept(&r, 0, 0, false, 0));  // in order
  ASSERT_EQ(mroce_prx_check(&r, 0, 2, 2), MROCE_PRX_NEW);
  EXPECT_TRUE(mroce_prx_accept(&r, 2, 0, false, 0));   // leaves a hole
  ASSERT_EQ(mroce_prx_check(&r, 0, 1, 1), MROCE_PRX_NEW);
  EXPECT_TRUE(mroce_prx_accept(&r, 1, 0, false, 0));   // fills it
  ASSERT_EQ(mroce_prx_check(&r, 0, 3, 3), MROCE_PRX_NEW);
  EXPECT_FALSE(mroce_prx_accept(&r, 3, 0, false, 0));
}

TEST(SackRx, BlockCarriesEchoDelayAndCounters) {
  mroce_prx r;
  mroce_prx_init(&r);
  mroce_prx_check(&r, 3, 0, 0);
  mroce_prx_accept(&r, 0, 111, true, 1000);
  mroce_prx_check(&r, 3, 2, 2);
  mroce_prx_accept(&r, 2, 222, false, 2000);
  mroce_ack_block blk;
  mroce_prx_block(&r, 9, 2500, &blk);
  EXPECT_EQ(blk.path_id, 9);
  EXPECT_EQ(blk.path_gen, 3);
  EXPECT_EQ(blk.cum_psn, 0u);
  EXPECT_EQ(blk.sack[0], 0x2u);
  EXPECT_EQ(blk.echo_ts, 222u);  // the newest arrival, not the highest PSN
  EXPECT_EQ(blk.ack_delay, 500u);
  EXPECT_EQ(blk.ce_cnt, 1);
  EXPECT_EQ(blk.rx_cnt, 2);
}

TEST(SackRx, NewGenerationResetsCounters) {
  mroce_prx r;
  mroce_prx_init(&r);
  mroce_prx_check(&r, 0, 0, 0);
  mroce_prx_accept(&r, 0, 0, true, 0);
  ASSERT_EQ(mroce_prx_check(&r, 1, 0, 0), MROCE_PRX_NEW);
  EXPECT_EQ(r.ce_cnt, 0);
  EXPECT_EQ(r.rx_cnt, 0);
  EXPECT_EQ(r.cum, 0xffffffffu);
}

// A sender model obeying the floor rule, on a lossy reordering path: the
// receiver never marks a PSN twice and its cumulative point never passes an
// outstanding PSN that has not arrived.
TEST(SackRxProperty, FloorAndWindowInvariantsUnderLossAndReorder) {
  mt::Rng rng(mt::test_seed(0x5ac4));
  mroce_prx r;
  mroce_prx_init(&r);
  uint32_t next = 0, floor = 0;
  std::set<uint32_t> outstanding, received;
  std::vector<std::pair<uint32_t, uint8_t>> wire;  // psn, floor_delta
  for (int step = 0; step < 200000; step++) {
    if (next - floor < 255 && rng.chance(0.6)) {
      wire.push_back({next, static_cast<uint8_t>(next - floor)});
      outstanding.insert(next++);
    }
    if (!wire.empty() && rng.chance(0.7)) {
      size_t i = rng.chance(0.8) ? 0 : rng.range(0, wire.size() - 1);
      auto [psn, fd] = wire[i];
      wire.erase(wire.begin() + i);
      if (!rng.chance(0.05)) {
        int v = mroce_prx_check(&r, 0, psn, fd);
        ASSERT_NE(v, MROCE_PRX_STALE);
        if (v == MROCE_PRX_NEW) {
          ASSERT_EQ(received.count(psn), 0u) << psn;
          received.insert(psn);
          mroce_prx_accept(&r, psn, 0, false, 0);
        }
      }
    }
    // Sender gives up on the oldest outstanding PSN now and then (as if
    // declared lost), which moves its floor.
    if (!outstanding.empty() && rng.chance(0.05)) {
      uint32_t lowest = *outstanding.begin();
      outstanding.erase(lowest);
      floor = outstanding.empty() ? next : *outstanding.begin();
    }
    // Acknowledged (received) PSNs leave the outstanding set too.
    while (!outstanding.empty() && received.count(*outstanding.begin())) {
      outstanding.erase(outstanding.begin());
      floor = outstanding.empty() ? next : *outstanding.begin();
    }
    // The cumulative point never covers an outstanding, unreceived PSN.
    if (!outstanding.empty()) {
      uint32_t lo = *outstanding.begin();
      ASSERT_TRUE(received.count(lo) || (int32_t)(r.cum - lo) < 0)
          << "cum " << r.cum << " passes outstanding " << lo;
    }
  }
  EXPECT_GT(received.size(), 10000u);
}

}  // namespace
