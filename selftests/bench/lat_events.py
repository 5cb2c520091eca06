#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""lat_events.sh's report: bpftrace JSON dumps (one per driver and round,
named DRIVER-rN.json) -> a markdown table of events per 64 B ib_write_lat
round trip, rxe against mroce, and the stacks behind mroce's clock event
programs, IPIs and remote wakeups.

A round trip is two posts (the driver's post_send, one per side)."""

import collections
import json
import re
import sys

SOFTIRQ = ['HI', 'TIMER', 'NET_TX', 'NET_RX', 'BLOCK', 'IRQ_POLL', 'TASKLET',
           'SCHED', 'HRTIMER', 'RCU']
# maps whose keys are stacks: reported apart
STACKS = {'@cep_stack': 'clock event programs', '@ipi_stack': 'IPIs sent',
          '@rwake_stack': 'remote wakeups', '@spin_stack': 'spinlock slow paths'}
LABEL = {
    '@c': '', '@hstart': 'hrtimer_start', '@hcancel': 'hrtimer_cancel',
    '@hexpire': 'hrtimer expiry', '@tstart': 'timer_start (timer wheel)',
    '@texpire': 'timer expiry (timer wheel)', '@hardirq': 'hard irq',
    '@sraise': 'softirq raise', '@sentry': 'softirq run', '@tsched': 'tasklet schedule',
    '@trun': 'tasklet run', '@wqueue': 'work queued', '@wexec': 'work run',
    '@switch_to': 'sched_switch to', '@wakeup_local': 'wakeup (same CPU)',
    '@wakeup_remote': 'wakeup (other CPU)', '@sys': 'ib_write_lat syscall',
    '@tlb': 'TLB flush',
}
# x86-64 system call numbers of interest; others by number
SYSCALL = {0: 'read', 1: 'write', 7: 'poll', 16: 'ioctl', 24: 'sched_yield',
           202: 'futex', 228: 'clock_gettime', 232: 'epoll_wait', 281: 'epoll_pwait'}
TLB = ['task switch', 'remote shootdown', 'local shootdown', 'local mm shootdown',
       'remote send IPI']


def comm_class(c):
    """ksoftirqd/1 -> ksoftirqd/N, kworker/1:1H-mroce -> kworker/N:NH-mroce."""
    return re.sub(r'\d+', 'N', c)


def parse(path):
    """-> (counts {event: n}, stacks {kind: {stack: n}}, ns, veth packets)."""
    counts = collections.Counter()
    stacks = collections.defaultdict(collections.Counter)
    ns = 0
    pkts = None
    where = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith('{'):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get('type') == 'hwc':
                for k, n in rec['data'].items():
                    counts[f'hw counter {k} (both devices)'] += n
                continue
            if rec.get('type') == 'veth':
                pkts = rec['data']['packets']
                continue
            if rec.get('type') != 'map':
                continue
            for name, val in rec['data'].items():
                if name == '@ns':
                    ns = val
                    continue
                if not isinstance(val, dict):
                    continue
                if name == '@post_cpu':
                    where = dict(val)
                    continue
                if name in STACKS:
                    for k, n in val.items():
                        stacks[name][k.strip()] += n
                    continue
                label = LABEL.get(name)
                if label is None:
                    continue
                for k, n in val.items():
                    if name in ('@sraise', '@sentry') and k.isdigit() and int(k) < len(SOFTIRQ):
                        k = SOFTIRQ[int(k)]
                    if name == '@sys' and k.isdigit():
                        k = SYSCALL.get(int(k), k)
                    if name == '@tlb' and k.isdigit() and int(k) < len(TLB):
                        k = TLB[int(k)]
                    if name.startswith(('@switch_to', '@wakeup')):
                        k = comm_class(k)
                    counts[f'{label} {k}'.strip()] += n
    counts['@where'] = where
    return counts, stacks, ns, pkts


def where_str(where):
    """{"pid,cpu": posts} -> 'pid 123: CPU0 99 %, ...'."""
    by = collections.defaultdict(dict)
    for k, n in where.items():
        pid, _, cpu = str(k).replace(' ', '').partition(',')
        by[pid][cpu] = n
    parts = []
    for pid, cpus in sorted(by.items()):
        tot = sum(cpus.values()) or 1
        parts.append(f'pid {pid} posted on ' + ', '.join(
            f'CPU{c} {100 * n / tot:.0f} %' for c, n in sorted(cpus.items())))
    return '; '.join(parts)


def rts(counts):
    return counts.get('posts', 0) / 2.0


def fmt(v):
    return '-' if v is None else f'{v:.2f}'


def report(files, out):
    runs = collections.defaultdict(list)  # driver -> [(counts, stacks, ns, pkts)]
    for p in files:
        m = re.search(r'([a-z0-9_.]+)-r\d+\.json$', p)
        drv = m.group(1) if m else p
        runs[drv].append(parse(p))
    drivers = sorted(runs, key=lambda d: (d != 'rxe', d))
    out.write('# 64 B ib_write_lat: events per round trip (lat_events)\n\n')
    for d in drivers:
        parts = []
        for c, _, ns, pkts in runs[d]:
            n = rts(c)
            if n:
                parts.append(f'{n:.0f} RTs, {ns / 1e3 / n:.1f} us/RT traced'
                             + (f', {pkts / n:.2f} veth packets/RT' if pkts is not None else '')
                             + (f' ({where_str(c["@where"])})' if c.get('@where') else ''))
        out.write(f'- {d}: {len(runs[d])} runs: ' + '; '.join(parts) + '\n')
    out.write('\nPer round trip: the mean over the runs (min-max of the runs); '
              'diff = last driver - first.\n\n')
    keys = set()
    for d in drivers:
        for c, _, _, _ in runs[d]:
            keys.update(c)
    keys.discard('posts')
    keys.discard('@where')

    def vals(d, k):
        return [c.get(k, 0) / rts(c) for c, _, _, _ in runs[d] if rts(c)]

    def mean(v):
        return sum(v) / len(v) if v else None

    rows = []
    for k in keys:
        ms = [mean(vals(d, k)) for d in drivers]
        if max((m or 0) for m in ms) < 0.005:
            continue
        rows.append((k, ms))
    rows.sort(key=lambda r: r[0])
    out.write('| event | ' + ' | '.join(drivers) + (' | diff |' if len(drivers) == 2 else '|') + '\n')
    out.write('|---' * (len(drivers) + 1 + (len(drivers) == 2)) + '|\n')
    for k, ms in rows:
        cells = []
        for d, m in zip(drivers, ms):
            v = vals(d, k)
            cells.append(f'{fmt(m)} ({min(v):.2f}-{max(v):.2f})' if len(v) > 1 else fmt(m))
        diff = f' | {ms[-1] - ms[0]:+.2f}' if len(drivers) == 2 else ''
        out.write(f'| {k} | ' + ' | '.join(cells) + diff + ' |\n')
    for d in drivers:
        n = sum(rts(c) for c, _, _, _ in runs[d])
        if not n:
            continue
        for name, what in STACKS.items():
            tot = collections.Counter()
            for _, s, _, _ in runs[d]:
                tot.update(s.get(name, {}))
            if not tot:
                continue
            out.write(f'\n## {d}: {what}, by stack (per round trip, top 8)\n\n')
            for st, c in tot.most_common(8):
                frames = ' <- '.join(x.strip().split('+')[0] for x in st.splitlines() if x.strip())
                out.write(f'- {c / n:.2f}: {frames}\n')
    out.write('\n')


def main():
    report(sys.argv[1:], sys.stdout)


if __name__ == '__main__':
    main()
