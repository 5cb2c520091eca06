// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "test_util.h"

extern "C" {
#include "mroce_hs.h"
}

namespace {

// Builds a handshake packet from `from`, sends it through the codec and
// returns what the receiver decodes.
mroce_pkt wire(const mroce_hs &from, uint8_t op, uint32_t reason = 0) {
  mroce_pkt pkt, back;
  mroce_hs_build(&from, op, reason, &pkt);
  uint8_t buf[MROCE_MAX_HDR_LEN];
  uint32_t n = mroce_encode(&pkt, buf, sizeof(buf));
  EXPECT_GT(n, 0u);
  EXPECT_EQ(mroce_decode(buf, n, &back), MROCE_WIRE_OK);
  return back;
}

class Handshake : public ::testing::Test {
 protected:
  void SetUp() override {
    mroce_params_default(&p);
    mroce_hs_offer oa = {0xa1, 0x1111, 4096, 8, MROCE_CAP_ATOMIC, 25000};
    mroce_hs_offer ob = {0xb2, 0x2222, 1500, 16, 0, 0};
    mroce_hs_init(&a, &oa);
    mroce_hs_init(&b, &ob);
  }
  // a connects, b answers, a takes the answer.
  void establish() {
    mroce_hs_connect(&a, &p, 0);
    mroce_pkt req = wire(a, MROCE_OP_CONN_REQ);
    mroce_hs_on_msg(&b, &req);
    mroce_pkt rep = wire(b, MROCE_OP_CONN_REP);
    mroce_hs_on_msg(&a, &rep);
  }
  mroce_params p;
  mroce_hs a, b;
};

TEST_F(Handshake, ActiveOpenEstablishesOnRep) {
  EXPECT_EQ(mroce_hs_connect(&a, &p, 0), MROCE_HS_SEND_REQ);
  EXPECT_EQ(a.state, MROCE_HS_REQ_SENT);
  mroce_pkt req = wire(a, MROCE_OP_CONN_REQ);
  EXPECT_EQ(req.c.dst_conn, 0u);
  EXPECT_EQ(mroce_hs_on_msg(&b, &req), MROCE_HS_SEND_REP | MROCE_HS_UP);
  EXPECT_EQ(b.state, MROCE_HS_ESTABLISHED);
  mroce_pkt rep = wire(b, MROCE_OP_CONN_REP);
  EXPECT_EQ(rep.c.dst_conn, 0xa1u);
  EXPECT_EQ(rep.u.hs.echo_nonce, 0x1111u);
  EXPECT_EQ(mroce_hs_on_msg(&a, &rep), MROCE_HS_UP);
  EXPECT_EQ(a.state, MROCE_HS_ESTABLISHED);
  EXPECT_EQ(a.remote.id, 0xb2u);
  EXPECT_EQ(b.remote.id, 0xa1u);
}

TEST_F(Handshake, NegotiatesMinimumMtuAndPathsAndCommonCaps) {
  establish();
  EXPECT_EQ(mroce_hs_mtu(&a), 1500);
  EXPECT_EQ(mroce_hs_mtu(&b), 1500);
  EXPECT_EQ(mroce_hs_paths(&a), 8);
  EXPECT_EQ(mroce_hs_paths(&b), 8);
  EXPECT_EQ(mroce_hs_caps(&a), 0u);
  EXPECT_EQ(b.remote.init_rate, 25000u);
}

TEST_F(Handshake, SimultaneousOpenEstablishesBothWithoutTieBreak) {
  mroce_hs_connect(&a, &p, 0);
  mroce_hs_connect(&b, &p, 0);
  mroce_pkt ra = wire(a, MROCE_OP_CONN_REQ), rb = wire(b, MROCE_OP_CONN_REQ);
  EXPECT_EQ(mroce_hs_on_msg(&a, &rb), MROCE_HS_SEND_REP | MROCE_HS_UP);
  EXPECT_EQ(mroce_hs_on_msg(&b, &ra), MROCE_HS_SEND_REP | MROCE_HS_UP);
  // The crossing REPs change nothing.
  mroce_pkt pa = wire(a, MROCE_OP_CONN_REP), pb = wire(b, MROCE_OP_CONN_REP);
  EXPECT_EQ(mroce_hs_on_msg(&a, &pb), 0u);
  EXPECT_EQ(mroce_hs_on_msg(&b, &pa), 0u);
  EXPECT_EQ(a.remote.id, 0xb2u);
  EXPECT_EQ(b.remote.id, 0xa1u);
}

TEST_F(Handshake, LostRepIsAnsweredAgainOnDuplicateReq) {
  mroce_hs_connect(&a, &p, 0);
  mroce_pkt req = wire(a, MROCE_OP_CONN_REQ);
  mroce_hs_on_msg(&b, &req);
  EXPECT_EQ(mroce_hs_on_msg(&b, &req), MROCE_HS_SEND_REP);  // no RESTART
}

TEST_F(Handshake, PeerRestartIsDetectedByANewNonce) {
  mroce_hs_connect(&a, &p, 0);
  mroce_pkt req = wire(a, MROCE_OP_CONN_REQ);
  mroce_hs_on_msg(&b, &req);
  // a restarts: new incarnation, new id and nonce.
  mroce_hs_offer oa2 = {0xa9, 0x9999, 4096, 8, 0, 0};
  mroce_hs_init(&a, &oa2);
  mroce_hs_connect(&a, &p, 0);
  mroce_pkt req2 = wire(a, MROCE_OP_CONN_REQ);
  EXPECT_EQ(mroce_hs_on_msg(&b, &req2), MROCE_HS_SEND_REP | MROCE_HS_RESTART);
  EXPECT_EQ(b.remote.id, 0xa9u);
  EXPECT_EQ(b.remote.nonce, 0x9999u);
}

TEST_F(Handshake, RepForAnOldIncarnationIsIgnored) {
  mroce_hs_connect(&a, &p, 0);
  mroce_pkt req = wire(a, MROCE_OP_CONN_REQ);
  mroce_hs_on_msg(&b, &req);
  mroce_pkt rep = wire(b, MROCE_OP_CONN_REP);
  rep.u.hs.echo_nonce ^= 1;
  EXPECT_EQ(mroce_hs_on_msg(&a, &rep), 0u);
  EXPECT_EQ(a.state, MROCE_HS_REQ_SENT);
}

TEST_F(Handshake, ReqRetransmitsWithDoublingTimeoutThenFails) {
  uint64_t now = 0;
  mroce_hs_connect(&a, &p, now);
  uint32_t timeout = p.hs_timeout;
  EXPECT_EQ(mroce_hs_on_timer(&a, &p, now + timeout - 1), 0u);
  for (int i = 0; i < p.hs_retries; i++) {
    now += timeout;
    EXPECT_EQ(mroce_hs_on_timer(&a, &p, now), MROCE_HS_SEND_REQ) << i;
    timeout *= 2;
    EXPECT_EQ(a.deadline, now + timeout);
  }
  now += timeout;
  EXPECT_EQ(mroce_hs_on_timer(&a, &p, now), MROCE_HS_DOWN);
  EXPECT_EQ(a.state, MROCE_HS_FAILED);
  // A later REQ from the peer still establishes (passive side of a retry).
  mroce_hs_connect(&b, &p, now);
  mroce_pkt rb = wire(b, MROCE_OP_CONN_REQ);
  EXPECT_EQ(mroce_hs_on_msg(&a, &rb), MROCE_HS_SEND_REP | MROCE_HS_UP);
}

TEST_F(Handshake, CloseFromPeerTakesTheConnectionDownOnlyWithItsNonce) {
  establish();
  mroce_pkt cl = wire(b, MROCE_OP_CONN_CLOSE, 1);
  EXPECT_EQ(cl.u.hs.reason, 1u);
  mroce_pkt forged = cl;
  forged.u.hs.nonce ^= 4;
  EXPECT_EQ(mroce_hs_on_msg(&a, &forged), 0u);
  EXPECT_EQ(mroce_hs_on_msg(&a, &cl), MROCE_HS_DOWN);
  EXPECT_EQ(a.state, MROCE_HS_CLOSED);
}

TEST_F(Handshake, UnknownConnNakNamingOurPeerIdTakesItDown) {
  establish();
  EXPECT_EQ(mroce_hs_on_unknown(&a, 0x1234), 0u);
  EXPECT_EQ(mroce_hs_on_unknown(&a, 0xb2), MROCE_HS_DOWN);
  EXPECT_EQ(mroce_hs_close(&a), 0u);  // already down
}

TEST_F(Handshake, ConnectWhileEstablishedDoesNothing) {
  mroce_hs_connect(&a, &p, 0);
  EXPECT_EQ(mroce_hs_connect(&a, &p, 0), 0u);
  a.state = MROCE_HS_ESTABLISHED;
  EXPECT_EQ(mroce_hs_connect(&a, &p, 0), 0u);
  EXPECT_EQ(mroce_hs_close(&a), MROCE_HS_DOWN);
}

TEST(HandshakeNames, EveryStateHasAName) {
  for (int s = 0; s < MROCE_HS_NR_STATES; s++) EXPECT_NE(mroce_hs_state_name[s], nullptr);
}

}  // namespace
