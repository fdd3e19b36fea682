#!/usr/bin/env python3
"""The tests' own helper run_tool (checks.py): a run that failed only because LeakSanitizer's
tracer crashed at exit runs once more; a leak report, a second crash or any other failure comes
back as it was, and so does any run with a sanitizer's report. A fake program counts its runs in a file and prints what it is told to.

Usage: test_checks.py"""
import os
import sys
import tempfile

from checks import LSAN_TRACER_CRASH, check, report, run_tool

CRASH = f"Tracer caught signal 11: addr=0x0 pc=0x4f5070 sp=0x7efd9a5dad30\n==1=={LSAN_TRACER_CRASH}.\n"
LEAK = "==1==ERROR: LeakSanitizer: detected memory leaks\n"
ASAN = "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011\n"
UBSAN = "hierarchy.c:431:5: runtime error: signed integer overflow\n"


def fake(tmp, name, outcomes):
    """A program whose i-th run prints outcomes[i]'s message on standard error and exits with its
    status (the last outcome repeats); its runs are counted in tmp/name.count."""
    count = os.path.join(tmp, name + ".count")
    script = (
        "import os, sys\n"
        f"c = {count!r}\n"
        "n = int(open(c).read()) if os.path.exists(c) else 0\n"
        "open(c, 'w').write(str(n + 1))\n"
        f"o = {outcomes!r}\n"
        "msg, rc = o[min(n, len(o) - 1)]\n"
        "sys.stderr.write(msg)\n"
        "sys.exit(rc)\n")
    return [sys.executable, "-c", script], count


def runs(count):
    return int(open(count).read()) if os.path.exists(count) else 0


def main():
    with tempfile.TemporaryDirectory(prefix="diaseg-checks-") as tmp:
        cases = [  # name, outcomes, text, capture, expected exit, expected runs
            ("crash_then_ok", [(CRASH, 1), ("", 0)], True, True, 0, 2),
            ("crash_then_ok_bytes", [(CRASH, 1), ("", 0)], False, True, 0, 2),
            ("crash_twice", [(CRASH, 1)], True, True, 1, 2),
            ("leak", [(LEAK + CRASH, 23)], True, True, 23, 1),
            ("leak_alone", [(LEAK, 23), ("", 0)], True, True, 23, 1),
            ("asan_then_crash", [(ASAN + CRASH, 1), ("", 0)], True, True, 1, 1),
            ("ubsan_then_crash", [(UBSAN + CRASH, 1), ("", 0)], True, True, 1, 1),
            ("other_failure", [("diaseg: error: no such file\n", 2), ("", 0)], True, True, 2, 1),
            ("crash_not_captured", [(CRASH, 1), ("", 0)], True, False, 1, 1),
            ("ok", [("", 0)], True, True, 0, 1),
        ]
        for name, outcomes, text, capture, want_rc, want_runs in cases:
            cmd, count = fake(tmp, name, outcomes)
            kw = {"text": text}
            if capture:
                kw["capture_output"] = True
            else:
                kw["stderr"] = open(os.devnull, "w")
            p = run_tool(cmd, **kw)
            check(p.returncode == want_rc and runs(count) == want_runs,
                  f"{name}: exit {p.returncode} after {runs(count)} runs, expected {want_rc} "
                  f"after {want_runs}")
    return report("test_checks")


if __name__ == "__main__":
    sys.exit(main())
