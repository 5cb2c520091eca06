// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

extern "C" {
#include "mroce_health.h"
}

namespace {

class Health : public ::testing::Test {
 protected:
  void SetUp() override {
    mroce_params_default(&p);
    mroce_health_init(&h, &p);
  }
  mroce_health_action ev(mroce_health_event e, uint64_t now = 0) {
    return mroce_health_step(&h, e, &p, now);
  }
  mroce_params p;
  mroce_health h;
};

TEST_F(Health, RtoOnActivePathRekeysIntoProbing) {
  EXPECT_EQ(ev(MROCE_HEV_RTO), MROCE_HACT_REKEY);
  EXPECT_EQ(h.state, MROCE_PATH_PROBING);
}

TEST_F(Health, AnsweredProbeMakesPathActiveAgain) {
  ev(MROCE_HEV_RTO);
  EXPECT_EQ(ev(MROCE_HEV_PROGRESS), MROCE_HACT_NONE);
  EXPECT_EQ(h.state, MROCE_PATH_ACTIVE);
  EXPECT_EQ(h.probe_fails, 0);
}

// PROGRESS resets the RTO backoff in every state, through the one inline
// rule the ACK path calls too; only a PROBING path needs the step after it.
TEST_F(Health, ProgressResetsRtoBackoffInEveryState) {
  const mroce_path_state states[] = {MROCE_PATH_ACTIVE, MROCE_PATH_SUSPECT,
                                     MROCE_PATH_PROBING, MROCE_PATH_FAILED};
  for (mroce_path_state s : states) {
    SCOPED_TRACE(mroce_path_state_name[s]);
    mroce_health_init(&h, &p);
    h.state = s;
    h.rto_backoff = 3;
    EXPECT_EQ(mroce_health_progress_quiet(&h), s != MROCE_PATH_PROBING);
    EXPECT_EQ(h.rto_backoff, 0);
    EXPECT_EQ(h.state, s);  // the helper never moves the state

    h.rto_backoff = 3;
    EXPECT_EQ(ev(MROCE_HEV_PROGRESS), MROCE_HACT_NONE);
    EXPECT_EQ(h.rto_backoff, 0);
    EXPECT_EQ(h.state, s == MROCE_PATH_PROBING ? MROCE_PATH_ACTIVE : s);
  }
}

TEST_F(Health, UnansweredProbesEndInFailedWithDoublingHoldoff) {
  ev(MROCE_HEV_RTO);  // ACTIVE -> PROBING
  for (int i = 1; i < p.probe_fails; i++) {
    EXPECT_EQ(ev(MROCE_HEV_RTO), MROCE_HACT_REKEY) << i;
    EXPECT_EQ(h.state, MROCE_PATH_PROBING);
  }
  EXPECT_EQ(ev(MROCE_HEV_RTO, 1000), MROCE_HACT_NONE);
  EXPECT_EQ(h.state, MROCE_PATH_FAILED);
  EXPECT_EQ(h.holdoff_end, 1000 + p.holdoff_min);
  // Hold-off over: one more attempt; failing it doubles the hold-off.
  EXPECT_EQ(ev(MROCE_HEV_HOLDOFF_END), MROCE_HACT_REKEY);
  EXPECT_EQ(h.state, MROCE_PATH_PROBING);
  EXPECT_EQ(ev(MROCE_HEV_RTO, 5000), MROCE_HACT_NONE);
  EXPECT_EQ(h.state, MROCE_PATH_FAILED);
  EXPECT_EQ(h.holdoff_end, 5000 + 2 * p.holdoff_min);
}

TEST_F(Health, HoldoffSaturatesAtMaximum) {
  ev(MROCE_HEV_RTO);
  for (int i = 0; i < 40; i++) {
    while (h.state != MROCE_PATH_FAILED) ev(MROCE_HEV_RTO);
    ev(MROCE_HEV_HOLDOFF_END);
  }
  EXPECT_EQ(h.holdoff, p.holdoff_max);
}

TEST_F(Health, BadPathDrainsBeforeRekey) {
  EXPECT_EQ(ev(MROCE_HEV_BAD), MROCE_HACT_NONE);
  EXPECT_EQ(h.state, MROCE_PATH_SUSPECT);
  EXPECT_EQ(ev(MROCE_HEV_PROGRESS), MROCE_HACT_NONE);  // still draining
  EXPECT_EQ(h.state, MROCE_PATH_SUSPECT);
  EXPECT_EQ(ev(MROCE_HEV_DRAINED), MROCE_HACT_REKEY);
  EXPECT_EQ(h.state, MROCE_PATH_PROBING);
}

TEST_F(Health, DrainedOnlyMattersWhenSuspect) {
  EXPECT_EQ(ev(MROCE_HEV_DRAINED), MROCE_HACT_NONE);
  EXPECT_EQ(h.state, MROCE_PATH_ACTIVE);
}

TEST_F(Health, StaleGenerationRekeysUnlessFailed) {
  EXPECT_EQ(ev(MROCE_HEV_STALE), MROCE_HACT_REKEY);
  h.state = MROCE_PATH_FAILED;
  EXPECT_EQ(ev(MROCE_HEV_STALE), MROCE_HACT_NONE);
}

TEST_F(Health, LossEwmaConvergesBothWays) {
  mroce_health_outcome(&h, 0, 200);
  EXPECT_EQ(h.loss_ewma, MROCE_Q10);
  mroce_health_outcome(&h, 500, 0);
  EXPECT_EQ(h.loss_ewma, 0);
  mroce_health_outcome(&h, 0, 1);
  EXPECT_EQ(h.loss_ewma, (MROCE_Q10 + 15) / 16);
}

TEST_F(Health, UniformLossIsNeverBad) {
  h.loss_ewma = 300;  // 29 %, but so are the siblings
  EXPECT_FALSE(mroce_health_is_bad(&h, &p, 0, 0, 280));
}

TEST_F(Health, LossFarAboveSiblingsIsBad) {
  h.loss_ewma = 400;
  EXPECT_TRUE(mroce_health_is_bad(&h, &p, 0, 0, 20));
  h.loss_ewma = 200;  // below the absolute bar
  EXPECT_FALSE(mroce_health_is_bad(&h, &p, 0, 0, 0));
}

TEST_F(Health, HighScoreMustPersistForRekeyRounds) {
  uint32_t hot = p.rekey_score + 100;
  for (int i = 1; i < p.rekey_rounds; i++) EXPECT_FALSE(mroce_health_is_bad(&h, &p, hot, 0, 0));
  EXPECT_TRUE(mroce_health_is_bad(&h, &p, hot, 0, 0));
  // One good round resets the count.
  mroce_health_init(&h, &p);
  mroce_health_is_bad(&h, &p, hot, 0, 0);
  mroce_health_is_bad(&h, &p, 0, 0, 0);
  for (int i = 1; i < p.rekey_rounds; i++) EXPECT_FALSE(mroce_health_is_bad(&h, &p, hot, 0, 0));
}

// RTT jitter inflates every path: one that is worse by the margin but not
// by the factor over its siblings is never re-keyed, however long it lasts.
TEST_F(Health, ScoreWithinTheFactorOfSiblingsIsNeverBad) {
  uint32_t mean = 4 * MROCE_Q10;
  uint32_t hot = uint32_t(uint64_t(mean) * p.rekey_rel / MROCE_Q10);  // not above it
  ASSERT_GT(hot, mean + p.rekey_score);
  for (int i = 0; i < 100; i++) EXPECT_FALSE(mroce_health_is_bad(&h, &p, hot, mean, 0));
}

TEST_F(Health, ScoreBeyondMarginAndFactorPersistingIsBad) {
  uint32_t mean = 2 * MROCE_Q10;
  uint32_t hot = uint32_t(uint64_t(mean) * p.rekey_rel / MROCE_Q10) + 1;
  for (int i = 1; i < p.rekey_rounds; i++) EXPECT_FALSE(mroce_health_is_bad(&h, &p, hot, mean, 0));
  EXPECT_TRUE(mroce_health_is_bad(&h, &p, hot, mean, 0));
  // Twice a tiny mean is no hot spot: the absolute margin still applies.
  mroce_health_init(&h, &p);
  for (int i = 0; i < 10; i++) EXPECT_FALSE(mroce_health_is_bad(&h, &p, 200, 50, 0));
}

TEST_F(Health, StateNamesExist) {
  for (int s = 0; s < MROCE_PATH_NR_STATES; s++) EXPECT_NE(mroce_path_state_name[s], nullptr);
}

}  // namespace
