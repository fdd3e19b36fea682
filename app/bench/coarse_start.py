#!/usr/bin/env python3
"""Coarse-to-fine starts for the block solver, measured in a NumPy model of it (issue 15).

    python3 app/bench/coarse_start.py FINE COARSE [--degree 32] [--fine-degrees 12,16,24,32]

FINE and COARSE are `diaseg affinity IMG [--resize WxH] --export DIR` folders of the same image
at two sizes. The model is eigensolver/chfsi.c's iteration in float32 with float64 Gram and
Rayleigh-Ritz matrices (block 24, nev 16, tol 1e-3, filter on [-1, smallest Ritz value], pairs
converged from the top down by measured residuals); it counts vector products, it times nothing.

It solves FINE from diaseg's random start block, then COARSE the same way, lifts the coarse block
to FINE (v = u / D^1/2 on the coarse grid, bilinear to the fine grid, times the fine D^1/2) and
solves FINE from it at each --fine-degrees. "fine-equivalent" adds the coarse products scaled by
n_coarse / n_fine (a coarse product reads that much less). Results: docs/PERFORMANCE.md, "The
block solver".
"""
import argparse
import os
import sys

import numpy as np
from scipy import ndimage

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "cli"))
import peers  # noqa: E402

NEV, TOL, BLOCK = 16, 1e-3, 24


def load(folder):
    meta, A, _, _ = peers.load_matrix(folder)
    return meta, A.astype(np.float32).tocsr(), np.load(os.path.join(folder, "sqrt_degree.npy"))


def orth(Y):
    for _ in range(2):
        R = np.linalg.cholesky(Y.T.astype(np.float64) @ Y).T
        Y = (Y @ np.linalg.inv(R)).astype(np.float32)
    return Y


def rayleigh_ritz(A, Y):
    AY = A @ Y
    H = Y.T.astype(np.float64) @ AY
    th, Q = np.linalg.eigh((H + H.T) / 2)
    th, Q = th[::-1], Q[:, ::-1]
    return (Y @ Q).astype(np.float32), (AY @ Q).astype(np.float32), th


def chfsi(A, X, degree, lo=-1.0, max_rounds=200):
    """Rounds, vector products, the block and its Ritz values at convergence."""
    b = X.shape[1]
    X, AX, th = rayleigh_ritz(A, orth(X))
    products = b
    for rounds in range(max_rounds):
        R = np.linalg.norm(AX - X * th.astype(np.float32), axis=0)
        top = 0
        while top < NEV and R[top] <= TOL * abs(th[top]):
            top += 1
        if top >= NEV:
            break
        c = th[-1]
        cen, e = (c + lo) / 2, (c - lo) / 2
        Y0, Y1 = X, (AX - cen * X) / e
        for _ in range(degree - 1):
            Y0, Y1 = Y1, (2 * (A @ Y1 - cen * Y1) / e - Y0).astype(np.float32)
            products += b
        X, AX, th = rayleigh_ritz(A, orth(Y1))
        products += b
    return rounds, products, X, th


def start_block(n, seed=1):
    X = np.random.default_rng(seed).standard_normal((n, BLOCK)).astype(np.float32)
    X[:, 0] = peers.start_vector(n)
    return X


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("fine")
    ap.add_argument("coarse")
    ap.add_argument("--degree", type=int, default=32, help="the filter's degree (default 32)")
    ap.add_argument("--fine-degrees", default="12,16,24,32")
    a = ap.parse_args()
    mf, Af, sdf = load(a.fine)
    mc, Ac, sdc = load(a.coarse)
    nf, nc = Af.shape[0], Ac.shape[0]
    r, p, _, th = chfsi(Af, start_block(nf), a.degree)
    print(f"fine {mf['width']}x{mf['height']} from the random block: {r} rounds, {p} products, "
          f"16th Ritz value {th[NEV - 1]:.6f}")
    rc, pc, Xc, _ = chfsi(Ac, start_block(nc), a.degree)
    scale = nc / nf
    print(f"coarse {mc['width']}x{mc['height']}: {rc} rounds, {pc} products "
          f"({pc * scale:.0f} fine-equivalent)")
    hc, wc, hf, wf = mc["height"], mc["width"], mf["height"], mf["width"]
    V = (Xc / sdc[:, None]).reshape(hc, wc, BLOCK)
    yy, xx = np.meshgrid(np.linspace(0, hc - 1, hf), np.linspace(0, wc - 1, wf), indexing="ij")
    lifted = np.stack([ndimage.map_coordinates(V[:, :, j], [yy, xx], order=1)
                       for j in range(BLOCK)], -1).reshape(nf, BLOCK)
    lifted = (lifted * sdf[:, None]).astype(np.float32)
    for d in (int(x) for x in a.fine_degrees.split(",")):
        r, p, _, th = chfsi(Af, lifted.copy(), d)
        print(f"fine from the lifted block, degree {d}: {r} rounds, {p} products, 16th Ritz value "
              f"{th[NEV - 1]:.6f}; with the coarse solve {p + pc * scale:.0f} fine-equivalent")


if __name__ == "__main__":
    main()
