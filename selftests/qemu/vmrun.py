#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run mroce selftests in a QEMU (TCG) guest booting the Debian kernel.

The guest shares the host root read-only over virtio-9p, plus the repository
(read-only, at its host path) and one writable output directory per boot.
Stage 1 (selftests/qemu/init) mounts them, stage 2 (selftests/qemu/guest.sh)
installs the freshly built mroce.ko and runs the planned tests, framing each
in the kernel log. This script watches the serial console, enforces
timeouts, checks the kernel log of every test for warnings/oopses/stalls
(klog.py: each report's first line and stack frames go into the TAP output),
restarts the VM for the remaining tests after a crash (and, at most twice,
after a kernel death before the VM came up: run_boots), and prints TAP 13.

A guest that stops making progress (the test ran past its timeout, or the
kernel reported a soft lockup, an RCU stall or a hung task) is asked over the
QEMU monitor for the stacks of all CPUs and of the blocked tasks (magic
SysRq l and w on the emulated keyboard) before it is killed, so that they
land in console.log and in the failing test's TAP output.

Usage: vmrun.py [options] [TEST ...]   (default: TEST_PROGS of selftests/Makefile)
"""

import argparse
import json
import os
import re
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the host-load sampler knows how QEMU names its vCPU threads
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import klog  # noqa: E402
from hostload import vcpu_threads  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SELFTESTS = os.path.join(REPO, "selftests")
# The module the guest installs: the tree's build, or --ko (another build
# directory in the repository: scripts/build-module.sh --out).
KO = os.path.join(REPO, "drivers/infiniband/sw/mroce/mroce.ko")
# The kernel the guest boots and the root its modules are installed under
# (<root>/lib/modules/<kver>): Debian's, or with --kernel/--modroot a build
# of our own (make vmtest-lockdep: selftests/qemu/lockdep-kernel.sh). The
# host root is the guest's root, so a --modroot anywhere on the host is
# seen by the guest at the same path.
KERNEL = None   # None: /boot/vmlinuz-<kver>
MODROOT = "/"

MARKER = re.compile(r"mroce-selftests: (start|begin|end|done|fatal)\b ?(.*)")

BOOT_BUDGET = 400      # s from qemu start to the first test (TCG on a loaded host)
SHUTDOWN_BUDGET = 120  # s from the last test to qemu exit
GRACE = 30             # s past a test's own timeout before the host kills the VM
# A soft lockup, RCU stall or hung task is reported 20-60 s into the hang and
# then every few seconds; the test has failed by then. Waiting out its whole
# timeout (600 s for some) only delays the rerun of the tests after it.
HANG_GRACE = 90        # s after the first hang report before the VM is killed
DUMP_WAIT = 30         # s at most for the SysRq backtraces to reach the console
DUMP_QUIET = 5         # s of console silence that ends that wait early
# A guest kernel that dies before guest.sh's "start" marker (the VM comes
# up) has run no test and never loaded mroce.ko: the tests insert it, and
# nothing before "start" does. 6.12 under multi-threaded TCG sometimes
# dies that way about 2 s into boot (a stale int3 of a finished static-key
# patch executed by the other vCPU: "Oops: int3" in sched_clock_cpu, CI of
# session 35). Such a boot is shown, not counted, and the VM is booted
# again, at most EARLY_RETRIES more times in one run: a death on every boot
# still fails the run. What counts as a death: klog.DEATH.
EARLY_RETRIES = 2
# An oops's module list naming mroce: then the module was loaded after all.
MROCE_LOADED = re.compile(r"Modules linked in:.*\bmroce\b")
# --jit-log: the lines of QEMU 7.2's "info jit" that jit.log keeps (blocks
# translated and in the cache, whole-cache flushes, blocks invalidated by
# writes to their code page, TLB flushes).
JIT_FIELDS = [("tb_count", r"TB count"), ("tb_flush", r"TB flush count"),
              ("tb_invalidate", r"TB invalidate count"), ("tlb_full", r"TLB full flushes"),
              ("tlb_partial", r"TLB partial flushes")]


def log(msg):
    print(msg, flush=True)


def read_settings_timeout():
    try:
        with open(os.path.join(SELFTESTS, "settings")) as f:
            for line in f:
                m = re.match(r"\s*timeout\s*=\s*(\d+)", line)
                if m:
                    return int(m.group(1))
    except FileNotFoundError:
        pass
    return 120


def default_tests():
    """TEST_PROGS of selftests/Makefile, in order, without the .sh suffix."""
    with open(os.path.join(SELFTESTS, "Makefile")) as f:
        text = f.read().replace("\\\n", " ")
    progs = []
    for m in re.finditer(r"^TEST_PROGS\s*[:+]?=\s*(.*)$", text, re.M):
        progs += m.group(1).split()
    return [p[:-3] if p.endswith(".sh") else p for p in progs]


def resolve(arg):
    """A selftest name (selftests/<name>.sh) or a script path in the repository.

    Returns (name, path relative to the repository)."""
    if arg.endswith(".sh") or "/" in arg:
        path = os.path.relpath(os.path.abspath(arg if os.path.isabs(arg) or os.path.exists(arg)
                                               else os.path.join(REPO, arg)), REPO)
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(path)[:-3]
                      if path.endswith(".sh") else os.path.basename(path))
    else:
        name, path = arg, os.path.join("selftests", arg + ".sh")
    if path.startswith("..") or not os.path.isfile(os.path.join(REPO, path)):
        sys.exit(f"vmrun: no such script in the repository: {path}")
    return name, path


def test_timeout(path, default):
    """A script may lower or raise its budget with a '# vm-timeout: N' line."""
    try:
        with open(os.path.join(REPO, path)) as f:
            for line in f:
                m = re.match(r"#\s*vm-timeout:\s*(\d+)", line)
                if m:
                    return int(m.group(1))
    except FileNotFoundError:
        pass
    return default


def test_prepare(path):
    """Host-side work a script declares with '# vm-prepare: <script>' lines."""
    scripts = []
    try:
        with open(os.path.join(REPO, path)) as f:
            for line in f:
                m = re.match(r"#\s*vm-prepare:\s*(\S+)", line)
                if m:
                    scripts.append(m.group(1))
    except FileNotFoundError:
        pass
    return scripts


def prepare(plan, kver):
    """Run each planned test's vm-prepare script once on the host (work that
    would take ages under TCG, e.g. building the SMB Direct modules). The .ko
    paths a script prints are staged into the guest's /lib/modules/<kver>/
    updates/, where modprobe prefers them to the stock modules. A failing
    script is reported, not fatal: the tests that need it find what is
    missing and skip."""
    kos = []
    scripts = []
    for _, _, path in plan:
        scripts += [s for s in test_prepare(path) if s not in scripts]
    for script in scripts:
        log(f"# vmrun: vm-prepare {script} (cached after the first run)")
        res = subprocess.run([os.path.join(REPO, script), "--kver", kver],
                             capture_output=True, text=True)
        if res.returncode:
            log(f"# vmrun: vm-prepare {script} failed; tests that need it will skip:")
            for ln in (res.stdout + res.stderr).splitlines()[-20:]:
                log(f"#   {ln}")
            continue
        kos += [ln for ln in res.stdout.split() if ln.endswith(".ko") and os.path.isfile(ln)]
    return kos


def check_vermagic(kver):
    if not os.path.exists(KO):
        sys.exit(f"vmrun: {KO} not built; run 'make modules'")
    vm = subprocess.run(["/sbin/modinfo", "-F", "vermagic", KO],
                        capture_output=True, text=True, check=True).stdout.split()
    if not vm or vm[0] != kver:
        sys.exit(f"vmrun: {KO} has vermagic '{vm[0] if vm else '?'}' but the VM boots "
                 f"{kver}; rebuild with 'make modules KVER={kver}'")


def moddir(kver):
    """The guest kernel's /lib/modules/<kver> as the host sees it."""
    return os.path.join(MODROOT, "lib", "modules", kver)


def initramfs(kver):
    out = os.path.join(REPO, "build", "vm", f"initramfs-{kver}.cpio.gz")
    inputs = [os.path.join(REPO, "selftests/qemu", n) for n in ("init", "mkinitramfs.sh")]
    inputs += [os.path.join(moddir(kver), "modules.dep")]
    if not os.path.exists(out) or any(os.path.exists(i) and
                                      os.path.getmtime(i) > os.path.getmtime(out)
                                      for i in inputs):
        subprocess.run([os.path.join(REPO, "selftests/qemu/mkinitramfs.sh"), kver, out,
                        MODROOT], check=True)
    return out


def build_tools():
    """Build selftests/tools into build/tools on the host: a compile under TCG
    takes minutes. Not fatal: a test whose tool is missing builds it itself."""
    res = subprocess.run(["make", "-s", "-C", os.path.join(SELFTESTS, "tools")],
                         capture_output=True, text=True)
    if res.returncode:
        log(f"# vmrun: building selftests/tools failed (tests will try in the VM):\n"
            f"{res.stdout}{res.stderr}")


def stage_install(kver, extra_kos=()):
    """Run scripts/install-module.sh into a staging root on the host.

    depmod over the whole module tree takes ~1 s here but most of a minute
    in the guest (every .ko read through 9p under TCG), so the guest copies
    the index this produces instead of running depmod itself. extra_kos
    (from vm-prepare) go to updates/extra/ before depmod runs."""
    root = os.path.join(REPO, "build", "vm", f"install-{kver}")
    mods = os.path.join(root, "lib", "modules", kver)
    subprocess.run(["rm", "-rf", root], check=True)
    os.makedirs(mods)
    if extra_kos:
        os.makedirs(os.path.join(mods, "updates", "extra"))
        subprocess.run(["cp", *extra_kos, os.path.join(mods, "updates", "extra")], check=True)
    os.symlink(os.path.join(moddir(kver), "kernel"), os.path.join(mods, "kernel"))
    for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
        src = os.path.join(moddir(kver), f)
        if os.path.exists(src):
            subprocess.run(["cp", src, mods], check=True)
    res = subprocess.run([os.path.join(REPO, "scripts", "install-module.sh"), "--ko", KO,
                          "--kver", kver, "--root", root], capture_output=True, text=True)
    if res.returncode:
        sys.exit(f"vmrun: install-module.sh failed:\n{res.stdout}{res.stderr}")
    return root


# The guest's clocksource (--clock, $MROCE_VM_CLOCK). Under TCG the kernel
# finds the vCPUs' TSCs unsynchronised and falls back to the emulated HPET:
# every ktime_get() is then an MMIO read QEMU's device model answers (a
# clock_gettime() costs ~2 us instead of ~0.13 us), which real hosts, all
# on the TSC, never pay. "hpet", the default, is 6.1's own choice and asked
# for by name (6.12 keeps the TSC under TCG: session 20): correctness runs
# need a clock that cannot jump, and the guest's TSC is the host's raw TSC,
# which a snapshot of the host moved 487,000 s ahead (session 9: a false RCU
# stall). tsc=reliable keeps the TSC (and the HPET still selectable at run
# time, for BENCH=clock_ab): make bench and make demo ask for it, they show
# speed.
CLOCKS = {"tsc": ["tsc=reliable"], "hpet": ["clocksource=hpet"]}

# The guest's user-space address randomisation (--aslr, $MROCE_VM_ASLR),
# off by default. Under TCG every exec whose code lands at new virtual
# addresses is translated anew: with ASLR on, 18-44 k new blocks a second
# and 20 flushes of the whole 512 MB code cache in one make vmtest; off
# (norandmaps: randomize_va_space=0) each binary maps where it did last
# time, its translations are reused (about 1 k new blocks a second, no
# flush) and make vmtest takes 0.70x the time (docs/testing.md). The
# kernel's own KASLR is unchanged.
ASLR = {"on": [], "off": ["norandmaps"]}

# --pin (make bench: $MROCE_VM_PIN): each vCPU thread of multi-threaded TCG
# on a host CPU of its own (vCPU n on the n-th CPU this process may use),
# set as soon as QEMU has made them, long before the guest runs a test.
# It rules out both vCPU threads sharing one host CPU (each 50 % on a CPU,
# 50 % in its run queue: seen in a make qemuprof boot, session 43); off by
# default: in make bench's timed runs on a quiet host the scheduler kept
# them apart unpinned too, and the guest's slow mode there is the host's
# CPUs running slow (session 44, docs/testing.md). QEMU's other threads (main loop: timers, the serial console,
# the monitor; the 9p and RCU workers) stay free: they are idle most of
# the time, on a 2-CPU host no CPU is left for them alone, and pinned to
# one CPU they would queue behind that CPU's vCPU while the other vCPU's
# CPU may be idle (a vCPU in HLT sleeps in the host).
PIN_WAIT = 30          # s after QEMU starts to find its vCPU threads


def pin_plan(vcpus, cpus):
    """[(vCPU index, thread id, host CPU)]: vCPU n on the n-th of the host
    CPUs (sorted; wrapping round when there are fewer CPUs than vCPUs), or
    [] when there are fewer than two host CPUs (nothing to separate)."""
    cpus = sorted(cpus)
    if len(cpus) < 2:
        return []
    return [(n, vcpus[n], cpus[i % len(cpus)]) for i, n in enumerate(sorted(vcpus))]


def pin_vcpus(pid, smp, setaffinity=os.sched_setaffinity):
    """Pin QEMU's vCPU threads (pin_plan over this process's CPUs). Returns
    the lines saying what was done, None while not all smp threads exist
    yet."""
    vcpus = vcpu_threads(pid)
    if len(vcpus) < smp:
        return None
    plan = pin_plan(vcpus, os.sched_getaffinity(0))
    if not plan:
        return [f"not pinned: fewer than two host CPUs ({sorted(os.sched_getaffinity(0))})"]
    out = []
    for n, tid, cpu in plan:
        try:
            setaffinity(tid, {cpu})
            out.append(f"vcpu{n} thread {tid} -> host CPU {cpu}")
        except OSError as e:
            out.append(f"vcpu{n} thread {tid}: not pinned ({e})")
    return out


def qemu_cmd(kver, initrd, outdir, args, monitor=None):
    append = " ".join([
        "console=ttyS0", "panic=-1", "oops=panic", "printk.devkmsg=on",
        # Evidence of a hang: SysRq from the host (Boot.dump_stacks), the
        # backtraces of all CPUs with a soft lockup (the CPU that holds what
        # the reported one spins on), blocked tasks reported after the
        # kernel's default 120 s (a slow but live ULP teardown on a loaded
        # host must not read as a hang); warnings only.
        "sysctl.kernel.sysrq=1", "sysctl.kernel.softlockup_all_cpu_backtrace=1",
        "sysctl.kernel.hung_task_timeout_secs=120", "sysctl.kernel.hung_task_panic=0",
        f"MROCE_REPO={REPO}", f"MROCE_OUT={outdir}", f"MROCE_KO={KO}",
    ] + ([f"MROCE_MODROOT={MODROOT}"] if MODROOT != "/" else [])
        + (["MROCE_SHELL=1"] if args.shell else []) + CLOCKS[args.clock] + ASLR[args.aslr]
        + args.append.split())
    # --plugin: a TCG plugin, "{out}" in its arguments standing for this
    # boot's output directory (the share the guest writes: insnprof's
    # snapshot requests); --tcg-thread single: one host thread for all
    # vCPUs (a plugin's inline counters are exact only then).
    plugin = (["-plugin", args.plugin.replace("{out}", outdir)]
              if getattr(args, "plugin", None) else [])
    thread = getattr(args, "tcg_thread", None) or "multi"
    return [
        "qemu-system-x86_64",
        # thread names ("CPU 0/TCG"): --pin finds the vCPU threads by them
        "-name", "mroce-test,debug-threads=on",
        "-accel", f"tcg,thread={thread},tb-size=512", "-cpu", getattr(args, "cpu", None) or "max",
    ] + plugin + [
        "-smp", str(args.smp), "-m", args.mem, "-machine", "pc",
        "-display", "none", "-vga", "none", "-serial", "stdio",
        "-monitor", f"unix:{monitor},server=on,wait=off" if monitor else "none",
        "-no-reboot", "-nic", "none",
        "-kernel", KERNEL or f"/boot/vmlinuz-{kver}", "-initrd", initrd,
        "-append", append,
        "-fsdev", "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot",
        "-fsdev", f"local,id=repo,path={REPO},security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=repo,mount_tag=repo",
        "-fsdev", f"local,id=out,path={outdir},security_model=none",
        "-device", "virtio-9p-pci,fsdev=out,mount_tag=out",
    ]


class Result:
    def __init__(self, name):
        self.name = name
        self.rc = None          # exit status of the script; None if it never ended
        self.secs = None
        self.splats = klog.Splats()   # its kernel-log lines
        self.kernel = None      # the report of them to print; None: make it from splats
        self.note = ""          # why it failed when it did not end
        self.logfile = None
        self.streamed = 0       # --plain: log bytes already shown while it ran
        self.notes = []         # shown with the result, not counted


class Boot:
    """One VM boot running `plan` (a list of (name, timeout, script))."""

    def __init__(self, kver, initrd, outdir, plan, args, on_result):
        self.kver, self.initrd, self.outdir = kver, initrd, outdir
        self.plan, self.args, self.on_result = plan, args, on_result
        self.timeouts = {name: tmo for name, tmo, _ in plan}
        self.results = {}
        self.current = None
        self.started = False
        self.finished = False
        self.between = klog.Splats()  # kernel-log lines outside any test window
        self.early = klog.Splats()    # ... of them those before the VM came up
        self.mroce_loaded = False     # an oops before "start" lists mroce
        self.note = ""
        self.hang = None        # the hang report that cut the current test short

    def line(self, text):
        m = MARKER.search(text)
        if m:
            what, rest = m.group(1), m.group(2)
            if what == "start":
                self.started = True
            elif what == "begin":
                name = rest.split()[0]
                self.current = self.results.setdefault(name, Result(name))
                self.current.logfile = os.path.join(self.outdir, name + ".log")
                self.deadline = time.monotonic() + self.timeouts.get(name, 120) + GRACE
                self.hang = None
            elif what == "end" and self.current:
                kv = dict(f.split("=", 1) for f in rest.split()[1:] if "=" in f)
                self.current.rc = int(kv.get("rc", 1))
                self.current.secs = int(kv.get("secs", 0))
                self.on_result(self.current)
                self.current = None
                self.deadline = time.monotonic() + self.next_budget()
            elif what == "done":
                self.finished = True
                self.deadline = time.monotonic() + SHUTDOWN_BUDGET
            elif what == "fatal":
                self.note = "guest setup failed: " + rest
            return
        if not self.started and MROCE_LOADED.search(text):
            self.mroce_loaded = True
        target = (self.current.splats if self.current else
                  self.between if self.started else self.early)
        if target.feed(text) and self.current and not self.hang and klog.HANG.search(text):
            self.hang = klog.strip_ts(text)[1]
            self.deadline = min(self.deadline, time.monotonic() + HANG_GRACE)

    def died_early(self):
        """The kernel-log report of a death before the VM came up (before
        any test, with mroce.ko not loaded), else None."""
        if self.started or self.results or self.mroce_loaded:
            return None
        if self.early.died() is None:
            return None
        return self.early.report()

    def stream(self, res):
        """--plain: show a running script's complete new lines (progress)."""
        try:
            with open(res.logfile, "rb") as f:
                f.seek(res.streamed)
                data = f.read()
        except (FileNotFoundError, TypeError):
            return
        end = data.rfind(b"\n") + 1
        if end:
            sys.stdout.write(data[:end].decode("utf-8", "replace"))
            sys.stdout.flush()
            res.streamed += end

    def next_budget(self):
        return BOOT_BUDGET  # the next begin (or done) follows promptly

    def pump(self, timeout):
        """Read the console for up to timeout s. Returns the bytes read, -1
        once QEMU has exited."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if self.args.plain and self.current:
            self.stream(self.current)
        if not ready:
            return 0
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return -1
        self.console.write(chunk)
        self.console.flush()
        self.buf += chunk
        while b"\n" in self.buf:
            raw, self.buf = self.buf.split(b"\n", 1)
            self.line(raw.decode("utf-8", "replace").rstrip("\r"))
        return len(chunk)

    def monitor(self, command):
        """One HMP command over the monitor socket: its reply, None if it
        failed."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(5)
                sock.connect(self.monitor_path)
                reply = b""
                while not reply.endswith(b"(qemu) "):
                    data = sock.recv(4096)
                    if not data:
                        return None
                    reply += data
                sock.sendall(command.encode() + b"\n")
                reply = b""
                while b"(qemu) " not in reply:
                    data = sock.recv(4096)
                    if not data:
                        break
                    reply += data
            return reply.decode("utf-8", "replace").replace("\r", "")
        except OSError:
            return None

    def jit_sample(self):
        """--jit-log: one line of TCG's translation statistics (HMP info
        jit) into jit.log: seconds since boot, then the counters."""
        reply = self.monitor("info jit")
        if reply is None:
            return
        got = []
        for name, pat in JIT_FIELDS:
            m = re.search(pat + r"\s+(\d+)", reply)
            if m:
                got.append(f"{name}={m.group(1)}")
        with open(os.path.join(self.outdir, "jit.log"), "a") as f:
            f.write(f"t={time.monotonic() - self.t_boot:.0f} {' '.join(got)}\n")

    def pin(self, until):
        """--pin: pin the vCPU threads once QEMU has made them (pin_vcpus);
        what was done into BOOT/pin.txt and the log. Returns the deadline
        to keep trying, None once done or given up."""
        done = pin_vcpus(self.proc.pid, self.args.smp)
        if done is None and time.monotonic() < until:
            return until
        if done is None:
            done = [f"not pinned: {self.args.smp} vCPU threads not found in {PIN_WAIT}s "
                    f"(found {vcpu_threads(self.proc.pid)})"]
        with open(os.path.join(self.outdir, "pin.txt"), "w") as f:
            f.writelines(ln + "\n" for ln in done)
        log(("" if self.args.plain else "# ") + "vmrun: pin: " + "; ".join(done))
        return None

    def dump_stacks(self):
        """Before the VM is killed for making no progress: ask the guest
        kernel for the backtraces of all CPUs (SysRq l, by NMI, so a CPU
        spinning with interrupts off answers too) and for the stacks of the
        blocked tasks (SysRq w), and read the console until they are out.
        The keyboard interrupt is served by any CPU that still takes
        interrupts; guest.sh leaves SysRq enabled for this."""
        def note(msg):
            log(f"# vmrun: {msg}")
            self.console.write(f"\n[vmrun] {msg}\n".encode())
        for key in ("l", "w"):
            if self.monitor(f"sendkey alt-sysrq-{key}") is None:
                note("could not reach the QEMU monitor for the SysRq backtraces")
                return
            note(f"no progress: sent SysRq-{key} "
                 f"({'all CPUs' if key == 'l' else 'blocked tasks'}) before killing the VM")
            end = time.monotonic() + DUMP_WAIT / 2
            heard = None
            while time.monotonic() < end:
                got = self.pump(1.0)
                if got < 0:
                    return
                if got:
                    heard = time.monotonic()
                elif heard and time.monotonic() - heard >= DUMP_QUIET:
                    break

    def run(self):
        os.makedirs(self.outdir, exist_ok=True)
        with open(os.path.join(self.outdir, "plan"), "w") as f:
            for name, tmo, script in self.plan:
                f.write(f"{name} {tmo} {script}\n")
        # The benchmarks' knobs (BENCH_DURATION=20 make bench): guest.sh
        # sources this file; the kernel command line would split values at
        # spaces.
        with open(os.path.join(self.outdir, "env"), "w") as f:
            for key in sorted(k for k in os.environ if re.fullmatch(r"BENCH_[A-Z0-9_]+", k)):
                f.write(f"export {key}={shlex.quote(os.environ[key])}\n")
        # A socket path must fit in 108 bytes: not under the run directory.
        mondir = tempfile.mkdtemp(prefix="mroce-vm-")
        self.monitor_path = os.path.join(mondir, "monitor.sock")
        cmd = qemu_cmd(self.kver, self.initrd, self.outdir, self.args, self.monitor_path)
        with open(os.path.join(self.outdir, "qemu-cmdline"), "w") as f:
            f.write(" ".join(cmd) + "\n")
        self.console = open(os.path.join(self.outdir, "console.log"), "wb")
        self.proc = proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        self.deadline = time.monotonic() + BOOT_BUDGET
        self.t_boot = time.monotonic()
        jit_next = self.t_boot + self.args.jit_log if self.args.jit_log > 0 else None
        pin_until = self.t_boot + PIN_WAIT if getattr(self.args, "pin", "off") == "on" else None
        self.buf = b""
        timed_out = False
        try:
            while True:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    self.dump_stacks()
                    break
                if self.pump(min(left, 0.2 if pin_until else 1.0)) < 0:
                    break
                if pin_until is not None:
                    pin_until = self.pin(pin_until)
                if jit_next is not None and time.monotonic() >= jit_next:
                    self.jit_sample()
                    jit_next += self.args.jit_log
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            self.console.close()
            subprocess.run(["rm", "-rf", mondir], check=False)
        if self.buf:
            self.line(self.buf.decode("utf-8", "replace"))
        if self.current:
            cur = self.current
            if timed_out and self.hang:
                cur.note = (f"VM killed {HANG_GRACE}s after the kernel reported a hang: "
                            f"{self.hang}")
            elif timed_out:
                cur.note = (f"VM killed: no progress {self.timeouts.get(cur.name, 0) + GRACE}s "
                            "into the test (kernel hang?)")
            else:
                cur.note = "VM died during the test (kernel panic/oops?)"
            self.on_result(cur)
        elif timed_out and not self.finished:
            self.note = self.note or ("VM timed out before the tests started" if not self.started
                                      else "VM stopped making progress between tests")
        return timed_out


def tail(path, n=40):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        return lines[-n:]
    except FileNotFoundError:
        return []


def run_boots(plan, max_boots, new_boot, tap=log):
    """Boot the VM until every test of plan ran: after a crash the tests
    after the one that was running get a fresh boot, up to max_boots boots.
    A boot whose kernel died before the VM came up (Boot.died_early) ran
    nothing and did not load mroce.ko: it is shown, its kernel log becomes
    a note instead of a failure, and it is booted again, at most
    EARLY_RETRIES times per run (then its log counts and the run stops).
    new_boot(n, plan_left) makes boot n.

    Returns (tests not run, boots, early deaths forgiven, the kernel-log
    report outside the tests, the notes)."""
    remaining = list(plan)
    between, notes = [], []
    boots = early = 0
    while remaining and boots - early < max_boots:
        boots += 1
        boot = new_boot(boots, remaining)
        tb = time.monotonic()
        boot.run()
        console = os.path.join(boot.outdir, "console.log")
        tap(f"# boot{boots}: {time.monotonic() - tb:.1f}s wall, logs in {boot.outdir}")
        death = boot.died_early()
        if death is not None:
            again = early < EARLY_RETRIES
            log(f"# boot{boots}: the guest kernel died before the VM came up (before any "
                f"test ran and before mroce.ko was loaded): "
                + (f"not a mroce failure, booting again ({early + 1} of at most "
                   f"{EARLY_RETRIES} such reboots)" if again else
                   f"{early + 1} such deaths in this run, not booting again"))
            for ln in death[:12]:
                log(f"#   {ln}")
            if again:
                early += 1
                notes += [f"boot{boots} died before the VM came up (not counted):"]
                notes += [f"boot{boots}: {ln}" for ln in death]
                continue
        between += [f"boot{boots}: {ln}" for ln in
                    boot.early.report(where=console) + boot.between.report(where=console)]
        done = set(boot.results)
        if not boot.results and boot.note:
            log(f"# boot{boots}: {boot.note}")
            for ln in tail(console, 30):
                log(f"#   {ln}")
        if boot.results:
            # Carry on after the last test this boot reached.
            last = max(i for i, (name, _, _) in enumerate(remaining) if name in done)
            remaining = remaining[last + 1:]
        elif not boot.started:
            break  # the VM itself does not come up: retrying will not help
    return remaining, boots, early, between, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tests", nargs="*")
    ap.add_argument("--kver", required=True)
    ap.add_argument("--ko", help="the mroce.ko to test, inside the repository (default: "
                    "the tree's drivers/infiniband/sw/mroce/mroce.ko)")
    ap.add_argument("--kernel", help="the kernel image to boot (default /boot/vmlinuz-KVER); "
                    "its release must be KVER")
    ap.add_argument("--modroot", help="the guest kernel's modules are under "
                    "MODROOT/lib/modules/KVER (make modules_install INSTALL_MOD_PATH=MODROOT; "
                    "default /)")
    ap.add_argument("--out", help="run directory (default build/vm/<timestamp>)")
    ap.add_argument("--mem", default="2G")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--max-boots", type=int, default=6)
    ap.add_argument("--summary", help="write pass/fail counts as JSON here")
    ap.add_argument("--shell", action="store_true",
                    help="boot with mroce installed and give an interactive shell")
    ap.add_argument("--quiet-pass", action="store_true",
                    help="print the output of failing tests only")
    ap.add_argument("--append", default=os.environ.get("MROCE_VM_APPEND", ""),
                    help="more guest kernel command line words (default $MROCE_VM_APPEND)")
    ap.add_argument("--cpu", default=os.environ.get("MROCE_VM_CPU") or "max",
                    help="QEMU -cpu model and features, e.g. max,-avx2 for an A/B of an "
                         "emulator suspect (default $MROCE_VM_CPU, else max)")
    ap.add_argument("--clock", choices=sorted(CLOCKS),
                    default=os.environ.get("MROCE_VM_CLOCK") or "hpet",
                    help="guest clocksource: hpet, the kernel's choice under TCG, or tsc "
                         "(tsc=reliable: the cheap clock, for benchmarks) (default "
                         "$MROCE_VM_CLOCK, else hpet)")
    ap.add_argument("--aslr", choices=sorted(ASLR),
                    default=os.environ.get("MROCE_VM_ASLR") or "off",
                    help="guest user-space address randomisation; off = norandmaps, "
                         "TCG reuses the translations of every exec (default "
                         "$MROCE_VM_ASLR, else off)")
    ap.add_argument("--jit-log", type=float,
                    default=float(os.environ.get("MROCE_VM_JIT_LOG") or 0),
                    help="every SECS, QEMU's translation statistics (info jit) into "
                         "BOOT/jit.log (default $MROCE_VM_JIT_LOG, else off)")
    ap.add_argument("--pin", default=os.environ.get("MROCE_VM_PIN") or "off",
                    help="on (1) or off (0): each vCPU thread on a host CPU of its own "
                         "(timed runs; default $MROCE_VM_PIN, else off)")
    ap.add_argument("--tcg-thread", choices=["multi", "single"], default="multi",
                    help="TCG threading: multi (a host thread per vCPU, default) or "
                         "single (one for all: exact plugin inline counters)")
    ap.add_argument("--plugin", metavar="SPEC",
                    help="a QEMU TCG plugin, -plugin SPEC (file=PATH,ARG=VALUE...); "
                         "{out} in SPEC is the boot's output directory")
    ap.add_argument("--plain", action="store_true",
                    help="print the scripts' output as is, no TAP (demo, benchmarks)")
    args = ap.parse_args()
    pin = {"1": "on", "on": "on", "0": "off", "off": "off"}.get(args.pin)
    if pin is None:
        sys.exit(f"vmrun: --pin / MROCE_VM_PIN {args.pin}: 1 (on) or 0 (off)")
    args.pin = pin
    if args.pin == "on" and args.tcg_thread == "single":
        log("vmrun: --pin: single-threaded TCG has one thread for all vCPUs, not pinned")
        args.pin = "off"
    if args.ko:
        global KO
        KO = os.path.abspath(args.ko)
        if os.path.relpath(KO, REPO).startswith(".."):
            sys.exit(f"vmrun: --ko {args.ko} is outside the repository the guest mounts")

    global KERNEL, MODROOT
    if args.kernel:
        KERNEL = os.path.abspath(args.kernel)
    if args.modroot:
        MODROOT = os.path.abspath(args.modroot)
    image = KERNEL or f"/boot/vmlinuz-{args.kver}"
    if not os.access(image, os.R_OK):
        sys.exit(f"vmrun: {image} missing or unreadable; run 'make deps'")
    if not os.path.isfile(os.path.join(moddir(args.kver), "modules.dep")):
        sys.exit(f"vmrun: no modules of {args.kver} in {moddir(args.kver)}")
    check_vermagic(args.kver)
    build_tools()
    initrd = initramfs(args.kver)
    default_tmo = read_settings_timeout()
    tests = [] if args.shell else (args.tests or default_tests())
    plan = [(name, test_timeout(path, default_tmo), path)
            for name, path in map(resolve, tests)]
    stage_install(args.kver, prepare(plan, args.kver))
    # Absolute: the guest gets it on its command line (MROCE_OUT).
    run = os.path.abspath(args.out or os.path.join(REPO, "build", "vm",
                                                   time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(run, exist_ok=True)
    latest = os.path.join(REPO, "build", "vm", "latest")
    if os.path.dirname(os.path.abspath(run)) == os.path.dirname(latest):
        if os.path.islink(latest) or os.path.exists(latest):
            os.remove(latest)
        os.symlink(os.path.basename(run), latest)

    if args.shell:
        outdir = os.path.join(run, "shell")
        os.makedirs(outdir, exist_ok=True)
        open(os.path.join(outdir, "plan"), "w").close()
        cmd = qemu_cmd(args.kver, initrd, outdir, args)
        return subprocess.call(cmd)

    total = len(plan) + 1
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    state = {"n": 0}
    def tap(msg):
        if not args.plain:
            log(msg)

    tap("TAP version 13")
    tap(f"1..{total}")

    def report(res):
        state["n"] += 1
        n = state["n"]
        lines = tail(res.logfile, 10 ** 6) if res.logfile else []
        shown = lines
        if args.plain and res.streamed:
            with open(res.logfile, "rb") as f:
                f.seek(res.streamed)
                shown = f.read().decode("utf-8", "replace").splitlines()
        if res.kernel is None:
            where = (os.path.join(os.path.dirname(res.logfile), "console.log")
                     if res.logfile else "console.log")
            res.kernel = res.splats.report(where=where)
        if res.rc is None:
            status, directive = "not ok", f" # {res.note}"
        elif res.kernel:
            status, directive = "not ok", " # kernel log shows problems"
        elif res.rc == 0:
            status, directive = "ok", ""
        elif res.rc == 4:
            why = next((ln.split("SKIP", 1)[1].strip(" :") for ln in reversed(lines)
                        if "SKIP" in ln), "")
            status, directive = "ok", f" # SKIP {why}".rstrip()
        elif res.rc == 124:
            status, directive = "not ok", " # TIMEOUT"
        else:
            status, directive = "not ok", f" # exit={res.rc}"
        failed = status == "not ok"
        if failed or not args.quiet_pass:
            for ln in shown:
                log(ln if args.plain else f"# {ln}")
        for ln in res.kernel:
            log(f"# kernel: {ln}")
        for ln in res.notes:
            log(f"# note: {ln}")
        secs = f" ({res.secs}s)" if res.secs is not None else ""
        if args.plain:
            if failed:
                log(f"vmrun: {res.name}: FAILED{directive}")
        else:
            log(f"{status} {n} selftests: {res.name}{secs}{directive}")
        if failed:
            counts["failed"] += 1
        elif "SKIP" in directive:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1

    def new_boot(n, plan_left):
        return Boot(args.kver, initrd, os.path.join(run, f"boot{n}"), plan_left, args, report)

    t0 = time.monotonic()
    remaining, boots, early, between, notes = run_boots(plan, args.max_boots, new_boot, tap)
    for name, _, _ in remaining:
        res = Result(name)
        res.note = "not run: the VM did not come up" if boots else "not run"
        report(res)

    kres = Result("kernel_log_outside_tests")
    kres.kernel = between
    kres.notes = notes
    kres.rc = 0
    kres.secs = None
    report(kres)

    wall = time.monotonic() - t0
    died = f" ({early} died before the VM came up, not counted)" if early else ""
    tap(f"# vmtest: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['skipped']} skipped in {wall:.0f}s over {boots} boot(s){died}; logs in {run}")
    if args.plain:
        log(f"(VM logs: {run})")
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(dict(counts, boots=boots, early_deaths=early, seconds=round(wall)), f)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
