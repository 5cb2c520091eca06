// SPDX-License-Identifier: GPL-2.0
// Helpers shared by the core unit tests: a seeded RNG and a generator of
// random valid packets for every opcode.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

extern "C" {
#include "mroce_wire.h"
}

namespace mt {

// Every randomized test takes its seed from here, so a failure is reproduced
// by rerunning with MROCE_TEST_SEED=<printed seed>.
uint64_t test_seed(uint64_t dflt);

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  uint64_t u64() { return gen_(); }
  uint32_t u32() { return static_cast<uint32_t>(gen_()); }
  // Uniform in [lo, hi].
  uint64_t range(uint64_t lo, uint64_t hi) {
    return lo + gen_() % (hi - lo + 1);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(gen_) < p; }
  std::mt19937_64 &engine() { return gen_; }

 private:
  std::mt19937_64 gen_;
};

extern const uint8_t kAllOpcodes[];
extern const size_t kNumOpcodes;

// A random packet of @opcode that the decoder must accept. Payload bytes are
// written to @payload (resized); ACK blocks to @blocks.
void random_packet(Rng &rng, uint8_t opcode, mroce_pkt *pkt,
                   std::vector<uint8_t> *payload,
                   std::vector<mroce_ack_block> *blocks);

// Header bytes followed by the payload.
std::vector<uint8_t> encode_full(const mroce_pkt &pkt,
                                 const std::vector<uint8_t> &payload);

// Field-by-field equality of two decoded packets (payload bytes included).
bool same_packet(const mroce_pkt &a, const mroce_pkt &b);

}  // namespace mt
