// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "test_util.h"

extern "C" {
#include "mroce_ptx.h"
#include "mroce_prx.h"
}

namespace {

struct Log {
  std::vector<std::pair<uint64_t, uint32_t>> acked, lost;  // cookie, psn
};

void on_acked(void *ctx, const mroce_ptx_rec *r, uint32_t psn) {
  static_cast<Log *>(ctx)->acked.push_back({r->cookie, psn});
}
void on_lost(void *ctx, const mroce_ptx_rec *r, uint32_t psn) {
  static_cast<Log *>(ctx)->lost.push_back({r->cookie, psn});
}

mroce_ack_block block(uint32_t cum, std::initializer_list<uint32_t> sacked) {
  mroce_ack_block b{};
  b.cum_psn = cum;
  for (uint32_t p : sacked) {
    uint32_t d = p - cum - 1;
    b.sack[d / 64] |= 1ull << (d % 64);
  }
  return b;
}

class PathTx : public ::testing::Test {
 protected:
  void SetUp() override { mroce_ptx_init(&t); }
  void send(int n, uint32_t len = 100) {
    for (int i = 0; i < n; i++) mroce_ptx_send(&t, len, 1000 + t.next, 0);
  }
  mroce_ptx_ack apply(const mroce_ack_block &b, uint8_t dupthresh = 1) {
    mroce_ptx_ack res;
    mroce_ptx_on_block(&t, &b, dupthresh, on_acked, on_lost, &log, &res);
    return res;
  }
  mroce_ptx t;
  Log log;
};

TEST_F(PathTx, CumulativeAckReleasesRecordsAndFloor) {
  send(4);
  EXPECT_EQ(t.inflight, 400u);
  auto res = apply(block(1, {}));
  EXPECT_EQ(res.acked_pkts, 2u);
  EXPECT_EQ(t.floor, 2u);
  EXPECT_EQ(t.inflight, 200u);
  ASSERT_EQ(log.acked.size(), 2u);
  EXPECT_EQ(log.acked[0].first, 1001u);  // newest first
  EXPECT_EQ(log.acked[1].first, 1000u);
  EXPECT_TRUE(log.lost.empty());
}

TEST_F(PathTx, GapOnThePathIsLossWithDupthreshOne) {
  send(4);
  auto res = apply(block(0, {2}));  // psn 1 missing, 2 arrived
  EXPECT_EQ(res.acked_pkts, 2u);
  EXPECT_EQ(res.lost_pkts, 1u);
  ASSERT_EQ(log.lost.size(), 1u);
  EXPECT_EQ(log.lost[0].second, 1u);
  EXPECT_EQ(t.floor, 3u);  // 0 acked, 1 lost, 2 acked, 3 outstanding
  EXPECT_EQ(mroce_ptx_floor_delta(&t, 3), 0);
}

TEST_F(PathTx, DupthreshHoldsBackLossDeclaration) {
  send(5);
  auto res = apply(block(0, {2, 3}), 3);
  EXPECT_EQ(res.lost_pkts, 0u);
  res = apply(block(0, {2, 3, 4}), 3);
  EXPECT_EQ(res.lost_pkts, 1u);
  EXPECT_EQ(log.lost[0].second, 1u);
}

TEST_F(PathTx, RepeatedBlockIsIdempotent) {
  send(3);
  apply(block(0, {2}));
  auto res = apply(block(0, {2}));
  EXPECT_EQ(res.acked_pkts, 0u);
  EXPECT_EQ(res.lost_pkts, 0u);
  EXPECT_EQ(log.acked.size(), 2u);
  EXPECT_EQ(log.lost.size(), 1u);
}

TEST_F(PathTx, LostRecordIsNotAckedLater) {
  send(3);
  apply(block(0, {2}));           // 1 declared lost
  auto res = apply(block(2, {})); // the receiver did get 1 after all
  EXPECT_EQ(res.acked_pkts, 0u);
  EXPECT_EQ(log.acked.size(), 2u);
}

TEST_F(PathTx, AckOfUnsentPsnIsBogus) {
  send(2);
  auto res = apply(block(2, {}));
  EXPECT_TRUE(res.bogus);
  EXPECT_EQ(t.inflight, 200u);
  EXPECT_TRUE(log.acked.empty());
  res = apply(block(0, {1}));  // sack bits for PSN 2+ are simply unsent
  EXPECT_FALSE(res.bogus);
}

TEST_F(PathTx, SpanLimitKeepsFloorDeltaInEightBits) {
  for (int i = 0; i < MROCE_PTX_SPAN; i++) {
    ASSERT_TRUE(mroce_ptx_can_send(&t));
    mroce_ptx_send(&t, 1, i, 0);
  }
  EXPECT_FALSE(mroce_ptx_can_send(&t));
  EXPECT_EQ(mroce_ptx_floor_delta(&t, t.next - 1), 254);
  apply(block(0, {}));
  EXPECT_TRUE(mroce_ptx_can_send(&t));
}

TEST_F(PathTx, NakResolvesWithoutLoss) {
  send(3);
  mroce_ptx_rec rec;
  ASSERT_TRUE(mroce_ptx_on_nak(&t, 0, &rec));
  EXPECT_EQ(rec.cookie, 1000u);
  EXPECT_EQ(t.floor, 1u);
  EXPECT_EQ(t.inflight, 200u);
  EXPECT_FALSE(mroce_ptx_on_nak(&t, 0, &rec));  // no longer outstanding
  EXPECT_FALSE(mroce_ptx_on_nak(&t, 3, &rec));  // never sent
  apply(block(0xffffffff, {1}));  // the receiver never marked the refused PSN
  EXPECT_TRUE(log.lost.empty());  // ... and that is not a loss
}

TEST_F(PathTx, LoseAllEmptiesThePath) {
  send(3);
  apply(block(0, {}));
  EXPECT_EQ(mroce_ptx_lose_all(&t, on_lost, &log), 2u);
  EXPECT_EQ(t.inflight, 0u);
  EXPECT_EQ(t.n_out, 0);
  EXPECT_EQ(t.floor, t.next);
  EXPECT_EQ(mroce_ptx_oldest(&t), 0u);
}

TEST_F(PathTx, OldestIsTheOldestOutstanding) {
  mroce_ptx_send(&t, 1, 0, 50);
  mroce_ptx_send(&t, 1, 1, 60);
  mroce_ptx_send(&t, 1, 2, 70);
  EXPECT_EQ(mroce_ptx_oldest(&t), 50u);
  apply(block(0, {}));
  EXPECT_EQ(mroce_ptx_oldest(&t), 60u);
}

// Overdue (docs §5.3): everything outstanding sent before the time goes,
// oldest first; answered records and younger ones stay.
TEST_F(PathTx, LoseOlderTakesTheOutstandingRecordsSentBeforeATime) {
  mroce_ptx_send(&t, 1, 10, 50);
  mroce_ptx_send(&t, 1, 11, 60);
  mroce_ptx_send(&t, 1, 12, 70);
  mroce_ptx_send(&t, 1, 13, 80);
  mroce_ptx_rec rec;
  ASSERT_TRUE(mroce_ptx_on_nak(&t, 1, &rec));  // PSN 1 (sent at 60) resolved
  EXPECT_EQ(mroce_ptx_lose_older(&t, 71, on_lost, &log), 2u);
  ASSERT_EQ(log.lost.size(), 2u);
  EXPECT_EQ(log.lost[0], std::make_pair(uint64_t(10), 0u));
  EXPECT_EQ(log.lost[1], std::make_pair(uint64_t(12), 2u));
  EXPECT_EQ(t.n_out, 1);
  EXPECT_EQ(t.floor, 3u);
  EXPECT_EQ(mroce_ptx_oldest(&t), 80u);
  EXPECT_EQ(mroce_ptx_lose_older(&t, 80, on_lost, &log), 0u);
}

TEST_F(PathTx, WrapsAroundThePsnSpace) {
  t.next = t.floor = 0xfffffffe;
  send(4);
  auto res = apply(block(0xffffffff, {1}));
  EXPECT_EQ(res.acked_pkts, 3u);
  EXPECT_EQ(res.lost_pkts, 1u);
  EXPECT_EQ(log.lost[0].second, 0u);
  EXPECT_EQ(t.floor, 2u);
}

// Sender and receiver path state over a FIFO path with random loss: every
// transmission ends acked or lost exactly once, lost exactly when it was
// dropped (no spurious losses on a FIFO path), acked exactly when delivered.
TEST(PathTxProperty, FifoPathOutcomesAreExact) {
  mt::Rng rng(mt::test_seed(0x7a5));
  mroce_ptx t;
  mroce_prx r;
  mroce_ptx_init(&t);
  mroce_prx_init(&r);
  Log log;
  std::map<uint32_t, bool> fate;  // psn -> delivered
  std::vector<std::pair<uint32_t, uint8_t>> wire;
  uint64_t sent = 0;
  for (int step = 0; step < 100000; step++) {
    if (mroce_ptx_can_send(&t) && rng.chance(0.5)) {
      uint32_t psn = mroce_ptx_send(&t, 10, sent++, step);
      bool drop = rng.chance(0.05);
      fate[psn] = !drop;
      if (!drop) wire.push_back({psn, mroce_ptx_floor_delta(&t, psn)});
    }
    if (!wire.empty() && rng.chance(0.6)) {  // FIFO delivery
      auto [psn, fd] = wire.front();
      wire.erase(wire.begin());
      if (mroce_prx_check(&r, 0, psn, fd) == MROCE_PRX_NEW) mroce_prx_accept(&r, psn, 0, false, step);
    }
    if (rng.chance(0.2)) {  // the ACK
      mroce_ack_block b;
      mroce_prx_block(&r, 0, step, &b);
      mroce_ptx_ack res;
      mroce_ptx_on_block(&t, &b, 1, on_acked, on_lost, &log, &res);
      ASSERT_FALSE(res.bogus);
    }
  }
  std::map<uint32_t, int> outcomes;
  for (auto &a : log.acked) {
    ASSERT_TRUE(fate[a.second]) << "acked but dropped: " << a.second;
    outcomes[a.second]++;
  }
  for (auto &l : log.lost) {
    ASSERT_FALSE(fate[l.second]) << "declared lost but delivered: " << l.second;
    outcomes[l.second]++;
  }
  for (auto &o : outcomes) ASSERT_EQ(o.second, 1) << o.first;
  EXPECT_GT(log.lost.size(), 100u);
  EXPECT_GT(log.acked.size(), 10000u);
}

}  // namespace
