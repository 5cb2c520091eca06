#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of lat_events.py, lat_events' report (make check runs them):
known answers on canned bpftrace JSON dumps. A report that divided by the
posts instead of the round trips, mixed up the softirq vectors or system
calls, or averaged a driver's runs wrongly would point at the wrong
event."""

import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lat_events as le  # noqa: E402


def dump(path, maps, veth=None, hwc=None):
    """A file as lat_events.sh writes it: bpftrace's lines, then its own."""
    with open(path, 'w') as f:
        f.write('{"type": "attached_probes", "data": {"probes": 9}}\n')
        f.write('lat_events: attached\n')          # not JSON: skipped
        f.write('{"type": "map", "data": {"@broken"\n')  # broken: skipped
        for name, val in maps.items():
            f.write(json.dumps({'type': 'map', 'data': {name: val}}) + '\n')
        if veth is not None:
            f.write(json.dumps({'type': 'veth', 'data': {'packets': veth}}) + '\n')
        if hwc is not None:
            f.write(json.dumps({'type': 'hwc', 'data': hwc}) + '\n')


class Fixture(unittest.TestCase):
    """rxe: one run of 100 round trips (200 posts) in 1 ms. mroce: two runs,
    50 and 100 round trips, 0.5 and 1.0 peer-timer expiries per round trip."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.rxe = os.path.join(d, 'rxe-r1.json')
        self.m1 = os.path.join(d, 'mroce-r1.json')
        self.m2 = os.path.join(d, 'mroce-r2.json')
        dump(self.rxe, {
            '@c': {'posts': 200, 'packets (veth_xmit)': 400},
            '@ns': 1000000,
            '@post_cpu': {'123, 0': 150, '123, 1': 50},
            '@sraise': {'3': 100, '9': 10},
            '@sys': {'1': 50, '999': 4},
            '@switch_to': {'kworker/1:1H-ib': 20},
            '@unknown_map': {'x': 1000},
            '@hexpire': {'rare_fn': 0},
        }, veth=400, hwc={'acks_sent': 50})
        dump(self.m1, {
            '@c': {'posts': 100},
            '@ns': 2000000,
            '@hexpire': {'mroce_peer_timer': 25},
            '@cep_stack': {'\n        a+1\n        b+2\n': 10},
        })
        dump(self.m2, {
            '@c': {'posts': 200},
            '@ns': 2000000,
            '@hexpire': {'mroce_peer_timer': 100},
            '@cep_stack': {'\n        a+1\n        b+2\n': 5},
        }, veth=300)

    def tearDown(self):
        self.dir.cleanup()

    def report(self, files):
        out = io.StringIO()
        le.report(files, out)
        return out.getvalue()

    def test_parse(self):
        counts, stacks, ns, pkts = le.parse(self.rxe)
        self.assertEqual(counts['posts'], 200)
        self.assertEqual(le.rts(counts), 100)
        self.assertEqual(ns, 1000000)
        self.assertEqual(pkts, 400)
        # vectors and system calls by name, unknown numbers kept
        self.assertEqual(counts['softirq raise NET_RX'], 100)
        self.assertEqual(counts['softirq raise RCU'], 10)
        self.assertEqual(counts['ib_write_lat syscall write'], 50)
        self.assertEqual(counts['ib_write_lat syscall 999'], 4)
        self.assertEqual(counts['sched_switch to kworker/N:NH-ib'], 20)
        self.assertEqual(counts['hw counter acks_sent (both devices)'], 50)
        self.assertNotIn('x', counts)    # a map the report does not know
        self.assertEqual(dict(stacks), {})
        _, stacks, _, pkts = le.parse(self.m1)
        self.assertIsNone(pkts)
        self.assertEqual(stacks['@cep_stack'], {'a+1\n        b+2': 10})

    def test_where(self):
        self.assertEqual(le.where_str({'123, 0': 150, '123, 1': 50}),
                         'pid 123 posted on CPU0 75 %, CPU1 25 %')

    def test_comm_class(self):
        self.assertEqual(le.comm_class('ksoftirqd/1'), 'ksoftirqd/N')
        self.assertEqual(le.comm_class('kworker/1:1H-mroce'), 'kworker/N:NH-mroce')

    def test_report(self):
        r = self.report([self.m2, self.rxe, self.m1])
        lines = r.splitlines()
        self.assertEqual(lines[0], '# 64 B ib_write_lat: events per round trip (lat_events)')
        # rxe first whatever the order of the files
        self.assertIn('- rxe: 1 runs: 100 RTs, 10.0 us/RT traced, 4.00 veth packets/RT '
                      '(pid 123 posted on CPU0 75 %, CPU1 25 %)', lines)
        self.assertIn('- mroce: 2 runs: 100 RTs, 20.0 us/RT traced, 3.00 veth packets/RT; '
                      '50 RTs, 40.0 us/RT traced', lines)
        self.assertIn('| event | rxe | mroce | diff |', lines)
        # per round trip: the mean of the runs (min-max), diff = mroce - rxe
        self.assertIn('| hrtimer expiry mroce_peer_timer | 0.00 | 0.75 (0.50-1.00) | +0.75 |',
                      lines)
        self.assertIn('| softirq raise NET_RX | 1.00 | 0.00 (0.00-0.00) | -1.00 |', lines)
        self.assertIn('| packets (veth_xmit) | 4.00 | 0.00 (0.00-0.00) | -4.00 |', lines)
        self.assertIn('| ib_write_lat syscall 999 | 0.04 | 0.00 (0.00-0.00) | -0.04 |', lines)
        # under 0.005 per round trip for every driver: no row; posts: no row
        self.assertFalse([x for x in lines if 'rare_fn' in x or x.startswith('| posts ')])
        # rows sorted by event
        rows = [x.split(' | ')[0] for x in lines if x.startswith('| ') and '---' not in x][1:]
        self.assertEqual(rows, sorted(rows))
        # stacks: per round trip over all of mroce's runs (15 / 150), frames without offsets
        self.assertIn('## mroce: clock event programs, by stack (per round trip, top 8)', lines)
        self.assertIn('- 0.10: a <- b', lines)
        self.assertFalse([x for x in lines if x.startswith('## rxe:')])

    def test_one_driver(self):
        r = self.report([self.m1])
        self.assertIn('| event | mroce|', r.splitlines())
        self.assertIn('| hrtimer expiry mroce_peer_timer | 0.50 |', r.splitlines())


if __name__ == '__main__':
    unittest.main()
