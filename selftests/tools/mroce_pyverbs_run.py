#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's pyverbs tests (Debian's python3-pyverbs ships them in
/usr/share/doc/rdma-core/tests, partly gzipped) against one device and print
one line per test:

    ok<TAB>test id
    skip<TAB>test id<TAB>reason
    fail<TAB>test id<TAB>last line of the failure

Usage: mroce_pyverbs_run.py TESTDIR DEVICE GID_INDEX NAME...
TESTDIR is an unpacked copy of the tests directory; NAME is a test module,
class or method relative to it (e.g. test_qp.QPTest). Each test gets
PER_TEST seconds; one that overruns is reported as a failure. Tests that
take SLOW seconds or more are also named, "#slow<TAB>test id<TAB>seconds".
"""
import os
import signal
import sys
import time
import traceback
import unittest
from importlib.machinery import SourceFileLoader

PER_TEST = 60
SLOW = 5         # seconds: tests at least this slow are named (CI cost)


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout(f"no result after {PER_TEST}s")


class LineResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.counts = {"ok": 0, "skip": 0, "fail": 0}

    def emit(self, kind, test, why=""):
        self.counts[kind] += 1
        name = test.id().removeprefix("tests.")
        print(f"{kind}\t{name}" + (f"\t{why}" if why else ""), flush=True)

    def startTest(self, test):
        super().startTest(test)
        self.t0 = time.monotonic()
        signal.alarm(PER_TEST)

    def stopTest(self, test):
        signal.alarm(0)
        secs = time.monotonic() - self.t0
        if secs >= SLOW:
            name = test.id().removeprefix("tests.")
            print(f"#slow\t{name}\t{secs:.0f}", flush=True)
        super().stopTest(test)

    def addSuccess(self, test):
        self.emit("ok", test)

    def addSkip(self, test, reason):
        self.emit("skip", test, reason)

    def addExpectedFailure(self, test, err):
        self.emit("ok", test)

    def addUnexpectedSuccess(self, test):
        self.emit("fail", test, "unexpected success")

    def _failed(self, test, err):
        last = traceback.format_exception_only(err[0], err[1])[-1].strip()
        self.emit("fail", test, last.replace("\t", " ")[:300])

    def addFailure(self, test, err):
        self._failed(test, err)

    def addError(self, test, err):
        self._failed(test, err)


def main():
    testdir, dev, gid, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    sys.path.insert(0, testdir)
    from args_parser import parser  # noqa: E402  (rdma-core's, in testdir)

    sys.argv = [sys.argv[0], "--dev", dev, "--gid", gid]
    parser.parse_args()
    tests = SourceFileLoader("tests", os.path.join(testdir, "__init__.py")).load_module()
    suite = unittest.TestLoader().loadTestsFromNames(names, tests)
    signal.signal(signal.SIGALRM, on_alarm)
    result = LineResult()
    suite.run(result)
    c = result.counts
    print(f"# {c['ok']} passed, {c['skip']} skipped, {c['fail']} failed", flush=True)
    return 1 if c["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
