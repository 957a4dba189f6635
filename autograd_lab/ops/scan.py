"""Scans: running totals along one dimension: cumsum, cumprod, logcumsumexp (and diff).

A scan keeps every partial result of a reduction: cumsum([1, 2, 3]) = [1, 3, 6]. Element j of the
output depends on the inputs 0..j, so the gradient of input i collects the upstream gradients of
the outputs i, i+1, ..., the end: a running total taken from the *other* end.

    >>> x = autograd_lab.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> x.cumsum(0).sum().backward(); x.grad      # input 0 reaches 3 outputs, input 2 only one
    tensor([3., 2., 1.])
"""

import numpy as np

from .. import storage, types
from ..autograd.function import Op
from ..autograd.grad_mode import is_grad_enabled
from ..layout import row_major
from ..tensor import _make
from ..types import to_dtype
from .elementwise import where
from .reduction import _one_dim
from .registry import public
from .shape import cat, stack


def _axis(dim, ndim):
    """The one dimension a scan runs along (a 0-d tensor accepts 0 and -1, as in PyTorch)."""
    if dim is None or not isinstance(dim, int):
        raise TypeError(
            f"a scan runs along one dimension: dim must be an int, got {dim!r}. "
            "Example: x.cumsum(dim=0)"
        )
    return _one_dim(dim, ndim)


def _scan(numpy_scan, data, axis, dtype):
    """numpy's cumsum/cumprod of `data` along `axis`, with PyTorch's result dtype: integers and
    bools are accumulated as int64 (so a count of booleans cannot overflow a small type)."""
    if dtype is None and data.dtype.kind in "biu":
        dtype = np.int64
    if data.ndim == 0:  # one element: the running total is the element itself
        return data.astype(dtype or data.dtype)  # a copy: the result never aliases the input
    result_dtype = np.dtype(dtype or data.dtype)
    with np.errstate(invalid="ignore", over="ignore"):  # inf * 0 = nan, silently, as PyTorch
        if result_dtype.kind == "f" and result_dtype != np.float64:
            # PyTorch keeps a float32 running total in float64 and rounds each result once (in
            # float32 one result in two would be a last bit off): the input in the result's
            # dtype first (cumsum(dtype=float32) of a float64 tensor), then the total in float64
            wide = data.astype(result_dtype, copy=False).astype(np.float64)
            running = numpy_scan(wide, axis=axis).astype(result_dtype)
        else:
            running = numpy_scan(data, axis=axis, dtype=dtype)
    # row-major, as PyTorch makes it whatever the input's layout (numpy keeps the input's; the
    # layout shows in stride() and in the order x.uniform_() fills the result)
    return row_major(running)


def _reversed_cumsum(grad, axis):
    """Running totals from the end: out[i] = grad[i] + grad[i+1] + ... + grad[n-1].

    Computed as flip, cumsum, flip back, not as total - cumsum + grad: that subtraction would
    lose the small values next to a large total (in float32, 1e10 + 1 - 1e10 is 0)."""
    if grad.ndim == 0:
        return grad
    return _flip(_flip(grad, axis).cumsum(axis), axis)


def _flip(t, axis):
    """t in reverse order along `axis` (indexing with [n-1, ..., 1, 0]: differentiable)."""
    n = t.shape[axis]
    backwards = _make(storage.new(np.arange, n - 1, -1, -1, device=t.device))
    return t[(slice(None),) * axis + (backwards,)]


class Cumsum(Op):
    node_name = "CumsumBackward0"
    derivative = "d cumsum(x)_j/dx_i = 1 for j >= i: the gradient is summed from the end"

    @staticmethod
    def forward(ctx, input, dim, dtype=None):
        ctx.axis, ctx.input_dtype = _axis(dim, input._data.ndim), input.dtype
        running = _scan(np.cumsum, input._data, ctx.axis, dtype)
        # PyTorch's running total starts from 0, and 0 + -0.0 is +0.0 (numpy's starts from the
        # first element, -0.0 then stays); a 0-d tensor is passed on as it is in both. Only
        # floats have a -0.0 (and + 0 would turn an empty bool result into int64).
        if input._data.ndim and running.dtype.kind == "f":
            running = running + running.dtype.type(0)
        return running

    @staticmethod
    def backward(ctx, grad):
        # as PyTorch: back in the input's dtype first (dtype=float64 of a float32 input), then sum
        return _reversed_cumsum(grad.to(ctx.input_dtype), ctx.axis)


class Cumprod(Op):
    node_name = "CumprodBackward0"
    derivative = "d cumprod(x)_j/dx_i = product of x_0..x_j without x_i, for j >= i"
    saved_names = ("self", "result")

    @staticmethod
    @np.errstate(invalid="ignore", over="ignore")  # 0 · inf is nan, silently, as in PyTorch
    def forward(ctx, input, dim, dtype=None):
        ctx.axis = _axis(dim, input._data.ndim)
        result = _make(_scan(np.cumprod, input._data, ctx.axis, dtype))
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        if x.ndim == 0 or x.shape[ctx.axis] <= 1 or x._data.size == 0:
            # y = x there (or nothing to differentiate): slope 1, even at inf or nan
            return grad
        # Without zeros, d y_j/d x_i = y_j / x_i, so the gradient is a reversed running total of
        # grad * y, divided by x. A zero would make that 0/0: then take each product explicitly.
        if not (x._data == 0).any():
            return _reversed_cumsum(grad * result, ctx.axis) / x
        return _gradient_with_zeros(x, grad, ctx.axis)


def _gradient_with_zeros(x, grad, axis):
    """The cumprod gradient for inputs that contain zeros, in differentiable ops (so second
    derivatives are right too), taken as PyTorch takes it (so NaN and inf come out alike): for
    each position k of a line, d y_j/d x_k (j >= k) is the product of the elements before k
    times the running product of those after k, and x_k's gradient is the sum of grad_j times
    that."""
    last = x.ndim - 1
    line = x.transpose(axis, last) if axis != last else x
    grad = grad.transpose(axis, last) if axis != last else grad
    slopes = []
    for k in range(line.shape[-1]):
        before = line[..., :k].prod(-1, keepdim=True)  # (k = 0: the empty product, 1)
        after = line[..., k + 1 :].cumprod(-1)
        left_out = cat([before, before * after], -1)  # d y_j/d x_k for j = k, k + 1, ...
        slopes.append((grad[..., k:] * left_out).sum(-1))
    total = stack(slopes, -1)
    return total.transpose(axis, last) if axis != last else total


class Logcumsumexp(Op):
    """log(exp(x_0) + ... + exp(x_j)) for every j: a running logsumexp (a softer running max)."""

    node_name = "LogcumsumexpBackward0"
    derivative = "d y_j/dx_i = exp(x_i - y_j) for j >= i: softmax weights of the running sums"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, input, dim):
        if storage.device_of(input._data).type != "cpu":
            raise NotImplementedError(
                "logcumsumexp of a CUDA tensor is not supported by autograd_lab's CUDA backend. "
                "Fix: x.cpu().logcumsumexp(dim), and move the result back with .cuda()"
            )
        data = input._data
        ctx.axis = _axis(dim, data.ndim)  # a dim that is not there is reported first
        types.floating_point_only("logcumsumexp", input.dtype)
        # logaddexp(a, b) = max + log(1 + exp(-|a - b|)): accumulated, it never overflows
        if data.ndim:
            # PyTorch keeps a float32 running sum in float64 and rounds each result once; so
            # do we (in float32 one result in five would be a last bit off)
            wide = data if data.dtype == np.float64 else data.astype(np.float64)
            # PyTorch's running sum starts from log(0) = -inf, and logaddexp(-inf, x) is x + 0:
            # so a first element -0.0 gives +0.0 (numpy's accumulate hands it on as it is)
            running = (np.logaddexp.accumulate(wide, ctx.axis) + 0.0).astype(data.dtype)
        else:  # a 0-d tensor is passed on as it is
            running = data.copy()
        result = _make(row_major(running))  # row-major, as _scan's
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        if x.ndim == 0 or x._data.size == 0:
            # y = x for a 0-d tensor (or nothing to differentiate): PyTorch passes grad on as it
            # is. A dim of size 1 goes through the formula below, as in PyTorch: its gradient
            # requires grad with create_graph=True, and is nan at x = ±inf or nan
            return grad
        # dx_i = sum over j >= i of grad_j exp(x_i - y_j). Summed as exponentials of logs, the
        # positive and the negative gradients apart (a log needs a positive number), so that no
        # exp overflows: exp(x_i + log sum_j exp(log|grad_j| - y_j)), with the running logsumexp
        # taken from the end.
        lowest = float(np.finfo(x._data.dtype).min)  # log(0), without the -inf
        # log|grad| is -inf where grad is 0, a value never chosen below. Taken as it is, as in
        # PyTorch: so the second derivative there is nan (log's slope 1/|grad| times zero)
        size = grad.abs().log()

        def part(mask):
            logs = where(mask, size, lowest) - result
            return (_flip(_flip(logs, ctx.axis).logcumsumexp(ctx.axis), ctx.axis) + x).exp()

        return part(grad > 0) - part(grad < 0)


@public("logcumsumexp", method=True, out=True)
def logcumsumexp(input, dim):
    """Running logsumexp along `dim`: log(exp(x_0) + ... + exp(x_j)), computed without overflow."""
    return Logcumsumexp.apply(input, dim=dim)


def _numpy_dtype(dtype, input, dim):
    """The numpy dtype asked for with dtype= (None: the default), refused if autograd cannot
    record it (after a bad dim, which PyTorch reports first)."""
    if dtype is None:
        return None
    _axis(dim, input.ndim)
    dtype = to_dtype(dtype)
    types.check_differentiable(dtype, input.requires_grad and is_grad_enabled())
    return dtype.numpy


@public("cumsum", method=True, out=True)
def cumsum(input, dim, *, dtype=None):
    """Running sums along `dim`: cumsum([1, 2, 3], 0) = [1, 3, 6]. Integers and bools give int64."""
    return Cumsum.apply(input, dim=dim, dtype=_numpy_dtype(dtype, input, dim))


@public("cumprod", method=True, out=True)
def cumprod(input, dim, *, dtype=None):
    """Running products along `dim`: cumprod([1, 2, 3], 0) = [1, 2, 6]."""
    return Cumprod.apply(input, dim=dim, dtype=_numpy_dtype(dtype, input, dim))


@public("cumsum_", method=True, function=False)
def cumsum_(input, dim, *, dtype=None):
    """In place: the running sums along `dim`, in the tensor's own dtype."""
    return _scan_in_place(cumsum, input, dim, dtype)


@public("cumprod_", method=True, function=False)
def cumprod_(input, dim, *, dtype=None):
    """In place: the running products along `dim`, in the tensor's own dtype."""
    return _scan_in_place(cumprod, input, dim, dtype)


def _scan_in_place(scan, input, dim, dtype):
    """x.cumsum_(dim) is computed in x's dtype, not in int64 as x.cumsum(dim) of integers is (so a
    uint8 tensor wraps around at 256, as in PyTorch). PyTorch has no such kernel for bool, and
    calls none for a 0-d or empty tensor (nothing to add up)."""
    return input._inplace(scan_in_place, scan, dim, dtype)


def scan_in_place(input, scan, dim, dtype):
    """The values x.cumsum_(dim) writes into x. After autograd's own refusal (a leaf that
    requires grad), PyTorch checks the dim, then a dtype= other than x's, then whether x's dtype
    has a kernel, and only then x's memory (an expanded x: ops/overlap.py's CHECKS_FIRST)."""
    _axis(dim, input.ndim)
    input._check_result_fits(input._data.shape, dtype)
    if input.dtype is types.bool_ and input.ndim and input.numel():
        raise types.not_implemented_for(scan.__name__, input.dtype)
    return scan(input, dim, dtype=input.dtype)


# ---- diff: the step from each element to the next, what cumsum adds up again -------------------


def _check_joins_on(extra, input, axis):
    """diff's prepend or append must match the input in all dims but the differencing one."""
    if extra.ndim != input.ndim:
        raise RuntimeError(
            f"diff expects prepend or append to be the same dimension as input: input has "
            f"{input.ndim} dims, prepend/append {extra.ndim}. Fix: give it the input's dims, "
            f"e.g. t.reshape(...) or t.unsqueeze(dim)."
        )
    for d in range(input.ndim):
        if d != axis and extra.shape[d] != input.shape[d]:
            raise RuntimeError(
                f"diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({d}) = {input.shape[d]}, "
                f"but got tensor.size({d}) = {extra.shape[d]}."
            )


@public("diff", method=True, out=True)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """Differences of neighbours along `dim`, n times: diff([1, 4, 9]) = [3, 5]. `prepend` and
    `append` are joined on first (cumsum undoes diff when prepend is the first value's zero)."""
    if input.ndim == 0:
        raise RuntimeError(
            "diff expects input to be at least one-dimensional: a single number has no "
            "neighbours. Fix: x.reshape(1) or x.unsqueeze(0)"
        )
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0 and prepend is None and append is None:  # PyTorch copies before it reads dim
        return input.detach().clone().copy_(input)
    axis = _axis(dim, input.ndim)
    for extra in (prepend, append):
        if extra is not None:
            _check_joins_on(extra, input, axis)
    if n == 0:  # no differences taken: a copy of the input alone (PyTorch's copy_, CopyBackwards)
        return input.detach().clone().copy_(input)  # a fresh tensor, then the recorded copy
    pieces = [t for t in (prepend, input, append) if t is not None]
    values = input if len(pieces) == 1 else cat(pieces, dim=axis)
    for _ in range(n):  # built from differentiable ops: the gradient comes for free
        length = values.shape[axis]
        if length == 0:
            break
        later, earlier = values.narrow(axis, 1, length - 1), values.narrow(axis, 0, length - 1)
        values = later != earlier if values.dtype == types.bool_ else later - earlier
    return values
