// SPDX-License-Identifier: GPL-2.0
// Two endpoints over the core with an impaired network in between: the
// end-to-end properties of the transport (issue 3 "property tests").
#include <gtest/gtest.h>

#include "loop_harness.h"

namespace {

using mt::Loop;

mroce_params params() {
  mroce_params p;
  mroce_params_default(&p);
  // Fabric-like timers so simulated runs stay short.
  p.min_rto = 200000;
  p.init_rto = 1000000;
  p.min_pto = 50000;
  p.ack_delay = 10000;
  p.hs_timeout = 1000000;
  return p;
}

mt::EndpointCfg ep(uint32_t id) {
  mt::EndpointCfg c;
  c.conn_id = id;
  return c;
}

// Posts `n` random requests per stream in both directions: WRITE, SEND,
// READ and FETCH_ADD. Returns the payload bytes posted.
uint64_t post_random(Loop &loop, mt::Rng &rng, int n, uint32_t max_len) {
  uint64_t bytes = 0;
  for (int from = 0; from < 2; from++) {
    auto &e = loop.ep(from);
    for (uint32_t s = 0; s < e.cfg.streams; s++) {
      for (int m = 0; m < n; m++) {
        uint32_t len = rng.chance(0.1) ? 0 : static_cast<uint32_t>(rng.range(1, max_len));
        int kind = static_cast<int>(rng.range(0, 99));
        if (kind < 35) {
          e.post(s, mt::write_msg(mt::pattern(from, s, m, len)));
        } else if (kind < 70) {
          e.post(s, mt::send_msg(mt::pattern(from, s, m, len)));
        } else if (kind < 90) {
          len = std::min(len, mt::kRegionSize);
          uint32_t off = static_cast<uint32_t>(rng.range(0, mt::kRegionSize - len));
          e.post(s, mt::read_msg(off, len));
        } else {
          e.post(s, mt::fetch_add_msg(rng.range(1, 1000)));
        }
        bytes += len;
      }
    }
  }
  return bytes;
}

bool all_done(Loop &loop) {
  return loop.ep(0).all_sent_completed() && loop.ep(1).all_sent_completed() &&
         loop.ep(1).all_received_completed(loop.ep(0)) &&
         loop.ep(0).all_received_completed(loop.ep(1));
}

// Every chunk placed exactly once, every byte where it belongs, every
// message completed in order on both sides, no connection failure.
void verify(Loop &loop, uint64_t seed) {
  for (int to = 0; to < 2; to++) {
    EXPECT_EQ(loop.ep(to).verify_from(loop.ep(1 - to)), "") << "seed " << seed;
    EXPECT_EQ(loop.ep(to).st.retry_exhausted, 0u) << "seed " << seed;
    EXPECT_EQ(loop.ep(to).st.bad_packets, 0u) << "seed " << seed;
  }
}

TEST(Loop, HandshakeEstablishesBothEnds) {
  mroce_params p = params();
  mt::NetCfg net;
  Loop loop(net, &p, ep(11), ep(22), 1);
  loop.ep(0).connect(loop.now());
  ASSERT_TRUE(loop.run([&] { return mroce_conn_established(&loop.ep(0).conn) &&
                                    mroce_conn_established(&loop.ep(1).conn); },
                       100000000));
  EXPECT_EQ(loop.ep(0).conn.hs.remote.id, 22u);
  EXPECT_EQ(loop.ep(1).conn.hs.remote.id, 11u);
  EXPECT_EQ(loop.ep(0).conn.n_paths, 8);
}

TEST(Loop, LosslessTransferDeliversEverything) {
  mroce_params p = params();
  mt::NetCfg net;
  Loop loop(net, &p, ep(11), ep(22), 2);
  loop.ep(0).connect(loop.now());
  mt::Rng rng(2);
  post_random(loop, rng, 20, 20000);
  ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 5000000000ull));
  verify(loop, 2);
  EXPECT_EQ(loop.ep(0).st.retransmits, 0u);
  EXPECT_EQ(loop.ep(0).conn.stats.lost_pkts, 0u);
}

}  // namespace

namespace {

mt::NetCfg chaos_net(mt::Rng &rng, int links) {
  mt::NetCfg net;
  net.links.resize(links);
  double loss = rng.range(0, 100) / 1000.0;  // 0..10 % on every link
  for (auto &l : net.links) {
    l.delay_ns = rng.range(5000, 40000);
    l.loss = loss;
    l.dup = 0.02;
    l.reorder = 0.05;
    l.ce = rng.chance(0.5) ? 0.05 : 0;
  }
  net.jitter_ns = rng.range(0, 10000);
  return net;
}

TEST(LoopProperty, EveryMessageExactlyOnceUnderLossDuplicationReordering) {
  uint64_t base = mt::test_seed(0x100b);
  uint64_t retx = 0, dups = 0, ptos = 0;
  for (uint64_t i = 0; i < 12; i++) {
    uint64_t seed = base + i;
    mt::Rng rng(seed);
    mroce_params p = params();
    mt::EndpointCfg a = ep(0x11), b = ep(0x22);
    a.streams = b.streams = static_cast<uint32_t>(rng.range(1, 4));
    a.mtu = b.mtu = static_cast<uint16_t>(rng.chance(0.5) ? 1500 : 4096);
    Loop loop(chaos_net(rng, static_cast<int>(rng.range(2, 8))), &p, a, b, seed);
    loop.ep(0).connect(loop.now());
    post_random(loop, rng, 15, 30000);
    ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 30000000000ull)) << "seed " << seed;
    verify(loop, seed);
    for (int e = 0; e < 2; e++) {
      retx += loop.ep(e).st.retransmits;
      dups += loop.ep(e).st.stream_dups;
      ptos += loop.ep(e).conn.stats.ptos;
    }
  }
  // The runs must actually have exercised recovery and de-duplication.
  EXPECT_GT(retx, 100u);
  EXPECT_GT(dups, 10u);
  EXPECT_GT(ptos, 0u);
}

// mroce_conn_next_deadline() caches each path's deadline and recomputes
// only the paths a call touched: after every delivery and timer of random
// runs (loss, duplication, reordering, a black-holed link: PTOs, RTOs,
// silence, overdue packets, re-keys) it must equal a full scan. The
// harness compares the two at each step (Endpoint::check_deadline()).
TEST(LoopProperty, CachedDeadlineEqualsAFullScanAfterEveryEvent) {
  uint64_t base = mt::test_seed(0xdead);
  uint64_t checks = 0, mismatches = 0, rtos = 0, ptos = 0, silent = 0, overdue = 0, rekeys = 0;
  for (uint64_t i = 0; i < 10; i++) {
    uint64_t seed = base + i;
    mt::Rng rng(seed);
    mroce_params p = params();
    p.reo_wnd = rng.chance(0.5) ? static_cast<uint16_t>(rng.range(64, MROCE_Q10)) : 0;
    p.rto_probe = rng.chance(0.5) ? 1 : 0;
    p.silent_rtts = static_cast<uint8_t>(rng.range(0, 6));
    Loop loop(chaos_net(rng, static_cast<int>(rng.range(2, 8))), &p, ep(0x31), ep(0x32), seed);
    loop.ep(0).connect(loop.now());
    ASSERT_TRUE(loop.run([&] { return mroce_conn_established(&loop.ep(0).conn); }, 100000000))
        << "seed " << seed;
    if (rng.chance(0.5)) loop.net().links[0].blackhole = true;
    post_random(loop, rng, 10, 30000);
    ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 30000000000ull)) << "seed " << seed;
    for (int e = 0; e < 2; e++) {
      const auto &x = loop.ep(e);
      checks += x.st.deadline_checks;
      mismatches += x.st.deadline_mismatches;
      rtos += x.conn.stats.rtos;
      ptos += x.conn.stats.ptos;
      silent += x.conn.stats.silent;
      overdue += x.conn.stats.overdue;
      rekeys += x.conn.stats.rekeys;
    }
  }
  EXPECT_EQ(mismatches, 0u);
  // The runs went through every kind of deadline the cache keeps.
  EXPECT_GT(checks, 10000u);
  EXPECT_GT(ptos, 0u);
  EXPECT_GT(rtos + silent, 0u);
  EXPECT_GT(overdue, 0u);
  EXPECT_GT(rekeys, 0u);
}

TEST(LoopProperty, SameSeedSameRun) {
  auto run = [](uint64_t seed) {
    mt::Rng rng(seed);
    mroce_params p = params();
    Loop loop(chaos_net(rng, 4), &p, ep(1), ep(2), seed);
    loop.ep(0).connect(loop.now());
    post_random(loop, rng, 10, 20000);
    loop.run([&] { return all_done(loop); }, 30000000000ull);
    return std::vector<uint64_t>{loop.now(), loop.delivered, loop.dropped,
                                 loop.ep(0).conn.stats.tx_pkts, loop.ep(1).conn.stats.acks_tx,
                                 loop.ep(0).st.retransmits};
  };
  uint64_t seed = mt::test_seed(77);
  EXPECT_EQ(run(seed), run(seed));
  EXPECT_NE(run(seed), run(seed + 1));
}

TEST(Loop, TailLossIsRecoveredByProbe) {
  mroce_params p = params();
  mt::NetCfg net;
  int dropped = 0;
  // Drop the last chunk of the one message, and everything behind it for a
  // while: nothing later on its path can reveal the gap, only a probe.
  net.drop = [&](int from, const std::vector<uint8_t> &b) {
    mroce_pkt pkt;
    if (from != 0 || mroce_decode(b.data(), b.size(), &pkt) != MROCE_WIRE_OK) return false;
    if (pkt.c.opcode == MROCE_OP_WRITE && (pkt.c.flags & MROCE_F_EOM) && dropped < 2) {
      dropped++;
      return true;
    }
    return false;
  };
  Loop loop(net, &p, ep(1), ep(2), 9);
  loop.ep(0).connect(loop.now());
  loop.ep(0).post(0, mt::write_msg(mt::pattern(0, 0, 0, 50000)));
  ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 10000000000ull));
  verify(loop, 9);
  EXPECT_EQ(dropped, 2);
  EXPECT_GE(loop.ep(0).conn.stats.ptos + loop.ep(0).conn.stats.rtos, 1u);
  EXPECT_GE(loop.ep(0).conn.stats.probes, 1u);
  EXPECT_EQ(loop.ep(0).st.retransmits, 2u);
}

TEST(Loop, TailLossWithoutProbesFallsBackToRto) {
  mroce_params p = params();
  mt::NetCfg net;
  int stage = 0;  // 0: drop the tail, 1: drop the probe after it, 2: done
  net.drop = [&](int from, const std::vector<uint8_t> &b) {
    mroce_pkt pkt;
    if (from != 0 || mroce_decode(b.data(), b.size(), &pkt) != MROCE_WIRE_OK) return false;
    if (stage == 0 && pkt.c.opcode == MROCE_OP_WRITE && (pkt.c.flags & MROCE_F_EOM)) {
      stage = 1;
      return true;
    }
    if (stage == 1 && pkt.c.opcode == MROCE_OP_PROBE) {
      stage = 2;
      return true;
    }
    return false;
  };
  Loop loop(net, &p, ep(1), ep(2), 10);
  loop.ep(0).connect(loop.now());
  loop.ep(0).post(0, mt::write_msg(mt::pattern(0, 0, 0, 9000)));
  ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 10000000000ull));
  verify(loop, 10);
  EXPECT_EQ(stage, 2);
  EXPECT_EQ(loop.ep(0).conn.stats.rtos, 1u);
  EXPECT_EQ(loop.ep(0).conn.stats.rekeys, 1u);  // the RTO re-keys that path
  EXPECT_EQ(loop.ep(0).st.retransmits, 1u);
}

// A jittery host and uniform random loss on every path: nothing tells one
// path from another, so statistics must re-key none of them (re-keys cost a
// drain, a probe round trip and the receiver's NAKs). RTOs may still re-key.
TEST(Loop, UniformLossAndJitterNeverRekeyByStatistics) {
  for (uint64_t seed : {21, 22, 23}) {
    mroce_params p = params();
    mt::NetCfg net;
    net.links.resize(8);
    for (auto &l : net.links) l.loss = 0.02;
    net.jitter_ns = 400000;  // 20x the one-way delay: the RTT term saturates
    Loop loop(net, &p, ep(1), ep(2), seed);
    loop.ep(0).connect(loop.now());
    for (int m = 0; m < 60; m++)
      loop.ep(0).post(m % 2, mt::write_msg(mt::pattern(0, m % 2, m / 2, 64000)));
    ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 60000000000ull)) << "seed " << seed;
    verify(loop, seed);
    const auto &st = loop.ep(0).st;
    EXPECT_EQ(st.rekeys_why[MROCE_HEV_DRAINED] + st.rekeys_why[MROCE_HEV_BAD], 0u)
        << "seed " << seed << ": " << loop.ep(0).conn.stats.rekeys << " re-keys, "
        << loop.ep(0).conn.stats.rtos << " RTOs";
  }
}

TEST(Loop, BlackholedPathIsRekeyedAndTransferCompletes) {
  mroce_params p = params();
  mt::NetCfg net;
  net.links.resize(8);
  Loop loop(net, &p, ep(1), ep(2), 11);
  loop.ep(0).connect(loop.now());
  ASSERT_TRUE(loop.run([&] { return mroce_conn_established(&loop.ep(0).conn); }, 100000000));
  // Black-hole the link of path 0's current source port, mid-connection.
  int bad = loop.link_of(loop.ep(0).conn.paths[0].sport);
  loop.net().links[bad].blackhole = true;
  for (int m = 0; m < 40; m++)
    loop.ep(0).post(m % 2, mt::write_msg(mt::pattern(0, m % 2, m / 2, 40000)));
  ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 20000000000ull));
  verify(loop, 11);
  const mroce_conn &c = loop.ep(0).conn;
  EXPECT_GE(c.stats.rekeys, 1u);
  // Its siblings were acknowledged: silence, not the RTO, expires it.
  EXPECT_GE(c.stats.silent, 1u);
  for (int i = 0; i < c.n_paths; i++) {
    if (c.paths[i].health.state == MROCE_PATH_ACTIVE) {
      EXPECT_NE(loop.link_of(c.paths[i].sport), bad) << "active path " << i << " on the black hole";
    }
  }
}

TEST(Loop, RnrRefusalsAreRetriedAndDeliveredOnce) {
  mroce_params p = params();
  mt::NetCfg net;
  mt::EndpointCfg b = ep(2);
  b.rq_depth = 2;  // only two receive WQEs posted at first
  Loop loop(net, &p, ep(1), b, 12);
  loop.ep(0).connect(loop.now());
  for (int m = 0; m < 6; m++)
    loop.ep(0).post(0, mt::send_msg(mt::pattern(0, 0, m, 3000)));
  // Runs a while with the receiver short of WQEs: RNR NAKs, no progress.
  loop.run([] { return false; }, 2000000);
  EXPECT_GT(loop.ep(1).st.naks_tx, 0u);
  EXPECT_EQ(loop.ep(1).rx[0].completed.size(), 2u);
  loop.ep(1).cfg.rq_depth = 100;  // the application posts more
  ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 10000000000ull));
  verify(loop, 12);
  // RNR is not loss: the refused PSNs were resolved by NAK, not declared lost.
  EXPECT_EQ(loop.ep(0).conn.stats.lost_pkts, 0u);
  EXPECT_EQ(loop.ep(0).st.retry_exhausted, 0u);
}

TEST(Loop, EcnMarksShrinkTheWindowAndDataStillArrives) {
  mroce_params p = params();
  mt::NetCfg net;
  for (auto &l : net.links) l.ce = 0.3;
  Loop loop(net, &p, ep(1), ep(2), 13);
  loop.ep(0).connect(loop.now());
  for (int m = 0; m < 30; m++)
    loop.ep(0).post(0, mt::write_msg(mt::pattern(0, 0, m, 60000)));
  ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 20000000000ull));
  verify(loop, 13);
  EXPECT_LT(loop.ep(0).conn.cc.cwnd, p.init_cwnd);
  EXPECT_GT(loop.ep(0).conn.cc.alpha, 0);
  EXPECT_GT(loop.ep(1).conn.stats.rx_ce, 0u);
}

TEST(Loop, RetryExhaustionIsReportedWhenThePeerIsUnreachable) {
  mroce_params p = params();
  mt::NetCfg net;
  Loop loop(net, &p, ep(1), ep(2), 14);
  loop.ep(0).connect(loop.now());
  ASSERT_TRUE(loop.run([&] { return mroce_conn_established(&loop.ep(0).conn); }, 100000000));
  for (auto &l : loop.net().links) l.blackhole = true;
  loop.ep(0).post(0, mt::write_msg(mt::pattern(0, 0, 0, 10000)));
  uint64_t start = loop.now();
  ASSERT_TRUE(loop.run([&] { return loop.ep(0).st.retry_exhausted > 0; }, 60000000000ull));
  // retry_limit + 1 doubling rounds of the connection RTO, from the RTT
  // the handshake measured (no data was ever acknowledged).
  const mroce_rtt &rtt = loop.ep(0).conn.rtt;
  EXPECT_GT(rtt.srtt, 0u);
  uint64_t bound = 0;
  for (int i = 0; i <= p.retry_limit; i++) bound += mroce_rtt_rto(&rtt, &p, i);
  EXPECT_GE(loop.now() - start, bound);
  EXPECT_LE(loop.now() - start, bound + 2 * p.init_rto);
  EXPECT_FALSE(loop.ep(0).all_sent_completed());
}

}  // namespace

namespace {

// READ and ATOMIC responses are the responder's own reliable data; a
// retransmitted or duplicated request is dropped by the stream window, so
// every FETCH_ADD executes exactly once with no replay cache.
TEST(Loop, ReadsAndAtomicsExecuteExactlyOnceUnderDuplicationAndLoss) {
  mroce_params p = params();
  mt::NetCfg net;
  for (auto &l : net.links) {
    l.loss = 0.05;
    l.dup = 0.2;
    l.reorder = 0.1;
  }
  Loop loop(net, &p, ep(1), ep(2), 21);
  loop.ep(0).connect(loop.now());
  uint64_t total = 0;
  std::vector<std::vector<uint8_t>> written;
  for (int m = 0; m < 60; m++) {
    // A WRITE into the region, then a READ of the same bytes: placement is
    // out of order, but the READ executes only when released in stream
    // order, so it must see the WRITE.
    written.push_back(mt::pattern(0, 0, 1000 + m, 700));
    loop.ep(0).post(0, mt::region_write_msg(m * 1000, written.back()));
    loop.ep(0).post(0, mt::read_msg(m * 1000, 700));
    loop.ep(0).post(0, mt::fetch_add_msg(m + 1));
    total += m + 1;
  }
  ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 20000000000ull));
  verify(loop, 21);  // READ results equal the region, originals are prefix sums
  EXPECT_EQ(loop.ep(1).rx[0].counter, total);
  EXPECT_EQ(loop.ep(1).st.executed, 120u);
  EXPECT_GT(loop.ep(1).st.stream_dups, 0u);  // duplicates did arrive
  for (int m = 0; m < 60; m++) {
    std::vector<uint8_t> now(loop.ep(1).rx[0].region.begin() + m * 1000,
                             loop.ep(1).rx[0].region.begin() + m * 1000 + 700);
    ASSERT_EQ(now, written[m]) << m;
  }
}

}  // namespace

namespace {

TEST(Loop, LongRnrDoesNotExhaustTheConnectionRetries) {
  mroce_params p = params();
  mt::NetCfg net;
  mt::EndpointCfg b = ep(2);
  b.rq_depth = 0;  // no receive posted at all for a long time
  Loop loop(net, &p, ep(1), b, 31);
  loop.ep(0).connect(loop.now());
  loop.ep(0).post(0, mt::send_msg(mt::pattern(0, 0, 0, 2000)));
  // Far longer than retry_limit + 1 doubling rounds of the RTO.
  uint64_t budget = 0;
  for (int i = 0; i <= p.retry_limit; i++) budget += (uint64_t)p.init_rto << i;
  loop.run([] { return false; }, 2 * budget);
  EXPECT_EQ(loop.ep(0).st.retry_exhausted, 0u);
  EXPECT_GT(loop.ep(1).st.naks_tx, 100u);
  loop.ep(1).cfg.rq_depth = 1;
  ASSERT_TRUE(loop.run([&] { return all_done(loop); }, 1000000000ull));
  verify(loop, 31);
}

}  // namespace
