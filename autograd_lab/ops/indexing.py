"""Picking elements by index and putting them back: gather/scatter, index_select, masked_fill.

These ops take an *index tensor* (or a bool mask) beside the input. Their gradients come in pairs:
picking elements out (gather) sends the gradient back by adding it in at the same places
(scatter_add), and writing elements in (scatter) cuts the gradient off at the places overwritten.

    >>> x = autograd_lab.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.gather(1, autograd_lab.tensor([[1], [0]]))     # row i takes column index[i][0]
    tensor([[2.],
            [3.]])

gather and scatter name their element with the index's *own* position in every dim but `dim`,
and the index's value along `dim`: out[i][j] = input[i][index[i][j]] for dim=1.
"""

import numpy as np

from .. import promotion, storage, types
from ..autograd.function import Op
from ..layout import row_major
from ..tensor import Tensor, _make, read_histories_first
from .elementwise import _zeros, check_broadcastable
from .registry import public
from .shape import IndexPut, _one_dim, _with_strides, unbind

# ---- checking an index ------------------------------------------------------------------------------


def _index_array(index, op):
    """The numpy (or CUDA) array of an index tensor, after checking it is integer."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            f"{op}(): Expected dtype int32/int64 for index, got {index.dtype}. An index must hold "
            "whole numbers. Fix: convert it with index.long()."
        )
    return index._data


def _check_bounds(index, size, dim, op):
    """Every index value must name an element: 0 <= value < size (PyTorch does not wrap -1)."""
    if index.size == 0:
        return
    low, high = int(np.min(index)), int(np.max(index))
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise RuntimeError(
            f"{op}(): index {bad} is out of bounds for dimension {dim} with size {size}. "
            f"Index values must lie in 0..{size - 1}."
        )


def _check_index_shape(input, index, dim, op, src=None):
    """PyTorch's rule for gather/scatter: index has input's number of dims, and is no larger than
    input in the other dims (no larger than src in any)."""
    if index.ndim != max(input.ndim, 1) and not (index.ndim == 0 and input.ndim <= 1):
        raise RuntimeError(
            f"{op}(): Index tensor must have the same number of dimensions as input tensor "
            f"(index has {index.ndim}, input has {input.ndim}). Fix: unsqueeze or reshape the index."
        )
    for d in range(index.ndim):
        if d != dim and input.ndim and index.shape[d] > input.shape[d]:
            raise RuntimeError(
                f"{op}(): Size does not match at dimension {d}: expected index "
                f"{list(index.shape)} to be no larger than self {list(input.shape)} apart from "
                f"dimension {dim}"
            )
        if src is not None and src.ndim and index.shape[d] > src.shape[d]:
            raise RuntimeError(
                f"{op}(): Expected index {list(index.shape)} to be no larger than src "
                f"{list(src.shape)} in any dimension (scatter writes src[i][j] for each index[i][j])"
            )


def _positions(index, dim):
    """The full numpy index of the elements gather/scatter touch: `index` itself along `dim`, and
    along every other dim d the position 0, 1, ... of the index element in d."""
    parts = []
    for d, size in enumerate(index.shape):
        if d == dim:
            parts.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = size
            arange = storage.new(np.arange, size, dtype=np.int64, device=storage.device_of(index))
            parts.append(arange.reshape(shape))
    return tuple(parts)


def _leading(src, shape):
    """The leading block of `src` of `shape` (scatter uses only as much of src as index covers)."""
    if src.ndim == 0:  # one number, for a 0-d index the scatters read as one element
        src = src.reshape(1)
    return src[tuple(slice(0, s) for s in shape)]


def _grown(part, shape):
    """`part` as the leading block of a zero tensor of `shape`: src's gradient when scatter used
    only part of src (PyTorch raises there; zeros are the gradient of the unused elements)."""
    if tuple(part.shape) == tuple(shape):
        return part
    corner = tuple(slice(0, s) for s in part.shape)
    return IndexPut.apply(_zeros(shape, part), part, index=corner)


# ---- gather and the scatters --------------------------------------------------------------------


class Gather(Op):
    node_name = "GatherBackward0"
    saved_names = ("self", "index")
    derivative = "the gradient is added back at the gathered places (scatter_add)"

    @staticmethod
    def forward(ctx, input, dim, index):
        ctx.shape, ctx.dim = input._data.shape, dim
        # both, as PyTorch: changing the input or the index in place then makes backward refuse
        ctx.save_for_backward(input, index)
        data = input._data.reshape(1) if input._data.ndim == 0 else input._data
        index = index._data
        return data[_positions(index.reshape(-1) if index.ndim == 0 else index, dim)].reshape(
            index.shape
        )

    @staticmethod
    def backward(ctx, grad):
        _, index = ctx.saved_tensors
        zeros = _zeros(ctx.shape, grad)
        return ScatterAdd.apply(zeros, grad, dim=ctx.dim, index=index)


class ScatterAdd(Op):
    node_name = "ScatterAddBackward0"
    derivative = "1 for input; for src, the gradient at the places src was added to"

    @staticmethod
    def forward(ctx, input, src, dim, index):
        ctx.dim, ctx.index, ctx.src_shape = dim, index, src._data.shape
        out = input._data.copy()
        index = index._data.reshape(-1) if index.ndim == 0 else index._data
        flat = out.reshape(1) if out.ndim == 0 else out  # a view: the writes land in `out`
        np.add.at(flat, _positions(index, dim), _leading(src._data, index.shape))
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, _grown(Gather.apply(grad, dim=ctx.dim, index=ctx.index), ctx.src_shape)


class Scatter(Op):
    """scatter with a src tensor: the overwritten places of input get no gradient; src gets the
    gradient of the places it was written to."""

    node_name = "ScatterBackward0"
    derivative = "input: 0 at the overwritten places, 1 elsewhere; src: 1 where it was written"

    @staticmethod
    def forward(ctx, input, src, dim, index):
        ctx.dim, ctx.index, ctx.src_shape = dim, index, src._data.shape
        out = input._data.copy()
        index = index._data.reshape(-1) if index.ndim == 0 else index._data
        flat = out.reshape(1) if out.ndim == 0 else out
        flat[_positions(index, dim)] = _leading(src._data, index.shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad_input = ScatterValue.apply(grad, dim=ctx.dim, index=ctx.index, value=0.0)
        grad_src = _grown(Gather.apply(grad, dim=ctx.dim, index=ctx.index), ctx.src_shape)
        return grad_input, grad_src


class ScatterValue(Op):
    """scatter with a number: the overwritten places get no gradient."""

    node_name = "ScatterBackward1"
    derivative = "0 at the overwritten places, 1 elsewhere"

    @staticmethod
    def forward(ctx, input, dim, index, value):
        ctx.dim, ctx.index = dim, index
        out = input._data.copy()
        if out.size:  # nan, inf or a number too large for an integer tensor: PyTorch's error
            promotion.check_value_fits(value, input.dtype)
        else:  # nothing to write: PyTorch never converts the value (nan into int64 passes)
            value = 0
        index = index._data.reshape(-1) if index.ndim == 0 else index._data
        flat = out.reshape(1) if out.ndim == 0 else out
        flat[_positions(index, dim)] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        return ScatterValue.apply(grad, dim=ctx.dim, index=ctx.index, value=0.0)


class ScatterReduce(Op):
    """scatter(..., reduce='add' | 'multiply'): PyTorch computes it but has no derivative for it."""

    node_name = "NotImplemented"  # what PyTorch records, and its backward raises, as ours does
    no_derivative = True

    @staticmethod
    def forward(ctx, input, src=None, *, dim, index, value=None, reduce):
        out = input._data.copy()
        index = index._data.reshape(-1) if index.ndim == 0 else index._data
        flat = out.reshape(1) if out.ndim == 0 else out
        values = _leading(src._data, index.shape) if src is not None else value
        combine = np.add if reduce == "add" else np.multiply
        combine.at(flat, _positions(index, dim), values)
        return out

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            "derivative for scatter with reduce= is not implemented (PyTorch has none either). "
            "Fix: for reduce='add' use scatter_add, which is differentiable."
        )


def _gather_args(op, input, dim, index, src=None):
    """Normalize dim and check index (and src) as PyTorch does."""
    dim = _one_dim(dim, input.ndim)
    array = _index_array(index, op)
    _check_index_shape(input._data, array, dim, op, None if src is None else src._data)
    _check_bounds(array, input._data.shape[dim] if input.ndim else 1, dim, op)
    return dim, index


@public("gather", method=True)
def gather(input, dim, index, *, sparse_grad=False):
    read_histories_first(input)  # (autograd before the checks, as in PyTorch)
    if sparse_grad:
        raise RuntimeError(
            "gather(sparse_grad=True) is not supported: autograd_lab has no sparse tensors, so "
            "the gradient is always dense. Fix: leave sparse_grad out (the values are the same)."
        )
    dim, index = _gather_args("gather", input, dim, index)
    return Gather.apply(input, dim=dim, index=index)


def _check_same_dtype(input, src, op):
    if src._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"{op}(): Expected self.dtype to be equal to src.dtype (self is {input.dtype}, src is "
            f"{src.dtype}). Fix: convert src with src.to(input.dtype)."
        )


@public("scatter", method=True, inplace=True)
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    read_histories_first(input, src, value)  # (autograd before the checks, as in PyTorch)
    if src is not None and not isinstance(src, Tensor):  # scatter(x, 0, i, 2.0): a value
        src, value = None, src
    if (src is None) == (value is None):
        raise TypeError("scatter() takes either a src tensor or a value (a number), exactly one")
    dim, index = _gather_args("scatter", input, dim, index, src)
    if src is not None:
        _check_same_dtype(input, src, "scatter")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce!r}.")
        if src is None:
            return ScatterReduce.apply(input, dim=dim, index=index, value=value, reduce=reduce)
        # src positional: an input of the graph, so a src that requires grad is recorded too
        return ScatterReduce.apply(input, src, dim=dim, index=index, reduce=reduce)
    if src is None:
        return ScatterValue.apply(input, dim=dim, index=index, value=value)
    return Scatter.apply(input, src, dim=dim, index=index)


@public("scatter_add", method=True, inplace=True)
def scatter_add(input, dim, index, src):
    read_histories_first(input, src)  # (autograd before the checks, as in PyTorch)
    dim, index = _gather_args("scatter_add", input, dim, index, src)
    _check_same_dtype(input, src, "scatter_add")
    return ScatterAdd.apply(input, src, dim=dim, index=index)


@public("take_along_dim")
def take_along_dim(input, indices, dim=None):
    """gather, with index and input broadcast against each other in every dim but `dim`
    (dim=None: both are flattened first)."""
    read_histories_first(input)  # (autograd before the checks, as in PyTorch)
    _index_array(indices, "take_along_dim")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    dim = _one_dim(dim, input.ndim)
    if indices.ndim != input.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices"
        )
    shape = np.broadcast_shapes(
        tuple(1 if d == dim else s for d, s in enumerate(input.shape)),
        tuple(1 if d == dim else s for d, s in enumerate(indices.shape)),
    )
    input_shape = tuple(input.shape[d] if d == dim else s for d, s in enumerate(shape))
    index_shape = tuple(indices.shape[d] if d == dim else s for d, s in enumerate(shape))
    # expanded even where the shapes already fit, as in PyTorch: gather then saves that new view
    # (ExpandBackward0), so a later input.detach_() leaves the saved tensor's history alone
    return gather(input.expand(input_shape), dim, indices.expand(index_shape))


# ---- index_select (and index_add, its gradient) -----------------------------------------------------


class IndexSelect(Op):
    node_name = "IndexSelectBackward0"
    saves_constants = True  # the index (PyTorch's _saved_index)
    derivative = "the gradient is added back at the selected rows (repeats add up)"

    @staticmethod
    def forward(ctx, input, dim, index):
        ctx.shape, ctx.dim, ctx.index = input._data.shape, dim, index
        data = input._data.reshape(1) if input._data.ndim == 0 else input._data
        out = np.take(data, index._data.reshape(-1), axis=dim)
        return out.reshape(()) if input._data.ndim == 0 else out

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.apply(_zeros(ctx.shape, grad), grad, dim=ctx.dim, index=ctx.index)


class IndexAdd(Op):
    """input with alpha·source's slices added at the positions `index` names along `dim`."""

    node_name = "IndexAddBackward0"
    saves_constants = True  # the index and alpha (PyTorch's _saved_index, _saved_alpha)
    derivative = "1 for input; for source, alpha times the gradient at the rows it was added to"

    @staticmethod
    def forward(ctx, input, source, dim, index, alpha=1):
        ctx.dim, ctx.index, ctx.alpha, ctx.source_shape = dim, index, alpha, source.shape
        out = input._data.copy()
        flat = out.reshape(1) if out.ndim == 0 else out
        added = source._data.reshape(1) if source._data.ndim == 0 else source._data
        if alpha != 1:
            added = added * np.asarray(alpha, dtype=out.dtype)  # (PyTorch's alpha, in x's dtype)
        if flat.size:  # (a 2-d+ tensor with no elements takes any index: nothing is added)
            np.add.at(flat, (slice(None),) * dim + (index._data.reshape(-1),), added)
        return out

    @staticmethod
    def backward(ctx, grad):
        if not grad.numel():  # nothing was added: source's gradient is zeros
            return grad, _zeros(ctx.source_shape, grad)
        grad_source = IndexSelect.apply(grad, dim=ctx.dim, index=ctx.index)
        if grad_source.shape != ctx.source_shape:  # a 0-d source: one slice of one element
            grad_source = grad_source.reshape(ctx.source_shape)
        return grad, grad_source if ctx.alpha == 1 else grad_source * ctx.alpha


@public("index_select", method=True)
def index_select(input, dim, index):
    read_histories_first(input)  # (autograd before the checks, as in PyTorch)
    dim = _one_dim(dim, input.ndim)
    array = _index_array(index, "index_select")
    if array.ndim > 1:
        raise IndexError(
            f"index_select(): Index is supposed to be a vector (1-D), got {array.ndim} dims. "
            "Fix: flatten it with index.reshape(-1)."
        )
    size = input._data.shape[dim] if input.ndim else 1
    if input.ndim > 1 and size == 0 and array.size:  # PyTorch's check for this case comes first
        raise RuntimeError(
            f"index_select(): self indexing axis dim should be positive: dim {dim} has size 0, "
            "so there is nothing to select. Fix: use an empty index, or a tensor with elements."
        )
    if array.size and (int(np.min(array)) < 0 or int(np.max(array)) >= size):
        # PyTorch's CPU kernel for dim 1 of a 2-d+ tensor is a separate loop, with its own check,
        # and so is the one for a 2-d+ tensor with no elements (another dim of size 0)
        own_check = input.ndim > 1 and (dim == 1 or input.numel() == 0)
        error = RuntimeError if own_check else IndexError
        raise error(
            f"index out of range in self: index_select() along dim {dim} of size {size} got "
            f"indices from {int(np.min(array))} to {int(np.max(array))}; they must lie in "
            f"0..{size - 1} (PyTorch: INDICES element is out of DATA bounds)"
        )
    return IndexSelect.apply(input, dim=dim, index=index)


# ---- masks ------------------------------------------------------------------------------------------


def _check_mask(mask, op):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask._data.dtype != np.bool_:
        raise RuntimeError(
            f"{op} only supports boolean masks, but got mask with dtype {mask.dtype}. "
            "Fix: make it a bool tensor, e.g. mask.bool() or (x > 0)."
        )


class MaskedFill(Op):
    node_name = "MaskedFillBackward0"
    saves_constants = True  # the mask (PyTorch's _saved_mask)
    derivative = "0 where the mask is True (the value replaced it), 1 elsewhere"

    @staticmethod
    def forward(ctx, input, mask, value):
        ctx.mask = mask
        filled = np.where(mask._data, value, input._data).astype(input._data.dtype, copy=False)
        # row-major whatever input's layout: PyTorch fills a contiguous clone of input
        return row_major(filled)

    @staticmethod
    def backward(ctx, grad):
        return MaskedFill.apply(grad, mask=ctx.mask, value=0)


class MaskedFillTensor(Op):
    """masked_fill with a 0-d tensor as the value: the value gets the gradient of every place
    it filled (summed)."""

    node_name = "MaskedFillBackward1"
    saves_constants = True  # the mask (PyTorch's _saved_mask)
    derivative = "input: 0 where the mask is True; value: the sum of the gradient there"

    @staticmethod
    def forward(ctx, input, value, mask):
        ctx.mask = mask
        filled = np.where(mask._data, value._data, input._data).astype(
            input._data.dtype, copy=False
        )
        return row_major(filled)  # (as MaskedFill's)

    @staticmethod
    def backward(ctx, grad):
        grad_value = MaskedFill.apply(grad, mask=ctx.mask.logical_not(), value=0)
        return MaskedFill.apply(grad, mask=ctx.mask, value=0), grad_value


@public("masked_fill", method=True, inplace=True)
def masked_fill(input, mask, value):
    _check_mask(mask, "masked_fill_")
    check_broadcastable(input.shape, mask.shape)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s). Fix: pass a number, or value.reshape(()) if it "
                "holds one element."
            )
        # PyTorch fills with the number the tensor holds, converted as any number is
        promotion.check_value_fits(value.item(), input.dtype)
        return MaskedFillTensor.apply(input, value, mask=mask)
    promotion.check_value_fits(value, input.dtype)
    return MaskedFill.apply(input, mask=mask, value=value)


class MaskedSelect(Op):
    node_name = "MaskedSelectBackward0"
    derivative = "the gradient goes back to the selected places, 0 elsewhere"
    saved_names = ("self", "mask")

    @staticmethod
    def forward(ctx, input, mask):
        shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
        ctx.shape = shape
        # both, as PyTorch: changing the input or the mask in place then makes backward refuse
        ctx.save_for_backward(input, mask)
        return np.broadcast_to(input._data, shape)[mask.expand(shape)._data]

    @staticmethod
    def backward(ctx, grad):
        _, mask = ctx.saved_tensors
        return MaskedScatter.apply(_zeros(ctx.shape, grad), grad, mask=mask.expand(ctx.shape))


class MaskedScatter(Op):
    """input with the places where mask is True filled, in order, by source's elements."""

    node_name = "MaskedScatterBackward0"
    derivative = "input: 0 where the mask is True; source: the gradient at the filled places"

    @staticmethod
    def forward(ctx, input, source, mask):
        ctx.mask = mask
        out = input._data.copy()
        out[mask._data] = source._data
        return out

    @staticmethod
    def backward(ctx, grad):
        return MaskedFill.apply(grad, mask=ctx.mask, value=0), MaskedSelect.apply(
            grad, mask=ctx.mask
        )


@public("masked_select", method=True)
def masked_select(input, mask):
    read_histories_first(input)  # (autograd before the checks, as in PyTorch)
    _check_mask(mask, "masked_select")
    try:
        np.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        raise RuntimeError(
            f"masked_select(): the mask's shape {list(mask.shape)} does not broadcast with the "
            f"input's {list(input.shape)}"
        ) from None
    return MaskedSelect.apply(input, mask=mask)


# ---- where the non-zero elements are ----------------------------------------------------------------


@public("nonzero", method=True)
def nonzero(input, *, as_tuple=False):
    """The indices of the non-zero elements: one row [i, j, ...] per element (int64, never
    differentiable); as_tuple=True: one index tensor per dim, ready for x[...]."""
    data = input._data
    flat = data.reshape(1) if data.ndim == 0 else data  # a 0-d tensor counts as one element
    places = np.nonzero(flat)
    rows = places[0].shape[0]
    if as_tuple:  # PyTorch's are the columns of nonzero()'s result (of a 0-d one as 1-d), unbound:
        # views of it, so detach_() refuses them as any view
        by_dim = np.stack(places, axis=0).astype(np.int64, copy=False)
        return unbind(_make(_with_strides(by_dim.T, (1, rows))), 1)
    if data.ndim == 0:  # PyTorch: shape (1, 0) for a non-zero number, (0, 0) for zero
        by_dim = np.zeros_like(places[0], dtype=np.int64, shape=(0, rows))
    else:
        by_dim = np.stack(places, axis=0).astype(np.int64, copy=False)
    # PyTorch fills the indices dim by dim: the result is column-major, stride (1, rows)
    return _make(_with_strides(by_dim.T, (1, rows)))


@public("argwhere", method=True)
def argwhere(input):
    return nonzero(input)


def check_index_add_arguments(input, dim, index, source):
    """index_add's checks of its arguments, as PyTorch makes them before it looks at the memory
    it writes (ops/overlap.py): the dim, the index, the count of indices, source's shape and
    dtype. (The index values are checked as they are used, after the memory.) Returns the dim,
    counted from 0, and the index as an array."""
    dim = _one_dim(dim, input.ndim)
    places = _index_array(index, "index_add")
    if places.ndim > 1:
        raise IndexError(
            f"index_add(): Index is supposed to be a vector, but got {places.ndim} dims: one "
            "entry per slice of source. Fix: flatten it with index.reshape(-1)."
        )
    if places.size != (source.shape[dim] if source.ndim else 1):
        raise RuntimeError(
            f"index_add(): Number of indices ({places.size}) should be equal to source.size(dim) "
            f"({source.shape[dim] if source.ndim else 1}), for dim {dim}: one index for each "
            "slice of source along dim."
        )
    others = [s for d, s in enumerate(input.shape) if d != dim]
    if source.ndim and (
        source.ndim != input.ndim or others != [s for d, s in enumerate(source.shape) if d != dim]
    ):
        raise RuntimeError(
            "index_add(): source tensor shape must match self tensor shape, excluding the "
            f"specified dimension. Got self.shape = {list(input.shape)} source.shape = "
            f"{list(source.shape)}: each slice of source is added to a slice of self."
        )
    if source.dtype != input.dtype:  # (before the index values are looked at)
        raise RuntimeError(
            f"index_add_(): self ({types.kernel_name(input.dtype)}) and source "
            f"({types.kernel_name(source.dtype)}) must have the same scalar type: index_add adds "
            "source into self without converting it. Fix: convert source first, "
            "source.to(x.dtype)."
        )
    return dim, places


@public("index_add", method=True, inplace=True)
def index_add(input, dim, index, source, *, alpha=1):
    """input with alpha * source[i] added at position index[i] along dim (a repeated index adds
    up): the sum of scatter_add, with one index per slice instead of one per element."""
    read_histories_first(input, source)  # (autograd before the checks, as in PyTorch)
    dim, places = check_index_add_arguments(input, dim, index, source)
    size = input._data.shape[dim] if input.ndim else 1
    # PyTorch looks at the index values only where it adds something: a 2-d+ tensor with no
    # elements (an empty dim, say) takes any index
    adds_something = places.size and (input.ndim <= 1 or input.numel())
    if adds_something and (int(np.min(places)) < 0 or int(np.max(places)) >= size):
        bad = int(np.min(places)) if int(np.min(places)) < 0 else int(np.max(places))
        # along the first or last dim of a 2-d+ tensor, with int64 indices and alpha 1, PyTorch's
        # CPU kernel hands the work to scatter_add, whose check is a RuntimeError
        as_scatter_add = dim in (0, input.ndim - 1) and alpha == 1 and places.dtype == np.int64
        if input.ndim > 1 and as_scatter_add:
            raise RuntimeError(
                f"index_add(): index {bad} is out of bounds for dimension {dim} with size {size}. "
                f"Index values must lie in 0..{size - 1}."
            )
        raise IndexError(
            f"index out of range in self: index_add() along dim {dim} of size {size} got index "
            f"{bad}; each must be at least 0 and below {size}."
        )
    if not input.is_floating_point() and not input.is_complex():
        # PyTorch's kernel converts alpha for a 1-d tensor always, for a 2-d+ one only when it
        # adds something (inf does not fit: its overflow error)
        if input.ndim > 1 and not adds_something:
            alpha = 1  # never converted: any alpha goes
        elif input.dtype is not types.bool_:
            promotion.check_fits("alpha", alpha, input.dtype)
        alpha = int(alpha)  # PyTorch converts alpha to the input's integer dtype: 0.25 becomes 0
    return IndexAdd.apply(input, source, dim=dim, index=index, alpha=alpha)
