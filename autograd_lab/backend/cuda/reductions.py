"""Reductions of device arrays (sum, mean, max, argmax, any, var, ...) and the fused softmax.

numpy's rules: `axis` is None, an int or a tuple (negative allowed), `keepdims` keeps reduced
dims as size 1, and the result dtype is the one numpy gives (summing bools or int32 gives int64,
the mean of integers is float64). The work is done by reduce_kernels.py.

    >>> x = from_numpy(np.arange(6).reshape(2, 3))
    >>> reduce("add", x, axis=1).to_numpy()
    array([ 3, 12])
"""

import numpy as np

from . import elementwise, launch, shapes
from .device_array import DeviceArray
from .reduce_kernels import arg_reduce_kernel, reduce_kernel, softmax_kernel
from .shapes import normalize_axes


def _split(x, axes):
    """x seen as (kept dims) x (reduced dims): shapes and strides of both, each at least 1-D."""
    kept = [d for d in range(x.ndim) if d not in axes]
    kept_shape = tuple(x.shape[d] for d in kept) or (1,)
    kept_strides = tuple(x.element_strides[d] for d in kept) or (0,)
    red_shape = tuple(x.shape[d] for d in axes) or (1,)
    red_strides = tuple(x.element_strides[d] for d in axes) or (0,)
    return kept_shape, kept_strides, red_shape, red_strides


def _result_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _identity(name, dtype):
    if name == "add":
        return dtype.type(0)
    if name == "multiply":
        return dtype.type(1)
    low = name == "maximum"  # the identity of max is the lowest value there is
    if dtype.kind == "f":
        return dtype.type(-np.inf if low else np.inf)
    if dtype.kind == "b":
        return dtype.type(not low)
    info = np.iinfo(dtype)
    return dtype.type(info.min if low else info.max)


def _parts(n_out, n_red, threads):
    """Blocks per output: more than one (then a second pass) only for few, long rows on a GPU."""
    if launch.SIMULATOR or n_out >= 1024 or n_red <= 4 * threads:
        return 1
    return min(-(-1024 // n_out), -(-n_red // (4 * threads)))


def reduce(name, x, axis=None, keepdims=False, dtype=None, out=None, parts=None):
    """np.<name>.reduce for name in add, multiply, maximum, minimum, logical_or, logical_and."""
    axes = normalize_axes(axis, x.ndim)
    if name in ("logical_or", "logical_and"):  # any/all: max/min of the truth values
        x = x if x.dtype == np.bool_ else elementwise.astype(x, np.bool_)
        name, result_dtype = ("maximum" if name == "logical_or" else "minimum"), np.dtype(bool)
    elif name in ("maximum", "minimum"):
        result_dtype = x.dtype if dtype is None else np.dtype(dtype)
    else:  # numpy says which dtype a sum or product has
        result_dtype = getattr(np, name).reduce(np.zeros(1, x.dtype), dtype=dtype).dtype
    kept_shape, kept_strides, red_shape, red_strides = _split(x, axes)
    n_red = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    shape = _result_shape(x.shape, axes, keepdims)
    if n_red == 0 and name in ("maximum", "minimum"):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    n_out = int(np.prod(shape, dtype=np.int64))
    result = type(x).empty(shape, result_dtype)
    if n_out:
        threads = launch.REDUCE_THREADS
        parts = _parts(n_out, n_red, threads) if parts is None else parts
        target = result if parts == 1 else type(x).empty((n_out * parts,), result_dtype)
        kernel = reduce_kernel(name, result_dtype, threads)
        identity = _identity(name, result_dtype)
        args = (x.buffer, x.offset, kept_shape, kept_strides, red_shape, red_strides, n_out, n_red)
        blocks = launch.blocks_for(n_out * parts, 1)
        launch.launch(kernel, blocks, threads, *args, parts, identity, target.buffer)
        if parts > 1:  # second pass: combine each output's partial results
            args = (target.buffer, 0, (n_out,), (parts,), (parts,), (1,), n_out, parts, 1)
            blocks = launch.blocks_for(n_out, 1)
            launch.launch(kernel, blocks, threads, *args, identity, result.buffer)
    if out is not None:
        return elementwise.assign(out, result)
    return result


def mean(x, axis=None, dtype=None, keepdims=False):
    dtype = np.mean(np.zeros(1, x.dtype), dtype=dtype).dtype
    axes = normalize_axes(axis, x.ndim)
    count = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    total = reduce("add", x, axes, keepdims, dtype)
    return elementwise.call(np.divide, (total, count), out=total)  # 0 elements: 0/0 = nan


def var(x, axis=None, dtype=None, ddof=0, keepdims=False):
    """The mean squared distance from the mean, over n - ddof (numpy's two-pass formula)."""
    axes = normalize_axes(axis, x.ndim)
    count = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    centered = elementwise.call(np.subtract, (x, mean(x, axes, dtype, keepdims=True)))
    squares = elementwise.call(np.multiply, (centered, centered))
    total = reduce("add", squares, axes, keepdims)
    return elementwise.call(np.divide, (total, max(count - ddof, 0)), out=total)


def std(x, axis=None, dtype=None, ddof=0, keepdims=False):
    variance = var(x, axis, dtype, ddof, keepdims)
    return elementwise.call(np.sqrt, (variance,), out=variance)


def arg_reduce(name, x, axis=None, keepdims=False):
    """argmax/argmin along one axis (None: of the flattened array), as int64 indices."""
    if axis is None:
        result = arg_reduce(name, shapes.reshape(x, -1), 0)
        return shapes.reshape(result, (1,) * x.ndim) if keepdims else result
    (axis,) = normalize_axes(axis, x.ndim)
    if x.shape[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    shape = _result_shape(x.shape, (axis,), keepdims)
    result = type(x).empty(shape, np.int64)
    n_out = result.size
    if n_out:
        threads = launch.REDUCE_THREADS
        args = (x.buffer, x.offset, *_split(x, (axis,)), n_out, x.shape[axis], result.buffer)
        kernel = arg_reduce_kernel(name, x.dtype, threads)
        launch.launch(kernel, launch.blocks_for(n_out, 1), threads, *args)
    return result


def softmax(x, axis=-1, log=False):
    """softmax (or log_softmax) of x along `axis` in one kernel; a new contiguous array.

    >>> softmax(from_numpy(np.zeros((1, 4))), axis=1).to_numpy()
    array([[0.25, 0.25, 0.25, 0.25]])
    """
    if not isinstance(x, DeviceArray) or x.dtype.kind != "f":
        raise TypeError("softmax on the CUDA backend needs a float32 or float64 CudaArray")
    if x.ndim == 0:  # one element: as a 1-D array of one (axis 0 and -1 are allowed, as in numpy)
        normalize_axes(axis, 1)
        return shapes.reshape(softmax(shapes.reshape(x, 1), 0, log), ())
    (axis,) = normalize_axes(axis, x.ndim)
    out = type(x).empty(x.shape, x.dtype)
    if not out.size:
        return out
    kept_shape, x_kept, _, _ = _split(x, (axis,))
    _, out_kept, _, _ = _split(out, (axis,))
    n_rows = out.size // x.shape[axis]
    threads = launch.REDUCE_THREADS
    x_args = (x.buffer, x.offset, x_kept, x.element_strides[axis])
    out_args = (out.buffer, out_kept, out.element_strides[axis])
    args = (*x_args, *out_args, kept_shape, n_rows, x.shape[axis], x.dtype.type(0))
    kernel = softmax_kernel(x.dtype, threads, log)
    launch.launch(kernel, launch.blocks_for(n_rows, 1), threads, *args)
    return out
