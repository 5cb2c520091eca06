// SPDX-License-Identifier: GPL-2.0
// libFuzzer target for the packet decoder. Besides "never crash, never read
// out of bounds" (ASan/UBSan), it checks that the codec is canonical: every
// input the decoder accepts re-encodes to exactly the same bytes, and every
// ACK block of an accepted ACK can be read back.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "mroce_wire.h"
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65535) return 0;
  // An exact-size heap copy makes any read past the end an ASan report.
  std::vector<uint8_t> in(data, data + size);
  mroce_pkt pkt;
  int err = mroce_decode(in.data(), static_cast<uint32_t>(size), &pkt);
  if (err < 0 || err >= MROCE_WIRE_NR_ERR) abort();
  if (err != MROCE_WIRE_OK) return 0;

  mroce_ack_block blocks[MROCE_ACK_MAX_BLOCKS];
  if (pkt.c.opcode == MROCE_OP_ACK) {
    // Zero blocks is a hint-only ACK; then there is nothing to read.
    if (pkt.u.ack.n_blocks > MROCE_ACK_MAX_BLOCKS) abort();
    if (!pkt.u.ack.n_blocks != !pkt.u.ack.raw_blocks) abort();
    for (uint32_t i = 0; i < pkt.u.ack.n_blocks; i++) mroce_ack_block_get(&pkt, i, &blocks[i]);
    pkt.u.ack.blocks = blocks;
  }
  if (pkt.payload_len > size) abort();
  if (pkt.payload_len && (pkt.payload < in.data() || pkt.payload + pkt.payload_len != in.data() + size))
    abort();
  uint8_t out[MROCE_MAX_HDR_LEN];
  uint32_t n = mroce_encode(&pkt, out, sizeof(out));
  if (!n || n + pkt.payload_len != size || memcmp(out, in.data(), n) != 0) abort();
  return 0;
}
