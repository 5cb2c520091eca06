// SPDX-License-Identifier: GPL-2.0
/* The nldev dump parser, fed with hand-built netlink messages. */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "rdma_nl.h"

using namespace mroce;

namespace {

class Msgs {
public:
	/* start a message of `type`; attributes follow */
	void begin(uint16_t type)
	{
		start_ = buf_.size();
		struct nlmsghdr h = {};
		h.nlmsg_type = type;
		put(&h, sizeof(h));
	}
	void attr(uint16_t type, const void *p, size_t len)
	{
		struct nlattr a;
		a.nla_type = type;
		a.nla_len = static_cast<uint16_t>(NLA_HDRLEN + len);
		put(&a, sizeof(a));
		put(p, len);
		buf_.resize(NLA_ALIGN(buf_.size()));
	}
	void u32(uint16_t type, uint32_t v) { attr(type, &v, 4); }
	void str(uint16_t type, const char *s) { attr(type, s, strlen(s) + 1); }
	void end()
	{
		uint32_t len = static_cast<uint32_t>(buf_.size() - start_);
		memcpy(&buf_[start_], &len, 4);
		buf_.resize(NLMSG_ALIGN(buf_.size()));
	}
	void done()
	{
		begin(NLMSG_DONE);
		int zero = 0;
		put(&zero, 4);
		end();
	}
	void error(int e)
	{
		begin(NLMSG_ERROR);
		struct nlmsgerr err = {};
		err.error = e;
		put(&err, sizeof(err));
		end();
	}
	std::vector<uint8_t> buf_;

private:
	void put(const void *p, size_t n)
	{
		const uint8_t *b = static_cast<const uint8_t *>(p);
		buf_.insert(buf_.end(), b, b + n);
	}
	size_t start_ = 0;
};

const uint16_t GET = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);

} // namespace

TEST(RdmaNl, Dump__TwoDevicesThenDone)
{
	Msgs m;
	m.begin(GET);
	m.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	m.str(RDMA_NLDEV_ATTR_DEV_NAME, "mroce_a");
	m.str(RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce");
	m.end();
	m.begin(GET);
	m.str(RDMA_NLDEV_ATTR_FW_VERSION, "1.0");	/* unknown to us: skipped */
	m.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	m.str(RDMA_NLDEV_ATTR_DEV_NAME, "mroce_b");
	m.end();
	m.done();
	std::vector<NlDevice> d;
	EXPECT_EQ(parse_nldev_dump(m.buf_.data(), m.buf_.size(), d), 1);
	ASSERT_EQ(d.size(), 2u);
	EXPECT_EQ(d[0].index, 3u);
	EXPECT_EQ(d[0].name, "mroce_a");
	EXPECT_EQ(d[0].protocol, "roce");
	EXPECT_EQ(d[1].index, 7u);
	EXPECT_EQ(d[1].name, "mroce_b");
}

TEST(RdmaNl, Dump__MoreToComeWithoutDone)
{
	Msgs m;
	m.begin(GET);
	m.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
	m.str(RDMA_NLDEV_ATTR_DEV_NAME, "x");
	m.end();
	std::vector<NlDevice> d;
	EXPECT_EQ(parse_nldev_dump(m.buf_.data(), m.buf_.size(), d), 0);
	EXPECT_EQ(d.size(), 1u);
}

TEST(RdmaNl, Dump__ErrorMessageReturnsItsErrno)
{
	Msgs m;
	m.error(-EPERM);
	std::vector<NlDevice> d;
	EXPECT_EQ(parse_nldev_dump(m.buf_.data(), m.buf_.size(), d), -EPERM);
}

TEST(RdmaNl, Dump__MalformedLengthsAreRejectedNotOverread)
{
	Msgs m;
	m.begin(GET);
	m.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 1);
	m.end();
	std::vector<NlDevice> d;
	/* message claims more than the buffer holds */
	auto b = m.buf_;
	uint32_t big = 4096;
	memcpy(b.data(), &big, 4);
	EXPECT_EQ(parse_nldev_dump(b.data(), b.size(), d), -EBADMSG);
	/* attribute claims more than its message */
	b = m.buf_;
	uint16_t alen = 200;
	memcpy(b.data() + NLMSG_HDRLEN, &alen, 2);
	EXPECT_EQ(parse_nldev_dump(b.data(), b.size(), d), -EBADMSG);
	/* a name without its NUL and an index too short */
	Msgs n;
	n.begin(GET);
	n.attr(RDMA_NLDEV_ATTR_DEV_NAME, "abc", 3);
	n.attr(RDMA_NLDEV_ATTR_DEV_INDEX, "\1", 1);
	n.end();
	EXPECT_EQ(parse_nldev_dump(n.buf_.data(), n.buf_.size(), d), -EBADMSG);
}

TEST(RdmaNl, Dump__DeviceWithoutIndexIsIgnored)
{
	Msgs m;
	m.begin(GET);
	m.str(RDMA_NLDEV_ATTR_DEV_NAME, "noindex");
	m.end();
	m.done();
	std::vector<NlDevice> d;
	EXPECT_EQ(parse_nldev_dump(m.buf_.data(), m.buf_.size(), d), 1);
	EXPECT_TRUE(d.empty());
}
