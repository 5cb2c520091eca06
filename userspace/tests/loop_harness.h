// SPDX-License-Identifier: GPL-2.0
// A two-endpoint loop over the protocol core (not the simulator): each
// endpoint drives a struct mroce_conn exactly as the kernel module is meant
// to (docs/protocol.md §9.3: reserve/commit/fill/encode on send;
// decode/check/place/accept on receive; ACK/NAK/timer handling), and a small
// network model between them loses, duplicates, reorders, delays and
// CE-marks packets, with ECMP that hashes the UDP source port onto links.
//
// The endpoints carry WRITE, SEND, READ and FETCH_ADD on several streams;
// READ and ATOMIC responses travel as the responder's own reliable data
// (§4.3). They record what was placed and completed so that tests can
// assert exactly-once placement and execution, correct bytes and in-order
// completion.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
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
  double ce = 0;              // chance an ECT packet gets CE-marked
  bool blackhole = false;
};

struct NetCfg {
  std::vector<LinkCfg> links = std::vector<LinkCfg>(4);
  uint64_t jitter_ns = 2000;
  // Optional extra drop rule (targeted losses): true drops the packet.
  std::function<bool(int from, const std::vector<uint8_t> &bytes)> drop;
};

// Responses (kReadResp, kAtomicResp) are created by the responder itself.
enum class MsgKind { kWrite, kSend, kRead, kAtomic, kReadResp, kAtomicResp };

struct Message {
  MsgKind kind;
  std::vector<uint8_t> data;  // WRITE/SEND payload; READ_RESP bytes
  uint32_t read_off = 0;      // READ: offset in the responder's region
  int64_t region_off = -1;    // WRITE into the responder's READ region
  uint32_t read_len = 0;
  uint64_t add = 0;           // FETCH_ADD operand
  // Filled in by the endpoint:
  uint32_t msn = 0;           // RQ ordinal (SEND) or read ordinal
  uint32_t req_ssn = 0;       // responses: the request's SSN
  uint64_t orig = 0;          // ATOMIC_RESP
};

Message write_msg(std::vector<uint8_t> data);
Message send_msg(std::vector<uint8_t> data);
Message read_msg(uint32_t off, uint32_t len);
// A WRITE into the peer's READ/ATOMIC region at `off` (read-after-write).
Message region_write_msg(uint32_t off, std::vector<uint8_t> data);
Message fetch_add_msg(uint64_t add);

constexpr uint32_t kRegionSize = 1 << 16;  // each stream's READ/ATOMIC target

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

  // Queues a request on stream `s` towards the peer.
  void post(uint32_t s, Message m);
  // Every request posted here completed, and every response we owe was acked.
  bool all_sent_completed() const;
  // Every SEND the peer posted produced a receive completion here.
  bool all_received_completed(const Endpoint &peer) const;
  // Checks what arrived from the peer: WRITE/SEND bytes, READ results,
  // FETCH_ADD originals and totals, exactly-once placement and in-order
  // completion. Empty if all is well.
  std::string verify_from(const Endpoint &peer) const;

  // Driven by the loop.
  void connect(uint64_t now);
  void receive(const std::vector<uint8_t> &bytes, bool ce, uint64_t now);
  void on_timer(uint64_t now);
  void pump(uint64_t now);
  // Also checks the connection's cached deadline against a full scan.
  uint64_t next_wakeup();
  // The cached deadline (mroce_conn_next_deadline()) equals a full scan
  // (mroce_conn_scan_deadline()); a mismatch fails the running test.
  void check_deadline();

  mroce_conn conn{};
  std::vector<mroce_path> paths;
  EndpointCfg cfg;

  struct Stats {
    uint64_t chunks_sent = 0, chunks_placed = 0, stream_dups = 0, naks_tx = 0, naks_rx = 0;
    uint64_t retransmits = 0, retry_exhausted = 0, bad_packets = 0, placement_errors = 0;
    uint64_t completions_tx = 0, completions_rx = 0, order_errors = 0, executed = 0;
    uint64_t rekeys_why[8] = {};  // by enum mroce_health_event
    uint64_t deadline_checks = 0, deadline_mismatches = 0;
  } st;

  struct PendingReq {
    uint8_t opcode;
    uint32_t ssn, msn, length;
    uint64_t va, add;
  };
  // Receiver side of one stream.
  struct RxStream {
    mroce_srx srx{};
    std::vector<std::vector<uint8_t>> write_mem;  // indexed by message ssn
    std::vector<std::vector<uint8_t>> recv_buf;   // indexed by msn
    std::vector<uint32_t> recv_len;
    std::map<uint32_t, uint32_t> tag_msn;         // stream psn of a tagged chunk -> msn
    std::map<uint32_t, PendingReq> reqs;          // READ/ATOMIC requests by stream psn
    uint32_t next_recv_msn = 0, next_req_msn = 0, next_resp_msn = 0;
    std::vector<uint32_t> completed;              // receive completions (msns) in order
    std::map<uint32_t, int> placed;               // stream psn -> times placed
    std::vector<uint8_t> region;                  // READ/ATOMIC target memory
    uint64_t counter = 0;                         // FETCH_ADD target
  };
  std::vector<RxStream> rx;

 private:
  struct TxChunk {
    uint32_t msg, off, len;
    bool eom;
  };
  struct ReadState {
    uint32_t msg;
    std::vector<uint8_t> buf;
    uint64_t orig = 0;
    bool done = false;
  };
  struct TxStream {
    mroce_stx stx{};
    std::deque<uint32_t> pending;                 // messages not fully segmented
    uint32_t seg_off = 0;
    std::vector<Message> msgs;
    std::vector<uint32_t> msg_last_psn;           // last chunk's stream psn
    uint32_t next_rq_msn = 0, next_rd_msn = 0;
    std::vector<ReadState> reads;                 // by read ordinal
    std::map<uint32_t, TxChunk> chunks;           // stream psn -> chunk
    uint32_t completed = 0;                       // messages completed in order
  };
  struct Retx {
    uint64_t cookie;
    int path;
    uint64_t not_before;
  };
  static void cb_rekey(void *ctx, uint8_t path, uint8_t old_gen, uint16_t old_sport, uint8_t why);

  static void cb_acked(void *ctx, uint64_t cookie, uint32_t len, uint8_t path);
  static void cb_lost(void *ctx, uint64_t cookie, uint32_t len, uint8_t path, uint32_t psn,
                      uint8_t why);
  void queue(uint32_t s, Message m);
  void send_packet(const mroce_pkt &pkt, const uint8_t *payload, uint32_t len, uint16_t sport, bool ect);
  void send_probes(uint64_t mask, uint64_t now);
  void send_acks(uint64_t now);
  void handle_hs(uint32_t act);
  void on_data(const mroce_pkt &pkt, bool ce, uint64_t now);
  void nak(const mroce_pkt &pkt, uint8_t code, uint32_t arg);
  // Validates and places a NEW chunk; returns the stream tag or a NAK code.
  bool accept_chunk(uint32_t s, const mroce_pkt &pkt, uint8_t *tag, uint8_t *nak_code);
  void on_released(uint32_t s, uint32_t psn, uint8_t tag);
  void complete_tx(uint32_t s);
  void update_backlog(uint64_t now);
  void build_packet(uint32_t s, uint32_t psn, const TxChunk &ch, bool retx, mroce_pkt *pkt);

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
