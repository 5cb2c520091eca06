#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of klog.py, the kernel-log check of the VM runner (make check
runs them before the VM tests: a parser that misses a report would let a
broken kernel pass)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import klog  # noqa: E402

# Shapes of Debian 6.1 console output, as the VM prints them.
LOCKUP = """\
[  157.143730] watchdog: BUG: soft lockup - CPU#1 stuck for {n}s! [insmod:261]
[  157.143730] Modules linked in: qhang(OE+) mroce(OE) ib_core
[  157.143730] CPU: 1 PID: 261 Comm: insmod Tainted: G           OEL     6.1.0-57-amd64 #1
[  157.143730] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
[  157.143730] RIP: 0010:qhang_spin+0x11/0x1000 [qhang]
[  157.143730] Code: 0f 1f 44 00 00 8b 05 <f3> 90
[  157.143730] RSP: 0018:ffffa4c3c0137d08 EFLAGS: 00000202
[  157.143730] RAX: 0000000000000001 RBX: 0000000000000000 RCX: 0000000000000000
[  157.143730] Call Trace:
[  157.143730]  <TASK>
[  157.143730]  qhang_init+0x16/0x1000 [qhang]
[  157.143730]  ? 0xffffffffc052b000
[  157.143730]  do_one_initcall+0x59/0x220
[  157.143730]  ? kmem_cache_free+0x15/0x310
[  157.143730]  do_init_module+0x4a/0x1f0
[  157.143730]  </TASK>
[  157.143730] Sending NMI from CPU 1 to CPUs 0:
[  157.197638] NMI backtrace for cpu 0 skipped: idling at native_safe_halt+0xb/0x10
"""

HUNG = """\
[  363.452880] INFO: task rdma:404 blocked for more than 60 seconds.
[  363.453144]       Tainted: G           OE      6.1.0-57-amd64 #1 Debian 6.1.192-3
[  363.453494] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
[  363.453806] task:rdma            state:D stack:0     pid:404   ppid:143    flags:0x00000002
[  363.454174] Call Trace:
[  363.454364]  <TASK>
[  363.454472]  __schedule+0x34d/0xa00
[  363.456027]  cma_remove_one+0x5a/0xd0 [rdma_cm]
[  363.456541]  remove_client_context+0x8a/0xd0 [ib_core]
[  363.454364]  </TASK>
[  401.800000] unregister_netdevice: waiting for veth00 to become free. Usage count = 2
"""

OOPS = """\
[ 1381.268792] BUG: kernel NULL pointer dereference, address: 0000000000000508
[ 1381.268792] #PF: supervisor read access in kernel mode
[ 1381.268792] Oops: 0000 [#1] PREEMPT SMP NOPTI
[ 1381.268792] CPU: 0 PID: 3415 Comm: kworker/0:2 Tainted: G           OE      6.1.0-57-amd64 #1
[ 1381.268792] Workqueue: smbd smbd_disconnect_rdma_work [cifs]
[ 1381.268792] RIP: 0010:rdma_disconnect+0x2f/0x170 [rdma_cm]
[ 1381.268792] Call Trace:
[ 1381.333400]  process_one_work+0x1c7/0x380
[ 1381.333400]  worker_thread+0x4d/0x380
[ 1381.333400] ---[ end trace 0000000000000000 ]---
[ 1381.333400] RIP: 0010:rdma_disconnect+0x2f/0x170 [rdma_cm]
[ 1381.333400] Kernel panic - not syncing: Fatal exception
"""


def run(text):
    sp = klog.Splats()
    for line in text.splitlines():
        sp.feed(line)
    return sp


class KlogTest(unittest.TestCase):
    def test_clean_log_has_no_report(self):
        sp = run("[    1.0] mroce: loaded\n[    2.0] mroce_a: link up\n")
        self.assertEqual(sp.bad, [])
        self.assertEqual(sp.report(), [])
        self.assertIsNone(sp.hang())

    def test_lockup_frames_once_with_count(self):
        sp = run("".join(LOCKUP.format(n=n) for n in (49, 75, 105)))
        out = sp.report()
        self.assertIn("soft lockup", sp.hang())
        head = [ln for ln in out if "soft lockup" in ln]
        self.assertEqual(len(head), 1, out)
        self.assertIn("(seen 3 times, last at 157.1s)", head[0])
        self.assertIn("  CPU: 1 PID: 261 Comm: insmod", out)    # taint cut off
        self.assertIn("  RIP: qhang_spin+0x11/0x1000 [qhang]", out)
        self.assertIn("  qhang_init+0x16/0x1000 [qhang]", out)
        self.assertIn("  do_init_module+0x4a/0x1f0", out)
        self.assertFalse([ln for ln in out if "? " in ln or "RSP:" in ln or "Code:" in ln], out)
        self.assertEqual(len([ln for ln in out if "NMI backtrace for cpu 0" in ln]), 1, out)

    def test_hung_task_and_loose_line(self):
        sp = run(HUNG)
        out = sp.report()
        self.assertTrue(out[0].startswith("[363.5s] INFO: task rdma:404 blocked"), out)
        self.assertIn("  task:rdma            state:D stack:0     pid:404   ppid:143    "
                      "flags:0x00000002", out)
        self.assertIn("  cma_remove_one+0x5a/0xd0 [rdma_cm]", out)
        self.assertTrue(out[-1].startswith("[401.8s] unregister_netdevice: waiting"), out)
        self.assertIn("blocked for more than", sp.hang())

    def test_oops_is_one_report_rip_once(self):
        out = run(OOPS).report()
        self.assertTrue(out[0].startswith("[1381.3s] BUG: kernel NULL pointer"), out)
        self.assertIn("  Oops: 0000 [#1] PREEMPT SMP NOPTI", out)
        self.assertEqual(out.count("  RIP: rdma_disconnect+0x2f/0x170 [rdma_cm]"), 1, out)
        self.assertIn("  Workqueue: smbd smbd_disconnect_rdma_work [cifs]", out)
        self.assertIn("[1381.3s] Kernel panic - not syncing: Fatal exception", out)

    def test_deaths(self):
        # Each kind of death on its own, and the reports that are bad but
        # not a death: the kernel warned or stalled and may still come up.
        deaths = ["Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)",
                  "Oops: int3: 0000 [#1] PREEMPT SMP NOPTI",
                  "kernel BUG at mm/slub.c:435!",
                  "BUG: kernel NULL pointer dereference, address: 0000000000000508",
                  "general protection fault, probably for non-canonical address "
                  "0xdead000000000122: 0000 [#1] PREEMPT SMP NOPTI"]
        for line in deaths:
            with self.subTest(line=line):
                sp = run(f"[    1.5] {line}\n")
                self.assertEqual(sp.bad, [line])
                self.assertEqual(sp.died(), line)
        alive = ["WARNING: CPU: 0 PID: 1 at kernel/foo.c:12 foo+0x1/0x2",
                 "INFO: task swapper/0:1 blocked for more than 120 seconds.",
                 "rcu: INFO: rcu_preempt self-detected stall on CPU",
                 "UBSAN: shift-out-of-bounds in lib/foo.c:3:4",
                 "unregister_netdevice: waiting for veth00 to become free. Usage count = 2",
                 # bad lines that name no death but a word that has
                 # one inside it, or in lower case
                 "WARNING: CPU: 0 PID: 1 at kernel/foo.c:8 __FOO_BUG_ON+0x1/0x2",
                 "WARNING: CPU: 0 PID: 1 at lib/oops_notify.c:12 oops_notify+0x1/0x2"]
        for line in alive:
            with self.subTest(line=line):
                sp = run(f"[    1.5] {line}\n")
                self.assertIsNone(sp.died())
        self.assertEqual(run(OOPS).died(), "BUG: kernel NULL pointer dereference, "
                         "address: 0000000000000508")
        self.assertIsNone(run(HUNG).died())
        # The watchdog's "BUG: soft lockup" is one too (\bBUG\b): a boot
        # stuck before the VM came up is booted again like a dead one.
        self.assertIn("soft lockup", run(LOCKUP.format(n=22)).died())

    def test_bounded(self):
        # 40 different 30-frame warnings: 25 lines each at most, 150 in all.
        text = ""
        for i in range(40):
            text += f"[ {i}.0] WARNING: CPU: 0 PID: 1 at x.c:{i} f{i}+0x1/0x2\n"
            text += f"[ {i}.0] Call Trace:\n"
            text += "".join(f"[ {i}.0]  g{i}_{j}+0x1/0x2 [mroce]\n" for j in range(30))
        out = run(text).report()
        self.assertLessEqual(len(out), klog.TOTAL + 1)
        self.assertTrue(out[-1].startswith("... "), out[-1])
        first = out[:out.index(next(ln for ln in out[1:] if not ln.startswith("  ")))]
        self.assertEqual(len(first), klog.PER_SPLAT + 1)   # + the "... more line(s)" note


if __name__ == "__main__":
    unittest.main()
