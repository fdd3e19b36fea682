"""diaseg: spectral image segmentation (normalized cuts) in Python.

A thin layer over the C library libdiaseg (``app/lib/diaseg.h``): the same recipe, options,
defaults and messages as the ``diaseg`` command line.

>>> import numpy as np, diaseg
>>> r = diaseg.segment(np.random.rand(40, 60), k=3, nev=4)
>>> r.labels.shape, r.labels.dtype
((40, 60), dtype('int32'))
>>> several = diaseg.segment(np.random.rand(40, 60), k=[2, 3], nev=4)  # one eigensolve
>>> sorted(several.labels_by_k), several.labels_for(3).shape
([2, 3], (40, 60))

Functions
---------
segment(image, k=None, **options)
    Segments an image; returns a :class:`Segmentation`. k may be a list (``k=[2, 4, 8]``): one
    eigensolve, the grouping once per k.
affinity(image, return_degree=False, **options)
    The normalised affinity N = D^-1/2 W D^-1/2 as a ``scipy.sparse.dia_matrix``.
defaults()
    The default of every option (from the library's ``dsg_options_init``).
devices()
    The OpenCL devices, as a list of dicts.

Options are keyword arguments named exactly as the fields of ``dsg_options`` (and as the command
line's flags, with ``_`` for ``-``): k, nev, ncv, tol, max_iter, radius, sigma_i, sigma_x,
affinity, keep_specks, seed, restarts, solver, coarse_start, matvec, cl_device, kernel,
local_size, kernel_dir, cl_max_alloc, cl_max_mem, max_memory. An unknown keyword is a TypeError.

Why ctypes
----------
The package reaches the library through :mod:`ctypes`, not a compiled extension module: nothing
is compiled against Python's headers, so one ``libdiaseg.so`` (the one ``pip install .`` builds
with the project's own CMake, or a build tree's via ``DIASEG_LIBRARY``) serves every Python
version, and the package is plain Python. ctypes releases the GIL around every call into a
``CDLL``, so the GIL is released during a solve: other Python threads run while diaseg
computes (the library's callbacks take the GIL back only for their few lines of Python).

Errors
------
Bad input (arrays, option values the library refuses) raises ValueError with the library's
message, which names parameters as Python spells them (``sigma_x 0.01 is too small ...``);
other failures (OpenCL, memory, the solver) raise RuntimeError. A solve that stops at
``max_iter`` is not an error: the result comes back with ``converged`` False and a
RuntimeWarning. The library's warnings (a fallback, e.g. from OpenCL to the C path) become
RuntimeWarnings; its other notes go to the ``logging`` logger "diaseg" at debug level. Ctrl-C
during a call from the main thread stops the run and raises KeyboardInterrupt.
"""

import ctypes
import json
import logging
import numbers
import operator
import os
import signal
import threading
import warnings
import weakref

import numpy as np

from . import _lib
from ._lib import lib

__all__ = ["segment", "contours", "affinity", "defaults", "devices", "memory", "Segmentation",
           "__version__"]

__version__ = _lib.decode(lib.dsg_version())

_log = logging.getLogger("diaseg")

_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1
_K_AUTO = -1  # DSG_K_AUTO: k="auto" (the default) chooses the scale

# The options Python takes: dsg_options' fields but the callbacks and the bench-only tuning
# knobs (basis_groups, basis_row_groups, lanczos_unfused). name -> kind
_OPTIONS = {
    "k": "int", "nev": "int", "ncv": "int", "tol": "float", "max_iter": "int",
    "radius": "int", "sigma_i": "float", "sigma_x": "float", "sigma_c": "float",
    "grouping": "str", "spectral_weight": "float", "min_region": "int",
    "region_weight": "float", "forest_weight": "float", "arc_weight": "float",
    "net_weight": "float",
    "threshold": "float", "work_pixels": "int64",
    "affinity": "str", "detector": "str",
    "keep_specks": "bool", "seed": "uint64", "restarts": "int", "solver": "str",
    "coarse_start": "bool",
    "matvec": "str", "cl_device": "str", "kernel": "str", "local_size": "size",
    "kernel_dir": "path", "cl_max_alloc": "size", "cl_max_mem": "size", "max_memory": "size",
}

_VALUE_ERRORS = (_lib.DSG_ERR_INVALID, _lib.DSG_ERR_FORMAT, _lib.DSG_ERR_LIMIT)


def defaults():
    """The default value of every option, as the library sets them (``dsg_options_init``).

    Returns
    -------
    dict
        option name -> default (the command line's defaults); a string option without a
        default (cl_device, kernel, kernel_dir) is None.
    """
    opt = _lib.DsgOptions()
    lib.dsg_options_init(ctypes.byref(opt))
    out = {}
    for name, kind in _OPTIONS.items():
        value = getattr(opt, name)
        if kind in ("str", "path"):
            value = _lib.decode(value)
        elif kind == "bool":
            value = bool(value)
        if name == "k" and value == _K_AUTO:
            value = "auto"
        out[name] = value
    return out


def _convert(name, kind, value):
    """An option's Python value as what its dsg_options field takes."""
    if kind in ("str", "path"):
        if value is None:
            return None
        if kind == "path" and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if name == "cl_device" and isinstance(value, numbers.Integral) and \
                not isinstance(value, bool):
            value = str(int(value))
        if isinstance(value, bytes):
            raw = value
        elif isinstance(value, str):
            raw = value.encode("utf-8")
        else:
            raise TypeError(f"option {name!r} must be a string or None, "
                            f"not {type(value).__name__}")
        if b"\0" in raw:
            raise ValueError(f"option {name!r} contains a NUL character")
        return raw
    if kind == "float":
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise TypeError(f"option {name!r} must be a real number, "
                            f"not {type(value).__name__}")
        return float(value)
    if kind == "bool":
        if isinstance(value, (bool, np.bool_)):
            return int(bool(value))
        if isinstance(value, numbers.Integral) and int(value) in (0, 1):
            return int(value)
        raise TypeError(f"option {name!r} must be a bool, not {value!r}")
    # integers
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"option {name!r} must be an integer, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"option {name!r} must be an integer, "
                        f"not {type(value).__name__}") from None
    if kind == "int":
        lo, hi = _INT_MIN, _INT_MAX
    elif kind == "int64":
        lo, hi = -(2 ** 63), 2 ** 63 - 1
    else:  # uint64, size (size_t, unsigned long long)
        lo, hi = 0, 2 ** 64 - 1
    if not lo <= value <= hi:
        raise ValueError(f"option {name} {value} is out of range: it must be in "
                         f"[{lo}, {hi}]")
    return value


def _options(options, func):
    """A dsg_options from dsg_options_init and the keyword arguments (None: the default)."""
    opt = _lib.DsgOptions()
    lib.dsg_options_init(ctypes.byref(opt))
    keep = []  # the encoded strings, alive for the call (the Structure keeps them too)
    for name, value in options.items():
        kind = _OPTIONS.get(name)
        if kind is None:
            raise TypeError(f"{func}() got an unexpected keyword argument {name!r} (the options "
                            f"are: {', '.join(_OPTIONS)})")
        if value is None and kind not in ("str", "path"):
            continue  # the default
        value = _convert(name, kind, value)
        if isinstance(value, bytes):
            keep.append(value)
        setattr(opt, name, value)
    return opt, keep


def _contiguous(a):
    """a (uint8) C-contiguous: a itself, or a copy. numpy copies a strided array one byte at a
    time (a 3840 x 2160 x 3 image stored column by column took 40 to 100 ms), so a large copy runs
    in bands of rows on several threads (numpy lets go of the GIL while it copies)."""
    if a.flags.c_contiguous:
        return a
    out = np.empty(a.shape, np.uint8)
    bands = min(8, os.cpu_count() or 1, a.shape[0])
    if a.nbytes < (4 << 20) or bands < 2:
        out[...] = a
        return out
    step = -(-a.shape[0] // bands)

    def band(y):
        out[y:y + step] = a[y:y + step]

    threads = [threading.Thread(target=band, args=(y,)) for y in range(step, a.shape[0], step)]
    for t in threads:
        t.start()
    band(0)
    for t in threads:
        t.join()
    return out


def _image(image):
    """A C-contiguous uint8 H x W x C copy of image (or the array itself) and its dsg_image."""
    a = np.asarray(image)
    if a.dtype == object or a.dtype.kind not in "uif":
        raise ValueError(f"the image's dtype {a.dtype} is not supported: it must be "
                         f"uint8, or float in [0, 1]")
    if a.ndim == 2:
        channels = 1
    elif a.ndim == 3 and 1 <= a.shape[2] <= 4:
        channels = a.shape[2]
    else:
        raise ValueError(f"the image has shape {a.shape}: it must be H x W (gray) or "
                         f"H x W x C with C = 1 (gray), 2 (gray, alpha), 3 (RGB) or 4 (RGBA)")
    if a.size == 0:
        raise ValueError(f"the image of shape {a.shape} is empty")
    height, width = a.shape[0], a.shape[1]
    if height > _INT_MAX or width > _INT_MAX:
        raise ValueError(f"the image of shape {a.shape} is too large")
    if a.dtype.kind == "f":
        if not np.isfinite(a).all():
            raise ValueError("the float image holds NaN or infinite values: it must lie "
                             "in [0, 1]")
        # round(255 v) of the clipped value, as diaseg.h asks (halves away from zero, like C)
        a = np.floor(np.clip(a.astype(np.float64), 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
    elif a.dtype != np.uint8:
        lo, hi = a.min(), a.max()
        if lo < 0 or hi > 255:
            raise ValueError(f"the {a.dtype} image has values in [{lo}, {hi}]: an "
                             f"integer image must be uint8 (0 .. 255); scale a float image to "
                             f"[0, 1]")
        a = a.astype(np.uint8)
    a = _contiguous(a)
    img = _lib.DsgImage(width, height, channels,
                        a.ctypes.data_as(ctypes.POINTER(ctypes.c_ubyte)))
    return a, img


def _raise(status, message):
    if status in _VALUE_ERRORS:
        raise ValueError(message)
    raise RuntimeError(message)


class _Call:
    """The callbacks of one library call: notes collected (and shown after the call, so that
    nothing is raised inside a callback), and Ctrl-C turned into the library's cancel flag."""

    def __init__(self, opt):
        self.notes = []
        self.cancel = ctypes.c_int(0)
        self.log_fn = _lib.LOG_FN(self._log)
        self.progress_fn = _lib.PROGRESS_FN(self._progress)
        opt.cancel = ctypes.pointer(self.cancel)
        opt.log = self.log_fn
        opt.progress = self.progress_fn
        self.previous = None

    def _log(self, data, level, message):
        self.notes.append((level, _lib.strip_marks(_lib.decode(message) or "")))

    def _progress(self, data, record):
        # Nothing to do: running Python code here lets a pending SIGINT handler run.
        pass

    def _on_sigint(self, signum, frame):
        self.cancel.value = signum

    def __enter__(self):
        # Only the main thread gets signals, and a handler the program set stays in place.
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            try:
                self.previous = signal.signal(signal.SIGINT, self._on_sigint)
            except ValueError:  # not the main interpreter
                self.previous = None
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        for level, message in self.notes:
            if level == _lib.DSG_LOG_WARNING:
                warnings.warn(f"diaseg: {message}", RuntimeWarning, stacklevel=3)
            else:
                _log.debug("%s", message)
        return False

    @property
    def cancelled(self):
        return bool(self.cancel.value)


def _array(ptr, dtype, count):
    """A copy of count items at ptr (a NULL ptr or count 0: an empty array)."""
    if count <= 0 or not ptr:
        return np.empty(0, dtype)
    return np.ctypeslib.as_array(ptr, shape=(count,)).astype(dtype, copy=True)


class _Adopted:
    """count float32 values at an address the library allocated for the caller, as the base of
    the arrays over them: freed (dsg_free) once the last of those arrays is gone. numpy keeps
    this object as every view's base, as it keeps any base that is not an array."""

    def __init__(self, address, count):
        self.__array_interface__ = {"shape": (count,), "typestr": np.dtype(np.float32).str,
                                    "data": (address, False), "version": 3}
        weakref.finalize(self, lib.dsg_free, address)


def _adopt(ptr, count):
    """The count floats at ptr (the library's, for the caller to free) as an array that owns
    them: no copy (a 3840 x 2160 map is 33 MB, and its copy into fresh memory cost 8 ms). A
    NULL ptr or count 0: an empty array."""
    address = ctypes.cast(ptr, ctypes.c_void_p).value
    if count <= 0 or not address:
        lib.dsg_free(address)
        return np.empty(0, np.float32)
    return np.asarray(_Adopted(address, count))


class _Hierarchy:
    """The run's region hierarchy (dsg_hierarchy, freed with the last reference), and the image
    its cuts are refined against where the run worked at a smaller size (else None)."""

    def __init__(self, handle, pixels, width, height, channels):
        self.handle = handle
        self.regions = lib.dsg_hierarchy_regions(handle)
        self.pixels = pixels
        self.shape = (height, width)
        self.channels = channels
        weakref.finalize(self, lib.dsg_hierarchy_destroy, handle)

    # The handle is the library's memory in this process: copies share it (it is read-only),
    # and a pickle carries no handle, only the region count (_Pickled).
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_Pickled, (self.regions,))

    def cut(self, k, threshold):
        h, w = self.shape
        labels = np.empty((h, w), np.int32)
        img = None
        if self.pixels is not None:
            img = ctypes.byref(_lib.DsgImage(w, h, self.channels, self.pixels.ctypes.data_as(
                ctypes.POINTER(ctypes.c_ubyte))))
        status = lib.dsg_hierarchy_cut(self.handle, img, k, threshold,
                                       labels.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)), None)
        if status != _lib.DSG_OK:
            _raise(status, _lib.error_message())
        return labels


class _Pickled:
    """Where a pickled Segmentation had its hierarchy: the library's memory stayed behind."""

    def __init__(self, regions):
        self.regions = regions

    def cut(self, k, threshold):
        raise ValueError("cut: this Segmentation was pickled, and its hierarchy stayed in the "
                         "process that ran segment(): cut there, or cut ucm "
                         "(scipy.ndimage.label(ucm <= t)[0][1::2, 1::2], at the working size)")


class Segmentation:
    """The result of :func:`segment`.

    Attributes
    ----------
    labels : ndarray of int32, shape (H, W), or None
        Segment labels 0 .. k-1, numbered in order of first appearance; None when there is no
        grouping (k=0, or fewer than k eigenpairs converged). With a list of k, the first k's.
    ks : tuple of int
        The k of the run, in the order given: ``(k,)`` for a single k, ``()`` for k=0.
    labels_by_k : dict
        k -> its labels (as ``labels``; None when fewer than k eigenpairs converged), for every
        k in ``ks``; see :meth:`labels_for`.
    eigenvalues : ndarray of float64, shape (nconv,)
        The converged eigenvalues of N = D^-1/2 W D^-1/2, descending (the first is 1).
    eigenvectors : ndarray of float32, shape (nconv, H, W)
        The unit eigenvectors u of N; the generalised ones are u / sqrt_degree.
    residuals : ndarray of float64, shape (nconv,)
        |N u_i - lambda_i u_i|, measured with one product each.
    sqrt_degree : ndarray of float64, shape (H, W)
        D^1/2 per pixel.
    ucm : ndarray of float32, shape (2H + 1, 2W + 1), or None
        The ultrametric contour map of the region hierarchy (grouping 'hierarchy'), on BSDS500's
        doubled grid: pixel (y, x) at (2y + 1, 2x + 1), each boundary between two pixels holding
        the level at which its two sides merge, each corner the strongest boundary meeting there,
        the frame 0 but for its corners. The cut at level t:
        ``scipy.ndimage.label(ucm <= t)[0][1::2, 1::2]``; the boundary map the BSDS500
        benchmark scores: ``ucm[2::2, 2::2] >= t``. :meth:`cut` makes the labels of any cut at
        the image's size.
    contours : ndarray of float32, shape (H, W), or None
        The boundary detector's strength in [0, 1) (what :func:`contours` returns) when the
        affinity is a contour cue ('contour', 'contour+color'), else None.
    converged : bool
        True when all nev eigenpairs converged.
    note : str
        The solver's words when it did not converge ("" otherwise).
    report : dict
        The run's report (the command line's report.json: parameters, matrix, components,
        eigenvalues, backend, segmentation, seconds per stage).
    timing : dict
        Seconds per stage: affinity, setup, solve, cluster, total.
    """

    def __init__(self, labels, eigenvalues, eigenvectors, residuals, sqrt_degree, converged,
                 note, report, timing, ks=None, labels_by_k=None, contours=None, ucm=None,
                 hierarchy=None):
        self._hierarchy = hierarchy
        self.labels = labels
        self.contours = contours
        self.ucm = ucm
        self.ks = tuple(ks) if ks is not None else ()
        self.labels_by_k = dict(labels_by_k) if labels_by_k is not None else {}
        self.eigenvalues = eigenvalues
        self.eigenvectors = eigenvectors
        self.residuals = residuals
        self.sqrt_degree = sqrt_degree
        self.converged = converged
        self.note = note
        self.report = report
        self.timing = timing

    def labels_for(self, k):
        """The labels for k (an ndarray of int32, shape (H, W), or None when fewer than k
        eigenpairs converged). KeyError for a k the run was not asked for."""
        try:
            return self.labels_by_k[operator.index(k)]
        except KeyError:
            raise KeyError(f"k={k} was not computed: this run has k in "
                           f"{list(self.ks)}") from None

    def cut(self, k=None, threshold=None):
        """The region hierarchy cut at k regions or at a level, without running again.

        Parameters
        ----------
        k : int, optional
            The number of regions (all the finest level's, ``hierarchy_regions``, where it has
            fewer). For a k of the run, the labels are ``labels_for(k)``'s.
        threshold : float, optional
            A level of ``ucm`` instead: the merges at or below it made (the regions of
            ``scipy.ndimage.label(ucm <= threshold)``). Give k or threshold, not both.

        Returns
        -------
        ndarray of int32, shape (H, W)
            Labels 0 .. n-1 in order of first appearance, at the image's size (refined against
            its pixels, as the run's labels are, where the run worked at a smaller size).

        Raises
        ------
        ValueError
            Neither or both of k and threshold, k < 1, a threshold not finite, or a run without
            a hierarchy (``grouping="kmeans"``, ``k=0``).

        Examples
        --------
        >>> import numpy as np, diaseg
        >>> img = np.zeros((64, 96)); img[:, 48:] = 1.0; img[20:40, 10:30] = 0.5
        >>> r = diaseg.segment(img, k=3, matvec="cpu")
        >>> bool((r.cut(k=3) == r.labels).all()), int(r.cut(k=2).max()) + 1
        (True, 2)
        """
        if (k is None) == (threshold is None):
            raise ValueError("cut: give k (a number of regions) or threshold (a level), "
                             "one of them")
        if self._hierarchy is None:
            raise ValueError("cut: this run kept no hierarchy (it needs grouping='hierarchy' "
                             "and k other than 0)")
        if k is not None:
            k = _convert("k", "int", k)
            if k < 1:
                raise ValueError(f"cut: k {k} must be 1 or more")
            return self._hierarchy.cut(k, 0.0)
        t = _convert("threshold", "float", threshold)
        if not np.isfinite(t):
            raise ValueError(f"cut: threshold {t} must be finite")
        return self._hierarchy.cut(0, t)

    @property
    def hierarchy_regions(self):
        """The regions of the hierarchy's finest level (the most a :meth:`cut` holds); 0 for
        a run without a hierarchy."""
        return self._hierarchy.regions if self._hierarchy is not None else 0

    def __repr__(self):
        h, w = self.sqrt_degree.shape
        if len(self.ks) > 1:
            k = "k=" + ",".join(str(x) for x in self.ks)
        else:
            k = "no grouping" if self.labels is None else f"k={int(self.labels.max()) + 1}"
        return (f"<diaseg.Segmentation {w}x{h}, {k}, {len(self.eigenvalues)} eigenpairs, "
                f"converged={self.converged}>")


def _result(r, pixels=None, channels=0, shared=True):
    """A Segmentation from a dsg_result (which the caller destroys; its hierarchy, if any, moves
    into the Segmentation). pixels, channels: the image segmented (uint8, C-contiguous), which a
    cut of the hierarchy needs where the run worked at a smaller size; shared: pixels may be the
    caller's array (kept as a copy then)."""
    w, h = lib.dsg_result_width(r), lib.dsg_result_height(r)
    n = w * h  # the labels and contours: the image's size
    ww, wh = lib.dsg_result_work_width(r), lib.dsg_result_work_height(r)
    wn = ww * wh  # the eigenvectors, degrees and hierarchy: the working size
    nconv = lib.dsg_result_nconv(r)
    ks, labels_by_k = [], {}
    for i in range(lib.dsg_result_nk(r)):
        k = lib.dsg_result_k_at(r, i)
        ptr = lib.dsg_result_labels_k(r, k)
        ks.append(k)
        labels_by_k[k] = _array(ptr, np.int32, n).reshape(h, w) if ptr else None
    labels = labels_by_k[ks[0]] if ks else None  # dsg_result_labels: the first k's
    vectors = _array(lib.dsg_result_eigenvectors(r), np.float32, nconv * wn).reshape(nconv, wh, ww)
    json_ptr, json_len = ctypes.c_void_p(), ctypes.c_size_t()
    status = lib.dsg_result_report(r, None, ctypes.byref(json_ptr), ctypes.byref(json_len))
    if status != _lib.DSG_OK:
        _raise(status, _lib.error_message())
    report = json.loads(_lib.take_text(json_ptr, json_len.value))
    t = lib.dsg_result_timing(r)
    cptr = lib.dsg_result_contours(r)
    ucm = np.empty((2 * wh + 1, 2 * ww + 1), np.float32)
    hierarchy = None
    if lib.dsg_result_ucm(r, ucm.ctypes.data_as(ctypes.POINTER(ctypes.c_float))) != _lib.DSG_OK:
        ucm = None
        lib.dsg_error_clear()
    else:
        handle = ctypes.c_void_p()
        status = lib.dsg_result_take_hierarchy(r, ctypes.byref(handle))
        if status != _lib.DSG_OK:
            _raise(status, _lib.error_message())
        if (ww, wh) == (w, h):
            pixels = None  # the cuts are the hierarchy's own labels
        elif pixels is not None and shared:
            pixels = pixels.copy()  # the caller's array, which may change after the run
        hierarchy = _Hierarchy(handle.value, pixels, w, h, channels)
    return Segmentation(
        ucm=ucm,
        contours=_array(cptr, np.float32, n).reshape(h, w) if cptr else None,
        labels=labels,
        eigenvalues=_array(lib.dsg_result_eigenvalues(r), np.float64, nconv),
        eigenvectors=vectors,
        residuals=_array(lib.dsg_result_residuals(r), np.float64, nconv),
        sqrt_degree=_array(lib.dsg_result_sqrt_degree(r), np.float64, wn).reshape(wh, ww),
        converged=bool(lib.dsg_result_converged(r)),
        note=_lib.strip_marks(_lib.decode(lib.dsg_result_note(r)) or ""),
        report=report,
        timing={name: getattr(t, name) for name, _ in _lib.DsgTiming._fields_},
        ks=ks, labels_by_k=labels_by_k, hierarchy=hierarchy)


def _ks(k):
    """k as segment() takes it: None, an int, or a sequence of ints (a list of k). Returns
    (k for the options or None, the list as a ctypes int array or None)."""
    if isinstance(k, str) and k == "auto":
        return _K_AUTO, None
    if k is None or isinstance(k, (numbers.Integral, np.integer, bool, np.bool_)) or \
            (isinstance(k, np.ndarray) and k.ndim == 0) or \
            not isinstance(k, (list, tuple, range, np.ndarray)):
        return k, None  # a single k: checked as every other integer option
    values = [_convert("k", "int", v) for v in (k.tolist() if isinstance(k, np.ndarray) else k)]
    if not values:
        raise ValueError("k is an empty list: give at least one k (or k=0 for no grouping)")
    if len(values) > 64:
        raise ValueError(f"k is a list of {len(values)} values: it holds at most 64 distinct "
                         f"values")
    return None, (ctypes.c_int * len(values))(*values)


def segment(image, k=None, **options):
    """Segments an image with normalized cuts.

    Parameters
    ----------
    image : array_like, shape (H, W) or (H, W, C)
        uint8, or float in [0, 1] (clipped, then quantised as round(255 v)); C = 1 gray,
        2 gray and alpha, 3 RGB (use ``affinity='color'``), 4 RGBA. At least 2 pixels.
    k : int, "auto" or sequence of int, optional
        The number of segments. "auto" (the default) chooses the scale: the hierarchy cut at
        level 0.44 (the best Covering + boundary F on BSDS500 train; 0.37 with
        ``net_weight=0``, 0.36 with ``net_weight=0, arc_weight=0.3``, 0.44 with
        ``forest_weight=0``, 0.69 with ``region_weight=0``), or for
        ``grouping="kmeans"`` the k before the largest eigengap; the report's "scale" says
        which. 0 computes the eigenpairs only. For k-means k <= 64, and nev follows k unless
        given. A list (``k=[2, 4, 8]``) solves once and groups once per k, with the
        same seed and restarts, so each k's labels are those ``segment(image, k=that_k)``
        gives; every k in [1, min(nev, 64)], none twice (ValueError). The result's ``labels``
        are then the first k's, ``labels_by_k`` / ``labels_for(k)`` hold each one's, ``ks``
        the list, and its report "ks" and "segmentations" (one entry per k).
    **options
        Any option by its dsg_options name (see :func:`defaults` for all of them and their
        defaults): nev, ncv, tol, max_iter, radius, sigma_i, sigma_x, affinity, keep_specks,
        seed, restarts, solver ('auto': chfsi for the hierarchy of an image of 116 pixels a side
        or more, else lanczos), coarse_start
        (chfsi: start from the image shrunk 5x, default True), matvec ('auto', 'cpu', 'opencl'), cl_device, kernel,
        local_size, kernel_dir, cl_max_alloc, cl_max_mem, max_memory (host bytes the run may
        take; default what the machine has available), work_pixels. None means the default.
        work_pixels (default 160000): an image of more pixels is segmented at the largest size
        of its aspect within it, and ``labels`` and ``contours`` come back at the image's size
        (refined against its pixels); ``eigenvectors``, ``sqrt_degree`` and ``ucm`` stay at the
        working size (``report["work"]``). 0: full resolution.

    Returns
    -------
    Segmentation
        labels, ks, labels_by_k, eigenvalues, eigenvectors, residuals, converged, report,
        timing.

    Raises
    ------
    TypeError
        An unknown option, or an option of the wrong type.
    ValueError
        A bad array (dimensions, dtype, empty, NaN) or an option value the library refuses
        (the message is the library's).
    RuntimeError
        Any other failure (OpenCL, memory, the eigensolver).
    KeyboardInterrupt
        Ctrl-C stopped the run.

    Warns
    -----
    RuntimeWarning
        The solver stopped at max_iter (``converged`` is False), or the library fell back
        (e.g. from OpenCL to the C path).

    Notes
    -----
    The GIL is released while the library works (ctypes releases it around every call).

    Examples
    --------
    >>> import numpy as np, diaseg
    >>> img = np.zeros((64, 96)); img[:, 48:] = 1.0
    >>> r = diaseg.segment(img, k=2, matvec="cpu")
    >>> np.unique(r.labels).tolist()
    [0, 1]
    >>> r = diaseg.segment(img, k=[2, 3], matvec="cpu")
    >>> r.ks, np.unique(r.labels_for(2)).tolist()
    ((2, 3), [0, 1])
    """
    k, ks = _ks(k)
    if k is not None:
        options["k"] = k
    if options.get("grouping") == "kmeans" and options.get("nev") is None:
        # k-means needs k eigenvectors: nev follows k unless given (as on the command line)
        top = max(list(ks) if ks is not None else [k if k is not None and k > 0 else 0])
        if top > defaults()["nev"]:
            options["nev"] = top
    opt, keep = _options(options, "segment")
    if ks is not None:
        opt.ks = ctypes.cast(ks, ctypes.POINTER(ctypes.c_int))
        opt.nks = len(ks)
        keep.append(ks)  # borrowed by the library for the call
    pixels, img = _image(image)
    out = ctypes.c_void_p()
    with _Call(opt) as call:
        status = lib.dsg_segment(ctypes.byref(img), ctypes.byref(opt), ctypes.byref(out))
        message = _lib.error_message() if status != _lib.DSG_OK else ""
    # keep stays referenced up to here: the library borrowed it for the call
    del keep
    if out:
        try:
            result = _result(out, pixels, img.channels,
                             shared=np.may_share_memory(pixels, np.asarray(image)))
        finally:
            lib.dsg_result_destroy(out)
    del pixels  # the hierarchy keeps it where its cuts need it
    if call.cancelled or status == _lib.DSG_ERR_INTERRUPTED:
        raise KeyboardInterrupt(message)
    if not out:
        _raise(status, message or _lib.status_name(status))
    if status == _lib.DSG_ERR_NOCONV or not result.converged:
        warnings.warn(f"diaseg: {message or result.note or 'the solver did not converge'}",
                      RuntimeWarning, stacklevel=2)
    elif status != _lib.DSG_OK:
        _raise(status, message)
    return result


def affinity(image, return_degree=False, **options):
    """The normalised affinity N = D^-1/2 W D^-1/2 of an image.

    The same matrix as the command line's ``diaseg affinity IMAGE --export DIR``, in SciPy's
    layout: pixel i is row ``y * W + x``.

    Parameters
    ----------
    image : array_like, shape (H, W) or (H, W, C)
        As for :func:`segment`.
    return_degree : bool, optional
        Also return D^1/2 (default False).
    **options
        As for :func:`segment`; only affinity, radius, sigma_i and sigma_x shape N, the
        others are checked for their names and types only.

    Returns
    -------
    N : scipy.sparse.dia_matrix of float32, shape (n, n), n = H * W
        Symmetric, with one diagonal per distinct disc offset ``dy * W + dx``. SciPy indexes
        ``N.data[d, col] = N[col - N.offsets[d], col]`` (by column); the library and the
        command line's diagonals.npy index ``diagonals[d, row] = N[row, row + offsets[d]]``.
    sqrt_degree : ndarray of float64, shape (n,)
        D^1/2 per pixel (only with ``return_degree=True``); N @ sqrt_degree == sqrt_degree.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        As for :func:`segment`.
    """
    import scipy.sparse

    opt, keep = _options(options, "affinity")
    pixels, img = _image(image)
    out = ctypes.c_void_p()
    with _Call(opt) as call:
        status = lib.dsg_affinity(ctypes.byref(img), ctypes.byref(opt), ctypes.byref(out))
        message = _lib.error_message() if status != _lib.DSG_OK else ""
    del pixels, keep
    if status != _lib.DSG_OK or not out or call.cancelled:
        lib.dsg_matrix_destroy(out)  # NULL is allowed
        if call.cancelled or status == _lib.DSG_ERR_INTERRUPTED:
            raise KeyboardInterrupt(message)
        _raise(status, message or _lib.status_name(status))
    try:
        n = lib.dsg_matrix_rows(out)
        ndiag = lib.dsg_matrix_ndiag(out)
        pitch = lib.dsg_matrix_pitch(out)
        offsets = _array(lib.dsg_matrix_offsets(out), np.int32, ndiag)
        values = _array(lib.dsg_matrix_values(out), np.float32, ndiag * pitch)
        sqrt_degree = _array(lib.dsg_matrix_sqrt_degree(out), np.float64, n)
    finally:
        lib.dsg_matrix_destroy(out)
    values = values.reshape(ndiag, pitch)[:, :n]
    # by row (diaseg) -> by column (SciPy): N[row, row + off] moves to data[d, row + off]
    data = np.zeros((ndiag, n), np.float32)
    for d, off in enumerate(offsets.tolist()):
        if off >= 0:
            data[d, off:] = values[d, :n - off]
        else:
            data[d, :n + off] = values[d, -off:]
    N = scipy.sparse.dia_matrix((data, offsets), shape=(n, n))
    return (N, sqrt_degree) if return_degree else N


def contours(image, parts=False, **options):
    """The boundary detector alone (docs/PIPELINE.md, "Contours"), thinned by non-maximum
    suppression: by default the structured edge forest learnt from BSDS500 train at 3 scales
    (the sharper map), or with ``detector='gradients'`` (or ``parts=True``) oriented chi-squared gradients of
    brightness, colour and texture at 3 scales and 8 orientations, combined (mPb).

    Parameters
    ----------
    image : array_like, shape (H, W) or (H, W, C)
        As for :func:`segment`; any size (1 x 1 included).
    parts : bool, optional
        Also return each of the 12 gradients (channel x scale) at its best orientation, before
        the combination (default False; the gradients' only).
    **options
        detector ('auto': the forest, or the gradients with ``parts=True``; 'forest';
        'gradients'); matvec ('auto': the first OpenCL GPU, else the C path; 'cpu'; 'opencl')
        and cl_device: where the gradients run (the forest runs on the host unless matvec is
        'opencl': a device's opening costs more than the forest does there); work_pixels (as for :func:`segment`: a larger image is
        detected at that many pixels and the map brought back to its size, lines one pixel
        wide; 0: full resolution).

    Returns
    -------
    strength : ndarray of float32, shape (H, W)
        Boundary strength in [0, 1), 0 off the (one pixel wide) contours.
    parts : dict of str to ndarray of float32, shape (H, W)
        Only with ``parts=True``: name ('brightness_r3', ..., 'texture_r20') -> gradient.

    Examples
    --------
    >>> import numpy as np, diaseg
    >>> img = np.zeros((30, 40), np.uint8); img[:, 20:] = 200
    >>> pb = diaseg.contours(img)
    >>> sorted(set(np.flatnonzero(pb.max(axis=0) > 0.5).tolist()))
    [20]
    >>> pb = diaseg.contours(img, detector='gradients')
    >>> sorted(set(np.flatnonzero(pb.max(axis=0) > 0.5).tolist()))
    [19]
    """
    unknown = set(options) - {"detector", "matvec", "cl_device", "work_pixels"}
    if unknown:
        raise TypeError(f"contours() got an unexpected keyword argument {sorted(unknown)[0]!r} "
                        f"(the options are: detector, matvec, cl_device, work_pixels)")
    opt, keep = _options(options, "contours")
    pixels, img = _image(image)
    s_ptr, p_ptr = ctypes.POINTER(ctypes.c_float)(), ctypes.POINTER(ctypes.c_float)()
    with _Call(opt) as call:
        status = lib.dsg_contours(ctypes.byref(img), ctypes.byref(opt), ctypes.byref(s_ptr),
                                  ctypes.byref(p_ptr) if parts else None)
        message = _lib.error_message() if status != _lib.DSG_OK else ""
    del pixels, keep
    if call.cancelled or status == _lib.DSG_ERR_INTERRUPTED:
        raise KeyboardInterrupt(message)
    if status != _lib.DSG_OK:
        _raise(status, message or _lib.status_name(status))
    h, w = img.height, img.width
    # the arrays own the library's buffers from here on (each freed once, by its array)
    strength = _adopt(s_ptr, w * h).reshape(h, w)
    named = {}
    if parts:
        P = lib.dsg_contour_parts()
        values = _adopt(p_ptr, P * w * h).reshape(P, h, w)
        named = {_lib.decode(lib.dsg_contour_part_name(i)): values[i] for i in range(P)}
    return (strength, named) if parts else strength


def memory(shape, **options):
    """What ``segment`` of an image of this shape takes in memory with these options, worked
    out from the sizes alone, and whether it fits this machine (docs/PIPELINE.md, "9. Memory").
    ``segment`` makes the same check before any work and raises ValueError when it fails.

    Parameters
    ----------
    shape : tuple
        (height, width) or (height, width, channels), as ``image.shape``.
    **options
        As for ``segment`` (work_pixels, solver, ncv, radius, matvec, max_memory, ...).

    Returns
    -------
    dict
        work_pixels (the size the problem is solved at); host_cpu and host_opencl (host bytes
        at the run's peak on the C path and on the OpenCL path); device and device_buffer
        (device bytes, and its largest single buffer, on the OpenCL path); affinity (host
        bytes of ``affinity``: N at the image's own size); fits (True, or the
        message saying what ran short and what image size would fit).
    """
    if len(shape) not in (2, 3) or not all(isinstance(v, (int, np.integer)) for v in shape):
        raise ValueError(f"shape {shape!r} is not (height, width) or (height, width, channels)")
    height, width = int(shape[0]), int(shape[1])
    if height < 1 or width < 1 or height > 2**31 - 1 or width > 2**31 - 1:
        raise ValueError(f"shape {shape!r}: each side must be in [1, 2^31 - 1]")
    opt, keep = _options(options, "memory")
    need = _lib.DsgMemory()
    lib.dsg_memory_need(ctypes.byref(opt), width, height, ctypes.byref(need))
    status = lib.dsg_check_memory(ctypes.byref(opt), width, height)
    fits = True if status == _lib.DSG_OK else _lib.error_message()
    del keep
    return {"work_pixels": int(need.work_pixels), "host_cpu": need.host_cpu,
            "host_opencl": need.host_opencl, "device": need.device,
            "device_buffer": need.device_buffer, "affinity": need.affinity, "fits": fits}


def devices():
    """The OpenCL devices of every platform.

    Returns
    -------
    list of dict
        One dict per device: index (what ``cl_device`` takes), platform, name, version, type
        ('GPU', 'CPU' or 'other'), global_mem, max_alloc, local_mem, compute_units,
        image_support, image2d_max_width, image2d_max_height, fp64. Empty when there is no
        OpenCL platform or device.
    """
    ptr, length = ctypes.c_void_p(), ctypes.c_size_t()
    status = lib.dsg_devices_json(None, ctypes.byref(ptr), ctypes.byref(length))
    if status == _lib.DSG_ERR_NODEVICE:
        return []
    if status != _lib.DSG_OK:
        _raise(status, _lib.error_message())
    return json.loads(_lib.take_text(ptr, length.value))["devices"]
