"""The Python tests' shared checks: check() records a failure and goes on, so that one run lists
every check that failed; report() prints the verdict and gives the exit status."""
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
