// SPDX-License-Identifier: GPL-2.0
/* mroce telemetry export: Prometheus text to stdout, a textfile or HTTP. */
#include "cli.h"
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

} // namespace

int cmd_telemetry(const std::vector<std::string> &args, Context &ctx)
{
	size_t i = 0;
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
