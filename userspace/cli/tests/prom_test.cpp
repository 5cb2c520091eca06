// SPDX-License-Identifier: GPL-2.0
/* Prometheus exposition, the atomic textfile and the HTTP endpoint. */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "prom.h"

using namespace mroce;

namespace {

bool has_line(const std::string &text, const std::string &line)
{
	std::istringstream s(text);
	std::string l;
	while (std::getline(s, l))
		if (l == line)
			return true;
	return false;
}

Snapshot one_path()
{
	Snapshot s;
	s.ns = 5000000000ull;
	PathRow p;
	p.key = {3, 9, 2};
	p.device = "mroce_a";
	p.val.sample_ns = 4000000000ull;
	p.val.srtt = 85000;
	p.val.min_rtt = 40000;
	p.val.rttvar = 1000;
	p.val.pwnd = 65536;
	p.val.inflight = 16384;
	p.val.ce = 4;
	p.val.lost = 1;
	p.val.samples = 10;
	p.val.stats_ns = 4000000000ull;
	p.val.tx_pkts = 1000;
	p.val.tx_bytes = 4096000;
	p.val.retx_lost[0] = 2;
	p.val.gen = 1;
	p.val.sport = 49153;
	s.paths.push_back(p);
	ConnRow c;
	c.key = {3, 9};
	c.device = "mroce_a";
	c.val.state_ns = 1;
	c.val.state = 2;
	c.val.peer_lo = 0x0000ffff0a000002ull;
	c.val.cc_ns = 1;
	c.val.pacing_rate = 950;
	s.conns.push_back(c);
	return s;
}

} // namespace

TEST(Prom, Writer__HelpAndTypeOncePerFamilyLabelsEscaped)
{
	PromWriter w;
	/* HELP keeps a double quote as is; a label value escapes it. */
	w.add("m_total", "counter", "a \\ \"help\"\nline", {{"l", "a\"b\\c\nd"}}, uint64_t{1});
	w.add("g", "gauge", "g", {}, 0.5);
	w.add("m_total", "counter", "ignored", {{"l", "x"}}, uint64_t{18446744073709551615ull});
	EXPECT_EQ(w.text(), "# HELP m_total a \\\\ \"help\"\\nline\n"
			    "# TYPE m_total counter\n"
			    "m_total{l=\"a\\\"b\\\\c\\nd\"} 1\n"
			    "m_total{l=\"x\"} 18446744073709551615\n"
			    "# HELP g g\n"
			    "# TYPE g gauge\n"
			    "g 0.5\n");
}

TEST(Prom, Export__CountersPathsAndConnectionsInBaseUnits)
{
	Snapshot s = one_path();
	ExportInput in;
	DeviceInfo d;
	d.name = "mroce_a";
	d.netdev = "va";
	d.state = "ACTIVE";
	d.active_mtu = 1024;
	in.devices.push_back(d);
	in.counters["mroce_a"] = {{"sent_pkts", 1234}, {"sent_bytes", 99}};
	in.paths = &s;
	in.now_ns = s.ns;
	std::string t = prometheus_text(in);
	EXPECT_TRUE(has_line(t, "mroce_port_sent_pkts_total{device=\"mroce_a\",port=\"1\"} 1234")) << t;
	EXPECT_TRUE(has_line(t, "# TYPE mroce_port_sent_bytes_total counter"));
	EXPECT_TRUE(has_line(t, "mroce_port_up{device=\"mroce_a\",port=\"1\"} 1"));
	EXPECT_TRUE(has_line(t, "mroce_port_active_mtu_bytes{device=\"mroce_a\",port=\"1\"} 1024"));
	const std::string l = "{device=\"mroce_a\",conn=\"9\",path=\"2\"}";
	EXPECT_TRUE(has_line(t, "mroce_path_srtt_seconds" + l + " 8.5e-05")) << t;
	EXPECT_TRUE(has_line(t, "mroce_path_min_rtt_seconds" + l + " 4e-05"));
	EXPECT_TRUE(has_line(t, "mroce_path_window_bytes" + l + " 65536"));
	EXPECT_TRUE(has_line(t, "mroce_path_utilisation_ratio" + l + " 0.25"));
	EXPECT_TRUE(has_line(t, "mroce_path_ecn_marks_total" + l + " 4"));
	EXPECT_TRUE(has_line(t, "mroce_path_sent_packets_total" + l + " 1000"));
	EXPECT_TRUE(has_line(t, "mroce_path_sent_bytes_total" + l + " 4096000"));
	EXPECT_TRUE(has_line(t, "mroce_path_source_port" + l + " 49153"));
	EXPECT_TRUE(has_line(t, "mroce_path_update_age_seconds" + l + " 1"));
	EXPECT_TRUE(has_line(t, "mroce_path_lost_retransmits_total{device=\"mroce_a\",conn=\"9\",path=\"2\",reason=\"sack\"} 2"));
	EXPECT_TRUE(has_line(t, "mroce_conn_info{device=\"mroce_a\",conn=\"9\",peer=\"10.0.0.2\",peer_conn=\"0\"} 1"));
	EXPECT_TRUE(has_line(t, "mroce_conn_pacing_rate_bits_per_second{device=\"mroce_a\",conn=\"9\"} 950000000"));
	EXPECT_TRUE(has_line(t, "mroce_exporter_bpf_up 1"));
	/* every sample line belongs to a family announced before it */
	std::istringstream ss(t);
	std::string line, family;
	while (std::getline(ss, line)) {
		if (line.rfind("# TYPE ", 0) == 0) {
			family = line.substr(7, line.find(' ', 7) - 7);
			continue;
		}
		if (line[0] == '#')
			continue;
		EXPECT_EQ(line.compare(0, family.size(), family), 0) << line;
		if (line.find("_total") != std::string::npos) {
			EXPECT_NE(family.find("_total"), std::string::npos);
		}
	}
}

TEST(Prom, Export__WithoutBpfSaysWhyAndKeepsCounters)
{
	ExportInput in;
	DeviceInfo d;
	d.name = "m";
	in.devices.push_back(d);
	in.counters["m"] = {{"rcvd_pkts", 5}};
	in.bpf_error = "not root";
	std::string t = prometheus_text(in);
	EXPECT_EQ(t.rfind("# per-path metrics unavailable: not root\n", 0), 0u) << t;
	EXPECT_TRUE(has_line(t, "mroce_exporter_bpf_up 0"));
	EXPECT_TRUE(has_line(t, "mroce_port_rcvd_pkts_total{device=\"m\",port=\"1\"} 5"));
	EXPECT_EQ(t.find("mroce_path_"), std::string::npos);
}

TEST(Prom, Textfile__AtomicReplaceReadableNoTempLeft)
{
	char tmpl[] = "/tmp/mroce-prom-XXXXXX";
	std::string dir = mkdtemp(tmpl);
	std::string f = dir + "/mroce.prom";
	std::string err;
	mode_t old = umask(077);
	ASSERT_TRUE(write_file_atomic(f, "a 1\n", err)) << err;
	ASSERT_TRUE(write_file_atomic(f, "a 2\n", err)) << err;
	umask(old);
	std::ifstream in(f);
	std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	EXPECT_EQ(content, "a 2\n");
	struct stat st;
	ASSERT_EQ(stat(f.c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0644u) << "node_exporter must be able to read it";
	size_t n = 0;
	for (auto &e : std::filesystem::directory_iterator(dir))
		n += e.path().filename() != "mroce.prom";
	EXPECT_EQ(n, 0u);
	EXPECT_FALSE(write_file_atomic(dir + "/missing/x.prom", "", err));
	EXPECT_NE(err.find("cannot create"), std::string::npos);
	std::filesystem::remove_all(dir);
}

TEST(Prom, ListenAddr__Forms)
{
	ListenAddr a;
	std::string err;
	ASSERT_TRUE(parse_listen_addr("127.0.0.1:9100", a, err));
	EXPECT_EQ(a.host, "127.0.0.1");
	EXPECT_EQ(a.port, "9100");
	ASSERT_TRUE(parse_listen_addr(":9100", a, err));
	EXPECT_EQ(a.host, "");
	ASSERT_TRUE(parse_listen_addr("[::1]:80", a, err));
	EXPECT_EQ(a.host, "::1");
	EXPECT_EQ(a.port, "80");
	EXPECT_FALSE(parse_listen_addr("9100", a, err));
	EXPECT_FALSE(parse_listen_addr("::1:80", a, err));
	EXPECT_FALSE(parse_listen_addr("h:70000", a, err));
	EXPECT_FALSE(parse_listen_addr("h:", a, err));
	EXPECT_FALSE(parse_listen_addr("[::1]80", a, err));
}

TEST(Prom, Respond__MetricsPageAndErrors)
{
	auto body = [] { return std::string("x 1\n"); };
	std::string r = HttpServer::respond("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", body);
	EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
	EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
	EXPECT_NE(r.find("Content-Length: 4\r\n"), std::string::npos);
	EXPECT_EQ(r.substr(r.size() - 4), "x 1\n");
	EXPECT_EQ(HttpServer::respond("GET /nope HTTP/1.1\r\n\r\n", body).rfind("HTTP/1.1 404", 0), 0u);
	EXPECT_EQ(HttpServer::respond("POST /metrics HTTP/1.1\r\n\r\n", body).rfind("HTTP/1.1 405", 0), 0u);
	EXPECT_EQ(HttpServer::respond("garbage", body).rfind("HTTP/1.1 400", 0), 0u);
	std::string head = HttpServer::respond("HEAD /metrics HTTP/1.1\r\n\r\n", body);
	EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n") << "HEAD has no body";
}

TEST(Prom, Server__AnswersAScrapeOnLoopback)
{
	HttpServer srv;
	ListenAddr a{"127.0.0.1", "0"};
	std::string err;
	ASSERT_TRUE(srv.listen(a, err)) << err;
	int port = srv.port();
	ASSERT_GT(port, 0);
	std::string got;
	std::thread client([&] {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in sa = {};
		sa.sin_family = AF_INET;
		sa.sin_port = htons(static_cast<uint16_t>(port));
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(fd, reinterpret_cast<struct sockaddr *>(&sa), sizeof(sa)) == 0) {
			const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
			(void)!write(fd, req, sizeof(req) - 1);
			char buf[4096];
			ssize_t n;
			while ((n = read(fd, buf, sizeof(buf))) > 0)
				got.append(buf, static_cast<size_t>(n));
		}
		close(fd);
	});
	bool served = srv.serve_one(5000, [] { return std::string("mroce_exporter_bpf_up 0\n"); });
	client.join();
	EXPECT_TRUE(served);
	EXPECT_NE(got.find("\r\n\r\nmroce_exporter_bpf_up 0\n"), std::string::npos) << got;
	EXPECT_FALSE(srv.serve_one(10, [] { return std::string(); })) << "no client, no request";
}
