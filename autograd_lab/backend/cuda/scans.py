"""Scans of device arrays: numpy's cumsum and cumprod along one axis.

The array is seen as rows along the scanned axis (as softmax sees it, reductions.py). One thread
walks one row from start to end, keeping the running total: the simplest scan there is. Rows are
independent, so there is one thread per row and many rows run at once; a single very long row
would want a parallel prefix scan (Blelloch's), which this readable version does not attempt.

    >>> scan("add", from_numpy(np.array([[1, 2, 3], [4, 5, 6]])), axis=1).to_numpy()
    array([[ 1,  3,  6],
           [ 4,  9, 15]])
"""

import functools

import numpy as np
from numba import cuda

from . import elementwise, launch
from .kernels import position
from .reductions import _split
from .scalar_functions import add, multiply
from .shapes import normalize_axes, reshape

COMBINE = {"add": add, "multiply": multiply}


@functools.cache
def scan_kernel(combine_name):
    """out[row, k] = x[row, 0] (combine) x[row, 1] (combine) ... x[row, k], one thread a row."""
    combine = COMBINE[combine_name]

    def scan(n_rows, kept_shape, x, x_offset, x_kept, x_step, out, out_kept, out_step, n):
        for row in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
            x_base = position(row, kept_shape, x_kept, x_offset)
            out_base = position(row, kept_shape, out_kept, 0)
            total = x[x_base]
            out[out_base] = total
            for k in range(1, n):
                total = combine(total, x[x_base + k * x_step])
                out[out_base + k * out_step] = total

    return cuda.jit(scan)


def scan(name, x, axis=None, dtype=None, out=None):
    """np.cumsum (name "add") or np.cumprod ("multiply"): axis None scans the flattened array;
    the result dtype is numpy's (small integers accumulate as int64)."""
    if axis is None:
        return scan(name, reshape(x, -1), 0, dtype, out)
    (axis,) = normalize_axes(axis, x.ndim)
    numpy_scan = np.cumsum if name == "add" else np.cumprod
    result_dtype = numpy_scan(np.zeros(1, x.dtype), dtype=dtype).dtype  # numpy decides
    if x.dtype != result_dtype:
        x = elementwise.astype(x, result_dtype)
    result = type(x).empty(x.shape, result_dtype)
    if result.size:
        kept_shape, x_kept, _, _ = _split(x, (axis,))
        _, out_kept, _, _ = _split(result, (axis,))
        x_args = (x.buffer, x.offset, x_kept, x.element_strides[axis])
        out_args = (result.buffer, out_kept, result.element_strides[axis])
        n_rows = result.size // x.shape[axis]
        launch.launch_over(scan_kernel(name), n_rows, kept_shape, *x_args, *out_args, x.shape[axis])
    return result if out is None else elementwise.assign(out, result)
