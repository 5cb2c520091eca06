#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of lat_trace.py, lat_trace's report (make check runs them: a
report that charged a gap to the wrong pair of events, or took the
requester's copy for the placement, would point at the wrong cost)."""

import io
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lat_trace as lt  # noqa: E402


def line(comm, pid, cpu, ts_us, fn, parent):
    return (f'  {comm}-{pid}     [{cpu:03d}] d.s2. {ts_us / 1e6:.6f}: '
            f'{fn} <-{parent}\n')


# Two sides (pids 10 on CPU 0, 20 on CPU 1), rxe: each post's WRITE is
# placed 7 us later at the other side, which posts 3 us after that; the
# requester's own rxe_mr_copy (payload gather) 1 us after each post must
# not count as the placement.
def rxe_trace(rounds=4):
    out = ['# tracer: function\n', 'garbage that is no event\n']
    t = 1000.0
    for _ in range(rounds):
        for pid, cpu, other in ((10, 0, 1), (20, 1, 0)):
            out.append(line('ib_write_lat', pid, cpu, t, 'rxe_post_send',
                            'ib_uverbs_post_send'))
            out.append(line('ib_write_lat', pid, cpu, t + 1, 'rxe_mr_copy',
                            'copy_data'))
            out.append(line('ib_write_lat', pid, cpu, t + 2, 'veth_xmit',
                            'dev_hard_start_xmit'))
            out.append(line('ib_write_lat', pid, cpu, t + 7, 'rxe_mr_copy',
                            'rxe_responder'))
            t += 10
    out.append(line('ib_write_lat', 10, 0, t, 'rxe_post_send',
                    'ib_uverbs_post_send'))
    return out


GRAPH = """# tracer: function_graph
#
 1)   0.700 us    |      mroce_orphan_leaf [mroce]();
 1)   9.000 us    |    } /* an orphan: opened before the trace */
 1)               |  mroce_tx_run [mroce]() {
 1)   0.500 us    |    mroce_peer_take_kicks [mroce]();
 1)               |    mroce_tx_one [mroce]() {
 1)   2.000 us    |      __alloc_skb();
 1) + 12.000 us   |    } /* mroce_tx_one [mroce] */
 1) + 14.000 us   |  } /* mroce_tx_run [mroce] */
 0)               |  mroce_tx_run [mroce]() {
 0)   0.500 us    |    mroce_peer_take_kicks [mroce]();
 0)   1.500 us    |  }
 0)   3.000 us    |  mroce_ack_maybe [mroce]();
"""


class LatTraceTest(unittest.TestCase):
    def test_parse_skips_comments_and_garbage(self):
        ev = lt.parse(rxe_trace(1))
        self.assertEqual(len(ev), 9)
        self.assertEqual(ev[0][4], 'rxe_post_send')
        self.assertEqual(ev[0][2], 10)
        self.assertAlmostEqual(ev[1][0] - ev[0][0], 1.0, places=3)

    def test_parse_sorts_merged_cpus(self):
        lines = [line('a', 1, 1, 5, 'f2', 'x'), line('b', 2, 0, 3, 'f1', 'y')]
        self.assertEqual([e[4] for e in lt.parse(lines)], ['f1', 'f2'])

    def test_halves_use_the_responders_copy(self):
        hv = lt.halves(lt.parse(rxe_trace()), 'rxe_post_send',
                       lt.PLACE['rxe'])
        self.assertEqual(sorted(hv), [10, 20])
        for pid in (10, 20):
            a, b = hv[pid]
            self.assertTrue(a and all(abs(x - 7) < 1e-3 for x in a), a)
            self.assertTrue(all(abs(x - 3) < 1e-3 for x in b), b)

    def test_report_gaps_add_up(self):
        out = io.StringIO()
        lt.report('rxe.trace', lt.parse(rxe_trace()), out, 30)
        text = out.getvalue()
        # 9 posts: 4 round trips of 20 us
        self.assertIn('4 round trips in 0.1 ms: 20.0 us per round trip', text)
        self.assertIn('pid 10: 7.0 us + 3.0 us', text)
        rows = [r.split('|') for r in text.splitlines()
                if r.startswith('| ') and not r.startswith('| from')]
        total = sum(float(r[4]) for r in rows)
        self.assertAlmostEqual(total, 20.0, delta=0.3)
        cells = {(r[1].strip(), r[2].strip(), r[3].strip()): float(r[4])
                 for r in rows}
        # the biggest gap first: veth -> the responder's copy, 5 us twice
        self.assertEqual([c.strip() for c in rows[0][1:4]],
                         ['veth_xmit', 'rxe_mr_copy', 'same'])
        self.assertAlmostEqual(cells['veth_xmit', 'rxe_mr_copy', 'same'], 10.0)
        # the copy -> the other side's post, on the other CPU, 3 us twice
        self.assertAlmostEqual(
            cells['rxe_mr_copy', 'rxe_post_send', 'other'], 6.0)

    def test_graph_calls(self):
        calls = lt.graph_calls(GRAPH.splitlines(True))
        self.assertIn((2, '__alloc_skb', 2.0, 'mroce_tx_run', 'mroce_tx_one'),
                      calls)
        self.assertIn((1, 'mroce_tx_one', 12.0, 'mroce_tx_run',
                       'mroce_tx_run'), calls)
        # closed by a bare "}" (no funcgraph-tail): named from the stack
        self.assertIn((0, 'mroce_tx_run', 1.5, 'mroce_tx_run', ''), calls)
        self.assertIn((0, 'mroce_ack_maybe', 3.0, 'mroce_ack_maybe', ''),
                      calls)
        # the orphans (opened before the trace) are not counted
        self.assertEqual(len(calls), 7)

    def test_graph_report_per_call_of_the_root(self):
        out = io.StringIO()
        lt.graph_report('mroce.graph', GRAPH.splitlines(True), out, 30)
        text = out.getvalue()
        self.assertIn('### mroce_tx_run: 2 calls, 7.8 us per call', text)
        # tx_one ran in one of the two calls: 6 us per call of the root
        self.assertIn('| 1 | mroce_tx_run | mroce_tx_one | 6.00 | 0.50 | 12.00 |', text)
        self.assertIn('| 2 | mroce_tx_one | __alloc_skb | 1.00 | 0.50 | 2.00 |', text)
        self.assertIn('| 1 | mroce_tx_run | mroce_peer_take_kicks | 0.50 | 1.00 | 0.50 |',
                      text)

    def test_too_few_posts(self):
        out = io.StringIO()
        lt.report('mroce.trace', lt.parse(rxe_trace(1)[:3]), out, 30)
        self.assertIn('too few posts', out.getvalue())


if __name__ == '__main__':
    unittest.main()
