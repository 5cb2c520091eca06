// SPDX-License-Identifier: GPL-2.0
/* mroce dev show [DEV] */
#include "cli.h"
#include "json.h"

namespace mroce {

namespace {

void print_text(Context &ctx, const DeviceInfo &d)
{
	std::ostream &o = ctx.out;
	if (d.index >= 0)
		o << d.index << ": ";
	o << d.name << ": netdev " << (d.netdev.empty() ? "-" : d.netdev) << " port " << d.port
	  << " state " << (d.state.empty() ? "?" : d.state) << " physical_state "
	  << (d.phys_state.empty() ? "?" : d.phys_state);
	if (d.active_mtu)
		o << " mtu " << d.active_mtu << " max_mtu " << d.max_mtu;
	o << "\n";
	if (ctx.opt.details) {
		o << "    node_guid " << (d.node_guid.empty() ? "-" : d.node_guid) << " fw "
		  << (d.fw_ver.empty() ? "-" : d.fw_ver) << " link_layer "
		  << (d.link_layer.empty() ? "-" : d.link_layer) << " rate "
		  << (d.rate.empty() ? "-" : d.rate) << "\n";
	}
	for (const auto &g : d.gids) {
		o << "    gid " << g.index << " " << g.gid;
		if (!g.type.empty())
			o << " type " << g.type;
		if (!g.netdev.empty())
			o << " netdev " << g.netdev;
		o << "\n";
	}
}

void print_json(JsonWriter &j, const Context &ctx, const DeviceInfo &d)
{
	j.begin_object();
	if (d.index >= 0)
		j.kv("ifindex", d.index);
	j.kv("ifname", d.name);
	j.kv("netdev", d.netdev);
	j.kv("port", d.port);
	j.kv("state", d.state);
	j.kv("physical_state", d.phys_state);
	j.key("active_mtu");
	d.active_mtu ? j.value(d.active_mtu) : j.null();
	j.key("max_mtu");
	d.max_mtu ? j.value(d.max_mtu) : j.null();
	if (ctx.opt.details) {
		j.kv("node_guid", d.node_guid);
		j.kv("fw_ver", d.fw_ver);
		j.kv("link_layer", d.link_layer);
		j.kv("rate", d.rate);
	}
	j.key("gids").begin_array();
	for (const auto &g : d.gids) {
		j.begin_object();
		j.kv("index", g.index).kv("gid", g.gid).kv("type", g.type).kv("netdev", g.netdev);
		j.end_object();
	}
	j.end_array();
	j.end_object();
}

} // namespace

int cmd_dev(const std::vector<std::string> &args, Context &ctx)
{
	std::string dev;
	size_t i = 0;

	if (i < args.size() && matches(args[i], "show"))
		i++;
	else if (i < args.size() && matches(args[i], "list"))
		i++;
	else if (i < args.size() && !ctx.sysfs.exists(args[i]))
		return usage_error(ctx, "unknown command \"dev " + args[i] + "\"", "dev");
	if (i < args.size() && args[i] == "dev")
		i++;
	if (i < args.size())
		dev = args[i++];
	if (i < args.size())
		return usage_error(ctx, "unexpected \"" + args[i] + "\"", "dev");
	std::string bad = disallowed_option(ctx, {});
	if (!bad.empty())
		return usage_error(ctx, "option " + bad + " is not valid for \"dev show\"", "dev");

	std::vector<std::string> names;
	int rc;
	if (!pick_devices(ctx, dev, names, rc))
		return rc;

	auto index = ctx.device_names();
	std::vector<DeviceInfo> devs;
	for (const auto &n : names) {
		auto d = ctx.sysfs.device(n);
		if (!d)
			continue;	/* removed while we looked */
		for (const auto &[idx, nm] : index)
			if (nm == n)
				d->index = static_cast<int>(idx);
		PortMtu mtu;
		std::string err;
		if (ctx.port_mtu(n, d->port, mtu, err)) {
			d->active_mtu = mtu.active;
			d->max_mtu = mtu.max;
		} else if (ctx.opt.details && !ctx.opt.json) {
			ctx.err << "mroce: " << n << ": MTU unknown: " << err << "\n";
		}
		devs.push_back(std::move(*d));
	}

	if (ctx.opt.json) {
		JsonWriter j(ctx.out, ctx.opt.pretty);
		j.begin_array();
		for (const auto &d : devs)
			print_json(j, ctx, d);
		j.end_array();
		j.finish();
	} else {
		for (const auto &d : devs)
			print_text(ctx, d);
		if (devs.empty() && dev.empty())
			ctx.err << "mroce: no mroce devices (create one: rdma link add mroce0 type mroce "
				   "netdev eth0)\n";
	}
	return EXIT_OK;
}

} // namespace mroce
