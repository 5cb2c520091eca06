#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the benchmarks' one statistics pass: bench_stats
(selftests/lib.sh) and rdma_bench's stats(), which feeds it every sample of
a run, the per-round mroce/rxe latency ratios included (make check runs
them: a wrong median would move every number make bench reports)."""

import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(HERE, '..', 'lib.sh')
RDMA_BENCH = os.path.join(HERE, 'rdma_bench.sh')


def bash(script, stdin=''):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MROCE_TEST_OUT=tmp, LC_ALL='C')
        r = subprocess.run(['bash', '-c', script], input=stdin, env=env,
                           capture_output=True, text=True, check=False)
    if r.returncode:
        raise AssertionError(f'bash exited {r.returncode}: {r.stderr}')
    return r.stdout


def bench_stats(lines, *args):
    out = bash(f'. "{LIB}"; bench_stats ' + ' '.join(f"'{a}'" for a in args),
               ''.join(f'{k} {v}\n' for k, v in lines))
    return {f[0]: f[1:] for f in (ln.split() for ln in out.splitlines())}


class BenchStats(unittest.TestCase):
    def test_odd_even_min_max_n(self):
        s = bench_stats([('a', 3), ('b', 40), ('a', 1), ('b', 10),
                         ('a', 2), ('b', 30), ('b', 20)])
        self.assertEqual(s['a'], ['2.0', '1.0', '3.0', '3'])
        # even n: the mean of the middle two
        self.assertEqual(s['b'], ['25.0', '10.0', '40.0', '4'])

    def test_numeric_not_lexical_order(self):
        s = bench_stats([('k', 9), ('k', 10), ('k', 100), ('k', -2.5)])
        self.assertEqual(s['k'], ['9.5', '-2.5', '100.0', '4'])

    def test_output_sorted_by_key(self):
        out = bash(f'. "{LIB}"; bench_stats', 'z 1\na 2\nm 3\na 4\n')
        self.assertEqual([ln.split()[0] for ln in out.splitlines()],
                         ['a', 'm', 'z'])

    def test_integer_and_compact_keys(self):
        s = bench_stats([('x,retx', 3), ('x,retx', 4), ('x', 3),
                         ('x', 4)], '-i', ',retx$')
        self.assertEqual(s['x,retx'], ['3', '3', '4', '2'])
        self.assertEqual(s['x'], ['3.5', '3.0', '4.0', '2'])
        s = bench_stats([('y', 2), ('y', 4), ('z', 1), ('z', 2)], '-c')
        self.assertEqual(s['y'], ['3', '2', '4', '2'])
        self.assertEqual(s['z'], ['1.5', '1', '2', '2'])

    def test_ratio_keys_two_decimals_half_up(self):
        # 1.25 and 1.30: the median 1.275 is 1.2749... in binary; ratios
        # round half up in hundredths (what rdma_bench's own loop did)
        s = bench_stats([('m,lat,0,pratio', 1.30), ('m,lat,0,pratio', 1.25),
                         ('m,lat,0', 30.1), ('m,lat,0', 30.3)],
                        '-r', ',pratio$')
        self.assertEqual(s['m,lat,0,pratio'], ['1.28', '1.25', '1.30', '2'])
        self.assertEqual(s['m,lat,0'], ['30.2', '30.1', '30.3', '2'])
        s = bench_stats([('p', 0.9), ('p', 1.52), ('p', 1.1)], '-r', '^p$')
        self.assertEqual(s['p'], ['1.10', '0.90', '1.52', '3'])


# rdma_bench's report functions, cut out of the script (it runs a VM
# benchmark when executed): stats() and the ratio() it calls.
FUNCS = ('stats', 'tenths', 'ratio')


def rdma_bench_stats(rv):
    with open(RDMA_BENCH, encoding='utf-8') as f:
        src = f.read().splitlines()
    body = []
    for name in FUNCS:
        start = src.index(f'{name}() {{')
        end = src.index('}', start)
        body += src[start:end + 1]
    assign = ' '.join(f'[{k}]={v}' for k, v in rv.items())
    script = '\n'.join([f'. "{LIB}"',
                        'declare -A S rv=(' + assign + ') retx down cnt'] +
                       body +
                       ['stats',
                        'for k in "${!S[@]}"; do echo "$k ${S[$k]}"; done'])
    out = bash(script)
    return {f[0]: f[1:] for f in (ln.split() for ln in out.splitlines())}


class RdmaBenchStats(unittest.TestCase):
    def test_latency_ratio_median_per_round(self):
        # typical latency, us, per round; round 3's rxe sample failed, so
        # round 3 has no ratio; goodput rows make no ratio
        rv = {'rxe,lat,0,1': 20.0, 'mroce,lat,0,1': 26.0,    # 1.30
              'rxe,lat,0,2': 30.0, 'mroce,lat,0,2': 33.0,    # 1.10
              'mroce,lat,0,3': 40.0,
              'rxe,lat,0,4': 25.0, 'mroce,lat,0,4': 38.0,    # 1.52
              'rxe,lat,0,1,avg': 21.0, 'mroce,lat,0,1,avg': 27.0,
              'rxe,write,0,1': 250.0, 'mroce,write,0,1': 700.0,
              'mroce,write,0,1,it': 5000}
        s = rdma_bench_stats(rv)
        self.assertEqual(s['mroce,lat,0,pratio'],
                         ['1.30', '1.10', '1.52', '3'])
        self.assertEqual(s['mroce,lat,0'], ['35.5', '26.0', '40.0', '4'])
        self.assertEqual(s['rxe,lat,0'], ['25.0', '20.0', '30.0', '3'])
        self.assertEqual(s['mroce,lat,0,avg'], ['27.0', '27.0', '27.0', '1'])
        self.assertNotIn('rxe,lat,0,pratio', s)
        self.assertNotIn('mroce,write,0,pratio', s)
        self.assertNotIn('mroce,write,0,it', s)

    def test_second_parameter_set_has_its_own_ratio(self):
        rv = {'rxe,lat,1,1': 20.0, 'mroce,lat,1,1': 30.0,
              'mroce2,lat,1,1': 25.0,
              'rxe,lat,1,2': 20.0, 'mroce,lat,1,2': 22.0,
              'mroce2,lat,1,2': 23.0}
        s = rdma_bench_stats(rv)
        self.assertEqual(s['mroce,lat,1,pratio'], ['1.30', '1.10', '1.50', '2'])
        self.assertEqual(s['mroce2,lat,1,pratio'],
                         ['1.20', '1.15', '1.25', '2'])


if __name__ == '__main__':
    unittest.main()
