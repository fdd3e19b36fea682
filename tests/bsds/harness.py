"""What the BSDS scripts (run_bsds.py, run_contours.py, fit_contours.py, fit_arcs.py,
fit_net.py) share: progress lines, reading a photograph, hashing the diaseg binary for cache
keys, the per-image cache's atomic writes, the workers' thread count, the record programs'
runs, and the table layout."""
import hashlib
import json
import os
import subprocess
import sys


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def load_image(path):
    """RGB uint8 H x W x 3 (PIL's JPEG reader, else matplotlib's)."""
    import numpy as np
    try:
        from PIL import Image
        return np.asarray(Image.open(path).convert("RGB"))
    except ImportError:
        pass
    try:
        import matplotlib.image as mpimg
    except ImportError:
        raise SystemExit("reading JPEG images needs Pillow (python3-pil) or matplotlib")
    return np.asarray(mpimg.imread(path))[..., :3]


def file_hash(path):
    """The first 12 hex digits of a file's SHA-1 (a cache key that changes with a rebuild)."""
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:12]


def save_json(path, obj):
    """obj as JSON at path, whole or not at all (a temporary file renamed over it)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def worker_init(threads):
    """A worker process's OpenMP threads (0: leave the environment's)."""
    if threads:
        os.environ["OMP_NUM_THREADS"] = str(threads)


def outside_tree(path, root):
    """path made absolute, refused when it lies inside the repository at root: nothing derived
    from BSDS500 is written into the tree."""
    data = os.path.realpath(path)
    if data == root or data.startswith(root + os.sep):
        raise SystemExit("%s is inside the repository: nothing derived from BSDS500 is written "
                         "into the tree" % path)
    return data


def make_records(program, imgdir, ids, data, ext, jobs):
    """program IMAGE OUT (tests/bsds/arc_data, net_data) for each id whose record data/ID.ext is
    not there yet, `jobs` at a time; stops at the first failure."""
    name = os.path.basename(program)
    todo = [i for i in ids if not os.path.exists(os.path.join(data, i + ext))]
    procs = []
    for k, iid in enumerate(todo):
        procs.append(subprocess.Popen([program, os.path.join(imgdir, iid + ".jpg"),
                                       os.path.join(data, iid + ext)]))
        if len(procs) >= jobs or k == len(todo) - 1:
            for p in procs:
                if p.wait() != 0:
                    raise SystemExit("%s failed" % name)
            procs = []
            log("%s: %d/%d" % (name, k + 1, len(todo)))


def table(head, rows, md=False):
    """rows (lists of strings) under head, as Markdown or as aligned text (first column left)."""
    if md:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(cells))
    return "\n".join([line(head)] + [line(r) for r in rows])
