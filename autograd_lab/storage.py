"""Where a tensor's numbers live: a numpy array (device 'cpu') or a CudaArray (device 'cuda').

    >>> import numpy as np
    >>> from autograd_lab import storage
    >>> storage.device_of(np.zeros(3))
    device(type='cpu')

The ops are written once, with numpy calls; a CudaArray answers those calls with CUDA kernels
(numpy's dispatch protocols), so this module is all the engine needs to know about devices:
which device an array is on, and how to move it (`move`, a counted host<->GPU copy).
"""

import numpy as np

from . import types
from .backend import is_cuda_array as is_device_array  # imports no numba
from .types import CPU, CUDA


def as_storage(data):
    """What Tensor keeps as `_data`: a CudaArray as it is, anything else as a numpy array."""
    if is_device_array(data):
        return data
    return np.asarray(data)  # numpy gives 0-d results as scalars: make them arrays again


def storage_of(array):
    """The numpy array that owns the memory `array` looks at: PyTorch's *storage*. Follow `.base`
    down (a view's base, its base's base, ...), also through the helper object numpy's as_strided
    puts between its result and the array it views."""
    below = array.base
    while below is not None:
        if isinstance(below, np.ndarray):
            array = below
        below = getattr(below, "base", None)
    return array


def same_storage(array, other):
    """Do two arrays look at one storage? A view and its base always do, even an empty view (of
    which np.may_share_memory says it shares nothing: it has no elements to share)."""
    if is_device_array(array) or is_device_array(other):
        return np.may_share_memory(array, other)  # CudaArrays: windows onto the same buffer
    return storage_of(array) is storage_of(other)


def device_of(array):
    return CPU if type(array) is np.ndarray or not is_device_array(array) else CUDA


def resolve_device(device):
    """The device a `device=` argument asks for: None, CPU or CUDA (loading the CUDA backend).

    Asking for CUDA where there is none raises a RuntimeError that says how to get the simulator.
    """
    if device is None:
        return None
    device = types.device(device)
    if device.type == "cpu":
        return CPU
    if device.index not in (None, 0):
        raise RuntimeError(
            f"CUDA error: invalid device ordinal: {device} does not exist; autograd_lab uses one "
            "CUDA device. Fix: use device='cuda' (or 'cuda:0')."
        )
    from .cuda import _backend

    _backend()  # raises, with the fix, when CUDA is not available
    return CUDA


def move(array, device):
    """`array` on `device`: itself when it is already there, else a copy (a counted transfer)."""
    if device_of(array) == device:
        return array
    if device.type == "cuda":
        from .cuda import _backend

        return _backend().from_numpy(array)
    return np.asarray(array)  # CudaArray.__array__: a counted device-to-host copy


def new(make, *args, device=None, **kwargs):
    """`make(*args, **kwargs)` on `device`, for make = np.zeros, np.ones, np.full, np.arange or
    np.eye: the CUDA backend has functions of the same names that fill the array on the GPU, so
    no values cross from the host."""
    device = resolve_device(device)
    if device is None or device.type == "cpu":
        return make(*args, **kwargs)
    from .cuda import _backend

    return getattr(_backend(), make.__name__)(*args, **kwargs)


def check_same_device(array, other):
    """Refuse an operation between arrays on two devices (a one-element array is a number)."""
    if device_of(array) != device_of(other) and other.size > 1:
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cpu! Fix: move one with .to('cuda') / .cpu() so that both are on the "
            "same device."
        )


def check_on_host(array):
    """Tensor.numpy() hands out the numpy array itself: only CPU tensors have one."""
    if type(array) is not np.ndarray:
        raise TypeError(
            f"can't convert {device_of(array)} device type tensor to numpy. Use Tensor.cpu() to "
            "copy the tensor to host memory first."
        )


def check_grad_device(grad, array, what):
    """A gradient lives on its tensor's device."""
    if type(grad) is not type(array):
        raise RuntimeError(
            f"{what} is on {device_of(grad)} but the tensor is on {device_of(array)}: expected "
            f"device {device_of(array)} but got {device_of(grad)}. A gradient lives on its "
            "tensor's device. Fix: move it first, e.g. gradient.to(tensor.device)."
        )
