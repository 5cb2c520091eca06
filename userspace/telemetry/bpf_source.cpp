// SPDX-License-Identifier: GPL-2.0
#include "bpf_source.h"

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <ctime>
#include <unistd.h>

#ifdef MROCE_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mroce_paths.skel.h"
#endif

namespace mroce {

uint64_t monotonic_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

#ifdef MROCE_HAVE_BPF

namespace {

/* libbpf logs through one global hook; collect into the opener's buffer. */
thread_local std::string *libbpf_sink;

int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];

	if (!libbpf_sink || level == LIBBPF_DEBUG)
		return 0;
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	libbpf_sink->append(buf);
	return n;
}

std::string open_hint(int err)
{
	if (err == EPERM || err == EACCES)
		return " (loading BPF programs needs root: CAP_BPF and CAP_PERFMON)";
	return "";
}

/*
 * Every row of an LRU hash, as Row{key, val}; a row that ages out between
 * get_next_key and the lookup is skipped.
 */
template <typename Row>
void dump_map(int fd, std::vector<Row> &rows)
{
	decltype(Row::key) key{}, next{};
	const void *prev = nullptr;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		Row r;
		r.key = next;
		if (bpf_map_lookup_elem(fd, &next, &r.val) == 0)
			rows.push_back(r);
		key = next;
		prev = &key;
	}
}

} // namespace

struct BpfTelemetry::Impl {
	mroce_paths_bpf *skel = nullptr;
	std::vector<bpf_link *> links;
	ring_buffer *rb = nullptr;
	std::function<void(const mroce_tp_event &)> cb;
};

BpfTelemetry::BpfTelemetry() : impl_(new Impl) {}
BpfTelemetry::~BpfTelemetry() { close(); }
bool BpfTelemetry::built_in() { return true; }
bool BpfTelemetry::is_open() const { return impl_->skel != nullptr; }

void BpfTelemetry::close()
{
	if (impl_->rb)
		ring_buffer__free(impl_->rb);
	impl_->rb = nullptr;
	for (auto *l : impl_->links)
		bpf_link__destroy(l);
	impl_->links.clear();
	if (impl_->skel)
		mroce_paths_bpf::destroy(impl_->skel);
	impl_->skel = nullptr;
	attached_.clear();
	missing_.clear();
}

bool BpfTelemetry::open(std::string &err, bool attach)
{
	close();
	log_.clear();
	libbpf_sink = &log_;
	libbpf_set_print(libbpf_print);

	impl_->skel = mroce_paths_bpf::open();
	int rc = impl_->skel ? mroce_paths_bpf::load(impl_->skel) : -errno;
	if (!impl_->skel || rc) {
		int e = rc ? -rc : errno;
		err = std::string("cannot load the BPF programs: ") + strerror(e) + open_hint(e);
		libbpf_sink = nullptr;
		close();
		return false;
	}
	if (attach) {
		bpf_program *prog;
		int attach_err = 0;
		bpf_object__for_each_program(prog, impl_->skel->obj) {
			/* SEC("raw_tp/<tracepoint>"): the program is named after it */
			const char *tp = bpf_program__name(prog);
			bpf_link *l = bpf_program__attach_raw_tracepoint(prog, tp);
			if (!l) {
				if (errno != ENOENT && !attach_err)
					attach_err = errno;
				missing_.push_back(tp);
				continue;
			}
			impl_->links.push_back(l);
			attached_.push_back(tp);
		}
		if (attached_.empty()) {
			bool loaded = access("/sys/module/mroce", F_OK) == 0;
			err = loaded ? std::string("cannot attach to any mroce tracepoint: ") +
					       strerror(attach_err ? attach_err : ENOENT) +
					       open_hint(attach_err)
				     : "the mroce module is not loaded (modprobe mroce), so there are "
				       "no mroce tracepoints to attach to";
			libbpf_sink = nullptr;
			close();
			return false;
		}
	}
	impl_->rb = ring_buffer__new(
		bpf_map__fd(impl_->skel->maps.mroce_events),
		[](void *ctx, void *data, size_t size) -> int {
			auto *self = static_cast<Impl *>(ctx);
			mroce_tp_event e{};
			memcpy(&e, data, std::min(size, sizeof(e)));
			if (self->cb)
				self->cb(e);
			return 0;
		},
		impl_.get(), nullptr);
	libbpf_sink = nullptr;
	if (!impl_->rb) {
		err = std::string("cannot set up the event ring buffer: ") + strerror(errno);
		close();
		return false;
	}
	return true;
}

bool BpfTelemetry::read(Snapshot &s, std::string &err) const
{
	s = Snapshot();
	if (!impl_->skel) {
		err = "BPF telemetry is not open";
		return false;
	}
	s.ns = monotonic_ns();
	dump_map(bpf_map__fd(impl_->skel->maps.mroce_paths), s.paths);
	dump_map(bpf_map__fd(impl_->skel->maps.mroce_conns), s.conns);
	s.events_lost = impl_->skel->bss->mroce_events_lost;
	s.sort();
	return true;
}

int BpfTelemetry::poll_events(int timeout_ms,
			      const std::function<void(const mroce_tp_event &)> &cb)
{
	if (!impl_->rb) {
		if (timeout_ms > 0)
			usleep(static_cast<useconds_t>(timeout_ms) * 1000);
		return 0;
	}
	impl_->cb = cb;
	int n = ring_buffer__poll(impl_->rb, timeout_ms);
	impl_->cb = nullptr;
	return n;
}

size_t BpfTelemetry::expire(uint64_t before_ns)
{
	size_t n = 0;

	if (!impl_->skel)
		return 0;
	Snapshot s;
	std::string err;
	if (!read(s, err))
		return 0;
	int pfd = bpf_map__fd(impl_->skel->maps.mroce_paths);
	for (const auto &p : s.paths)
		if (p.last_ns() < before_ns && bpf_map_delete_elem(pfd, &p.key) == 0)
			n++;
	int cfd = bpf_map__fd(impl_->skel->maps.mroce_conns);
	for (const auto &c : s.conns)
		if (std::max(c.val.state_ns, c.val.cc_ns) < before_ns &&
		    bpf_map_delete_elem(cfd, &c.key) == 0)
			n++;
	return n;
}

bool BpfTelemetry::test_run(const std::string &name, const std::vector<uint64_t> &args,
			    std::string &err)
{
	if (!impl_->skel) {
		err = "not open";
		return false;
	}
	bpf_program *prog = bpf_object__find_program_by_name(impl_->skel->obj, name.c_str());
	if (!prog) {
		err = "no program " + name;
		return false;
	}
	std::vector<uint64_t> ctx(args);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx.data(),
		    .ctx_size_in = static_cast<__u32>(ctx.size() * sizeof(uint64_t)));
	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts)) {
		err = "test run of " + name + ": " + strerror(errno);
		return false;
	}
	return true;
}

#else /* !MROCE_HAVE_BPF */

struct BpfTelemetry::Impl {};

namespace {
const char no_bpf[] = "this mroce was built without BPF support (clang, bpftool or libbpf-dev "
		      "were missing at build time): per-path telemetry is unavailable";
}

BpfTelemetry::BpfTelemetry() : impl_(new Impl) {}
BpfTelemetry::~BpfTelemetry() = default;
bool BpfTelemetry::built_in() { return false; }
bool BpfTelemetry::is_open() const { return false; }
void BpfTelemetry::close() {}

bool BpfTelemetry::open(std::string &err, bool)
{
	err = no_bpf;
	return false;
}

bool BpfTelemetry::read(Snapshot &, std::string &err) const
{
	err = no_bpf;
	return false;
}

int BpfTelemetry::poll_events(int, const std::function<void(const mroce_tp_event &)> &)
{
	return 0;
}

size_t BpfTelemetry::expire(uint64_t) { return 0; }

bool BpfTelemetry::test_run(const std::string &, const std::vector<uint64_t> &, std::string &err)
{
	err = no_bpf;
	return false;
}

#endif

} // namespace mroce
