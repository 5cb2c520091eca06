// SPDX-License-Identifier: GPL-2.0
// Payload accounting, independent of the transport model: the sender posts
// messages; the receiver reports every byte range it places and each message
// it releases in order; the sender reports completions. The ledger checks
// that every byte is placed exactly once, inside its message, that messages
// are released and completed in posting order, and that a sender completion
// never precedes the placement of the whole message. With verification on,
// payload bytes are compared against a pattern of (stream, message, offset).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "des.h"

namespace sim {

// Bytes per time bin, for goodput curves and windows.
class Meter {
 public:
  explicit Meter(Time bin = 10 * kUs) : bin_(bin) {}
  void add(Time t, uint64_t bytes);
  uint64_t bytes(Time from, Time to) const;  // bins fully inside [from, to)
  double gbps(Time from, Time to) const;
  Time bin() const { return bin_; }
  size_t n_bins() const { return bins_.size(); }
  uint64_t bin_bytes(size_t i) const { return i < bins_.size() ? bins_[i] : 0; }
  uint64_t total() const { return total_; }

 private:
  Time bin_;
  std::vector<uint64_t> bins_;
  uint64_t total_ = 0;
};

struct LedgerErrors {
  uint64_t dup_bytes = 0;        // bytes placed a second time
  uint64_t bad_place = 0;        // placement outside any posted message
  uint64_t content = 0;          // payload bytes differing from the pattern
  uint64_t rx_order = 0;         // message released out of order
  uint64_t rx_incomplete = 0;    // released before all its bytes were placed
  uint64_t tx_order = 0;         // sender completion out of order
  uint64_t tx_early = 0;         // sender completion before full placement
  uint64_t total() const {
    return dup_bytes + bad_place + content + rx_order + rx_incomplete + tx_order + tx_early;
  }
  std::string str() const;
};

class Ledger {
 public:
  Ledger(uint32_t stream, bool verify) : stream_(stream), verify_(verify) {}

  // @tag is the transport's own note on the message (e.g. its RQ ordinal),
  // which the receiving side may check against what the packet says.
  uint32_t post(uint32_t len, Time now, uint32_t tag = 0);
  uint32_t msg_len(uint32_t idx) const;
  uint32_t msg_tag(uint32_t idx) const;
  // Expected payload of [off, off + len) of message @idx.
  void fill(uint32_t idx, uint32_t off, uint32_t len, uint8_t *out) const;
  // The receiver placed these bytes (@data may be null when not verifying).
  void place(uint32_t idx, uint32_t off, uint32_t len, const uint8_t *data, Time now);
  void rx_complete(uint32_t idx, Time now);
  void tx_complete(uint32_t idx, Time now);

  uint32_t stream() const { return stream_; }
  uint64_t posted_msgs() const { return posted_; }
  uint64_t posted_bytes() const { return posted_bytes_; }
  uint64_t placed_bytes() const { return placed_bytes_; }
  uint64_t rx_msgs() const { return rx_next_; }
  uint64_t tx_msgs() const { return tx_next_; }
  uint64_t tx_bytes() const { return tx_bytes_; }
  bool all_done() const { return tx_next_ == posted_ && rx_next_ == posted_; }
  const LedgerErrors &errors() const { return err_; }
  // Sender completion latency (post to completion) of completed messages.
  const std::vector<Time> &fct() const { return fct_; }
  Meter *meter = nullptr;       // newly placed bytes of this stream
  // Called after each sender completion (a closed-loop poster reposts).
  std::function<void(uint32_t idx)> on_tx_complete;
  Meter *tx_meter = nullptr;    // bytes of completed messages

 private:
  struct Msg {
    uint32_t len = 0;
    uint32_t tag = 0;
    Time posted = 0;
    uint32_t placed = 0;
    bool rx_done = false, tx_done = false;
    std::map<uint32_t, uint32_t> have;  // placed ranges, start -> end
    std::vector<uint8_t> buf;           // verify: the receive buffer
  };
  uint64_t mismatches(uint32_t idx, uint32_t off, uint32_t len, const uint8_t *data) const;
  Msg *find(uint32_t idx);
  const Msg *find(uint32_t idx) const;
  void retire();

  uint32_t stream_;
  bool verify_;
  std::deque<Msg> msgs_;
  uint32_t base_ = 0;  // index of msgs_.front()
  uint32_t posted_ = 0, rx_next_ = 0, tx_next_ = 0;
  uint64_t posted_bytes_ = 0, placed_bytes_ = 0, tx_bytes_ = 0;
  LedgerErrors err_;
  std::vector<Time> fct_;
};

double jain(const std::vector<double> &x);

}  // namespace sim
