#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How busy the host is apart from one process tree (make bench's VM).

Usage: hostload.py ROOT_PID OUT [INTERVAL [TIMELINE]]

Every INTERVAL seconds (default 10) until ROOT_PID exits or SIGTERM: the CPU
time the whole host used (/proc/stat) minus the CPU time of ROOT_PID and its
descendants (this sampler excluded), in CPUs, and the 1-minute load average.
A sample above 1 CPU is reported on stderr at once, at most once a minute
(results taken then are suspect). On exit OUT gets one line:
    others_avg=A others_max=M load1_max=L samples=N seconds=S
TCG's load average counts our own vCPU threads, so only "others" tells
whether someone else shared the host.

With TIMELINE, that file also gets one line per second, "EPOCH OTHERS
LOOP" (the second's end in Unix time, the CPUs the others used in it, and
the host's own speed: the CPU time in us, of this thread, of a fixed loop
of Python, run on each host CPU in turn about 4 times a second; LOOP is
the slowest CPU's median in the second; ~600-650 us on the session-28
host when fast. The host is a VM itself and shows no steal time: a slow
stretch of one of its CPUs, 1.9x for 0.5 s to several s, shows only as
that loop taking longer; docs/testing.md): a build
on the host for a few seconds takes one of the two CPUs the guest's vCPUs
need and turns a sample taken then slow (64 B latency typical 45 -> 306
us, docs/testing.md), which a 10 s average hides. make bench matches each
sample's window against it (scripts/bench.sh).
"""
import os
import signal
import statistics
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
LOOP_N = 20000


def speed_loop():
    """The thread CPU time in us of a fixed piece of work (no sleep, no
    system call inside): longer when the host's CPU itself runs slower,
    not when another process preempts this one."""
    c0 = time.thread_time_ns()
    s = 0
    for i in range(LOOP_N):
        s += i * i
    return (time.thread_time_ns() - c0) / 1000.0


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
    tl = open(sys.argv[4], "w", buffering=1) if len(sys.argv) > 4 else None
    tick = 1.0 if tl else interval
    cpus = sorted(os.sched_getaffinity(0))
    # one summary sample per INTERVAL, made of ticks
    acc_b, acc_o, acc_t = 0, 0, 0.0
    while not stop:
        end = time.monotonic() + tick
        loops = {}
        while not stop and time.monotonic() < end and os.path.exists(f"/proc/{root}"):
            if tl:
                for c in cpus:
                    try:
                        os.sched_setaffinity(0, {c})
                    except OSError:
                        continue
                    loops.setdefault(c, []).append(speed_loop())
            time.sleep(min(0.25 if tl else 0.5, tick))
        if time.monotonic() - t0 < 0.5:
            break
        alive = os.path.exists(f"/proc/{root}")
        b1, o1, t1 = host_busy(), tree_ticks(root, me), time.monotonic()
        # A descendant that exited unreaped meanwhile drops out of the tree
        # sum: never count that as someone else's time.
        db, do = b1 - b0, max(0, o1 - o0)
        if tl:
            loop = (f" {max(statistics.median(v) for v in loops.values()):.0f}"
                    if loops else "")
            tl.write(f"{time.time():.0f} {max(0.0, (db - do) / HZ / (t1 - t0)):.2f}{loop}\n")
        acc_b, acc_o, acc_t = acc_b + db, acc_o + do, acc_t + (t1 - t0)
        b0, o0, t0 = b1, o1, t1
        if acc_t < interval - 0.5 and alive and not stop:
            continue
        if acc_t <= 0:
            break
        others = max(0.0, (acc_b - acc_o) / HZ / acc_t)
        acc_b, acc_o, acc_t = 0, 0, 0.0
        samples.append(others)
        with open("/proc/loadavg") as f:
            load_max = max(load_max, float(f.read().split()[0]))
        if others > 1.0 and t1 - warned >= 60:
            warned = t1
            print(f"bench: WARNING: other processes use {others:.1f} CPUs of the host now "
                  "(rows measured now are suspect)", file=sys.stderr, flush=True)
        if not alive:
            break
    if tl:
        tl.close()
    avg = sum(samples) / len(samples) if samples else 0.0
    with open(out, "w") as f:
        f.write(f"others_avg={avg:.2f} others_max={max(samples, default=0.0):.2f} "
                f"load1_max={load_max:.2f} samples={len(samples)} "
                f"seconds={time.monotonic() - t_start:.0f}\n")


if __name__ == "__main__":
    main()
