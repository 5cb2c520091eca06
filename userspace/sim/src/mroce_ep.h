// SPDX-License-Identifier: GPL-2.0
// mroce endpoint model: drives the protocol core (drivers/infiniband/sw/mroce/
// core, compiled unchanged) the way the kernel device does. One MroceDev per
// host; one MroceConn per peer, shared by every QP to that peer; QPs are
// streams of RDMA Writes and Sends cut into chunks at the negotiated MTU.
// Every packet is encoded and decoded with the core's codec.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net.h"
#include "transport.h"

extern "C" {
#include "mroce_conn.h"
#include "mroce_hint.h"
#include "mroce_place.h"
#include "mroce_seq.h"
#include "mroce_stream.h"
}

namespace sim {

struct MroceCfg {
  mroce_params prm;
  uint16_t mtu = 4096 + MROCE_DATA_LEN + 16;  // WRITE payload 4096
  bool hints = true;                          // receiver computes rate hints
  Time hint_period = 10 * kUs;
  uint32_t hint_mbps = 0;                     // capacity hints share; 0: the NIC ports'
  bool hint_drain = false;                    // the measured drain cap (module hint_drain)
  Time timer_late = 0;                        // timers fire up to this much late (uniform)
  Time base_rtt = 10 * kUs;                   // hint: fabric RTT
  uint32_t init_rate = 0;                     // Mbit/s offered in the handshake
  bool verify = false;                        // materialise and check payload bytes
  uint32_t nic_limit = 1 << 20;               // pump waits while the NIC holds more
  MroceCfg();
};

// The core's defaults are for a software device on a LAN (ms timers); the
// simulated fabric has ~10 us RTTs, so the timers are divided by 10.
mroce_params mroce_sim_params();
// The kernel module's parameters (its defaults, mroce_knobs.c): the core's
// defaults with min RTO 10 ms and a 1 ms pacing horizon.
mroce_params mroce_module_params();
// Sets one tunable by its field name (exploration: `mroce-sim bulk --prm`);
// false if there is no such field.
bool mroce_param_set(mroce_params &p, const std::string &name, uint64_t value);

class MroceDev;
class MroceConn;

class MroceQp : public Stream {
 public:
  MroceQp(MroceConn &conn, uint32_t qpn, uint32_t id, bool verify);
  void post(uint32_t len, Op op = Op::kWrite) override;
  double rate_gbps() const override;
  bool failed() const override;
  uint32_t qpn() const { return qpn_; }
  uint32_t rqpn() const { return rqpn_; }

 private:
  friend class MroceConn;
  friend class MroceDev;
  struct Wr {
    uint32_t idx;  // ledger index == SSN
    uint32_t len;
    Op op;
    uint32_t msn;
  };
  bool has_unsent() const { return !sq_.empty(); }

  MroceConn &conn_;
  uint32_t qpn_, rqpn_ = 0;
  MroceQp *peer_ = nullptr;  // the receiving QP of this stream
  mroce_stx stx_;
  mroce_srx srx_;
  std::deque<Wr> sq_;
  uint32_t sq_off_ = 0;
  uint32_t next_msn_ = 0;
  std::deque<std::pair<uint32_t, uint32_t>> cpl_;  // (last stream PSN, idx)
  std::deque<uint32_t> retx_;                      // chunk ids to resend
  bool active_ = false;
  // Receiver side: stream PSN of each message's EOM chunk -> ledger index.
  std::map<uint32_t, uint32_t> eom_;
};

struct MroceConnStats {
  uint64_t retx_bytes = 0;
  uint64_t retry_exhausted = 0;
  uint64_t hs_down = 0;
  uint64_t naks_tx = 0;
  uint64_t bad_dest = 0;      // WRITE destination or SEND ordinal mismatch
  uint64_t stream_dups = 0;   // chunks the stream window dropped
  uint64_t window_naks = 0;
};

struct PathEvent {
  Time t;
  uint8_t path, from, to;
};

class MroceConn {
 public:
  MroceConn(MroceDev &dev, uint32_t peer, uint32_t local_id);
  ~MroceConn();
  void connect();
  bool established() const { return mroce_conn_established(&c_); }
  bool failed() const { return failed_; }
  uint32_t peer() const { return peer_; }
  const mroce_conn &core() const { return c_; }
  const MroceConnStats &stats() const { return st_; }
  const std::vector<PathEvent> &path_events() const { return path_events_; }
  // Controller rate (pacing, and window over the latest RTT), Gbit/s.
  double rate_gbps() const;
  // Bytes of core state for this connection (struct plus path array).
  size_t core_bytes() const;
  uint32_t plane_of_path(uint32_t path) const;
  // Why the connection is not sending right now (exploration): the reason
  // its last pump stopped, or kBlockNone while it has nothing to send.
  enum Block { kBlockNone, kBlockStream, kBlockWindow, kBlockPaced, kBlockNic, kBlocks };
  Block block() const { return unsent_ ? block_ : kBlockNone; }

 private:
  friend class MroceDev;
  friend class MroceQp;
  struct Chunk {
    MroceQp *qp;
    uint32_t idx, off, len, msg_len, spsn, msn;
    Op op;
    int path;   // last path used, -1 before the first transmission
    bool sent;  // transmitted at least once
  };

  void add_qp(MroceQp *q) { qps_[q->qpn_] = q; }
  void activate(MroceQp *q);
  void on_hs_actions(uint32_t act);
  void send_hs(uint8_t opcode);
  void rx(const mroce_pkt &pkt, Packet *p);
  void rx_data(const mroce_pkt &pkt, Packet *p);
  void place(MroceQp *q, const mroce_pkt &pkt, bool verify);
  void send_nak(uint8_t code, const mroce_pkt &pkt, uint32_t arg);
  void flush_acks();
  void send_probes(uint64_t mask);
  void send_chunk(const Chunk &ch, uint32_t id, const mroce_tx_slot &slot, bool ar);
  void pump();
  void pump_event() { pump(); }
  void on_timer();
  void arm();
  void chunk_acked(uint64_t cookie);
  void chunk_lost(uint64_t cookie);
  void check_completions(MroceQp *q);
  void emit(Packet *p, uint32_t plane, uint16_t sport, bool ect);

  static void ops_acked(void *ctx, uint64_t cookie, uint32_t len, uint8_t path);
  static void ops_lost(void *ctx, uint64_t cookie, uint32_t len, uint8_t path, uint32_t psn,
                       uint8_t why);
  static void ops_path_state(void *ctx, uint8_t path, uint8_t from, uint8_t to);

  MroceDev &dev_;
  uint32_t peer_;
  mroce_conn c_;
  std::vector<mroce_path> paths_;
  mroce_conn_ops ops_{};  // optional callbacks unset
  std::map<uint32_t, MroceQp *> qps_;  // by local QPN (the stream id we receive)
  std::deque<MroceQp *> active_;       // QPs with something to send, round robin
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> free_chunks_;
  uint64_t unsent_ = 0;                // bytes posted or lost, not yet (re)sent
  bool pumping_ = false, failed_ = false, nic_wait_ = false;
  Block block_ = kBlockNone;
  uint64_t deadline_ = 0;  // the timer's deadline and its lateness
  Time late_ = 0;
  uint32_t ack_plane_ = 0, hs_tries_ = 0;
  uint16_t ack_sport_ = MROCE_SPORT_MIN;
  Timer<&MroceConn::on_timer, MroceConn> timer_{this};
  Timer<&MroceConn::pump_event, MroceConn> pace_{this};
  MroceConnStats st_;
  std::vector<PathEvent> path_events_;
};

struct MroceDevStats {
  uint64_t decode_errors = 0;
  uint64_t unknown_conn = 0;
  uint64_t rx_pkts = 0;
};

class MroceDev : public Endpoint {
 public:
  MroceDev(Fabric &f, uint32_t host, const MroceCfg &cfg, uint64_t seed);
  ~MroceDev() override;
  void receive(Packet *p) override;
  // The connection to @peer, created (and connected) on first use.
  MroceConn &conn_to(uint32_t peer);
  MroceConn *find_conn(uint32_t peer);
  // A QP here sending to a new QP on @dst; returns the sending side.
  static MroceQp *pair(MroceDev &src, MroceDev &dst, uint32_t stream_id);
  const MroceDevStats &stats() const { return st_; }
  const MroceCfg &cfg() const { return cfg_; }
  uint32_t host_id() const { return host_; }
  Fabric &fabric() { return f_; }
  Host &host() { return f_.host(host_); }
  std::vector<MroceConn *> conns();

 private:
  friend class MroceConn;
  friend class MroceQp;
  MroceConn &create(uint32_t peer);
  MroceQp *new_qp(MroceConn &c, uint32_t stream_id);
  void hint_tick();
  uint32_t capacity_mbps();
  mroce_hint_cfg hint_cfg();

  Fabric &f_;
  uint32_t host_;
  MroceCfg cfg_;
  Rng rng_;
  std::vector<std::unique_ptr<MroceConn>> conns_;  // local id = index + 1
  std::map<uint32_t, MroceConn *> by_peer_;
  std::vector<std::unique_ptr<MroceQp>> qps_;
  uint32_t next_qpn_ = 0x100;
  bool hint_running_ = false;
  std::vector<mroce_hint_entry> hint_scratch_;
  mroce_hint_state hint_state_{};  // the drain rate the hint passes learnt
  std::vector<uint8_t> scratch_;  // decode buffer with a zero payload area
  MroceDevStats st_;
};

}  // namespace sim
