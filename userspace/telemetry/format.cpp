// SPDX-License-Identifier: GPL-2.0
#include "format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mroce {

std::string fmt_fixed(double v, int decimals)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return buf;
}

namespace {
/* Three significant digits, the way ping and tc print. */
std::string sig3(double v)
{
	if (v >= 100)
		return fmt_fixed(v, 0);
	if (v >= 10)
		return fmt_fixed(v, 1);
	return fmt_fixed(v, 2);
}

std::string scaled(double v, double base, const char *const *units, int n)
{
	int i = 0;
	while (i < n - 1 && std::fabs(v) >= base) {
		v /= base;
		i++;
	}
	return (i == 0 ? fmt_fixed(v, 0) : sig3(v)) + units[i];
}
} // namespace

std::string fmt_ns(double ns)
{
	if (ns < 0 || !std::isfinite(ns))
		return "-";
	if (ns < 1000)
		return fmt_fixed(ns, 0) + "ns";
	if (ns < 1e6)
		return sig3(ns / 1e3) + "us";
	if (ns < 1e9)
		return sig3(ns / 1e6) + "ms";
	return sig3(ns / 1e9) + "s";
}

std::string fmt_bytes(double b)
{
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	return scaled(b, 1024, u, 5);
}

std::string fmt_bits(double bps)
{
	static const char *const u[] = {"bit/s", "Kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
	return scaled(bps, 1000, u, 5);
}

std::string fmt_rate(double per_s)
{
	static const char *const u[] = {"/s", "k/s", "M/s", "G/s"};
	if (per_s > 0 && per_s < 10)
		return sig3(per_s) + "/s";
	return scaled(per_s, 1000, u, 4);
}

std::string fmt_pct(double frac)
{
	if (frac < 0 || !std::isfinite(frac))
		return "-";
	return fmt_fixed(frac * 100, 0) + "%";
}

void Table::print(std::ostream &out, const std::string &indent) const
{
	std::vector<size_t> w(cols_.size());
	for (size_t i = 0; i < cols_.size(); i++)
		w[i] = cols_[i].name.size();
	for (const auto &r : rows_)
		for (size_t i = 0; i < r.size() && i < w.size(); i++)
			w[i] = std::max(w[i], r[i].size());

	auto line = [&](const std::vector<std::string> &cells) {
		std::string s = indent;
		for (size_t i = 0; i < cols_.size(); i++) {
			const std::string &c = i < cells.size() ? cells[i] : std::string();
			std::string pad(w[i] - std::min(w[i], c.size()), ' ');
			bool last = i + 1 == cols_.size();
			s += cols_[i].right ? pad + c : (last ? c : c + pad);
			if (!last)
				s += "  ";
		}
		while (!s.empty() && s.back() == ' ')
			s.pop_back();
		out << s << '\n';
	};
	std::vector<std::string> head;
	for (const auto &c : cols_)
		head.push_back(c.name);
	line(head);
	for (const auto &r : rows_)
		line(r);
}

} // namespace mroce
