#!/usr/bin/env python3
"""What float16 or bfloat16 matrix values would do to the eigenpairs (issue 15, "fewer bytes").

    python3 app/bench/low_precision.py MATRIX

MATRIX is a `diaseg affinity IMG --export DIR` folder. The script rounds N's float32 values to
float16 and to bfloat16 (round to nearest even), solves each (SciPy's eigsh in float64, nev 16,
tol 1e-10, diaseg's start vector) and measures each pair's relative residual against the float32
matrix, |N u - lambda u| / |lambda| in float64: what a solver whose products read the rounded
values could at best return, whatever its tolerance. It times nothing. Results: docs/PERFORMANCE.md,
"Coarse-to-fine starts and the C block product".
"""
import argparse
import os
import sys

import numpy as np
import scipy.sparse.linalg as sla

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "cli"))
import peers  # noqa: E402


def bfloat16(x):
    """float32 -> bfloat16 (round to nearest even) -> float32."""
    b = np.asarray(x, np.float32).view(np.uint32)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return b.view(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("matrix")
    ap.add_argument("--nev", type=int, default=16)
    a = ap.parse_args()
    _, A, _, _ = peers.load_matrix(a.matrix)
    A = A.tocsr().astype(np.float64)  # the float32 values, exactly
    v0 = peers.start_vector(A.shape[0])
    rounding = {"float32": lambda d: d,
                "float16": lambda d: d.astype(np.float16).astype(np.float32),
                "bfloat16": bfloat16}
    ref = None
    for name, conv in rounding.items():
        B = A.copy()
        B.data = conv(A.data.astype(np.float32)).astype(np.float64)
        rel = np.abs(B.data - A.data) / np.maximum(np.abs(A.data), 1e-30)
        w, U = sla.eigsh(B, k=a.nev, which="LA", tol=1e-10, v0=v0, ncv=max(2 * a.nev + 1, 40))
        order = np.argsort(-w)
        w, U = w[order], U[:, order]
        R = np.linalg.norm(A @ U - U * w, axis=0) / np.abs(w)
        ref = w if ref is None else ref
        print(f"{name}: values' relative error max {rel.max():.2e}, median {np.median(rel):.2e}; "
              f"residual against the float32 N: max {R.max():.2e}, median {np.median(R):.2e}; "
              f"eigenvalues' difference from float32's: max {np.abs(w - ref).max():.2e}")


if __name__ == "__main__":
    main()
