#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""lat_trace's report: where the wall-clock time of a ping-pong goes.

With --graph: function_graph output instead (the callees of the traced
functions, a few levels deep): per call of each traced function, the time
each callee took, inclusive, and how often it ran.

Input: ftrace function-tracer output (one file per driver, named
<driver>.trace) of ib_write_lat traffic, trace clock mono. Both CPUs'
events are merged into one timeline; each gap between consecutive events
is charged to the pair (previous function -> next function, same CPU or
across CPUs), so the pairs' times add up to the traced time. A round trip
is two posts (one per side). Also: the half round trip split at the
placement (post -> the destination memory is written -> the other side's
post) and a few typical round trips event by event.
"""
import argparse
import collections
import os
import re
import statistics
import sys

LINE = re.compile(r'^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+'
                  r'(?P<ts>\d+\.\d+):\s+(?P<fn>[\w.]+)\s+<-(?P<parent>\S+)')

POST = {'mroce': 'mroce_post_send', 'rxe': 'rxe_post_send'}
# The responder's copy into the destination MR: (function, its caller or
# None for any); rxe_mr_copy also copies the requester's payload.
PLACE = {'mroce': ('mroce_chunk_skb_to_mr', None), 'rxe': ('rxe_mr_copy', 'rxe_responder')}


def parse(lines):
    """Events (ts us, cpu, pid, comm, function, parent), in time order."""
    ev = []
    for line in lines:
        if line.startswith('#'):
            continue
        m = LINE.match(line)
        if not m:
            continue
        ts = float(m['ts']) * 1e6
        ev.append((ts, int(m['cpu']), int(m['pid']), m['comm'].strip(),
                   m['fn'], m['parent']))
    ev.sort(key=lambda e: e[0])
    return ev


def post_times(ev, post):
    """(ts, pid) of every post (process context: pid is the poster)."""
    return [(e[0], e[2]) for e in ev if e[4] == post]


def halves(ev, post, place):
    """Per half round trip, by the side that posted: post -> first
    placement after it -> the other side's next post. Returns
    {pid: ([post -> placement us], [placement -> next post us])}."""
    out = collections.defaultdict(lambda: ([], []))
    t_post = pid = t_place = None
    for e in ev:
        if e[4] == post:
            if t_post is not None and e[2] != pid and t_place is not None:
                out[pid][0].append(t_place - t_post)
                out[pid][1].append(e[0] - t_place)
            t_post, pid, t_place = e[0], e[2], None
        elif (e[4] == place[0] and place[1] in (None, e[5]) and
              t_post is not None and t_place is None):
            t_place = e[0]
    return out


def med(v):
    return statistics.median(v) if v else float('nan')


def report(name, ev, out, top):
    drv = 'mroce' if 'mroce' in name else 'rxe'
    post, place = POST[drv], PLACE[drv]
    posts = post_times(ev, post)
    if len(posts) < 4:
        out.write(f'## {name}\n\ntoo few posts ({len(posts)}) in the trace\n\n')
        return
    # Only the span from the first to the last post counts.
    t0, t1 = posts[0][0], posts[-1][0]
    ev = [e for e in ev if t0 <= e[0] <= t1]
    rts = (len(posts) - 1) / 2.0
    span = t1 - t0
    rt_by_pid = collections.defaultdict(list)
    last = {}
    for ts, pid in posts:
        if pid in last:
            rt_by_pid[pid].append(ts - last[pid])
        last[pid] = ts
    rtl = [x for v in rt_by_pid.values() for x in v]
    hv = halves(ev, post, place)
    out.write(f'## {name}\n\n')
    out.write(f'{len(ev)} events, {rts:.0f} round trips in {span / 1e3:.1f} ms: '
              f'{span / rts:.1f} us per round trip on average (traced), median {med(rtl):.1f} us '
              f'(post to the same side\'s next post).\n\n')
    out.write(f'Half round trips by the side that posted, medians: post -> placement at '
              f'the other side ({place[0]}) -> the other side\'s next post:\n\n')
    for p, (a, b) in sorted(hv.items()):
        out.write(f'- pid {p}: {med(a):.1f} us + {med(b):.1f} us ({len(a)} halves)\n')
    out.write('\n')
    cnt = collections.Counter(e[4] for e in ev)
    out.write('Events per round trip: ' + ', '.join(
        f'{fn} {n / rts:.2f}' for fn, n in cnt.most_common()) + '\n\n')
    pairs = collections.defaultdict(lambda: [0.0, 0])
    for p, n in zip(ev, ev[1:]):
        k = (p[4], n[4], 'same' if p[1] == n[1] else 'other')
        pairs[k][0] += n[0] - p[0]
        pairs[k][1] += 1
    out.write(f'Top {top} gaps between consecutive events (all CPUs merged), '
              'us per round trip (they add up to the round trip):\n\n')
    out.write('| from | to | CPU | us/RT | % | times/RT | mean us |\n|---|---|---|---|---|---|---|\n')
    for k, (t, n) in sorted(pairs.items(), key=lambda kv: -kv[1][0])[:top]:
        out.write(f'| {k[0]} | {k[1]} | {k[2]} | {t / rts:.1f} | {100 * t / span:.1f} | '
                  f'{n / rts:.2f} | {t / n:.1f} |\n')
    out.write('\n')
    # A typical round trip: the one of the median length, event by event.
    pid = max(rt_by_pid, key=lambda p: len(rt_by_pid[p]))
    mine = [ts for ts, p in posts if p == pid]
    lens = sorted((mine[i + 1] - mine[i], i) for i in range(len(mine) - 1))
    for _, i in lens[len(lens) // 2:len(lens) // 2 + 2]:
        s, e = mine[i], mine[i + 1]
        out.write(f'A median round trip ({e - s:.1f} us), from post (pid {pid}):\n\n```\n')
        prev = s
        for x in ev:
            if s <= x[0] <= e:
                out.write(f'{x[0] - s:8.1f} {x[0] - prev:+7.1f}  cpu{x[1]} {x[3]}-{x[2]:<6} '
                          f'{x[4]} <- {x[5]}\n')
                prev = x[0]
        out.write('```\n\n')


GRAPH = re.compile(r'^\s*\d+\)\s+[+!#*@$]?\s*(?P<us>\d+\.\d+) us\s+\|(?P<sp> *)(?P<what>.*)$')
GRAPH_OPEN = re.compile(r'^\s*\d+\)\s+\|(?P<sp> *)(?P<fn>[\w.]+)(?: \[\w+\])?\(\) \{')


def graph_calls(lines):
    """(depth, function, us, root, caller) for every call that has a
    duration: leaves ("fn();") and the closing braces of calls ("}", named
    from a per-CPU stack of the open calls); root = the depth-0 call it ran
    under, caller = the call it ran in ('' for a root). Lines of calls
    that opened before the trace did are skipped."""
    calls = []
    stacks = collections.defaultdict(list)
    for line in lines:
        if line.startswith('#'):
            continue
        cpu = line.split(')')[0].strip()
        m = GRAPH_OPEN.match(line)
        if m:
            depth = (len(m['sp']) - 2) // 2
            st = stacks[cpu]
            del st[depth:]
            if len(st) == depth:
                st.append(m['fn'])
            continue
        m = GRAPH.match(line)
        if not m:
            continue
        depth = (len(m['sp']) - 2) // 2
        what = m['what'].strip()
        st = stacks[cpu]
        if what.startswith('}'):
            if len(st) != depth + 1:
                st.clear()
                continue
            fn = st.pop()
        else:
            f = re.match(r'([\w.]+)(?: \[\w+\])?\(\);', what)
            if not f or len(st) != depth:
                continue
            fn = f[1]
        root = st[0] if st else fn
        calls.append((depth, fn, float(m['us']), root, st[-1] if st else ''))
    return calls


def graph_report(name, lines, out, top):
    calls = graph_calls(lines)
    roots = collections.Counter(c[1] for c in calls if c[0] == 0)
    out.write(f'## {name} (function_graph)\n\n')
    if not roots:
        out.write('no complete call of a traced function\n\n')
        return
    for root, n in roots.most_common():
        tot = sum(c[2] for c in calls if c[0] == 0 and c[1] == root)
        out.write(f'### {root}: {n} calls, {tot / n:.1f} us per call (traced)\n\n')
        agg = collections.defaultdict(lambda: [0.0, 0])
        for d, fn, us, r, caller in calls:
            if r == root and d > 0:
                agg[(d, caller, fn)][0] += us
                agg[(d, caller, fn)][1] += 1
        out.write('| depth | caller | callee | us per call of the root | calls per call | us each |\n'
                  '|---|---|---|---|---|---|\n')
        for (d, caller, fn), (us, k) in sorted(agg.items(), key=lambda kv: -kv[1][0])[:top]:
            out.write(f'| {d} | {caller} | {fn} | {us / n:.2f} | {k / n:.2f} | {us / k:.2f} |\n')
        out.write('\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('traces', nargs='+')
    ap.add_argument('--top', type=int, default=30)
    ap.add_argument('--graph', action='store_true',
                    help='the traces are function_graph output')
    args = ap.parse_args()
    out = sys.stdout
    if args.graph:
        out.write('# 64 B ib_write_lat: what the traced functions spend in their callees (lat_trace)\n\n')
        out.write('ftrace function_graph over steady traffic; durations include the tracing '
                  'of the callees below them.\n\n')
        for t in args.traces:
            with open(t, encoding='utf-8', errors='replace') as f:
                graph_report(os.path.basename(t), list(f), out, args.top)
        return 0
    out.write('# 64 B ib_write_lat: the wall clock of a round trip, event by event (lat_trace)\n\n')
    out.write('ftrace function tracer (entries only) over steady traffic; tracing adds its '
              'own cost per event, so compare the shape between drivers, not the totals.\n\n')
    for t in args.traces:
        with open(t, encoding='utf-8', errors='replace') as f:
            report(os.path.basename(t), parse(f), out, args.top)
    return 0


if __name__ == '__main__':
    sys.exit(main())
