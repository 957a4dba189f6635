"""Elementwise operations on device arrays: numpy's rules on the host, kernels.py on the GPU.

For `np.add(a, b)`, numpy itself is asked which loop it would run (`ufunc.resolve_dtypes`), so
type promotion is numpy's own. Then: an operand of another dtype is converted (a kernel); a Python
number becomes a 0-d device array filled by a kernel (the number travels with the launch, no
copy); and broadcasting is done with strides: a broadcast dim gets stride 0, so no operand is ever
expanded in memory. A new array (result or constant) has the class of the device array among
the operands (`class_of`, device_array.py): a CudaArray, when numpy's dispatch brought us here.

    >>> a = from_numpy(np.ones((2, 3), np.float32))
    >>> call(np.add, (a, 2)).to_numpy()          # what `a + 2` and `np.add(a, 2)` run
    array([[3., 3., 3.],
           [3., 3., 3.]], dtype=float32)
"""

import numpy as np

from . import kernels
from .device_array import DeviceArray, check_dtype, class_of
from .launch import launch_over

_constants = {}  # (class, dtype, value) -> a 0-d array: numbers like 0, 1, 0.5 recur in every graph


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


def constant(value, dtype, array_class, shape=()):
    """An `array_class` array holding one number (cached when 0-d: constants recur)."""
    dtype = check_dtype(dtype)
    key = (array_class, dtype.char, repr(value))  # repr tells 0.0 from -0.0, and nan equals nan
    if shape == () and key in _constants:
        return _constants[key]
    array = array_class.full(shape, value, dtype)
    if shape == ():
        if len(_constants) > 512:
            _constants.clear()
        _constants[key] = array
    return array


def dtype_for_numpy(value):
    """What numpy's type resolution should see for an operand: Python numbers stay weak."""
    if isinstance(value, (DeviceArray, np.ndarray, np.generic)):
        return value.dtype
    if isinstance(value, bool):
        return np.dtype(bool)
    return type(value)  # int or float: "weak", they take the array's dtype (NEP 50)


def weak(value):
    """For np.result_type: a device array's dtype; a Python number as itself (so it stays weak)."""
    return value.dtype if isinstance(value, DeviceArray) else value


def on_device(value, dtype, array_class):
    """`value` as a device array of `dtype`: converted by a kernel, or made on the device (as an
    `array_class` array)."""
    if isinstance(value, DeviceArray):
        return value if value.dtype == dtype else astype(value, dtype)
    return constant(np.asarray(value).item(), dtype, array_class, np.shape(value))


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
    array_class = class_of([*inputs, out])
    operands = [on_device(v, d, array_class) for v, d in zip(inputs, loop)]
    shape = np.broadcast_shapes(*(x.shape for x in operands))
    out = _output(out, shape, loop[-1], name, casting, array_class)
    operands = [_without_overlap(x, out) for x in operands]
    args = [arg for x in [out, *operands] for arg in operand_args(x, out.shape)]
    launch_over(table[name], out.size, out.shape or (1,), *args)
    return out


def _output(out, shape, dtype, name, casting, array_class):
    if out is None:
        return array_class.empty(shape, dtype)
    if not isinstance(out, DeviceArray):
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
    return x.copy() if x.buffer is out.buffer and not same_layout else x


def map_into(name, x, out):
    """out[...] = kernels.<name>(x[...]), x broadcast to out's shape."""
    args = (*operand_args(out, out.shape), *operand_args(x, out.shape))
    launch_over(kernels.MAP_KERNELS[name], out.size, out.shape or (1,), *args)
    return out


def astype(x, dtype):
    """A converted copy; to bool means "not zero", as in numpy."""
    dtype = check_dtype(dtype)
    kind = "not_zero" if dtype == np.bool_ and x.dtype != np.bool_ else "copy"
    return map_into(kind, x, type(x).empty(x.shape, dtype))


def assign(out, value):
    """out[...] = value, broadcast and converted to out's dtype (numpy's `out[...] = value`)."""
    if not out.writeable:
        raise ValueError("assignment destination is read-only")
    if not isinstance(value, DeviceArray):
        if np.ndim(value) == 0:
            out.fill(np.asarray(value).item())
            return out
        value = on_device(value, out.dtype, type(out))
    if not broadcasts_to(value.shape, out.shape):
        raise ValueError(
            f"could not broadcast input array from shape {value.shape} into shape {out.shape}"
        )
    kind = "not_zero" if out.dtype == np.bool_ and value.dtype != np.bool_ else "copy"
    return map_into(kind, _without_overlap(value, out), out)


def where(condition, a, b):
    """numpy's three-argument where: the result dtype is numpy's result_type of a and b."""
    dtype = np.result_type(weak(a), weak(b))
    array_class = class_of([condition, a, b])
    condition = on_device(condition, np.bool_, array_class)
    a, b = on_device(a, dtype, array_class), on_device(b, dtype, array_class)
    shape = np.broadcast_shapes(condition.shape, a.shape, b.shape)
    out = array_class.empty(shape, dtype)
    args = [arg for x in (out, condition, a, b) for arg in operand_args(x, shape)]
    launch_over(kernels.where_kernel, out.size, shape or (1,), *args)
    return out
