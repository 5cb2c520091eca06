#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tell the guest how long its vCPU threads waited for a host CPU.

Usage: vcpu_feed.py ROOT_PID RUN_DIR [INTERVAL_S]

make bench (scripts/bench.sh) runs it next to the VM. Every INTERVAL_S
(default 0.05) until ROOT_PID exits or SIGTERM it reads the schedstat of the
vCPU threads of the QEMU under ROOT_PID (on-CPU ns, run-queue wait ns) and
rewrites the file vcpu_feed in the newest RUN_DIR/boot*/ directory, which
the guest sees through its writable 9p share at $MROCE_OUT (no cache: each
open reads the host's file as it is then). One line:

    HOST_MONOTONIC_NS NVCPUS RUN_NS WAIT_NS

RUN_NS and WAIT_NS summed over the vCPU threads since they started.
rdma_bench reads it before and after each 64 B latency ping-pong: the
share WAIT / (WAIT + RUN) of the window is how much of the time the vCPUs
wanted a host CPU they spent queued for one (session 48: a ping-pong only
advances while the vCPU that must act next runs, so such a sample measures
the host's scheduler, not the driver). Both numbers come from the host's
clock: no guest clock is compared with it.

The kernel adds a wait to run_delay when the thread gets its CPU, so a wait
still in progress at a read shows at the next one: a window's share can miss
at most the one wait in progress at each end. The QEMU and its threads are
looked up again (at most once a second) when they are gone: a crashed guest
boots again with a new QEMU and a new boot directory.
"""
import glob
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostload import task_files, tree_ticks, vcpu_threads  # noqa: E402

FEED = "vcpu_feed"


def boot_dir(run):
    """The newest boot directory of RUN (boot1, boot2, ...), None yet."""
    best, num = None, -1
    for d in glob.glob(os.path.join(run, "boot*")):
        m = re.search(r"boot(\d+)$", d)
        if m and os.path.isdir(d) and int(m.group(1)) > num:
            best, num = d, int(m.group(1))
    return best


def read_sched(pid, tids):
    """(run ns, wait ns, threads read) summed over TIDS of PID."""
    run = wait = n = 0
    for text in task_files(pid, "schedstat", tids).values():
        try:
            w = text.split()
            run += int(w[0])
            wait += int(w[1])
            n += 1
        except (IndexError, ValueError):
            continue
    return run, wait, n


def feed_line(mono_ns, n, run, wait):
    return f"{mono_ns} {n} {run} {wait}\n"


def write_feed(d, line):
    """Replace D/vcpu_feed by LINE at once: a reader sees the old or the new
    line, never half of one."""
    tmp = os.path.join(d, f".{FEED}.tmp")
    with open(tmp, "w") as f:
        f.write(line)
    os.replace(tmp, os.path.join(d, FEED))


def main():
    root, run = int(sys.argv[1]), sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    me = os.getpid()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    qemu, tids, d, looked = None, [], None, 0.0
    while not stop and os.path.exists(f"/proc/{root}"):
        now = time.monotonic()
        if (qemu is None or not os.path.exists(f"/proc/{qemu}")) and now - looked >= 1.0:
            looked = now
            qemus = []
            tree_ticks(root, me, qemus)
            qemu = qemus[0] if qemus else None
            tids = list(vcpu_threads(qemu).values()) if qemu else []
            d = boot_dir(run)
        elif qemu and len(tids) < 2 and now - looked >= 1.0:
            # the vCPU threads are named a moment after QEMU starts
            looked = now
            tids = list(vcpu_threads(qemu).values())
            d = boot_dir(run)
        if qemu and tids and d:
            r, w, n = read_sched(qemu, tids)
            if n:
                try:
                    write_feed(d, feed_line(time.monotonic_ns(), n, r, w))
                except OSError:
                    d = None
        time.sleep(interval)


if __name__ == "__main__":
    main()
