"""Reductions (sum, mean, max, var, ...) and the softmax family.

A reduction's result is row-major whatever its input's layout (PyTorch makes it with a plain
`empty`), and its backward spreads the output gradient back over the reduced dimensions. The helper
`_unreduce` puts back the dimensions that `keepdim=False` dropped, so the gradient broadcasts
against the input again.
"""

import warnings
from collections import namedtuple

import numpy as np

from .. import storage, types
from ..autograd.function import Op
from ..autograd.grad_mode import is_grad_enabled
from ..layout import row_major
from ..tensor import Tensor, _make
from .elementwise import Maximum, Minimum, _float, convert, silently, where
from .fast_reduce import max_array, sum_array
from .registry import public


def _dims(dim, ndim):
    """Normalize `dim` (None, an int or a tuple; negative allowed) to a sorted tuple of axes."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    bound = ndim or 1  # a 0-d tensor accepts 0 and -1 (not max(): this module's max shadows it)
    out = []
    for d in dims:
        if not -bound <= d < bound:
            raise IndexError(
                f"dimension {d} is out of range for a tensor with {ndim} dimension(s) "
                f"(valid: {-bound} to {bound - 1})"
            )
        if d % bound in out:  # PyTorch refuses sum((0, -1)) of a 1-D tensor rather than guess
            raise RuntimeError(f"dim {d % bound} appears multiple times in the list of dims")
        out.append(d % bound)
    return tuple(sorted(out)) if ndim else ()  # a 0-d tensor has nothing to reduce over


def _one_dim(dim, ndim):
    """One normalized dimension index (a 0-d tensor accepts 0 and -1)."""
    dims = _dims(dim, ndim)
    return dims[0] if dims else 0


def _unreduce(grad, shape, dims, keepdim):
    """Reshape a reduced gradient so it broadcasts against the input of `shape`."""
    if keepdim or not shape:
        return grad
    kept = [1 if i in dims else s for i, s in enumerate(shape)]
    return grad.reshape(kept)


class Sum(Op):
    node_name = "SumBackward0"
    derivative = "d sum(x)/dx_i = 1: the gradient is copied to every element"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        ctx.shape, ctx.dims, ctx.keepdim = x._data.shape, _dims(dim, x._data.ndim), keepdim
        data = x._data
        if dtype is None and data.dtype.kind in "bu":
            dtype = np.int64  # summing bools counts them, as in PyTorch
        return row_major(sum_array(data, ctx.dims, keepdim, dtype))

    @staticmethod
    def backward(ctx, grad):
        return _unreduce(grad, ctx.shape, ctx.dims, ctx.keepdim).expand(ctx.shape)


class SumDim(Sum):
    node_name = "SumBackward1"
    derivative = "1 for every summed element"


class Mean(Op):
    node_name = "MeanBackward0"
    derivative = "d mean(x)/dx_i = 1/n"

    @staticmethod
    @silently  # inf + -inf = nan, silently
    def forward(ctx, x, dim=None, keepdim=False):
        if x._data.dtype.kind != "f":
            raise RuntimeError(
                f"mean() needs a floating-point tensor, got {x.dtype}. Fix: call .float() first."
            )
        ctx.shape, ctx.dims, ctx.keepdim = x._data.shape, _dims(dim, x._data.ndim), keepdim
        ctx.count = int(np.prod([x._data.shape[d] for d in ctx.dims])) if x._data.ndim else 1
        if ctx.count == 0:  # nothing to average: nan, quietly as in PyTorch (numpy would warn)
            return row_major(np.sum(x._data, axis=ctx.dims, keepdims=keepdim) * np.nan)
        return row_major(np.mean(x._data, axis=ctx.dims, keepdims=keepdim))

    @staticmethod
    def backward(ctx, grad):
        return _unreduce(grad, ctx.shape, ctx.dims, ctx.keepdim).expand(ctx.shape) / ctx.count


class MeanDim(Mean):
    node_name = "MeanBackward1"
    derivative = "1/n for every averaged element"


class Prod(Op):
    node_name = "ProdBackward0"
    derivative = "d prod(x)/dx_i = product of the other elements"
    saved_names = ("self", "result")

    @staticmethod
    @np.errstate(invalid="ignore", over="ignore")  # 0 · inf is nan, silently, as in PyTorch
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        ctx.dims, ctx.keepdim = _dims(dim, x._data.ndim), keepdim
        data = x._data
        if dtype is None and data.dtype.kind in "biu":
            dtype = np.int64  # integers and bools multiply to int64, as in PyTorch
        result = _make(row_major(np.prod(data, axis=ctx.dims, keepdims=keepdim, dtype=dtype)))
        # the result too, as PyTorch: changing it in place then makes backward refuse
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        # d(prod)/dx_i is the product of all the *other* elements. Without zeros that is
        # prod / x_i; with a zero, dividing would give 0/0, so each product is taken explicitly.
        x, result = ctx.saved_tensors
        if x.ndim == 0:  # the product of one number is that number: slope 1, even at inf or nan
            return grad
        shape = x._data.shape
        grad = _unreduce(grad, shape, ctx.dims, ctx.keepdim)
        if not (x._data == 0).any():
            return grad * (_unreduce(result, shape, ctx.dims, ctx.keepdim) / x)
        if np.prod([shape[d] for d in ctx.dims]) == 1:  # one element per product: no others,
            return grad  # so the slope is 1, a constant (PyTorch's gradient requires no grad)
        return grad * _products_of_others(x, ctx.dims)


def _products_of_others(x, dims):
    """For each element, the product of the other elements reduced with it, in differentiable
    ops (so second derivatives are right at zeros too): the reduced dims are flattened into one
    axis of length n, copied n times with a 1 on the diagonal, and multiplied along that axis."""
    kept = [d for d in range(x.ndim) if d not in dims]
    order = kept + list(dims)
    moved = x.permute(order) if order != list(range(x.ndim)) else x
    kept_shape = [x.shape[d] for d in kept]
    n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
    flat = moved.reshape(kept_shape + [n])
    diagonal = _make(storage.new(np.eye, n, dtype=bool, device=x.device))
    others = where(diagonal, 1.0, flat.unsqueeze(-2)).prod(dim=-1)  # row i leaves out element i
    others = others.reshape(moved.shape)
    return others.permute(tuple(np.argsort(order))) if order != list(range(x.ndim)) else others


class ProdDim(Prod):
    node_name = "ProdBackward1"
    derivative = "d prod(x)/dx_i = product of the other elements"


class Var(Op):
    node_name = "VarBackward0"
    derivative = "d var(x)/dx_i = 2 (x_i - mean) / (n - 1)"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, x, dim=None, correction=1, keepdim=False):
        ctx.dims, ctx.keepdim, ctx.correction = _dims(dim, x._data.ndim), keepdim, correction
        ctx.every_dim = dim is None or x._data.ndim == 0
        ctx.save_for_backward(x)
        result = spread_in_float64("var", np.var, x._data, ctx.dims, correction, keepdim)
        return row_major(result)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return var_backward(grad, x, ctx)


class Std(Op):
    node_name = "StdBackward0"
    derivative = "d std(x)/dx_i = (x_i - mean) / ((n - 1) std)"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, x, dim=None, correction=1, keepdim=False):
        ctx.dims, ctx.keepdim, ctx.correction = _dims(dim, x._data.ndim), keepdim, correction
        ctx.every_dim = dim is None or x._data.ndim == 0
        result = spread_in_float64("std", np.std, x._data, ctx.dims, correction, keepdim)
        result = _make(row_major(result))
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        return var_backward(std_to_var_grad(grad, result), x, ctx)


def spread_in_float64(name, spread, data, dims, correction, keepdim):
    """np.var or np.std of `data` over `dims`, summed in float64 and rounded once to the result's
    dtype, as PyTorch's kernel (a running sum in double) does. numpy's float32 sums can be a last
    bit off, and a second-order gradient, whose terms cancel, magnifies that bit."""
    data = _float(data)
    wide = data if data.dtype == np.float64 else convert(data, np.float64)
    count = int(np.prod([data.shape[d] for d in dims]))
    if count - correction <= 0:  # the result is nan or inf: PyTorch says so (numpy would too)
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0: the correction ({correction}) is not smaller "
            f"than the number of elements reduced ({count}), so the result is nan or inf. Fix: "
            "reduce over more elements, or pass a smaller correction=.",
            UserWarning,
            stacklevel=6,  # the line that called var(), std(), var_mean() or std_mean()
        )
    # a float64 spread beyond float32's range: inf, no warning
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's own "degrees of freedom" note
        if name in ("var", "std") and data.dtype == np.float32 and count and data.size == count:
            # var()/std() of a float32 tensor into one number (PyTorch's std_var_all_cpu) takes
            # the mean first as mean() does, in float32, whose sum may overflow to inf (then
            # the spread is inf or nan), and the squared deviations from it in float64
            mean = np.float64(np.mean(data))
            value = np.sum((wide - mean) ** 2) / (count - correction if count > correction else 0)
            value = np.sqrt(value) if name == "std" else value
            # (every dim not reduced has size 1)
            shape = (1,) * (data.ndim if keepdim else data.ndim - len(dims))
            return value.reshape(shape).astype(data.dtype)  # (np.full would not run on CUDA)
        return spread(wide, axis=dims, ddof=correction, keepdims=keepdim).astype(data.dtype)


def std_to_var_grad(grad, std):
    """d std = d var / (2 std): the gradient std's backward hands to var's; where all values are
    equal (std 0) PyTorch takes it to be 0."""
    return where(std == 0, 0.0, grad / (std * 2))


def var_backward(grad, x, ctx):
    """The gradient of x.var(dims, correction=c), 2 (x - mean) / (n - c) times grad, as PyTorch
    writes it. With too few elements (n - c <= 0) the forward gave nan or inf; PyTorch then
    gives, when reducing every dim, nan where x equals the mean and inf elsewhere (a constant:
    it requires no grad); when reducing some dims, the formula as it stands (2/0 = inf)."""
    shape = x._data.shape
    n = int(np.prod([shape[d] for d in ctx.dims])) if shape else 1
    dof = n - ctx.correction
    if ctx.every_dim and dof <= 0:
        return grad * where(x == x.mean(), float("nan"), float("inf")).to(x.dtype)
    grad = _unreduce(grad, shape, ctx.dims, ctx.keepdim)
    scale = 2.0 / dof if dof != 0 else float("inf")
    return scale * grad * (x - x.mean(dim=ctx.dims, keepdim=True))


class MaxAll(Op):
    """max()/min() of all elements; ties share the gradient equally, as in PyTorch."""

    node_name = "MaxBackward1"
    derivative = "1 at the maximum (shared at ties), 0 elsewhere"
    saved_names = ("self", "result")
    _reduce = staticmethod(np.max)

    @staticmethod
    def forward(ctx, x):
        if x._data.size == 0:
            raise RuntimeError("max()/min() of an empty tensor has no value; give a non-empty one")
        result = _make(ctx._fn._reduce(x._data))
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        return evenly_distributed(grad, x, result)


def evenly_distributed(grad, x, result):
    """The backward of one value picked from all of x (max(), min(), median()): the gradient is
    shared evenly among the elements equal to the result; a nan result is shared among the nans
    (nan == nan is False). A select, not grad * mask, so the others get 0 even for an infinite
    gradient. PyTorch calls this evenly_distribute_backward."""
    hits = (x == result) | (x.isnan() & result.isnan())
    return where(hits, grad / hits.sum(), 0.0)


def check_reduction_dims(name, shape, dims):
    """PyTorch's IndexError for a reduction that must pick an element (max, argmax, median, ...)
    over a dim of size 0: unlike a sum (0) or a product (1), it has no value for no elements."""
    for d in dims:
        if shape[d] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {d} to have non-zero size, but it has size 0: "
                "no element to pick. Fix: reduce over a dim that has elements, or check "
                "x.numel() (or x.shape) for an empty tensor first."
            )


class MinAll(MaxAll):
    node_name = "MinBackward1"
    derivative = "1 at the minimum (shared at ties), 0 elsewhere"
    _reduce = staticmethod(np.min)


class Amax(Op):
    """amax/amin over one or several dims (all by default); ties share the gradient equally."""

    node_name = "AmaxBackward0"
    derivative = "1 at the maximum (shared at ties), 0 elsewhere"
    saved_names = ("self", "result")
    _reduce, _name = staticmethod(np.max), "amax"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        data = x._data
        name = ctx._fn._name
        if data.size == 0 and dim not in (None, ()):
            # of an empty tensor, PyTorch checks each dim for elements before any repeated dim
            dims = (dim,) if isinstance(dim, int) else dim
            check_reduction_dims(name, data.shape, [_one_dim(d, data.ndim) for d in dims])
        ctx.dims, ctx.keepdim = _dims(_all_if_empty(dim, x), data.ndim), keepdim
        if data.size == 0 and dim in (None, ()):
            raise RuntimeError(
                f"{name}() of an empty tensor has no value: a maximum or minimum of no elements is "
                "undefined. Fix: specify the reduction dim with the 'dim' argument (one that has "
                "elements), or check for empty input first."
            )
        check_reduction_dims(name, data.shape, ctx.dims)
        result = ctx._fn._reduce(data, axis=ctx.dims, keepdims=keepdim)
        result = _make(row_major(_first_of_tied_zeros(data, ctx.dims, result)))
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        shape = x._data.shape
        hits = x == _unreduce(result, shape, ctx.dims, ctx.keepdim)
        count = hits.sum(dim=ctx.dims, keepdim=True) if ctx.dims else hits
        return _unreduce(grad, shape, ctx.dims, ctx.keepdim) * hits / count


def _first_of_tied_zeros(data, dims, result):
    """Where amax/amin is a zero, the sign of the first zero among the reduced elements, as
    PyTorch's loop keeps it: 0.0 and -0.0 compare equal, so numpy may keep either, but 1/x tells
    them apart. (PyTorch's vectorized loop over a long row may keep another: README.)"""
    if type(data) is not np.ndarray or data.dtype.kind != "f" or data.ndim == 0 or not dims:
        return result
    kept = result.reshape([1 if d in dims else n for d, n in enumerate(data.shape)])
    zero = kept == 0
    if not zero.any():
        return result
    last = range(data.ndim - len(dims), data.ndim)
    rows = np.moveaxis(data, dims, last).reshape(kept.size, -1)  # each reduced slice, a row
    first = rows[np.arange(kept.size), np.argmax(rows == 0, axis=1)]  # its first zero
    return np.where(zero, first.reshape(kept.shape), kept).reshape(result.shape)


class Amin(Amax):
    node_name = "AminBackward0"
    derivative = "1 at the minimum (shared at ties), 0 elsewhere"
    _reduce, _name = staticmethod(np.min), "amin"


class values_indices(namedtuple("values_indices", ["values", "indices"])):
    """What max(dim=...) returns; it prints as PyTorch's `torch.return_types.max` does."""

    __slots__ = ()
    _op = "max"

    def __repr__(self):
        values, indices = repr(self.values), repr(self.indices)
        return f"torch.return_types.{self._op}(\nvalues={values},\nindices={indices})"


class min_values_indices(values_indices):
    __slots__ = ()
    _op = "min"


class MaxDim(Op):
    """max(dim)/min(dim): values and indices; the gradient goes to the index of each value."""

    node_name = "MaxBackward0"
    derivative = "1 at each maximum's index, 0 elsewhere"
    saved_names = ("indices",)
    _arg, _name = staticmethod(np.argmax), "max"
    result_type = values_indices

    @staticmethod
    def forward(ctx, x, dim, keepdim=False):
        axis = _one_dim(dim, x._data.ndim)
        data = x._data if x._data.ndim else x._data.reshape(1)
        check_reduction_dims(ctx._fn._name, data.shape, [axis])
        indices = np.expand_dims(ctx._fn._arg(data, axis=axis), axis)
        values = np.take_along_axis(data, indices, axis=axis)
        if not keepdim or not x._data.ndim:
            values, indices = values.squeeze(axis), indices.squeeze(axis)
        values, indices = row_major(values), _make(row_major(indices.astype(np.int64)))
        ctx.shape, ctx.axis, ctx.keepdim = x._data.shape, axis, keepdim
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return _make(values), indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        return gradient_to_indices(ctx, grad)


def gradient_to_indices(ctx, grad):
    """The backward of values picked one per row along ctx.axis (max, min, median over a dim):
    each value's gradient goes to the element at its saved index, the others get 0."""
    (indices,) = ctx.saved_tensors
    if not ctx.shape:
        return grad
    grad = _unreduce(grad, ctx.shape, (ctx.axis,), ctx.keepdim)
    index = _unreduce(indices, ctx.shape, (ctx.axis,), ctx.keepdim)
    positions = storage.new(np.arange, ctx.shape[ctx.axis], device=index.device).reshape(
        [-1 if i == ctx.axis else 1 for i in range(len(ctx.shape))]
    )
    return where(index == _make(positions), grad, 0.0)  # a select: inf * 0 would give nan


class MinDim(MaxDim):
    node_name = "MinBackward0"
    derivative = "1 at each minimum's index, 0 elsewhere"
    _arg, _name = staticmethod(np.argmin), "min"
    result_type = min_values_indices


class LogSumExp(Op):
    node_name = "LogsumexpBackward0"
    derivative = "d logsumexp(x)/dx_i = softmax(x)_i"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, x, dim, keepdim=False):
        ctx.dims, ctx.keepdim = _dims(dim, x._data.ndim), keepdim
        data = _float(x._data)
        peak = max_array(data, ctx.dims)
        peak = np.where(np.isfinite(peak), peak, 0)  # subtract the max, so exp never overflows
        with np.errstate(divide="ignore"):  # log(0) = -inf: the logsumexp of nothing, or of -infs
            out = np.log(sum_array(np.exp(data - peak), ctx.dims, True)) + peak
        result = _make(row_major(out if keepdim else np.squeeze(out, axis=ctx.dims)))
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        grad = _unreduce(grad, x._data.shape, ctx.dims, ctx.keepdim)
        result = _unreduce(result, x._data.shape, ctx.dims, ctx.keepdim)
        return grad * (x - result).exp()


class Softmax(Op):
    node_name = "SoftmaxBackward0"
    derivative = "y * (grad - sum(grad * y)),  y = softmax(x)"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = _dims(dim, x._data.ndim)
        data = _float(x._data)
        with np.errstate(invalid="ignore"):  # an inf in the row: inf - inf = nan, silently
            shifted = np.exp(data - max_array(data, ctx.dim))
            result = _make(row_major(shifted / sum_array(shifted, ctx.dim, True)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * (grad - (grad * y).sum(dim=ctx.dim, keepdim=True))


class LogSoftmax(Op):
    node_name = "LogSoftmaxBackward0"
    derivative = "grad - softmax(x) * sum(grad)"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = _dims(dim, x._data.ndim)
        data = _float(x._data)
        with np.errstate(divide="ignore", invalid="ignore"):  # an inf in the row: nan, silently
            shifted = data - max_array(data, ctx.dim)
            result = _make(row_major(shifted - np.log(sum_array(np.exp(shifted), ctx.dim, True))))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad - y.exp() * grad.sum(dim=ctx.dim, keepdim=True)


# ---- the public functions ---------------------------------------------------------------------------


@public("sum", method=True)
def sum(input, dim=None, keepdim=False, *, dtype=None):
    dim = _all_if_empty(dim, input)
    if dim is not None:
        _dims(dim, input.ndim)  # a bad dim is an IndexError before any dtype complaint
    if dtype is not None:
        dtype = types.to_dtype(dtype)
        types.check_differentiable(dtype, input.requires_grad and is_grad_enabled())
        dtype = dtype.numpy
    return (Sum if dim is None else SumDim).apply(input, dim=dim, keepdim=keepdim, dtype=dtype)


def _all_if_empty(dim, input):
    """dim=() (or []) means every dim in PyTorch's reductions, not none of them."""
    if dim is not None and not isinstance(dim, int) and len(dim) == 0:
        return tuple(range(input.ndim))
    return dim


@public("mean", method=True)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    dim = _all_if_empty(dim, input)
    if dtype is not None:  # the mean of an int tensor in a float dtype: converted first
        dtype = types.to_dtype(dtype)
        if not dtype.is_floating_point:
            raise RuntimeError(
                "mean(): could not infer output dtype. Optional dtype must be either a floating "
                f"point or complex dtype, got {dtype}. Fix: dtype=torch.float32 (or leave it out)."
            )
        input = input.to(dtype)
    return (Mean if dim is None else MeanDim).apply(input, dim=dim, keepdim=keepdim)


@public("prod", method=True)
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """The product of all elements, or along one dim. Unlike sum, PyTorch's prod takes a single
    int dim only (no tuple of dims)."""
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
        raise TypeError(
            f"prod() received an invalid combination of arguments: dim must be a single int, got "
            f"{type(dim).__name__}. Fix: reduce one dim at a time, e.g. x.prod(0).prod(0), or "
            "flatten first: x.flatten(0, 1).prod(0)."
        )
    if dim is not None:
        _dims(dim, input.ndim)  # a bad dim is an IndexError before any dtype complaint
    if dtype is not None:
        dtype = types.to_dtype(dtype)
        types.check_differentiable(dtype, input.requires_grad and is_grad_enabled())
        dtype = dtype.numpy
    return (Prod if dim is None else ProdDim).apply(input, dim=dim, keepdim=keepdim, dtype=dtype)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def spread_needs_floating_point(name, input):
    """var and std (and var_mean, std_mean) measure spread in fractions of the values' unit:
    PyTorch computes them for floating-point tensors only, and says so with a RuntimeError."""
    if not input.is_floating_point():
        raise RuntimeError(
            f"{name} only support floating point and complex dtypes, got {input.dtype}. Fix: "
            "convert first, e.g. x.float()."
        )


@public("var", method=True)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    spread_needs_floating_point("std and var", input)
    dim = _all_if_empty(dim, input)
    return Var.apply(input, dim=dim, correction=_correction(unbiased, correction), keepdim=keepdim)


@public("std", method=True)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    spread_needs_floating_point("std and var", input)
    dim = _all_if_empty(dim, input)
    return Std.apply(input, dim=dim, correction=_correction(unbiased, correction), keepdim=keepdim)


def _max_or_min(input, dim, keepdim, other, all_fn, dim_fn, pair_fn):
    if isinstance(dim, Tensor):  # max(a, b) is the elementwise maximum
        return pair_fn(input, dim)
    if other is not None:
        return pair_fn(input, other)
    if dim is None:
        return all_fn.apply(input)
    return dim_fn.result_type(*dim_fn.apply(input, dim=dim, keepdim=keepdim))


@public("max", method=True)
def max(input, dim=None, keepdim=False, *, other=None):
    return _max_or_min(input, dim, keepdim, other, MaxAll, MaxDim, Maximum.apply)


@public("min", method=True)
def min(input, dim=None, keepdim=False, *, other=None):
    return _max_or_min(input, dim, keepdim, other, MinAll, MinDim, Minimum.apply)


@public("amax", method=True, out=True)
def amax(input, dim=(), keepdim=False):
    """The largest value over `dim` (an int or a tuple; all dims by default), without indices."""
    return Amax.apply(input, dim=dim, keepdim=keepdim)


@public("amin", method=True, out=True)
def amin(input, dim=(), keepdim=False):
    """The smallest value over `dim` (an int or a tuple; all dims by default), without indices."""
    return Amin.apply(input, dim=dim, keepdim=keepdim)


def _arg(fn, input, dim, keepdim):
    data = input._data
    name = fn.__name__  # argmax or argmin
    if data.dtype == np.bool_:  # PyTorch refuses, rather than pick the first True
        raise RuntimeError(
            f"{name}(): does not support bool input. Fix: convert first, e.g. mask.long().{name}()."
        )
    if dim is None:
        if data.size == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0: "
                f"there is no element to point at. Fix: give a dim that has elements, "
                f"e.g. x.{name}(dim=1), or check for an empty tensor first."
            )
        out = fn(data.reshape(-1))  # numpy gives a numpy scalar: it has astype and reshape too
        return _make(out.astype(np.int64).reshape((1,) * data.ndim if keepdim else ()))
    axis = _one_dim(dim, data.ndim)
    check_reduction_dims(name, data.shape or (1,), [axis])
    out = fn(data if data.ndim else data.reshape(1), axis=axis)
    out = np.expand_dims(out, axis) if keepdim and data.ndim else out
    return _make(out.astype(np.int64, copy=False))


@public("argmax", method=True)
def argmax(input, dim=None, keepdim=False):
    return _arg(np.argmax, input, dim, keepdim)


@public("argmin", method=True)
def argmin(input, dim=None, keepdim=False):
    return _arg(np.argmin, input, dim, keepdim)


@public("logsumexp", method=True)
def logsumexp(input, dim, keepdim=False):
    every_dim = _all_if_empty(dim, input)
    if every_dim is not dim:
        # dim=() reduces every dim, but PyTorch 2.13 then fails to drop the kept size-1 dims of
        # a non-empty tensor with dims, and raises; with keepdim=True it works.
        if input.ndim and input.numel() and not keepdim:
            raise RuntimeError(
                f"logsumexp(dim=()): output with shape [] doesn't match the broadcast shape "
                f"{[1] * input.ndim} (PyTorch 2.13 raises here). Fix: name the dims, e.g. "
                "x.logsumexp(dim=tuple(range(x.ndim))), or pass keepdim=True."
            )
    return LogSumExp.apply(input, dim=every_dim, keepdim=keepdim)


def _softmax_input(name, input, dim, dtype):
    """softmax's input in the dtype asked for, refused as PyTorch refuses it: a bad dim first
    (IndexError), then a dtype that is not floating-point (exp of ints: convert first, or pass
    dtype=), except for a tensor without elements, which PyTorch passes through in any dtype."""
    input = input if dtype is None else input.to(dtype)
    _dims(dim, input.ndim)
    if input.numel():
        types.floating_point_only(name, input.dtype)
    return input


@public("softmax", method=True)
def softmax(input, dim, dtype=None):
    input = _softmax_input("softmax", input, dim, dtype)
    if not input.is_floating_point():  # no elements: nothing to compute, the dtype stays
        return input.clone()
    return Softmax.apply(input, dim=dim)


@public("log_softmax", method=True)
def log_softmax(input, dim, dtype=None):
    input = _softmax_input("log_softmax", input, dim, dtype)
    if not input.is_floating_point():
        return input.clone()
    return LogSoftmax.apply(input, dim=dim)


@public("any", method=True)
def any(input, dim=None, keepdim=False):
    axis = None if dim is None else _dims(dim, input.ndim)  # PyTorch's IndexError for a bad dim
    return _truth(np.any(input._data, axis=axis, keepdims=keepdim), input)


@public("all", method=True)
def all(input, dim=None, keepdim=False):
    axis = None if dim is None else _dims(dim, input.ndim)
    return _truth(np.all(input._data, axis=axis, keepdims=keepdim), input)


def _truth(answer, input):
    """any/all's answer: bool, except for a uint8 tensor, which gets uint8 (PyTorch keeps this
    from the days before bool tensors, when uint8 was the mask dtype). Row-major, as every
    reduction's result."""
    if isinstance(answer, np.generic):  # numpy's answer over all dims: a bool, not an array
        answer = np.asarray(answer)
    return _make(row_major(answer.astype(np.uint8) if input.dtype is types.uint8 else answer))
