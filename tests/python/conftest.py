"""pytest options for the Python package's tests (tests/python/README.md):

  --diaseg PATH  the diaseg command (optional: the tests comparing with it skip without it)
  --data DIR     the sample images folder (data/)

The package under test is whatever `import diaseg` finds: the installed one, or app/python with
DIASEG_LIBRARY pointing at a build tree's libdiaseg.so (as ctest runs it).
"""
import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--diaseg", default=None, help="the diaseg command line binary")
    parser.addoption("--data", default=None, help="the sample images folder (data/)")


@pytest.fixture(scope="session")
def diaseg_cli(request):
    """The diaseg binary, or None when --diaseg was not given."""
    path = request.config.getoption("--diaseg")
    if path is None:
        return None
    path = os.path.abspath(path)
    if not os.access(path, os.X_OK):
        pytest.fail(f"--diaseg {path}: not an executable")
    return path


@pytest.fixture(scope="session")
def data_dir(request):
    """The sample images folder, or None when --data was not given."""
    path = request.config.getoption("--data")
    return os.path.abspath(path) if path else None


def pytest_report_header(config):
    try:
        import diaseg
        from diaseg import _lib
    except ImportError as e:
        return f"diaseg: cannot import: {e}"
    return f"diaseg {diaseg.__version__} from {os.path.dirname(diaseg.__file__)}, library {_lib.PATH}"
