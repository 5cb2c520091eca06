/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What each mroce hw counter means (drivers/infiniband/sw/mroce/
 * mroce_counters.c names them; a unit test checks both lists agree).
 */
#ifndef MROCE_COUNTERS_CATALOG_H
#define MROCE_COUNTERS_CATALOG_H

#include <string_view>
#include <vector>

namespace mroce {

enum class CounterUnit { packets, bytes, events };

struct CounterInfo {
	std::string_view name;		/* sysfs name */
	std::string_view group;		/* traffic, reliability, ... */
	CounterUnit unit;
	std::string_view meaning;
};

/* Every known counter, in the kernel's order. */
const std::vector<CounterInfo> &counter_catalog();
/* nullptr for a name the catalog does not know (a newer module). */
const CounterInfo *counter_info(std::string_view name);

} // namespace mroce

#endif
