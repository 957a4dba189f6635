"""Shape operations: views (reshape, transpose, ...), joining and splitting, and indexing.

Most of these are *views* in PyTorch: the result shares the input's storage. numpy views give us
the same behaviour; `_view` also shares the version counter and remembers the base tensor, so an
in-place change through a view is noticed by backward.
"""

import warnings

import numpy as np

from .. import promotion, storage, types
from ..autograd.function import Op
from ..autograd.grad_mode import is_grad_enabled
from ..backend import contiguous_strides
from ..layout import (
    empty_in_order,
    has_row_major_strides,
    in_suggested_layout,
    laid_out_like_operands,
    memory_order,
    row_major,
)
from ..tensor import Tensor, _make
from .elementwise import contiguous
from .reduction import _dims, _one_dim
from .registry import public


def _view(x, array):
    """A tensor over `array`, a numpy view of x's storage: same version counter, `_base` is x."""
    out = _make(array)
    if storage.same_storage(array, x._data):  # (np.may_share_memory misses empty views)
        out._version_counter = x._shared_version_counter()
        out._base = x if x._base is None else x._base
        out._view_version = out._version_counter[0]  # its history is that of this version
        out._one_of_several_views = x._one_of_several_views  # views of those views keep the mark
        out._made_in_no_grad = x._made_in_no_grad or not is_grad_enabled()  # (and this one)
    return out


def _several_views(x, arrays, node):
    """The views `arrays` of x that one op returns together, each marked as output i of `node`:
    Tensor._inplace_refusal refuses to change them in place, and Tensor._refresh_view_history
    to use them after their storage changed in place, as PyTorch does.

    Pieces of an x that wants no gradient are marked as views made in no_grad() instead (so
    PyTorch marks them): they have no node to belong to, and they are refused only if their
    base comes to want a gradient through an in-place op, with no_grad()'s message."""
    views = tuple(_view(x, array) for array in arrays)
    for output_nr, view in enumerate(views):
        if view._base is None:
            continue
        if x.requires_grad:
            view._one_of_several_views = (output_nr, node)
        else:
            view._made_in_no_grad = True
    return views


def _shape_arg(shape, function, argument):
    """Accept both `reshape(2, 3)` and `reshape((2, 3))`, as PyTorch does (but not `reshape()`)."""
    if not shape:
        raise TypeError(
            f'{function}() missing 1 required positional arguments: "{argument}". Fix: give it, '
            f"e.g. x.{function}(2, 3), or x.{function}(()) for an empty one."
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
        on_host = not storage.is_device_array(array)  # (a CudaArray keeps its own strides)
        if on_host and (array.size == 0 or not has_row_major_strides(x._data)):
            # numpy and PyTorch may give a dim of size 1 (or any dim of an empty view) different
            # strides; an x with exactly row-major strides gets row-major ones from both
            strides = view_strides(x.shape, x.stride(), tuple(shape))
            if strides is not None:
                array = _with_strides(array, strides)
        return _view(x, array)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


def view_strides(size, stride, shape):
    """The strides PyTorch gives `x.view(shape)` of an x of `size` and `stride`, or None where it
    cannot be a view. x's dims fall into runs, each dim of a run stepping exactly over the ones
    after it (a dim of size 1 steps nowhere, so it never breaks a run). The new dims are laid
    over the runs from the innermost, each stepping over the new dims inside it in its run; a
    new dim of size 1 gets the step of the place it falls in. So the strides of dims of size 1
    follow from where they fall, unlike numpy's: `zeros(6).reshape(3, 1, 2).transpose(0, 2)`,
    strides (1, 2, 2), views as (2, 1, 3) with strides (1, 6, 2)."""
    if not size:  # a 0-d x: every new dim has size 1
        return (1,) * len(shape)
    if 0 in size:  # nothing to step over: x's own strides, or row-major ones
        return tuple(stride) if tuple(size) == tuple(shape) else contiguous_strides(shape)
    strides = [0] * len(shape)
    new_dim = len(shape) - 1
    run_step = stride[-1]  # the step of the innermost dim of the run being laid over
    run_elements = new_elements = 1
    for dim in reversed(range(len(size))):
        run_elements *= size[dim]
        outer = dim - 1
        if outer >= 0 and (size[outer] == 1 or stride[outer] == run_elements * run_step):
            continue  # the dim outside still belongs to this run
        while new_dim >= 0 and (new_elements < run_elements or shape[new_dim] == 1):
            strides[new_dim] = new_elements * run_step
            new_elements *= shape[new_dim]
            new_dim -= 1
        if new_elements != run_elements:
            return None  # a new dim would straddle two runs
        if outer >= 0:
            run_step, run_elements, new_elements = stride[outer], 1, 1
    return tuple(strides) if new_dim == -1 else None


class ReshapeAlias(View):
    """A reshape of a non-contiguous tensor that can still be a view (of an expanded tensor,
    say): PyTorch records it under the name of its `_reshape_alias`."""

    node_name = "ReshapeAliasBackward0"


class UnsafeView(View):
    """A reshape of a fresh copy nobody else holds: the end of a reshape that had to copy, and
    of a batched matmul. PyTorch calls it `_unsafe_view`."""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x._data.shape
        # not a view of x, though it shares x's memory: x is a copy nobody else holds, so an
        # in-place change to the result cannot surprise anyone (PyTorch's reason for the name)
        return np.reshape(x._data, shape)


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
        if x._data.ndim == 0:  # dims 0 and -1 name a 0-d tensor's no dims: nothing to swap
            return _view(x, x._data[...])
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


class SqueezeDims(Squeeze):
    """`squeeze((0, 2))`: PyTorch's overload for a tuple or list of dims has its own name."""

    node_name = "SqueezeBackward2"


class Unsqueeze(Op):
    node_name = "UnsqueezeBackward0"
    derivative = "squeeze the added dim out of the gradient"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        strides = list(x.stride())
        # numpy gives the new dim stride 0; PyTorch the step over the whole dim after it (or 1)
        strides.insert(dim, x._data.shape[dim] * strides[dim] if dim < x._data.ndim else 1)
        return _view(x, _with_strides(np.expand_dims(x._data, dim), strides))

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
            array = np.broadcast_to(x._data, shape)  # read-only: elements repeat
        except ValueError:
            raise RuntimeError(
                f"cannot expand shape {list(x._data.shape)} to {list(shape)}: only dimensions of "
                "size 1 can be expanded (and new ones added on the left)"
            ) from None
        if array.size == x._data.size:  # nothing repeats: a plain view, writable as in PyTorch
            array = np.reshape(x._data, shape)
        return _view(x, _with_strides(array, expanded_strides(x.shape, x.stride(), shape)))

    @staticmethod
    def backward(ctx, grad):
        return grad  # engine._fit sums it to the input's shape: broadcasting is undone in one place


def expanded_strides(size, stride, shape):
    """PyTorch's strides for expanding a tensor of `size` and `stride` to `shape`, or None where
    the shapes do not fit: a dim that grows from 1 repeats its element (stride 0); a dim that
    stays keeps its stride; a new dim of size 1 gets the step over the dim after it (numpy would
    give it 0). Every stride of an expanded 0-d tensor is 0."""
    new_dims = len(shape) - len(size)
    if new_dims < 0:
        return None  # expand never takes dims away
    strides = [0] * len(shape)
    for i in reversed(range(len(shape))):
        if i >= new_dims:
            length, step = size[i - new_dims], stride[i - new_dims]
        else:
            length, step = 1, shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else 0
        if length != shape[i]:
            if length != 1:
                return None
            step = 0
        strides[i] = step
    return strides


def _with_strides(array, strides):
    """`array` seen with other (element) strides: only ever ones of dims of size 0 or 1, which
    never step, so the same elements; numpy and PyTorch choose those strides differently."""
    if storage.is_device_array(array):
        return array
    steps = tuple(step * array.itemsize for step in strides)
    return np.lib.stride_tricks.as_strided(array, strides=steps, writeable=array.flags.writeable)


def _promoted(arrays):
    """The arrays cat and stack join, in one dtype by PyTorch's promotion: [int64, float32] gives
    float32 (numpy would give float64)."""
    dtype = arrays[0].dtype
    for a in arrays[1:]:  # (empty arrays stand for "tensors with dims": stack's 0-d ones count
        dtype = types.result_type(np.empty(0, dtype), np.empty(0, a.dtype))  # as such too)
    return [a if a.dtype == dtype else a.astype(dtype) for a in arrays]


class Cat(Op):
    node_name = "CatBackward0"
    derivative = "split the gradient back into the pieces"

    @staticmethod
    def forward(ctx, *tensors, dim=0):
        arrays = _promoted([t._data for t in tensors])
        # PyTorch's legacy rule: a 1-D empty tensor (shape [0]) joins any shape by being left out
        ctx.left_out = [a.shape == (0,) for a in arrays]
        joined = [a for a, out in zip(arrays, ctx.left_out) if not out] or arrays
        ctx.dim = dim
        ctx.sizes = [0 if out else a.shape[dim] for a, out in zip(arrays, ctx.left_out)]
        try:
            return in_suggested_layout(np.concatenate(joined, axis=dim), joined)
        except ValueError as error:
            shapes = ", ".join(str(list(a.shape)) for a in arrays)
            raise RuntimeError(
                f"cat() along dim {dim} cannot join shapes {shapes}: {error}"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        bounds = np.cumsum([0] + ctx.sizes)
        lead = (slice(None),) * (ctx.dim % grad.ndim)
        pieces = [grad[lead + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:])]
        # a left-out input gets the gradient of its own (empty) shape: new zeros, as in PyTorch,
        # so a gradient taken with create_graph=True has no history there
        return tuple(
            _make(np.zeros_like(grad._data, shape=(0,))) if out else piece
            for piece, out in zip(pieces, ctx.left_out)
        )


class Stack(Op):
    node_name = "StackBackward0"
    derivative = "unstack the gradient"

    @staticmethod
    def forward(ctx, *tensors, dim=0):
        ctx.dim = dim
        try:
            arrays = _promoted([t._data for t in tensors])
            return in_suggested_layout(np.stack(arrays, axis=dim), arrays)
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
        pieces = np.split(x._data, cuts, axis=dim)
        # PyTorch narrows x to each piece: an empty one starts where it would start if it were not
        # empty, x.split([2, 0])[1] 2 places in (numpy starts it where x starts)
        starts = [0, *cuts]
        lead = (slice(None),) * dim
        pieces = [
            _empty_slice_placed(piece, x, (*lead, slice(start, start + piece.shape[dim]), ...))
            for piece, start in zip(pieces, starts)
        ]
        return _several_views(x, pieces, ctx.name().removesuffix("Backward0"))

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, dim=ctx.dim)


class SplitWithSizes(Split):
    """split() with a list of sizes: the same node under PyTorch's name for it."""

    node_name = "SplitWithSizesBackward0"


class Unbind(Op):
    """One node with an output per slice along dim, each without that dim (PyTorch's
    UnbindBackward0)."""

    node_name = "UnbindBackward0"
    derivative = "stack the slices' gradients"

    @staticmethod
    def forward(ctx, x, dim):
        # checked here, once apply has asked x for its grad_fn: PyTorch's order, so a stale
        # piece of another unbind is refused before its missing dims are
        dim = _one_dim(dim, x.ndim)  # a 0-d tensor takes dims -1 and 0, both meaning 0
        if x.ndim == 0:
            raise IndexError(
                f"Dimension specified as {dim} but tensor has no dimensions: a 0-d tensor (one "
                "number) has nothing to unbind. Fix: use it as it is, or x.reshape(1).unbind()."
            )
        ctx.dim = dim
        lead = (slice(None),) * dim
        # (the `...` keeps a slice of a 1-D tensor a 0-d view, where numpy would copy out a number)
        # (an empty slice starts at its own place, as PyTorch's select puts it: _empty_slice_placed)
        slices = [
            _empty_slice_placed(x._data[lead + (i, ...)], x, (*lead, i, ...))
            for i in range(x._data.shape[dim])
        ]
        return _several_views(x, slices, ctx.name().removesuffix("Backward0"))

    @staticmethod
    def backward(ctx, *grads):
        return stack(grads, dim=ctx.dim)


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
        elif isinstance(part, (list, range)):  # (x[range(n), y] in makemore: a sequence too)
            # an empty one picks nothing: int64 indices, as PyTorch reads it (numpy: float64)
            part = np.asarray(part) if len(part) else np.zeros(0, np.int64)
        out.append(part)
    return tuple(out)


def check_mask_for_masked_fill(input, index, value):
    """x[mask, ...] = value checks the masks after overlapping memory (index_put does), except
    where the first index tensor is a mask and the value has one element (on the CPU): PyTorch
    first tries to run masked_fill_, which checks that mask before anything else."""
    if isinstance(value, Tensor) and (value.numel() != 1 or storage.is_device_array(value._data)):
        return
    _check_masks(_numpy_index(index, input.device), input._data.shape, first_only=True)


def _check_masks(index, shape, first_only=False):
    """A bool mask must have exactly the shape of the dims it indexes (numpy lets some through).
    The dims are counted as PyTorch applies the index: None and True add a dim of 1, an int
    removes its dim, a slice keeps its dim with the sliced length. `first_only`: stop after the
    first index tensor (or mask)."""
    shape, dim = list(shape), 0
    for position, part in enumerate(index):
        if part is None or isinstance(part, bool):
            shape.insert(dim, 1)
            dim += 1
        elif part is Ellipsis:
            dim = len(shape) - sum(_dims_taken(p) for p in index[position + 1 :])
        elif isinstance(part, slice):
            if dim < len(shape):
                shape[dim] = len(range(*part.indices(shape[dim])))
            dim += 1
        elif isinstance(part, (int, np.integer)):
            del shape[dim : dim + 1]
        elif getattr(part, "dtype", None) == np.bool_:
            for offset, size in enumerate(part.shape):
                if dim + offset < len(shape) and size != shape[dim + offset]:
                    raise IndexError(
                        f"The shape of the mask {list(part.shape)} at index {offset} does not "
                        f"match the shape of the indexed tensor {shape} at index {dim + offset}: "
                        "a mask picks along the dims it covers, so it needs their sizes. Fix: "
                        "build the mask from the tensor itself, e.g. x[x > 0]."
                    )
            dim += part.ndim
            if first_only:
                return
        else:  # an index tensor
            dim += 1
            if first_only:
                return


def _index_kind(index, shape=None):
    """PyTorch's node name for an indexing expression.

    Index tensors make one IndexBackward0. Otherwise PyTorch applies the parts left to right,
    each as a view (an int selects, None unsqueezes, a slice narrows; a slice over a whole dim is
    skipped), and the node a learner sees is the last one made; none at all is an alias.
    """
    if _is_advanced(index):
        return Index
    kind, dim = Alias, 0
    for part in index:
        if part is Ellipsis:
            dim += len(shape) - sum(_dims_taken(p) for p in index)
        elif part is None:
            kind = IndexUnsqueeze
        elif isinstance(part, slice):
            if dim >= len(shape) or part.indices(shape[dim]) != (0, shape[dim], 1):
                kind = Slice
            dim += 1
        else:
            kind, dim = Select, dim + 1
    return kind


def _is_advanced(index):
    """Whether the index holds index tensors (or a Python bool, which PyTorch reads as a mask)."""
    return any(isinstance(p, (np.ndarray, bool)) or storage.is_device_array(p) for p in index)


def _new_dims_strided(array, x, index):
    """x[index] with PyTorch's strides for the dims a None adds (numpy gives them 0): PyTorch
    unsqueezes as it reads the index from left to right, so a new dim steps over the whole dim
    of x that comes next (1 at the end). Only for an index of ints, slices, None and `...`."""
    if _is_advanced(index) or not any(part is None for part in index):
        return array
    strides = [step // array.itemsize for step in array.strides]
    x_dim = out_dim = 0
    for part in index:
        if part is None:
            next_is_inside = x_dim < x.ndim
            strides[out_dim] = x.shape[x_dim] * x.stride(x_dim) if next_is_inside else 1
            out_dim += 1
        elif part is Ellipsis:
            skipped = x.ndim - sum(_dims_taken(p) for p in index)
            x_dim, out_dim = x_dim + skipped, out_dim + skipped
        else:  # an int takes a dim away, a slice keeps it
            x_dim, out_dim = x_dim + 1, out_dim + isinstance(part, slice)
    return _with_strides(array, strides)


def _empty_slice_placed(array, x, index):
    """An empty result of ints, slices, None and `...` with PyTorch's strides and storage offset.
    numpy starts an empty slice where its array starts and keeps its stride; PyTorch moves the
    start to the slice's first place (its start, clamped to the dim's size) and multiplies the
    stride by the step, as for any slice: x[:, 3:] of a (2, 3) x starts 3 places in, stride 3.
    Only an empty result can differ (it has no element to read, whatever its geometry)."""
    if array.size or _is_advanced(index) or storage.is_device_array(array):
        return array
    sizes, strides = [], []
    offset, dim = x.storage_offset(), 0
    for part in index:
        if part is None:
            sizes.append(1)
            strides.append(0)  # (_new_dims_strided gives it PyTorch's stride)
        elif part is Ellipsis:
            skipped = x.ndim - sum(_dims_taken(p) for p in index)
            sizes += x.shape[dim : dim + skipped]
            strides += x.stride()[dim : dim + skipped]
            dim += skipped
        elif isinstance(part, slice):
            size, stride = x.shape[dim], x.stride(dim)
            start, stop, step = _slice_bounds(part, size)
            offset += start * stride
            sizes.append((stop - start + step - 1) // step)
            strides.append(stride * step)
            dim += 1
        else:  # an int selects
            offset += (part % x.shape[dim]) * x.stride(dim)
            dim += 1
    return _at_places(x._data, sizes, strides, offset)


def _slice_bounds(part, size):
    """PyTorch's (start, stop, step) of a slice over a dim of `size`: each end counted from the
    back when negative, then clamped to [0, size], and the stop to no less than the start."""
    step = 1 if part.step is None else part.step
    start = 0 if part.start is None else part.start
    stop = size if part.stop is None else part.stop
    start, stop = start + size if start < 0 else start, stop + size if stop < 0 else stop
    start = min(max(start, 0), size)
    stop = min(max(stop, start), size)
    return start, stop, step


def _at_places(array, sizes, strides, offset):
    """An empty view of array's storage with this geometry (element strides; offset in elements
    from the storage's start, which may lie past its end: an empty view reads nothing there)."""
    memory = storage.storage_of(array)
    itemsize = memory.itemsize
    start = np.lib.stride_tricks.as_strided(memory, (offset + 1,), (itemsize,))[offset:]
    byte_strides = tuple(step * itemsize for step in strides)
    return np.lib.stride_tricks.as_strided(start, tuple(sizes), byte_strides, writeable=False)


def _is_0d_mask(part):
    return isinstance(part, np.ndarray) and part.dtype == np.bool_ and part.ndim == 0


def _advanced_laid_out(array, x, index):
    """The result of indexing with index tensors, laid out as PyTorch lays it out. PyTorch first
    takes the view of the ints, slices and None, then reads it through the index tensors with
    TensorIterator: its operands are that view, with stride 0 over the dims the index tensors
    make (`restride_src`), and the index tensors, broadcast together and placed at those dims
    (a mask counts as the columns of its nonzero()). The result follows their memory order
    (laid_out_like_operands); numpy's own may differ (x[:, [0, 1], None] comes out transposed)."""
    if not _is_advanced(index) or storage.is_device_array(array):
        return array
    index = _without_empty_ellipsis(index, x.ndim)
    first, then = _views_first(index, x.ndim)
    # PyTorch's strides for the view: a None's dim's, and an empty slice's (stride times step)
    view = _new_dims_strided(_empty_slice_placed(x._data[first], x, first), x, first)
    if any(isinstance(part, bool) or _is_0d_mask(part) for part in then):
        # a bool as an index (a Python bool, or a 0-d mask: x[x > 0] of a number) adds a dim of
        # size 0 or 1: rare; row-major, as most results are (PyTorch keeps the view's layout)
        return row_major(array)
    picks = []  # (the dim of `view` it starts at, the index tensors it stands for)
    dim = 0
    for part in then:
        if isinstance(part, np.ndarray) and part.dtype == np.bool_:
            picks.append((dim, list(np.nonzero(part))))  # as PyTorch: the columns of nonzero()
            dim += part.ndim
        elif isinstance(part, np.ndarray):
            picks.append((dim, [part]))
            dim += 1
        else:  # a full slice
            dim += 1
    tensors = [tensor for _, parts in picks for tensor in parts]
    picked = np.broadcast_shapes(*[tensor.shape for tensor in tensors])
    taken = {start + i for start, parts in picks for i in range(len(parts))}
    kept = [d for d in range(view.ndim) if d not in taken]
    side_by_side = max(taken) - min(taken) + 1 == len(taken)
    before = [d for d in kept if d < min(taken)] if side_by_side else []
    after = [d for d in kept if d not in before]
    # each operand's strides in the result's dims: (before, picked, after)
    zeros = (0,) * len(picked)
    source = [view.strides[d] for d in before] + list(zeros) + [view.strides[d] for d in after]
    operands = [_strided_like(array, source)]
    sizes = array.shape
    for tensor in tensors:
        # PyTorch reshapes each index tensor to (1, ..., picked, 1, ...): those new dims of size 1
        # step over the whole index (before) or over its last dim (after); where the result's
        # dim is longer than 1 they are broadcast (stride 0)
        steps = np.broadcast_to(tensor, picked).strides
        outer = steps[0] * picked[0] if picked else tensor.itemsize
        inner = steps[-1] if picked else tensor.itemsize
        strides = [outer if sizes[d] == 1 else 0 for d in range(len(before))]
        strides += list(steps)
        strides += [inner if size == 1 else 0 for size in sizes[len(strides) :]]
        operands.append(_strided_like(array, strides))
    # the index tensors have the result's shape only if the view's other dims are all of size 1
    broadcast = any(view.shape[d] != 1 for d in kept)
    if array.size == 0 and not broadcast:  # all of one shape, and empty, so contiguous: the
        return row_major(array)  # fast path of TensorIterator, a row-major result
    if array.size == 0:  # the dims sorted, then strides multiplied up from the innermost
        return empty_in_order(array, memory_order(*operands))
    return laid_out_like_operands(array, operands, broadcast)


def _strided_like(array, strides):
    """An operand of array's shape with the given (byte) strides, for comparing layouts only."""
    return np.lib.stride_tricks.as_strided(array, strides=tuple(strides), writeable=False)


def _ints_first(index, ndim):
    """PyTorch's reading of an index that mixes ints with index tensors, as two numpy steps.

    PyTorch applies the ints (with the slices, None and ...) first, as views, and only then the
    index tensors; numpy counts an int as one more index array. Both put the picked dims in place
    when the index tensors sit side by side, and first otherwise, so they disagree on
    x[0, :, [1, 2]]: side by side for PyTorch (shape [3, 2, 5] for x of shape [2, 3, 4, 5]), apart
    for numpy ([2, 3, 5]). Returns (first, then), with array[first][then] as PyTorch reads
    array[index], or None where numpy reads it the same way (no int beside an index tensor).
    """
    is_int = [isinstance(part, (int, np.integer)) and not isinstance(part, bool) for part in index]
    if not any(is_int) or not _is_advanced(index):
        return None
    return _views_first(index, ndim)


def _views_first(index, ndim):
    """(first, then): the ints, slices, None and `...` of `index` (with full slices for the dims
    the index tensors take), and the index tensors (with full slices for the dims the view keeps);
    array[first][then] is array[index] as PyTorch reads it."""
    is_int = [isinstance(part, (int, np.integer)) and not isinstance(part, bool) for part in index]
    first, then = [], []
    for part, an_int in zip(index, is_int):
        if an_int or part is None or isinstance(part, slice):
            first.append(part)
            if not an_int:  # the dim stays (or is new) in the view the index tensors then index
                then.append(slice(None))
        elif part is Ellipsis:
            first.append(part)
            then.extend([slice(None)] * (ndim - sum(_dims_taken(p) for p in index)))
        elif isinstance(part, bool):  # a Python bool adds a dim of its own in the second step
            then.append(part)
        else:  # an index tensor (a mask covers as many dims as it has)
            first.extend([slice(None)] * _dims_taken(part))
            then.append(part)
    return tuple(first), tuple(then)


def _without_empty_ellipsis(index, ndim):
    """The index without a `...` that stands for no dims, when it holds index tensors: PyTorch
    then sees the tensors on either side of it as side by side (their picked dims stay in
    place), where numpy counts the `...` as a part between them (and moves those dims first)."""
    if not _is_advanced(index) or not any(part is Ellipsis for part in index):
        return index
    if ndim - sum(_dims_taken(part) for part in index) > 0:
        return index
    return tuple(part for part in index if part is not Ellipsis)


def _pick(array, index):
    """array[index] as PyTorch reads it (see _ints_first)."""
    index = _without_empty_ellipsis(index, array.ndim)
    steps = _ints_first(index, array.ndim)
    if steps is None:
        return array[index]
    first, then = steps
    return array[first][then]


def _place(array, index):
    """(part, index) such that writing part[index] writes array[index] as PyTorch reads it."""
    index = _without_empty_ellipsis(index, array.ndim)
    steps = _ints_first(index, array.ndim)
    return (array, index) if steps is None else (array[steps[0]], steps[1])


def _picks_nothing(array, index):
    """The empty result of an index whose tensors name places out of range, when the result has
    no elements anyway (x[[5], :0]): PyTorch's kernel then has nothing to read, so it checks no
    index value. None when the result would have elements."""
    result = _pick_in_range(array, index)
    return result if result is not None and result.size == 0 else None


def _pick_in_range(array, index):
    """array[index] with every index tensor's values made 0: the result's shape whatever places
    they name, or None where a dim of size 0 has no place 0 either."""
    in_range = tuple(
        np.zeros_like(part)
        if getattr(part, "dtype", np.bool_) != np.bool_ and np.ndim(part) > 0
        else part
        for part in index
    )
    try:
        return _pick(array, in_range)
    except IndexError:  # PyTorch refuses that too
        return None


class Index(Op):
    node_name = "IndexBackward0"
    saves_constants = True  # the index tensors (PyTorch's _saved_indices)
    derivative = "the gradient is added at the indexed places (repeats add up)"

    @staticmethod
    def forward(ctx, x, index):
        ctx.shape, ctx.dtype, ctx.index = x._data.shape, x._data.dtype, index
        if not any(part is Ellipsis for part in index):
            index = index + (Ellipsis,)  # numpy's a[0] is a copied number, a[0, ...] a 0-d view
        try:
            picked = _advanced_laid_out(_pick(x._data, index), x, index)
            return _view(x, _new_dims_strided(_empty_slice_placed(picked, x, index), x, index))
        except IndexError as error:
            nothing = _picks_nothing(x._data, index)
            if nothing is not None:
                return _view(x, nothing)
            raise IndexError(
                f"{error} (indexing a tensor of shape {list(x._data.shape)})"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        return IndexGrad.apply(grad, shape=ctx.shape, index=ctx.index)


class Select(Index):
    node_name = "SelectBackward0"
    saves_constants = False  # ints, slices, None: PyTorch saves no tensor
    derivative = "the gradient goes to the selected elements, 0 elsewhere"


class Slice(Index):
    node_name = "SliceBackward0"
    saves_constants = False  # ints, slices, None: PyTorch saves no tensor
    derivative = "the gradient goes to the sliced elements, 0 elsewhere"


class IndexUnsqueeze(Index):
    node_name = "UnsqueezeBackward0"
    saves_constants = False  # ints, slices, None: PyTorch saves no tensor
    derivative = Unsqueeze.derivative


class Alias(Index):
    node_name = "AliasBackward0"
    saves_constants = False  # ints, slices, None: PyTorch saves no tensor
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
        if grad._data.size:  # nothing picked: nothing to add (the index may name no place)
            np.add.at(*_place(out, index), grad._data)
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
        ctx.value_ndim = 0
        out = x._data.copy()
        if isinstance(value, Tensor):
            storage.check_same_device(x._data, value._data)
            ctx.value_ndim = value.ndim
            value = value._data
        else:  # a number (checked by check_assigned_number), as a number of x's dtype
            with np.errstate(over="ignore"):  # float16 rounds a number beyond its range to inf
                value = np.asarray(value).astype(out.dtype).item()
        part, places = _place(out, index)
        try:
            part[places] = value
        except IndexError:
            nothing = _picks_nothing(out, index)  # no place to write: no index is checked
            if nothing is None:
                raise
            np.broadcast_to(value, nothing.shape)  # (a value of the wrong shape is still refused)
        if out.size == 0 and np.ndim(value):  # numpy checks no shape when nothing is written
            np.broadcast_to(value, _indexed_shape(out, index))  # (index_put explains a misfit)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad_x = IndexPut.apply(grad, 0.0, index=ctx.index)
        grad_value = Index.apply(grad, index=ctx.index)
        extra = ctx.value_ndim - grad_value.ndim
        if extra > 0:  # the value had extra leading size-1 dims (x[0] = row[None]): add them back
            grad_value = grad_value.reshape((1,) * extra + tuple(grad_value.shape))
        return grad_x, grad_value


class IndexPutAdvanced(IndexPut):
    """`x[tensor_index] = value`: PyTorch records an index_put_ (not a view's CopySlices)."""

    node_name = "IndexPutBackward0"


# ---- the public functions ---------------------------------------------------------------------------


@public("reshape", method=True)
def reshape(input, *shape):
    shape = _resolve(input, _shape_arg(shape, "reshape", "shape"))
    # PyTorch records one of three nodes: a view of a contiguous tensor; a `_reshape_alias` when
    # the tensor is not contiguous but the new shape can still be a view of it; otherwise a
    # contiguous copy (CloneBackward0), reshaped (UnsafeViewBackward0)
    if input.is_contiguous():
        return View.apply(input, shape=shape)
    if _can_view(input._data, shape):
        return ReshapeAlias.apply(input, shape=shape)
    return UnsafeView.apply(contiguous(input), shape=shape)


def _can_view(array, shape):
    """Whether `array` can take `shape` without copying (numpy refuses when it would copy)."""
    try:
        np.reshape(array, shape, copy=False)
    except ValueError:
        return False
    return True


@public("view", method=True)
def view(input, *shape):
    return View.apply(input, shape=_resolve(input, _shape_arg(shape, "view", "shape")))


def _resolve(x, shape):
    """Replace a -1 in `shape` by the size that makes the element count work out."""
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        if shape.count(-1) > 1 or known == 0 or x._data.size % known:
            raise RuntimeError(
                f"shape {list(shape)} is invalid for a tensor of {x._data.size} elements"
            )
        shape = tuple(x._data.size // known if s == -1 else s for s in shape)
    if any(s < 0 for s in shape) or int(np.prod(shape)) != x._data.size:  # before any copy
        raise RuntimeError(
            f"shape {list(shape)} is invalid for input of size {x._data.size}: the new shape "
            f"must hold as many elements as the tensor of shape {list(x._data.shape)}"
        )
    return shape


@public("flatten", method=True)
def flatten(input, start_dim=0, end_dim=-1):
    shape = input._data.shape
    start, end = _one_dim(start_dim, len(shape)), _one_dim(end_dim, len(shape))
    if not shape:
        return reshape(input, 1)
    if start > end:
        raise RuntimeError(
            f"flatten() has invalid args: start_dim cannot come after end_dim ({start_dim} > "
            f"{end_dim}): it merges the dims from start_dim to end_dim. Fix: swap them."
        )
    if start == end:
        return input  # nothing to merge: PyTorch hands back the tensor itself, not a view
    merged = int(np.prod(shape[start : end + 1]))  # not -1: with a 0 elsewhere it is ambiguous
    return reshape(input, shape[:start] + (merged,) + shape[end + 1 :])


@public("transpose", "swapaxes", "swapdims", method=True)
def transpose(input, dim0, dim1):
    return Transpose.apply(input, dim0=_one_dim(dim0, input.ndim), dim1=_one_dim(dim1, input.ndim))


@public("permute", method=True)
def permute(input, *dims):
    dims = _shape_arg(dims, "permute", "dims")
    if len(dims) != input.ndim:
        raise RuntimeError(
            f"permute(): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions: the tensor has {input.ndim}, permute{dims} "
            f"lists {len(dims)}. Fix: list each of its {input.ndim} dims once, in the new order."
        )
    dims = tuple(_one_dim(d, input.ndim) for d in dims)  # IndexError for a dim it lacks
    if len(set(dims)) != len(dims):
        raise RuntimeError(
            f"permute(): duplicate dims are not allowed: {list(dims)} names a dim twice. Fix: "
            "list each dim once, in the new order."
        )
    return Permute.apply(input, dims=dims)


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
    if input.ndim == 0:  # a 0-d tensor has no dims to move: PyTorch records an alias of it
        return Alias.apply(input, index=(Ellipsis,))
    return Permute.apply(input, dims=tuple(order))


@public("squeeze", method=True)
def squeeze(input, dim=None):
    if dim is None:
        return Squeeze.apply(input, dims=tuple(range(input.ndim)))
    record = SqueezeDim if isinstance(dim, int) else SqueezeDims
    return record.apply(input, dims=_dims(dim, input.ndim))


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
    if -1 in sizes[:lead]:
        raise RuntimeError(
            f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
            f"dimension {sizes.index(-1)}: -1 means 'keep this dim's size', and a new dim has "
            "none. Fix: give the new dim's size."
        )
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
    _check_tensor_list(tensors, "cat")
    tensors = list(tensors)
    if not tensors:
        raise ValueError(
            "cat(): expected a non-empty list of Tensors: there is nothing to join. Fix: "
            "pass at least one tensor, e.g. cat([a, b])."
        )
    for position, tensor in enumerate(tensors):
        if tensor.ndim == 0:
            raise RuntimeError(
                f"zero-dimensional tensor (at position {position}) cannot be concatenated: it "
                "has no dim to join along. Fix: use stack() to join numbers into a new dim, or "
                "make it 1-d first with x.reshape(1)."
            )
    joined = [t for t in tensors if tuple(t.shape) != (0,)]  # the others are left out (Cat)
    if not joined:  # only empty 1-d tensors: PyTorch returns one without looking at dim
        return Cat.apply(*tensors, dim=0)
    dim = _one_dim(dim, joined[0].ndim)
    for tensor in joined[1:]:
        if tensor.ndim != joined[0].ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {joined[0].ndim} and "
                f"{tensor.ndim}. cat() joins along one dim, and every other dim must line up. "
                "Fix: unsqueeze or reshape the tensors to the same number of dims first."
            )
    return Cat.apply(*tensors, dim=dim)


@public("stack", out=True)
def stack(tensors, dim=0):
    _check_tensor_list(tensors, "stack")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(
            "stack expects a non-empty TensorList: there is nothing to stack. Fix: pass at least "
            "one tensor, e.g. stack([a, b])."
        )
    return Stack.apply(*tensors, dim=_one_dim(dim, tensors[0].ndim + 1))


def _check_tensor_list(tensors, function):
    """cat and stack join a list of tensors: one tensor alone would be split into its rows."""
    if isinstance(tensors, Tensor):
        raise TypeError(
            f"{function}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor. "
            f"Fix: put the tensors in a list, e.g. {function}([a, b])."
        )


@public("split", method=True)
def split(input, split_size_or_sections, dim=0):
    _check_not_0d(input, "split expects at least a 1-dimensional tensor")
    axis = _one_dim(dim, input.ndim)
    n = input.shape[axis]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0 or (step == 0 and n != 0):
            raise RuntimeError(
                f"split expects split_size be non-negative (and 0 only if dimension size is 0), "
                f"but got split_size={step} for a dim of size {n}. Fix: give the size of each "
                "piece, e.g. x.split(2)."
            )
        # an empty dim gives one empty piece (pieces of size 0 only fit an empty dim)
        sizes = [min(step, n - start) for start in range(0, n, step or 1)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split sizes {sizes} must add up to the dimension's size {n}")
        return SplitWithSizes.apply(input, sizes=sizes, dim=axis)
    return Split.apply(input, sizes=sizes, dim=axis)


@public("chunk", method=True)
def chunk(input, chunks, dim=0):
    _check_not_0d(input, "chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(
            f"chunk expects `chunks` to be greater than 0, got: {chunks}. Fix: ask for at least "
            "one piece."
        )
    axis = _one_dim(dim, input.ndim)
    n = input.shape[axis]
    if n == 0:  # an empty dim still gives `chunks` pieces, each empty: PyTorch lists their sizes
        return SplitWithSizes.apply(input, sizes=[0] * chunks, dim=axis)
    return split(input, -(-n // chunks), dim)


def _check_not_0d(input, words):
    """PyTorch refuses to cut a 0-d tensor (one number): it has no dim to cut along."""
    if input.ndim == 0:
        raise RuntimeError(
            f"{words}, but got a 0-d tensor (one number), which has no dim to cut. Fix: make it "
            "1-d first, e.g. x.reshape(1)."
        )


@public("unbind", method=True)
def unbind(input, dim=0):
    return Unbind.apply(input, dim=dim)  # (forward checks dim, after the edges are collected)


def check_index_count(index, ndim):
    """PyTorch's IndexError for an index that names more dims than the tensor has (counted as
    PyTorch counts: an int, a slice, a list or an integer index tensor names one dim, a mask
    as many as it has; None, ... and True/False name none), and its own words for a single int
    or slice applied to a 0-d tensor."""
    if ndim == 0 and isinstance(index, (int, np.integer)) and not isinstance(index, bool):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
            "in C++ to convert a 0-dim tensor to a number"
        )
    if ndim == 0 and isinstance(index, slice):
        raise IndexError(
            "slice() cannot be applied to a 0-dim tensor. Fix: a 0-d tensor holds one number; "
            "use x[...] or x[()] to reach it, or x.item()."
        )
    parts = index if isinstance(index, tuple) else (index,)
    named = 0
    for part in parts:
        if part is None or part is Ellipsis or isinstance(part, (bool, np.bool_)):
            continue
        if isinstance(part, Tensor) and part._data.dtype in (np.bool_, np.uint8):
            named += part.ndim
        else:
            named += 1
    if named > ndim:
        raise IndexError(
            f"too many indices for tensor of dimension {ndim}: the index names {named} dims "
            "(an int, a slice or an index tensor names one; None and ... name none). Fix: "
            f"use at most {ndim} of them, or add dims first with unsqueeze."
        )


def index(input, index):
    check_index_count(index, input.ndim)
    if input._history_is_stale() and input.requires_grad and is_grad_enabled():
        # PyTorch takes the views of the ints and slices first (an int out of range is refused
        # there), then records the op: it reads the view's history (rebuilt, or refused for a
        # piece of split or unbind whose base changed in place since) before it checks any
        # index tensor (its dtype, a mask's shape)
        input.detach()[basic_part(index)]
        input._refresh_view_history()
    if isinstance(index, slice):  # x[a:b] alone: PyTorch always records the slice
        return Slice.apply(input, index=_numpy_index(index, input.device))
    index = _numpy_index(index, input.device)
    _check_masks(index, input._data.shape)
    return _index_kind(index, input._data.shape).apply(input, index=index)


def index_put(input, value, index):
    check_index_count(index, input.ndim)
    index = _numpy_index(index, input.device)
    _check_masks(index, input._data.shape)
    _check_index_tensors_broadcast(index)
    _check_no_pick_from_an_empty_dim(index, input._data.shape)
    if isinstance(value, Tensor) and value.dtype != input.dtype:
        _check_index_put_dtype(input, value, index)
    advanced = _is_advanced(index) and not _narrows_first(index, input._data.shape)
    record = IndexPutAdvanced if advanced else IndexPut
    if isinstance(value, Tensor):  # PyTorch checks the value's shape before the index values
        target = _pick_in_range(input._data, index)
        if target is not None and not _fits(value.shape, target.shape):
            _refuse_value_shape(value, list(target.shape))
    try:
        return record.apply(input, value, index=index)
    except (ValueError, TypeError):  # numpy's "could not broadcast" (for a mask: TypeError)
        if not isinstance(value, Tensor):
            raise
        target = _indexed_shape(input._data, index)
        extra = value.ndim - len(target)
        if extra > 0 and all(size == 1 for size in value.shape[:extra]):
            # PyTorch lets the value carry extra leading size-1 dims (x[0] = row[None])
            return index_put(input, value.reshape(value.shape[extra:]), index)
        _refuse_value_shape(value, target)


def _fits(value_shape, target_shape):
    """Whether a value of value_shape, its extra leading size-1 dims dropped, broadcasts to
    exactly target_shape (PyTorch's is_expandable_to)."""
    extra = len(value_shape) - len(target_shape)
    if extra > 0 and any(size != 1 for size in value_shape[:extra]):
        return False
    value_shape = value_shape[max(extra, 0) :]
    return all(
        size in (1, want) for size, want in zip(reversed(value_shape), reversed(target_shape))
    )


def _refuse_value_shape(value, target):
    raise RuntimeError(
        f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast "
        f"to indexing result of shape {target}. Fix: give a value of shape {target}, or one "
        "that broadcasts to it (a number, say)."
    ) from None


def _check_index_tensors_broadcast(index):
    """index_put_ checks that its index tensors broadcast together (they name the places in step)
    before it looks at the value: a mask counts as the 1-d tensor of the places it picks."""
    shapes = []
    for part in index:
        if not isinstance(part, np.ndarray) or part.ndim == 0:
            continue  # ints, slices, None, ...; a 0-d index adds no dim to line up
        if part.dtype == np.bool_:
            shapes.append([int(np.count_nonzero(part))])
        else:
            shapes.append(list(part.shape))
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        listed = ", ".join(str(shape) for shape in shapes)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes "
            f"{listed}. Each index tensor names one coordinate of the places written, so their "
            "shapes must broadcast. Fix: give index tensors of the same length (a mask counts "
            "as its number of True elements)."
        ) from None


def assigns_all(index, value, shape):
    """Whether `x[index] = value` is PyTorch's assignment to all of x (see selects_all): with a
    number, or a tensor that fits x (for one that does not, index_put gives setitem's error)."""
    if not selects_all(index, shape):
        return False
    if not isinstance(value, Tensor):
        return isinstance(value, (bool, int, float))
    value_shape = value.shape[max(value.ndim - len(shape), 0) :]
    extra = value.shape[: value.ndim - len(value_shape)]
    try:
        return all(size == 1 for size in extra) and np.broadcast_shapes(value_shape, shape) == shape
    except ValueError:
        return False


def selects_all(index, shape):
    """Whether `x[index] = value` writes all of x as PyTorch's setitem sees it: an index made of
    `...` and slices over whole dims only (start 0 or none, stop none or past the end, step 1
    or none). PyTorch then writes into x itself (assign_all), not through a view of it."""
    parts = index if isinstance(index, tuple) else (index,)
    if not all(part is Ellipsis or isinstance(part, slice) for part in parts):
        return False
    slices = [part for part in parts if part is not Ellipsis]
    if len(slices) > len(shape) or len(parts) - len(slices) > 1:
        return False  # the usual path reports what is wrong
    before = parts.index(Ellipsis) if len(parts) > len(slices) else len(parts)
    dims = list(range(before)) + list(range(len(shape) - (len(slices) - before), len(shape)))
    return all(_whole_dim(part, shape[dim]) for part, dim in zip(slices, dims))


def _whole_dim(part, size):
    def number(bound):
        return isinstance(bound, (int, np.integer)) and not isinstance(bound, bool)

    start_at_0 = part.start is None or (number(part.start) and part.start == 0)
    stop_at_end = part.stop is None or (number(part.stop) and part.stop >= size)
    return start_at_0 and stop_at_end and part.step in (None, 1)


def assign_all(x, value):
    """`x[...] = value` (see selects_all) as PyTorch's setitem does it: a copy_ of a value of x's
    shape; a fill_ of x with a number (made a one-number tensor of x's dtype) or a 0-d tensor;
    else a copy_ of the value with all its leading size-1 dims dropped (by view()), then
    expanded to x's shape. So x records FillBackward3 or CopyBackwards, and the gradient flowing
    back to x's old values is zeros. The dropping decides which overlaps PyTorch refuses:
    `x[...] = x[0]` on a (1, 1) x expands a 0-d view of x's one element, which PyTorch sees as
    another layout of the same place, and refuses."""
    if not isinstance(value, Tensor):  # (already checked by check_assigned_number)
        with np.errstate(over="ignore"):  # float16 rounds a number beyond its range to inf
            value = np.asarray(value).astype(x._data.dtype).item()
        value = _make(storage.new(np.full, (), value, dtype=x._data.dtype, device=x.device))
    if value.shape == x.shape:
        x.copy_(value)
        return
    if value.ndim == 0:
        x.fill_(value)
        return
    leading_ones = 0
    while leading_ones < value.ndim and value.shape[leading_ones] == 1:
        leading_ones += 1
    # a view() even when nothing is dropped: it may give the dims of size 1 other strides
    value = value.view(value.shape[leading_ones:])
    if value.shape != x.shape and expanded_strides(value.shape, value.stride(), x.shape):
        # broadcast before copy_, as PyTorch's setitem does: copy_ then compares the expanded
        # value's memory with x's (x[None][...] = x is x's own places again, nothing to copy)
        value = value.expand(x.shape)
    x.copy_(value)


def check_assigned_number(value, dtype):
    """`x[index] = value` with a value that is not a tensor: it must be a number, and fit x's dtype
    (checked before the index is looked at, as PyTorch converts the value first)."""
    if not isinstance(value, (int, float, np.number, np.bool_)):
        raise TypeError(
            f"can't assign a {type(value).__name__} to a {dtype} tensor: x[index] = value takes a "
            "number or a tensor. Fix: make the value a tensor first, e.g. x[index] = "
            "tensor(value, dtype=x.dtype)."
        )
    if dtype != types.float16:  # (here PyTorch rounds a number beyond float16's range to inf)
        promotion.check_value_fits(value, dtype)


def _indexed_shape(array, index):
    """The shape of array[index], also where index tensors name places out of range but the
    result has no elements (PyTorch checks no index then)."""
    try:
        return list(_pick(array, index).shape)
    except IndexError:
        nothing = _picks_nothing(array, index)
        if nothing is None:
            raise
        return list(nothing.shape)


def basic_part(index):
    """The part of an index PyTorch applies first, as views: its ints, slices, None and ...,
    with a whole-dim slice for each index tensor or list (a mask: one for each of its dims)."""
    basic = []
    for part in index if isinstance(index, tuple) else (index,):
        if not is_index_tensor(part):
            basic.append(part)
        elif isinstance(part, Tensor):
            basic.extend([slice(None)] * (part.ndim if part._data.dtype == np.bool_ else 1))
        else:
            as_array = np.asarray(part)
            basic.extend([slice(None)] * (as_array.ndim if as_array.dtype == np.bool_ else 1))
    return tuple(basic)


def rest_of_index(index):
    """What is left of an index once its basic part (see basic_part) is applied as a view: the
    index tensors, at the dims of that view they index (every other dim taken whole)."""
    rest = []
    for part in index if isinstance(index, tuple) else (index,):
        if is_index_tensor(part) or part is Ellipsis:
            rest.append(part)
        elif part is None or isinstance(part, (bool, slice)):
            rest.append(slice(None))  # the view keeps this dim (None and True add one)
        # an int selected its dim away
    return tuple(rest)


def is_index_tensor(part):
    """Whether one part of an index is an index tensor (or a list, read as one)."""
    return isinstance(part, (Tensor, list))


def _check_no_pick_from_an_empty_dim(index, shape):
    """An index tensor with elements at a dim of size 0 has nothing it could pick: PyTorch says
    so (IndexError) before it looks at the value's dtype. Unless the index tensors, broadcast
    together, pick nothing at all (a mask with no True beside it): then nothing is read."""
    parts = index if isinstance(index, tuple) else (index,)
    picks = [
        (int(part.sum()),) if part.dtype == np.bool_ else part.shape  # a mask: its nonzero()
        for part in parts
        if isinstance(part, np.ndarray)
    ]
    if picks and 0 in np.broadcast_shapes(*picks):
        return
    used = sum(_dims_taken(part) for part in parts)
    dim = 0
    for part in parts:
        if part is Ellipsis:
            dim += len(shape) - used
            continue
        is_tensor = isinstance(part, np.ndarray) and part.dtype != np.bool_
        if is_tensor and part.size and dim < len(shape) and shape[dim] == 0:
            raise IndexError(
                "index is out of bounds for dimension with size 0: an index tensor picks from "
                f"dim {dim}, which has no elements. Fix: index a non-empty dim"
            )
        dim += _dims_taken(part)


def _check_index_put_dtype(input, value, index):
    """Writing through index tensors is PyTorch's index_put_, which does not convert the value:
    its dtype must be the tensor's. (A bool mask alone with a one-element value is a
    masked_fill_, which converts it as a number, so the number must fit; so do ints and slices
    alone, a copy_ into a view.)"""
    tensors = [
        part for part in index if isinstance(part, np.ndarray) or storage.is_device_array(part)
    ]
    one_mask = len(tensors) == 1 and tensors[0].dtype == np.bool_ and value.numel() == 1
    if one_mask:
        promotion.check_value_fits(value.item(), input.dtype)
    if tensors and not one_mask:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match: x[index] = value with "
            f"an index tensor writes the value unconverted, and it is {value.dtype} while the "
            f"tensor is {input.dtype}. Fix: convert the value first, value.to(x.dtype)."
        )


def _narrows_first(index, shape):
    """Whether the ints, Nones and slices beside an index tensor pick a smaller view first.

    PyTorch applies those parts as a view, then writes through it with the tensors: the write is
    then recorded as a change through a view (CopySlices). A slice over a whole dim is skipped.
    """
    dims_used = [_dims_taken(part) for part in index]
    dim = 0
    for part, taken in zip(index, dims_used):
        if part is Ellipsis:
            dim += len(shape) - sum(dims_used)
        elif part is None or isinstance(part, (bool, int, np.integer)):
            return True
        elif isinstance(part, slice):
            if part.indices(shape[dim]) != (0, shape[dim], 1):
                return True
            dim += 1
        else:
            dim += taken
    return False


def _dims_taken(part):
    """How many of the tensor's dims one part of an index uses up (a mask: all of its dims)."""
    if part is None or part is Ellipsis or isinstance(part, bool):
        return 0
    if getattr(part, "dtype", None) == np.bool_:
        return part.ndim
    return 1


@public("narrow", method=True)
def narrow(input, dim, start, length):
    _check_not_0d(input, "narrow() cannot be applied to a 0-dim tensor")
    axis = _one_dim(dim, input.ndim)
    size = input.shape[axis]
    if start < 0:
        start += size  # narrow(0, -1, 1) is the last element, as in PyTorch
    if not (0 <= start <= size and 0 <= length <= size - start):
        raise RuntimeError(
            f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size}), or "
            f"one is negative. Fix: give 0 <= start and start + length <= {size}."
        )
    # always one SliceBackward0, as in PyTorch (indexing would skip a slice of the whole dim)
    return Slice.apply(input, index=(slice(None),) * axis + (slice(start, start + length),))
