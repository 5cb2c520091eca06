#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of lat_dist.py (ib_write_lat's per-iteration latencies) and
of rdma_bench's use of it (make check runs them: a parser that lost or
misread iterations, or a percentile off by a rank, would move every
distribution and A/B make bench reports).

testdata/ib_write_lat_U.client is a real client log of `ib_write_lat -s 64
-n 1000 -U` (rdma_rxe, session 20): 999 iterations listed, then perftest's
own summary of them. The expected values were read off `sort -g` of the
listed values by hand (rank 500, 900, 990, 999)."""

import contextlib
import csv
import io
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lat_dist as ld  # noqa: E402

SAMPLE = os.path.join(HERE, 'testdata', 'ib_write_lat_U.client')
LIB = os.path.join(HERE, '..', 'lib.sh')
RDMA_BENCH = os.path.join(HERE, 'rdma_bench.sh')


def sample():
    with open(SAMPLE, encoding='utf-8') as f:
        return ld.parse(f)


class Parse(unittest.TestCase):
    def test_canned_sample_every_iteration_in_order(self):
        v = sample()
        self.assertEqual(len(v), 999)
        self.assertEqual(v[:3], [335.615, 43.2319, 24.7218])
        self.assertEqual(v[-1], 21.1701)
        # the summary row after the list is no iteration
        self.assertNotIn(64.0, v)

    def test_same_values_as_perftests_summary(self):
        # perftest: "64 1000 20.17 434.64 21.80 28.41 28.38 200.43 434.64"
        # from the same 999 values minus the two largest
        s = sorted(sample())
        kept = s[:-2]
        self.assertEqual(f'{s[0]:.2f}', '20.17')
        self.assertEqual(f'{kept[len(kept) // 2]:.2f}', '21.80')
        self.assertEqual(f'{sum(kept) / len(kept):.2f}', '28.41')
        self.assertEqual(f'{kept[-(-99 * len(kept) // 100)]:.2f}', '200.43')
        self.assertEqual(f'{s[-2]:.2f}', '434.64')

    def test_no_list_or_bad_values(self):
        self.assertIsNone(ld.parse([' 64 1000 20.17 434.64 21.80\n']))
        self.assertIsNone(ld.parse(['#, usec\n', '1, 20.5\n', '2, inf\n']))
        self.assertIsNone(ld.parse(['#, usec\n', '1, 20.5\n', '2, -nan\n']))
        self.assertIsNone(ld.parse(['#, usec\n', '----\n']))
        # lines before the list's header are not iterations
        self.assertEqual(ld.parse(['7, 99.0\n', '#, usec\n', '1, 1.5\n',
                                   '2, 2.5\n', '---\n', '3, 7\n']),
                         [1.5, 2.5])


class Stats(unittest.TestCase):
    def test_canned_sample_percentiles(self):
        st = ld.stats(sample())
        self.assertEqual(st['n'], 999)
        self.assertEqual(st['p50'], 21.8113)    # rank 500
        self.assertEqual(st['p90'], 36.0733)    # rank 900 (ceil 899.1)
        self.assertEqual(st['p99'], 230.912)    # rank 990 (ceil 989.01)
        self.assertEqual(st['max'], 3361.04)    # rank 999
        self.assertAlmostEqual(st['mean'], 32.1576, places=3)
        # 82 iterations above 2 x 21.8113, one above 500 us
        self.assertAlmostEqual(st['gt2x'], 100 * 82 / 999)
        self.assertAlmostEqual(st['gt500'], 100 * 1 / 999)

    def test_nearest_rank(self):
        st = ld.stats([float(x) for x in range(10, 0, -1)])
        self.assertEqual((st['p50'], st['p90'], st['p99'], st['max']),
                         (5.0, 9.0, 10.0, 10.0))
        self.assertEqual(st['mean'], 5.5)
        # above 2 x p50 = 10: none; exactly twice does not count
        self.assertEqual(st['gt2x'], 0)
        st = ld.stats([100.0])
        self.assertEqual((st['p50'], st['p99'], st['n']), (100.0, 100.0, 1))
        st = ld.stats([10.0, 10.0, 10.0, 21.0, 600.0])
        self.assertEqual(st['gt2x'], 40.0)
        self.assertEqual(st['gt500'], 20.0)

    def test_samples_command(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ld.main(['samples', f'rxe,lat,0,1={SAMPLE}', 'x,lat,0,2=/nonexistent'])
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0].split(),
                         ['rxe,lat,0,1', '21.81', '36.07', '230.91', '3361.04',
                          '32.16', '8.21', '0.10', '999'])
        self.assertEqual(lines[1].split(), ['x,lat,0,2'] + ['-'] * 7 + ['0'])


class Bands(unittest.TestCase):
    def test_shares_and_adds(self):
        # p50 10, mean 14: the 30 (3x p50, band 3-5x) adds (30 - 10) / 5
        rel = ld.bands([[10.0, 10.0, 10.0, 10.0, 30.0]], ld.REL_BANDS, True)
        got = {(lo, hi): (share, add) for lo, hi, share, add in rel}
        self.assertEqual(got[(0, 1.25)], (80.0, 0.0))
        self.assertEqual(got[(3, 5)], (20.0, 4.0))
        self.assertEqual(got[(2, 3)], (0.0, 0.0))
        # two samples: shares of all iterations, adds averaged per sample
        ab = ld.bands([[10.0, 10.0, 10.0, 10.0, 30.0], [100.0, 100.0, 700.0]],
                      ld.ABS_BANDS, False)
        got = {(lo, hi): (share, add) for lo, hi, share, add in ab}
        self.assertEqual(got[(0, 60)], (62.5, 2.0))
        self.assertEqual(got[(100, 200)], (25.0, 0.0))
        self.assertEqual(got[(500, 1000)], (12.5, 100.0))

    def test_adds_sum_to_mean_over_p50(self):
        v = sample()
        st = ld.stats(v)
        for edges, rel in ((ld.REL_BANDS, True), (ld.ABS_BANDS, False)):
            b = ld.bands([v], edges, rel)
            self.assertAlmostEqual(sum(x[2] for x in b), 100.0)
            self.assertAlmostEqual(sum(x[3] for x in b), st['mean'] - st['p50'])


# rounds CSV columns lat_dist.py ab reads (rdma_bench_rounds.csv has more)
HEAD = ['driver', 'test', 'loss_pct', 'netem', 'round', 'lat_typical_us',
        'lat_avg_us', 'lat_iter_mean_us', 'lat_iter_p90_us', 'lat_iter_p99_us',
        'lat_iter_max_us', 'lat_iter_gt2x_pct', 'lat_iter_gt500us_pct']


def rounds_csv(rows, extra=None):
    f = tempfile.NamedTemporaryFile('w', suffix='.csv', delete=False, newline='')
    head = HEAD + (extra or [])
    w = csv.writer(f)
    w.writerow(head)
    for r in rows:
        w.writerow(r)
    f.close()
    return f.name


def lat(drv, rnd, typ, avg=None, loss='0'):
    a = avg or typ * 1.5
    return [drv, 'ib_write_lat', loss, '0', rnd, typ, a, a, typ * 1.2, typ * 5,
            typ * 40, 8.0, 0.2]


class AB(unittest.TestCase):
    # A, B per round: B 5 % faster in the fast mode; round 3 B alone
    # slow, round 4 A alone slow, round 5 both slow.
    TYP = {1: (20.0, 19.0), 2: (22.0, 20.9), 3: (21.0, 31.0),
           4: (30.0, 19.5), 5: (32.0, 30.4)}

    def rounds(self):
        rows = []
        for k, (a, b) in self.TYP.items():
            rows += [lat('mroce', k, a), lat('mroce2', k, b)]
        rows.append(['mroce', 'ib_write_bw', '0', '0', 1, '', '', '', '', '', '', '', ''])
        path = rounds_csv(rows)
        self.addCleanup(os.unlink, path)
        return path

    def test_modes_and_same_mode_medians(self):
        by, cols = ld.load_rounds(self.rounds())
        self.assertEqual(cols, ['mroce', 'mroce2'])
        self.assertEqual(ld.default_pairs(cols), [('mroce2', 'mroce')])
        pr = ld.pair_rounds(by[('0%', 'mroce')], by[('0%', 'mroce2')], 1.35)
        self.assertEqual(pr['levels'], (20.0, 19.0))
        ma, mb = pr['modes']
        self.assertEqual([ma[k] for k in range(1, 6)], ['fast', 'fast', 'fast', 'slow', 'slow'])
        self.assertEqual([mb[k] for k in range(1, 6)], ['fast', 'fast', 'slow', 'fast', 'slow'])
        self.assertEqual(pr['same'], [1, 2, 5])
        self.assertEqual(pr['fast'], [1, 2])
        med = ld.median_ratios(pr['ratios'], pr['both'])
        x, lower, n = med['typ']
        # ratios 0.95 0.95 1.476 0.65 0.95
        self.assertAlmostEqual(x, 0.95)
        self.assertEqual((lower, n), (4, 5))
        x, lower, n = ld.median_ratios(pr['ratios'], pr['same'])['typ']
        self.assertAlmostEqual(x, 0.95)
        self.assertEqual((lower, n), (3, 3))
        # every metric scales with typ in these rows
        self.assertAlmostEqual(ld.median_ratios(pr['ratios'], pr['fast'])['max'][0], 0.95)

    def test_ab_report(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ld.main(['ab', self.rounds()])
        text = out.getvalue()
        self.assertIn('mroce2 / mroce, 5 rounds with both', text)
        self.assertIn('same mode, 3 rounds (2 fast, 1 slow): typ 0.950 (3/3)', text)
        self.assertIn('both fast, 2 rounds: typ 0.950 (2/2)', text)
        self.assertIn('all 5 rounds: typ 0.950 (4/5)', text)
        self.assertNotIn('SUSPECT', text)

    def test_mode_causes(self):
        """Each column's slow and fast samples split by what the host did:
        its CPUs slow (host_loop_us), the vCPU threads queued (vcpu_wait)."""
        rows = []
        # (typ, host loop us, vcpu_wait) per round of A and of B
        a = {1: (20.0, 620, 0.04), 2: (30.0, 1150, 0.04), 3: (31.0, 630, 0.5),
             4: (21.0, 1100, 0.3), 5: (20.5, 610, '')}
        b = {1: (19.0, 620, 0.04), 2: (19.5, 615, 0.04), 3: (19.0, 640, 0.03),
             4: (19.2, 600, 0.02), 5: (19.1, 610, 0.01)}
        for col, vals in (('mroce', a), ('mroce2', b)):
            for k, (typ, loop, vw) in vals.items():
                rows.append(lat(col, k, typ) + [loop, vw])
        path = rounds_csv(rows, ['host_loop_us', 'vcpu_wait'])
        self.addCleanup(os.unlink, path)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ld.main(['ab', path])
        text = out.getvalue()
        self.assertIn('fast level 600 us', text)
        self.assertIn('  mroce 0%: 5 samples, 2 slow (1 host slow, 1 vCPUs waiting, 0 neither); '
                      '3 fast (1 host slow, 1 vCPUs waiting, 2 neither)', text)
        self.assertIn('  mroce2 0%: 5 samples, 0 slow (0 host slow, 0 vCPUs waiting, 0 neither); '
                      '5 fast (0 host slow, 0 vCPUs waiting, 5 neither)', text)

    def test_rxe_pairs_losses_and_suspect(self):
        rows = [lat('rxe', 1, 18.0) + ['0.1'], lat('mroce', 1, 24.0) + ['0.9'],
                lat('rxe', 2, 19.0) + [''], lat('mroce', 2, 25.0) + ['0.0'],
                lat('rxe', 1, 30.0, loss='1') + [''], lat('mroce', 1, 36.0, loss='1') + ['']]
        path = rounds_csv(rows, ['host_others_cpus'])
        self.addCleanup(os.unlink, path)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ld.main(['ab', path])
        text = out.getvalue()
        self.assertIn('loss 0%: mroce / rxe, 2 rounds with both', text)
        self.assertIn('loss 1%: mroce / rxe, 1 rounds with both', text)
        self.assertEqual(text.count('SUSPECT'), 2)   # round 1's line, one summary
        self.assertIn('same mode without SUSPECT samples, 1 rounds: typ 1.316', text)

    def test_nothing_to_compare(self):
        path = rounds_csv([lat('mroce', 1, 20.0)])
        self.addCleanup(os.unlink, path)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(ld.main(['ab', path]), 0)
        self.assertIn('no ib_write_lat rounds of two columns', out.getvalue())


class Verdict(unittest.TestCase):
    def test_sign_test_interval(self):
        # [x_(k), x_(n+1-k)] covers the median with 1 - 2 P(Bin(n, 1/2) < k)
        med, lo, hi, cov = ld.sign_ci([float(x) for x in range(12, 0, -1)])
        self.assertEqual((med, lo, hi), (6.5, 3.0, 10.0))
        self.assertAlmostEqual(cov, 1 - 2 * (1 + 12 + 66) / 4096)
        med, lo, hi, cov = ld.sign_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        self.assertEqual((lo, hi), (1.0, 6.0))
        self.assertAlmostEqual(cov, 1 - 2 / 64)
        self.assertEqual(ld.sign_ci([1.0, 2.0, 3.0, 4.0, 5.0])[1:], (None, None, None))
        self.assertEqual(ld.sign_ci([]), (None, None, None, None))

    def test_verdicts_same_mode_and_suspect(self):
        # 8 rounds: B 5 % faster in latency (round 3 B alone slow: left
        # out; round 8 SUSPECT: left out) and 10 % more goodput
        rows = []
        for k in range(1, 9):
            a = 20.0 + k * 0.1
            b = a * 0.95 * (1.6 if k == 3 else 1)
            sus = '0.9' if k == 8 else '0.0'
            rows += [lat('mroce', k, a) + ['', '0.0'], lat('mroce2', k, b) + ['', sus]]
            g = 500.0 + 10 * k
            rows += [['mroce', 'ib_write_bw', '0', '0', k] + [''] * 8 + [g, '0.0'],
                     ['mroce2', 'ib_write_bw', '0', '0', k] + [''] * 8 + [g * 1.1, sus]]
        path = rounds_csv(rows, ['goodput_mbps', 'host_others_cpus'])
        self.addCleanup(os.unlink, path)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ld.main(['verdict', path])
        text = out.getvalue()
        self.assertIn('verdict mroce2/mroce ib_write_lat 0% typ: 0.950 [0.950, 0.950] 97 %, '
                      '6 pairs (same mode, no SUSPECT; 8 rounds)', text)
        self.assertIn('B/A below 1 (B better)', text)
        self.assertIn('verdict mroce2/mroce ib_write_bw 0% goodput: 1.100 [1.100, 1.100] 98 %, '
                      '7 pairs (no SUSPECT; 8 rounds)', text)
        self.assertIn('B/A above 1 (B better)', text)

    def test_host_fast_pairs(self):
        # 10 rounds, goodput B = 1.1 A when both ran on a fast host (loop
        # 620 us), 0.7 when B's host was slow (1150 us: rounds 2, 5, 8)
        rows = []
        for k in range(1, 11):
            slow = k in (2, 5, 8)
            rows += [['mroce', 'ib_write_bw', '0', '0', k] + [''] * 8 + [500.0, '0.0', '620'],
                     ['mroce2', 'ib_write_bw', '0', '0', k] + [''] * 8 +
                     [350.0 if slow else 550.0, '0.0', '1150' if slow else '630']]
        path = rounds_csv(rows, ['goodput_mbps', 'host_others_cpus', 'host_loop_us'])
        self.addCleanup(os.unlink, path)
        self.assertEqual(ld.host_fast_level(path), 620.0)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ld.main(['verdict', path])
        lines = out.getvalue().splitlines()
        self.assertIn('ib_write_bw 0% goodput: 1.100 [0.700, 1.100] 98 %, 10 pairs', lines[1])
        self.assertIn('no difference resolved', lines[1])
        self.assertIn('  verdict mroce2/mroce ib_write_bw 0% goodput: 1.100 [1.100, 1.100] 98 %, '
                      '7 pairs (of those, both on a fast host)', lines[2])

    def test_fast_mode_and_vcpu_wait_lines(self):
        # 8 rounds, B 5 % faster; round 3 both slow (same mode: in the
        # main line, not in the fast one); round 5 A's kept sample still
        # waited 0.6 after its re-runs (3 tries), round 6 B's 0.2 (kept)
        rows = []
        for k in range(1, 9):
            a = (30.0 if k == 3 else 20.0) + k * 0.1
            b = a * (1.2 if k == 3 else 0.95)
            wa, ta = ('0.600', 3) if k == 5 else ('0.010', 1)
            wb, tb = ('0.200', 2) if k == 6 else ('0.020', 1)
            rows += [lat('mroce', k, a) + [wa, ta], lat('rxe', k, b) + [wb, tb]]
        path = rounds_csv(rows, ['lat_vcpu_wait', 'lat_tries'])
        self.addCleanup(os.unlink, path)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ld.main(['verdict', path, '--pair', 'rxe:mroce'])
        lines = out.getvalue().splitlines()
        self.assertIn('verdict rxe/mroce ib_write_lat 0% typ: 0.950 [0.950, 1.200] 99 %, 8 pairs '
                      '(same mode, no SUSPECT; 8 rounds)', lines[1])
        self.assertIn('  verdict rxe/mroce ib_write_lat 0% typ: 0.950 [0.950, 0.950] 98 %, 7 pairs '
                      '(of those, both in the fast mode)', lines[2])
        self.assertIn('  verdict rxe/mroce ib_write_lat 0% typ: 0.950 [0.950, 1.200] 98 %, 7 pairs '
                      '(of those, both with ping-pong vCPU wait <= 0.2; 3 tries re-run)', lines[3])

    def test_too_few_pairs(self):
        rows = [lat('mroce', k, 20.0) for k in range(1, 4)]
        rows += [lat('mroce2', k, 21.0) for k in range(1, 4)]
        path = rounds_csv(rows)
        self.addCleanup(os.unlink, path)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ld.main(['verdict', path])
        self.assertIn('1.050 [no 95 % interval from 3 pairs: 6 or more needed]', out.getvalue())


# rdma_bench's report functions, cut out of the script (it runs a VM
# benchmark when executed): lat_dists() feeding stats().
FUNCS = ('lat_dists', 'stats', 'tenths', 'ratio')


class RdmaBench(unittest.TestCase):
    def test_per_iteration_medians(self):
        with open(RDMA_BENCH, encoding='utf-8') as f:
            src = f.read().splitlines()
        body = [ln for ln in src if ln.startswith('IFIELDS=')]
        for name in FUNCS:
            start = src.index(f'{name}() {{')
            body += src[start:src.index('}', start) + 1]
        with tempfile.TemporaryDirectory() as tmp:
            # round 2 is the canned sample with its first iteration doubled
            # up: one more > 2x p50; round 3's log has no -U list
            two = os.path.join(tmp, 'r2.client')
            with open(SAMPLE, encoding='utf-8') as f:
                text = f.read()
            with open(two, 'w', encoding='utf-8') as f:
                f.write(text.replace('#, usec\n', '#, usec\n0, 335.615\n', 1))
            three = os.path.join(tmp, 'r3.client')
            with open(three, 'w', encoding='utf-8') as f:
                f.write(' 64 1000 20.17 434.64 21.80 28.41 28.38 200.43 434.64\n')
            script = '\n'.join(
                [f'. "{LIB}"', 'declare -A S rv latlog retx down cnt',
                 f'latlog[mroce,lat,0,1]={SAMPLE}', f'latlog[mroce,lat,0,2]={two}',
                 f'latlog[mroce,lat,0,3]={three}',
                 'rv[mroce,lat,0,1]=21.80 rv[mroce,lat,0,2]=21.80 rv[mroce,lat,0,3]=22.0'] +
                body + ['set -- "$0"', 'lat_dists', 'stats',
                        'for k in "${!S[@]}"; do echo "S $k ${S[$k]}"; done',
                        'echo "rv ${rv[mroce,lat,0,2,in]} ${rv[mroce,lat,0,2,gt2x]}"',
                        'echo "rv3 ${rv[mroce,lat,0,3,ip50]:-none}"'])
            env = dict(os.environ, MROCE_TEST_OUT=tmp, LC_ALL='C')
            r = subprocess.run(['bash', '-c', script, RDMA_BENCH], env=env,
                               capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = {}
        for ln in r.stdout.splitlines():
            f = ln.split()
            got[f[0] + ' ' + f[1]] = f[2:]
        self.assertEqual(got['rv 1000'], ['8.30'])
        self.assertEqual(got['rv3 none'], [])
        # median over rounds 1 and 2: the mean of the two
        self.assertEqual(got['S mroce,lat,0,ip99'], ['230.9', '230.9', '230.9', '2'])
        self.assertEqual(got['S mroce,lat,0,imax'], ['3361.0', '3361.0', '3361.0', '2'])
        self.assertEqual(got['S mroce,lat,0,gt2x'], ['8.26', '8.21', '8.30', '2'])
        self.assertEqual(got['S mroce,lat,0,gt500'], ['0.10', '0.10', '0.10', '2'])
        self.assertEqual(got['S mroce,lat,0'], ['21.8', '21.8', '22.0', '3'])
        self.assertNotIn('S mroce,lat,0,in', got)


def cut(src, name):
    """The lines of rdma_bench.sh's function NAME (one-liners too)."""
    for i, ln in enumerate(src):
        if ln.startswith(f'{name}() {{'):
            if ln.rstrip().endswith('}'):
                return [ln]
            return src[i:src.index('}', i) + 1]
    raise AssertionError(f'no function {name} in rdma_bench.sh')


class Rerun(unittest.TestCase):
    """rdma_bench's vCPU-wait rule: vcpu_wait's share from two feed lines,
    run_row's re-runs (run_row_once stubbed: each try takes its vCPU wait
    from WAITS), the discarded tries listed."""

    def bench(self, lines, env=None):
        with open(RDMA_BENCH, encoding='utf-8') as f:
            src = f.read().splitlines()
        body = []
        for name in ('vcpu_wait', 'share', 'run_row', 'discards'):
            body += cut(src, name)
        script = '\n'.join(
            ['declare -A rv vw vws tries latlog win', 'disc=() total=3 FEED=/feed',
             'LAT_WAIT_MAX=0.2 LAT_WAIT_PM=200 LAT_RERUNS=${RERUNS:-2} out=/nonexistent',
             'progress() { echo "P $*"; }', 'tool_of() { echo ib_write_lat; }',
             'loss_label() { echo "$1%"; }',
             # a try: typical 20 + its index, its wait the next of WAITS
             'read -ra WAITS <<< "${WAITS:-}"; n=0',
             'run_row_once() { local k=$1,$2,$3; rv[$k,$4]=$((20 + n)) rv[$k,$4,avg]=1 '
             'rv[$k,$4,p99]=2; vw[$k,$4]=${WAITS[$n]:-} vws[$k,$4]=1500 '
             'win[$k,$4]="10 12"; echo "TRY ${TRY:-1}"; n=$((n + 1)); }'] +
            body + lines)
        r = subprocess.run(['bash', '-c', script], env=dict(os.environ, LC_ALL='C', **(env or {})),
                           capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_share_from_feed_lines(self):
        # 2 vCPUs over 1 s: waited 0.3 s, ran 0.9 s -> 0.25; window 1000 ms
        out = self.bench(['VW0="5000000000 2 100 50"',
                          'VW1="6000000000 2 900000100 300000050"', 'vcpu_wait',
                          'echo "W $VWPM $VWMS"', 'share 7; echo "S $R"',
                          # no traffic seen, a new QEMU (counters went back)
                          'VW0= VW1="1 2 3 4"; vcpu_wait; echo "N1 [$VWPM]"',
                          'VW0="5 2 100 50" VW1="6 2 90 40"; vcpu_wait; echo "N2 [$VWPM]"',
                          'VW0="5 2 100 50" VW1="6 1 900 60"; vcpu_wait; echo "N3 [$VWPM]"'])
        self.assertIn('W 250 1000', out)
        self.assertIn('S 0.007', out)
        for n in ('N1 []', 'N2 []', 'N3 []'):
            self.assertIn(n, out)

    def test_rerun_until_under_the_share(self):
        out = self.bench(['run_row mroce lat 0 1',
                          'echo "K ${rv[mroce,lat,0,1]} ${vw[mroce,lat,0,1]} '
                          '${tries[mroce,lat,0,1]} ${#disc[@]} $total"',
                          'printf "D %s\\n" "${disc[@]}"', 'discards'], {'WAITS': '500 201 200 900'})
        self.assertEqual(out.count('TRY'), 3)
        self.assertIn('TRY 3 of up to 3', out)
        # the third try is kept: typical 22, wait 0.200 (not over 0.2)
        self.assertIn('K 22 200 3 2 5', out)
        self.assertIn('D mroce lat 0 1 1 20 1 2 500 1500 10 12', out)
        self.assertIn('D mroce lat 0 1 2 21 1 2 201 1500 10 12', out)
        self.assertIn('Discarded tries: 2', out)
        self.assertIn('mroce ib_write_lat loss 0% round 1 try 2: 21 / 1 / 2 us, '
                      'vCPU wait 0.201 over 1.500 s', out)
        # a try at the share itself is kept
        out = self.bench(['run_row mroce lat 0 1',
                          'echo "K ${rv[mroce,lat,0,1]} ${tries[mroce,lat,0,1]} ${#disc[@]}"'],
                         {'WAITS': '500 200 900'})
        self.assertIn('K 21 2 1', out)

    def test_at_most_reruns_then_kept(self):
        out = self.bench(['run_row rxe lat 0 2',
                          'echo "K ${rv[rxe,lat,0,2]} ${tries[rxe,lat,0,2]} ${#disc[@]}"'],
                         {'WAITS': '900 900 900 900'})
        self.assertEqual(out.count('TRY'), 3)
        self.assertIn('K 22 3 2', out)
        out = self.bench(['run_row rxe lat 0 2',
                          'echo "K ${rv[rxe,lat,0,2]} ${tries[rxe,lat,0,2]} ${#disc[@]}"'],
                         {'WAITS': '900 900', 'RERUNS': '0'})
        self.assertIn('K 20 1 0', out)

    def test_no_rerun_under_the_share_unmeasured_or_bulk(self):
        for waits, row in (('100 900', 'lat'), ('', 'lat'), ('900 900', 'write')):
            out = self.bench([f'run_row mroce {row} 0 1', 'echo "N ${#disc[@]}"'],
                             {'WAITS': waits})
            self.assertEqual(out.count('TRY'), 1, (waits, row))
            self.assertIn('N 0', out)


if __name__ == '__main__':
    unittest.main()
