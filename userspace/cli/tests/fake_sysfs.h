/* SPDX-License-Identifier: GPL-2.0 */
/* A throw-away /sys tree in a temporary directory, for the unit tests. */
#ifndef MROCE_FAKE_SYSFS_H
#define MROCE_FAKE_SYSFS_H

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace mroce_test {

class FakeSysfs {
public:
	FakeSysfs()
	{
		char tmpl[] = "/tmp/mroce-sysfs-XXXXXX";
		root_ = mkdtemp(tmpl);
		/* the module is loaded unless a test unloads it */
		write("module/mroce/initstate", "live\n");
	}
	~FakeSysfs() { std::filesystem::remove_all(root_); }
	FakeSysfs(const FakeSysfs &) = delete;

	const std::string &root() const { return root_; }

	void write(const std::string &rel, const std::string &content)
	{
		std::filesystem::path p = root_ + "/" + rel;
		std::filesystem::create_directories(p.parent_path());
		std::ofstream(p) << content;
	}

	void unload_module() { std::filesystem::remove_all(root_ + "/module/mroce"); }

	std::string dev(const std::string &d) const { return "class/infiniband/" + d; }

	/* An RDMA device as the kernel shows it: one port, some GIDs, counters. */
	void add_device(const std::string &name, const std::string &node_desc,
			const std::string &netdev, const std::string &state = "4: ACTIVE")
	{
		std::string d = dev(name);
		write(d + "/node_desc", node_desc + "\n");
		write(d + "/parent", netdev + "\n");
		write(d + "/node_guid", "0200:00ff:fe00:0001\n");
		write(d + "/fw_ver", "0.1\n");
		write(d + "/ports/1/state", state + "\n");
		write(d + "/ports/1/phys_state", "5: LinkUp\n");
		write(d + "/ports/1/rate", "10 Gb/sec (1X QDR)\n");
		write(d + "/ports/1/link_layer", "Ethernet\n");
		write(d + "/ports/1/hw_counters/lifespan", "10\n");
		for (int i = 0; i < 12; i++)
			write(d + "/ports/1/gids/" + std::to_string(i),
			      "0000:0000:0000:0000:0000:0000:0000:0000\n");
	}

	void set_gid(const std::string &name, unsigned i, const std::string &raw,
		     const std::string &type, const std::string &ndev)
	{
		std::string p = dev(name) + "/ports/1/";
		write(p + "gids/" + std::to_string(i), raw + "\n");
		write(p + "gid_attrs/types/" + std::to_string(i), type + "\n");
		write(p + "gid_attrs/ndevs/" + std::to_string(i), ndev + "\n");
	}

	void set_counter(const std::string &name, const std::string &counter, uint64_t v)
	{
		write(dev(name) + "/ports/1/hw_counters/" + counter, std::to_string(v) + "\n");
	}

private:
	std::string root_;
};

} // namespace mroce_test

#endif
