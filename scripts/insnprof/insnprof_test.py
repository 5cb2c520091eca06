#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of insnprof.py on canned snapshots (testdata/): two rxe windows
of 100 round trips, one mroce window of 50, counts worked out by hand; and
(testdata_cost/) snapshots with the TCG cost columns (loads, stores, how
each block ends, atomics, wrmsr, tsc, io, sys): one rxe window of 100
round trips, one mroce window of 50; (testdata_phase/) snapshots with the
phase columns and halves: one rxe window of 10 round trips, one mroce
window of 5; (testdata_jc/) testdata_cost/ with the jump-cache lines.
PhaseMachineTest builds the plugin's own phase machine (insnprof.c, with
phases_harness.c) and checks the snapshots it writes, JcSimTest its
jump-cache simulation (jcsim.c) (both skipped without cc or QEMU's plugin
header, which build.sh fetches)."""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True   # no __pycache__ in the tree
import insnprof  # noqa: E402

DATA = os.path.join(HERE, "testdata")


def load_pair(cls, dirname):
    """Load a fixture directory's rxe and mroce columns onto the test class."""
    cls.cols = insnprof.load(dirname)
    cls.rxe = insnprof.Column("rxe", *cls.cols["rxe"])
    cls.mroce = insnprof.Column("mroce", *cls.cols["mroce"])


class InsnprofTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        load_pair(cls, DATA)

    def test_columns_in_order(self):
        self.assertEqual(list(self.cols), ["rxe", "mroce"])

    def test_round_trips_from_post_send_calls(self):
        self.assertEqual([w.rts for w in self.rxe.wins], [100, 100])
        self.assertEqual(self.mroce.rts, 50)

    def test_window_totals(self):
        # the user-space block and the counter that did not move are left out
        self.assertEqual([w.kernel for w in self.rxe.wins], [50300, 33100])
        self.assertEqual(self.rxe.per_rt(self.rxe.kernel), 417)
        self.assertEqual(self.mroce.per_rt(self.mroce.kernel), 488)
        self.assertEqual(self.rxe.per_rt(self.rxe.user), 1000)

    def test_blocks_map_to_functions(self):
        k = ("memset_erms", "")
        # the entry block (10 insns) and a later one (3) of the same function
        self.assertEqual(self.rxe.insns[k], 4600)
        self.assertEqual(self.rxe.calls[k], 400)
        # a second translation of an entry (another length) adds up
        req = ("rxe_requester", "rdma_rxe")
        self.assertEqual(self.rxe.insns[req], 22800)
        self.assertEqual(self.rxe.per_rt(self.rxe.calls[req]), 4)

    def test_groups(self):
        g = {k: self.rxe.per_rt(v) for k, v in self.rxe.groups().items()}
        self.assertEqual(g, {"rxe module": 274, "RDMA core (ib_uverbs, ib_core)": 20,
                             "memset/memcpy": 23, "locking": 20,
                             "net stack (udp/ip/dev/veth)": 80})
        self.assertEqual(insnprof.group_of("mroce_tx_one", "mroce"), "mroce module")
        self.assertEqual(insnprof.group_of("_raw_spin_lock_irqsave", ""), "locking")
        self.assertEqual(insnprof.group_of("kfree_skb_reason", ""), "skb and memory alloc/free")
        self.assertEqual(insnprof.group_of("entry_SYSCALL_64", ""), "syscall entry/exit, vfs")
        self.assertEqual(insnprof.group_of("hrtimer_start_range_ns", ""), "timers and clock")
        self.assertEqual(insnprof.group_of("something_else", ""), "other kernel")

    def test_report(self):
        text = insnprof.report(self.cols, 10, "rxe")
        self.assertIn("| rxe | rxe | 200 | 417 | 503, 331 | 1,000 | 1.0 2.0 3.00 4.00 0.5 |", text)
        self.assertIn("| **kernel total** | **417** | **488** | **+71** |", text)
        self.assertIn("| mroce_rx_one [mroce] | mroce module | 0 | 200 | +200 | 0.00 | 2.00 |", text)

    def test_ab_columns(self):
        # an A/B of two mroce builds: mroce2 is also compared with mroce
        with tempfile.TemporaryDirectory() as d:
            for f in os.listdir(DATA):
                shutil.copy(os.path.join(DATA, f), d)
                if f.startswith("mroce"):
                    shutil.copy(os.path.join(DATA, f), os.path.join(d, "mroce2" + f[5:]))
            cols = insnprof.load(d)
            self.assertEqual(list(cols), ["rxe", "mroce", "mroce2"])
            text = insnprof.report(cols, 10, "rxe")
        self.assertIn("| group | rxe | mroce | mroce2 | mroce - rxe | mroce2 - rxe | mroce2 - mroce |",
                      text)
        self.assertIn("| **kernel total** | **417** | **488** | **488** | **+71** | **+71** | **+0** |",
                      text)
        self.assertIn("## Functions, mroce2 - mroce:", text)

    def test_old_snapshots_have_no_cost_section(self):
        self.assertFalse(self.rxe.has_cost)
        self.assertNotIn("TCG cost proxies", insnprof.report(self.cols, 10, "rxe"))


COST = os.path.join(HERE, "testdata_cost")


class CostTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        load_pair(cls, COST)

    def per(self, col, k, what):
        return col.per_rt(col.cost_of(k, what))

    def test_parse_extended_rows(self):
        snap = insnprof.read_snap(os.path.join(COST, "rxe-1.snap"))
        counts, head, ext = snap.counts, snap.head, snap.ext
        self.assertEqual(snap.ph, {})
        self.assertEqual(snap.halves, [])
        self.assertEqual(counts[(0xffffffff81004000, 5)], 10)
        self.assertEqual(ext[(0xffffffff81004000, 5)], (20, 10, 4, 1, 1, 0, 0, 0))
        self.assertEqual(head["user_blocks"], "1000")
        self.assertTrue(self.rxe.has_cost and self.mroce.has_cost)

    def test_kernel_totals_per_rt(self):
        self.assertEqual(self.rxe.rts, 100)
        self.assertEqual(self.mroce.rts, 50)
        r, m = self.rxe, self.mroce
        self.assertEqual([self.per(r, None, w) for w in ("blocks", "loads", "stores", "mem")],
                         [3.1, 4.2, 12.1, 16.3])
        self.assertEqual([self.per(r, None, w) for w in ("end_ret", "end_indirect", "lookups",
                                                         "end_chain", "atomics", "wrmsr")],
                         [2, 0.1, 2.1, 1, 0.1, 0.1])
        # the counter that had run before the window counts its difference only
        self.assertEqual([self.per(m, None, w) for w in ("blocks", "loads", "stores", "mem")],
                         [9, 18, 8, 26])
        self.assertEqual([self.per(m, None, w) for w in ("end_ret", "end_xpage", "lookups",
                                                         "end_xjcc", "atomics", "tsc")],
                         [2, 6, 8, 1, 12, 6])
        self.assertEqual(r.per_rt(r.ucost["blocks"]), 10)
        self.assertEqual(r.per_rt(r.ucost["loads"] + r.ucost["stores"]), 5)

    def test_by_function_and_group(self):
        k = ("mroce_tx_one", "mroce")
        self.assertEqual([self.per(self.mroce, k, w) for w in ("blocks", "mem", "lookups")],
                         [6, 18, 6])
        self.assertEqual(self.mroce.per_rt(self.mroce.group_cost("blocks")["mroce module"]), 6)
        self.assertEqual(self.rxe.per_rt(self.rxe.group_cost("mem")["memset/memcpy"]), 10)

    def test_events(self):
        self.assertEqual(self.mroce.per_rt(self.mroce.calls_matching(r"^hrtimer_interrupt$")), 1)
        self.assertEqual(self.rxe.per_rt(self.rxe.calls_matching(r"^lapic_next_(deadline|event)$")),
                         0.1)

    def test_report(self):
        text = insnprof.report(self.cols, 10, "rxe")
        self.assertIn("## TCG cost proxies per round trip (kernel)", text)
        self.assertIn("| blocks executed | 3.10 | 9.00 | +5.90 |", text)
        self.assertIn("| **TB lookups (the three above)** | 2.10 | 8.00 | +5.90 |", text)
        self.assertIn("| timer interrupts (hrtimer_interrupt) | 0.00 | 1.00 | +1.00 |", text)
        self.assertIn("| user space: blocks, loads + stores | 10, 5 | 0, 0 |  |", text)
        self.assertIn("| mroce module | 0 | 6 | +6 |", text)
        self.assertIn("| mroce_tx_one [mroce] | mroce module | 0 | 6 | +6 | 0 | 18 | "
                      "0.00 | 6.00 | 0.00 | 12.00 |", text)
        self.assertNotIn("Phases of a half round trip", text)


PHASE = os.path.join(HERE, "testdata_phase")


class PhaseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        load_pair(cls, PHASE)
        cls.text = insnprof.report(cls.cols, 10, "rxe")

    def test_parse(self):
        snap = insnprof.read_snap(os.path.join(PHASE, "rxe-1.snap"))
        self.assertEqual(snap.ph[(0xffffffff81001000, 2)], (10, 0, 10, 10))
        self.assertEqual(len(snap.halves), 4)
        vcpu, flags, v = snap.halves[0]
        self.assertEqual((vcpu, flags), (0, 7))
        self.assertEqual(v["A"], {"insns": 30, "blocks": 2, "mem": 2, "lookups": 1,
                                  "atomics": 2, "tsc": 0})
        self.assertEqual(v["C2"]["tsc"], 1)
        self.assertEqual(snap.markers[1], ("copy", 0xffffffffc0005000, True, "rxe_mr_copy"))

    def test_halves_of_the_window_only(self):
        # rxe-0's half (before the window) is left out; incomplete ones kept apart
        self.assertEqual(len(self.rxe.halves), 4)
        self.assertEqual(len(self.rxe.complete_halves()), 3)
        self.assertEqual(len(self.rxe.complete_halves(1)), 1)
        self.assertEqual(len(self.mroce.complete_halves()), 2)

    def test_phase_totals_per_half(self):
        r, m = self.rxe, self.mroce
        self.assertEqual([r.per_half(r.phase_total(ph, "insns")) for ph in insnprof.PHASES],
                         [5, 30, 31, 6])
        self.assertEqual([m.per_half(m.phase_total(ph, "insns")) for ph in insnprof.PHASES],
                         [4, 10, 28, 23])
        # memory accesses split by a block's runs in each phase
        self.assertEqual(r.per_half(r.phase_total("A", "mem")), 4)
        self.assertEqual(r.phase_total("C2", "mem", ("memcpy", "")), 20)
        # calls: the runs of a function's entry block in the phase
        self.assertEqual(m.phase_total("C1", "calls", ("mroce_tx_run", "mroce")), 10)
        self.assertEqual([m.per_half(m.phase_total(ph, "lookups")) for ph in ("A", "C1", "C2")],
                         [1, 1, 2])
        # every block's runs are in some phase: the phases add up to the kernel
        for c in (r, m):
            self.assertEqual(sum(c.phase_total(ph, "insns") for ph in insnprof.PHASES),
                             c.kernel)

    def test_report_halves(self):
        t = self.text
        self.assertIn("## Phases of a half round trip (per vCPU)", t)
        self.assertIn("- rxe: post rxe_post_send; copy rxe_mr_copy (after rxe_responder); "
                      "cqe rxe_cq_post", t)
        self.assertIn("| of them complete | 3 (75.0 %) | 2 (66.7 %) |  |", t)
        self.assertIn("| without the completion on the poster's vCPU | 1 | 0 |  |", t)
        self.assertIn("| cut by the next post (no return to user seen) | 1 | 1 |  |", t)
        self.assertIn("| A: post -> copy, instructions, median | 30 | 11 | -19 |", t)
        self.assertIn("| A: post -> copy, instructions, mean | 31 | 11 | -20 |", t)
        self.assertIn("| C2: completion -> return to user, instructions, median | 6 | 24 | +18 |", t)
        self.assertIn("| tail C1 + C2: copy -> return to user, instructions, median | 39 | 53 | +14 |",
                      t)
        self.assertIn("| A + C1 + C2: post -> return to user, instructions, median | 69 | 64 | -5 |",
                      t)
        self.assertIn("| C2: completion -> return to user, rdtsc, mean | 1.0 | 2.0 | +1.0 |", t)
        # per half: rxe 37-30, 39-30, 39-32; mroce 51-10, 55-12
        self.assertIn("| tail - A (the tail beyond an A), instructions, median | 7 | 42 | +35 |", t)
        self.assertIn("| A: post -> copy, memory accesses, mean | 2.0 | 1.0 | -1.0 |", t)
        self.assertIn("| 0: A / C1 / C2 | 31 / 31 / 7 | 10 / 28 / 23 | -21 / -3 / +16 |", t)

    def test_report_blocks_by_phase(self):
        t = self.text
        self.assertIn("| outside a half, instructions | 5 | 4 | -1 |", t)
        self.assertIn("| C2, instructions | 6 | 23 | +17 |", t)
        self.assertIn("### Phase C2: the completion -> the return to user: functions, mroce - rxe",
                      t)
        self.assertIn("| mroce_tx_run [mroce] | mroce module | 0 | 16 | +16 | 0.00 | 2.00 | 0.0 | 2.0 | "
                      "0.0 | 0.0 | 0.0 | 2.0 |", t)
        c2 = t.split("### Phase C2")[1].split("###")[0]
        self.assertIn("| rxe_cq_post [rdma_rxe] | rxe module | 5 | 0 | -5 |", c2)
        self.assertNotIn("rxe_completer", c2)


TOP = os.path.dirname(os.path.dirname(HERE))
KALLSYMS = {
    "mroce": ["ffffffff81001000 T memcpy", "ffffffff81e01150 T swapgs_restore_regs_and_return_to_usermode",
              "ffffffffc0101000 t mroce_post_send\t[mroce]",
              "ffffffffc0102000 t mroce_chunk_skb_to_mr\t[mroce]",
              "ffffffffc0103000 t mroce_cq_post_locked\t[mroce]"],
    "rxe": ["ffffffff81001000 T memcpy", "ffffffff81e01150 T swapgs_restore_regs_and_return_to_usermode",
            "ffffffffc0209999 d rxe_cq_post\t[rdma_rxe]",
            "ffffffffc0201000 t rxe_post_send\t[rdma_rxe]",
            "ffffffffc0202000 t rxe_mr_copy\t[rdma_rxe]",
            "ffffffffc0203000 t rxe_responder\t[rdma_rxe]",
            "ffffffffc0204000 t rxe_cq_post\t[rdma_rxe]"],
}


def half(vcpu, flags, *v):
    """A half as Snap parses it: v the 18 values of the h line (mem x 16)."""
    return (vcpu, flags, {ph: {h: v[i * 6 + j] / (16 if h == "mem" else 1)
                               for j, h in enumerate(insnprof.HV)}
                          for i, ph in enumerate(("A", "C1", "C2"))})


class PhaseMachineTest(unittest.TestCase):
    """The plugin's phase machine (insnprof.c's vcpu_tb_exec, markers,
    snapshot) on canned block runs (phases_harness.c)."""

    @classmethod
    def setUpClass(cls):
        hdr = sorted(glob.glob(os.path.join(TOP, "build/insnprof/include-*/qemu-plugin.h")))
        if not hdr or not shutil.which("cc"):
            raise unittest.SkipTest("no cc or QEMU plugin header (scripts/insnprof/build.sh)")
        cls.tmp = tempfile.mkdtemp()
        exe = os.path.join(cls.tmp, "harness")
        subprocess.run(["cc", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                        "-Wno-unused-function", "-I" + os.path.dirname(hdr[-1]), "-I" + HERE,
                        "-o", exe, os.path.join(HERE, "phases_harness.c"), "-lpthread"], check=True)
        shutil.copy(os.path.join(HERE, "phases"), cls.tmp)
        for col, lines in KALLSYMS.items():
            with open(os.path.join(cls.tmp, col + ".kallsyms"), "w") as f:
                f.write("\n".join(lines) + "\n")
        subprocess.run([exe, cls.tmp], check=True, capture_output=True)
        cls.m = insnprof.read_snap(os.path.join(cls.tmp, "mroce-1.snap"))
        cls.r = insnprof.read_snap(os.path.join(cls.tmp, "rxe-1.snap"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_markers_resolved_per_column(self):
        self.assertEqual(self.m.markers, [
            ("post", 0xffffffffc0101000, False, "mroce_post_send"),
            ("copy", 0xffffffffc0102000, False, "mroce_chunk_skb_to_mr"),
            ("cqe", 0xffffffffc0103000, False, "mroce_cq_post_locked"),
            ("end", 0xffffffff81e01150, False, "swapgs_restore_regs_and_return_to_usermode")])
        # the text symbol, not the data one of the same name; the gate
        self.assertEqual(self.r.markers, [
            ("post", 0xffffffffc0201000, False, "rxe_post_send"),
            ("copy", 0xffffffffc0202000, True, "rxe_mr_copy"),
            ("gate", 0xffffffffc0203000, False, "rxe_responder"),
            ("cqe", 0xffffffffc0204000, False, "rxe_cq_post"),
            ("end", 0xffffffff81e01150, False, "swapgs_restore_regs_and_return_to_usermode")])
        self.assertEqual(self.m.head["phase_column"], "mroce")

    def test_halves(self):
        self.assertEqual(self.m.halves, [
            # post, plain | copy, plain | completion, sysret
            half(0, 7, 10, 2, 32, 1, 0, 0, 8, 2, 32, 0, 0, 0, 6, 2, 0, 1, 0, 1),
            # no copy: the completion ends A; the end marker returns
            half(1, 6, 7, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 10, 2, 0, 2, 0, 0),
            # cut by the next post
            half(0, 9, 7, 1, 0, 1, 0, 0, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
            # a return from A
            half(0, 4, 9, 2, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)])
        # the column's change drops the halves since the snapshot and
        # resets every vCPU; the copy counts only after the gate
        self.assertEqual(self.r.halves, [
            half(0, 7, 22, 3, 0, 1, 0, 0, 5, 1, 0, 0, 0, 0, 6, 2, 0, 0, 0, 1)])

    def test_block_counts_by_phase(self):
        ph = self.m.ph
        self.assertEqual(ph[(0xffffffffc0101000, 7)], (0, 4, 0, 0))
        self.assertEqual(ph[(0xffffffffc0102000, 5)], (1, 0, 2, 0))   # vCPU 1's copy outside
        self.assertEqual(ph[(0xffffffff81001000, 3)], (2, 1, 1, 0))
        self.assertEqual(ph[(0xffffffff81e00100, 2)], (0, 1, 0, 1))
        self.assertEqual(self.m.counts[(0xffffffff81001000, 3)], 4)
        # mroce's post_send without its marker in the rxe column: outside
        self.assertEqual(self.r.ph[(0xffffffffc0101000, 7)], (1, 6, 0, 0))
        self.assertEqual(self.r.ph[(0xffffffff81e00100, 2)], (1, 2, 0, 2))
        self.assertEqual(self.r.ph[(0xffffffffc0202000, 5)], (0, 1, 1, 0))


JC = os.path.join(HERE, "testdata_jc")


class JcReportTest(unittest.TestCase):
    """The jump-cache section on canned snapshots (testdata_jc/: testdata_cost/
    with jc lines; the lines of a window's first snapshot are the interval
    before it and never count)."""

    @classmethod
    def setUpClass(cls):
        load_pair(cls, JC)
        cls.text = insnprof.report(cls.cols, 10, "rxe")

    def test_parse(self):
        snap = insnprof.read_snap(os.path.join(JC, "mroce-1.snap"))
        self.assertTrue(snap.has_jc)
        self.assertEqual(snap.jk[("ret", 1, 1)], [300, 10])
        self.assertEqual(snap.jp[0x401000], [300, 10])
        self.assertEqual(snap.jx[(0xffffffffc0200010, 0)], 40)
        # the rows still parse
        self.assertEqual(snap.counts[(0xffffffffc0200000, 0x1e)], 310)
        self.assertFalse(insnprof.read_snap(os.path.join(COST, "mroce-1.snap")).has_jc)

    def test_totals_per_window_not_diffed(self):
        m, r = self.mroce, self.rxe
        self.assertEqual(m.jc_total(0, user=0), 1500)
        self.assertEqual(m.jc_total(1, user=0), 150)
        self.assertEqual(m.jc_total(0, user=1), 500)
        self.assertEqual(m.jc_total(0, ("ret",)), 1300)
        self.assertEqual(m.jc_total(0, ("ret",), prev_user=0), 1000)
        self.assertEqual(r.jc_total(0), 2100)
        self.assertEqual(r.jc_flushes, 0)
        self.assertEqual(m.jc_flushes, 5)

    def test_regions(self):
        m = self.mroce
        self.assertEqual(m.region(0xffffffffc0200010), "mroce module")
        self.assertEqual(m.region(0xffffffff81003040), "timers and clock")
        self.assertEqual(m.region(0x401000), "user space")
        self.assertEqual(m.region(0), "(empty slot)")
        self.assertEqual(m.where(0xffffffffc0200010), "mroce_tx_one+0x10 [mroce]")
        self.assertEqual(m.where(0x401000), "user 0x401000")

    def test_report(self):
        t = self.text
        self.assertIn("## Jump cache (simulated, QEMU 7.2's per-vCPU tb_jmp_cache)", t)
        self.assertIn("| **lookups, kernel pc** | 21.0 | 30.0 | +9.0 |", t)
        self.assertIn("| **misses, kernel pc** | 1.0 | 3.0 | +2.0 |", t)
        self.assertIn("| misses: after a ret/iret | 1.00 | 2.20 | +1.20 |", t)
        self.assertIn("| miss rate, kernel pc (%) | 4.76 | 10.00 | +5.24 |", t)
        self.assertIn("| distinct user pcs looked up per window (mean) | 0 | 2 | +2 |", t)
        self.assertIn("| distinct user pcs missed per window (mean) | 0 | 1 | +1 |", t)
        self.assertIn("| kernel blocks ending ret/indirect/xpage (lookups; the cost table's TB "
                      "lookups) | 20 | 30 | +10 |", t)
        self.assertIn("| full TLB flushes (mov to cr3/cr4: the cache cleared) | 0.00 | 0.10 | "
                      "+0.10 |", t)
        self.assertIn("| mroce module <- timers and clock | 0.0 | 1.2 | +1.2 |", t)
        self.assertIn("| timers and clock <- memset/memcpy | 1.0 | 0.0 | -1.0 |", t)
        self.assertIn("| mroce_tx_one+0x10 [mroce] | hrtimer_interrupt+0x40 | 528 | 1.20 | 12.00 |",
                      t)
        self.assertIn("| user 0x401000 | mroce_tx_one+0x10 [mroce] | 1088 | 0.20 | 6.00 |", t)

    def test_no_section_without_jc(self):
        self.assertNotIn("Jump cache", insnprof.report(insnprof.load(COST), 10, "rxe"))


def jc_slot(pc):
    """The slot by QEMU 7.2's own expression (accel/tcg/tb-hash.h, softmmu,
    12-bit pages), re-derived here: tmp = pc ^ (pc >> 6), then bits 11:6 of
    the slot from tmp's 17:12, bits 5:0 from tmp's 5:0."""
    tmp = pc ^ (pc >> 6)
    return ((tmp >> 6) & 0xfc0) | (tmp & 0x3f)


class JcSimTest(unittest.TestCase):
    """The plugin's jump-cache simulation itself (insnprof.c, through
    jcsim.c): the slot function, the entry classification on canned blocks
    of real x86 bytes, the simulated cache, the trace and its off-line
    re-simulation with a range moved."""

    @classmethod
    def setUpClass(cls):
        hdr = sorted(glob.glob(os.path.join(TOP, "build/insnprof/include-*/qemu-plugin.h")))
        if not hdr or not shutil.which("cc"):
            raise unittest.SkipTest("no cc or QEMU plugin header (scripts/insnprof/build.sh)")
        cls.tmp = tempfile.mkdtemp()
        cls.exe = os.path.join(cls.tmp, "jcsim")
        subprocess.run(["cc", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                        "-Wno-unused-function", "-I" + os.path.dirname(hdr[-1]), "-I" + HERE,
                        "-o", cls.exe, os.path.join(HERE, "jcsim.c"), "-lpthread"], check=True)
        subprocess.run([cls.exe, "machine", cls.tmp], check=True, capture_output=True)
        cls.snap = insnprof.read_snap(os.path.join(cls.tmp, "jc-1.snap"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def jcsim(self, *args):
        return subprocess.run([self.exe] + list(args), check=True, capture_output=True,
                              text=True).stdout.split("\n")[:-1]

    def test_slot_function(self):
        pcs = [0xffffffff81000100, 0xffffffff81041100, 0x401000, 0xffffffffc0547f10,
               0xffffffff8dc00000, 0x7ffff7fd0123, 0xffffffffc07d5f10, 0xfff]
        got = [int(x) for x in self.jcsim("hash", *[f"{pc:x}" for pc in pcs])]
        self.assertEqual(got, [jc_slot(pc) for pc in pcs])
        self.assertEqual(got, [insnprof.jc_hash(pc) for pc in pcs])
        # by hand: 0x100 -> 4 ^ 0 in page group 0; 65 pages on, the same slot;
        # 0x401000: in-page 0, group 0x401 ^ 0x10 = 0x11 -> 17 * 64
        self.assertEqual(got[:3], [4, 4, 1088])
        # 0xfff: 0x3f ^ 0x3f = 0 in group 0
        self.assertEqual(got[7], 0)
        # a page's 64 slots; the same offset 64 pages on (one group bit and
        # one fold bit flip) and 4096 pages on (bits above 23 ignored): the same slot
        self.assertEqual(len({jc_slot(0xffffffff81000000 + i) for i in range(4096)}), 64)
        self.assertEqual(jc_slot(0xffffffff81000123), jc_slot(0xffffffff81000123 + 4096 * 4096))
        self.assertNotEqual(jc_slot(0xffffffff81000123), jc_slot(0xffffffff81000123 + 4096 * 64))

    def test_entries_by_kind(self):
        # jcsim.c's machine(): every block entry's kind worked out there
        self.assertEqual(self.snap.jk, {
            ("first", 0, 0): [1, 1], ("first", 0, 1): [1, 1],
            ("ret", 0, 0): [4, 3], ("ret", 1, 0): [1, 1], ("ret", 1, 1): [1, 0],
            ("indirect", 0, 0): [1, 1], ("xpage", 0, 0): [5, 4], ("eob", 0, 0): [7, 7],
            ("twopage", 0, 0): [1, 1], ("async", 0, 0): [1, 1]})
        self.assertEqual(self.snap.head["jc_flushes"], "1")

    def test_per_pc_and_pairs(self):
        k = 0xffffffff81000000
        jp, jx = self.snap.jp, self.snap.jx
        # the return site: missed cold, hit, missed after the cr3 flush
        self.assertEqual(jp[k + 0xd], [3, 2])
        # b's slot, taken by h 65 pages on: b evicts h
        self.assertEqual(jx[(k + 0x100, k + 0x41100)], 1)
        # the block after sti is another block (interrupts inhibited): the
        # same pc's plain lookup misses, evicting it
        self.assertEqual(jx[(k + 0x201001, k + 0x201001)], 1)
        # a (kernel) on both vCPUs: their own caches
        self.assertEqual(jp[k], [3, 3])
        self.assertEqual(jp[0x401000], [2, 1])
        self.assertEqual(sum(jx.values()), sum(v[1] for v in self.snap.jk.values()))

    def test_trace_resimulates(self):
        tr = os.path.join(self.tmp, "jc-1.jtrace")
        self.assertEqual(os.path.getsize(tr), 16 * 23 + 16)   # 23 lookups, one flush
        self.assertEqual(self.jcsim("sim", tr), ["23 20"])

    def test_move(self):
        # P and Q share slot 4 (65 pages apart) on vCPU 0: P Q P Q P Q, one
        # flush, P; vCPU 1: P
        p, q = 0xffffffff81000100, 0xffffffff81041100
        recs = [(p, 0, 2), (q, 0, 2)] * 3 + [(0, 0, 0xff), (p, 0, 2), (p, 1, 2)]
        tr = os.path.join(self.tmp, "pq.jtrace")
        with open(tr, "wb") as f:
            for pc, vcpu, kind in recs:
                f.write(pc.to_bytes(8, "little") + bytes([vcpu, kind, 0, 0]) + bytes(4))
        self.assertEqual(self.jcsim("sim", tr), ["8 8"])
        # without the flush P's last lookup on vCPU 0 finds Q in the slot (a miss
        # all the same) or, Q moved, P itself (a hit)
        self.assertEqual(self.jcsim("sim", "-F", tr), ["8 8"])
        self.assertEqual(self.jcsim("sim", "-F", tr, f"{q:x}:{q + 1:x}:1"), ["8 3"])
        # Q one page on: its own slot; P cold, after the flush, on vCPU 1
        self.assertEqual(self.jcsim("sim", tr, f"{q:x}:{q + 1:x}:1"), ["8 4"])
        # a sweep of Q's page: it collides with P where it is, and 4096
        # pages on (16 MiB: bits above 23 are not in the slot)
        out = self.jcsim("sweep", tr, f"{q & ~0xfff:x}:{(q & ~0xfff) + 0x1000:x}", "-1", "2")
        self.assertEqual(out, ["-1 8 4 1 0", "0 8 8 3 2", "1 8 4 1 0"])
        self.assertEqual(self.jcsim("sweep", tr, f"{q & ~0xfff:x}:{(q & ~0xfff) + 0x1000:x}",
                                    "4095", "4097"), ["4095 8 4 1 0", "4096 8 8 3 2"])


if __name__ == "__main__":
    unittest.main()
