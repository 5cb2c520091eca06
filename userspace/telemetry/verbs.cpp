// SPDX-License-Identifier: GPL-2.0
#include "verbs.h"

#ifdef MROCE_HAVE_VERBS
#include <cerrno>
#include <cstring>
#include <infiniband/verbs.h>
#endif

namespace mroce {

#ifdef MROCE_HAVE_VERBS
namespace {
unsigned mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}
} // namespace

bool query_port_mtu(const std::string &dev, unsigned port, PortMtu &mtu,
		    std::string &err)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	bool ok = false;

	if (!list) {
		err = std::string("ibv_get_device_list: ") + strerror(errno);
		return false;
	}
	err = "libibverbs does not list " + dev + " (no rxe provider?)";
	for (int i = 0; i < n; i++) {
		if (dev != ibv_get_device_name(list[i]))
			continue;
		struct ibv_context *ctx = ibv_open_device(list[i]);
		if (!ctx) {
			err = "ibv_open_device " + dev + ": " + strerror(errno);
			break;
		}
		struct ibv_port_attr pa;
		int rc = ibv_query_port(ctx, static_cast<uint8_t>(port), &pa);
		if (rc) {
			err = "ibv_query_port " + dev + ": " + strerror(rc);
		} else {
			mtu.active = mtu_bytes(pa.active_mtu);
			mtu.max = mtu_bytes(pa.max_mtu);
			ok = true;
		}
		ibv_close_device(ctx);
		break;
	}
	ibv_free_device_list(list);
	return ok;
}
#else
bool query_port_mtu(const std::string &, unsigned, PortMtu &, std::string &err)
{
	err = "built without libibverbs";
	return false;
}
#endif

} // namespace mroce
