// SPDX-License-Identifier: GPL-2.0
/* Device discovery and counters from a fake sysfs tree. */
#include <gtest/gtest.h>

#include "counters.h"
#include "fake_sysfs.h"
#include "sysfs.h"

using namespace mroce;
using mroce_test::FakeSysfs;

class SysfsFixture : public ::testing::Test {
protected:
	void SetUp() override
	{
		fs.add_device("mroce0", "mroce", "veth0");
		fs.add_device("rxe0", "rxe", "veth1");
		fs.add_device("mroce1", "mroce", "veth2", "1: DOWN");
		fs.set_gid("mroce0", 0, "fe80:0000:0000:0000:0000:00ff:fe00:0001", "RoCE v2", "veth0");
		fs.set_gid("mroce0", 1, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", "veth0");
		fs.set_gid("mroce0", 10, "fd00:0000:0000:0000:0000:0000:0000:0001", "RoCE v2", "veth0");
	}
	FakeSysfs fs;
};

TEST_F(SysfsFixture, MroceDevices__OnlyNodeDescMroceSorted)
{
	Sysfs s(fs.root());
	EXPECT_EQ(s.rdma_devices(), (std::vector<std::string>{"mroce0", "mroce1", "rxe0"}));
	EXPECT_EQ(s.mroce_devices(), (std::vector<std::string>{"mroce0", "mroce1"}));
	EXPECT_TRUE(s.is_mroce("mroce0"));
	EXPECT_FALSE(s.is_mroce("rxe0"));
	EXPECT_FALSE(s.exists("nope"));
	EXPECT_FALSE(s.exists("../infiniband/mroce0"));
}

TEST_F(SysfsFixture, Device__PortStateNetdevAndGidsInNumericOrder)
{
	Sysfs s(fs.root());
	auto d = s.device("mroce0");
	ASSERT_TRUE(d);
	EXPECT_EQ(d->netdev, "veth0");
	EXPECT_EQ(d->port, 1u);
	EXPECT_EQ(d->state, "ACTIVE");
	EXPECT_EQ(d->phys_state, "LinkUp");
	EXPECT_EQ(d->link_layer, "Ethernet");
	EXPECT_EQ(d->node_guid, "0200:00ff:fe00:0001");
	ASSERT_EQ(d->gids.size(), 3u) << "all-zero GIDs are empty slots";
	EXPECT_EQ(d->gids[0].gid, "fe80::ff:fe00:1");
	EXPECT_EQ(d->gids[1].gid, "::ffff:10.0.0.1");
	EXPECT_EQ(d->gids[1].type, "RoCE v2");
	EXPECT_EQ(d->gids[1].netdev, "veth0");
	EXPECT_EQ(d->gids[2].index, 10u) << "10 sorts after 1, not between 1 and 2";
	EXPECT_EQ(s.device("mroce1")->state, "DOWN");
	EXPECT_FALSE(s.device("missing"));
}

TEST_F(SysfsFixture, Counters__KernelOrderLifespanSkippedUnknownLast)
{
	fs.set_counter("mroce0", "zz_new_counter", 7);
	fs.set_counter("mroce0", "rcvd_pkts", 5);
	fs.set_counter("mroce0", "drop_nomem", 1);
	fs.set_counter("mroce0", "sent_pkts", 18446744073709551615ull);
	Sysfs s(fs.root());
	CounterList c;
	std::string err;
	ASSERT_TRUE(s.counters("mroce0", c, err)) << err;
	ASSERT_EQ(c.size(), 4u);
	EXPECT_EQ(c[0], (std::pair<std::string, uint64_t>{"sent_pkts", 18446744073709551615ull}));
	EXPECT_EQ(c[1].first, "rcvd_pkts");
	EXPECT_EQ(c[2].first, "drop_nomem");
	EXPECT_EQ(c[3].first, "zz_new_counter");
}

TEST_F(SysfsFixture, Counters__MissingDirectoryIsAnError)
{
	Sysfs s(fs.root());
	CounterList c;
	std::string err;
	/* only "lifespan": nothing to read */
	EXPECT_FALSE(s.counters("mroce1", c, err));
	EXPECT_NE(err.find("cannot read the hw counters"), std::string::npos) << err;
	fs.write(fs.dev("bare") + "/node_desc", "mroce\n");
	EXPECT_FALSE(s.counters("bare", c, err));
	EXPECT_NE(err.find("has no hw counters"), std::string::npos) << err;
	EXPECT_FALSE(s.counters("nodev", c, err));
}

TEST(SysfsParse, StripEnum)
{
	EXPECT_EQ(Sysfs::strip_enum("4: ACTIVE"), "ACTIVE");
	EXPECT_EQ(Sysfs::strip_enum("5: LinkUp"), "LinkUp");
	EXPECT_EQ(Sysfs::strip_enum("ACTIVE"), "ACTIVE");
	EXPECT_EQ(Sysfs::strip_enum("x: y"), "x: y");
}

TEST(SysfsParse, CompressGid)
{
	EXPECT_EQ(Sysfs::compress_gid("fe80:0000:0000:0000:0200:00ff:fe00:0001"), "fe80::200:ff:fe00:1");
	EXPECT_EQ(Sysfs::compress_gid("0000:0000:0000:0000:0000:0000:0000:0000"), "");
	EXPECT_EQ(Sysfs::compress_gid("garbage"), "");
}

TEST(Catalog, EveryCounterHasGroupAndMeaning)
{
	for (const auto &c : counter_catalog()) {
		EXPECT_FALSE(c.group.empty()) << c.name;
		EXPECT_GT(c.meaning.size(), 10u) << c.name;
		EXPECT_EQ(counter_info(c.name), &c);
	}
	EXPECT_EQ(counter_info("no_such_counter"), nullptr);
}
