// SPDX-License-Identifier: GPL-2.0
/* JSON writer, unit formatting and text tables. */
#include <gtest/gtest.h>
#include <sstream>

#include "format.h"
#include "json.h"

using namespace mroce;

TEST(Json, Compact__NestedContainersAndCommas)
{
	std::ostringstream o;
	JsonWriter j(o, false);
	j.begin_array();
	j.begin_object().kv("a", 1).kv("b", "x").key("c").begin_array().value(uint64_t{2}).value(3.5).end_array();
	j.key("d").null().kv("e", true).end_object();
	j.begin_object().end_object();
	j.end_array();
	j.finish();
	EXPECT_EQ(o.str(), "[{\"a\":1,\"b\":\"x\",\"c\":[2,3.5],\"d\":null,\"e\":true},{}]\n");
}

TEST(Json, Pretty__IndentsLikeIproute2)
{
	std::ostringstream o;
	JsonWriter j(o, true);
	j.begin_array().begin_object().kv("ifname", "mroce0").key("gids").begin_array().end_array();
	j.end_object().end_array();
	j.finish();
	EXPECT_EQ(o.str(), "[\n    {\n        \"ifname\": \"mroce0\",\n        \"gids\": []\n    }\n]\n");
}

TEST(Json, Escape__QuotesBackslashesAndControlCharacters)
{
	EXPECT_EQ(JsonWriter::escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
}

TEST(Json, Value__NonFiniteDoubleIsNull)
{
	std::ostringstream o;
	JsonWriter j(o, false);
	j.begin_array().value(1.0 / 0.0).value(0.25).end_array();
	EXPECT_EQ(o.str(), "[null,0.25]");
}

TEST(Json, Value__Uint64KeepsEveryDigit)
{
	std::ostringstream o;
	JsonWriter j(o, false);
	j.value(UINT64_MAX);
	EXPECT_EQ(o.str(), "18446744073709551615");
}

TEST(Format, Ns__PicksTheUnit)
{
	EXPECT_EQ(fmt_ns(850), "850ns");
	EXPECT_EQ(fmt_ns(85200), "85.2us");
	EXPECT_EQ(fmt_ns(1200000), "1.20ms");
	EXPECT_EQ(fmt_ns(2.5e9), "2.50s");
	EXPECT_EQ(fmt_ns(-1), "-");
}

TEST(Format, Bytes__BinaryPrefixes)
{
	EXPECT_EQ(fmt_bytes(512), "512B");
	EXPECT_EQ(fmt_bytes(65536), "64.0KiB");
	EXPECT_EQ(fmt_bytes(1.5 * 1024 * 1024), "1.50MiB");
}

TEST(Format, Bits__DecimalPrefixes)
{
	EXPECT_EQ(fmt_bits(950), "950bit/s");
	EXPECT_EQ(fmt_bits(12.3e6), "12.3Mbit/s");
	EXPECT_EQ(fmt_bits(1.2e9), "1.20Gbit/s");
}

TEST(Format, RateAndPercent)
{
	EXPECT_EQ(fmt_rate(0), "0/s");
	EXPECT_EQ(fmt_rate(2.5), "2.50/s");
	EXPECT_EQ(fmt_rate(1234), "1.23k/s");
	EXPECT_EQ(fmt_pct(0.193), "19%");
	EXPECT_EQ(fmt_pct(-1), "-");
}

TEST(Table, Print__AlignsTextLeftAndNumbersRight)
{
	Table t({{"NAME", false}, {"VALUE", true}, {"NOTE", false}});
	t.add({"a", "1", "x"});
	t.add({"longer", "12345", ""});
	std::ostringstream o;
	t.print(o, "  ");
	EXPECT_EQ(o.str(), "  NAME    VALUE  NOTE\n"
			   "  a           1  x\n"
			   "  longer  12345\n");
}
