/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What only the verbs query knows: the port's active MTU is not in sysfs.
 * Works through rdma-core's rxe provider (mroce speaks its ABI). Built
 * only when libibverbs is present; otherwise the query reports why not.
 */
#ifndef MROCE_VERBS_H
#define MROCE_VERBS_H

#include <string>

namespace mroce {

struct PortMtu {
	unsigned active = 0;	/* bytes */
	unsigned max = 0;
};

bool query_port_mtu(const std::string &dev, unsigned port, PortMtu &mtu,
		    std::string &err);

} // namespace mroce

#endif
