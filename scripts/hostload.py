#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How busy the host is apart from one process tree (make bench's VM).

Usage: hostload.py ROOT_PID OUT [INTERVAL]

Every INTERVAL seconds (default 10) until ROOT_PID exits or SIGTERM: the CPU
time the whole host used (/proc/stat) minus the CPU time of ROOT_PID and its
descendants (this sampler excluded), in CPUs, and the 1-minute load average.
A sample above 1 CPU is reported on stderr at once, at most once a minute
(results taken then are suspect). On exit OUT gets one line:
    others_avg=A others_max=M load1_max=L samples=N seconds=S
TCG's load average counts our own vCPU threads, so only "others" tells
whether someone else shared the host.
"""
import os
import signal
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def host_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return sum(v[:3]) + sum(v[5:8])


def tree_ticks(root, skip):
    """CPU ticks of ROOT and its live descendants (children reaped count in
    cutime/cstime of their parent)."""
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rfind(")") + 2:].split()
        # rest[1] = ppid; rest[11..14] = utime stime cutime cstime
        procs[int(d)] = (int(rest[1]), sum(int(x) for x in rest[11:15]))
    kids = {}
    for pid, (ppid, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        if p == skip or p not in procs:
            continue
        total += procs[p][1]
        todo.extend(kids.get(p, []))
    return total


def main():
    root, out = int(sys.argv[1]), sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    me = os.getpid()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    t_start = time.monotonic()
    b0, o0, t0 = host_busy(), tree_ticks(root, me), t_start
    samples = []
    load_max = 0.0
    warned = -60.0
    while not stop:
        end = time.monotonic() + interval
        while not stop and time.monotonic() < end and os.path.exists(f"/proc/{root}"):
            time.sleep(0.5)
        if time.monotonic() - t0 < 1:
            break
        alive = os.path.exists(f"/proc/{root}")
        b1, o1, t1 = host_busy(), tree_ticks(root, me), time.monotonic()
        # A descendant that exited unreaped meanwhile drops out of the tree
        # sum: never count that as someone else's time.
        others = max(0.0, ((b1 - b0) - max(0, o1 - o0)) / HZ / (t1 - t0))
        samples.append(others)
        with open("/proc/loadavg") as f:
            load_max = max(load_max, float(f.read().split()[0]))
        if others > 1.0 and t1 - warned >= 60:
            warned = t1
            print(f"bench: WARNING: other processes use {others:.1f} CPUs of the host now "
                  "(rows measured now are suspect)", file=sys.stderr, flush=True)
        b0, o0, t0 = b1, o1, t1
        if not alive:
            break
    avg = sum(samples) / len(samples) if samples else 0.0
    with open(out, "w") as f:
        f.write(f"others_avg={avg:.2f} others_max={max(samples, default=0.0):.2f} "
                f"load1_max={load_max:.2f} samples={len(samples)} "
                f"seconds={time.monotonic() - t_start:.0f}\n")


if __name__ == "__main__":
    main()
