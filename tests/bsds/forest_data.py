#!/usr/bin/env python3
"""The edge forest's training data from BSDS500 train, for tests/bsds/fit_forest.c.

    python3 tests/bsds/forest_data.py --bsds /work/shared/bsds --out /tmp/forest_data \
        [--trees 4] [--pos 500000] [--neg 500000] [--seed 1] [--limit N]

Writes, outside the repository (nothing derived from BSDS500 goes into the tree):
  images.txt        one photo's path a line (the order the samples index)
  IMAGE_ID.gt       the humans' segmentations: int32 count, height, width, then count x height x
                    width uint16 labels (1-based, as BSDS500's)
  tree_T.samples    the patches tree T is fit on: int32 records (image, x, y, human), x and y even
                    (the forest's places are every other pixel), half of them "positive" (within 8
                    pixels of that human's boundary, so that the 16 x 16 label patch around the
                    place holds a boundary) and half not, pos / images / humans of each kind per
                    human of each image (fewer where an image has fewer places of a kind), drawn
                    afresh for every tree (Dollar & Zitnick's sampling).
"""

import argparse
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
from scipy import ndimage  # noqa: E402

import harness  # noqa: E402
import metrics  # noqa: E402

GT_RADIUS = 8  # half the leaf's 16 x 16 patch


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bsds", default="/work/shared/bsds")
    ap.add_argument("--split", default="train", choices=["train"],
                    help="the forest is fit on train only (val reports, test is held out)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--trees", type=int, default=4)
    ap.add_argument("--pos", type=int, default=500000, help="positive patches per tree")
    ap.add_argument("--neg", type=int, default=500000, help="negative patches per tree")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0, help="the first N images only (tests)")
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the first N images (by id), to tune what uses the forest on "
                         "train images it was not fit on")
    ap.add_argument("--hold-out", default="", metavar="START:END",
                    help="leave out the images START .. END - 1 (by id from 0, after --skip), as --skip "
                         "does for a range in the middle")
    args = ap.parse_args(argv)
    out = os.path.realpath(args.out)
    if out == ROOT or out.startswith(ROOT + os.sep):
        raise SystemExit("%s is inside the repository: nothing derived from BSDS500 is written "
                         "into the tree" % args.out)
    imgdir = os.path.join(args.bsds, "images", args.split)
    gtdir = os.path.join(args.bsds, "groundTruth", args.split)
    ids = sorted(f[:-4] for f in os.listdir(imgdir) if f.endswith(".jpg"))
    ids = [i for i in ids if os.path.exists(os.path.join(gtdir, i + ".mat"))]
    ids = ids[args.skip:]
    if args.hold_out:
        try:
            lo, hi = (int(v) for v in args.hold_out.split(":"))
        except ValueError:
            raise SystemExit("--hold-out %r is not START:END" % args.hold_out)
        if not 0 <= lo <= hi:
            raise SystemExit("--hold-out %r: START must be 0 or more and END not below it"
                             % args.hold_out)
        ids = ids[:lo] + ids[hi:]
    if args.limit:
        ids = ids[:args.limit]
    if not ids:
        raise SystemExit("no BSDS500 %s images under %s" % (args.split, args.bsds))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "images.txt"), "w") as f:
        for i in ids:
            f.write(os.path.join(imgdir, i + ".jpg") + "\n")
    near = []   # per image: per human, the even places within GT_RADIUS of its boundary, and not
    for k, iid in enumerate(ids):
        segs, bdrys = metrics.load_ground_truth(os.path.join(gtdir, iid + ".mat"))
        h, w = segs[0].shape
        arr = np.stack([s.astype(np.uint16) for s in segs])
        with open(os.path.join(out, iid + ".gt"), "wb") as f:
            np.array([len(segs), h, w], np.int32).tofile(f)
            arr.tofile(f)
        grid = np.zeros((h, w), bool)
        grid[::2, ::2] = True
        per = []
        for b in bdrys:
            d = ndimage.distance_transform_edt(~b)
            pos = np.flatnonzero((d < GT_RADIUS) & grid)
            neg = np.flatnonzero((d >= GT_RADIUS) & grid)
            per.append((pos, neg, w))
        near.append(per)
        harness.log("%d/%d %s: %d humans" % (k + 1, len(ids), iid, len(segs)))
    rng = np.random.default_rng(args.seed)
    for t in range(args.trees):
        recs = []
        for k, per in enumerate(near):
            m = len(per)
            kp = math.ceil(args.pos / len(ids) / m)
            kn = math.ceil(args.neg / len(ids) / m)
            for j, (pos, neg, w) in enumerate(per):
                for cand, want in ((pos, kp), (neg, kn)):
                    if len(cand) == 0:
                        continue
                    pick = rng.choice(cand, size=min(want, len(cand)), replace=False)
                    y, x = np.divmod(pick, w)
                    recs.append(np.stack([np.full(len(pick), k), x, y, np.full(len(pick), j)], 1))
        recs = np.concatenate(recs).astype(np.int32)
        rng.shuffle(recs)
        recs.tofile(os.path.join(out, "tree_%d.samples" % t))
        harness.log("tree %d: %d samples" % (t, len(recs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
