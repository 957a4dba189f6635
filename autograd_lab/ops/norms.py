"""Norms: the size of a vector (or of a matrix seen as one), as one record with PyTorch's node.

The p-norm of x is (sum |x_i|^p)^(1/p); p = 2 is the everyday length, sqrt(x_1² + ... + x_n²).
Special orders: p = inf is the largest |x_i|, -inf the smallest, and 0 counts the nonzero entries.

    >>> autograd_lab.tensor([3.0, -4.0]).norm()         # sqrt(9 + 16)
    tensor(5.)

Its gradient is x_i |x_i|^(p-2) / norm^(p-1): for p = 2 that is x / norm, the unit vector. At
x = 0 the norm has a kink and no derivative; PyTorch picks 0 there (a subgradient), and so do we.
The functions of `torch.linalg` that use this record live in autograd_lab/linalg.py.
"""

import math

import numpy as np

from ..autograd.function import Op
from ..layout import row_major
from ..tensor import Tensor, _make
from ..types import to_dtype
from .elementwise import where
from .out import write_into
from .reduction import _all_if_empty, _dims, _unreduce
from .registry import public


def _order_name(ord):
    return {math.inf: "inf", -math.inf: "-inf"}.get(ord, f"{ord:g}")


def _p_norm(data, ord, dims, keepdim, over_a_named_dim_of_a_0d=False):
    """The ord-norm of numpy `data` over `dims` (numpy calls only, so it runs on CUDA too).
    `over_a_named_dim_of_a_0d`: data is 0-d and the call named a dim (dim=0 or -1)."""
    size = np.abs(data)
    # (PyTorch 2.13 takes the shortcut below for a 0-d tensor only without a named dim: with
    # dim=0 or -1 its one element goes through the power and the root, norm(x, 3, dim=0) of 0.19
    # is 0.19000000000000003, and dist(x, that, 0) counts one nonzero difference)
    one_element_each = math.prod(data.shape[d] for d in dims) == 1
    one_element_each = one_element_each and not over_a_named_dim_of_a_0d
    if ord == math.inf or (one_element_each and ord != 0):
        # the norm of one element is its size; PyTorch's kernel then takes |x| as it is, without
        # the power and the root (which would overflow, or round: (√2)² is not 2)
        return np.max(size, axis=dims, keepdims=keepdim)
    if ord == -math.inf:
        return np.min(size, axis=dims, keepdims=keepdim)
    if ord == 0:  # how many entries are not zero, as a float
        return np.sum(data != 0, axis=dims, keepdims=keepdim, dtype=data.dtype)
    if ord == 1:
        return np.sum(size, axis=dims, keepdims=keepdim)
    if ord == 2:
        with np.errstate(over="ignore"):  # squares beyond the dtype's range: inf, as PyTorch's
            return np.sqrt(np.sum(data * data, axis=dims, keepdims=keepdim))
    with np.errstate(divide="ignore", over="ignore"):  # p < 0 with a zero entry: the norm is 0
        return np.sum(size**ord, axis=dims, keepdims=keepdim) ** (1 / ord)


def float_input(input, dtype, name):
    """The input's array in the dtype the norm is computed in, checked as PyTorch checks it."""
    data = input._data
    if data.dtype.kind != "f":
        raise RuntimeError(
            f"{name}: Expected a floating point tensor as input, got {input.dtype}: a norm is a "
            "length, computed with square roots. Fix: convert first, x.float()"
        )
    if dtype is None:
        return data
    wanted = to_dtype(dtype)
    if wanted.numpy.kind != "f":
        raise RuntimeError(f"{name}: dtype should be floating point, but got {wanted}")
    if np.dtype(wanted.numpy).itemsize < data.dtype.itemsize:
        raise RuntimeError(
            f"{name}: the dtype of the input ({input.dtype}) should be convertible without "
            f"narrowing to the specified dtype ({wanted}). Fix: leave out dtype=, or convert "
            "the input yourself if you mean to lose precision."
        )
    return data.astype(wanted.numpy, copy=False)


class VectorNorm(Op):
    """The ord-norm over `dim` (all dims by default), the elements taken as one vector."""

    node_name = "LinalgVectorNormBackward0"
    saved_names = ("self", "result")
    derivative = "d ‖x‖_p/dx_i = x_i |x_i|^(p-2) / ‖x‖^(p-1)  (2-norm: x / ‖x‖, 0 at x = 0)"

    @staticmethod
    def forward(ctx, input, ord=2, dim=None, keepdim=False, dtype=None):
        name = "linalg.vector_norm"  # as PyTorch's messages say, for torch.norm too
        if isinstance(ord, str) or not isinstance(ord, (int, float)):
            raise TypeError(
                f"{name}(): ord must be a number (2, 1, inf, ...), not {ord!r}; the matrix norms "
                "'fro' and 'nuc' are torch.linalg.matrix_norm's or torch.linalg.norm's"
            )
        data = float_input(input, dtype, name)
        dims = _dims(_all_if_empty(dim, data), data.ndim)
        if (ord < 0 or ord == math.inf) and 0 in [data.shape[d] for d in dims]:
            raise RuntimeError(
                f"{name} cannot compute the {_order_name(ord)} norm of an empty tensor (or over an "
                "empty dimension): a maximum or minimum of no elements is undefined. Fix: reduce "
                "over a dimension that has elements."
            )
        named_dim = dim is not None and (isinstance(dim, int) or len(dim) > 0)
        norm = _p_norm(data, ord, dims, keepdim, named_dim and data.ndim == 0)
        result = _make(row_major(norm))  # as every reduction's
        x = input if data is input._data else _make(data)  # dtype= : computed in that dtype
        ctx.ord, ctx.dims, ctx.keepdim = ord, dims, keepdim
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, norm = ctx.saved_tensors
        p, shape = ctx.ord, x._data.shape
        grad = _unreduce(grad, shape, ctx.dims, ctx.keepdim)
        norm = _unreduce(norm, shape, ctx.dims, ctx.keepdim)
        if p == 0:  # a count does not change when x moves a little: no gradient (PyTorch's too)
            return None
        if p == 1:
            return grad * x.sgn()
        if p == 2:  # x / norm, and 0 where the norm is 0 (PyTorch's subgradient at the kink)
            return grad * where(norm == 0, 0.0, x / norm)
        if abs(p) == math.inf:  # the entries that reach the max (min) share the gradient
            # as PyTorch: where the norm is nan, the nan entries reach it (so count is not 0);
            # sign(nan) is 0, so they get 0, and so does every other entry
            hits = (x.abs() == norm) | (x.isnan() & norm.isnan())
            count = hits.sum(dim=ctx.dims, keepdim=True) if ctx.dims else hits
            return x.sgn() * (grad / count * hits)
        if p < 1:  # |x|^(p-1) is infinite at x = 0: PyTorch fills those entries with 0 after
            # the power, so differentiating again there gives 0 · inf = nan, as in PyTorch
            scaled = x.sgn() * (x.abs() ** (p - 1)).masked_fill(x == 0, 0.0)
            return scaled * grad * norm ** (1 - p)
        scaled = x * x.abs() ** (p - 2) if p >= 2 else x.sgn() * x.abs() ** (p - 1)
        return scaled * where(norm == 0, 0.0, grad / norm ** (p - 1))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ord-norm of the entries over `dim` (all by default): torch.linalg.vector_norm."""
    if not isinstance(x, Tensor):
        raise TypeError(f"vector_norm(): argument 'input' must be a Tensor, not {type(x).__name__}")
    return VectorNorm.apply(x, ord=ord, dim=dim, keepdim=keepdim, dtype=dtype)


@public("norm", method=True)
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm / x.norm: the p-norm over `dim` (default: all entries, as one vector).

    p='fro' is the 2-norm of the entries (over any dims); p='nuc', the nuclear norm, needs the
    singular values, which autograd_lab does not compute."""
    if out is not None:
        return write_into(out, norm(input, p, dim, keepdim, dtype=dtype), "norm")
    if isinstance(dim, int):
        dim = (dim,)
    if p == "fro":
        if dim is not None and len(dim) > 2:  # PyTorch takes 'fro' as a matrix norm here
            raise RuntimeError(
                f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}. Fix: p='fro' takes one "
                "or two dims; for more, use p=2 (the 2-norm of all the entries)"
            )
        p = 2
    elif isinstance(p, str):
        if p == "nuc":
            raise NotImplementedError(_needs_svd("norm(p='nuc')"))
        raise RuntimeError(f"norm: Order {p} not supported. Fix: use a number, 'fro' or 'nuc'")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def _needs_svd(what):
    return (
        f"{what} needs the singular values of the matrix (an SVD), which autograd_lab does not "
        "compute. Fix: use ord='fro', 1, -1, inf or -inf, or compute it in PyTorch or numpy"
    )


class Dist(Op):
    """dist's own node over the norm of the difference, which computes it: PyTorch's
    DistBackward0 saves both operands and its result, so changing any of them in place before
    backward is refused there, even when the gradient would not need them (p = 0). This node
    saves them for that check and hands the gradient on unchanged."""

    node_name = "DistBackward0"
    saved_names = ("self", "other", "result")

    @staticmethod
    def forward(ctx, distance, input, other):
        result = _make(distance._data.copy())
        ctx.save_for_backward(input, other, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors  # (refused here if either operand was changed in place since)
        return grad, None, None


@public("dist", method=True)
def dist(input, other, p=2):
    """The p-norm of input - other: how far apart two tensors are (they broadcast)."""
    return Dist.apply(norm(input - other, p=float(p)), input, other)
