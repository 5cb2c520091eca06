// SPDX-License-Identifier: GPL-2.0
#include "sysfs.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sys/stat.h>

#include "counters.h"

namespace mroce {

std::optional<std::string> read_line(const std::string &path)
{
	std::ifstream f(path);
	std::string s;

	if (!f || !std::getline(f, s))
		return std::nullopt;
	return s;
}

namespace {

std::vector<std::string> list_dir(const std::string &dir)
{
	std::vector<std::string> names;
	DIR *d = opendir(dir.c_str());

	if (!d)
		return names;
	while (struct dirent *e = readdir(d)) {
		if (e->d_name[0] != '.')
			names.emplace_back(e->d_name);
	}
	closedir(d);
	std::sort(names.begin(), names.end());
	return names;
}

bool is_dir(const std::string &path)
{
	struct stat st;
	return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/* Sort numerically: gids/10 after gids/9. */
std::vector<unsigned> numeric_entries(const std::string &dir)
{
	std::vector<unsigned> v;

	for (const auto &n : list_dir(dir)) {
		char *end;
		unsigned long x = strtoul(n.c_str(), &end, 10);
		if (!n.empty() && *end == '\0')
			v.push_back(static_cast<unsigned>(x));
	}
	std::sort(v.begin(), v.end());
	return v;
}

} // namespace

Sysfs Sysfs::from_env()
{
	const char *r = getenv("MROCE_SYSFS");
	return Sysfs(r && *r ? r : "/sys");
}

std::string Sysfs::dev_dir(const std::string &dev) const
{
	return root_ + "/class/infiniband/" + dev;
}

std::vector<std::string> Sysfs::rdma_devices() const
{
	return list_dir(root_ + "/class/infiniband");
}

bool Sysfs::exists(const std::string &dev) const
{
	return !dev.empty() && dev.find('/') == std::string::npos &&
	       dev[0] != '.' && is_dir(dev_dir(dev));
}

bool Sysfs::module_loaded() const
{
	return is_dir(root_ + "/module/mroce");
}

bool Sysfs::is_mroce(const std::string &dev) const
{
	auto d = read_line(dev_dir(dev) + "/node_desc");
	return d && d->rfind("mroce", 0) == 0;
}

std::vector<std::string> Sysfs::mroce_devices() const
{
	std::vector<std::string> r;

	for (const auto &d : rdma_devices())
		if (is_mroce(d))
			r.push_back(d);
	return r;
}

std::string Sysfs::strip_enum(const std::string &s)
{
	auto p = s.find(": ");

	if (p == std::string::npos || p == 0 ||
	    !std::all_of(s.begin(), s.begin() + p, ::isdigit))
		return s;
	return s.substr(p + 2);
}

std::string Sysfs::compress_gid(const std::string &raw)
{
	unsigned char b[16];
	char buf[INET6_ADDRSTRLEN];

	if (inet_pton(AF_INET6, raw.c_str(), b) != 1)
		return "";
	if (std::all_of(b, b + 16, [](unsigned char c) { return c == 0; }))
		return "";
	if (!inet_ntop(AF_INET6, b, buf, sizeof(buf)))
		return "";
	return buf;
}

std::optional<DeviceInfo> Sysfs::device(const std::string &dev) const
{
	if (!exists(dev))
		return std::nullopt;

	DeviceInfo d;
	std::string dir = dev_dir(dev);
	d.name = dev;
	d.netdev = read_line(dir + "/parent").value_or("");
	d.node_guid = read_line(dir + "/node_guid").value_or("");
	d.fw_ver = read_line(dir + "/fw_ver").value_or("");

	auto ports = numeric_entries(dir + "/ports");
	if (!ports.empty())
		d.port = ports.front();
	std::string pdir = dir + "/ports/" + std::to_string(d.port);
	d.state = strip_enum(read_line(pdir + "/state").value_or(""));
	d.phys_state = strip_enum(read_line(pdir + "/phys_state").value_or(""));
	d.rate = read_line(pdir + "/rate").value_or("");
	d.link_layer = read_line(pdir + "/link_layer").value_or("");

	for (unsigned i : numeric_entries(pdir + "/gids")) {
		std::string n = std::to_string(i);
		auto raw = read_line(pdir + "/gids/" + n);
		if (!raw)
			continue;
		Gid g;
		g.index = i;
		g.gid = compress_gid(*raw);
		if (g.gid.empty())
			continue;
		/* An entry being deleted reads as an error: show what is left. */
		g.type = read_line(pdir + "/gid_attrs/types/" + n).value_or("");
		g.netdev = read_line(pdir + "/gid_attrs/ndevs/" + n).value_or("");
		d.gids.push_back(std::move(g));
	}
	return d;
}

bool Sysfs::counters(const std::string &dev, CounterList &out,
		     std::string &err) const
{
	out.clear();
	if (!exists(dev)) {
		err = "no RDMA device " + dev;
		return false;
	}
	auto ports = numeric_entries(dev_dir(dev) + "/ports");
	std::string dir = dev_dir(dev) + "/ports/" +
			  std::to_string(ports.empty() ? 1 : ports.front()) + "/hw_counters";
	auto names = list_dir(dir);
	if (names.empty()) {
		err = dev + " has no hw counters (" + dir + ")";
		return false;
	}
	const auto &cat = counter_catalog();
	auto rank = [&](const std::string &n) {
		for (size_t i = 0; i < cat.size(); i++)
			if (cat[i].name == n)
				return i;
		return cat.size();
	};
	std::stable_sort(names.begin(), names.end(),
			 [&](const std::string &a, const std::string &b) { return rank(a) < rank(b); });
	for (const auto &n : names) {
		if (n == "lifespan")
			continue;
		auto v = read_line(dir + "/" + n);
		if (!v)
			continue;
		char *end;
		errno = 0;
		unsigned long long x = strtoull(v->c_str(), &end, 10);
		if (errno || end == v->c_str())
			continue;
		out.emplace_back(n, x);
	}
	if (out.empty()) {
		err = "cannot read the hw counters in " + dir;
		return false;
	}
	return true;
}

} // namespace mroce
