// SPDX-License-Identifier: GPL-2.0
#include "rdma_nl.h"

#include <cerrno>
#include <cstring>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace mroce {

namespace {

/* Attributes of one message; strings must be NUL-terminated in their payload. */
int parse_dev_attrs(const uint8_t *p, size_t len, NlDevice &d, bool &have_index)
{
	while (len >= NLA_HDRLEN) {
		struct nlattr a;
		memcpy(&a, p, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len)
			return -EBADMSG;
		const uint8_t *pl = p + NLA_HDRLEN;
		size_t plen = a.nla_len - NLA_HDRLEN;
		switch (a.nla_type & NLA_TYPE_MASK) {
		case RDMA_NLDEV_ATTR_DEV_INDEX:
			if (plen < 4)
				return -EBADMSG;
			memcpy(&d.index, pl, 4);
			have_index = true;
			break;
		case RDMA_NLDEV_ATTR_DEV_NAME:
			d.name.assign(reinterpret_cast<const char *>(pl), strnlen(reinterpret_cast<const char *>(pl), plen));
			break;
		case RDMA_NLDEV_ATTR_DEV_PROTOCOL:
			d.protocol.assign(reinterpret_cast<const char *>(pl), strnlen(reinterpret_cast<const char *>(pl), plen));
			break;
		default:
			break;
		}
		size_t step = NLA_ALIGN(a.nla_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

} // namespace

int parse_nldev_dump(const void *buf, size_t len, std::vector<NlDevice> &out)
{
	const uint8_t *p = static_cast<const uint8_t *>(buf);

	while (len >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr h;
		memcpy(&h, p, sizeof(h));
		if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len)
			return -EBADMSG;
		if (h.nlmsg_type == NLMSG_DONE)
			return 1;
		if (h.nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e;
			if (h.nlmsg_len < NLMSG_LENGTH(sizeof(e)))
				return -EBADMSG;
			memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
			return e.error ? e.error : 1;
		}
		if (h.nlmsg_type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET)) {
			NlDevice d;
			bool have_index = false;
			int rc = parse_dev_attrs(p + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN, d,
						 have_index);
			if (rc)
				return rc;
			if (have_index && !d.name.empty())
				out.push_back(std::move(d));
		}
		size_t step = NLMSG_ALIGN(h.nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

bool rdma_nl_devices(std::vector<NlDevice> &out, std::string &err)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0) {
		err = std::string("rdma netlink: ") + strerror(errno);
		return false;
	}
	struct timeval tv = {2, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

	struct nlmsghdr req = {};
	req.nlmsg_len = NLMSG_LENGTH(0);
	req.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
	req.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nlmsg_seq = 1;
	struct sockaddr_nl sa = {};
	sa.nl_family = AF_NETLINK;
	if (sendto(fd, &req, req.nlmsg_len, 0, reinterpret_cast<struct sockaddr *>(&sa),
		   sizeof(sa)) < 0) {
		err = std::string("rdma netlink: ") + strerror(errno);
		close(fd);
		return false;
	}
	std::vector<uint8_t> buf(32768);
	int rc = 0;
	while (rc == 0) {
		ssize_t n = recv(fd, buf.data(), buf.size(), 0);
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			break;
		}
		rc = parse_nldev_dump(buf.data(), static_cast<size_t>(n), out);
	}
	close(fd);
	if (rc < 0) {
		err = std::string("rdma netlink: ") + strerror(-rc);
		return false;
	}
	return true;
}

std::map<uint32_t, std::string> rdma_device_names()
{
	std::vector<NlDevice> devs;
	std::string err;
	std::map<uint32_t, std::string> m;

	if (rdma_nl_devices(devs, err))
		for (const auto &d : devs)
			m[d.index] = d.name;
	return m;
}

} // namespace mroce
