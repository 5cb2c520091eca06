/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF side of the telemetry: loads mroce_paths.bpf.c (embedded as a
 * libbpf skeleton), attaches its raw_tp programs to the mroce tracepoints
 * and reads the aggregated maps and the event ring buffer.
 *
 * Without the BPF toolchain at build time the class still exists; open()
 * fails with an explanation, so callers need no #ifdefs.
 */
#ifndef MROCE_BPF_SOURCE_H
#define MROCE_BPF_SOURCE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "paths.h"

namespace mroce {

class BpfTelemetry {
public:
	BpfTelemetry();
	~BpfTelemetry();
	BpfTelemetry(const BpfTelemetry &) = delete;
	BpfTelemetry &operator=(const BpfTelemetry &) = delete;

	/* Was this binary built with the BPF programs? */
	static bool built_in();

	/*
	 * Load the programs; attach them unless attach is false (tests drive
	 * them with test_run() instead). A tracepoint this kernel module does
	 * not have is skipped and listed in missing(); failing to attach any
	 * at all is an error.
	 */
	bool open(std::string &err, bool attach = true);
	void close();
	bool is_open() const;

	const std::vector<std::string> &attached() const { return attached_; }
	const std::vector<std::string> &missing() const { return missing_; }

	/* Both maps, unsorted device names ("dev<N>") until name_devices(). */
	bool read(Snapshot &s, std::string &err) const;

	/* Deliver ring-buffer events, waiting at most timeout_ms for the first. */
	int poll_events(int timeout_ms, const std::function<void(const mroce_tp_event &)> &cb);

	/* Forget rows not updated since `before_ns` (CLOCK_MONOTONIC). */
	size_t expire(uint64_t before_ns);

	/* Run program `name` once on synthetic tracepoint arguments. */
	bool test_run(const std::string &name, const std::vector<uint64_t> &args,
		      std::string &err);

	/* libbpf's messages from the last open() (shown on failure or with -d). */
	const std::string &log() const { return log_; }

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
	std::vector<std::string> attached_, missing_;
	std::string log_;
};

/* CLOCK_MONOTONIC in ns: the clock bpf_ktime_get_ns() reads. */
uint64_t monotonic_ns();

} // namespace mroce

#endif
