// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "test_util.h"

extern "C" {
#include "mroce_wire.h"
#include "vectors/wire_vectors.h"
}

namespace {

TEST(WireVectors, EveryVectorDecodesAsSpecified) {
  for (size_t i = 0; i < MROCE_WIRE_NR_VECTORS; i++) {
    const mroce_wire_vec &v = mroce_wire_vectors[i];
    mroce_pkt pkt;
    int err = mroce_decode(v.bytes, v.len, &pkt);
    EXPECT_EQ(err, v.err) << v.name << ": got " << mroce_wire_err_name[err];
    if (err != MROCE_WIRE_OK) continue;
    for (const mroce_wire_vec_field *f = v.f; f->id != MROCE_VF_END; f++)
      EXPECT_EQ(mroce_wire_vec_get(&pkt, f->id), f->val)
          << v.name << " field " << int(f->id);
  }
}

TEST(WireVectors, PositiveVectorsReencodeByteExact) {
  size_t positives = 0;
  for (size_t i = 0; i < MROCE_WIRE_NR_VECTORS; i++) {
    const mroce_wire_vec &v = mroce_wire_vectors[i];
    if (v.err != MROCE_WIRE_OK) continue;
    positives++;
    mroce_pkt pkt;
    ASSERT_EQ(mroce_decode(v.bytes, v.len, &pkt), MROCE_WIRE_OK) << v.name;
    std::vector<mroce_ack_block> blocks(pkt.c.opcode == MROCE_OP_ACK ? pkt.u.ack.n_blocks : 0);
    for (size_t b = 0; b < blocks.size(); b++) mroce_ack_block_get(&pkt, b, &blocks[b]);
    if (!blocks.empty()) {
      pkt.u.ack.blocks = blocks.data();
      pkt.u.ack.raw_blocks = nullptr;
    }
    uint8_t out[MROCE_WIRE_VEC_MAX_LEN];
    uint32_t n = mroce_encode(&pkt, out, sizeof(out));
    ASSERT_GT(n, 0u) << v.name;
    ASSERT_EQ(n + pkt.payload_len, v.len) << v.name;
    EXPECT_EQ(0, memcmp(out, v.bytes, n)) << v.name;
  }
  // One positive vector per opcode at least.
  EXPECT_GE(positives, mt::kNumOpcodes);
}

TEST(WireVectors, CoverEveryErrorCode) {
  bool seen[MROCE_WIRE_NR_ERR] = {};
  for (size_t i = 0; i < MROCE_WIRE_NR_VECTORS; i++) seen[mroce_wire_vectors[i].err] = true;
  for (int e = 0; e < MROCE_WIRE_NR_ERR; e++) {
    if (e != MROCE_WIRE_ENOSPC) {
      EXPECT_TRUE(seen[e]) << mroce_wire_err_name[e];
    }
  }
}

TEST(WireHeaders, WriteHeadersFitTheSixtyFourByteBudget) {
  EXPECT_EQ(mroce_hdr_len(MROCE_OP_WRITE), 56u);
  EXPECT_EQ(mroce_hdr_len(MROCE_OP_WRITE_IMM), 64u);
  EXPECT_EQ(mroce_hdr_len(MROCE_OP_SEND), 44u);
  EXPECT_EQ(mroce_hdr_len(MROCE_OP_READ_RESP), 44u);
  EXPECT_EQ(mroce_hdr_len(MROCE_OP_ACK), 28u);
  EXPECT_EQ(mroce_hdr_len(0x0a), 0u);
  EXPECT_EQ(mroce_hdr_len(0xff), 0u);
}

TEST(WireHeaders, MaxPayloadSubtractsTheOpcodeHeader) {
  EXPECT_EQ(mroce_max_payload(MROCE_OP_WRITE, 1472), 1472u - 56);
  EXPECT_EQ(mroce_max_payload(MROCE_OP_SEND, 4096), 4096u - 44);
  EXPECT_EQ(mroce_max_payload(MROCE_OP_READ_REQ, 4096), 0u);
  EXPECT_EQ(mroce_max_payload(MROCE_OP_MAD, 1500), 256u);
  EXPECT_EQ(mroce_max_payload(MROCE_OP_MAD, 200), 0u);
  EXPECT_EQ(mroce_max_payload(MROCE_OP_WRITE, 40), 0u);
}

TEST(WireEncode, RejectsTooSmallBuffer) {
  mt::Rng rng(1);
  for (size_t i = 0; i < mt::kNumOpcodes; i++) {
    mroce_pkt pkt;
    std::vector<uint8_t> pl;
    std::vector<mroce_ack_block> blocks;
    mt::random_packet(rng, mt::kAllOpcodes[i], &pkt, &pl, &blocks);
    uint8_t buf[MROCE_MAX_HDR_LEN];
    uint32_t n = mroce_encode(&pkt, buf, sizeof(buf));
    ASSERT_GT(n, 0u);
    EXPECT_EQ(mroce_encode(&pkt, buf, n - 1), 0u) << int(mt::kAllOpcodes[i]);
  }
}

TEST(WireEncode, RejectsFieldsWiderThanTheWire) {
  mroce_pkt pkt{};
  uint8_t buf[MROCE_MAX_HDR_LEN];
  pkt.c.opcode = MROCE_OP_SEND;
  pkt.c.dst_conn = 1;
  pkt.u.d.stream_id = 0x01000000;
  EXPECT_EQ(mroce_encode(&pkt, buf, sizeof(buf)), 0u);
  pkt.c.opcode = 0x0b;
  pkt.u.d.stream_id = 1;
  EXPECT_EQ(mroce_encode(&pkt, buf, sizeof(buf)), 0u);
  pkt.c.opcode = MROCE_OP_ACK;
  pkt.u.ack.n_blocks = MROCE_ACK_MAX_BLOCKS + 1;
  EXPECT_EQ(mroce_encode(&pkt, buf, sizeof(buf)), 0u);
  pkt.u.ack.n_blocks = 1;  // a block announced but none given
  pkt.u.ack.blocks = nullptr;
  EXPECT_EQ(mroce_encode(&pkt, buf, sizeof(buf)), 0u);
}

TEST(WireDecode, NeverReadsPastTheEndOfAnyPrefix) {
  // Every prefix of every vector is decoded from a heap copy of exactly that
  // length, so ASan flags any read past the end.
  for (size_t i = 0; i < MROCE_WIRE_NR_VECTORS; i++) {
    const mroce_wire_vec &v = mroce_wire_vectors[i];
    for (uint32_t n = 0; n <= v.len; n++) {
      std::vector<uint8_t> copy(v.bytes, v.bytes + n);
      mroce_pkt pkt;
      int err = mroce_decode(copy.data(), n, &pkt);
      if (n < MROCE_COMMON_LEN) {
        EXPECT_EQ(err, MROCE_WIRE_ETRUNC);
      }
    }
  }
}

TEST(WireProperty, RandomPacketsOfEveryOpcodeRoundTrip) {
  mt::Rng rng(mt::test_seed(0x5eed0001));
  for (int iter = 0; iter < 20000; iter++) {
    uint8_t op = mt::kAllOpcodes[iter % mt::kNumOpcodes];
    mroce_pkt pkt, back;
    std::vector<uint8_t> pl;
    std::vector<mroce_ack_block> blocks;
    mt::random_packet(rng, op, &pkt, &pl, &blocks);
    std::vector<uint8_t> bytes = mt::encode_full(pkt, pl);
    ASSERT_FALSE(bytes.empty()) << "op " << int(op);
    int err = mroce_decode(bytes.data(), bytes.size(), &back);
    ASSERT_EQ(err, MROCE_WIRE_OK) << "op " << int(op) << " " << mroce_wire_err_name[err];
    ASSERT_TRUE(mt::same_packet(pkt, back)) << "op " << int(op) << " iter " << iter;
  }
}

// The codec is a bijection between valid byte strings and packets: whatever
// mutated input the decoder accepts must re-encode to exactly those bytes.
// This is what rules out silently ignored bits.
static void check_canonical(const std::vector<uint8_t> &bytes, size_t *accepted) {
  mroce_pkt pkt;
  if (mroce_decode(bytes.data(), bytes.size(), &pkt) != MROCE_WIRE_OK) return;
  (*accepted)++;
  std::vector<mroce_ack_block> blocks;
  if (pkt.c.opcode == MROCE_OP_ACK) {
    blocks.resize(pkt.u.ack.n_blocks);
    for (size_t b = 0; b < blocks.size(); b++) mroce_ack_block_get(&pkt, b, &blocks[b]);
    pkt.u.ack.blocks = blocks.data();
  }
  std::vector<uint8_t> pl(pkt.payload, pkt.payload + pkt.payload_len);
  std::vector<uint8_t> again = mt::encode_full(pkt, pl);
  ASSERT_EQ(again, bytes);
}

TEST(WireProperty, AcceptedMutationsAreCanonical) {
  mt::Rng rng(mt::test_seed(0x5eed0002));
  size_t accepted = 0, tried = 0;
  for (int iter = 0; iter < 20000; iter++) {
    uint8_t op = mt::kAllOpcodes[iter % mt::kNumOpcodes];
    mroce_pkt pkt;
    std::vector<uint8_t> pl;
    std::vector<mroce_ack_block> blocks;
    mt::random_packet(rng, op, &pkt, &pl, &blocks);
    std::vector<uint8_t> bytes = mt::encode_full(pkt, pl);
    int nmut = static_cast<int>(rng.range(1, 3));
    for (int m = 0; m < nmut; m++) {
      size_t at = rng.range(0, bytes.size() - 1);
      bytes[at] ^= static_cast<uint8_t>(1u << rng.range(0, 7));
    }
    if (rng.chance(0.2)) bytes.resize(rng.range(0, bytes.size()));
    tried++;
    check_canonical(bytes, &accepted);
    if (HasFatalFailure()) return;
  }
  // Mutations of payload bytes and free-form fields stay valid; mutations
  // of structure do not. Both must happen for the test to mean anything.
  EXPECT_GT(accepted, tried / 10);
  EXPECT_LT(accepted, tried * 9 / 10);
}

TEST(WireProperty, TruncatedControlPacketsAreRejected) {
  mt::Rng rng(mt::test_seed(0x5eed0003));
  for (size_t i = 0; i < mt::kNumOpcodes; i++) {
    uint8_t op = mt::kAllOpcodes[i];
    mroce_pkt pkt, back;
    std::vector<uint8_t> pl;
    std::vector<mroce_ack_block> blocks;
    mt::random_packet(rng, op, &pkt, &pl, &blocks);
    std::vector<uint8_t> bytes = mt::encode_full(pkt, pl);
    uint32_t hdr = static_cast<uint32_t>(bytes.size() - pl.size());
    for (uint32_t n = 0; n < hdr; n++)
      EXPECT_NE(mroce_decode(bytes.data(), n, &back), MROCE_WIRE_OK)
          << "op " << int(op) << " len " << n;
  }
}

TEST(WireDecode, AckBlockCountMatchesLengthExactly) {
  mt::Rng rng(7);
  mroce_pkt pkt, back;
  std::vector<uint8_t> pl;
  std::vector<mroce_ack_block> blocks;
  mt::random_packet(rng, MROCE_OP_ACK, &pkt, &pl, &blocks);
  std::vector<uint8_t> bytes = mt::encode_full(pkt, pl);
  for (int nb = 0; nb <= 255; nb++) {
    bytes[24] = static_cast<uint8_t>(nb);
    int err = mroce_decode(bytes.data(), bytes.size(), &back);
    if (nb == pkt.u.ack.n_blocks) {
      EXPECT_EQ(err, MROCE_WIRE_OK);
    } else {
      EXPECT_NE(err, MROCE_WIRE_OK) << nb;
    }
  }
}

TEST(WireHeaders, HdrLenIsWhatTheDecoderReadsAsHeader) {
  for (size_t i = 0; i < MROCE_WIRE_NR_VECTORS; i++) {
    const mroce_wire_vec &v = mroce_wire_vectors[i];
    // Only the first MROCE_WIRE_PEEK_LEN bytes are there (ASan checks).
    for (uint32_t n = 0; n <= v.len; n++) {
      std::vector<uint8_t> peek(v.bytes, v.bytes + std::min<uint32_t>(n, MROCE_WIRE_PEEK_LEN));
      uint32_t h = mroce_wire_hdr_len(peek.data(), n);
      EXPECT_LE(h, n) << v.name;
      if (n < MROCE_COMMON_LEN) {
        EXPECT_EQ(h, n) << v.name;
      } else {
        EXPECT_GE(h, uint32_t(MROCE_COMMON_LEN)) << v.name;
      }
    }
    mroce_pkt pkt;
    if (v.err != MROCE_WIRE_OK) continue;
    ASSERT_EQ(mroce_decode(v.bytes, v.len, &pkt), MROCE_WIRE_OK);
    // Everything but the payload is header, ACK blocks included.
    EXPECT_EQ(mroce_wire_hdr_len(v.bytes, v.len), v.len - pkt.payload_len) << v.name;
  }
}

TEST(WireHeaders, HdrLenOfOddHeaders) {
  std::vector<uint8_t> b(2048, 0);
  b[0] = MROCE_WIRE_VERSION << 4;
  b[1] = MROCE_OP_ACK;
  b[24] = 200;  // more blocks than allowed: the decoder stops at the limit
  EXPECT_EQ(mroce_wire_hdr_len(b.data(), b.size()),
            uint32_t(MROCE_ACK_BASE_LEN + MROCE_ACK_MAX_BLOCKS * MROCE_ACK_BLOCK_LEN));
  EXPECT_EQ(mroce_wire_hdr_len(b.data(), 20), 20u);  // a truncated ACK head
  b[24] = 2;
  EXPECT_EQ(mroce_wire_hdr_len(b.data(), 60), 60u);  // blocks cut short
  b[1] = 0x0b;  // no such opcode: the common header
  EXPECT_EQ(mroce_wire_hdr_len(b.data(), b.size()), uint32_t(MROCE_COMMON_LEN));
  b[1] = MROCE_OP_WRITE_IMM;
  EXPECT_EQ(mroce_wire_hdr_len(b.data(), b.size()), 64u);  // docs §3.3
}

TEST(WireHeaders, SetArOnlyWhereTheOpcodeAllowsIt) {
  mt::Rng rng(11);
  for (uint8_t op : {MROCE_OP_WRITE, MROCE_OP_READ_RESP, MROCE_OP_PROBE, MROCE_OP_ACK,
                     MROCE_OP_NAK, MROCE_OP_CONN_REQ, MROCE_OP_UD_SEND}) {
    mroce_pkt pkt, back;
    std::vector<uint8_t> pl;
    std::vector<mroce_ack_block> blocks;
    mt::random_packet(rng, op, &pkt, &pl, &blocks);
    pkt.c.flags &= ~MROCE_F_AR;
    std::vector<uint8_t> bytes = mt::encode_full(pkt, pl), before = bytes;
    bool data = mroce_op_is_data(op) || op == MROCE_OP_PROBE;
    EXPECT_FALSE(mroce_wire_set_ar(bytes.data(), MROCE_COMMON_LEN - 1)) << int(op);
    EXPECT_EQ(mroce_wire_set_ar(bytes.data(), bytes.size()), data) << int(op);
    ASSERT_EQ(mroce_decode(bytes.data(), bytes.size(), &back), MROCE_WIRE_OK) << int(op);
    if (!data) {
      EXPECT_EQ(bytes, before) << int(op);
      continue;
    }
    // AR set, nothing else touched.
    EXPECT_EQ(back.c.flags, pkt.c.flags | MROCE_F_AR) << int(op);
    bytes[3] &= ~MROCE_F_AR;
    EXPECT_EQ(bytes, before) << int(op);
  }
}

TEST(WireDecode, ErrorNamesExistForEveryCode) {
  for (int e = 0; e < MROCE_WIRE_NR_ERR; e++) {
    ASSERT_NE(mroce_wire_err_name[e], nullptr);
    EXPECT_GT(strlen(mroce_wire_err_name[e]), 0u);
  }
}

}  // namespace
