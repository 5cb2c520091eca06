#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of profile_report.py, which turns profile_bench's perf reports
into profile.md (make check runs them: a parser that put mroce's samples in
the wrong category, or counted the idle loop as work, would send the team
after the wrong cost)."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import profile_report as pr  # noqa: E402

SELF_HEAD = """# To display the perf.data header info, please use --header/--header-only options.
#
# Samples: 1K of event 'cpu-clock'
# Event count (approx.): 1001001000
#
# Overhead|     Samples|Shared Object|Symbol
"""
CHILDREN_HEAD = """# Samples: 1K of event 'cpu-clock'
#
# Children|    Self|     Samples|Shared Object|Symbol
"""

CORE_C = """// SPDX-License-Identifier: GPL-2.0
#include "mroce_env.h"

static int helper(int a);

static u32 cc_step(struct mroce_cc *cc,
		   u64 now)
{
	return helper(1);
}

bool mroce_cc_ready(const struct mroce_cc *cc)
{
	return true;
}

static int helper(int a)
{
	return a;
}
"""
DRV_C = """// SPDX-License-Identifier: GPL-2.0
static void mroce_rx_one(struct sk_buff *skb)
{
	if (x)
		mroce_rx_count(skb);
}
module_param_named(rx_burst, mroce_rx_burst, uint, 0644);
"""


def report_rows(rows):
    """perf report --children -t '|' lines: (self samples, dso, 'k'|'.',
    symbol[, children samples]); a row of no self samples is a caller."""
    total = sum(r[0] for r in rows)
    return CHILDREN_HEAD + "".join(
        f" {100.0 * (r[4] if len(r) > 4 else r[0]) / total:.2f}% | {100.0 * r[0] / total:.2f}% | "
        f"{r[0]:<10} |{r[1]:<12} |[{r[2]}] {r[3]}\n" for r in rows)


class Parse(unittest.TestCase):
    def test_c_functions_finds_definitions_not_prototypes_or_macros(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.c")
            with open(p, "w") as f:
                f.write(CORE_C + DRV_C)
            self.assertEqual(pr.c_functions(p), ["cc_step", "mroce_cc_ready", "helper", "mroce_rx_one"])

    def test_parse_self_and_children(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "s")
            with open(p, "w") as f:
                f.write(SELF_HEAD + " 75.00% | 30         |[mroce]      |[k] mroce_rx_one\n"
                        " 25.00% | 10         |libc.so.6    |[.] memcpy\n")
            total, rows = pr.parse_report(p)
            self.assertEqual(total, 1000)	# the header's rounded 1K
            self.assertEqual([(r["samples"], r["dso"], r["kind"], r["sym"]) for r in rows],
                             [(30, "[mroce]", "k", "mroce_rx_one"), (10, "libc.so.6", ".", "memcpy")])
            self.assertAlmostEqual(rows[0]["self"], 75.0)
            self.assertIsNone(rows[0]["children"])
            with open(p, "w") as f:
                f.write(CHILDREN_HEAD + " 41.20% | 0.50%  | 5          |[kernel.kallsyms] |[k] net_rx_action\n")
            _, rows = pr.parse_report(p)
            self.assertEqual((rows[0]["children"], rows[0]["self"], rows[0]["samples"]), (41.2, 0.5, 5))

    def test_module_from_kallsyms(self):
        # perf may name a module's DSO [kernel.kallsyms]; kallsyms knows
        with tempfile.TemporaryDirectory() as d:
            k = os.path.join(d, "k")
            with open(k, "w") as f:
                f.write("ffffffff81000000 T _stext\n"
                        "ffffffffc07b7480 t on_block\t[mroce]\n"
                        "ffffffffc07b8000 t mroce_rx_one\t[mroce]\n"
                        "ffffffffc07db0a0 d mroce_link_ops\t[mroce]\n"
                        "ffffffffc0500000 T ib_uverbs_write\t[ib_uverbs]\n")
            mods = pr.kallsyms_modules(k)
        self.assertEqual(mods, {"on_block": "mroce", "mroce_rx_one": "mroce", "ib_uverbs_write": "ib_uverbs"})

        def cat(sym):
            return pr.category({"dso": "[kernel.kallsyms]", "sym": sym, "kind": "k"}, {"on_block"}, mods)
        self.assertEqual(cat("on_block"), "core/")
        self.assertEqual(cat("mroce_rx_one"), "driver")
        self.assertEqual(cat("ib_uverbs_write"), "rdma core")
        self.assertEqual(cat("udp_rcv"), "net")

    def test_categories(self):
        core = {"cc_step"}

        def cat(dso, sym, kind="k"):
            return pr.category({"dso": dso, "sym": sym, "kind": kind}, core)
        self.assertEqual(cat("[mroce]", "cc_step.isra.0"), "core/")
        self.assertEqual(cat("[mroce]", "mroce_rx_one"), "driver")
        # the same name in another module is not mroce's core
        self.assertEqual(cat("[rdma_rxe]", "cc_step"), "driver")
        self.assertEqual(cat("[ib_core]", "ib_poll_cq"), "rdma core")
        self.assertEqual(cat("ib_write_lat", "main", "."), "user")
        self.assertEqual(cat("[kernel.kallsyms]", "default_idle"), "idle")
        self.assertEqual(cat("[kernel.kallsyms]", "pv_native_safe_halt"), "idle")
        self.assertEqual(cat("[kernel.kallsyms]", "skb_copy_bits"), "copy/csum")
        self.assertEqual(cat("[kernel.kallsyms]", "crc32_pclmul_le"), "copy/csum")
        self.assertEqual(cat("[kernel.kallsyms]", "read_tsc"), "timers/clock")
        self.assertEqual(cat("[kernel.kallsyms]", "hrtimer_start_range_ns"), "timers/clock")
        self.assertEqual(cat("[kernel.kallsyms]", "_raw_spin_unlock_irqrestore"), "locks")
        self.assertEqual(cat("[kernel.kallsyms]", "__schedule"), "sched")
        self.assertEqual(cat("[kernel.kallsyms]", "udp_rcv"), "net")
        self.assertEqual(cat("[kernel.kallsyms]", "veth_xmit"), "net")
        self.assertEqual(cat("[kernel.kallsyms]", "kmem_cache_alloc"), "mm")
        self.assertEqual(cat("[kernel.kallsyms]", "__do_softirq"), "entry/irq/syscall")
        self.assertEqual(cat("[kernel.kallsyms]", "rcu_core"), "other kernel")


STAT0 = """cpu  1000 0 500 8000 10 0 20 0 0 0
cpu0 600 0 300 3000 10 0 10 0 0 0
cpu1 400 0 200 5000 0 0 10 0 0 0
ctxt 5000
softirqs
                    CPU0       CPU1
          HI:          0          0
      NET_RX:       1000         50
     HRTIMER:          7          3
hw_counters
acks_sent: 10 20
pto_timeouts: 0 0
"""
# 200 jiffies later: cpu0 busy 190 of 200, cpu1 busy 50 of 200 (iowait
# is idle time)
STAT1 = """cpu  1000 0 500 8000 10 0 20 0 0 0
cpu0 700 0 390 3000 20 0 10 0 0 0
cpu1 420 0 220 5150 0 0 20 0 0 0
ctxt 5125
softirqs
                    CPU0       CPU1
          HI:          0          0
      NET_RX:       1300        150
     HRTIMER:         27          3
hw_counters
acks_sent: 60 45
pto_timeouts: 0 0
"""


class CpuStat(unittest.TestCase):
    def test_parse_cpustat(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.stat0")
            with open(p, "w") as f:
                f.write(STAT0)
            cpus, soft, hw = pr.parse_cpustat(p)
        self.assertEqual(cpus, {"cpu0": (910, 3920), "cpu1": (610, 5610)})
        self.assertEqual(soft, {"ctxt": [5000], "HI": [0, 0], "NET_RX": [1000, 50], "HRTIMER": [7, 3]})
        self.assertEqual(hw, {"acks_sent": [10, 20], "pto_timeouts": [0, 0]})
        self.assertEqual(pr.parse_cpustat("/nonexistent"), ({}, {}, {}))


class Report(unittest.TestCase):
    def write_run(self, d, drv, rows, iters=100, pkts=400, workload="lat",
                  result="64 100 10.0 90.0 20.00 25.00 3.0 60.0 80.0", extra="", stat=None):
        base = os.path.join(d, f"{drv}-{workload}")
        with open(base + ".meta", "w") as f:
            f.write(f"driver={drv}\nworkload={workload}\niterations={iters}\nfreq=1000\nseconds=1.0\n"
                    f"driver_pkts={pkts}\nveth_frames={pkts}\nok=1\nperftest={result}\n{extra}")
        with open(base + ".report", "w") as f:
            f.write(report_rows(rows))
        for i, text in enumerate(stat or []):
            with open(f"{base}.stat{i}", "w") as f:
                f.write(text)
        return base + ".meta"

    def src_dir(self, d):
        src = os.path.join(d, "src")
        os.makedirs(os.path.join(src, "core"))
        with open(os.path.join(src, "core", "mroce_cc.c"), "w") as f:
            f.write(CORE_C)
        with open(os.path.join(src, "mroce_rx.c"), "w") as f:
            f.write(DRV_C)
        return src

    def render(self, d, metas):
        out = os.path.join(d, "profile.md")
        res = subprocess.run([sys.executable, os.path.join(HERE, "profile_report.py"), "--src",
                              self.src_dir(d), "--out", out] + metas, capture_output=True, text=True)
        with open(out) as f:
            return res.returncode, f.read()

    def test_nvme_workload_per_read_with_cpus_and_softirqs(self):
        with tempfile.TemporaryDirectory() as d:
            rows = [(100, "[kernel.kallsyms]", "k", "default_idle"), (100, "[mroce]", "k", "mroce_rx_one"),
                    (100, "fio", ".", "main")]
            metas = [self.write_run(d, drv, rows, iters=50, pkts=300, workload="nvme", result="3791 IOPS",
                                    extra="nvme_queues=3 127\n", stat=[STAT0, STAT1] if drv == "mroce" else None)
                     for drv in ("mroce", "rxe")]
            # a lat run sorts before nvme whatever the argument order
            metas.append(self.write_run(d, "rxe", rows))
            rc, md = self.render(d, metas)
        self.assertEqual(rc, 0, md)
        lines = md.splitlines()
        summary = [ln for ln in lines if ln.startswith("| rxe | ")]
        self.assertTrue(summary[0].startswith("| rxe | ib_write_lat 64 B |"), summary)
        # 200 busy samples at 1 kHz over 50 reads: 4000 us per read, 6 packets
        self.assertTrue(any(ln.startswith("| mroce | NVMe-oF 4 KiB randread QD32 | 3791 IOPS (3 queues) |")
                            and "| 300 | 33.3 | 200 | 4.00 | 4000.0 | 2000.0 | 6.00 |" in ln for ln in lines), md)
        # per CPU busy: 190/200 and 50/200 jiffies; NET_RX 300 + 100 over
        # 50 reads, HRTIMER 20 + 0, 125 context switches; a run without
        # stat files shows dashes
        self.assertIn("| mroce | nvme | 95.0 | 25.0 | 8.00 (6.00/2.00) | - | - | 0.40 (0.40/0.00) | - | - | - | - "
                      "| 2.50 (2.50) |", md)
        self.assertIn("| rxe | nvme | - | - | - | - |", md)
        # 75 ACKs over 50 reads; a counter that did not move is left out
        self.assertIn("mroce nvme: device counters per iteration, both devices (those that moved): "
                      "acks_sent 1.500\n", md)
        # the comparison row of the pair
        self.assertTrue(any(ln.startswith("| nvme | 4000.0 vs 4000.0 |") for ln in lines), md)

    def run_report(self, rows_rxe, rows_mroce):
        with tempfile.TemporaryDirectory() as d:
            return self.render(d, [self.write_run(d, "rxe", rows_rxe), self.write_run(d, "mroce", rows_mroce)])

    def test_busy_per_iteration_leaves_idle_out(self):
        rc, md = self.run_report(
            [(500, "[kernel.kallsyms]", "k", "default_idle"), (100, "[rdma_rxe]", "k", "rxe_responder"),
             (100, "[kernel.kallsyms]", "k", "udp_rcv")],
            [(300, "[kernel.kallsyms]", "k", "default_idle"), (200, "[mroce]", "k", "mroce_rx_one"),
             (100, "[mroce]", "k", "cc_step.constprop.0"), (100, "ib_write_lat", ".", "main"),
             (0, "[kernel.kallsyms]", "k", "net_rx_action", 300)])
        self.assertEqual(rc, 0, md)
        lines = md.splitlines()
        # rxe: 700 samples, 500 idle, 200 busy over 100 iterations at 1 kHz:
        # 2 busy samples and 2000 us of CPU per iteration, 500 per 1000 pkts
        rxe = next(ln for ln in lines if ln.startswith("| rxe | ib_write_lat 64 B | typical 20.00 us"))
        self.assertIn("| 700 | 71.4 | 200 | 2.00 | 2000.0 | 2000.0 | 4.00 | 500.0 |", rxe)
        mro = next(ln for ln in lines if ln.startswith("| mroce | ib_write_lat 64 B |"))
        # (mroce's user-space 100 samples are no kernel time)
        self.assertIn("| 700 | 42.9 | 400 | 4.00 | 4000.0 | 3000.0 | 4.00 |", mro)
        # categories: mroce's 400 busy = driver 200, core/ 100, user 100
        cats = next(ln for ln in lines if ln.startswith("| mroce | lat |"))
        cells = [c.strip() for c in cats.split("|")[3:-1]]
        by = dict(zip(pr.CATEGORIES, cells))
        self.assertEqual(by["driver"], "50.0 % (2000.0)")
        self.assertEqual(by["core/"], "25.0 % (1000.0)")
        self.assertEqual(by["user"], "25.0 % (1000.0)")
        self.assertEqual(by["net"], "0.0 % (0.0)")
        # the comparison row: mroce 4000 vs rxe 2000 us/iteration
        self.assertTrue(any(ln.startswith("| lat | 4000.0 vs 2000.0 | 3000.0 vs 2000.0 |") for ln in lines), md)
        # mroce's samples by source file
        self.assertIn("| mroce_rx.c | 200 | 50.0 | 2000.00 |", md)
        self.assertIn("| core/mroce_cc.c | 100 | 25.0 | 1000.00 |", md)
        # a caller (no self samples): in the children table only, 300 of
        # the 400 busy samples under it
        self.assertIn("| 1 | 75.0 | 0.0 | [kernel.kallsyms] | `net_rx_action` |", md)
        self.assertNotIn("WARNING", md)

    def test_unresolved_module_samples_fail(self):
        rc, md = self.run_report(
            [(100, "[rdma_rxe]", "k", "rxe_responder")],
            [(100, "[mroce]", "k", "mroce_rx_one"), (50, "[mroce]", "k", "0xffffffffc0a01234")])
        self.assertEqual(rc, 1)
        self.assertIn("WARNING: mroce lat: 50 module samples did not resolve", md)


if __name__ == "__main__":
    unittest.main()
