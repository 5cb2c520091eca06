// SPDX-License-Identifier: GPL-2.0
// mroce-sim: runs the benchmark scenarios (`mroce-sim bench a..h|all`) or a
// single two-host bulk transfer for exploration (`mroce-sim bulk ...`).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "scenarios.h"

using namespace sim;

static void usage() {
  std::cerr << "usage: mroce-sim bench <a|b|c|d|e|f|g|h|all> [--seed N] [--out DIR] [--quick]\n"
               "       mroce-sim incast --streams N [bulk options]\n"
               "       mroce-sim bulk [--model mroce|rocev2] [--loss P] [--planes N] [--paths N]\n"
               "                      [--streams N] [--us T] [--seed N] [--no-hints] [--buffer-kb KB]\n"
               "                      [--trace US] [--prm name=value]...\n"
               "                      [--gbps G] [--link-us US] [--mtu PAYLOAD] [--no-ecn]\n"
               "                      [--msg-kb KB] [--depth N] [--send] [--data-loss-only]\n"
               "                      [--module-prm] [--hint-mbps M] [--hint-drain] [--hint-period-us US]\n"
               "                      [--stall-gap-us US --stall-max-us US] [--jitter-us US]\n"
               "                      [--warmup-us US] [--cpu-us TX,RX,ACK_TX,ACK_RX]\n"
               "                      [--timer-late-us US]\n";
  exit(2);
}

int main(int argc, char **argv) {
  if (argc < 2) usage();
  std::string cmd = argv[1];
  BenchOpts bo;
  BulkCfg bc;
  std::string which = "all";
  int i = 2;
  if (cmd == "bench") {
    if (argc < 3) usage();
    which = argv[2];
    i = 3;
  }
  for (; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&]() -> const char * {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--seed") bo.seed = bc.seed = strtoull(val(), nullptr, 0);
    else if (a == "--out") bo.out_dir = val();
    else if (a == "--quick") bo.quick = true;
    else if (a == "--model") bc.model = std::string(val()) == "rocev2" ? Model::kRoce : Model::kMroce;
    else if (a == "--loss") bc.loss = atof(val());
    else if (a == "--planes") bc.planes = uint32_t(atoi(val()));
    else if (a == "--paths") bc.paths = uint32_t(atoi(val()));
    else if (a == "--streams") bc.streams = uint32_t(atoi(val()));
    else if (a == "--us") bc.duration = Time(atof(val()) * kUs);
    else if (a == "--no-hints") bc.hints = false;
    else if (a == "--buffer-kb") bc.cond.buffer = uint64_t(atoi(val())) * 1024;
    else if (a == "--gbps") bc.cond.gbps = atof(val());
    else if (a == "--link-us") bc.cond.link_delay = Time(atof(val()) * kUs);
    else if (a == "--mtu") bc.cond.mtu = uint32_t(atoi(val()));
    else if (a == "--no-ecn") bc.cond.ecn = EcnCfg{0, 0, 0};
    else if (a == "--msg-kb") bc.msg = uint32_t(atoi(val())) * 1024;
    else if (a == "--depth") bc.depth = uint32_t(atoi(val()));
    else if (a == "--send") bc.sends = true;
    else if (a == "--data-loss-only") bc.loss_both_ways = false;
    else if (a == "--module-prm") bc.module_prm = true;
    else if (a == "--hint-mbps") bc.hint_mbps = uint32_t(atoi(val()));
    else if (a == "--hint-drain") bc.hint_drain = true;
    else if (a == "--hint-period-us") bc.hint_period = Time(atof(val()) * kUs);
    else if (a == "--stall-gap-us") bc.stall_gap = Time(atof(val()) * kUs);
    else if (a == "--stall-max-us") bc.stall_max = Time(atof(val()) * kUs);
    else if (a == "--jitter-us") bc.jitter = Time(atof(val()) * kUs);
    else if (a == "--warmup-us") bc.warmup = Time(atof(val()) * kUs);
    else if (a == "--timer-late-us") bc.timer_late = Time(atof(val()) * kUs);
    else if (a == "--cpu-us") {
      // TX,RX,ACK_TX,ACK_RX per-packet costs
      double v[4] = {0, 0, 0, 0};
      sscanf(val(), "%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3]);
      bc.cpu_tx = Time(v[0] * kUs), bc.cpu_rx = Time(v[1] * kUs);
      bc.cpu_ack_tx = Time(v[2] * kUs), bc.cpu_ack_rx = Time(v[3] * kUs);
    }
    else if (a == "--prm") {
      std::string kv = val();
      size_t eq = kv.find('=');
      if (eq == std::string::npos) usage();
      bc.prm.emplace_back(kv.substr(0, eq), strtoull(kv.c_str() + eq + 1, nullptr, 0));
    } else if (a == "--trace") bc.trace = Time(atof(val()) * kUs);
    else usage();
  }
  if (cmd == "incast") {
    IncastResult r = run_incast(bc.cond, bc.model, bc.streams, bc.hints, bc.seed, bc.duration,
                                bc.trace, bc.prm);
    std::cout << "conv_rtts=" << r.conv_rtts << " drained_rtts=" << r.drained_rtts << " jain=" << r.jain << " util=" << r.util
              << " peak_q=" << r.peak_queue << " drops=" << r.drops << "\n";
    return r.errors.empty() ? 0 : 1;
  }
  if (cmd == "bulk") {
    BulkResult r = run_bulk(bc);
    std::cout << r.metrics << "\n";
    if (!r.core_stats.empty()) std::cout << "  " << r.core_stats << "\n";
    if (!r.errors.empty()) {
      std::cout << "ERRORS: " << r.errors << "\n";
      return 1;
    }
    return 0;
  }
  if (cmd != "bench") usage();
  bool all = which == "all";
  if (all || which == "a") bench_loss(bo, std::cout);
  if (all || which == "b") bench_incast(bo, std::cout);
  if (all || which == "c") bench_failure(bo, std::cout);
  if (all || which == "d") bench_planes(bo, std::cout);
  if (all || which == "e") bench_isolation(bo, std::cout);
  if (all || which == "f") bench_qps(bo, std::cout);
  if (all || which == "g") bench_jitter(bo, std::cout);
  if (all || which == "h") bench_vm(bo, std::cout);
  return 0;
}
