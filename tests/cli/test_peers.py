#!/usr/bin/env python3
"""SciPy's eigsh on diaseg's exported matrix agrees with diaseg's eigenvalues (a correctness check
of the export and of the solve; no timing is asserted), within peers.py's residual bound: pair k
agrees when |lambda_k - lambda_k(diaseg)| <= residual_k + residual_k(diaseg) + the float32 slack.
The same check then rejects a report whose third eigenvalue was moved by 1e-4 (over ten times
the bound), and --agree still overrides the bound.

Usage: test_peers.py --diaseg PATH --image IMAGE
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from checks import check, report


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--diaseg", required=True)
    ap.add_argument("--image", required=True)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    # a correctness test, not a benchmark: one OpenMP thread for SciPy's BLAS keeps the three
    # small solves quick on a shared machine, where spinning threads can take seconds each
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="diaseg-peers-") as tmp:
        m, e = os.path.join(tmp, "m"), os.path.join(tmp, "e")
        for args in (["affinity", a.image, "--resize", "96x64", "--export", m, "-q"],
                     ["eigs", a.image, "--resize", "96x64", "--nev", "6", "--tol", "1e-6",
                      "--keep-specks", "-o", e, "-q"]):
            subprocess.run([a.diaseg] + args, check=True)

        def peers(rep, out, *extra):
            p = subprocess.run([sys.executable, os.path.join(here, "peers.py"), m, "--nev", "6",
                                "--tol", "1e-6", "--report", rep, "--repeat", "1",
                                "--spmv-repeat", "2", "--json", out, *extra],
                               capture_output=True, text=True, env=env)
            print(p.stdout, end="")
            res = json.load(open(out)) if os.path.exists(out) else {"peers": []}
            return p, res

        # the default bound: diaseg's residual + the peer's + the float32 slack, per pair
        rep = os.path.join(e, "report.json")
        diaseg = json.load(open(rep))
        p, res = peers(rep, os.path.join(tmp, "peers.json"))
        meta, agreement = res.get("matrix", {}), res.get("agreement", {})
        check(p.returncode == 0, f"peers.py: exit {p.returncode}: {p.stderr[-2000:]}")
        check(meta.get("n") == 96 * 64 and meta.get("ndiag") == 81, f"matrix {meta}")
        check(len(res["peers"]) == 1 and all(q["agrees"] for q in res["peers"]), "peers agree")
        slack = agreement.get("float32_slack", -1)
        check(0 < slack < 1e-5, f"float32 slack {slack}")
        check("residual_k(diaseg)" in p.stdout and "float32 slack" in p.stdout,
              "the bound is printed")
        for q in res["peers"]:
            k = len(diaseg["eigenvalues"])
            bounds, diffs = q.get("agreement_bounds", []), q.get("eigenvalue_differences", [])
            check(len(bounds) == k and len(diffs) == k and len(q.get("residuals", [])) == k,
                  f"{q['peer']}: {len(bounds)} bounds for {k} pairs")
            check(max(q.get("residuals", [1])) <= 1e-5, f"{q['peer']}: residuals {q.get('residuals')}")
            for i in range(min(k, len(bounds), len(diffs))):
                want = diaseg["residuals"][i] + q["residuals"][i] + slack
                check(abs(bounds[i] - want) <= 1e-12 and diffs[i] <= bounds[i],
                      f"{q['peer']} pair {i + 1}: difference {diffs[i]}, bound {bounds[i]} ({want})")

        # a disagreement is detected: diaseg's third eigenvalue moved by 1e-4
        bad = dict(diaseg, eigenvalues=list(diaseg["eigenvalues"]))
        bad["eigenvalues"][2] += 1e-4
        bad_rep = os.path.join(tmp, "bad_report.json")
        with open(bad_rep, "w") as f:
            json.dump(bad, f)
        p, res = peers(bad_rep, os.path.join(tmp, "bad.json"))
        check(p.returncode == 1 and "DISAGREES" in p.stdout and
              not any(q["agrees"] for q in res["peers"]),
              f"a perturbed eigenvalue: exit {p.returncode}, {p.stdout[-500:]}")

        # --agree overrides the bound, and says so
        p, res = peers(bad_rep, os.path.join(tmp, "override.json"), "--agree", "1e-3")
        check(p.returncode == 0 and res.get("agreement", {}).get("bound") == 1e-3 and
              "(--agree)" in p.stdout, f"--agree 1e-3: exit {p.returncode}, {res.get('agreement')}")
    return report("test_peers")


if __name__ == "__main__":
    sys.exit(main())
