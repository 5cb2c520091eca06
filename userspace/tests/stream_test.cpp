// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <set>

#include "test_util.h"

extern "C" {
#include "mroce_stream.h"
#include "mroce_wire.h"
}

namespace {

TEST(StreamTx, AssignsConsecutivePsnsFromTheInitialOne) {
  mroce_stx s;
  mroce_stx_init(&s, 0xfffffffe);
  EXPECT_EQ(mroce_stx_assign(&s), 0xfffffffeu);
  EXPECT_EQ(mroce_stx_assign(&s), 0xffffffffu);
  EXPECT_EQ(mroce_stx_assign(&s), 0u);
}

TEST(StreamTx, WindowClosesAt1024Unacked) {
  mroce_stx s;
  mroce_stx_init(&s, 100);
  for (int i = 0; i < MROCE_STREAM_WINDOW; i++) {
    ASSERT_TRUE(mroce_stx_can_assign(&s));
    mroce_stx_assign(&s);
  }
  EXPECT_FALSE(mroce_stx_can_assign(&s));
  // Acking anything but the lowest does not reopen it.
  EXPECT_EQ(mroce_stx_ack(&s, 101), MROCE_STX_ACK_NEW);
  EXPECT_FALSE(mroce_stx_can_assign(&s));
  EXPECT_EQ(mroce_stx_ack(&s, 100), MROCE_STX_ACK_NEW);
  EXPECT_EQ(s.una, 102u);
  EXPECT_TRUE(mroce_stx_can_assign(&s));
}

TEST(StreamTx, AckClassifiesDuplicatesAndUnassigned) {
  mroce_stx s;
  mroce_stx_init(&s, 0);
  for (int i = 0; i < 4; i++) mroce_stx_assign(&s);
  EXPECT_EQ(mroce_stx_ack(&s, 2), MROCE_STX_ACK_NEW);
  EXPECT_EQ(mroce_stx_ack(&s, 2), MROCE_STX_ACK_DUP);
  EXPECT_EQ(mroce_stx_ack(&s, 4), MROCE_STX_ACK_INVALID);
  EXPECT_EQ(mroce_stx_ack(&s, 0), MROCE_STX_ACK_NEW);
  EXPECT_EQ(mroce_stx_ack(&s, 0), MROCE_STX_ACK_DUP);  // below una now
  EXPECT_TRUE(mroce_stx_is_acked(&s, 0));
  EXPECT_FALSE(mroce_stx_is_acked(&s, 1));
  EXPECT_TRUE(mroce_stx_is_acked(&s, 2));
  EXPECT_FALSE(mroce_stx_is_acked(&s, 3));
  EXPECT_FALSE(mroce_stx_is_acked(&s, 4));
}

TEST(StreamRx, DuplicateBelowBaseIsReported) {
  mroce_srx r;
  mroce_srx_init(&r, 7);
  EXPECT_EQ(mroce_srx_check(&r, 7), MROCE_SRX_NEW);
  mroce_srx_accept(&r, 7, 0);
  uint32_t psn;
  uint8_t tag;
  EXPECT_FALSE(mroce_srx_pop(&r, &psn, &tag));
  EXPECT_EQ(mroce_srx_cum(&r), 7u);
  EXPECT_EQ(mroce_srx_check(&r, 7), MROCE_SRX_DUP);
  EXPECT_EQ(mroce_srx_check(&r, 6), MROCE_SRX_DUP);
}

TEST(StreamRx, DuplicateInsideWindowIsReported) {
  mroce_srx r;
  mroce_srx_init(&r, 0);
  mroce_srx_accept(&r, 5, 1);
  EXPECT_EQ(mroce_srx_check(&r, 5), MROCE_SRX_DUP);
  EXPECT_EQ(mroce_srx_check(&r, 4), MROCE_SRX_NEW);
}

TEST(StreamRx, BeyondWindowIsRefused) {
  mroce_srx r;
  mroce_srx_init(&r, 0);
  EXPECT_EQ(mroce_srx_check(&r, 1023), MROCE_SRX_NEW);
  EXPECT_EQ(mroce_srx_check(&r, 1024), MROCE_SRX_WINDOW);
}

mroce_pkt answer(uint8_t op, uint32_t psn, uint32_t msn, uint32_t off) {
  mroce_pkt p{};
  p.c.opcode = op;
  p.u.d.stream_psn = psn;
  p.u.d.msn = msn;
  p.u.d.msg_offset = off;
  return p;
}

TEST(StreamRx, FirstAnswerToTheFirstRequestSetsWhereAFreshStreamStarts) {
  mroce_srx r;
  mroce_srx_init(&r, 100);
  // Inside the window: the plain check, adopted or not.
  mroce_pkt in = answer(MROCE_OP_READ_RESP, 105, 0, 0);
  EXPECT_EQ(mroce_srx_check_data(&r, &in, true, true), MROCE_SRX_NEW);
  EXPECT_EQ(r.base, 100u);
  // Outside it, on a fresh stream we asked on: only the very first chunk of
  // the first answer is adopted ...
  mroce_pkt later = answer(MROCE_OP_READ_RESP, 5000, 0, 4096);
  EXPECT_EQ(mroce_srx_check_data(&r, &later, true, true), MROCE_SRX_WINDOW);
  mroce_pkt second = answer(MROCE_OP_ATOMIC_RESP, 5000, 1, 0);
  EXPECT_EQ(mroce_srx_check_data(&r, &second, true, true), MROCE_SRX_WINDOW);
  mroce_pkt first = answer(MROCE_OP_ATOMIC_RESP, 5000, 0, 0);
  EXPECT_EQ(mroce_srx_check_data(&r, &first, true, false), MROCE_SRX_WINDOW);  // never asked
  EXPECT_EQ(mroce_srx_check_data(&r, &first, false, true), MROCE_SRX_WINDOW);  // not fresh
  EXPECT_EQ(r.base, 100u);
  EXPECT_EQ(mroce_srx_check_data(&r, &first, true, true), MROCE_SRX_NEW);
  EXPECT_EQ(r.base, 5000u);
  // ... and requests, sends and writes never move a stream.
  mroce_srx_init(&r, 100);
  mroce_pkt req = answer(MROCE_OP_WRITE, 5000, 0, 0);
  EXPECT_EQ(mroce_srx_check_data(&r, &req, true, true), MROCE_SRX_WINDOW);
  EXPECT_EQ(r.base, 100u);
}

TEST(StreamRx, TaggedChunksPopInStreamOrderOnlyOnceContiguous) {
  mroce_srx r;
  mroce_srx_init(&r, 0xfffffffe);  // across the wrap
  uint32_t psn;
  uint8_t tag;
  mroce_srx_accept(&r, 0, 2);           // tagged, but 0xfffffffe/f missing
  EXPECT_FALSE(mroce_srx_pop(&r, &psn, &tag));
  mroce_srx_accept(&r, 0xffffffff, 1);
  EXPECT_FALSE(mroce_srx_pop(&r, &psn, &tag));
  mroce_srx_accept(&r, 0xfffffffe, 0);  // untagged
  ASSERT_TRUE(mroce_srx_pop(&r, &psn, &tag));
  EXPECT_EQ(psn, 0xffffffffu);
  EXPECT_EQ(tag, 1);
  ASSERT_TRUE(mroce_srx_pop(&r, &psn, &tag));
  EXPECT_EQ(psn, 0u);
  EXPECT_EQ(tag, 2);
  EXPECT_FALSE(mroce_srx_pop(&r, &psn, &tag));
  EXPECT_EQ(mroce_srx_cum(&r), 0u);
  EXPECT_EQ(r.base, 1u);
}

TEST(StreamRx, Tag3IsReportedIntact) {
  mroce_srx r;
  mroce_srx_init(&r, 0);
  mroce_srx_accept(&r, 0, 3);
  uint32_t psn;
  uint8_t tag;
  ASSERT_TRUE(mroce_srx_pop(&r, &psn, &tag));
  EXPECT_EQ(tag, 3);
}

// Sender and receiver windows under random loss, duplication and reordering:
// every chunk is accepted exactly once and tagged chunks pop in order.
TEST(StreamProperty, ExactlyOnceInOrderUnderChaos) {
  mt::Rng rng(mt::test_seed(0x57e4));
  for (int round = 0; round < 20; round++) {
    uint32_t start = rng.u32();
    mroce_stx tx;
    mroce_srx rx;
    mroce_stx_init(&tx, start);
    mroce_srx_init(&rx, start);
    const uint32_t total = 5000;
    std::vector<uint32_t> in_flight;
    std::multiset<uint32_t> accepted;
    uint32_t sent = 0, expect_pop = start, popped = 0;
    while (popped < total) {
      while (sent < total && mroce_stx_can_assign(&tx) && rng.chance(0.7)) {
        in_flight.push_back(mroce_stx_assign(&tx));
        sent++;
      }
      if (in_flight.empty()) {
        // Resend every unacked chunk (as loss recovery would).
        for (uint32_t p = tx.una; p != tx.next; p++)
          if (!mroce_stx_is_acked(&tx, p)) in_flight.push_back(p);
        continue;
      }
      size_t i = rng.range(0, in_flight.size() - 1);
      uint32_t psn = in_flight[i];
      if (!rng.chance(0.1)) in_flight.erase(in_flight.begin() + i);  // 10% dup
      if (rng.chance(0.2)) continue;                                  // 20% loss
      ASSERT_NE(mroce_srx_check(&rx, psn), MROCE_SRX_WINDOW);
      if (mroce_srx_check(&rx, psn) == MROCE_SRX_NEW) {
        accepted.insert(psn);
        mroce_srx_accept(&rx, psn, 1);
        uint32_t p;
        uint8_t tag;
        while (mroce_srx_pop(&rx, &p, &tag)) {
          ASSERT_EQ(p, expect_pop);
          expect_pop++;
          popped++;
        }
      }
      if (rng.chance(0.8)) mroce_stx_ack(&tx, psn);  // the ACK may be lost
    }
    EXPECT_EQ(accepted.size(), total);
    for (uint32_t p : accepted) ASSERT_EQ(accepted.count(p), 1u);
  }
}

}  // namespace
