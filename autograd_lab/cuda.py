"""CUDA device queries, and the switch to numba's CUDA simulator on machines without a GPU.

    >>> import autograd_lab as ag
    >>> ag.cuda.use_simulator_if_no_gpu()   # first thing in a notebook: True on a laptop
    True
    >>> x = ag.ones(3, device="cuda")       # kernels run in the simulator (slowly), or on a GPU
    >>> x.device
    device(type='cuda', index=0)

numba is imported only when CUDA is first used, so `import autograd_lab` stays fast and leaves the
choice of simulator or GPU open: numba reads NUMBA_ENABLE_CUDASIM when `numba.cuda` is imported.
NB: PyTorch's `torch.cuda` has the same query functions; the simulator is numba's own idea.
"""

import ctypes
import os
import sys

from . import optional, types

_SIMULATOR_VARIABLE = "NUMBA_ENABLE_CUDASIM"
_gpu_count_cache = None


# ---- is there a GPU, is the simulator on? (no numba import) --------------------------------------


def _nvidia_gpu_count():
    """GPUs the NVIDIA driver reports, asked through ctypes so numba.cuda stays unimported."""
    global _gpu_count_cache
    if _gpu_count_cache is None:
        _gpu_count_cache = 0
        for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll", "libcuda.dylib"):
            try:
                driver = ctypes.CDLL(name)
            except OSError:
                continue
            count = ctypes.c_int(0)
            if driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0:
                _gpu_count_cache = count.value
            break
    return _gpu_count_cache


def _numba_cuda_imported():
    return "numba.cuda" in sys.modules


def simulator_enabled():
    """True when CUDA code runs in numba's simulator (no GPU needed) rather than on a GPU."""
    if _numba_cuda_imported():  # the mode is fixed once numba.cuda is imported
        return "numba.cuda.simulator_init" in sys.modules
    try:
        return int(os.environ.get(_SIMULATOR_VARIABLE, "0") or 0) != 0
    except ValueError:
        return False


def _numba_cuda_installed():
    return optional.installed("numba_cuda") and optional.installed("numba")


def use_simulator_if_no_gpu():
    """Switch numba's CUDA simulator on when this machine has no NVIDIA GPU; True if it is on.

    Call it before anything uses CUDA (the first cell of a notebook): numba fixes its mode when
    `numba.cuda` is first imported. On a machine with a GPU it leaves the GPU in use.
    """
    if not _numba_cuda_installed():  # neither the simulator nor a GPU can run without it
        raise _not_available_error()
    if _numba_cuda_imported():
        if simulator_enabled() or _nvidia_gpu_count() > 0:
            return simulator_enabled()
        raise RuntimeError(
            "numba.cuda was already imported without the simulator, and this machine has no "
            "NVIDIA GPU, so CUDA code cannot run. Fix: restart Python (the notebook kernel) and "
            "call autograd_lab.cuda.use_simulator_if_no_gpu() before anything uses CUDA, or set "
            "NUMBA_ENABLE_CUDASIM=1 in the environment before starting Python."
        )
    if _nvidia_gpu_count() == 0:
        os.environ[_SIMULATOR_VARIABLE] = "1"
        if "numba.core.config" in sys.modules:  # numba is loaded (a large random draw loads it)
            sys.modules["numba.core.config"].reload_config()  # and reads the variable again
    if simulator_enabled():  # numba's simulator could give a block's threads two shared arrays
        from .backend.cuda.simulator import make_shared_arrays_thread_safe

        make_shared_arrays_thread_safe()
    return simulator_enabled()


def is_available():
    """True when tensors can use device='cuda': a GPU is present, or the simulator is on.

    Never raises (and imports nothing heavy): it only answers the question.
    """
    try:
        if not _numba_cuda_installed():
            return False
        if simulator_enabled():
            return True
        if _numba_cuda_imported():
            return bool(sys.modules["numba.cuda"].is_available())
        return _nvidia_gpu_count() > 0
    except Exception:  # a broken driver install is "not available", not a crash
        return False


def device_count():
    """How many CUDA devices tensors can use (the simulator pretends to be one)."""
    if not is_available():
        return 0
    return 1 if simulator_enabled() else _nvidia_gpu_count()


# ---- the backend, loaded on first use --------------------------------------------------------------


def _not_available_error():
    if not _numba_cuda_installed():  # a MissingExtraError is a RuntimeError too
        return optional.missing(
            "numba_cuda", "device='cuda' (a GPU, or numba's CUDA simulator without one)"
        )
    return RuntimeError(
        "CUDA is not available: this machine has no NVIDIA GPU and numba's CUDA simulator is "
        "off, so tensors cannot use device='cuda'. Fix: to run CUDA code without a GPU, switch "
        "the simulator on before numba is first imported: set NUMBA_ENABLE_CUDASIM=1 in the "
        "environment before importing autograd_lab (or numba), or call "
        "autograd_lab.cuda.use_simulator_if_no_gpu() first thing. Or keep tensors on 'cpu'."
    )


_backend_module = None


def _backend():
    """The CUDA backend module (imports numba on first use), or a RuntimeError saying how to get one."""
    global _backend_module
    if _backend_module is None:
        if not is_available():
            raise _not_available_error()
        if simulator_enabled() and "numba" in sys.modules and not _numba_cuda_imported():
            # numba read its settings when it was imported: have it read the simulator switch again
            from numba.core import config

            config.reload_config()
        from numba import cuda  # noqa: F401  (the first numba import: it fixes the mode)

        from .backend import cuda as backend

        _backend_module = backend
    return _backend_module


def _check_device_index(device):
    """Accept None, 0, 'cuda', 'cuda:0' or device('cuda', 0): the one device we use."""
    index = None if device is None else types.device(device).index
    if index not in (None, 0):
        raise RuntimeError(
            f"CUDA device {index} does not exist: autograd_lab uses one CUDA device, cuda:0"
        )


def synchronize(device=None):
    """Wait until every kernel launched so far has finished (kernels run asynchronously)."""
    _check_device_index(device)
    _backend()
    sys.modules["numba.cuda"].synchronize()


def current_device():
    """The index of the CUDA device in use: always 0 (autograd_lab uses one device)."""
    _backend()
    return 0


def get_device_name(device=None):
    """The GPU's name, e.g. 'NVIDIA H100 80GB HBM3'; under the simulator, says so."""
    _check_device_index(device)
    _backend()
    if simulator_enabled():
        return "numba CUDA simulator (no GPU)"
    name = sys.modules["numba.cuda"].get_current_device().name
    return name.decode() if isinstance(name, bytes) else name
