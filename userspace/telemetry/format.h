/* SPDX-License-Identifier: GPL-2.0 */
/* Human-readable units and aligned text tables for the CLI. */
#ifndef MROCE_FORMAT_H
#define MROCE_FORMAT_H

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace mroce {

std::string fmt_ns(double ns);		/* 850ns 85.2us 1.20ms 2.50s; "-" if < 0 */
std::string fmt_bytes(double b);	/* 512B 64.0KiB 1.50MiB */
std::string fmt_bits(double bps);	/* 950bit/s 12.3Mbit/s 1.20Gbit/s */
std::string fmt_rate(double per_s);	/* 12/s 1.2k/s 3.4M/s */
std::string fmt_pct(double frac);	/* 0.193 -> 19%; "-" if < 0 */
std::string fmt_fixed(double v, int decimals);

class Table {
public:
	struct Column {
		std::string name;
		bool right;	/* numbers align right */
	};
	explicit Table(std::vector<Column> cols) : cols_(std::move(cols)) {}
	void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
	size_t size() const { return rows_.size(); }
	void print(std::ostream &out, const std::string &indent = "") const;

private:
	std::vector<Column> cols_;
	std::vector<std::vector<std::string>> rows_;
};

} // namespace mroce

#endif
