// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

extern "C" {
#include "mroce_rtt.h"
}

namespace {

class Rtt : public ::testing::Test {
 protected:
  void SetUp() override {
    mroce_params_default(&p);
    mroce_rtt_init(&r);
  }
  mroce_params p;
  mroce_rtt r;
};

TEST_F(Rtt, FirstSampleSetsSrttAndHalfVariance) {
  mroce_rtt_sample(&r, 80000);
  EXPECT_EQ(r.srtt, 80000u);
  EXPECT_EQ(r.rttvar, 40000u);
  EXPECT_EQ(r.min_rtt, 80000u);
}

TEST_F(Rtt, EwmaFollowsRfc6298Gains) {
  mroce_rtt_sample(&r, 80000);
  mroce_rtt_sample(&r, 160000);
  EXPECT_EQ(r.rttvar, (40000u * 3 + 80000) / 4);
  EXPECT_EQ(r.srtt, (80000u * 7 + 160000) / 8);
  EXPECT_EQ(r.min_rtt, 80000u);
  EXPECT_EQ(r.latest, 160000u);
}

TEST_F(Rtt, RtoUsesInitialValueWithoutSamples) {
  EXPECT_EQ(mroce_rtt_rto(&r, &p, 0), p.init_rto);
  EXPECT_EQ(mroce_rtt_rto(&r, &p, 1), 2 * p.init_rto);
}

TEST_F(Rtt, RtoIsClampedToMinAndMax) {
  mroce_rtt_sample(&r, 10000);  // 10 us: srtt + 4 rttvar = 30 us < min_rto
  EXPECT_EQ(mroce_rtt_rto(&r, &p, 0), p.min_rto);
  EXPECT_EQ(mroce_rtt_rto(&r, &p, 3), 8 * p.min_rto);
  EXPECT_EQ(mroce_rtt_rto(&r, &p, 40), p.max_rto);  // huge backoff saturates
}

TEST_F(Rtt, RtoAboveMinimumIsSrttPlusFourVar) {
  mroce_rtt_sample(&r, 2000000);  // 2 ms
  EXPECT_EQ(mroce_rtt_rto(&r, &p, 0), 2000000u + 4 * 1000000u);
}

TEST_F(Rtt, PtoIsTwoSrttPlusAckDelay) {
  EXPECT_EQ(mroce_rtt_pto(&r, &p), p.init_rto / 2);
  mroce_rtt_sample(&r, 500000);
  EXPECT_EQ(mroce_rtt_pto(&r, &p), 2 * 500000u + p.ack_delay);
  mroce_rtt_init(&r);
  mroce_rtt_sample(&r, 1000);
  EXPECT_EQ(mroce_rtt_pto(&r, &p), p.min_pto);
}

TEST_F(Rtt, ZeroSampleDoesNotStickAtZero) {
  mroce_rtt_sample(&r, 0);
  EXPECT_GT(r.srtt, 0u);
}

TEST_F(Rtt, HugeSamplesDoNotOverflow) {
  mroce_rtt_sample(&r, 0xffffffffu);
  mroce_rtt_sample(&r, 0xffffffffu);
  EXPECT_EQ(r.srtt, 0xffffffffu);
  EXPECT_EQ(mroce_rtt_rto(&r, &p, 0), p.max_rto);
}

}  // namespace
