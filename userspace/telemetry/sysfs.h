/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mroce devices as /sys/class/infiniband shows them. Every path is taken
 * relative to a root directory ("/sys" normally), so unit tests run the
 * same code on a fake tree in a temporary directory.
 */
#ifndef MROCE_SYSFS_H
#define MROCE_SYSFS_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mroce {

struct Gid {
	unsigned index = 0;
	std::string gid;	/* compressed IPv6 form, ::ffff:a.b.c.d for IPv4 */
	std::string type;	/* "RoCE v2", "IB/RoCE v1" */
	std::string netdev;
};

struct DeviceInfo {
	std::string name;
	std::string netdev;	/* the Ethernet device it runs over */
	std::string node_guid;
	std::string fw_ver;
	unsigned port = 1;
	std::string state;	/* ACTIVE, DOWN, ... */
	std::string phys_state;	/* LinkUp, Disabled, ... */
	std::string rate;
	std::string link_layer;
	std::vector<Gid> gids;
	/* From other sources when available (rdma netlink, verbs); -1/0 = unknown. */
	int index = -1;
	unsigned active_mtu = 0;
	unsigned max_mtu = 0;
};

using CounterList = std::vector<std::pair<std::string, uint64_t>>;

class Sysfs {
public:
	explicit Sysfs(std::string root = "/sys") : root_(std::move(root)) {}

	/* The root in use: $MROCE_SYSFS if set, else /sys. */
	static Sysfs from_env();

	/* Every RDMA device, sorted by name. */
	std::vector<std::string> rdma_devices() const;
	/* An mroce device says so in node_desc ("mroce"); rdma_rxe says "rxe". */
	bool is_mroce(const std::string &dev) const;
	std::vector<std::string> mroce_devices() const;
	bool exists(const std::string &dev) const;
	/* Is the mroce module loaded (/sys/module/mroce)? */
	bool module_loaded() const;

	std::optional<DeviceInfo> device(const std::string &dev) const;

	/*
	 * hw counters of the device's port, in the kernel's order (unknown
	 * names last, sorted). False with err set if none can be read.
	 */
	bool counters(const std::string &dev, CounterList &out,
		      std::string &err) const;

	/* "4: ACTIVE" -> "ACTIVE"; text without a "N: " prefix unchanged. */
	static std::string strip_enum(const std::string &s);
	/* "fe80:0000:...:0001" -> "fe80::1"; "" if it is all zero or bad. */
	static std::string compress_gid(const std::string &raw);

	const std::string &root() const { return root_; }

private:
	std::string dev_dir(const std::string &dev) const;
	std::string root_;
};

/* First line of a file without its newline; nullopt if unreadable. */
std::optional<std::string> read_line(const std::string &path);

} // namespace mroce

#endif
