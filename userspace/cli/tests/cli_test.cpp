// SPDX-License-Identifier: GPL-2.0
/*
 * Whole commands, run through mroce::run() against a fake sysfs tree, a
 * fake clock and synthetic telemetry; and the installed binary's exit
 * codes.
 */
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/wait.h>

#include "cli.h"
#include "fake_sysfs.h"

using namespace mroce;
using mroce_test::FakeSysfs;

namespace {

struct FakeWorld {
	uint64_t clock = 1000000000000ull;
	std::vector<Snapshot> snaps;
	size_t reads = 0;
	bool fail_open = false;
	std::vector<mroce_tp_event> events;
	uint64_t expired_before = 0;
	std::function<void()> on_sleep;
};

class FakeSource : public PathSource {
public:
	explicit FakeSource(FakeWorld &w) : w_(w) {}
	bool open(std::string &err) override
	{
		err = "cannot load the BPF programs: Operation not permitted (loading BPF programs needs root)";
		return !w_.fail_open;
	}
	bool read(Snapshot &s, std::string &) override
	{
		s = w_.snaps.empty() ? Snapshot() : w_.snaps[std::min(w_.reads, w_.snaps.size() - 1)];
		w_.reads++;
		s.ns = w_.clock;
		return true;
	}
	void poll_events(int ms, const std::function<void(const mroce_tp_event &)> &cb) override
	{
		w_.clock += static_cast<uint64_t>(ms) * 1000000;
		for (const auto &e : w_.events)
			cb(e);
		w_.events.clear();
	}
	void expire(uint64_t before) override { w_.expired_before = before; }

private:
	FakeWorld &w_;
};

PathRow path(uint32_t conn, uint32_t id, uint64_t tx, uint64_t samples, uint32_t srtt)
{
	PathRow p;
	p.key = {3, conn, id};
	p.val.sample_ns = 999000000000ull;
	p.val.samples = samples;
	p.val.srtt_sum = samples * srtt;
	p.val.srtt = srtt;
	p.val.min_rtt = srtt / 2;
	p.val.rttvar = srtt / 8;
	p.val.pwnd = 65536;
	p.val.inflight = 16384;
	p.val.sport = static_cast<uint16_t>(49152 + id);
	p.val.stats_ns = p.val.sample_ns;
	p.val.tx_pkts = tx;
	p.val.tx_bytes = tx * 4096;
	p.val.acked_pkts = tx;
	return p;
}

/* A ring-buffer record: path @id of device 3's @conn went from ACTIVE to @to. */
mroce_tp_event path_state_event(uint32_t conn, uint32_t id, uint32_t to)
{
	mroce_tp_event e{};
	e.type = MROCE_EV_PATH_STATE;
	e.dev = 3;
	e.conn = conn;
	e.path = id;
	e.a = 49152 + id;
	e.c = to;
	return e;
}

class Cli : public ::testing::Test {
protected:
	void SetUp() override
	{
		fs.add_device("mroce0", "mroce", "veth0");
		fs.add_device("rxe0", "rxe", "veth1");
		fs.set_gid("mroce0", 1, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", "veth0");
		fs.set_counter("mroce0", "sent_pkts", 5);
		fs.set_counter("mroce0", "rcvd_pkts", 7);
		fs.set_counter("mroce0", "drop_nomem", 0);
		fs.set_counter("rxe0", "sent_pkts", 1);
	}

	int run(std::vector<std::string> args)
	{
		out.str("");
		err.str("");
		Context ctx(out, err);
		ctx.sysfs = Sysfs(fs.root());
		ctx.device_names = [] { return std::map<uint32_t, std::string>{{3, "mroce0"}, {4, "rxe0"}}; };
		ctx.port_mtu = [](const std::string &d, unsigned, PortMtu &m, std::string &e) {
			if (d != "mroce0")
				return e = "no", false;
			m.active = 1024;
			m.max = 4096;
			return true;
		};
		ctx.path_source = [this] { return std::make_unique<FakeSource>(world); };
		ctx.now_ns = [this] { return world.clock; };
		ctx.sleep = [this](double s) {
			world.clock += static_cast<uint64_t>(s * 1e9);
			if (world.on_sleep)
				world.on_sleep();
		};
		return mroce::run(args, ctx);
	}

	FakeSysfs fs;
	FakeWorld world;
	std::ostringstream out, err;
};

} // namespace

TEST_F(Cli, Help__EveryLevelExitsZero)
{
	EXPECT_EQ(run({"help"}), 0);
	EXPECT_NE(out.str().find("OBJECT := { dev | stats | path | telemetry }"), std::string::npos);
	EXPECT_EQ(run({"-h"}), 0);
	for (const char *obj : {"dev", "stats", "path", "telemetry"}) {
		EXPECT_EQ(run({obj, "help"}), 0) << obj;
		EXPECT_NE(out.str().find(std::string("Usage: mroce ") + obj), std::string::npos) << obj;
	}
	EXPECT_EQ(run({"path", "show", "help"}), 0);
	EXPECT_NE(out.str().find("mroce path watch"), std::string::npos);
	EXPECT_EQ(run({"telemetry", "export", "-h"}), 0);
	EXPECT_NE(out.str().find("--textfile"), std::string::npos);
	EXPECT_EQ(run({"-V"}), 0);
	EXPECT_EQ(out.str().rfind("mroce ", 0), 0u);
}

TEST_F(Cli, Usage__ErrorsExitTwo)
{
	EXPECT_EQ(run({}), 2);
	EXPECT_NE(err.str().find("Usage:"), std::string::npos);
	EXPECT_EQ(run({"frobnicate"}), 2);
	EXPECT_NE(err.str().find("unknown object \"frobnicate\""), std::string::npos);
	EXPECT_EQ(run({"--bogus", "dev"}), 2);
	EXPECT_EQ(run({"stats", "show", "-i"}), 2);
	EXPECT_NE(err.str().find("needs a value"), std::string::npos);
	EXPECT_EQ(run({"stats", "show", "-i", "0"}), 2);
	EXPECT_EQ(run({"stats", "show", "-i", "x"}), 2);
	EXPECT_EQ(run({"stats", "show", "-n", "2"}), 2) << "-n needs -i";
	EXPECT_EQ(run({"stats", "show", "-n", "-1", "-i", "1"}), 2);
	EXPECT_EQ(run({"dev", "show", "-i", "1"}), 2);
	EXPECT_NE(err.str().find("option -i is not valid for \"dev show\""), std::string::npos);
	EXPECT_EQ(run({"dev", "frob"}), 2);
	EXPECT_EQ(run({"dev", "show", "mroce0", "extra"}), 2);
	EXPECT_EQ(run({"path", "show", "-i", "1"}), 2);
	EXPECT_EQ(run({"path", "watch", "-t", "1"}), 2);
	EXPECT_EQ(run({"path", "show", "conn", "x"}), 2);
	EXPECT_EQ(run({"telemetry", "export", "--textfile", "a", "--listen", ":1"}), 2);
	EXPECT_EQ(run({"telemetry", "export", "--listen", "nohost"}), 2);
	EXPECT_EQ(run({"telemetry", "export", "-i", "1"}), 2);
	EXPECT_EQ(run({"-j", "telemetry", "export"}), 2);
	EXPECT_EQ(run({"--json=1", "dev"}), 2);
}

TEST_F(Cli, Dev__TextShowsNetdevStateMtuGidsAndOnlyMroce)
{
	ASSERT_EQ(run({"dev", "show"}), 0) << err.str();
	EXPECT_EQ(out.str(), "3: mroce0: netdev veth0 port 1 state ACTIVE physical_state LinkUp mtu 1024 "
			     "max_mtu 4096\n"
			     "    gid 1 ::ffff:10.0.0.1 type RoCE v2 netdev veth0\n");
	ASSERT_EQ(run({"d", "s", "-d"}), 0) << "prefixes work like iproute2";
	EXPECT_NE(out.str().find("node_guid 0200:00ff:fe00:0001 fw 0.1 link_layer Ethernet"),
		  std::string::npos);
}

TEST_F(Cli, Dev__Json)
{
	ASSERT_EQ(run({"-j", "dev", "show", "mroce0"}), 0);
	EXPECT_EQ(out.str(), "[{\"ifindex\":3,\"ifname\":\"mroce0\",\"netdev\":\"veth0\",\"port\":1,"
			     "\"state\":\"ACTIVE\",\"physical_state\":\"LinkUp\",\"active_mtu\":1024,"
			     "\"max_mtu\":4096,\"gids\":[{\"index\":1,\"gid\":\"::ffff:10.0.0.1\","
			     "\"type\":\"RoCE v2\",\"netdev\":\"veth0\"}]}]\n");
	ASSERT_EQ(run({"-p", "dev"}), 0);
	EXPECT_NE(out.str().find("\n        \"ifname\": \"mroce0\",\n"), std::string::npos) << out.str();
}

TEST_F(Cli, Dev__MissingOrForeignDeviceExitsOne)
{
	EXPECT_EQ(run({"dev", "show", "nope"}), 1);
	EXPECT_NE(err.str().find("no RDMA device \"nope\""), std::string::npos);
	EXPECT_EQ(run({"dev", "show", "rxe0"}), 1);
	EXPECT_NE(err.str().find("not an mroce device"), std::string::npos);
}

TEST_F(Cli, Stats__TextGroupsAndDetails)
{
	ASSERT_EQ(run({"stats", "show", "mroce0/1"}), 0) << err.str();
	EXPECT_EQ(out.str(), "mroce0/1:\n"
			     "    traffic:      sent_pkts 5 rcvd_pkts 7\n"
			     "    drops:        drop_nomem 0\n");
	ASSERT_EQ(run({"stats", "show", "-d"}), 0);
	EXPECT_NE(out.str().find("sent_pkts       5  mroce packets sent"), std::string::npos) << out.str();
	EXPECT_NE(out.str().find("[drops]"), std::string::npos);
}

TEST_F(Cli, Stats__JsonFlatLikeRdmaStatistic)
{
	ASSERT_EQ(run({"-j", "stats"}), 0);
	EXPECT_EQ(out.str(),
		  "[{\"ifname\":\"mroce0\",\"port\":1,\"sent_pkts\":5,\"rcvd_pkts\":7,\"drop_nomem\":0}]\n");
}

TEST_F(Cli, Stats__IntervalPrintsRatesOfWhatChanged)
{
	uint64_t sent = 5;
	world.on_sleep = [&] { fs.set_counter("mroce0", "sent_pkts", sent += 250); };
	ASSERT_EQ(run({"stats", "show", "mroce0", "-i", "0.5", "-n", "2"}), 0) << err.str();
	std::string o = out.str();
	EXPECT_NE(o.find("mroce0/1 over 0.50s:"), std::string::npos) << o;
	EXPECT_NE(o.find("sent_pkts    255    250    500.0"), std::string::npos) << o;
	EXPECT_NE(o.find("sent_pkts    505    250    500.0"), std::string::npos) << o;
	EXPECT_EQ(o.find("rcvd_pkts"), std::string::npos) << "unchanged counters are left out";

	world.on_sleep = nullptr;
	ASSERT_EQ(run({"-j", "stats", "show", "-i", "1", "-n", "1"}), 0);
	EXPECT_NE(out.str().find("\"interval\":1,\"rates\":{\"sent_pkts\":0,"), std::string::npos)
		<< out.str();
}

TEST_F(Cli, Path__ShowJsonGroupsPathsUnderTheirConnection)
{
	Snapshot s;
	s.paths = {path(9, 0, 1000, 10, 85000), path(9, 1, 500, 5, 90000)};
	ConnRow c;
	c.key = {3, 9};
	c.val.state_ns = 1;
	c.val.state = 2;
	c.val.peer_conn = 4;
	c.val.n_paths = 2;
	c.val.peer_lo = 0x0000ffff0a000002ull;
	s.conns = {c};
	world.snaps = {s};
	ASSERT_EQ(run({"-j", "path", "show", "-t", "0.2"}), 0) << err.str();
	std::string o = out.str();
	EXPECT_EQ(o.rfind("[{\"ifname\":\"mroce0\",\"dev_index\":3,\"conn\":9,\"peer\":\"10.0.0.2\","
			  "\"peer_conn\":4,\"state\":\"ESTABLISHED\",\"n_paths\":2,\"cc\":null,",
			  0),
		  0u)
		<< o;
	EXPECT_NE(o.find("\"paths\":[{\"path\":0,\"generation\":0,\"sport\":49152,\"state\":\"ACTIVE\","
			 "\"srtt_ns\":85000,\"min_rtt_ns\":42500,\"rttvar_ns\":10625,"
			 "\"window_bytes\":65536,\"inflight_bytes\":16384,\"utilisation\":0.25,"),
		  std::string::npos)
		<< o;
	EXPECT_NE(o.find("\"tx_pkts\":500,\"tx_bytes\":2048000"), std::string::npos);
	EXPECT_NE(o.find("\"age_ns\":1200000000}"), std::string::npos) << "clock advanced by -t";
}

TEST_F(Cli, Path__ShowTextTableAndFilters)
{
	Snapshot s;
	s.paths = {path(9, 0, 1000, 10, 85000), path(11, 0, 7, 1, 1200000)};
	world.snaps = {s};
	ASSERT_EQ(run({"path", "show", "mroce0", "conn", "9"}), 0) << err.str();
	std::string o = out.str();
	EXPECT_EQ(o.rfind("DEV     CONN  PATH  GEN  SPORT  STATE     SRTT  MIN_RTT  RTTVAR", 0), 0u) << o;
	EXPECT_NE(o.find("mroce0     9     0    0  49152  ACTIVE  85.0us   42.5us  10.6us  64.0KiB"),
		  std::string::npos)
		<< o;
	EXPECT_EQ(o.find("1.20ms"), std::string::npos) << "conn 11 filtered out";

	world.snaps = {Snapshot()};
	world.reads = 0;
	ASSERT_EQ(run({"path"}), 0);
	EXPECT_NE(out.str().find("no mroce path carried traffic in the last 1.0s"), std::string::npos);
	EXPECT_EQ(run({"path", "show", "nope"}), 1);
	EXPECT_EQ(run({"path", "show", "rxe0"}), 1);
}

TEST_F(Cli, Path__BpfRefusedExitsOneWithTheReason)
{
	world.fail_open = true;
	EXPECT_EQ(run({"path", "show"}), 1);
	EXPECT_NE(err.str().find("needs root"), std::string::npos) << err.str();
}

TEST_F(Cli, Path__WatchPrintsRatesAndEvents)
{
	Snapshot a, b, c;
	a.paths = {path(9, 0, 1000, 10, 80000)};
	b.paths = {path(9, 0, 3000, 20, 100000)};	/* +2000 pkts, mean srtt of new samples 120us */
	b.paths[0].val.srtt_sum = a.paths[0].val.srtt_sum + 10 * 120000;
	c.paths = {path(9, 0, 3000, 20, 100000), path(9, 1, 10, 1, 50000)};
	world.snaps = {a, b, c};
	world.events = {path_state_event(9, 0, 1)};
	ASSERT_EQ(run({"-j", "path", "watch", "-i", "1", "-n", "2"}), 0) << err.str();
	std::istringstream lines(out.str());
	std::string l1, l2, l3;
	ASSERT_TRUE(std::getline(lines, l1));
	ASSERT_TRUE(std::getline(lines, l2));
	EXPECT_FALSE(std::getline(lines, l3)) << "one JSON document per interval";
	EXPECT_NE(l1.find("\"rates\":{\"tx_pkts\":2000,\"tx_bits\":65536000,"), std::string::npos) << l1;
	EXPECT_NE(l1.find("\"mean_srtt_ns\":120000"), std::string::npos) << l1;
	EXPECT_NE(l1.find("\"text\":\"mroce0 conn 9 path 0 gen 0 sport 49152: ACTIVE -> SUSPECT\""),
		  std::string::npos)
		<< l1;
	EXPECT_NE(l2.find("\"events\":[]"), std::string::npos);
	EXPECT_NE(l2.find("{\"path\":1,"), std::string::npos) << "a new path shows up";

	world.snaps = {a, b};
	world.reads = 0;
	ASSERT_EQ(run({"path", "watch", "-n", "1"}), 0);
	EXPECT_NE(out.str().find("TX_PKT/s"), std::string::npos);
	EXPECT_NE(out.str().find("2.00k/s  65.5Mbit/s"), std::string::npos) << out.str();
}

TEST_F(Cli, Telemetry__StdoutHasCountersAndPaths)
{
	Snapshot s;
	s.paths = {path(9, 0, 1000, 10, 85000)};
	world.snaps = {s};
	ASSERT_EQ(run({"telemetry", "export"}), 0) << err.str();
	std::string o = out.str();
	EXPECT_NE(o.find("mroce_port_sent_pkts_total{device=\"mroce0\",port=\"1\"} 5\n"), std::string::npos) << o;
	EXPECT_NE(o.find("mroce_port_active_mtu_bytes{device=\"mroce0\",port=\"1\"} 1024\n"), std::string::npos);
	EXPECT_NE(o.find("mroce_path_srtt_seconds{device=\"mroce0\",conn=\"9\",path=\"0\"} 8.5e-05\n"),
		  std::string::npos);
	EXPECT_EQ(o.find("rxe0"), std::string::npos) << "only mroce devices";
}

TEST_F(Cli, Telemetry__TextfileRewrittenEachIntervalAndExpires)
{
	std::string f = fs.root() + "/mroce.prom";
	uint64_t sent = 5;
	world.on_sleep = [&] { fs.set_counter("mroce0", "sent_pkts", ++sent); };
	ASSERT_EQ(run({"telemetry", "export", "--textfile", f, "-i", "15", "-n", "3", "--expire", "60"}), 0)
		<< err.str();
	std::ifstream in(f);
	std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	/* warm-up sleep, then two interval sleeps: 5 -> 8 */
	EXPECT_NE(content.find("mroce_port_sent_pkts_total{device=\"mroce0\",port=\"1\"} 8\n"),
		  std::string::npos)
		<< content;
	EXPECT_EQ(world.expired_before, world.clock - 60000000000ull);

	world.fail_open = true;
	ASSERT_EQ(run({"telemetry", "export", "--textfile", f, "-n", "1"}), 0);
	EXPECT_NE(err.str().find("warning: exporting counters only"), std::string::npos);
	std::ifstream in2(f);
	std::string c2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
	EXPECT_NE(c2.find("mroce_exporter_bpf_up 0\n"), std::string::npos);
}

TEST_F(Cli, Module__NotLoadedIsAnErrorNotAnEmptyList)
{
	/* loaded, no mroce device: an empty answer and a hint */
	FakeSysfs empty;
	fs.unload_module();
	EXPECT_EQ(run({"dev", "show"}), 0) << "rxe0 exists, so sysfs is real; mroce0 still listed";
	std::filesystem::remove_all(fs.root() + "/class/infiniband/mroce0");
	EXPECT_EQ(run({"dev", "show"}), 1);
	EXPECT_EQ(err.str(), "mroce: the mroce module is not loaded (modprobe mroce)\n");
	EXPECT_EQ(out.str(), "");
	EXPECT_EQ(run({"-j", "stats"}), 1);
	EXPECT_EQ(out.str(), "");
	EXPECT_NE(err.str().find("modprobe mroce"), std::string::npos);
	EXPECT_EQ(run({"stats", "show", "mroce0"}), 1);
	EXPECT_EQ(err.str(), "mroce: no RDMA device \"mroce0\": the mroce module is not loaded "
			     "(modprobe mroce)\n");
	/* the exporter keeps running and says so */
	world.fail_open = true;
	ASSERT_EQ(run({"telemetry", "export"}), 0);
	EXPECT_NE(out.str().find("\nmroce_module_loaded 0\n"), std::string::npos) << out.str();
	EXPECT_NE(err.str().find("warning: the mroce module is not loaded"), std::string::npos);

	fs.write("module/mroce/initstate", "live\n");
	EXPECT_EQ(run({"dev", "show"}), 0);
	EXPECT_NE(err.str().find("no mroce devices (create one: rdma link add"), std::string::npos);
	EXPECT_EQ(run({"-j", "stats"}), 0);
	EXPECT_EQ(out.str(), "[]\n");
}

TEST_F(Cli, Telemetry__StreamOneJsonLinePerIntervalWithRatesAndEvents)
{
	Snapshot a, b;
	a.paths = {path(9, 0, 1000, 10, 80000)};
	b.paths = {path(9, 0, 3000, 20, 100000)};
	world.snaps = {a, b, b};
	world.events = {path_state_event(9, 0, 3)};
	uint64_t sent = 5;
	ASSERT_EQ(run({"telemetry", "stream", "-i", "0.5", "-n", "2"}), 0) << err.str();
	std::istringstream lines(out.str());
	std::string l1, l2, l3;
	ASSERT_TRUE(std::getline(lines, l1));
	ASSERT_TRUE(std::getline(lines, l2));
	EXPECT_FALSE(std::getline(lines, l3)) << "one JSON object per interval";
	/* ISO 8601 UTC with ms; the fake poll overshoots the interval by 1 ms */
	EXPECT_TRUE(std::regex_search(l1, std::regex("^\\{\"time\":\"20[0-9]{2}-[0-9]{2}-[0-9]{2}T"
						     "[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z\","
						     "\"interval\":0\\.50[01],")))
		<< l1;
	EXPECT_NE(l1.find(",\"module_loaded\":true,\"devices\":[{\"ifname\":"
			  "\"mroce0\",\"port\":1,\"sent_pkts\":5,"),
		  std::string::npos)
		<< l1;
	EXPECT_EQ(l1.find("rxe0"), std::string::npos) << "only mroce devices";
	EXPECT_NE(l1.find("\"bpf\":true,\"connections\":[{\"ifname\":\"mroce0\""), std::string::npos);
	EXPECT_TRUE(std::regex_search(l1, std::regex("\"rates\":\\{\"tx_pkts\":(4000|399[0-9.]+),")))
		<< l1;
	EXPECT_NE(l1.find("\"text\":\"mroce0 conn 9 path 0 gen 0 sport 49152: ACTIVE -> FAILED\""),
		  std::string::npos)
		<< l1;
	EXPECT_NE(l2.find("\"events\":[]"), std::string::npos) << l2;
	EXPECT_NE(l2.find("\"rates\":{\"tx_pkts\":0,"), std::string::npos) << l2;

	/* counters only: rates from sysfs between two reads */
	world.on_sleep = [&] { fs.set_counter("mroce0", "sent_pkts", sent += 100); };
	ASSERT_EQ(run({"telemetry", "stream", "mroce0", "--no-bpf", "-i", "2", "-n", "1"}), 0)
		<< err.str();
	EXPECT_NE(out.str().find("\"sent_pkts\":105,\"rcvd_pkts\":7,\"drop_nomem\":0,\"interval\":2,"
				 "\"rates\":{\"sent_pkts\":50,\"rcvd_pkts\":0,"),
		  std::string::npos)
		<< out.str();
	EXPECT_NE(out.str().find("\"bpf\":false,\"bpf_error\":\"--no-bpf\"}\n"), std::string::npos);

	world.fail_open = true;
	world.on_sleep = nullptr;
	ASSERT_EQ(run({"telemetry", "stream", "-n", "1"}), 0);
	EXPECT_NE(err.str().find("warning: streaming counters only"), std::string::npos);
	EXPECT_NE(out.str().find("\"bpf\":false,\"bpf_error\":\"cannot load the BPF programs"),
		  std::string::npos);

	EXPECT_EQ(run({"-p", "telemetry", "stream"}), 2);
	EXPECT_EQ(run({"telemetry", "stream", "--listen", ":1"}), 2);
	EXPECT_EQ(run({"telemetry", "stream", "nope"}), 1);
	EXPECT_EQ(run({"telemetry", "stream", "mroce0", "extra"}), 2);
}

TEST_F(Cli, ManPage__DocumentsEveryCommandAndOptionTheHelpShows)
{
	std::ifstream in(std::string(MROCE_SRC_TOP) + "/userspace/cli/mroce.8");
	std::string man((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	ASSERT_FALSE(man.empty());
	/* roff escapes dashes: "\-\-textfile" */
	std::string plain = std::regex_replace(man, std::regex(R"(\\-)"), "-");
	for (const char *obj : {"dev", "stats", "path", "telemetry"}) {
		ASSERT_EQ(run({obj, "help"}), 0);
		std::string h = out.str();
		std::smatch m;
		std::regex cmd(R"((?:Usage:|\n) +mroce (\w+) (\w+))");
		for (auto it = h.cbegin(); std::regex_search(it, h.cend(), m, cmd); it = m[0].second) {
			if (m[2] != "help") {
				EXPECT_NE(plain.find(".SS mroce " + m[1].str() + " " + m[2].str()),
					  std::string::npos)
					<< m[0];
			}
		}
		std::regex opt(R"((--[a-z][a-z-]+|-[a-z])\b)");
		for (auto it = h.cbegin(); std::regex_search(it, h.cend(), m, opt); it = m[0].second)
			EXPECT_NE(plain.find(m[1].str()), std::string::npos) << obj << ": " << m[1];
	}
}

TEST_F(Cli, Binary__ExitCodesAndJsonFromTheRealExecutable)
{
	auto sh = [&](const std::string &args, std::string &output) {
		std::string cmd = "MROCE_SYSFS=" + fs.root() + " " + MROCE_CLI_BIN + " " + args + " 2>&1";
		FILE *p = popen(cmd.c_str(), "r");
		output.clear();
		char buf[512];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
			output.append(buf, n);
		int st = pclose(p);
		return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	};
	std::string o;
	EXPECT_EQ(sh("-j stats show mroce0", o), 0) << o;
	EXPECT_EQ(o, "[{\"ifname\":\"mroce0\",\"port\":1,\"sent_pkts\":5,\"rcvd_pkts\":7,\"drop_nomem\":0}]\n");
	EXPECT_EQ(sh("bogus", o), 2) << o;
	EXPECT_EQ(sh("dev show nodev", o), 1) << o;
	EXPECT_EQ(sh("--no-bpf telemetry", o), 0) << o;
	EXPECT_NE(o.find("mroce_port_rcvd_pkts_total{device=\"mroce0\",port=\"1\"} 7"), std::string::npos);
}
