// SPDX-License-Identifier: GPL-2.0
#include "ledger.h"

#include <algorithm>
#include <cstring>

namespace sim {

void Meter::add(Time t, uint64_t b) {
  size_t i = size_t(t / bin_);
  if (i >= bins_.size()) bins_.resize(i + 1, 0);
  bins_[i] += b;
  total_ += b;
}

uint64_t Meter::bytes(Time from, Time to) const {
  uint64_t s = 0;
  for (size_t i = size_t((from + bin_ - 1) / bin_); (i + 1) * bin_ <= to && i < bins_.size(); i++)
    s += bins_[i];
  return s;
}

double Meter::gbps(Time from, Time to) const {
  Time a = (from + bin_ - 1) / bin_ * bin_, b = to / bin_ * bin_;
  return b > a ? double(bytes(a, b)) * 8.0 / double(b - a) : 0.0;
}

std::string LedgerErrors::str() const {
  return "dup_bytes=" + std::to_string(dup_bytes) + " bad_place=" + std::to_string(bad_place) +
         " content=" + std::to_string(content) + " rx_order=" + std::to_string(rx_order) +
         " rx_incomplete=" + std::to_string(rx_incomplete) + " tx_order=" +
         std::to_string(tx_order) + " tx_early=" + std::to_string(tx_early);
}

uint32_t Ledger::post(uint32_t len, Time now, uint32_t tag) {
  Msg m;
  m.len = len;
  m.tag = tag;
  m.posted = now;
  if (verify_) m.buf.assign(len, 0);
  msgs_.push_back(std::move(m));
  posted_bytes_ += len;
  return posted_++;
}

Ledger::Msg *Ledger::find(uint32_t idx) {
  if (idx - base_ >= msgs_.size()) return nullptr;
  return &msgs_[idx - base_];
}

const Ledger::Msg *Ledger::find(uint32_t idx) const {
  if (idx - base_ >= msgs_.size()) return nullptr;
  return &msgs_[idx - base_];
}

uint32_t Ledger::msg_len(uint32_t idx) const {
  const Msg *m = find(idx);
  return m ? m->len : 0;
}

uint32_t Ledger::msg_tag(uint32_t idx) const {
  const Msg *m = find(idx);
  return m ? m->tag : ~0u;
}

void Ledger::fill(uint32_t idx, uint32_t off, uint32_t len, uint8_t *out) const {
  // One hash per 8-byte word of the message.
  uint32_t i = 0;
  while (i < len) {
    uint32_t o = off + i, word = o >> 3;
    uint64_t w = mix64(uint64_t(stream_) << 40 ^ uint64_t(idx) << 20 ^ word ^
                       uint64_t(idx) * 0x9E3779B97F4A7C15ULL);
    for (uint32_t b = o & 7; b < 8 && i < len; b++, i++) out[i] = uint8_t(w >> (b * 8));
  }
}

uint64_t Ledger::mismatches(uint32_t idx, uint32_t off, uint32_t len, const uint8_t *data) const {
  std::vector<uint8_t> want(len);
  fill(idx, off, len, want.data());
  if (!memcmp(want.data(), data, len)) return 0;
  uint64_t n = 0;
  for (uint32_t i = 0; i < len; i++) n += want[i] != data[i];
  return n;
}

void Ledger::place(uint32_t idx, uint32_t off, uint32_t len, const uint8_t *data, Time now) {
  Msg *m = find(idx);
  if (!m || uint64_t(off) + len > m->len) {
    err_.bad_place++;
    return;
  }
  if (!len) return;
  // Merge [off, off + len) into the placed ranges; any overlap is a byte
  // placed twice, which the transport must never do.
  uint32_t s = off, e = off + len;
  auto next = m->have.lower_bound(s);  // first range starting at or after s
  auto prev = next == m->have.begin() ? m->have.end() : std::prev(next);
  if (prev != m->have.end() && prev->second > s) {
    err_.dup_bytes += std::min(prev->second, e) - s;
    return;
  }
  if (next != m->have.end() && next->first < e) {
    err_.dup_bytes += std::min(next->second, e) - next->first;
    return;
  }
  if (next != m->have.end() && next->first == e) {
    e = next->second;
    m->have.erase(next);
  }
  if (prev != m->have.end() && prev->second == s)
    prev->second = e;
  else
    m->have[s] = e;
  m->placed += len;
  placed_bytes_ += len;
  if (meter) meter->add(now, len);
  if (verify_) {
    if (!data) {
      err_.content += len;
      return;
    }
    err_.content += mismatches(idx, off, len, data);
    memcpy(m->buf.data() + off, data, len);
  }
}

void Ledger::rx_complete(uint32_t idx, Time) {
  if (idx != rx_next_) {
    err_.rx_order++;
    return;
  }
  Msg *m = find(idx);
  rx_next_++;
  if (!m) {
    err_.rx_order++;
    return;
  }
  if (m->placed != m->len) err_.rx_incomplete++;
  if (verify_ && mismatches(idx, 0, m->len, m->buf.data())) err_.content++;
  m->rx_done = true;
  retire();
}

void Ledger::tx_complete(uint32_t idx, Time now) {
  if (idx != tx_next_) {
    err_.tx_order++;
    return;
  }
  Msg *m = find(idx);
  tx_next_++;
  if (!m) {
    err_.tx_order++;
    return;
  }
  if (m->placed != m->len) err_.tx_early++;
  m->tx_done = true;
  tx_bytes_ += m->len;
  fct_.push_back(now - m->posted);
  if (tx_meter) tx_meter->add(now, m->len);
  retire();
  if (on_tx_complete) on_tx_complete(idx);
}

void Ledger::retire() {
  while (!msgs_.empty() && msgs_.front().rx_done && msgs_.front().tx_done) {
    msgs_.pop_front();
    base_++;
  }
}

double jain(const std::vector<double> &x) {
  double s = 0, s2 = 0;
  for (double v : x) {
    s += v;
    s2 += v * v;
  }
  return s2 > 0 ? s * s / (double(x.size()) * s2) : 1.0;
}

}  // namespace sim
