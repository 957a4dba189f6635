"""Array backends: where the arithmetic of a tensor actually runs.

The ops (`autograd_lab/ops/`) are written once, with numpy calls. On the CPU those calls run numpy
itself: numpy *defines* the semantics. On the GPU a tensor's storage is a `CudaArray`
(`backend/cuda/`), which answers the same numpy calls with CUDA kernels through numpy's dispatch
protocols (`__array_ufunc__`, `__array_function__`), and is tested against numpy op by op.

    >>> import numpy as np
    >>> from autograd_lab import backend
    >>> backend.is_cuda_array(np.zeros(3))
    False

`backend/cpu_random.py` is random.py's generator compiled with numba (random.py loads it on the
first large draw). Importing this package imports no numba: `backend.cuda` loads numba the first
time it is used.
"""

import sys


def is_cuda_array(value):
    """True for a CudaArray; never imports numba (no CudaArray can exist before it is loaded)."""
    module = sys.modules.get("autograd_lab.backend.cuda.array")
    return module is not None and isinstance(value, module.CudaArray)


def contiguous_strides(shape):
    """Element strides of a row-major (C-order) array: the last dim varies fastest. A dim of size
    0 or 1 gets the product of the sizes to its right (a 0 counted as 1), as in PyTorch."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))
