#!/usr/bin/env python3
"""Faults and load, through the command line (docs/RELIABILITY.md):

- SIGINT / SIGTERM in the middle of an eigensolve (Lanczos and ARPACK, on the C path and on PoCL;
  the signal is sent once the solver's own progress line shows on standard error, a
  pseudo-terminal): exit 130 / 143, the one-line message, and no output file: no temporary, no
  partial file, earlier outputs in the folder untouched, a folder diaseg created removed again.
  A second signal ends the run at once, also cleanly.
- A full disk (a 256 KiB tmpfs, or where mounting is not allowed a file-size limit that makes
  writes fail the same way): exit 1, the failing file named, nothing left behind.
- The overwrite policy: outputs are replaced atomically, an earlier run's outputs that this run
  does not write are removed, other files stay.
- Load: 8 runs at once (4 on the C path, 4 on PoCL) and 10 back to back all succeed with identical
  results for the same input and seed.

Usage: test_faults.py --diaseg PATH --data DIR
"""
import hashlib
import json
import os
import pty
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from checks import check, report, run_tool, test_args


def files(folder):
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else None


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# A run whose affinity is quick (320 x 240) and whose solve is long: 8 eigenpairs to 1e-6 (the
# smallest tolerance diaseg takes) with a 10-vector basis, and no practical iteration cap.
# Uninterrupted, this solve runs for over 10 minutes (Release build, C path, default solver, 2-core
# machine; measured once, not asserted), so a signal sent as soon as the solve reports progress
# lands inside it.
SOLVE_NEV = 8
LONG_SOLVE = ["--resize", "320x240", "--nev", str(SOLVE_NEV), "--ncv", "10", "--tol", "1e-6",
              "--max-iter", "1000000"]
# the terminal's progress line during the solve: "[4/5] solve  1234/~3000 products  5/8 converged"
PROGRESS = re.compile(r"\] solve  (\d+)(?:/~\d+)? products(?: \(estimating\))?  (\d+)/\d+ converged")


def run_to_solve(cmd, env):
    """Starts cmd with standard error on a pseudo-terminal: diaseg prints its solve progress
    ("[4/5] solve  N products ...") only to a terminal, from inside the eigensolver, as the solve
    starts and about every 0.5 s. Returns (process, the terminal's output so far as a list of bytes,
    the reader thread, an Event set once a progress line was read, the master fd)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                         env=env)
    os.close(slave)
    chunks, solving = [], threading.Event()

    def pump():  # drain the terminal, or diaseg blocks on a full one
        while True:
            try:
                b = os.read(master, 4096)
            except OSError:  # EIO: the run ended and closed the terminal
                break
            if not b:
                break
            chunks.append(b)
            if PROGRESS.search(b"".join(chunks[-2:]).decode("utf-8", "replace")):
                solving.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    return p, chunks, reader, solving, master


def interrupt(tmp, image, sig, solver, matvec, twice=False):
    """Signals a run while its eigensolver runs (the solve's own progress line on standard error
    is the cue), then checks the outcome: exit 128 + sig, the one-line message and no summary or
    warning (the solve did not end on its own), no file left, an earlier run's files untouched."""
    name = f"{signal.Signals(sig).name}{'x2' if twice else ''} {solver} {matvec}"
    tag = name.replace(" ", "_")
    fresh = os.path.join(tmp, "int_fresh_" + tag)          # diaseg creates it
    kept = os.path.join(tmp, "int_kept_" + tag)            # holds an earlier run's outputs
    os.mkdir(kept)
    for f, text in [("report.json", '{"earlier": true}\n'), ("notes.txt", "mine\n"),
                    ("eigvec_00.png", "earlier\n")]:
        with open(os.path.join(kept, f), "w") as fh:
            fh.write(text)
    before = {f: digest(os.path.join(kept, f)) for f in files(kept)}
    env = dict(os.environ)
    env.setdefault("DIASEG_CL_DEVICE", "0")
    for out in (fresh, kept):
        where = f"{name} ({'fresh' if out == fresh else 'existing'} folder)"
        p, chunks, reader, solving, master = run_to_solve(
            [DIASEG, "segment", image, *LONG_SOLVE, "--solver", solver, "--matvec", matvec,
             "-o", out], env)
        try:
            while not solving.wait(0.05) and p.poll() is None:
                pass
            if not solving.is_set():
                check(False, f"{where}: ended ({p.returncode}) before its solve reported progress")
                continue
            p.send_signal(sig)
            if twice:
                time.sleep(0.05)
                p.send_signal(sig)
            try:
                p.wait(timeout=300)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                check(False, f"{where}: no exit within 300 s of the signal")
                continue
        finally:
            reader.join(timeout=30)
            os.close(master)
        err = b"".join(chunks).decode("utf-8", "replace")
        lines = [ln.strip() for ln in re.split(r"[\r\n]+", err) if ln.strip()]
        said = [ln for ln in lines if ln.startswith("diaseg:") and
                not ln.startswith("diaseg: matvec:")]
        progress = [PROGRESS.search(ln) for ln in lines if PROGRESS.search(ln)]
        check(p.returncode == 128 + sig, f"{where}: exit {p.returncode}, expected {128 + sig}")
        check(bool(progress), f"{where}: no solve progress on the terminal: {err!r}")
        # the solve was interrupted, not finished: it printed no summary, no warning (a solve
        # that ends unconverged warns), and Lanczos' last report had fewer pairs than asked
        if not twice:
            msg = f"diaseg: error: interrupted by signal {sig}; no output was written"
            check(said == [msg], f"{where}: said {said}, expected only {msg!r}")
        else:
            check(all(ln.startswith("diaseg: error: interrupted") for ln in said),
                  f"{where}: said {said}")
        if progress and progress[-1].group(2) is not None:
            check(int(progress[-1].group(2)) < SOLVE_NEV,
                  f"{where}: the solve had converged before the signal: {progress[-1].group(0)}")
        if out == fresh:
            check(files(fresh) is None, f"{where}: left {files(fresh)} in a folder it created")
        else:
            after = {f: digest(os.path.join(kept, f)) for f in files(kept)}
            check(after == before, f"{where}: the folder changed: {files(kept)}")


def full_disk(tmp, image):
    mnt = os.path.join(tmp, "small_fs")
    os.mkdir(mnt)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt],
                             capture_output=True).returncode == 0
    out = os.path.join(mnt, "out")

    def limit():  # where mounting is not allowed: writes past 256 KiB fail (EFBIG)
        if not mounted:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))

    try:
        p = run_tool([DIASEG, "segment", image, "--resize", "240x160", "-k", "4", "--nev", "8",
                            "--matvec", "cpu", "-o", out, "-q"], capture_output=True, text=True,
                           preexec_fn=limit, timeout=300)
        how = "tmpfs" if mounted else "RLIMIT_FSIZE"
        check(p.returncode == 1, f"full disk ({how}): exit {p.returncode}: {p.stderr!r}")
        check("cannot write" in p.stderr and len(p.stderr.splitlines()) == 1,
              f"full disk ({how}): message {p.stderr!r}")
        check(files(out) is None, f"full disk ({how}): left {files(out)}")
        print(f"full disk via {how}: {p.stderr.strip()}")
    finally:
        if mounted:
            subprocess.run(["umount", mnt])


def overwrite(tmp, image):
    out = os.path.join(tmp, "over")
    os.mkdir(out)
    for mine in ("notes.txt", "eigvec_01_annotated.png"):  # the user's: never touched
        with open(os.path.join(out, mine), "w") as fh:
            fh.write("mine\n")
    run = lambda *a: run_tool([DIASEG, *a, "-o", out, "-q", "--matvec", "cpu"],
                              capture_output=True, text=True)
    p = run("segment", image, "--nev", "6", "-k", "3", "--pictures", "all")
    check(p.returncode == 0, f"overwrite: first run {p.stderr}")
    # every vector but the trivial first one (constant: not drawn)
    check(sum(f.startswith("eigvec_0") and len(f) == 13 for f in files(out)) == 5,
          f"overwrite: {files(out)}")
    p = run("eigs", image, "--nev", "3")
    # the default cue (contour) writes its contour map with the eigenvectors
    expect = ["contours.npy", "contours.png", "eigenvectors.npy",
              "eigvec_01.png", "eigvec_01_annotated.png", "eigvec_02.png", "notes.txt",
              "report.json"]
    check(p.returncode == 0 and files(out) == expect,
          f"overwrite: after eigs --nev 3 the folder holds {files(out)}, expected {expect}")
    check(np.load(os.path.join(out, "eigenvectors.npy")).shape[0] == 3, "overwrite: stale npy")


def load(tmp, image):
    def cmd(backend, i):
        return [DIASEG, "segment", image, "-k", "4", "--nev", "6", "--seed", "3", "--matvec",
                backend, "-o", os.path.join(tmp, f"load_{backend}_{i}"), "-q"]
    env = dict(os.environ)
    env.setdefault("DIASEG_CL_DEVICE", "0")
    procs = [subprocess.Popen(cmd(b, i), stderr=subprocess.PIPE, text=True, env=env)
             for b in ("cpu", "opencl") for i in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        check(p.returncode == 0, f"concurrent run: exit {p.returncode}: {err!r}")
    ref = {b: np.load(os.path.join(tmp, f"load_{b}_0", "eigenvectors.npy")) for b in ("cpu", "opencl")}
    labels = np.load(os.path.join(tmp, "load_cpu_0", "labels.npy"))
    for b in ("cpu", "opencl"):
        for i in range(1, 4):
            v = np.load(os.path.join(tmp, f"load_{b}_{i}", "eigenvectors.npy"))
            check(np.array_equal(v, ref[b]), f"concurrent {b} run {i}: eigenvectors differ")
        for i in range(4):
            lab = np.load(os.path.join(tmp, f"load_{b}_{i}", "labels.npy"))
            check(np.array_equal(lab, labels), f"concurrent {b} run {i}: labels differ")
    ev = [json.load(open(os.path.join(tmp, f"load_{b}_0", "report.json")))["eigenvalues"]
          for b in ("cpu", "opencl")]
    check(np.max(np.abs(np.array(ev[0]) - np.array(ev[1]))) <= 1e-5, "cpu vs opencl eigenvalues")
    # back to back
    first = None
    for i in range(10):
        out = os.path.join(tmp, "seq")
        p = run_tool(cmd("cpu", "seq")[:-3] + ["-o", out, "-q"], capture_output=True, text=True)
        check(p.returncode == 0, f"sequential run {i}: {p.stderr}")
        d = (digest(os.path.join(out, "eigenvectors.npy")), digest(os.path.join(out, "labels.npy")))
        first = first or d
        check(d == first, f"sequential run {i}: results differ")


def main():
    global DIASEG
    a = test_args()
    DIASEG = a.diaseg
    tmp = tempfile.mkdtemp(prefix="diaseg-faults-")
    try:
        coffee = os.path.join(a.data, "coffee.png")
        synthetic = os.path.join(a.data, "synthetic_regions.png")
        interrupt(tmp, coffee, signal.SIGINT, "lanczos", "cpu")
        interrupt(tmp, coffee, signal.SIGTERM, "arpack", "cpu")
        interrupt(tmp, coffee, signal.SIGINT, "arpack", "opencl")
        interrupt(tmp, coffee, signal.SIGTERM, "lanczos", "opencl")
        interrupt(tmp, coffee, signal.SIGINT, "lanczos", "cpu", twice=True)
        full_disk(tmp, coffee)
        overwrite(tmp, synthetic)
        load(tmp, synthetic)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report("test_faults")


if __name__ == "__main__":
    sys.exit(main())
