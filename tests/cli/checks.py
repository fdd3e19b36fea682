"""The Python tests' shared pieces: their command line (--diaseg PATH --data DIR); check(),
which records a failure and goes on, so that one run lists every check that failed; and report(),
which prints the verdict and gives the exit status."""
import argparse
import os
import sys

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAILED:", what, file=sys.stderr)
    return cond


def report(name):
    if FAILURES:
        print(f"{name}: {len(FAILURES)} checks FAILED", file=sys.stderr)
        return 1
    print(f"{name}: all checks passed")
    return 0


def test_args():
    """--diaseg (made absolute: the tests change folders) and --data."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--diaseg", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    a.diaseg = os.path.abspath(a.diaseg)
    return a
