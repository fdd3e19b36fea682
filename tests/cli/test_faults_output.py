#!/usr/bin/env python3
"""Faults of the output stage, through the command line (docs/RELIABILITY.md). Every run segments a
64 x 48 image on the C path, well under a second.

- Signals during the commit: SIGTERM injected at every rename from the third on (strace), and two
  SIGTERMs from outside while a slowed commit runs (they land on a thread other than the
  committing one): exit 0 with the new run's complete set, no backup left; a commit that fails with
  the second signal pending rolls back: exit 143, the earlier set as it was.
- SIGKILL during the commit (strace): the next run removes the dead run's hidden files, found by
  the PID in their names, and leaves those of a live process and names that are not diaseg's.
- Standard output a closed pipe (--json -, devices) or a full device (devices, bench, --version,
  --json -): exit 1, one error line, no output file.
- SIGHUP (from outside, mid-solve), and SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGXCPU
  (strace, at the second staged file), with --json FILE: exit 128 + signal, the one-line message,
  nothing left beside FILE or in the folder. SIGHUP ignored on entry (nohup) stays ignored.
- A file-size limit, SIGXFSZ at its default action: exit 1, "File too large", nothing left.
- --json naming the input image (or a link to it), the output folder or one of the run's outputs:
  exit 2 before anything is created.

strace may be missing (or ptrace not allowed): its checks are then skipped, with a note.

Usage: test_faults_output.py --diaseg PATH --data DIR
"""
import hashlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from checks import check, report, test_args
from test_faults import LONG_SOLVE, run_to_solve

SMALL = ["--resize", "64x48", "--matvec", "cpu", "-q"]
RUN_A = ["segment", "--nev", "8", "-k", "5"]  # the earlier run in a folder
RUN_B = ["segment", "--nev", "6", "-k", "3"]  # the later one
RENAMES = "?rename,?renameat,?renameat2"  # whichever the C library uses
STRACE = None  # the strace command, where it works


def diaseg(args, **kw):
    kw.setdefault("capture_output", True)
    return subprocess.run([DIASEG, *args], text=True, timeout=300, **kw)


def snapshot(folder):
    """{name: sha256} of every file in folder, hidden ones included (None: no folder)."""
    if not os.path.isdir(folder):
        return None
    return {f: hashlib.sha256(open(os.path.join(folder, f), "rb").read()).hexdigest()
            for f in sorted(os.listdir(folder))}


def hidden(folder):
    return sorted(f for f in os.listdir(folder) if f.startswith(".")) if os.path.isdir(folder) else []


def one_error(err, *words):
    """One line from diaseg, an error with those words (bench --json - puts its table there too)."""
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("diaseg")]
    return len(lines) == 1 and lines[0].startswith("diaseg: error: ") and all(w in err for w in words)


class Sets:
    """The complete sets of RUN_A and RUN_B (report.json aside: it holds timings)."""

    def __init__(self, tmp, image):
        self.image = image
        self.ref = {}
        for name, args in (("A", RUN_A), ("B", RUN_B)):
            out = os.path.join(tmp, "ref_" + name)
            p = diaseg(args + [image, *SMALL, "-o", out])
            check(p.returncode == 0, f"reference run {name}: {p.returncode} {p.stderr!r}")
            self.ref[name] = snapshot(out)

    def which(self, folder):
        """'A' or 'B' where folder's visible files are exactly that run's, else None."""
        got = {f: d for f, d in (snapshot(folder) or {}).items() if not f.startswith(".")}
        for name, ref in self.ref.items():
            if set(got) == set(ref) and all(got[f] == ref[f] for f in ref if f != "report.json"):
                return name
        return None

    def fill(self, folder, name="A"):
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        p = diaseg((RUN_A if name == "A" else RUN_B) + [self.image, *SMALL, "-o", folder])
        check(p.returncode == 0, f"filling {folder}: {p.returncode} {p.stderr!r}")


def strace_cmd():
    """strace following every thread (LeakSanitizer cannot run under ptrace: off there)."""
    exe = shutil.which("strace")
    if exe and subprocess.run([exe, "-f", "-o", os.devnull, "true"],
                              capture_output=True).returncode == 0:
        asan = os.environ.get("ASAN_OPTIONS", "")
        return [exe, "-f", "-E", f"ASAN_OPTIONS={asan}{':' if asan else ''}detect_leaks=0"]
    print("note: strace is missing or cannot trace here: the injected-fault checks are skipped "
          "(apt-get install strace)")
    return None


def commit_signals(tmp, sets):
    """A signal during the commit: the folder ends with one run's complete set, no backups."""
    out = os.path.join(tmp, "commit_sig")
    # SIGTERM at the third rename and at every one after it: the first is the request to stop,
    # the next ones are second signals, which used to exit midway
    sets.fill(out)
    p = subprocess.run(STRACE + ["-o", os.devnull, "-e", f"inject={RENAMES}:signal=SIGTERM:when=3+",
                                 DIASEG, *RUN_B, sets.image, *SMALL, "-o", out],
                       capture_output=True, text=True, timeout=300)
    got = sets.which(out)
    check((p.returncode, got) in ((0, "B"), (143, "A")),
          f"SIGTERM at the renames: exit {p.returncode}, folder {got or snapshot(out)}: "
          f"{p.stderr!r}")
    check(hidden(out) == [], f"SIGTERM at the renames: left {hidden(out)}")
    # two SIGTERMs from outside while the commit keeps the earlier files (each link slowed to
    # 0.2 s): the committing thread blocks them, so another thread takes them
    for fail in (False, True):
        what = "two SIGTERMs during a commit" + (" that fails" if fail else "")
        sets.fill(out)
        log = os.path.join(tmp, "strace.log")
        inject = ["-e", f"trace=?link,?linkat,{RENAMES}",
                  "-e", "inject=?link,?linkat:delay_exit=200000"]
        if fail:  # the fifth rename fails: the commit rolls back
            inject += ["-e", f"inject={RENAMES}:error=EACCES:when=5"]
        p = subprocess.Popen(STRACE + ["-o", log, *inject, DIASEG, *RUN_B, sets.image, *SMALL,
                                       "-o", out], stderr=subprocess.PIPE, text=True)
        pid, t0 = None, time.time()
        while pid is None and p.poll() is None and time.time() - t0 < 60:
            time.sleep(0.02)
            m = re.search(r"^(\d+) +link", open(log).read() if os.path.exists(log) else "", re.M)
            pid = int(m.group(1)) if m else None
        if pid is None:
            p.kill()
            check(False, f"{what}: the commit never started: {p.communicate()[1]!r}")
            continue
        os.kill(pid, signal.SIGTERM)
        time.sleep(0.2)
        os.kill(pid, signal.SIGTERM)
        err = p.communicate(timeout=120)[1]
        got = sets.which(out)
        want = (143, "A") if fail else (0, "B")
        check((p.returncode, got) == want,
              f"{what}: exit {p.returncode}, folder {got or snapshot(out)}, expected {want}: {err!r}")
        check(hidden(out) == [], f"{what}: left {hidden(out)}")
        os.remove(log)


def killed_commit(tmp, sets):
    """SIGKILL during the commit leaves hidden files; the next run removes them."""
    out, jdir = os.path.join(tmp, "killed"), os.path.join(tmp, "killed_json")
    os.mkdir(jdir)
    jpath = os.path.join(jdir, "r.json")
    sets.fill(out)
    diaseg(RUN_A + [sets.image, *SMALL, "-o", out, "--json", jpath])
    p = subprocess.run(STRACE + ["-o", os.devnull, "-e", f"inject={RENAMES}:signal=SIGKILL:when=3",
                                 DIASEG, *RUN_B, sets.image, *SMALL, "-o", out, "--json", jpath],
                       capture_output=True, text=True, timeout=300)
    left = hidden(out) + hidden(jdir)
    check(p.returncode == -signal.SIGKILL and left,
          f"SIGKILL at the third rename: exit {p.returncode}, left {left} (the injection failed?)")
    # names diaseg must leave alone: a live process's staged file, and a name not of diaseg's
    mine = [f".labels.png.tmp-{os.getpid()}", ".notes.txt.tmp-4194303", ".r.json.old-1-0x"]
    for f in mine[:2]:
        open(os.path.join(out, f), "w").close()
    open(os.path.join(jdir, mine[2]), "w").close()
    p = diaseg(RUN_B + [sets.image, *SMALL, "-o", out, "--json", jpath])
    check(p.returncode == 0 and sets.which(out) == "B",
          f"the run after a SIGKILL: exit {p.returncode}, folder {snapshot(out)}: {p.stderr!r}")
    check(hidden(out) == sorted(mine[:2]) and hidden(jdir) == mine[2:],
          f"the run after a SIGKILL: left {hidden(out)} and {hidden(jdir)}, expected {mine}")


def closed_stdout(tmp, sets):
    """Standard output a pipe that nobody reads (`| true`), or a full device."""
    kept, fresh = os.path.join(tmp, "pipe_kept"), os.path.join(tmp, "pipe_fresh")
    sets.fill(kept)
    before = snapshot(kept)
    for out in (fresh, kept):
        r, w = os.pipe()
        os.close(r)
        p = diaseg(RUN_B + [sets.image, *SMALL, "--json", "-", "-o", out], stdout=w,
                   stderr=subprocess.PIPE, capture_output=False)
        os.close(w)
        what = f"--json - into a closed pipe, -o {os.path.basename(out)}"
        check(p.returncode == 1 and one_error(p.stderr, "Broken pipe"),
              f"{what}: exit {p.returncode}: {p.stderr!r}")
        check(snapshot(out) == (before if out == kept else None), f"{what}: left {snapshot(out)}")
    r, w = os.pipe()
    os.close(r)
    p = diaseg(["devices"], stdout=w, stderr=subprocess.PIPE, capture_output=False)
    os.close(w)
    check(p.returncode == 1 and one_error(p.stderr, "Broken pipe"),
          f"devices into a closed pipe: exit {p.returncode}: {p.stderr!r}")
    bench = ["bench", "--size", "64x48", "--matvec", "cpu", "--spmv-only", "--repeat", "1", "-q"]
    for args in (["devices"], ["devices", "--json", "-"], bench, bench + ["--json", "-"],
                 ["--version"], RUN_B + [sets.image, *SMALL, "--json", "-", "-o", fresh]):
        with open("/dev/full", "w") as full:
            p = diaseg(args, stdout=full, stderr=subprocess.PIPE, capture_output=False)
        check(p.returncode == 1 and one_error(p.stderr, "No space left on device"),
              f"{' '.join(args[:4])} >/dev/full: exit {p.returncode}: {p.stderr!r}")
    check(snapshot(fresh) is None, f"--json - >/dev/full: left {snapshot(fresh)}")


def more_signals(tmp, sets):
    """The signals that end a process, mid-run with --json FILE: handled like SIGTERM."""
    jdir = os.path.join(tmp, "sig_json")
    os.mkdir(jdir)
    jpath = os.path.join(jdir, "r.json")

    def outcome(what, code, err, sig, out, before):
        msg = f"diaseg: error: interrupted by signal {int(sig)}; no output was written"
        lines = [ln.strip() for ln in re.split(r"[\r\n]+", err)
                 if ln.strip().startswith("diaseg:") and not ln.strip().startswith("diaseg: matvec:")]
        check(code == 128 + sig, f"{what}: exit {code}, expected {128 + sig}: {err!r}")
        check(lines == [msg], f"{what}: said {lines}")
        check(snapshot(out) == before, f"{what}: the folder holds {snapshot(out)}")
        check(os.listdir(jdir) == [], f"{what}: left {os.listdir(jdir)} beside --json FILE")

    # SIGHUP from outside while the solve runs (its progress on a terminal is the cue)
    fresh = os.path.join(tmp, "hup_fresh")
    p, chunks, reader, solving, master = run_to_solve(
        [DIASEG, "segment", sets.image, *LONG_SOLVE, "--matvec", "cpu", "--json", jpath, "-o",
         fresh], dict(os.environ))
    try:
        solving.wait(120)
        p.send_signal(signal.SIGHUP)
        p.wait(timeout=300)
    finally:
        reader.join(timeout=30)
        os.close(master)
    outcome("SIGHUP mid-solve", p.returncode, b"".join(chunks).decode("utf-8", "replace"),
            signal.SIGHUP, fresh, None)
    if not STRACE:
        return
    # the rest at the second staged file's fsync, into a fresh folder and one with outputs
    kept = os.path.join(tmp, "sig_kept")
    sets.fill(kept)
    before = snapshot(kept)
    for sig in (signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGVTALRM,
                signal.SIGXCPU, signal.SIGHUP, signal.SIGTERM):
        for out, was in ((fresh, None), (kept, before)):
            p = subprocess.run(STRACE + ["-o", os.devnull, "-e",
                                         f"inject=fsync:signal={sig.name}:when=2", DIASEG,
                                         *RUN_B, sets.image, *SMALL, "--json", jpath, "-o", out],
                               capture_output=True, text=True, timeout=300)
            outcome(f"{sig.name} at a staged file (-o {os.path.basename(out)})", p.returncode,
                    p.stderr, sig, out, was)
    # nohup: SIGHUP ignored on entry stays ignored, the run completes
    p = subprocess.run(STRACE + ["-o", os.devnull, "-e", "inject=fsync:signal=SIGHUP:when=2",
                                 DIASEG, *RUN_B, sets.image, *SMALL, "-o", fresh],
                       capture_output=True, text=True, timeout=300,
                       preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    check(p.returncode == 0 and sets.which(fresh) == "B",
          f"SIGHUP under nohup: exit {p.returncode}, {snapshot(fresh)}: {p.stderr!r}")


def file_size_limit(tmp, sets):
    """ulimit -f 32 with SIGXFSZ at its default action (it used to kill the run)."""
    kept, fresh = os.path.join(tmp, "fsize_kept"), os.path.join(tmp, "fsize_fresh")
    sets.fill(kept)
    before = snapshot(kept)
    for out, was in ((fresh, None), (kept, before)):
        p = diaseg(RUN_B + [sets.image, *SMALL, "-o", out],
                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (32768, 32768)))
        what = f"ulimit -f 32, -o {os.path.basename(out)}"
        check(p.returncode == 1 and one_error(p.stderr, "File too large"),
              f"{what}: exit {p.returncode}: {p.stderr!r}")
        check(snapshot(out) == was, f"{what}: the folder holds {snapshot(out)}")


def json_collisions(tmp, sets):
    """--json naming what the run reads or writes: exit 2, nothing created or changed."""
    image = os.path.join(tmp, "in.png")
    shutil.copy(sets.image, image)
    link = os.path.join(tmp, "in_link.png")
    os.symlink(image, link)
    kept, fresh = os.path.join(tmp, "col_kept"), os.path.join(tmp, "col_fresh")
    sets.fill(kept)
    digest = lambda: hashlib.sha256(open(image, "rb").read()).hexdigest()
    before, image_before = snapshot(kept), digest()
    cases = [(RUN_B, image, fresh), (RUN_B, link, fresh),
             (RUN_B, os.path.join(fresh, "labels.png"), fresh),
             (RUN_B, os.path.join(kept, "labels.png"), kept),
             (RUN_B, os.path.join(kept, "..", os.path.basename(kept), "eigvec_05.png"), kept),
             (["eigs", "--nev", "3"], os.path.join(kept, "labels.npy"), kept), (RUN_B, fresh, fresh)]
    for args, jpath, out in cases:
        shutil.copy(sets.image, image)  # as it was, whatever an earlier case did
        p = diaseg(args + [image, *SMALL, "--json", jpath, "-o", out])
        what = f"{args[0]} --json {os.path.relpath(jpath, tmp)} -o {os.path.basename(out)}"
        check(p.returncode == 2 and one_error(p.stderr, "--json"),
              f"{what}: exit {p.returncode}: {p.stderr!r}")
        check(snapshot(out) == (before if out == kept else None), f"{what}: the folder changed")
        check(digest() == image_before and os.path.islink(link),
              f"{what}: the input image changed")
    p = diaseg(RUN_A + [image, *SMALL, "--json", os.path.join(kept, "report.json"), "-o", kept])
    check(p.returncode == 0, f"--json OUT/report.json (the same report): {p.returncode} {p.stderr!r}")


def main():
    global DIASEG, STRACE
    a = test_args()
    DIASEG = a.diaseg
    # OpenMP's idle threads sleep instead of spinning: spinning, they slow a traced run from 0.1 s
    # to 15 s, and any run on a loaded machine; the threads are there all the same
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    STRACE = strace_cmd()
    tmp = tempfile.mkdtemp(prefix="diaseg-faults-output-")
    try:
        sets = Sets(tmp, os.path.join(a.data, "coffee.png"))
        if STRACE:
            commit_signals(tmp, sets)
            killed_commit(tmp, sets)
        closed_stdout(tmp, sets)
        more_signals(tmp, sets)
        file_size_limit(tmp, sets)
        json_collisions(tmp, sets)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report("test_faults_output")


if __name__ == "__main__":
    sys.exit(main())
