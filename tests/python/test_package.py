"""The Python package (app/python/diaseg) over libdiaseg.so: numbers, errors, the GIL, OpenCL.

Run as ctest does (tests/CMakeLists.txt, test_python):
  DIASEG_LIBRARY=build/app/libdiaseg.so PYTHONPATH=app/python \
    python3 -m pytest -q -p no:cacheprovider tests/python --diaseg build/app/diaseg --data data
or against an installed package (tests/run_all.sh, step 4): without DIASEG_LIBRARY/PYTHONPATH.
"""
import copy
import gc
import json
import os
import pickle
import signal
import subprocess
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import diaseg


# ---- helpers -----------------------------------------------------------------------------------

def regions(h=64, w=96, seed=0):
    """A 4-region image (flat levels in quadrants + mild noise) as uint8, and its truth."""
    truth = np.zeros((h, w), np.int32)
    truth[: h // 2, w // 2:] = 1
    truth[h // 2:, : w // 2] = 2
    truth[h // 2:, w // 2:] = 3
    levels = np.array([0.15, 0.4, 0.65, 0.9])
    rng = np.random.default_rng(seed)
    img = levels[truth] + rng.normal(0.0, 0.02, truth.shape)
    return np.clip(np.round(img * 255), 0, 255).astype(np.uint8), truth


def adjusted_rand_index(a, b):
    """Hubert and Arabie's adjusted Rand index of two labelings."""
    _, a = np.unique(np.ravel(a), return_inverse=True)
    _, b = np.unique(np.ravel(b), return_inverse=True)
    table = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(table, (a, b), 1)
    pairs = lambda x: float((x * (x - 1) / 2).sum())  # noqa: E731
    index, rows, cols = pairs(table), pairs(table.sum(1)), pairs(table.sum(0))
    expected = rows * cols / pairs(np.array([a.size]))
    return (index - expected) / ((rows + cols) / 2 - expected)


def write_pgm(path, img):
    h, w = img.shape
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h))
        f.write(np.ascontiguousarray(img, np.uint8).tobytes())


def dia_rows_to_csr(offsets, diagonals, n):
    """diaseg's layout (diagonals[d, row] = N[row, row + offsets[d]]) as CSR (tests/cli/peers.py)."""
    rows, cols, vals = [], [], []
    r = np.arange(n)
    for d, off in enumerate(offsets):
        c = r + int(off)
        inside = (c >= 0) & (c < n)
        rows.append(r[inside])
        cols.append(c[inside])
        vals.append(diagonals[d, :n][inside])
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n))


@pytest.fixture(scope="module")
def four():
    img, truth = regions()
    return img, truth, diaseg.segment(img, k=4, matvec="cpu")


# ---- (1) a 4-region image ----------------------------------------------------------------------

def test_four_regions(four):
    img, truth, r = four
    h, w = img.shape
    assert r.labels.dtype == np.int32 and r.labels.shape == (h, w)
    assert adjusted_rand_index(r.labels, truth) >= 0.95
    nev = diaseg.defaults()["nev"]
    assert r.converged
    assert r.eigenvectors.dtype == np.float32 and r.eigenvectors.shape == (nev, h, w)
    assert r.eigenvalues.dtype == np.float64 and r.eigenvalues.shape == (nev,)
    norms = np.linalg.norm(r.eigenvectors.reshape(nev, -1).astype(np.float64), axis=1)
    assert np.all(np.abs(norms - 1.0) <= 1e-4), norms
    tol = r.report["parameters"]["tol"]  # automatic: 1e-3 beside the hierarchy
    assert tol == 1e-3
    assert np.all(r.residuals <= tol * np.abs(r.eigenvalues) + 1e-6), r.residuals
    assert np.all(np.diff(r.eigenvalues) <= 0), r.eigenvalues
    assert abs(r.eigenvalues[0] - 1.0) <= 1e-5
    assert r.sqrt_degree.shape == (h, w) and np.all(r.sqrt_degree > 0)
    assert set(r.timing) == {"affinity", "setup", "solve", "cluster", "total", "contours",
                            "resolution"}


# ---- (2) float input is quantised as round(255 v) ----------------------------------------------

def test_float_equals_uint8(four):
    img, _, r = four
    f = diaseg.segment(img / 255.0, k=4, matvec="cpu")
    np.testing.assert_array_equal(f.labels, r.labels)
    np.testing.assert_array_equal(f.eigenvalues, r.eigenvalues)
    # float32 too, and values outside [0, 1] are clipped
    g = diaseg.segment(np.where(img == 255, 1.5, img / 255.0).astype(np.float32), k=4,
                       matvec="cpu")
    np.testing.assert_array_equal(g.labels, r.labels)


# ---- (3) RGB with the colour cue ---------------------------------------------------------------

def test_rgb_color():
    _, truth = regions(48, 64)
    colours = np.array([[200, 30, 30], [30, 200, 30], [30, 30, 200], [220, 220, 40]], np.uint8)
    rng = np.random.default_rng(3)
    img = np.clip(colours[truth] + rng.normal(0, 4, truth.shape + (3,)), 0, 255).astype(np.uint8)
    r = diaseg.segment(img, k=4, affinity="color", matvec="cpu")
    assert r.labels.shape == truth.shape
    assert adjusted_rand_index(r.labels, truth) >= 0.95
    assert r.report["channels"] == 3 and r.report["parameters"]["affinity"] == "color"
    # RGBA and gray + alpha are taken too
    rgba = np.dstack([img, np.full(truth.shape, 255, np.uint8)])
    assert diaseg.segment(rgba, k=4, affinity="color", matvec="cpu").report["channels"] == 4
    assert diaseg.segment(np.dstack([img[..., 0], img[..., 1]]), k=2, nev=4,
                          matvec="cpu").report["channels"] == 2


# ---- (4) the affinity equals the command line's export -----------------------------------------

def test_affinity_matches_cli(diaseg_cli, tmp_path):
    img, _ = regions(32, 48, seed=5)
    h, w = img.shape
    n = h * w
    N, sqrt_degree = diaseg.affinity(img, return_degree=True)
    assert isinstance(N, sp.dia_matrix) and N.shape == (n, n) and N.dtype == np.float32
    assert sqrt_degree.shape == (n,) and sqrt_degree.dtype == np.float64
    A = N.tocsr()
    # symmetric, and N D^1/2 1 = D^1/2 1 (the trivial eigenpair)
    assert abs(A - A.T).max() == 0
    np.testing.assert_allclose(A @ sqrt_degree, sqrt_degree, rtol=1e-4)
    assert N.offsets.size == 81  # radius 5
    if diaseg_cli is None:
        pytest.skip("no --diaseg: the comparison with the command line needs it")
    write_pgm(tmp_path / "img.pgm", img)
    out = tmp_path / "matrix"
    subprocess.run([diaseg_cli, "affinity", str(tmp_path / "img.pgm"), "--export", str(out),
                    "-q"], check=True, timeout=120)
    offsets = np.load(out / "offsets.npy")
    diagonals = np.load(out / "diagonals.npy")
    cli_degree = np.load(out / "sqrt_degree.npy")
    meta = json.loads((out / "matrix.json").read_text())
    assert meta["n"] == n and meta["width"] == w and meta["height"] == h
    np.testing.assert_array_equal(offsets, N.offsets)
    B = dia_rows_to_csr(offsets, diagonals, n)
    assert (A != B).nnz == 0  # entrywise equal: the same code computed both
    np.testing.assert_array_equal(cli_degree, sqrt_degree)
    # and the SciPy layout itself: data[d, col] = N[col - offsets[d], col]
    dense = B.toarray()
    for d, off in enumerate(N.offsets):
        cols = np.arange(max(off, 0), n + min(off, 0))
        np.testing.assert_array_equal(N.data[d, cols], dense[cols - off, cols])


# ---- (5) the report ----------------------------------------------------------------------------

def test_report():
    img, _ = regions(40, 60, seed=2)
    r = diaseg.segment(img, k=3, nev=6, sigma_i=0.12, sigma_x=3.5, radius=4, seed=7,
                       restarts=4, matvec="cpu")
    rep = r.report
    assert rep["command"] == "segment" and rep["converged"] is True
    assert rep["k"] == 3 and rep["nev"] == 6
    p = rep["parameters"]
    assert p["sigma_i"] == 0.12 and p["sigma_x"] == 3.5 and p["radius"] == 4
    assert p["seed"] == 7 and p["restarts"] == 4 and p["matvec"] == "cpu"
    d = diaseg.defaults()  # the options not given are the defaults
    # solver auto: chfsi for the hierarchy's labels where the coarse start applies, Lanczos on an
    # image under 116 pixels a side like this one (tests/cli/test_cli.py, small_image_solver)
    assert p["affinity"] == d["affinity"] and d["solver"] == "auto" and p["solver"] == "lanczos"
    assert p["grouping"] == d["grouping"] and p["sigma_c"] == d["sigma_c"]
    assert p["spectral_weight"] == d["spectral_weight"] and p["min_region"] == d["min_region"]
    assert rep["width"] == 60 and rep["height"] == 40 and rep["channels"] == 1
    np.testing.assert_allclose(rep["eigenvalues"], r.eigenvalues, rtol=1e-12)
    # k = 0: eigenpairs only
    e = diaseg.segment(img, k=0, nev=4, matvec="cpu")
    assert e.labels is None and e.report["command"] == "eigs" and e.eigenvalues.shape == (4,)


# ---- (6) bad input raises ----------------------------------------------------------------------

def test_bad_input():
    img, _ = regions(16, 24)
    with pytest.raises(ValueError):
        diaseg.segment(np.zeros(10, np.uint8))
    with pytest.raises(ValueError):
        diaseg.segment(img.astype(np.complex128))
    with pytest.raises(ValueError):
        diaseg.segment(np.array([["a", "b"], ["c", "d"]], dtype=object))
    with pytest.raises(ValueError):
        diaseg.segment(np.zeros((0, 5), np.uint8))
    with pytest.raises(ValueError):
        diaseg.segment(np.zeros((4, 5, 6), np.uint8))
    with pytest.raises(ValueError, match="at least 2 pixels"):
        diaseg.segment(np.zeros((1, 1), np.uint8))
    with pytest.raises(ValueError, match="nev"):
        diaseg.segment(img, k=9, nev=8, grouping="kmeans")
    with pytest.raises(ValueError, match="texture"):
        diaseg.segment(img, affinity="texture")
    with pytest.raises(ValueError, match="texture"):
        diaseg.affinity(img, affinity="texture")
    with pytest.raises(TypeError, match="sigma_z"):
        diaseg.segment(img, sigma_z=1.0)
    with pytest.raises(TypeError, match="nev"):
        diaseg.segment(img, nev="8")
    with pytest.raises(ValueError) as e:
        diaseg.segment(img, sigma_x=0.01)
    assert "sigma_x" in str(e.value) and "--" not in str(e.value), str(e.value)
    assert "\x01" not in str(e.value) and "\x02" not in str(e.value)
    bad = img / 255.0
    bad[3, 4] = np.nan
    with pytest.raises(ValueError):
        diaseg.segment(bad)
    with pytest.raises(ValueError):
        diaseg.segment(img, matvec="gpu")
    with pytest.raises(ValueError):
        diaseg.segment(img, k=2**40)  # would wrap in a C int


# ---- (7) the GIL is released during a solve ----------------------------------------------------

def test_gil_released():
    img = np.random.default_rng(1).random((120, 160))
    done = {}

    def work():
        done["result"] = diaseg.segment(img, k=0, tol=1e-6, matvec="cpu")

    t = threading.Thread(target=work)
    count = 0
    t.start()
    while t.is_alive():
        count += 1
    t.join()
    assert done["result"].converged
    assert count > 1000, count


# ---- (8) OpenCL devices ------------------------------------------------------------------------

def test_devices_and_opencl():
    devs = diaseg.devices()
    assert isinstance(devs, list)
    for d in devs:
        assert isinstance(d["name"], str) and d["type"] in ("GPU", "CPU", "other")
        assert isinstance(d["index"], int)
    if not devs:
        pytest.skip("no OpenCL device")
    img, truth = regions(32, 48)
    r = diaseg.segment(img, k=4, matvec="opencl")
    assert r.report["matvec_backend"] == "opencl" and r.converged
    assert adjusted_rand_index(r.labels, truth) >= 0.95
    # the library's log warning (OpenCL failed, "auto" falls back to the C path) -> RuntimeWarning
    with pytest.warns(RuntimeWarning, match="falling back to the C path"):
        r = diaseg.segment(img, k=4, matvec="auto", cl_device=devs[0]["index"], cl_max_alloc=1000)
    assert r.report["matvec_backend"] == "cpu" and r.converged


# ---- (9) the defaults are the library's (and the CLI's) ----------------------------------------

def test_defaults(diaseg_cli, tmp_path):
    d = diaseg.defaults()
    # the values pinned here are those no change in view touches; the cue and the grouping are
    # pinned once, in tests/lib/test_api.c (dsg_options_init), and only named here
    expected = {"k": "auto", "nev": 16, "tol": 0.0, "work_pixels": 160000, "radius": 5, "sigma_i": 0.1, "sigma_x": 4.0,
                "solver": "auto", "matvec": "auto", "max_iter": 1000, "seed": 1, "restarts": 8,
                "ncv": 0, "keep_specks": False, "sigma_c": 0.1, "spectral_weight": 0.2,
                "min_region": 0, "region_weight": 0.2, "forest_weight": 0.25, "arc_weight": 0.0,
                "net_weight": 1.0, "threshold": 0.0,
                "coarse_start": True,
                "detector": "auto"}
    for name, value in expected.items():
        assert d[name] == value, name
    assert set(d) == {"k", "nev", "ncv", "tol", "max_iter", "radius", "sigma_i", "sigma_x",
                      "sigma_c", "grouping", "spectral_weight", "min_region", "region_weight",
                      "forest_weight", "arc_weight", "net_weight", "threshold", "work_pixels",
                      "affinity", "detector",
                      "keep_specks", "seed", "restarts", "solver", "coarse_start", "matvec",
                      "cl_device",
                      "kernel", "local_size", "kernel_dir", "cl_max_alloc", "cl_max_mem",
                      "max_memory"}
    lib = diaseg._lib.lib
    cues = [diaseg._lib.decode(lib.dsg_cue_name(i)) for i in range(lib.dsg_cue_count())]
    assert cues == ["intensity", "color", "contour", "contour+color"]
    detectors = [diaseg._lib.decode(lib.dsg_detector_name(i))
                 for i in range(lib.dsg_detector_count())]
    assert detectors == ["auto", "forest", "gradients"] and d["detector"] in detectors
    assert d["affinity"] in cues and d["grouping"] in ("hierarchy", "kmeans")
    assert isinstance(diaseg.__version__, str) and diaseg.__version__.count(".") == 2
    if diaseg_cli is None:
        pytest.skip("no --diaseg: the comparison with the command line's defaults needs it")
    # the command line without options runs with the same values (report.json's parameters)
    img, _ = regions(24, 32, seed=6)
    write_pgm(tmp_path / "img.pgm", img)
    p = subprocess.run([diaseg_cli, "segment", str(tmp_path / "img.pgm"), "-o",
                        str(tmp_path / "out"), "-q", "--matvec", "cpu", "--json", "-"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    params = rep["parameters"]
    for name in ("radius", "sigma_i", "sigma_x", "sigma_c", "affinity", "grouping",
                 "spectral_weight", "min_region", "region_weight", "forest_weight", "arc_weight",
                 "net_weight", "max_iter",
                 "seed", "restarts", "keep_specks", "coarse_start"):
        assert params[name] == d[name], (name, params[name], d[name])
    # the automatic choices, as the report states them: the tolerance and the solver of the
    # hierarchy's gPb at this size, the scale chosen (no k: the cut at a level)
    assert d["tol"] == 0.0 and params["tol"] == 1e-3
    assert d["solver"] == "auto" and params["solver"] == "lanczos"  # 32 x 24: no coarse start
    assert d["k"] == "auto" and rep["scale"]["auto"] is True and rep["k"] is None
    assert rep["nev"] == d["nev"] and rep["work"]["pixels_cap"] == d["work_pixels"]


# ---- (10) max_iter stops the solve: a warning, not an exception --------------------------------

def test_not_converged_warns():
    img, _ = regions(32, 48)
    with pytest.warns(RuntimeWarning, match="iteration limit"):
        r = diaseg.segment(img, k=4, max_iter=1, matvec="cpu")
    assert r.converged is False
    assert r.report["converged"] is False
    assert len(r.eigenvalues) < diaseg.defaults()["nev"]
    assert r.eigenvectors.shape[0] == len(r.eigenvalues) == len(r.residuals)


# ---- (11) Ctrl-C stops a solve -----------------------------------------------------------------

def test_keyboard_interrupt():
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("needs the main thread and Python's own SIGINT handler")
    # a solve of ~1.5 s on an idle 2-core machine: the library calls progress (where Python's
    # handler gets to run and sets the cancel flag) at most every 0.2 s
    img = np.random.default_rng(1).random((240, 320))
    stop = threading.Event()

    def interrupt():
        # as soon as segment() has put its handler in place
        while signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            if stop.wait(0.001):
                return
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt)
    sender.start()
    t0 = time.monotonic()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with pytest.raises(KeyboardInterrupt) as e:
                diaseg.segment(img, k=0, nev=16, tol=1e-6, max_iter=100, matvec="cpu")
    finally:
        stop.set()
        sender.join()
    # the library's message: the run was cancelled through the flag, not after it ended
    assert "interrupted" in str(e.value), (str(e.value), time.monotonic() - t0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# ---- (12) a list of k: one eigensolve, the grouping once per k (issue 12) ----------------------

def test_k_list():
    img, truth = regions(48, 64, seed=4)
    r = diaseg.segment(img, k=[4, 2, 3], seed=5, restarts=3, matvec="cpu")
    assert r.ks == (4, 2, 3) and sorted(r.labels_by_k) == [2, 3, 4]
    assert r.report["ks"] == [4, 2, 3] and r.report["k"] == 4
    assert r.report["eigensolves"] == 1
    assert [s["k"] for s in r.report["segmentations"]] == [4, 2, 3]
    assert all(s["written"] for s in r.report["segmentations"])
    # labels: the first k's, and each k's those of a run with that k alone, bit for bit
    np.testing.assert_array_equal(r.labels, r.labels_for(4))
    for k in (4, 2, 3):
        labels = r.labels_for(k)
        assert labels.dtype == np.int32 and labels.shape == img.shape
        assert np.unique(labels).tolist() == list(range(k))
        one = diaseg.segment(img, k=k, seed=5, restarts=3, matvec="cpu")
        np.testing.assert_array_equal(labels, one.labels)
        np.testing.assert_array_equal(r.eigenvalues, one.eigenvalues)
        assert r.report["matvec_count_all_solves"] == one.report["matvec_count_all_solves"]
        assert one.ks == (k,) and one.report["ks"] == [k]
    assert adjusted_rand_index(r.labels_for(4), truth) >= 0.95
    with pytest.raises(KeyError, match="k=5"):
        r.labels_for(5)
    # tuples, ranges and NumPy arrays are lists too; k=0 has none
    t = diaseg.segment(img, k=np.array([2, 3]), seed=5, restarts=3, matvec="cpu")
    assert t.ks == (2, 3)
    np.testing.assert_array_equal(t.labels_for(3), r.labels_for(3))
    assert diaseg.segment(img, k=range(2, 4), nev=4, matvec="cpu").ks == (2, 3)
    e = diaseg.segment(img, k=0, nev=3, matvec="cpu")
    assert e.ks == () and e.labels_by_k == {} and e.report["ks"] is None


def test_k_list_bad():
    img, _ = regions(16, 24)
    with pytest.raises(ValueError, match="k 3 is in the list twice"):
        diaseg.segment(img, k=[3, 2, 3])
    with pytest.raises(ValueError, match="k 0 .*out of range"):
        diaseg.segment(img, k=[0, 3])
    with pytest.raises(ValueError, match="raise nev to 9"):
        diaseg.segment(img, k=[2, 9], nev=8, grouping="kmeans")
    with pytest.raises(ValueError, match="empty"):
        diaseg.segment(img, k=[])
    with pytest.raises(TypeError, match="'k'"):
        diaseg.segment(img, k=[2, "3"])
    with pytest.raises(TypeError, match="'k'"):
        diaseg.segment(img, k=[2, 3.0])


# ---- (13) the boundary detector (issue 12) -----------------------------------------------------

def step(h=40, w=60, dark=40, bright=200):
    """A vertical step between columns w/2 - 1 and w/2."""
    img = np.full((h, w), dark, np.uint8)
    img[:, w // 2:] = bright
    return img


def contours_cpu(image, **kw):
    """diaseg.contours on the C path where it takes matvec (so that its map is comparable bit
    for bit with segment(..., matvec='cpu').contours), else as it is; the gradients unless
    asked (the contour cue's detector; the forest's cases are test_contours_forest)."""
    kw.setdefault("detector", "gradients")
    try:
        return diaseg.contours(image, matvec="cpu", **kw)
    except TypeError as e:
        if "matvec" not in str(e):
            raise
        return diaseg.contours(image, **kw)


def test_contours_step():
    img = step()
    pb = contours_cpu(img)
    assert pb.dtype == np.float32 and pb.shape == (40, 60)
    assert pb.min() >= 0 and pb.max() < 1
    # on one of the two columns next to the step in every row, thinned to one pixel, 0 elsewhere
    assert np.all(pb[:, 29:31].max(axis=1) > 0.5), pb[:, 29:31]
    assert np.all((pb > 0).sum(axis=1) == 1)
    assert pb[:, np.abs(np.arange(60) - 29.5) > 3].max() < 0.01
    assert sorted(set(np.flatnonzero(pb.max(axis=0) > 0.5).tolist())) in ([29], [30])
    # the docstring's example
    small = np.zeros((30, 40), np.uint8)
    small[:, 20:] = 200
    assert sorted(set(np.flatnonzero(contours_cpu(small).max(axis=0) > 0.5).tolist())) == [19]
    # float input is quantised as round(255 v); gray as RGB is the same image; flat is 0
    np.testing.assert_array_equal(contours_cpu(img / 255.0), pb)
    np.testing.assert_array_equal(contours_cpu(np.dstack([img] * 3)), pb)
    assert contours_cpu(np.full((20, 30), 128, np.uint8)).max() == 0


def test_contours_forest():
    """The default detector of contours(): the forest, a line one pixel wide on the step away
    from the top and bottom rows (tapered to 0 over the 5 nearest the edge), faint marks at
    most elsewhere; no parts; an unknown name refused."""
    img = step()
    pb = diaseg.contours(img)
    assert pb.dtype == np.float32 and pb.shape == (40, 60)
    assert pb.min() >= 0 and pb.max() < 1
    rows = slice(5, 35)
    assert np.all(pb[rows, 29:31].max(axis=1) > 0.5), pb[rows, 29:31]
    assert np.all((pb[rows, 29:31] > 0).sum(axis=1) == 1)
    assert pb[:, np.abs(np.arange(60) - 29.5) > 3].max() < 0.15
    assert pb[0].max() == 0 and pb[-1].max() == 0
    np.testing.assert_array_equal(diaseg.contours(img, detector="forest"), pb)
    # the docstring's example
    small = np.zeros((30, 40), np.uint8)
    small[:, 20:] = 200
    assert sorted(set(np.flatnonzero(diaseg.contours(small).max(axis=0) > 0.5).tolist())) == [20]
    assert diaseg.contours(np.full((20, 30), 128, np.uint8)).max() == 0
    with pytest.raises(ValueError, match="no parts"):
        diaseg.contours(img, parts=True, detector="forest")
    with pytest.raises(ValueError, match="'canny' is not one of auto, forest, gradients"):
        diaseg.contours(img, detector="canny")
    # parts=True with the default takes the gradients
    pb2, parts = diaseg.contours(img, parts=True)
    np.testing.assert_array_equal(pb2, contours_cpu(img))
    assert len(parts) == 12


def test_contours_parts():
    img = step()
    pb, parts = contours_cpu(img, parts=True)
    names = [diaseg._lib.decode(diaseg._lib.lib.dsg_contour_part_name(i)) for i in range(12)]
    assert list(parts) == names and len(names) == 12
    assert names[0] == "brightness_r3" and names[-1] == "texture_r20"
    np.testing.assert_array_equal(pb, contours_cpu(img))
    for name, m in parts.items():
        assert m.dtype == np.float32 and m.shape == (40, 60), name
        assert np.all(np.isfinite(m)) and m.min() >= 0, name
        if name.startswith(("brightness", "texture")):  # a gray step: brightness and texture
            assert np.all(m[:, 29:31].max(axis=1) > 0.5), name
        else:  # and no colour
            assert m.max() == 0, name


def test_contours_sizes():
    ramp = np.arange(0, 250, 10, dtype=np.uint8)
    for img in (np.array([[128]], np.uint8), ramp[None, :], ramp[:, None],
                np.array([[0, 255], [255, 0]], np.uint8)):
        pb = contours_cpu(img)
        assert pb.shape == img.shape and pb.dtype == np.float32
        assert np.all(np.isfinite(pb)) and pb.min() >= 0 and pb.max() < 1
    assert contours_cpu(np.array([[128]], np.uint8))[0, 0] == 0
    # a transposed image: brightness and colour gradients are the transposed ones; the texture
    # channel's fixed dictionary is not symmetric under x <-> y (docs/QUALITY.md), so the
    # combination is not compared
    _, col = contours_cpu(ramp[:, None], parts=True)
    _, row = contours_cpu(ramp[None, :], parts=True)
    for name in col:
        if not name.startswith("texture"):
            np.testing.assert_allclose(col[name], row[name].T, rtol=0, atol=1e-6, err_msg=name)
    assert max(col["brightness_r3"].max(), row["brightness_r3"].max()) > 0.1  # a ramp: gradients
    with pytest.raises(ValueError):
        diaseg.contours(np.zeros((0, 5), np.uint8))
    with pytest.raises(ValueError):
        diaseg.contours(np.zeros((4, 5, 6), np.uint8))


# ---- (14) the contour cues and the region hierarchy (issue 12) ---------------------------------

def three_bands(h=48, w=64, seed=0):
    """Three vertical bands (boundaries between columns 21 | 22 and 43 | 44) and their truth."""
    truth = np.zeros((h, w), np.int32)
    truth[:, 22:44] = 1
    truth[:, 44:] = 2
    rng = np.random.default_rng(seed)
    img = np.array([30, 130, 230])[truth] + rng.normal(0, 3, truth.shape)
    return np.clip(np.round(img), 0, 255).astype(np.uint8), truth


def test_segmentation_contours():
    img, _ = three_bands()
    # spectral_weight 0: the detector's map; the default joins the eigenvectors' term (gPb)
    r = diaseg.segment(img, k=3, nev=4, affinity="contour", matvec="cpu", spectral_weight=0.0)
    assert r.contours is not None and r.contours.dtype == np.float32
    np.testing.assert_array_equal(r.contours, contours_cpu(img))
    g = diaseg.segment(img, k=3, nev=4, affinity="contour", matvec="cpu")
    assert g.report["parameters"]["spectral_weight"] == 0.2
    # gPb keeps the band edges, in nearly every row, and nothing else: the
    # eigenvectors' gradients (sigma 1) may move a crest by a pixel or two, within the
    # benchmark's tolerance (0.0075 x the diagonal: 0.8 pixels here, 4 on a BSDS photo)
    strong = np.nonzero(g.contours > 0.5)[1]
    near = [c for c in range(19, 25)] + [c for c in range(41, 47)]
    assert np.isin(strong, near).all()
    assert (strong < 32).any() and (strong >= 32).any()
    for a, b in ((19, 25), (41, 47)):
        assert (g.contours[:, a:b] > 0.5).any(axis=1).mean() > 0.9
    assert 0 < r.timing["contours"] <= r.timing["affinity"]
    assert r.report["parameters"]["affinity"] == "contour"
    assert r.report["seconds"]["contours"] > 0
    rgb = np.dstack([img, img[:, ::-1], np.full(img.shape, 90, np.uint8)])
    c = diaseg.segment(rgb, k=3, nev=4, affinity="contour+color", matvec="cpu", spectral_weight=0)
    np.testing.assert_array_equal(c.contours, contours_cpu(rgb))
    i = diaseg.segment(img, k=3, nev=4, affinity="intensity", matvec="cpu")
    assert i.contours is None and i.timing["contours"] < 1e-3


def test_hierarchy_k_list():
    img, truth = three_bands()
    d = diaseg.defaults()
    r = diaseg.segment(img, k=[2, 3], grouping="hierarchy", affinity="contour", matvec="cpu")
    assert r.ks == (2, 3)
    assert np.unique(r.labels_for(2)).tolist() == [0, 1]
    assert np.unique(r.labels_for(3)).tolist() == [0, 1, 2]
    # the 3-cut is the three bands off the strong contours (whose pixels may go either way)
    off = r.contours <= 0.5
    # (the contours are gPb: the eigenvectors' term may move a crest by a pixel or two, test
    # above; texture may raise a few more: at least 90% of them are the band edges; with the
    # detector alone the texture dictionary's echo of the strongest edge, 4 pixels beside it,
    # gives 7 of the 103 here, docs/QUALITY.md)
    assert np.mean(np.isin(np.nonzero(~off)[1], list(range(19, 25)) + list(range(41, 47)))) >= 0.90
    # exact away from the edges; within a pixel of them a region may take the edge's column
    # (gPb's crest moves by one)
    cols = np.broadcast_to(np.arange(truth.shape[1]), truth.shape)
    far = off & ~np.isin(cols, [20, 21, 22, 23, 42, 43, 44, 45])
    assert adjusted_rand_index(r.labels_for(3)[far], truth[far]) == 1.0
    assert adjusted_rand_index(r.labels_for(3), truth) > 0.95
    # nested: each region of the 3-cut lies in one of the 2-cut
    pairs = set(zip(r.labels_for(3).ravel().tolist(), r.labels_for(2).ravel().tolist()))
    assert len(pairs) == 3
    rep = r.report
    assert rep["ks"] == [2, 3] and rep["eigensolves"] == 1
    p = rep["parameters"]
    assert p["grouping"] == "hierarchy" and p["sigma_c"] == d["sigma_c"]
    assert p["spectral_weight"] == d["spectral_weight"] and p["min_region"] == d["min_region"]
    # a cut needs no eigenvector per segment: k may exceed nev (not 64), with at most k regions;
    # the same solve gives the same hierarchy, whatever the k asked for
    nev = d["nev"]
    many = diaseg.segment(img, k=[2, nev + 4], nev=nev, grouping="hierarchy", affinity="contour",
                          matvec="cpu")
    assert 3 <= len(np.unique(many.labels_for(nev + 4))) <= nev + 4
    np.testing.assert_array_equal(many.labels_for(2), r.labels_for(2))
    assert r.report["nev"] == nev
    with pytest.raises(ValueError, match="raise nev to 12"):
        diaseg.segment(img, k=[2, 12], nev=8, grouping="kmeans")
    # given values are the report's
    g = diaseg.segment(img, k=3, nev=4, grouping="hierarchy", affinity="contour", sigma_c=0.2,
                       spectral_weight=0.5, min_region=30, region_weight=0.1, matvec="cpu")
    p = g.report["parameters"]
    assert (p["sigma_c"], p["spectral_weight"], p["min_region"], p["region_weight"]) == \
        (0.2, 0.5, 30, 0.1)
    # the forest's map joins gPb in the hierarchy's map: another hierarchy (the bands' contours
    # the same), its weight reported; the forest as the detector has no gPb to join (0 reported)
    plain = diaseg.segment(img, k=3, nev=4, matvec="cpu", forest_weight=0.0)
    mixed = diaseg.segment(img, k=3, nev=4, matvec="cpu", forest_weight=1.0)
    assert plain.report["parameters"]["forest_weight"] == 0
    assert mixed.report["parameters"]["forest_weight"] == 1.0
    assert not np.array_equal(plain.ucm, mixed.ucm)
    np.testing.assert_array_equal(plain.contours, mixed.contours)
    assert np.isfinite(mixed.ucm).all() and 0 <= mixed.ucm.min() and mixed.ucm.max() <= 1
    assert adjusted_rand_index(mixed.labels[far], truth[far]) >= 0.95
    f = diaseg.segment(img, k=3, nev=4, matvec="cpu", detector="forest", forest_weight=1.0)
    assert f.report["parameters"]["forest_weight"] == 0


def test_hierarchy_bad():
    img, _ = three_bands(16, 24)
    with pytest.raises(ValueError, match="grouping 'bogus' is not one of hierarchy, kmeans"):
        diaseg.segment(img, grouping="bogus")
    with pytest.raises(ValueError, match="spectral_weight -1"):
        diaseg.segment(img, spectral_weight=-1.0)
    with pytest.raises(ValueError, match="spectral_weight"):
        diaseg.segment(img, spectral_weight=float("nan"))
    with pytest.raises(ValueError, match="min_region -3"):
        diaseg.segment(img, min_region=-3)
    with pytest.raises(ValueError, match="region_weight -0.5"):
        diaseg.segment(img, region_weight=-0.5)
    with pytest.raises(ValueError, match="forest_weight -0.5"):
        diaseg.segment(img, forest_weight=-0.5)
    with pytest.raises(ValueError, match="sigma_c"):
        diaseg.segment(img, affinity="contour", sigma_c=0.0)
    with pytest.raises(TypeError, match="spectral_weight"):
        diaseg.segment(img, spectral_weight="1")
    with pytest.raises(TypeError, match="grouping"):
        diaseg.segment(img, grouping=3)
    with pytest.raises(ValueError, match="k <= nev"):
        diaseg.segment(img, k=9, nev=8, grouping="kmeans")


def test_hierarchy_cut():
    """Segmentation.cut: the run's labels for its k and its automatic level, bit for bit, at
    full resolution and where the run worked at a smaller size (refined against a copy of the
    caller's image, which may change after the run); other k nested; the bad calls refused."""
    img, _ = regions(96, 144, seed=3)
    yy, xx = np.mgrid[0:96, 0:144]
    img[(yy - 45) ** 2 + (xx - 61) ** 2 < 27 ** 2] = 200  # a disc: boundaries off the grid
    for work in (0, 3000):  # 3000: 67 x 44, the labels refined against the image
        r = diaseg.segment(img, k=[4, 2, 6], work_pixels=work, matvec="cpu")
        a = diaseg.segment(img, work_pixels=work, matvec="cpu")  # k="auto": a level
        img_before = img.copy()
        img[:] = img[:, ::-1]  # the caller's array changes: the cuts do not
        for k in (4, 2, 6):
            np.testing.assert_array_equal(r.cut(k=k), r.labels_for(k))
        level = a.report["segmentations"][0]["level"]
        np.testing.assert_array_equal(a.cut(threshold=level), a.labels)
        img[:] = img_before
        three = r.cut(k=3)
        assert three.shape == (96, 144) and three.dtype == np.int32
        assert np.unique(three).tolist() == [0, 1, 2]
        # first appearance order, and nested between the run's 2- and 4-cuts
        assert three.flat[0] == 0
        assert len(set(zip(three.ravel().tolist(), r.labels_for(2).ravel().tolist()))) == 3
        assert len(set(zip(r.labels_for(4).ravel().tolist(), three.ravel().tolist()))) == 4
        assert r.hierarchy_regions > 6
        finest = np.unique(r.cut(k=10 ** 6)).size  # all the finest level's regions
        assert finest == r.hierarchy_regions if work == 0 else 6 < finest <= r.hierarchy_regions
        assert np.unique(r.cut(threshold=2.0)).tolist() == [0]
        with pytest.raises(ValueError, match="give k .* or threshold"):
            r.cut()
        with pytest.raises(ValueError, match="give k .* or threshold"):
            r.cut(k=2, threshold=0.5)
        with pytest.raises(ValueError, match="k 0 must be 1 or more"):
            r.cut(k=0)
        with pytest.raises(ValueError, match="must be finite"):
            r.cut(threshold=float("nan"))
        with pytest.raises(TypeError, match="'k'"):
            r.cut(k=2.5)
    # copies share the hierarchy; a pickle leaves it behind and says so (no stale handle)
    p = pickle.loads(pickle.dumps(r))
    np.testing.assert_array_equal(p.labels_for(4), r.labels_for(4))
    assert p.hierarchy_regions == r.hierarchy_regions
    with pytest.raises(ValueError, match="was pickled"):
        p.cut(k=3)
    copies = [copy.copy(r), copy.deepcopy(r)]
    del r  # the copies keep the hierarchy alive
    gc.collect()
    for c in copies:
        np.testing.assert_array_equal(c.cut(k=3), three)
    km = diaseg.segment(img, k=3, grouping="kmeans", matvec="cpu")
    assert km.hierarchy_regions == 0
    with pytest.raises(ValueError, match="kept no hierarchy"):
        km.cut(k=2)
    with pytest.raises(ValueError, match="kept no hierarchy"):
        diaseg.segment(img, k=0, matvec="cpu").cut(k=2)


# ---- (the first hour) the working resolution, k="auto", nev following k for k-means ----------

def test_working_resolution_and_auto():
    img, truth = regions(96, 144, seed=3)
    r = diaseg.segment(img, k=4, work_pixels=3456, matvec="cpu")
    wh, ww = r.report["work"]["height"], r.report["work"]["width"]
    assert (wh, ww) == (48, 72)
    assert r.labels.shape == (96, 144) and r.contours.shape == (96, 144)
    assert r.eigenvectors.shape[1:] == (48, 72) and r.sqrt_degree.shape == (48, 72)
    assert r.ucm.shape == (2 * 48 + 1, 2 * 72 + 1)
    assert adjusted_rand_index(r.labels, truth) >= 0.95
    with pytest.raises(ValueError, match="work_pixels"):
        diaseg.segment(img, work_pixels=100, matvec="cpu")
    a = diaseg.segment(img, k="auto", grouping="kmeans", matvec="cpu")
    lam = a.eigenvalues
    gaps = [lam[k - 1] - lam[k] for k in range(2, len(lam))]
    assert a.report["scale"]["auto"] and a.report["k"] == 2 + int(np.argmax(gaps))
    b = diaseg.segment(img, k=20, grouping="kmeans", matvec="cpu")  # nev follows k above 16
    assert b.report["nev"] == 20 and len(np.unique(b.labels)) == 20


def test_memory():
    """diaseg.memory: the library's model (docs/PIPELINE.md, "9. Memory") and check, and
    segment refusing a run over max_memory before any work."""
    m = diaseg.memory((321, 481), work_pixels=0, matvec="cpu", solver="lanczos", nev=8)
    n = 481 * 321
    # the C path with Lanczos: 32 MiB + 1.1 (18 N + (4 x 81 + 4 x 33 + 200) n), N = n
    assert m["work_pixels"] == n
    assert m["host_cpu"] == pytest.approx(32 * 2**20 + 1.1 * (18 + 324 + 132 + 200) * n,
                                          rel=1e-12)
    assert m["device_buffer"] == pytest.approx(324 * n, rel=1e-12)
    assert m["affinity"] == pytest.approx(32 * 2**20 + 1.1 * (18 + 324 + 200) * n, rel=1e-12)
    assert m["fits"] is True
    big = diaseg.memory((3000, 4000, 3))
    assert big["work_pixels"] <= 160000 and big["host_cpu"] > m["host_cpu"]
    small = diaseg.memory((321, 481), work_pixels=0, matvec="cpu", max_memory=int(m["host_cpu"] / 2))
    assert isinstance(small["fits"], str) and "max_memory" in small["fits"]
    assert "fits" in small["fits"] and "--" not in small["fits"]  # Python's names, not flags
    image = np.zeros((48, 64), np.uint8)
    with pytest.raises(ValueError, match="host memory"):
        diaseg.segment(image, max_memory=1000, matvec="cpu")
    with pytest.raises(ValueError, match="shape"):
        diaseg.memory((0, 5))
    with pytest.raises(TypeError):
        diaseg.memory((10, 10), bogus=1)
