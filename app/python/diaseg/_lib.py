"""Loading libdiaseg.so and its ctypes declarations (diaseg.h, dsg_base.h).

Every function the package calls is declared here with its argtypes and restype; the
Structures mirror the C structs field by field (same order, same types). Nothing here
interprets results: that is ``diaseg/__init__.py``.

The library is looked up, in order:

1. the path in the environment variable ``DIASEG_LIBRARY`` (the project's ctest points it at the
   build tree's ``libdiaseg.so``); if it is set and cannot be loaded, that is an ImportError;
2. ``libdiaseg.so`` next to this file (what ``pip install .`` puts in the wheel);
3. ``ctypes.util.find_library("diaseg")`` (a system-wide ``cmake --install``).
"""

import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_long, c_longlong,
                    c_size_t, c_ubyte, c_uint64, c_ulonglong, c_void_p, c_float)

# ---- status codes (dsg_base.h, enum dsg_status) ----
DSG_OK = 0
DSG_ERR_INVALID = -1
DSG_ERR_NOMEM = -2
DSG_ERR_IO = -3
DSG_ERR_FORMAT = -4
DSG_ERR_LIMIT = -5
DSG_ERR_OPENCL = -6
DSG_ERR_NODEVICE = -7
DSG_ERR_SOLVER = -8
DSG_ERR_NOCONV = -9
DSG_ERR_INTERRUPTED = -10

# ---- log levels (diaseg.h, enum dsg_log_level) ----
DSG_LOG_INFO = 0
DSG_LOG_WARNING = 1
DSG_LOG_DETAIL = 2

# DSG_PARAM("name") marks a parameter's name as "\x01name\x02" inside a message.
PARAM_BEGIN = "\x01"
PARAM_END = "\x02"

# ---- callbacks ----
class DsgProgress(Structure):
    """struct dsg_progress (diaseg.h), the record a progress callback borrows."""
    _fields_ = [
        ("stage", c_char_p),
        ("stage_index", c_int),
        ("stage_count", c_int),
        ("products", c_long),
        ("products_estimate", c_long),
        ("converged", c_int),
        ("wanted", c_int),
        ("elapsed_s", c_double),
        ("stage_elapsed_s", c_double),
        ("eta_s", c_double),
    ]


# typedef void (*dsg_progress_fn)(void *data, const dsg_progress *p);
PROGRESS_FN = CFUNCTYPE(None, c_void_p, POINTER(DsgProgress))
# typedef void (*dsg_log_fn)(void *data, int level, const char *message);
LOG_FN = CFUNCTYPE(None, c_void_p, c_int, c_char_p)


class DsgImage(Structure):
    """struct dsg_image."""
    _fields_ = [
        ("width", c_int),
        ("height", c_int),
        ("channels", c_int),
        ("pixels", POINTER(c_ubyte)),
    ]


class DsgOptions(Structure):
    """struct dsg_options (field order and types exactly as in diaseg.h)."""
    _fields_ = [
        # grouping
        ("k", c_int),
        ("seed", c_uint64),
        ("restarts", c_int),
        ("ks", POINTER(c_int)),
        ("nks", c_int),
        ("grouping", c_char_p),
        ("spectral_weight", c_double),
        ("min_region", c_int),
        ("region_weight", c_double),
        ("forest_weight", c_double),
        ("arc_weight", c_double),
        ("net_weight", c_double),
        ("threshold", c_double),
        # resolution
        ("work_pixels", c_longlong),
        # affinity
        ("affinity", c_char_p),
        ("detector", c_char_p),
        ("radius", c_int),
        ("sigma_i", c_double),
        ("sigma_x", c_double),
        ("sigma_c", c_double),
        ("keep_specks", c_int),
        # eigensolver
        ("nev", c_int),
        ("ncv", c_int),
        ("tol", c_double),
        ("max_iter", c_int),
        ("solver", c_char_p),
        ("coarse_start", c_int),
        # backend
        ("matvec", c_char_p),
        ("cl_device", c_char_p),
        ("kernel", c_char_p),
        ("local_size", c_size_t),
        ("kernel_dir", c_char_p),
        ("cl_max_alloc", c_ulonglong),
        ("cl_max_mem", c_ulonglong),
        ("max_memory", c_ulonglong),
        ("basis_groups", c_size_t),
        ("basis_row_groups", c_size_t),
        ("lanczos_unfused", c_int),
        # callbacks; sig_atomic_t is int on the platforms diaseg builds on
        ("cancel", POINTER(c_int)),
        ("progress", PROGRESS_FN),
        ("progress_data", c_void_p),
        ("log", LOG_FN),
        ("log_data", c_void_p),
    ]


class DsgMemory(Structure):
    """struct dsg_memory."""
    _fields_ = [
        ("work_pixels", ctypes.c_longlong),
        ("host_cpu", c_double),
        ("host_opencl", c_double),
        ("device", c_double),
        ("device_buffer", c_double),
        ("affinity", c_double),
    ]


class DsgTiming(Structure):
    """struct dsg_timing (returned by value)."""
    _fields_ = [
        ("affinity", c_double),
        ("setup", c_double),
        ("solve", c_double),
        ("cluster", c_double),
        ("total", c_double),
        ("contours", c_double),
        ("resolution", c_double),
    ]


class DsgReportInfo(Structure):
    """struct dsg_report_info."""
    _fields_ = [
        ("command", c_char_p),
        ("image", c_char_p),
        ("input_width", c_int),
        ("input_height", c_int),
        ("resize_width", c_int),
        ("resize_height", c_int),
        ("max_pixels", ctypes.c_longlong),
        ("load_s", c_double),
        ("write_s", c_double),
        ("total_s", c_double),
    ]


# Opaque handles (dsg_result *, dsg_matrix *) travel as void pointers.
_P = c_void_p

# name: (restype, argtypes)
_SIGNATURES = {
    # dsg_base.h
    "dsg_error_message": (c_char_p, []),
    "dsg_error_raw": (c_char_p, []),
    "dsg_error_clear": (None, []),
    "dsg_status_name": (c_char_p, [c_int]),
    # diaseg.h
    "dsg_version": (c_char_p, []),
    "dsg_options_init": (None, [POINTER(DsgOptions)]),
    "dsg_options_check": (c_int, [POINTER(DsgOptions)]),
    "dsg_cue_count": (c_int, []),
    "dsg_cue_name": (c_char_p, [c_int]),
    "dsg_grouping_count": (c_int, []),
    "dsg_grouping_name": (c_char_p, [c_int]),
    "dsg_detector_count": (c_int, []),
    "dsg_detector_name": (c_char_p, [c_int]),
    "dsg_segment": (c_int, [POINTER(DsgImage), POINTER(DsgOptions), POINTER(_P)]),
    "dsg_result_destroy": (None, [_P]),
    "dsg_result_width": (c_int, [_P]),
    "dsg_result_height": (c_int, [_P]),
    "dsg_result_work_width": (c_int, [_P]),
    "dsg_result_work_height": (c_int, [_P]),
    "dsg_result_labels": (POINTER(ctypes.c_int32), [_P]),
    "dsg_result_nk": (c_int, [_P]),
    "dsg_result_k_at": (c_int, [_P, c_int]),
    "dsg_result_labels_k": (POINTER(ctypes.c_int32), [_P, c_int]),
    "dsg_result_nconv": (c_int, [_P]),
    "dsg_result_eigenvalues": (POINTER(c_double), [_P]),
    "dsg_result_eigenvectors": (POINTER(c_float), [_P]),
    "dsg_result_residuals": (POINTER(c_double), [_P]),
    "dsg_result_sqrt_degree": (POINTER(c_double), [_P]),
    "dsg_result_contours": (POINTER(c_float), [_P]),
    "dsg_result_ucm": (c_int, [_P, POINTER(c_float)]),
    "dsg_result_take_hierarchy": (c_int, [_P, POINTER(_P)]),
    "dsg_hierarchy_destroy": (None, [_P]),
    "dsg_hierarchy_regions": (c_int, [_P]),
    "dsg_hierarchy_cut": (c_int, [_P, POINTER(DsgImage), c_int, c_double,
                                  POINTER(ctypes.c_int32), POINTER(c_int)]),
    "dsg_contours": (c_int, [POINTER(DsgImage), POINTER(DsgOptions), POINTER(POINTER(c_float)),
                             POINTER(POINTER(c_float))]),
    "dsg_contour_parts": (c_int, []),
    "dsg_contour_part_name": (c_char_p, [c_int]),
    "dsg_result_converged": (c_int, [_P]),
    "dsg_result_note": (c_char_p, [_P]),
    "dsg_result_products": (c_long, [_P]),
    "dsg_result_timing": (DsgTiming, [_P]),
    "dsg_result_report": (c_int, [_P, POINTER(DsgReportInfo), POINTER(c_void_p),
                                  POINTER(c_size_t)]),
    "dsg_affinity": (c_int, [POINTER(DsgImage), POINTER(DsgOptions), POINTER(_P)]),
    "dsg_matrix_destroy": (None, [_P]),
    "dsg_matrix_rows": (c_int, [_P]),
    "dsg_matrix_ndiag": (c_int, [_P]),
    "dsg_matrix_pitch": (c_size_t, [_P]),
    "dsg_matrix_offsets": (POINTER(c_int), [_P]),
    "dsg_matrix_values": (POINTER(c_float), [_P]),
    "dsg_matrix_sqrt_degree": (POINTER(c_double), [_P]),
    "dsg_devices_json": (c_int, [c_char_p, POINTER(c_void_p), POINTER(c_size_t)]),
    "dsg_memory_need": (None, [POINTER(DsgOptions), c_int, c_int, POINTER(DsgMemory)]),
    "dsg_check_memory": (c_int, [POINTER(DsgOptions), c_int, c_int]),
    "dsg_free": (None, [c_void_p]),
}


def _candidates():
    env = os.environ.get("DIASEG_LIBRARY")
    if env:
        return [("DIASEG_LIBRARY", env)]
    found = []
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libdiaseg.so")
    if os.path.exists(here):
        found.append(("the package directory", here))
    name = ctypes.util.find_library("diaseg")
    if name:
        found.append(("ctypes.util.find_library('diaseg')", name))
    return found


def _load():
    candidates = _candidates()
    if not candidates:
        raise ImportError(
            "diaseg: cannot find libdiaseg.so: set DIASEG_LIBRARY to its path (e.g. "
            "build/app/libdiaseg.so), install the package with `pip install .` from the diaseg "
            "checkout, or install the library system-wide (cmake --install)")
    errors = []
    # OpenMP threads that wait sleep instead of spinning (as the diaseg program does: a spinning
    # thread takes a busy machine's cores from the working ones). libgomp reads this when it is
    # loaded, so it counts only where no module loaded libgomp before; a policy set is kept.
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    for where, path in candidates:
        try:
            # CDLL (not PyDLL): ctypes releases the GIL around every call into it
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path} (from {where}): {e}")
            continue
        try:
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
        except AttributeError as e:
            errors.append(f"{path} (from {where}): not a matching libdiaseg: {e}")
            continue
        return lib, path
    raise ImportError("diaseg: cannot load libdiaseg.so: " + "; ".join(errors))


lib, PATH = _load()


def strip_marks(message):
    """A library message with its DSG_PARAM marks removed (parameters shown by name)."""
    return message.replace(PARAM_BEGIN, "").replace(PARAM_END, "")


def decode(raw):
    """bytes from the library (NULL: None) as str."""
    return None if raw is None else raw.decode("utf-8", errors="replace")


def error_message():
    """This thread's last library error message, parameters shown by name."""
    return strip_marks(decode(lib.dsg_error_message()) or "")


def status_name(status):
    return decode(lib.dsg_status_name(status)) or f"status {status}"


def take_text(ptr, length):
    """The malloc'd text the library handed out, as str; frees it."""
    try:
        return ctypes.string_at(ptr, length).decode("utf-8", errors="replace")
    finally:
        lib.dsg_free(ptr)
