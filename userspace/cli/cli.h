/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mroce, the companion CLI: iproute2-style grammar
 *	mroce [OPTIONS] OBJECT { COMMAND | help }
 * with -j/-p JSON, -d details, help at every level, and exit codes
 *	0 success, 1 failure (device missing, BPF refused, ...), 2 usage error.
 *
 * Everything a command touches comes through Context, so unit tests run
 * whole commands against a fake sysfs tree and canned providers.
 */
#ifndef MROCE_CLI_H
#define MROCE_CLI_H

#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "bpf_source.h"
#include "sysfs.h"
#include "verbs.h"

namespace mroce {

class JsonWriter;

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

struct Options {
	bool json = false, pretty = false, details = false;
	double interval = -1;	/* -i: seconds; < 0 unset */
	long count = -1;	/* -n */
	double duration = -1;	/* -t */
	double expire = 300;	/* --expire */
	std::string textfile, listen;
	bool no_bpf = false;
	std::set<std::string> given;	/* canonical names of the options used */
};

/* Where telemetry comes from; tests replace it. */
class PathSource {
public:
	virtual ~PathSource() = default;
	virtual bool open(std::string &err) = 0;
	virtual bool read(Snapshot &s, std::string &err) = 0;
	virtual void poll_events(int timeout_ms,
				 const std::function<void(const mroce_tp_event &)> &cb) = 0;
	virtual void expire(uint64_t before_ns) = 0;
	/* tracepoints this module lacks (an older mroce), for a warning */
	virtual std::vector<std::string> missing() const { return {}; }
};

std::unique_ptr<PathSource> bpf_path_source();

struct Context {
	Context(std::ostream &o, std::ostream &e) : out(o), err(e) {}

	std::ostream &out;
	std::ostream &err;
	Options opt;
	Sysfs sysfs = Sysfs::from_env();
	bool tty = false;	/* stdout is a terminal (watch clears the screen) */
	const volatile sig_atomic_t *stop = nullptr;	/* set by SIGINT/SIGTERM */

	std::function<std::map<uint32_t, std::string>()> device_names;
	std::function<bool(const std::string &, unsigned, PortMtu &, std::string &)> port_mtu;
	std::function<std::unique_ptr<PathSource>()> path_source;
	/* CLOCK_MONOTONIC ns and a sleep that returns early on stop */
	std::function<uint64_t()> now_ns;
	std::function<void(double seconds)> sleep;

	bool stopped() const { return stop && *stop; }
	/* Real providers for everything not set yet. */
	void defaults();
};

/* argv without the program name. */
int run(const std::vector<std::string> &args, Context &ctx);

/* Commands (cmd_*.cpp); args are what follows the command word. */
int cmd_dev(const std::vector<std::string> &args, Context &ctx);
int cmd_stats(const std::vector<std::string> &args, Context &ctx);
int cmd_path(const std::vector<std::string> &args, Context &ctx);
int cmd_telemetry(const std::vector<std::string> &args, Context &ctx);

/* Which telemetry rows a command wants: a device name and/or a connection. */
struct PathFilter {
	std::string dev;
	int64_t conn = -1;
};

/* A ring-buffer event and the name of its device. */
using DevEvent = std::pair<mroce_tp_event, std::string>;

/* cmd_path.cpp, shared with telemetry stream */
bool read_named(Context &ctx, PathSource &src, const PathFilter &f, Snapshot &s, std::string &err);
void warn_missing(Context &ctx, const PathSource &src);
/* Deliver events (filtered) until CLOCK_MONOTONIC reaches end or a signal. */
void collect_events(Context &ctx, PathSource &src, const PathFilter &f, uint64_t end,
		    std::vector<DevEvent> &events);
/* [{ifname, conn, peer, state, cc, paths: [...]}]; with prev, per-second rates */
void json_connections(JsonWriter &j, const Snapshot &s, const Snapshot *prev, double secs);
void json_events(JsonWriter &j, const std::vector<DevEvent> &events);

/* cmd_stats.cpp: {ifname, port, <counter>: value..., [interval, rates: {...}]} */
void json_counters(JsonWriter &j, const std::string &dev, unsigned port, const CounterList &cur,
		   const CounterList *prev, double secs);

/* Shared helpers */
int usage_error(Context &ctx, const std::string &msg, const char *object);
int failure(Context &ctx, const std::string &msg);
/* "" if every option in ctx.opt.given is among `allowed`, else the offender */
std::string disallowed_option(const Context &ctx, std::initializer_list<const char *> allowed);
/* iproute2's prefix matching: matches("sh", "show") */
bool matches(const std::string &word, const char *full);
/*
 * The mroce devices a command works on: the named one (checked) or all;
 * fails (exit 1) when there are none because the module is not loaded.
 */
bool pick_devices(Context &ctx, const std::string &dev, std::vector<std::string> &out, int &rc);
/* Wall-clock "HH:MM:SS.mmm" of a CLOCK_MONOTONIC time. */
std::string wall_time(uint64_t mono_ns);
/* "2026-11-30T02:10:00.123Z": the same as UTC, for log shippers. */
std::string iso_time(uint64_t mono_ns);
/* The same instant as CLOCK_REALTIME ns (Unix time). */
int64_t realtime_ns(uint64_t mono_ns);

extern const char *const MROCE_VERSION_STRING;
extern const char *const MODULE_NOT_LOADED;

} // namespace mroce

#endif
