#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of insnprof.py on canned snapshots (testdata/): two rxe windows
of 100 round trips, one mroce window of 50, counts worked out by hand."""

import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import insnprof  # noqa: E402

DATA = os.path.join(HERE, "testdata")


class InsnprofTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cols = insnprof.load(DATA)
        cls.rxe = insnprof.Column("rxe", *cls.cols["rxe"])
        cls.mroce = insnprof.Column("mroce", *cls.cols["mroce"])

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


if __name__ == "__main__":
    unittest.main()
