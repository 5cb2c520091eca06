#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ib_write_lat's per-iteration latencies (-U): each sample's distribution,
and the A/B of two columns of rdma_bench (two module builds, or mroce and
rxe) round by round.

  lat_dist.py samples KEY=LOG...
      One line per perftest client log: "KEY p50 p90 p99 max mean gt2x
      gt500 n" (us; gt2x and gt500: percent of the iterations above twice
      the sample's p50 and above 500 us; n: iterations listed). A log
      without a usable -U list gives "KEY - - - - - - - 0".
  lat_dist.py ab [--slow-factor F] [--pair B:A]... ROUNDS_CSV
      The A/B summary from rdma_bench_rounds.csv: per round each column's
      typical latency and mode and the ratios B/A; the medians of the
      per-round ratios over all rounds, over the rounds where both samples
      ran in the same mode, over those where both ran fast; each column's
      medians over the rounds. Default pairs: mroceN against mroce, and
      each mroce column against rxe.
  lat_dist.py verdict [--slow-factor F] [--pair B:A]... ROUNDS_CSV
      One line per pair and row: the median of the paired per-round
      ratios B/A with a 95 % confidence interval from the sign test
      (distribution-free: the order statistics of the ratios), e.g.
      "verdict mroce2/mroce ib_write_lat 0% typ: 1.004 [0.981, 1.032]
      95 %, 9 pairs (same mode, no SUSPECT) -> no difference resolved".
      Latency pairs only rounds where both samples ran in the same mode;
      every row leaves out pairs with a SUSPECT sample. With a
      host_loop_us column (hostload_mark.py: how fast the host's own CPUs
      ran during the sample) an indented second line per row keeps only
      the pairs whose two samples both ran on a fast host (loop at most
      1.25x the run's 10th percentile). Each latency row also gets an
      indented line for the pairs whose two samples both ran in the fast
      mode and, with a lat_vcpu_wait column (rdma_bench: the vCPU threads'
      host run-queue wait over the ping-pong, from make bench's feed; a
      sample over its share was run again, at most twice), one for the
      pairs whose two kept samples both stayed at or under 0.2. The same
      lines end rdma_bench.txt and rdma_bench.md (make bench).
  lat_dist.py bands LOG...
      Where a column's average goes, pooled over its samples (e.g. every
      runs/mroce-lat-loss0-r*.client of a make bench): each sample's
      statistics, then per band of iterations (by their latency over the
      sample's p50, and in us) the share of the iterations and what they
      add to the mean over the p50 (mean over the samples).

perftest's -U list has one value per iteration but the first (iters - 1),
in us, half the round trip for a WRITE, in the order they ran. Its summary
row is computed from the same values minus the two largest (perftest
drops them, LAT_MEASURE_TAIL): its t_typical and t_avg are the median and
mean of the others, its 99 % percentile the value at index ceil(0.99 x
(n - 2)) of them sorted, counted from 0, and its t_max the second largest
of all. Here every listed iteration counts, the two longest
too (the tail is what this is for): p50, p90, p99 are nearest-rank
percentiles (the value at rank ceil(P/100 x n), ranks from 1), max the
largest, mean the mean of all n.

The guest's speed is bimodal (for minutes the whole guest runs about 1.4x
slower, rxe too: docs/testing.md). A sample's mode: slow when its typical
latency (perftest's t_typical) is more than F (--slow-factor, default
1.35) times the lowest typical of its own column in that row over the
rounds, else fast. Each column against its own lowest value, so a build
that is a few percent slower in both modes is not called slow; the two
samples of a round are classified apart (the mode can change between
them).
"""
import argparse
import csv
import math
import re
import os
import statistics
import sys

# hostload_mark's SUSPECT: the host load above which the bench marks a sample
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts'))
from hostload_mark import SUSPECT  # noqa: E402

ITER = re.compile(r'^\s*(\d+)\s*,\s*(\S+)\s*$')

SLOW_FACTOR = 1.35
# The per-round metrics of the A/B: (label, rounds CSV column); the ratio
# columns of its table, in this order.
METRICS = [('typ', 'lat_typical_us'), ('avg', 'lat_avg_us'),
           ('mean', 'lat_iter_mean_us'), ('p90', 'lat_iter_p90_us'),
           ('p99', 'lat_iter_p99_us'), ('max', 'lat_iter_max_us')]
SHARES = [('>2x%', 'lat_iter_gt2x_pct'), ('>500us%', 'lat_iter_gt500us_pct'),
          # the share of the sample the vCPU threads waited for a host CPU
          # (hostload_mark.py; ~0.5: both on one host CPU)
          ('vwait', 'vcpu_wait'),
          # the same over the ping-pong alone (rdma_bench, host feed)
          ('ppwait', 'lat_vcpu_wait')]


def parse(lines):
    """The -U list of a perftest latency log: the latencies in us, in
    iteration order; None if there is none or a value is not a finite
    number (perftest's clock calibration failed)."""
    vals = []
    listing = False
    for line in lines:
        if line.startswith('#, usec'):
            listing = True
            continue
        if not listing:
            continue
        m = ITER.match(line)
        if not m:
            if vals:
                break
            continue
        try:
            v = float(m.group(2))
        except ValueError:
            return None
        if not math.isfinite(v):
            return None
        vals.append(v)
    return vals or None


def percentile(s, p):
    """Nearest rank: the value at rank ceil(p/100 x n) of sorted s."""
    k = max(1, math.ceil(p / 100 * len(s) - 1e-9))
    return s[k - 1]


def stats(vals):
    """The distribution of one sample's latencies (us)."""
    s = sorted(vals)
    n = len(s)
    p50 = percentile(s, 50)
    return {'p50': p50, 'p90': percentile(s, 90), 'p99': percentile(s, 99),
            'max': s[-1], 'mean': sum(s) / n,
            'gt2x': 100 * sum(1 for x in s if x > 2 * p50) / n,
            'gt500': 100 * sum(1 for x in s if x > 500) / n, 'n': n}


def load(path):
    """The -U list of the log at `path`; None when it cannot be read."""
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return parse(f)
    except OSError:
        return None


FIELDS = ('p50', 'p90', 'p99', 'max', 'mean', 'gt2x', 'gt500')


def cmd_samples(args):
    for arg in args.logs:
        key, sep, path = arg.partition('=')
        if not sep:
            sys.exit(f'lat_dist: {arg}: KEY=LOG expected')
        vals = load(path)
        if not vals:
            print(key, *['-'] * len(FIELDS), 0)
            continue
        st = stats(vals)
        print(key, *[f'{st[k]:.2f}' for k in FIELDS], st['n'])
    return 0


# bands: latency over the sample's p50, and in us
REL_BANDS = [0, 1.25, 2, 3, 5, 10, math.inf]
ABS_BANDS = [0, 60, 100, 200, 500, 1000, math.inf]


def bands(samples, edges, relative):
    """Per band [lo, hi) of `edges` (x the sample's p50 when `relative`,
    else us): (percent of all iterations in it, us it adds to the mean
    over the p50, mean over the samples). The adds sum to mean - p50."""
    out = []
    total = sum(len(v) for v in samples)
    for lo, hi in zip(edges, edges[1:]):
        cnt = 0
        add = 0.0
        for v in samples:
            t = percentile(sorted(v), 50)
            a, b = (lo * t, hi * t) if relative else (lo, hi)
            inside = [x for x in v if a <= x < b]
            cnt += len(inside)
            add += sum(x - t for x in inside) / len(v)
        out.append((lo, hi, 100 * cnt / total, add / len(samples)))
    return out


def band_label(lo, hi, unit):
    return f'{lo:g}-{hi:g}{unit}' if hi != math.inf else f'>= {lo:g}{unit}'


def cmd_bands(args):
    samples = []
    for path in args.logs:
        vals = load(path)
        if not vals:
            print(f'{path}: no -U list')
            continue
        st = stats(vals)
        print(f'{path}: n {st["n"]} p50 {st["p50"]:.2f} p90 {st["p90"]:.2f} p99 {st["p99"]:.2f} '
              f'max {st["max"]:.2f} mean {st["mean"]:.2f} >2x {st["gt2x"]:.2f}% '
              f'>500us {st["gt500"]:.2f}%')
        samples.append(vals)
    if not samples:
        return 1
    excess = statistics.mean(stats(v)['mean'] - stats(v)['p50'] for v in samples)
    print(f'{len(samples)} samples, {sum(len(v) for v in samples)} iterations; mean - p50 '
          f'{excess:.2f} us (mean over the samples), by band: % of the iterations, us added')
    for edges, rel, unit in ((REL_BANDS, True, 'x p50'), (ABS_BANDS, False, ' us')):
        for lo, hi, share, add in bands(samples, edges, rel):
            print(f'  {band_label(lo, hi, unit):>14} {share:7.2f} % {add:+8.2f} us')
    return 0


def num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def load_rounds(path):
    """{(loss label, column): {round: row}} of the ib_write_lat samples
    that have a typical latency; the columns in the order they appear."""
    by = {}
    cols = []
    with open(path, newline='', encoding='utf-8') as f:
        for r in csv.DictReader(f):
            if r.get('test') != 'ib_write_lat' or num(r.get('lat_typical_us')) is None:
                continue
            loss = r['loss_pct'] + ('% netem' if r.get('netem') == '1' and
                                    r['loss_pct'] in ('0', '0.0') else '%')
            by.setdefault((loss, r['driver']), {})[int(r['round'])] = r
            if r['driver'] not in cols:
                cols.append(r['driver'])
    return by, cols


def default_pairs(cols):
    """mroceN against mroce, then each mroce column against rxe."""
    pairs = [(c, 'mroce') for c in cols if c.startswith('mroce') and c != 'mroce'
             and 'mroce' in cols]
    if 'rxe' in cols:
        pairs += [(c, 'rxe') for c in cols if c.startswith('mroce')]
    return pairs


def modes(rounds, factor):
    """The fast level (lowest typical) and {round: 'fast' | 'slow'}."""
    typ = {k: num(r['lat_typical_us']) for k, r in rounds.items()}
    low = min(typ.values())
    return low, {k: 'slow' if t > factor * low else 'fast' for k, t in typ.items()}


def suspect(row):
    x = num(row.get('host_others_cpus'))
    return x is not None and x > SUSPECT


def fmt(x, w=6, d=2):
    return f'{x:{w}.{d}f}' if x is not None else f'{"-":>{w}}'


def median_ratios(ratios, rounds):
    """{metric: (median of the per-round ratios over `rounds`, rounds with
    a ratio below 1, rounds with a ratio)} for the metrics that have any."""
    med = {}
    for m, _ in METRICS:
        rs = [ratios[k][m] for k in rounds if ratios[k][m] is not None]
        if rs:
            med[m] = (statistics.median(rs), sum(r < 1 for r in rs), len(rs))
    return med


def ratio_summary(label, ratios, rounds):
    """One line: per metric the median of the per-round ratios over
    `rounds`, and in how many of them B was lower."""
    med = median_ratios(ratios, rounds)
    cells = [f'{m} {x:.3f} ({lo}/{n})' for m, (x, lo, n) in med.items()]
    return f'  {label}: ' + ('; '.join(cells) if cells else 'no rounds')


def pair_rounds(ra, rb, factor):
    """B against A ({round: row} each): the rounds both have, each
    column's fast level and modes, the per-round ratios B/A per metric,
    the same-mode rounds and, of those, the fast ones."""
    both = sorted(set(ra) & set(rb))
    la, ma = modes(ra, factor)
    lb, mb = modes(rb, factor)
    ratios = {}
    for k in both:
        ratios[k] = {}
        for m, col in METRICS:
            va, vb = num(ra[k].get(col)), num(rb[k].get(col))
            ratios[k][m] = vb / va if va and vb is not None else None
    same = [k for k in both if ma[k] == mb[k]]
    fast = [k for k in same if ma[k] == 'fast']
    return {'both': both, 'levels': (la, lb), 'modes': (ma, mb), 'ratios': ratios,
            'same': same, 'fast': fast}


def ab_pair(out, loss, a, b, ra, rb, factor):
    pr = pair_rounds(ra, rb, factor)
    both, ratios, same, fast = pr['both'], pr['ratios'], pr['same'], pr['fast']
    if not both:
        return
    la, lb = pr['levels']
    ma, mb = pr['modes']
    out.append(f'ib_write_lat 64 B, loss {loss}: {b} / {a}, {len(both)} rounds with both')
    out.append(f'  mode: slow when a sample\'s typical > {factor:g} x its column\'s lowest of the '
               f'row (fast level {a} {la:.2f} us, {b} {lb:.2f} us)')
    if max(la, lb) > factor * min(la, lb):
        out.append('  NOTE: the fast levels differ by more than the factor: one column may never '
                   'have run in the fast mode; read its modes with care')
    head = f'  {"round":>5} {a + " typ":>12} {"mode":>4} {b + " typ":>12} {"mode":>4} |'
    head += ''.join(f' {m:>6}' for m, _ in METRICS) + ' |'
    head += ''.join(f' {s + " " + c:>14}' for s, _ in SHARES for c in (a, b))
    out.append(head)
    sus = set()
    for k in both:
        x, y = ra[k], rb[k]
        flag = ''
        if suspect(x) or suspect(y):
            sus.add(k)
            flag = ' SUSPECT'
        line = (f'  {k:>5} {fmt(num(x["lat_typical_us"]), 12)} {ma[k]:>4} '
                f'{fmt(num(y["lat_typical_us"]), 12)} {mb[k]:>4} |')
        line += ''.join(f' {fmt(ratios[k][m], 6)}' for m, _ in METRICS) + ' |'
        line += ''.join(f' {fmt(num(r.get(col)), 14)}' for _, col in SHARES for r in (x, y))
        out.append(line + flag)
    out.append(f'  medians of the per-round ratios {b}/{a} (in how many rounds {b} was lower):')
    out.append(ratio_summary(f'all {len(both)} rounds', ratios, both))
    out.append(ratio_summary(f'same mode, {len(same)} rounds ({len(fast)} fast, '
                             f'{len(same) - len(fast)} slow)', ratios, same))
    out.append(ratio_summary(f'both fast, {len(fast)} rounds', ratios, fast))
    if sus:
        clean = [k for k in same if k not in sus]
        out.append(ratio_summary(f'same mode without SUSPECT samples, {len(clean)} rounds',
                                 ratios, clean))
    out.append('  medians over the rounds (all / fast-mode samples):')
    for c, rr, mm in ((a, ra, ma), (b, rb, mb)):
        cells = []
        for m, col in METRICS + SHARES:
            allv = [num(r.get(col)) for r in rr.values()]
            allv = [v for v in allv if v is not None]
            fv = [num(rr[k].get(col)) for k in rr if mm[k] == 'fast']
            fv = [v for v in fv if v is not None]
            if allv:
                f = f'{statistics.median(fv):.2f}' if fv else '-'
                cells.append(f'{m} {statistics.median(allv):.2f}/{f}')
        out.append(f'    {c}: ' + '; '.join(cells))
    out.append('')


# The bulk rows of the verdict: (test, label) of rdma_bench_rounds.csv
BULK = [('ib_write_bw', 'write'), ('ib_send_bw', 'send'), ('ib_read_bw', 'read')]
CONF = 0.95
# A sample ran on a fast host when its host_loop_us (the slowest host CPU's
# median loop time over the sample) is at most this times the run's fast
# level: the loop takes 1.9x in the host's slow stretches (session 28)
HOST_SLOW = 1.25


def sign_ci(vals, conf=CONF):
    """(median, lo, hi, coverage) of VALS: lo, hi the k-th smallest and
    k-th largest value for the largest k whose interval covers the median
    with probability >= CONF whatever the distribution (sign test: the
    coverage of [x_(k), x_(n+1-k)] is 1 - 2 P(Bin(n, 1/2) < k)); lo, hi
    None when no k does (fewer than 6 values at 95 %)."""
    s = sorted(vals)
    n = len(s)
    if not n:
        return None, None, None, None
    med = statistics.median(s)
    best = None
    tail = 0
    for k in range(1, n // 2 + 1):
        tail += math.comb(n, k - 1)
        cov = 1 - 2 * tail / 2 ** n
        if cov < conf:
            break
        best = (k, cov)
    if best is None:
        return med, None, None, None
    k, cov = best
    return med, s[k - 1], s[n - k], cov


def verdict_line(label, ratios, what, higher_better=False):
    """One verdict line for the paired ratios B/A of one row."""
    med, lo, hi, cov = sign_ci(ratios)
    n = len(ratios)
    pairs = f'{n} pair' + ('' if n == 1 else 's')
    if med is None:
        return f'verdict {label}: no pairs ({what})'
    if lo is None:
        return (f'verdict {label}: {med:.3f} [no 95 % interval from {pairs}: 6 or more '
                f'needed] ({what})')
    if hi < 1:
        word = 'B better' if not higher_better else 'B worse'
        res = f'B/A below 1 ({word})'
    elif lo > 1:
        word = 'B worse' if not higher_better else 'B better'
        res = f'B/A above 1 ({word})'
    else:
        res = 'no difference resolved (the interval holds 1)'
    return (f'verdict {label}: {med:.3f} [{lo:.3f}, {hi:.3f}] {cov * 100:.0f} %, '
            f'{pairs} ({what}), +-{(hi - lo) / 2 * 100:.1f} % -> {res}')


def load_bulk(path):
    """{(test, loss label, column): {round: row}} of the goodput samples."""
    by = {}
    tests = {t for t, _ in BULK}
    with open(path, newline='', encoding='utf-8') as f:
        for r in csv.DictReader(f):
            if r.get('test') not in tests or num(r.get('goodput_mbps')) is None:
                continue
            loss = r['loss_pct'] + ('% netem' if r.get('netem') == '1' and
                                    r['loss_pct'] in ('0', '0.0') else '%')
            by.setdefault((r['test'], loss, r['driver']), {})[int(r['round'])] = r
    return by


def host_fast_level(path):
    """The host's fast loop time: the 10th percentile of host_loop_us over
    every sample of the run (hostload_mark.py), None without that column."""
    v = []
    with open(path, newline='', encoding='utf-8') as f:
        for r in csv.DictReader(f):
            x = num(r.get('host_loop_us'))
            if x is not None:
                v.append(x)
    if not v:
        return None
    v.sort()
    return v[(len(v) - 1) // 10]


def host_fast(row, level):
    x = num(row.get('host_loop_us'))
    return x is not None and x <= HOST_SLOW * level


def pp_wait(row):
    """The sample's vCPU wait over its ping-pong (rdma_bench's
    lat_vcpu_wait, from make bench's host feed), None if not measured."""
    return num(row.get('lat_vcpu_wait'))


def verdicts(path, pairs, factor):
    """The verdict lines of every pair: the 64 B latency's typical (pairs
    of the same mode), then each bulk row's goodput; pairs with a SUSPECT
    sample left out."""
    by, cols = load_rounds(path)
    bulk = load_bulk(path)
    hl = host_fast_level(path)
    if not pairs:
        cols = cols or []
        for t, loss, c in bulk:
            if c not in cols:
                cols.append(c)
        pairs = default_pairs(cols)
    out = []
    for b, a in pairs:
        for (loss, col), ra in by.items():
            if col != a or (loss, b) not in by:
                continue
            pr = pair_rounds(ra, by[(loss, b)], factor)
            rb = by[(loss, b)]
            keep = [k for k in pr['same'] if not suspect(ra[k]) and not suspect(rb[k])]
            rs = [pr['ratios'][k]['typ'] for k in keep if pr['ratios'][k]['typ'] is not None]
            out.append(verdict_line(f'{b}/{a} ib_write_lat {loss} typ', rs,
                                    f'same mode, no SUSPECT; {len(pr["both"])} rounds'))
            # the guest's slow mode is mostly the host's scheduler (session
            # 48): the pairs that both ran fast are the driver's own
            ma, mb = pr['modes']
            fk = [k for k in keep if ma[k] == 'fast' and mb[k] == 'fast']
            rs = [pr['ratios'][k]['typ'] for k in fk if pr['ratios'][k]['typ'] is not None]
            out.append('  ' + verdict_line(f'{b}/{a} ib_write_lat {loss} typ', rs,
                                           'of those, both in the fast mode'))
            # rdma_bench re-ran a sample whose vCPUs waited for the host
            # (lat_vcpu_wait, at most twice): the kept pairs whose both
            # samples stayed under the rule's share
            if any(pp_wait(r) is not None for r in list(ra.values()) + list(rb.values())):
                wk = [k for k in keep if (pp_wait(ra[k]) or 0) <= VWAIT_SHARED
                      and (pp_wait(rb[k]) or 0) <= VWAIT_SHARED]
                rs = [pr['ratios'][k]['typ'] for k in wk if pr['ratios'][k]['typ'] is not None]
                tries = sum(max(0, int(num(r.get('lat_tries')) or 1) - 1)
                            for rr in (ra, rb) for r in rr.values())
                out.append('  ' + verdict_line(
                    f'{b}/{a} ib_write_lat {loss} typ', rs,
                    f'of those, both with ping-pong vCPU wait <= {VWAIT_SHARED:g}; '
                    f'{tries} tries re-run'))
            if hl:
                hk = [k for k in keep if host_fast(ra[k], hl) and host_fast(rb[k], hl)]
                rs = [pr['ratios'][k]['typ'] for k in hk if pr['ratios'][k]['typ'] is not None]
                out.append('  ' + verdict_line(f'{b}/{a} ib_write_lat {loss} typ', rs,
                                               'of those, both on a fast host'))
        for test, lab in BULK:
            for (t, loss, col), ra in bulk.items():
                if t != test or col != a or (t, loss, b) not in bulk:
                    continue
                rb = bulk[(t, loss, b)]
                keep = [k for k in sorted(set(ra) & set(rb))
                        if not suspect(ra[k]) and not suspect(rb[k])]
                rs = [num(rb[k]['goodput_mbps']) / num(ra[k]['goodput_mbps'])
                      for k in keep if num(ra[k]['goodput_mbps'])]
                n = len(set(ra) & set(rb))
                out.append(verdict_line(f'{b}/{a} {test} {loss} goodput', rs,
                                        f'no SUSPECT; {n} rounds', higher_better=True))
                if hl:
                    rs = [num(rb[k]['goodput_mbps']) / num(ra[k]['goodput_mbps'])
                          for k in keep if num(ra[k]['goodput_mbps'])
                          and host_fast(ra[k], hl) and host_fast(rb[k], hl)]
                    out.append('  ' + verdict_line(f'{b}/{a} {test} {loss} goodput', rs,
                                                   'of those, both on a fast host',
                                                   higher_better=True))
    return out


def parse_pairs(specs):
    """--pair B:A options as (B, A) tuples, in the order given."""
    pairs = []
    for p in specs or []:
        b, sep, a = p.partition(':')
        if not sep:
            sys.exit(f'lat_dist: --pair {p}: B:A expected')
        pairs.append((b, a))
    return pairs


def cmd_verdict(args):
    pairs = parse_pairs(args.pair)
    out = verdicts(args.csv, pairs, args.slow_factor)
    if not out:
        print(f'lat_dist: no two columns to compare in {args.csv}')
        return 0
    print('A/B verdicts: median of the paired per-round ratios B/A [95 % sign-test interval]; '
          'latency lower = better, goodput higher = better')
    print('\n'.join(out))
    return 0


# A sample's vCPU threads shared a host CPU when they waited for one over
# this share of its window (vcpu_wait, hostload_mark.py): ~0.5 with both on
# one CPU the whole sample, ~0.04 when each has its own.
VWAIT_SHARED = 0.2


def mode_causes(by, factor, level):
    """Per column and row: how many samples ran slow and what the host did
    meanwhile (host_loop_us: the host's CPUs slow; vcpu_wait: the vCPU
    threads queued for a host CPU), the lines of cmd_ab's summary."""
    out = []
    for (loss, col), rr in by.items():
        _, md = modes(rr, factor)
        cells = []
        for m in ('slow', 'fast'):
            ks = [k for k in rr if md[k] == m]
            hs = sum(1 for k in ks if level and not host_fast(rr[k], level))
            vw = sum(1 for k in ks if (num(rr[k].get('vcpu_wait')) or 0) > VWAIT_SHARED)
            nn = sum(1 for k in ks if not (level and not host_fast(rr[k], level))
                     and not (num(rr[k].get('vcpu_wait')) or 0) > VWAIT_SHARED)
            cells.append(f'{len(ks)} {m} ({hs} host slow, {vw} vCPUs waiting, {nn} neither)')
        out.append(f'  {col} {loss}: {len(rr)} samples, ' + '; '.join(cells))
    if not out:
        return []
    return ([f'guest mode per column (slow: typical > {factor:g} x the column\'s lowest; host '
             f'slow: host_loop_us > {HOST_SLOW:g} x the run\'s fast level'
             + (f' {level:.0f} us' if level else ', not measured')
             + f'; vCPUs waiting: vcpu_wait > {VWAIT_SHARED:g}, a vCPU thread queued for a '
             'host CPU; docs/testing.md):'] + out)


def cmd_ab(args):
    by, cols = load_rounds(args.csv)
    pairs = parse_pairs(args.pair)
    pairs = pairs or default_pairs(cols)
    losses = []
    for loss, _ in by:
        if loss not in losses:
            losses.append(loss)
    out = []
    for loss in losses:
        for b, a in pairs:
            if (loss, a) in by and (loss, b) in by:
                ab_pair(out, loss, a, b, by[(loss, a)], by[(loss, b)], args.slow_factor)
    if not out:
        print(f'lat_dist: no ib_write_lat rounds of two columns in {args.csv}')
        return 0
    out += mode_causes(by, args.slow_factor, host_fast_level(args.csv))
    print('\n'.join(out).rstrip())
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('samples', help='per-iteration statistics of perftest client logs')
    s.add_argument('logs', nargs='+', metavar='KEY=LOG')
    s.set_defaults(fn=cmd_samples)
    s = sub.add_parser('ab', help='A/B summary of rdma_bench_rounds.csv')
    s.add_argument('csv')
    s.add_argument('--slow-factor', type=float, default=SLOW_FACTOR)
    s.add_argument('--pair', action='append', metavar='B:A')
    s.set_defaults(fn=cmd_ab)
    s = sub.add_parser('verdict', help='A/B verdicts with confidence intervals')
    s.add_argument('csv')
    s.add_argument('--slow-factor', type=float, default=SLOW_FACTOR)
    s.add_argument('--pair', action='append', metavar='B:A')
    s.set_defaults(fn=cmd_verdict)
    s = sub.add_parser('bands', help='where the average goes, pooled over samples')
    s.add_argument('logs', nargs='+', metavar='LOG')
    s.set_defaults(fn=cmd_bands)
    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == '__main__':
    sys.exit(main())
