#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Kernel-log splats: which lines fail a test, and the evidence to show.

One parser for both kernel-log checks: vmrun.py feeds it the guest's serial
console line by line, selftests/lib.sh (dmesg_clean) pipes the test's part
of dmesg through it. A splat is a report's first line (WARNING, BUG, soft
lockup, RCU stall, hung task, lockdep, Oops, an NMI or sysrq backtrace ...)
plus the lines of its trace that say where: the CPU/PID line, RIP and the
stack frames. A report that repeats (a soft lockup prints every few seconds)
is shown once with a count, and the whole report is bounded so that CI
output stays readable; the full text is in the console log.

As a filter: klog.py [--max-lines N] < kernel-log; prints the report (each
line prefixed by "kernel: ") and exits 1 if the log has a bad line.
"""

import re
import sys

# Lines that fail the test during which they appear.
BAD = re.compile(
    r"WARNING:|\bBUG\b|Oops|soft lockup|RCU stall|self-detected stall|"
    r"detected stalls|hung task|blocked for more than|"
    r"list_add corruption|list_del corruption|refcount_t:|"
    r"general protection|UBSAN|KASAN|kernel BUG|Call Trace:|"
    r"possible circular locking|possible recursive locking|suspicious RCU usage|"
    r"unregister_netdevice: waiting for|Kernel panic")

# Reports that mean the kernel (or a task in it) no longer makes progress:
# the runner stops waiting for the test soon after one of these.
HANG = re.compile(r"soft lockup|self-detected stall|detected stalls|"
                  r"blocked for more than|workqueue lockup")

# Reports that mean the kernel itself died (a panic, an oops, a BUG, a
# general protection fault), not just that it warned: vmrun.py boots again
# a guest whose kernel died this way before the VM came up (run_boots).
# Every one of them is a BAD line too; died() is the test of a line.
DEATH = re.compile(r"Kernel panic|Oops|\bBUG\b|general protection fault")

# The first line of a report.
START = re.compile(
    r"WARNING:|\bBUG[: ]|Oops|kernel BUG at|general protection fault|"
    r"soft lockup|rcu: INFO:|self-detected stall|detected stalls|"
    r"INFO: task \S+ blocked for more than|NMI backtrace for cpu|"
    r"UBSAN:|KASAN:|list_(add|del) corruption|refcount_t:|"
    r"possible (circular|recursive) locking|suspicious RCU usage|"
    r"unregister_netdevice: waiting for|Kernel panic|Uhhuh\. NMI|"
    r"sysrq: Show")
# "task:<comm> state:D ..." heads each task of a hung-task report or of
# sysrq-w; it starts a report of its own unless it is the first body line
# of one (the hung-task report's "INFO: task ... blocked" header).
TASK = re.compile(r"^task:\S+\s+state:")
# Report lines that continue the report before them when it has no stack
# yet: BUG then Oops, a stall then the stalled CPU's NMI backtrace, sysrq
# then its first CPU or task, a hung task then the task.
SEQUEL = re.compile(r"^(Oops|NMI backtrace for cpu \d+$|task:)")

TIMESTAMP = re.compile(r"^\s*(<\d+>)?\[\s*(\d+\.\d+)\]\s?")
FRAME = re.compile(r"^\s*(\? )?[\w.$]+\+0x[0-9a-f]+/0x[0-9a-f]+(\s+\[\w+\])?\s*$")
# Lines of a report's body. Kept: where it happened; dropped: registers,
# code bytes, module lists.
KEEP = re.compile(r"^(CPU: \d+ PID:|RIP: |Workqueue:|task:|</?(IRQ|NMI|SOFTIRQ)>|Sending NMI)")
BODY = re.compile(
    r"^(\s|CPU: |Hardware name:|RIP: |RSP: |R[A-Z0-9]{2}: |FS: |CS: |CR2: |DR[0-7]: |"
    r"Code: |Call Trace:|</?(IRQ|TASK|NMI|SOFTIRQ)>|Modules linked in:|irq event stamp:|"
    r"hardirqs |softirqs |Workqueue:|task:|PKRU: |Sending NMI|---\[ end trace|"
    r"\"echo 0 > |rcu: |Tainted: |\(|#PF: |PGD )")
# Frames of the reporting machinery itself (the NMI backtrace, SysRq from
# the keyboard, the WARN trap): they say nothing about the problem and
# would take the place of the frames that do.
NOISE = re.compile(
    r"^(dump_stack\w*|show_stack\w*|nmi_cpu_backtrace\w*|nmi_trigger_cpumask_backtrace|"
    r"__handle_sysrq\w*|sysrq_\w+|input_\w+|atkbd_interrupt|serio_interrupt|i8042_interrupt|"
    r"__handle_irq_event_percpu|handle_irq_event|handle_edge_irq|__common_interrupt|"
    r"__warn|report_bug|handle_bug|exc_invalid_op|asm_exc_invalid_op)[.+]")
OFFSET = re.compile(r"\+0x[0-9a-f]+/0x[0-9a-f]+")
NUMBER = re.compile(r"\d+")

PER_SPLAT = 25      # lines of one report (its first line included)
TOTAL = 150         # lines of all reports of one test


def strip_ts(line):
    """(seconds or None, the line without its printk timestamp)."""
    m = TIMESTAMP.match(line)
    if not m:
        return None, line.rstrip()
    return float(m.group(2)), line[m.end():].rstrip()


class Splat:
    def __init__(self, head, when, context=()):
        self.head = head
        self.when = when
        self.last = when
        self.body = list(context)
        self.frames = 0
        self.count = 1

    def add(self, text):
        text = text.strip()
        m = FRAME.match(text)
        if m and not m.group(1):
            self.frames += 1
            if not NOISE.match(text.strip()):
                self.body.append(text.strip())
        elif m:
            pass    # "? func": stale stack content, not a reliable frame
        elif KEEP.match(text):
            if text.startswith("RIP: "):
                # "RIP: 0010:func+0x1/0x2 [mod]"; a user-mode RIP (0033:)
                # says nothing, an Oops repeats the kernel one at its end.
                seg, _, where = text[5:].partition(":")
                text = "RIP: " + where.strip()
                if seg != "0010" or text in self.body:
                    return
            elif text.startswith("CPU: "):
                text = re.split(r" (Not )?[Tt]ainted", text)[0]
            self.body.append(text.strip())

    def key(self):
        frames = [OFFSET.sub("", b) for b in self.body if FRAME.match(b)]
        return (NUMBER.sub("N", self.head), tuple(frames[:12]))


class Splats:
    """Feed kernel-log lines; collects the bad lines and the reports."""

    def __init__(self):
        self.bad = []           # offending lines, timestamps stripped
        self.loose = []         # ... of them those that are in no report
        self.splats = []        # in order of first appearance
        self.cur = None
        self.recent = []        # last lines, for a trace with no known header

    def feed(self, line):
        """Returns True if the line is a bad one."""
        when, text = strip_ts(line)
        bad = bool(BAD.search(text))
        if bad:
            self.bad.append(text)
        if (START.search(text) or TASK.match(text)) and self.cur and \
                not self.cur.frames and SEQUEL.match(text):
            self.cur.body.append(text)
        elif START.search(text) or TASK.match(text):
            self._close()
            self.cur = Splat(text, when)
        elif self.cur and BODY.match(text):
            self.cur.add(text)
        elif text.startswith("Call Trace:"):
            # dump_stack() of some other message: head it by the line
            # before its CPU/Hardware lines.
            self._close()
            head = next((t for t in reversed(self.recent) if not BODY.match(t)),
                        "Call Trace:")
            self.cur = Splat(head, when)
        else:
            self._close()
            if bad:
                self.loose.append(text)
        self.recent = (self.recent + [text])[-8:]
        return bad

    def _close(self):
        if not self.cur:
            return
        new, self.cur = self.cur, None
        key = new.key()
        for old in self.splats:
            if old.key() == key:
                old.count += 1
                old.last = new.when
                return
        self.splats.append(new)

    def died(self):
        """The first line of a death report seen so far, if any."""
        return next((t for t in self.bad if DEATH.search(t)), None)

    def hang(self):
        """The first line of a hang report seen so far, if any."""
        return next((t for t in self.bad if HANG.search(t)), None)

    def report(self, per_splat=PER_SPLAT, total=TOTAL, where="the console log"):
        """The reports to print, bounded; [] if nothing bad was seen."""
        self._close()
        if not self.bad:
            return []
        out = []
        shown = 0
        # Bad lines in no report are listed too, once each.
        loose = list(dict.fromkeys(self.loose))
        items = [(s.when, [s.head] + ["  " + b for b in s.body][:per_splat - 1], s)
                 for s in self.splats]
        items += [(None, [t], None) for t in loose]
        for i, (when, lines, s) in enumerate(items):
            if shown + len(lines) > total:
                left = len(items) - i
                out.append(f"... {left} more report(s) not shown; all of them are in {where}")
                break
            if s is not None:
                stamp = f"[{s.when:.1f}s] " if s.when is not None else ""
                again = ""
                if s.count > 1:
                    last = f", last at {s.last:.1f}s" if s.last is not None else ""
                    again = f" (seen {s.count} times{last})"
                lines = [stamp + lines[0] + again] + lines[1:]
                if len(s.body) > per_splat - 1:
                    lines.append(f"  ... {len(s.body) - per_splat + 1} more line(s)")
            out += lines
            shown += len(lines)
        return out


def main():
    total = TOTAL
    if len(sys.argv) == 3 and sys.argv[1] == "--max-lines":
        total = int(sys.argv[2])
    sp = Splats()
    for line in sys.stdin:
        sp.feed(line)
    for ln in sp.report(total=total, where="dmesg"):
        print("kernel: " + ln)
    return 1 if sp.bad else 0


if __name__ == "__main__":
    sys.exit(main())
