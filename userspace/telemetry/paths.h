/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-path and per-connection telemetry as read from the BPF maps: rows,
 * the names of the kernel's enums, and rates between two reads.
 */
#ifndef MROCE_PATHS_H
#define MROCE_PATHS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mroce_tp.h"

namespace mroce {

struct PathRow {
	mroce_path_key key{};
	mroce_path_val val{};
	std::string device;	/* name for key.dev, or "dev<N>" */

	bool has_sample() const { return val.sample_ns != 0; }
	bool has_stats() const { return val.stats_ns != 0; }
	uint64_t last_ns() const;	/* newest update of any kind */
	uint64_t retx_lost() const;	/* chunks lost here and resent, all reasons */
	/* inflight / window; negative when unknown (no sample, no window) */
	double utilisation() const;
};

struct ConnRow {
	mroce_conn_key key{};
	mroce_conn_val val{};
	std::string device;

	bool has_state() const { return val.state_ns != 0; }
	bool has_cc() const { return val.cc_ns != 0; }
	std::string peer() const;	/* "" until a conn_state event was seen */
};

struct Snapshot {
	uint64_t ns = 0;		/* CLOCK_MONOTONIC when read (bpf_ktime_get_ns base) */
	std::vector<PathRow> paths;	/* sorted by device, conn, path */
	std::vector<ConnRow> conns;	/* sorted by device, conn */
	uint64_t events_lost = 0;

	const ConnRow *conn(uint32_t dev, uint32_t conn) const;
	const PathRow *path(const mroce_path_key &k) const;
	void sort();
	/* Fill device names from an index -> name map. */
	void name_devices(const std::map<uint32_t, std::string> &names);
	/* Keep only rows of device `dev` (a name) and/or connection `conn`. */
	void filter(const std::string &dev, int64_t conn);
};

/* Per-second rates of one path between two snapshots. */
struct PathRates {
	double seconds = 0;
	double tx_pps = 0, tx_bps = 0;	/* bits per second */
	double acked_pps = 0, rx_pps = 0;
	double retx_pps = 0, lost_pps = 0, ce_pps = 0;
	double samples_ps = 0;
	double mean_srtt_ns = -1;	/* over the interval; -1 without samples */
};

PathRates path_rates(const PathRow &before, const PathRow &after, double seconds);

std::string path_state_name(uint32_t s);	/* ACTIVE SUSPECT PROBING FAILED */
std::string conn_state_name(uint32_t s);	/* CLOSED REQ_SENT ESTABLISHED FAILED */
std::string retx_reason_name(uint32_t r);	/* sack rto pto nak rekey */
std::string cc_event_name(uint32_t e);		/* ack ecn loss rto hint */
std::string health_event_name(uint32_t e);	/* re-key reasons */

/* An address from the tracepoints' two big-endian halves. */
std::string peer_address(uint64_t hi, uint64_t lo);

/* One line for a ring-buffer event: "mroce0 conn 3 path 1/2: ACTIVE -> SUSPECT". */
std::string describe_event(const mroce_tp_event &e, const std::string &device);

} // namespace mroce

#endif
