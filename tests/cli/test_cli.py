#!/usr/bin/env python3
"""The diaseg command line, end to end.

Bad input: every case exits non-zero with a one-line 'diaseg: error:' message and leaves no
output behind. A normal run writes every listed output; their contents are checked with NumPy
(shapes, dtypes, unit eigenvectors, the segmentation of the synthetic image against its regions).

Usage: test_cli.py --diaseg PATH --data DIR
"""
import json
import math
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

from checks import check, report, run_tool, test_args


def run(args, cwd=None, env=None, timeout=600):
    p = run_tool([DIASEG] + args, capture_output=True, text=True, cwd=cwd, env=env,
                 timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def auto_device():
    """The device --matvec auto picks (-1: the C path), from diaseg devices --json."""
    code, stdout, _ = run(["devices", "--json", "-"])
    return json.loads(stdout)["auto_device"] if code == 0 else -1


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(width, height, idat=b""):
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat) +
            png_chunk(b"IEND", b""))


def bmp_bytes(width, height):
    stride = (width * 3 + 3) // 4 * 4
    data = bytes(stride * height)
    header = struct.pack("<2sIHHI", b"BM", 54 + len(data), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    return header + info + data


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


def leftovers(folder):
    """Files in folder (hidden temporaries included)."""
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def bad_inputs(tmp, data):
    files = {}

    def make(name, content):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(content)
        files[name] = path
        return path

    coffee = open(os.path.join(data, "coffee.png"), "rb").read()
    jpeg = open(os.path.join(data, "chelsea.jpg"), "rb").read()
    make("text.png", b"this is not an image\n" * 20)
    make("empty.png", b"")
    make("truncated.png", coffee[: len(coffee) // 2])
    make("truncated.jpg", jpeg[: len(jpeg) // 2])
    make("truncated.bmp", bmp_bytes(40, 30)[:1500])
    make("zero.png", png_bytes(0, 0, zlib.compress(b"")))
    make("huge.png", png_bytes(100000, 100000, zlib.compress(b"\0" * 64)))
    make("zero.pgm", b"P5\n0 0\n255\n")
    make("garbage.jpg", b"\xff\xd8\xff" + bytes(range(256)) * 8)
    os.mkdir(os.path.join(tmp, "adir"))
    ok_image = os.path.join(data, "synthetic_regions.png")
    tiny = make("tiny.pgm", b"P5\n4 3\n255\n" + bytes(range(0, 240, 20)))

    cases = [
        (["segment", os.path.join(tmp, "missing.png")], "No such file"),
        (["segment", os.path.join(tmp, "adir")], "holds no image files"),  # a folder: a batch
        (["segment", files["text.png"]], "not a supported image"),
        (["segment", files["empty.png"]], "empty"),
        (["segment", files["truncated.png"]], "truncated or corrupt"),
        (["segment", files["truncated.jpg"]], "truncated JPEG"),
        (["segment", files["truncated.bmp"]], "truncated BMP"),
        (["segment", files["zero.png"]], "0 x 0"),
        (["segment", files["huge.png"]], "--max-pixels"),
        (["segment", files["zero.pgm"]], "0 x 0"),
        (["segment", files["garbage.jpg"]], "corrupt"),
        (["segment", ok_image, "--max-pixels", "100"], "--max-pixels"),
        (["segment", ok_image, "-k", "0"], "-k"),
        (["segment", ok_image, "-k", "9", "--grouping", "kmeans", "--nev", "8"], "k <= nev"),
        (["segment", ok_image, "--nev", "0"], "--nev"),
        (["segment", tiny, "--nev", "12", "-k", "2"], "nev < 12 pixels"),
        (["segment", ok_image, "--sigma-i", "0"], "--sigma-i"),
        (["segment", ok_image, "--sigma-i", "-1"], "--sigma-i"),
        (["segment", ok_image, "--sigma-i", "nan"], "--sigma-i"),
        (["segment", ok_image, "--sigma-x", "inf"], "--sigma-x"),
        (["segment", ok_image, "--sigma-x", "0"], "--sigma-x"),
        (["segment", ok_image, "--radius", "0"], "no neighbours"),
        (["segment", ok_image, "--radius", "-3"], "--radius"),
        (["segment", ok_image, "--tol", "-0.5"], "--tol"),
        (["segment", ok_image, "--tol", "2"], "--tol"),
        (["segment", ok_image, "--affinity", "texture"], "--affinity"),
        (["segment", ok_image, "--nev", "abc"], "not an integer"),
        (["segment", ok_image, "--bogus"], "unknown option"),
        (["segment", ok_image, "--nev"], "needs a value"),
        (["affinity", ok_image, ok_image], "extra argument"),  # segment takes several: a batch
        (["affinity", "--", ok_image, ok_image], "extra argument"),
        (["devices", "stray"], "unexpected argument"),
        (["frobnicate"], "unknown command"),
        (["--bogus"], "(try 'diaseg --help')"),  # fuzzing finding C2: once two spaces
        (["segment", ok_image, "--bogus"], "(try 'diaseg segment --help')"),
        (["eigs"], "needs an IMAGE"),
    ]
    for args, expect in cases:
        out = os.path.join(tmp, "out_bad")
        code, stdout, stderr = run(args + ["-o", out] if args[0] in ("segment", "eigs") and
                                   "--nev" != args[-1] else args)
        lines = stderr.strip().splitlines()
        what = " ".join(os.path.basename(a) for a in args)
        check(code != 0, f"{what}: exit code {code}, expected non-zero")
        check(len(lines) == 1 and lines[0].startswith("diaseg: error: "),
              f"{what}: stderr is not one error line: {stderr!r}")
        check(expect in stderr, f"{what}: message lacks {expect!r}: {stderr.strip()!r}")
        check(not os.path.exists(out), f"{what}: left the output folder behind: {leftovers(out)}")
        check(stdout == "", f"{what}: wrote to stdout: {stdout!r}")

    # unwritable output folders: a regular file, a file in the way below (also deeper), a
    # read-only folder (only meaningful when not root), /proc (a missing parent is created:
    # picture_cases)
    blocker = make("blocker", b"x")
    targets = [blocker, os.path.join(blocker, "sub"), os.path.join(blocker, "sub", "deeper"),
               "/proc/diaseg-test-output"]
    if os.geteuid() != 0:
        ro = os.path.join(tmp, "readonly")
        os.mkdir(ro)
        os.chmod(ro, 0o500)
        targets.append(ro)
    for target in targets:
        code, _, stderr = run(["segment", ok_image, "-o", target])
        check(code != 0 and stderr.startswith("diaseg: error: ") and len(stderr.splitlines()) == 1,
              f"unwritable -o {target}: exit {code}, {stderr!r}")
        check("output" in stderr, f"unwritable -o {target}: message {stderr!r}")
    check(open(blocker, "rb").read() == b"x", "the blocking file was modified")


def normal_run(tmp, data):
    image = os.path.join(data, "synthetic_regions.png")
    out = os.path.join(tmp, "out_ok")
    code, stdout, stderr = run(["segment", image, "-k", "4", "--nev", "6", "-o", out,
                                "--json", "-", "--seed", "7"])
    check(code == 0, f"normal run exit {code}: {stderr}")
    expected = ["eigenvectors.npy", "labels.npy", "labels.png", "labels_color.png", "overlay.png",
                "report.json", "contours.npy", "contours.png", "ucm.npy", "ucm.png"] + \
               [f"eigvec_{k:02d}.png" for k in range(1, 5)]  # the defaults: contour cue,
    # hierarchy, 4 pictures (not of the trivial vector 0)
    check(leftovers(out) == sorted(expected), f"outputs: {leftovers(out)}")
    report = json.load(open(os.path.join(out, "report.json")))
    check(json.loads(stdout) == report, "--json - differs from report.json")
    for key in ["width", "height", "n", "nev", "k", "parameters", "eigenvalues", "residuals",
                "converged_count", "matvec_count", "arpack_iterations", "matvec_backend",
                "seconds", "components"]:
        check(key in report, f"report.json lacks {key}")
    w, h = report["width"], report["height"]
    check((w, h, report["n"], report["nev"], report["k"]) == (120, 80, 9600, 6, 4),
          f"report shape fields {w} {h} {report['n']} {report['nev']} {report['k']}")
    check(report["converged"] is True and report["converged_count"] == 6, "not converged")
    check(report["matvec_backend"] == ("opencl" if auto_device() >= 0 else "cpu"),
          f"backend {report['matvec_backend']}")
    params = report["parameters"]
    # the cue and the grouping are the defaults: pinned in tests/lib/test_api.c, compared with
    # the library's in tests/python (test_defaults)
    check(params["radius"] == 5 and params["sigma_i"] == 0.1 and params["sigma_x"] == 4 and
          params["seed"] == 7 and params.get("affinity") and params.get("grouping"),
          f"parameters {params}")
    for stage in ["load", "affinity", "matvec_setup", "solve", "cluster", "write", "total"]:
        check(report["seconds"][stage] >= 0, f"seconds.{stage}")
    check(report["seconds"]["total"] >= report["seconds"]["solve"], "total < solve")
    ev = np.array(report["eigenvalues"])
    check(len(ev) == 6 and np.all(np.diff(ev) <= 0) and abs(ev[0] - 1) < 1e-6,
          f"eigenvalues {ev}")
    res = np.array(report["residuals"])
    check(np.all(res <= report["parameters"]["tol"] * np.abs(ev) + 1e-6), f"residuals {res}")

    vec = np.load(os.path.join(out, "eigenvectors.npy"))
    check(vec.dtype == np.float32 and vec.shape == (6, h, w), f"eigenvectors {vec.dtype} {vec.shape}")
    norms = np.linalg.norm(vec.reshape(6, -1).astype(np.float64), axis=1)
    check(np.allclose(norms, 1, atol=1e-5), f"eigenvector norms {norms}")
    gram = vec.reshape(6, -1).astype(np.float64) @ vec.reshape(6, -1).astype(np.float64).T
    check(np.abs(gram - np.eye(6)).max() < 1e-4, "eigenvectors not orthonormal")

    labels = np.load(os.path.join(out, "labels.npy"))
    check(labels.dtype == np.int32 and labels.shape == (h, w), f"labels {labels.dtype} {labels.shape}")
    check(set(np.unique(labels)) == {0, 1, 2, 3}, f"label values {np.unique(labels)}")
    # ground truth: the regions' levels are 0.15 / 0.45 / 0.75 / 0.95 with noise +-0.03
    pixels = read_gray_png(image, w, h)
    truth = np.digitize(pixels / 255.0, [0.3, 0.6, 0.85])
    check(adjusted_rand(truth.ravel(), labels.ravel()) >= 0.95,
          f"ARI {adjusted_rand(truth.ravel(), labels.ravel())}")
    for name in ["labels.png", "labels_color.png", "overlay.png", "eigvec_01.png"]:
        check(png_size(os.path.join(out, name)) == (w, h), f"{name} size")

    # a second run into the same folder replaces the outputs and leaves no temporaries
    code, _, stderr = run(["eigs", image, "--nev", "3", "-o", out, "-q"])
    check(code == 0 and stderr == "", f"eigs rerun: {code} {stderr}")
    check(not any(f.startswith(".") for f in leftovers(out)), f"temporaries: {leftovers(out)}")
    check(np.load(os.path.join(out, "eigenvectors.npy")).shape == (3, h, w), "rerun eigenvectors")

    # --json FILE
    jpath = os.path.join(tmp, "report_copy.json")
    code, _, _ = run(["eigs", image, "--nev", "2", "-o", os.path.join(tmp, "out_e"), "-q",
                      "--json", jpath])
    check(code == 0 and json.load(open(jpath))["nev"] == 2, "--json FILE")
    check("k" in json.load(open(jpath)) and json.load(open(jpath))["k"] is None, "eigs has no k")
    check(not os.path.exists(os.path.join(tmp, "out_e", "labels.npy")), "eigs wrote labels")

    # the iteration limit: exit 3, partial results flagged
    out3 = os.path.join(tmp, "out_noconv")
    code, _, stderr = run(["segment", os.path.join(data, "coffee.png"), "--max-iter", "1",
                           "--nev", "8", "-o", out3, "-q"])
    check(code == 3, f"--max-iter 1: exit {code}, expected 3: {stderr}")
    # one event, one line: the solver's limit, what it means for the segmentation, where it is
    check(one_error(stderr, "diaseg: warning: ") and "converged" in stderr and
          "--max-iter 1" in stderr and "report.json" in stderr, f"--max-iter 1 message {stderr!r}")
    rep = json.load(open(os.path.join(out3, "report.json")))
    check(rep["converged"] is False and rep["converged_count"] < 8 and
          len(rep["eigenvalues"]) == rep["converged_count"], "partial report")
    check(rep["segmentation"]["written"] == (os.path.exists(os.path.join(out3, "labels.npy"))) and
          (rep["segmentation"]["written"] or "no segmentation" in stderr),
          f"--max-iter 1: segmentation flag {rep['segmentation']} / {stderr!r}")

    # the sample image, from another working directory
    code, _, stderr = run(["segment", "-k", "3", "--nev", "4", "--tol", "1e-3", "-o",
                           os.path.join(tmp, "out_sample"), "-q"], cwd="/")
    check(code == 0, f"default sample run from /: {code} {stderr}")


def read_gray_png(path, w, h):
    """An 8-bit grayscale PNG of w x h pixels, unfiltered (read_png), as int32."""
    depth, ctype, gray = read_png(path)
    assert depth == 8 and ctype == 0 and gray is not None and gray.shape == (h, w), \
        f"{path}: depth {depth}, colour type {ctype}, shape {None if gray is None else gray.shape}"
    return gray.astype(np.int32)


def adjusted_rand(a, b):
    table = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(table, (a, b), 1)
    comb = lambda x: x * (x - 1) / 2
    sum_ij = comb(table).sum()
    sa, sb = comb(table.sum(1)).sum(), comb(table.sum(0)).sum()
    expected = sa * sb / comb(len(a))
    return (sum_ij - expected) / (0.5 * (sa + sb) - expected)


def first_builds_quiet(tmp, data, dev):
    """The first build of every program a segment takes says nothing on stderr: PoCL's compiler
    printed "1 warning generated." there when the detector's disc loop carried `#pragma unroll 8`
    (a quiet run's stderr is then not empty, an error not one line). The compilers' caches are
    fresh folders, so that every program is built from its source: the default segment's at
    128 x 120 (chfsi from the coarse start), then k-means' and Lanczos'."""
    env = dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl_cache"),
               CUDA_CACHE_PATH=os.path.join(tmp, "cuda_cache"))
    image = os.path.join(data, "coffee.png")
    for size, extra in (("128x120", []),
                        ("64x48", ["--grouping", "kmeans", "-k", "3", "--solver", "lanczos"])):
        out = os.path.join(tmp, "first_build_" + size)
        code, _, err = run(["segment", image, "--resize", size, "--matvec", "opencl",
                            "--cl-device", dev, "-q", "-o", out] + extra, env=env)
        check(code == 0 and err == "", f"first builds {extra}: exit {code}, stderr {err!r}")


def opencl_runs(tmp, data):
    """--matvec opencl with each kernel gives the C path's eigenvalues and segmentation; the OpenCL
    failures a CPU machine can produce give a message, and --matvec auto falls back."""
    image = os.path.join(data, "synthetic_regions.png")
    dev = os.environ.get("DIASEG_CL_DEVICE", "0")
    # 150 x 120 (the image is 120 x 80): large enough for the default solve's coarse start;
    # gPb alone (--forest-weight 0), whose device maps equal the C path's to 1e-7, so that the
    # labels are the same byte for byte (the forest's map on the device agrees with the host's
    # within its 8-bit codes' rounding: the default's labels are compared after the loop)
    base = ["segment", image, "-k", "4", "--nev", "6", "--resize", "150x120", "-q",
            "--forest-weight", "0"]
    code, _, err = run(base + ["--matvec", "cpu", "-o", os.path.join(tmp, "cl_cpu")])
    check(code == 0, f"cpu run: {err}")
    ref = json.load(open(os.path.join(tmp, "cl_cpu", "report.json")))
    ref_labels = np.load(os.path.join(tmp, "cl_cpu", "labels.npy"))
    first_builds_quiet(tmp, data, dev)
    for kernel in ["naive", "aligned", "local", "vector", "image"]:
        out = os.path.join(tmp, "cl_" + kernel)
        code, _, err = run(base + ["--matvec", "opencl", "--cl-device", dev, "--kernel", kernel,
                                   "-o", out])
        check(code == 0, f"--kernel {kernel}: exit {code}: {err}")
        if code:
            continue
        rep = json.load(open(os.path.join(out, "report.json")))
        check(rep["matvec_backend"] == "opencl" and rep["opencl"]["kernel"] == kernel,
              f"--kernel {kernel}: report {rep['matvec_backend']} {rep.get('opencl')}")
        diff = np.max(np.abs(np.array(rep["eigenvalues"]) - np.array(ref["eigenvalues"])))
        check(diff <= 1e-5, f"--kernel {kernel}: eigenvalues differ from the C path by {diff}")
        labels = np.load(os.path.join(out, "labels.npy"))
        check(np.array_equal(labels, ref_labels),
              f"--kernel {kernel}: segmentation differs from the C path "
              f"(ARI {adjusted_rand(ref_labels.ravel(), labels.ravel())})")
        split = rep["seconds"]["solve_split"]
        check(split["matvec_kernel"] > 0 and split["matvec_transfer"] >= 0, f"split {split}")
        # the default solve (chfsi from the coarse start, 30 x 24 here): on OpenCL its coarse
        # problem is solved ahead, while the device opens (dsg_presolve), and the run takes it; on
        # the C path (no device to open) in the solve. The library's run alone solves it beside
        # the device's stages (test_api, check_presolve).
        cs, ref_cs = split.get("coarse_start", {}), ref["seconds"]["solve_split"].get("coarse_start", {})
        check(rep["parameters"]["solver"] == "chfsi" and cs.get("ahead") is True and
              cs.get("beside") is False and ref_cs.get("ahead") is False and
              ref_cs.get("beside") is False,
              f"--kernel {kernel}: coarse start {cs}, the C path's {ref_cs}")
        # ahead, its own time is reported; on the C path (solved in the solve) it is not
        check(cs.get("products", 0) > 0 and cs.get("ahead_seconds", -1) > 0 and
              "ahead_seconds" not in ref_cs and "worker_seconds" not in cs,
              f"--kernel {kernel}: coarse start {cs}, the C path's {ref_cs}")

    # the edge forest on the device (`contours --matvec opencl`, kernels/forest.cl) against the
    # host's: the same strengths but where a channel's 8-bit code rounds otherwise on the device
    # (spmv_image.h; tests/spmv/test_cl_forest.c checks the kernels themselves)
    outs = []
    for matvec in (["--matvec", "cpu"], ["--matvec", "opencl", "--cl-device", dev]):
        out = os.path.join(tmp, "forest_" + matvec[1])
        code, _, err = run(["contours", image, "-q", "-o", out] + matvec)
        check(code == 0, f"contours {' '.join(matvec)}: {code} {err!r}")
        outs.append(np.load(os.path.join(out, "contours.npy")) if code == 0 else None)
    if outs[0] is not None and outs[1] is not None:
        off = np.abs(outs[0] - outs[1]) > 1e-6
        check(outs[1].shape == outs[0].shape and outs[0].max() > 0.5 and off.mean() <= 0.01,
              f"the forest on the device: {off.sum()} of {off.size} pixels differ from the host's "
              f"(largest {np.abs(outs[0] - outs[1]).max()})")
    # the default segment, whose hierarchy reads that map too (--forest-weight): the same
    # segmentation but for a few pixels
    labels = []
    for matvec in (["--matvec", "cpu"], ["--matvec", "opencl", "--cl-device", dev]):
        out = os.path.join(tmp, "mix_" + matvec[1])
        code, _, err = run(base[:-2] + ["-o", out] + matvec)
        check(code == 0, f"segment {' '.join(matvec)}: {code} {err!r}")
        labels.append(np.load(os.path.join(out, "labels.npy")) if code == 0 else None)
    if labels[0] is not None and labels[1] is not None:
        ari = adjusted_rand(labels[0].ravel(), labels[1].ravel())
        check(ari >= 0.999, f"the default segment on the device: ARI {ari} against the C path")

    # no OpenCL at all: an empty ICD directory (Debian's ocl-icd loader honours OCL_ICD_VENDORS;
    # some vendors' loaders do not, and then this case cannot be produced here)
    empty = os.path.join(tmp, "no_icd")
    os.mkdir(empty)
    env = dict(os.environ, OCL_ICD_VENDORS=empty)
    code, stdout, _ = run(["devices"], env=env)
    if "No OpenCL devices" not in stdout:
        print("note: this OpenCL loader ignores OCL_ICD_VENDORS; the no-ICD checks are skipped")
        env = None
    out = os.path.join(tmp, "cl_none")
    if env is not None:
        code, _, err = run(["segment", image, "--matvec", "opencl", "-o", out], env=env)
        check(code == 1 and "no OpenCL platform" in err and len(err.splitlines()) == 1,
              f"empty ICD dir, --matvec opencl: {code} {err!r}")
        check(not os.path.exists(out), "empty ICD dir left output")
        code, _, err = run(["segment", image, "--matvec", "auto", "-o", out], env=env)
        check(code == 0 and "C path" in err, f"empty ICD dir, --matvec auto: {code} {err!r}")
        check(json.load(open(os.path.join(out, "report.json")))["matvec_backend"] == "cpu",
              "auto -> cpu")

    # a device that does not exist
    out = os.path.join(tmp, "cl_99")
    code, _, err = run(["segment", image, "--matvec", "opencl", "--cl-device", "99", "-o", out])
    check(code == 1 and "does not exist" in err and not os.path.exists(out),
          f"--cl-device 99: {code} {err!r}")
    # an absurd size limit: an error with opencl, a fallback with auto
    code, _, err = run(["segment", image, "--matvec", "opencl", "--cl-device", dev,
                        "--cl-max-alloc", "1000", "-o", out])
    check(code == 1 and "allocation" in err and not os.path.exists(out),
          f"--cl-max-alloc 1000: {code} {err!r}")
    code, _, err = run(["segment", image, "--matvec", "auto", "--cl-device", dev,
                        "--cl-max-alloc", "1000", "-o", out])
    check(code == 0 and "falling back to the C path" in err, f"auto + max-alloc: {code} {err!r}")
    # memory, checked before any work: the device's (capped), the host's (capped); each refusal
    # one line that says what would fit, exit 1, nothing written; auto takes the C path
    shutil.rmtree(out, ignore_errors=True)
    code, _, err = run(["segment", image, "--matvec", "opencl", "--cl-device", dev,
                        "--cl-max-mem", "1000000", "-o", out])
    check(code == 1 and one_error(err) and "device memory" in err and "fits" in err
          and "--cl-max-mem" in err and not os.path.exists(out), f"--cl-max-mem: {code} {err!r}")
    code, _, err = run(["segment", image, "--matvec", "auto", "--cl-device", dev,
                        "--cl-max-mem", "1000000", "-o", out])
    check(code == 0 and "falling back to the C path" in err, f"auto + max-mem: {code} {err!r}")
    shutil.rmtree(out, ignore_errors=True)
    code, _, err = run(["segment", image, "--matvec", "cpu", "--max-memory", "1000000", "-o", out])
    check(code == 1 and one_error(err) and "host memory" in err and "--max-memory" in err
          and "fits" in err and not os.path.exists(out), f"--max-memory: {code} {err!r}")
    code, _, err = run(["affinity", image, "--max-memory", "1000000", "--export", out])
    check(code == 1 and one_error(err) and "the affinity of a" in err and "fits" in err
          and not os.path.exists(out), f"affinity --max-memory: {code} {err!r}")
    # a kernel file that does not build: the build log, then the error (or the fallback)
    kdir = os.path.join(tmp, "badkernels")
    os.mkdir(kdir)
    with open(os.path.join(kdir, "dia_spmv.cl"), "w") as f:
        f.write("__kernel void dia_image(void) { syntax error here }\n")
    out2 = os.path.join(tmp, "cl_badkernel")
    code, _, err = run(["segment", image, "--matvec", "opencl", "--cl-device", dev,
                        "--kernel-dir", kdir, "-o", out2])
    check(code == 1 and "build log" in err and err.strip().splitlines()[-1].startswith("diaseg: error:")
          and not os.path.exists(out2), f"broken kernel: {code} {err!r}")
    code, _, err = run(["segment", image, "--matvec", "auto", "--cl-device", dev, "--kernel-dir",
                        kdir, "-o", out2])
    check(code == 0 and "falling back" in err, f"broken kernel, auto: {code} {err!r}")
    # the Lanczos kernels come from --kernel-dir too, and are built before the solve: a broken
    # lanczos.cl is the build log and an error with opencl, a fallback with auto; ARPACK, which
    # does not need it, runs
    kernels = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels")
    ldir = os.path.join(tmp, "badlanczos")
    os.mkdir(ldir)
    shutil.copy(os.path.join(kernels, "dia_spmv.cl"), ldir)
    out4 = os.path.join(tmp, "cl_badlanczos")
    small = ["eigs", image, "--resize", "40x30", "--nev", "4", "-q", "--cl-device", dev,
             "--kernel-dir", ldir, "-o", out4]
    code, _, err = run(small + ["--matvec", "opencl"])
    check(code == 1 and "cannot read the kernel file" in err and "lanczos.cl" in err
          and not os.path.exists(out4), f"--kernel-dir without lanczos.cl: {code} {err!r}")
    with open(os.path.join(ldir, "lanczos.cl"), "w") as f:
        f.write("__kernel void lz_gemvt(void) { syntax error here }\n")
    code, _, err = run(small + ["--matvec", "opencl"])
    check(code == 1 and "build log" in err and "lanczos.cl" in err.strip().splitlines()[-1]
          and not os.path.exists(out4), f"broken lanczos.cl: {code} {err!r}")
    code, _, err = run(small + ["--matvec", "auto"])
    rep = json.load(open(os.path.join(out4, "report.json"))) if code == 0 else {}
    check(code == 0 and "falling back to the C path" in err and rep.get("matvec_backend") == "cpu",
          f"broken lanczos.cl, auto: {code} {err!r}")
    code, _, err = run(small + ["--matvec", "opencl", "--solver", "arpack"])
    check(code == 0, f"broken lanczos.cl, ARPACK: {code} {err!r}")
    # --cl-max-alloc caps the Lanczos basis too: one that holds the matrix (81 diagonals) but not
    # a basis of 401 columns
    n = 40 * 30
    cap = str(2 * 81 * ((n + 31) // 32 * 32) * 4)
    out3 = os.path.join(tmp, "cl_basis_cap")
    big = ["eigs", image, "--resize", "40x30", "--nev", "4", "--ncv", "400", "-q", "--cl-device",
           dev, "--cl-max-alloc", cap, "-o", out3]
    code, _, err = run(big + ["--matvec", "opencl"])
    check(code == 1 and "Lanczos basis" in err and "largest allocation" in err
          and not os.path.exists(out3), f"basis over --cl-max-alloc: {code} {err!r}")
    code, _, err = run(big + ["--matvec", "auto"])
    check(code == 0 and "falling back to the C path" in err, f"basis cap, auto: {code} {err!r}")
    # devices
    code, stdout, _ = run(["devices", "--json", "-"])
    devs = json.loads(stdout) if code == 0 else {}
    check(code == 0 and len(devs.get("devices", [])) >= 1 and
          all(d["global_mem"] > 0 for d in devs["devices"]), f"devices --json: {code}")
    code, stdout, _ = run(["devices"])
    check(code == 0 and "[0]" in stdout and "--matvec auto" in stdout, "devices")


def digests(folder):
    """name -> content of every file in folder (a folder: its listing)."""
    paths = {f: os.path.join(folder, f) for f in leftovers(folder)}
    return {f: os.listdir(p) if os.path.isdir(p) else open(p, "rb").read()
            for f, p in paths.items()}


def one_error(stderr, prefix="diaseg: error: "):
    lines = stderr.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith(prefix)


def json_and_commit(tmp, data):
    """--json FILE is staged with the outputs (a path that cannot be written fails before anything
    is committed; a device, FIFO or /dev/stdout is written in place, never renamed over), and the
    commit is all or nothing (docs/RELIABILITY.md, Faults)."""
    image = os.path.join(data, "synthetic_regions.png")
    base = ["segment", image, "--resize", "40x30", "-k", "3", "--nev", "4", "-q", "--matvec", "cpu"]
    # an earlier run's outputs, which no failed run may touch
    kept = os.path.join(tmp, "json_kept")
    code, _, err = run(base + ["-o", kept])
    check(code == 0, f"earlier run: {code} {err!r}")
    before = digests(kept)
    fresh = os.path.join(tmp, "json_fresh")
    os.mkdir(os.path.join(tmp, "json_adir"))
    # a device diaseg cannot write: as root a node of our own (the same device as /dev/full), so
    # that a regression renames over our node and not over /dev/full
    if os.geteuid() == 0:
        full = os.path.join(tmp, "full_dev")
        os.mknod(full, 0o666 | 0o020000, os.makedev(1, 7))
    else:
        full = "/dev/full"
    bad = [(os.path.join(tmp, "no", "such", "x.json"), "No such file or directory"),
           (os.path.join(tmp, "json_adir"), "folder"),
           (full, "No space left on device")]
    for path, expect in bad:
        for out in (fresh, kept):
            code, stdout, err = run(base + ["-o", out, "--json", path])
            what = f"--json {os.path.basename(path)} -o {os.path.basename(out)}"
            check(code == 1 and one_error(err) and expect in err, f"{what}: {code} {err!r}")
            check(stdout == "", f"{what}: wrote to stdout")
            check(not os.path.exists(fresh), f"{what}: left {leftovers(fresh)}")
            check(digests(kept) == before, f"{what}: the earlier outputs changed: "
                  f"{leftovers(kept)}")
    check(os.path.isdir(os.path.join(tmp, "json_adir")), "--json DIR: the folder was replaced")
    st = os.stat(full)
    check(not os.path.isfile(full) and (st.st_mode & 0o170000) == 0o020000,
          f"--json {full}: no longer a character device")
    # written in place: a link like /dev/stdout (our own, so that a regression renames over it
    # and not over /dev/stdout) to the standard output, a pipe here, and a FIFO; --json - works
    link = os.path.join(tmp, "stdout_link")
    os.symlink("/proc/self/fd/1", link)
    code, stdout, err = run(base + ["-o", fresh, "--json", link])
    check(code == 0 and stdout and json.loads(stdout)["k"] == 3, f"--json /dev/stdout: {code} {err!r}")
    check(os.path.islink(link), "--json /dev/stdout: the link was replaced")
    fifo = os.path.join(tmp, "report.fifo")
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
    code, _, err = run(base + ["-o", fresh, "--json", fifo])
    try:
        got = reader.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:  # nothing was written to the FIFO
        reader.kill()
        got = reader.communicate()[0]
    check(code == 0 and got and json.loads(got)["k"] == 3, f"--json FIFO: {code} {err!r}")
    code, stdout, err = run(base + ["-o", fresh, "--json", "-"])
    check(code == 0 and json.loads(stdout) == json.load(open(os.path.join(fresh, "report.json"))),
          f"--json -: {code} {err!r}")
    # a regular file: staged beside it, renamed into place, no temporary left
    jdir = os.path.join(tmp, "json_dir")
    os.mkdir(jdir)
    jpath = os.path.join(jdir, "r.json")
    with open(jpath, "w") as f:
        f.write("old")
    code, _, err = run(base + ["-o", fresh, "--json", jpath])
    check(code == 0 and json.load(open(jpath))["k"] == 3 and leftovers(jdir) == ["r.json"],
          f"--json FILE: {code} {err!r} {leftovers(jdir)}")
    # --json naming the run's own report.json: the same report, once
    code, _, err = run(base + ["-o", fresh, "--json", os.path.join(fresh, "report.json")])
    check(code == 0 and not any(f.startswith(".") for f in leftovers(fresh)),
          f"--json DIR/report.json: {code} {err!r} {leftovers(fresh)}")

    # all or nothing: report.json a folder in the way stops the commit before any rename
    os.remove(os.path.join(kept, "report.json"))
    os.mkdir(os.path.join(kept, "report.json"))
    before = digests(kept)
    code, _, err = run(base + ["-o", kept, "--seed", "5"])
    check(code == 1 and one_error(err) and "report.json" in err and "folder" in err,
          f"report.json a folder: {code} {err!r}")
    check(digests(kept) == before and os.path.isdir(os.path.join(kept, "report.json")),
          f"report.json a folder: the earlier outputs changed: {leftovers(kept)}")


def audit_cases(tmp, data):
    """Tiny sigmas, a corrupt PNG's message, a 1 x 1 image, the report's parameters, one message
    for non-convergence, devices --cl-device N."""
    image = os.path.join(data, "synthetic_regions.png")
    ramp = os.path.join(tmp, "ramp.pgm")
    with open(ramp, "wb") as f:
        f.write(b"P5\n16 16\n255\n" + bytes(range(256)))  # no two neighbours alike
    one = os.path.join(tmp, "one.png")
    with open(one, "wb") as f:
        f.write(png_bytes(1, 1, zlib.compress(b"\0\x80")))
    corrupt = os.path.join(tmp, "corrupt.png")
    blob = bytearray(open(os.path.join(data, "camera.png"), "rb").read())
    blob[200:400] = b"\xff" * 200  # inside IDAT: stb's inflate fails without a reason
    with open(corrupt, "wb") as f:
        f.write(blob)
    cases = [
        (["segment", image, "--sigma-x", "0.01"], "smallest usable --sigma-x is 0.2491"),
        (["segment", image, "--sigma-x", "0.01", "--keep-specks"], "smallest usable --sigma-x"),
        (["segment", image, "--sigma-i", "1e-200"], "sigma_i^2"),
        (["segment", image, "--sigma-i", "1e-200", "--keep-specks"], "sigma_i^2"),
        (["eigs", ramp, "--sigma-i", "1e-4", "--affinity", "intensity"],
         "no pixel has a neighbour"),
        (["segment", image, "--sigma-x", "0.3", "--affinity", "intensity"],
         "specks (joined to the rest only by edges N_ij <= 1e-4 with --sigma-i 0.1 --sigma-x 0.3); "
         "raise --sigma-x or --sigma-i, or add --keep-specks"),
        (["segment", corrupt], "corrupt PNG"),
        (["segment", one], "at least 2 pixels"),
    ]
    for args, expect in cases:
        out = os.path.join(tmp, "out_audit")
        code, stdout, err = run(args + ["-o", out, "--matvec", "cpu"])
        what = " ".join(os.path.basename(a) for a in args)
        check(code == 2 and one_error(err) and expect in err, f"{what}: {code} {err!r}")
        check("SOI" not in err and "start vector" not in err and "ARPACK" not in err,
              f"{what}: a message from another stage: {err!r}")
        check(not os.path.exists(out) and stdout == "", f"{what}: left output")
    code, _, err = run(["segment", image, "--sigma-x", "0.2491", "--keep-specks", "--resize",
                        "40x30", "--nev", "4", "-k", "2", "--matvec", "cpu", "-q", "-o",
                        os.path.join(tmp, "out_sx")])
    check(code == 0, f"the advertised --sigma-x 0.2491 (--keep-specks): {code} {err!r}")

    # the report's parameters: --resize and the input's size, the OpenCL settings
    kdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels")
    out = os.path.join(tmp, "out_params")
    code, _, err = run(["eigs", image, "--resize", "40x30", "--nev", "3", "--matvec", "cpu", "-q",
                        "--cl-device", "0", "--kernel-dir", kdir, "--cl-max-alloc", "123456789",
                        "-o", out])
    params = json.load(open(os.path.join(out, "report.json")))["parameters"] if code == 0 else {}
    check(params.get("resize") == {"width": 40, "height": 30} and
          (params.get("input_width"), params.get("input_height")) == (120, 80) and
          params.get("cl_device") == "0" and params.get("kernel_dir") == kdir and
          params.get("cl_max_alloc") == 123456789, f"report parameters: {code} {err!r} {params}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIASEG_")}
    code, _, err = run(["eigs", image, "--nev", "3", "--matvec", "cpu", "-q", "-o", out], env=env)
    params = json.load(open(os.path.join(out, "report.json")))["parameters"] if code == 0 else {}
    check(code == 0 and params.get("resize", 0) is None and params.get("input_width") == 120 and
          params.get("cl_device", 0) is None and params.get("kernel_dir", 0) is None and
          params.get("cl_max_alloc", 0) is None, f"report parameters, defaults: {params}")

    # devices: a device that does not exist is an error, as in a run
    code, stdout, err = run(["devices", "--cl-device", "9"])
    check(code == 1 and one_error(err) and stdout == "", f"devices --cl-device 9: {code} {err!r}")
    code, listing, _ = run(["devices", "--json", "-"])
    if code == 0:
        count = len(json.loads(listing)["devices"])
        check(f"OpenCL device 9 does not exist: there are {count}" in err,
              f"devices --cl-device 9: {err!r}")
    code, stdout, err = run(["devices", "--cl-device", "9", "--json", "-"])
    check(code == 1 and one_error(err) and stdout == "", f"devices --cl-device 9 --json -: {code}")
    code, stdout, _ = run(["segment", "--help"])
    check("1073741823" in stdout, "--help lacks the --max-pixels limit")


def picture_cases(tmp, data):
    """What programs read: labels.png is 16-bit gray holding labels.npy exactly, labels_color.png
    the colour picture; no picture of the trivial (constant) eigenvector 0; --pictures N / 0 / all
    and --colormap (gray: R = G = B; an unknown name is one line, exit 2, nothing written); -o
    creates the folders above it, and a file on the way is one line, nothing created."""
    image = os.path.join(data, "synthetic_regions.png")
    base = ["segment", image, "-k", "3", "--nev", "6", "--matvec", "cpu", "-q"]
    out = os.path.join(tmp, "out_pictures", "nested", "twice")  # nothing of it exists yet
    code, _, err = run(base + ["-o", out])
    check(code == 0 and err == "", f"nested -o: {code} {err!r}")
    if code != 0:
        return
    labels = np.load(os.path.join(out, "labels.npy"))
    depth, ctype, png = read_png(os.path.join(out, "labels.png"))
    check(depth == 16 and ctype == 0 and png is not None and png.shape == labels.shape and
          np.array_equal(png, labels), f"labels.png: depth {depth}, colour type {ctype}, "
          f"not labels.npy")
    depth, ctype, rgb = read_png(os.path.join(out, "labels_color.png"))
    check(depth == 8 and ctype == 2 and rgb is not None and rgb.shape == labels.shape + (3,),
          f"labels_color.png: depth {depth}, colour type {ctype}")
    if rgb is not None and rgb.shape == labels.shape + (3,):  # one colour per segment
        colours = {tuple(c) for c in rgb.reshape(-1, 3)}
        check(len(colours) == len(np.unique(labels)), f"labels_color.png: {len(colours)} colours")
    pictures = sorted(f for f in leftovers(out) if f.startswith("eigvec_"))
    check(pictures == [f"eigvec_{i:02d}.png" for i in range(1, 5)], f"default pictures {pictures}")
    for n, want in (("0", []), ("2", [1, 2]), ("all", [1, 2, 3, 4, 5])):
        code, _, err = run(base + ["-o", out, "--pictures", n])
        pictures = sorted(f for f in leftovers(out) if f.startswith("eigvec_"))
        check(code == 0 and pictures == [f"eigvec_{i:02d}.png" for i in want],
              f"--pictures {n}: {code} {err!r} {pictures}")
        check(np.load(os.path.join(out, "eigenvectors.npy")).shape[0] == 6,
              f"--pictures {n}: eigenvectors.npy lacks vectors")
    code, _, err = run(["eigs", image, "--nev", "4", "--matvec", "cpu", "-q", "-o", out,
                        "--colormap", "gray", "--pictures", "all"])
    pictures = sorted(f for f in leftovers(out) if f.startswith("eigvec_"))
    check(code == 0 and pictures == ["eigvec_01.png", "eigvec_02.png", "eigvec_03.png"],
          f"eigs --colormap gray: {code} {err!r} {pictures}")
    for name in pictures:
        depth, ctype, rgb = read_png(os.path.join(out, name))
        check(depth == 8 and ctype == 2 and rgb is not None and
              np.array_equal(rgb[..., 0], rgb[..., 1]) and np.array_equal(rgb[..., 1], rgb[..., 2])
              and rgb.min() < 64 and rgb.max() > 192, f"{name} with --colormap gray is not gray")
    # a diverging map: 0 at its middle colour, so both ends are used by a signed vector
    code, _, err = run(base + ["-o", out, "--colormap", "coolwarm", "--pictures", "1"])
    depth, ctype, rgb = read_png(os.path.join(out, "eigvec_01.png"))
    check(code == 0 and rgb is not None and rgb[..., 0].max() > 150 and rgb[..., 2].max() > 150,
          f"--colormap coolwarm: {code} {err!r}")
    bad = os.path.join(tmp, "out_pictures_bad", "x")
    for args, expect in ((["--colormap", "rainbow"], "viridis, magma, inferno, gray, coolwarm"),
                         (["--pictures", "-1"], "--pictures"), (["--pictures", "some"], "--pictures")):
        code, stdout, err = run(base + ["-o", bad] + args)
        check(code == 2 and one_error(err) and expect in err and stdout == "" and
              not os.path.exists(os.path.dirname(bad)), f"{' '.join(args)}: {code} {err!r}")
    # a file on the way: one line, and nothing of the path is created
    blocker = os.path.join(tmp, "out_pictures", "blocker")
    with open(blocker, "w") as f:
        f.write("x")
    for target in (os.path.join(blocker, "x"), os.path.join(blocker, "x", "y", "z")):
        code, stdout, err = run(base + ["-o", target])
        check(code == 1 and one_error(err) and "is a file, not a folder" in err and stdout == "",
              f"-o {target}: {code} {err!r}")
    check(open(blocker).read() == "x", "the blocking file was modified")
    # a run that fails after creating the folders removes them all again
    deep = os.path.join(tmp, "out_pictures_gone", "a", "b")
    code, _, err = run(base + ["-o", deep, "--json", os.path.join(tmp, "no_such_dir", "r.json")])
    check(code == 1 and one_error(err) and not os.path.exists(os.path.join(tmp, "out_pictures_gone")),
          f"failed nested run: {code} {err!r}, left {leftovers(os.path.join(tmp, 'out_pictures_gone'))}")


def k_list_cases(tmp, data):
    """Issue 12: -k 2,3 solves once and writes labels_kK.npy / labels_kK.png / overlay_kK.png per
    K, each K's labels those of a run with -k K alone; a single k keeps labels.npy; the folder
    holds one run's files either way; a bad list is one line, exit 2, nothing written."""
    image = os.path.join(data, "synthetic_regions.png")
    base = ["segment", image, "--nev", "6", "--matvec", "cpu", "--seed", "7", "--restarts", "4",
            "-q"]
    out = os.path.join(tmp, "out_klist")
    single = {}
    for k in (2, 3):  # -k K alone, into the folder the list then reuses
        code, _, err = run(base + ["-k", str(k), "-o", out])
        check(code == 0, f"-k {k}: {code} {err!r}")
        if code == 0:
            single[k] = np.load(os.path.join(out, "labels.npy"))
            single[k, "report"] = json.load(open(os.path.join(out, "report.json")))
    code, _, err = run(base + ["-k", "2,3", "-o", out])
    check(code == 0 and err == "", f"-k 2,3: {code} {err!r}")
    expected = ["eigenvectors.npy", "report.json", "contours.npy", "contours.png", "ucm.npy",
                "ucm.png"] + [f"eigvec_{i:02d}.png" for i in range(1, 5)] + \
               [f"{name}_k{k}.{ext}" for k in (2, 3)
                for name, ext in (("labels", "npy"), ("labels", "png"), ("labels_color", "png"),
                                  ("overlay", "png"))]
    # labels.npy, labels.png and overlay.png of the -k 3 run before are gone: one run's files
    check(leftovers(out) == sorted(expected), f"-k 2,3 outputs: {leftovers(out)}")
    rep = json.load(open(os.path.join(out, "report.json"))) if code == 0 else {}
    check(rep.get("ks") == [2, 3] and rep.get("k") == 2 and rep.get("eigensolves") == 1 and
          [s["k"] for s in rep.get("segmentations", [])] == [2, 3] and
          all(s["written"] for s in rep.get("segmentations", [])),
          f"-k 2,3 report: ks {rep.get('ks')} k {rep.get('k')} {rep.get('segmentations')}")
    check(rep.get("segmentation") == {key: v for key, v in rep["segmentations"][0].items()
                                      if key != "k"} if rep else False,
          "-k 2,3: segmentation is not the first k's")
    for k in (2, 3):
        path = os.path.join(out, f"labels_k{k}.npy")
        labels = np.load(path) if os.path.exists(path) else None
        check(labels is not None and labels.dtype == np.int32 and labels.shape == (80, 120),
              f"labels_k{k}.npy: {None if labels is None else (labels.dtype, labels.shape)}")
        if labels is None:
            continue
        check(np.unique(labels).tolist() == list(range(k)),
              f"labels_k{k}.npy: labels {np.unique(labels).tolist()}")
        check(k in single and np.array_equal(labels, single[k]),
              f"labels_k{k}.npy differs from -k {k} alone")
        if k in single:  # the one eigensolve is a single run's: same products, eigenvalues
            one = single[k, "report"]
            check(rep["matvec_count_all_solves"] == one["matvec_count_all_solves"] and
                  rep["eigenvalues"] == one["eigenvalues"],
                  f"-k 2,3: solve {rep['matvec_count_all_solves']} products, -k {k} "
                  f"{one['matvec_count_all_solves']}")
        for name in (f"labels_k{k}.png", f"labels_color_k{k}.png", f"overlay_k{k}.png"):
            check(png_size(os.path.join(out, name)) == (120, 80), f"{name} size")
        depth, ctype, png = read_png(os.path.join(out, f"labels_k{k}.png"))
        check(depth == 16 and ctype == 0 and png is not None and np.array_equal(png, labels),
              f"labels_k{k}.png: depth {depth}, colour type {ctype}, not labels_k{k}.npy")
    # back to a single k: today's names, the list's files removed
    code, _, err = run(base + ["-k", "4", "-o", out])
    check(code == 0 and "labels.npy" in leftovers(out) and
          not any("_k" in f for f in leftovers(out)), f"-k 4 after -k 2,3: {leftovers(out)}")

    cases = [(["-k", "2,x"], "-k 2,x: 'x' is not an integer"),
             (["-k", "0,3"], "-k 0,3: 0 is out of range [1, 9999]"),
             (["-k", "3,3"], "-k 3,3: 3 is in the list twice"),
             (["-k", "2,"], "-k 2,: '' is not an integer"),
             (["-k", "2,10000"], "10000 is out of range [1, 9999]"),
             (["-k", "2,9", "--grouping", "kmeans", "--nev", "8"],
              "-k 9 needs k <= nev, and --nev is 8: raise --nev to 9 or leave it out")]
    for args, expect in cases:
        bad = os.path.join(tmp, "out_klist_bad")
        code, stdout, err = run(["segment", image, "-o", bad] + args)
        check(code == 2 and one_error(err) and expect in err and stdout == "",
              f"{' '.join(args)}: {code} {err!r}")
        check(not os.path.exists(bad), f"{' '.join(args)}: left {leftovers(bad)}")


# ---- issue 12: the boundary detector and the region hierarchy ----------------------------------

def write_png(path, pixels):
    """An 8-bit PNG of a uint8 (H, W) gray or (H, W, 3) RGB array, rows unfiltered."""
    a = np.ascontiguousarray(pixels, np.uint8)
    h, w = a.shape[:2]
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0 if a.ndim == 2 else 2, 0, 0, 0)
    raw = b"".join(b"\0" + a[y].tobytes() for y in range(h))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) +
                png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))
    return path


def png_chunks_ok(path):
    """Whether the file is a PNG whose every chunk's CRC-32 matches, ending with IEND."""
    blob = open(path, "rb").read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    pos, kind = 8, b""
    while pos + 12 <= len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        body = blob[pos + 4:pos + 8 + length]
        if len(body) != length + 4 or \
                struct.unpack(">I", blob[pos + 8 + length:pos + 12 + length])[0] != zlib.crc32(body):
            return False
        pos += 12 + length
    return pos == len(blob) and kind == b"IEND"


def banded_png_cases(tmp, data):
    """Pictures of 65 536 pixels and more are deflated in bands in parallel (output.c): still
    standard PNGs. At 1030 x 1020 labels.png (16-bit) and overlay.png (RGB, Up filter) have 16
    bands each:
    every chunk's CRC holds, labels.png holds labels.npy exactly (zlib and the filters in Python,
    and Pillow where installed), overlay.png inflates to its rows."""
    out = os.path.join(tmp, "out_banded")
    code, _, err = run(["segment", os.path.join(data, "synthetic_regions.png"), "--resize",
                        "1030x1020", "-k", "3", "--matvec", "cpu", "-q", "-o", out])
    check(code == 0 and err == "", f"banded PNGs: {code} {err!r}")
    if code != 0:
        return
    labels = np.load(os.path.join(out, "labels.npy"))
    check(labels.shape == (1020, 1030), f"banded PNGs: labels.npy {labels.shape}")
    for name in ("labels.png", "overlay.png", "labels_color.png", "contours.png"):
        check(png_chunks_ok(os.path.join(out, name)), f"{name}: a chunk's CRC-32 is wrong")
    depth, ctype, png = read_png(os.path.join(out, "labels.png"))
    check(depth == 16 and ctype == 0 and png is not None and np.array_equal(png, labels),
          f"banded labels.png: depth {depth}, colour type {ctype}, not labels.npy")
    blob = open(os.path.join(out, "overlay.png"), "rb").read()
    w, h, depth, ctype = struct.unpack(">IIBB", blob[16:26])
    idat, pos = b"", 8
    while pos < len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        idat += blob[pos + 8:pos + 8 + length] if kind == b"IDAT" else b""
        pos += 12 + length
    raw = zlib.decompress(idat)
    check((w, h, depth, ctype) == (1030, 1020, 8, 2) and len(raw) == h * (3 * w + 1) and
          all(raw[y * (3 * w + 1)] in (0, 2) for y in range(h)),
          f"banded overlay.png: {w} x {h}, depth {depth}, colour type {ctype}, {len(raw)} bytes")
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(os.path.join(out, "labels.png")) as im:
        check(np.array_equal(np.asarray(im), labels), "banded labels.png: Pillow reads otherwise")
    with Image.open(os.path.join(out, "overlay.png")) as im:
        im.load()
        check(im.size == (1030, 1020) and im.mode == "RGB", f"overlay.png: Pillow: {im.size}")


def read_png(path):
    """A gray or RGB PNG of 8 or 16 bits (what diaseg writes: colour type 0 or 2, not interlaced),
    decoded with zlib and the five row filters (PNG spec sections 7-9). Returns (bit depth, colour
    type, array (H, W) of gray or (H, W, 3) of RGB uint16 values); (depth, colour type, None) for
    any other kind."""
    blob = open(path, "rb").read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        return None, None, None
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", blob[16:29])
    if ctype not in (0, 2) or depth not in (8, 16) or interlace:
        return depth, ctype, None
    channels = 3 if ctype == 2 else 1
    pos, idat = 8, b""
    while pos < len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        if kind == b"IDAT":
            idat += blob[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    bpp = channels * depth // 8  # bytes per pixel, the filters' stride
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)]
        cur = bytearray(stride)
        for i in range(stride):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 0:
                pred = 0
            elif ftype == 1:
                pred = a
            elif ftype == 2:
                pred = b
            elif ftype == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(cur))
        prev = cur
    dtype = ">u2" if depth == 16 else np.uint8
    values = np.frombuffer(b"".join(rows), dtype=dtype).astype(np.uint16)
    return depth, ctype, values.reshape((h, w, 3) if channels == 3 else (h, w))


def contour_cases(tmp, data):
    """diaseg contours IMAGE: contours.npy (float32 H x W in [0, 1)) on the step of a synthetic
    image and 0 away from it, contours.png its 16-bit round(65535 strength), --parts the 12
    gradients; any size down to 1 x 1; bad input is one line and no output folder."""
    # the C path, like segment --matvec cpu its maps are compared with bit for bit (the OpenCL
    # detector is checked against the C path in tests/spmv/test_cl_image.c); the gradients, the
    # contour cue's detector and the one with parts (the forest's cases follow these)
    cpu = ["--matvec", "cpu", "--detector", "gradients"]
    w, h = 60, 40
    step = np.full((h, w), 40, np.uint8)
    step[:, 30:] = 200  # the step lies between columns 29 and 30
    image = write_png(os.path.join(tmp, "step.png"), step)
    out = os.path.join(tmp, "out_contours")
    code, stdout, err = run(["contours", image, "-o", out] + cpu)
    check(code == 0 and stdout == "" and one_error(err, "diaseg: ") and "contours in" in err,
          f"contours: {code} {err!r}")
    check(leftovers(out) == ["contours.npy", "contours.png"], f"contours outputs: {leftovers(out)}")
    pb = np.load(os.path.join(out, "contours.npy")) if code == 0 else np.zeros((1, 1))
    check(pb.dtype == np.float32 and pb.shape == (h, w), f"contours.npy {pb.dtype} {pb.shape}")
    if pb.shape == (h, w):
        check(pb.min() >= 0 and pb.max() < 1, f"contours.npy in [{pb.min()}, {pb.max()}]")
        near = pb[:, 29:31].max(axis=1)
        check(np.all(near > 0.5), f"the step's strength per row: {near.min()}")
        far = np.abs(np.arange(w) - 29.5) > 3
        check(pb[:, far].max() < 0.01, f"strength {pb[:, far].max()} more than 3 px from the step")
        # thinned: one pixel per row, 0 everywhere else
        check(np.all((pb > 0).sum(axis=1) == 1), f"nonzero per row {(pb > 0).sum(axis=1)}")
        depth, ctype, png = read_png(os.path.join(out, "contours.png"))
        check(depth == 16 and ctype == 0, f"contours.png: bit depth {depth}, colour type {ctype}")
        check(png is not None and png.shape == (h, w) and
              np.array_equal(png, np.floor(pb.astype(np.float64) * 65535 + 0.5)),
              "contours.png is not round(65535 contours.npy)")
    # --parts: the 12 gradients, the strength unchanged; a rerun without it removes the file
    code, _, err = run(["contours", image, "-o", out, "--parts", "-q"] + cpu)
    check(code == 0 and err == "", f"contours --parts: {code} {err!r}")
    check(leftovers(out) == ["contour_parts.npy", "contours.npy", "contours.png"],
          f"--parts outputs: {leftovers(out)}")
    if code == 0:
        parts = np.load(os.path.join(out, "contour_parts.npy"))
        check(parts.dtype == np.float32 and parts.shape == (12, h, w),
              f"contour_parts.npy {parts.dtype} {parts.shape}")
        check(np.all(np.isfinite(parts)) and parts.min() >= 0, "contour_parts.npy values")
        check(np.array_equal(np.load(os.path.join(out, "contours.npy")), pb),
              "contours.npy differs with --parts")
        # gray: brightness (parts 0-2) and texture (9-11) see the step, colour (3-8) nothing
        check(parts.shape == (12, h, w) and np.all(parts[[0, 1, 2, 9, 10, 11]][:, :, 29:31]
                                                   .max(axis=2) > 0.5) and
              parts[3:9].max() == 0, "contour_parts.npy: the parts of a gray step")
    code, _, err = run(["contours", image, "-o", out, "-q"] + cpu)
    check(code == 0 and leftovers(out) == ["contours.npy", "contours.png"],
          f"contours after --parts: {code} {leftovers(out)}")
    # the default detector: the forest (docs/CLI.md): a line one pixel wide on the step away from
    # the top and bottom rows (the map tapers to 0 over the 5 nearest the image's edge), faint
    # marks at most elsewhere; it has no parts
    code, _, err = run(["contours", image, "-o", out, "-q"])
    fo = np.load(os.path.join(out, "contours.npy")) if code == 0 else np.zeros((h, w))
    if code == 0 and fo.shape == (h, w):
        rows = slice(5, h - 5)
        far = np.abs(np.arange(w) - 29.5) > 3
        check(fo.dtype == np.float32 and fo.min() >= 0 and fo.max() < 1 and
              np.all(fo[rows, 29:31].max(axis=1) > 0.5) and
              np.all((fo[rows, 29:31] > 0).sum(axis=1) == 1) and fo[:, far].max() < 0.15 and
              fo[0].max() == 0 and fo[-1].max() == 0,
              f"the forest's step: per row {fo[rows, 29:31].max(axis=1).min()}, "
              f"far {fo[:, far].max()}")
    else:
        check(False, f"contours (forest): {code} {err!r}")
    code, _, err = run(["contours", image, "-o", os.path.join(tmp, "out_forest_parts"),
                        "--detector", "forest", "--parts"])
    check(code != 0 and one_error(err, "diaseg: ") and "no parts" in err and
          not os.path.exists(os.path.join(tmp, "out_forest_parts")),
          f"--detector forest --parts: {code} {err!r}")
    code, _, err = run(["contours", image, "-o", os.path.join(tmp, "out_bad_detector"),
                        "--detector", "canny"])
    check(code != 0 and one_error(err, "diaseg: ") and
          "'canny' is not one of auto, forest, gradients" in err, f"--detector canny: {err!r}")
    # --resize: the detector runs on the resampled image
    code, _, err = run(["contours", image, "-o", out, "-q", "--resize", "30x20"] + cpu)
    check(code == 0 and np.load(os.path.join(out, "contours.npy")).shape == (20, 30) and
          png_size(os.path.join(out, "contours.png")) == (30, 20), f"--resize 30x20: {code} {err!r}")
    # any size: 1 x 1, a row, a column (the same numbers as the row), 2 x 2
    ramp = np.arange(0, 250, 10, dtype=np.uint8)
    strengths = {}
    for name, pixels in [("one", np.array([[128]], np.uint8)), ("row", ramp[None, :]),
                         ("column", ramp[:, None]), ("square", np.array([[0, 255], [255, 0]],
                                                                         np.uint8))]:
        path = write_png(os.path.join(tmp, f"tiny_{name}.png"), pixels)
        o = os.path.join(tmp, f"out_tiny_{name}")
        code, _, err = run(["contours", path, "-o", o, "-q"] + cpu)
        v = np.load(os.path.join(o, "contours.npy")) if code == 0 else None
        check(code == 0 and v is not None and v.dtype == np.float32 and v.shape == pixels.shape
              and np.all(np.isfinite(v)) and v.min() >= 0 and v.max() < 1 and
              png_size(os.path.join(o, "contours.png")) == pixels.shape[::-1],
              f"contours {pixels.shape}: {code} {err!r} {v}")
        strengths[name] = v
    check(strengths["one"] is not None and strengths["one"].max() == 0, "1 x 1: not 0")
    check(strengths["row"] is not None and strengths["column"] is not None and
          np.allclose(strengths["row"].T, strengths["column"], atol=1e-6, rtol=0),
          "a column's strength is not the row's")
    # bad input: exit 2 (bad image, bad command line) or 1 (I/O), one line, nothing written
    coffee = open(os.path.join(data, "coffee.png"), "rb").read()
    truncated = os.path.join(tmp, "contours_truncated.png")
    with open(truncated, "wb") as f:
        f.write(coffee[:len(coffee) // 2])
    folder = os.path.join(tmp, "contours_adir")
    os.mkdir(folder)
    cases = [([os.path.join(tmp, "missing.png")], 1, "No such file"),
             ([folder], 2, "holds no image files"),  # a folder: a batch, here empty
             ([truncated], 2, "truncated or corrupt"),
             ([], 2, "contours needs an IMAGE"),
             ([image, "--nev", "4"], 2, "unknown option '--nev' for contours"),
             ([image, "--resize", "0x3"], 2, "--resize"),
             ([image, "--max-pixels", "100"], 2, "--max-pixels")]
    for args, want, expect in cases:
        bad = os.path.join(tmp, "out_contours_bad")
        code, stdout, err = run(["contours"] + args + ["-o", bad])
        what = "contours " + " ".join(os.path.basename(a) for a in args)
        check(code == want and one_error(err) and expect in err and stdout == "",
              f"{what}: exit {code} (expected {want}) {err!r}")
        check(not os.path.exists(bad), f"{what}: left {leftovers(bad)}")


def three_regions(h=48, w=64):
    """Three vertical bands (levels 30, 130, 230, noise sd 3) and their truth."""
    truth = np.zeros((h, w), np.int32)
    truth[:, 22:44] = 1
    truth[:, 44:] = 2
    rng = np.random.default_rng(0)
    pixels = np.array([30, 130, 230])[truth] + rng.normal(0, 3, truth.shape)
    return np.clip(np.round(pixels), 0, 255).astype(np.uint8), truth


def nested(fine, coarse):
    """Every region of fine lies inside one region of coarse."""
    table = np.zeros((fine.max() + 1, coarse.max() + 1), int)
    np.add.at(table, (fine.ravel(), coarse.ravel()), 1)
    return bool(np.all((table > 0).sum(axis=1) == 1))


def ucm_cut(ucm, k):
    """The regions of the UCM's cut at k: pixels joined across every boundary below the k-1
    strongest levels (BSDS layout: pixel (x, y) at (2y+1, 2x+1), boundaries between them)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    h, w = (ucm.shape[0] - 1) // 2, (ucm.shape[1] - 1) // 2
    across_x = ucm[1::2, 2:-1:2]  # between (x, y) and (x + 1, y): h x (w - 1)
    across_y = ucm[2:-1:2, 1::2]  # between (x, y) and (x, y + 1): (h - 1) x w
    levels = np.unique(np.concatenate([across_x.ravel(), across_y.ravel()]))[::-1]
    t = levels[k - 1] if k - 1 < len(levels) else -1.0
    idx = np.arange(h * w).reshape(h, w)
    jx, jy = across_x <= t, across_y <= t
    rows = np.concatenate([idx[:, :-1][jx], idx[:-1, :][jy]])
    cols = np.concatenate([idx[:, 1:][jx], idx[1:, :][jy]])
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(h * w, h * w))
    return connected_components(graph, directed=False)[1].reshape(h, w)


def threshold_cases(tmp):
    """segment --threshold T: the cut of the hierarchy at level T, which is the UCM's cut there
    (BSDS500's bwlabel(ucm2 <= T)); the report's level and segment count; bad uses refused."""
    from scipy import ndimage
    pixels, truth = three_regions()
    image = write_png(os.path.join(tmp, "three_t.png"), pixels)
    out = os.path.join(tmp, "out_threshold")
    code, _, err = run(["segment", image, "--matvec", "cpu", "-o", out, "-q"])
    check(code == 0, f"threshold: the reference run {code} {err!r}")
    if code != 0:
        return
    ucm = np.load(os.path.join(out, "ucm.npy"))
    levels = np.unique(ucm[1:-1, 1:-1])
    for t in (float(levels[len(levels) // 2]) + 1e-6, float(levels[-1]) * 0.5 + 1e-6):
        code, _, err = run(["segment", image, "--matvec", "cpu", "--threshold", repr(t), "-o",
                            out, "-q"])
        check(code == 0 and err == "", f"--threshold {t}: {code} {err!r}")
        if code != 0:
            continue
        labels = np.load(os.path.join(out, "labels.npy"))
        want = ndimage.label(ucm <= t)[0][1::2, 1::2]
        check(adjusted_rand(labels.ravel(), want.ravel()) == 1.0,
              f"--threshold {t}: not the UCM's cut at {t}")
        rep = json.load(open(os.path.join(out, "report.json")))
        seg = rep.get("segmentation", {})
        check(math.isclose(rep["parameters"].get("threshold", -1), t, rel_tol=1e-12) and
              math.isclose(seg.get("level", -1), t, rel_tol=1e-12) and
              seg.get("segments") == len(np.unique(labels)),
              f"--threshold {t}: report {rep['parameters'].get('threshold')} {seg}")
    for args, expect in ((["--threshold", "0.5", "-k", "3"], "give one"),
                         (["--threshold", "0.5", "--grouping", "kmeans"], "--grouping hierarchy"),
                         (["--threshold", "-1"], "--threshold"),
                         (["--threshold", "nan"], "--threshold")):
        bad = os.path.join(tmp, "out_threshold_bad")
        code, stdout, err = run(["segment", image, "-o", bad] + args)
        check(code == 2 and one_error(err) and expect in err and not os.path.exists(bad),
              f"{' '.join(args)}: {code} {err!r}")


def small_image_solver(tmp):
    """The default segment of images too small for the coarse start (under 116 pixels a side, whose
    coarse image would be under 24 pixels a side) takes Lanczos, not chfsi from a random block, which at nev 16 did not
    converge in 1000 restarts on a few hundred pixels (exit 3 after seconds); a larger one takes
    chfsi, and its coarse solve converges (on a flat 76 x 76 to 90 x 90 image the coarse problem,
    16 to 18 pixels a side then, ran 1000 restarts unconverged: 767256 products, 7 s)."""
    rng = np.random.default_rng(3)
    for w, h, solver, flat in ((1, 50, "lanczos", 0), (50, 3, "lanczos", 0), (40, 8, "lanczos", 0),
                               (96, 80, "lanczos", 1), (120, 120, "chfsi", 1),
                               (128, 120, "chfsi", 0)):
        pixels = np.clip(110 + (0 if flat else 1) * rng.normal(0, 20, (h, w, 3)), 0,
                         255).astype(np.uint8)
        image = write_png(os.path.join(tmp, f"small_{w}x{h}.png"), pixels)
        out = os.path.join(tmp, f"out_small_{w}x{h}")
        code, _, err = run(["segment", image, "--matvec", "cpu", "-q", "-o", out])
        check(code == 0 and err == "", f"{w}x{h} default segment: exit {code}, {err!r}")
        if code != 0:
            continue
        rep = json.load(open(os.path.join(out, "report.json")))
        coarse = rep["seconds"]["solve_split"].get("coarse_start")
        check(rep["parameters"]["solver"] == solver and rep["converged"] is True and
              (coarse is None) == (solver == "lanczos") and
              (coarse is None or coarse["products"] < 10000),
              f"{w}x{h}: solver {rep['parameters']['solver']} (want {solver}), converged "
              f"{rep['converged']}, coarse start {coarse}")


def hierarchy_cases(tmp, data):
    """segment --affinity contour --grouping hierarchy -k 2,3,20: one solve, the cuts of the
    hierarchy at 2, 3 and 20 > nev regions, nested; the 3-cut is the three synthetic regions;
    ucm.npy on BSDS's doubled grid, whose cuts are the labels; contours.npy is diaseg contours';
    the report's new keys; bad values are one line, exit 2."""
    pixels, truth = three_regions()
    h, w = truth.shape
    image = write_png(os.path.join(tmp, "three.png"), pixels)
    out = os.path.join(tmp, "out_hierarchy")
    code, stdout, err = run(["segment", image, "--affinity", "contour", "--grouping", "hierarchy",
                             "-k", "2,3,20", "--matvec", "cpu", "-o", out, "-q"])
    check(code == 0 and err == "" and stdout == "", f"contour + hierarchy: {code} {err!r}")
    if code != 0:
        return
    expected = ["contours.npy", "contours.png", "eigenvectors.npy", "report.json", "ucm.npy",
                "ucm.png"] + [f"eigvec_{i:02d}.png" for i in range(1, 5)] + \
               [f"{name}_k{k}.{ext}" for k in (2, 3, 20)
                for name, ext in (("labels", "npy"), ("labels", "png"), ("labels_color", "png"),
                                  ("overlay", "png"))]
    check(leftovers(out) == sorted(expected), f"hierarchy outputs: {leftovers(out)}")
    labels = {k: np.load(os.path.join(out, f"labels_k{k}.npy")) for k in (2, 3, 20)}
    for k, count in ((2, 2), (3, 3)):
        check(np.unique(labels[k]).tolist() == list(range(count)),
              f"labels_k{k}: labels {np.unique(labels[k]).tolist()}")
    check(3 < len(np.unique(labels[20])) <= 20 and
          np.unique(labels[20]).tolist() == list(range(len(np.unique(labels[20])))),
          f"labels_k20: labels {np.unique(labels[20]).tolist()}")
    # the strong contours (> 0.5) lie next to the true boundaries (columns 21 | 22, 43 | 44), one
    # pixel wide; a pixel on them may go to the region on either side, every other pixel is in
    # its region
    pb = np.load(os.path.join(out, "contours.npy"))
    strong = pb > 0.5
    cols = np.nonzero(strong)[1]
    # (the texture of the noise may raise a few more: at least 95% lie on the true boundaries,
    # and every row has both)
    check(np.mean(np.isin(cols, [21, 22, 43, 44])) >= 0.95 and
          strong[:, 21:23].any(axis=1).all() and strong[:, 43:45].any(axis=1).all(),
          f"strong contours: {strong.sum()} pixels in columns {np.unique(cols).tolist()}")
    off = ~strong
    ari = adjusted_rand(truth[off], labels[3][off])
    check(ari == 1.0, f"the 3-cut off the strong contours: ARI {ari}")
    check(adjusted_rand(truth.ravel(), labels[3].ravel()) >= 0.99,
          f"the 3-cut: ARI {adjusted_rand(truth.ravel(), labels[3].ravel())}")
    check(nested(truth[off][:, None], labels[2][off][:, None]), "the 2-cut splits a region")
    check(nested(labels[3], labels[2]) and nested(labels[20], labels[3]), "the cuts are not nested")
    # ucm.npy: BSDS's (2H+1) x (2W+1) ucm2, 0 at the pixels and on the frame's cracks, every
    # corner the strongest crack meeting there (so the benchmark's boundary map ucm[2::2, 2::2]
    # holds no frame), and its cut at k regions is labels_kK
    ucm = np.load(os.path.join(out, "ucm.npy"))
    check(ucm.dtype == np.float32 and ucm.shape == (2 * h + 1, 2 * w + 1),
          f"ucm.npy {ucm.dtype} {ucm.shape}")
    if ucm.shape == (2 * h + 1, 2 * w + 1):
        frame_cracks = np.concatenate([ucm[0, 1::2], ucm[-1, 1::2], ucm[1::2, 0], ucm[1::2, -1]])
        padded = np.pad(ucm, 1)
        strongest = np.maximum.reduce([padded[:-2, 1:-1], padded[2:, 1:-1], padded[1:-1, :-2],
                                       padded[1:-1, 2:]])[::2, ::2]
        check(np.all(frame_cracks == 0) and np.array_equal(ucm[::2, ::2], strongest) and
              ucm.min() >= 0 and ucm.max() > 0 and np.all(ucm[1::2, 1::2] == 0),
              f"ucm.npy: frame cracks max {frame_cracks.max()}, corners off their strongest "
              f"crack {int((ucm[::2, ::2] != strongest).sum())}, min {ucm.min()}, pixel sites "
              f"max {ucm[1::2, 1::2].max()}")
        for k in (2, 3, 20):
            check(adjusted_rand(ucm_cut(ucm, len(np.unique(labels[k]))).ravel(),
                                labels[k].ravel()) == 1.0, f"the UCM's cut is not labels_k{k}")
    # ucm.png: 8-bit gray, dark on white, 255 (1 - sqrt(level / top level))
    depth, ctype, gray = read_png(os.path.join(out, "ucm.png"))
    if ucm.shape == (2 * h + 1, 2 * w + 1) and gray is not None and gray.shape == ucm.shape:
        ratio = (ucm / ucm.max()).astype(np.float32).astype(np.float64)
        want = np.floor(255.0 * (1.0 - np.sqrt(ratio)) + 0.5)
        check(depth == 8 and np.abs(gray - want).max() <= 1 and gray[0, 0] == 255 and
              gray[1, 1] == 255 and gray.min() == 0,
              f"ucm.png: depth {depth}, off from 255 (1 - sqrt(ucm / top)) by "
              f"{np.abs(gray - want).max()}")
    else:
        check(False, f"ucm.png: depth {depth}, colour type {ctype}, "
                     f"shape {None if gray is None else gray.shape}")
    # the contour cue's map is gPb: diaseg contours' map with the eigenvectors' term, its crests
    # within 2 pixels of the detector's (the term may move one by a pixel or two), in [0, 1)
    code, _, err = run(["contours", image, "-o", os.path.join(tmp, "out_three_contours"), "-q",
                        "--matvec", "cpu", "--detector", "gradients"])
    gpb = np.load(os.path.join(out, "contours.npy"))
    mpb = np.load(os.path.join(tmp, "out_three_contours", "contours.npy")) if code == 0 else None
    if mpb is not None and mpb.shape == gpb.shape:
        pad = np.pad(mpb > 0.3, 2)
        near = np.zeros(mpb.shape, bool)
        for dy in range(5):
            for dx in range(5):
                near |= pad[dy:dy + mpb.shape[0], dx:dx + mpb.shape[1]]
        strong = gpb > 0.5
        check(strong.any() and not (strong & ~near).any() and gpb.min() >= 0 and gpb.max() < 1,
              f"segment's gPb: {int((strong & ~near).sum())} of {int(strong.sum())} strong pixels "
              f"away from diaseg contours' crests, range {gpb.min()}..{gpb.max()}")
    else:
        check(False, f"diaseg contours: {code} {err!r}")
    depth, ctype, _ = read_png(os.path.join(out, "contours.png"))
    check(depth == 16 and ctype == 0 and png_size(os.path.join(out, "contours.png")) == (w, h),
          f"segment's contours.png: depth {depth}, colour type {ctype}")
    # the report: grouping, its numbers (the defaults here), sigma_c, the detector's time
    rep = json.load(open(os.path.join(out, "report.json")))
    params = rep["parameters"]
    check(params.get("affinity") == "contour" and params.get("grouping") == "hierarchy" and
          params.get("spectral_weight") == 0.2 and params.get("min_region") == 0 and
          params.get("region_weight") == 0.2 and params.get("forest_weight") == 0.25 and
          params.get("arc_weight") == 0 and params.get("net_weight") == 1 and
          params.get("sigma_c") == 0.1,
          f"hierarchy report parameters {params}")
    check(rep.get("ks") == [2, 3, 20] and rep.get("eigensolves") == 1 and rep.get("nev") == 16 and
          [s["k"] for s in rep.get("segmentations", [])] == [2, 3, 20] and
          all(s["written"] for s in rep.get("segmentations", [])),
          f"hierarchy report: ks {rep.get('ks')} {rep.get('segmentations')}")
    sec = rep["seconds"]
    check(0 < sec.get("contours", -1) <= sec["affinity"],
          f"seconds.contours {sec.get('contours')}, affinity {sec['affinity']}")
    # values given are reported as given; the cut at 3 still finds the regions
    code, _, err = run(["segment", image, "--affinity", "contour+color", "--grouping", "hierarchy",
                        "-k", "3", "--sigma-c", "0.2", "--spectral-weight", "0.5", "--min-region",
                        "30", "--region-weight", "0", "--forest-weight", "0.5", "--arc-weight", "0.6",
                        "--net-weight", "0.7",
                        "--matvec", "cpu",
                        "-o", out, "-q"])
    rep = json.load(open(os.path.join(out, "report.json"))) if code == 0 else {"parameters": {}}
    params = rep["parameters"]
    check(code == 0 and params.get("affinity") == "contour+color" and
          params.get("sigma_c") == 0.2 and params.get("spectral_weight") == 0.5 and
          params.get("min_region") == 30 and params.get("region_weight") == 0 and
          params.get("forest_weight") == 0.5 and rep.get("ks") == [3] and
          params.get("arc_weight") == 0 and  # without the region cue the learnt strengths are off
          params.get("net_weight") == 0.7,
          f"given values: {code} {err!r} {params}")
    if code == 0:
        one = np.load(os.path.join(out, "labels.npy"))
        off = np.load(os.path.join(out, "contours.npy")) <= 0.5
        check(adjusted_rand(truth[off], one[off]) == 1.0, "contour+color, -k 3: the 3-cut off the "
              f"contours: ARI {adjusted_rand(truth[off], one[off])}")
        check("ucm.npy" in leftovers(out) and not any("_k" in f for f in leftovers(out)),
              f"-k 3 after -k 2,3,20: {leftovers(out)}")
    # without contours and without a hierarchy: no such files, seconds.contours about 0
    code, _, err = run(["segment", image, "--affinity", "intensity", "--grouping", "kmeans",
                        "-k", "3", "--nev", "4", "--matvec", "cpu", "-o", out, "-q"])
    rep = json.load(open(os.path.join(out, "report.json"))) if code == 0 else {"seconds": {}}
    check(code == 0 and not any(f.startswith(("contours", "ucm")) for f in leftovers(out)) and
          rep["parameters"]["grouping"] == "kmeans" and rep["seconds"].get("contours", 1) < 1e-3 and
          rep["parameters"]["forest_weight"] == 0,
          f"intensity + kmeans after the hierarchy: {code} {leftovers(out)} {rep['seconds']}")

    cases = [(["--grouping", "bogus"], "--grouping: 'bogus' is not one of hierarchy, kmeans"),
             (["--spectral-weight", "-1"], "--spectral-weight: -1 is invalid: it must be >= 0"),
             (["--spectral-weight", "nan"], "--spectral-weight"),
             (["--region-weight", "-0.5"], "--region-weight: -0.5 is invalid: it must be finite and >= 0"),
             (["--region-weight", "inf"], "--region-weight"),
             (["--forest-weight", "-1"], "--forest-weight: -1 is invalid: it must be finite and >= 0"),
             (["--forest-weight", "nan"], "--forest-weight"),
             (["--arc-weight", "1.5"], "--arc-weight: 1.5 is invalid: it must be in [0, 1]"),
             (["--arc-weight", "nan"], "--arc-weight"),
             (["--net-weight", "-0.1"], "--net-weight: -0.1 is invalid: it must be in [0, 1]"),
             (["--net-weight", "nan"], "--net-weight"),
             (["--min-region", "-3"], "--min-region: -3 is out of range"),
             (["--min-region", "x"], "--min-region"),
             (["--sigma-c", "0"], "--sigma-c: 0 is invalid: it must be > 0"),
             (["--sigma-c", "-1"], "--sigma-c"),
             (["--affinity", "contours"], "--affinity"),
             (["--grouping", "kmeans", "-k", "20", "--nev", "8"],
              "-k 20 needs k <= nev, and --nev is 8"),  # without --nev, nev follows k
             (["--grouping", "kmeans", "-k", "2,3,20", "--nev", "8"], "-k 20 needs k <= nev"),
             (["--grouping", "hierarchy", "-k", "10000"], "-k"),
             (["--grouping", "hierarchy", "-k", "2,10000"], "10000 is out of range [1, 9999]"),
             (["--grouping", "kmeans", "-k", "65", "--nev", "70"], "-k")]
    for args, expect in cases:
        bad = os.path.join(tmp, "out_hierarchy_bad")
        code, stdout, err = run(["segment", image, "--matvec", "cpu", "-o", bad] + args)
        check(code == 2 and one_error(err) and expect in err and stdout == "",
              f"{' '.join(args)}: {code} {err!r}")
        check(not os.path.exists(bad), f"{' '.join(args)}: left {leftovers(bad)}")
    # the grouping options belong to segment
    code, _, err = run(["eigs", image, "--grouping", "hierarchy", "-o",
                        os.path.join(tmp, "out_hierarchy_bad")])
    check(code == 2 and one_error(err) and "unknown option" in err, f"eigs --grouping: {code} {err!r}")


def has_opencl():
    code, stdout, _ = run(["devices", "--json", "-"])
    return code == 0 and len(json.loads(stdout).get("devices", [])) > 0


def issue16_cases(tmp, data):
    """Issue 16: a tolerance below float precision, special files where a kernel file belongs,
    garbage in the environment, numbers with a leading space or '+', a device index past the
    integers, JPEG and BMP headers diaseg cannot decode, control characters and very long names
    in messages, special files as the image. Each: its exit code, one error line, the phrase,
    no output folder; none may hang (a 30 s limit each)."""
    coffee = os.path.join(data, "coffee.png")
    small = ["--resize", "64x48", "--matvec", "cpu"]

    def make(name, content):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(content)
        return path

    # an arithmetic-coded JPEG (SOF9): a frame, a scan and its end, no Huffman tables
    sof9 = b"\xff\xc9\x00\x0b\x08\x00\x30\x00\x40\x01\x01\x11\x00"
    sos = b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00"
    arith = make("arith.jpg", b"\xff\xd8" + sof9 + sos + b"\x12\x34\x56" + b"\xff\xd9")
    lossless = make("lossless.jpg", b"\xff\xd8" + b"\xff\xc3" + sof9[2:] + sos + b"\x12" +
                    b"\xff\xd9")
    # a BMP whose width is negative (only the height may be: rows top-down)
    bmp = bytearray(bmp_bytes(40, 30))
    bmp[18:22] = struct.pack("<i", -40)
    negw = make("negwidth.bmp", bytes(bmp))
    # special files as the image
    fifo = os.path.join(tmp, "fifo.png")
    os.mkfifo(fifo)
    sock_path = os.path.join(tmp, "sock.png")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(sock_path)
    # kernel folders whose dia_spmv.cl is a FIFO, a folder
    kfifo = os.path.join(tmp, "k_fifo")
    os.mkdir(kfifo)
    os.mkfifo(os.path.join(kfifo, "dia_spmv.cl"))
    kdir = os.path.join(tmp, "k_dir")
    os.makedirs(os.path.join(kdir, "dia_spmv.cl"))
    newline = os.path.join(tmp, "two\nlines.png")
    tab = os.path.join(tmp, "tab\there.png")
    long_name = os.path.join(tmp, "x" * 5000 + ".png")

    env = {k: v for k, v in os.environ.items() if not k.startswith("DIASEG_")}
    # (arguments, environment additions, exit code, phrase)
    cases = [
        (["segment", coffee, "--tol", "1e-12"] + small, {}, 2, "smallest tolerance"),
        (["segment", coffee, "--tol", "1e-7"] + small, {}, 2, "--tol 1e-07 is below 1e-06"),
        (["eigs", coffee, "--tol", "5e-7"] + small, {}, 2, "smallest tolerance"),
        (["segment", coffee] + small, {"DIASEG_CL_MAX_ALLOC": "12abc"}, 2,
         "DIASEG_CL_MAX_ALLOC: '12abc' is not an integer"),
        (["segment", coffee] + small, {"DIASEG_CL_MAX_ALLOC": "0"}, 2, "DIASEG_CL_MAX_ALLOC"),
        (["segment", coffee] + small, {"DIASEG_CL_MAX_ALLOC": "-5"}, 2, "DIASEG_CL_MAX_ALLOC"),
        (["segment", coffee] + small, {"DIASEG_CL_MAX_ALLOC": " 12"}, 2, "DIASEG_CL_MAX_ALLOC"),
        (["segment", coffee] + small, {"DIASEG_LANCZOS_GROUPS": "abc"}, 2,
         "DIASEG_LANCZOS_GROUPS"),
        (["segment", coffee] + small, {"DIASEG_LANCZOS_GROUPS": "4,0"}, 2,
         "DIASEG_LANCZOS_GROUPS"),
        (["segment", coffee] + small, {"DIASEG_LANCZOS_GROUPS": "4,8x"}, 2,
         "DIASEG_LANCZOS_GROUPS"),
        (["segment", coffee] + small, {"DIASEG_LANCZOS_UNFUSED": "yes"}, 2,
         "DIASEG_LANCZOS_UNFUSED"),
        (["segment", coffee, "-k", " 5"] + small, {}, 2, "-k: ' 5' is not an integer"),
        (["segment", coffee, "-k", "+5"] + small, {}, 2, "-k: '+5' is not an integer"),
        (["segment", coffee, "--nev", "\t8"] + small, {}, 2, "--nev"),
        (["segment", coffee, "--tol", " 1e-3"] + small, {}, 2, "--tol: ' 1e-3' is not a number"),
        (["segment", coffee, "--sigma-i", "+0.1"] + small, {}, 2, "--sigma-i"),
        (["segment", coffee, "--resize", " 64x48", "--matvec", "cpu"], {}, 2, "--resize"),
        (["segment", coffee, "--resize", "64x+48", "--matvec", "cpu"], {}, 2, "--resize"),
        (["segment", coffee, "--nev", "99999999999999999999"] + small, {}, 2,
         "out of range"),
        (["segment", arith], {}, 2, "arithmetic-coded JPEG"),
        (["segment", lossless], {}, 2, "lossless JPEG"),
        (["segment", negw], {}, 2, "width -40"),
        (["segment", fifo], {}, 1, "FIFO"),
        (["segment", sock_path], {}, 1, "socket"),
        (["segment", "/dev/zero"], {}, 1, "not a regular file"),
        (["segment", "/proc/self/mem"], {}, 2, "size"),
        (["segment", newline], {}, 1, "two\\nlines.png"),
        (["segment", tab], {}, 1, "tab\\there.png"),
        (["segment", long_name], {}, 1, "File name too long"),
        (["segment", coffee, "--affinity", "col\nor"] + small, {}, 2, "col\\nor"),
        (["segment", coffee, "--affinity", "\x1b[31mred"] + small, {}, 2, "\\x1b[31mred"),
    ]
    if has_opencl():
        cl = ["--matvec", "opencl", "--cl-device", "0", "--resize", "64x48"]
        cases += [
            (["segment", coffee, "--matvec", "opencl", "--resize", "64x48", "--cl-device",
              "99999999999999999999"], {}, 1,
             "OpenCL device 99999999999999999999 does not exist: there are"),
            (["segment", coffee, "--matvec", "opencl", "--resize", "64x48", "--cl-device",
              "-99999999999999999999"], {}, 1,
             "OpenCL device -99999999999999999999 does not exist"),
            (["segment", coffee, "--kernel-dir", kfifo] + cl, {}, 1, "not a regular file"),
            (["segment", coffee, "--kernel-dir", kdir] + cl, {}, 1,
             "is a folder, not a kernel file"),
            (["segment", coffee] + cl, {"DIASEG_KERNEL_DIR": kfifo}, 1, "not a regular file"),
        ]
    for args, extra, want, expect in cases:
        out = os.path.join(tmp, "out_i16")
        shutil.rmtree(out, ignore_errors=True)  # a run that wrongly succeeded leaves it
        what = " ".join(repr(a[:40]) for a in args[1:]) + " " + repr(extra)
        try:
            code, stdout, stderr = run(args + ["-o", out], env=dict(env, **extra), timeout=30)
        except subprocess.TimeoutExpired:
            check(False, f"{what}: still running after 30 s")
            continue
        check(code == want, f"{what}: exit code {code}, expected {want}: {stderr!r}")
        check(one_error(stderr), f"{what}: stderr is not one error line: {stderr[:300]!r}")
        check(expect in stderr, f"{what}: message lacks {expect!r}: {stderr.strip()[:300]!r}")
        check(not os.path.exists(out), f"{what}: left the output folder behind")
        check(stdout == "", f"{what}: wrote to stdout: {stdout!r}")
    sock.close()
    # the smallest tolerance diaseg honours is accepted, and met
    out = os.path.join(tmp, "out_i16_tol")
    code, _, stderr = run(["eigs", coffee, "--tol", "1e-6", "--nev", "4", "-q", "--keep-specks",
                           "-o", out] + small, env=env)
    rep = json.load(open(os.path.join(out, "report.json"))) if code == 0 else {}
    check(code == 0 and all(r <= 1.01e-6 * abs(v) for r, v in  # 1%: float32 rounding
                            zip(rep["residuals"], rep["eigenvalues"])),
          f"--tol 1e-6: {code} {stderr!r} {rep.get('residuals')}")
    # an empty environment variable is no setting; a good one is taken
    code, _, stderr = run(["eigs", coffee, "--nev", "4", "-q", "-o", out] + small,
                          env=dict(env, DIASEG_CL_MAX_ALLOC="", DIASEG_LANCZOS_GROUPS="",
                                   DIASEG_LANCZOS_UNFUSED=""))
    check(code == 0, f"empty DIASEG_ variables: {code} {stderr!r}")
    code, _, stderr = run(["eigs", coffee, "--nev", "4", "-q", "-o", out] + small,
                          env=dict(env, DIASEG_CL_MAX_ALLOC="123456789",
                                   DIASEG_LANCZOS_GROUPS="4,8", DIASEG_LANCZOS_UNFUSED="1"))
    rep = json.load(open(os.path.join(out, "report.json"))) if code == 0 else {}
    check(code == 0 and rep["parameters"].get("cl_max_alloc") == 123456789,
          f"good DIASEG_ variables: {code} {stderr!r}")
    # chfsi's round after carving a speck stalled on this image (exit 3, 1 of 8 pairs, 8 s of
    # products): the round is bounded and the converged pairs before it are kept, said once
    out = os.path.join(tmp, "out_i16_carve")
    code, _, stderr = run(["segment", coffee, "--solver", "chfsi", "--nev", "8", "-k", "5",
                           "--json", os.path.join(tmp, "carve.json"), "-o", out] + small)
    rep = json.load(open(os.path.join(tmp, "carve.json"))) if code == 0 else {}
    warnings = [ln for ln in stderr.splitlines() if ln.startswith("diaseg: warning:")]
    check(code == 0 and rep.get("converged") is True and len(rep.get("eigenvalues", [])) == 8
          and max(rep["residuals"]) <= 1e-3 * min(rep["eigenvalues"]) * 1.01
          and len(warnings) == 1 and "pairs of the solve before it are kept" in warnings[0]
          and rep.get("matvec_count_all_solves", 1e9) < 100000,
          f"chfsi after carving: {code} {stderr!r} {rep.get('matvec_count_all_solves')}")


# ---- input formats: TIFF, WebP, standard input (the loader's own tests: tests/io/test_image.c) --

def tiff_bytes(pixels):
    """An uncompressed little-endian RGB TIFF of a uint8 (H, W, 3) array, one strip."""
    a = np.ascontiguousarray(pixels, np.uint8)
    h, w = a.shape[:2]
    data = a.tobytes()
    ifd = 8 + len(data) + (len(data) & 1)
    entries = [(256, 4, 1, w), (257, 4, 1, h), (258, 3, 3, ifd + 2 + 12 * 10 + 4), (259, 3, 1, 1),
               (262, 3, 1, 2), (273, 4, 1, 8), (277, 3, 1, 3), (278, 4, 1, h),
               (279, 4, 1, len(data)), (284, 3, 1, 1)]
    out = b"II*\0" + struct.pack("<I", ifd) + data + b"\0" * (len(data) & 1)
    out += struct.pack("<H", len(entries))
    for tag, kind, count, value in entries:
        short = kind == 3 and count == 1
        field = struct.pack("<HH", value, 0) if short else struct.pack("<I", value)
        out += struct.pack("<HHI", tag, kind, count) + field
    return out + struct.pack("<I", 0) + struct.pack("<HHH", 8, 8, 8)


# A lossless WebP (cwebp -lossless -z 9) of WEBP_PIXELS, 4 x 3.
WEBP_BYTES = bytes.fromhex(
    "524946463600000057454250565038 4c290000002f0380000089 8ce87f1814b46dc3748fe4f8834ac48229"
    "ee4b6a0201c28913fdb222ae03f809954801 00".replace(" ", ""))
WEBP_PIXELS = np.array([[[(x * 60 + y * 7) % 256, (y * 90 + 5) % 256, (x * y * 31 + 200) % 256]
                         for x in range(4)] for y in range(3)], np.uint8)


def input_format_cases(tmp, data):
    """The image '-' is standard input (a redirection, a pipe; empty or not an image: exit 2, one
    line); a TIFF and a WebP give the contours of the same pixels as a PNG (or, in a build without
    libtiff / libwebp, exit 2 naming the library)."""
    cpu = ["--matvec", "cpu", "-q"]

    def contours(args, stdin=None):
        out = os.path.join(tmp, "out_formats")
        shutil.rmtree(out, ignore_errors=True)
        p = subprocess.run([DIASEG, "contours"] + args + ["-o", out] + cpu, stdin=stdin,
                           capture_output=True, timeout=600)
        pb = np.load(os.path.join(out, "contours.npy")) if p.returncode == 0 else None
        return p.returncode, p.stderr.decode(errors="replace"), pb

    pixels = np.zeros((24, 32, 3), np.uint8)
    pixels[:, :, 0] = np.arange(32)[None, :] * 8
    pixels[:, 16:, 1] = 200
    pixels[8:, :, 2] = 90
    png = write_png(os.path.join(tmp, "formats.png"), pixels)
    code, err, want = contours([png])
    check(code == 0 and want is not None and want.shape == (24, 32),
          f"contours PNG: {code} {err!r}")
    # standard input: a redirected file, then a pipe
    with open(png, "rb") as f:
        code, err, got = contours(["-"], stdin=f)
    check(code == 0 and err == "" and got is not None and np.array_equal(got, want),
          f"contours - < formats.png: {code} {err!r}")
    p = subprocess.Popen(["cat", png], stdout=subprocess.PIPE)
    code, err, got = contours(["-"], stdin=p.stdout)
    p.wait()
    check(code == 0 and got is not None and np.array_equal(got, want),
          f"cat formats.png | contours -: {code} {err!r}")
    for name, blob, expect in [("empty", b"", "standard input is empty"),
                               ("text", b"not an image\n", "'<stdin>' is not a supported image"),
                               ("half", open(png, "rb").read()[:200], "'<stdin>' is a truncated")]:
        path = os.path.join(tmp, "stdin_" + name)
        with open(path, "wb") as f:
            f.write(blob)
        with open(path, "rb") as f:
            code, err, _ = contours(["-"], stdin=f)
        check(code == 2 and one_error(err) and expect in err,
              f"contours - < {name}: exit {code} {err!r}")
        check(not os.path.exists(os.path.join(tmp, "out_formats")), f"contours - < {name}: output")
    # TIFF and WebP, recognised by their content (the names say otherwise)
    webp_png = write_png(os.path.join(tmp, "webp_pixels.png"), WEBP_PIXELS)
    code, err, webp_want = contours([webp_png])
    check(code == 0, f"contours webp_pixels.png: {code} {err!r}")
    for name, blob, reference, library in [("formats.tif", tiff_bytes(pixels), want, "libtiff"),
                                           ("formats.webp", WEBP_BYTES, webp_want, "libwebp"),
                                           ("tiff_named.png", tiff_bytes(pixels), want, "libtiff")]:
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(blob)
        code, err, got = contours([path])
        if code == 2 and f"built without {library}" in err:
            print(f"test_cli: {name}: this diaseg was built without {library}", file=sys.stderr)
            continue
        check(code == 0 and err == "" and got is not None and reference is not None and
              np.array_equal(got, reference), f"contours {name}: {code} {err!r}")
        # cut short: exit 2, one line, nothing written
        with open(path, "wb") as f:
            f.write(blob[:len(blob) - 7])
        code, err, _ = contours([path])
        check(code == 2 and one_error(err) and "truncated" in err,
              f"contours {name} cut short: exit {code} {err!r}")


def progress_cases(tmp, data):
    """--progress: json gives one object a line on standard error (not a terminal here) with the
    stages in order and monotone counts; auto (the default) shows nothing off a terminal; bar
    shows the line anyway; none and -q show nothing (-q with json keeps the json)."""
    def run(args):  # standard error as written: text mode would turn '\r' into '\n'
        p = run_tool([DIASEG] + args, capture_output=True, timeout=600)
        return p.returncode, p.stdout, p.stderr.decode()

    image = os.path.join(data, "synthetic_regions.png")
    keys = {"stage", "stage_index", "stage_count", "products", "products_estimate", "converged",
            "wanted", "elapsed_s", "stage_elapsed_s", "eta_s"}
    for command, extra, stages in [
            ("segment", ["-k", "4"], ["contours", "affinity", "setup", "solve", "grouping"]),
            ("eigs", [], ["contours", "affinity", "setup", "solve"]),
            ("segment", ["-k", "3", "--affinity", "intensity", "--solver", "arpack"],
             ["affinity", "setup", "solve", "grouping"])]:
        what = f"--progress json {command} {' '.join(extra)}"
        out = os.path.join(tmp, "out_progress")
        code, _, err = run([command, image, "--nev", "6", "--matvec", "cpu", "--progress", "json",
                            "-o", out] + extra)
        check(code == 0, f"{what}: exit {code}: {err}")
        lines = err.splitlines()
        objects = []
        for ln in lines:
            if ln.startswith("{"):
                try:
                    objects.append(json.loads(ln))
                except ValueError:
                    check(False, f"{what}: not JSON: {ln!r}")
            else:
                check(ln.startswith("diaseg: "), f"{what}: a line neither JSON nor a message: {ln!r}")
        check("\r" not in err, f"{what}: a carriage return in the JSON output")
        check(len(objects) > len(stages), f"{what}: {len(objects)} reports")
        for i, o in enumerate(objects):
            check(set(o) == keys, f"{what}: report {i} keys {sorted(o)}")
            if set(o) != keys:
                continue
            check(o["stage_count"] == len(stages) and o["stage"] == stages[o["stage_index"]],
                  f"{what}: report {i}: stage {o['stage']} at {o['stage_index']}")
            check(o["wanted"] == 6 and 0 <= o["converged"] <= o["wanted"],
                  f"{what}: report {i}: {o['converged']} of {o['wanted']} converged")
            check(o["products_estimate"] is None or o["products_estimate"] >= o["products"],
                  f"{what}: report {i}: estimate {o['products_estimate']} < {o['products']}")
            check(o["eta_s"] is None or (o["stage"] == "solve" and o["eta_s"] >= 0),
                  f"{what}: report {i}: eta {o['eta_s']} in {o['stage']}")
            if i:
                p = objects[i - 1]
                check(o["stage_index"] in (p["stage_index"], p["stage_index"] + 1) and
                      o["products"] >= p["products"] and o["converged"] >= p["converged"] and
                      o["elapsed_s"] >= p["elapsed_s"],
                      f"{what}: report {i} went back: {o} after {p}")
        seen = [o.get("stage") for o in objects]
        check([st for i, st in enumerate(seen) if i == 0 or seen[i - 1] != st] == stages,
              f"{what}: stages {seen}")
        solve = [o for o in objects if o.get("stage") == "solve"]
        check(solve and solve[-1]["converged"] == 6 and solve[-1]["products"] > 0 and
              solve[-1]["products_estimate"] is not None and
              solve[-1]["products_estimate"] >= solve[-1]["products"],
              f"{what}: the last solve report {solve[-1] if solve else None}")
        check(any(ln.startswith("diaseg: ") and "eigenpairs" in ln for ln in lines),
              f"{what}: no summary: {err!r}")
    base = ["eigs", image, "--nev", "4", "--matvec", "cpu", "-o", os.path.join(tmp, "out_prog2")]
    # -q with json: the reports, nothing else
    code, _, err = run(base + ["-q", "--progress", "json"])
    check(code == 0 and err and all(ln.startswith("{") for ln in err.splitlines()),
          f"-q --progress json: exit {code}: {err!r}")
    # auto (the default) off a terminal, none, and -q: no progress at all
    for extra in [[], ["--progress", "auto"], ["--progress", "none"]]:
        code, _, err = run(base + extra)
        check(code == 0 and "\r" not in err and "{" not in err and
              all(ln.startswith("diaseg: ") for ln in err.splitlines()),
              f"{extra}: exit {code}: {err!r}")
    for extra in [["-q"], ["-q", "--progress", "bar"], ["--progress", "none", "-q"]]:
        code, _, err = run(base + extra)
        check(code == 0 and err == "", f"{extra}: exit {code}: {err!r}")
    # bar: the line for people even off a terminal, redrawn with carriage returns, then cleared
    code, _, err = run(base + ["--progress", "bar"])
    shown = [part for part in err.split("\r") if part.strip()]
    check(code == 0 and "\r[4/4] solve  " in err and " converged" in err and
          shown and shown[-1].startswith("diaseg: "), f"--progress bar: exit {code}: {err!r}")
    code, _, err = run(base + ["--progress", "fancy"])
    check(code == 2 and one_error(err) and "'fancy' is not one of auto, bar, json, none" in err,
          f"--progress fancy: exit {code}: {err!r}")


def first_hour_cases(tmp):
    """A user's first hour: batches (a folder, several images; one folder each, a failure does
    not stop the rest and makes the exit non-zero), -k auto (the default: the hierarchy cut at
    the automatic level, said in report.json), nev following -k for kmeans, --resize's forms and
    --max-side, the working resolution (labels at the image's size, eigenvectors at the working
    size), and the refusals."""
    pixels, truth = three_regions()
    folder = os.path.join(tmp, "batch_in")
    os.makedirs(folder, exist_ok=True)
    write_png(os.path.join(folder, "a.png"), pixels)
    write_png(os.path.join(folder, "b.png"), pixels[:, ::-1])
    with open(os.path.join(folder, "c.png"), "wb") as f:
        f.write(b"not a png")
    with open(os.path.join(folder, "notes.txt"), "w") as f:
        f.write("not an image, not listed")
    out = os.path.join(tmp, "batch_out", "nested", "deeper")
    code, _, err = run(["segment", folder, "--matvec", "cpu", "-o", out])
    check(code == 2, f"batch with a bad image: exit {code}, want 2: {err!r}")
    check(sorted(os.listdir(out)) == ["a", "b"], f"batch folders {os.listdir(out)}")
    check("[3/3]" in err and "2 of 3 images done, 1 failed" in err and
          err.count("diaseg: error:") == 2, f"batch messages {err!r}")
    for name, want in (("a", truth), ("b", truth[:, ::-1])):
        labels = np.load(os.path.join(out, name, "labels.npy"))
        check(labels.shape == want.shape, f"batch {name}: labels {labels.shape}")
        rep = json.load(open(os.path.join(out, name, "report.json")))
        check(rep["scale"]["auto"] is True and rep["parameters"]["threshold"] == 0.44 and
              rep["parameters"]["tol"] == 1e-3, f"batch {name}: auto scale {rep['scale']} "
              f"{rep['parameters']['threshold']} tol {rep['parameters']['tol']}")
    # two image arguments: the same names in two folders get distinct output folders
    other = os.path.join(tmp, "batch_in2")
    os.makedirs(other, exist_ok=True)
    write_png(os.path.join(other, "a.png"), pixels)
    out2 = os.path.join(tmp, "batch_out2")
    code, _, err = run(["segment", os.path.join(folder, "a.png"), os.path.join(other, "a.png"),
                        "--matvec", "cpu", "-q", "-o", out2])
    check(code == 0 and sorted(os.listdir(out2)) == ["a", "a-2"],
          f"two images named a: {code} {os.listdir(out2) if os.path.isdir(out2) else err!r}")
    code, _, err = run(["segment", folder, folder, "--json", os.path.join(tmp, "r.json")])
    check(code == 2 and one_error(err) and "--json takes one image" in err, f"--json batch {err!r}")
    image = os.path.join(folder, "a.png")
    # kmeans: nev follows k; given, it is checked
    o = os.path.join(tmp, "km20")
    code, _, err = run(["segment", image, "--grouping", "kmeans", "-k", "20", "--matvec", "cpu",
                        "-q", "-o", o])
    rep = json.load(open(os.path.join(o, "report.json"))) if code == 0 else {}
    check(code == 0 and rep.get("nev") == 20 and rep.get("k") == 20, f"-k 20 kmeans: {code} {err!r}")
    code, _, err = run(["segment", image, "--grouping", "kmeans", "-k", "20", "--nev", "8"])
    check(code == 2 and one_error(err) and "leave it out" in err, f"-k 20 --nev 8: {err!r}")
    code, _, err = run(["segment", image, "--grouping", "kmeans", "-k", "65"])
    check(code == 2 and one_error(err), f"-k 65 kmeans: {err!r}")
    o = os.path.join(tmp, "kmauto")
    code, _, err = run(["segment", image, "--grouping", "kmeans", "-k", "auto", "--matvec", "cpu",
                        "-q", "-o", o])
    rep = json.load(open(os.path.join(o, "report.json"))) if code == 0 else {}
    lam = rep.get("eigenvalues", [])
    gaps = [lam[k - 1] - lam[k] for k in range(2, len(lam))]
    want_k = 2 + int(np.argmax(gaps)) if gaps else -1
    check(code == 0 and rep["scale"]["auto"] and rep.get("k") == want_k and
          rep["parameters"]["tol"] == 1e-5, f"-k auto kmeans: {code} k {rep.get('k')} "
          f"want {want_k} {err!r}")
    # --resize forms and --max-side (the image is 64x48)
    for args, size in ((["--resize", "32x"], (32, 24)), (["--resize", "x12"], (16, 12)),
                       (["--resize", "50%"], (32, 24)), (["--max-side", "40"], (40, 30)),
                       (["--resize", "200%", "--max-side", "100"], (100, 75))):
        o = os.path.join(tmp, "resize")
        code, _, err = run(["contours", image, "-q", "-o", o] + args)
        arr = np.load(os.path.join(o, "contours.npy")) if code == 0 else None
        check(code == 0 and arr.shape == (size[1], size[0]),
              f"{args}: {code} {None if arr is None else arr.shape} want {size} {err!r}")
    for bad in ("x", "0x10", "10x0", "-5%", "0%", "1001%", "abc", "12"):
        code, _, err = run(["contours", image, "--resize", bad, "-o", os.path.join(tmp, "rb")])
        check(code == 2 and one_error(err), f"--resize {bad}: {code} {err!r}")
    # the working resolution: labels and contours at the image's size, the rest at the working
    big = write_png(os.path.join(tmp, "big.png"), np.kron(pixels, np.ones((3, 3), np.uint8)))
    o = os.path.join(tmp, "work")
    code, _, err = run(["segment", big, "--work-pixels", "3072", "-k", "3", "--matvec", "cpu",
                        "-q", "-o", o])
    if code == 0:
        labels = np.load(os.path.join(o, "labels.npy"))
        vecs = np.load(os.path.join(o, "eigenvectors.npy"))
        ucm = np.load(os.path.join(o, "ucm.npy"))
        rep = json.load(open(os.path.join(o, "report.json")))
        ww, wh = rep["work"]["width"], rep["work"]["height"]
        check(labels.shape == (144, 192) and vecs.shape[1:] == (wh, ww) and
              ucm.shape == (2 * wh + 1, 2 * ww + 1) and ww * wh <= 3072 and ww == 64,
              f"work: labels {labels.shape} vectors {vecs.shape} ucm {ucm.shape} {ww}x{wh}")
        check(adjusted_rand(labels.ravel(), np.kron(truth, np.ones((3, 3), int)).ravel()) > 0.98,
              "work: the three bands at the image's size")
        check(np.load(os.path.join(o, "contours.npy")).shape == (144, 192), "work: contours")
    else:
        check(False, f"--work-pixels: {code} {err!r}")
    code, _, err = run(["segment", big, "--work-pixels", "100"])
    check(code == 2 and one_error(err) and "--work-pixels" in err, f"--work-pixels 100: {err!r}")
    o = os.path.join(tmp, "full")
    code, _, err = run(["segment", big, "--full-resolution", "-k", "3", "--matvec", "cpu", "-o", o])
    check(code == 0 and np.load(os.path.join(o, "eigenvectors.npy")).shape[1:] == (144, 192),
          f"--full-resolution: {code} {err!r}")


def help_and_version():
    for args in [["--help"], ["segment", "--help"], ["eigs", "--help"], ["help", "segment"],
                 ["affinity", "--help"], ["bench", "--help"], ["devices", "--help"],
                 ["contours", "--help"]]:
        code, stdout, _ = run(args)
        check(code == 0 and "Usage: diaseg" in stdout, f"{args}: {code}")
    code, stdout, _ = run(["--version"])
    check(code == 0 and stdout.startswith("diaseg "), "--version")
    code, _, stderr = run([])
    check(code == 2 and "Usage" in stderr, "no arguments")


def main():
    global DIASEG
    opts = test_args()
    DIASEG = opts.diaseg
    tmp = tempfile.mkdtemp(prefix="diaseg-cli-")
    try:
        help_and_version()
        bad_inputs(tmp, opts.data)
        normal_run(tmp, opts.data)
        picture_cases(tmp, opts.data)
        banded_png_cases(tmp, opts.data)
        json_and_commit(tmp, opts.data)
        audit_cases(tmp, opts.data)
        issue16_cases(tmp, opts.data)
        k_list_cases(tmp, opts.data)
        contour_cases(tmp, opts.data)
        hierarchy_cases(tmp, opts.data)
        small_image_solver(tmp)
        threshold_cases(tmp)
        first_hour_cases(tmp)
        progress_cases(tmp, opts.data)
        input_format_cases(tmp, opts.data)
        opencl_runs(tmp, opts.data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report("test_cli")


if __name__ == "__main__":
    sys.exit(main())
