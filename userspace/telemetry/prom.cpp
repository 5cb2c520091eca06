// SPDX-License-Identifier: GPL-2.0
#include "prom.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"

namespace mroce {

/*
 * The exposition format escapes backslash and newline in HELP text, and
 * the double quote as well in label values (which it quotes).
 */
std::string PromWriter::escape(const std::string &v, bool label)
{
	std::string r;
	for (char c : v) {
		if (c == '\\')
			r += "\\\\";
		else if (c == '\n')
			r += "\\n";
		else if (c == '"' && label)
			r += "\\\"";
		else
			r += c;
	}
	return r;
}

void PromWriter::add_sample(const std::string &name, const char *type, const std::string &help,
			    const Labels &labels, const std::string &value)
{
	auto it = fam_.find(name);
	if (it == fam_.end()) {
		order_.push_back(name);
		it = fam_.emplace(name, Family{type, help, {}}).first;
	}
	std::string s = name;
	if (!labels.empty()) {
		s += '{';
		for (size_t i = 0; i < labels.size(); i++) {
			if (i)
				s += ',';
			s += labels[i].first + "=\"" + escape(labels[i].second, true) + '"';
		}
		s += '}';
	}
	s += ' ' + value;
	it->second.samples.push_back(std::move(s));
}

void PromWriter::add(const std::string &name, const char *type, const std::string &help,
		     const Labels &labels, double value)
{
	char buf[40];
	if (std::isnan(value))
		snprintf(buf, sizeof(buf), "NaN");
	else if (std::isinf(value))
		snprintf(buf, sizeof(buf), value > 0 ? "+Inf" : "-Inf");
	else
		snprintf(buf, sizeof(buf), "%.9g", value);
	add_sample(name, type, help, labels, buf);
}

std::string PromWriter::text() const
{
	std::string out;
	for (const auto &n : order_) {
		const Family &f = fam_.at(n);
		out += "# HELP " + n + ' ' + escape(f.help, false) + '\n';
		out += "# TYPE " + n + ' ' + f.type + '\n';
		for (const auto &s : f.samples)
			out += s + '\n';
	}
	return out;
}

namespace {

void export_devices(PromWriter &w, const ExportInput &in)
{
	for (const auto &d : in.devices) {
		Labels dl = {{"device", d.name}, {"port", std::to_string(d.port)}};
		w.add("mroce_device_info", "gauge",
		      "mroce device and the net device it runs over (always 1)",
		      {{"device", d.name}, {"netdev", d.netdev}, {"node_guid", d.node_guid}},
		      uint64_t{1});
		w.add("mroce_port_up", "gauge", "1 if the port is ACTIVE, else 0", dl,
		      uint64_t{d.state == "ACTIVE"});
		if (d.active_mtu)
			w.add("mroce_port_active_mtu_bytes", "gauge",
			      "active MTU of the port (RDMA payload per packet)", dl,
			      uint64_t{d.active_mtu});
		auto it = in.counters.find(d.name);
		if (it == in.counters.end())
			continue;
		for (const auto &[name, value] : it->second) {
			const CounterInfo *ci = counter_info(name);
			std::string help = ci ? std::string(ci->meaning) : "hw counter " + name;
			w.add("mroce_port_" + name + "_total", "counter", help, dl, value);
		}
	}
}

void export_paths(PromWriter &w, const Snapshot &s, uint64_t now)
{
	for (const auto &p : s.paths) {
		Labels l = {{"device", p.device},
			    {"conn", std::to_string(p.key.conn)},
			    {"path", std::to_string(p.key.path)}};
		const auto &v = p.val;
		if (p.has_sample()) {
			w.add("mroce_path_srtt_seconds", "gauge", "smoothed round-trip time of the path", l,
			      v.srtt / 1e9);
			w.add("mroce_path_rttvar_seconds", "gauge", "round-trip time variation", l,
			      v.rttvar / 1e9);
			w.add("mroce_path_min_rtt_seconds", "gauge", "least round-trip time seen on the path",
			      l, v.min_rtt / 1e9);
			w.add("mroce_path_window_bytes", "gauge", "the path's congestion window", l,
			      uint64_t{v.pwnd});
			w.add("mroce_path_inflight_bytes", "gauge", "bytes sent on the path and not yet acknowledged",
			      l, uint64_t{v.inflight});
			if (p.utilisation() >= 0)
				w.add("mroce_path_utilisation_ratio", "gauge",
				      "inflight bytes over the path window", l, p.utilisation());
			w.add("mroce_path_ecn_marks_total", "counter",
			      "CE-marked packets the receiver reported on the path", l, v.ce);
			w.add("mroce_path_lost_packets_total", "counter",
			      "packets declared lost on the path", l, v.lost);
			w.add("mroce_path_samples_total", "counter",
			      "path samples (ACKs updating the path) seen by the exporter", l, v.samples);
		}
		w.add("mroce_path_state", "gauge",
		      "path health: 0 ACTIVE, 1 SUSPECT, 2 PROBING, 3 FAILED", l, uint64_t{v.state});
		w.add("mroce_path_generation", "gauge", "the path's generation (bumped by each re-key)", l,
		      uint64_t{v.gen});
		w.add("mroce_path_source_port", "gauge", "UDP source port of the path's generation", l,
		      uint64_t{v.sport});
		if (p.has_stats()) {
			w.add("mroce_path_sent_packets_total", "counter", "packets sent on the path", l, v.tx_pkts);
			w.add("mroce_path_sent_bytes_total", "counter", "bytes sent on the path", l, v.tx_bytes);
			w.add("mroce_path_acked_packets_total", "counter", "packets acknowledged on the path", l,
			      v.acked_pkts);
			w.add("mroce_path_received_packets_total", "counter",
			      "packets received on the peer's path with this id", l, v.rx_pkts);
			w.add("mroce_path_naks_total", "counter", "NAKs concerning the path", l, v.naks);
			w.add("mroce_path_probe_timeouts_total", "counter", "probe (tail-loss) timeouts", l,
			      v.ptos);
			w.add("mroce_path_retransmission_timeouts_total", "counter", "retransmission timeouts",
			      l, v.rtos);
			w.add("mroce_path_rekeys_total", "counter", "re-keys to a new source port", l, v.rekeys);
		}
		w.add("mroce_path_retransmitted_packets_total", "counter",
		      "retransmissions sent on the path while the exporter ran", l, v.retx_out);
		for (uint32_t r = 0; r < MROCE_TP_RETX_REASONS; r++) {
			Labels lr = l;
			lr.emplace_back("reason", retx_reason_name(r));
			w.add("mroce_path_lost_retransmits_total", "counter",
			      "chunks lost on the path and resent elsewhere, by how the loss was found "
			      "(while the exporter ran)",
			      lr, v.retx_lost[r]);
		}
		uint64_t last = p.last_ns();
		if (last && now >= last)
			w.add("mroce_path_update_age_seconds", "gauge",
			      "time since the path's last update", l, (now - last) / 1e9);
	}
	for (const auto &c : s.conns) {
		Labels l = {{"device", c.device}, {"conn", std::to_string(c.key.conn)}};
		const auto &v = c.val;
		if (c.has_state()) {
			Labels li = l;
			li.emplace_back("peer", c.peer());
			li.emplace_back("peer_conn", std::to_string(v.peer_conn));
			w.add("mroce_conn_info", "gauge", "a connection's peer (always 1)", li, uint64_t{1});
			w.add("mroce_conn_state", "gauge",
			      "connection state: 0 CLOSED, 1 REQ_SENT, 2 ESTABLISHED, 3 FAILED", l,
			      uint64_t{v.state});
			w.add("mroce_conn_paths", "gauge", "paths negotiated", l, uint64_t{v.n_paths});
		}
		if (c.has_cc()) {
			w.add("mroce_conn_cwnd_bytes", "gauge", "connection congestion window", l,
			      uint64_t{v.cwnd});
			w.add("mroce_conn_ssthresh_bytes", "gauge", "slow-start threshold", l,
			      uint64_t{v.ssthresh});
			w.add("mroce_conn_inflight_bytes", "gauge", "bytes in flight on the connection", l,
			      uint64_t{v.inflight});
			w.add("mroce_conn_pacing_rate_bits_per_second", "gauge", "pacing rate", l,
			      v.pacing_rate * 1e6);
			w.add("mroce_conn_rate_hint_bits_per_second", "gauge",
			      "the receiver's fair-share rate hint", l, v.rate_hint * 1e6);
			w.add("mroce_conn_ecn_alpha_ratio", "gauge", "ECN-marked fraction estimate (alpha)",
			      l, v.alpha / 1024.0);
			for (uint32_t e = 0; e < MROCE_TP_CC_EVENTS; e++) {
				Labels le = l;
				le.emplace_back("event", cc_event_name(e));
				w.add("mroce_conn_cc_events_total", "counter",
				      "congestion-control updates by cause (while the exporter ran)", le,
				      v.cc_events[e]);
			}
		}
		w.add("mroce_conn_naks_sent_total", "counter", "NAKs sent (while the exporter ran)", l,
		      v.naks_sent);
		w.add("mroce_conn_naks_received_total", "counter",
		      "NAKs received (while the exporter ran)", l, v.naks_rcvd);
	}
}

} // namespace

std::string prometheus_text(const ExportInput &in)
{
	PromWriter w;

	/* an exporter outlives module reloads; say why every device vanished */
	w.add("mroce_module_loaded", "gauge", "1 if the mroce kernel module is loaded", {},
	      uint64_t{in.module_loaded});
	export_devices(w, in);
	w.add("mroce_exporter_bpf_up", "gauge",
	      "1 if per-path telemetry (BPF on the mroce tracepoints) is attached", {},
	      uint64_t{in.paths != nullptr});
	if (in.paths) {
		export_paths(w, *in.paths, in.now_ns);
		w.add("mroce_exporter_events_lost_total", "counter",
		      "state events the ring buffer had no room for", {}, in.paths->events_lost);
	}
	std::string t = w.text();
	if (!in.paths && !in.bpf_error.empty())
		t = "# per-path metrics unavailable: " + PromWriter::escape(in.bpf_error, false) + '\n' + t;
	return t;
}

bool write_file_atomic(const std::string &path, const std::string &content, std::string &err)
{
	std::string tmp = path + ".tmp." + std::to_string(getpid());
	int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = "cannot create " + tmp + ": " + strerror(errno);
		return false;
	}
	const char *p = content.data();
	size_t left = content.size();
	while (left) {
		ssize_t n = ::write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = "cannot write " + tmp + ": " + strerror(errno);
			::close(fd);
			unlink(tmp.c_str());
			return false;
		}
		p += n;
		left -= static_cast<size_t>(n);
	}
	/* fchmod: the umask must not hide the file from node_exporter */
	if (fchmod(fd, 0644) || fsync(fd) || ::close(fd)) {
		err = "cannot write " + tmp + ": " + strerror(errno);
		unlink(tmp.c_str());
		return false;
	}
	if (rename(tmp.c_str(), path.c_str())) {
		err = "cannot rename " + tmp + " to " + path + ": " + strerror(errno);
		unlink(tmp.c_str());
		return false;
	}
	return true;
}

bool parse_listen_addr(const std::string &s, ListenAddr &a, std::string &err)
{
	size_t colon;

	a = ListenAddr();
	if (!s.empty() && s[0] == '[') {
		size_t close = s.find(']');
		if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') {
			err = "bad address '" + s + "': want [IPV6]:PORT";
			return false;
		}
		a.host = s.substr(1, close - 1);
		colon = close + 1;
	} else {
		colon = s.rfind(':');
		if (colon == std::string::npos) {
			err = "bad address '" + s + "': want HOST:PORT or :PORT";
			return false;
		}
		a.host = s.substr(0, colon);
		if (a.host.find(':') != std::string::npos) {
			err = "bad address '" + s + "': write IPv6 addresses as [ADDR]:PORT";
			return false;
		}
	}
	a.port = s.substr(colon + 1);
	char *end;
	unsigned long p = strtoul(a.port.c_str(), &end, 10);
	if (a.port.empty() || *end || p > 65535) {
		err = "bad port '" + a.port + "' in '" + s + "'";
		return false;
	}
	return true;
}

HttpServer::~HttpServer()
{
	if (fd_ >= 0)
		::close(fd_);
}

bool HttpServer::listen(const ListenAddr &a, std::string &err)
{
	struct addrinfo hints = {}, *res = nullptr;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	int rc = getaddrinfo(a.host.empty() ? nullptr : a.host.c_str(), a.port.c_str(), &hints, &res);
	if (rc) {
		err = "cannot resolve '" + a.host + "': " + gai_strerror(rc);
		return false;
	}
	/* Prefer IPv6 for "every address": one dual-stack socket serves both. */
	err.clear();
	for (int pass = 0; pass < 2 && fd_ < 0; pass++) {
		for (auto *ai = res; ai && fd_ < 0; ai = ai->ai_next) {
			if ((pass == 0) != (ai->ai_family == AF_INET6))
				continue;
			int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
			if (fd < 0)
				continue;
			int one = 1, zero = 0;
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (ai->ai_family == AF_INET6 && a.host.empty())
				setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
			if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
				fd_ = fd;
				break;
			}
			err = std::string("cannot listen on ") + (a.host.empty() ? "*" : a.host) + ":" +
			      a.port + ": " + strerror(errno);
			::close(fd);
		}
	}
	freeaddrinfo(res);
	if (fd_ < 0 && err.empty())
		err = "cannot listen on " + a.host + ":" + a.port;
	return fd_ >= 0;
}

int HttpServer::port() const
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (fd_ < 0 || getsockname(fd_, reinterpret_cast<struct sockaddr *>(&ss), &len))
		return -1;
	if (ss.ss_family == AF_INET6)
		return ntohs(reinterpret_cast<struct sockaddr_in6 *>(&ss)->sin6_port);
	return ntohs(reinterpret_cast<struct sockaddr_in *>(&ss)->sin_port);
}

std::string HttpServer::respond(const std::string &req, const std::function<std::string()> &body)
{
	auto reply = [](const char *status, const char *type, const std::string &b) {
		return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + type +
		       "\r\nContent-Length: " + std::to_string(b.size()) +
		       "\r\nConnection: close\r\n\r\n" + b;
	};
	size_t eol = req.find("\r\n");
	std::string line = req.substr(0, eol);
	size_t sp1 = line.find(' ');
	size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
	if (sp1 == std::string::npos || sp2 == std::string::npos)
		return reply("400 Bad Request", "text/plain", "bad request\n");
	std::string method = line.substr(0, sp1);
	std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
	std::string path = target.substr(0, target.find('?'));
	if (method != "GET" && method != "HEAD")
		return reply("405 Method Not Allowed", "text/plain", "only GET\n");
	std::string r;
	if (path == "/metrics")
		r = reply("200 OK", "text/plain; version=0.0.4; charset=utf-8", body());
	else if (path == "/")
		r = reply("200 OK", "text/html",
			  "<html><head><title>mroce exporter</title></head><body>"
			  "<a href=\"/metrics\">/metrics</a></body></html>\n");
	else
		r = reply("404 Not Found", "text/plain", "not found\n");
	if (method == "HEAD")
		r.erase(r.find("\r\n\r\n") + 4);
	return r;
}

bool HttpServer::serve_one(int timeout_ms, const std::function<std::string()> &body)
{
	struct pollfd p = {fd_, POLLIN, 0};
	if (fd_ < 0 || poll(&p, 1, timeout_ms) <= 0)
		return false;
	int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
	if (c < 0)
		return false;
	/* A slow or silent client must not stall the exporter for long. */
	struct timeval tv = {2, 0};
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	std::string req;
	char buf[2048];
	while (req.find("\r\n\r\n") == std::string::npos && req.size() < 16384) {
		ssize_t n = recv(c, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		req.append(buf, static_cast<size_t>(n));
	}
	std::string resp = respond(req, body);
	const char *q = resp.data();
	size_t left = resp.size();
	while (left) {
		ssize_t n = send(c, q, left, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		q += n;
		left -= static_cast<size_t>(n);
	}
	::close(c);
	return true;
}

} // namespace mroce
