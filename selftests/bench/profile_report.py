#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""profile_bench's report: per driver and workload, the perf samples per
iteration and per packet, the top symbols (self and children), and where
the busy samples went by category, as a markdown document.

Inputs: RUN.meta files (key=value: driver, workload, iterations, freq,
seconds, driver_pkts, veth_frames, perftest: perftest's result line or
fio's "N IOPS", nvme_queues) next to RUN.report and RUN.comm, the outputs
of `perf report --stdio -n -g none -t '|'` with --children --sort dso,sym
(its Samples column counts self samples) and --no-children --sort comm,
and RUN.stat0 and RUN.stat1: /proc/stat's cpu and ctxt lines, a line "softirqs",
then /proc/softirqs, a line "hw_counters", then "NAME: dev0 dev1" of both
devices' hw counters, at the start and the end of the window.
--src is the module's source directory: the names of mroce's protocol-core
functions (core/*.c) make the "core/" category, and every module function
is placed in its source file.

Usage: profile_report.py --src DIR --out FILE RUN.meta...
"""

import argparse
import collections
import glob
import os
import re
import sys

DRIVER_MODULES = {"mroce", "rdma_rxe"}
RDMA_CORE_MODULES = {"ib_core", "ib_uverbs", "rdma_cm", "ib_cm", "iw_cm"}

# Kernel symbols by category, first match wins. cpu-clock samples are taken
# in a timer interrupt: time spent with interrupts off is charged to where
# they come back on (spin_unlock_irqrestore, local_bh_enable, ...).
KERNEL_CATEGORIES = [
    ("idle", r"(^|_)idle|safe_halt|mwait|^do_idle$|^cpu_startup_entry$"),
    ("copy/csum", r"memcpy|memmove|memset|memcmp|copy|csum|crc|^rep_|clear_page"),
    ("timers/clock", r"hrtimer|timer|^clock|ktime|tick|tsc|hpet|jiffies|timekeeping"
                     r"|clockevent|lapic|sched_clock|nohz"),
    ("locks", r"spin_lock|spin_unlock|spin_trylock|queued_|_raw_|mutex|rwsem|^lock_sock"
              r"|^release_sock|read_lock|write_lock"),
    ("sched", r"schedule|^pick_|enqueue|dequeue|update_curr|wake_up|ttwu|task_switch"
              r"|context_switch|switch_to|switch_mm|load_balance|^psi_|select_task|update_load"
              r"|update_cfs|update_rq|activate_task|resched|sched|cpuacct|^account_|vtime"
              r"|^kthread|worker_thread|process_one_work|^__queue_work|^queue_work"),
    ("net", r"udp|^ip_|^ip6|ipv4|ipv6|^__ip|veth|skb|netif|napi|net_rx|net_tx|^sock|^sk_"
            r"|^__sk|inet|^nf_|netfilter|neigh|qdisc|^eth_|gro|dev_queue|dev_hard|^__dev_"
            r"|^dev_|fib|^rt_|^dst_|netem|^tc_|^sch_|xmit|^raw_|icmp|^arp|process_backlog"
            r"|^rps_|netdev|^__napi|^net_|^__netif|^validate_xmit|^nexthop"),
    ("rdma core", r"^ib_|^rdma_|uverbs"),
    ("mm", r"kmem_cache|kmalloc|kfree|slab|slub|^page_|alloc_pages|free_pages|__free_page"
           r"|get_page|put_page|folio|^mm_|^vm_|pin_user|gup|get_user_pages|memcg|mempool"
           r"|^__alloc|^alloc_|^free_|pfn|^__page|lru_|^__mod_|vmalloc|^__get_free"),
    ("entry/irq/syscall", r"^entry_|syscall|^__x64_sys|^do_sys|^ksys_|^__sys|irq|^asm_"
                          r"|exit_to_user|^sysvec|^__sysvec|^common_interrupt|softirq"
                          r"|^ret_from|iret|^error_entry|fpu|fpregs|^__fdget|^fput|^fget"
                          r"|^__fget|^ep_|^do_epoll|poll|^x64_sys|^do_syscall"),
]
KERNEL_RES = [(name, re.compile(rx)) for name, rx in KERNEL_CATEGORIES]

# Column order of the category tables: busy samples only (idle apart).
CATEGORIES = ["driver", "core/", "rdma core", "net", "copy/csum", "timers/clock", "locks",
              "sched", "mm", "entry/irq/syscall", "other kernel", "user"]


def base_name(sym):
    """A compiler clone (foo.isra.0, foo.constprop.0, foo.cold) is foo."""
    return sym.split(".", 1)[0]


def c_functions(path):
    """The functions a kernel-style C file defines: a line at column 0
    with a return type and NAME(, whose declaration ends at a '{' line, not
    at a ';'."""
    defs = []
    head = re.compile(r"^(?!(?:return|if|for|while|switch|else|do)\b)[A-Za-z_][\w \t*]*?[\s*](\w+)\(")
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = head.match(line)
        if not m or line.startswith("#"):
            continue
        for nxt in lines[i:i + 12]:
            s = nxt.rstrip()
            if s == "{":
                defs.append(m.group(1))
                break
            if s.endswith(";") or s.endswith("}") or (nxt is not line and nxt.startswith("#")):
                break
    return defs


def source_map(src):
    """{function: 'file.c' or 'core/file.c'} for the module's sources."""
    where = {}
    for pat, prefix in ((os.path.join(src, "*.c"), ""), (os.path.join(src, "core", "*.c"), "core/")):
        for path in sorted(glob.glob(pat)):
            for fn in c_functions(path):
                where.setdefault(fn, prefix + os.path.basename(path))
    return where


def parse_report(path):
    """perf report -t '|' output: (total samples, rows). A row is a dict of
    children % (None without --children), self %, self samples, dso, kind
    ('k' kernel, '.' user) and symbol; a --sort comm report gives the
    command as the dso and no symbol."""
    total = 0
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"#\s*Samples:\s*(\d+)([KM]?)", line)
            if m:
                total = int(m.group(1)) * {"": 1, "K": 1000, "M": 1000000}[m.group(2)]
                continue
            if line.startswith("#") or "|" not in line:
                continue
            cells = [c.strip() for c in line.rstrip("\n").split("|")]
            pcts = [c for c in cells if c.endswith("%")]
            rest = [c for c in cells if not c.endswith("%")]
            try:
                samples = int(rest[0])
            except (IndexError, ValueError):
                continue
            row = {"children": None, "self": 0.0, "samples": samples, "dso": rest[1] if len(rest) > 1 else "",
                   "kind": "", "sym": ""}
            if len(pcts) == 2:
                row["children"] = float(pcts[0][:-1])
                row["self"] = float(pcts[1][:-1])
            elif pcts:
                row["self"] = float(pcts[0][:-1])
            if len(rest) > 2:
                m = re.match(r"\[(.)\]\s*(.*)", rest[2])
                if m:
                    row["kind"], row["sym"] = m.group(1), m.group(2)
                else:
                    row["sym"] = rest[2]
            rows.append(row)
    return total, rows


def unresolved(row):
    return re.fullmatch(r"0x[0-9a-f]+|[0-9a-f]{8,}", row["sym"]) is not None


def kallsyms_modules(path):
    """{function: module} of the module text symbols of a /proc/kallsyms
    copy: perf names the DSO of a module's samples [kernel.kallsyms] when
    it finds no module file for it, the symbol itself is right."""
    mods = {}
    if not path or not os.path.exists(path):
        return mods
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"[0-9a-f]+ [tT] (\S+)\s+\[(\w+)\]", line)
            if m:
                mods.setdefault(m.group(1), m.group(2))
    return mods


def module_of(row, mods):
    """The module a kernel sample ran in, '' for the kernel proper."""
    if row["dso"].startswith("[") and row["dso"] not in ("[kernel.kallsyms]", "[unknown]"):
        return row["dso"].strip("[]")
    return mods.get(row["sym"], "")


def category(row, core_funcs, mods=None):
    """The category of one self row, or 'idle'."""
    if row["kind"] == ".":
        return "user"
    name = base_name(row["sym"])
    mod = module_of(row, mods or {})
    if mod in DRIVER_MODULES:
        if mod == "mroce" and name in core_funcs:
            return "core/"
        return "driver"
    if mod in RDMA_CORE_MODULES:
        return "rdma core"
    if "crc" in mod:	# crc32_pclmul's loop_64, ...: rxe's ICRC
        return "copy/csum"
    for cat, rx in KERNEL_RES:
        if rx.search(name):
            return cat
    return "other kernel"


def parse_cpustat(path):
    """A RUN.stat0/1 file: ({'cpu0': (busy, all) jiffies, ...},
    {'NET_RX': [count per CPU], ..., 'ctxt': [context switches]},
    {'acks_sent': [dev0, dev1], ...}). Busy is all but idle and iowait;
    the total 'cpu' line is left out."""
    cpus, soft, hw = {}, {}, {}
    if not os.path.exists(path):
        return cpus, soft, hw
    section = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            if words[0] in ("softirqs", "hw_counters"):
                section = soft if words[0] == "softirqs" else hw
            elif words[0] == "ctxt" and len(words) == 2 and section is None:
                soft["ctxt"] = [int(words[1])]
            elif section is not None:
                if words[0].endswith(":"):
                    section[words[0][:-1]] = [int(x) for x in words[1:] if x.isdigit()]
            elif re.fullmatch(r"cpu\d+", words[0]):
                v = [int(x) for x in words[1:]]
                total = sum(v[:8])	# guest time is counted in user already
                idle = sum(v[3:5])
                cpus[words[0]] = (total - idle, total)
    return cpus, soft, hw


def read_meta(path):
    meta = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                meta[k] = v
    return meta


class Run:
    def __init__(self, meta_path, core_funcs, where):
        self.meta = read_meta(meta_path)
        base = meta_path[:-len(".meta")]
        self.driver = self.meta.get("driver", "?")
        self.workload = self.meta.get("workload", "?")
        self.iters = float(self.meta.get("iterations", 0) or 0)
        self.freq = int(self.meta.get("freq", 0) or 0)
        self.pkts = int(self.meta.get("driver_pkts", 0) or 0)
        self.frames = int(self.meta.get("veth_frames", 0) or 0)
        head, rows = parse_report(base + ".report")
        self.rows = [r for r in rows if r["samples"]]
        self.crows = [r for r in rows if r["children"] is not None]
        # The header rounds (39K); the self counts add up to every sample.
        self.total = sum(r["samples"] for r in self.rows) or head
        self.comm = parse_report(base + ".comm")[1] if os.path.exists(base + ".comm") else []
        self.mods = kallsyms_modules(self.meta.get("kallsyms"))
        self.cat = collections.Counter()
        self.files = collections.Counter()
        self.unresolved = 0
        for r in self.rows:
            c = category(r, core_funcs, self.mods)
            r["cat"] = c
            r["mod"] = module_of(r, self.mods) if r["kind"] == "k" else ""
            self.cat[c] += r["samples"]
            if r["dso"] in ("[mroce]", "[rdma_rxe]") and unresolved(r):
                self.unresolved += r["samples"]
            if r["mod"] == "mroce":
                self.files[where.get(base_name(r["sym"]), "?")] += r["samples"]
        self.idle = self.cat["idle"]
        self.busy = sum(self.cat.values()) - self.idle
        # Per CPU busy share and softirqs in the window, from the kernel's
        # own accounting (not sampled)
        c0, s0, h0 = parse_cpustat(base + ".stat0")
        c1, s1, h1 = parse_cpustat(base + ".stat1")
        self.cpu_busy = {}
        for c in sorted(c1, key=lambda c: int(c[3:])):
            if c in c0:
                db, dt = c1[c][0] - c0[c][0], c1[c][1] - c0[c][1]
                self.cpu_busy[c] = pct(db, dt)
        self.softirqs = {k: [b - a for a, b in zip(s0[k], v)] for k, v in s1.items() if k in s0}
        self.hw = {k: sum(v) - sum(h0[k]) for k, v in h1.items() if k in h0}

    def unresolved_share(self):
        """The module's samples perf could not name, as a share of them."""
        mod = self.cat["driver"] + self.cat["core/"]
        return self.unresolved / mod if mod else 0.0

    def us_per_iter(self, samples):
        """CPU time per iteration, in us, of that many samples."""
        if not self.iters or not self.freq:
            return float("nan")
        return samples / self.freq / self.iters * 1e6


def pct(a, b):
    return 100.0 * a / b if b else float("nan")


def fmt(x, nd=1):
    return "-" if x != x else f"{x:.{nd}f}"


WORKLOAD_NAMES = {"lat": "ib_write_lat 64 B", "write": "ib_write_bw 64 KiB", "send": "ib_send_bw 64 KiB",
                  "nvme": "NVMe-oF 4 KiB randread QD32", "nvme128": "NVMe-oF 128 KiB read QD16"}
WORKLOAD_ORDER = ["lat", "write", "send", "nvme", "nvme128"]
SOFTIRQS = ["NET_RX", "NET_TX", "TIMER", "HRTIMER", "BLOCK", "TASKLET", "SCHED", "RCU", "ctxt"]


def report(runs, out):
    w = []
    freq = sorted({r.freq for r in runs})
    w.append("# CPU profile of the data path: rdma_rxe and mroce (profile_bench)\n")
    w.append(f"`perf record -a -g -e cpu-clock -F {'/'.join(map(str, freq))}` in the TCG guest (no PMU: "
             "the software clock samples both vCPUs, idle ones too), enabled over the steady "
             "traffic of one perftest run (from some packets after the client's start, for a few "
             "seconds or until the traffic ends: no process start, connection or teardown); each "
             "driver loaded afresh on the same veth pair. **busy** = all samples but the idle "
             "loop. CPU us/iteration = busy samples / F / iterations (an iteration: one 64 B "
             "write round trip for ib_write_lat, one 64 KiB message for the _bw tools, one "
             "read (4 or 128 KiB) for NVMe-oF; the perftest iterations in the window = its packets x "
             "the run's iterations / the run's packets, the NVMe-oF reads are those the "
             "namespace's path device completed in it). packets = `sent_pkts` of "
             "both devices (data, ACKs and control); veth frames = `tx_packets` of both veth "
             "ends (a GSO burst is one frame). perftest busy-polls its CQ, so user space fills "
             "whatever time the kernel leaves: kernel us/iteration (busy less user) is the "
             "drivers' cost (fio sleeps in io_getevents: its user time is real work). Samples are taken in a timer interrupt: time "
             "with interrupts off is charged to where they come back on "
             "(`_raw_spin_unlock_irqrestore`, `__local_bh_enable_ip`, ...), so those symbols "
             "stand for the code before them.\n")
    bad = [r for r in runs if r.unresolved_share() > 0.01]
    for r in bad:
        w.append(f"**WARNING: {r.driver} {r.workload}: {r.unresolved} module samples did not "
                 "resolve to a symbol.**\n")

    w.append("## Summary\n")
    w.append("| driver | workload | perftest result | window s | samples | idle % | busy | "
             "busy/iteration | CPU us/iteration | kernel us/iteration | packets/iteration | "
             "busy samples/1000 pkts | veth frames |")
    w.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        res = r.meta.get("perftest", "").split()
        if r.workload.startswith("nvme") and res:
            res = " ".join(res) + (f" ({r.meta['nvme_queues'].split()[0]} queues)"
                                   if r.meta.get("nvme_queues") else "")
        elif r.workload == "lat" and len(res) >= 6:
            res = f"typical {res[4]} us, avg {res[5]} us"
        elif len(res) >= 4:
            res = f"{res[3]} Gb/s avg"
        else:
            res = "(none)" if r.meta.get("ok") != "1" else "?"
        w.append(f"| {r.driver} | {WORKLOAD_NAMES.get(r.workload, r.workload)} | {res} | "
                 f"{r.meta.get('seconds', '?')} | {r.total} | {fmt(pct(r.idle, r.total))} | {r.busy} | "
                 f"{fmt(r.busy / r.iters if r.iters else float('nan'), 2)} | "
                 f"{fmt(r.us_per_iter(r.busy))} | {fmt(r.us_per_iter(r.busy - r.cat['user']))} | "
                 f"{fmt(r.pkts / r.iters if r.iters else float('nan'), 2)} | "
                 f"{fmt(1000.0 * r.busy / r.pkts if r.pkts else float('nan'))} | {r.frames} |")
    w.append("")

    w.append("## Where the busy samples went (self), % of busy and CPU us per iteration\n")
    w.append("Categories by symbol: driver = the module's own functions (core/ apart: mroce's "
             "protocol core, the functions of core/*.c); rdma core = ib_core/ib_uverbs; net = "
             "UDP/IP/veth/skb/qdisc/softirq rx; copy/csum = memcpy, copy_*_user, checksums; "
             "timers/clock = hrtimers, timer wheel, clock reads; locks = spinlocks (and what "
             "ran with interrupts off before an unlock_irqrestore); sched = scheduler, wakeups, "
             "workqueues; mm = allocation, page pinning; entry/irq/syscall = kernel entry/exit, "
             "interrupt and softirq dispatch; user = user space (perftest, libibverbs, the rxe "
             "provider's CQ polling).\n")
    w.append("| driver | workload | " + " | ".join(CATEGORIES) + " |")
    w.append("|---|---|" + "---|" * len(CATEGORIES))
    for r in runs:
        cells = [f"{fmt(pct(r.cat[c], r.busy))} % ({fmt(r.us_per_iter(r.cat[c]))})" for c in CATEGORIES]
        w.append(f"| {r.driver} | {r.workload} | " + " | ".join(cells) + " |")
    w.append("")

    if any(r.cpu_busy for r in runs):
        w.append("## Per CPU and softirqs in the window (kernel accounting, not sampled)\n")
        w.append("Busy % of each CPU (/proc/stat: all but idle and iowait; perf's own sampling "
                 "is in it), softirqs per iteration (/proc/softirqs; per CPU in brackets) and "
                 "context switches per iteration (ctxt: wakeups of kworkers, ksoftirqd, fio). A "
                 "CPU near 100 % busy is the bottleneck of a workload that is not "
                 "CPU-bound in total.\n")
        ncpu = max(len(r.cpu_busy) for r in runs)
        w.append("| driver | workload | " + " | ".join(f"cpu{i} busy %" for i in range(ncpu)) + " | "
                 + " | ".join(SOFTIRQS) + " |")
        w.append("|---|---|" + "---|" * (ncpu + len(SOFTIRQS)))
        for r in runs:
            busy = [fmt(r.cpu_busy.get(f"cpu{i}", float("nan"))) for i in range(ncpu)]
            soft = []
            for k in SOFTIRQS:
                v = r.softirqs.get(k)
                if v is None or not r.iters:
                    soft.append("-")
                    continue
                soft.append(f"{fmt(sum(v) / r.iters, 2)} ({'/'.join(fmt(x / r.iters, 2) for x in v)})")
            w.append(f"| {r.driver} | {r.workload} | " + " | ".join(busy + soft) + " |")
        w.append("")
        for r in runs:
            moved = [(k, v) for k, v in r.hw.items() if v and r.iters]
            if moved:
                w.append(f"{r.driver} {r.workload}: device counters per iteration, both devices "
                         "(those that moved): " + ", ".join(f"{k} {fmt(v / r.iters, 3)}" for k, v in moved)
                         + "\n")

    by = {(r.driver, r.workload): r for r in runs}
    pairs = [(by[("rxe", wl)], by[("mroce", wl)]) for wl in WORKLOAD_ORDER
             if ("rxe", wl) in by and ("mroce", wl) in by]
    if pairs:
        w.append("## mroce against rxe: CPU us per iteration by category (mroce - rxe)\n")
        w.append("| workload | busy | kernel | " + " | ".join(CATEGORIES) + " |")
        w.append("|---|---|---|" + "---|" * len(CATEGORIES))
        for a, b in pairs:
            cells = [f"{fmt(b.us_per_iter(b.cat[c]))} vs {fmt(a.us_per_iter(a.cat[c]))} "
                     f"({b.us_per_iter(b.cat[c]) - a.us_per_iter(a.cat[c]):+.1f})"
                     for c in CATEGORIES]
            ka, kb = a.busy - a.cat["user"], b.busy - b.cat["user"]
            w.append(f"| {a.workload} | {fmt(b.us_per_iter(b.busy))} vs {fmt(a.us_per_iter(a.busy))} | "
                     f"{fmt(b.us_per_iter(kb))} vs {fmt(a.us_per_iter(ka))} | " + " | ".join(cells) + " |")
        w.append("")

    for r in runs:
        w.append(f"## {r.driver}, {WORKLOAD_NAMES.get(r.workload, r.workload)}\n")
        w.append(f"{r.total} samples, {r.busy} busy, {r.iters:.0f} iterations, {r.pkts} packets.\n")
        w.append("Top 30 symbols by self samples (% of busy; children: the symbol and what it "
                 "called, % of busy; us/it: CPU us per iteration; a kernel symbol's module from "
                 "the run's kallsyms):\n")
        w.append("| # | self | self % | us/it | children % | dso | symbol | category |")
        w.append("|---|---|---|---|---|---|---|---|")
        child = {(c["dso"], c["sym"]): c["children"] for c in r.crows}
        scale = r.total / r.busy if r.busy else float("nan")
        busy_rows = sorted((x for x in r.rows if x["cat"] != "idle"), key=lambda x: -x["samples"])
        for i, x in enumerate(busy_rows[:30], 1):
            ch = child.get((x["dso"], x["sym"]))
            w.append(f"| {i} | {x['samples']} | {fmt(pct(x['samples'], r.busy))} | "
                     f"{fmt(r.us_per_iter(x['samples']), 2)} | "
                     f"{fmt(ch * scale if ch is not None else float('nan'))} | "
                     f"{'[' + x['mod'] + ']' if x['mod'] else x['dso']} | "
                     f"`{x['sym']}` | {x['cat']} |")
        w.append("")
        if r.crows:
            w.append("Top 30 by children (% of busy; user-space call chains are unreliable: "
                     "perftest and the libraries have no frame pointers):\n")
            w.append("| # | children % | self % | dso | symbol |")
            w.append("|---|---|---|---|---|")
            crows = sorted((c for c in r.crows if not KERNEL_RES[0][1].search(base_name(c["sym"]))
                            and c["kind"] == "k"), key=lambda c: -c["children"])
            for i, c in enumerate(crows[:30], 1):
                mod = module_of(c, r.mods)
                w.append(f"| {i} | {fmt(c['children'] * scale)} | {fmt(c['self'] * scale)} | "
                         f"{'[' + mod + ']' if mod else c['dso']} | `{c['sym']}` |")
            w.append("")
        if r.files:
            w.append("mroce's self samples by source file (% of busy, us/it):\n")
            w.append("| file | samples | % | us/it |")
            w.append("|---|---|---|---|")
            for f, n in r.files.most_common():
                w.append(f"| {f} | {n} | {fmt(pct(n, r.busy))} | {fmt(r.us_per_iter(n), 2)} |")
            w.append("")
        if r.comm:
            w.append("By command (self, % of all samples): " + ", ".join(
                f"{c['dso']} {fmt(c['self'])} %" for c in sorted(r.comm, key=lambda c: -c["samples"])[:8])
                + "\n")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(w) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True, help="drivers/infiniband/sw/mroce")
    ap.add_argument("--out", required=True)
    ap.add_argument("meta", nargs="+")
    args = ap.parse_args()
    where = source_map(args.src)
    core = {fn for fn, f in where.items() if f.startswith("core/")}
    if not core:
        sys.exit(f"profile_report: no core/*.c functions under {args.src}")
    order = {"rxe": 0, "mroce": 1}
    worder = {wl: i for i, wl in enumerate(WORKLOAD_ORDER)}
    runs = []
    for m in args.meta:
        if not os.path.exists(m[:-len(".meta")] + ".report"):
            print(f"profile_report: {m}: no report next to it", file=sys.stderr)
            continue
        runs.append(Run(m, core, where))
    if not runs:
        sys.exit("profile_report: no profiles")
    runs.sort(key=lambda r: (worder.get(r.workload, 9), order.get(r.driver, 9)))
    report(runs, args.out)
    return 1 if any(r.unresolved_share() > 0.01 for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
