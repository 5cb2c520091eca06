// SPDX-License-Identifier: GPL-2.0
// Writes the fuzzers' seed corpora: every wire test vector for wire_fuzz,
// and for conn_fuzz sequences built from a real exchange (ACKs a peer
// would send for the data in flight, a NAK, probes, timer advances).
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include "mroce_conn.h"
#include "vectors/wire_vectors.h"
}

static void write_file(const std::string &path, const std::vector<uint8_t> &b) {
  FILE *f = fopen(path.c_str(), "wb");
  if (!f) {
    perror(path.c_str());
    return;
  }
  if (!b.empty()) fwrite(b.data(), 1, b.size(), f);
  fclose(f);
}

static void rec(std::vector<uint8_t> &out, uint8_t kind, const uint8_t *b, size_t n) {
  if (n > 255) return;
  out.push_back(kind);
  out.push_back(static_cast<uint8_t>(n));
  out.insert(out.end(), b, b + n);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <wire corpus dir> <conn corpus dir>\n", argv[0]);
    return 2;
  }
  std::string wire = argv[1], conn = argv[2];
  for (size_t i = 0; i < MROCE_WIRE_NR_VECTORS; i++) {
    const mroce_wire_vec &v = mroce_wire_vectors[i];
    write_file(wire + "/" + v.name, std::vector<uint8_t>(v.bytes, v.bytes + v.len));
  }

  // conn_fuzz seeds: ACKs for the 40 packets the target sends first, on
  // every path, cumulative and with holes; a NAK; probes; clock advances.
  for (int variant = 0; variant < 6; variant++) {
    std::vector<uint8_t> seq;
    for (uint8_t path = 0; path < 8; path++) {
      mroce_ack_block blk{};
      blk.path_id = path;
      blk.cum_psn = variant % 2 ? 0 : 3;
      if (variant >= 2) blk.sack[0] = 0x5;
      blk.rx_cnt = 4;
      blk.ce_cnt = variant == 4 ? 2 : 0;
      mroce_pkt pkt{};
      pkt.c.opcode = MROCE_OP_ACK;
      pkt.c.dst_conn = 1;
      pkt.u.ack.rate_hint = variant == 5 ? 1000 : 0;
      pkt.u.ack.n_blocks = 1;
      pkt.u.ack.blocks = &blk;
      uint8_t buf[MROCE_MAX_HDR_LEN];
      uint32_t n = mroce_encode(&pkt, buf, sizeof(buf));
      rec(seq, 0, buf, n);
    }
    mroce_pkt nak{};
    nak.c.opcode = MROCE_OP_NAK;
    nak.c.dst_conn = 1;
    nak.u.nak.code = variant == 3 ? MROCE_NAK_STALE_GEN : MROCE_NAK_RNR;
    nak.u.nak.path_psn = 4;
    nak.u.nak.arg = 1;
    uint8_t buf[MROCE_MAX_HDR_LEN];
    uint32_t n = mroce_encode(&nak, buf, sizeof(buf));
    rec(seq, 0, buf, n);
    const uint8_t dt[4] = {0x00, 0x20, 0x00, 0x00};  // ~2 ms
    rec(seq, 1, dt, 4);
    const uint8_t more[1] = {9};
    rec(seq, 2, more, 1);
    rec(seq, 1, dt, 4);
    rec(seq, 3, nullptr, 0);
    // Hint samples and grants that rise, are held and fall (hint-only ACKs).
    const uint8_t grant[3][6] = {{0, 5, 0, 0, 0x27, 0x10},   // 5 us, 10 Gb/s
                                 {0, 5, 0, 1, 0x86, 0xa0},   // 100 Gb/s
                                 {0, 50, 0, 0, 0x03, 0xe8}};  // 1 Gb/s
    for (const auto &g : grant) {
      rec(seq, 2, more, 1);
      rec(seq, 7, g, 6);
    }
    write_file(conn + "/seq" + std::to_string(variant), seq);
  }
  return 0;
}
