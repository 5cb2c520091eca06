// SPDX-License-Identifier: GPL-2.0
/* mroce stats show [DEV] [-d] [-i SECONDS [-n COUNT]] */
#include <map>

#include "cli.h"
#include "counters.h"
#include "format.h"
#include "json.h"

namespace mroce {

namespace {

struct DevCounters {
	std::string dev;
	unsigned port = 1;
	CounterList counters;
};

std::string group_of(const std::string &name)
{
	const CounterInfo *ci = counter_info(name);
	return ci ? std::string(ci->group) : "other";
}

std::string meaning_of(const std::string &name)
{
	const CounterInfo *ci = counter_info(name);
	return ci ? std::string(ci->meaning) : "(not documented by this mroce)";
}

bool read_all(Context &ctx, const std::vector<std::string> &names, std::vector<DevCounters> &out,
	      int &rc)
{
	out.clear();
	for (const auto &n : names) {
		DevCounters d;
		std::string err;
		d.dev = n;
		if (auto info = ctx.sysfs.device(n))
			d.port = info->port;
		if (!ctx.sysfs.counters(n, d.counters, err)) {
			rc = failure(ctx, err);
			return false;
		}
		out.push_back(std::move(d));
	}
	return true;
}

/* rdma-statistic-like lines, one group per line, wrapped. */
void print_compact(std::ostream &o, const DevCounters &d)
{
	o << d.dev << "/" << d.port << ":\n";
	std::string group;
	std::string line;
	const size_t width = 100, lead = 18;
	auto flush = [&]() {
		if (!line.empty())
			o << line << "\n";
		line.clear();
	};
	for (const auto &[name, value] : d.counters) {
		std::string g = group_of(name);
		if (g != group) {
			flush();
			group = g;
			line = "    " + g + ":";
			line.resize(lead, ' ');
		}
		std::string item = name + " " + std::to_string(value);
		if (line.size() > lead && line.size() + 1 + item.size() > width) {
			flush();
			line.assign(lead, ' ');
		}
		if (line.size() > lead)
			line += ' ';
		line += item;
	}
	flush();
}

void print_detailed(std::ostream &o, const DevCounters &d)
{
	o << d.dev << "/" << d.port << ":\n";
	std::string group;
	Table t({{"COUNTER", false}, {"VALUE", true}, {"MEANING", false}});
	for (const auto &[name, value] : d.counters) {
		std::string g = group_of(name);
		if (g != group) {
			group = g;
			t.add({"[" + g + "]", "", ""});
		}
		t.add({name, std::to_string(value), meaning_of(name)});
	}
	t.print(o, "    ");
}

void print_rates(Context &ctx, const DevCounters &a, const DevCounters &b, double secs)
{
	std::ostream &o = ctx.out;
	std::map<std::string, uint64_t> before(a.counters.begin(), a.counters.end());
	std::vector<Table::Column> cols = {{"COUNTER", false}, {"VALUE", true}, {"DELTA", true},
					   {"PER_SEC", true}};
	if (ctx.opt.details)
		cols.push_back({"MEANING", false});
	Table t(cols);
	for (const auto &[name, value] : b.counters) {
		uint64_t old = before.count(name) ? before[name] : value;
		uint64_t delta = value >= old ? value - old : 0;
		if (!delta && !ctx.opt.details)
			continue;
		std::vector<std::string> row = {name, std::to_string(value), std::to_string(delta),
						fmt_fixed(delta / secs, 1)};
		if (ctx.opt.details)
			row.push_back(meaning_of(name));
		t.add(row);
	}
	o << b.dev << "/" << b.port << " over " << fmt_fixed(secs, 2) << "s:\n";
	if (t.size())
		t.print(o, "    ");
	else
		o << "    no counter changed\n";
}

} // namespace

void json_counters(JsonWriter &j, const std::string &dev, unsigned port, const CounterList &cur,
		   const CounterList *prev, double secs)
{
	j.begin_object();
	j.kv("ifname", dev).kv("port", port);
	for (const auto &[name, value] : cur)
		j.kv(name, value);
	if (prev) {
		std::map<std::string, uint64_t> before(prev->begin(), prev->end());
		j.kv("interval", secs);
		j.key("rates").begin_object();
		for (const auto &[name, value] : cur) {
			uint64_t old = before.count(name) ? before[name] : value;
			j.kv(name, value >= old ? (value - old) / secs : 0.0);
		}
		j.end_object();
	}
	j.end_object();
}

int cmd_stats(const std::vector<std::string> &args, Context &ctx)
{
	std::string dev;
	size_t i = 0;

	if (i < args.size() && matches(args[i], "show"))
		i++;
	else if (i < args.size() && !ctx.sysfs.exists(args[i]))
		return usage_error(ctx, "unknown command \"stats " + args[i] + "\"", "stats");
	if (i < args.size() && (args[i] == "dev" || args[i] == "link"))
		i++;
	if (i < args.size()) {
		dev = args[i++];
		/* rdma's DEV/PORT form: mroce0/1 */
		auto slash = dev.find('/');
		if (slash != std::string::npos)
			dev.erase(slash);
	}
	if (i < args.size())
		return usage_error(ctx, "unexpected \"" + args[i] + "\"", "stats");
	std::string bad = disallowed_option(ctx, {"interval", "count"});
	if (!bad.empty())
		return usage_error(ctx, "option " + bad + " is not valid for \"stats show\"", "stats");
	if (ctx.opt.count > 0 && ctx.opt.interval < 0)
		return usage_error(ctx, "-n needs -i", "stats");

	std::vector<std::string> names;
	int rc;
	if (!pick_devices(ctx, dev, names, rc))
		return rc;
	if (names.empty()) {
		if (ctx.opt.json)
			ctx.out << "[]\n";
		else
			ctx.err << "mroce: no mroce devices (create one: rdma link add mroce0 type "
				   "mroce netdev eth0)\n";
		return EXIT_OK;
	}

	std::vector<DevCounters> cur, prev;
	if (!read_all(ctx, names, cur, rc))
		return rc;

	if (ctx.opt.interval < 0) {
		if (ctx.opt.json) {
			JsonWriter j(ctx.out, ctx.opt.pretty);
			j.begin_array();
			for (const auto &d : cur)
				json_counters(j, d.dev, d.port, d.counters, nullptr, 0);
			j.end_array();
			j.finish();
			return EXIT_OK;
		}
		for (const auto &d : cur)
			ctx.opt.details ? print_detailed(ctx.out, d) : print_compact(ctx.out, d);
		return EXIT_OK;
	}

	uint64_t t0 = ctx.now_ns();
	for (long n = 0; ctx.opt.count < 0 || n < ctx.opt.count; n++) {
		ctx.sleep(ctx.opt.interval);
		if (ctx.stopped())
			break;
		prev.swap(cur);
		if (!read_all(ctx, names, cur, rc))
			return rc;
		uint64_t t1 = ctx.now_ns();
		double secs = t1 > t0 ? (t1 - t0) / 1e9 : ctx.opt.interval;
		t0 = t1;
		if (ctx.opt.json) {
			JsonWriter j(ctx.out, ctx.opt.pretty);
			j.begin_array();
			for (size_t k = 0; k < cur.size(); k++)
				json_counters(j, cur[k].dev, cur[k].port, cur[k].counters,
					      &prev[k].counters, secs);
			j.end_array();
			j.finish();
		} else {
			for (size_t k = 0; k < cur.size(); k++)
				print_rates(ctx, prev[k], cur[k], secs);
		}
		ctx.out.flush();
	}
	return EXIT_OK;
}

} // namespace mroce
