"""What the BSDS runners (run_bsds.py, run_contours.py) share: the per-image cache's atomic
writes, the workers' thread count, and the table layout."""
import json
import os


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


def table(head, rows, md=False):
    """rows (lists of strings) under head, as Markdown or as aligned text (first column left)."""
    if md:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(cells))
    return "\n".join([line(head)] + [line(r) for r in rows])
