"""numpy's dispatch protocols for CudaArray: which numpy call runs which CUDA code.

- NEP 13, `__array_ufunc__`: `np.exp(x)`, `np.add(a, b, out=a)`, and so every operator (`a + b`
  calls np.add), `np.add.at`, `np.maximum.reduce`, `np.matmul`.
- NEP 18, `__array_function__`: `np.sum`, `np.where`, `np.concatenate`, ... (the FUNCTIONS table).

The ops in autograd_lab/ops are written with these numpy calls only, so they run unchanged on a
CudaArray. A numpy function not in the table raises NotImplementedError naming it: a silent copy
to the host and back would hide exactly the slowness a GPU backend exists to avoid.

Before anything runs, the operands must be on one device. A numpy array of more than one element
next to a CudaArray is refused, as PyTorch refuses tensors on two devices; Python numbers and 0-d
(or one-element) numpy arrays are fine: their value travels with the kernel launch.
"""

import numpy as np

from . import elementwise, indexing, matmul, reductions, scans, shapes
from .device_array import DeviceArray

_SCALARS = (int, float, bool, np.generic)


def check_same_device(values):
    for value in values:
        if isinstance(value, np.ndarray) and value.size > 1:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"cuda:0 and cpu! (a CUDA array met a numpy array of shape {value.shape} in one "
                "operation.) Fix: move one with .to('cuda') / .cpu() so that both are on the "
                "same device."
            )


def _leaves(values):
    """Every array-like inside the arguments (numpy functions take lists of arrays too)."""
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _leaves(value)
        else:
            yield value


def array_ufunc(ufunc, method, inputs, kwargs):
    out = kwargs.pop("out", None)
    out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if method == "at" and ufunc is np.add:  # np.add.at(x, index, values): index may be on the host
        check_same_device(inputs[2:])
        return indexing.add_at(*inputs)
    if not all(isinstance(v, (DeviceArray, np.ndarray, list, *_SCALARS)) for v in inputs):
        return NotImplemented  # e.g. a Tensor: let its own operator handle it
    inputs = tuple(np.asarray(v) if isinstance(v, list) else v for v in inputs)
    check_same_device([*inputs, out])
    name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    if method == "__call__" and ufunc is np.matmul:
        _no_options(name, kwargs)
        return matmul.matmul(*inputs, out=out)
    if method == "__call__":
        dtype, casting = kwargs.pop("dtype", None), kwargs.pop("casting", "same_kind")
        _no_options(name, kwargs)
        return elementwise.call(ufunc, inputs, out=out, dtype=dtype, casting=casting)
    if method == "reduce" and ufunc.__name__ in REDUCING_UFUNCS:
        axis, keepdims = kwargs.pop("axis", 0), kwargs.pop("keepdims", False)
        dtype = kwargs.pop("dtype", None)
        _no_options(name, kwargs)
        return reductions.reduce(ufunc.__name__, inputs[0], axis, keepdims, dtype, out)
    raise NotImplementedError(_not_implemented(name))


REDUCING_UFUNCS = ("add", "multiply", "maximum", "minimum", "logical_or", "logical_and")


def _not_implemented(name):
    return (
        f"{name} is not implemented on the CUDA backend (autograd_lab.backend.cuda). Fix: use "
        "an operation it supports, or move the data to the CPU first with .cpu()."
    )


def _no_options(name, kwargs):
    """Refuse the options we do not implement (where=, order=, initial=, ...) by name."""
    used = {k: v for k, v in kwargs.items() if v is not None and k not in ("order", "subok")}
    if used:
        raise NotImplementedError(_not_implemented(f"{name} with {', '.join(sorted(used))}="))


def array_function(func, types, args, kwargs):
    implementation = FUNCTIONS.get(func)
    if implementation is None:
        raise NotImplementedError(_not_implemented(f"numpy.{func.__name__}"))
    if not all(issubclass(t, (DeviceArray, np.ndarray)) for t in types):
        return NotImplemented
    check_same_device(_leaves([*args, *kwargs.values()]))
    return implementation(*args, **kwargs)


FUNCTIONS = {}


def implements(*numpy_functions):
    def register(implementation):
        for function in numpy_functions:
            FUNCTIONS[function] = implementation
        return implementation

    return register


# ---- reductions --------------------------------------------------------------------------------


def _reduction(ufunc_name):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, **options):
        _no_options(f"numpy reduction {ufunc_name}", options)
        return reductions.reduce(ufunc_name, a, axis, keepdims, dtype, out)

    return reduce


implements(np.sum)(_reduction("add"))
implements(np.prod)(_reduction("multiply"))


@implements(np.any)
def _any(a, axis=None, out=None, keepdims=False):
    return _reduction("logical_or")(a, axis, None, out, keepdims)


@implements(np.all)
def _all(a, axis=None, out=None, keepdims=False):
    return _reduction("logical_and")(a, axis, None, out, keepdims)


@implements(np.max, np.amax)
def _max(a, axis=None, out=None, keepdims=False, **options):
    return _reduction("maximum")(a, axis, None, out, keepdims, **options)


@implements(np.min, np.amin)
def _min(a, axis=None, out=None, keepdims=False, **options):
    return _reduction("minimum")(a, axis, None, out, keepdims, **options)


@implements(np.mean)
def _mean(a, axis=None, dtype=None, out=None, keepdims=False):
    return _maybe_out(reductions.mean(a, axis, dtype, keepdims), out)


@implements(np.var)
def _var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _maybe_out(reductions.var(a, axis, dtype, ddof, keepdims), out)


@implements(np.std)
def _std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _maybe_out(reductions.std(a, axis, dtype, ddof, keepdims), out)


@implements(np.argmax)
def _argmax(a, axis=None, out=None, keepdims=False):
    return _maybe_out(reductions.arg_reduce("argmax", a, axis, keepdims), out)


@implements(np.argmin)
def _argmin(a, axis=None, out=None, keepdims=False):
    return _maybe_out(reductions.arg_reduce("argmin", a, axis, keepdims), out)


@implements(np.cumsum)
def _cumsum(a, axis=None, dtype=None, out=None):
    return scans.scan("add", a, axis, dtype, out)


@implements(np.cumprod)
def _cumprod(a, axis=None, dtype=None, out=None):
    return scans.scan("multiply", a, axis, dtype, out)


def _maybe_out(result, out):
    return result if out is None else elementwise.assign(out, result)


# ---- elementwise functions that are not ufuncs ----------------------------------------------------


@implements(np.where)
def _where(condition, x=None, y=None):
    if x is None and y is None:
        return indexing.nonzero(condition)
    return elementwise.where(condition, x, y)


@implements(np.clip)
def _clip(a, a_min=None, a_max=None, out=None, **bounds):
    a_min, a_max = bounds.pop("min", a_min), bounds.pop("max", a_max)
    _no_options("numpy.clip", bounds)
    result = a if a_min is None else np.maximum(a, a_min)
    result = result if a_max is None else np.minimum(result, a_max)
    return _maybe_out(result if result is not a else a.copy(), out)


@implements(np.isclose)
def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy's formula: |a - b| <= atol + rtol * |b| for finite b, or a == b (infinities)."""
    close = (abs(a - b) <= atol + rtol * abs(b)) & np.isfinite(b) | (a == b)
    return close | (np.isnan(a) & np.isnan(b)) if equal_nan else close


@implements(np.allclose)
def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_isclose(a, b, rtol, atol, equal_nan).all())  # a bool on the host: one copy


@implements(np.nonzero)
def _nonzero(a):
    return indexing.nonzero(a)


# ---- shapes and indexing ------------------------------------------------------------------------


@implements(np.reshape)
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    return shapes.reshape(a, newshape if shape is None else shape, copy)


implements(np.transpose)(lambda a, axes=None: shapes.transpose(a, axes))
implements(np.swapaxes)(shapes.swapaxes)
implements(np.squeeze)(shapes.squeeze)
implements(np.diagonal)(shapes.diagonal)
implements(np.expand_dims)(shapes.expand_dims)
implements(np.broadcast_to)(lambda array, shape, subok=False: shapes.broadcast_to(array, shape))
implements(np.ravel)(lambda a, order="C": shapes.reshape(a, -1))
implements(np.concatenate)(shapes.concatenate)
implements(np.stack)(lambda arrays, axis=0, out=None: _maybe_out(shapes.stack(arrays, axis), out))
implements(np.split)(
    lambda ary, indices_or_sections, axis=0: shapes.split(ary, indices_or_sections, axis)
)


@implements(np.array_split)
def _array_split(ary, indices_or_sections, axis=0):
    return shapes.split(ary, indices_or_sections, axis, equal=False)


implements(np.take_along_axis)(
    lambda arr, indices, axis: indexing.take_along_axis(arr, indices, axis)
)


@implements(np.take)
def _take(a, indices, axis=None, out=None, mode="raise"):
    return _maybe_out(indexing.take(a, indices, axis), out)


implements(np.put)(lambda a, ind, v, mode="raise": indexing.put(a, ind, v))
implements(np.put_along_axis)(indexing.put_along_axis)
implements(np.copy)(lambda a, order="K", subok=False: a.copy())


@implements(np.ascontiguousarray)
def _ascontiguousarray(a, dtype=None):
    if dtype is not None and np.dtype(dtype) != a.dtype:
        return elementwise.astype(a, dtype)  # a new, contiguous array
    return a if a.is_c_contiguous() else a.copy()


implements(np.shape)(lambda a: a.shape)
implements(np.ndim)(lambda a: a.ndim)
implements(np.size)(lambda a, axis=None: a.size if axis is None else a.shape[axis])


@implements(np.may_share_memory, np.shares_memory)
def _share_memory(a, b, max_work=None):
    """Conservative, as np.may_share_memory: the same buffer counts as sharing."""
    return isinstance(a, DeviceArray) and isinstance(b, DeviceArray) and a.buffer is b.buffer


# ---- new arrays shaped like another -------------------------------------------------------------


def _like(value):
    def like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        shape, dtype = a.shape if shape is None else shape, a.dtype if dtype is None else dtype
        return type(a).full(shape, value, dtype)

    return like


implements(np.zeros_like)(_like(0))
implements(np.ones_like)(_like(1))


@implements(np.empty_like)
def _empty_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return type(a).empty(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


@implements(np.full_like)
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, dtype = a.shape if shape is None else shape, a.dtype if dtype is None else dtype
    return type(a).full(shape, fill_value, dtype)


# ---- questions about dtypes (no device work) -------------------------------------------------------


def _dtypes(values):
    return [v.dtype if isinstance(v, DeviceArray) else v for v in values]


implements(np.result_type)(lambda *arrays_and_dtypes: np.result_type(*_dtypes(arrays_and_dtypes)))
implements(np.can_cast)(
    lambda from_, to, casting="safe": np.can_cast(*_dtypes([from_]), to, casting=casting)
)
