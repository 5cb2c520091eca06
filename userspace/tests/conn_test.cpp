// SPDX-License-Identifier: GPL-2.0
// The connection engine driven directly through its API, one step at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "test_util.h"

extern "C" {
#include "mroce_conn.h"
}

namespace {

struct Side {
  mroce_conn c{};
  std::vector<mroce_path> paths = std::vector<mroce_path>(8);
  mroce_conn_ops ops{};
  std::vector<std::pair<uint64_t, uint8_t>> acked, lost;
  std::vector<std::pair<uint32_t, uint8_t>> lost_why;  // path PSN, enum mroce_loss_why
  std::vector<std::tuple<uint8_t, uint8_t, uint8_t>> transitions;
  // path, old generation, old source port, health event
  std::vector<std::tuple<uint8_t, uint8_t, uint16_t, uint8_t>> rekeys;
  std::vector<uint8_t> cc;  // enum mroce_cc_why, one per reported change
  bool owed = false;        // what ops.owed answers
};

void on_acked(void *ctx, uint64_t cookie, uint32_t, uint8_t path) {
  static_cast<Side *>(ctx)->acked.push_back({cookie, path});
}
void on_lost(void *ctx, uint64_t cookie, uint32_t, uint8_t path, uint32_t psn, uint8_t why) {
  static_cast<Side *>(ctx)->lost.push_back({cookie, path});
  static_cast<Side *>(ctx)->lost_why.push_back({psn, why});
}
void on_rekey(void *ctx, uint8_t path, uint8_t gen, uint16_t sport, uint8_t why) {
  static_cast<Side *>(ctx)->rekeys.push_back({path, gen, sport, why});
}
bool on_owed(void *ctx) { return static_cast<Side *>(ctx)->owed; }
void on_cc(void *ctx, uint8_t why) { static_cast<Side *>(ctx)->cc.push_back(why); }
void on_state(void *ctx, uint8_t path, uint8_t from, uint8_t to) {
  static_cast<Side *>(ctx)->transitions.push_back({path, from, to});
}

std::vector<uint8_t> encode(const mroce_pkt &pkt, uint32_t payload = 0) {
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + payload, 0xab);
  mroce_pkt p = pkt;
  p.payload_len = payload;
  uint32_t n = mroce_encode(&p, b.data(), MROCE_MAX_HDR_LEN);
  EXPECT_GT(n, 0u);
  b.resize(n + payload);
  return b;
}

// The decoded packet points into `b` (payload, ACK blocks): keep `b` alive.
mroce_pkt decode(const std::vector<uint8_t> &b) {
  mroce_pkt p;
  EXPECT_EQ(mroce_decode(b.data(), b.size(), &p), MROCE_WIRE_OK);
  return p;
}

mroce_pkt decode(const uint8_t *b, uint32_t n) {
  mroce_pkt p;
  EXPECT_EQ(mroce_decode(b, n, &p), MROCE_WIRE_OK);
  return p;
}

class Conn : public ::testing::Test {
 protected:
  void SetUp() override {
    mroce_params_default(&p);
    init(a, 0xa, 1);
    init(b, 0xb, 2);
  }
  // One end with room for `max_paths` paths (the handshake uses p.n_paths).
  void init(Side &s, uint32_t id, uint64_t seed, uint8_t max_paths = 8) {
    s.ops = {on_acked, on_lost, on_state, on_rekey, on_cc, nullptr, on_acked, on_owed};
    s.paths.resize(max_paths);
    mroce_conn_cfg cfg{};
    cfg.prm = &p;
    cfg.ops = &s.ops;
    cfg.ctx = &s;
    cfg.paths = s.paths.data();
    cfg.max_paths = max_paths;
    cfg.local_id = id;
    cfg.nonce = seed * 1000 + 7;
    cfg.seed = seed;
    cfg.mtu = 1500;
    mroce_conn_init(&s.c, &cfg);
  }
  // Both ends rebuilt for `n` paths, offered and accepted (not yet connected).
  void init_paths(uint8_t n) {
    p.n_paths = n;
    init(a, 0xa, 1, n);
    init(b, 0xb, 2, n);
  }
  void establish() {
    mroce_pkt req, rep;
    ASSERT_EQ(mroce_conn_connect(&a.c, now), MROCE_HS_SEND_REQ);
    mroce_conn_build_hs(&a.c, MROCE_OP_CONN_REQ, 0, &req);
    ASSERT_EQ(mroce_conn_on_hs(&b.c, &req, now), MROCE_HS_SEND_REP | MROCE_HS_UP);
    mroce_conn_build_hs(&b.c, MROCE_OP_CONN_REP, 0, &rep);
    ASSERT_EQ(mroce_conn_on_hs(&a.c, &rep, now), MROCE_HS_UP);
  }
  // The overdue-rule tests: the rule on (a quarter of srtt), a connection
  // up and one packet acked on path 0 after 100 ms, so srtt is 100 ms.
  // Returns that packet's bytes, for the caller to reuse as a buffer.
  std::vector<uint8_t> overdue_setup() {
    p.reo_wnd = MROCE_Q10 / 4;
    establish();
    std::vector<uint8_t> d = send(a, 1, 1000, 0);
    now += 100000;
    deliver(b, d);
    ack(b, a);
    return d;
  }
  // Sends one data packet from `s`; returns its bytes (nothing is delivered).
  // An idle paced connection starts at a random point of its first packet
  // interval: the clock waits that out, as a caller would.
  std::vector<uint8_t> send(Side &s, uint64_t cookie, uint32_t len = 1000, int pref = -1,
                            mroce_tx_slot *out = nullptr) {
    mroce_tx_slot slot;
    if (mroce_conn_tx_reserve(&s.c, now, len, pref, &slot) == MROCE_TX_PACED && !s.c.inflight)
      now = slot.depart;
    EXPECT_EQ(mroce_conn_tx_reserve(&s.c, now, len, pref, &slot), MROCE_TX_OK);
    mroce_conn_tx_commit(&s.c, &slot, cookie, now);
    mroce_pkt pkt{};
    pkt.c.opcode = MROCE_OP_WRITE;
    pkt.c.flags = MROCE_F_SOM | MROCE_F_EOM;
    mroce_conn_fill(&s.c, &slot, &pkt);
    pkt.u.d.stream_id = 0x100;
    pkt.u.d.length = len;
    if (out) *out = slot;
    return encode(pkt, len);
  }
  // Delivers a data packet to `s` and accepts it; returns whether an ACK is due.
  // a's READ_REQ reaches b after `delay` ns and b acknowledges it: nothing
  // of a's is in flight, but a is owed the response (docs §5.5).
  void owed_read_acked(uint64_t delay) {
    establish();
    a.owed = true;
    mroce_conn_owe(&a.c);
    auto req = send(a, 1, 100, 0);
    now += delay;
    deliver(b, req);
    ack(b, a);
  }

  // b sends a 1000 B READ_RESP chunk of stream 0x100 now; it is new on its
  // path at a, which accepts it (progress is the caller's: §5.5 counts only
  // data new to its stream). False: b had no room to send.
  bool resp_reaches_a(uint64_t cookie) {
    mroce_tx_slot slot;
    if (mroce_conn_tx_reserve(&b.c, now, 1000, -1, &slot) != MROCE_TX_OK) return false;
    mroce_conn_tx_commit(&b.c, &slot, cookie, now);
    mroce_pkt pkt{};
    pkt.c.opcode = MROCE_OP_READ_RESP;
    pkt.c.flags = MROCE_F_SOM;
    mroce_conn_fill(&b.c, &slot, &pkt);
    pkt.u.d.stream_id = 0x100;
    pkt.u.d.length = 1000;
    mroce_pkt got = decode(encode(pkt, 1000));
    if (mroce_conn_rx_check(&a.c, &got) != MROCE_RX_NEW) {
      ADD_FAILURE() << "a READ_RESP chunk not new on its path";
      return false;
    }
    mroce_conn_rx_accept(&a.c, &got, false, now);
    return true;
  }

  bool deliver(Side &s, const std::vector<uint8_t> &bytes, bool ce = false) {
    mroce_pkt pkt = decode(bytes);
    EXPECT_EQ(mroce_conn_rx_check(&s.c, &pkt), MROCE_RX_NEW);
    bool due = mroce_conn_rx_accept(&s.c, &pkt, ce, now);
    mroce_conn_rx_progress(&s.c, mroce_op_is_resp(pkt.c.opcode), now);  // new to its stream
    return due;
  }
  // Takes the ACK `from` builds now and feeds it to `to`.
  mroce_ack_res ack(Side &from, Side &to) {
    uint8_t buf[MROCE_MAX_HDR_LEN];
    uint32_t n = mroce_conn_build_ack(&from.c, now, buf, sizeof(buf));
    EXPECT_GT(n, 0u);
    mroce_pkt pkt = decode(buf, n);
    mroce_ack_res res;
    mroce_conn_on_ack(&to.c, &pkt, now, &res);
    return res;
  }
  // The ACK `from` builds now, as bytes still on their way.
  std::vector<uint8_t> take_ack(Side &from) {
    std::vector<uint8_t> buf(MROCE_MAX_HDR_LEN);
    uint32_t n = mroce_conn_build_ack(&from.c, now, buf.data(), buf.size());
    EXPECT_GT(n, 0u);
    buf.resize(n);
    return buf;
  }
  mroce_ack_res feed_ack(Side &to, const std::vector<uint8_t> &bytes) {
    mroce_pkt pkt = decode(bytes);
    mroce_ack_res res;
    mroce_conn_on_ack(&to.c, &pkt, now, &res);
    return res;
  }
  // `s`'s PROBE on `path`, as it leaves on the wire.
  std::vector<uint8_t> probe_pkt(Side &s, uint8_t path, uint8_t flags = 0) {
    mroce_tx_slot slot;
    EXPECT_TRUE(mroce_conn_probe(&s.c, path, now, &slot));
    mroce_pkt pr{};
    pr.c.opcode = MROCE_OP_PROBE;
    pr.c.flags = flags;
    mroce_conn_fill(&s.c, &slot, &pr);
    return encode(pr);
  }
  // Two 1000 B packets (cookies 1, 2) on `path` that reached b, not yet acked.
  void flight_arrived(uint8_t path) {
    auto d1 = send(a, 1, 1000, path);
    auto d2 = send(a, 2, 1000, path);
    deliver(b, d1);
    deliver(b, d2);
  }
  // `s` re-keyed `path`: its PROBE reaches the peer, whose ACK brings it back.
  void answer_probe(Side &s, Side &peer, uint8_t path) {
    deliver(peer, probe_pkt(s, path));
    ack(peer, s);
    ASSERT_EQ(s.paths[path].health.state, MROCE_PATH_ACTIVE);
  }
  // a's timer fires at `at` and sends a PROBE on `path` (nothing else); the
  // PROBE reaches b 100 us later and b's ACK comes back.
  void timer_probe_answered(uint64_t at, uint8_t path) {
    now = at;
    mroce_timer_res res;
    mroce_conn_on_timer(&a.c, now, &res);
    ASSERT_EQ(res.probe_mask, 1ull << path);
    auto pr = probe_pkt(a, path);
    now += 100000;
    deliver(b, pr);
    ack(b, a);
  }
  mroce_params p;
  Side a, b;
  uint64_t now = 1000000000;
};

TEST_F(Conn, NothingMovesBeforeTheHandshake) {
  mroce_tx_slot slot;
  EXPECT_EQ(mroce_conn_tx_reserve(&a.c, now, 100, -1, &slot), MROCE_TX_NOTCONN);
  EXPECT_FALSE(mroce_conn_probe(&a.c, 0, now, &slot));
  mroce_pkt pkt{};
  pkt.c.opcode = MROCE_OP_WRITE;
  EXPECT_EQ(mroce_conn_rx_check(&a.c, &pkt), MROCE_RX_NOTCONN);
  EXPECT_FALSE(mroce_conn_established(&a.c));
}

TEST_F(Conn, EstablishmentNegotiatesPathsAndDistinctSourcePorts) {
  establish();
  EXPECT_EQ(a.c.n_paths, 8);
  EXPECT_EQ(a.c.mtu, 1500);
  EXPECT_EQ(a.c.mss, 1500u - 56);
  std::set<uint16_t> ports;
  for (int i = 0; i < a.c.n_paths; i++) {
    EXPECT_GE(a.paths[i].sport, MROCE_SPORT_MIN);
    ports.insert(a.paths[i].sport);
  }
  EXPECT_EQ(ports.size(), 8u);
}

TEST_F(Conn, HandshakeRoundTripSeedsTheRttEstimate) {
  mroce_pkt req, rep;
  ASSERT_EQ(mroce_conn_connect(&a.c, now), MROCE_HS_SEND_REQ);
  mroce_conn_build_hs(&a.c, MROCE_OP_CONN_REQ, 0, &req);
  now += 20000;
  ASSERT_EQ(mroce_conn_on_hs(&b.c, &req, now), MROCE_HS_SEND_REP | MROCE_HS_UP);
  EXPECT_EQ(b.c.rtt.srtt, 0u);  // the passive side timed nothing
  mroce_conn_build_hs(&b.c, MROCE_OP_CONN_REP, 0, &rep);
  now += 20000;
  ASSERT_EQ(mroce_conn_on_hs(&a.c, &rep, now), MROCE_HS_UP);
  EXPECT_EQ(a.c.rtt.srtt, 40000u);
  // A first flight that is lost whole gets its tail probe RTTs later, not
  // after init_rto / 2.
  mroce_tx_slot s;
  send(a, 1, 1000, -1, &s);
  EXPECT_EQ(a.c.paths[s.path].pto_at, now + mroce_rtt_pto(&a.c.rtt, &p));
  EXPECT_LT(a.c.paths[s.path].pto_at, now + p.init_rto / 2);
}

TEST_F(Conn, RetransmittedConnReqGivesNoRttSample) {
  mroce_pkt req, rep;
  ASSERT_EQ(mroce_conn_connect(&a.c, now), MROCE_HS_SEND_REQ);
  now += p.hs_timeout;
  mroce_timer_res r;
  mroce_conn_on_timer(&a.c, now, &r);
  ASSERT_EQ(r.hs, MROCE_HS_SEND_REQ);  // the first REQ was lost, or slow
  mroce_conn_build_hs(&a.c, MROCE_OP_CONN_REQ, 0, &req);
  ASSERT_EQ(mroce_conn_on_hs(&b.c, &req, now), MROCE_HS_SEND_REP | MROCE_HS_UP);
  mroce_conn_build_hs(&b.c, MROCE_OP_CONN_REP, 0, &rep);
  now += 20000;
  ASSERT_EQ(mroce_conn_on_hs(&a.c, &rep, now), MROCE_HS_UP);
  EXPECT_EQ(a.c.rtt.srtt, 0u);  // which REQ did this REP answer? unknown
}

TEST_F(Conn, CrossingRequestsTimeOnlyTheReplyToOurRequest) {
  mroce_pkt ra, rb, rep;
  ASSERT_EQ(mroce_conn_connect(&a.c, now), MROCE_HS_SEND_REQ);
  ASSERT_EQ(mroce_conn_connect(&b.c, now), MROCE_HS_SEND_REQ);
  mroce_conn_build_hs(&a.c, MROCE_OP_CONN_REQ, 0, &ra);
  mroce_conn_build_hs(&b.c, MROCE_OP_CONN_REQ, 0, &rb);
  now += 20000;
  EXPECT_TRUE(mroce_conn_on_hs(&a.c, &rb, now) & MROCE_HS_UP);
  EXPECT_EQ(a.c.rtt.srtt, 0u);  // the peer's REQ says nothing about ours
  EXPECT_TRUE(mroce_conn_on_hs(&b.c, &ra, now) & MROCE_HS_SEND_REP);
  mroce_conn_build_hs(&b.c, MROCE_OP_CONN_REP, 0, &rep);
  now += 20000;
  mroce_conn_on_hs(&a.c, &rep, now);  // answers our one REQ: a round trip
  EXPECT_EQ(a.c.rtt.srtt, 40000u);
}

TEST_F(Conn, CommitAssignsPathPsnsAndFillWritesThem) {
  establish();
  mroce_tx_slot s1, s2;
  auto b1 = send(a, 1, 1000, 3, &s1);
  auto b2 = send(a, 2, 1000, 3, &s2);
  EXPECT_EQ(s1.path, 3);
  EXPECT_EQ(s2.psn, s1.psn + 1);
  mroce_pkt pkt = decode(b2);
  EXPECT_EQ(pkt.c.dst_conn, 0xbu);
  EXPECT_EQ(pkt.c.path_id, 3);
  EXPECT_EQ(pkt.c.path_psn, s2.psn);
  EXPECT_EQ(pkt.c.floor_delta, 1);  // s1 still outstanding
  EXPECT_EQ(pkt.u.d.tx_ts, (uint32_t)now);
  EXPECT_EQ(a.c.inflight, 2000u);
  EXPECT_EQ(s1.sport, a.paths[3].sport);
}

TEST_F(Conn, AckAcknowledgesByCookieAndReleasesInflight) {
  establish();
  auto pk = send(a, 42);
  now += 500;                            // one-way delay
  EXPECT_FALSE(deliver(b, pk));          // one packet: delayed ACK
  EXPECT_FALSE(mroce_conn_ack_due(&b.c, now));
  now += p.ack_delay;
  EXPECT_TRUE(mroce_conn_ack_due(&b.c, now));
  uint8_t buf[MROCE_MAX_HDR_LEN];
  uint32_t n = mroce_conn_build_ack(&b.c, now, buf, sizeof(buf));
  now += 500;                            // the ACK's way back
  mroce_pkt pkt = decode(buf, n);
  mroce_ack_res res;
  mroce_conn_on_ack(&a.c, &pkt, now, &res);
  EXPECT_EQ(res.acked_pkts, 1u);
  EXPECT_EQ(res.acked_bytes, 1000u);
  ASSERT_EQ(a.acked.size(), 1u);
  EXPECT_EQ(a.acked[0].first, 42u);
  EXPECT_EQ(a.c.inflight, 0u);
  // RTT sample = now - echo - ack_delay: the receiver's wait is excluded.
  EXPECT_EQ(a.c.rtt.latest, 1000u);
  EXPECT_EQ(a.paths[a.acked[0].second].rtt.srtt, 1000u);
  EXPECT_FALSE(mroce_conn_ack_due(&b.c, now));
}

TEST_F(Conn, GapOnAPathDeclaresExactlyThatTransmissionLost) {
  establish();
  auto p1 = send(a, 1, 1000, 2);
  auto p2 = send(a, 2, 1000, 2);  // lost in the network
  auto p3 = send(a, 3, 1000, 2);
  (void)p2;
  deliver(b, p1);
  EXPECT_TRUE(deliver(b, p3));  // out of order on its path: ACK now
  mroce_ack_res res = ack(b, a);
  EXPECT_EQ(res.acked_pkts, 2u);
  EXPECT_EQ(res.lost_pkts, 1u);
  ASSERT_EQ(a.lost.size(), 1u);
  EXPECT_EQ(a.lost[0].first, 2u);
  EXPECT_EQ(a.lost[0].second, 2);
  EXPECT_EQ(a.lost_why[0], std::make_pair(1u, uint8_t(MROCE_LOSS_SACK)));  // path PSN 1
  // Random loss without ECN leaves the connection window alone ...
  EXPECT_EQ(a.c.cc.cwnd, p.init_cwnd + 2000);
  // ... which grew on what was acknowledged: reported as such.
  ASSERT_FALSE(a.cc.empty());
  EXPECT_EQ(a.cc.back(), MROCE_CCW_ACK);
}

TEST_F(Conn, OtherPathsProgressDoesNotMakeLoss) {
  establish();
  auto p1 = send(a, 1, 1000, 1);
  auto p2 = send(a, 2, 1000, 2);
  (void)p1;                      // slow path, not lost
  deliver(b, p2);
  mroce_conn_build_ack(&b.c, now, std::vector<uint8_t>(1024).data(), 1024);
  now += p.ack_delay;
  deliver(b, p2 = send(a, 3, 1000, 2));
  mroce_ack_res res = ack(b, a);
  EXPECT_EQ(res.lost_pkts, 0u);
  EXPECT_TRUE(a.lost.empty());
}

TEST_F(Conn, AckEveryNPacketsIsImmediate) {
  establish();
  bool due = false;
  for (int i = 0; i < p.ack_every; i++) due = deliver(b, send(a, i, 100, 0));
  EXPECT_TRUE(due);
}

TEST_F(Conn, AckRequestFlagAndProbeAreAnsweredAtOnce) {
  establish();
  EXPECT_TRUE(deliver(b, probe_pkt(a, 4, MROCE_F_AR)));
  mroce_ack_res res = ack(b, a);
  EXPECT_EQ(res.acked_pkts, 0u);  // probes are not data
  EXPECT_TRUE(a.acked.empty());
  EXPECT_EQ(a.paths[4].tx.n_out, 0);
}

TEST_F(Conn, NakResolvesTheRecordWithoutALossSignal) {
  establish();
  mroce_tx_slot s;
  auto pk = send(a, 77, 1000, 6, &s);
  mroce_nak nak{MROCE_NAK_RNR, 6, s.gen, s.psn, 0x100, 0, 0, 50};
  uint64_t cookie = 0, probes = 0;
  uint32_t len = 0;
  EXPECT_TRUE(mroce_conn_on_nak(&a.c, &nak, now, &cookie, &len, &probes));
  EXPECT_EQ(cookie, 77u);
  EXPECT_EQ(len, 1000u);
  EXPECT_EQ(a.c.inflight, 0u);
  EXPECT_FALSE(mroce_conn_on_nak(&a.c, &nak, now, &cookie, &len, &probes));  // once
  // The refused PSN is below the floor now: later packets carry that.
  mroce_tx_slot s2;
  send(a, 78, 1000, 6, &s2);
  EXPECT_EQ(s2.floor_delta, 0);
  EXPECT_TRUE(a.lost.empty());
}

TEST_F(Conn, StaleGenerationNakRekeysThePath) {
  establish();
  mroce_tx_slot s;
  send(a, 1, 1000, 2, &s);
  uint16_t old_port = a.paths[2].sport;
  mroce_nak nak{MROCE_NAK_STALE_GEN, 2, s.gen, s.psn, 0x100, 0, 0, 9};
  uint64_t cookie, probes = 0;
  uint32_t len;
  EXPECT_FALSE(mroce_conn_on_nak(&a.c, &nak, now, &cookie, &len, &probes));
  EXPECT_EQ(a.paths[2].gen, 10);
  EXPECT_NE(a.paths[2].sport, old_port);
  EXPECT_EQ(a.paths[2].health.state, MROCE_PATH_PROBING);
  EXPECT_EQ(probes, 1ull << 2);
  ASSERT_EQ(a.lost.size(), 1u);  // what the old generation had in flight
  EXPECT_EQ(a.lost_why[0].second, MROCE_LOSS_REKEY);
  ASSERT_EQ(a.rekeys.size(), 1u);
  EXPECT_EQ(a.rekeys[0], std::make_tuple(uint8_t(2), s.gen, old_port, uint8_t(MROCE_HEV_STALE)));
}

TEST_F(Conn, RtoDeclaresThePathsFlightLostAndRekeysIt) {
  establish();
  send(a, 1, 1000, 5);
  send(a, 2, 1000, 5);
  uint64_t rto = a.paths[5].rto_at;
  ASSERT_GT(rto, now);
  mroce_timer_res res;
  mroce_conn_on_timer(&a.c, rto - 1, &res);
  EXPECT_EQ(a.c.stats.rtos, 0u);
  mroce_conn_on_timer(&a.c, rto, &res);
  EXPECT_EQ(a.c.stats.rtos, 1u);
  EXPECT_EQ(a.lost.size(), 2u);
  for (auto &w : a.lost_why) EXPECT_EQ(w.second, MROCE_LOSS_RTO);
  ASSERT_EQ(a.rekeys.size(), 1u);
  EXPECT_EQ(std::get<1>(a.rekeys[0]), 0);
  EXPECT_EQ(std::get<3>(a.rekeys[0]), MROCE_HEV_RTO);
  EXPECT_EQ(a.c.inflight, 0u);
  EXPECT_EQ(a.paths[5].gen, 1);
  EXPECT_EQ(a.paths[5].health.state, MROCE_PATH_PROBING);
  EXPECT_TRUE(res.probe_mask & (1ull << 5));
  EXPECT_TRUE(res.events & MROCE_EV_PATH_STATE);
  ASSERT_FALSE(a.transitions.empty());
  EXPECT_EQ(std::get<2>(a.transitions.back()), MROCE_PATH_PROBING);
}

TEST_F(Conn, ProbeAckBringsARekeyedPathBack) {
  establish();
  send(a, 1, 1000, 5);
  mroce_timer_res res;
  mroce_conn_on_timer(&a.c, a.paths[5].pto_at, &res);  // its probe is not answered
  mroce_conn_on_timer(&a.c, a.paths[5].rto_at, &res);
  now = a.paths[5].rto_at;
  mroce_tx_slot slot;
  ASSERT_TRUE(mroce_conn_probe(&a.c, 5, now, &slot));
  EXPECT_EQ(slot.gen, 1);
  EXPECT_EQ(slot.psn, 0u);
  mroce_pkt pr{};
  pr.c.opcode = MROCE_OP_PROBE;
  mroce_conn_fill(&a.c, &slot, &pr);
  deliver(b, encode(pr));  // b adopts generation 1 of path 5
  ack(b, a);
  EXPECT_EQ(a.paths[5].health.state, MROCE_PATH_ACTIVE);
}

TEST_F(Conn, PtoAsksForAProbeBeforeTheRto) {
  establish();
  send(a, 1, 1000, 1);
  uint64_t pto = a.paths[1].pto_at;
  ASSERT_GT(pto, now);
  ASSERT_LT(pto, a.paths[1].rto_at);
  EXPECT_EQ(mroce_conn_next_deadline(&a.c), std::min(pto, a.c.watchdog_at));
  mroce_timer_res res;
  mroce_conn_on_timer(&a.c, pto, &res);
  EXPECT_EQ(res.probe_mask, 1ull << 1);
  EXPECT_EQ(a.c.stats.ptos, 1u);
  EXPECT_TRUE(a.lost.empty());  // nothing declared lost by a PTO
}

TEST_F(Conn, AGapTheTailProbesAckExposesIsThePtos) {
  establish();
  auto p1 = send(a, 1, 1000, 1);
  send(a, 2, 1000, 1);  // the lost tail
  deliver(b, p1);
  ack(b, a);
  now = a.paths[1].pto_at;
  mroce_timer_res res;
  mroce_conn_on_timer(&a.c, now, &res);
  ASSERT_EQ(res.probe_mask, 1ull << 1);
  deliver(b, probe_pkt(a, 1));
  ack(b, a);
  ASSERT_EQ(a.lost.size(), 1u);
  EXPECT_EQ(a.lost[0].first, 2u);
  EXPECT_EQ(a.lost_why[0], std::make_pair(1u, uint8_t(MROCE_LOSS_PTO)));
  // The next gap on the path is the SACK's again.
  auto p4 = send(a, 4, 1000, 1);
  send(a, 5, 1000, 1);
  auto p6 = send(a, 6, 1000, 1);
  (void)p4;
  deliver(b, p6);
  ack(b, a);
  ASSERT_GE(a.lost_why.size(), 2u);
  EXPECT_EQ(a.lost_why.back().second, MROCE_LOSS_SACK);
}

TEST_F(Conn, AckBlocksOfUnknownPathsOrUnsentPsnsAreIgnored) {
  establish();
  send(a, 1, 1000, 0);
  mroce_ack_block blk{};
  blk.path_id = 9;  // only 8 paths
  mroce_pkt pkt{};
  pkt.c.opcode = MROCE_OP_ACK;
  pkt.c.dst_conn = 0xa;
  pkt.u.ack.n_blocks = 1;
  pkt.u.ack.blocks = &blk;
  mroce_ack_res res;
  auto bytes = encode(pkt);
  mroce_pkt dec = decode(bytes);
  mroce_conn_on_ack(&a.c, &dec, now, &res);
  EXPECT_EQ(a.c.stats.bogus_blocks, 1u);
  blk.path_id = 0;
  blk.cum_psn = 5;  // psn 5 never sent
  bytes = encode(pkt);
  dec = decode(bytes);
  mroce_conn_on_ack(&a.c, &dec, now, &res);
  EXPECT_EQ(a.c.stats.bogus_blocks, 2u);
  EXPECT_EQ(a.c.inflight, 1000u);
  blk.path_gen = 3;  // another generation
  bytes = encode(pkt);
  dec = decode(bytes);
  mroce_conn_on_ack(&a.c, &dec, now, &res);
  EXPECT_EQ(a.c.stats.stale_blocks, 1u);
}

TEST_F(Conn, AckCarriesAtMostSixteenBlocksRoundRobin) {
  init_paths(64);
  establish();
  ASSERT_EQ(a.c.n_paths, 64);
  for (int i = 0; i < 40; i++) deliver(b, send(a, i, 10, i));
  std::set<int> reported;
  int acks = 0;
  while (mroce_conn_ack_due(&b.c, now)) {
    uint8_t buf[MROCE_MAX_HDR_LEN];
    uint32_t n = mroce_conn_build_ack(&b.c, now, buf, sizeof(buf));
    ASSERT_GT(n, 0u);
    mroce_pkt pkt = decode(buf, n);
    EXPECT_LE(pkt.u.ack.n_blocks, 16);
    for (int k = 0; k < pkt.u.ack.n_blocks; k++) {
      mroce_ack_block blk;
      mroce_ack_block_get(&pkt, k, &blk);
      EXPECT_TRUE(reported.insert(blk.path_id).second);
    }
    acks++;
  }
  EXPECT_EQ(acks, 3);
  EXPECT_EQ(reported.size(), 40u);
}

// Round robin across ACKs (docs §6.3): each ACK starts after the path the
// previous one reported last and wraps to the lowest dirty paths below it;
// mroce_conn_ack_len() sizes an ACK that reports every dirty path.
TEST_F(Conn, AckRoundRobinResumesAfterTheLastPathAndWraps) {
  init_paths(64);
  establish();
  ASSERT_EQ(a.c.n_paths, 64);
  EXPECT_EQ(mroce_conn_ack_len(&b.c), uint32_t(MROCE_ACK_BASE_LEN));
  for (int i = 0; i < 3; i++) deliver(b, send(a, 100 + i, 10, 60 + i));
  EXPECT_EQ(mroce_conn_ack_len(&b.c), uint32_t(MROCE_ACK_BASE_LEN + 3 * MROCE_ACK_BLOCK_LEN));
  auto order = [&](uint32_t cap) {
    std::vector<int> ids;
    uint8_t buf[MROCE_MAX_HDR_LEN];
    uint32_t n = mroce_conn_build_ack(&b.c, now, buf, cap);
    EXPECT_GT(n, 0u);
    mroce_pkt pkt = decode(buf, n);
    for (int k = 0; k < pkt.u.ack.n_blocks; k++) {
      mroce_ack_block blk;
      mroce_ack_block_get(&pkt, k, &blk);
      ids.push_back(blk.path_id);
    }
    return ids;
  };
  // Exactly the room ack_len asks for reports all three in one ACK.
  EXPECT_EQ(order(mroce_conn_ack_len(&b.c)), (std::vector<int>{60, 61, 62}));
  EXPECT_FALSE(mroce_conn_ack_due(&b.c, now));
  // The last ACK ended at 62: the next starts at 63, then wraps to 0 and up.
  for (int i : {1, 63, 5, 62, 0}) deliver(b, send(a, 200 + i, 10, i));
  EXPECT_EQ(order(MROCE_ACK_BASE_LEN + 3 * MROCE_ACK_BLOCK_LEN),
            (std::vector<int>{63, 0, 1}));
  // ... and the rest resumes after 1, at 5, then 62.
  EXPECT_EQ(mroce_conn_ack_len(&b.c), uint32_t(MROCE_ACK_BASE_LEN + 2 * MROCE_ACK_BLOCK_LEN));
  EXPECT_EQ(order(MROCE_MAX_HDR_LEN), (std::vector<int>{5, 62}));
  EXPECT_EQ(mroce_conn_ack_len(&b.c), uint32_t(MROCE_ACK_BASE_LEN));
}

TEST_F(Conn, RateHintFromTheReceiverCapsWindowAndPaces) {
  establish();
  mroce_conn_set_rx_hint(&b.c, 100);  // 100 Mbit/s
  deliver(b, send(a, 1, 1000));
  now += 20000;
  a.cc.clear();
  ack(b, a);
  EXPECT_EQ(a.c.cc.hint, 100u);
  ASSERT_FALSE(a.cc.empty());
  EXPECT_EQ(a.cc.front(), MROCE_CCW_HINT);  // the grant moved first
  mroce_tx_slot s1, s2;
  // Idle, it starts within one packet interval at the hint (80 us) ...
  if (mroce_conn_tx_reserve(&a.c, now, 1000, -1, &s1) == MROCE_TX_PACED) {
    EXPECT_LT(s1.depart, now + 80000);
    now = s1.depart;
  }
  ASSERT_EQ(mroce_conn_tx_reserve(&a.c, now, 1000, -1, &s1), MROCE_TX_OK);
  EXPECT_EQ(s1.rate, 100u);
  mroce_conn_tx_commit(&a.c, &s1, 2, now);
  // ... and 1000 bytes at 100 Mbit/s = 80 us before the next may leave.
  EXPECT_EQ(mroce_conn_tx_reserve(&a.c, now, 1000, -1, &s2), MROCE_TX_PACED);
  EXPECT_EQ(s2.depart, now + 80000);
}

TEST_F(Conn, ConnectionWindowBlocksButNeverAnEmptyConnection) {
  p.init_cwnd = p.min_cwnd = 2000;
  establish();
  mroce_tx_slot s;
  send(a, 1, 1400);  // an empty connection takes any packet
  EXPECT_EQ(mroce_conn_tx_reserve(&a.c, now, 1000, -1, &s), MROCE_TX_WINDOW);
  EXPECT_EQ(mroce_conn_tx_reserve(&a.c, now, 600, -1, &s), MROCE_TX_OK);
}

TEST_F(Conn, RxSampleReportsDemandAndQueueingThenResets) {
  establish();
  for (int i = 0; i < 10; i++) deliver(b, send(a, i, 1000));
  uint32_t demand, q;
  EXPECT_EQ(mroce_conn_rx_sample(&b.c, 1000000, 0, 100000, &demand, &q), 10000u);
  EXPECT_EQ(demand, 80u);  // 10 kB in 1 ms
  EXPECT_EQ(mroce_conn_rx_sample(&b.c, 1000000, 0, 100000, &demand, &q), 0u);
  EXPECT_EQ(demand, 0u);
}

// A connection's bytes, to compare before and after a run of calls.
struct Snap {
  mroce_conn c;
  std::vector<mroce_path> paths;
  explicit Snap(const Side &s) : c(s.c), paths(s.paths) {}
};

// Copies the receive side (docs/protocol.md §9) of `from` into `to`.
void copy_rx(Snap &to, const Snap &from) {
  for (size_t i = 0; i < to.paths.size(); i++) {
    to.paths[i].rx = from.paths[i].rx;
    to.paths[i].stats.rx_pkts = from.paths[i].stats.rx_pkts;
  }
  mroce_conn &t = to.c;
  const mroce_conn &f = from.c;
  t.ack_dirty = f.ack_dirty;
  t.ack_at = f.ack_at;
  t.ack_pending = f.ack_pending;
  t.ack_now = f.ack_now;
  t.ack_rr = f.ack_rr;
  t.rx_hint = f.rx_hint;
  t.rx_hint_sent = f.rx_hint_sent;
  t.hint_push = f.hint_push;
  t.rx_ce = f.rx_ce;
  t.rx_backlog = f.rx_backlog;
  t.rx_period_bytes = f.rx_period_bytes;
  t.rx_busy = f.rx_busy;
  t.rx_cap = f.rx_cap;
  t.owd_base = f.owd_base;
  t.owd_min = f.owd_min;
  t.qdelay = f.qdelay;
  t.q_min = f.q_min;
  t.owd_valid = f.owd_valid;
  t.hs.local.init_rate = f.hs.local.init_rate;
  t.stats.rx_pkts = f.stats.rx_pkts;
  t.stats.rx_bytes = f.stats.rx_bytes;
  t.stats.rx_dup = f.stats.rx_dup;
  t.stats.rx_old = f.stats.rx_old;
  t.stats.rx_stale = f.stats.rx_stale;
  t.stats.rx_bad_path = f.stats.rx_bad_path;
  t.stats.rx_ce = f.stats.rx_ce;
  t.stats.acks_tx = f.stats.acks_tx;
  t.stats.hint_acks_tx = f.stats.hint_acks_tx;
}

bool same(const Snap &x, const Snap &y) {
  return !memcmp(&x.c, &y.c, sizeof(x.c)) &&
         !memcmp(x.paths.data(), y.paths.data(), x.paths.size() * sizeof(mroce_path));
}

// A caller may run the receive side's calls (an ACK build) concurrently with
// the send side's (a doorbell on another CPU), each side under a lock of its
// own: the calls of the two sides must not touch each other's state
// (docs/protocol.md §9).
TEST_F(Conn, TheReceiveSideCallsLeaveTheSendSideAlone) {
  establish();
  for (int i = 0; i < 4; i++) deliver(b, send(a, i, 1000));  // a has packets out
  Snap before(a);
  // Receive calls only: not deliver(), whose rx_progress is the send side's.
  auto rx = [&](const std::vector<uint8_t> &d, bool ce) {
    mroce_pkt pkt = decode(d);
    ASSERT_EQ(mroce_conn_rx_check(&a.c, &pkt), MROCE_RX_NEW);
    mroce_conn_rx_accept(&a.c, &pkt, ce, now);
  };
  for (int i = 0; i < 3; i++) {
    now += 1000;
    rx(send(b, 100 + i, 1000, i), i == 1);
  }
  rx(probe_pkt(b, 3), false);
  EXPECT_TRUE(mroce_conn_ack_due(&a.c, now));
  EXPECT_EQ(mroce_conn_ack_deadline(&a.c), a.c.ack_at);
  EXPECT_GT(mroce_conn_ack_len(&a.c), 0u);
  take_ack(a);
  mroce_conn_set_rx_hint(&a.c, 50);
  uint32_t demand, q;
  mroce_conn_rx_sample(&a.c, 1000000, 0, 100000, &demand, &q);
  mroce_conn_rx_quiet(&a.c);
  EXPECT_EQ(mroce_conn_ack_deadline(&a.c), 1u);  // the fallen grant: at once
  take_ack(a);  // the hint-only ACK the fallen grant made due
  // One more packet waits for the delayed ACK; its timer, at a moment
  // when the send side's timers are due too (a's packets are overdue).
  rx(send(b, 104, 1000, 0), false);
  uint64_t at = mroce_conn_ack_deadline(&a.c);
  EXPECT_EQ(at, now + p.ack_delay);
  EXPECT_FALSE(mroce_conn_on_ack_timer(&a.c, at - 1));
  now = at + 1000000000;  // long after a's own packets went out
  EXPECT_TRUE(mroce_conn_on_ack_timer(&a.c, now));
  take_ack(a);
  EXPECT_EQ(mroce_conn_ack_deadline(&a.c), UINT64_MAX);
  Snap after(a);
  EXPECT_FALSE(same(before, after));  // the receive side did move
  copy_rx(before, after);
  EXPECT_TRUE(same(before, after));
}

// mroce_conn_send_idle() is exactly "mroce_conn_set_backlog(c, 0, now) would
// change nothing" (the kernel skips its send pass on it).
TEST_F(Conn, SendIdleIsWhatAnEmptyBacklogWouldLeave) {
  establish();
  auto would_change = [&](mroce_conn c) {
    const uint32_t backlog = c.backlog;
    const uint64_t wd = c.watchdog_at;
    mroce_conn_set_backlog(&c, 0, now);
    return c.backlog != backlog || c.watchdog_at != wd;
  };
  EXPECT_TRUE(mroce_conn_send_idle(&a.c));  // nothing sent, nothing queued
  EXPECT_FALSE(would_change(a.c));
  send(a, 1, 1000, 0);  // in flight: the watchdog runs
  ASSERT_NE(a.c.watchdog_at, 0u);
  EXPECT_TRUE(mroce_conn_send_idle(&a.c));
  EXPECT_FALSE(would_change(a.c));
  mroce_conn_set_backlog(&a.c, 5000, now);  // queued
  EXPECT_FALSE(mroce_conn_send_idle(&a.c));
  EXPECT_TRUE(would_change(a.c));
  mroce_conn_set_backlog(&a.c, 0, now);
  EXPECT_TRUE(mroce_conn_send_idle(&a.c));
  a.c.watchdog_at = 0;  // a round ended with data still in flight
  EXPECT_FALSE(mroce_conn_send_idle(&a.c));
  EXPECT_TRUE(would_change(a.c));
  mroce_conn_set_backlog(&a.c, 0, now);  // re-arms it
  EXPECT_NE(a.c.watchdog_at, 0u);
  EXPECT_TRUE(mroce_conn_send_idle(&a.c));
}

TEST_F(Conn, TheSendSideCallsLeaveTheReceiveSideAlone) {
  establish();
  // A delayed ACK owed by a: news of three paths, its deadline not passed.
  for (int i = 0; i < 3; i++) EXPECT_FALSE(deliver(a, send(b, i, 1000, i)));
  ASSERT_FALSE(a.c.ack_now);
  ASSERT_NE(a.c.ack_at, 0u);
  auto out = send(a, 7, 1000, 0);
  deliver(b, out);
  auto back = take_ack(b);
  Snap before(a);
  mroce_conn_set_backlog(&a.c, 5000, now);
  now += 2000;
  feed_ack(a, back);
  for (int i = 0; i < 3; i++) {
    now += 1000000;  // past any pacing slot, and past a's ACK deadline
    send(a, 10 + i, 1000, i);
  }
  probe_pkt(a, 2);
  mroce_nak nak{};
  nak.code = MROCE_NAK_RNR;
  nak.path_id = 1;
  nak.path_gen = a.paths[1].gen;
  nak.path_psn = a.paths[1].tx.next - 1;
  uint64_t cookie;
  uint32_t len;
  uint64_t mask = 0;
  EXPECT_TRUE(mroce_conn_on_nak(&a.c, &nak, now, &cookie, &len, &mask));
  // A READ of a's goes out; a response's data moves the watchdog.
  a.owed = true;
  mroce_conn_owe(&a.c);
  uint64_t progress = a.c.progress_at;
  now += 1000;
  mroce_conn_rx_progress(&a.c, true, now);
  EXPECT_EQ(a.c.progress_at, now);
  EXPECT_NE(a.c.progress_at, progress);
  // The send side's timer, when its paths' timers are due.
  uint64_t t = mroce_conn_tx_deadline(&a.c);
  ASSERT_NE(t, UINT64_MAX);
  now = std::max(now, t);
  mroce_timer_res res;
  mroce_conn_on_tx_timer(&a.c, now, &res);
  EXPECT_FALSE(res.events & MROCE_EV_ACK_DUE);
  Snap after(a);
  EXPECT_FALSE(same(before, after));  // the send side did move
  Snap expect = after;
  copy_rx(expect, before);
  EXPECT_TRUE(same(expect, after));
}

// A caller that serialises both sides drives one timer: mroce_conn_on_timer()
// is the send side's timer and the receive side's ACK timer in one, and its
// deadline is the earlier of the two sides'.
TEST_F(Conn, TheCombinedTimerIsBothSidesTimers) {
  establish();
  send(a, 1, 1000, 0);  // a has a packet out: the send side has a deadline
  deliver(a, send(b, 2, 1000, 0));  // and a delayed ACK owed
  uint64_t ack = mroce_conn_ack_deadline(&a.c), tx = mroce_conn_tx_deadline(&a.c);
  ASSERT_EQ(ack, now + p.ack_delay);
  ASSERT_NE(tx, UINT64_MAX);
  ASSERT_GT(tx, ack);  // the ACK comes first
  EXPECT_EQ(mroce_conn_next_deadline(&a.c), ack);
  EXPECT_EQ(mroce_conn_scan_deadline(&a.c), ack);
  mroce_timer_res res;
  EXPECT_EQ(mroce_conn_on_timer(&a.c, ack, &res), ack);  // an ACK is still owed
  EXPECT_TRUE(res.events & MROCE_EV_ACK_DUE);
  take_ack(a);
  EXPECT_EQ(mroce_conn_ack_deadline(&a.c), UINT64_MAX);
  EXPECT_EQ(mroce_conn_next_deadline(&a.c), tx);
  EXPECT_EQ(mroce_conn_on_timer(&a.c, ack + 1, &res), tx);
  EXPECT_FALSE(res.events & MROCE_EV_ACK_DUE);
  // Not established: neither side's timer has ACK work.
  Side c;
  init(c, 0xc, 3);
  c.c.ack_dirty = 1;
  c.c.ack_at = 5;
  EXPECT_EQ(mroce_conn_ack_deadline(&c.c), UINT64_MAX);
  EXPECT_FALSE(mroce_conn_on_ack_timer(&c.c, 10));
  EXPECT_FALSE(c.c.ack_now);
}

TEST_F(Conn, OneWayDelayGrowthShowsAsQueueing) {
  establish();
  uint32_t demand, q;
  mroce_conn_rx_sample(&b.c, 1000000, 0, 100000, &demand, &q);
  EXPECT_EQ(q, UINT32_MAX);  // nothing arrived: no evidence
  for (int i = 0; i < 50; i++) {
    auto pk = send(a, i, 100);
    now += 10000 + i * 1000;  // each packet waits longer in a growing queue
    deliver(b, pk);
  }
  mroce_conn_rx_sample(&b.c, 1000000, 0, 100000, &demand, &q);
  EXPECT_EQ(q, 0u);  // the first packet of the period set the minimum
  for (int i = 0; i < 10; i++) {
    auto pk = send(a, 100 + i, 100);
    now += 40000 + i * 1000;  // the queue now stands at >= 30 us
    deliver(b, pk);
  }
  mroce_conn_rx_sample(&b.c, 1000000, 0, 100000, &demand, &q);
  EXPECT_EQ(q, 30000u);  // the least any packet of this period saw
}

TEST_F(Conn, PeerRestartResetsTheTransport) {
  establish();
  send(a, 1, 1000, 0);
  ASSERT_EQ(a.c.inflight, 1000u);
  // b restarts with a new nonce and connects again.
  init(b, 0xb, 99);
  mroce_pkt req;
  mroce_conn_connect(&b.c, now);
  mroce_conn_build_hs(&b.c, MROCE_OP_CONN_REQ, 0, &req);
  EXPECT_EQ(mroce_conn_on_hs(&a.c, &req, now), MROCE_HS_SEND_REP | MROCE_HS_RESTART);
  EXPECT_EQ(a.c.inflight, 0u);
  EXPECT_EQ(a.paths[0].tx.n_out, 0);
  EXPECT_TRUE(mroce_conn_established(&a.c));
}

TEST_F(Conn, UnknownConnectionNakTakesItDown) {
  establish();
  EXPECT_EQ(mroce_conn_on_unknown(&a.c, 0xb), MROCE_HS_DOWN);
  EXPECT_FALSE(mroce_conn_established(&a.c));
}

TEST_F(Conn, WatchdogCountsRoundsWithoutProgressAndProgressResetsIt) {
  establish();
  auto pk = send(a, 1, 1000, 0);
  uint64_t t = a.c.watchdog_at;
  ASSERT_GT(t, now);
  mroce_timer_res res;
  mroce_conn_on_timer(&a.c, t, &res);
  EXPECT_EQ(a.c.retries, 0u);  // the RTO took the data out of flight
  mroce_conn_set_backlog(&a.c, 5000, t);  // ... but it is still queued
  for (int i = 1; i <= p.retry_limit + 1; i++) {
    t = a.c.watchdog_at;
    mroce_conn_on_timer(&a.c, t, &res);
    EXPECT_EQ(a.c.retries, i);
    EXPECT_EQ(!!(res.events & MROCE_EV_RETRY_EXHAUSTED), i > p.retry_limit);
  }
}

// A READ_REQ acknowledged on its path leaves nothing in flight, but its
// response is owed (docs §5.5): the watchdog keeps running, a responder
// that never answers exhausts the retries, one that sends data does not,
// and the watchdog stops once the caller says nothing is owed.
TEST_F(Conn, AnOwedResponseKeepsTheWatchdogRunning) {
  owed_read_acked(1000);
  ASSERT_EQ(a.c.inflight, 0u);
  ASSERT_EQ(a.acked.size(), 1u);
  mroce_timer_res res;
  // The responder sends data now and then: the peer is alive.
  for (int i = 0; i < 2 * p.retry_limit; i++) {
    uint64_t t = a.c.watchdog_at;
    ASSERT_GT(t, now);
    now = t - 1;
    deliver(a, send(b, 100 + i, 100, 1));
    ack(a, b);
    now = t;
    mroce_conn_on_timer(&a.c, now, &res);
    EXPECT_EQ(a.c.retries, 0u);
    EXPECT_FALSE(res.events & MROCE_EV_RETRY_EXHAUSTED);
  }
  // It falls silent: every round counts, the last one exhausts.
  for (int i = 1; i <= p.retry_limit + 1; i++) {
    now = a.c.watchdog_at;
    ASSERT_GT(now, 0u);
    mroce_conn_on_timer(&a.c, now, &res);
    EXPECT_EQ(a.c.retries, i);
    EXPECT_EQ(!!(res.events & MROCE_EV_RETRY_EXHAUSTED), i > p.retry_limit);
  }
  // Nothing owed any more (completed, or its QP failed): the watchdog stops.
  a.owed = false;
  now = a.c.watchdog_at;
  ASSERT_GT(now, 0u);
  mroce_conn_on_timer(&a.c, now, &res);
  EXPECT_FALSE(res.events & MROCE_EV_RETRY_EXHAUSTED);
  EXPECT_EQ(a.c.watchdog_at, 0u);
  EXPECT_FALSE(a.c.owed);
}

// mroce_read_owed before its loss (session 33, 3 of 13 VM runs): the
// responder's egress is a slow deep queue, its response fills it, and what
// the requester's later READ_REQs wait for -- their ACKs, the answers to
// the PROBEs of its re-keyed paths -- waits behind the response for longer
// than the requester's RTOs: its requests stay unacknowledged or queued
// and no ACK acknowledges anything. The responses themselves arrive all
// along: they are progress (docs §5.5), and the READ must not fail
// RETRY_EXC_ERR while its response is still coming (here no ACK of b comes
// back at all; a resends, or queues, what its RTOs declare lost, as the
// module does). Without that rule a exhausts after 9 rounds.
TEST_F(Conn, ResponsesAreProgressWhileTheAcksOfLaterRequestsQueueBehindThem) {
  owed_read_acked(100000);
  ASSERT_EQ(a.c.inflight, 0u);
  send(a, 2, 100);  // the next READ_REQ: b gets it, its ACK never comes back
  const uint64_t end = now + 4ull * (p.retry_limit + 1) * p.max_rto;
  size_t resent = 0;
  uint64_t cookie = 100, rounds = 0, responses = 0;
  while (now < end) {
    uint64_t next = now + 1000000;  // b's response: one packet a millisecond
    for (uint64_t t; (t = mroce_conn_next_deadline(&a.c)) <= next;) {
      now = t > now ? t : now;
      mroce_timer_res res;
      uint64_t wd = a.c.watchdog_at;
      mroce_conn_on_timer(&a.c, now, &res);
      rounds += wd && now >= wd;
      ASSERT_FALSE(res.events & MROCE_EV_RETRY_EXHAUSTED) << "after " << rounds << " rounds, " << responses << " response packets";
      for (; resent < a.lost.size(); resent++) {  // resent at once, its ACK lost too
        mroce_tx_slot slot;
        if (mroce_conn_tx_reserve(&a.c, now, 100, -1, &slot) == MROCE_TX_OK)
          mroce_conn_tx_commit(&a.c, &slot, a.lost[resent].first, now);
        else
          mroce_conn_set_backlog(&a.c, 100, now);
      }
      if (mroce_conn_ack_due(&a.c, now)) feed_ack(b, take_ack(a));  // a's ACKs reach b
    }
    now = next;
    ASSERT_TRUE(resp_reaches_a(cookie++));
    mroce_conn_rx_progress(&a.c, true, now);  // each chunk new to a's READ
    responses++;
    if (mroce_conn_ack_due(&a.c, now)) feed_ack(b, take_ack(a));
  }
  EXPECT_GT(rounds, p.retry_limit + 1u);  // enough rounds to have exhausted
  EXPECT_GT(a.lost.size(), 0u);           // the requests' RTOs fired
  EXPECT_GT(a.c.inflight + a.c.backlog, 0u);
  EXPECT_EQ(a.c.retries, 0u);
}

// mroce_read_owed in the core: a's READ_REQ is acknowledged, the response
// flows and a acknowledges it, then nothing from b reaches a any more
// (b's egress died). What a still sends from then on -- the ACK it owes,
// any PROBE its timer asks for (b hears it, b's answer is lost) -- is no
// progress: the watchdog stays armed and exhausts the retries, one round
// per retry, within the retry budget (docs §5.5, owed responses; the
// session-32 CI hang of mroce_read_owed was its own race, not this).
TEST_F(Conn, AnOwedResponseLostForGoodExhaustsWhateverTheRequesterSends) {
  owed_read_acked(100000);
  for (int i = 0; i < 32; i++) {  // the response: b's data, acked by a
    now += 10000;
    deliver(a, send(b, 100 + i, 1000, i % p.n_paths));
    if (mroce_conn_ack_due(&a.c, now)) ack(a, b);
  }
  ASSERT_EQ(a.c.inflight, 0u);
  ASSERT_EQ(a.c.backlog, 0u);
  // The rest of the response is lost on the way: a hears nothing more.
  for (int i = 0; i < 8; i++) send(b, 200 + i, 1000, i % p.n_paths);
  const uint64_t loss_at = now;
  const uint32_t rounds0 = a.c.stats.retry_rounds;
  uint32_t probes = 0, acks = 0;
  bool exhausted = false;
  for (int step = 0; step < 10000 && !exhausted; step++) {
    uint64_t t = mroce_conn_next_deadline(&a.c);
    ASSERT_NE(t, UINT64_MAX) << "nothing armed at step " << step;
    ASSERT_NE(a.c.watchdog_at, 0u) << "watchdog off at step " << step;
    if (t > now) now = t;
    mroce_timer_res res;
    mroce_conn_on_timer(&a.c, now, &res);
    for (uint8_t i = 0; i < a.c.n_paths; i++) {
      mroce_tx_slot slot;
      if (!(res.probe_mask & (1ull << i)) || !mroce_conn_probe(&a.c, i, now, &slot)) continue;
      mroce_pkt pr{};
      pr.c.opcode = MROCE_OP_PROBE;
      pr.c.flags = MROCE_F_AR;
      mroce_conn_fill(&a.c, &slot, &pr);
      mroce_pkt got = decode(encode(pr));
      if (mroce_conn_rx_check(&b.c, &got) == MROCE_RX_NEW) mroce_conn_rx_accept(&b.c, &got, false, now);
      probes++;
    }
    if (res.events & MROCE_EV_ACK_DUE) {  // a's ACK reaches b
      take_ack(a);
      acks++;
    }
    if (mroce_conn_ack_due(&b.c, now)) take_ack(b);  // b's answer is lost
    exhausted = res.events & MROCE_EV_RETRY_EXHAUSTED;
  }
  EXPECT_TRUE(exhausted);
  EXPECT_EQ(a.c.stats.retry_rounds - rounds0, p.retry_limit + 1u);
  // Each round lasts at most max_rto plus the connection's srtt.
  EXPECT_LE(now - loss_at, (p.retry_limit + 1ull) * (p.max_rto + a.c.rtt.srtt));
  EXPECT_TRUE(a.c.owed);
  EXPECT_GE(acks, 1u);  // the one a owed for the response's tail
  RecordProperty("probes", probes);
}

// The owed requester's request never reaches b (lost for good: here a's
// ACKs get through, so b's window stays open), and what a hears from b is
// response chunks b sends again -- path-new, stream duplicates: the driver
// accepts them (rx_accept, for the path's ACK) but reports no stream
// progress (rx_progress). a's watchdog must still exhaust within the
// retry budget. Counted as progress (s33 a7b25d1: any READ_RESP accepted
// while owed), a peer's retransmissions -- which flow exactly when our
// ACKs do not reach it -- kept the watchdog from ever failing a
// connection on which nothing of ours got through.
TEST_F(Conn, ResentResponsesAreNoProgressWhileNothingOfOursGetsThrough) {
  establish();
  a.owed = true;
  mroce_conn_owe(&a.c);
  send(a, 1, 100, 0);  // lost, and all that a sends from now on
  const uint64_t start = now;
  uint64_t cookie = 100, dups = 0;
  bool exhausted = false;
  while (!exhausted && now - start < 4ull * (p.retry_limit + 1) * p.max_rto) {
    uint64_t next = now + 1000000;  // b's resent response chunk: one a millisecond
    for (uint64_t t; !exhausted && (t = mroce_conn_next_deadline(&a.c)) <= next;) {
      now = t > now ? t : now;
      mroce_timer_res res;
      mroce_conn_on_timer(&a.c, now, &res);
      exhausted = res.events & MROCE_EV_RETRY_EXHAUSTED;
      if (mroce_conn_ack_due(&a.c, now)) feed_ack(b, take_ack(a));
    }
    if (exhausted) break;
    now = next;
    // New on its path, a duplicate in its stream: no rx_progress.
    if (!resp_reaches_a(cookie)) continue;
    cookie++;
    dups++;
    if (mroce_conn_ack_due(&a.c, now)) feed_ack(b, take_ack(a));
  }
  EXPECT_TRUE(exhausted) << dups << " resent response chunks, retries " << unsigned(a.c.retries);
  EXPECT_GT(dups, 0u);
  EXPECT_LE(now - start, (p.retry_limit + 1ull) * (p.max_rto + a.c.rtt.srtt) + 2000000);
}

// The receiver acknowledged a flight, the ACK is slow, the path's RTO fires
// and re-keys it first: the ACK still counts when it arrives (docs §5.6).
TEST_F(Conn, AnAckThatArrivesAfterTheRekeyStillAcknowledges) {
  establish();
  flight_arrived(5);
  std::vector<uint8_t> late = take_ack(b);
  mroce_timer_res tr;
  mroce_conn_on_timer(&a.c, a.paths[5].pto_at, &tr);  // its probe is not answered
  now = a.paths[5].rto_at;
  mroce_conn_on_timer(&a.c, now, &tr);
  ASSERT_EQ(a.paths[5].gen, 1);  // re-keyed; both declared lost
  ASSERT_EQ(a.lost.size(), 2u);
  ASSERT_TRUE(a.acked.empty());
  const uint64_t before = a.c.progress_at;
  now += 1000;
  mroce_ack_res res = feed_ack(a, late);
  EXPECT_EQ(a.c.stats.stale_blocks, 0u);
  EXPECT_EQ(a.c.stats.late_blocks, 1u);
  EXPECT_EQ(a.c.stats.late_acked, 2u);
  ASSERT_EQ(a.acked.size(), 2u);  // the caller need not resend them
  EXPECT_EQ(a.acked[0].first + a.acked[1].first, 3u);
  EXPECT_GT(a.c.progress_at, before);
  // The loss stands for the window and flight: nothing is counted twice.
  EXPECT_EQ(res.acked_pkts, 0u);
  EXPECT_EQ(a.c.inflight, 0u);
  feed_ack(a, late);  // a duplicate of it acknowledges nothing more
  EXPECT_EQ(a.acked.size(), 2u);
  // The retired generation is kept for one RTO only.
  now += mroce_rtt_rto(&a.c.rtt, &p, 0) + 1;
  feed_ack(a, late);
  EXPECT_EQ(a.c.stats.stale_blocks, 1u);
}

// Below the floor it was told, the receiver's cumulative point also covers
// holes the sender gave up: a late block proves arrival there only by SACK.
TEST_F(Conn, ALateBlockNeverAcknowledgesAHoleTheFloorGaveUp) {
  establish();
  send(a, 1, 1000, 2);  // path PSN 0: lost
  auto d1 = send(a, 2, 1000, 2);
  send(a, 3, 1000, 2);  // path PSN 2: lost
  deliver(b, d1);
  ack(b, a);  // PSN 0 is a SACK loss; the floor moves to 2
  ASSERT_EQ(a.lost.size(), 1u);
  auto d3 = send(a, 4, 1000, 2);  // carries floor 2: b gives PSN 0 up
  deliver(b, d3);
  std::vector<uint8_t> late = take_ack(b);  // cum 1, SACK: PSN 3
  mroce_timer_res tr;
  mroce_conn_on_timer(&a.c, a.paths[2].pto_at, &tr);  // its probe is not answered
  now = a.paths[2].rto_at;
  mroce_conn_on_timer(&a.c, now, &tr);  // PSNs 2 and 3 lost, re-key
  ASSERT_EQ(a.paths[2].gen, 1);
  a.acked.clear();
  feed_ack(a, late);
  ASSERT_EQ(a.acked.size(), 1u);  // PSN 3 arrived; PSNs 0 and 2 did not
  EXPECT_EQ(a.acked[0].first, 4u);
}

// Ordinary recovery, round after round: each flight arrives, its ACK is
// overtaken by the path's RTO and the re-key. The peer is reachable and
// takes everything, so the connection must not run out of retries.
TEST_F(Conn, RtoRecoveryWithLateAcksNeverExhaustsTheRetries) {
  establish();
  mroce_conn_set_backlog(&a.c, 1u << 20, now);  // the application has more
  mroce_timer_res tr{};
  uint32_t exhausted = 0;
  auto run_until = [&](uint64_t t) {
    while (now < t) {
      now = std::max(now, std::min<uint64_t>(t, mroce_conn_next_deadline(&a.c)));
      mroce_conn_on_timer(&a.c, now, &tr);
      exhausted += !!(tr.events & MROCE_EV_RETRY_EXHAUSTED);
    }
  };
  for (uint64_t r = 1; r <= 2u * p.retry_limit; r++) {
    auto d = send(a, r, 1000, 3);
    const uint64_t watchdog = a.c.watchdog_at;
    now += 100000;
    deliver(b, d);
    std::vector<uint8_t> late = take_ack(b);
    run_until(a.paths[3].rto_at);
    ASSERT_EQ(a.paths[3].health.state, MROCE_PATH_PROBING) << "round " << r;
    answer_probe(a, b, 3);
    run_until(watchdog);  // a whole watchdog round passes in every round
    now += 100000;
    feed_ack(a, late);
  }
  EXPECT_EQ(exhausted, 0u);
  EXPECT_LE(a.c.retries, 1u);
  EXPECT_EQ(a.c.stats.late_acked, 2u * p.retry_limit);
}

// A watchdog round outlasts the slowest path's RTO plus a round trip, so a
// path that is merely slower than its siblings never costs a retry.
TEST_F(Conn, NoRetryIsCountedBeforeTheSlowestPathCouldTimeOut) {
  establish();
  // Path 0 measures 100 us, path 1 a hundred times that.
  auto d0 = send(a, 1, 1000, 0);
  now += 100000;
  deliver(b, d0);
  ack(b, a);
  auto d1 = send(a, 2, 1000, 1);
  now += 10000000;
  deliver(b, d1);
  ack(b, a);
  ASSERT_GT(mroce_rtt_rto(&a.paths[1].rtt, &p, 0), mroce_rtt_rto(&a.c.rtt, &p, 0));
  // Now only path 1 carries data, and nothing comes back.
  now += 1000;
  send(a, 3, 1000, 1);
  const uint64_t rto_at = a.paths[1].rto_at;
  mroce_timer_res tr;
  while (a.c.stats.retry_rounds == 0) {
    uint64_t t = mroce_conn_next_deadline(&a.c);
    ASSERT_NE(t, UINT64_MAX);
    now = std::max(now, t);
    mroce_conn_on_timer(&a.c, now, &tr);
    mroce_conn_set_backlog(&a.c, 1000, now);  // the lost chunk waits for a path
  }
  EXPECT_GE(now, rto_at + a.c.rtt.srtt);
}

TEST_F(Conn, FirstRttSamplePullsInTimersArmedWithInitRto) {
  establish();
  mroce_tx_slot s0, s1;
  std::vector<uint8_t> d0 = send(a, 1, 1000, 0, &s0);
  send(a, 2, 1000, 1, &s1);  // lost, with the rest of path 1's flight
  ASSERT_EQ(s0.path, 0);
  ASSERT_EQ(s1.path, 1);
  const uint64_t t0 = now;
  // No RTT known yet: the timers come from init_rto.
  EXPECT_EQ(a.c.paths[1].pto_at, t0 + p.init_rto / 2);
  EXPECT_EQ(a.c.paths[1].rto_at, t0 + p.init_rto);
  now += 100000;  // the first ACK, on path 0, measures a 100 us RTT
  deliver(b, d0);
  ack(b, a);
  ASSERT_EQ(a.c.rtt.srtt, 100000u);
  // Path 1 has no sample of its own but no longer waits for init_rto.
  EXPECT_EQ(a.c.paths[1].pto_at, t0 + mroce_rtt_pto(&a.c.rtt, &p));
  EXPECT_EQ(a.c.paths[1].rto_at, t0 + mroce_rtt_rto(&a.c.rtt, &p, 0));
  EXPECT_LT(a.c.paths[1].rto_at, t0 + p.init_rto);
  mroce_timer_res r;
  now = a.c.paths[1].pto_at;
  mroce_conn_on_timer(&a.c, now, &r);
  EXPECT_EQ(r.probe_mask, 1ull << 1);  // the tail-loss probe goes out now
}

TEST_F(Conn, HandshakeCarriesTheReceiversGrant) {
  mroce_conn_set_rx_hint(&b.c, 2000);  // what b grants a newcomer
  establish();
  EXPECT_EQ(a.c.cc.hint, 2000u);  // a's first round trip is already limited
  EXPECT_FALSE(mroce_conn_ack_due(&b.c, now));  // a heard it: nothing to push
}

TEST_F(Conn, AFallingGrantIsPushedInAHintOnlyAck) {
  mroce_conn_set_rx_hint(&b.c, 2000);
  establish();
  mroce_conn_set_rx_hint(&b.c, 1900);  // a small change waits for data ACKs
  EXPECT_FALSE(mroce_conn_ack_due(&b.c, now));
  mroce_conn_set_rx_hint(&b.c, 500);  // an idle a must not restart at 2000
  EXPECT_TRUE(mroce_conn_ack_due(&b.c, now));
  EXPECT_LE(mroce_conn_next_deadline(&b.c), now);
  uint8_t buf[MROCE_MAX_HDR_LEN];
  uint32_t n = mroce_conn_build_ack(&b.c, now, buf, sizeof(buf));
  ASSERT_EQ(n, uint32_t(MROCE_ACK_BASE_LEN));
  mroce_pkt pkt = decode(buf, n);
  EXPECT_EQ(pkt.u.ack.n_blocks, 0);
  EXPECT_EQ(pkt.u.ack.rate_hint, 500u);
  EXPECT_EQ(b.c.stats.hint_acks_tx, 1u);
  EXPECT_FALSE(mroce_conn_ack_due(&b.c, now));
  const uint32_t cwnd = a.c.cc.cwnd;
  mroce_ack_res res;
  mroce_conn_on_ack(&a.c, &pkt, now, &res);
  EXPECT_EQ(a.c.cc.hint, 500u);
  EXPECT_EQ(res.acked_pkts, 0u);
  EXPECT_EQ(a.c.cc.cwnd, cwnd);
  mroce_conn_set_rx_hint(&b.c, 4000);  // a rise rides on the next data ACK
  EXPECT_FALSE(mroce_conn_ack_due(&b.c, now));
}

TEST_F(Conn, APathSilentWhileANewerPacketIsAckedExpiresBeforeItsRto) {
  std::vector<uint8_t> d = overdue_setup();
  ASSERT_EQ(a.c.rtt.srtt, 100000u);
  mroce_tx_slot s1, s4;
  send(a, 2, 1000, 1, &s1);  // path 1 swallows it ...
  ASSERT_EQ(s1.path, 1);
  const uint64_t t1 = now;
  now += 1000;
  d = send(a, 3, 1000, 0);
  now += 100000;
  send(a, 4, 1000, 1, &s4);  // ... and this one
  ASSERT_EQ(s4.path, 1);
  deliver(b, d);
  ack(b, a);  // a packet sent after path 1's first got through on path 0
  const uint64_t srtt = a.c.rtt.srtt;
  const uint64_t at = t1 + std::max<uint64_t>(p.silent_rtts * srtt + p.ack_delay,
                                              mroce_rtt_pto(&a.c.rtt, &p) + srtt);
  ASSERT_LT(at, a.c.paths[1].rto_at);
  mroce_timer_res r;
  mroce_conn_on_timer(&a.c, at - 1, &r);
  EXPECT_EQ(a.c.stats.silent, 0u);
  // The first was overdue long before (docs §5.3) and went again at once;
  // the path's silence still counts from it.
  ASSERT_EQ(a.lost.size(), 1u);
  EXPECT_EQ(a.lost_why[0], std::make_pair(0u, uint8_t(MROCE_LOSS_TIME)));
  EXPECT_EQ(a.c.paths[1].gen, 0);
  mroce_conn_on_timer(&a.c, at, &r);
  EXPECT_EQ(a.c.stats.silent, 1u);
  EXPECT_EQ(a.c.paths[1].stats.silent, 1u);
  EXPECT_EQ(a.c.stats.rtos, 0u);
  ASSERT_EQ(a.lost.size(), 2u);
  EXPECT_EQ(a.lost[1].first, 4u);
  EXPECT_EQ(a.lost_why[1].second, MROCE_LOSS_RTO);
  EXPECT_EQ(a.c.paths[1].gen, 1);  // re-keyed
}

// A packet with nothing after it on its own path (the tail of a path, a
// lone READ request) is lost once a packet sent after it was acknowledged
// on another path and a path RTT plus a quarter has passed: it goes again
// without waiting for a probe's round trip, and its path stays as it is.
TEST_F(Conn, APacketOverdueWhileALaterOneIsAckedElsewhereIsLostAndThePathStays) {
  std::vector<uint8_t> d = overdue_setup();
  mroce_tx_slot s1;
  send(a, 2, 1000, 1, &s1);  // lost
  ASSERT_EQ(s1.path, 1);
  const uint64_t t1 = now;
  now += 1000;
  d = send(a, 3, 1000, 0);
  now += 100000;
  deliver(b, d);
  mroce_ack_res res = ack(b, a);
  EXPECT_EQ(res.lost_pkts, 0u);  // not overdue yet: paths may differ in delay
  EXPECT_TRUE(a.lost.empty());
  const uint64_t srtt = a.c.rtt.srtt;
  const uint64_t at = t1 + srtt + srtt * p.reo_wnd / 1024 + p.ack_delay;
  ASSERT_LT(at, a.c.paths[1].pto_at);
  EXPECT_EQ(mroce_conn_next_deadline(&a.c), at);
  mroce_timer_res r;
  mroce_conn_on_timer(&a.c, at - 1, &r);
  EXPECT_TRUE(a.lost.empty());
  mroce_conn_on_timer(&a.c, at, &r);
  ASSERT_EQ(a.lost.size(), 1u);
  EXPECT_EQ(a.lost[0], std::make_pair(uint64_t(2), uint8_t(1)));
  EXPECT_EQ(a.lost_why[0], std::make_pair(0u, uint8_t(MROCE_LOSS_TIME)));
  EXPECT_EQ(a.c.stats.overdue, 1u);
  EXPECT_EQ(a.c.inflight, 0u);
  EXPECT_EQ(a.c.paths[1].rto_at, 0u);  // nothing left to time out
  EXPECT_EQ(a.c.paths[1].gen, 0);
  EXPECT_EQ(a.c.paths[1].health.state, MROCE_PATH_ACTIVE);
  EXPECT_TRUE(a.rekeys.empty());
  EXPECT_EQ(r.probe_mask, 0u);
  // Random loss is not congestion: the window stays.
  EXPECT_EQ(a.c.cc.cwnd, p.init_cwnd + 2000);
}

// An ACK that arrives after the wait finds the overdue packet at once.
TEST_F(Conn, AnAckFindsAPacketAlreadyOverdue) {
  std::vector<uint8_t> d = overdue_setup();
  send(a, 2, 1000, 1);  // lost
  now += 1000;
  d = send(a, 3, 1000, 0);
  now += 300000;  // a slow ACK
  deliver(b, d);
  mroce_ack_res res = ack(b, a);
  EXPECT_EQ(res.acked_pkts, 1u);
  EXPECT_EQ(res.lost_pkts, 1u);
  ASSERT_EQ(a.lost.size(), 1u);
  EXPECT_EQ(a.lost[0].first, 2u);
}

// reo_wnd 0 turns the rule off: the tail waits for its probe.
TEST_F(Conn, ReorderWindowZeroLeavesTheTailToTheProbe) {
  p.reo_wnd = 0;
  establish();
  std::vector<uint8_t> d = send(a, 1, 1000, 0);
  now += 100000;
  deliver(b, d);
  ack(b, a);
  send(a, 2, 1000, 1);
  now += 1000;
  d = send(a, 3, 1000, 0);
  now += 300000;
  deliver(b, d);
  EXPECT_EQ(ack(b, a).lost_pkts, 0u);
  EXPECT_TRUE(a.lost.empty());
}

// Timers that fire long after their deadline (a descheduled vCPU) find the
// RTO and the tail-loss probe both due. We were not running, the path
// maybe was: probe it instead of re-keying it and resending its flight.
TEST_F(Conn, AnOversleptRtoProbesInsteadOfRekeying) {
  establish();
  send(a, 1, 1000, 1);
  send(a, 2, 1000, 1);
  const uint64_t rto = a.paths[1].rto_at;
  ASSERT_LT(a.paths[1].pto_at, rto);  // the probe was due first
  now = rto + p.oversleep + 5000000;
  mroce_timer_res res;
  const uint64_t next = mroce_conn_on_timer(&a.c, now, &res);
  EXPECT_EQ(res.probe_mask, 1ull << 1);
  EXPECT_EQ(a.c.stats.ptos, 1u);
  EXPECT_EQ(a.c.stats.rtos, 0u);
  EXPECT_EQ(a.c.stats.silent, 0u);
  EXPECT_TRUE(a.lost.empty());
  EXPECT_TRUE(a.rekeys.empty());
  EXPECT_EQ(a.paths[1].gen, 0);
  EXPECT_EQ(a.paths[1].health.state, MROCE_PATH_ACTIVE);
  EXPECT_EQ(a.c.inflight, 2000u);
  // The expiry waits one probe timeout for the answer, no longer.
  EXPECT_GT(next, now);
  EXPECT_LE(next, now + mroce_rtt_pto(&a.paths[1].rtt, &p) + mroce_rtt_pto(&a.c.rtt, &p));
}

// The flight had arrived; its ACK had not been processed. The probe's ACK
// acknowledges it all: nothing is resent, and the path stays as it was.
TEST_F(Conn, AnsweredProbeAfterAnOversleptRtoResendsNothing) {
  establish();
  flight_arrived(1);
  const uint64_t late = a.paths[1].rto_at + p.oversleep + 20000000;
  ASSERT_NO_FATAL_FAILURE(timer_probe_answered(late, 1));
  ASSERT_EQ(a.acked.size(), 2u);
  EXPECT_EQ(a.acked[0].first + a.acked[1].first, 3u);
  EXPECT_FALSE(a.paths[1].held);  // progress: the next oversleep probes again
  // Time runs on well past every old deadline: nothing is declared lost.
  mroce_timer_res res;
  for (int i = 0; i < 50; i++) {
    uint64_t t = mroce_conn_next_deadline(&a.c);
    if (t == UINT64_MAX) break;
    now = std::max(now, t);
    mroce_conn_on_timer(&a.c, now, &res);
  }
  EXPECT_TRUE(a.lost.empty());
  EXPECT_TRUE(a.rekeys.empty());
  EXPECT_EQ(a.c.stats.rtos, 0u);
  EXPECT_EQ(a.c.stats.silent, 0u);
  EXPECT_EQ(a.c.inflight, 0u);
  EXPECT_EQ(a.paths[1].gen, 0);
}

// A dead path answers no probe: it still expires, one probe timeout after
// the probe, and a second late wake-up gives it no second reprieve.
TEST_F(Conn, ADeadPathStillExpiresOneProbeTimeoutAfterTheOversleep) {
  establish();
  send(a, 1, 1000, 1);
  send(a, 2, 1000, 1);
  now = a.paths[1].rto_at + p.oversleep + 5000000;
  mroce_timer_res res;
  mroce_conn_on_timer(&a.c, now, &res);
  ASSERT_EQ(res.probe_mask, 1ull << 1);
  mroce_tx_slot slot;
  ASSERT_TRUE(mroce_conn_probe(&a.c, 1, now, &slot));  // and it is lost
  const uint64_t hold = a.paths[1].hold;
  ASSERT_GT(hold, now);
  EXPECT_LE(hold, now + mroce_rtt_pto(&a.paths[1].rtt, &p) + mroce_rtt_pto(&a.c.rtt, &p));
  EXPECT_EQ(mroce_conn_next_deadline(&a.c), std::min(hold, a.c.watchdog_at));
  mroce_conn_on_timer(&a.c, hold - 1, &res);
  EXPECT_EQ(a.c.stats.rtos, 0u);
  EXPECT_TRUE(a.lost.empty());
  // Woken late again: no second probe, the path expires.
  now = hold + p.oversleep + 30000000;
  mroce_conn_on_timer(&a.c, now, &res);
  EXPECT_EQ(a.c.stats.rtos, 1u);
  EXPECT_EQ(a.c.stats.ptos, 1u);
  std::vector<uint64_t> lost;
  for (auto &l : a.lost)
    if (l.first != MROCE_COOKIE_PROBE) lost.push_back(l.first);
  EXPECT_EQ(lost, (std::vector<uint64_t>{1, 2}));
  ASSERT_EQ(a.rekeys.size(), 1u);
  EXPECT_EQ(std::get<3>(a.rekeys[0]), MROCE_HEV_RTO);
  EXPECT_EQ(a.paths[1].gen, 1);
  EXPECT_EQ(a.paths[1].health.state, MROCE_PATH_PROBING);
}

// oversleep = 0 and rto_probe = 0 is the old rule: a late RTO expires the
// path at once.
TEST_F(Conn, OversleepZeroExpiresALateRtoAtOnce) {
  p.oversleep = 0;
  p.rto_probe = 0;
  establish();
  send(a, 1, 1000, 1);
  now = a.paths[1].rto_at + 50000000;
  mroce_timer_res res;
  mroce_conn_on_timer(&a.c, now, &res);
  EXPECT_EQ(a.c.stats.rtos, 1u);
  EXPECT_EQ(a.c.stats.ptos, 0u);
  EXPECT_EQ(a.paths[1].gen, 1);
}

TEST_F(Conn, ProbeCarriesTheBacklog) {
  establish();
  mroce_conn_set_backlog(&a.c, 1u << 20, now);
  send(a, 1, 1000, 3);
  mroce_tx_slot s;
  ASSERT_TRUE(mroce_conn_probe(&a.c, 3, now, &s));
  mroce_pkt pkt{};
  pkt.c.opcode = MROCE_OP_PROBE;
  mroce_conn_fill(&a.c, &s, &pkt);
  EXPECT_EQ(pkt.u.probe.backlog, (1u << 20) >> MROCE_BACKLOG_UNIT_SHIFT);
  uint8_t buf[MROCE_MAX_HDR_LEN];
  uint32_t n = mroce_encode(&pkt, buf, sizeof(buf));
  ASSERT_GT(n, 0u);
  mroce_pkt got = decode(buf, n);
  ASSERT_EQ(mroce_conn_rx_check(&b.c, &got), MROCE_RX_NEW);
  mroce_conn_rx_accept(&b.c, &got, false, now);
  EXPECT_EQ(b.c.rx_backlog, 1u << 20);
}

TEST_F(Conn, APeerThatStartsSendingIsHeldAtItsGrantForTwoRttsAndAPacket) {
  mroce_conn_set_rx_hint(&b.c, 1000);
  establish();
  const uint64_t period = 5000;
  const uint32_t rtt = 10000;
  const uint64_t hold = 2 * rtt + mroce_rate_ns(1000, b.c.mss);
  uint32_t demand, qd;
  uint64_t busy = 0;
  uint64_t cookie = 1;
  auto feed = [&] {  // a packet from a reaches b and is acknowledged
    deliver(b, send(a, cookie++, 1000));
    ack(b, a);
  };
  // Idle: the receiver may lower the grant, and raise it again.
  mroce_conn_rx_sample(&b.c, period, rtt, 100000, &demand, &qd);
  mroce_conn_set_rx_hint(&b.c, 3000);
  EXPECT_EQ(b.c.rx_hint, 3000u);
  mroce_conn_set_rx_hint(&b.c, 1000);
  // It starts: the others granted alike may not have been heard yet.
  while (busy + period < hold) {
    feed();
    mroce_conn_rx_sample(&b.c, period, rtt, 100000, &demand, &qd);
    busy += period;
    EXPECT_GT(demand, 0u);
    mroce_conn_set_rx_hint(&b.c, 5000);
    EXPECT_EQ(b.c.rx_hint, 1000u) << "after " << busy << " ns";
    mroce_conn_set_rx_hint(&b.c, 500);  // falls are never held
    EXPECT_EQ(b.c.rx_hint, 500u);
    mroce_conn_set_rx_hint(&b.c, 1000);
    now += period;
  }
  feed();
  mroce_conn_rx_sample(&b.c, period, rtt, 100000, &demand, &qd);
  mroce_conn_set_rx_hint(&b.c, 5000);
  EXPECT_EQ(b.c.rx_hint, 5000u);  // two RTTs and a packet later: its share
  // A pause ends the spell; the next start is held at the grant it then has.
  mroce_conn_rx_sample(&b.c, period, rtt, 100000, &demand, &qd);
  EXPECT_EQ(demand, 0u);
  feed();
  mroce_conn_rx_sample(&b.c, period, rtt, 100000, &demand, &qd);
  mroce_conn_set_rx_hint(&b.c, 9000);
  EXPECT_EQ(b.c.rx_hint, 5000u);
}

// The kernel samples only while packets arrive: after a quiet period that
// no sample saw, mroce_conn_rx_quiet() makes the restart a new busy spell,
// held at its grant like one that a sample of the quiet period ended.
TEST_F(Conn, AQuietPeriodNoSampleSawStillEndsTheBusySpell) {
  mroce_conn_set_rx_hint(&b.c, 1000);
  establish();
  const uint64_t period = 5000;
  const uint32_t rtt = 10000;
  uint32_t demand, qd;
  uint64_t cookie = 1;
  auto feed = [&] {
    deliver(b, send(a, cookie++, 1000));
    ack(b, a);
  };
  auto busy_for = [&](uint64_t ns) {
    for (uint64_t t = 0; t < ns; t += period) {
      feed();
      mroce_conn_rx_sample(&b.c, period, rtt, 100000, &demand, &qd);
      now += period;
    }
  };
  busy_for(10 * rtt);
  mroce_conn_set_rx_hint(&b.c, 2000);
  ASSERT_EQ(b.c.rx_hint, 2000u);  // long busy: not held
  // Without the quiet mark the restart continues the old spell ...
  feed();
  mroce_conn_rx_sample(&b.c, period, rtt, 100000, &demand, &qd);
  mroce_conn_set_rx_hint(&b.c, 4000);
  EXPECT_EQ(b.c.rx_hint, 4000u);
  // ... with it, the restart is held at the grant it had.
  mroce_conn_rx_quiet(&b.c);
  feed();
  mroce_conn_rx_sample(&b.c, period, rtt, 100000, &demand, &qd);
  mroce_conn_set_rx_hint(&b.c, 8000);
  EXPECT_EQ(b.c.rx_hint, 4000u);
}

}  // namespace

namespace {

// Runs the timer at each deadline up to (not beyond) @until.
void run_timers(Side &x, uint64_t &now, uint64_t until, mroce_timer_res &res) {
  for (int i = 0; i < 100; i++) {
    uint64_t t = mroce_conn_next_deadline(&x.c);
    if (t > until) break;
    now = std::max(now, t);
    mroce_conn_on_timer(&x.c, now, &res);
  }
}

}  // namespace

// An RTO due before the PTO (an srtt that is large next to its variance:
// a VM's ACK turnaround) finds no probe sent: with rto_probe it probes
// first, on time, and holds the expiry one PTO.
TEST_F(Conn, AnRtoWithoutAProbeOutProbesFirst) {
  establish();
  send(a, 1, 1000, 1);
  send(a, 2, 1000, 1);
  a.paths[1].pto_at = a.paths[1].rto_at + 1;  // as when RTO < PTO
  const uint64_t rto = a.paths[1].rto_at;
  mroce_timer_res res;
  now = rto;  // exactly on time: not an oversleep
  mroce_conn_on_timer(&a.c, now, &res);
  EXPECT_EQ(res.probe_mask, 1ull << 1);
  EXPECT_EQ(a.c.stats.rtos, 0u);
  EXPECT_TRUE(a.lost.empty());
  EXPECT_TRUE(a.rekeys.empty());
  EXPECT_TRUE(a.paths[1].held);
  // Unanswered: it expires at the end of the hold, exactly once.
  const uint64_t hold = a.paths[1].hold;
  EXPECT_EQ(hold, now + mroce_rtt_pto(&a.paths[1].rtt, &p));
  run_timers(a, now, hold - 1, res);
  EXPECT_EQ(a.c.stats.rtos, 0u);
  run_timers(a, now, hold, res);
  EXPECT_EQ(a.c.stats.rtos, 1u);
  EXPECT_EQ(a.lost.size(), 2u);
  ASSERT_EQ(a.rekeys.size(), 1u);
  EXPECT_EQ(std::get<3>(a.rekeys[0]), MROCE_HEV_RTO);
}

// The flight had arrived (its ACK was only slow): the probe's answer
// acknowledges it, and nothing is resent or re-keyed.
TEST_F(Conn, AnRtoProbeAnsweredResendsNothing) {
  establish();
  flight_arrived(1);
  a.paths[1].pto_at = a.paths[1].rto_at + 1;
  ASSERT_NO_FATAL_FAILURE(timer_probe_answered(a.paths[1].rto_at, 1));
  EXPECT_EQ(a.acked.size(), 2u);
  EXPECT_FALSE(a.paths[1].probed);
  EXPECT_TRUE(a.lost.empty());
  EXPECT_TRUE(a.rekeys.empty());
  EXPECT_EQ(a.c.stats.rtos, 0u);
}

// A probe already went out (the PTO fired first, as usual): the RTO is the
// probe's deadline too and expires the path at once, as before.
TEST_F(Conn, AnRtoAfterAnUnansweredPtoExpiresAtOnce) {
  establish();
  send(a, 1, 1000, 1);
  const uint64_t pto = a.paths[1].pto_at, rto = a.paths[1].rto_at;
  ASSERT_LT(pto, rto);
  mroce_timer_res res;
  now = pto;
  mroce_conn_on_timer(&a.c, now, &res);
  ASSERT_EQ(res.probe_mask, 1ull << 1);
  now = rto;
  mroce_conn_on_timer(&a.c, now, &res);
  EXPECT_EQ(a.c.stats.rtos, 1u);
  EXPECT_EQ(a.c.stats.ptos, 1u);
  EXPECT_EQ(a.paths[1].gen, 1);
}

// rto_probe = 0: an on-time RTO without a probe expires at once (old rule).
TEST_F(Conn, RtoProbeOffExpiresAnOnTimeRtoAtOnce) {
  p.rto_probe = 0;
  establish();
  send(a, 1, 1000, 1);
  a.paths[1].pto_at = a.paths[1].rto_at + 1;
  now = a.paths[1].rto_at;
  mroce_timer_res res;
  mroce_conn_on_timer(&a.c, now, &res);
  EXPECT_EQ(a.c.stats.rtos, 1u);
  EXPECT_EQ(a.c.stats.ptos, 0u);
}
