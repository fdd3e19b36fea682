"""The Python tests' shared pieces: their command line (--diaseg PATH --data DIR); check(),
which records a failure and goes on, so that one run lists every check that failed; report(),
which prints the verdict and gives the exit status; and run_tool(), subprocess.run for the
program under test."""
import argparse
import os
import subprocess
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


# What LeakSanitizer prints when its own stop-the-world tracer crashes as the process exits
# ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error"): an intermittent
# fault of the sanitizer's runtime while it suspends the threads left at exit (PoCL's, OpenMP's),
# seen on CI machines and in containers (google/sanitizers#1353), not a report about the program.
LSAN_TRACER_CRASH = "LeakSanitizer has encountered a fatal error"
# the sanitizers' reports about the program: a run that printed one is never run again
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def tracer_crashed(p):
    """Whether the finished process p (its standard error captured) failed only because
    LeakSanitizer's tracer crashed: a sanitizer's report (a leak, an AddressSanitizer error, an
    UBSan runtime error), or no such message, is not that."""
    err = p.stderr if isinstance(p.stderr, str) else (p.stderr or b"").decode(errors="replace")
    return (p.returncode != 0 and LSAN_TRACER_CRASH in err and
            not any(r in err for r in SANITIZER_REPORTS))


def run_tool(cmd, **kw):
    """subprocess.run(cmd, **kw), run once more where the sanitized program's exit tripped
    LeakSanitizer's tracer (tracer_crashed), with a note on standard error; every other result,
    a second tracer crash and any leak report included, is returned as it came."""
    p = subprocess.run(cmd, **kw)
    if kw.get("capture_output") and tracer_crashed(p):
        what = " ".join([os.path.basename(str(cmd[0]))] + [str(c) for c in cmd[1:3]])
        print(f"note: LeakSanitizer's tracer crashed at exit, running once more: {what[:80]}",
              file=sys.stderr)
        p = subprocess.run(cmd, **kw)
    return p
