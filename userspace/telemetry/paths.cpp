// SPDX-License-Identifier: GPL-2.0
#include "paths.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <tuple>

namespace mroce {

namespace {

std::string enum_name(uint32_t v, std::initializer_list<const char *> names)
{
	if (v < names.size())
		return *(names.begin() + v);
	return "?" + std::to_string(v);
}

double per_sec(uint64_t a, uint64_t b, double s)
{
	/* A counter that went backwards belongs to a new connection: no rate. */
	return b >= a && s > 0 ? static_cast<double>(b - a) / s : 0;
}

} // namespace

std::string path_state_name(uint32_t s)
{
	return enum_name(s, {"ACTIVE", "SUSPECT", "PROBING", "FAILED"});
}

std::string conn_state_name(uint32_t s)
{
	return enum_name(s, {"CLOSED", "REQ_SENT", "ESTABLISHED", "FAILED"});
}

std::string retx_reason_name(uint32_t r)
{
	return enum_name(r, {"sack", "rto", "pto", "nak", "rekey", "time"});
}

std::string cc_event_name(uint32_t e)
{
	return enum_name(e, {"ack", "ecn", "loss", "rto", "hint"});
}

std::string health_event_name(uint32_t e)
{
	return enum_name(e, {"progress", "rto", "bad", "drained", "holdoff_end", "stale"});
}

std::string peer_address(uint64_t hi, uint64_t lo)
{
	unsigned char b[16];
	char buf[INET6_ADDRSTRLEN];

	for (int i = 0; i < 8; i++) {
		b[i] = static_cast<unsigned char>(hi >> (56 - 8 * i));
		b[8 + i] = static_cast<unsigned char>(lo >> (56 - 8 * i));
	}
	/* v4-mapped: show the IPv4 address as users configured it */
	static const unsigned char v4map[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (!memcmp(b, v4map, 12))
		return inet_ntop(AF_INET, b + 12, buf, sizeof(buf)) ? buf : "";
	return inet_ntop(AF_INET6, b, buf, sizeof(buf)) ? buf : "";
}

uint64_t PathRow::last_ns() const
{
	return std::max({val.sample_ns, val.stats_ns, val.state_ns});
}

uint64_t PathRow::retx_lost() const
{
	uint64_t n = 0;

	for (auto x : val.retx_lost)
		n += x;
	return n;
}

double PathRow::utilisation() const
{
	if (!has_sample() || !val.pwnd)
		return -1;
	return static_cast<double>(val.inflight) / val.pwnd;
}

std::string ConnRow::peer() const
{
	return has_state() ? peer_address(val.peer_hi, val.peer_lo) : "";
}

const ConnRow *Snapshot::conn(uint32_t dev, uint32_t c) const
{
	for (const auto &r : conns)
		if (r.key.dev == dev && r.key.conn == c)
			return &r;
	return nullptr;
}

const PathRow *Snapshot::path(const mroce_path_key &k) const
{
	for (const auto &r : paths)
		if (r.key.dev == k.dev && r.key.conn == k.conn && r.key.path == k.path)
			return &r;
	return nullptr;
}

void Snapshot::sort()
{
	std::sort(paths.begin(), paths.end(), [](const PathRow &a, const PathRow &b) {
		return std::tie(a.key.dev, a.key.conn, a.key.path) <
		       std::tie(b.key.dev, b.key.conn, b.key.path);
	});
	std::sort(conns.begin(), conns.end(), [](const ConnRow &a, const ConnRow &b) {
		return std::tie(a.key.dev, a.key.conn) < std::tie(b.key.dev, b.key.conn);
	});
}

void Snapshot::name_devices(const std::map<uint32_t, std::string> &names)
{
	auto name = [&](uint32_t i) {
		auto it = names.find(i);
		return it != names.end() ? it->second : "dev" + std::to_string(i);
	};
	for (auto &p : paths)
		p.device = name(p.key.dev);
	for (auto &c : conns)
		c.device = name(c.key.dev);
}

void Snapshot::filter(const std::string &dev, int64_t c)
{
	auto drop = [&](const std::string &d, uint32_t conn) {
		return (!dev.empty() && d != dev) || (c >= 0 && conn != static_cast<uint64_t>(c));
	};
	paths.erase(std::remove_if(paths.begin(), paths.end(),
				   [&](const PathRow &p) { return drop(p.device, p.key.conn); }),
		    paths.end());
	conns.erase(std::remove_if(conns.begin(), conns.end(),
				   [&](const ConnRow &r) { return drop(r.device, r.key.conn); }),
		    conns.end());
}

PathRates path_rates(const PathRow &a, const PathRow &b, double s)
{
	PathRates r;

	r.seconds = s;
	r.tx_pps = per_sec(a.val.tx_pkts, b.val.tx_pkts, s);
	r.tx_bps = 8 * per_sec(a.val.tx_bytes, b.val.tx_bytes, s);
	r.acked_pps = per_sec(a.val.acked_pkts, b.val.acked_pkts, s);
	r.rx_pps = per_sec(a.val.rx_pkts, b.val.rx_pkts, s);
	r.retx_pps = per_sec(a.val.retx_out, b.val.retx_out, s);
	r.lost_pps = per_sec(a.val.lost, b.val.lost, s);
	r.ce_pps = per_sec(a.val.ce, b.val.ce, s);
	r.samples_ps = per_sec(a.val.samples, b.val.samples, s);
	if (b.val.samples > a.val.samples && b.val.srtt_sum >= a.val.srtt_sum)
		r.mean_srtt_ns = static_cast<double>(b.val.srtt_sum - a.val.srtt_sum) /
				 static_cast<double>(b.val.samples - a.val.samples);
	return r;
}

std::string describe_event(const mroce_tp_event &e, const std::string &device)
{
	std::string s = device + " conn " + std::to_string(e.conn);
	std::string path = " path " + std::to_string(e.path & 0xff) + " gen " +
			   std::to_string((e.path >> 8) & 0xff);

	switch (e.type) {
	case MROCE_EV_PATH_STATE:
		return s + path + " sport " + std::to_string(e.a) + ": " +
		       path_state_name(e.b) + " -> " + path_state_name(e.c);
	case MROCE_EV_PATH_REKEY:
		return s + path + ": re-key to gen " + std::to_string(e.a) + ", sport " +
		       std::to_string(e.b) + " -> " + std::to_string(e.c) + " (" +
		       health_event_name(e.d) + ")";
	case MROCE_EV_CONN_STATE:
		return s + " peer " + peer_address(e.peer_hi, e.peer_lo) + " peer_conn " +
		       std::to_string(e.a) + " paths " + std::to_string(e.d) + ": " +
		       conn_state_name(e.b) + " -> " + conn_state_name(e.c);
	default:
		return s + ": event type " + std::to_string(e.type);
	}
}

} // namespace mroce
