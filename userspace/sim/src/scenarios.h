// SPDX-License-Identifier: GPL-2.0
// The benchmark scenarios of issue 3 item 6, each run for mroce and the
// RoCEv2 model side by side, and the building blocks tests reuse.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "world.h"

namespace sim {

struct BulkResult;

// Two hosts on different leaves, backlogged streams from host 0 to host 1.
struct BulkCfg {
  Model model = Model::kMroce;
  Conditions cond;
  uint32_t planes = 1;
  uint32_t spines = 4;
  uint32_t paths = 8;            // mroce paths per connection
  uint32_t streams = 1;          // mroce: QPs on the connection; RoCE: QPs per plane
  double loss = 0;               // random loss on the receiver's access link
  bool loss_both_ways = true;    // ... also on ACKs leaving the receiver
  int loss_stream = -1;          // >= 0: only data packets of this stream
  Time duration = 5 * kMs;
  Time warmup = 500 * kUs;       // excluded from goodput
  uint32_t msg = 1 << 20;        // message size
  uint64_t bytes = 0;            // 0: keep backlogged; else total to move, then stop
  uint64_t seed = 1;
  bool verify = false;
  Time bin = 10 * kUs;           // goodput timeline resolution
  bool hints = true;
  bool mix_sends = false;        // every other message a Send instead of a Write
  bool sends = false;            // every message a Send
  // > 0: closed loop, like perftest's tx depth: this many messages posted
  // and not yet completed at the sender; each completion posts the next.
  uint32_t depth = 0;
  bool module_prm = false;       // the kernel module's parameters, not the simulator's
  uint32_t hint_mbps = 0;        // receiver capacity for hints (the module's rx_mbps); 0: line
  bool hint_drain = false;       // the measured drain cap (the module's hint_drain)
  Time hint_period = 0;          // 0: MroceCfg's
  Time stall_gap = 0, stall_max = 0;  // both hosts' CPU stalls (Port::stall_*)
  Time jitter = 0;               // i.i.d. extra delay on both hosts' packets (reorders)
  // Per-packet CPU cost (Port::per_pkt): sending data, receiving data,
  // sending ACKs, receiving ACKs.
  Time cpu_tx = 0, cpu_rx = 0, cpu_ack_tx = 0, cpu_ack_rx = 0;
  Time timer_late = 0;           // mroce timers fire up to this much late
  std::function<void(World &)> setup;  // extra scheduling (faults) before the run
  std::function<void(World &, BulkResult &)> inspect;  // after the run, before teardown
  std::vector<std::pair<std::string, uint64_t>> prm;  // mroce tunables to override
  Time trace = 0;                // > 0: print mroce connection state this often
};

struct BulkResult {
  double gbps = 0;                  // goodput (new payload placed) after warm-up
  std::vector<double> stream_gbps;  // per stream, same window
  uint64_t retx_bytes = 0;
  uint64_t rtos = 0;                // mroce: path RTOs; RoCE: ACK timeouts
  uint64_t failures = 0;            // connections / QPs that went to error
  uint64_t drops = 0;               // switch drop-tail
  uint64_t events = 0;
  Time base_rtt = 0;
  Time done_at = 0;                 // bytes mode: when every message completed
  bool all_done = false;            // every posted message completed both ends
  std::string errors;               // ledger and conservation problems
  Meter timeline{10 * kUs};         // payload placed per bin, all streams
  std::string metrics;              // deterministic summary line
  std::string core_stats;           // mroce: the sender's core counters (exploration)
};

BulkResult run_bulk(const BulkCfg &cfg);

struct IncastResult {
  double conv_rtts = -1;  // -1: not converged within the run
  double jain = 0;
  double util = 0;        // delivered in the second half / capacity
  uint64_t peak_queue = 0;
  double drained_rtts = 0;  // until the bottleneck queue first fell to Kmin
  uint64_t drops = 0;
  Time rtt = 0;
  std::string errors;
};

// N senders on other leaves -> host 0, synchronised start 100 us in.
IncastResult run_incast(const Conditions &cond, Model m, uint32_t n, bool hints, uint64_t seed,
                        Time dur, Time trace,
                        const std::vector<std::pair<std::string, uint64_t>> &prm);

struct BenchOpts {
  uint64_t seed = 1;
  std::string out_dir = ".";
  bool quick = false;  // shorter runs (tests of the bench itself)
};

// Each prints its table to @out and writes <out_dir>/<name>.csv.
void bench_loss(const BenchOpts &o, std::ostream &out);       // (a)
void bench_incast(const BenchOpts &o, std::ostream &out);     // (b)
void bench_failure(const BenchOpts &o, std::ostream &out);    // (c)
void bench_planes(const BenchOpts &o, std::ostream &out);     // (d)
void bench_isolation(const BenchOpts &o, std::ostream &out);  // (e)
void bench_qps(const BenchOpts &o, std::ostream &out);        // (f)
void bench_jitter(const BenchOpts &o, std::ostream &out);     // (g)
void bench_vm(const BenchOpts &o, std::ostream &out);         // (h)
// The VM-like conditions of (h).
BulkCfg vm_cfg(const BenchOpts &o);

}  // namespace sim
