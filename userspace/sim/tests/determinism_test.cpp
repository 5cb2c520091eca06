// SPDX-License-Identifier: GPL-2.0
// Same seed, same world: every run is reproducible bit for bit, and the
// seed really drives the randomness.
#include <gtest/gtest.h>

#include <sstream>

#include "scenarios.h"

using namespace sim;

namespace {

std::string fingerprint(const BulkResult &r) {
  std::ostringstream o;
  o << r.metrics << " |";
  for (size_t b = 0; b < r.timeline.n_bins(); b++) o << " " << r.timeline.bin_bytes(b);
  return o.str();
}

BulkCfg busy(Model m, uint64_t seed) {
  BulkCfg c;
  c.model = m;
  c.seed = seed;
  c.streams = 2;
  c.loss = 0.02;
  c.duration = 1500 * kUs;
  c.warmup = 200 * kUs;
  c.setup = [](World &w) {
    for (Port *p : w.fab->all_ports()) {
      p->dup = 0.01;
      p->jitter = 500;
    }
  };
  return c;
}

}  // namespace

TEST(Determinism, MroceSameSeedSameRunDifferentSeedDifferentRun) {
  BulkResult a = run_bulk(busy(Model::kMroce, 7)), b = run_bulk(busy(Model::kMroce, 7));
  BulkResult c = run_bulk(busy(Model::kMroce, 8));
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  EXPECT_NE(fingerprint(a), fingerprint(c));
  EXPECT_GT(a.events, 10000u);
}

TEST(Determinism, RoceSameSeedSameRunDifferentSeedDifferentRun) {
  BulkResult a = run_bulk(busy(Model::kRoce, 7)), b = run_bulk(busy(Model::kRoce, 7));
  BulkResult c = run_bulk(busy(Model::kRoce, 8));
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  EXPECT_NE(fingerprint(a), fingerprint(c));
}

TEST(Determinism, IncastIsReproducible) {
  Conditions cond;
  auto run = [&](uint64_t seed) {
    IncastResult r = run_incast(cond, Model::kMroce, 8, true, seed, 300 * kUs, 0, {});
    std::ostringstream o;
    o << r.conv_rtts << " " << r.jain << " " << r.util << " " << r.peak_queue << " " << r.drops;
    EXPECT_EQ(r.errors, "");
    return o.str();
  };
  EXPECT_EQ(run(3), run(3));
}

TEST(Determinism, BenchOutputIsByteIdentical) {
  // The benchmark's own table for one scenario, twice.
  auto table = [] {
    BenchOpts o;
    o.quick = true;
    o.out_dir = testing::TempDir();
    std::ostringstream s;
    bench_isolation(o, s);
    return s.str();
  };
  std::string a = table();
  EXPECT_EQ(a, table());
  EXPECT_NE(a.find("mroce"), std::string::npos);
}
