// SPDX-License-Identifier: GPL-2.0
#include "scenarios.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace sim {

namespace {

std::string fmt(const char *f, double v) {
  char b[64];
  snprintf(b, sizeof(b), f, v);
  return b;
}

std::string us(Time t) { return fmt("%.1f", double(t) / kUs); }

// Fixed-width table printed with two spaces between columns.
class Table {
 public:
  explicit Table(std::vector<std::string> head) { rows_.push_back(std::move(head)); }
  void add(std::vector<std::string> r) { rows_.push_back(std::move(r)); }
  void print(std::ostream &o) const {
    std::vector<size_t> w;
    for (auto &r : rows_)
      for (size_t i = 0; i < r.size(); i++) {
        if (w.size() <= i) w.push_back(0);
        w[i] = std::max(w[i], r[i].size());
      }
    for (size_t k = 0; k < rows_.size(); k++) {
      std::string line;
      for (size_t i = 0; i < rows_[k].size(); i++) {
        std::string c = rows_[k][i];
        if (i + 1 < rows_[k].size()) c.resize(w[i], ' ');
        line += (i ? "  " : "") + c;
      }
      o << line << "\n";
      if (k == 0) {
        size_t n = 0;
        for (size_t i = 0; i < w.size(); i++) n += w[i] + (i ? 2 : 0);
        o << std::string(n, '-') << "\n";
      }
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

class Csv {
 public:
  Csv(const BenchOpts &o, const std::string &name, const std::string &head)
      : f_(o.out_dir + "/" + name + ".csv") {
    f_ << head << "\n";
  }
  template <class... A>
  void row(const A &...a) {
    std::ostringstream s;
    bool first = true;
    ((s << (first ? "" : ",") << a, first = false), ...);
    f_ << s.str() << "\n";
  }

 private:
  std::ofstream f_;
};

class Progress {
 public:
  explicit Progress(std::string what) : what_(std::move(what)), t0_(std::chrono::steady_clock::now()) {}
  ~Progress() {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::cerr << "  [" << what_ << "] " << note << " (" << fmt("%.1f", s) << " s)\n";
  }
  std::string note;

 private:
  std::string what_;
  std::chrono::steady_clock::time_point t0_;
};

const char *verdict(bool ok) { return ok ? "PASS" : "MISS"; }

std::string pct(double p) {
  double v = p * 100;
  return v == std::floor(v) ? fmt("%.0f%%", v) : fmt("%.1f%%", v);
}

uint64_t rtos_of(Stream *s) {
  if (auto *q = dynamic_cast<RoceQp *>(s)) return q->timeouts;
  return 0;
}

std::string conditions_line(const Conditions &c, Time rtt) {
  std::ostringstream o;
  o << "links " << fmt("%.0f", c.gbps) << " Gb/s, " << us(c.link_delay) << " us/link, base RTT "
    << us(rtt) << " us, MTU " << c.mtu << " B payload, ECN RED Kmin " << c.ecn.kmin / 1024
    << " KB Kmax " << c.ecn.kmax / 1024 << " KB Pmax " << fmt("%.2f", c.ecn.pmax)
    << ", switch buffer " << c.buffer / 1024 << " KB/port, no PFC";
  return o.str();
}

MroceCfg mroce_cfg(const Conditions &c, uint32_t paths, bool verify, bool hints) {
  MroceCfg m;
  m.prm.n_paths = uint8_t(paths);
  m.mtu = uint16_t(c.mtu + MROCE_DATA_LEN + 16);
  m.verify = verify;
  m.hints = hints;
  return m;
}

RoceCfg roce_cfg(const Conditions &c, bool verify) {
  RoceCfg r;
  r.mtu = c.mtu;
  r.verify = verify;
  return r;
}

}  // namespace

// ------------------------------------------------------------------ bulk

BulkResult run_bulk(const BulkCfg &c) {
  FabricCfg fc = c.cond.fabric(c.planes, 2, 1, c.spines, c.seed);
  MroceCfg mc = mroce_cfg(c.cond, c.paths, c.verify, c.hints);
  if (c.module_prm) {
    mc.prm = mroce_module_params();
    mc.prm.n_paths = uint8_t(c.paths);
  }
  mc.hint_mbps = c.hint_mbps;
  mc.hint_drain = c.hint_drain;
  if (c.hint_period) mc.hint_period = c.hint_period;
  mc.timer_late = c.timer_late;
  for (auto &kv : c.prm) mroce_param_set(mc.prm, kv.first, kv.second);
  World w(fc, mc, roce_cfg(c.cond, c.verify), c.seed);
  BulkResult r;
  r.base_rtt = w.base_rtt();
  r.timeline = Meter(c.bin);
  for (uint32_t p = 0; p < c.planes; p++)
    for (uint32_t h : {0u, 1u}) {
      Port &out = w.fab->from_host(p, h);
      out.stall_gap = c.stall_gap;
      out.stall_max = c.stall_max;
      out.jitter = c.jitter;
    }
  for (uint32_t p = 0; p < c.planes; p++) {
    w.fab->from_host(p, 0).per_pkt = c.cpu_tx;
    w.fab->to_host(p, 1).per_pkt = c.cpu_rx;
    w.fab->from_host(p, 1).per_pkt = c.cpu_ack_tx;
    w.fab->to_host(p, 0).per_pkt = c.cpu_ack_rx;
  }

  for (uint32_t p = 0; p < c.planes && c.loss > 0; p++) {
    Port &down = w.fab->to_host(p, 1);
    down.loss = c.loss;
    if (c.loss_stream >= 0) {
      uint32_t ls = uint32_t(c.loss_stream);
      down.loss_filter = [ls](const Packet &k) { return k.data && k.tag == ls; };
    } else if (c.loss_both_ways) {
      w.fab->from_host(p, 1).loss = c.loss;
    }
  }

  uint32_t n = c.model == Model::kMroce ? c.streams : c.streams * c.planes;
  std::vector<Meter> meters(n, Meter(c.bin));
  for (uint32_t i = 0; i < n; i++) {
    Stream *s = w.stream(c.model, 0, 1, i % c.planes);
    s->ledger.meter = &meters[i];
  }
  // Backlogged: more than the line could carry in the whole run.
  double line = c.cond.gbps * c.planes;
  uint64_t per_stream = c.bytes ? (c.bytes + n - 1) / n
                                : uint64_t(line * double(c.duration) / 8 * 1.2 / n) + 2ull * c.msg;
  std::vector<uint32_t> posted(n);
  auto op_of = [&c](uint32_t k) {
    return c.sends || (c.mix_sends && (k & 1)) ? Op::kSend : Op::kWrite;
  };
  for (uint32_t i = 0; i < n; i++) {
    Stream *s = w.streams()[i];
    uint32_t &k = posted[i];
    if (c.depth) {
      // Closed loop: c.depth messages outstanding, as long as the run lasts
      // (bytes mode: until per_stream bytes were posted).
      auto more = [s, &c, &w, per_stream] {
        return c.bytes ? s->ledger.posted_bytes() < per_stream : w.eq.now() < c.duration;
      };
      s->ledger.on_tx_complete = [s, &c, &k, &op_of, more](uint32_t) {
        if (more()) s->post(c.msg, op_of(k++));
      };
      for (uint32_t j = 0; j < c.depth && more(); j++) s->post(c.msg, op_of(k++));
      continue;
    }
    for (uint64_t b = 0; b < per_stream; b += c.msg)
      s->post(uint32_t(std::min<uint64_t>(c.msg, per_stream - b)), op_of(k++));
  }
  if (c.setup) c.setup(w);
  for (Time t = c.trace; c.trace && c.model == Model::kMroce && t <= c.duration; t += c.trace)
    w.at(t, [&w, t] {
      const MroceConn *cn = w.mroce(0).find_conn(1);
      if (!cn) return;
      const mroce_conn &k = cn->core();
      std::cerr << "t=" << us(t) << " cwnd=" << k.cc.cwnd << " hint=" << k.cc.hint
                << " srtt=" << k.rtt.srtt << " min=" << k.rtt.min_rtt << " infl=" << k.inflight
                << " rate=" << fmt("%.1f", cn->rate_gbps()) << " nicq=" << w.fab->from_host(0, 0).queued_bytes()
                << " rtos=" << k.stats.rtos << " lost=" << k.stats.lost_pkts << " pwnd/infl/st:";
      for (uint32_t i = 0; i < k.n_paths; i++)
        std::cerr << " " << k.paths[i].cc.pwnd / 1024 << "/" << k.paths[i].tx.inflight / 1024 << "/"
                  << int(k.paths[i].health.state);
      std::cerr << "\n";
    });

  // Exploration: what stops the sender, sampled every 10 us after warm-up.
  uint64_t blocks[MroceConn::kBlocks] = {}, idle = 0;
  for (Time t = c.warmup; c.model == Model::kMroce && c.depth && t < c.duration; t += 10 * kUs)
    w.at(t, [&w, &blocks, &idle] {
      const MroceConn *cn = w.mroce(0).find_conn(1);
      if (!cn) return;
      MroceConn::Block b = cn->block();
      if (b == MroceConn::kBlockNone && cn->core().inflight == 0)
        idle++;
      else
        blocks[b]++;
    });

  if (c.bytes) {
    // Run until everything completed (checked every 20 us) or the limit.
    for (Time t = 20 * kUs; t <= c.duration; t += 20 * kUs) {
      w.run_until(t);
      bool done = true;
      for (Stream *s : w.streams()) done = done && s->ledger.all_done();
      if (done) {
        r.done_at = t;
        break;
      }
    }
  } else {
    w.run_until(c.duration);
  }

  r.all_done = true;
  for (uint32_t i = 0; i < n; i++) {
    Stream *s = w.streams()[i];
    double g = meters[i].gbps(c.warmup, c.duration);
    r.stream_gbps.push_back(g);
    r.gbps += g;
    r.retx_bytes += s->retx_bytes;
    r.rtos += rtos_of(s);
    r.all_done = r.all_done && s->ledger.all_done();
    if (c.model == Model::kRoce && s->failed()) r.failures++;
    for (size_t b = 0; b < meters[i].n_bins(); b++) r.timeline.add(b * c.bin, meters[i].bin_bytes(b));
  }
  if (c.model == Model::kMroce) {
    for (MroceConn *mc : w.mroce(0).conns()) {
      const mroce_conn_stats &k = mc->core().stats;
      r.rtos += k.rtos;
      if (mc->failed()) r.failures++;
      std::ostringstream o;
      o << "tx_pkts=" << k.tx_pkts << " lost=" << k.lost_pkts << " ptos=" << k.ptos
        << " probes=" << k.probes << " rtos=" << k.rtos << " silent=" << k.silent
        << " overdue=" << k.overdue << " late_acked=" << k.late_acked << " rekeys=" << k.rekeys
        << " srtt=" << mc->core().rtt.srtt << " min_rtt=" << mc->core().rtt.min_rtt;
      r.core_stats += o.str();
    }
    if (c.depth) {
      uint64_t n = idle;
      for (uint64_t b : blocks) n += b;
      auto share = [n](uint64_t x) { return fmt("%.3f", n ? double(x) / double(n) : 0.0); };
      r.core_stats += " | sender: sending/none " + share(blocks[MroceConn::kBlockNone]) + " stream_window " +
                      share(blocks[MroceConn::kBlockStream]) + " window " + share(blocks[MroceConn::kBlockWindow]) +
                      " paced " + share(blocks[MroceConn::kBlockPaced]) + " nic " + share(blocks[MroceConn::kBlockNic]) +
                      " idle " + share(idle) + " |";
    }
    for (MroceConn *mc : w.mroce(1).conns())
      r.core_stats += " rx_stream_dups=" + std::to_string(mc->stats().stream_dups) +
                      " window_naks=" + std::to_string(mc->stats().window_naks);
  }
  r.drops = w.switch_drops();
  r.events = w.eq.executed();
  r.errors = w.ledger_errors() + w.conservation();
  std::ostringstream m;
  m << model_name(c.model) << " gbps=" << fmt("%.6f", r.gbps) << " retx=" << r.retx_bytes
    << " rtos=" << r.rtos << " fail=" << r.failures << " drops=" << r.drops
    << " events=" << r.events << " done_at=" << r.done_at;
  for (Stream *s : w.streams()) m << " s" << s->ledger.stream() << "=" << s->ledger.placed_bytes();
  r.metrics = m.str();
  if (c.inspect) c.inspect(w, r);
  return r;
}

// ------------------------------------------------------------------ (a)

void bench_loss(const BenchOpts &o, std::ostream &out) {
  BulkCfg base;
  base.seed = o.seed;
  base.duration = o.quick ? 1500 * kUs : 5 * kMs;
  base.warmup = o.quick ? 300 * kUs : 500 * kUs;
  const std::vector<double> levels = {0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.10, 0.15, 0.20};
  const std::vector<double> shown = {0.001, 0.01, 0.05, 0.10};
  Csv csv(o, "a_loss", "loss,model,gbps,ratio,retx_bytes,rtos,failures");
  std::map<std::pair<double, int>, BulkResult> res;
  for (double l : levels)
    for (Model m : {Model::kMroce, Model::kRoce}) {
      Progress pr(std::string("a ") + model_name(m) + " loss " + pct(l));
      BulkCfg c = base;
      c.model = m;
      c.loss = l;
      res[{l, int(m)}] = run_bulk(c);
      pr.note = fmt("%.1f Gb/s", res[{l, int(m)}].gbps);
    }
  Time rtt = res.begin()->second.base_rtt;
  out << "\n(a) goodput relative to lossless under i.i.d. random loss\n";
  out << "    " << conditions_line(base.cond, rtt) << "\n";
  out << "    2 hosts on different leaves, 1 plane, 4 spines; mroce: 1 connection, 8 paths; "
         "RoCEv2: 1 QP (1 path)\n";
  out << "    loss applied on the receiver's access link in both directions (data and "
         "ACKs each lose p); 1 MiB Writes, backlogged, "
      << us(base.duration) << " us, goodput after " << us(base.warmup) << " us\n\n";
  Table t({"loss", "mroce Gb/s", "mroce ratio", "rocev2 Gb/s", "rocev2 ratio", "target (mroce)",
           "result"});
  for (double l : levels) {
    const BulkResult &a = res[{l, int(Model::kMroce)}], &b = res[{l, int(Model::kRoce)}];
    double a0 = res[{0, int(Model::kMroce)}].gbps, b0 = res[{0, int(Model::kRoce)}].gbps;
    double ra = a0 > 0 ? a.gbps / a0 : 0, rb = b0 > 0 ? b.gbps / b0 : 0;
    csv.row(l, "mroce", a.gbps, ra, a.retx_bytes, a.rtos, a.failures);
    csv.row(l, "rocev2", b.gbps, rb, b.retx_bytes, b.rtos, b.failures);
    if (std::find(shown.begin(), shown.end(), l) == shown.end() && l != 0) continue;
    std::string target, result;
    if (l == 0.01) target = ">= 0.90", result = verdict(ra >= 0.90);
    if (l == 0.10) target = ">= 0.50", result = verdict(ra >= 0.50);
    t.add({pct(l), fmt("%.2f", a.gbps), fmt("%.3f", ra), fmt("%.2f", b.gbps), fmt("%.3f", rb),
           target, result});
    if (!a.errors.empty() || !b.errors.empty())
      out << "    CHECK FAILED at loss " << pct(l) << ": " << a.errors << b.errors << "\n";
  }
  t.print(out);
}

// ------------------------------------------------------------------ (b)

IncastResult run_incast(const Conditions &cond, Model m, uint32_t n, bool hints, uint64_t seed,
                        Time dur, Time trace,
                        const std::vector<std::pair<std::string, uint64_t>> &prm) {
  const uint32_t hpl = 8;
  uint32_t leaves = 1 + (n + hpl - 1) / hpl;
  FabricCfg fc = cond.fabric(1, leaves, hpl, 8, seed);
  MroceCfg mc = mroce_cfg(cond, 8, false, hints);
  for (auto &kv : prm) mroce_param_set(mc.prm, kv.first, kv.second);
  World w(fc, mc, roce_cfg(cond, false), seed);
  IncastResult r;
  r.rtt = w.base_rtt();
  const Time start = 100 * kUs, end = start + dur;
  std::vector<Meter> meters(n, Meter(10 * kUs));
  double fair = cond.gbps / n;
  uint64_t per = uint64_t(2 * fair * double(dur) / 8) + (4u << 20);
  const uint32_t msg = 256 * 1024;
  for (uint32_t i = 0; i < n; i++) {
    Stream *s = w.stream(m, hpl + i, 0);
    s->ledger.meter = &meters[i];
  }
  // Connections are set up before the synchronised start.
  w.at(start, [&] {
    for (Stream *s : w.streams())
      for (uint64_t b = 0; b < per; b += msg) s->post(msg);
  });
  // Sample every sender's controller rate every half base RTT; remember the
  // last time any was outside +-10% of the fair share.
  Time step = r.rtt / 2, last_bad = start, drained = 0;
  bool bad_at_end = false, queued = false;
  for (Time t = start; t <= end; t += step)
    w.at(t, [&, t] {
      bool bad = false;
      for (Stream *s : w.streams()) bad = bad || std::fabs(s->rate_gbps() - fair) > 0.1 * fair;
      if (bad) last_bad = t + step;
      bad_at_end = bad;
      uint64_t q = w.fab->to_host(0, 0).queued_bytes();
      if (q > cond.ecn.kmin) queued = true;
      if (queued && !drained && q <= cond.ecn.kmin) drained = t;
    });
  for (Time t = start; trace && t <= end; t += trace)
    w.at(t, [&, t] {
      std::cerr << "t=" << us(t - start) << " q=" << w.fab->to_host(0, 0).queued_bytes() / 1024
                << "K drops=" << w.switch_drops();
      double lo = 1e9, hi = 0;
      uint32_t worst = 0;
      for (uint32_t i = 0; i < n; i++) {
        double x = w.streams()[i]->rate_gbps();
        if (std::fabs(x - fair) > std::fabs(w.streams()[worst]->rate_gbps() - fair)) worst = i;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      std::cerr << " min/max " << fmt("%.2f", lo) << "/" << fmt("%.2f", hi) << " worst s" << worst;
      if (m == Model::kMroce) {
        const mroce_conn &k = w.mroce(hpl + worst).find_conn(0)->core();
        std::cerr << " [cwnd=" << k.cc.cwnd / 1024 << "K hint=" << k.cc.hint << " lat=" << k.rtt.latest
                  << " infl=" << k.inflight / 1024 << "K lost=" << k.stats.lost_pkts
                  << " rtos=" << k.stats.rtos << "]";
      }
      std::cerr << " rates:";
      for (uint32_t i = 0; i < std::min<uint32_t>(n, 4); i++)
        std::cerr << " " << fmt("%.2f", w.streams()[i]->rate_gbps());
      if (m == Model::kMroce) {
        const mroce_conn &k = w.mroce(hpl).find_conn(0)->core();
        const mroce_conn &rx = w.mroce(0).find_conn(hpl)->core();
        std::cerr << " | s0 cwnd=" << k.cc.cwnd / 1024 << "K hint=" << k.cc.hint
                  << " srtt=" << k.rtt.srtt << " min=" << k.rtt.min_rtt << " infl=" << k.inflight / 1024
                  << "K lost=" << k.stats.lost_pkts << " rtos=" << k.stats.rtos
                  << " | rx qdelay=" << rx.qdelay << " hint=" << rx.rx_hint << " backlog=" << rx.rx_backlog / 1024 << "K";
        if (getenv("SIM_TRACE_PHASE")) {
          std::cerr << "\n    pace_next-now:";
          for (uint32_t i = 0; i < std::min<uint32_t>(n, 16); i++) {
            const mroce_conn &q = w.mroce(hpl + i).find_conn(0)->core();
            std::cerr << " " << int64_t(q.pace_next) - int64_t(t) << "/" << q.inflight / 1024;
          }
        }
        if (getenv("SIM_TRACE_PATHS")) {
          std::cerr << "\n    paths:";
          for (uint32_t i = 0; i < k.n_paths; i++)
            std::cerr << " [" << int(k.paths[i].health.state) << " in=" << k.paths[i].tx.inflight / 1024
                      << "K n=" << k.paths[i].tx.n_out << " rto=" << (k.paths[i].rto_at ? us(k.paths[i].rto_at) : "-")
                      << " pto=" << (k.paths[i].pto_at ? us(k.paths[i].pto_at) : "-") << "]";
        }
      }
      std::cerr << "\n";
    });
  w.run_until(end);
  r.conv_rtts = bad_at_end ? -1 : double(last_bad - start) / double(r.rtt);
  r.drained_rtts = !queued ? 0 : drained ? double(drained - start) / double(r.rtt) : -1;
  std::vector<double> x;
  double sum = 0;
  for (auto &mt : meters) {
    x.push_back(mt.gbps(start + dur / 2, end));
    sum += x.back();
  }
  r.jain = jain(x);
  r.util = sum / cond.gbps;
  r.peak_queue = w.fab->to_host(0, 0).stats().peak_bytes;
  r.drops = w.switch_drops();
  r.errors = w.ledger_errors() + w.conservation();
  return r;
}

void bench_incast(const BenchOpts &o, std::ostream &out) {
  Conditions cond;
  Time dur = o.quick ? 1 * kMs : 4 * kMs;
  Csv csv(o, "b_incast",
          "senders,model,hints,conv_rtts,drained_rtts,jain,utilization,peak_queue_kb,drops");
  Table t({"senders", "model", "converged (RTTs)", "queue drained (RTTs)", "Jain", "util",
           "peak queue KB", "drops", "target", "result"});
  Time rtt = 0;
  std::string errs;
  for (uint32_t n : {8u, 32u, 128u}) {
    struct V {
      Model m;
      bool hints;
      const char *name;
    };
    for (V v : {V{Model::kMroce, true, "mroce+hints"}, V{Model::kMroce, false, "mroce, no hints"},
                V{Model::kRoce, false, "rocev2 DCQCN"}}) {
      Progress pr("b " + std::string(v.name) + " N=" + std::to_string(n));
      IncastResult r = run_incast(cond, v.m, n, v.hints, o.seed, dur, 0, {});
      rtt = r.rtt;
      pr.note = "converged " + (r.conv_rtts < 0 ? std::string("never") : fmt("%.1f", r.conv_rtts)) +
                " RTTs, Jain " + fmt("%.3f", r.jain);
      csv.row(n, model_name(v.m), v.hints ? 1 : 0, r.conv_rtts, r.drained_rtts, r.jain, r.util,
              r.peak_queue / 1024.0, r.drops);
      bool ok = r.conv_rtts >= 0 && r.conv_rtts <= 2 && r.jain >= 0.99;
      bool primary = v.m == Model::kMroce && v.hints;
      t.add({std::to_string(n), v.name, r.conv_rtts < 0 ? "not in run" : fmt("%.1f", r.conv_rtts),
             r.drained_rtts < 0 ? "not in run" : fmt("%.1f", r.drained_rtts), fmt("%.3f", r.jain), fmt("%.2f", r.util), fmt("%.0f", r.peak_queue / 1024.0),
             std::to_string(r.drops), primary ? "<= 2 RTT, Jain >= 0.99" : "",
             primary ? verdict(ok) : ""});
      if (!r.errors.empty()) errs += r.errors;
    }
  }
  out << "\n(b) incast: N senders -> 1 receiver, synchronised start\n";
  out << "    " << conditions_line(cond, rtt) << "\n";
  out << "    8 hosts/leaf, 8 spines (non-blocking), receiver alone on leaf 0; each sender 1 "
         "connection / 1 QP, 256 KiB Writes, backlogged, "
      << us(dur) << " us\n";
  out << "    converged = time from the start until every sender's controller rate (mroce: "
         "min(pacing rate, window / latest RTT); RoCEv2: DCQCN current rate) stays within +-10% of "
         "C/N, sampled every RTT/2\n";
  out << "    queue drained = time until the receiver's ToR port queue, once above Kmin, first falls "
         "back to Kmin; Jain and utilisation over measured goodput in the second half\n\n";
  t.print(out);
  if (!errs.empty()) out << "    CHECK FAILED: " << errs << "\n";
}

// ------------------------------------------------------------------ (c)

namespace {

// Time from @t0 until goodput (bins of @bin) stays at or above @thresh
// before @t1; 0 if it never dropped; kNever if it had not recovered by t1.
Time recovery(const Meter &m, Time t0, Time t1, double thresh) {
  Time last_low = 0;
  bool low = false;
  for (Time t = t0; t + m.bin() <= t1; t += m.bin()) {
    double g = m.gbps(t, t + m.bin());
    if (g < thresh) {
      last_low = t + m.bin();
      low = true;
    }
  }
  if (!low) return 0;
  if (last_low + m.bin() > t1) return kNever;
  return last_low - t0;
}

}  // namespace

void bench_failure(const BenchOpts &o, std::ostream &out) {
  const uint32_t planes = 4;
  const Time t_hole = o.quick ? 600 * kUs : 1 * kMs, t_plane = o.quick ? 1200 * kUs : 3 * kMs,
             t_end = o.quick ? 1800 * kUs : 5 * kMs, pre = 300 * kUs;
  Csv csv(o, "c_failure", "model,event,at_us,recovery_us,recovery_rtos,conn_failures,retx_bytes");
  std::ofstream tl(o.out_dir + "/c_timeline.csv");
  tl << "t_us,model,gbps\n";
  Table t({"model", "event", "recovery us", "in RTOs", "failed (cumul.)", "retx KB (run)", "target",
           "result"});
  Time rtt = 0, rto = 0;
  std::string errs;
  for (Model m : {Model::kMroce, Model::kRoce}) {
    Progress pr(std::string("c ") + model_name(m));
    BulkCfg c;
    c.model = m;
    c.seed = o.seed;
    c.planes = planes;
    c.paths = 16;
    c.duration = t_end;
    c.warmup = 0;
    c.bin = 20 * kUs;
    std::string hole;
    uint64_t fails_hole = 0;
    c.setup = [&](World &w) {
      w.at(t_hole, [&, m] {
        // Blackhole the uplink carrying mroce's path 0 / RoCE's QP 0 now.
        Packet k;
        if (m == Model::kMroce) {
          const MroceConn *cn = w.mroce(0).find_conn(1);
          uint32_t pl = cn->plane_of_path(0);
          k.src_ip = ip_of(0, pl);
          k.dst_ip = ip_of(1, pl);
          k.sport = cn->core().paths[0].sport;
        } else {
          auto *q = dynamic_cast<RoceQp *>(w.streams()[0]);
          k.src_ip = ip_of(0, q->plane());
          k.dst_ip = ip_of(1, q->plane());
          k.sport = q->sport();
        }
        k.dport = m == Model::kMroce ? MROCE_UDP_PORT_DEFAULT : 4791;
        uint32_t sp = w.fab->spine_for(k);
        Port &up = w.fab->uplink(plane_of(k.src_ip), w.fab->leaf_of(0), sp);
        up.blackhole = true;
        hole = up.name();
      });
      w.at(t_plane, [&] {
        // Failures so far belong to the first event.
        for (Stream *s : w.streams()) fails_hole += s->failed();
        w.fab->set_plane_down(1, true);
      });
    };
    BulkResult r = run_bulk(c);
    rtt = r.base_rtt;
    rto = mroce_sim_params().min_rto;
    for (size_t b = 0; b < r.timeline.n_bins(); b++)
      tl << fmt("%.0f", double(b * c.bin) / kUs) << "," << model_name(m) << ","
         << fmt("%.3f", r.timeline.gbps(b * c.bin, (b + 1) * c.bin)) << "\n";
    double g0 = r.timeline.gbps(t_hole - pre, t_hole);
    double g1 = r.timeline.gbps(t_plane - pre, t_plane);
    Time rec_hole = recovery(r.timeline, t_hole, t_plane, 0.9 * g0);
    // A whole plane of four is gone: 3/4 of the capacity remains.
    Time rec_plane = recovery(r.timeline, t_plane, t_end, 0.9 * g0 * (planes - 1) / planes);
    (void)g1;
    pr.note = hole;
    // mroce counts failed connections, RoCE failed QPs (run_bulk); a
    // connection's QPs all fail with it.
    if (m == Model::kMroce && fails_hole) fails_hole = 1;
    for (int e = 0; e < 2; e++) {
      Time rec = e ? rec_plane : rec_hole;
      uint64_t fails = e ? r.failures : fails_hole;
      std::string ev = e ? "plane 1 of 4 down" : "1 uplink blackholed";
      bool ok = rec != kNever && rec <= 3 * rto && fails == 0;
      std::string rs = rec == kNever ? "not recovered" : us(rec);
      std::string rr = rec == kNever ? "-" : fmt("%.2f", double(rec) / double(rto));
      csv.row(model_name(m), ev, us(e ? t_plane : t_hole), rec == kNever ? -1.0 : double(rec) / kUs,
              rec == kNever ? -1.0 : double(rec) / double(rto), fails, r.retx_bytes);
      t.add({model_name(m), ev, rs, rr, std::to_string(fails),
             fmt("%.0f", r.retx_bytes / 1024.0), m == Model::kMroce ? "<= 3 RTO, 0 failures" : "",
             m == Model::kMroce ? verdict(ok) : ""});
    }
    if (!r.errors.empty()) errs += r.errors;
  }
  out << "\n(c) failures mid-transfer: one fabric uplink blackholed at " << us(t_hole)
      << " us, then all of plane 1 down at " << us(t_plane) << " us\n";
  out << "    " << conditions_line(Conditions(), rtt) << "\n";
  out << "    2 hosts, 4 planes (one NIC port each), 4 spines per plane; mroce: 1 connection, 16 "
         "paths (path i on plane i mod 4); RoCEv2: 4 QPs, one per plane, Writes striped\n";
  out << "    silent failures (no link-down signal): the blackholed link is the leaf uplink "
         "carrying mroce path 0 / RoCEv2 QP 0 at that moment\n";
  out << "    failed = connections (mroce) / QPs (RoCEv2) in error by the end of the phase; "
         "retx = payload retransmitted over the whole run\n";
  out << "    recovery = time until goodput (20 us bins) stays >= 90% of the pre-failure goodput "
         "(x 3/4 after the plane loss); RTO = "
      << us(rto) << " us (mroce's minimum RTO here; the RoCEv2 local ACK timeout is 131 us)\n\n";
  t.print(out);
  if (!errs.empty()) out << "    CHECK FAILED: " << errs << "\n";
}

// ------------------------------------------------------------------ (d)

void bench_planes(const BenchOpts &o, std::ostream &out) {
  Csv csv(o, "d_planes", "planes,model,gbps,vs_linear");
  Table t({"planes", "mroce Gb/s", "mroce vs linear", "rocev2 Gb/s", "rocev2 vs linear", "target",
           "result"});
  std::map<int, double> one;
  Time rtt = 0;
  std::string errs;
  BulkCfg base;
  base.seed = o.seed;
  base.duration = o.quick ? 1 * kMs : 2 * kMs;
  base.warmup = 300 * kUs;
  for (uint32_t p : {1u, 2u, 4u, 8u}) {
    std::vector<std::string> row{std::to_string(p)};
    bool ok = false;
    for (Model m : {Model::kMroce, Model::kRoce}) {
      Progress pr(std::string("d ") + model_name(m) + " planes=" + std::to_string(p));
      BulkCfg c = base;
      c.model = m;
      c.planes = p;
      c.paths = std::min(64u, 4 * p);
      BulkResult r = run_bulk(c);
      rtt = r.base_rtt;
      if (p == 1) one[int(m)] = r.gbps;
      double lin = r.gbps / (p * one[int(m)]);
      pr.note = fmt("%.1f Gb/s", r.gbps);
      csv.row(p, model_name(m), r.gbps, lin);
      row.push_back(fmt("%.1f", r.gbps));
      row.push_back(fmt("%.3f", lin));
      if (m == Model::kMroce) ok = lin >= 0.95;
      if (!r.errors.empty()) errs += r.errors;
    }
    row.push_back(">= 0.95");
    row.push_back(verdict(ok));
    t.add(row);
  }
  out << "\n(d) aggregate throughput with 1, 2, 4, 8 planes\n";
  out << "    " << conditions_line(base.cond, rtt) << "\n";
  out << "    2 hosts, one NIC port per plane, 4 spines per plane; mroce: 1 connection, 4 paths per "
         "plane; RoCEv2: 1 QP per plane, Writes striped; vs linear = Gb/s / (planes x 1-plane "
         "Gb/s)\n\n";
  t.print(out);
  if (!errs.empty()) out << "    CHECK FAILED: " << errs << "\n";
}

// ------------------------------------------------------------------ (e)

void bench_isolation(const BenchOpts &o, std::ostream &out) {
  const double loss = 0.05;
  Csv csv(o, "e_isolation", "model,loss_on_a,a_gbps,b_gbps,b_vs_lossless");
  Table t({"model", "stream A Gb/s (lossless -> 5% loss)", "stream B Gb/s (lossless -> A lossy)",
           "B ratio", "target", "result"});
  Time rtt = 0;
  std::string errs;
  BulkCfg base;
  base.seed = o.seed;
  base.streams = 2;
  base.duration = o.quick ? 1500 * kUs : 5 * kMs;
  for (Model m : {Model::kMroce, Model::kRoce}) {
    Progress pr(std::string("e ") + model_name(m));
    BulkCfg c = base;
    c.model = m;
    BulkResult r0 = run_bulk(c);
    c.loss = loss;
    c.loss_stream = 0;
    BulkResult r1 = run_bulk(c);
    rtt = r0.base_rtt;
    double ratio = r0.stream_gbps[1] > 0 ? r1.stream_gbps[1] / r0.stream_gbps[1] : 0;
    csv.row(model_name(m), 0, r0.stream_gbps[0], r0.stream_gbps[1], 1.0);
    csv.row(model_name(m), loss, r1.stream_gbps[0], r1.stream_gbps[1], ratio);
    bool ok = ratio >= 0.95;
    t.add({model_name(m), fmt("%.1f", r0.stream_gbps[0]) + " -> " + fmt("%.1f", r1.stream_gbps[0]),
           fmt("%.1f", r0.stream_gbps[1]) + " -> " + fmt("%.1f", r1.stream_gbps[1]),
           fmt("%.3f", ratio), m == Model::kMroce ? ">= 0.95" : "",
           m == Model::kMroce ? verdict(ok) : ""});
    pr.note = "B ratio " + fmt("%.3f", ratio);
    errs += r0.errors + r1.errors;
  }
  out << "\n(e) loss on one stream only: stream A's data packets lose " << pct(loss)
      << " on the receiver's access link; stream B shares A's connection (mroce) / host pair "
         "(RoCEv2, separate QP)\n";
  out << "    " << conditions_line(base.cond, rtt) << "\n";
  out << "    2 hosts, 1 plane, 4 spines; mroce: 1 connection, 8 paths, 2 QPs; RoCEv2: 2 QPs; "
         "1 MiB Writes, both backlogged, "
      << us(base.duration) << " us\n\n";
  t.print(out);
  if (!errs.empty()) out << "    CHECK FAILED: " << errs << "\n";
}

// ------------------------------------------------------------------ (f)

void bench_qps(const BenchOpts &o, std::ostream &out) {
  Csv csv(o, "f_qps",
          "qps,model,conn_state_bytes,per_qp_state_bytes,cc_instances,gbps,jain");
  Table t({"QPs", "model", "conn state B", "state per QP B", "CC instances", "Gb/s",
           "Jain over QPs", "target", "result"});
  Time rtt = 0;
  std::string errs;
  size_t conn_bytes_1 = 0;
  const size_t mroce_qp = sizeof(mroce_stx) + sizeof(mroce_srx);
  for (uint32_t n : {1u, 64u, 4000u}) {
    for (Model m : {Model::kMroce, Model::kRoce}) {
      Progress pr(std::string("f ") + model_name(m) + " QPs=" + std::to_string(n));
      Conditions cond;
      Time dur = o.quick ? 2 * kMs : 20 * kMs;
      FabricCfg fc = cond.fabric(1, 2, 1, 4, o.seed);
      // With thousands of QPs on one port each QP sends a packet every few
      // hundred microseconds, so RoCE needs the common 67 ms local ACK
      // timeout (4.096 us << 14, perftest's default) to avoid spurious
      // go-back-N.
      RoceCfg rc = roce_cfg(cond, false);
      rc.timeout = 4096ull << 14;
      World w(fc, mroce_cfg(cond, 8, false, true), rc, o.seed);
      rtt = w.base_rtt();
      std::vector<Meter> meters(n, Meter(50 * kUs));
      const uint32_t msg = 16 * 1024;
      uint64_t per = uint64_t(cond.gbps * double(dur) / 8 * 1.2 / n) + 2 * msg;
      for (uint32_t i = 0; i < n; i++) {
        Stream *s = w.stream(m, 0, 1);
        s->ledger.meter = &meters[i];
        for (uint64_t b = 0; b < per; b += msg) s->post(msg);
      }
      w.run_until(dur);
      std::vector<double> x;
      double g = 0;
      for (auto &mt : meters) {
        x.push_back(double(mt.bytes(dur / 2, dur)));
        g += mt.gbps(dur / 2, dur);
      }
      double jn = jain(x);
      size_t conn_b = 0, per_qp = 0, cc = 0;
      if (m == Model::kMroce) {
        conn_b = w.mroce(0).find_conn(1)->core_bytes();
        if (n == 1) conn_bytes_1 = conn_b;
        per_qp = mroce_qp;
        cc = w.mroce(0).conns().size();
      } else {
        per_qp = RoceQp::state_bytes();
        cc = n;
      }
      bool ok = conn_b == conn_bytes_1;
      csv.row(n, model_name(m), conn_b, per_qp, cc, g, jn);
      t.add({std::to_string(n), model_name(m), m == Model::kMroce ? std::to_string(conn_b) : "-",
             std::to_string(per_qp), std::to_string(cc), fmt("%.1f", g), fmt("%.3f", jn),
             m == Model::kMroce && n > 1 ? "conn state = 1-QP value" : "",
             m == Model::kMroce && n > 1 ? verdict(ok) : ""});
      pr.note = fmt("%.1f Gb/s", g) + " Jain " + fmt("%.3f", jn);
      errs += w.ledger_errors() + w.conservation();
    }
  }
  out << "\n(f) many QPs to one peer over one connection\n";
  out << "    " << conditions_line(Conditions(), rtt) << "\n";
  out << "    2 hosts, 1 plane; mroce: all QPs share 1 connection (8 paths, one congestion "
         "controller); RoCEv2: every QP its own path and DCQCN state; 16 KiB Writes, every QP "
         "backlogged\n";
  out << "    conn state = sizeof(struct mroce_conn) + 8 x sizeof(struct mroce_path); mroce state "
         "per QP = sizeof(struct mroce_stx) + sizeof(struct mroce_srx); RoCEv2 per QP = the "
         "model's PSN/timer/DCQCN fields\n";
  out << "    RoCEv2 local ACK timeout 67 ms here (4.096 us << 14; 131 us elsewhere) so slow QPs do "
         "not time out spuriously; Gb/s and Jain (per-QP delivered bytes) over the second half\n\n";
  t.print(out);
  if (!errs.empty()) out << "    CHECK FAILED: " << errs << "\n";
}

// ------------------------------------------------------------------ (g)

void bench_jitter(const BenchOpts &o, std::ostream &out) {
  // A software receiver's ACK turnaround: the host that holds the ACK is
  // busy or descheduled for a random while (a VM: 10-100 ms against a
  // 0.1 ms minimum). Modelled as uniform extra delay on everything the
  // receiver sends, J = 20 base RTTs; data packets are not delayed.
  BulkCfg base;
  base.seed = o.seed;
  base.duration = o.quick ? 3 * kMs : 10 * kMs;
  base.warmup = o.quick ? 500 * kUs : 1 * kMs;
  Csv csv(o, "g_jitter", "rules,loss,gbps,ratio,retx_kb,rtos,rekeys,rx_dup_chunks");
  Table t({"rules", "loss", "mroce Gb/s", "vs 0% loss", "retx KB", "RTOs", "re-keys",
           "dup chunks at rx", "target", "result"});
  struct V {
    const char *name;
    std::vector<std::pair<std::string, uint64_t>> prm;
  };
  Time rtt = 0, jitter = 0;
  std::string errs;
  for (V v : {V{"defaults", {}}, V{"rto_probe=0 rekey_rel=1024", {{"rto_probe", 0}, {"rekey_rel", 1024}}}}) {
    double g0 = 0;
    for (double l : {0.0, 0.01}) {
      Progress pr(std::string("g ") + v.name + " loss " + pct(l));
      BulkCfg c = base;
      c.loss = l;
      c.prm = v.prm;
      uint64_t rekeys = 0, dups = 0;
      c.setup = [&](World &w) {
        jitter = 20 * w.base_rtt();
        w.fab->from_host(0, 1).jitter = jitter;
      };
      c.inspect = [&](World &w, BulkResult &) {
        for (MroceConn *mc : w.mroce(0).conns()) rekeys += mc->core().stats.rekeys;
        for (MroceConn *mc : w.mroce(1).conns()) dups += mc->stats().stream_dups;
      };
      BulkResult r = run_bulk(c);
      rtt = r.base_rtt;
      if (l == 0) g0 = r.gbps;
      double ratio = g0 > 0 ? r.gbps / g0 : 0;
      bool primary = l > 0 && v.prm.empty();
      csv.row(v.name, l, r.gbps, ratio, r.retx_bytes / 1024.0, r.rtos, rekeys, dups);
      t.add({v.name, pct(l), fmt("%.1f", r.gbps), fmt("%.3f", ratio), fmt("%.0f", r.retx_bytes / 1024.0),
             std::to_string(r.rtos), std::to_string(rekeys), std::to_string(dups),
             primary ? ">= 0.80" : "", primary ? verdict(ratio >= 0.80) : ""});
      pr.note = fmt("%.1f Gb/s", r.gbps) + ", " + std::to_string(rekeys) + " re-keys";
      errs += r.errors;
    }
  }
  out << "\n(g) jittery receiver host: everything the receiver sends (ACKs) waits an extra uniform "
         "[0, " << us(jitter) << " us) (20 base RTTs), with and without 1% loss\n";
  out << "    " << conditions_line(base.cond, rtt) << "\n";
  out << "    2 hosts, 1 plane, 4 spines; mroce: 1 connection, 8 paths; loss on the receiver's access "
         "link both ways; 1 MiB Writes, backlogged, " << us(base.duration) << " us, goodput after "
      << us(base.warmup) << " us\n";
  out << "    rules: this tree's defaults, and the session-5 rules (RTO expires without a probe first; "
         "re-key on a score margin alone); dup chunks = resent chunks that had arrived\n\n";
  t.print(out);
  if (!errs.empty()) out << "    CHECK FAILED: " << errs << "\n";
}

// ------------------------------------------------------------------ (h)

// The VM's make bench row as a protocol model: is a loss of goodput at 1 %
// the core's? One connection, 64 KiB messages with perftest's 128
// outstanding, the module's parameters and hints (rx_mbps 10000, every
// 100 us), MTU 1500, no ECN, the CPUs as per-packet costs, both hosts
// descheduled now and then, timers late; loss on the data direction only.
BulkCfg vm_cfg(const BenchOpts &o) {
  BulkCfg c;
  c.seed = o.seed;
  c.cond.gbps = 10;
  c.cond.mtu = 1500 - 28 - MROCE_DATA_LEN - 16;  // IPv4 + UDP, then mroce's header
  c.cond.ecn = EcnCfg{0, 0, 0};
  c.msg = 64 * 1024;
  c.depth = 128;
  c.module_prm = true;
  c.hint_mbps = 10000;
  c.hint_period = 100 * kUs;
  c.cpu_tx = 25 * kUs;
  c.cpu_rx = 20 * kUs;
  c.cpu_ack_tx = 3 * kUs;
  c.cpu_ack_rx = 3 * kUs;
  c.stall_gap = 2 * kMs;
  c.stall_max = 1 * kMs;
  c.timer_late = 2 * kMs;
  c.loss_both_ways = false;
  c.duration = o.quick ? 400 * kMs : 2000 * kMs;
  c.warmup = o.quick ? 100 * kMs : 300 * kMs;
  c.bin = 1 * kMs;
  return c;
}

void bench_vm(const BenchOpts &o, std::ostream &out) {
  BulkCfg base = vm_cfg(o);
  Csv csv(o, "h_vm", "op,loss,gbps,ratio,retx_kb,ptos,rtos");
  Table t({"op", "loss", "mroce Gb/s", "vs 0% loss", "retx KB", "PTOs", "RTOs", "target", "result"});
  std::string errs;
  for (bool send : {false, true}) {
    double g0 = 0;
    for (double l : {0.0, 0.01}) {
      const char *op = send ? "Send" : "Write";
      Progress pr(std::string("h ") + op + " loss " + pct(l));
      BulkCfg c = base;
      c.sends = send;
      c.loss = l;
      uint64_t ptos = 0;
      c.inspect = [&ptos](World &w, BulkResult &) {
        for (MroceConn *mc : w.mroce(0).conns()) ptos += mc->core().stats.ptos;
      };
      BulkResult r = run_bulk(c);
      if (l == 0) g0 = r.gbps;
      double ratio = g0 > 0 ? r.gbps / g0 : 0;
      csv.row(op, l, r.gbps, ratio, r.retx_bytes / 1024.0, ptos, r.rtos);
      t.add({op, pct(l), fmt("%.3f", r.gbps), fmt("%.3f", ratio), fmt("%.0f", r.retx_bytes / 1024.0),
             std::to_string(ptos), std::to_string(r.rtos), l > 0 ? ">= 0.95" : "",
             l > 0 ? verdict(ratio >= 0.95) : ""});
      pr.note = fmt("%.3f Gb/s", r.gbps);
      errs += r.errors;
    }
  }
  out << "\n(h) the VM's bench row as a protocol model: 1 connection, 64 KiB messages, 128 outstanding "
         "(perftest), loss on the data direction\n";
  out << "    the module's parameters (min RTO 10 ms, pacing horizon 1 ms), hints at 10 Gb/s every "
         "100 us, MTU 1500 (" << base.cond.mtu << " B payload), no ECN, 8 paths\n";
  out << "    CPU per packet: data send " << us(base.cpu_tx) << " us, receive " << us(base.cpu_rx)
      << " us, ACK " << us(base.cpu_ack_tx) << " us each side; both hosts stall for uniform [0, "
      << us(base.stall_max) << " us) at exponential gaps of mean " << us(base.stall_gap)
      << " us; timers up to " << us(base.timer_late) << " us late; " << us(base.duration)
      << " us, goodput after " << us(base.warmup) << " us\n\n";
  t.print(out);
  if (!errs.empty()) out << "    CHECK FAILED: " << errs << "\n";
}

}  // namespace sim
