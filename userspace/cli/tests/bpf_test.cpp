// SPDX-License-Identifier: GPL-2.0
/*
 * The real BPF object, loaded into the running kernel (verifier included)
 * and driven with synthetic tracepoint arguments through BPF_PROG_TEST_RUN;
 * then read back through the same code `mroce path` uses. Needs root (or
 * CAP_BPF) and a BPF-enabled build; skips otherwise, saying why.
 */
#include <gtest/gtest.h>

#include "bpf_source.h"

using namespace mroce;

class BpfFixture : public ::testing::Test {
protected:
	void SetUp() override
	{
		if (!BpfTelemetry::built_in())
			GTEST_SKIP() << "built without BPF (clang/bpftool/libbpf-dev missing)";
		std::string err;
		if (!t.open(err, false))
			GTEST_SKIP() << "cannot load BPF here: " << err;
	}

	void run(const char *prog, std::vector<uint64_t> args)
	{
		std::string err;
		ASSERT_TRUE(t.test_run(prog, args, err)) << err;
	}

	BpfTelemetry t;
};

TEST_F(BpfFixture, Programs__AggregateSyntheticRecordsIntoTheMaps)
{
	uint64_t t0 = monotonic_ns();
	/* two samples on dev 3 conn 9 path 2 (gen 1), one on path 5 */
	run("mroce_path_sample", {3, 9, 2 | 1 << 8, 49153, 0, 80000, 20000, 40000, 65536, 16384, 5, 1});
	run("mroce_path_sample", {3, 9, 2 | 1 << 8, 49153, 0, 120000, 30000, 40000, 65536, 32768, 6, 1});
	run("mroce_path_sample", {3, 9, 5, 49156, 0, 90000, 1, 2, 3, 4, 0, 0});
	run("mroce_path_stats", {3, 9, 2 | 1 << 8, 1000, 4096000, 990, 12, 1, 2, 3, 4});
	/* a chunk lost on path 2 (SACK) goes out again on path 5 */
	run("mroce_retransmit", {3, 9, 5, 100, 17, 200, 2 | 1 << 8, 42, 4096, 0});
	/* resent on path 5, lost who knows where: no phantom path 255 row */
	run("mroce_retransmit", {3, 9, 5, 101, 17, 201, 0xffffffffu, 0, 4096, 0});
	run("mroce_path_state", {3, 9, 5, 49156, 0, 1});
	run("mroce_conn_state", {3, 9, 4, 0, 0x0000ffff0a000002ull, 1, 2, 8});
	run("mroce_cc_update", {3, 9, 262144, 131072, 100, 1000, 950, 8192, 1});
	run("mroce_nak", {3, 9, 1, 1, 17, 0, 0, 0});
	run("mroce_nak", {3, 0, 1, 6, 0, 0, 0, 0});	/* unknown conn: no row */

	Snapshot s;
	std::string err;
	ASSERT_TRUE(t.read(s, err)) << err;
	ASSERT_EQ(s.paths.size(), 2u);
	const PathRow *p2 = s.path({3, 9, 2});
	const PathRow *p5 = s.path({3, 9, 5});
	ASSERT_TRUE(p2 && p5);
	EXPECT_EQ(p2->val.samples, 2u);
	EXPECT_EQ(p2->val.srtt, 120000u);
	EXPECT_EQ(p2->val.srtt_sum, 200000u);
	EXPECT_EQ(p2->val.rttvar, 30000u);
	EXPECT_EQ(p2->val.min_rtt, 40000u);
	EXPECT_EQ(p2->val.inflight, 32768u);
	EXPECT_EQ(p2->val.gen, 1u);
	EXPECT_EQ(p2->val.ce, 6u);
	EXPECT_EQ(p2->val.tx_pkts, 1000u);
	EXPECT_EQ(p2->val.tx_bytes, 4096000u);
	EXPECT_EQ(p2->val.rekeys, 4u);
	EXPECT_EQ(p2->val.retx_lost[0], 1u);
	EXPECT_EQ(p2->val.retx_out, 0u);
	EXPECT_GE(p2->val.sample_ns, t0) << "timestamps are CLOCK_MONOTONIC";
	EXPECT_LE(p2->val.sample_ns, s.ns);
	EXPECT_EQ(p5->val.retx_out, 2u);
	EXPECT_EQ(p5->val.retx_out_bytes, 8192u);
	EXPECT_EQ(p5->val.state, 1u);
	EXPECT_EQ(p5->val.state_changes, 1u);

	ASSERT_EQ(s.conns.size(), 1u);
	const ConnRow *c = s.conn(3, 9);
	ASSERT_TRUE(c);
	EXPECT_EQ(c->peer(), "10.0.0.2");
	EXPECT_EQ(c->val.state, 2u);
	EXPECT_EQ(c->val.n_paths, 8u);
	EXPECT_EQ(c->val.cwnd, 262144u);
	EXPECT_EQ(c->val.pacing_rate, 950u);
	EXPECT_EQ(c->val.cc_events[1], 1u);
	EXPECT_EQ(c->val.naks_sent, 1u);

	/* the ring buffer got the path-state and conn-state events, in order */
	std::vector<mroce_tp_event> ev;
	t.poll_events(100, [&](const mroce_tp_event &e) { ev.push_back(e); });
	ASSERT_EQ(ev.size(), 2u);
	EXPECT_EQ(ev[0].type, static_cast<uint32_t>(MROCE_EV_PATH_STATE));
	EXPECT_EQ(ev[0].c, 1u);
	EXPECT_EQ(ev[1].type, static_cast<uint32_t>(MROCE_EV_CONN_STATE));
	EXPECT_EQ(ev[1].peer_lo, 0x0000ffff0a000002ull);
	EXPECT_EQ(s.events_lost, 0u);
}

TEST_F(BpfFixture, Expire__ForgetsRowsIdleSinceTheCutoff)
{
	run("mroce_path_sample", {1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0, 0});
	uint64_t mid = monotonic_ns();
	run("mroce_path_sample", {1, 2, 0, 1, 0, 1, 1, 1, 1, 1, 0, 0});
	EXPECT_EQ(t.expire(mid), 1u);
	Snapshot s;
	std::string err;
	ASSERT_TRUE(t.read(s, err));
	ASSERT_EQ(s.paths.size(), 1u);
	EXPECT_EQ(s.paths[0].key.conn, 2u);
}

TEST_F(BpfFixture, TestRun__ShortContextIsRefused)
{
	std::string err;
	/* the program reads 12 arguments; the kernel must not let it read past 3 */
	EXPECT_FALSE(t.test_run("mroce_path_sample", {1, 2, 3}, err));
}
