// SPDX-License-Identifier: GPL-2.0
// What scenarios see of a transport model: one-directional streams (a QP's
// send side paired with the peer QP's receive side) to post messages on, and
// per-stream accounting.
#pragma once

#include <cstdint>
#include <memory>

#include "ledger.h"

namespace sim {

enum class Op : uint8_t { kWrite, kSend };

class Stream {
 public:
  Stream(uint32_t id, bool verify) : ledger(id, verify) {}
  virtual ~Stream() = default;
  // Posts a message of @len bytes (>= 1).
  virtual void post(uint32_t len, Op op = Op::kWrite) = 0;
  // Rate the sender's controller currently allows, Gbit/s.
  virtual double rate_gbps() const = 0;
  // The stream can no longer make progress (QP or connection in error).
  virtual bool failed() const = 0;
  Ledger ledger;
  uint64_t retx_bytes = 0;  // payload bytes transmitted more than once
};

}  // namespace sim
