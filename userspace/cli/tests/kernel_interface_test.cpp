// SPDX-License-Identifier: GPL-2.0
/*
 * The CLI reads the kernel through interfaces it cannot see at compile
 * time: tracepoint argument positions (raw_tp ctx[i]), hw counter names,
 * enum values. These tests read the module's own sources and fail when
 * the two sides drift apart.
 */
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "counters.h"
#include "mroce_tp.h"
#include "paths.h"

#ifdef MROCE_HAVE_CORE
extern "C" {
#include "mroce_health.h"
#include "mroce_hs.h"
}
#endif

using namespace mroce;

namespace {

const std::string kdir = std::string(MROCE_SRC_TOP) + "/drivers/infiniband/sw/mroce/";

std::string slurp(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream s;
	s << f.rdbuf();
	return s.str();
}

/* TRACE_EVENT[_FN](name, TP_PROTO(type a, type b, ...)) -> {a, b, ...} */
std::map<std::string, std::vector<std::string>> tp_protos()
{
	std::map<std::string, std::vector<std::string>> r;
	std::string h = slurp(kdir + "mroce_trace.h");
	std::regex ev(R"(TRACE_EVENT(?:_FN)?\(\s*(\w+)\s*,\s*TP_PROTO\(([^)]*)\))");
	for (std::sregex_iterator it(h.begin(), h.end(), ev), end; it != end; ++it) {
		std::vector<std::string> args;
		std::stringstream ss((*it)[2].str());
		std::string a;
		while (std::getline(ss, a, ',')) {
			std::smatch m;
			std::regex last(R"((\w+)\s*$)");
			if (std::regex_search(a, m, last))
				args.push_back(m[1]);
		}
		r[(*it)[1]] = args;
	}
	return r;
}

/* Names of an enum's members in declaration order: MROCE_RETX_SACK, ... */
std::vector<std::string> enum_members(const std::string &src, const std::string &name)
{
	std::vector<std::string> r;
	auto p = src.find("enum " + name + " {");
	if (p == std::string::npos)
		return r;
	auto e = src.find("};", p);
	std::string body = src.substr(p, e - p);
	std::regex mem(R"(\n\s*(MROCE_\w+)\s*[,=])");
	for (std::sregex_iterator it(body.begin(), body.end(), mem), end; it != end; ++it)
		r.push_back((*it)[1]);
	return r;
}

std::string lower(std::string s)
{
	for (auto &c : s)
		c = static_cast<char>(tolower(c));
	return s;
}

struct Expect {
	const char *tp;
	std::vector<std::pair<const char *, int>> args;	/* name, our ctx index */
	int nr;
};

} // namespace

TEST(KernelInterface, TracepointArguments__MatchTheModuleTpProto)
{
	auto protos = tp_protos();
	ASSERT_FALSE(protos.empty()) << "cannot read " << kdir << "mroce_trace.h";
	const std::vector<Expect> expect = {
		{"mroce_path_sample",
		 {{"dev", MROCE_PS_DEV}, {"conn", MROCE_PS_CONN}, {"path", MROCE_PS_PATH},
		  {"sport", MROCE_PS_SPORT}, {"state", MROCE_PS_STATE}, {"srtt", MROCE_PS_SRTT},
		  {"rttvar", MROCE_PS_RTTVAR}, {"min_rtt", MROCE_PS_MIN_RTT}, {"pwnd", MROCE_PS_PWND},
		  {"inflight", MROCE_PS_INFLIGHT}, {"ce", MROCE_PS_CE}, {"lost", MROCE_PS_LOST}},
		 MROCE_PS_NR},
		{"mroce_path_stats",
		 {{"dev", MROCE_PST_DEV}, {"conn", MROCE_PST_CONN}, {"path", MROCE_PST_PATH},
		  {"tx_pkts", MROCE_PST_TX_PKTS}, {"tx_bytes", MROCE_PST_TX_BYTES},
		  {"acked_pkts", MROCE_PST_ACKED_PKTS}, {"rx_pkts", MROCE_PST_RX_PKTS},
		  {"naks", MROCE_PST_NAKS}, {"ptos", MROCE_PST_PTOS}, {"rtos", MROCE_PST_RTOS},
		  {"rekeys", MROCE_PST_REKEYS}},
		 MROCE_PST_NR},
		{"mroce_path_state",
		 {{"dev", MROCE_PSC_DEV}, {"conn", MROCE_PSC_CONN}, {"path", MROCE_PSC_PATH},
		  {"sport", MROCE_PSC_SPORT}, {"old_state", MROCE_PSC_OLD}, {"new_state", MROCE_PSC_NEW}},
		 MROCE_PSC_NR},
		{"mroce_path_rekey",
		 {{"dev", MROCE_PRK_DEV}, {"conn", MROCE_PRK_CONN}, {"path", MROCE_PRK_PATH},
		  {"new_gen", MROCE_PRK_NEW_GEN}, {"old_sport", MROCE_PRK_OLD_SPORT},
		  {"new_sport", MROCE_PRK_NEW_SPORT}, {"reason", MROCE_PRK_REASON}},
		 MROCE_PRK_NR},
		{"mroce_retransmit",
		 {{"dev", MROCE_RTX_DEV}, {"conn", MROCE_RTX_CONN}, {"path", MROCE_RTX_PATH},
		  {"path_psn", MROCE_RTX_PATH_PSN}, {"qpn", MROCE_RTX_QPN},
		  {"stream_psn", MROCE_RTX_STREAM_PSN}, {"old_path", MROCE_RTX_OLD_PATH},
		  {"old_psn", MROCE_RTX_OLD_PSN}, {"len", MROCE_RTX_LEN}, {"reason", MROCE_RTX_REASON}},
		 MROCE_RTX_NR},
		{"mroce_conn_state",
		 {{"dev", MROCE_CS_DEV}, {"conn", MROCE_CS_CONN}, {"peer_conn", MROCE_CS_PEER_CONN},
		  {"peer_hi", MROCE_CS_PEER_HI}, {"peer_lo", MROCE_CS_PEER_LO},
		  {"old_state", MROCE_CS_OLD}, {"new_state", MROCE_CS_NEW}, {"n_paths", MROCE_CS_N_PATHS}},
		 MROCE_CS_NR},
		{"mroce_cc_update",
		 {{"dev", MROCE_CC_DEV}, {"conn", MROCE_CC_CONN}, {"cwnd", MROCE_CC_CWND},
		  {"ssthresh", MROCE_CC_SSTHRESH}, {"alpha", MROCE_CC_ALPHA},
		  {"rate_hint", MROCE_CC_RATE_HINT}, {"pacing_rate", MROCE_CC_PACING_RATE},
		  {"inflight", MROCE_CC_INFLIGHT}, {"event", MROCE_CC_EVENT}},
		 MROCE_CC_NR},
		{"mroce_nak",
		 {{"dev", MROCE_NAK_DEV}, {"conn", MROCE_NAK_CONN}, {"sent", MROCE_NAK_SENT},
		  {"code", MROCE_NAK_CODE}, {"qpn", MROCE_NAK_QPN}, {"stream_psn", MROCE_NAK_STREAM_PSN},
		  {"ssn", MROCE_NAK_SSN}, {"arg", MROCE_NAK_ARG}},
		 MROCE_NAK_NR},
	};
	for (const auto &e : expect) {
		SCOPED_TRACE(e.tp);
		ASSERT_TRUE(protos.count(e.tp)) << "tracepoint gone from mroce_trace.h";
		const auto &got = protos[e.tp];
		/* Arguments only grow at the end: we may read a prefix. */
		ASSERT_GE(got.size(), static_cast<size_t>(e.nr));
		EXPECT_LE(got.size(), 12u) << "raw_tp programs see at most 12 arguments";
		for (const auto &[name, idx] : e.args)
			EXPECT_EQ(got[idx], name) << "ctx[" << idx << "]";
	}
}

TEST(KernelInterface, HwCounterNames__MatchTheModuleTableInOrder)
{
	std::string c = slurp(kdir + "mroce_counters.c");
	std::regex desc(R"re(\[MROCE_CNT_\w+\]\.name\s*=\s*"(\w+)")re");
	std::vector<std::string> kernel;
	for (std::sregex_iterator it(c.begin(), c.end(), desc), end; it != end; ++it)
		kernel.push_back((*it)[1]);
	ASSERT_FALSE(kernel.empty());
	std::vector<std::string> ours;
	for (const auto &i : counter_catalog())
		ours.emplace_back(i.name);
	EXPECT_EQ(ours, kernel) << "document the new counter in userspace/telemetry/counters.cpp";
}

TEST(KernelInterface, RetransmitReasonsAndCcEvents__MatchTraceHeaderEnums)
{
	std::string h = slurp(kdir + "mroce_trace.h");
	auto retx = enum_members(h, "mroce_retx_reason");
	ASSERT_EQ(retx.size(), static_cast<size_t>(MROCE_TP_RETX_REASONS));
	for (uint32_t i = 0; i < retx.size(); i++)
		EXPECT_EQ(lower(retx[i]), "mroce_retx_" + retx_reason_name(i));
	auto cc = enum_members(h, "mroce_cc_event");
	ASSERT_EQ(cc.size(), static_cast<size_t>(MROCE_TP_CC_EVENTS));
	for (uint32_t i = 0; i < cc.size(); i++)
		EXPECT_EQ(lower(cc[i]), "mroce_cc_" + cc_event_name(i));
}

#ifdef MROCE_HAVE_CORE
TEST(KernelInterface, StateNames__MatchTheProtocolCore)
{
	ASSERT_EQ(MROCE_PATH_NR_STATES, MROCE_TP_PATH_STATES);
	for (uint32_t i = 0; i < MROCE_PATH_NR_STATES; i++)
		EXPECT_EQ(lower(path_state_name(i)), mroce_path_state_name[i]);
	ASSERT_EQ(MROCE_HS_NR_STATES, MROCE_TP_CONN_STATES);
	for (uint32_t i = 0; i < MROCE_HS_NR_STATES; i++)
		EXPECT_EQ(lower(conn_state_name(i)), mroce_hs_state_name[i]);
	EXPECT_EQ(MROCE_HS_ESTABLISHED, MROCE_TP_CONN_ESTABLISHED);
	EXPECT_EQ(health_event_name(MROCE_HEV_PROGRESS), "progress");
	EXPECT_EQ(health_event_name(MROCE_HEV_RTO), "rto");
	EXPECT_EQ(health_event_name(MROCE_HEV_BAD), "bad");
	EXPECT_EQ(health_event_name(MROCE_HEV_DRAINED), "drained");
	EXPECT_EQ(health_event_name(MROCE_HEV_HOLDOFF_END), "holdoff_end");
	EXPECT_EQ(health_event_name(MROCE_HEV_STALE), "stale");
}
#endif
