#!/usr/bin/env python3
"""Fits the boundary network (app/lib/net.c) on BSDS500 train.

    python3 tests/bsds/fit_net.py --net-data BUILD50/tests/net_data --data /tmp/net --range 0:50
    python3 tests/bsds/fit_net.py --net-data BUILD100/tests/net_data --data /tmp/net --range 50:100
    python3 tests/bsds/fit_net.py --data /tmp/net --range 0:100 --out app/lib/net/boundary.inc

1. tests/bsds/net_data (a program over the library) runs segment's defaults on each train image
   and writes the network's input as the library makes it: gPb, the edge forest's map and the
   colours (APP_NET_INPUTS planes). The forest's map must come from a forest that did not see the
   image (the library's saw all of train): build net_data with -DDIASEG_FOREST_MODEL= a forest fit
   without that range (forest_data.py --hold-out A:B, fit_forest), one build per range.
2. The target: a pixel on some person's boundary is positive where at least half of the
   persons' boundaries, each widened by 2 pixels, cover it (the persons' majority; a target of
   any person's boundary, HED's, raised boundary F and lowered PRI: docs/QUALITY.md).
3. The network (PyTorch, outside the library): layers of 24 3 x 3 filters dilated as
   --dilations says (default 1, 2, 4, 8, 4, 2, 1; the C reference and the kernel take any list
   of up to 16) with ReLU, the image reflected at its edges, and a 1 x 1 output over the last layer
   and the inputs; HED's class-balanced cross-entropy on random 128 x 128 crops with flips,
   batch 4, Adam 2e-3 on a cosine schedule, --steps steps (6000: 12 minutes on 2 cores).
4. The weights are written as C tables into --out, with a check: the network's map of a small
   fixed input as PyTorch computes it, which tests/lib/test_net.c asks the C reference to
   reproduce.

Needs PyTorch (pip install torch; the CPU build will do) and SciPy; the library needs nothing
of them.
"""

import argparse
import datetime
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import harness  # noqa: E402
import metrics  # noqa: E402

INPUTS = 5
CHANNELS = 24
DILATION = [1, 2, 4, 8, 4, 2, 1]
MAJORITY = 0.5  # the share of the persons whose widened boundary must cover a positive pixel
WIDEN = 2       # pixels
CROP, BATCH, RATE = 128, 4, 2e-3
CHECK_W, CHECK_H = 13, 10  # the check's input, at least (each side above the largest dilation)


def read_record(path):
    """One image's record from net_data: the planes (INPUTS x h x w float32)."""
    with open(path, "rb") as f:
        w, h, planes = (int(v) for v in np.fromfile(f, np.int32, 3))
        x = np.fromfile(f, np.float32, planes * w * h)
    if planes != INPUTS or x.size != planes * w * h:
        raise SystemExit("%s is not a record of %d planes (or is truncated)" % (path, INPUTS))
    return x.reshape(planes, h, w)


def majority_target(bdrys):
    from scipy import ndimage
    cover = np.mean([ndimage.binary_dilation(b, iterations=WIDEN) for b in bdrys], 0)
    on = np.max(bdrys, 0) > 0
    return np.where(on & (cover >= MAJORITY), 1.0, 0.0).astype(np.float32)


def make_net(dilation=None):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList()
            cin = INPUTS
            for d in dilation or DILATION:
                self.convs.append(nn.Conv2d(cin, CHANNELS, 3, padding=d, dilation=d,
                                            padding_mode="reflect"))
                cin = CHANNELS
            self.out = nn.Conv2d(CHANNELS + INPUTS, 1, 1)

        def forward(self, x):
            y = x
            for cv in self.convs:
                y = F.relu(cv(y))
            return self.out(torch.cat([y, x], 1))

    return Net()


def fit(X, T, steps, seed, log, dilation=None):
    import torch
    import torch.nn.functional as F
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = make_net(dilation)
    opt = torch.optim.Adam(net.parameters(), RATE)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    t0 = time.time()
    for step in range(steps):
        xs, ts = [], []
        for _ in range(BATCH):
            k = rng.integers(len(X))
            x, t = X[k], T[k]
            yy = rng.integers(x.shape[1] - CROP)
            xx = rng.integers(x.shape[2] - CROP)
            xc, tc = x[:, yy:yy + CROP, xx:xx + CROP], t[yy:yy + CROP, xx:xx + CROP]
            if rng.random() < 0.5:
                xc, tc = xc[:, :, ::-1], tc[:, ::-1]
            if rng.random() < 0.5:
                xc, tc = xc[:, ::-1], tc[::-1]
            xs.append(np.ascontiguousarray(xc))
            ts.append(np.ascontiguousarray(tc))
        x = torch.from_numpy(np.stack(xs))
        t = torch.from_numpy(np.stack(ts))[:, None]
        pos = (t > 0).float()
        npos = pos.sum()
        wgt = torch.where(t > 0, (pos.numel() - npos) / pos.numel(), 1.1 * npos / pos.numel())
        loss = F.binary_cross_entropy_with_logits(net(x), t, weight=wgt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 500 == 0 or step == steps - 1:
            log("step %d/%d loss %.4f (%.0f s)" % (step + 1, steps, float(loss.detach()),
                                                  time.time() - t0))
    return net


def check_size(dilation):
    return max(CHECK_W, max(dilation) + 5), max(CHECK_H, max(dilation) + 2)


def check_input(dilation):
    """The check's fixed input: smooth patterns over the planes' ranges."""
    w, h = check_size(dilation)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    planes = [0.5 + 0.5 * np.sin(0.7 * xx + 0.3 * yy), 0.75 + 0.75 * np.cos(0.4 * xx - 0.9 * yy)]
    for c in range(3):
        planes.append(((np.sin(0.5 * xx * (c + 1) + yy) * 0.5 + 0.5) - 0.45) / 0.25)
    return np.stack(planes).astype(np.float32)


def floats(name, a, per_line=6):
    a = np.asarray(a, np.float32).ravel()
    body = ",\n  ".join(", ".join("%.9g" % v for v in a[i:i + per_line])
                        for i in range(0, len(a), per_line))
    return "static const float %s[%d] = {\n  %s};\n" % (name, len(a), body)


def write_tables(path, net, note, dilation=None):
    import torch
    dilation = dilation or DILATION
    sd = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    cx = check_input(dilation)
    cw, ch = check_size(dilation)
    with torch.no_grad():
        cm = torch.sigmoid(net(torch.from_numpy(cx)[None]))[0, 0].numpy()
    out = ["/* The boundary network's weights (app/lib/net.c). Generated by tests/bsds/fit_net.py: "
           "do not edit.", " * " + "\n * ".join(note) + " */", ""]
    out.append("static const int net_dilation[%d] = {%s};\n" % (
        len(dilation), ", ".join(str(d) for d in dilation)))
    for l in range(len(dilation)):
        out.append(floats("net_weight_%d" % l, sd["convs.%d.weight" % l]))
        out.append(floats("net_bias_%d" % l, sd["convs.%d.bias" % l]))
    out.append("static const float *const net_weights[%d] = {%s};" % (
        len(dilation), ", ".join("net_weight_%d" % l for l in range(len(dilation)))))
    out.append("static const float *const net_biases[%d] = {%s};\n" % (
        len(dilation), ", ".join("net_bias_%d" % l for l in range(len(dilation)))))
    out.append(floats("net_out_weight", sd["out.weight"]))
    out.append("static const app_net app_net_boundary = {%d, %d, %d, net_dilation, net_weights,\n"
               "                                        net_biases, net_out_weight, %.9gf};\n" % (
                   INPUTS, CHANNELS, len(dilation), float(sd["out.bias"][0])))
    out.append("/* The check (tests/lib/test_net.c): the map PyTorch makes of a %d x %d input. */"
               % (cw, ch))
    out.append("#define APP_NET_CHECK_W %d\n#define APP_NET_CHECK_H %d" % (cw, ch))
    out.append(floats("app_net_check_input", cx))
    out.append(floats("app_net_check_map", cm))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out))
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bsds", default="/work/shared/bsds")
    ap.add_argument("--net-data", help="the net_data program (a build's tests/): make the "
                    "records of --range first (a build whose forest did not see them)")
    ap.add_argument("--data", required=True, help="a folder for the records (outside the tree)")
    ap.add_argument("--range", default="0:50", help="train images A:B (sorted by name)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--dilations", default=",".join(str(d) for d in DILATION),
                    help="the layers' dilations (default %(default)s)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="fit on --range's records and write the C tables here "
                    "(app/lib/net/boundary.inc)")
    ap.add_argument("--save", help="also save PyTorch's state here")
    ap.add_argument("--load", help="write the tables of this saved state instead of fitting")
    ap.add_argument("--note", default="", help="a line for the tables' header (the forests used)")
    args = ap.parse_args(argv)
    data = harness.outside_tree(args.data, ROOT)
    imgdir = os.path.join(args.bsds, "images", "train")
    gtdir = os.path.join(args.bsds, "groundTruth", "train")
    a, b = (int(v) for v in args.range.split(":"))
    ids = sorted(f[:-4] for f in os.listdir(imgdir) if f.endswith(".jpg"))[a:b]
    if not ids:
        raise SystemExit("no BSDS500 train images in %s under %s" % (args.range, args.bsds))
    os.makedirs(data, exist_ok=True)
    if args.net_data:
        harness.make_records(args.net_data, imgdir, ids, data, ".net", args.jobs)
    if not args.out:
        return 0
    import torch
    torch.set_num_threads(args.threads)
    dilation = [int(d) for d in args.dilations.split(",")]
    if args.load:
        net = make_net(dilation)
        net.load_state_dict(torch.load(args.load))
    else:
        X, T = [], []
        for iid in ids:
            X.append(read_record(os.path.join(data, iid + ".net")))
            _, bdrys = metrics.load_ground_truth(os.path.join(gtdir, iid + ".mat"))
            T.append(majority_target(bdrys))
        net = fit(X, T, args.steps, args.seed, lambda s: print(s, file=sys.stderr, flush=True),
                  dilation)
    if args.save:
        torch.save(net.state_dict(), args.save)
    if args.load:
        note = ["Written from the saved state %s on %s." % (
            os.path.basename(args.load), datetime.date.today().isoformat())]
    else:
        note = ["Fit on BSDS500 train images %s .. %s (%d images, %d steps, seed %d) on %s." % (
            ids[0], ids[-1], len(ids), args.steps, args.seed, datetime.date.today().isoformat())]
    note.append("Target, network and training: tests/bsds/fit_net.py; figures: docs/QUALITY.md.")
    if args.note:
        note.append(args.note)
    write_tables(args.out, net, note, dilation)
    print("%d weights from %d images -> %s" % (
        sum(p.numel() for p in net.parameters()), len(ids), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
