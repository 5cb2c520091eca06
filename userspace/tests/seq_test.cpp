// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

extern "C" {
#include "mroce_seq.h"
}

TEST(Seq, OrdersAcrossTheWrapPoint) {
  EXPECT_TRUE(mroce_seq_lt(0xffffffffu, 0));
  EXPECT_TRUE(mroce_seq_gt(0, 0xffffffffu));
  EXPECT_TRUE(mroce_seq_lt(0xfffffff0u, 0x10));
  EXPECT_FALSE(mroce_seq_lt(5, 5));
  EXPECT_TRUE(mroce_seq_le(5, 5));
  EXPECT_TRUE(mroce_seq_ge(5, 5));
}

TEST(Seq, DiffIsSignedDistance) {
  EXPECT_EQ(mroce_seq_diff(2, 0xfffffffeu), 4);
  EXPECT_EQ(mroce_seq_diff(0xfffffffeu, 2), -4);
  EXPECT_EQ(mroce_seq_diff(0x7fffffffu, 0), 0x7fffffff);
}

TEST(Seq, HalfSpaceBoundaryIsConsistent) {
  // Exactly 2^31 apart: neither is "greater" in both directions.
  EXPECT_NE(mroce_seq_lt(0, 0x80000000u), mroce_seq_lt(0x80000000u, 0) ? false : true);
  EXPECT_TRUE(mroce_seq_lt(0, 0x7fffffffu));
  EXPECT_TRUE(mroce_seq_gt(0, 0x80000001u));
}

TEST(Seq, MaxPicksSeriallyLater) {
  EXPECT_EQ(mroce_seq_max(0xffffffffu, 3), 3u);
  EXPECT_EQ(mroce_seq_max(3, 0xffffffffu), 3u);
  EXPECT_EQ(mroce_seq_max(10, 9), 10u);
}

TEST(Seq, GenerationNewerWrapsAt8Bits) {
  EXPECT_TRUE(mroce_gen_newer(0, 255));
  EXPECT_TRUE(mroce_gen_newer(1, 0));
  EXPECT_TRUE(mroce_gen_newer(127, 0));
  EXPECT_FALSE(mroce_gen_newer(128, 0));
  EXPECT_FALSE(mroce_gen_newer(0, 0));
  EXPECT_FALSE(mroce_gen_newer(255, 0));
}
