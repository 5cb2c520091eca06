// SPDX-License-Identifier: GPL-2.0
// The network model: packets, output ports (a FIFO egress queue feeding a
// point-to-point link), switches with ECMP over the 5-tuple, hosts with one
// NIC port per plane, and a leaf-spine builder with one fabric per plane.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "des.h"

namespace sim {

// Bytes a packet costs on an Ethernet link besides its UDP payload:
// preamble+SFD 8, MAC header 14, FCS 4, inter-frame gap 12, IPv4 20, UDP 8.
constexpr uint32_t kWireOverhead = 8 + 14 + 4 + 12 + 20 + 8;

enum class Proto : uint8_t { kMroce, kRoce };

// Address of a NIC port: one IP per (host, plane), as with separate subnets
// per plane.
inline uint32_t ip_of(uint32_t host, uint32_t plane) { return plane << 20 | host; }
inline uint32_t host_of(uint32_t ip) { return ip & 0xFFFFF; }
inline uint32_t plane_of(uint32_t ip) { return ip >> 20; }

struct RoceHdr {
  enum Op : uint8_t { kData, kAck, kNak, kCnp } op = kData;
  uint32_t qpn = 0;      // destination QP
  uint32_t psn = 0;      // data: its PSN; ACK: last in-order PSN; NAK: expected PSN
  uint32_t msg = 0;      // data: message index in the stream
  uint32_t off = 0;      // data: offset of the payload in the message
  uint32_t msg_len = 0;  // data: message length
  bool first = false, last = false, ackreq = false;
};

struct Packet {
  uint64_t uid = 0;
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t sport = 0, dport = 0;
  Proto proto = Proto::kMroce;
  bool ect = false, ce = false;
  uint32_t wire = 0;  // bytes on the wire, kWireOverhead included
  // Simulator-only annotations (not on the wire): loss filters and telemetry.
  uint32_t tag = ~0u;   // stream the packet carries data of, ~0 if none
  bool data = false;    // carries payload
  Time born = 0;
  // mroce: the encoded packet as the core's codec wrote it. Payload bytes are
  // only materialised when payload verification is on; otherwise payload_len
  // says how many would follow the header.
  std::vector<uint8_t> bytes;
  uint32_t payload_len = 0;
  // RoCEv2 model: its header fields (sized, not encoded).
  RoceHdr roce;
};

// Fills in the addressing of a packet host @src sends to host @dst on
// @plane.
inline void address(Packet *p, Proto proto, uint32_t src, uint32_t dst, uint32_t plane,
                    uint16_t sport, uint16_t dport, bool ect, Time now) {
  p->proto = proto;
  p->src_ip = ip_of(src, plane);
  p->dst_ip = ip_of(dst, plane);
  p->sport = sport;
  p->dport = dport;
  p->ect = ect;
  p->born = now;
}

class PacketPool {
 public:
  Packet *get();
  void put(Packet *p);
  uint64_t live() const { return live_; }
  uint64_t allocated() const { return uid_; }

 private:
  // Owns every packet ever made, so those still queued or on a wire when a
  // world is torn down are freed too.
  std::vector<std::unique_ptr<Packet>> all_;
  std::vector<Packet *> free_;
  uint64_t live_ = 0, uid_ = 0;
};

struct EcnCfg {
  uint32_t kmin = 0, kmax = 0;  // bytes; RED ramp kmin..kmax; kmin == kmax: step
  double pmax = 1.0;            // marking probability at kmax (RED)
  bool enabled() const { return kmax > 0; }
};

struct LinkCfg {
  double gbps = 100;
  Time delay = 1 * kUs;        // propagation + switch latency
  uint64_t buffer = 1 << 20;   // egress queue limit, bytes
  EcnCfg ecn;
};

struct PortStats {
  uint64_t arrived = 0;     // offered to the queue
  uint64_t enqueued = 0;
  uint64_t dropped = 0;     // drop-tail
  uint64_t marked = 0;      // CE set here
  uint64_t sent = 0;        // finished serialisation
  uint64_t sent_bytes = 0;
  uint64_t lost = 0;        // random loss (corruption) on the link
  uint64_t blackholed = 0;  // swallowed by a blackholed/down link
  uint64_t delivered = 0;   // handed to the far end
  uint64_t duplicated = 0;  // extra copies put on the wire (test fault)
  uint64_t peak_bytes = 0;  // largest queue seen
};

class Node;

// An output port and the link it drives. Loss, blackholing and marking are
// properties of the link direction, which is how faults are injected.
class Port {
 public:
  Port(EventQueue &eq, PacketPool &pool, const LinkCfg &cfg, uint64_t seed,
       std::string name);
  void connect(Node *peer, int peer_port) { peer_ = peer, peer_port_ = peer_port; }

  // Enqueues (or drops) the packet and starts the link if it is idle.
  void send(Packet *p);
  uint64_t queued_bytes() const { return qbytes_; }
  size_t queued_pkts() const { return q_.size(); }
  bool busy() const { return busy_; }
  // Calls fn once, the next time the queue drops to at most @below bytes.
  void notify_below(uint64_t below, std::function<void()> fn);

  const LinkCfg &cfg() const { return cfg_; }
  const PortStats &stats() const { return st_; }
  const std::string &name() const { return name_; }
  uint64_t in_flight() const { return on_wire_; }

  // Faults.
  double loss = 0;  // probability a packet is corrupted on the link
  std::function<bool(const Packet &)> loss_filter;  // null: every packet
  bool blackhole = false;
  // Test faults that break a path's FIFO order: each packet is duplicated
  // with probability dup, and delayed by an extra uniform [0, jitter).
  double dup = 0;
  Time jitter = 0;
  // A software host whose CPU is busy or descheduled now and then (a VM):
  // stalls start at exponential gaps of mean stall_gap and last uniform
  // [0, stall_max); a packet that would arrive during one arrives at its
  // end. Order is kept: the delay is the host's, not the path's.
  Time stall_gap = 0, stall_max = 0;
  // A host CPU rather than a wire: every packet also costs this much
  // serialisation, whatever its size (a software stack's per-packet work).
  Time per_pkt = 0;
  PacketPool &pool() { return pool_; }

  // Serialisation time of @bytes at this port's rate.
  Time ser(uint32_t bytes) const;

 private:
  void start();
  void on_tx_done(uint64_t arg);
  void on_arrive(uint64_t arg);
  Time stalled(Time arrive);

  EventQueue &eq_;
  PacketPool &pool_;
  LinkCfg cfg_;
  Rng rng_;
  Time stall_from_ = 0, stall_to_ = 0;  // the current or next stall
  std::string name_;
  Node *peer_ = nullptr;
  int peer_port_ = 0;
  std::deque<Packet *> q_;
  uint64_t qbytes_ = 0;
  uint64_t on_wire_ = 0;
  bool busy_ = false;
  PortStats st_;
  struct Waiter {
    uint64_t below;
    std::function<void()> fn;
  };
  std::vector<Waiter> waiters_;
};

class Node {
 public:
  virtual ~Node() = default;
  virtual void receive(Packet *p, int in_port) = 0;
  std::vector<std::unique_ptr<Port>> ports;
};

// ECMP: a hash of the 5-tuple (addresses, UDP ports, protocol 17) salted per
// switch, so every switch splits independently, as real ones do.
uint64_t ecmp_hash(uint64_t salt, const Packet &p);

class Fabric;

class Switch : public Node {
 public:
  Switch(Fabric &f, uint32_t plane, bool spine, uint32_t index, uint64_t salt)
      : fabric_(f), plane_(plane), spine_(spine), index_(index), salt_(salt) {}
  void receive(Packet *p, int in_port) override;
  // Egress port the switch would pick for @p (no side effects).
  int route(const Packet &p) const;
  uint64_t salt() const { return salt_; }
  uint64_t unroutable = 0;

 private:
  Fabric &fabric_;
  uint32_t plane_;
  bool spine_;
  uint32_t index_;
  uint64_t salt_;
};

// Transport endpoints attach to a host and receive the packets of their
// protocol; they own those packets from then on (return them to the pool).
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual void receive(Packet *p) = 0;
};

class Host : public Node {
 public:
  Host(uint32_t id, PacketPool &pool) : id(id), pool_(pool) {}
  void receive(Packet *p, int in_port) override;
  Port &nic(uint32_t plane) { return *ports[plane]; }
  uint32_t planes() const { return uint32_t(ports.size()); }
  const uint32_t id;
  Endpoint *mroce = nullptr;
  Endpoint *roce = nullptr;
  uint64_t unclaimed = 0;

 private:
  PacketPool &pool_;
};

struct FabricCfg {
  uint32_t planes = 1;
  uint32_t leaves = 2;
  uint32_t spines = 4;
  uint32_t hosts_per_leaf = 1;
  LinkCfg host_link;    // host <-> leaf, both directions
  LinkCfg fabric_link;  // leaf <-> spine, both directions
  // The NIC's own egress queue (host -> leaf runs at host_link's rate and
  // delay); endpoints keep it short themselves, like a qdisc would.
  uint64_t nic_buffer = 64u << 20;
  uint64_t seed = 1;
};

// One leaf-spine fabric per plane; host h sits on leaf h / hosts_per_leaf in
// every plane and has NIC port p connected to plane p.
class Fabric {
 public:
  Fabric(EventQueue &eq, const FabricCfg &cfg);
  EventQueue &eq;
  PacketPool pool;
  const FabricCfg cfg;

  uint32_t n_hosts() const { return uint32_t(hosts_.size()); }
  Host &host(uint32_t h) { return *hosts_[h]; }
  uint32_t leaf_of(uint32_t h) const { return h / cfg.hosts_per_leaf; }
  Switch &leaf(uint32_t plane, uint32_t l) { return *leaves_[plane][l]; }
  Switch &spine(uint32_t plane, uint32_t s) { return *spines_[plane][s]; }
  // Links by direction.
  Port &uplink(uint32_t plane, uint32_t l, uint32_t s) { return *leaf(plane, l).ports[cfg.hosts_per_leaf + s]; }
  Port &downlink(uint32_t plane, uint32_t s, uint32_t l) { return *spine(plane, s).ports[l]; }
  Port &to_host(uint32_t plane, uint32_t h) { return *leaf(plane, leaf_of(h)).ports[h % cfg.hosts_per_leaf]; }
  Port &from_host(uint32_t plane, uint32_t h) { return host(h).nic(plane); }
  // Every port of the simulation, for conservation checks and plane faults.
  std::vector<Port *> all_ports();
  std::vector<Port *> plane_ports(uint32_t plane);
  void set_plane_down(uint32_t plane, bool down);
  // The spine a packet with this 5-tuple takes out of leaf @l (cross-leaf).
  uint32_t spine_for(const Packet &p) const;

  // Zero-load round trip between hosts on different leaves for a data packet
  // of @data wire bytes answered by an ACK of @ack wire bytes.
  Time base_rtt(uint32_t data, uint32_t ack) const;
  // Zero-load one-way time between hosts on different leaves.
  Time one_way(uint32_t bytes) const;

  // Packets created and not yet returned, minus those in queues and on
  // wires: what endpoints hold (should be ~0 between events).
  int64_t unaccounted();

 private:
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<std::vector<std::unique_ptr<Switch>>> leaves_, spines_;
};

}  // namespace sim
