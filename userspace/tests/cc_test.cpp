// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

extern "C" {
#include "mroce_cc.h"
}

namespace {

constexpr uint32_t kMss = 4000;

class PathCc : public ::testing::Test {
 protected:
  void SetUp() override {
    mroce_params_default(&p);
    mroce_cc_path_init(&cc, &p, 0);
  }
  // One round: `pkts` packets of kMss acked, `ce` of them marked.
  bool round(uint32_t pkts, uint32_t ce) {
    next += pkts;
    return mroce_cc_path_on_ack(&cc, &p, kMss, pkts * kMss, pkts, ce, next - 1, next);
  }
  mroce_params p;
  mroce_cc_path cc;
  uint32_t next = 0;
};

TEST_F(PathCc, SlowStartGrowsByAckedBytes) {
  uint32_t w = cc.pwnd;
  mroce_cc_path_on_ack(&cc, &p, kMss, 3 * kMss, 3, 0, 0, 100);  // round not over
  EXPECT_EQ(cc.pwnd, w + 3 * kMss);
}

TEST_F(PathCc, MarkingEndsSlowStartAndCutsByHalfAlphaAtRoundEnd) {
  EXPECT_TRUE(round(10, 10));  // all marked: alpha rises by g
  EXPECT_EQ(cc.ssthresh, cc.pwnd);
  uint32_t alpha = cc.alpha;
  EXPECT_GT(alpha, 0u);
  uint32_t before = p.init_pwnd;
  EXPECT_EQ(cc.pwnd, before - static_cast<uint32_t>((uint64_t)before * alpha >> 11));
}

TEST_F(PathCc, AlphaConvergesToMarkedFraction) {
  for (int i = 0; i < 200; i++) round(100, 25);
  EXPECT_NEAR(cc.alpha, MROCE_Q10 / 4, 20);
  EXPECT_GE(cc.pwnd, p.min_pwnd);
}

TEST_F(PathCc, CleanRoundsAddOneMssAfterSlowStart) {
  round(10, 1);  // leave slow start
  uint32_t w = cc.pwnd;
  round(10, 0);
  EXPECT_EQ(cc.pwnd, w + kMss);
}

TEST_F(PathCc, RandomLossWithoutEcnIsNotCongestion) {
  uint32_t w = cc.pwnd;
  EXPECT_FALSE(mroce_cc_path_on_loss(&cc, &p));
  EXPECT_EQ(cc.pwnd, w);
}

TEST_F(PathCc, LossWithEcnHalvesOncePerRound) {
  for (int i = 0; i < 30; i++) round(10, 5);
  uint32_t w = cc.pwnd;
  EXPECT_TRUE(mroce_cc_path_on_loss(&cc, &p));
  EXPECT_EQ(cc.pwnd, std::max(w / 2, p.min_pwnd));
  uint32_t w2 = cc.pwnd;
  EXPECT_TRUE(mroce_cc_path_on_loss(&cc, &p));
  EXPECT_EQ(cc.pwnd, w2);
}

TEST_F(PathCc, WindowStaysWithinBounds) {
  for (int i = 0; i < 2000; i++) round(50, 0);
  EXPECT_EQ(cc.pwnd, p.max_pwnd);
  for (int i = 0; i < 2000; i++) round(50, 50);
  EXPECT_EQ(cc.pwnd, p.min_pwnd);
}

class ConnCc : public ::testing::Test {
 protected:
  void SetUp() override {
    mroce_params_default(&p);
    mroce_cc_conn_init(&cc, &p, 0);
  }
  // A whole round of `pkts` acked with `ce` marked, at time now.
  void round(uint32_t pkts, uint32_t ce) {
    now += 100000;
    mroce_cc_conn_on_ack(&cc, &p, kMss, pkts * kMss, pkts, ce, now, 100000, min_rtt);
  }
  // A round whose smallest RTT sample is `rtt` (ns).
  void delayed_round(uint32_t pkts, uint32_t rtt) {
    mroce_cc_conn_rtt(&cc, rtt + 5000);
    mroce_cc_conn_rtt(&cc, rtt);
    round(pkts, 0);
  }
  mroce_params p;
  mroce_cc_conn cc;
  uint64_t now = 1000000;
  uint32_t min_rtt = 50000;
};

TEST_F(ConnCc, CutsOncePerRoundByHalfAlpha) {
  round(10, 0);  // starts the first round
  round(10, 10);
  EXPECT_LT(cc.cwnd, p.init_cwnd + 10 * kMss);
  EXPECT_EQ(cc.ssthresh, cc.cwnd);
}

TEST_F(ConnCc, CorrelatedLossWithEcnCutsSeventyPercent) {
  round(10, 0);
  uint32_t w = cc.cwnd;
  mroce_cc_conn_on_loss(&cc, &p, 1, true);
  EXPECT_EQ(cc.cwnd, (uint32_t)((uint64_t)w * 7 / 10));
  mroce_cc_conn_on_loss(&cc, &p, 1, true);  // same round: no second cut
  EXPECT_EQ(cc.cwnd, (uint32_t)((uint64_t)w * 7 / 10));
}

TEST_F(ConnCc, RandomLossDoesNotCut) {
  round(10, 0);
  uint32_t w = cc.cwnd;
  mroce_cc_conn_on_loss(&cc, &p, 1, false);
  EXPECT_EQ(cc.cwnd, w);
}

TEST_F(ConnCc, HeavyLossWithoutEcnCutsAtRoundEnd) {
  round(10, 0);
  round(10, 1);  // leave slow start
  uint32_t w = cc.cwnd;
  mroce_cc_conn_on_loss(&cc, &p, 10, false);  // 10 lost of 20 seen
  round(10, 0);
  EXPECT_EQ(cc.cwnd, (uint32_t)((uint64_t)w * 7 / 10));
}

TEST_F(ConnCc, HintCapsTheWindowAtRateTimesMinRttPlusAckDelay) {
  mroce_cc_conn_set_hint(&cc, 1000);  // 1 Gbit/s
  // 1 Gbit/s * (100 us * 1.1 + 50 us ack_delay) = 13750 + 6250 bytes
  // (1.1 in Q10 is 1126/1024)
  EXPECT_NEAR(mroce_cc_window(&cc, &p, 100000, 0), 20000u, 10);
  mroce_cc_conn_set_hint(&cc, 0);
  EXPECT_EQ(mroce_cc_window(&cc, &p, 100000, 0), cc.cwnd);
  EXPECT_EQ(mroce_cc_window(&cc, &p, 0, 0), cc.cwnd);
}

TEST_F(ConnCc, HintWindowCoversTheAckHoldAtAnyRtt) {
  // At 8 Gbit/s the receiver may sit on 50 us worth of data (50 KB)
  // before it ACKs; a window of rate x RTT alone (11 KB at 10 us) would
  // throttle the sender to a fraction of its hint.
  mroce_cc_conn_set_hint(&cc, 8000);
  uint32_t w = mroce_cc_window(&cc, &p, 10000, 0);
  EXPECT_GE(w, mroce_rate_bytes(8000, 10000 + p.ack_delay));
  EXPECT_LE(w, mroce_rate_bytes(8000, 11000 + p.ack_delay) + 1);
}

TEST_F(ConnCc, HintWindowNeverBelowMinimum) {
  mroce_cc_conn_set_hint(&cc, 1);
  EXPECT_EQ(mroce_cc_window(&cc, &p, 1000, 0), p.min_cwnd);
}

TEST_F(ConnCc, PacingRateIsCappedByHint) {
  EXPECT_EQ(mroce_cc_pace_rate(&cc, &p, 0), 0u);  // no RTT, no hint
  uint32_t r = mroce_cc_pace_rate(&cc, &p, 100000);
  // 1.25 * cwnd / srtt in Mbit/s
  EXPECT_EQ(r, (uint32_t)((uint64_t)cc.cwnd * 8000 * p.pace_gain / MROCE_Q10 / 100000));
  mroce_cc_conn_set_hint(&cc, 500);
  EXPECT_EQ(mroce_cc_pace_rate(&cc, &p, 100000), 500u);
  EXPECT_EQ(mroce_cc_pace_rate(&cc, &p, 0), 500u);
}

TEST_F(ConnCc, PacingStaysAtTheHintWhenAQueueInflatesSrtt) {
  // 1 Gbit/s hint over a 10 us fabric: the hinted window is ~7.6 kB. A
  // drained incast queue left srtt at 100 us; pacing must not fall to
  // window / srtt (0.76 Gbit/s) while cwnd allows the hint.
  mroce_cc_conn_set_hint(&cc, 1000);
  uint32_t w = mroce_cc_window(&cc, &p, 10000, 0);
  ASSERT_LT((uint64_t)w * 8000 * p.pace_gain / MROCE_Q10 / 100000, 1000u);
  EXPECT_EQ(mroce_cc_pace_rate(&cc, &p, 100000), 1000u);
  // A cwnd that ECN cut below the hint still sets the pace.
  cc.cwnd = 5000;
  EXPECT_EQ(mroce_cc_pace_rate(&cc, &p, 100000),
            (uint32_t)((uint64_t)5000 * 8000 * p.pace_gain / MROCE_Q10 / 100000));
}

TEST(Rate, BytesAndNanosecondsConvert) {
  EXPECT_EQ(mroce_rate_bytes(8000, 1000), 1000u);        // 8 Gbit/s for 1 us
  EXPECT_EQ(mroce_rate_bytes(100000, 1000000), 12500000u);
  EXPECT_EQ(mroce_rate_bytes(0xffffffffu, ~0ull / 2), 0xffffffffu);
  EXPECT_EQ(mroce_rate_ns(8000, 1000), 1000u);
  EXPECT_EQ(mroce_rate_ns(0, 1000), 0u);
}

}  // namespace

// Rounds of 1 ms (srtt) in which `bytes` are acknowledged and the smallest
// RTT sample is `rmin`: the srtt term's inputs (delivered rate, standing
// queue). The first call only starts the first round.
class SrttTerm : public ConnCc {
 protected:
  void SetUp() override {
    ConnCc::SetUp();
    cc.cwnd = p.max_cwnd;
    mroce_cc_conn_on_ack(&cc, &p, kMss, 0, 0, 0, now, kRound, min_rtt);
  }
  void rate_round(uint64_t bytes, uint32_t rmin) {
    mroce_cc_conn_rtt(&cc, rmin + 5000);
    mroce_cc_conn_rtt(&cc, rmin);
    now += kRound;
    ASSERT_TRUE(mroce_cc_conn_on_ack(&cc, &p, kMss, bytes, bytes / kMss, 0, now, kRound,
                                     min_rtt));
  }
  uint32_t min_term(uint32_t hint) {
    return mroce_rate_bytes(hint, (uint64_t)min_rtt * p.hint_slack / MROCE_Q10 + p.ack_delay);
  }
  static constexpr uint32_t kRound = 1000000;
  static constexpr uint32_t kMs = 1000000;
};

TEST_F(SrttTerm, CoversAckHoldsAtTheDeliveredRateNotTheHint) {
  // A VM: the hint is the configured 5 Gbit/s, the receiver took 50 KB per
  // ms (400 Mbit/s), min RTT 50 us, srtt 20 ms of held ACKs, no queue.
  p.hint_srtt = MROCE_Q10;
  mroce_cc_conn_set_hint(&cc, 5000);
  rate_round(50000, min_rtt);
  EXPECT_EQ(cc.dlv, 400u);
  EXPECT_EQ(cc.sq, 0u);
  p.hint_srtt = 0;
  EXPECT_EQ(mroce_cc_window(&cc, &p, min_rtt, 20 * kMs), min_term(5000));  // off
  p.hint_srtt = MROCE_Q10;
  // 1.25 x 400 Mbit/s over 20 ms, not 5 Gbit/s over 20 ms (12.5 MB).
  EXPECT_EQ(mroce_cc_window(&cc, &p, min_rtt, 20 * kMs), mroce_rate_bytes(500, 20 * kMs));
  // Never below the min-RTT term, and cwnd still caps it.
  EXPECT_EQ(mroce_cc_window(&cc, &p, min_rtt, 100000), min_term(5000));
  cc.cwnd = 100000;
  EXPECT_EQ(mroce_cc_window(&cc, &p, min_rtt, 20 * kMs), 100000u);
}

TEST_F(SrttTerm, AStandingQueueDoesNotWidenTheWindow) {
  p.hint_srtt = MROCE_Q10;
  mroce_cc_conn_set_hint(&cc, 5000);
  rate_round(50000, min_rtt);
  uint32_t w = mroce_cc_window(&cc, &p, min_rtt, 20 * kMs);
  // The same receiver with 15 ms of queue in front of it: every sample of
  // the round waited 15 ms more, and so did srtt.
  rate_round(50000, min_rtt + 15 * kMs);
  EXPECT_EQ(cc.sq, 15 * kMs);
  EXPECT_EQ(mroce_cc_window(&cc, &p, min_rtt, 35 * kMs), w);
  // One prompt sample in the round: held ACKs, not a queue.
  mroce_cc_conn_rtt(&cc, 30 * kMs);
  rate_round(50000, min_rtt);
  EXPECT_EQ(cc.sq, 0u);
  EXPECT_EQ(mroce_cc_window(&cc, &p, min_rtt, 35 * kMs), mroce_rate_bytes(500, 35 * kMs));
}

TEST_F(SrttTerm, TheHintStillCapsTheRate) {
  p.hint_srtt = MROCE_Q10;
  mroce_cc_conn_set_hint(&cc, 300);
  rate_round(50000, min_rtt);
  EXPECT_EQ(mroce_cc_window(&cc, &p, min_rtt, 20 * kMs), mroce_rate_bytes(300, 20 * kMs));
}

TEST_F(SrttTerm, ALateRoundLowersTheRateByAQuarterAtMost) {
  p.hint_srtt = MROCE_Q10;
  rate_round(50000, min_rtt);
  EXPECT_EQ(cc.dlv, 400u);
  rate_round(10000, min_rtt);  // its ACKs were held: 80 Mbit/s
  EXPECT_EQ(cc.dlv, 300u);
  rate_round(100000, min_rtt);  // ... and came in this one
  EXPECT_EQ(cc.dlv, 800u);
  // A round with one sample keeps the standing queue it had.
  rate_round(50000, min_rtt + 2 * kMs);
  mroce_cc_conn_rtt(&cc, min_rtt);
  now += kRound;
  mroce_cc_conn_on_ack(&cc, &p, kMss, 50000, 12, 0, now, kRound, min_rtt);
  EXPECT_EQ(cc.sq, 2 * kMs);
}

// Off, rounds keep no delivered rate (no division per round on the ACK
// path); turned on, the term starts from the next round's rate, not from
// one measured before it was turned off.
TEST_F(SrttTerm, OffKeepsNoRateAndOnStartsAfreshAfterARound) {
  p.hint_srtt = MROCE_Q10;
  mroce_cc_conn_set_hint(&cc, 5000);
  rate_round(100000, min_rtt);
  EXPECT_EQ(cc.dlv, 800u);
  p.hint_srtt = 0;
  rate_round(50000, min_rtt + 2 * kMs);
  EXPECT_EQ(cc.dlv, 0u);
  EXPECT_EQ(cc.sq, 0u);
  p.hint_srtt = MROCE_Q10;
  EXPECT_EQ(mroce_cc_window(&cc, &p, min_rtt, 20 * kMs), min_term(5000));
  rate_round(50000, min_rtt);
  EXPECT_EQ(cc.dlv, 400u);
  EXPECT_EQ(mroce_cc_window(&cc, &p, min_rtt, 20 * kMs), mroce_rate_bytes(500, 20 * kMs));
}

TEST_F(ConnCc, DelaySignalOffByDefault) {
  round(10, 0);
  round(10, 1);  // leave slow start
  uint32_t w = cc.cwnd;
  delayed_round(10, 10 * min_rtt);
  EXPECT_EQ(cc.cwnd, w + kMss);
  EXPECT_EQ(cc.dcc_cuts, 0u);
}

TEST_F(ConnCc, StandingQueueCutsByExcessDelayOncePerRound) {
  p.dcc_target = 20000;
  round(10, 0);
  round(10, 1);
  uint32_t w = cc.cwnd;
  // Smallest sample 150 us over a 50 us base: 80 us beyond the target,
  // cut by beta x 80/150 (< max_mdf).
  delayed_round(10, 150000);
  uint64_t f = uint64_t(80000) * p.dcc_beta / 150000;
  EXPECT_EQ(cc.cwnd, w - uint32_t(uint64_t(w) * f / MROCE_Q10));
  EXPECT_EQ(cc.ssthresh, cc.cwnd);
  EXPECT_EQ(cc.dcc_cuts, 1u);
  // Within the target: additive increase again.
  w = cc.cwnd;
  delayed_round(10, min_rtt + 10000);
  EXPECT_EQ(cc.cwnd, w + kMss);
}

TEST_F(ConnCc, OnePromptSampleClearsTheRound) {
  // Jitter: most samples late, one on time; the round's minimum is on time.
  p.dcc_target = 20000;
  round(10, 0);
  round(10, 1);
  uint32_t w = cc.cwnd;
  mroce_cc_conn_rtt(&cc, 40000000);
  mroce_cc_conn_rtt(&cc, min_rtt + 1000);
  mroce_cc_conn_rtt(&cc, 90000000);
  round(10, 0);
  EXPECT_EQ(cc.cwnd, w + kMss);
}

TEST_F(ConnCc, SpreadOutDelayIsJitterNotAQueue) {
  // Every sample late, but by amounts that vary more than the smallest
  // excess: a busy or descheduled receiver, not a standing queue.
  p.dcc_target = 20000;
  round(10, 0);
  round(10, 1);
  uint32_t w = cc.cwnd;
  mroce_cc_conn_rtt(&cc, min_rtt + 100000);
  mroce_cc_conn_rtt(&cc, min_rtt + 400000);
  round(10, 0);
  EXPECT_EQ(cc.cwnd, w + kMss);
  // A single sample tells nothing about the spread: no cut either.
  w = cc.cwnd;
  mroce_cc_conn_rtt(&cc, min_rtt + 400000);
  round(10, 0);
  EXPECT_EQ(cc.cwnd, w + kMss);
  EXPECT_EQ(cc.dcc_cuts, 0u);
}

TEST_F(ConnCc, DelayCutIsBoundedByMaxMdfAndFloor) {
  p.dcc_target = 20000;
  cc.cwnd = 4 << 20;
  cc.ssthresh = cc.cwnd;
  round(10, 0);
  delayed_round(10, 100 * min_rtt);  // huge excess: max_mdf
  EXPECT_EQ(cc.cwnd, (4u << 20) - uint32_t((uint64_t(4) << 20) * p.dcc_max_mdf / MROCE_Q10));
  for (int i = 0; i < 50; i++) {
    delayed_round(10, 100 * min_rtt);
    // Persistent jitter: held at the floor, never below it.
    EXPECT_GE(cc.cwnd, p.dcc_floor);
  }
  EXPECT_LE(cc.cwnd, p.dcc_floor + kMss);
  // Below the floor (ECN cut it) the delay rule neither cuts nor holds it.
  cc.cwnd = p.min_cwnd;
  cc.ssthresh = cc.cwnd;
  delayed_round(10, 100 * min_rtt);
  EXPECT_EQ(cc.cwnd, p.min_cwnd + kMss);
}
