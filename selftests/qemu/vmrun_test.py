#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of vmrun.py's boot loop (make check runs them before the VM
tests): which boots it repeats, and which kernel-log lines fail the run.
Each fake boot replays a console transcript through the real Boot.line()."""

import glob
import os
import re
import sys
import tempfile
import threading
import time
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmrun  # noqa: E402

# The guest kernel dying before user space, as 6.12 did under
# multi-threaded TCG (CI of session 35).
INT3 = """\
[    1.912345] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI
[    1.912345] CPU: 1 UID: 0 PID: 16 Comm: rcu_preempt Not tainted 6.12.118+deb12-amd64 #1
[    1.912345] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
[    1.912345] RIP: 0010:sched_clock_cpu+0x9/0x1e0
[    1.912345] Call Trace:
[    1.912345]  <TASK>
[    1.912345]  update_rq_clock+0x3e/0x1a0
[    1.912345]  __schedule+0x10c/0xb60
[    1.912345]  schedule_timeout+0x98/0x160
[    1.912345]  rcu_gp_fqs_loop+0x11b/0x560
[    1.912345]  rcu_gp_kthread+0x1a9/0x270
[    1.912345]  </TASK>
[    1.912345] Oops: int3: 0000 [#2] PREEMPT SMP NOPTI
[    1.912345] Kernel panic - not syncing: Fatal exception in interrupt
"""

START = "[    9.000000] mroce-selftests: start kver=6.12 clocksource=hpet randomize_va_space=0\n"
DONE = "[   30.000000] mroce-selftests: done\n"


def test_run(name, rc=0):
    return (f"[   10.000000] mroce-selftests: begin {name} timeout=120\n"
            f"[   20.000000] mroce-selftests: end {name} rc={rc} secs=10\n")


class FakeBoot(vmrun.Boot):
    """A boot that replays a console transcript instead of running QEMU."""

    def __init__(self, transcript, *a):
        super().__init__(*a)
        self.transcript = transcript

    def run(self):
        for line in self.transcript.splitlines():
            self.line(line)
        return False


class RunBootsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.args = types.SimpleNamespace(plain=False)
        self.results = []
        self.boots = []

    def tearDown(self):
        self.tmp.cleanup()

    def run_boots(self, transcripts, plan=("mroce_load", "mroce_verify"), max_boots=6):
        """Run the loop over fake boots, boot n replaying transcripts[n-1]."""
        plan = [(name, 120, f"selftests/{name}.sh") for name in plan]

        def new_boot(n, plan_left):
            self.boots.append(FakeBoot(transcripts[n - 1], "6.12", "initrd",
                                       os.path.join(self.tmp.name, f"boot{n}"), plan_left,
                                       self.args, self.results.append))
            return self.boots[-1]
        return vmrun.run_boots(plan, max_boots, new_boot, tap=lambda msg: None)

    def test_clean_boot(self):
        left, boots, early, between, notes = self.run_boots(
            [START + test_run("mroce_load") + test_run("mroce_verify") + DONE])
        self.assertEqual((left, boots, early, between, notes), ([], 1, 0, [], []))
        self.assertEqual([r.name for r in self.results], ["mroce_load", "mroce_verify"])

    def test_death_before_start_is_booted_again_and_not_counted(self):
        left, boots, early, between, notes = self.run_boots(
            [INT3, START + test_run("mroce_load") + test_run("mroce_verify") + DONE])
        self.assertEqual(left, [])
        self.assertEqual((boots, early), (2, 1))
        self.assertEqual(between, [])
        self.assertTrue(any("Oops: int3" in n and n.startswith("boot1:") for n in notes), notes)
        self.assertTrue(any("sched_clock_cpu" in n for n in notes), notes)
        self.assertEqual([r.rc for r in self.results], [0, 0])

    def test_death_on_every_boot_fails(self):
        left, boots, early, between, notes = self.run_boots([INT3] * 10)
        # two forgiven reboots, then the third death counts and stops the run
        self.assertEqual(boots, vmrun.EARLY_RETRIES + 1)
        self.assertEqual(early, vmrun.EARLY_RETRIES)
        self.assertEqual([name for name, _, _ in left], ["mroce_load", "mroce_verify"])
        self.assertTrue(any(b.startswith(f"boot{boots}: ") and "Oops: int3" in b
                            for b in between), between)
        self.assertTrue(any("Kernel panic" in b for b in between), between)

    def test_death_after_start_counts(self):
        # The VM came up (init's marker), then died between tests: as before,
        # a kernel-log failure and no extra boot for it.
        crash = START + test_run("mroce_load") + INT3
        left, boots, early, between, notes = self.run_boots(
            [crash, START + test_run("mroce_verify") + DONE])
        self.assertEqual((boots, early, notes), (2, 0, []))
        self.assertTrue(any("Oops: int3" in b for b in between), between)
        self.assertEqual(left, [])

    def test_death_during_a_test_counts(self):
        crash = START + "[   10.0] mroce-selftests: begin mroce_load timeout=120\n" + INT3
        left, boots, early, between, notes = self.run_boots(
            [crash, START + test_run("mroce_verify") + DONE])
        self.assertEqual((boots, early, between, notes), (2, 0, [], []))
        # the test the crash cut short (Boot.run reports it after QEMU exits)
        load = self.boots[0].results["mroce_load"]
        self.assertIsNone(load.rc)
        self.assertTrue(any("Oops: int3" in t for t in load.splats.bad))

    def test_death_before_start_with_mroce_loaded_counts(self):
        # Should mroce ever be loaded before the marker, its oops is not
        # forgiven.
        oops = INT3.replace("[    1.912345] RIP:",
                            "[    1.912345] Modules linked in: mroce(OE) ib_core\n"
                            "[    1.912345] RIP:")
        left, boots, early, between, notes = self.run_boots([oops, START + DONE])
        self.assertEqual((boots, early, notes), (1, 0, []))
        self.assertTrue(any("Oops: int3" in b for b in between), between)
        self.assertEqual(len(left), 2)

    def test_warning_before_start_of_a_live_boot_counts(self):
        # The kernel warned at boot but came up: not a death, it fails the
        # kernel-log check as before.
        warn = ("[    1.5] WARNING: CPU: 0 PID: 1 at kernel/foo.c:12 foo+0x1/0x2\n"
                "[    1.5] RIP: 0010:foo+0x1/0x2\n")
        left, boots, early, between, notes = self.run_boots(
            [warn + START + test_run("mroce_load") + test_run("mroce_verify") + DONE])
        self.assertEqual((boots, early, notes), (1, 0, []))
        self.assertTrue(any("WARNING:" in b for b in between), between)

    def test_each_kind_of_death_before_start_is_booted_again(self):
        # klog.DEATH decides: each kind alone, with no panic line after it.
        for line in ["Kernel panic - not syncing: Attempted to kill init!",
                     "Oops: int3: 0000 [#1] PREEMPT SMP NOPTI",
                     "kernel BUG at mm/slub.c:435!",
                     "general protection fault: 0000 [#1] PREEMPT SMP NOPTI"]:
            with self.subTest(line=line):
                self.results, self.boots = [], []
                left, boots, early, between, notes = self.run_boots(
                    [f"[    1.9] {line}\n", START + test_run("mroce_load") +
                     test_run("mroce_verify") + DONE])
                self.assertEqual((left, boots, early, between), ([], 2, 1, []))
                self.assertTrue(any(line in n for n in notes), notes)

    def test_stall_or_warning_before_start_is_not_a_death(self):
        # Bad lines that are no death, in a VM that never came up: not
        # booted again, the tests are left unrun and the lines count.
        for line in ["WARNING: CPU: 0 PID: 1 at kernel/foo.c:12 foo+0x1/0x2",
                     "rcu: INFO: rcu_preempt self-detected stall on CPU",
                     "INFO: task swapper/0:1 blocked for more than 120 seconds.",
                     "WARNING: CPU: 0 PID: 1 at kernel/foo.c:8 __FOO_BUG_ON+0x1/0x2",
                     "WARNING: CPU: 0 PID: 1 at lib/oops_notify.c:12 oops_notify+0x1/0x2"]:
            with self.subTest(line=line):
                self.results, self.boots = [], []
                left, boots, early, between, notes = self.run_boots(
                    [f"[    1.9] {line}\n", START + DONE])
                self.assertEqual((boots, early, notes), (1, 0, []))
                self.assertEqual(len(left), 2)
                self.assertTrue(any(line in b for b in between), between)

    def test_vm_that_never_starts_without_a_death_is_not_retried(self):
        hang = "[    1.0] Run /init as init process\n"
        left, boots, early, between, notes = self.run_boots([hang, START + DONE])
        self.assertEqual((boots, early), (1, 0))
        self.assertEqual(len(left), 2)

    def test_early_deaths_do_not_use_up_crash_reruns(self):
        crash = START + "[   10.0] mroce-selftests: begin mroce_load timeout=120\n" + INT3
        left, boots, early, between, notes = self.run_boots(
            [INT3, crash, START + test_run("mroce_verify") + DONE], max_boots=2)
        self.assertEqual((left, boots, early), ([], 3, 1))



class KernelImageTest(unittest.TestCase):
    """--kernel/--modroot (make vmtest-lockdep): what QEMU boots and what
    the guest is told about the modules."""

    def setUp(self):
        self.saved = (vmrun.KERNEL, vmrun.MODROOT)
        self.args = types.SimpleNamespace(shell=False, clock="hpet", aslr="off", append="",
                                          smp=2, mem="2G", plugin=None, tcg_thread=None)

    def tearDown(self):
        vmrun.KERNEL, vmrun.MODROOT = self.saved

    def cmd(self):
        cmd = vmrun.qemu_cmd("K", "initrd", "/out", self.args)
        return cmd[cmd.index("-kernel") + 1], cmd[cmd.index("-append") + 1].split()

    def test_default_is_debians_kernel(self):
        vmrun.KERNEL, vmrun.MODROOT = None, "/"
        image, append = self.cmd()
        self.assertEqual(image, "/boot/vmlinuz-K")
        self.assertFalse([w for w in append if w.startswith("MROCE_MODROOT=")])
        self.assertEqual(vmrun.moddir("K"), "/lib/modules/K")

    def test_own_kernel_and_modules(self):
        vmrun.KERNEL, vmrun.MODROOT = "/cache/obj/bzImage", "/cache/mods"
        image, append = self.cmd()
        self.assertEqual(image, "/cache/obj/bzImage")
        self.assertIn("MROCE_MODROOT=/cache/mods", append)
        self.assertEqual(vmrun.moddir("K"), "/cache/mods/lib/modules/K")


class PinTest(unittest.TestCase):
    """--pin (MROCE_VM_PIN): each vCPU thread on a host CPU of its own."""

    def test_plan_one_vcpu_per_cpu(self):
        self.assertEqual(vmrun.pin_plan({1: 202, 0: 201}, {3, 1}),
                         [(0, 201, 1), (1, 202, 3)])

    def test_plan_wraps_with_more_vcpus_than_cpus(self):
        self.assertEqual(vmrun.pin_plan({0: 10, 1: 11, 2: 12}, {0, 1}),
                         [(0, 10, 0), (1, 11, 1), (2, 12, 0)])

    def test_plan_one_cpu_pins_nothing(self):
        self.assertEqual(vmrun.pin_plan({0: 10, 1: 11}, {0}), [])

    def test_threads_found_by_name_and_pinned(self):
        """Two threads of this process named as QEMU names its vCPU
        threads (and one not): pin_vcpus finds and pins exactly those."""
        named, stop = {}, threading.Event()

        def worker(name):
            tid = threading.get_native_id()
            with open(f"/proc/self/task/{tid}/comm", "w") as f:
                f.write(name)
            named[name] = tid
            stop.wait(10)

        threads = [threading.Thread(target=worker, args=(n,))
                   for n in ("CPU 0/TCG", "CPU 1/TCG", "worker")]
        for t in threads:
            t.start()
        try:
            while len(named) < 3:
                time.sleep(0.01)
            self.assertEqual(vmrun.vcpu_threads(os.getpid()),
                             {0: named["CPU 0/TCG"], 1: named["CPU 1/TCG"]})
            calls = []
            self.assertIsNone(vmrun.pin_vcpus(os.getpid(), 3, lambda t, c: calls.append((t, c))))
            self.assertEqual(calls, [])
            done = vmrun.pin_vcpus(os.getpid(), 2, lambda t, c: calls.append((t, c)))
            cpus = sorted(os.sched_getaffinity(0))
            if len(cpus) < 2:
                self.assertEqual(calls, [])
                self.assertIn("not pinned", done[0])
                return
            self.assertEqual(calls, [(named["CPU 0/TCG"], {cpus[0]}),
                                     (named["CPU 1/TCG"], {cpus[1]})])
            self.assertEqual(done[1], f"vcpu1 thread {named['CPU 1/TCG']} -> host CPU {cpus[1]}")
        finally:
            stop.set()
            for t in threads:
                t.join()

    def test_qemu_names_its_threads(self):
        args = types.SimpleNamespace(shell=False, clock="hpet", aslr="off", append="",
                                     smp=2, mem="2G", plugin=None, tcg_thread=None)
        cmd = vmrun.qemu_cmd("K", "initrd", "/out", args)
        self.assertIn("debug-threads=on", cmd[cmd.index("-name") + 1])


class DeclaredTests(unittest.TestCase):
    """Every selftests/mroce_*.sh is in one list of selftests/Makefile:
    TEST_PROGS (run by a plain make vmtest) or TEST_PROGS_EXTENDED (by name
    only); vmrun's default is TEST_PROGS alone."""

    def lists(self):
        with open(os.path.join(vmrun.SELFTESTS, "Makefile")) as f:
            text = f.read().replace("\\\n", " ")
        out = {}
        for m in re.finditer(r"^(TEST_PROGS(?:_EXTENDED)?)\s*:?=\s*(.*)$", text, re.M):
            out.setdefault(m.group(1), []).extend(m.group(2).split())
        return out

    def test_every_script_in_one_list(self):
        lists = self.lists()
        declared = lists.get("TEST_PROGS", []) + lists.get("TEST_PROGS_EXTENDED", [])
        scripts = sorted(os.path.basename(p)
                         for p in glob.glob(os.path.join(vmrun.SELFTESTS, "mroce_*.sh")))
        self.assertEqual(sorted(declared), scripts)

    def test_default_is_test_progs_alone(self):
        lists = self.lists()
        self.assertTrue(lists.get("TEST_PROGS_EXTENDED"))
        self.assertEqual(vmrun.default_tests(), [p[:-3] for p in lists["TEST_PROGS"]])


if __name__ == "__main__":
    unittest.main(verbosity=2)
