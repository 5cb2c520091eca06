// SPDX-License-Identifier: GPL-2.0
/*
 * mroce telemetry export: Prometheus text to stdout, a textfile or HTTP.
 * mroce telemetry stream: one JSON object per interval and line.
 */
#include "cli.h"
#include "json.h"
#include "prom.h"

namespace mroce {

namespace {

struct Exporter {
	Context &ctx;
	std::unique_ptr<PathSource> src;
	std::string bpf_error;

	std::string collect()
	{
		ExportInput in;
		in.module_loaded = ctx.sysfs.module_loaded();
		for (const auto &n : ctx.sysfs.mroce_devices()) {
			auto d = ctx.sysfs.device(n);
			if (!d)
				continue;
			PortMtu mtu;
			std::string err;
			if (ctx.port_mtu(n, d->port, mtu, err))
				d->active_mtu = mtu.active;
			CounterList c;
			if (ctx.sysfs.counters(n, c, err))
				in.counters[n] = std::move(c);
			in.devices.push_back(std::move(*d));
		}
		Snapshot s;
		if (src) {
			std::string err;
			if (src->read(s, err)) {
				s.name_devices(ctx.device_names());
				in.paths = &s;
				in.now_ns = s.ns;
			} else {
				in.bpf_error = err;
			}
		} else {
			in.bpf_error = bpf_error;
		}
		return prometheus_text(in);
	}

	void expire()
	{
		uint64_t now = ctx.now_ns();
		uint64_t age = static_cast<uint64_t>(ctx.opt.expire * 1e9);
		if (src && now > age)
			src->expire(now - age);
	}
};

/* The counters of every mroce device (or f.dev), by name. */
std::map<std::string, std::pair<unsigned, CounterList>> read_counters(Context &ctx,
								      const PathFilter &f)
{
	std::map<std::string, std::pair<unsigned, CounterList>> r;
	for (const auto &n : ctx.sysfs.mroce_devices()) {
		if (!f.dev.empty() && n != f.dev)
			continue;
		auto d = ctx.sysfs.device(n);
		CounterList c;
		std::string err;
		if (d && ctx.sysfs.counters(n, c, err))
			r[n] = {d->port, std::move(c)};
	}
	return r;
}

/*
 * Every interval one line: the time, each device's counters with their
 * rates, each connection's paths with their rates, and the state events
 * of the interval -- what a log shipper or a script wants to tail.
 */
int stream(Context &ctx, const PathFilter &f)
{
	const Options &o = ctx.opt;
	std::string bad = disallowed_option(ctx, {"interval", "count", "no-bpf", "expire"});
	if (!bad.empty())
		return usage_error(ctx, "option " + bad + " is not valid for \"telemetry stream\"",
				   "telemetry");
	if (o.pretty)
		return usage_error(ctx, "the stream is one JSON object per line; -p does not apply",
				   "telemetry");
	if (!f.dev.empty()) {
		std::vector<std::string> names;
		int rc;
		if (!pick_devices(ctx, f.dev, names, rc))
			return rc;
	} else if (!ctx.sysfs.module_loaded()) {
		ctx.err << "mroce: warning: " << MODULE_NOT_LOADED << "; streaming what appears\n";
	}

	std::unique_ptr<PathSource> src;
	std::string bpf_error, err;
	if (!o.no_bpf) {
		src = ctx.path_source();
		if (!src->open(bpf_error)) {
			ctx.err << "mroce: warning: streaming counters only: " << bpf_error << "\n";
			src.reset();
		} else {
			warn_missing(ctx, *src);
		}
	}
	double interval = o.interval >= 0 ? o.interval : 1.0;
	auto prev_ctr = read_counters(ctx, f);
	Snapshot prev, cur;
	prev.ns = ctx.now_ns();
	if (src && !read_named(ctx, *src, f, prev, err))
		return failure(ctx, err);

	for (long n = 0; o.count < 0 || n < o.count; n++) {
		uint64_t end = prev.ns + static_cast<uint64_t>(interval * 1e9);
		std::vector<DevEvent> events;
		if (src) {
			collect_events(ctx, *src, f, end, events);
		} else {
			uint64_t now = ctx.now_ns();
			if (now < end)
				ctx.sleep((end - now) / 1e9);
		}
		if (ctx.stopped())
			break;
		auto cur_ctr = read_counters(ctx, f);
		cur = Snapshot();
		cur.ns = ctx.now_ns();
		if (src && !read_named(ctx, *src, f, cur, err))
			return failure(ctx, err);
		double secs = cur.ns > prev.ns ? (cur.ns - prev.ns) / 1e9 : interval;

		JsonWriter j(ctx.out, false);
		j.begin_object();
		j.kv("time", iso_time(cur.ns));
		j.kv("interval", secs);
		j.kv("module_loaded", ctx.sysfs.module_loaded());
		j.key("devices").begin_array();
		static const CounterList none;
		for (const auto &[name, pc] : cur_ctr) {
			auto it = prev_ctr.find(name);
			json_counters(j, name, pc.first, pc.second,
				      it != prev_ctr.end() ? &it->second.second : &none, secs);
		}
		j.end_array();
		j.kv("bpf", src != nullptr);
		if (src) {
			j.key("connections");
			json_connections(j, cur, &prev, secs);
			j.key("events");
			json_events(j, events);
			j.kv("events_lost", cur.events_lost);
		} else {
			j.kv("bpf_error", o.no_bpf ? std::string("--no-bpf") : bpf_error);
		}
		j.end_object();
		j.finish();
		ctx.out.flush();
		if (src && o.expire > 0 && cur.ns > o.expire * 1e9)
			src->expire(cur.ns - static_cast<uint64_t>(o.expire * 1e9));
		prev = std::move(cur);
		prev_ctr = std::move(cur_ctr);
	}
	return EXIT_OK;
}

} // namespace

int cmd_telemetry(const std::vector<std::string> &args, Context &ctx)
{
	size_t i = 0;
	if (i < args.size() && matches(args[i], "stream")) {
		PathFilter f;
		for (i++; i < args.size(); i++) {
			if (args[i] == "dev" && i + 1 < args.size())
				f.dev = args[++i];
			else if (f.dev.empty() && args[i] != "dev")
				f.dev = args[i];
			else
				return usage_error(ctx, "unexpected \"" + args[i] + "\"", "telemetry");
		}
		return stream(ctx, f);
	}
	if (i < args.size() && matches(args[i], "export"))
		i++;
	if (i < args.size())
		return usage_error(ctx, "unknown command \"telemetry " + args[i] + "\"", "telemetry");
	std::string bad = disallowed_option(
		ctx, {"textfile", "listen", "interval", "count", "duration", "no-bpf", "expire"});
	if (!bad.empty())
		return usage_error(ctx, "option " + bad + " is not valid for \"telemetry export\"",
				   "telemetry");
	const Options &o = ctx.opt;
	if (!o.textfile.empty() && !o.listen.empty())
		return usage_error(ctx, "--textfile and --listen exclude each other", "telemetry");
	if (o.json)
		return usage_error(ctx, "the export is Prometheus text; -j does not apply", "telemetry");
	ListenAddr addr;
	std::string err;
	if (!o.listen.empty() && !parse_listen_addr(o.listen, addr, err))
		return usage_error(ctx, err, "telemetry");
	if (o.textfile.empty() && o.listen.empty() && (o.interval >= 0 || o.count > 0))
		return usage_error(ctx, "-i and -n need --textfile or --listen", "telemetry");

	if (!ctx.sysfs.module_loaded())
		ctx.err << "mroce: warning: " << MODULE_NOT_LOADED
			<< "; exporting mroce_module_loaded 0\n";
	Exporter ex{ctx, nullptr, ""};
	if (!o.no_bpf) {
		ex.src = ctx.path_source();
		if (!ex.src->open(err)) {
			ctx.err << "mroce: warning: exporting counters only: " << err << "\n";
			ex.bpf_error = err;
			ex.src.reset();
		}
	}
	/* Let path samples arrive before the first export. */
	double warmup = o.duration >= 0 ? o.duration : (ex.src ? 1.0 : 0.0);

	if (!o.listen.empty()) {
		HttpServer srv;
		if (!srv.listen(addr, err))
			return failure(ctx, err);
		ctx.err << "mroce: serving Prometheus metrics on http://"
			<< (addr.host.empty() ? "*" : (addr.host.find(':') != std::string::npos
							       ? "[" + addr.host + "]"
							       : addr.host))
			<< ":" << srv.port() << "/metrics\n";
		long served = 0;
		uint64_t last_expire = ctx.now_ns();
		while (!ctx.stopped() && (o.count < 0 || served < o.count)) {
			if (srv.serve_one(200, [&] { return ex.collect(); }))
				served++;
			if (ctx.now_ns() - last_expire > 10000000000ull) {
				ex.expire();
				last_expire = ctx.now_ns();
			}
		}
		return EXIT_OK;
	}

	ctx.sleep(warmup);
	if (o.textfile.empty()) {
		ctx.out << ex.collect();
		return EXIT_OK;
	}
	double interval = o.interval >= 0 ? o.interval : 15;
	for (long n = 0; !ctx.stopped() && (o.count < 0 || n < o.count); n++) {
		if (n) {
			ctx.sleep(interval);
			if (ctx.stopped())
				break;
			ex.expire();
		}
		if (!write_file_atomic(o.textfile, ex.collect(), err))
			return failure(ctx, err);
	}
	return EXIT_OK;
}

} // namespace mroce
