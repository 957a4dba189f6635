"""Statistics: the median, and two statistics at once (var_mean, std_mean).

var_mean and std_mean return (variance or spread, mean) from one node, as PyTorch offers them
(VarMeanBackward0, StdMeanBackward0): a gradient may arrive for either output, and backward adds
what each one contributes.

The median is the middle value once sorted; for an even count PyTorch takes the lower of the two
middle values (not their average, as numpy does), so the median is always an element.

    >>> var, mean = autograd_lab.var_mean(autograd_lab.tensor([1.0, 2.0, 6.0]))
    >>> var, mean
    (tensor(7.), tensor(3.))
"""

import warnings

import numpy as np

from .. import storage, types
from ..autograd.function import Op
from ..layout import row_major
from ..tensor import _make
from .elementwise import _float, convert
from .reduction import (
    _all_if_empty,
    _correction,
    _dims,
    _one_dim,
    _unreduce,
    check_reduction_dims,
    evenly_distributed,
    gradient_to_indices,
    spread_in_float64,
    spread_needs_floating_point,
    std_to_var_grad,
    values_indices,
    var_backward,
)
from .registry import public


class VarMean(Op):
    node_name = "VarMeanBackward0"
    derivative = "var: 2 (x_i - mean) / (n - correction);  mean: 1/n"
    saved_names = ("self",)
    _spread = staticmethod(np.var)

    @staticmethod
    def forward(ctx, x, dim=None, correction=1, keepdim=False):
        data = _float(x._data)
        ctx.dims, ctx.keepdim, ctx.correction = _dims(dim, data.ndim), keepdim, correction
        ctx.every_dim = dim is None or data.ndim == 0
        name = ctx._fn.__name__.replace("Mean", "_mean").lower()  # var_mean or std_mean
        spread = spread_in_float64(name, ctx._fn._spread, data, ctx.dims, correction, keepdim)
        spread = _make(row_major(spread))  # both row-major, as every reduction's result
        # the mean too is summed in float64 and rounded once, as PyTorch's kernel does
        wide = data if data.dtype == np.float64 else convert(data, np.float64)
        with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no elements: nan; huge: inf (mended)
            mean = np.mean(wide, axis=ctx.dims, keepdims=keepdim)
            mean = _as_a_running_mean(wide, ctx.dims, keepdim, mean).astype(data.dtype)
        mean = _make(row_major(mean))
        if ctx._fn is StdMean:  # its slope reads the result: d std = d var / (2 std)
            ctx.save_for_backward(x, spread)
        else:  # as PyTorch, only x: so var_mean's results may be changed in place afterwards
            ctx.save_for_backward(x)
        # A gradient may arrive for one output only: the other then adds nothing, as in PyTorch
        # (zeros times the spread's slope would be nan where x holds an inf or a nan).
        ctx.set_materialize_grads(False)
        return spread, mean

    @staticmethod
    def backward(ctx, grad_spread, grad_mean):
        x = ctx.saved_tensors[0]
        shape = x._data.shape
        total = None
        if grad_spread is not None:
            if ctx._fn is StdMean:
                grad_spread = std_to_var_grad(grad_spread, ctx.saved_tensors[1])
            total = var_backward(grad_spread, x, ctx)
        if grad_mean is not None:
            n = int(np.prod([shape[d] for d in ctx.dims])) if shape else 1
            from_mean = _unreduce(grad_mean, shape, ctx.dims, ctx.keepdim).expand(shape) / n
            total = from_mean if total is None else total + from_mean
        return total


def _as_a_running_mean(data, dims, keepdim, mean):
    """PyTorch computes var_mean's mean with a running update (Welford's algorithm), m += (x_k -
    m) / k, not as sum / n. The two agree except at infinities: once m is infinite, the next
    element makes it nan (inf - inf, or inf + -inf). So an infinity anywhere but in the last
    position of a reduced line gives nan where sum / n gives the infinity. And the running mean
    never exceeds the largest element, while a sum of large finite elements can overflow to inf:
    there we take the mean of the elements scaled down by a power of two (exact), then scale up."""
    if data.size == 0:  # no elements: no infinities (and no last place)
        return mean
    last = tuple(slice(-1, None) if d in dims else slice(None) for d in range(data.ndim))
    infinities = np.sum(np.isinf(data), axis=dims, keepdims=True)
    overflowed = (np.isinf(mean) & (infinities == 0).reshape(mean.shape)).any()
    if overflowed:
        count = data.size // mean.size
        scale = 2.0 ** -np.ceil(np.log2(count))  # the scaled sum cannot overflow
        scaled_mean = np.mean(data * data.dtype.type(scale), axis=dims, keepdims=True) / scale
        mean = np.where(np.isinf(mean), scaled_mean.reshape(mean.shape), mean).astype(mean.dtype)
    early_infinity = infinities - np.isinf(data[last]) > 0  # one inf, in last place: no nan
    return np.where(early_infinity.reshape(mean.shape), np.nan, mean).astype(mean.dtype)


class StdMean(VarMean):
    node_name = "StdMeanBackward0"
    derivative = "std: (x_i - mean) / ((n - correction) std);  mean: 1/n"
    saved_names = ("self", "result0")
    _spread = staticmethod(np.std)


@public("var_mean")
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(variance, mean) over `dim` (all dims by default), as var() and mean() give them."""
    spread_needs_floating_point("var_mean", input)
    dim = _all_if_empty(dim, input)
    correction = _correction(unbiased, correction)
    return VarMean.apply(input, dim=dim, correction=correction, keepdim=keepdim)


@public("std_mean")
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(standard deviation, mean) over `dim` (all dims by default), as std() and mean() give them."""
    spread_needs_floating_point("std_mean", input)
    dim = _all_if_empty(dim, input)
    correction = _correction(unbiased, correction)
    return StdMean.apply(input, dim=dim, correction=correction, keepdim=keepdim)


# ---- the median -------------------------------------------------------------------------------------


def _median_along(data, axis):
    """(values, indices) of the lower median along `axis`, kept as a size-1 dim. Ties go to the
    element that comes first among equals after a stable sort, and a line holding a nan gives
    nan at its first nan, as PyTorch's CPU median does."""
    order = np.argsort(data, axis=axis, kind="stable")  # nans sort last
    middle = (data.shape[axis] - 1) // 2
    indices = np.take(order, [middle], axis=axis)
    if data.dtype.kind == "f":
        nans = np.isnan(data)
        has_nan = nans.any(axis=axis, keepdims=True)
        first_nan = np.expand_dims(np.argmax(nans, axis=axis), axis)
        indices = np.where(has_nan, first_nan, indices)
    return np.take_along_axis(data, indices, axis=axis), indices.astype(np.int64)


def _on_the_cpu(input):
    if storage.device_of(input._data).type != "cpu":
        raise NotImplementedError(
            "median of a CUDA tensor is not supported by autograd_lab's CUDA backend (it sorts). "
            "Fix: x.cpu().median(...), and move the result back with .cuda()"
        )


class Median(Op):
    """median() of all elements; elements equal to it share the gradient, as in PyTorch."""

    node_name = "MedianBackward0"
    derivative = "1 at the median (shared among equal elements), 0 elsewhere"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, x):
        _on_the_cpu(x)
        data = x._data.reshape(-1)
        if data.size == 0:
            value = _median_of_nothing(data.dtype)
        else:
            value = _median_along(data, 0)[0].reshape(())
        result = _make(value)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        return evenly_distributed(grad, x, result)


def _median_of_nothing(dtype):
    """PyTorch's median of no elements: nan, converted to the tensor's own dtype. An int cannot
    hold nan; the CPU's conversion gives the smallest int64 or int32 ("integer indefinite"), and 0
    for the narrower ints (converted through int32, keeping the low bits, all zero). A bool is
    True, as nan is not zero."""
    if dtype.kind == "f":
        return np.array(np.nan, dtype)
    if dtype.kind == "b":
        return np.array(True)
    if dtype.itemsize >= 4:
        return np.array(np.iinfo(dtype).min, dtype)
    return np.zeros((), dtype)


class median_values_indices(values_indices):
    __slots__ = ()
    _op = "median"


class MedianDim(Op):
    """median(dim): values and indices; the gradient goes to the index of each value."""

    node_name = "MedianBackward1"
    derivative = "1 at each median's index, 0 elsewhere"
    saved_names = ("indices",)

    @staticmethod
    def forward(ctx, x, dim, keepdim=False):
        _on_the_cpu(x)
        data = x._data if x._data.ndim else x._data.reshape(1)
        axis = _median_axis(x, dim)
        values, indices = _median_along(data, axis)
        if not keepdim or not x._data.ndim:
            values, indices = values.squeeze(axis), indices.squeeze(axis)
        indices = _make(indices)
        ctx.shape, ctx.axis, ctx.keepdim = x._data.shape, axis, keepdim
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return _make(values), indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        return gradient_to_indices(ctx, grad)  # as max(dim)'s: to the median's index


def _median_axis(input, dim):
    """The axis median(dim) reduces; an IndexError if it has no elements to take a median of."""
    axis = _one_dim(dim, input.ndim)
    check_reduction_dims("median", tuple(input.shape) or (1,), [axis])
    return axis


@public("median", method=True)
def median(input, dim=None, keepdim=False):
    """The middle value (the lower one of the two for an even count): of all elements, or along
    `dim` as (values, indices) like max(dim)."""
    # PyTorch looks at the dtype only once it has elements to compare: the median of no
    # elements is nan (True for bool), and an empty dim is an IndexError first
    if input.dtype is types.bool_ and dim is not None:
        _median_axis(input, dim)
        raise types.not_implemented_for("median", input.dtype)
    if dim is None:
        if input.dtype is types.bool_ and input.numel() > 0:
            raise types.not_implemented_for("median", input.dtype)
        return Median.apply(input)
    return median_values_indices(*MedianDim.apply(input, dim=dim, keepdim=keepdim))
