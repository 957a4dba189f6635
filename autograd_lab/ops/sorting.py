"""Sorting and its relatives: sort, argsort, msort, topk, unique, unique_consecutive.

A sort does not compute new values, it only moves them; so its gradient moves back: each value's
gradient goes to the place the value came from, which the `indices` result remembers.

    >>> values, indices = autograd_lab.tensor([3.0, 1.0, 2.0]).sort()
    >>> values, indices
    (tensor([1., 2., 3.]), tensor([1, 2, 0]))

Ties keep their original order (a *stable* sort), as PyTorch's CPU sort does with or without
stable=True; NaN counts as larger than every number, as in PyTorch.

The CUDA backend has no sorting kernel yet: these ops refuse CUDA tensors with an error saying so.
"""

import numpy as np

from .. import storage, types
from ..autograd.function import Op
from ..layout import copy_keeping_layout, row_major
from ..tensor import _make
from .elementwise import contiguous
from .indexing import ScatterAdd
from .reduction import check_reduction_dims, values_indices
from .registry import public
from .shape import _one_dim


class sort_result(values_indices):
    """What sort returns: (values, indices), printed as PyTorch's `torch.return_types.sort`."""

    __slots__ = ()
    _op = "sort"


class topk_result(values_indices):
    __slots__ = ()
    _op = "topk"


def _on_host(data, op):
    if storage.device_of(data).type != "cpu":
        raise RuntimeError(
            f"{op}() is not implemented for CUDA tensors in autograd_lab yet (the CUDA backend has "
            f"no sorting kernel). Fix: sort on the CPU, e.g. x.cpu().{op}(...), and move the "
            "result back with .cuda()."
        )


def stable_order(data, axis, descending):
    """The indices that sort `data` along `axis`, ties in their original order. Descending: sort
    the reversed array ascending and reverse the answer, so equal values still keep their order
    (and NaN, which numpy sorts last, comes first, as PyTorch puts it)."""
    if not descending:
        return np.argsort(data, axis=axis, kind="stable")
    size = data.shape[axis]
    backwards = np.flip(data, axis)
    order = np.argsort(backwards, axis=axis, kind="stable")
    return size - 1 - np.flip(order, axis)


class Sort(Op):
    node_name = "SortBackward0"
    derivative = "each value's gradient goes back to where the value came from"
    saved_names = ("indices",)
    public_name = "sort"  # for the error on CUDA

    @staticmethod
    def forward(ctx, input, dim, descending, k=None):
        _on_host(input._data, ctx._fn.public_name)
        data = input._data.reshape(1) if input._data.ndim == 0 else input._data
        order = stable_order(data, dim, descending)
        if k is not None and input._data.ndim:  # topk: the first k of the sorted order
            order = order[(slice(None),) * dim + (slice(0, k),)]
        values = np.take_along_axis(data, order, axis=dim)
        if k is None:  # PyTorch's sort keeps the input's memory layout (transposed stays so)
            values, order = copy_keeping_layout(values, data), copy_keeping_layout(order, data)
        else:  # its topk makes new row-major tensors
            values, order = row_major(values), row_major(order)
        if input._data.ndim == 0:
            values, order = values.reshape(()), order.reshape(())
        indices = _make(order.astype(np.int64, copy=False))
        ctx.shape, ctx.dim = input._data.shape, dim
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return _make(values), indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        (indices,) = ctx.saved_tensors
        if not ctx.shape:
            return grad
        zeros = _make(np.zeros_like(grad._data, shape=ctx.shape))
        return ScatterAdd.apply(zeros, grad, dim=ctx.dim, index=indices)


class SortStable(Sort):
    node_name = "SortBackward1"  # PyTorch records sort(stable=...) as its second overload


class TopK(Sort):
    node_name = "TopkBackward0"
    derivative = "each of the k values' gradient goes back to where it came from, 0 elsewhere"
    public_name = "topk"


_NOT_GIVEN = object()  # sort(stable=...) given at all, even None or False, is another record


@public("sort", method=True)
def sort(input, dim=-1, descending=False, *, stable=_NOT_GIVEN):
    # stable=False may give any order of ties in PyTorch; its CPU sort keeps them, and so do we
    record = Sort if stable is _NOT_GIVEN else SortStable
    return sort_result(*record.apply(input, dim=_one_dim(dim, input.ndim), descending=descending))


@public("argsort", method=True)
def argsort(input, dim=-1, descending=False, *, stable=False):
    return sort(input, dim, descending).indices


@public("msort", method=True)
def msort(input):
    return sort(input, dim=0).values


@public("topk", method=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) values along dim, largest first. sorted=False allows any order
    in PyTorch; they come sorted here. Ties: the earlier element first (see the module doc)."""
    # PyTorch's order: the dim, then k, then the dtype (its kernel is chosen last)
    dim = _one_dim(dim, input.ndim)
    size = input.shape[dim] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(
            f"selected index k out of range: topk asked for k={k} elements of a dimension of "
            f"size {size}. Fix: choose k between 0 and {size}."
        )
    if input.dtype is types.bool_:
        raise RuntimeError(
            "topk does not support bool dtypes on CPU. Fix: convert first, e.g. mask.long().topk(k)"
        )
    return topk_result(*TopK.apply(input, dim=dim, descending=largest, k=k))


# ---- unique --------------------------------------------------------------------------------------


class Unique(Op):
    """unique's values. PyTorch records a node for them but has no derivative: neither do we."""

    node_name = "Unique2Backward0"
    _torch_name = "_unique2"
    no_derivative = True

    @staticmethod
    def forward(ctx, input, values):
        return values

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError(
            f"the derivative for '{ctx._fn._torch_name}' is not implemented (in PyTorch neither): "
            "the gradient of unique() is not defined. Fix: compute what needs a gradient without "
            "unique, or detach() its input."
        )


class UniqueDim(Unique):
    node_name = "UniqueDimBackward0"
    _torch_name = "unique_dim"


class UniqueConsecutive(Unique):
    node_name = "UniqueConsecutiveBackward0"
    _torch_name = "unique_consecutive"


def _results(record, input, values, inverse, counts, return_inverse, return_counts):
    """unique's answer as PyTorch gives it: the values alone, or a tuple with what was asked."""
    values = record.apply(input, values=values)
    extra = []
    if return_inverse:
        extra.append(_make(inverse.astype(np.int64)))
    if return_counts:
        extra.append(_make(counts.astype(np.int64)))
    return (values, *extra) if extra else values


def _unique_axis(input, dim):
    """The axis unique(dim=...) and unique_consecutive(dim=...) compare slices along, refused as
    PyTorch refuses it: a 0-d tensor has no dim, and an empty tensor has no slices to compare
    unless the one dim of size 0 is the dim chosen."""
    if input.ndim == 0:
        raise IndexError(
            f"Dimension specified as {dim} but tensor has no dimensions: unique(dim=...) compares "
            "slices along a dim. Fix: leave dim out, or reshape first, e.g. x.reshape(1)."
        )
    axis = _one_dim(dim, input.ndim)
    zero_sized = [d for d, n in enumerate(input.shape) if n == 0]
    if len(zero_sized) > 1:
        raise RuntimeError(
            "Number of zero sized dimensions is more than one, so unique cannot be applied: "
            f"shape {list(input.shape)} has no slices to compare. Fix: check x.numel() first."
        )
    if zero_sized and zero_sized != [axis]:
        raise RuntimeError(
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied: "
            f"shape {list(input.shape)} with dim={dim}. Fix: choose the dim of size 0, or check "
            "x.numel() first."
        )
    return axis


@public("unique", method=True)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (sorted; sorted=False allows any order in PyTorch, they come sorted
    here); inverse: where each input element went; counts: how often each value occurs. NaNs are
    all distinct, as in PyTorch."""
    data = input._data
    _on_host(data, "unique")
    if dim is None:
        values, inverse, counts = np.unique(
            data.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False
        )
        inverse = inverse.reshape(data.shape)
        record = Unique
    else:
        axis = _unique_axis(input, dim)
        values, inverse, counts = np.unique(
            data, return_inverse=True, return_counts=True, axis=axis, equal_nan=False
        )
        # numpy's values view a buffer of its own dtype (one element per slice): copy them into
        # a storage of ours, laid out as PyTorch's (the slices one after another in memory)
        values = np.moveaxis(np.moveaxis(values, axis, 0).copy(), 0, axis)
        inverse = inverse.reshape(-1)
        record = UniqueDim
    return _results(record, input, values, inverse, counts, return_inverse, return_counts)


@public("unique_consecutive", method=True)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Like unique, but only runs of equal neighbours collapse: [1, 1, 2, 1] -> [1, 2, 1]."""
    data = input._data
    _on_host(data, "unique_consecutive")
    if dim is None:
        data, axis = data.reshape(-1), 0
    else:
        axis = _unique_axis(input, dim)
    others = int(np.prod([n for d, n in enumerate(data.shape) if d != axis]))
    rows = np.moveaxis(data, axis, 0).reshape(data.shape[axis], others)  # one row per slice
    starts = np.ones(rows.shape[0], dtype=bool)  # does a new run start at this slice?
    starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    first = np.flatnonzero(starts)
    # the picked slices lie one after another in memory, as in PyTorch (and unique(dim=)):
    # x.unique_consecutive(dim=1) of a (2, 3) x has strides (1, 2)
    values = np.moveaxis(np.ascontiguousarray(np.moveaxis(data, axis, 0)[first]), 0, axis)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(first, rows.shape[0]))
    if dim is None:
        inverse = inverse.reshape(input._data.shape)
    return _results(
        UniqueConsecutive, input, values, inverse, counts, return_inverse, return_counts
    )


class kthvalue_result(values_indices):
    __slots__ = ()
    _op = "kthvalue"


@public("kthvalue", method=True)
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest value along dim (k = 1 is the minimum) and its index: the k-th entry of
    the sorted values, so ties resolve as sort's do."""
    dim = _one_dim(dim, input.ndim)
    size = input.shape[dim] if input.ndim else 1
    check_reduction_dims("kthvalue", tuple(input.shape) or (1,), [dim])  # (naming x's dim)
    if not 1 <= k <= size:
        raise RuntimeError(
            f"kthvalue(): selected number k out of range for dimension {dim}: k={k}, but the "
            f"dimension has {size} values. Fix: give 1 <= k <= {size}."
        )
    if input.ndim == 0:  # one number is its own first value, at index 0 (a bool too, in PyTorch)
        values, indices = sort(input, dim)
    else:
        if input.dtype is types.bool_:
            raise types.not_implemented_for("kthvalue", input.dtype)
        ordered = sort(input, dim)
        values = ordered.values.narrow(dim, k - 1, 1)
        indices = ordered.indices.narrow(dim, k - 1, 1)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
    # row-major copies, as PyTorch's are new tensors, not views of the sorted ones (which nobody
    # else sees): an in-place change of the result is then recorded on the result itself
    indices = contiguous(indices)
    return kthvalue_result(Kthvalue.apply(values, indices=indices), indices)


class Kthvalue(Op):
    """kthvalue's own node over the sort that computes it: a row-major copy of the values that
    saves the indices returned beside them, as PyTorch's KthvalueBackward0 does, so changing
    those indices in place before backward is refused there. The gradient goes on unchanged."""

    node_name = "KthvalueBackward0"
    saved_names = ("indices",)

    @staticmethod
    def forward(ctx, values, indices):
        ctx.save_for_backward(indices)
        return row_major(values._data.copy())

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors  # (refused here if the indices were changed in place since)
        return grad
