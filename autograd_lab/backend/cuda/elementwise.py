"""Elementwise operations on CudaArrays: numpy's rules decided on the host, kernels.py on the GPU.

For `np.add(a, b)`, numpy itself is asked which loop it would run (`ufunc.resolve_dtypes`), so
type promotion is numpy's own. Then: an operand of another dtype is converted (a kernel); a Python
number becomes a 0-d device array filled by a kernel (the number travels with the launch, no
copy); and broadcasting is done with strides: a broadcast dim gets stride 0, so no operand is ever
expanded in memory.

    >>> a = from_numpy(np.ones((2, 3), np.float32))
    >>> call(np.add, (a, 2)).to_numpy()          # what `a + 2` and `np.add(a, 2)` run
    array([[3., 3., 3.],
           [3., 3., 3.]], dtype=float32)
"""

import numpy as np

from . import kernels
from .array import CudaArray, check_dtype, empty, full
from .launch import launch_over

_constants = {}  # (dtype, value) -> a 0-d CudaArray: numbers like 0, 1, 0.5 recur in every graph


def broadcast_strides(x, shape):
    """Element strides that make x look like an array of `shape`: 0 along broadcast dims."""
    lead = len(shape) - x.ndim
    strides = [0] * lead
    for size, n, stride in zip(shape[lead:], x.shape, x.element_strides):
        strides.append(stride if n == size else 0)
    return tuple(strides)


def operand_args(x, shape):
    """(buffer, offset, strides) of x seen as `shape`, the way every kernel takes an operand.

    A 0-d shape is passed as (1,): numba cannot index an empty tuple.
    """
    return x.buffer, x.offset, broadcast_strides(x, shape) or (0,)


def broadcasts_to(shape, target):
    """Can an array of `shape` be broadcast to `target` (without changing target)?"""
    pairs = zip(reversed(shape), reversed(target))
    return len(shape) <= len(target) and all(n in (1, t) for n, t in pairs)


def constant(value, dtype, shape=()):
    """A device array holding one number (cached when 0-d: constants recur)."""
    dtype = check_dtype(dtype)
    key = (dtype.char, repr(value))  # repr tells 0.0 from -0.0, and nan equals nan
    if shape == () and key in _constants:
        return _constants[key]
    array = full(shape, value, dtype)
    if shape == ():
        if len(_constants) > 512:
            _constants.clear()
        _constants[key] = array
    return array


def dtype_for_numpy(value):
    """What numpy's type resolution should see for an operand: Python numbers stay weak."""
    if isinstance(value, CudaArray) or isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    if isinstance(value, bool):
        return np.dtype(bool)
    return type(value)  # int or float: "weak", they take the array's dtype (NEP 50)


def weak(value):
    """For np.result_type: a CudaArray's dtype; a Python number as itself (so it stays weak)."""
    return value.dtype if isinstance(value, CudaArray) else value


def on_device(value, dtype):
    """`value` as a CudaArray of `dtype`: converted by a kernel, or made on the device."""
    if isinstance(value, CudaArray):
        return value if value.dtype == dtype else astype(value, dtype)
    shape = np.shape(value)
    return constant(np.asarray(value).item(), dtype, shape)


def call(ufunc, inputs, out=None, dtype=None, casting="same_kind"):
    """`ufunc(*inputs, out=out, dtype=dtype, casting=casting)` for one- and two-input ufuncs."""
    name = ufunc.__name__
    if name == "invert" and dtype_for_numpy(inputs[0]) == np.bool_:
        name = "logical_not"  # ~ of bools is "not", as in numpy
    table = kernels.MAP_KERNELS if ufunc.nin == 1 else kernels.ZIP_KERNELS
    if name not in table or ufunc.nout != 1 or name in ("copy", "not_zero"):
        raise NotImplementedError(
            f"numpy.{name} is not implemented on the CUDA backend (autograd_lab.backend.cuda). "
            "Fix: use another operation, or move the data to the CPU with .cpu()."
        )
    options = {} if dtype is None else {"signature": (None,) * ufunc.nin + (np.dtype(dtype),)}
    loop = ufunc.resolve_dtypes(tuple(dtype_for_numpy(v) for v in inputs) + (None,), **options)
    operands = [on_device(v, d) for v, d in zip(inputs, loop)]
    shape = np.broadcast_shapes(*(x.shape for x in operands))
    out = _output(out, shape, loop[-1], name, casting)
    operands = [_without_overlap(x, out) for x in operands]
    args = [arg for x in [out, *operands] for arg in operand_args(x, out.shape)]
    launch_over(table[name], out.size, out.shape or (1,), *args)
    return out


def _output(out, shape, dtype, name, casting):
    if out is None:
        return empty(shape, dtype)
    if not isinstance(out, CudaArray):
        raise TypeError(f"out= of a CUDA {name} must be a CudaArray, got {type(out).__name__}")
    if not broadcasts_to(shape, out.shape):
        raise ValueError(
            f"non-broadcastable output operand with shape {out.shape} doesn't match the "
            f"broadcast shape {shape}"
        )
    if not np.can_cast(dtype, out.dtype, casting=casting):
        raise TypeError(
            f"Cannot cast ufunc '{name}' output from {dtype!r} to {out.dtype!r} with casting "
            f"rule '{casting}'"
        )
    if not out.writeable:
        raise ValueError("output array is read-only")
    return out


def _without_overlap(x, out):
    """An input that shares memory with `out` in another layout is copied first: a thread could
    otherwise overwrite an element another thread has yet to read (numpy does the same)."""
    same_layout = (x.offset, broadcast_strides(x, out.shape)) == (out.offset, out.element_strides)
    return copy(x) if x.buffer is out.buffer and not same_layout else x


def map_into(name, x, out):
    """out[...] = kernels.<name>(x[...]), x broadcast to out's shape."""
    args = (*operand_args(out, out.shape), *operand_args(x, out.shape))
    launch_over(kernels.MAP_KERNELS[name], out.size, out.shape or (1,), *args)
    return out


def astype(x, dtype):
    """A converted copy; to bool means "not zero", as in numpy."""
    dtype = check_dtype(dtype)
    kind = "not_zero" if dtype == np.bool_ and x.dtype != np.bool_ else "copy"
    return map_into(kind, x, empty(x.shape, dtype))


def copy(x):
    """A contiguous copy (how a strided view is made contiguous)."""
    return map_into("copy", x, empty(x.shape, x.dtype))


def assign(out, value):
    """out[...] = value, broadcast and converted to out's dtype (numpy's `out[...] = value`)."""
    if not out.writeable:
        raise ValueError("assignment destination is read-only")
    if not isinstance(value, CudaArray):
        if np.ndim(value) == 0:
            return fill(out, np.asarray(value).item())
        value = on_device(value, out.dtype)
    if not broadcasts_to(value.shape, out.shape):
        raise ValueError(
            f"could not broadcast input array from shape {value.shape} into shape {out.shape}"
        )
    kind = "not_zero" if out.dtype == np.bool_ and value.dtype != np.bool_ else "copy"
    return map_into(kind, _without_overlap(value, out), out)


def fill(out, value):
    """Every element of out (any strided view) becomes `value`; no host copy."""
    if not out.writeable:
        raise ValueError("assignment destination is read-only")
    value = bool(value) if out.dtype == np.bool_ else value
    args = (out.shape or (1,), *operand_args(out, out.shape), out.dtype.type(value))
    launch_over(kernels.fill_kernel, out.size, *args)
    return out


def arange(out, start, step):
    """out[i] = start + i * step, for a new contiguous `out`."""
    kind = np.float64 if out.dtype.kind == "f" else np.int64  # numpy steps in double precision
    launch_over(kernels.arange_kernel, out.size, out.buffer, kind(start), kind(step))
    return out


def where(condition, a, b):
    """numpy's three-argument where: the result dtype is numpy's result_type of a and b."""
    dtype = np.result_type(weak(a), weak(b))
    condition = on_device(condition, np.bool_)
    a, b = on_device(a, dtype), on_device(b, dtype)
    shape = np.broadcast_shapes(condition.shape, a.shape, b.shape)
    out = empty(shape, dtype)
    args = [arg for x in (out, condition, a, b) for arg in operand_args(x, shape)]
    launch_over(kernels.where_kernel, out.size, shape or (1,), *args)
    return out
