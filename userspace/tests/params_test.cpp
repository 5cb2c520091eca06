// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

extern "C" {
#include "mroce_params.h"
}

namespace {

TEST(Params, DefaultsAreValid) {
  mroce_params p;
  mroce_params_default(&p);
  EXPECT_TRUE(mroce_params_valid(&p));
  EXPECT_EQ(p.n_paths, 8);
  EXPECT_EQ(p.dupthresh, 1);
  // The module's rate-hint parameters (docs/install.md).
  EXPECT_EQ(p.rx_mbps, 10000u);
  EXPECT_EQ(p.hint_period, 100000u);
  EXPECT_EQ(p.hint_drain, 0);
}

TEST(Params, BrokenInvariantsAreRejected) {
  mroce_params d;
  mroce_params_default(&d);
  auto broken = [&](auto mutate) {
    mroce_params p = d;
    mutate(p);
    return !mroce_params_valid(&p);
  };
  EXPECT_TRUE(broken([](mroce_params &p) { p.n_paths = 0; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.n_paths = 65; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.min_active = 9; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.dupthresh = 0; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.min_rto = p.max_rto + 1; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.ack_every = 0; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.init_cwnd = p.max_cwnd + 1; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.min_pwnd = 0; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.ecn_gain_shift = 0; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.hint_slack = 1000; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.holdoff_min = p.holdoff_max + 1; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.hs_retries = 0; }));
  // The module's hint_period_us range (10-10000 us) and a yes/no drain cap.
  EXPECT_TRUE(broken([](mroce_params &p) { p.hint_period = 9999; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.hint_period = 10000001; }));
  EXPECT_TRUE(broken([](mroce_params &p) { p.hint_drain = 2; }));
  EXPECT_FALSE(broken([](mroce_params &p) { p.hint_period = 10000; }));
  EXPECT_FALSE(broken([](mroce_params &p) { p.hint_period = 10000000; }));
  EXPECT_FALSE(broken([](mroce_params &p) { p.rx_mbps = 0; }));
  EXPECT_FALSE(broken([](mroce_params &p) { p.n_paths = 64; }));
}

}  // namespace
