// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "test_util.h"

extern "C" {
#include "mroce_place.h"
#include "vectors/place_vectors.h"
}

namespace {

TEST(PlaceVectors, EveryVectorMapsAsSpecified) {
  for (size_t i = 0; i < MROCE_PLACE_NR_VECTORS; i++) {
    const mroce_place_vec &v = mroce_place_vectors[i];
    mroce_piece out[MROCE_PLACE_VEC_MAX_PIECES];
    uint32_t n = 99;
    int err = mroce_sgl_map(v.sgl, v.n_sge, v.msg_off, v.len, out, v.max_out, &n);
    ASSERT_EQ(err, v.err) << v.name;
    if (err != MROCE_PLACE_OK) {
      EXPECT_EQ(n, 0u) << v.name;
      continue;
    }
    ASSERT_EQ(n, v.n_pieces) << v.name;
    for (uint32_t k = 0; k < n; k++) {
      EXPECT_EQ(out[k].sge, v.pieces[k].sge) << v.name << " piece " << k;
      EXPECT_EQ(out[k].sge_offset, v.pieces[k].sge_offset) << v.name;
      EXPECT_EQ(out[k].addr, v.pieces[k].addr) << v.name;
      EXPECT_EQ(out[k].len, v.pieces[k].len) << v.name;
    }
  }
}

TEST(Place, SglTotalDetectsOverflow) {
  mroce_sge big[2] = {{0, 0xffffffffu, 0}, {0x1000, 1, 0}};
  uint32_t total;
  EXPECT_EQ(mroce_sgl_total(big, 1, &total), MROCE_PLACE_OK);
  EXPECT_EQ(total, 0xffffffffu);
  EXPECT_EQ(mroce_sgl_total(big, 2, &total), MROCE_PLACE_EOVERFLOW);
  mroce_sge wrap = {0xfffffffffffff000ull, 0x2000, 0};
  EXPECT_EQ(mroce_sgl_total(&wrap, 1, &total), MROCE_PLACE_EOVERFLOW);
}

TEST(Place, RangeWithinHandlesEdgesAndWrap) {
  EXPECT_TRUE(mroce_range_within(0x1000, 0x1000, 0x1000, 0x1000));
  EXPECT_TRUE(mroce_range_within(0x1000, 0x1000, 0x1fff, 1));
  EXPECT_TRUE(mroce_range_within(0x1000, 0x1000, 0x2000, 0));
  EXPECT_FALSE(mroce_range_within(0x1000, 0x1000, 0x1fff, 2));
  EXPECT_FALSE(mroce_range_within(0x1000, 0x1000, 0xfff, 1));
  EXPECT_FALSE(mroce_range_within(0x1000, 0x1000, 0x2001, 0));
  EXPECT_FALSE(mroce_range_within(0x1000, 0x1000, 0x1800, ~0ull));
  EXPECT_TRUE(mroce_range_within(0, ~0ull, ~0ull - 1, 1));
}

TEST(Place, WriteDestinationStaysInsideTheMessage) {
  uint64_t d = 0;
  EXPECT_EQ(mroce_write_dest(0x10000, 4096, 1024, 1024, &d), MROCE_PLACE_OK);
  EXPECT_EQ(d, 0x10400u);
  EXPECT_EQ(mroce_write_dest(0x10000, 4096, 4000, 97, &d), MROCE_PLACE_ERANGE);
  EXPECT_EQ(mroce_write_dest(0xfffffffffffffff0ull, 32, 0, 16, &d),
            MROCE_PLACE_EOVERFLOW);
  EXPECT_EQ(mroce_write_dest(0x10000, 0xffffffffu, 0xffffffffu, 1, &d),
            MROCE_PLACE_ERANGE);
}

TEST(Place, SegmentCount) {
  EXPECT_EQ(mroce_seg_count(0, 1000), 1u);  // an empty message is one chunk
  EXPECT_EQ(mroce_seg_count(1000, 1000), 1u);
  EXPECT_EQ(mroce_seg_count(1001, 1000), 2u);
  EXPECT_EQ(mroce_seg_count(0xffffffffu, 4096), 1048576u);
  EXPECT_EQ(mroce_seg_count(5, 0), 0u);
}

// Mapping consecutive chunks covers the list exactly once, in order.
TEST(PlaceProperty, ChunksTileTheScatterGatherList) {
  mt::Rng rng(mt::test_seed(0x91ace));
  for (int iter = 0; iter < 3000; iter++) {
    uint32_t n_sge = static_cast<uint32_t>(rng.range(1, 8));
    std::vector<mroce_sge> sgl(n_sge);
    uint64_t addr = 0x100000;
    uint32_t total = 0;
    for (auto &s : sgl) {
      s.addr = addr;
      s.length = static_cast<uint32_t>(rng.range(0, 5000));
      s.lkey = 1;
      addr += s.length + rng.range(1, 64);
      total += s.length;
    }
    std::vector<uint64_t> seen;  // byte addresses, in message order
    uint32_t seg = static_cast<uint32_t>(rng.range(1, 3000));
    for (uint32_t off = 0; off < total; off += seg) {
      uint32_t len = std::min(seg, total - off);
      mroce_piece out[8];
      uint32_t n;
      ASSERT_EQ(mroce_sgl_map(sgl.data(), n_sge, off, len, out, 8, &n), MROCE_PLACE_OK);
      uint32_t sum = 0;
      for (uint32_t k = 0; k < n; k++) {
        ASSERT_GT(out[k].len, 0u);
        ASSERT_EQ(out[k].addr, sgl[out[k].sge].addr + out[k].sge_offset);
        ASSERT_LE(out[k].sge_offset + out[k].len, sgl[out[k].sge].length);
        for (uint32_t b = 0; b < out[k].len; b += 97) seen.push_back(out[k].addr + b);
        sum += out[k].len;
      }
      ASSERT_EQ(sum, len);
    }
    for (size_t i = 1; i < seen.size(); i++) ASSERT_LT(seen[i - 1], seen[i]);
    mroce_piece out[8];
    uint32_t n;
    EXPECT_EQ(mroce_sgl_map(sgl.data(), n_sge, total, 1, out, 8, &n), MROCE_PLACE_ERANGE);
  }
}

}  // namespace
