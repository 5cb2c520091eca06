// SPDX-License-Identifier: GPL-2.0
/*
 * Aggregation (the mroce_tp.h updates the BPF programs run) fed with
 * synthetic tracepoint records, and the snapshot model built on it.
 */
#include <gtest/gtest.h>

#include "mroce_tp.h"
#include "paths.h"

using namespace mroce;

namespace {

/* ctx[] of mroce_path_sample */
std::vector<__u64> sample(__u32 dev, __u32 conn, __u32 id, __u32 gen, __u16 sport, __u8 state,
			  __u32 srtt, __u32 min_rtt, __u32 pwnd, __u32 inflight, __u64 ce, __u64 lost)
{
	return {dev, conn, id | gen << 8, sport, state, srtt, srtt / 4, min_rtt, pwnd, inflight, ce, lost};
}

std::vector<__u64> stats(__u32 dev, __u32 conn, __u32 id, __u64 tx, __u64 bytes, __u64 acked)
{
	return {dev, conn, id, tx, bytes, acked, 11, 2, 3, 4, 5};
}

} // namespace

TEST(Aggregate, PathSample__LatestWinsCountsAndSumsAccumulate)
{
	mroce_path_val v{};
	mroce_path_key k{};
	auto a = sample(3, 9, 2, 1, 49153, 0, 80000, 40000, 65536, 16384, 5, 1);
	mroce_tp_path_key_of(&k, a.data());
	EXPECT_EQ(k.dev, 3u);
	EXPECT_EQ(k.conn, 9u);
	EXPECT_EQ(k.path, 2u) << "the key holds the id, not the generation";
	mroce_tp_on_path_sample(&v, a.data(), 1000);
	auto b = sample(3, 9, 2, 1, 49153, 1, 120000, 40000, 32768, 8192, 7, 2);
	mroce_tp_on_path_sample(&v, b.data(), 2000);
	EXPECT_EQ(v.sample_ns, 2000u);
	EXPECT_EQ(v.samples, 2u);
	EXPECT_EQ(v.srtt_sum, 200000u);
	EXPECT_EQ(v.srtt, 120000u);
	EXPECT_EQ(v.rttvar, 30000u);
	EXPECT_EQ(v.min_rtt, 40000u);
	EXPECT_EQ(v.gen, 1u);
	EXPECT_EQ(v.sport, 49153u);
	EXPECT_EQ(v.state, 1u);
	EXPECT_EQ(v.pwnd, 32768u);
	EXPECT_EQ(v.inflight, 8192u);
	EXPECT_EQ(v.ce, 7u);
	EXPECT_EQ(v.lost, 2u);
}

TEST(Aggregate, PathSample__NarrowArgumentsAreMasked)
{
	mroce_path_val v{};
	/* raw_tp slots are u64; bits above an argument's width are not ours */
	std::vector<__u64> a = {1, 2, 0xffff0305, 0xabcd1234, 0x1ff, 1, 1, 1, 1, 1, 0, 0};
	mroce_tp_on_path_sample(&v, a.data(), 1);
	EXPECT_EQ(v.gen, 3u);
	EXPECT_EQ(v.sport, 0x1234u);
	EXPECT_EQ(v.state, 0xffu);
}

TEST(Aggregate, PathStatsStateRekeyRetransmit)
{
	mroce_path_val v{};
	auto s = stats(1, 1, 0, 100, 409600, 98);
	mroce_tp_on_path_stats(&v, s.data(), 50);
	EXPECT_EQ(v.stats_ns, 50u);
	EXPECT_EQ(v.tx_pkts, 100u);
	EXPECT_EQ(v.tx_bytes, 409600u);
	EXPECT_EQ(v.acked_pkts, 98u);
	EXPECT_EQ(v.rx_pkts, 11u);
	EXPECT_EQ(v.naks, 2u);
	EXPECT_EQ(v.ptos, 3u);
	EXPECT_EQ(v.rtos, 4u);
	EXPECT_EQ(v.rekeys, 5u);

	std::vector<__u64> st = {1, 1, 0, 50000, 0, 2};
	mroce_tp_on_path_state(&v, st.data(), 60);
	EXPECT_EQ(v.state, 2u);
	EXPECT_EQ(v.sport, 50000u);
	EXPECT_EQ(v.state_changes, 1u);
	EXPECT_EQ(v.state_ns, 60u);

	std::vector<__u64> rk = {1, 1, 0, 4, 50000, 50001, 2};
	mroce_tp_on_path_rekey(&v, rk.data());
	EXPECT_EQ(v.gen, 4u);
	EXPECT_EQ(v.sport, 50001u);
	EXPECT_EQ(v.rekey_events, 1u);

	/* path 1 carries what path 0 lost by SACK, then by RTO */
	mroce_path_val out{};
	std::vector<__u64> rt = {1, 1, 1, 77, 5, 9, 0, 66, 4096, 0};
	mroce_tp_on_retx_out(&out, rt.data());
	mroce_tp_on_retx_lost(&v, rt.data());
	rt[MROCE_RTX_REASON] = 1;
	mroce_tp_on_retx_out(&out, rt.data());
	mroce_tp_on_retx_lost(&v, rt.data());
	rt[MROCE_RTX_REASON] = 200;	/* unknown reason: not counted, no overflow */
	mroce_tp_on_retx_lost(&v, rt.data());
	EXPECT_EQ(out.retx_out, 2u);
	EXPECT_EQ(out.retx_out_bytes, 8192u);
	EXPECT_EQ(v.retx_lost[0], 1u);
	EXPECT_EQ(v.retx_lost[1], 1u);
	PathRow r;
	r.val = v;
	EXPECT_EQ(r.retx_lost(), 2u);
}

TEST(Aggregate, ConnStateCcAndNak)
{
	mroce_conn_val v{};
	std::vector<__u64> cs = {1, 4, 8, 0, 0x0000ffff0a000002ull, 1, 2, 8};
	mroce_tp_on_conn_state(&v, cs.data(), 10);
	EXPECT_EQ(v.state, 2u);
	EXPECT_EQ(v.peer_conn, 8u);
	EXPECT_EQ(v.n_paths, 8u);
	ConnRow c;
	c.val = v;
	EXPECT_EQ(c.peer(), "10.0.0.2");

	std::vector<__u64> cc = {1, 4, 262144, 131072, 512, 1000, 900, 4096, 1};
	mroce_tp_on_cc_update(&v, cc.data(), 11);
	cc[MROCE_CC_EVENT] = 9;	/* unknown event: state taken, not counted */
	mroce_tp_on_cc_update(&v, cc.data(), 12);
	EXPECT_EQ(v.cwnd, 262144u);
	EXPECT_EQ(v.alpha, 512u);
	EXPECT_EQ(v.pacing_rate, 900u);
	EXPECT_EQ(v.cc_events[1], 1u);
	EXPECT_EQ(v.cc_ns, 12u);

	std::vector<__u64> nak = {1, 4, 1, 1, 0, 0, 0, 0};
	mroce_tp_on_nak(&v, nak.data());
	nak[MROCE_NAK_SENT] = 0;
	mroce_tp_on_nak(&v, nak.data());
	mroce_tp_on_nak(&v, nak.data());
	EXPECT_EQ(v.naks_sent, 1u);
	EXPECT_EQ(v.naks_rcvd, 2u);
}

TEST(Paths, PeerAddress__V4MappedAndV6)
{
	EXPECT_EQ(peer_address(0, 0x0000ffffc0a80101ull), "192.168.1.1");
	EXPECT_EQ(peer_address(0xfd00000000000000ull, 1), "fd00::1");
}

TEST(Paths, Rates__PerSecondAndMeanSrttOverTheInterval)
{
	PathRow a, b;
	a.val.tx_pkts = 100;
	a.val.tx_bytes = 100000;
	a.val.samples = 10;
	a.val.srtt_sum = 10 * 50000;
	a.val.lost = 1;
	b.val = a.val;
	b.val.tx_pkts = 300;
	b.val.tx_bytes = 300000;
	b.val.samples = 14;
	b.val.srtt_sum = a.val.srtt_sum + 4 * 100000;
	b.val.lost = 3;
	b.val.retx_out = 2;
	PathRates r = path_rates(a, b, 2.0);
	EXPECT_DOUBLE_EQ(r.tx_pps, 100);
	EXPECT_DOUBLE_EQ(r.tx_bps, 800000);
	EXPECT_DOUBLE_EQ(r.lost_pps, 1);
	EXPECT_DOUBLE_EQ(r.retx_pps, 1);
	EXPECT_DOUBLE_EQ(r.samples_ps, 2);
	EXPECT_DOUBLE_EQ(r.mean_srtt_ns, 100000);
	/* a counter that went backwards is a new connection: no negative rate */
	PathRates back = path_rates(b, a, 1.0);
	EXPECT_EQ(back.tx_pps, 0);
	EXPECT_EQ(back.mean_srtt_ns, -1);
}

TEST(Paths, Utilisation__InflightOverWindowUnknownWithoutSample)
{
	PathRow p;
	EXPECT_LT(p.utilisation(), 0);
	p.val.sample_ns = 1;
	p.val.pwnd = 4000;
	p.val.inflight = 1000;
	EXPECT_DOUBLE_EQ(p.utilisation(), 0.25);
	p.val.pwnd = 0;
	EXPECT_LT(p.utilisation(), 0);
}

TEST(Paths, Snapshot__SortNameFilter)
{
	Snapshot s;
	for (auto [dev, conn, path] : {std::tuple{5u, 2u, 1u}, {3u, 9u, 0u}, {5u, 2u, 0u}}) {
		PathRow p;
		p.key = {dev, conn, path};
		s.paths.push_back(p);
	}
	ConnRow c;
	c.key = {5, 2};
	s.conns.push_back(c);
	s.sort();
	EXPECT_EQ(s.paths[0].key.dev, 3u);
	EXPECT_EQ(s.paths[1].key.path, 0u);
	EXPECT_EQ(s.paths[2].key.path, 1u);
	s.name_devices({{5, "mroce_b"}});
	EXPECT_EQ(s.paths[0].device, "dev3");
	EXPECT_EQ(s.paths[1].device, "mroce_b");
	ASSERT_NE(s.path({5, 2, 1}), nullptr);
	EXPECT_EQ(s.path({5, 2, 7}), nullptr);
	ASSERT_NE(s.conn(5, 2), nullptr);
	Snapshot f = s;
	f.filter("mroce_b", -1);
	EXPECT_EQ(f.paths.size(), 2u);
	EXPECT_EQ(f.conns.size(), 1u);
	f = s;
	f.filter("", 9);
	EXPECT_EQ(f.paths.size(), 1u);
	EXPECT_TRUE(f.conns.empty());
}

TEST(Paths, DescribeEvent__OneReadableLinePerKind)
{
	mroce_tp_event e{};
	e.type = MROCE_EV_PATH_STATE;
	e.conn = 4;
	e.path = 3 | 2 << 8;
	e.a = 50003;
	e.b = 0;
	e.c = 1;
	EXPECT_EQ(describe_event(e, "mroce_a"),
		  "mroce_a conn 4 path 3 gen 2 sport 50003: ACTIVE -> SUSPECT");
	e.type = MROCE_EV_PATH_REKEY;
	e.a = 3;
	e.b = 50003;
	e.c = 50100;
	e.d = 2;
	EXPECT_EQ(describe_event(e, "mroce_a"),
		  "mroce_a conn 4 path 3 gen 2: re-key to gen 3, sport 50003 -> 50100 (bad)");
	e.type = MROCE_EV_CONN_STATE;
	e.a = 7;
	e.b = 1;
	e.c = 2;
	e.d = 8;
	e.peer_lo = 0x0000ffff0a000002ull;
	EXPECT_EQ(describe_event(e, "mroce_a"),
		  "mroce_a conn 4 peer 10.0.0.2 peer_conn 7 paths 8: REQ_SENT -> ESTABLISHED");
	EXPECT_EQ(path_state_name(9), "?9");
}
