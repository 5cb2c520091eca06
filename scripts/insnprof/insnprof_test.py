#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of insnprof.py on canned snapshots (testdata/): two rxe windows
of 100 round trips, one mroce window of 50, counts worked out by hand; and
(testdata_cost/) snapshots with the TCG cost columns (loads, stores, how
each block ends, atomics, wrmsr, tsc, io, sys): one rxe window of 100
round trips, one mroce window of 50."""

import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
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
        counts, head, ext = insnprof.read_snap(os.path.join(COST, "rxe-1.snap"))
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


if __name__ == "__main__":
    unittest.main()
