/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus text exposition (format 0.0.4) of mroce's telemetry: the hw
 * counters of every device and, when BPF is available, per-path and
 * per-connection metrics. Base units (seconds, bytes, bits per second),
 * counters end in _total. Served as a node_exporter textfile (written
 * atomically) or on a small HTTP endpoint.
 */
#ifndef MROCE_PROM_H
#define MROCE_PROM_H

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "paths.h"
#include "sysfs.h"

namespace mroce {

using Labels = std::vector<std::pair<std::string, std::string>>;

class PromWriter {
public:
	/* type: "counter" or "gauge"; a family's HELP/TYPE is printed once */
	template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
	void add(const std::string &name, const char *type, const std::string &help,
		 const Labels &labels, T value)
	{
		add_sample(name, type, help, labels, std::to_string(value));
	}
	void add(const std::string &name, const char *type, const std::string &help,
		 const Labels &labels, double value);
	std::string text() const;

	/* @label: a label value (quotes escaped too), else HELP text. */
	static std::string escape(const std::string &v, bool label);

private:
	struct Family {
		std::string type, help;
		std::vector<std::string> samples;
	};
	void add_sample(const std::string &name, const char *type, const std::string &help,
			const Labels &labels, const std::string &value);
	std::vector<std::string> order_;
	std::map<std::string, Family> fam_;
};

struct ExportInput {
	std::vector<DeviceInfo> devices;
	std::map<std::string, CounterList> counters;	/* by device name */
	const Snapshot *paths = nullptr;	/* nullptr: BPF unavailable */
	std::string bpf_error;
	uint64_t now_ns = 0;			/* the snapshot's clock, for ages */
	bool module_loaded = true;		/* /sys/module/mroce exists */
};

std::string prometheus_text(const ExportInput &in);

/* Write via a temporary file in the same directory and rename(2). */
bool write_file_atomic(const std::string &path, const std::string &content, std::string &err);

struct ListenAddr {
	std::string host;	/* "" = every address */
	std::string port;
};
/* "HOST:PORT", "[V6ADDR]:PORT" or ":PORT". */
bool parse_listen_addr(const std::string &s, ListenAddr &a, std::string &err);

/* One connection at a time, each request answered and closed. */
class HttpServer {
public:
	~HttpServer();
	bool listen(const ListenAddr &a, std::string &err);
	int port() const;	/* the bound port (useful with port 0) */
	/*
	 * Wait up to timeout_ms for a client and answer it: GET /metrics gets
	 * body(), / a short page, anything else 404/405. Returns whether a
	 * request was served.
	 */
	bool serve_one(int timeout_ms, const std::function<std::string()> &body);

	/* The response to one request (exposed for the unit tests). */
	static std::string respond(const std::string &request,
				   const std::function<std::string()> &body);

private:
	int fd_ = -1;
};

} // namespace mroce

#endif
