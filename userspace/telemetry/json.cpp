// SPDX-License-Identifier: GPL-2.0
#include "json.h"

#include <cmath>
#include <cstdio>

namespace mroce {

std::string JsonWriter::escape(std::string_view s)
{
	std::string r;
	r.reserve(s.size() + 2);
	for (unsigned char c : s) {
		switch (c) {
		case '"': r += "\\\""; break;
		case '\\': r += "\\\\"; break;
		case '\n': r += "\\n"; break;
		case '\r': r += "\\r"; break;
		case '\t': r += "\\t"; break;
		default:
			if (c < 0x20) {
				char buf[8];
				snprintf(buf, sizeof(buf), "\\u%04x", c);
				r += buf;
			} else {
				r += static_cast<char>(c);
			}
		}
	}
	return r;
}

void JsonWriter::newline()
{
	if (!pretty_)
		return;
	out_ << '\n';
	for (size_t i = 0; i < stack_.size(); i++)
		out_ << "    ";
}

void JsonWriter::before_value()
{
	if (after_key_) {
		after_key_ = false;
		return;
	}
	if (stack_.empty())
		return;
	if (stack_.back())
		out_ << ',';
	stack_.back() = true;
	newline();
}

JsonWriter &JsonWriter::begin_object()
{
	before_value();
	out_ << '{';
	stack_.push_back(false);
	return *this;
}

void JsonWriter::close(char c)
{
	bool had = stack_.back();

	stack_.pop_back();
	if (had)
		newline();
	out_ << c;
}

JsonWriter &JsonWriter::end_object()
{
	close('}');
	return *this;
}

JsonWriter &JsonWriter::begin_array()
{
	before_value();
	out_ << '[';
	stack_.push_back(false);
	return *this;
}

JsonWriter &JsonWriter::end_array()
{
	close(']');
	return *this;
}

JsonWriter &JsonWriter::key(std::string_view k)
{
	before_value();
	out_ << '"' << escape(k) << "\":";
	if (pretty_)
		out_ << ' ';
	after_key_ = true;
	return *this;
}

JsonWriter &JsonWriter::value(std::string_view s)
{
	before_value();
	out_ << '"' << escape(s) << '"';
	return *this;
}

JsonWriter &JsonWriter::value(double v)
{
	before_value();
	if (!std::isfinite(v)) {
		out_ << "null";
		return *this;
	}
	char buf[32];
	snprintf(buf, sizeof(buf), "%.9g", v);
	out_ << buf;
	return *this;
}

JsonWriter &JsonWriter::value(bool v)
{
	before_value();
	out_ << (v ? "true" : "false");
	return *this;
}

JsonWriter &JsonWriter::null()
{
	before_value();
	out_ << "null";
	return *this;
}

void JsonWriter::finish()
{
	out_ << '\n';
}

} // namespace mroce
