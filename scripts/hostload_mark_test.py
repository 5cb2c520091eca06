#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of hostload_mark.py, which marks the benchmark samples that
shared the host with other processes (make check runs them: a marker that
missed a busy second would let a sample slowed by the host pass as
mroce's)."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HEAD = "driver,test,loss_pct,netem,round,lat_typical_us,t_start,t_end\n"
WINDOWS = ["mroce,ib_write_lat,0,0,1,42.0,1000,1004\n",
           "mroce,ib_write_lat,0,0,2,80.0,1010,1012\n",
           "tcp,iperf3,0,0,1,,,\n"]


class Mark(unittest.TestCase):
    def run_mark(self, timeline, rows):
        with tempfile.TemporaryDirectory() as d:
            tl, csvf = os.path.join(d, "tl"), os.path.join(d, "x_rounds.csv")
            with open(tl, "w") as f:
                f.writelines(" ".join(map(str, cols)) + "\n" for cols in timeline)
            with open(csvf, "w") as f:
                f.write(HEAD + "".join(rows))
            out = subprocess.run([sys.executable, os.path.join(HERE, "hostload_mark.py"),
                                  tl, csvf], capture_output=True, text=True, check=True).stdout
            with open(csvf) as f:
                return out, f.read().splitlines()

    def test_busy_second_inside_window_marks_only_that_sample(self):
        tl = [(t, 0.1) for t in range(1000, 1030)]
        tl[12] = (1012, 1.3)	# the second 1011-1012
        out, lines = self.run_mark(tl, ["mroce,ib_write_lat,0,0,1,42.0,1000,1005\n",
                                        "mroce,ib_write_lat,0,0,2,95.0,1010,1014\n",
                                        "mroce,ib_write_lat,0,0,3,43.0,1020,1025\n"])
        self.assertEqual(lines[0], HEAD.strip() + ",host_others_cpus")
        self.assertEqual(lines[1].split(",")[-1], "0.10")
        self.assertEqual(lines[2].split(",")[-1], "1.30")
        self.assertEqual(lines[3].split(",")[-1], "0.10")
        self.assertIn("1 of 3 samples", out)
        self.assertIn("mroce ib_write_lat 0 0 2 (1.30 CPUs)", out)

    def test_quiet_host_says_so(self):
        out, lines = self.run_mark([(t, 0.2) for t in range(1000, 1010)],
                                   ["mroce,ib_write_lat,0,0,1,42.0,1002,1004\n"])
        self.assertIn("no sample shared the host", out)
        self.assertEqual(lines[1].split(",")[-1], "0.20")

    def test_sample_without_window_or_outside_timeline_gets_no_value(self):
        out, lines = self.run_mark([(t, 2.0) for t in range(1000, 1010)],
                                   ["tcp,iperf3,0,0,1,,,\n",
                                    "mroce,ib_write_lat,0,0,1,42.0,2000,2004\n"])
        self.assertEqual(lines[1].split(",")[-1], "")
        self.assertEqual(lines[2].split(",")[-1], "")
        self.assertIn("no sample shared the host", out)

    def test_loop_column_median_over_window(self):
        _, lines = self.run_mark([(t, 0.1, 1200 if 1011 <= t <= 1013 else 620)
                                  for t in range(1000, 1030)], WINDOWS)
        self.assertEqual(lines[0], HEAD.strip() + ",host_others_cpus,host_loop_us")
        self.assertEqual(lines[1].split(",")[-2:], ["0.10", "620"])
        # seconds 1010-1014: 620 1200 1200 1200 620
        self.assertEqual(lines[2].split(",")[-2:], ["0.10", "1200"])
        self.assertEqual(lines[3].split(",")[-2:], ["", ""])

    def test_vcpu_wait_column_mean_inside_window(self):
        # both vCPU threads on one host CPU in 1011-1012 only
        _, lines = self.run_mark([(t, 0.1, 620, 0.5 if t in (1011, 1012) else 0.02)
                                  for t in range(1000, 1030)], WINDOWS)
        self.assertEqual(lines[0], HEAD.strip() + ",host_others_cpus,host_loop_us,vcpu_wait")
        self.assertEqual(lines[1].split(",")[-1], "0.02")
        # seconds inside 1010-1012: 1011 and 1012 (the second ending at 1010 is before it)
        self.assertEqual(lines[2].split(",")[-1], "0.50")
        self.assertEqual(lines[3].split(",")[-3:], ["", "", ""])

    def test_marked_file_is_left_alone_a_second_time(self):
        with tempfile.TemporaryDirectory() as d:
            tl, csvf = os.path.join(d, "tl"), os.path.join(d, "x_rounds.csv")
            with open(tl, "w") as f:
                f.write("1001 1.0\n")
            with open(csvf, "w") as f:
                f.write(HEAD + "mroce,ib_write_lat,0,0,1,42.0,1000,1001\n")
            for _ in range(2):
                subprocess.run([sys.executable, os.path.join(HERE, "hostload_mark.py"), tl, csvf],
                               capture_output=True, check=True)
            with open(csvf) as f:
                self.assertEqual(f.read().count("host_others_cpus"), 1)


sys.path.insert(0, HERE)
import hostload  # noqa: E402


class VcpuWait(unittest.TestCase):
    """hostload.py's VWAIT: how long the vCPU threads waited for a host CPU."""

    def test_share_is_mean_over_threads_in_both_snapshots(self):
        # thread 1 waited 0.5 s, thread 2 0.1 s of 1 s; thread 3 is new
        w0 = {1: 10 ** 9, 2: 0}
        w1 = {1: 15 * 10 ** 8, 2: 10 ** 8, 3: 7 * 10 ** 9}
        self.assertAlmostEqual(hostload.wait_share(w0, w1, 1.0), 0.3)
        self.assertAlmostEqual(hostload.wait_share(w0, w1, 2.0), 0.15)

    def test_no_threads_no_share(self):
        self.assertIsNone(hostload.wait_share({}, {5: 1}, 1.0))
        self.assertIsNone(hostload.wait_share({5: 1}, {5: 2}, 0.0))

    def test_top_others_busiest_first_new_processes_left_out(self):
        hz = hostload.HZ
        o0 = {1: ("a", 10), 2: ("b", 0), 4: ("d", 5)}
        o1 = {1: ("a", 10 + hz // 2), 2: ("b", 2 * hz), 3: ("c", 5 * hz), 4: ("d", 5)}
        self.assertEqual(hostload.top_others(o0, o1, 1.0), [(2.0, 2, "b"), (0.5, 1, "a")])
        self.assertEqual(hostload.top_others(o0, o1, 2.0, n=1), [(1.0, 2, "b")])

    def test_threads_found_by_name_in_the_tree(self):
        # this process's own threads: none is a vCPU
        qemus = []
        hostload.tree_ticks(os.getpid(), -1, qemus)
        self.assertEqual(qemus, [])
        self.assertEqual(hostload.vcpu_wait([os.getpid()]), {})
        self.assertTrue(hostload.VCPU_THREAD.match("CPU 1/TCG"))
        self.assertFalse(hostload.VCPU_THREAD.match("ALL CPUs/TCG"))


import time  # noqa: E402
import vcpu_feed  # noqa: E402

# A stand-in for QEMU: a process named qemu-system-x86_64 whose two threads
# are named as QEMU names its vCPU threads and keep a host CPU busy in turns.
FAKE_QEMU = r"""
import threading, time
open('/proc/self/comm', 'w').write('qemu-system-x86_64')
def spin(i):
    open(f'/proc/self/task/{threading.get_native_id()}/comm', 'w').write(f'CPU {i}/TCG')
    while True:
        t = time.monotonic() + 0.01
        while time.monotonic() < t:
            pass
        time.sleep(0.01)
for i in range(2):
    threading.Thread(target=spin, args=(i,), daemon=True).start()
time.sleep(30)
"""


class VcpuFeed(unittest.TestCase):
    """vcpu_feed.py: the guest's view of its vCPU threads' host wait."""

    def test_newest_boot_dir(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertIsNone(vcpu_feed.boot_dir(d))
            for b in ("boot1", "boot10", "boot2", "bootx"):
                os.mkdir(os.path.join(d, b))
            self.assertEqual(vcpu_feed.boot_dir(d), os.path.join(d, "boot10"))

    def test_write_replaces_the_line(self):
        with tempfile.TemporaryDirectory() as d:
            vcpu_feed.write_feed(d, vcpu_feed.feed_line(5, 2, 100, 7))
            vcpu_feed.write_feed(d, vcpu_feed.feed_line(6, 2, 200, 9))
            with open(os.path.join(d, "vcpu_feed")) as f:
                self.assertEqual(f.read(), "6 2 200 9\n")
            self.assertEqual(sorted(os.listdir(d)), ["vcpu_feed"])

    def test_feed_of_a_fake_qemu_grows(self):
        """End to end: the feed finds the QEMU below ROOT, its two vCPU
        threads, the newest boot directory, and its counters only grow."""
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "boot1"))
            q = subprocess.Popen([sys.executable, "-c", FAKE_QEMU])
            self.addCleanup(q.wait)
            self.addCleanup(q.kill)
            time.sleep(0.5)
            os.mkdir(os.path.join(d, "boot2"))
            fd = subprocess.Popen([sys.executable, os.path.join(HERE, "vcpu_feed.py"),
                                   str(os.getpid()), d, "0.02"])
            self.addCleanup(fd.wait)
            self.addCleanup(fd.terminate)
            path = os.path.join(d, "boot2", "vcpu_feed")
            seen = []
            end = time.monotonic() + 10
            while time.monotonic() < end and len(seen) < 2:
                time.sleep(0.3)
                try:
                    with open(path) as f:
                        w = [int(x) for x in f.read().split()]
                except (OSError, ValueError):
                    continue
                if not seen or w[0] > seen[-1][0]:
                    seen.append(w)
            self.assertEqual(len(seen), 2, "no feed written")
            (t0, n0, r0, w0), (t1, n1, r1, w1) = seen
            self.assertEqual((n0, n1), (2, 2))
            self.assertGreater(t1, t0)
            self.assertGreater(r1, r0)	# the threads ran meanwhile
            self.assertGreaterEqual(w1, w0)
            self.assertFalse(os.path.exists(os.path.join(d, "boot1", "vcpu_feed")))


if __name__ == "__main__":
    unittest.main()
