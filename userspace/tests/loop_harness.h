// SPDX-License-Identifier: GPL-2.0
// A two-endpoint loop over the protocol core (not the simulator): each
// endpoint drives a struct mroce_conn exactly as the kernel module is meant
// to (reserve/commit/fill/encode on send; decode/check/place/accept on
// receive; ACK/NAK/timer handling), and a small network model between them
// loses, duplicates, reorders, delays and CE-marks packets, with ECMP that
// hashes the UDP source port onto a set of links.
//
// The endpoints carry RDMA-WRITE and SEND messages on several streams and
// record what was placed and completed, so tests can assert exactly-once
// placement, correct bytes and in-order completion.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

extern "C" {
#include "mroce_conn.h"
#include "mroce_stream.h"
#include "mroce_place.h"
}

namespace mt {

struct LinkCfg {
  uint64_t delay_ns = 20000;  // one-way
  double loss = 0;
  double dup = 0;
  double reorder = 0;         // chance a packet skips ahead of the FIFO
  double ce = 0;              // chance a data packet gets CE-marked
  bool blackhole = false;
};

struct NetCfg {
  std::vector<LinkCfg> links = std::vector<LinkCfg>(4);
  uint64_t jitter_ns = 2000;
  // Optional extra drop rule (targeted losses): true drops the packet.
  std::function<bool(int from, const std::vector<uint8_t> &bytes)> drop;
};

enum class MsgKind { kWrite, kSend };

struct Message {
  MsgKind kind;
  std::vector<uint8_t> data;
};

struct EndpointCfg {
  uint32_t conn_id = 0;
  uint16_t mtu = 1500;
  uint8_t paths = 8;
  uint32_t streams = 2;
  uint32_t rq_depth = 1u << 30;  // receive WQEs posted per stream (RNR below)
  uint32_t rnr_delay_us = 50;
};

class Loop;

class Endpoint {
 public:
  Endpoint(Loop *loop, int index, const mroce_params *prm, const EndpointCfg &cfg, uint64_t seed);

  // Queues a message on stream `s` towards the peer.
  void post(uint32_t s, Message m);
  bool all_sent_completed() const;
  bool all_received_completed(const Endpoint &peer) const;
  // Checks every byte the peer sent was placed where it belongs, every
  // chunk exactly once, and receive completions in order. Empty if fine.
  std::string verify_from(const Endpoint &peer) const;

  // Driven by the loop.
  void connect(uint64_t now);
  void receive(const std::vector<uint8_t> &bytes, bool ce, uint64_t now);
  void on_timer(uint64_t now);
  void pump(uint64_t now);
  uint64_t next_wakeup() const;

  mroce_conn conn{};
  std::vector<mroce_path> paths;
  EndpointCfg cfg;

  struct Stats {
    uint64_t chunks_sent = 0, chunks_placed = 0, stream_dups = 0, naks_tx = 0, naks_rx = 0;
    uint64_t retransmits = 0, retry_exhausted = 0, bad_packets = 0, placement_errors = 0;
    uint64_t completions_tx = 0, completions_rx = 0, order_errors = 0, byte_errors = 0;
  } st;

  // What arrived, per stream, for the tests to check.
  struct RxStream {
    mroce_srx srx{};
    std::vector<std::vector<uint8_t>> write_mem;  // indexed by message ssn
    std::vector<std::vector<uint8_t>> recv_buf;   // indexed by msn
    std::vector<uint32_t> recv_len;
    std::map<uint32_t, uint32_t> eom_msn;         // stream psn of a SEND EOM -> msn
    uint32_t next_complete_msn = 0;
    std::vector<uint32_t> completed;              // msns, in completion order
    std::map<uint32_t, int> placed;               // stream psn -> times placed
  };
  std::vector<RxStream> rx;

 private:
  struct TxChunk {
    uint32_t msg, off, len;
    bool eom;
  };
  struct TxStream {
    mroce_stx stx{};
    std::deque<uint32_t> pending;                 // message indices not fully segmented
    uint32_t seg_off = 0;
    std::vector<Message> msgs;
    std::vector<uint32_t> msg_last_psn;           // last chunk's stream psn
    std::vector<uint32_t> msg_msn;                // RQ ordinal for SENDs
    uint32_t next_msn = 0;
    std::map<uint32_t, TxChunk> chunks;           // stream psn -> chunk
    uint32_t completed = 0;                       // messages completed in order
  };
  struct Retx {
    uint64_t cookie;
    int path;
    uint64_t not_before;
  };

  static void cb_acked(void *ctx, uint64_t cookie, uint32_t len, uint8_t path);
  static void cb_lost(void *ctx, uint64_t cookie, uint32_t len, uint8_t path);
  void send_packet(const mroce_pkt &pkt, const uint8_t *payload, uint32_t len, uint16_t sport, bool ect);
  void send_probes(uint64_t mask, uint64_t now);
  void send_acks(uint64_t now);
  void handle_hs(uint32_t act, uint64_t now);
  void on_data(const mroce_pkt &pkt, bool ce, uint64_t now);
  void nak(const mroce_pkt &pkt, uint8_t code, uint32_t arg);
  bool place(RxStream &r, const mroce_pkt &pkt);
  void complete_tx(uint32_t s);
  void update_backlog(uint64_t now);

  Loop *loop_;
  int index_;
  Rng rng_;
  mroce_conn_ops ops_{};
  std::vector<TxStream> tx_;
  std::deque<Retx> retx_;
  uint32_t rr_ = 0;
  uint64_t paced_until_ = 0;
  uint64_t last_now_ = 0;
};

class Loop {
 public:
  Loop(const NetCfg &net, const mroce_params *prm, const EndpointCfg &a, const EndpointCfg &b,
       uint64_t seed);

  // Runs until `done()` or `limit_ns` of simulated time; returns true if done.
  bool run(const std::function<bool()> &done, uint64_t limit_ns);
  void transmit(int from, uint16_t sport, std::vector<uint8_t> bytes, bool ect);

  Endpoint &ep(int i) { return *eps_[i]; }
  NetCfg &net() { return net_; }
  uint64_t now() const { return now_; }
  int link_of(uint16_t sport) const;
  uint64_t delivered = 0, dropped = 0, duplicated = 0;

 private:
  struct InFlight {
    uint64_t at;
    uint64_t seq;
    int to;
    bool ce;
    std::vector<uint8_t> bytes;
    bool operator>(const InFlight &o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  NetCfg net_;
  Rng rng_;
  uint64_t now_ = 1000000;
  uint64_t seq_ = 0;
  std::vector<uint64_t> link_tail_;  // per (direction, link): FIFO departure floor
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<InFlight>> q_;
  std::unique_ptr<Endpoint> eps_[2];
};

// Deterministic contents of message `m` on stream `s` from endpoint `from`.
std::vector<uint8_t> pattern(int from, uint32_t s, uint32_t m, size_t len);

}  // namespace mt
