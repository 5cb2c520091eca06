// SPDX-License-Identifier: GPL-2.0
#include "cli.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <poll.h>

#include "rdma_nl.h"

namespace mroce {

const char *const MROCE_VERSION_STRING = "mroce 0.1 (wire v0)";
const char *const MODULE_NOT_LOADED = "the mroce module is not loaded (modprobe mroce)";

namespace {

struct OptSpec {
	const char *name;	/* canonical, as in Options::given */
	const char *shrt;	/* "-j" */
	const char *lng;	/* "--json" */
	bool value;
};

const OptSpec opt_specs[] = {
	{"json", "-j", "--json", false},
	{"pretty", "-p", "--pretty", false},
	{"details", "-d", "--details", false},
	{"interval", "-i", "--interval", true},
	{"count", "-n", "--count", true},
	{"duration", "-t", "--duration", true},
	{"textfile", nullptr, "--textfile", true},
	{"listen", nullptr, "--listen", true},
	{"no-bpf", nullptr, "--no-bpf", false},
	{"expire", nullptr, "--expire", true},
	{"help", "-h", "--help", false},
	{"version", "-V", "--version", false},
};

const OptSpec *find_opt(const std::string &tok)
{
	for (const auto &o : opt_specs) {
		if ((o.shrt && tok == o.shrt) || tok == o.lng)
			return &o;
		/* iproute2 also takes the long names with one dash: -json, -pretty */
		if (tok.size() > 2 && tok[0] == '-' && tok[1] != '-' && std::string("-") + tok == o.lng)
			return &o;
	}
	return nullptr;
}

bool parse_seconds(const std::string &s, double lo, double &v)
{
	char *end;
	errno = 0;
	v = strtod(s.c_str(), &end);
	return !s.empty() && !*end && !errno && std::isfinite(v) && v >= lo && v <= 86400;
}

void help_top(std::ostream &o)
{
	o << "Usage: mroce [ OPTIONS ] OBJECT { COMMAND | help }\n"
	     "       mroce [ -V | help ]\n"
	     "where  OBJECT := { dev | stats | path | telemetry }\n"
	     "       OPTIONS := { -j[son] | -p[retty] | -d[etails] | -V[ersion] | -h[elp] }\n"
	     "\n"
	     "  dev        mroce RDMA devices: net device, port state, MTU, GIDs\n"
	     "  stats      hw counters with their meaning, and rates\n"
	     "  path       per-connection, per-path telemetry (BPF on the mroce tracepoints)\n"
	     "  telemetry  Prometheus export or a JSON stream of counters and path metrics\n"
	     "\n"
	     "Exit status: 0 success, 1 failure, 2 usage error. See mroce(8).\n";
}

} // namespace

void help_dev(std::ostream &o)
{
	o << "Usage: mroce dev show [ DEV ]\n"
	     "       mroce dev help\n"
	     "Shows every mroce device (or DEV): its index, net device, port and physical\n"
	     "state, active and maximum MTU, and the GID table. -d adds the node GUID,\n"
	     "firmware version, rate and link layer.\n";
}

void help_stats(std::ostream &o)
{
	o << "Usage: mroce stats show [ DEV ] [ -d ] [ -i SECONDS [ -n COUNT ] ]\n"
	     "       mroce stats help\n"
	     "Shows the hw counters of every mroce device (or DEV), grouped by kind.\n"
	     "  -d            one counter per line with its meaning\n"
	     "  -i SECONDS    print per-second rates of the counters that changed,\n"
	     "                every SECONDS until interrupted\n"
	     "  -n COUNT      stop after COUNT intervals\n";
}

void help_path(std::ostream &o)
{
	o << "Usage: mroce path show  [ [ dev ] DEV ] [ conn ID ] [ -t SECONDS ]\n"
	     "       mroce path watch [ [ dev ] DEV ] [ conn ID ] [ -i SECONDS ] [ -n COUNT ]\n"
	     "       mroce path help\n"
	     "Per-connection, per-path telemetry from the mroce tracepoints, collected by\n"
	     "a BPF program while the command runs (needs root).\n"
	     "  show   sample for -t SECONDS (default 1) and print every path that carried\n"
	     "         traffic: RTT (smoothed, minimum, variation), window, inflight and\n"
	     "         utilisation, ECN marks, losses, retransmissions, state, source port,\n"
	     "         generation, packet counts. -d adds connection and timer details.\n"
	     "  watch  refresh the table every -i SECONDS (default 1) with per-second\n"
	     "         rates, and log path state changes and re-keys.\n";
}

void help_telemetry(std::ostream &o)
{
	o << "Usage: mroce telemetry export [ --textfile PATH | --listen ADDR ]\n"
	     "                              [ -i SECONDS ] [ -n COUNT ] [ -t SECONDS ]\n"
	     "                              [ --expire SECONDS ] [ --no-bpf ]\n"
	     "       mroce telemetry stream [ [ dev ] DEV ] [ -i SECONDS ] [ -n COUNT ]\n"
	     "                              [ --expire SECONDS ] [ --no-bpf ]\n"
	     "       mroce telemetry help\n"
	     "export: Prometheus text format: hw counters of every mroce device and, with\n"
	     "BPF, per-path and per-connection metrics (base units, counters end in _total).\n"
	     "  (no target)       print once to stdout, after sampling -t SECONDS (default 1)\n"
	     "  --textfile PATH   node_exporter textfile: rewrite PATH atomically every\n"
	     "                    -i SECONDS (default 15), -n COUNT times or until stopped\n"
	     "  --listen ADDR     serve http://ADDR/metrics (ADDR: HOST:PORT, [V6]:PORT or\n"
	     "                    :PORT for every address); -n COUNT scrapes, or until stopped\n"
	     "  --expire SECONDS  forget paths idle that long (default 300)\n"
	     "  --no-bpf          counters only (no root needed)\n"
	     "stream: every -i SECONDS (default 1) one JSON object on one line: the time,\n"
	     "each device's counters and per-second rates, each connection's paths with\n"
	     "their rates, and the path/connection state events of the interval.\n";
}

int usage_error(Context &ctx, const std::string &msg, const char *object)
{
	ctx.err << "mroce: " << msg << "\n";
	ctx.err << "Try \"mroce " << (object ? std::string(object) + " " : "") << "help\".\n";
	return EXIT_USAGE;
}

int failure(Context &ctx, const std::string &msg)
{
	ctx.err << "mroce: " << msg << "\n";
	return EXIT_FAIL;
}

bool matches(const std::string &word, const char *full)
{
	std::string f(full);
	return !word.empty() && word.size() <= f.size() && f.compare(0, word.size(), word) == 0;
}

std::string disallowed_option(const Context &ctx, std::initializer_list<const char *> allowed)
{
	static const std::set<std::string> global = {"json", "pretty", "details", "help", "version"};
	for (const auto &g : ctx.opt.given) {
		if (global.count(g))
			continue;
		bool ok = false;
		for (const char *a : allowed)
			ok |= g == a;
		if (!ok) {
			for (const auto &o : opt_specs)
				if (g == o.name)
					return o.shrt ? std::string(o.shrt) : std::string(o.lng);
			return g;
		}
	}
	return "";
}

bool pick_devices(Context &ctx, const std::string &dev, std::vector<std::string> &out, int &rc)
{
	rc = EXIT_OK;
	if (dev.empty()) {
		out = ctx.sysfs.mroce_devices();
		/* "nothing to show" must not hide that nothing can be there */
		if (out.empty() && !ctx.sysfs.module_loaded()) {
			rc = failure(ctx, MODULE_NOT_LOADED);
			return false;
		}
		return true;
	}
	if (!ctx.sysfs.exists(dev)) {
		rc = failure(ctx, "no RDMA device \"" + dev + "\"" +
					  (ctx.sysfs.module_loaded() ? " (mroce dev show lists them)"
								     : ": " + std::string(MODULE_NOT_LOADED)));
		return false;
	}
	if (!ctx.sysfs.is_mroce(dev)) {
		rc = failure(ctx, "\"" + dev + "\" is not an mroce device");
		return false;
	}
	out = {dev};
	return true;
}

int64_t realtime_ns(uint64_t mono_ns)
{
	struct timespec rt, mt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	int64_t now_mono = static_cast<int64_t>(mt.tv_sec) * 1000000000 + mt.tv_nsec;
	int64_t now_real = static_cast<int64_t>(rt.tv_sec) * 1000000000 + rt.tv_nsec;
	return now_real - (now_mono - static_cast<int64_t>(mono_ns));
}

namespace {

/* strftime(fmt) of a CLOCK_MONOTONIC time, then ".mmm" and suffix */
std::string format_time(uint64_t mono_ns, bool utc, const char *fmt, const char *suffix)
{
	int64_t t = realtime_ns(mono_ns);
	time_t secs = static_cast<time_t>(t / 1000000000);
	struct tm tm;
	utc ? gmtime_r(&secs, &tm) : localtime_r(&secs, &tm);
	char buf[48];
	size_t n = strftime(buf, sizeof(buf), fmt, &tm);
	snprintf(buf + n, sizeof(buf) - n, ".%03d%s", static_cast<int>((t % 1000000000) / 1000000),
		 suffix);
	return buf;
}

} // namespace

std::string wall_time(uint64_t mono_ns)
{
	return format_time(mono_ns, false, "%H:%M:%S", "");
}

std::string iso_time(uint64_t mono_ns)
{
	return format_time(mono_ns, true, "%Y-%m-%dT%H:%M:%S", "Z");
}

void Context::defaults()
{
	if (!device_names)
		device_names = rdma_device_names;
	if (!port_mtu)
		port_mtu = query_port_mtu;
	if (!path_source)
		path_source = bpf_path_source;
	if (!now_ns)
		now_ns = monotonic_ns;
	if (!sleep) {
		const volatile sig_atomic_t *st = stop;
		sleep = [st](double s) {
			/* in slices, so a signal ends the wait promptly */
			uint64_t end = monotonic_ns() + static_cast<uint64_t>(s * 1e9);
			for (;;) {
				uint64_t now = monotonic_ns();
				if (now >= end || (st && *st))
					return;
				poll(nullptr, 0, static_cast<int>(std::min<uint64_t>((end - now) / 1000000 + 1, 200)));
			}
		};
	}
}

int run(const std::vector<std::string> &args, Context &ctx)
{
	std::vector<std::string> pos;
	Options &o = ctx.opt;
	bool only_pos = false;

	for (size_t i = 0; i < args.size(); i++) {
		const std::string &a = args[i];
		if (only_pos || a.size() < 2 || a[0] != '-') {
			pos.push_back(a);
			continue;
		}
		if (a == "--") {
			only_pos = true;
			continue;
		}
		std::string tok = a, val;
		bool has_val = false;
		size_t eq = a.find('=');
		if (a.compare(0, 2, "--") == 0 && eq != std::string::npos) {
			tok = a.substr(0, eq);
			val = a.substr(eq + 1);
			has_val = true;
		}
		const OptSpec *s = find_opt(tok);
		if (!s)
			return usage_error(ctx, "unknown option \"" + a + "\"", nullptr);
		if (s->value && !has_val) {
			if (i + 1 >= args.size())
				return usage_error(ctx, "option \"" + a + "\" needs a value", nullptr);
			val = args[++i];
		} else if (!s->value && has_val) {
			return usage_error(ctx, "option \"" + tok + "\" takes no value", nullptr);
		}
		std::string n = s->name;
		o.given.insert(n);
		if (n == "json")
			o.json = true;
		else if (n == "pretty")
			o.pretty = true;
		else if (n == "details")
			o.details = true;
		else if (n == "no-bpf")
			o.no_bpf = true;
		else if (n == "textfile")
			o.textfile = val;
		else if (n == "listen")
			o.listen = val;
		else if (n == "interval" && !parse_seconds(val, 0.01, o.interval))
			return usage_error(ctx, "bad interval \"" + val + "\": seconds, at least 0.01", nullptr);
		else if (n == "duration" && !parse_seconds(val, 0, o.duration))
			return usage_error(ctx, "bad duration \"" + val + "\": seconds", nullptr);
		else if (n == "expire" && !parse_seconds(val, 1, o.expire))
			return usage_error(ctx, "bad expiry \"" + val + "\": seconds, at least 1", nullptr);
		else if (n == "count") {
			char *end;
			errno = 0;
			long c = strtol(val.c_str(), &end, 10);
			if (val.empty() || *end || errno || c < 1)
				return usage_error(ctx, "bad count \"" + val + "\": a positive integer", nullptr);
			o.count = c;
		}
	}
	/* -p alone pretty-prints JSON as in iproute2 */
	if (o.pretty)
		o.json = true;
	ctx.defaults();

	if (o.given.count("version")) {
		ctx.out << MROCE_VERSION_STRING << (BpfTelemetry::built_in() ? "" : ", without BPF")
			<< "\n";
		return EXIT_OK;
	}
	if (pos.empty()) {
		if (o.given.count("help")) {
			help_top(ctx.out);
			return EXIT_OK;
		}
		help_top(ctx.err);
		return EXIT_USAGE;
	}
	const std::string obj = pos[0];
	std::vector<std::string> rest(pos.begin() + 1, pos.end());
	if (obj == "help") {
		help_top(ctx.out);
		return EXIT_OK;
	}

	struct Obj {
		const char *name;
		int (*fn)(const std::vector<std::string> &, Context &);
		void (*help)(std::ostream &);
	};
	static const Obj objs[] = {
		{"dev", cmd_dev, help_dev},
		{"stats", cmd_stats, help_stats},
		{"path", cmd_path, help_path},
		{"telemetry", cmd_telemetry, help_telemetry},
	};
	for (const auto &ob : objs) {
		if (!matches(obj, ob.name))
			continue;
		bool want_help = o.given.count("help") > 0;
		for (const auto &r : rest)
			want_help |= r == "help";
		if (want_help) {
			ob.help(ctx.out);
			return EXIT_OK;
		}
		return ob.fn(rest, ctx);
	}
	return usage_error(ctx, "unknown object \"" + obj + "\"", nullptr);
}

} // namespace mroce
