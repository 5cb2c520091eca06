/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small streaming JSON writer with iproute2's two shapes: compact on one
 * line (-j) or indented (-j -p). Keys and values are written in call order;
 * the writer inserts commas and, when pretty, newlines and indentation.
 */
#ifndef MROCE_JSON_H
#define MROCE_JSON_H

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace mroce {

class JsonWriter {
public:
	JsonWriter(std::ostream &out, bool pretty) : out_(out), pretty_(pretty) {}

	JsonWriter &begin_object();
	JsonWriter &end_object();
	JsonWriter &begin_array();
	JsonWriter &end_array();
	JsonWriter &key(std::string_view k);
	JsonWriter &value(std::string_view s);
	JsonWriter &value(const char *s) { return value(std::string_view(s)); }
	/* every integer type (uint64_t and __u64 differ in C++) */
	template <typename T,
		  typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>>
	JsonWriter &value(T v)
	{
		before_value();
		out_ << +v;
		return *this;
	}
	JsonWriter &value(double v);
	JsonWriter &value(bool v);
	JsonWriter &null();

	/* key + value in one call */
	template <typename T> JsonWriter &kv(std::string_view k, const T &v)
	{
		key(k);
		return value(v);
	}

	/* Ends the document: a newline after the outermost value. */
	void finish();

	static std::string escape(std::string_view s);

private:
	void before_value();
	void newline();
	void close(char c);

	std::ostream &out_;
	bool pretty_;
	/* per open container: has it got an element yet */
	std::vector<bool> stack_;
	bool after_key_ = false;
};

} // namespace mroce

#endif
