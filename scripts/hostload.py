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
LOOP [VWAIT]" (the second's end in Unix time, the CPUs the others used in it, and
the host's own speed: the CPU time in us, of this thread, of a fixed loop
of Python, run on each host CPU in turn about 4 times a second; LOOP is
the slowest CPU's median in the second; ~600-650 us on the session-28
host when fast. The host is a VM itself and shows no steal time: a slow
stretch of one of its CPUs, 1.9x for 0.5 s to several s, shows only as
that loop taking longer; docs/testing.md; VWAIT: the mean share of the
second the QEMU's vCPU threads ("CPU n/TCG") waited in a host run queue,
from their schedstat: ~0.5 when both share one host CPU, the guest's slow
mode of session 43, near 0 when each has a CPU): a build
on the host for a few seconds takes one of the two CPUs the guest's vCPUs
need and turns a sample taken then slow (64 B latency typical 45 -> 306
us, docs/testing.md), which a 10 s average hides. make bench matches each
sample's window against it (scripts/bench.sh). Each second in which the
others used over OTHERS_NAMED CPUs also gets a line in TIMELINE's
.others file (hostload.others): "EPOCH OTHERS name[pid]=CPUs ..." for the
three busiest processes outside the tree (a process that reaped children
counts their time: make for its compilers).
"""
import os
import re
import signal
import statistics
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
# a second in which the others used more CPUs than this names them
OTHERS_NAMED = 0.3
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


def tree_ticks(root, skip, qemus=None, others=None):
    """CPU ticks of ROOT and its live descendants (children reaped count in
    cutime/cstime of their parent); the QEMUs among them into qemus, every
    other process into others ({pid: (name, ticks)})."""
    qemus = [] if qemus is None else qemus
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
        procs[int(d)] = (int(rest[1]), sum(int(x) for x in rest[11:15]),
                         s[s.find("(") + 1:s.rfind(")")])
    kids = {}
    for pid, (ppid, _, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    qemus.clear()
    while todo:
        p = todo.pop()
        if p == skip or p not in procs:
            continue
        total += procs[p][1]
        if procs[p][2].startswith("qemu-system"):
            qemus.append(p)
        todo.extend(kids.get(p, []))
    if others is not None:
        mine = set(tree_pids(root, skip, kids))
        others.clear()
        others.update((p, (v[2], v[1])) for p, v in procs.items() if p not in mine)
    return total


def tree_pids(root, skip, kids):
    todo, out = [root], []
    while todo:
        p = todo.pop()
        if p == skip:
            continue
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def top_others(o0, o1, secs, n=3):
    """The n processes outside the tree that used the most CPU between two
    snapshots (tree_ticks' others): [(CPUs, pid, name)], busiest first."""
    used = [((t - o0[p][1]) / HZ / secs, p, name) for p, (name, t) in o1.items()
            if p in o0 and t > o0[p][1]] if secs > 0 else []
    return sorted(used, reverse=True)[:n]


VCPU_THREAD = re.compile(r"CPU (\d+)/TCG$")


def task_files(pid, leaf, tids=None):
    """{tid: text of /proc/pid/task/tid/leaf} for the threads tids (all of
    pid's by default) whose file could be read; {} for a gone process.
    vcpu_threads(), vcpu_wait() and qemuprof's sched_snapshot() read it."""
    if tids is None:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return {}
    out = {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/{leaf}") as f:
                out[str(tid)] = f.read()
        except OSError:
            continue
    return out


def vcpu_threads(pid):
    """{vCPU index: thread id} of QEMU process pid (threads are named with
    -name debug-threads=on: "CPU 0/TCG"); vmrun.py's --pin uses it too."""
    found = {}
    for tid, comm in task_files(pid, "comm").items():
        m = VCPU_THREAD.match(comm.strip())
        if m:
            found[int(m.group(1))] = int(tid)
    return found


def vcpu_wait(pids):
    """{tid: ns waited in a host run queue so far} of the vCPU threads of
    the QEMUs pids (/proc/PID/task/TID/schedstat: on-CPU ns, run-queue
    wait ns, slices)."""
    out = {}
    for pid in pids:
        stats = task_files(pid, "schedstat", vcpu_threads(pid).values())
        for tid, text in stats.items():
            try:
                out[int(tid)] = int(text.split()[1])
            except (IndexError, ValueError):
                continue
    return out


def wait_share(w0, w1, secs):
    """The vCPU threads' mean share of secs spent waiting for a host CPU
    (threads in both snapshots only), None without any."""
    both = [w1[t] - w0[t] for t in w1 if t in w0]
    if not both or secs <= 0:
        return None
    return max(0.0, sum(both) / len(both) / 1e9 / secs)


def main():
    root, out = int(sys.argv[1]), sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    me = os.getpid()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    t_start = time.monotonic()
    qemus, p0, p1 = [], {}, {}
    b0, o0, t0 = host_busy(), tree_ticks(root, me, qemus, p0), t_start
    w0 = vcpu_wait(qemus)
    samples = []
    load_max = 0.0
    warned = -60.0
    tl = open(sys.argv[4], "w", buffering=1) if len(sys.argv) > 4 else None
    # who the others were: TIMELINE's name with .others for .timeline
    ol = (open(re.sub(r"(\.timeline)?$", ".others", sys.argv[4], count=1), "w", buffering=1)
          if tl else None)
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
        b1, o1, t1 = host_busy(), tree_ticks(root, me, qemus, p1), time.monotonic()
        w1 = vcpu_wait(qemus)
        # A descendant that exited unreaped meanwhile drops out of the tree
        # sum: never count that as someone else's time.
        db, do = b1 - b0, max(0, o1 - o0)
        if tl:
            loop = (f" {max(statistics.median(v) for v in loops.values()):.0f}"
                    if loops else "")
            vw = wait_share(w0, w1, t1 - t0)
            if loops and vw is not None:
                loop += f" {vw:.2f}"
            busy = max(0.0, (db - do) / HZ / (t1 - t0))
            tl.write(f"{time.time():.0f} {busy:.2f}{loop}\n")
            if busy > OTHERS_NAMED:
                top = top_others(p0, p1, t1 - t0)
                ol.write(f"{time.time():.0f} {busy:.2f} "
                         + " ".join(f"{name.replace(' ', '_')}[{pid}]={c:.2f}"
                                    for c, pid, name in top) + "\n")
        acc_b, acc_o, acc_t = acc_b + db, acc_o + do, acc_t + (t1 - t0)
        b0, o0, t0, w0 = b1, o1, t1, w1
        p0, p1 = p1, p0
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
        ol.close()
    avg = sum(samples) / len(samples) if samples else 0.0
    with open(out, "w") as f:
        f.write(f"others_avg={avg:.2f} others_max={max(samples, default=0.0):.2f} "
                f"load1_max={load_max:.2f} samples={len(samples)} "
                f"seconds={time.monotonic() - t_start:.0f}\n")


if __name__ == "__main__":
    main()
