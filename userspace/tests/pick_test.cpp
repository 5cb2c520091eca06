// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "loop_harness.h"

extern "C" {
#include "mroce_cc.h"
#include "mroce_pick.h"
}

namespace {

// An established connection built by running the handshake over the loop.
class Pick : public ::testing::Test {
 protected:
  void SetUp() override {
    mroce_params_default(&p);
    mt::EndpointCfg a, b;
    a.conn_id = 1;
    b.conn_id = 2;
    loop = std::make_unique<mt::Loop>(mt::NetCfg{}, &p, a, b, 5);
    loop->ep(0).connect(loop->now());
    ASSERT_TRUE(loop->run([&] { return mroce_conn_established(&loop->ep(0).conn); }, 100000000));
    c = &loop->ep(0).conn;
  }
  mroce_params p;
  std::unique_ptr<mt::Loop> loop;
  mroce_conn *c;
};

TEST_F(Pick, SpreadsEvenlyOverIdleEqualPaths) {
  std::vector<int> hits(c->n_paths);
  for (int i = 0; i < 8000; i++) hits[mroce_pick_path(c, 1000, -1)]++;
  for (int h : hits) EXPECT_NEAR(h, 1000, 200);
}

TEST_F(Pick, PrefersTheOriginalPathWhileItIsHealthy) {
  for (int i = 0; i < 50; i++) EXPECT_EQ(mroce_pick_path(c, 1000, 5), 5);
  c->paths[5].health.loss_ewma = p.suspect_loss;
  int same = 0;
  for (int i = 0; i < 800; i++) same += mroce_pick_path(c, 1000, 5) == 5;
  EXPECT_LT(same, 250);  // now only by chance
}

TEST_F(Pick, NeverPicksPathsThatAreNotActive) {
  for (int i = 0; i < c->n_paths; i++)
    if (i != 3) c->paths[i].health.state = i % 2 ? MROCE_PATH_PROBING : MROCE_PATH_FAILED;
  for (int i = 0; i < 200; i++) EXPECT_EQ(mroce_pick_path(c, 1000, i % 8), 3);
  c->paths[3].health.state = MROCE_PATH_SUSPECT;
  EXPECT_EQ(mroce_pick_path(c, 1000, -1), -1);
}

TEST_F(Pick, FullPathWindowIsSkippedButAnEmptyPathTakesAnyPacket) {
  for (int i = 0; i < c->n_paths; i++) {
    c->paths[i].cc.pwnd = 5000;
    c->paths[i].tx.inflight = i == 2 ? 0 : 4500;
  }
  for (int i = 0; i < 100; i++) EXPECT_EQ(mroce_pick_path(c, 1000, -1), 2);
  // An empty path accepts a packet larger than its window.
  c->paths[2].cc.pwnd = 100;
  EXPECT_EQ(mroce_pick_path(c, 1000, -1), 2);
  c->paths[2].tx.inflight = 50;
  EXPECT_EQ(mroce_pick_path(c, 1000, -1), -1);
  EXPECT_EQ(mroce_pick_path(c, 400, -1) >= 0, true);
}

TEST_F(Pick, LoadedOrHighScorePathsArePickedLess) {
  c->paths[0].tx.inflight = c->paths[0].cc.pwnd * 9 / 10;
  c->paths[1].score = 4 * MROCE_Q10;
  std::vector<int> hits(c->n_paths);
  for (int i = 0; i < 8000; i++) hits[mroce_pick_path(c, 100, -1)]++;
  EXPECT_LT(hits[0], 500);
  EXPECT_LT(hits[1], 500);
  EXPECT_GT(hits[2], 900);
}

TEST_F(Pick, APathHoldsAtMostTwiceAnEvenShareOfTheWindow) {
  // No ECN: every pwnd has grown to the maximum, far above the window.
  for (int i = 0; i < c->n_paths; i++) c->paths[i].cc.pwnd = p.max_pwnd;
  uint32_t share = 2 * mroce_cc_window(&c->cc, &p, c->rtt.min_rtt, c->rtt.srtt) / c->n_paths;
  c->paths[3].tx.inflight = share - 999;
  EXPECT_TRUE(mroce_path_eligible(c, &c->paths[3], 999));
  EXPECT_FALSE(mroce_path_eligible(c, &c->paths[3], 1000));
  // Fewer ACTIVE paths: each may hold more.
  c->paths[0].health.state = MROCE_PATH_PROBING;
  c->paths[1].health.state = MROCE_PATH_FAILED;
  EXPECT_TRUE(mroce_path_eligible(c, &c->paths[3], 1000));
}

TEST_F(Pick, BacklogOnAPathOutweighsRttNoise) {
  // Paths 0-3 have packets queued (say, behind a busy NIC port) but have
  // not shown it in their smoothed RTT yet; 4-7 are nearly empty with a
  // little RTT noise. With huge pwnds the queued paths must still lose.
  for (int i = 0; i < c->n_paths; i++) {
    c->paths[i].cc.pwnd = p.max_pwnd;
    c->paths[i].tx.inflight = i < 4 ? 48 * 1024 : 8 * 1024;
    c->paths[i].score = i < 4 ? 0 : MROCE_Q10 / 10;
  }
  std::vector<int> hits(c->n_paths);
  for (int i = 0; i < 8000; i++) hits[mroce_pick_path(c, 100, -1)]++;
  EXPECT_GT(hits[4] + hits[5] + hits[6] + hits[7], 6000);
}

TEST_F(Pick, ScoreGrowsWithRttInflationEcnAndLoss) {
  mroce_path &q = c->paths[4];
  c->rtt.min_rtt = 100000;
  q.rtt.srtt = 100000;
  q.cc.alpha = 0;
  q.health.loss_ewma = 0;
  EXPECT_EQ(mroce_path_score(c, &q), 0u);
  q.rtt.srtt = 200000;  // 100 % inflation
  EXPECT_EQ(mroce_path_score(c, &q), p.w_rtt);
  q.rtt.srtt = 100000;
  q.cc.alpha = MROCE_Q10 / 2;
  EXPECT_EQ(mroce_path_score(c, &q), p.w_ecn / 2);
  q.cc.alpha = 0;
  q.health.loss_ewma = MROCE_Q10 / 4;
  EXPECT_EQ(mroce_path_score(c, &q), p.w_loss / 4);
  q.rtt.srtt = 100000000;  // inflation is capped
  q.health.loss_ewma = 0;
  EXPECT_EQ(mroce_path_score(c, &q), 8 * p.w_rtt);
}

// Path runs (path_run): the picks of a run are the pick that started it.
static int RunOf(const std::vector<int> &seq, size_t i, size_t n) { return seq[i - i % n]; }

TEST_F(Pick, EachPacketIsPickedAloneWithoutRuns) {
  // Default: the caller batches nothing, so consecutive packets spread.
  int same = 0, prev = -1;
  for (int i = 0; i < 8000; i++) {
    int k = mroce_pick_path(c, 1000, -1);
    same += k == prev;
    prev = k;
  }
  EXPECT_LT(same, 2000);  // ~1/8 by chance (idle paths, both candidates tie)
}

TEST_F(Pick, RunsOfTheBurstLengthFormOnHealthyPaths) {
  mroce_conn_set_burst(c, 8);
  std::vector<int> seq;
  for (int i = 0; i < 800; i++) seq.push_back(mroce_pick_path(c, 1000, -1));
  for (size_t i = 0; i < seq.size(); i++) ASSERT_EQ(seq[i], RunOf(seq, i, 8)) << i;
  // No longer than path_run, however many the caller batches.
  mroce_conn_set_burst(c, 32);
  p.path_run = 4;
  seq.clear();
  c->run_left = 0;
  for (int i = 0; i < 800; i++) seq.push_back(mroce_pick_path(c, 1000, -1));
  for (size_t i = 0; i < seq.size(); i++) ASSERT_EQ(seq[i], RunOf(seq, i, 4)) << i;
  // ... and a new run does not always take the same path.
  int changes = 0;
  for (size_t i = 4; i < seq.size(); i += 4) changes += seq[i] != seq[i - 4];
  EXPECT_GT(changes, 150);
}

TEST_F(Pick, ARetransmissionNeitherJoinsNorEndsARun) {
  mroce_conn_set_burst(c, 8);
  int k = mroce_pick_path(c, 1000, -1);
  int other = (k + 3) % c->n_paths;
  EXPECT_EQ(mroce_pick_path(c, 1000, other), other);
  for (int i = 0; i < 7; i++) EXPECT_EQ(mroce_pick_path(c, 1000, -1), k);
}

TEST_F(Pick, AFullSuspectOrReKeyedPathEndsItsRunAtOnce) {
  mroce_conn_set_burst(c, 32);
  p.path_run = 32;
  for (int what = 0; what < 3; what++) {
    c->run_left = 0;
    int k = mroce_pick_path(c, 1000, -1);
    ASSERT_GE(k, 0);
    EXPECT_EQ(mroce_pick_path(c, 1000, -1), k);
    mroce_path &q = c->paths[k];
    if (what == 0)
      q.tx.inflight = q.cc.pwnd;  // its window is full
    else if (what == 1)
      q.health.loss_ewma = p.suspect_loss;
    else
      q.health.state = MROCE_PATH_PROBING;  // re-keyed: waits for its PROBE
    // pick() may still choose a SUSPECT path, but no run stays on it:
    // the 30 packets left of this run go elsewhere but by chance.
    int on_k = 0;
    for (int i = 0; i < 30; i++) {
      int n = mroce_pick_path(c, 1000, -1);
      ASSERT_GE(n, 0);
      on_k += n == k;
    }
    if (what == 1) {
      EXPECT_LT(on_k, 15);
    } else {
      EXPECT_EQ(on_k, 0) << what;
    }
    q.tx.inflight = 0;
    q.health.loss_ewma = 0;
    q.health.state = MROCE_PATH_ACTIVE;
  }
  // A SUSPECT path carries no runs: over many picks it gets far less than
  // its 1/8 share of the packets.
  mroce_path &s = c->paths[5];
  s.health.loss_ewma = p.suspect_loss;
  std::vector<int> hits(c->n_paths);
  for (int i = 0; i < 32000; i++) hits[mroce_pick_path(c, 1000, -1)]++;
  EXPECT_LT(hits[5], 1000);
  for (int i = 0; i < c->n_paths; i++) {
    if (i != 5) {
      EXPECT_GT(hits[i], 3000) << i;
    }
  }
}

TEST_F(Pick, RunsSpreadTheLoadOverAllPathsAndAvoidAHotOne) {
  mroce_conn_set_burst(c, 8);
  std::vector<int> hits(c->n_paths);
  for (int i = 0; i < 64000; i++) hits[mroce_pick_path(c, 1000, -1)]++;
  for (int h : hits) EXPECT_NEAR(h, 8000, 1600);
  // A lossy (not yet SUSPECT) path scores worse and starts fewer runs.
  c->paths[2].score = 4 * MROCE_Q10;
  std::fill(hits.begin(), hits.end(), 0);
  for (int i = 0; i < 64000; i++) hits[mroce_pick_path(c, 1000, -1)]++;
  EXPECT_LT(hits[2], 4000);
  EXPECT_GT(hits[3], 7000);
}

TEST_F(Pick, TxReserveKeepsRunsUntilThePathWindowIsFull) {
  // Through the sender's own accounting: each commit fills its path.
  p.pace_horizon = 1000000000;  // windows only, not the pacer
  mroce_conn_set_burst(c, 8);
  std::vector<int> seq;
  uint64_t now = loop->now();
  for (int i = 0; i < 160; i++) {
    mroce_tx_slot slot;
    ASSERT_EQ(mroce_conn_tx_reserve(c, now, 1000, -1, &slot), MROCE_TX_OK) << i;
    mroce_conn_tx_commit(c, &slot, 1000 + i, now);
    seq.push_back(slot.path);
  }
  for (size_t i = 0; i < seq.size(); i++) ASSERT_EQ(seq[i], RunOf(seq, i, 8)) << i;
  // Now one path takes no more than its window: a run on it stops there.
  for (int i = 0; i < c->n_paths; i++) c->paths[i].cc.pwnd = 10000;
  std::vector<uint32_t> before(c->n_paths);
  for (int i = 0; i < c->n_paths; i++) before[i] = c->paths[i].tx.inflight;
  for (int i = 0; i < 40; i++) {
    mroce_tx_slot slot;
    if (mroce_conn_tx_reserve(c, now, 1000, -1, &slot) != MROCE_TX_OK) break;
    mroce_conn_tx_commit(c, &slot, 2000 + i, now);
  }
  for (int i = 0; i < c->n_paths; i++) {
    if (before[i] < 10000) {
      EXPECT_LE(c->paths[i].tx.inflight, 10000u) << i;
    }
  }
}

TEST(Prng, IsDeterministicAndNotStuck) {
  uint64_t a = 42, b = 42;
  for (int i = 0; i < 100; i++) EXPECT_EQ(mroce_prng(&a), mroce_prng(&b));
  uint64_t s = 1;
  uint64_t first = mroce_prng(&s);
  EXPECT_NE(first, mroce_prng(&s));
}

}  // namespace
