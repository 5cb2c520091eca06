// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <bitset>

#include "test_util.h"

extern "C" {
#include "mroce_bitmap.h"
}

namespace {

constexpr uint32_t kWords = 4;
using Ref = std::bitset<kWords * 64>;

Ref to_ref(const uint64_t *bm) {
  Ref r;
  for (uint32_t i = 0; i < kWords * 64; i++) r[i] = mroce_bm_test(bm, i);
  return r;
}

TEST(Bitmap, SetTestClearSingleBits) {
  uint64_t bm[kWords] = {};
  mroce_bm_set(bm, 0);
  mroce_bm_set(bm, 63);
  mroce_bm_set(bm, 64);
  mroce_bm_set(bm, 255);
  EXPECT_TRUE(mroce_bm_test(bm, 0));
  EXPECT_TRUE(mroce_bm_test(bm, 63));
  EXPECT_TRUE(mroce_bm_test(bm, 64));
  EXPECT_TRUE(mroce_bm_test(bm, 255));
  EXPECT_FALSE(mroce_bm_test(bm, 1));
  mroce_bm_clear(bm, 64);
  EXPECT_FALSE(mroce_bm_test(bm, 64));
}

TEST(Bitmap, ShiftByWholeWindowEmptiesIt) {
  uint64_t bm[kWords] = {~0ull, ~0ull, ~0ull, ~0ull};
  mroce_bm_shift(bm, kWords, 256);
  EXPECT_TRUE(mroce_bm_empty(bm, kWords));
  uint64_t bm2[kWords] = {1, 2, 3, 4};
  mroce_bm_shift(bm2, kWords, 0xffffffffu);
  EXPECT_TRUE(mroce_bm_empty(bm2, kWords));
}

TEST(Bitmap, LeadingOnesStopsAtFirstHoleAcrossWords) {
  uint64_t bm[kWords] = {~0ull, 0x7, 0, 0};
  EXPECT_EQ(mroce_bm_leading_ones(bm, kWords), 67u);
  uint64_t full[kWords] = {~0ull, ~0ull, ~0ull, ~0ull};
  EXPECT_EQ(mroce_bm_leading_ones(full, kWords), 256u);
  uint64_t none[kWords] = {0xfe, 0, 0, 0};
  EXPECT_EQ(mroce_bm_leading_ones(none, kWords), 0u);
}

TEST(Bitmap, NextSetRespectsLimit) {
  uint64_t bm[kWords] = {};
  mroce_bm_set(bm, 10);
  mroce_bm_set(bm, 200);
  EXPECT_EQ(mroce_bm_next_set(bm, kWords, 0, 256), 10u);
  EXPECT_EQ(mroce_bm_next_set(bm, kWords, 11, 256), 200u);
  EXPECT_EQ(mroce_bm_next_set(bm, kWords, 11, 200), 200u);  // == limit: none
  EXPECT_EQ(mroce_bm_next_set(bm, kWords, 11, 150), 150u);
  EXPECT_EQ(mroce_bm_next_set(bm, kWords, 201, 1000), 256u);
}

TEST(Bitmap, SpanAndCountFrom) {
  uint64_t bm[kWords] = {};
  EXPECT_EQ(mroce_bm_span(bm, kWords), 0u);
  mroce_bm_set(bm, 3);
  mroce_bm_set(bm, 130);
  EXPECT_EQ(mroce_bm_span(bm, kWords), 131u);
  EXPECT_EQ(mroce_bm_count_from(bm, kWords, 0), 2u);
  EXPECT_EQ(mroce_bm_count_from(bm, kWords, 4), 1u);
  EXPECT_EQ(mroce_bm_count_from(bm, kWords, 131), 0u);
  EXPECT_EQ(mroce_bm_count_from(bm, kWords, 999), 0u);
}

TEST(BitmapProperty, OperationsMatchAReferenceBitset) {
  mt::Rng rng(mt::test_seed(0xb17));
  for (int iter = 0; iter < 5000; iter++) {
    uint64_t bm[kWords];
    for (auto &w : bm) w = rng.chance(0.2) ? ~0ull : rng.u64();
    Ref ref = to_ref(bm);
    uint32_t n = static_cast<uint32_t>(rng.range(0, 300));
    mroce_bm_shift(bm, kWords, n);
    ref = n >= 256 ? Ref() : (ref >> n);
    ASSERT_EQ(to_ref(bm), ref) << "shift " << n;
    uint32_t ones = 0;
    while (ones < 256 && ref[ones]) ones++;
    ASSERT_EQ(mroce_bm_leading_ones(bm, kWords), ones);
    uint32_t from = static_cast<uint32_t>(rng.range(0, 255));
    uint32_t cnt = 0;
    for (uint32_t i = from; i < 256; i++) cnt += ref[i];
    ASSERT_EQ(mroce_bm_count_from(bm, kWords, from), cnt);
    uint32_t limit = static_cast<uint32_t>(rng.range(from, 256));
    uint32_t next = limit;
    for (uint32_t i = from; i < limit; i++)
      if (ref[i]) { next = i; break; }
    ASSERT_EQ(mroce_bm_next_set(bm, kWords, from, limit), next);
    uint32_t span = 0;
    for (uint32_t i = 0; i < 256; i++)
      if (ref[i]) span = i + 1;
    ASSERT_EQ(mroce_bm_span(bm, kWords), span);
  }
}

// The ring helpers (stream windows) against a plain array of bits.
TEST(BitmapProperty, RingOperationsMatchAReference) {
  constexpr uint32_t kRingWords = 16, kBits = kRingWords * 64;
  mt::Rng rng(mt::test_seed(0x5196));
  for (int iter = 0; iter < 5000; iter++) {
    uint64_t bm[kRingWords];
    bool ref[kBits];
    for (auto &w : bm) w = rng.chance(0.5) ? ~0ull : rng.chance(0.3) ? 0 : rng.u64();
    for (uint32_t i = 0; i < kBits; i++) ref[i] = mroce_bm_test(bm, i);
    uint32_t start = rng.u32();
    uint32_t limit = static_cast<uint32_t>(rng.range(0, kBits));
    uint32_t ones = 0;
    while (ones < limit && ref[(start + ones) % kBits]) ones++;
    ASSERT_EQ(mroce_bm_ring_ones(bm, kRingWords, start, limit), ones);
    uint32_t next = limit;
    for (uint32_t k = 0; k < limit; k++)
      if (ref[(start + k) % kBits]) { next = k; break; }
    ASSERT_EQ(mroce_bm_ring_next_set(bm, kRingWords, start, limit), next);
    uint32_t n = static_cast<uint32_t>(rng.range(0, kBits + 10));
    mroce_bm_ring_clear(bm, kRingWords, start, n);
    for (uint32_t k = 0; k < n && k < kBits; k++) ref[(start + k) % kBits] = false;
    for (uint32_t i = 0; i < kBits; i++)
      ASSERT_EQ(mroce_bm_test(bm, i), ref[i]) << "clear " << n << " from " << start;
  }
}

}  // namespace
