#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host CPU of the QEMU process per 64 B ib_write_lat round trip, by category.

`make qemuprof` (scripts/qemuprof/run.sh) boots the test VM in the normal
multi-threaded TCG mode and runs scripts/qemuprof/guest.sh in it: rdma_rxe
and mroce columns alternating, each with one steady window. This script has
two halves:

  watch RUN   on the host, while the VM runs: answers the guest's requests
              in the boot's share (RUN/bootN/COL.start, COL.stop) by
              enabling and disabling a system-wide `perf record -e cpu-clock
              -g` (its --control fifo), and keeps the QEMU process's memory
              map and its threads' /proc schedstat (on-CPU and run-queue
              wait time) at both ends of the window: RUN/qemuprof/bootN/COL.*
  report RUN  afterwards: `perf script` of each window, every sample of the
              QEMU process put in a category by its leaf frame (JIT code, TB
              lookup, softmmu slow path, translation, cpu_exec loop and
              exits, MMIO/APIC/timers/BQL, clock, atomics, other QEMU, other
              libraries, host kernel), per thread (the two vCPU threads are
              the ones running JIT code: vcpu0 and vcpu1 by thread id, the
              order QEMU creates them), normalised to host CPU microseconds
              per round trip; rxe against mroce per category, per boot and
              pooled (each boot's mroce mean minus its rxe mean). Windows
              COL-um / COL-ul (QEMUPROF_UPROBES=1) count QEMU functions
              with host uprobes instead (perf stat --per-thread): TB
              lookups, jump-cache misses, translations, loop exits per RT.

Symbols: Debian's qemu-system-x86_64 is stripped; its dynamic symbols name
the exported functions, and the TCG helpers (helper_lookup_tb_ptr,
helper_rdtsc, ...) are named from QEMU's own helper table (TCGHelperInfo:
function pointer then name, found through the relative relocations). A
sample in an unnamed (static) function is named after the nearest named
function before it ("~name+0xoff"), its function's extent known from
.eh_frame; categories of such names are by that neighbour (same source file,
usually) and are marked approximate in the report.
"""

import argparse
import bisect
import collections
import glob
import gzip
import json
import math
import os
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import time

# hostload.py (scripts/) walks a process's /proc threads for vmrun and bench too.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hostload import task_files  # noqa: E402

QEMU = "/usr/bin/qemu-system-x86_64"

# ---------------------------------------------------------------- symbols


class Elf:
    """Just enough of a 64-bit little-endian ELF file: sections, dynamic
    symbols, relative relocations, LOAD segments."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
        (self.phoff, self.shoff) = struct.unpack_from("<QQ", d, 0x20)
        (self.phentsize, self.phnum, self.shentsize, self.shnum,
         self.shstrndx) = struct.unpack_from("<HHHHH", d, 0x36)
        self.sections = []
        for i in range(self.shnum):
            (name, typ, flags, addr, off, size, link, info, align,
             entsize) = struct.unpack_from("<IIQQQQIIQQ", d, self.shoff + i * self.shentsize)
            self.sections.append(dict(name=name, type=typ, addr=addr, off=off, size=size,
                                      link=link, entsize=entsize))
        strtab = self.sections[self.shstrndx]
        for s in self.sections:
            s["name"] = self.cstr(strtab["off"] + s["name"])
        self.loads = []
        for i in range(self.phnum):
            typ, flags, off, vaddr, paddr, filesz, memsz, align = struct.unpack_from(
                "<IIQQQQQQ", d, self.phoff + i * self.phentsize)
            if typ == 1:
                self.loads.append((vaddr, off, filesz, flags))

    def cstr(self, off):
        end = self.data.index(b"\0", off)
        return self.data[off:end].decode("latin-1")

    def section(self, name):
        for s in self.sections:
            if s["name"] == name:
                return s
        return None

    def vaddr_to_off(self, vaddr):
        for v, off, filesz, _ in self.loads:
            if v <= vaddr < v + filesz:
                return vaddr - v + off
        return None

    def text_range(self):
        lo = hi = None
        for v, _, filesz, flags in self.loads:
            if flags & 1:  # PF_X
                lo = v if lo is None else min(lo, v)
                hi = v + filesz if hi is None else max(hi, v + filesz)
        return lo, hi

    def dynsym_funcs(self):
        """(start, size, name) of the defined dynamic function symbols."""
        sym, out = self.section(".dynsym"), []
        if not sym:
            return out
        strs = self.sections[sym["link"]]
        for i in range(sym["size"] // 24):
            name, info, other, shndx, value, size = struct.unpack_from(
                "<IBBHQQ", self.data, sym["off"] + i * 24)
            if info & 0xf == 2 and shndx != 0 and value:
                out.append((value, size, self.cstr(strs["off"] + name)))
        return out

    def relative_relocs(self):
        """{slot address: addend} of the R_X86_64_RELATIVE relocations."""
        rel = {}
        for s in self.sections:
            if s["type"] != 4:  # SHT_RELA
                continue
            buf = self.data[s["off"]:s["off"] + s["size"]]
            for off, info, addend in struct.iter_unpack("<QQq", buf):
                if info & 0xffffffff == 8:
                    rel[off] = addend
        return rel

    def fde_ranges(self):
        """[(start, end)] of the functions .eh_frame describes (readelf)."""
        try:
            out = subprocess.run(["readelf", "-W", "--debug-dump=frames", self.path],
                                 capture_output=True, text=True, check=False).stdout
        except OSError:
            return []
        return [(int(a, 16), int(b, 16))
                for a, b in re.findall(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", out)]


IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*\Z")


def helper_table(elf, rel, anchor="lookup_tb_ptr"):
    """QEMU's TCG helper table: (function address, "helper_" + name) pairs.
    Each TCGHelperInfo starts with the function pointer and the name
    pointer; the table is found from the entry naming ANCHOR and followed in
    both directions at the stride that keeps the pattern longest."""
    lo, hi = elf.text_range()
    if lo is None:
        return []

    def name_at(addr):
        off = elf.vaddr_to_off(addr)
        if off is None:
            return None
        end = elf.data.find(b"\0", off, off + 128)
        if end < 0:
            return None
        s = elf.data[off:end]
        return s.decode() if IDENT.match(s) else None

    def entry(slot):
        """(function or None, name) of a table entry, None if slot holds
        none (the function pointer of an exported helper may be bound by
        a symbol relocation, not a relative one: the name still counts)."""
        n = rel.get(slot + 8)
        name = name_at(n) if n is not None else None
        if not name:
            return None
        f = rel.get(slot)
        return (f if f is not None and lo <= f < hi else None, "helper_" + name)

    starts = [s for s, a in rel.items() if name_at(a) == anchor and entry(s - 8)]
    best = []
    for s in starts:
        s -= 8
        for stride in (24, 32, 16, 40, 48):
            got, k = [], s
            while entry(k):
                k -= stride
            k += stride
            while entry(k):
                got.append(entry(k))
                k += stride
            if len(got) > len(best):
                best = got
    return [(f, n) for f, n in best if f is not None]


class Symbols:
    """Names for addresses of one ELF file (file-relative, as perf prints
    them for a DSO)."""

    def __init__(self, path, funcs=None, fdes=None):
        self.path = path
        if funcs is None:
            elf = Elf(path)
            elf.path = path
            funcs = [(a, s, n) for a, s, n in elf.dynsym_funcs()]
            rel = elf.relative_relocs()
            funcs += [(a, 0, n) for a, n in helper_table(elf, rel)]
            fdes = elf.fde_ranges()
        self.fdes = sorted(fdes or [])
        self.fde_starts = [a for a, _ in self.fdes]
        named = {}
        for a, s, n in funcs:
            # exported and helper names of one address: keep the helper's
            if a not in named or n.startswith("helper_"):
                named[a] = (s, n)
        self.starts = sorted(named)
        self.names = [named[a] for a in self.starts]
        self.cache = {}

    def fde_of(self, addr):
        i = bisect.bisect_right(self.fde_starts, addr) - 1
        if i >= 0 and self.fdes[i][0] <= addr < self.fdes[i][1]:
            return self.fdes[i]
        return None

    def name(self, addr):
        """(name, exact): exact False for a name borrowed from the nearest
        named function before an unnamed one ("~name+0xoff")."""
        if addr in self.cache:
            return self.cache[addr]
        i = bisect.bisect_right(self.starts, addr) - 1
        res = ("[unknown]", False)
        if i >= 0:
            start = self.starts[i]
            size, name = self.names[i]
            fde = self.fde_of(addr)
            if size and addr < start + size:
                res = (name, True)
            elif not size and (fde is None or fde[0] <= start):
                # a helper-table name: its function is the FDE holding it
                res = (name, True)
            elif fde is not None:
                res = (f"~{name}+{fde[0] - start:#x}", False)
            else:
                res = (f"~{name}+{addr - start:#x}", False)
        self.cache[addr] = res
        return res


# --------------------------------------------------------- classification

# (category, description) in report order
CATEGORIES = [
    ("jit", "JIT-generated code (translated guest code, in the code buffer)"),
    ("tb_lookup", "TB lookup: helper_lookup_tb_ptr, tb_htable_lookup, qht, jump cache"),
    ("softmmu", "softmmu slow path: *_mmu helpers, tlb_fill/page walk, TLB flush"),
    ("translate", "translation: tb_gen_code, frontend, TCG backend, TB invalidation"),
    ("exec", "cpu_exec loop and exits: cpu_exec, cpu_loop_exit, longjmp, interrupts"),
    ("io", "MMIO/APIC/timers/main loop, incl. BQL and other locks"),
    ("clock", "clock: helper_rdtsc, cpu_get_ticks, qemu_clock_get_ns, clock_gettime"),
    ("atomic", "atomics helpers (helper_atomic_*, cmpxchg, exclusive)"),
    ("helper", "other TCG helpers (guest-instruction helpers)"),
    ("qemu", "other QEMU"),
    ("lib", "other libraries (libc, glib, ...)"),
    ("kernel", "host kernel (on behalf of QEMU: syscalls, faults, IRQs, scheduling)"),
]
CAT_KEYS = [k for k, _ in CATEGORIES]

# first match wins; matched against the function name (a "~name+off" name
# by its neighbour "name")
RULES = [
    ("tb_lookup", r"helper_lookup_tb_ptr|tb_htable_lookup|tb_lookup|qht_lookup|"
                  r"tb_jmp_cache|tb_lookup_cmp|tb_cmp|tcg_tb_lookup"),
    ("atomic", r"helper_atomic_|helper_cmpxchg|atomic_mmu_lookup|cpu_exec_step_atomic|"
               r"helper_.*_exclusive|helper_nonatomic_"),
    ("clock", r"helper_rdtsc|helper_rdtscp|helper_rdpmc|cpu_get_ticks|cpu_get_clock|"
              r"qemu_clock_get|get_clock|cpu_get_host_ticks|clock_gettime|__vdso_|"
              r"icount_get|qemu_clock_deadline|gettimeofday|timerlist_deadline"),
    ("softmmu", r"_mmu$|_mmu_|^helper_(le|be|ret)_(ld|st)|^(load|store|full)_.*helper|"
                r"tlb_fill|tlb_set_page|tlb_flush|tlb_reset|tlb_protect|tlb_unprotect|"
                r"tlb_vaddr|tlb_hit|tlb_entry|tlb_.*dirty|mmu_translate|get_physical_address|"
                r"get_page_addr_code|probe_access|tcg_flush_jmp_cache|cpu_ld|cpu_st|"
                r"address_space_ld|address_space_st|address_space_translate|"
                r"address_space_rw|address_space_read|address_space_write|flatview_|"
                r"qemu_map_ram_ptr|qemu_ram_|memory_region_get_ram_ptr|victim_tlb|"
                r"io_tlb|notdirty|iotlb|x86_cpu_tlb_fill|handle_mmu_fault|"
                r"cpu_physical_memory|ptw_|x86_ld|x86_st|helper_invlpg"),
    ("translate", r"tb_gen_code|tcg_gen|gen_intermediate_code|translator_|disas_insn|"
                  r"^gen_|tcg_out|tcg_reg_|tcg_optimize|tcg_func_start|liveness_pass|"
                  r"tcg_la_|tcg_op_|tcg_temp|tcg_code|tcg_region|tcg_tb_alloc|tcg_tb_insert|"
                  r"tb_link_page|tb_page_|tb_invalidate|tb_phys_invalidate|tb_flush|"
                  r"page_collection|tb_alloc|tcg_constant|tcg_emit|tcg_insn|"
                  r"tb_remove|tb_jmp_unlink|tb_reset_jump|tb_set_jmp|tb_add_jump|"
                  r"i386_tr_|x86_tr_|cpu_restore_state|cpu_io_recompile|tcg_can_emit|"
                  r"page_find|page_lock|invalidate_page_bitmap|tb_invalidate_phys|"
                  r"tcg_.*_vec|^do_constant_folding|^fold_|reachable_code_pass"),
    ("exec", r"^cpu_exec|cpu_loop_exit|cpu_handle_|cpu_tb_exec|cpu_loop_exec_tb|"
             r"longjmp|setjmp|sigsetjmp|mttcg_|rr_cpu|tcg_cpus_|tcg_cpu_|"
             r"x86_cpu_exec_interrupt|x86_cpu_do_interrupt|do_interrupt|"
             r"x86_cpu_has_work|x86_cpu_exec_|cpu_get_tb_cpu_state|x86_cpu_get_tb_cpu_state|"
             r"raise_interrupt|raise_exception|helper_raise|cpu_interrupt|"
             r"tcg_handle_interrupt|qemu_wait_io_event|qemu_process_cpu_events|"
             r"cpu_exit|cpu_reset_interrupt|cpu_synchronize|helper_hlt|helper_pause|"
             r"do_hlt|helper_iret|helper_syscall|helper_sysret|helper_lret|"
             r"helper_ljmp|helper_lcall|helper_into|"
             r"cpu_check_watchpoint|check_for_breakpoints"),
    ("io", r"qemu_mutex|qemu_cond|qemu_sem|qemu_event|qemu_rec_mutex|iothread|"
           r"bql|pthread_mutex|pthread_cond|futex|__lll_lock|__lll_unlock|"
           r"apic|ioapic|^pic_|i8259|hpet|pit_|^pcspk|kvmclock|"
           r"memory_region_dispatch|memory_region_|io_readx|io_writex|io_read|io_write|"
           r"helper_(in|out)[bwl]$|cpu_(in|out)[bwl]$|portio|timer_|timerlist|"
           r"qemu_clock_run|main_loop|aio_|qemu_bh|glib_pollfds|os_host_main_loop|"
           r"qemu_poll|g_main|virtio|v9fs|coroutine|qemu_coroutine|serial_|"
           r"char_|qemu_chr|fdmon|event_notifier|qemu_notify|qemu_irq|"
           r"msi|pci_|mc146818|rtc_|acpi|pm_|qemu_set_irq|thread_pool|"
           r"helper_wrmsr|helper_rdmsr|helper_cpuid|cpu_report_tpr|x86_cpu_apic"),
    ("helper", r"^helper_"),
]
RULES = [(c, re.compile(r)) for c, r in RULES]

# the busy-wait loop's host code: 5 buckets of 64 bytes (320 B)
HOT_SPAN = 5

LIBS_EXEC = re.compile(r"longjmp|setjmp|sigsetjmp")
LIBS_IO = re.compile(r"pthread_mutex|pthread_cond|futex|__lll_|pthread_spin|ppoll|poll|"
                     r"epoll|read|write|sem_")
LIBS_CLOCK = re.compile(r"clock_gettime|gettimeofday|__vdso")


def classify_name(name):
    """Category of a QEMU function name (a "~name+0x.." by "name")."""
    if name.startswith("~"):
        name = name[1:].rsplit("+", 1)[0]
    for cat, rx in RULES:
        if rx.search(name):
            return cat
    return "qemu"


def is_kernel_ip(ip):
    return ip >= 0xffff800000000000


def classify(frame, jit, qsyms, qemu_path=QEMU):
    """(category, name, exact) of one leaf frame (ip, sym, dso) of a QEMU
    thread. jit: [(lo, hi)] of the code buffer; qsyms: Symbols of the
    QEMU binary (file-relative addresses)."""
    ip, sym, dso = frame
    if is_kernel_ip(ip) or dso.startswith("[kernel") or dso.endswith(".ko"):
        return "kernel", sym, True
    if dso == qemu_path or os.path.basename(dso) == os.path.basename(qemu_path):
        name, exact = qsyms.name(ip) if qsyms else (sym, True)
        return classify_name(name), name, exact
    if any(lo <= ip < hi for lo, hi in jit) or re.match(r"(/tmp/perf-\d+\.map|//anon|\[anon)", dso):
        return "jit", "[jit]", True
    base = os.path.basename(dso)
    if base.startswith("accel-tcg-"):
        # QEMU's TCG accelerator module: the vCPU threads' loop
        # (mttcg_cpu_thread_fn, tcg_cpus_exec, tcg_handle_interrupt)
        return "exec", f"{sym} ({base})", True
    if dso == "[vdso]" or LIBS_CLOCK.search(sym):
        return "clock", f"{sym} ({base})", True
    if LIBS_EXEC.search(sym):
        return "exec", f"{sym} ({base})", True
    if LIBS_IO.search(sym):
        return "io", f"{sym} ({base})", True
    return "lib", f"{sym} ({base})", True


# ----------------------------------------------------------------- parsing

HEADER = re.compile(r"^\s*(\S+?)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\d+)\s*(\S*)\s*$")
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def parse_script(lines):
    """Samples of `perf script -F comm,pid,tid,time,period,ip,sym,dso` with
    callchains: (comm, pid, tid, time, period, [(ip, sym, dso), ...])."""
    cur = None
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if cur:
                yield cur
            cur = None
            continue
        m = FRAME.match(line) if line[:1] in "\t " else None
        if m and cur is not None:
            cur[5].append((int(m.group(1), 16), m.group(2), m.group(3)))
            continue
        m = HEADER.match(line)
        if m:
            if cur:
                yield cur
            cur = (m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(4)),
                   int(m.group(5)), [])
    if cur:
        yield cur


def jit_ranges(maps_text, min_size=16 << 20):
    """The code buffer: anonymous rwx (or split r-x) mappings of at least
    min_size in /proc/PID/maps."""
    out = []
    for line in maps_text.splitlines():
        f = line.split()
        if len(f) < 5:
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if "x" in f[1] and len(f) == 5 and hi - lo >= min_size:
            out.append((lo, hi))
    return out


def first_user_frame(frames):
    for fr in frames:
        if not is_kernel_ip(fr[0]) and not fr[2].startswith("[kernel"):
            return fr
    return None


class Window:
    """One column's window: CPU ns by thread and category, names."""

    def __init__(self):
        self.ns = collections.defaultdict(lambda: collections.Counter())   # tid -> cat -> ns
        self.names = collections.defaultdict(collections.Counter)  # (cat, name) -> tid -> ns
        self.kcaller = collections.Counter()   # (user function under a kernel sample) -> ns
        self.approx = collections.Counter()    # cat -> ns named by a neighbour
        self.other = collections.Counter()     # host: non-QEMU processes by comm, "idle"
        self.jitb = collections.defaultdict(collections.Counter)  # tid -> 64 B bucket -> ns
        self.t = [None, None]
        self.samples = 0

    def add(self, sample, qpid, jit, qsyms, qemu_path=QEMU):
        comm, pid, tid, t, period, frames = sample
        self.samples += 1
        self.t[0] = t if self.t[0] is None else min(self.t[0], t)
        self.t[1] = t if self.t[1] is None else max(self.t[1], t)
        if pid != qpid:
            self.other["idle" if pid == 0 else comm] += period
            return
        if not frames:
            frames = [(0, "[unknown]", "[unknown]")]
        cat, name, exact = classify(frames[0], jit, qsyms, qemu_path)
        self.ns[tid][cat] += period
        self.names[(cat, name)][tid] += period
        if not exact:
            self.approx[cat] += period
        if cat == "jit":
            self.jitb[tid][frames[0][0] >> 6] += period
        if cat == "kernel":
            up = first_user_frame(frames[1:])
            if up:
                _, uname, _ = classify(up, jit, qsyms, qemu_path)
                self.kcaller[(name, uname)] += period

    def threads(self):
        """{tid: role}: vcpu0, vcpu1, ... for the threads mostly in JIT code
        (by thread id: QEMU creates vCPU 0 first), other tids 'other'."""
        vc = sorted(t for t, c in self.ns.items()
                    if sum(c.values()) and c["jit"] >= 0.2 * sum(c.values()))
        roles = {t: f"vcpu{i}" for i, t in enumerate(vc)}
        return {t: roles.get(t, "other") for t in self.ns}

    def by_role(self):
        """{role: Counter(cat -> ns)} plus 'qemu' (all threads)."""
        out = collections.defaultdict(collections.Counter)
        roles = self.threads()
        for tid, c in self.ns.items():
            out[roles[tid]].update(c)
            out["qemu"].update(c)
        return out

    def jit_hot(self, span=HOT_SPAN):
        """{tid: ns} of each thread's JIT samples in the hottest SPAN
        64-byte buckets of host code around its hottest one: a busy-wait
        loop (perftest polling memory, a driver polling a CQ) is one or two
        translated blocks chained to themselves, so its samples pile up in
        a few hundred bytes, where the work's spread over the code buffer."""
        out = {}
        for tid, b in self.jitb.items():
            if not b:
                continue
            top = max(b, key=b.get)
            half = span // 2
            out[tid] = sum(b.get(k, 0) for k in range(top - half, top + half + 1))
        return out

    def to_json(self):
        roles = self.threads()
        return dict(
            jit_hot={str(t): v for t, v in self.jit_hot().items()},
            ns={str(t): dict(c) for t, c in self.ns.items()},
            roles={str(t): r for t, r in roles.items()},
            names=[[c, n, {roles[t]: v for t, v in d.items()}] for (c, n), d in self.names.items()],
            kcaller=[[k, u, v] for (k, u), v in self.kcaller.items()],
            approx=dict(self.approx), other=dict(self.other), t=self.t, samples=self.samples)


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                meta[k] = v
    return meta


def norm(meta, win):
    """(round trips in the window, guest seconds, host perf seconds) from
    the guest's COL.meta and the host's COL.win.json; None if unusable."""
    try:
        if meta.get("ok") != "1":
            return None
        ps, pe = (int(x) for x in meta["sent_run"].split())
        p0, p1 = (int(x) for x in meta["sent_window"].split())
        t0, t1 = (float(x) for x in meta["window_t"].split())
        iters = int(meta["iters"])
        per_rt = (pe - ps) / iters
        rts = (p1 - p0) / per_rt
        return rts, t1 - t0, win["t_disable"] - win["t_enable"], per_rt
    except (KeyError, ValueError, ZeroDivisionError):
        return None


def perftest_fields(line):
    """perftest's 64 B line: bytes iters t_min t_max t_typical t_avg t_stdev
    99% 99.9%: {name: float}."""
    f = line.split()
    keys = ["bytes", "iters", "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p999"]
    out = {}
    for k, v in zip(keys, f):
        try:
            out[k] = float(v)
        except ValueError:
            pass
    return out


# ------------------------------------------------------------------ watch


def find_qemu(bootdir):
    want = f"MROCE_OUT={bootdir}"
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if args and args[0].endswith(b"qemu-system-x86_64") and \
                any(want.encode() in a.split() or a.endswith(want.encode()) or
                    (want + " ").encode() in a for a in args):
            return int(p)
    return None


def sched_snapshot(pid):
    """{tid: [on-CPU ns, run-queue wait ns, timeslices]} of /proc schedstat."""
    out = {}
    for t, text in task_files(pid, "schedstat").items():
        try:
            out[t] = [int(x) for x in text.split()]
        except ValueError:
            pass
    return out


# QEMUPROF_CALLGRAPH=dwarf: call chains unwound from copies of the user
# stack (QEMU is built without frame pointers, so -g's chains stop at the
# leaf's caller at best); costs far more per sample: use a low frequency
CALLGRAPH = (["--call-graph", "dwarf,16384"]
             if os.environ.get("QEMUPROF_CALLGRAPH") == "dwarf" else ["-g"])


# QEMUPROF_UPROBES=1 (guest.sh's windows COL-um and COL-ul): counts of
# QEMU functions by host uprobes, per thread (perf stat --per-thread -p), in
# place of sampling. (event, function, windows): "m" in COL-um and COL-ul,
# "l" only in COL-ul. helper_lookup_tb_ptr is every TB lookup of JIT code
# (~3k an RT: with a uprobe hit costing ~5 us on this PVM host the RT slows
# ~100x, hence a window of its own); qht_lookup_custom is QEMU 7.2's
# tb_htable_lookup, reached only when the per-vCPU jump cache missed (from
# the helper or cpu_exec's loop); tb_gen_code a translation; cpu_exec an
# entry of the execution loop (after each exit); cpu_loop_exit* a longjmp
# out of JIT code; helper_pause/hlt the guest's PAUSE and HLT.
UPROBES = [
    ("lookup", "helper_lookup_tb_ptr", "l"),
    ("miss", "qht_lookup_custom", "m"),
    ("gen", "tb_gen_code", "m"),
    ("exec", "cpu_exec", "m"),
    ("exit", "cpu_loop_exit", "m"),
    ("exit_noexc", "cpu_loop_exit_noexc", "m"),
    ("exit_restore", "cpu_loop_exit_restore", "m"),
    ("exit_atomic", "cpu_loop_exit_atomic", "m"),
    ("step_atomic", "cpu_exec_step_atomic", "m"),
    ("pause", "helper_pause", "m"),
    ("hlt", "helper_hlt", "m"),
]
UPROBE_GROUP = "qemuprof"
UPROBE_PREFIX = "qp_"   # perf's event parser takes a bare "miss" for a cache event
TRACEFS = "/sys/kernel/tracing"


def uprobe_points(qemu_path=QEMU, elf=None):
    """{event: file offset} of UPROBES' functions in the QEMU binary: the
    exported ones from .dynsym, the helpers from QEMU's helper table; a
    function not found is left out."""
    if elf is None:
        elf = Elf(qemu_path)
    addr = {n: a for a, _, n in elf.dynsym_funcs()}
    for a, n in helper_table(elf, elf.relative_relocs()):
        addr.setdefault(n, a)
    out = {}
    for ev, fn, _ in UPROBES:
        if fn in addr:
            off = elf.vaddr_to_off(addr[fn])
            if off is not None:
                out[ev] = off
    return out


def uprobe_define(qemu_path=QEMU, tracefs=TRACEFS):
    """Define the UPROBES events (group qemuprof) in tracefs; returns
    their names. Defining costs nothing: a probe is only planted in a
    process while a perf event of it is open (perf stat -p: that process
    only, not other VMs)."""
    uprobe_remove(tracefs)
    names = []
    for ev, off in uprobe_points(qemu_path).items():
        tracefs_add(tracefs, f"p:{UPROBE_GROUP}/{UPROBE_PREFIX}{ev} {qemu_path}:{off:#x}")
        names.append(ev)
    return names


def tracefs_add(tracefs, line):
    """One definition line into uprobe_events: one write(2) on an O_APPEND
    descriptor (Python's buffered append mode fails there: EINVAL)."""
    fd = os.open(os.path.join(tracefs, "uprobe_events"), os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def uprobe_remove(tracefs=TRACEFS):
    """Remove the qemuprof group's uprobe events (those still in use by
    a perf process stay: EBUSY)."""
    try:
        with open(os.path.join(tracefs, "uprobe_events")) as f:
            defs = [ln.split()[0] for ln in f if ln.split()]
    except OSError:
        return
    for d in defs:
        name = d.split(":", 1)[-1]
        if name.startswith(UPROBE_GROUP + "/"):
            try:
                tracefs_add(tracefs, f"-:{name}")
            except OSError as e:
                print(f"qemuprof: could not remove uprobe {name}: {e}", file=sys.stderr)


def window_kind(col):
    """perf (sampling), control (-np: times and schedstat only), or
    uprobes (-um: the miss-path probes, -ul: those and the lookup helper)."""
    if col.endswith("-np"):
        return "control"
    if col.endswith("-um") or col.endswith("-ul"):
        return "uprobes"
    return "perf"


def uprobe_events(col, defined):
    """The events a -um/-ul window counts, of those defined."""
    want = "lm" if col.endswith("-ul") else "m"
    return [ev for ev, _, w in UPROBES if w in want and ev in defined]


class Recorder:
    """One window: perf record enabled and disabled by its control FIFO;
    for a control window (its name ends in -np: no perf) only the times
    and schedstat."""

    def __init__(self, run, bootdir, col, freq, perf, uprobes=()):
        self.col = col
        self.dir = os.path.join(run, "qemuprof", os.path.basename(bootdir))
        os.makedirs(self.dir, exist_ok=True)
        self.base = os.path.join(self.dir, col)
        self.pid = find_qemu(bootdir)
        if self.pid is None:
            raise RuntimeError(f"no QEMU process for {bootdir}")
        kind = window_kind(col)
        self.perf = kind != "control"
        self.win = dict(col=col, pid=self.pid, freq=freq if kind == "perf" else 0, kind=kind)
        if not self.perf:
            return
        if kind == "perf":
            with open(f"/proc/{self.pid}/maps") as f, open(self.base + ".maps", "w") as g:
                g.write(f.read())
        for fifo in (".ctl", ".ack"):
            if os.path.exists(self.base + fifo):
                os.unlink(self.base + fifo)
            os.mkfifo(self.base + fifo)
        ctl = ["-D", "-1", "--control", f"fifo:{self.base}.ctl,{self.base}.ack"]
        if kind == "perf":
            cmd = [perf, "record", "-q", "-a", "-e", "cpu-clock", "-F", str(freq)] + CALLGRAPH + [
                "-k", "CLOCK_MONOTONIC"] + ctl + ["-o", self.base + ".data"]
        else:
            # the probes are planted in this QEMU only, from the open to
            # perf's exit (counted only while enabled)
            evs = uprobe_events(col, uprobes)
            if not evs:
                raise RuntimeError("no uprobe events defined (tracefs, root?)")
            self.win["uprobes"] = evs
            cmd = [perf, "stat", "-x", ",", "--per-thread", "-p", str(self.pid),
                   "-e", ",".join(f"{UPROBE_GROUP}:{UPROBE_PREFIX}{e}" for e in evs)] + ctl + [
                   "-o", self.base + ".stat"]
        self.proc = subprocess.Popen(cmd, stdout=open(self.base + ".perf.log", "w"),
                                     stderr=subprocess.STDOUT)
        # read-write opens of a FIFO do not wait for the other end
        self.ctl = os.open(self.base + ".ctl", os.O_RDWR)
        self.ack = os.open(self.base + ".ack", os.O_RDWR)

    def command(self, what, timeout=30):
        """Send perf a control command; True once it acknowledged."""
        os.write(self.ctl, what.encode() + b"\n")
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            ready, _, _ = select.select([self.ack], [], [], 0.5)
            if ready:
                return os.read(self.ack, 16).startswith(b"ack")
        return False

    def start(self):
        self.win["sched0"] = sched_snapshot(self.pid)
        ok = self.command("enable") if self.perf else True
        self.win["t_enable"] = time.clock_gettime(time.CLOCK_MONOTONIC)
        self.win["enable_ack"] = ok

    def stop(self):
        ok = self.command("disable") if self.perf else True
        self.win["t_disable"] = time.clock_gettime(time.CLOCK_MONOTONIC)
        self.win["sched1"] = sched_snapshot(self.pid)
        self.win["disable_ack"] = ok
        if not self.perf:
            with open(self.base + ".win.json", "w") as f:
                json.dump(self.win, f)
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self.ctl)
        os.close(self.ack)
        for fifo in (".ctl", ".ack"):
            os.unlink(self.base + fifo)
        self.win["perf_rc"] = self.proc.returncode
        with open(self.base + ".win.json", "w") as f:
            json.dump(self.win, f)


def touch(path):
    with open(path, "w"):
        pass


def watch(args):
    """Answer the guests' requests in RUN/boot*/ until RUN/qemuprof/stop
    appears (or SIGTERM)."""
    # QEMU's command line names the boot directory by its real path
    args.run = os.path.realpath(args.run)
    stop = os.path.join(args.run, "qemuprof", "stop")
    os.makedirs(os.path.dirname(stop), exist_ok=True)
    recs = {}
    done = set()
    quit_ = []
    uprobes = None
    signal.signal(signal.SIGTERM, lambda *a: quit_.append(1))
    while not quit_ and not os.path.exists(stop):
        for boot in sorted(glob.glob(os.path.join(args.run, "boot*"))):
            if not os.path.isdir(boot):
                continue
            try:
                names = set(os.listdir(boot))
            except OSError:
                continue
            if "probe.probe" in names and "probe.ready" not in names:
                touch(os.path.join(boot, "probe.ready"))
            for n in names:
                if n.endswith(".start"):
                    col = n[:-6]
                    key = (boot, col)
                    if key in recs or key in done:
                        continue
                    try:
                        if window_kind(col) == "uprobes" and uprobes is None:
                            uprobes = []     # not again if this fails
                            uprobes = uprobe_define(args.qemu)
                            print(f"qemuprof: uprobes {' '.join(uprobes)}", flush=True)
                        rec = Recorder(args.run, boot, col, args.freq, args.perf,
                                       uprobes or ())
                        rec.start()
                        recs[key] = rec
                        print(f"qemuprof: {os.path.basename(boot)} {col}: window on "
                              f"({rec.win['kind']}; qemu pid {rec.pid})",
                              flush=True)
                        touch(os.path.join(boot, col + ".go"))
                    except (RuntimeError, OSError) as e:
                        print(f"qemuprof: {os.path.basename(boot)} {col}: {e}", flush=True)
                        done.add(key)
                elif n.endswith(".stop"):
                    key = (boot, n[:-5])
                    rec = recs.pop(key, None)
                    if rec:
                        rec.stop()
                        done.add(key)
                        print(f"qemuprof: {os.path.basename(boot)} {key[1]}: window off "
                              f"({rec.win['t_disable'] - rec.win['t_enable']:.2f}s)", flush=True)
                        touch(os.path.join(boot, key[1] + ".done"))
        time.sleep(0.02)
    for rec in recs.values():
        rec.stop()
    if uprobes is not None:
        uprobe_remove()
    return 0


# ----------------------------------------------------------------- report


def script_lines(data, perf, cache):
    """perf script of one window (cached gzip text next to it)."""
    if not os.path.exists(cache):
        with gzip.open(cache + ".tmp", "wt") as g:
            p = subprocess.Popen([perf, "script", "-i", data, "-F",
                                  "comm,pid,tid,time,period,ip,sym,dso"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            for line in p.stdout:
                g.write(line)
            p.wait()
        os.rename(cache + ".tmp", cache)
    with gzip.open(cache, "rt") as f:
        yield from f


def analyse(run, perf, qsyms, qemu_path=QEMU):
    """Per window: dict(boot, col, driver, norm, perftest, win, sched, agg)."""
    out = []
    for wj in sorted(glob.glob(os.path.join(run, "qemuprof", "boot*", "*.win.json"))):
        bdir = os.path.dirname(wj)
        boot = os.path.basename(bdir)
        col = os.path.basename(wj)[:-len(".win.json")]
        metas = glob.glob(os.path.join(run, boot, "*", col + ".meta"))
        if not metas:
            continue
        meta = read_meta(metas[0])
        with open(wj) as f:
            win = json.load(f)
        n = norm(meta, win)
        base = os.path.join(bdir, col)
        agg_path = base + ".agg.json"
        if win.get("kind") == "uprobes":
            counts = {}
            if os.path.exists(base + ".stat"):
                with open(base + ".stat") as f:
                    counts = parse_stat(f)
            out.append(dict(boot=boot, col=col, driver=meta.get("driver", col.split("-")[0]),
                            norm=n, perftest=perftest_fields(meta.get("perftest", "")),
                            win=win, agg=None, meta=meta, control=False, kind="uprobes",
                            counts=counts))
            continue
        if not win.get("freq") or not os.path.exists(base + ".data"):
            # a control window: no perf, times and schedstat only
            out.append(dict(boot=boot, col=col, driver=meta.get("driver", col.split("-")[0]),
                            norm=n, perftest=perftest_fields(meta.get("perftest", "")),
                            win=win, agg=None, meta=meta, control=True))
            continue
        if os.path.exists(agg_path):
            with open(agg_path) as f:
                agg = json.load(f)
        else:
            with open(base + ".maps") as f:
                jit = jit_ranges(f.read())
            w = Window()
            for s in parse_script(script_lines(base + ".data", perf, base + ".script.gz")):
                w.add(s, win["pid"], jit, qsyms, qemu_path)
            agg = w.to_json()
            with open(agg_path, "w") as f:
                json.dump(agg, f)
        out.append(dict(boot=boot, col=col, driver=meta.get("driver", col.split("-")[0]),
                        norm=n, perftest=perftest_fields(meta.get("perftest", "")),
                        win=win, agg=agg, meta=meta, control=False))
    # a control window's threads: their roles in the perf windows of its boot
    roles = collections.defaultdict(dict)
    for w in out:
        if w["agg"]:
            roles[w["boot"]].update(w["agg"]["roles"])
    for w in out:
        if w["agg"] is None:
            w["agg"] = dict(ns={}, roles=dict(roles[w["boot"]]), names=[], kcaller=[],
                            approx={}, other={}, t=[None, None], samples=0)
    return out


def parse_stat(lines):
    """perf stat -x, --per-thread: {tid: {event: count}} (event without
    its group; "<not counted>" as 0)."""
    out = collections.defaultdict(dict)
    for line in lines:
        f = line.rstrip("\n").split(",")
        if len(f) < 4 or line.startswith("#") or "-" not in f[0]:
            continue
        tid = f[0].rsplit("-", 1)[1]
        try:
            n = int(float(f[1]))
        except ValueError:
            n = 0
        ev = f[3].split(":", 1)[-1]
        out[tid][ev[len(UPROBE_PREFIX):] if ev.startswith(UPROBE_PREFIX) else ev] = n
    return dict(out)


def uprobe_roles(counts):
    """{tid: role} of a uprobe window: the threads with TB lookups or
    jump-cache misses (at least a tenth of the busiest's) are the vCPU
    threads, vcpu0, vcpu1, ... by thread id; the rest 'other'."""
    act = {t: c.get("lookup", 0) + c.get("miss", 0) for t, c in counts.items()}
    top = max(act.values(), default=0)
    vc = sorted((t for t, a in act.items() if top and a >= 0.1 * top), key=int)
    roles = {t: f"vcpu{i}" for i, t in enumerate(vc)}
    return {t: roles.get(t, "other") for t in counts}


def uprobe_rt(w):
    """A uprobe window's counts per RT: {(role, event): per RT} for roles
    vcpu0, vcpu1, other and qemu (all threads), ("qemu", "exits") the
    cpu_loop_exit* together, ("qemu", "ratio") misses per lookup (-ul
    windows), ("wall",) us per RT and ("per_s", event) counts per guest
    second; None for an unusable window."""
    if w["norm"] is None or not w["counts"]:
        return None      # no counts: perf stat failed (its COL.perf.log)
    rts, gsecs, hsecs, _ = w["norm"]
    if rts <= 0 or gsecs <= 0 or hsecs <= 0:
        return None
    # counted over the host's enabled time, a little longer than the
    # guest's packet window: the rate over the host seconds, times the
    # guest's seconds (its TSC follows the host's), over the RTs
    k = gsecs / hsecs / rts
    roles = uprobe_roles(w["counts"])
    v = collections.Counter()
    for tid, c in w["counts"].items():
        for ev, n in c.items():
            for role in (roles[tid], "qemu"):
                v[(role, ev)] += n * k
                if ev.startswith("exit"):
                    v[(role, "exits")] += n * k
            v[("per_s", ev)] += n / hsecs
    if "lookup" in w["win"].get("uprobes", []) and v[("qemu", "lookup")]:
        v[("qemu", "ratio")] = v[("qemu", "miss")] / v[("qemu", "lookup")]
        for r in ("vcpu0", "vcpu1"):
            if v[(r, "lookup")]:
                v[(r, "ratio")] = v[(r, "miss")] / v[(r, "lookup")]
    v[("wall",)] = gsecs / rts * 1e6
    # a bound that needs no uniform rate: every count falls between the
    # packet reads before the start and after the stop (sent_outer)
    try:
        pa, pb = (int(x) for x in w["meta"]["sent_outer"].split())
        outer = (pb - pa) / w["norm"][3]
    except (KeyError, ValueError, ZeroDivisionError):
        outer = 0
    if outer > 0:
        v[("outer",)] = outer / rts
        for tid, c in w["counts"].items():
            for ev, n in c.items():
                v[("qemu", ev + "@outer")] += n / outer
    return v


def per_rt(w):
    """Per-RT values (us) of one window: {key: us}; keys: (role, cat) for
    role in vcpu0, vcpu1, other, qemu; ("host", comm|idle); ("wall",);
    ("sched", role, "run"|"wait")."""
    if w["norm"] is None:
        return None
    rts, gsecs, psecs, _ = w["norm"]
    # host ns over the perf window -> ns per guest-second -> per RT
    k = gsecs / psecs / rts / 1000.0   # ns -> us per RT
    agg = w["agg"]
    roles = agg["roles"]
    v = collections.Counter()
    for tid, c in agg["ns"].items():
        for cat, ns in c.items():
            v[(roles[tid], cat)] += ns * k
            v[("qemu", cat)] += ns * k
    for tid, ns in agg.get("jit_hot", {}).items():
        v[(roles[tid], "_jit_hot")] += ns * k
        v[("qemu", "_jit_hot")] += ns * k
    for comm, ns in agg["other"].items():
        v[("host", comm)] += ns * k
    for role in {r for r, *_ in list(v)}:
        if role in ("host", "wall", "sched"):
            continue
        tot = sum(v.get((role, c), 0.0) for c in CAT_KEYS)
        v[(role, "_total")] = tot
        v[(role, "_jit_rest")] = v.get((role, "jit"), 0.0) - v.get((role, "_jit_hot"), 0.0)
        v[(role, "_less_spin")] = tot - v.get((role, "_jit_hot"), 0.0)
    v[("wall",)] = gsecs / rts * 1e6
    s0, s1 = w["win"].get("sched0", {}), w["win"].get("sched1", {})
    for tid, b in s1.items():
        a = s0.get(tid)
        if not a:
            continue
        role = roles.get(tid, "other")
        v[("sched", role, "run")] += (b[0] - a[0]) * k
        v[("sched", role, "wait")] += (b[1] - a[1]) * k
        v[("sched", "qemu", "run")] += (b[0] - a[0]) * k
        v[("sched", "qemu", "wait")] += (b[1] - a[1]) * k
    return v


T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
       10: 2.23}


def mean_ci(xs):
    """(mean, half-width of a 95 % t interval or nan)."""
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    if not xs:
        return float("nan"), float("nan")
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, float("nan")
    return m, T95.get(len(xs) - 1, 2.0) * statistics.stdev(xs) / math.sqrt(len(xs))


def paired(windows, key, a="rxe", b="mroce"):
    """Per boot: (mean of a, mean of b, b - a) of key; boots with both."""
    byboot = collections.defaultdict(lambda: collections.defaultdict(list))
    for w in windows:
        v = w.get("v")
        if v is None:
            continue
        byboot[w["boot"]][w["driver"]].append(v.get(key, 0.0))
    out = []
    for boot in sorted(byboot):
        d = byboot[boot]
        if d.get(a) and d.get(b):
            ma, mb = statistics.fmean(d[a]), statistics.fmean(d[b])
            out.append((boot, ma, mb, mb - ma))
    return out


def lstsq(X, y):
    """Least squares: the coefficients of y ~ X (rows of X: regressors),
    by the normal equations (a handful of regressors); None if singular."""
    n = len(X[0])
    A = [[sum(r[i] * r[j] for r in X) for j in range(n)] for i in range(n)]
    B = [sum(r[i] * v for r, v in zip(X, y)) for i in range(n)]
    for i in range(n):
        piv = max(range(i, n), key=lambda j: abs(A[j][i]))
        A[i], A[piv], B[i], B[piv] = A[piv], A[i], B[piv], B[i]
        if abs(A[i][i]) < 1e-12:
            return None
        for j in range(i + 1, n):
            f = A[j][i] / A[i][i]
            A[j] = [a - f * c for a, c in zip(A[j], A[i])]
            B[j] -= f * B[i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (B[i] - sum(A[i][j] * x[j] for j in range(i + 1, n))) / A[i][i]
    return x


def equal_wall(windows, key, b="mroce"):
    """(a, slope per us of wall, driver b's excess) of key per RT over
    windows: key ~ a + slope * wall + excess * [driver is b]. Under TCG a
    window's pace swings (fast and slow modes) and both vCPUs are busy all
    the time, so every category grows with the wall time of an RT; the
    excess is driver b's at the same wall time. None with too few windows."""
    X = [[1.0, w["v"][("wall",)], 1.0 if w["driver"] == b else 0.0] for w in windows]
    if len(X) < 4 or len({r[2] for r in X}) < 2:
        return None
    return lstsq(X, [w["v"].get(key, 0.0) for w in windows])


def fmt(x, nd=2):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def md_head(L, cols):
    """A markdown table's header and rule lines."""
    L.append("| " + " | ".join(cols) + " |")
    L.append("|" + "---|" * len(cols))


def unusable_row(w, ncols):
    """A table row for a window without values (its ok= said why)."""
    return (f"| {w['boot']} | {w['col']} | (unusable: ok={w['meta'].get('ok')}) |"
            + " |" * (ncols - 3))


def report(windows, top=25):
    """The markdown report of analysed windows (per_rt values in w['v'])."""
    L = []
    ctrl = [w for w in windows if w.get("v") is not None and w.get("control")]
    windows = [w for w in windows if not w.get("control")]
    good = [w for w in windows if w.get("v") is not None]
    L.append(f"{len(good)} usable windows of {len(windows)} in "
             f"{len({w['boot'] for w in windows})} boot(s). Values: host CPU microseconds per "
             "64 B ib_write_lat round trip (RT); a window's host CPU over its perf "
             "window's host seconds, times the guest's seconds per RT in it.")
    L.append("")
    L.append("## Per window")
    L.append("")
    L.append("CPU columns in us per RT. vCPU share: the two vCPU threads' CPU over twice the wall "
             "time (1.00: both always on a host CPU). Busy-wait: JIT samples in each thread's "
             "hottest 320 B of host code. Run-queue wait: both vCPU threads' (schedstat).")
    L.append("")
    cols = ["boot", "column", "RTs", "pkts/RT", "wall us/RT", "perftest t_avg", "QEMU CPU",
            "vcpu0", "vcpu1", "other threads", "vCPU share", "busy-wait", "CPU less busy-wait",
            "idle", "other procs", "run-queue wait"]
    md_head(L, cols)
    for w in windows:
        v = w.get("v")
        if v is None:
            L.append(unusable_row(w, len(cols)))
            continue

        def role(r, what="_total"):
            return v.get((r, what), 0.0)
        share = (role("vcpu0") + role("vcpu1")) / (2 * v[("wall",)])
        other_procs = sum(x for k, x in v.items() if k[0] == "host" and k[1] != "idle")
        wait = v.get(("sched", "vcpu0", "wait"), 0) + v.get(("sched", "vcpu1", "wait"), 0)
        L.append(f"| {w['boot']} | {w['col']} | {w['norm'][0]:.0f} | {w['norm'][3]:.2f} "
                 f"| {fmt(v[('wall',)])} | {fmt(w['perftest'].get('t_avg'))} "
                 f"| {fmt(role('qemu'))} | {fmt(role('vcpu0'))} | {fmt(role('vcpu1'))} "
                 f"| {fmt(role('other'))} | {fmt(share)} | {fmt(role('qemu', '_jit_hot'))} "
                 f"| {fmt(role('qemu', '_less_spin'))} | {fmt(v.get(('host', 'idle'), 0))} "
                 f"| {fmt(other_procs)} | {fmt(wait)} |")
    L.append("")
    if ctrl:
        L.append("## What perf costs: the same run's window without perf (control)")
        L.append("")
        L.append("Wall us per RT, and the vCPU threads' on-CPU and run-queue wait us per RT "
                 "(schedstat, both vCPUs), per driver; mroce/rxe: the ratio of the pooled "
                 "per-boot means.")
        L.append("")
        L.append("| windows | rxe wall | mroce wall | mroce/rxe | rxe vCPU run | mroce vCPU run "
                 "| rxe vCPU wait | mroce vCPU wait | rxe other threads run | mroce other threads run |")
        L.append("|---|---|---|---|---|---|---|---|---|---|")
        for what, ws in (("perf", good), ("control (no perf)", ctrl)):
            for w in ws:
                v = w["v"]
                v[("sched", "vcpus", "run")] = (v.get(("sched", "vcpu0", "run"), 0.0)
                                               + v.get(("sched", "vcpu1", "run"), 0.0))
                v[("sched", "vcpus", "wait")] = (v.get(("sched", "vcpu0", "wait"), 0.0)
                                                + v.get(("sched", "vcpu1", "wait"), 0.0))
            cells = []
            for key in (("wall",), ("sched", "vcpus", "run"), ("sched", "vcpus", "wait"),
                        ("sched", "other", "run")):
                pr = paired(ws, key)
                ra = statistics.fmean([a for _, a, _, _ in pr]) if pr else float("nan")
                rb = statistics.fmean([b for _, _, b, _ in pr]) if pr else float("nan")
                cells.append((ra, rb))
            (wa, wb), (ra, rb), (qa, qb), (oa, ob) = cells
            L.append(f"| {what} | {fmt(wa)} | {fmt(wb)} | {fmt(wb / wa if wa else float('nan'), 3)} "
                     f"| {fmt(ra)} | {fmt(rb)} | {fmt(qa)} | {fmt(qb)} | {fmt(oa)} | {fmt(ob)} |")
        L.append("")
        L.append("| boot | column | RTs | wall us/RT | vCPU run | vCPU wait | other threads run "
                 "| other threads wait |")
        L.append("|---|---|---|---|---|---|---|---|")
        for w in ctrl:
            v = w["v"]
            L.append(f"| {w['boot']} | {w['col']} | {w['norm'][0]:.0f} | {fmt(v[('wall',)])} "
                     f"| {fmt(v[('sched', 'vcpus', 'run')])} | {fmt(v[('sched', 'vcpus', 'wait')])} "
                     f"| {fmt(v.get(('sched', 'other', 'run'), 0.0))} "
                     f"| {fmt(v.get(('sched', 'other', 'wait'), 0.0))} |")
        L.append("")
    L.append("## rxe vs mroce by category (all QEMU threads), pooled over boots")
    L.append("")
    L.append("Per boot: the mean of its mroce windows minus the mean of its rxe windows; pooled: "
             "the mean of those differences with a 95 % t interval over boots.")
    L.append("")
    boots = sorted({w["boot"] for w in good})
    L.append("| category | rxe us/RT | mroce us/RT | mroce - rxe | 95 % | "
             + " | ".join(f"{b} diff" for b in boots) + " |")
    L.append("|---|---|---|---|---|" + "---|" * len(boots))
    rows = [(k, d) for k, d in CATEGORIES] + [
        ("_jit_hot", "of jit: the busy-wait (each thread's hottest 320 B of JIT code)"),
        ("_jit_rest", "of jit: the rest"),
        ("_total", "total QEMU CPU"),
        ("_less_spin", "QEMU CPU less the busy-wait"), ("_wall", "wall (per RT, not CPU)")]
    for k, desc in rows:
        if k == "_wall":
            pr = paired(good, ("wall",))
        else:
            pr = paired(good, ("qemu", k))
        m, h = mean_ci([d for _, _, _, d in pr])
        ra = statistics.fmean([a for _, a, _, _ in pr]) if pr else float("nan")
        rb = statistics.fmean([b for _, _, b, _ in pr]) if pr else float("nan")
        per = {bt: d for bt, _, _, d in pr}
        L.append(f"| {k.lstrip('_')}: {desc} | {fmt(ra)} | {fmt(rb)} | **{fmt(m)}** | ±{fmt(h)} | "
                 + " | ".join(fmt(per.get(b)) for b in boots) + " |")
    L.append("")
    L.append("## At equal wall time: mroce's excess per category (regression over windows)")
    L.append("")
    L.append("Each perf window's us/RT of a category ~ a + slope x (its wall us/RT) + excess x "
             "[mroce]: the pace of a window swings (TCG's fast and slow modes, perf's own cost) "
             "and both vCPUs stay busy, so every category grows with the wall time; the excess "
             "compares the drivers at the same wall time. No interval: read it with the per-boot "
             "differences above.")
    L.append("")
    L.append("| category | all QEMU threads: excess us/RT | slope | vcpu0 excess | vcpu1 excess |")
    L.append("|---|---|---|---|---|")
    for k in CAT_KEYS + ["_jit_hot", "_total", "_less_spin"]:
        cells = []
        for role in ("qemu", "vcpu0", "vcpu1"):
            c = equal_wall(good, (role, k))
            cells.append(c)
        if cells[0] is None:
            continue
        L.append(f"| {k} | **{fmt(cells[0][2])}** | {fmt(cells[0][1], 3)} "
                 f"| {fmt(cells[1][2]) if cells[1] else 'n/a'} "
                 f"| {fmt(cells[2][2]) if cells[2] else 'n/a'} |")
    L.append("")
    for role in ("vcpu0", "vcpu1", "other"):
        L.append(f"## {role} by category (rxe vs mroce, pooled)")
        L.append("")
        L.append("| category | rxe us/RT | mroce us/RT | mroce - rxe | 95 % |")
        L.append("|---|---|---|---|---|")
        for k in CAT_KEYS + ["_jit_hot", "_total", "_less_spin"]:
            pr = paired(good, (role, k))
            m, h = mean_ci([d for _, _, _, d in pr])
            ra = statistics.fmean([a for _, a, _, _ in pr]) if pr else float("nan")
            rb = statistics.fmean([b for _, _, b, _ in pr]) if pr else float("nan")
            if (pr and max(abs(ra), abs(rb)) >= 0.005):
                L.append(f"| {k} | {fmt(ra)} | {fmt(rb)} | {fmt(m)} | ±{fmt(h)} |")
        L.append("")
    L.append("## Scheduling (/proc schedstat, per RT): on-CPU and run-queue wait")
    L.append("")
    L.append("| thread | rxe run | mroce run | diff | rxe wait | mroce wait | diff |")
    L.append("|---|---|---|---|---|---|---|")
    for role in ("vcpu0", "vcpu1", "other", "qemu"):
        cells = []
        for what in ("run", "wait"):
            pr = paired(good, ("sched", role, what))
            m, _ = mean_ci([d for _, _, _, d in pr])
            ra = statistics.fmean([a for _, a, _, _ in pr]) if pr else float("nan")
            rb = statistics.fmean([b for _, _, b, _ in pr]) if pr else float("nan")
            cells += [fmt(ra), fmt(rb), fmt(m)]
        L.append(f"| {role} | " + " | ".join(cells) + " |")
    L.append("")
    # functions
    L.append(f"## Functions: the {top} largest |mroce - rxe| per RT (all QEMU threads)")
    L.append("")
    L.append("A name with ~ is an unnamed (static) function after the named one (approximate).")
    L.append("")
    fv = []
    for w in good:
        rts, gsecs, psecs, _ = w["norm"]
        k = gsecs / psecs / rts / 1000.0
        d = collections.Counter()
        for cat, name, byrole in w["agg"]["names"]:
            d[(cat, name)] += sum(byrole.values()) * k
        fv.append((w["boot"], w["driver"], d))
    keys = set()
    for _, _, d in fv:
        keys |= set(d)
    rowsf = []
    for key in keys:
        byboot = collections.defaultdict(lambda: collections.defaultdict(list))
        for b, drv, d in fv:
            byboot[b][drv].append(d.get(key, 0.0))
        diffs, ra, rb = [], [], []
        for b in byboot:
            if byboot[b].get("rxe") and byboot[b].get("mroce"):
                ra.append(statistics.fmean(byboot[b]["rxe"]))
                rb.append(statistics.fmean(byboot[b]["mroce"]))
                diffs.append(rb[-1] - ra[-1])
        if diffs:
            m, h = mean_ci(diffs)
            rowsf.append((abs(m), key, statistics.fmean(ra), statistics.fmean(rb), m, h))
    rowsf.sort(reverse=True)
    L.append("| category | function | rxe us/RT | mroce us/RT | diff | 95 % |")
    L.append("|---|---|---|---|---|---|")
    for _, (cat, name), ra, rb, m, h in rowsf[:top]:
        L.append(f"| {cat} | `{name}` | {fmt(ra, 3)} | {fmt(rb, 3)} | {fmt(m, 3)} | ±{fmt(h, 3)} |")
    L.append("")
    L.append(f"## Functions: the {top} largest per RT (all QEMU threads, mean of all windows)")
    L.append("")
    L.append("| category | function | rxe us/RT | mroce us/RT |")
    L.append("|---|---|---|---|")
    big = sorted(rowsf, key=lambda r: -max(r[2], r[3]))[:top]
    for _, (cat, name), ra, rb, m, h in big:
        L.append(f"| {cat} | `{name}` | {fmt(ra, 3)} | {fmt(rb, 3)} |")
    L.append("")
    # kernel under which user function
    L.append("## Host kernel samples of QEMU threads: kernel leaf under user-space caller "
             "(top 15, us/RT, mean of windows)")
    L.append("")
    kv = collections.defaultdict(lambda: collections.defaultdict(list))
    for w in good:
        rts, gsecs, psecs, _ = w["norm"]
        k = gsecs / psecs / rts / 1000.0
        seen = collections.Counter()
        for kern, user, ns in w["agg"]["kcaller"]:
            seen[(kern, user)] += ns * k
        for key, x in seen.items():
            kv[key][w["driver"]].append(x)
    nwin = collections.Counter(w["driver"] for w in good)
    krows = []
    for key, d in kv.items():
        ra = sum(d.get("rxe", [])) / max(nwin["rxe"], 1)
        rb = sum(d.get("mroce", [])) / max(nwin["mroce"], 1)
        krows.append((max(ra, rb), key, ra, rb))
    krows.sort(reverse=True)
    L.append("| kernel function | user caller | rxe | mroce |")
    L.append("|---|---|---|---|")
    for _, (kern, user), ra, rb in krows[:15]:
        L.append(f"| `{kern}` | `{user}` | {fmt(ra, 3)} | {fmt(rb, 3)} |")
    L.append("")
    approx = collections.Counter()
    tot = 0
    for w in good:
        approx.update(w["agg"]["approx"])
        tot += sum(sum(c.values()) for c in w["agg"]["ns"].values())
    if tot:
        L.append("Samples named by a neighbouring function (approximate): " + ", ".join(
            f"{c} {100.0 * n / tot:.1f} %" for c, n in approx.most_common()) + " of QEMU's.")
        L.append("")
    return "\n".join(L)


def drivers_of(windows):
    """The driver labels of windows, rxe first, then mroce, mroce2, ..."""
    return sorted({w["driver"] for w in windows}, key=lambda d: (d != "rxe", len(d), d))


UP_COLS = [("lookup", "lookups"), ("miss", "misses"), ("ratio", "miss ratio"),
           ("gen", "translations"), ("exec", "cpu_exec entries"), ("exits", "loop exits"),
           ("step_atomic", "atomic steps"), ("pause", "PAUSE"), ("hlt", "HLT")]


def report_uprobes(uwins, ctrl):
    """The uprobe counts' part of the report: uwins the -um/-ul windows
    (w['v'] from uprobe_rt), ctrl the control windows (w['v'] from
    per_rt): per window, per driver and against rxe, and the module and
    kernel bases each column ran at (guest.sh's meta)."""
    L = ["## Uprobe counts: TB lookups and jump-cache misses per RT", ""]
    L.append("Host uprobes on QEMU functions, counted per thread over the guest's packet window "
             "(perf stat --per-thread): lookups = helper_lookup_tb_ptr (COL-ul windows only), "
             "misses = qht_lookup_custom (the hash table behind the per-vCPU jump cache), "
             "translations = tb_gen_code, loop exits = cpu_loop_exit*. Each hit costs a trap, so "
             "a window runs slower than its control (slowdown: wall us/RT over the control "
             "window's of the same column): time-driven work (ticks, a waiting vCPU's polling) "
             "weighs more per RT; misses/s is per host second. Counts run from the host's "
             "enable to its disable, a little longer than the guest's packet window: per RT is "
             "the count's rate over the host's seconds times the guest's window over its RTs; "
             "outer: the RTs from the packet read before the guest asked the host to start to "
             "the one after it stopped, over the window's; misses >=: the misses over those "
             "outer RTs (a lower bound whatever the rate did).")
    L.append("")
    cwall = {(w["boot"], w["col"][:-len("-np")]): w["v"][("wall",)]
             for w in ctrl if w.get("v") is not None}
    cols = ["boot", "column", "RTs", "wall us/RT", "slowdown", "outer", "lookups", "misses",
            "misses >=", "miss ratio", "misses vcpu0 / vcpu1", "translations", "cpu_exec",
            "loop exits", "PAUSE", "HLT", "misses/s"]
    md_head(L, cols)
    for w in uwins:
        v = w.get("v")
        if v is None:
            L.append(unusable_row(w, len(cols)))
            continue
        cw = cwall.get((w["boot"], w["col"][:-3]))
        slow = v[("wall",)] / cw if cw else float("nan")
        has_l = "lookup" in w["win"].get("uprobes", [])
        L.append(f"| {w['boot']} | {w['col']} | {w['norm'][0]:.0f} | {fmt(v[('wall',)], 1)} "
                 f"| {fmt(slow, 2)} | {fmt(v[('outer',)] or float('nan'), 2)} "
                 f"| {fmt(v[('qemu', 'lookup')], 1) if has_l else '-'} "
                 f"| {fmt(v[('qemu', 'miss')], 2)} "
                 f"| {fmt(v[('qemu', 'miss@outer')] or float('nan'), 2)} "
                 f"| {fmt(v[('qemu', 'ratio')], 4) if has_l else '-'} "
                 f"| {fmt(v[('vcpu0', 'miss')], 2)} / {fmt(v[('vcpu1', 'miss')], 2)} "
                 f"| {fmt(v[('qemu', 'gen')], 3)} | {fmt(v[('qemu', 'exec')], 2)} "
                 f"| {fmt(v[('qemu', 'exits')], 2)} | {fmt(v[('qemu', 'pause')], 2)} "
                 f"| {fmt(v[('qemu', 'hlt')], 2)} | {fmt(v[('per_s', 'miss')], 0)} |")
    L.append("")
    drivers = drivers_of([w for w in uwins if w.get("v") is not None])
    for suffix, what in (("-um", "miss-path probes only (COL-um)"),
                         ("-ul", "with the lookup helper (COL-ul)")):
        ws = [w for w in uwins if w.get("v") is not None and w["col"].endswith(suffix)]
        if not ws:
            continue
        L.append(f"### Per driver, {what}: mean per boot, then over boots; against rxe: "
                 "each boot's difference, mean and 95 % t interval over boots")
        L.append("")
        L.append("| per RT | " + " | ".join(drivers) + " | "
                 + " | ".join(f"{d} - rxe | 95 %" for d in drivers if d != "rxe") + " |")
        L.append("|---|" + "---|" * (len(drivers) + 2 * (len(drivers) - 1)))
        keys = [(("qemu", k), d) for k, d in UP_COLS if suffix == "-ul" or k not in
                ("lookup", "ratio")]
        keys += [(("vcpu0", "miss"), "misses vcpu0"), (("vcpu1", "miss"), "misses vcpu1")]
        if suffix == "-ul":
            keys += [(("vcpu0", "lookup"), "lookups vcpu0"), (("vcpu1", "lookup"), "lookups vcpu1"),
                     (("vcpu0", "ratio"), "miss ratio vcpu0"),
                     (("vcpu1", "ratio"), "miss ratio vcpu1")]
        keys += [(("wall",), "wall us/RT (probed)"), (("per_s", "miss"), "misses per second")]
        for key, desc in keys:
            nd = 4 if key[-1] == "ratio" else 2
            means = []
            for d in drivers:
                byb = collections.defaultdict(list)
                for w in ws:
                    if w["driver"] == d:
                        byb[w["boot"]].append(w["v"].get(key, 0.0))
                means.append(statistics.fmean([statistics.fmean(x) for x in byb.values()])
                             if byb else float("nan"))
            diffs = []
            for d in drivers:
                if d == "rxe":
                    continue
                m, h = mean_ci([x for _, _, _, x in paired(ws, key, "rxe", d)])
                diffs.append(f"{fmt(m, nd)} | ±{fmt(h, nd)}")
            L.append(f"| {desc} | " + " | ".join(fmt(x, nd) for x in means) + " | "
                     + " | ".join(diffs) + " |")
        L.append("")
    # the time-driven part grows with a window's (probed) wall time and the
    # probes' slowdown differs per window: a line per count, common slope,
    # a step per driver, extrapolated to zero wall = the RT's own work
    fits = []
    for suffix in ("-um", "-ul"):
        ws = [w for w in uwins if w.get("v") is not None and w["col"].endswith(suffix)]
        for d in drivers:
            if d == "rxe":
                continue
            sub = [w for w in ws if w["driver"] in ("rxe", d)]
            for key in ([("qemu", "lookup")] if suffix == "-ul" else []) + [("qemu", "miss")]:
                c = equal_wall(sub, key, d)
                if c is not None:
                    fits.append((suffix, d, key[1], len(sub), c))
    if fits:
        L.append("### Extrapolated to zero wall time (the RT's own work, if the time-driven "
                 "part is linear in the wall time)")
        L.append("")
        L.append("Per window kind, over the rxe windows and one driver's: count per RT ~ a + "
                 "slope x (probed wall us/RT) + step x [driver]; rxe at zero wall = a, the "
                 "driver = a + step. Few windows: read with the per-window table.")
        L.append("")
        L.append("| windows | count | n | rxe at zero wall | driver | driver at zero wall "
                 "| step | slope per ms of wall |")
        L.append("|---|---|---|---|---|---|---|---|")
        for suffix, d, what, n, (a, slope, step) in fits:
            L.append(f"| COL{suffix} | {what} | {n} | {fmt(a, 1)} | {d} | {fmt(a + step, 1)} "
                     f"| {fmt(step, 1)} | {fmt(slope * 1000, 2)} |")
        L.append("")
    bases = [w for w in uwins + ctrl if w["meta"].get("modbase")]
    if bases:
        L.append("### Where each column's module and the kernel were loaded (guest, per boot)")
        L.append("")
        L.append("| boot | column | module base | kernel _text |")
        L.append("|---|---|---|---|")
        seen = set()
        for w in sorted(bases, key=lambda w: (w["boot"], w["col"])):
            key = (w["boot"], w["col"].rsplit("-", 1)[0] if w["col"][-3:] in
                   ("-np", "-um", "-ul") else w["col"])
            if key in seen:
                continue
            seen.add(key)
            L.append(f"| {key[0]} | {key[1]} | {w['meta']['modbase']} "
                     f"| {w['meta'].get('ktext', 'n/a')} |")
        L.append("")
    return "\n".join(L)


def do_report(args):
    qsyms = Symbols(args.qemu)
    windows = []
    for run in args.run:
        for w in analyse(run, args.perf, qsyms, args.qemu):
            if len(args.run) > 1:
                # run-DATE/bN/bootM: one label per boot across make runs
                parts = os.path.normpath(os.path.abspath(run)).split(os.sep)[-2:]
                w["boot"] = "/".join(parts + [w["boot"]])
            windows.append(w)
    if not windows:
        print(f"qemuprof: no windows under {' '.join(args.run)}", file=sys.stderr)
        return 1
    for w in windows:
        w["v"] = uprobe_rt(w) if w.get("kind") == "uprobes" else per_rt(w)
    uwins = [w for w in windows if w.get("kind") == "uprobes"]
    rest = [w for w in windows if w.get("kind") != "uprobes"]
    if any(not w.get("control") for w in rest):
        print(report(rest, args.top))
    if uwins:
        print(report_uprobes(uwins, [w for w in rest if w.get("control")]))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("watch")
    w.add_argument("run")
    w.add_argument("--freq", type=int, default=int(os.environ.get("QEMUPROF_FREQ", "1000")))
    w.add_argument("--perf", default="perf")
    w.add_argument("--qemu", default=QEMU)
    r = sub.add_parser("report")
    r.add_argument("run", nargs="+", help="run directories (one per boot or more)")
    r.add_argument("--perf", default="perf")
    r.add_argument("--qemu", default=QEMU)
    r.add_argument("--top", type=int, default=25)
    s = sub.add_parser("sym")
    s.add_argument("addr", nargs="+")
    s.add_argument("--qemu", default=QEMU)
    args = ap.parse_args(argv)
    if args.cmd == "watch":
        return watch(args)
    if args.cmd == "sym":
        q = Symbols(args.qemu)
        for a in args.addr:
            n, exact = q.name(int(a, 16))
            print(a, n, classify_name(n), "" if exact else "(approximate)")
        return 0
    return do_report(args)


if __name__ == "__main__":
    sys.exit(main())
