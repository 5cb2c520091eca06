// SPDX-License-Identifier: GPL-2.0
/*
 * mroce path show|watch: per-connection, per-path telemetry. The BPF
 * programs collect only while attached, so `show` samples for a moment
 * (-t) and `watch` keeps them attached and prints deltas.
 */
#include <algorithm>
#include <tuple>

#include "cli.h"
#include "format.h"
#include "json.h"

namespace mroce {

namespace {

class BpfPathSource : public PathSource {
public:
	bool open(std::string &err) override { return t_.open(err); }
	bool read(Snapshot &s, std::string &err) override { return t_.read(s, err); }
	void poll_events(int timeout_ms,
			 const std::function<void(const mroce_tp_event &)> &cb) override
	{
		t_.poll_events(timeout_ms, cb);
	}
	void expire(uint64_t before_ns) override { t_.expire(before_ns); }
	std::vector<std::string> missing() const override { return t_.missing(); }

private:
	BpfTelemetry t_;
};

/* (device, conn) pairs in display order, from both maps. */
std::vector<std::pair<uint32_t, uint32_t>> conn_keys(const Snapshot &s)
{
	std::vector<std::pair<uint32_t, uint32_t>> k;
	for (const auto &p : s.paths)
		k.emplace_back(p.key.dev, p.key.conn);
	for (const auto &c : s.conns)
		k.emplace_back(c.key.dev, c.key.conn);
	std::sort(k.begin(), k.end());
	k.erase(std::unique(k.begin(), k.end()), k.end());
	return k;
}

std::string dev_name(const Snapshot &s, uint32_t dev)
{
	for (const auto &p : s.paths)
		if (p.key.dev == dev)
			return p.device;
	for (const auto &c : s.conns)
		if (c.key.dev == dev)
			return c.device;
	return "dev" + std::to_string(dev);
}

std::string age(uint64_t now, uint64_t then)
{
	return then && now >= then ? fmt_fixed((now - then) / 1e9, 1) + "s" : "-";
}

std::string conn_line(const ConnRow &c)
{
	std::string s = "conn " + c.device + "/" + std::to_string(c.key.conn);
	const auto &v = c.val;
	if (c.has_state())
		s += " peer " + c.peer() + " peer_conn " + std::to_string(v.peer_conn) + " " +
		     conn_state_name(v.state) + " paths " + std::to_string(v.n_paths);
	if (c.has_cc())
		s += " cwnd " + fmt_bytes(v.cwnd) + " ssthresh " + fmt_bytes(v.ssthresh) +
		     " inflight " + fmt_bytes(v.inflight) + " pacing " + fmt_bits(v.pacing_rate * 1e6) +
		     " hint " + (v.rate_hint ? fmt_bits(v.rate_hint * 1e6) : std::string("-")) +
		     " alpha " + fmt_fixed(v.alpha / 1024.0, 3);
	s += " naks sent " + std::to_string(v.naks_sent) + " rcvd " + std::to_string(v.naks_rcvd);
	return s;
}

void print_show(Context &ctx, const Snapshot &s)
{
	std::ostream &o = ctx.out;
	bool d = ctx.opt.details;
	if (d)
		for (const auto &c : s.conns)
			o << conn_line(c) << "\n";
	std::vector<Table::Column> cols = {
		{"DEV", false},	    {"CONN", true},    {"PATH", true},	 {"GEN", true},
		{"SPORT", true},    {"STATE", false},  {"SRTT", true},	 {"MIN_RTT", true},
		{"RTTVAR", true},   {"WINDOW", true},  {"INFLIGHT", true}, {"UTIL", true},
		{"TX_PKTS", true},  {"TX_BYTES", true}, {"ECN", true},	 {"LOST", true},
		{"RETX", true}};
	if (d)
		for (const char *c : {"ACKED", "RX_PKTS", "NAKS", "PTO", "RTO", "REKEYS", "RETX_OUT",
				      "SAMPLES", "AGE"})
			cols.push_back({c, std::string(c) != "AGE"});
	Table t(cols);
	for (const auto &p : s.paths) {
		const auto &v = p.val;
		bool smp = p.has_sample(), st = p.has_stats();
		auto n = [](uint64_t x) { return std::to_string(x); };
		std::vector<std::string> row = {
			p.device,
			n(p.key.conn),
			n(p.key.path),
			n(v.gen),
			v.sport ? n(v.sport) : "-",
			path_state_name(v.state),
			smp ? fmt_ns(v.srtt) : "-",
			smp ? fmt_ns(v.min_rtt) : "-",
			smp ? fmt_ns(v.rttvar) : "-",
			smp ? fmt_bytes(v.pwnd) : "-",
			smp ? fmt_bytes(v.inflight) : "-",
			fmt_pct(p.utilisation()),
			st ? n(v.tx_pkts) : "-",
			st ? fmt_bytes(static_cast<double>(v.tx_bytes)) : "-",
			smp ? n(v.ce) : "-",
			smp ? n(v.lost) : "-",
			n(p.retx_lost()),
		};
		if (d) {
			for (uint64_t x : {v.acked_pkts, v.rx_pkts, v.naks, v.ptos, v.rtos, v.rekeys})
				row.push_back(st ? n(x) : "-");
			row.push_back(n(v.retx_out));
			row.push_back(n(v.samples));
			row.push_back(age(s.ns, p.last_ns()));
		}
		t.add(row);
	}
	t.print(o);
}

void print_watch(Context &ctx, const Snapshot &prev, const Snapshot &cur, double secs,
		 const std::vector<DevEvent> &events)
{
	std::ostream &o = ctx.out;
	if (ctx.tty)
		o << "\033[H\033[2J";
	o << "mroce path watch: every " << fmt_fixed(ctx.opt.interval, 2) << "s, "
	  << wall_time(cur.ns) << ", " << cur.paths.size() << " paths";
	if (cur.events_lost)
		o << ", " << cur.events_lost << " events lost";
	o << "\n";
	if (ctx.opt.details)
		for (const auto &c : cur.conns)
			o << conn_line(c) << "\n";
	Table t({{"DEV", false},
		 {"CONN", true},
		 {"PATH", true},
		 {"GEN", true},
		 {"SPORT", true},
		 {"STATE", false},
		 {"SRTT", true},
		 {"MIN_RTT", true},
		 {"WINDOW", true},
		 {"INFLIGHT", true},
		 {"UTIL", true},
		 {"TX_PKT/s", true},
		 {"TX_RATE", true},
		 {"ACK/s", true},
		 {"RETX/s", true},
		 {"LOST/s", true},
		 {"ECN/s", true}});
	for (const auto &p : cur.paths) {
		const PathRow *b = prev.path(p.key);
		PathRow zero = p;
		zero.val = mroce_path_val{};
		PathRates r = path_rates(b ? *b : zero, p, secs);
		bool smp = p.has_sample();
		t.add({p.device, std::to_string(p.key.conn), std::to_string(p.key.path),
		       std::to_string(p.val.gen), p.val.sport ? std::to_string(p.val.sport) : "-",
		       path_state_name(p.val.state),
		       r.mean_srtt_ns >= 0 ? fmt_ns(r.mean_srtt_ns) : (smp ? fmt_ns(p.val.srtt) : "-"),
		       smp ? fmt_ns(p.val.min_rtt) : "-", smp ? fmt_bytes(p.val.pwnd) : "-",
		       smp ? fmt_bytes(p.val.inflight) : "-", fmt_pct(p.utilisation()),
		       fmt_rate(r.tx_pps), fmt_bits(r.tx_bps), fmt_rate(r.acked_pps),
		       fmt_rate(r.retx_pps), fmt_rate(r.lost_pps), fmt_rate(r.ce_pps)});
	}
	if (t.size())
		t.print(o);
	else
		o << "no path carried traffic yet\n";
	if (!events.empty()) {
		o << "events:\n";
		for (const auto &[e, dev] : events)
			o << "  " << wall_time(e.ns) << " " << describe_event(e, dev) << "\n";
	}
	o.flush();
}

void json_path(JsonWriter &j, const PathRow &p, uint64_t now, const PathRow *prev, double secs)
{
	const auto &v = p.val;
	bool smp = p.has_sample(), st = p.has_stats();
	auto opt = [&](const char *k, bool have, uint64_t x) {
		j.key(k);
		have ? j.value(x) : j.null();
	};
	j.begin_object();
	j.kv("path", p.key.path).kv("generation", v.gen).kv("sport", v.sport);
	j.kv("state", path_state_name(v.state));
	opt("srtt_ns", smp, v.srtt);
	opt("min_rtt_ns", smp, v.min_rtt);
	opt("rttvar_ns", smp, v.rttvar);
	opt("window_bytes", smp, v.pwnd);
	opt("inflight_bytes", smp, v.inflight);
	j.key("utilisation");
	p.utilisation() >= 0 ? j.value(p.utilisation()) : j.null();
	opt("ecn_marks", smp, v.ce);
	opt("lost_pkts", smp, v.lost);
	opt("tx_pkts", st, v.tx_pkts);
	opt("tx_bytes", st, v.tx_bytes);
	opt("acked_pkts", st, v.acked_pkts);
	opt("rx_pkts", st, v.rx_pkts);
	opt("naks", st, v.naks);
	opt("ptos", st, v.ptos);
	opt("rtos", st, v.rtos);
	opt("rekeys", st, v.rekeys);
	j.kv("samples", v.samples);
	j.kv("retransmits_sent", v.retx_out);
	j.kv("retransmits_sent_bytes", v.retx_out_bytes);
	j.key("retransmits").begin_object();
	for (uint32_t r = 0; r < MROCE_TP_RETX_REASONS; r++)
		j.kv(retx_reason_name(r), v.retx_lost[r]);
	j.end_object();
	j.kv("state_changes", v.state_changes);
	j.key("age_ns");
	p.last_ns() && now >= p.last_ns() ? j.value(now - p.last_ns()) : j.null();
	if (prev) {
		PathRates r = path_rates(*prev, p, secs);
		j.key("rates").begin_object();
		j.kv("tx_pkts", r.tx_pps).kv("tx_bits", r.tx_bps).kv("acked_pkts", r.acked_pps);
		j.kv("rx_pkts", r.rx_pps).kv("retransmits_sent", r.retx_pps).kv("lost_pkts", r.lost_pps);
		j.kv("ecn_marks", r.ce_pps).kv("samples", r.samples_ps);
		j.key("mean_srtt_ns");
		r.mean_srtt_ns >= 0 ? j.value(r.mean_srtt_ns) : j.null();
		j.end_object();
	}
	j.end_object();
}

} // namespace

void json_connections(JsonWriter &j, const Snapshot &s, const Snapshot *prev, double secs)
{
	j.begin_array();
	for (const auto &[dev, conn] : conn_keys(s)) {
		const ConnRow *c = s.conn(dev, conn);
		j.begin_object();
		j.kv("ifname", dev_name(s, dev)).kv("dev_index", dev).kv("conn", conn);
		if (c && c->has_state()) {
			j.kv("peer", c->peer()).kv("peer_conn", c->val.peer_conn);
			j.kv("state", conn_state_name(c->val.state)).kv("n_paths", c->val.n_paths);
		} else {
			j.key("peer").null().key("peer_conn").null().key("state").null();
			j.key("n_paths").null();
		}
		j.key("cc");
		if (c && c->has_cc()) {
			const auto &v = c->val;
			j.begin_object();
			j.kv("cwnd_bytes", v.cwnd).kv("ssthresh_bytes", v.ssthresh);
			j.kv("inflight_bytes", v.inflight).kv("pacing_rate_mbps", v.pacing_rate);
			j.kv("rate_hint_mbps", v.rate_hint).kv("alpha", v.alpha / 1024.0);
			j.key("events").begin_object();
			for (uint32_t e = 0; e < MROCE_TP_CC_EVENTS; e++)
				j.kv(cc_event_name(e), v.cc_events[e]);
			j.end_object();
			j.end_object();
		} else {
			j.null();
		}
		j.kv("naks_sent", c ? c->val.naks_sent : 0).kv("naks_rcvd", c ? c->val.naks_rcvd : 0);
		j.key("paths").begin_array();
		for (const auto &p : s.paths) {
			if (p.key.dev != dev || p.key.conn != conn)
				continue;
			const PathRow *b = prev ? prev->path(p.key) : nullptr;
			PathRow zero = p;
			zero.val = mroce_path_val{};
			json_path(j, p, s.ns, prev ? (b ? b : &zero) : nullptr, secs);
		}
		j.end_array();
		j.end_object();
	}
	j.end_array();
}

bool read_named(Context &ctx, PathSource &src, const PathFilter &f, Snapshot &s, std::string &err)
{
	if (!src.read(s, err))
		return false;
	s.name_devices(ctx.device_names());
	s.filter(f.dev, f.conn);
	return true;
}

void warn_missing(Context &ctx, const PathSource &src)
{
	auto m = src.missing();
	if (m.empty())
		return;
	std::string l;
	for (const auto &x : m)
		l += (l.empty() ? "" : ", ") + x;
	ctx.err << "mroce: warning: this mroce module lacks the tracepoints " << l
		<< "; their columns stay empty\n";
}

void collect_events(Context &ctx, PathSource &src, const PathFilter &f, uint64_t end,
		    std::vector<DevEvent> &events)
{
	auto names = ctx.device_names();
	for (;;) {
		uint64_t now = ctx.now_ns();
		if (now >= end || ctx.stopped())
			return;
		int ms = static_cast<int>(std::min<uint64_t>((end - now) / 1000000 + 1, 200));
		src.poll_events(ms, [&](const mroce_tp_event &e) {
			auto it = names.find(e.dev);
			std::string dn = it != names.end() ? it->second : "dev" + std::to_string(e.dev);
			if ((!f.dev.empty() && dn != f.dev) || (f.conn >= 0 && e.conn != f.conn))
				return;
			events.emplace_back(e, dn);
		});
	}
}

void json_events(JsonWriter &j, const std::vector<DevEvent> &events)
{
	j.begin_array();
	for (const auto &[e, dev] : events) {
		j.begin_object();
		j.kv("time", wall_time(e.ns)).kv("ifname", dev).kv("conn", e.conn);
		j.kv("text", describe_event(e, dev));
		j.end_object();
	}
	j.end_array();
}

std::unique_ptr<PathSource> bpf_path_source()
{
	return std::make_unique<BpfPathSource>();
}

int cmd_path(const std::vector<std::string> &args, Context &ctx)
{
	size_t i = 0;
	bool watch = false;
	PathFilter f;

	if (i < args.size() && matches(args[i], "show")) {
		i++;
	} else if (i < args.size() && matches(args[i], "watch")) {
		watch = true;
		i++;
	} else if (i < args.size() && !ctx.sysfs.exists(args[i]) && args[i] != "dev" &&
		   args[i] != "conn") {
		return usage_error(ctx, "unknown command \"path " + args[i] + "\"", "path");
	}
	while (i < args.size()) {
		const std::string &a = args[i++];
		if (a == "conn") {
			if (i >= args.size())
				return usage_error(ctx, "conn needs an ID", "path");
			char *end;
			long c = strtol(args[i].c_str(), &end, 10);
			if (args[i].empty() || *end || c < 0 || c > 0xffffffffL)
				return usage_error(ctx, "bad connection id \"" + args[i] + "\"", "path");
			f.conn = c;
			i++;
		} else if (a == "dev") {
			if (i >= args.size())
				return usage_error(ctx, "dev needs a device name", "path");
			f.dev = args[i++];
		} else if (f.dev.empty()) {
			f.dev = a;
		} else {
			return usage_error(ctx, "unexpected \"" + a + "\"", "path");
		}
	}
	std::string bad = watch ? disallowed_option(ctx, {"interval", "count"})
				: disallowed_option(ctx, {"duration"});
	if (!bad.empty())
		return usage_error(ctx, "option " + bad + " is not valid for \"path " +
					       (watch ? "watch" : "show") + "\"",
				   "path");
	if (!f.dev.empty()) {
		std::vector<std::string> names;
		int rc;
		if (!pick_devices(ctx, f.dev, names, rc))
			return rc;
	}

	auto src = ctx.path_source();
	std::string err;
	if (!src->open(err))
		return failure(ctx, err);
	warn_missing(ctx, *src);

	Snapshot cur, prev;
	if (!watch) {
		ctx.sleep(ctx.opt.duration >= 0 ? ctx.opt.duration : 1.0);
		if (!read_named(ctx, *src, f, cur, err))
			return failure(ctx, err);
		if (ctx.opt.json) {
			JsonWriter j(ctx.out, ctx.opt.pretty);
			json_connections(j, cur, nullptr, 0);
			j.finish();
		} else if (cur.paths.empty() && cur.conns.empty()) {
			ctx.out << "no mroce path carried traffic in the last "
				<< fmt_fixed(ctx.opt.duration >= 0 ? ctx.opt.duration : 1.0, 1)
				<< "s (-t sets how long to sample)\n";
		} else {
			print_show(ctx, cur);
		}
		return EXIT_OK;
	}

	if (ctx.opt.interval < 0)
		ctx.opt.interval = 1.0;
	if (!read_named(ctx, *src, f, prev, err))
		return failure(ctx, err);
	for (long n = 0; ctx.opt.count < 0 || n < ctx.opt.count; n++) {
		std::vector<DevEvent> events;
		collect_events(ctx, *src, f, prev.ns + static_cast<uint64_t>(ctx.opt.interval * 1e9),
			       events);
		if (ctx.stopped())
			break;
		if (!read_named(ctx, *src, f, cur, err))
			return failure(ctx, err);
		double secs = cur.ns > prev.ns ? (cur.ns - prev.ns) / 1e9 : ctx.opt.interval;
		if (ctx.opt.json) {
			JsonWriter j(ctx.out, ctx.opt.pretty);
			j.begin_object();
			j.kv("interval", secs);
			j.key("connections");
			json_connections(j, cur, &prev, secs);
			j.key("events");
			json_events(j, events);
			j.kv("events_lost", cur.events_lost);
			j.end_object();
			j.finish();
			ctx.out.flush();
		} else {
			print_watch(ctx, prev, cur, secs, events);
		}
		prev = std::move(cur);
	}
	return EXIT_OK;
}

} // namespace mroce
