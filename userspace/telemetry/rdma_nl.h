/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RDMA core's netlink (NETLINK_RDMA, nldev): the device index the
 * tracepoints carry ("dev") is not in sysfs, so names come from here, the
 * way `rdma dev` gets them. No libmnl: one dump request and a parser that
 * unit tests feed with synthetic messages.
 */
#ifndef MROCE_RDMA_NL_H
#define MROCE_RDMA_NL_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mroce {

struct NlDevice {
	uint32_t index = 0;
	std::string name;
	std::string protocol;	/* "roce", "ib", ... when the kernel says */
};

/*
 * Parse one recv() worth of RDMA_NLDEV_CMD_GET dump messages.
 * Return: 1 at NLMSG_DONE, 0 if more messages follow, -errno for an
 * NLMSG_ERROR or a malformed message.
 */
int parse_nldev_dump(const void *buf, size_t len, std::vector<NlDevice> &out);

/* Every RDMA device in this network namespace's view. */
bool rdma_nl_devices(std::vector<NlDevice> &out, std::string &err);

/* index -> name; empty if netlink is unavailable. */
std::map<uint32_t, std::string> rdma_device_names();

} // namespace mroce

#endif
