"""Moving elements to new places: triangles, flips, rolls, repeats, diagonals, grids.

None of these computes a new value: each element of the result is an element of the input (or 0).
So every gradient here is the same move done backwards: flip the gradient back, roll it back,
add up the copies a repeat made, put a diagonal's gradient back on the diagonal.

    >>> x = autograd_lab.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.tril()                  # keep the lower triangle, zeros above the diagonal
    tensor([[1., 0.],
            [3., 4.]])
    >>> x.flip(0), x.roll(1, 1), x.trace()
"""

import numpy as np

from .. import storage, types
from ..autograd.function import Op
from ..layout import copy_keeping_layout, row_major
from ..tensor import _make
from .elementwise import _zeros, contiguous, where
from .reduction import _dims
from .registry import public
from .shape import Transpose, _at_places, _one_dim, _shape_arg, _view

# ---- triangles ----------------------------------------------------------------------------------


def _triangle(data, diagonal, lower):
    """A bool mask over the last two dims: True on and below (lower) or on and above the
    `diagonal`-th diagonal (0 the main one, 1 the one above it, -1 the one below)."""
    rows, cols = data.shape[-2:]
    device = storage.device_of(data)
    row = storage.new(np.arange, rows, dtype=np.int64, device=device).reshape(-1, 1)
    col = storage.new(np.arange, cols, dtype=np.int64, device=device).reshape(1, -1)
    return (col - row <= diagonal) if lower else (col - row >= diagonal)


class Tril(Op):
    node_name = "TrilBackward0"
    derivative = "1 on and below the diagonal, 0 above: the gradient is masked the same way"
    _lower = True

    @staticmethod
    def forward(ctx, input, diagonal):
        ctx.diagonal = diagonal
        data = input._data
        keep = _triangle(data, diagonal, ctx._fn._lower)
        # a new row-major tensor, as PyTorch's tril and triu give whatever the input's layout
        return row_major(np.where(keep, data, 0).astype(data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        return ctx._fn.apply(grad, diagonal=ctx.diagonal)


class Triu(Tril):
    node_name = "TriuBackward0"
    derivative = "1 on and above the diagonal, 0 below: the gradient is masked the same way"
    _lower = False


def _check_matrix(input, op):
    if input.ndim < 2:
        raise RuntimeError(
            f"{op}: input tensor must have at least 2 dimensions (got {input.ndim}); the triangle "
            "is taken in the last two. Fix: reshape a vector into a matrix first."
        )


@public("tril", method=True, inplace=True)
def tril(input, diagonal=0):
    _check_matrix(input, "tril")
    return Tril.apply(input, diagonal=int(diagonal))


@public("triu", method=True, inplace=True)
def triu(input, diagonal=0):
    _check_matrix(input, "triu")
    return Triu.apply(input, diagonal=int(diagonal))


# ---- flip, roll, repeat -----------------------------------------------------------------------------


class Flip(Op):
    node_name = "FlipBackward0"
    derivative = "flip the gradient back"

    @staticmethod
    def forward(ctx, input, dims):
        ctx.dims = dims
        backwards = [slice(None, None, -1) if d in dims else slice(None) for d in range(input.ndim)]
        # a copy, as in PyTorch (numpy's is a view), laid out in memory as the input is (PyTorch
        # makes it with empty_like: a flipped transposed matrix is transposed in memory too)
        return copy_keeping_layout(input._data[tuple(backwards)], like=input._data)

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, dims=ctx.dims)


@public("flip", method=True)
def flip(input, *dims, **keyword):
    """x.flip(0, 1), flip(x, (0, 1)) and flip(x, dims=[0, 1]) all work, as in PyTorch."""
    if "dims" in keyword:
        dims = (keyword.pop("dims"),)
    if keyword:
        raise TypeError(f"flip() got an unexpected keyword argument {next(iter(keyword))!r}")
    return Flip.apply(input, dims=_dims(_shape_arg(dims, "flip", "dims"), input.ndim))


class Roll(Op):
    node_name = "RollBackward0"
    derivative = "roll the gradient back the other way"

    @staticmethod
    def forward(ctx, input, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        data = input._data
        for shift, dim in zip(shifts, dims):
            size = data.shape[dim]
            if size:
                # element i of the result is element (i - shift) of the input, wrapping around
                source = (np.arange(size) - shift) % size
                data = data[(slice(None),) * dim + (source,)]
        # a new row-major tensor, as PyTorch's roll gives (numpy's picks follow the input's layout)
        return row_major(data) if data is not input._data else data.copy()

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, shifts=tuple(-s for s in ctx.shifts), dims=ctx.dims)


class RollFlat(Op):
    """roll without dims: the elements are rolled in their flattened order."""

    node_name = "RollBackward0"
    derivative = Roll.derivative

    @staticmethod
    def forward(ctx, input, shift):
        ctx.shift = shift
        flat = np.reshape(input._data, -1)
        size = flat.shape[0]
        source = (np.arange(size) - shift) % max(size, 1)
        return np.reshape(flat[(source,)], input._data.shape)

    @staticmethod
    def backward(ctx, grad):
        return RollFlat.apply(grad, shift=-ctx.shift)


@public("roll", method=True)
def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(
                f"roll() without dims takes one shift, got {len(shifts)}: the tensor is rolled "
                "as if flattened. Fix: give one dim per shift, e.g. roll((1, 2), dims=(0, 1))."
            )
        return RollFlat.apply(input, shift=int(shifts[0]))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}; give one "
            "shift per dim."
        )
    if input._data.size == 0:  # nothing to move: PyTorch returns a copy without reading dims
        return Roll.apply(input, shifts=(), dims=())
    dims = tuple(_one_dim(d, input.ndim) for d in dims)
    return Roll.apply(input, shifts=tuple(int(s) for s in shifts), dims=dims)


class Repeat(Op):
    node_name = "RepeatBackward0"
    derivative = "add up the gradients of all the copies"

    @staticmethod
    def forward(ctx, input, repeats):
        lead = len(repeats) - input._data.ndim
        shape = (1,) * lead + input._data.shape
        ctx.input_shape, ctx.repeats, ctx.shape = input._data.shape, repeats, shape
        # (r0, s0, r1, s1, ...): copy number k of the block along dim d sits at index k of r_d
        spread = [n for pair in zip(repeats, shape) for n in pair]
        block = np.reshape(input._data, [n for s in shape for n in (1, s)])
        copies = np.broadcast_to(block, spread).copy()
        return np.reshape(copies, [r * s for r, s in zip(repeats, shape)])

    @staticmethod
    def backward(ctx, grad):
        if 0 in ctx.repeats:  # no copies at all: the input's gradient is zeros, a constant (as
            return _zeros(ctx.input_shape, grad)  # PyTorch's: it does not require grad)
        spread = [n for pair in zip(ctx.repeats, ctx.shape) for n in pair]
        copies = tuple(range(0, len(spread), 2))
        return grad.reshape(spread).sum(dim=copies).reshape(ctx.input_shape)


@public("repeat", method=True, function=False)  # x.repeat(2, 1): PyTorch has no torch.repeat
def repeat(input, *repeats):
    repeats = _shape_arg(repeats, "repeat", "repeats")
    if len(repeats) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            f"tensor: the tensor has {input.ndim} dims and {len(repeats)} repeats were given. "
            "Fix: give one repeat count per dim, 1 for the dims to keep."
        )
    return Repeat.apply(input, repeats=repeats)


# ---- transposing a matrix, diagonals, trace -----------------------------------------------------


class T(Transpose):
    node_name = "TBackward0"
    derivative = "transpose the gradient back"

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return _view(x, np.swapaxes(x._data, dim0, dim1) if x._data.ndim == 2 else x._data)

    @staticmethod
    def backward(ctx, grad):
        return T.apply(grad, dim0=0, dim1=1)


@public("t", method=True)
def t(input):
    if input.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D. Fix: use "
            "transpose(dim0, dim1) (or .mT for the last two dims)."
        )
    return T.apply(input, dim0=0, dim1=1)


def _diagonal_places(rows, cols, offset):
    """Row and column numbers (numpy, on the host) of the `offset`-th diagonal of a rows x cols
    matrix."""
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    start_row, start_col = max(-offset, 0), max(offset, 0)
    return np.arange(length) + start_row, np.arange(length) + start_col


class Diagonal(Op):
    """A view of the diagonal of two dims (it goes last in the result), as in PyTorch."""

    node_name = "DiagonalBackward0"
    derivative = "the gradient goes back onto the diagonal, 0 elsewhere"

    @staticmethod
    def forward(ctx, input, offset, dim1, dim2):
        ctx.shape, ctx.args = input._data.shape, (offset, dim1, dim2)
        diagonal = np.diagonal(input._data, offset, dim1, dim2)
        return _view(input, _empty_diagonal_placed(diagonal, input, offset, dim1, dim2))

    @staticmethod
    def backward(ctx, grad):
        return DiagonalGrad.apply(grad, shape=ctx.shape, args=ctx.args)


def _empty_diagonal_placed(array, x, offset, dim1, dim2):
    """An empty diagonal with PyTorch's geometry (numpy starts it where x starts, stride one
    element): the diagonal steps over both dims at once (stride1 + stride2) and starts at its
    first element, offset places along dim2 (dim1 when offset < 0), unless it has no length."""
    if array.size or storage.is_device_array(array):
        return array
    others = [dim for dim in range(x.ndim) if dim not in (dim1, dim2)]
    sizes = [x.shape[dim] for dim in others] + [array.shape[-1]]
    strides = [x.stride(dim) for dim in others] + [x.stride(dim1) + x.stride(dim2)]
    start = x.storage_offset()
    if array.shape[-1]:
        start += offset * x.stride(dim2) if offset >= 0 else -offset * x.stride(dim1)
    return _at_places(x._data, sizes, strides, start)


class DiagonalCopy(Diagonal):
    node_name = "DiagonalBackward0_copy"  # diag(matrix): PyTorch prints this name

    @staticmethod
    def forward(ctx, input, offset, dim1, dim2):
        ctx.shape, ctx.args = input._data.shape, (offset, dim1, dim2)
        return np.diagonal(input._data, offset, dim1, dim2).copy()


class DiagonalGrad(Op):
    """Zeros of the input's shape with `grad` put on the diagonal: diagonal's backward."""

    node_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, args):
        offset, dim1, dim2 = args
        ctx.args = args
        out = np.zeros_like(grad._data, shape=shape)
        np.diagonal(out, offset, dim1, dim2)  # checks the arguments, as forward did
        rows, cols = _diagonal_places(shape[dim1], shape[dim2], offset)
        index = [slice(None)] * len(shape)
        index[dim1], index[dim2] = rows, cols  # the diagonal goes last, as np.diagonal puts it
        out[tuple(index)] = _diagonal_last(grad._data, dim1, dim2)
        return out

    @staticmethod
    def backward(ctx, grad):
        offset, dim1, dim2 = ctx.args
        return Diagonal.apply(grad, offset=offset, dim1=dim1, dim2=dim2)


def _diagonal_last(values, dim1, dim2):
    """np.diagonal puts the diagonal last; `x[..., rows, ..., cols, ...] = v` wants it where the
    advanced indices are (first, when dim1 and dim2 are not next to each other)."""
    if abs(dim1 - dim2) == 1 or values.ndim == 1:
        target = min(dim1, dim2)
    else:
        target = 0
    if target == values.ndim - 1:
        return values
    order = list(range(values.ndim - 1))
    order.insert(target, values.ndim - 1)
    return np.transpose(values, order)


@public("diagonal", method=True)
def diagonal(input, offset=0, dim1=0, dim2=1):
    dim1, dim2 = _one_dim(dim1, input.ndim), _one_dim(dim2, input.ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, offset=int(offset), dim1=dim1, dim2=dim2)


class DiagEmbed(Op):
    """diag(vector): a square matrix with the vector on its `diagonal`-th diagonal."""

    node_name = "DiagEmbedBackward0"
    derivative = "the gradient's diagonal"

    @staticmethod
    def forward(ctx, input, offset):
        ctx.offset = offset
        size = input._data.shape[0] + abs(offset)
        out = np.zeros_like(input._data, shape=(size, size))
        rows, cols = _diagonal_places(size, size, offset)
        out[rows, cols] = input._data
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, offset=ctx.offset, dim1=0, dim2=1)


@public("diag", method=True)
def diag(input, diagonal=0):
    if input.ndim == 1:
        return DiagEmbed.apply(input, offset=int(diagonal))
    if input.ndim == 2:
        return DiagonalCopy.apply(input, offset=int(diagonal), dim1=0, dim2=1)
    raise RuntimeError(
        f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D. Fix: for a batch of matrices use "
        "diagonal(dim1=-2, dim2=-1)."
    )


class Trace(Op):
    node_name = "TraceBackward0"
    derivative = "1 on the diagonal, 0 elsewhere"

    @staticmethod
    def forward(ctx, input):
        ctx.shape = input._data.shape
        data = input._data
        total = np.sum(np.diagonal(data), dtype=np.int64 if data.dtype.kind in "biu" else None)
        return np.asarray(total) if isinstance(total, np.generic) else total

    @staticmethod
    def backward(ctx, grad):
        rows, cols = ctx.shape
        diagonal = _make(storage.new(np.eye, rows, cols, dtype=bool, device=grad.device))
        # a select, not grad * eye: a nan or infinite grad reaches the diagonal only (nan * 0 is
        # nan), as PyTorch's index_fill_ of the diagonal gives it
        return where(diagonal, grad, 0.0)


@public("trace", method=True)
def trace(input):
    if input.dtype is types.bool_:  # PyTorch has no bool kernel, and checks that before the shape
        raise types.not_implemented_for("trace", input.dtype)
    if input.ndim != 2:
        raise RuntimeError(
            f"trace: expected a matrix, but got tensor with dim {input.ndim}. The trace is the sum "
            "of a matrix's diagonal. Fix: for a batch use x.diagonal(dim1=-2, dim2=-1).sum(-1)."
        )
    return Trace.apply(input)


# ---- grids and broadcasting -----------------------------------------------------------------------


def _tensors_arg(tensors):
    """Accept both f(a, b) and f([a, b]), as PyTorch does."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


@public("broadcast_tensors")
def broadcast_tensors(*tensors):
    tensors = _tensors_arg(tensors)
    shape = ()
    for tensor in tensors:
        shape = _broadcast_shape(shape, tuple(tensor.shape))
    # a tensor that already has the shape comes back itself, as in PyTorch
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def _broadcast_shape(a, b):
    """numpy's broadcast shape of a and b, or PyTorch's error naming the dim that does not fit."""
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        for dim in range(1, min(len(a), len(b)) + 1):
            if a[-dim] != b[-dim] and 1 not in (a[-dim], b[-dim]):
                raise RuntimeError(
                    f"The size of tensor a ({a[-dim]}) must match the size of tensor b "
                    f"({b[-dim]}) at non-singleton dimension {max(len(a), len(b)) - dim}"
                ) from None
        raise


@public("meshgrid")
def meshgrid(*tensors, indexing=None):
    """One grid per input: grid k holds input k's values along dim k, repeated along the others.
    indexing='ij' (the default) is matrix order; 'xy' swaps the first two dims (x along columns),
    as numpy's and MATLAB's meshgrid do."""
    tensors = _tensors_arg(tensors)
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for tensor in tensors:
        if tensor.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                f"shape {list(tensor.shape)}. Fix: flatten it with .reshape(-1)."
            )
    for tensor in tensors[1:]:  # a grid is one of the inputs, expanded: nothing is converted
        if tensor.dtype is not tensors[0].dtype:
            raise RuntimeError(
                f"torch.meshgrid: meshgrid expects all tensors to have the same dtype, got "
                f"{tensors[0].dtype} and {tensor.dtype}. Fix: convert them first, e.g. "
                "y.to(x.dtype)."
            )
    places = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        places[0], places[1] = 1, 0  # x varies along columns, y along rows
    sizes = [0] * len(tensors)
    for tensor, place in zip(tensors, places):
        sizes[place] = tensor.numel()
    grids = []
    for tensor, place in zip(tensors, places):
        shape = [1] * len(tensors)
        shape[place] = -1
        grids.append(tensor.reshape(shape).expand(sizes))
    return tuple(grids)


# ---- repeating each element, and splitting one dim into several ---------------------------------


@public("repeat_interleave", method=True)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element repeated in place: [1, 2].repeat_interleave(2) is [1, 1, 2, 2] (x.repeat(2)
    gives [1, 2, 1, 2]). `repeats` is a number, or a count per element along dim; without dim the
    input is flattened first. `torch.repeat_interleave(counts)` alone repeats each index i counts[i]
    times."""
    if repeats is None:  # repeat_interleave(counts): the indices 0, 1, ... each counts[i] times
        counts = np.asarray(input._data)
        return _make(np.repeat(np.arange(len(counts)), counts))
    if dim is None:
        input, dim = input.reshape(-1), 0
    dim = _one_dim(dim, input.ndim)
    if not isinstance(repeats, int) and repeats.numel() != 1:  # a count per element: pick rows
        counts = np.asarray(repeats._data).reshape(-1)  # the counts, on the host
        if len(counts) != input.shape[dim]:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{len(counts)} and input.size({dim}) = {input.shape[dim]}. Fix: give one count "
                "per element along dim, or a single number."
            )
        index = _make(np.repeat(np.arange(len(counts)), counts))
        return input.index_select(dim, index.to(input.device))
    times = int(repeats)  # one count for all: a new dim after dim, expanded, then merged
    shape = list(input.shape)
    spread = input.unsqueeze(dim + 1).expand(*shape[: dim + 1], times, *shape[dim + 1 :])
    # copied out first (always: even where nothing repeats, times 0 or 1, the result is a new
    # tensor, never a view of the input), so the merge is a plain view of the copy (ViewBackward0)
    copy = contiguous(spread)
    return copy.reshape(*shape[:dim], shape[dim] * times, *shape[dim + 1 :])


@public("unflatten", method=True)
def unflatten(input, dim, sizes):
    """Split dim into several: x of shape (2, 12) unflattened at dim 1 into (3, 4) is (2, 3, 4).
    One size may be -1 (worked out from the others), as in view()."""
    if input.ndim == 0:
        raise RuntimeError(
            "unflatten: a 0-d tensor (one number) has no dim to split. Fix: make it 1-d first, "
            "e.g. x.reshape(1)."
        )
    dim = _one_dim(dim, input.ndim)
    shape = list(input.shape)
    known = int(np.prod([s for s in sizes if s != -1]))
    fits = shape[dim] % known == 0 if -1 in sizes and known else shape[dim] == known
    if not sizes or not fits:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
            f"({shape[dim]}) in the input tensor. Fix: give sizes whose product is {shape[dim]}."
        )
    if -1 in sizes and known:
        # worked out from this dim alone: view() would count all the elements, none when empty
        sizes = [shape[dim] // known if s == -1 else s for s in sizes]
    return input.view(*shape[:dim], *sizes, *shape[dim + 1 :])
