"""EXPERIMENT (not part of the library or its tests): the network of ci2_train_cnn_1129.txt.

A small CNN reading gPb, the forest's map and RGB, fit to the persons' boundaries; 2 folds on
train 1-50. Its inputs are dumps written by a patched `segment` (an experiment switch, not
committed: int32 width, height, min region, has-forest; float32 gPb; float32 forest map; the
region bins), one per image in DUMPS (train 1-50, forest fit without them) and EXTRA (train
51-100, forest fit without those). Writes each held-out image's dump with the network's map in
gPb's place into OUTDIR. Runs as
    EXTRA=DUMPS51 python3 ci2_train_cnn_1129.py 4000 OUTDIR          # cnn2 (any person's boundary)
    MAJ=0.5 EXTRA=DUMPS51 python3 ci2_train_cnn_1129.py 4000 OUTDIR  # cnn3maj (the majority's)
BSDS names the dataset's folder. Needs PyTorch, NumPy, SciPy, Pillow and tests/bsds/metrics.py."""
import os, sys, time, numpy as np, torch, torch.nn as nn, torch.nn.functional as Fn
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "bsds"))
import metrics
from PIL import Image
torch.set_num_threads(2)
BSDS = os.environ.get("BSDS", "/work/shared/bsds")
DUMPS = os.environ.get("DUMPS", "/tmp/exp/dumps")
SPLIT = os.environ.get("SPLIT", "train")

EXTRA = os.environ.get("EXTRA", "")
def load(iid, split=SPLIT, dumps=DUMPS):
    if EXTRA and not os.path.exists(os.path.join(dumps, iid + ".bin")): dumps = EXTRA
    raw = open(os.path.join(dumps, iid + ".bin"), "rb").read()
    w, h = np.frombuffer(raw[:16], np.int32)[:2]; n = w * h
    E = np.frombuffer(raw[16:16 + 4 * n], np.float32).reshape(h, w)
    F = np.frombuffer(raw[16 + 4 * n:16 + 8 * n], np.float32).reshape(h, w)
    im = np.asarray(Image.open(os.path.join(BSDS, "images", split, iid + ".jpg")).convert("RGB"), np.float32) / 255.0
    x = np.concatenate([E[None], np.minimum(F, 1.5)[None], (im.transpose(2, 0, 1) - 0.45) / 0.25], 0)
    return x.astype(np.float32)

def target(iid, split=SPLIT):
    gsegs, gbdrys = metrics.load_ground_truth(os.path.join(BSDS, "groundTruth", split, iid + ".mat"))
    if float(os.environ.get("MAJ", "0")) > 0:
        from scipy import ndimage
        b = np.mean([ndimage.binary_dilation(g, iterations=2).astype(np.float32) for g in gbdrys], 0)
        thin = np.max([g for g in gbdrys], 0) > 0
        return np.where(thin, b, 0.0).astype(np.float32)
    b = np.mean([g.astype(np.float32) for g in gbdrys], 0)
    return b

class Net(nn.Module):
    def __init__(s, cin=5, c=int(os.environ.get("CH", "24"))):
        super().__init__()
        dil = [1, 2, 4, 8, 4, 2, 1]
        layers = []; prev = cin
        for d in dil:
            layers.append(nn.Conv2d(prev, c, 3, padding=d, dilation=d, padding_mode="reflect")); prev = c
        s.convs = nn.ModuleList(layers)
        s.out = nn.Conv2d(c + cin, 1, 1)
    def forward(s, x):
        y = x
        for cv in s.convs:
            y = Fn.relu(cv(y))
        return s.out(torch.cat([y, x], 1))

def train(ids, steps, seed=0):
    torch.manual_seed(seed); rng = np.random.default_rng(seed)
    X = [load(i) for i in ids]; T = [target(i) for i in ids]
    net = Net(); opt = torch.optim.Adam(net.parameters(), 2e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    S = 128; B = 4; t0 = time.time()
    for st in range(steps):
        xs, ts = [], []
        for _ in range(B):
            k = rng.integers(len(X)); x, t = X[k], T[k]
            yy = rng.integers(x.shape[1] - S); xx = rng.integers(x.shape[2] - S)
            xc = x[:, yy:yy + S, xx:xx + S]; tc = t[yy:yy + S, xx:xx + S]
            if rng.random() < 0.5: xc = xc[:, :, ::-1]; tc = tc[:, ::-1]
            if rng.random() < 0.5: xc = xc[:, ::-1]; tc = tc[::-1]
            xs.append(np.ascontiguousarray(xc)); ts.append(np.ascontiguousarray(tc))
        x = torch.from_numpy(np.stack(xs)); t = torch.from_numpy(np.stack(ts))[:, None]
        # HED-style balanced loss on soft targets (a pixel marked by any human counts as positive mass)
        thr = float(os.environ.get("MAJ", "0"))
        if thr > 0:
            t = (t >= thr).float()
        pos = (t > 0).float(); npos = pos.sum(); nneg = pos.numel() - npos
        wgt = torch.where(t > 0, nneg / pos.numel(), 1.1 * npos / pos.numel())
        lo = net(x)
        loss = Fn.binary_cross_entropy_with_logits(lo, t, weight=wgt)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
        if st % 200 == 0: print("step", st, float(loss.detach()), "%.0fs" % (time.time() - t0), flush=True)
    return net

def predict(net, iid, split=SPLIT, dumps=DUMPS):
    x = torch.from_numpy(load(iid, split, dumps))[None]
    with torch.no_grad():
        return torch.sigmoid(net(x))[0, 0].numpy()

def write_dump(src, dst, M):
    raw = bytearray(open(src, "rb").read())
    w, h = np.frombuffer(bytes(raw[:16]), np.int32)[:2]; n = w * h
    raw[16:16 + 4 * n] = M.astype(np.float32).tobytes()
    open(dst, "wb").write(raw)

if __name__ == "__main__":
    steps = int(sys.argv[1]); outdir = sys.argv[2]; os.makedirs(outdir, exist_ok=True)
    ids = sorted(f[:-4] for f in os.listdir(DUMPS) if f.endswith(".bin"))
    ex = sorted(f[:-4] for f in os.listdir(EXTRA) if f.endswith(".bin")) if EXTRA else []
    folds = [(ids[25:] + ex, ids[:25]), (ids[:25] + ex, ids[25:])]
    for fi, (tr, te) in enumerate(folds):
        net = train(tr, steps, seed=fi)
        torch.save(net.state_dict(), os.path.join(outdir, "fold%d.pt" % fi))
        for i in te:
            M = predict(net, i)
            write_dump(os.path.join(DUMPS, i + ".bin"), os.path.join(outdir, i + ".bin"), M)
        print("fold", fi, "done", flush=True)
