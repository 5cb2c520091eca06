#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of qemuprof.py (make qemuprof's host profile of QEMU): the
perf script parser, the leaf-frame classification (JIT code buffer, host
kernel, QEMU functions by name, unnamed functions by their neighbour,
libraries), the helper-table reader on a fake image, the normalisation to
microseconds per round trip and the paired rxe/mroce report, on canned
samples worked out by hand."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True   # no __pycache__ in the tree
import qemuprof as q  # noqa: E402

QEMU = "/usr/bin/qemu-system-x86_64"
# a fake QEMU image: named functions (start, size, name), .eh_frame extents
FUNCS = [(0x1000, 0x100, "cpu_exec"), (0x2000, 0, "helper_lookup_tb_ptr"),
         (0x3000, 0x80, "qemu_mutex_lock_iothread_impl"), (0x4000, 0, "helper_le_ldq_mmu"),
         (0x5000, 0x40, "tb_gen_code")]
FDES = [(0x1000, 0x1100), (0x2000, 0x2200), (0x2300, 0x2400), (0x3000, 0x3080),
        (0x4000, 0x4100), (0x5000, 0x5040)]
JIT = [(0x7f0000000000, 0x7f0020000000)]

SCRIPT = """\
qemu-system-x86 100/101 10.000100:     250000 
\t    7f0000001234 [unknown] (/tmp/perf-100.map)

qemu-system-x86 100/101 10.000350:     250000 
\t            2010 [unknown] (/usr/bin/qemu-system-x86_64)
\t    7f0000001234 [unknown] (/tmp/perf-100.map)

qemu-system-x86 100/102 10.000400:     250000 
\t    7f0000000010 [unknown] (//anon)

qemu-system-x86 100/102 10.000600:     250000 
\tffffffff81000010 do_syscall_64 ([kernel.kallsyms])
\t    7f1234500000 __GI___futex_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t            3010 [unknown] (/usr/bin/qemu-system-x86_64)

qemu-system-x86 100/102 10.000800:     250000 
\t            2310 [unknown] (/usr/bin/qemu-system-x86_64)

qemu-system-x86 100/103 10.000900:     500000 
\t    7f1234500010 __memmove_avx_unaligned_erms (/usr/lib/x86_64-linux-gnu/libc.so.6)

swapper     0/0 10.001000:     250000 
\tffffffff81000020 pv_native_safe_halt ([kernel.kallsyms])

perf 200/200 10.001100:     250000 
\tffffffff81000030 perf_poll ([kernel.kallsyms])
"""


def syms():
    return q.Symbols(QEMU, funcs=FUNCS, fdes=FDES)


class ParseTest(unittest.TestCase):
    def test_samples(self):
        got = list(q.parse_script(SCRIPT.splitlines(True)))
        self.assertEqual(len(got), 8)
        comm, pid, tid, t, period, frames = got[1]
        self.assertEqual((comm, pid, tid, period), ("qemu-system-x86", 100, 101, 250000))
        self.assertAlmostEqual(t, 10.00035)
        self.assertEqual(frames[0], (0x2010, "[unknown]", QEMU))
        self.assertEqual(len(frames), 2)
        self.assertEqual(got[6][:3], ("swapper", 0, 0))

    def test_jit_ranges(self):
        maps = ("55cbbc04d000-55cbbc5e4000 r-xp 00407000 fe:00 10977398   " + QEMU + "\n"
                "7fc3a4000000-7fc3c3fff000 rwxp 00000000 00:00 0 \n"
                "7fc3c4000000-7fc3c4001000 rwxp 00000000 00:00 0 \n"
                "7fc3c5000000-7fc3c6000000 rw-p 00000000 00:00 0 \n")
        self.assertEqual(q.jit_ranges(maps), [(0x7fc3a4000000, 0x7fc3c3fff000)])


class SymbolTest(unittest.TestCase):
    def test_names(self):
        s = syms()
        self.assertEqual(s.name(0x1010), ("cpu_exec", True))
        # a helper-table name (no size): its whole FDE
        self.assertEqual(s.name(0x21f0), ("helper_lookup_tb_ptr", True))
        # an unnamed function after it: named by the neighbour, approximate
        self.assertEqual(s.name(0x2310), ("~helper_lookup_tb_ptr+0x300", False))
        # past a sized symbol, no FDE: offset from the symbol
        self.assertEqual(s.name(0x1200), ("~cpu_exec+0x200", False))
        self.assertEqual(s.name(0x10), ("[unknown]", False))

    def test_helper_table(self):
        # .rodata names, a 24-byte-stride table of (func, name, flags) with
        # one entry's function bound by a symbol relocation (no relative one)
        names = {0x9000: b"rdtsc", 0x9010: b"lookup_tb_ptr", 0x9020: b"atomic_cmpxchgl_le",
                 0x9040: b"exported_one"}
        data = bytearray(0xa000)
        for a, n in names.items():
            data[a:a + len(n) + 1] = n + b"\0"

        class FakeElf:
            def __init__(self):
                self.data = bytes(data)

            def text_range(self):
                return 0x1000, 0x8000

            def vaddr_to_off(self, a):
                return a if 0 <= a < len(self.data) else None
        tab = 0x8800
        rel = {tab: 0x1100, tab + 8: 0x9000, tab + 24: 0x2000, tab + 32: 0x9010,
               tab + 48 + 8: 0x9040, tab + 72: 0x3000, tab + 80: 0x9020,
               # a lone pair elsewhere that is not a table entry of interest
               0x8f00: 0x8800}
        got = q.helper_table(FakeElf(), rel)
        self.assertEqual(got, [(0x1100, "helper_rdtsc"), (0x2000, "helper_lookup_tb_ptr"),
                               (0x3000, "helper_atomic_cmpxchgl_le")])


class ClassifyTest(unittest.TestCase):
    def test_names(self):
        want = {"helper_lookup_tb_ptr": "tb_lookup", "qht_lookup_custom": "tb_lookup",
                "helper_le_ldq_mmu": "softmmu", "x86_cpu_tlb_fill": "softmmu",
                "tlb_set_page_full": "softmmu", "tb_gen_code": "translate",
                "cpu_exec": "exec", "cpu_loop_exit_noexc": "exec",
                "qemu_mutex_lock_iothread_impl": "io", "apic_mem_read": "io",
                "memory_region_dispatch_write": "io", "helper_outb": "io",
                "helper_rdtsc": "clock", "cpu_get_ticks": "clock",
                "qemu_clock_get_ns": "clock", "helper_atomic_cmpxchgl_le": "atomic",
                "helper_insertq_r": "helper", "helper_cc_compute_all": "helper",
                "object_dynamic_cast_assert": "qemu", "~cpu_exec+0x40": "exec",
                "~tb_gen_code+0x1f10": "translate"}
        for name, cat in want.items():
            self.assertEqual(q.classify_name(name), cat, name)
        self.assertEqual({c for c, _ in q.CATEGORIES} - set(want.values()),
                         {"jit", "lib", "kernel"})

    def test_frames(self):
        s = syms()
        self.assertEqual(q.classify((0x7f0000001234, "[unknown]", "[unknown]"), JIT, s)[0], "jit")
        self.assertEqual(q.classify((0x7f5000000000, "[unknown]", "/tmp/perf-1.map"), [], s)[0],
                         "jit")
        self.assertEqual(q.classify((0xffffffff81000010, "do_syscall_64", "[kernel.kallsyms]"),
                                    JIT, s), ("kernel", "do_syscall_64", True))
        self.assertEqual(q.classify((0x2010, "[unknown]", QEMU), JIT, s),
                         ("tb_lookup", "helper_lookup_tb_ptr", True))
        self.assertEqual(q.classify((0x3010, "x", QEMU), JIT, s)[0], "io")
        self.assertEqual(q.classify((0x1, "__GI___futex_wait", "/lib/libc.so.6"), JIT, s)[0], "io")
        self.assertEqual(q.classify((0x1, "__longjmp_chk", "/lib/libc.so.6"), JIT, s)[0], "exec")
        self.assertEqual(q.classify((0x1, "__vdso_clock_gettime", "[vdso]"), JIT, s)[0], "clock")
        self.assertEqual(q.classify((0x1, "[unknown]", "/usr/lib/x86_64-linux-gnu/qemu/"
                                     "accel-tcg-x86_64.so"), JIT, s)[0], "exec")
        self.assertEqual(q.classify((0x1, "g_hash_table_lookup", "/lib/libglib-2.0.so.0"), JIT,
                                    s), ("lib", "g_hash_table_lookup (libglib-2.0.so.0)", True))


def window(period_scale=1):
    w = q.Window()
    for smp in q.parse_script(SCRIPT.splitlines(True)):
        c, p, t, ts, per, fr = smp
        w.add((c, p, t, ts, per * period_scale, fr), 100, JIT, syms(), QEMU)
    return w


class WindowTest(unittest.TestCase):
    def test_aggregate(self):
        w = window()
        self.assertEqual(w.samples, 8)
        # tid 101: jit + lookup, tid 102: jit, kernel, approx; tid 103: libc
        self.assertEqual(dict(w.ns[101]), {"jit": 250000, "tb_lookup": 250000})
        self.assertEqual(dict(w.ns[102]), {"jit": 250000, "kernel": 250000, "tb_lookup": 250000})
        self.assertEqual(dict(w.ns[103]), {"lib": 500000})
        self.assertEqual(w.approx, {"tb_lookup": 250000})
        self.assertEqual(w.other, {"idle": 250000, "perf": 250000})
        self.assertEqual(w.threads(), {101: "vcpu0", 102: "vcpu1", 103: "other"})
        # the kernel sample's user-space caller: the futex wait in libc
        self.assertEqual(w.kcaller, {("do_syscall_64", "__GI___futex_wait (libc.so.6)"): 250000})
        roles = w.by_role()
        self.assertEqual(sum(roles["qemu"].values()), 1750000)
        # one JIT sample each: the hottest bucket holds all of it
        self.assertEqual(w.jit_hot(), {101: 250000, 102: 250000})
        w.jitb[101][(0x7f0000001234 >> 6) + 2] += 100
        w.jitb[101][(0x7f0000001234 >> 6) + 3] += 1000
        self.assertEqual(w.jit_hot()[101], 250100)


def meta(drv, p0, p1, t0, t1, ok=1):
    # 1000 iterations, 4000 packets in the run: 4 packets a round trip
    return {"driver": drv, "ok": str(ok), "iters": "1000", "sent_run": "0 4000",
            "sent_window": f"{p0} {p1}", "window_t": f"{t0} {t1}",
            "perftest": "64 1000 1.0 9.0 2.00 2.50 0.1 3.0 8.0"}


class NormTest(unittest.TestCase):
    def test_norm(self):
        n = q.norm(meta("rxe", 400, 2400, 1.0, 2.0), {"t_enable": 5.0, "t_disable": 7.0})
        self.assertEqual(n, (500.0, 1.0, 2.0, 4.0))
        self.assertIsNone(q.norm(meta("rxe", 400, 2400, 1.0, 2.0, ok=0),
                                 {"t_enable": 5.0, "t_disable": 7.0}))
        self.assertEqual(q.perftest_fields("64 1000 1.0 9.0 2.00 2.50 0.1 3.0 8.0")["t_avg"], 2.5)

    def test_per_rt_and_report(self):
        # boot A: rxe 500 RTs a guest second, mroce 400; host perf window 2 s
        # against 1 guest s: us per RT = ns / 2 / RTs / 1000
        ws = []
        for boot in ("A", "B"):
            for drv, rts, scale in (("rxe", 500, 1), ("mroce", 400, 2)):
                agg = window(scale).to_json()
                w = dict(boot=boot, col=drv + "-1", driver=drv,
                         norm=(float(rts), 1.0, 2.0, 4.0), perftest={"t_avg": 2.0},
                         win={"sched0": {"101": [0, 0, 0]},
                              "sched1": {"101": [1000000, 200000, 5]}},
                         agg=json_round(agg), meta={"ok": "1"})
                w["v"] = q.per_rt(w)
                ws.append(w)
        rxe, mroce = ws[0]["v"], ws[1]["v"]
        # rxe: tid 101's jit 250000 ns / 2 s / 500 RTs = 250 ns = 0.25 us
        self.assertAlmostEqual(rxe[("vcpu0", "jit")], 0.25)
        self.assertAlmostEqual(rxe[("qemu", "jit")], 0.5)
        self.assertAlmostEqual(mroce[("qemu", "jit")], 2 * 500000 / 2 / 400 / 1000)
        self.assertAlmostEqual(rxe[("wall",)], 2000.0)
        self.assertAlmostEqual(rxe[("sched", "vcpu0", "wait")], 0.2)
        self.assertAlmostEqual(rxe[("host", "idle")], 0.25)
        # derived: totals per role, the busy-wait and the rest
        self.assertAlmostEqual(rxe[("qemu", "_total")], 1.75)
        self.assertAlmostEqual(rxe[("qemu", "_jit_hot")], 0.5)
        self.assertAlmostEqual(rxe[("qemu", "_less_spin")], 1.25)
        self.assertAlmostEqual(rxe[("vcpu1", "_jit_rest")], 0.0)
        pr = q.paired(ws, ("qemu", "jit"))
        self.assertEqual([p[0] for p in pr], ["A", "B"])
        self.assertAlmostEqual(pr[0][3], 1.25 - 0.5)
        # control windows (no perf): wall and schedstat only, the roles of
        # their boot's perf windows
        for boot in ("A", "B"):
            for drv, rts in (("rxe", 1000), ("mroce", 900)):
                c = dict(boot=boot, col=drv + "-1-np", driver=drv, control=True,
                         norm=(float(rts), 1.0, 1.0, 4.0), perftest={},
                         win={"sched0": {"101": [0, 0, 0]}, "sched1": {"101": [900000, 0, 1]}},
                         agg=dict(ns={}, roles={"101": "vcpu0"}, names=[], kcaller=[],
                                  approx={}, other={}), meta={"ok": "1"})
                c["v"] = q.per_rt(c)
                ws.append(c)
        self.assertAlmostEqual(ws[-1]["v"][("wall",)], 1e6 / 900)
        self.assertAlmostEqual(ws[-1]["v"][("sched", "vcpu0", "run")], 1.0)
        text = q.report(ws, top=5)
        self.assertIn("| control (no perf) | 1000.00 | 1111.11 | 1.111 | 0.90 | 1.00 | 0.00 | 0.00 "
                      "| 0.00 | 0.00 |", text)
        self.assertIn("| jit: JIT-generated code", text)
        self.assertIn("**0.75**", text)
        self.assertIn("`helper_lookup_tb_ptr`", text)
        self.assertIn("4 usable windows of 4 in 2 boot(s)", text)


class EqualWallTest(unittest.TestCase):
    def test_recovers_excess(self):
        # lookup = 2 + 0.1 x wall, mroce 3 more at any wall
        ws = []
        for drv, walls in (("rxe", (50, 70, 100)), ("mroce", (60, 90, 150))):
            for wall in walls:
                ws.append(dict(driver=drv, v={("wall",): float(wall), ("qemu", "tb_lookup"):
                                              2 + 0.1 * wall + (3 if drv == "mroce" else 0)}))
        a, slope, excess = q.equal_wall(ws, ("qemu", "tb_lookup"))
        self.assertAlmostEqual(a, 2.0)
        self.assertAlmostEqual(slope, 0.1)
        self.assertAlmostEqual(excess, 3.0)
        self.assertIsNone(q.equal_wall(ws[:3], ("qemu", "tb_lookup")))


STAT = """\
# started on Mon Dec  7 04:00:00 2026

qemu-system-x86-101,3000,,qemuprof:lookup,8000000000,100.00,,
qemu-system-x86-102,1000,,qemuprof:lookup,8000000000,100.00,,
qemu-system-x86-103,0,,qemuprof:lookup,8000000000,100.00,,
qemu-system-x86-101,300,,qemuprof:qp_miss,8000000000,100.00,,
qemu-system-x86-102,100,,qemuprof:qp_miss,8000000000,100.00,,
qemu-system-x86-103,<not counted>,,qemuprof:qp_miss,0,0.00,,
qemu-system-x86-101,20,,qemuprof:exit,8000000000,100.00,,
qemu-system-x86-103,4,,qemuprof:exit_noexc,8000000000,100.00,,
"""


class UprobeTest(unittest.TestCase):
    def test_parse_stat_and_roles(self):
        c = q.parse_stat(STAT.splitlines(True))
        self.assertEqual(c["101"], {"lookup": 3000, "miss": 300, "exit": 20})
        self.assertEqual(c["103"]["miss"], 0)
        self.assertEqual(q.uprobe_roles(c), {"101": "vcpu0", "102": "vcpu1", "103": "other"})

    def test_kinds_and_events(self):
        self.assertEqual(q.window_kind("mroce-1-np"), "control")
        self.assertEqual(q.window_kind("mroce2-1-um"), "uprobes")
        self.assertEqual(q.window_kind("rxe-2"), "perf")
        defined = ["lookup", "miss", "gen", "exit"]
        self.assertEqual(q.uprobe_events("rxe-1-um", defined), ["miss", "gen", "exit"])
        self.assertEqual(q.uprobe_events("rxe-1-ul", defined), ["lookup", "miss", "gen", "exit"])

    def test_points(self):
        class FakeElf:
            def dynsym_funcs(self):
                return [(0x401000, 0x40, "qht_lookup_custom"), (0x402000, 0x40, "cpu_exec")]

            def relative_relocs(self):
                return []

            def vaddr_to_off(self, a):
                return a - 0x400000
        real = q.helper_table
        q.helper_table = lambda elf, rel: [(0x403000, "helper_lookup_tb_ptr")]
        try:
            pts = q.uprobe_points(elf=FakeElf())
        finally:
            q.helper_table = real
        self.assertEqual(pts, {"lookup": 0x3000, "miss": 0x1000, "exec": 0x2000})

    def test_per_rt_and_report(self):
        # 1000 RTs in 2 guest seconds; the host counted over 2.5 s (its
        # enable before and disable after the guest's reads): a count
        # per RT is n x 2 / 2.5 / 1000
        def uwin(boot, drv, col, stat, rts):
            return dict(boot=boot, col=col, driver=drv, kind="uprobes",
                        norm=(float(rts), 2.0, 2.5, 4.0), meta={"ok": "1",
                                                               "sent_outer": "0 8000", "modbase":
                                                               f"{drv}@0xffffffffc0a00000",
                                                               "ktext": "ffffffff81000000"},
                        win={"uprobes": ["lookup", "miss", "exit", "exit_noexc"] if
                             col.endswith("-ul") else ["miss", "exit", "exit_noexc"]},
                        counts=q.parse_stat(stat.splitlines(True)))
        ws, ctrl = [], []
        for boot in ("A", "B"):
            for drv, scale in (("rxe", 1), ("mroce", 2)):
                # mroce: twice rxe's misses, as many lookups
                st = STAT.replace(",300,", f",{300 * scale},").replace(",100,,", f",{100 * scale},,")
                for suf in ("um", "ul"):
                    ws.append(uwin(boot, drv, f"{drv}-1-{suf}", st, 1000))
                c = dict(boot=boot, col=f"{drv}-1-np", driver=drv, control=True,
                         norm=(20000.0, 1.0, 1.0, 4.0), perftest={}, meta={"ok": "1"},
                         win={}, agg=dict(ns={}, roles={}, names=[], kcaller=[], approx={},
                                          other={}))
                ctrl.append(c)
        for w in ws:
            w["v"] = q.uprobe_rt(w)
        for c in ctrl:
            c["v"] = q.per_rt(c)
        rxe = ws[1]["v"]                # A, rxe, -ul
        self.assertAlmostEqual(rxe[("qemu", "lookup")], 4000 * 0.8 / 1000)
        self.assertAlmostEqual(rxe[("vcpu0", "miss")], 300 * 0.8 / 1000)
        self.assertAlmostEqual(rxe[("qemu", "miss")], 0.32)
        self.assertAlmostEqual(rxe[("qemu", "ratio")], 0.1)
        self.assertAlmostEqual(rxe[("qemu", "exits")], 24 * 0.8 / 1000)
        self.assertAlmostEqual(rxe[("per_s", "miss")], 400 / 2.5)
        self.assertAlmostEqual(rxe[("wall",)], 2000.0)
        # outer: 8000 packets at 4 a RT, 2000 RTs, twice the window's
        self.assertAlmostEqual(rxe[("outer",)], 2.0)
        self.assertAlmostEqual(rxe[("qemu", "miss@outer")], 400 / 2000)
        # outer: 8000 packets at 4 a RT, 2000 RTs, twice the window's
        self.assertAlmostEqual(rxe[("outer",)], 2.0)
        self.assertAlmostEqual(rxe[("qemu", "miss@outer")], 400 / 2000)
        self.assertNotIn(("qemu", "ratio"), ws[0]["v"])   # -um: no lookups counted
        self.assertIsNone(q.uprobe_rt(dict(ws[0], counts={})))   # perf stat failed
        self.assertAlmostEqual(ws[3]["v"][("qemu", "ratio")], 0.2)
        text = q.report_uprobes(ws, ctrl)
        # per window: wall 2000 against the control's 50 us: 40x
        self.assertIn("| A | mroce-1-ul | 1000 | 2000.0 | 40.00 | 2.00 | 3.2 | 0.64 | 0.40 "
                      "| 0.2000 | 0.48 / 0.16 |", text)
        self.assertIn("| A | rxe-1-um | 1000 | 2000.0 | 40.00 | 2.00 | - | 0.32 | 0.20 | - |", text)
        # per driver and against rxe, both boots alike: no spread
        self.assertIn("| misses | 0.32 | 0.64 | 0.32 | ±0.00 |", text)
        self.assertIn("| miss ratio | 0.1000 | 0.2000 | 0.1000 | ±0.0000 |", text)
        self.assertIn("| A | mroce-1 | mroce@0xffffffffc0a00000 | ffffffff81000000 |", text)
        # all windows at one wall time: no fit (singular), no table
        self.assertNotIn("zero wall", text)
        # misses = 100 + 0.02 x wall (+30 for mroce): the fit recovers both
        fw = []
        for drv, walls in (("rxe", (1000.0, 5000.0)), ("mroce", (2000.0, 9000.0))):
            for i, wall in enumerate(walls):
                v = q.collections.Counter({("wall",): wall, ("qemu", "miss"): 100 + 0.02 * wall
                                           + (30 if drv == "mroce" else 0)})
                fw.append(dict(boot=str(i), col=f"{drv}-1-um", driver=drv, v=v, win={},
                               norm=(1.0, 1.0, 1.0, 4.0), meta={}))
        text = q.report_uprobes(fw, [])
        self.assertIn("| COL-um | miss | 4 | 100.0 | mroce | 130.0 | 30.0 | 20.00 |", text)
        self.assertEqual(q.drivers_of([dict(driver=d) for d in ("mroce2", "mroce", "rxe")]),
                         ["rxe", "mroce", "mroce2"])


def json_round(agg):
    import json
    return json.loads(json.dumps(agg))


if __name__ == "__main__":
    unittest.main()
