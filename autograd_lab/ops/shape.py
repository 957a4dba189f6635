"""Shape operations: views (reshape, transpose, ...), joining and splitting, and indexing.

Most of these are *views* in PyTorch: the result shares the input's storage. numpy views give us
the same behaviour; `_view` also shares the version counter and remembers the base tensor, so an
in-place change through a view is noticed by backward.
"""

import warnings

import numpy as np

from .. import storage, types
from ..autograd.function import Op
from ..tensor import Tensor, _make
from .reduction import _dims
from .registry import public


def _one_dim(dim, ndim):
    """One normalized dimension index (a 0-d tensor accepts 0 and -1)."""
    dims = _dims(dim, ndim)
    return dims[0] if dims else 0


def _view(x, array):
    """A tensor over `array`, a numpy view of x's storage: same version counter, `_base` is x."""
    out = _make(array)
    if np.may_share_memory(array, x._data):
        out._version_counter = x._shared_version_counter()
        out._base = x if x._base is None else x._base
    return out


def _shape_arg(shape, function, argument):
    """Accept both `reshape(2, 3)` and `reshape((2, 3))`, as PyTorch does; but not `reshape()`:
    PyTorch wants the sizes said, even for a 0-d result (`reshape(())`)."""
    if not shape:
        raise TypeError(
            f'{function}() missing 1 required positional arguments: "{argument}". Fix: give '
            f"them, e.g. x.{function}(2, 3), or () for none."
        )
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


class View(Op):
    node_name = "ViewBackward0"
    derivative = "reshape the gradient back"

    @staticmethod
    def forward(ctx, x, shape, copy_ok=False):
        ctx.shape = x._data.shape
        try:
            array = np.reshape(x._data, shape, copy=None if copy_ok else False)
        except ValueError as error:
            if "copy" in str(error):
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride: "
                    f"view{tuple(shape)} cannot be a view of this tensor, as its elements are not "
                    "laid out contiguously in memory (after a transpose, say). Fix: use "
                    ".reshape(...), which copies when it has to."
                ) from None
            raise RuntimeError(
                f"shape {list(shape)} is invalid for a tensor of {x._data.size} elements "
                f"(shape {list(x._data.shape)})"
            ) from None
        return _view(x, array)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


class Permute(Op):
    node_name = "PermuteBackward0"
    derivative = "permute the gradient back"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return _view(x, np.transpose(x._data, dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(tuple(np.argsort(ctx.dims)))


class Transpose(Op):
    node_name = "TransposeBackward0"
    derivative = "transpose the gradient back"

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return _view(x, np.swapaxes(x._data, dim0, dim1))

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims)


class Squeeze(Op):
    node_name = "SqueezeBackward0"
    derivative = "put the squeezed dims back into the gradient"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.shape = x._data.shape
        dims = tuple(d for d in dims if x._data.shape[d] == 1)  # squeezing a size > 1 dim: no-op
        return _view(x, np.squeeze(x._data, axis=dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


class SqueezeDim(Squeeze):
    node_name = "SqueezeBackward1"


class Unsqueeze(Op):
    node_name = "UnsqueezeBackward0"
    derivative = "squeeze the added dim out of the gradient"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return _view(x, np.expand_dims(x._data, dim))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim)


class Expand(Op):
    """Broadcast to a bigger shape without copying. The engine sums the gradient back down."""

    node_name = "ExpandBackward0"
    derivative = "sum the gradient over the expanded dims"

    @staticmethod
    def forward(ctx, x, shape):
        try:
            return _view(x, np.broadcast_to(x._data, shape))
        except ValueError:
            raise RuntimeError(
                f"cannot expand shape {list(x._data.shape)} to {list(shape)}: only dimensions of "
                "size 1 can be expanded (and new ones added on the left)"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        return grad  # engine._fit sums it to the input's shape: broadcasting is undone in one place


class Cat(Op):
    node_name = "CatBackward0"
    derivative = "split the gradient back into the pieces"

    @staticmethod
    def forward(ctx, *tensors, dim=0):
        arrays = [t._data for t in tensors]
        dtype = arrays[0].dtype  # PyTorch's promotion: cat([int64, float32]) is float32
        for a in arrays[1:]:  # (an empty array stands for "a tensor with dims of this dtype")
            dtype = types.result_type(np.empty(0, dtype), a)
        arrays = [a if a.dtype == dtype else a.astype(dtype) for a in arrays]
        ctx.dim = dim
        ctx.sizes = [a.shape[dim] for a in arrays]
        try:
            return np.concatenate(arrays, axis=dim)
        except ValueError as error:
            shapes = ", ".join(str(list(a.shape)) for a in arrays)
            raise RuntimeError(
                f"cat() along dim {dim} cannot join shapes {shapes}: {error}"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        bounds = np.cumsum([0] + ctx.sizes)
        lead = (slice(None),) * (ctx.dim % grad.ndim)
        return tuple(grad[lead + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:]))


class Stack(Op):
    node_name = "StackBackward0"
    derivative = "unstack the gradient"

    @staticmethod
    def forward(ctx, *tensors, dim=0):
        ctx.dim = dim
        try:
            return np.stack([t._data for t in tensors], axis=dim)
        except ValueError:
            shapes = ", ".join(str(list(t._data.shape)) for t in tensors)
            raise RuntimeError(f"stack() needs tensors of equal shape, got {shapes}") from None

    @staticmethod
    def backward(ctx, grad):
        return tuple(grad.unbind(ctx.dim))


class Split(Op):
    """One node with several outputs, one per piece (PyTorch's SplitBackward0)."""

    node_name = "SplitBackward0"
    derivative = "concatenate the pieces' gradients"

    @staticmethod
    def forward(ctx, x, sizes, dim):
        ctx.dim = dim
        cuts = np.cumsum(sizes)[:-1].tolist()  # numbers, not an array: they say where, not what
        return tuple(_view(x, piece) for piece in np.split(x._data, cuts, axis=dim))

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, dim=ctx.dim)


# ---- indexing ---------------------------------------------------------------------------------------


def _numpy_index(index, device):
    """Translate a PyTorch index (ints, slices, None, ..., tensors, lists) into a numpy index
    for a tensor on `device`."""
    parts = index if isinstance(index, tuple) else (index,)
    out = []
    for part in parts:
        if isinstance(part, Tensor):
            if part.is_cuda and device.type == "cpu":  # numpy would quietly copy them to the host
                raise RuntimeError(
                    "indices should be either on cpu or on the same device as the indexed tensor "
                    "(cpu), but they are on cuda:0. Fix: move the indices with .cpu(), or the "
                    "tensor with .to('cuda')."
                )
            part = part._data
            if part.dtype.kind == "f" or part.dtype in (np.int8, np.int16):
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors, not "
                    f"{part.dtype}; convert with .long()"
                )
            if part.dtype == np.uint8:  # PyTorch's old mask dtype: read as a mask, with a warning
                warnings.warn(
                    "indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                    "torch.bool instead.",
                    UserWarning,
                    stacklevel=4,
                )
                part = part.astype(np.bool_)
        elif isinstance(part, slice) and part.step is not None and part.step <= 0:
            raise ValueError(
                f"step must be greater than zero (got {part.step}): tensors cannot be sliced "
                "backwards. Fix: x.flip(dim) reverses a dimension, e.g. x.flip(0) for x[::-1]."
            )
        elif isinstance(part, list):
            # an empty list picks nothing: int64 indices, as PyTorch reads it (numpy: float64)
            part = np.asarray(part) if part else np.zeros(0, np.int64)
        out.append(part)
    return tuple(out)


def _index_kind(index):
    """PyTorch's node name for an indexing expression (it records one node per kind)."""
    if any(isinstance(p, (np.ndarray, bool)) or storage.is_device_array(p) for p in index):
        return Index
    if any(isinstance(p, slice) for p in index):
        return Slice
    if any(isinstance(p, (int, np.integer)) for p in index):
        return Select
    if any(p is None for p in index):
        return IndexUnsqueeze
    return Alias


class Index(Op):
    node_name = "IndexBackward0"
    derivative = "the gradient is added at the indexed places (repeats add up)"

    @staticmethod
    def forward(ctx, x, index):
        ctx.shape, ctx.dtype, ctx.index = x._data.shape, x._data.dtype, index
        try:
            return _view(x, x._data[index])
        except IndexError as error:
            raise IndexError(
                f"{error} (indexing a tensor of shape {list(x._data.shape)})"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        return IndexGrad.apply(grad, shape=ctx.shape, index=ctx.index)


class Select(Index):
    node_name = "SelectBackward0"
    derivative = "the gradient goes to the selected elements, 0 elsewhere"


class Slice(Index):
    node_name = "SliceBackward0"
    derivative = "the gradient goes to the sliced elements, 0 elsewhere"


class IndexUnsqueeze(Index):
    node_name = "UnsqueezeBackward0"
    derivative = Unsqueeze.derivative


class Alias(Index):
    node_name = "AliasBackward0"
    derivative = "1: the gradient passes through"


class IndexGrad(Op):
    """Backward of indexing: a zero tensor with `grad` added at the indexed places.

    `np.add.at` adds once per occurrence, so an index repeated twice gets its gradient twice.
    """

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, shape, index):
        ctx.index = index
        out = np.zeros_like(grad._data, shape=shape)  # on grad's device
        np.add.at(out, index, grad._data)
        return out

    @staticmethod
    def backward(ctx, grad):
        return Index.apply(grad, index=ctx.index)


class IndexPut(Op):
    """The out-of-place half of `x[index] = value`."""

    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, x, value, index):
        ctx.index = index
        out = x._data.copy()
        if isinstance(value, Tensor):
            storage.check_same_device(x._data, value._data)
            value = value._data
        out[index] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        grad_x = IndexPut.apply(grad, 0.0, index=ctx.index)
        return grad_x, Index.apply(grad, index=ctx.index)


# ---- the public functions ---------------------------------------------------------------------------


@public("reshape", method=True)
def reshape(input, *shape):
    return View.apply(
        input, shape=_resolve(input, _shape_arg(shape, "reshape", "shape")), copy_ok=True
    )


@public("view", method=True)
def view(input, *shape):
    return View.apply(input, shape=_resolve(input, _shape_arg(shape, "view", "size")))


def _resolve(x, shape):
    """Replace a -1 in `shape` by the size that makes the element count work out."""
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        if shape.count(-1) > 1 or known == 0 or x._data.size % known:
            raise RuntimeError(
                f"shape {list(shape)} is invalid for a tensor of {x._data.size} elements"
            )
        shape = tuple(x._data.size // known if s == -1 else s for s in shape)
    return shape


@public("flatten", method=True)
def flatten(input, start_dim=0, end_dim=-1):
    shape = input._data.shape
    if not shape:
        return reshape(input, 1)
    start, end = start_dim % len(shape), end_dim % len(shape)
    if start == end:
        return input  # nothing to merge: PyTorch hands back the tensor itself, not a view
    return reshape(input, shape[:start] + (-1,) + shape[end + 1 :])


@public("transpose", "swapaxes", "swapdims", method=True)
def transpose(input, dim0, dim1):
    return Transpose.apply(input, dim0=_one_dim(dim0, input.ndim), dim1=_one_dim(dim1, input.ndim))


@public("permute", method=True)
def permute(input, *dims):
    dims = _shape_arg(dims, "permute", "dims")
    if sorted(d % max(input.ndim, 1) for d in dims) != list(range(input.ndim)):
        raise RuntimeError(f"permute{dims} must list each of the tensor's {input.ndim} dims once")
    return Permute.apply(input, dims=tuple(d % input.ndim for d in dims))


@public("movedim", "moveaxis", method=True)
def movedim(input, source, destination):
    """Move dim(s) `source` to position(s) `destination`; the other dims keep their order."""
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
            f"contain the same number of dims as destination ({list(destination)} dims)"
        )
    source = [_one_dim(d, input.ndim) for d in source]
    destination = [_one_dim(d, input.ndim) for d in destination]
    for name, dims in (("source", source), ("destination", destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    rest = iter(d for d in range(input.ndim) if d not in source)
    moved = dict(zip(destination, source))
    order = [moved[d] if d in moved else next(rest) for d in range(input.ndim)]
    return Permute.apply(input, dims=tuple(order))


@public("squeeze", method=True)
def squeeze(input, dim=None):
    if dim is None:
        return Squeeze.apply(input, dims=tuple(range(input.ndim)))
    return SqueezeDim.apply(input, dims=_dims(dim, input.ndim))


@public("unsqueeze", method=True)
def unsqueeze(input, dim):
    ndim = input.ndim + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"unsqueeze dim {dim} is out of range for the result's {ndim} dims")
    return Unsqueeze.apply(input, dim=dim % ndim)


@public("expand", method=True)
def expand(input, *sizes):
    sizes = _shape_arg(sizes, "expand", "size")
    lead = len(sizes) - input.ndim
    shape = tuple(input.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return Expand.apply(input, shape=shape)


@public("expand_as", method=True)
def expand_as(input, other):
    return expand(input, other.shape)


@public("broadcast_to", method=True)
def broadcast_to(input, shape):
    return expand(input, shape)


@public("cat", "concat", "concatenate", out=True)
def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("cat() needs a non-empty list of tensors")
    return Cat.apply(*tensors, dim=_one_dim(dim, tensors[0].ndim))


@public("stack", out=True)
def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack() needs a non-empty list of tensors")
    return Stack.apply(*tensors, dim=_one_dim(dim, tensors[0].ndim + 1))


@public("split", method=True)
def split(input, split_size_or_sections, dim=0):
    axis = _one_dim(dim, input.ndim)
    n = input.shape[axis]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        sizes = [min(step, n - start) for start in range(0, n, step)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split sizes {sizes} must add up to the dimension's size {n}")
    return Split.apply(input, sizes=sizes, dim=axis)


@public("chunk", method=True)
def chunk(input, chunks, dim=0):
    n = input.shape[_one_dim(dim, input.ndim)]
    return split(input, -(-n // chunks), dim)


@public("unbind", method=True)
def unbind(input, dim=0):
    axis = _one_dim(dim, input.ndim)
    lead = (slice(None),) * axis
    return tuple(input[lead + (i,)] for i in range(input.shape[axis]))


def index(input, index):
    index = _numpy_index(index, input.device)
    return _index_kind(index).apply(input, index=index)


def index_put(input, value, index):
    return IndexPut.apply(input, value, index=_numpy_index(index, input.device))


@public("narrow", method=True)
def narrow(input, dim, start, length):
    axis = _one_dim(dim, input.ndim)
    size = input.shape[axis]
    if start < 0:
        start += size  # narrow(0, -1, 1) is the last element, as in PyTorch
    if not (0 <= start <= size and 0 <= length <= size - start):
        raise RuntimeError(
            f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size}), or "
            f"one is negative. Fix: give 0 <= start and start + length <= {size}."
        )
    return input[(slice(None),) * axis + (slice(start, start + length),)]
