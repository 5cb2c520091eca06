#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mark the benchmark samples that shared the host with someone else.

Usage: hostload_mark.py TIMELINE CSV...

TIMELINE is hostload.py's per-second record ("EPOCH OTHERS [LOOP]": the CPUs
that processes other than the bench's VM used in the second ending at
EPOCH, and the us its fixed speed loop took then).
Each CSV is a per-sample file with t_start and t_end columns (Unix seconds,
the guest's clock, which QEMU starts from the host's); it gets a column
host_others_cpus: the most the others used in any second of the sample's
window (one second of slack each side). Under TCG the guest's two vCPUs
need both host CPUs: a sample during which a build took one of them is
slow for that reason alone (docs/testing.md), so the bench lists those
samples on stdout (SUSPECT above 0.5 CPUs). With LOOP values, a second
column host_loop_us: the median loop time over the same window (the host's
CPU speed during the sample: higher = slower; lat_dist.py verdict). With
VWAIT values (hostload.py: the share of a second the VM's vCPU threads
waited for a host CPU), a third column vcpu_wait: their mean over the
seconds inside the window (~0.5: both vCPU threads on one host CPU, the
guest's slow mode; docs/testing.md).
"""
import csv
import statistics
import sys

SUSPECT = 0.5


def main():
    line = []
    loops = []
    waits = []
    with open(sys.argv[1]) as f:
        for ln in f:
            w = ln.split()
            if len(w) in (2, 3, 4):
                line.append((int(w[0]), float(w[1])))
            if len(w) in (3, 4):
                loops.append((int(w[0]), float(w[2])))
            if len(w) == 4:
                waits.append((int(w[0]), float(w[3])))
    for path in sys.argv[2:]:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        if not rows or "t_start" not in rows[0]:
            continue
        head = rows[0]
        a, b = head.index("t_start"), head.index("t_end")
        if "host_others_cpus" in head:
            continue
        head.append("host_others_cpus")
        if loops:
            head.append("host_loop_us")
        if waits:
            head.append("vcpu_wait")
        bad = []
        for r in rows[1:]:
            try:
                t0, t1 = int(r[a]), int(r[b])
            except (ValueError, IndexError):
                r.extend([""] * (1 + bool(loops) + bool(waits)))
                continue
            # the second ending at EPOCH covers [EPOCH - 1, EPOCH]; it
            # counts if it touches the window widened by a second each side
            seen = [o for t, o in line if t0 <= t <= t1 + 2]
            m = max(seen) if seen else None
            r.append("" if m is None else f"{m:.2f}")
            if loops:
                lv = [v for t, v in loops if t0 <= t <= t1 + 2]
                r.append(f"{statistics.median(lv):.0f}" if lv else "")
            if waits:
                # inside the window only: its edges are the guest's setup
                wv = [v for t, v in waits if t0 < t <= t1]
                r.append(f"{statistics.mean(wv):.2f}" if wv else "")
            if m is not None and m > SUSPECT:
                bad.append(f"{' '.join(r[:5])} ({m:.2f} CPUs)")
        with open(path, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)
        name = path.rsplit("/", 1)[-1]
        if bad:
            print(f"bench: {name}: {len(bad)} of {len(rows) - 1} samples ran while other host "
                  f"processes used over {SUSPECT} CPUs (SUSPECT; column host_others_cpus): "
                  + "; ".join(bad))
        else:
            print(f"bench: {name}: no sample shared the host with other processes "
                  f"(over {SUSPECT} CPUs)")


if __name__ == "__main__":
    main()
