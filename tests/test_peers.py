#!/usr/bin/env python3
"""SciPy's eigsh on diaseg's exported matrix agrees with diaseg's eigenvalues (a correctness check
of the export and of the solve; no timing is asserted).

Usage: test_peers.py --diaseg PATH --image IMAGE
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--diaseg", required=True)
    ap.add_argument("--image", required=True)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory(prefix="diaseg-peers-") as tmp:
        m, e, out = os.path.join(tmp, "m"), os.path.join(tmp, "e"), os.path.join(tmp, "peers.json")
        for args in (["affinity", a.image, "--resize", "96x64", "--export", m, "-q"],
                     ["eigs", a.image, "--resize", "96x64", "--nev", "6", "--tol", "1e-6",
                      "--keep-specks", "-o", e, "-q"]):
            subprocess.run([a.diaseg] + args, check=True)
        p = subprocess.run([sys.executable, os.path.join(here, "peers.py"), m, "--nev", "6",
                            "--tol", "1e-6", "--agree", "1e-5", "--report",
                            os.path.join(e, "report.json"), "--repeat", "1", "--spmv-repeat", "2",
                            "--json", out])
        res = json.load(open(out))
        meta = res["matrix"]
        ok = p.returncode == 0 and meta["n"] == 96 * 64 and meta["ndiag"] == 81
        ok = ok and all(peer["agrees"] for peer in res["peers"]) and len(res["peers"]) == 1
        print("test_peers:", "passed" if ok else "FAILED")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
