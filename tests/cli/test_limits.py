"""Resource limits set before diaseg starts: an address-space limit (ulimit -v) too small for the
BLAS library that the solvers load. OpenBLAS reserves its buffers in a load-time constructor and
retries that mmap forever when the limit refuses it: linked into the program, it hung every
command before main, `diaseg --version` included. The solvers now load it on first use, after a
probe of the address space. Every run here has a time limit: a hang fails the test."""
import os
import resource
import subprocess
import sys
import tempfile

from checks import check, report, test_args


def limited(args, limit_bytes, timeout=60):
    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, preexec_fn=preexec)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timed out"


def main():
    opts = test_args()
    d, image = opts.diaseg, os.path.join(opts.data, "coffee.png")
    mib = 1 << 20
    with tempfile.TemporaryDirectory(prefix="diaseg-limits-") as tmp:
        code, out, err = limited([d, "--version"], 300 * mib, timeout=30)
        check(code == 0 and out.startswith("diaseg "), f"--version under 300 MB: {code} {err!r}")
        code, out, err = limited([d, "devices"], 300 * mib, timeout=60)
        check(code is not None, f"devices under 300 MB hung: {err!r}")
        for limit in (300, 400):
            o = os.path.join(tmp, f"out{limit}")
            code, _, err = limited([d, "segment", image, "--resize", "64x48", "--matvec", "cpu",
                                    "-q", "-o", o], limit * mib)
            lines = err.strip().splitlines()
            check(code == 1 and len(lines) == 1 and "address-space limit" in err and
                  "ulimit -v" in err, f"segment under {limit} MB: exit {code}, {err!r}")
            check(not os.path.exists(o), f"segment under {limit} MB left {o}")
        # with room (the BLAS maps 128 MiB per core at start), the same run works
        room = (128 * os.cpu_count() + 1536) * mib
        o = os.path.join(tmp, "out_ok")
        code, _, err = limited([d, "segment", image, "--resize", "64x48", "--matvec", "cpu",
                                "-q", "-o", o], room)
        check(code == 0 and os.path.exists(os.path.join(o, "labels.npy")),
              f"segment under {room // mib} MiB: exit {code}, {err!r}")
    return report("test_limits")


if __name__ == "__main__":
    sys.exit(main())
