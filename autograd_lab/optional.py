"""Optional dependencies: what needs numba, and the error that says which extra installs it.

The eager engine, the viewers and lessons 1-7 need only numpy. Two features need more:

    ag.compile's fused kernels         numba        pip install "autograd_lab[compile]"
    device="cuda" (a GPU or numba's    numba-cuda   pip install "autograd_lab[cuda]"
    CUDA simulator), lesson 08

    >>> from autograd_lab import optional
    >>> optional.installed("numba")
    True
    >>> optional.require("numba", "ag.compile's fused kernels")   # raises when it is missing

Nothing here imports numba (importing it takes about a second): `installed` only asks Python's
import system whether the module could be found.

NB: PyTorch ships its compilers inside its wheel. Here they are extras, so that the core installs
wherever numpy does: a Python too new for numba's wheels, a browser's Pyodide, a small container.
"""

import importlib.util

# module -> (the distribution pip installs, the autograd_lab extra that brings it)
EXTRAS = {
    "numba": ("numba", "compile"),
    "numba_cuda": ("numba-cuda", "cuda"),
}


class MissingExtraError(ModuleNotFoundError, RuntimeError):
    """An optional dependency is not installed; the message names the extra that installs it.

    A ModuleNotFoundError (what it is), and a RuntimeError too: code written for PyTorch catches
    RuntimeError when CUDA is not available, and this is how that case reads here.
    """


def installed(module):
    """True when `module` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken entry in sys.modules
        return False


def missing(module, feature):
    """The error for `feature` needing `module`, which is not installed."""
    package, extra = EXTRAS[module]
    return MissingExtraError(
        f"{feature} needs {package}, which is not installed. "
        f'Fix: pip install "autograd_lab[{extra}]" '
        f"(the eager engine, the graph viewer and lessons 1-7 run without it).",
        name=module,
    )


def require(module, feature):
    """Raise MissingExtraError naming the extra to install unless `module` can be imported."""
    if not installed(module):
        raise missing(module, feature)
