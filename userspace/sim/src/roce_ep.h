// SPDX-License-Identifier: GPL-2.0
// RoCEv2 baseline, written from the published behaviour of rxe and DCQCN:
// one path per QP (fixed UDP source port, one NIC port), go-back-N as rxe
// does it (the responder drops out-of-order packets and sends one PSN
// sequence NAK per gap; the requester rewinds on NAK or on the local ACK
// timeout; at most 128 unacknowledged PSNs; ACK requested every 64 packets
// and on the last packet of a message), DCQCN rate control (the responder
// returns a CNP for CE-marked packets at most once per 50 us; the requester
// cuts its rate by alpha/2 and recovers through fast recovery, additive and
// hyper increase driven by a timer and a byte counter). No PFC.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "net.h"
#include "transport.h"

namespace sim {

struct DcqcnCfg {
  bool enabled = true;
  double g = 1.0 / 256;            // alpha EWMA gain
  Time alpha_period = 55 * kUs;    // alpha decays once per period without CNP
  Time rate_period = 55 * kUs;     // rate-increase timer
  uint64_t byte_stage = 10u << 20; // rate-increase byte counter
  int fast_stages = 5;             // F
  double ai_gbps = 0.1;            // additive increase step
  double hai_gbps = 1.0;           // hyper increase step
  double min_gbps = 0.1;
  Time cnp_interval = 50 * kUs;    // responder: at most one CNP per QP per interval
};

struct RoceCfg {
  uint32_t mtu = 4096;             // payload bytes per packet
  uint32_t window = 128;           // unacknowledged PSNs (rxe RXE_MAX_UNACKED_PSNS)
  uint32_t ack_every = 64;         // AckReq at least every this many packets
  Time timeout = 131072;           // local ACK timeout 4.096 us << 5
  int retry_cnt = 7;               // timeouts without progress before the QP errors
  uint32_t nic_limit = 16 * 1024;  // scheduler waits while the NIC holds more
  bool verify = false;
  DcqcnCfg dcqcn;
};

// Header bytes besides kWireOverhead (BTH 12, ICRC 4; RETH 16 on the first
// packet of a Write; AETH 4 on ACK/NAK; 16 reserved bytes in a CNP).
constexpr uint32_t kRoceBth = 12, kRoceIcrc = 4, kRoceReth = 16, kRoceAeth = 4;

class RoceDev;

class RoceQp : public Stream {
 public:
  RoceQp(RoceDev &dev, uint32_t qpn, uint32_t plane, uint32_t id, bool verify);
  void post(uint32_t len, Op op = Op::kWrite) override;
  double rate_gbps() const override { return rc_; }
  bool failed() const override { return error_; }
  uint32_t plane() const { return plane_; }
  uint16_t sport() const { return sport_; }
  uint64_t cnps_rx = 0, naks_rx = 0, timeouts = 0;
  // Per-QP state an RNIC would keep (requester + responder + DCQCN), bytes.
  static size_t state_bytes();

 private:
  friend class RoceDev;
  struct Wr {
    uint32_t idx, len;
    Op op;
  };
  struct Desc {
    uint32_t idx, off, len, msg_len;
    bool first, last;
    Op op;
  };
  bool can_send() const;
  Packet *build_next();
  void on_ack(uint32_t psn, Time now);
  void on_nak(uint32_t psn, Time now);
  void on_cnp(Time now);
  void on_data(Packet *p);
  void progress_to(uint32_t psn, Time now);
  void on_rto();
  void on_rate_timer();
  void on_ready_timer();
  void rate_increase(bool timer);
  void kick();
  void send_ctl(RoceHdr::Op op, uint32_t psn);

  RoceDev &dev_;
  uint32_t qpn_, rqpn_ = 0, peer_host_ = 0, plane_;
  uint16_t sport_;
  RoceQp *peer_ = nullptr;
  // Requester.
  std::deque<Wr> sq_;
  uint32_t sq_off_ = 0;
  std::deque<Desc> desc_;  // PSNs una_ .. max_ - 1
  uint32_t una_ = 0, next_ = 0, max_ = 0;
  uint32_t noack_ = 0;
  int retries_ = 0;
  bool error_ = false;
  bool queued_ = false;  // in the device's ready list
  Time next_tx_ = 0;
  // DCQCN reaction point.
  double rc_, rt_, alpha_ = 1.0, line_;
  Time alpha_at_ = 0;
  int t_stage_ = 0, b_stage_ = 0;
  uint64_t bytes_since_ = 0;
  bool recovering_ = false;
  // Responder.
  uint32_t epsn_ = 0;
  bool nak_sent_ = false;
  Time last_cnp_ = 0;
  bool cnp_sent_ = false;
  Timer<&RoceQp::on_rto, RoceQp> rto_{this};
  Timer<&RoceQp::on_rate_timer, RoceQp> rate_timer_{this};
  Timer<&RoceQp::on_ready_timer, RoceQp> ready_timer_{this};
};

class RoceDev : public Endpoint {
 public:
  RoceDev(Fabric &f, uint32_t host, const RoceCfg &cfg, uint64_t seed);
  void receive(Packet *p) override;
  static RoceQp *pair(RoceDev &src, RoceDev &dst, uint32_t plane, uint32_t stream_id);
  const RoceCfg &cfg() const { return cfg_; }
  Fabric &fabric() { return f_; }
  uint64_t unknown_qp = 0;

 private:
  friend class RoceQp;
  void ready(RoceQp *q);
  void kick(uint32_t plane);

  Fabric &f_;
  uint32_t host_;
  RoceCfg cfg_;
  Rng rng_;
  std::map<uint32_t, std::unique_ptr<RoceQp>> qps_;
  std::vector<std::deque<RoceQp *>> ready_;  // per plane, round robin
  std::vector<bool> nic_wait_;
  uint32_t next_qpn_ = 0x11;
};

}  // namespace sim
