"""A view is (size, stride, storage offset) into its base's storage.

    >>> x = ag.arange(6.0)
    >>> v = x.view(2, 3)[:, 1:]
    >>> v.size(), v.stride(), v.storage_offset()
    (torch.Size([2, 2]), (3, 1), 1)
    >>> ag.as_strided(x, (2, 2), (3, 1), 1)  # the same elements, named by their geometry
    tensor([[1., 2.],
            [4., 5.]])

Element (i, j) of v lies at storage place `offset + i * stride[0] + j * stride[1]`. Why autograd
cares: when a base (or any view of it) is changed in place while recording, every *other* view's
recorded history is out of date. As PyTorch does, a view then rebuilds its history from its base
and its geometry, `as_strided(base, size, stride, offset)` (the node AsStridedBackward0; the
`Tensor.grad_fn` property notices it). An in-place change *through* a view rewrites the base's
history as a CopySlices node (below).
"""

import numpy as np

from .. import storage
from ..autograd.function import Op
from ..tensor import _make
from .registry import public
from .shape import _at_places, _view

# ---- geometry: where a view's elements lie in its storage --------------------------------------------


def storage_offset(array):
    """How many elements into its storage `array` starts."""
    if storage.is_device_array(array):
        return array.offset  # a CudaArray is a window onto a buffer
    start = array.__array_interface__["data"][0]
    return (start - storage.storage_of(array).__array_interface__["data"][0]) // array.itemsize


def geometry(array):
    """(size, stride, storage offset): all a view is, given its storage."""
    strides = tuple(s // array.itemsize for s in array.strides)
    return tuple(array.shape), strides, storage_offset(array)


def places(size, stride, offset):
    """The storage place of every element of a view, as an int array of the view's shape."""
    result = np.asarray(offset)
    for length, step in zip(size, stride):
        result = np.add.outer(result, np.arange(length) * step)
    return result


def strided(array, size, stride, offset, writeable=None):
    """A view of the storage under `array` with the given geometry (no copy). Unless `writeable`
    says otherwise, it is read-only where it repeats an element (a stride 0 of a dim longer than
    1: writing one would write all) or where `array` is."""
    if writeable is None:
        repeats = any(step == 0 and length > 1 for length, step in zip(size, stride))
        is_writeable = array.writeable if storage.is_device_array(array) else array.flags.writeable
        writeable = is_writeable and not repeats
    if storage.is_device_array(array):
        return array.view_of(size, stride, offset, writeable=writeable)
    if 0 in size:  # it may start past the storage's end, where numpy would start it at 0
        return _at_places(array, size, stride, offset)
    # the storage's elements in memory order: numpy lays some fresh arrays out column by column
    # (the exp of a transposed matrix), and a storage place counts along memory, not along rows
    memory = storage.storage_of(array)
    flat = np.lib.stride_tricks.as_strided(memory, (memory.size,), (memory.itemsize,))[offset:]
    byte_strides = tuple(step * array.itemsize for step in stride)
    return np.lib.stride_tricks.as_strided(flat, size, byte_strides, writeable=writeable)


def _check_fits(array, size, stride, offset):
    """PyTorch's check that as_strided stays inside the storage."""
    if storage.is_device_array(array):
        capacity = array.buffer.size
    else:
        capacity = storage.storage_of(array).size
    if offset < 0 or any(step < 0 for step in stride) or len(size) != len(stride):
        raise RuntimeError(
            f"as_strided: size {list(size)}, stride {list(stride)} and storage offset {offset} must "
            "be as many sizes as strides, and no stride or offset may be negative."
        )
    last = offset + sum((length - 1) * step for length, step in zip(size, stride))
    if 0 not in size and last >= capacity:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset} "
            f"reach storage place {last}, out of bounds for storage of {capacity} elements. Fix: "
            "choose a size, stride and offset whose last element lies inside the storage."
        )


# ---- the op -------------------------------------------------------------------------------------------


class AsStrided(Op):
    """`as_strided(x, size, stride, storage_offset)`: the view of x's storage with that geometry."""

    node_name = "AsStridedBackward0"
    derivative = "each element's gradient goes to the storage place it reads (repeats add up)"

    @staticmethod
    def forward(ctx, input, size, stride, storage_offset=None):
        data = input._data
        offset = geometry(data)[2] if storage_offset is None else storage_offset
        size, stride = tuple(size), tuple(stride)
        _check_fits(data, size, stride, offset)
        ctx.input_places = places(*geometry(data))
        ctx.output_places = places(size, stride, offset)
        return _view(input, strided(data, size, stride, offset))

    @staticmethod
    def backward(ctx, grad):
        if grad._data.size == 0:  # an empty view read nothing: PyTorch gives constant zeros
            return _zeros(ctx.input_places.shape, grad)
        return MoveThroughStorage.apply(grad, From=ctx.output_places, to=ctx.input_places)


class MoveThroughStorage(Op):
    """Add each value into the storage place `From` names, then read the places `to` names.

    As_strided's backward: the gradient of a view goes to the storage places it read (a place
    read twice gets both), and the input's gradient is read back from its own places. Its own
    backward is the same move the other way round."""

    node_name = "AsStridedBackward0"  # (seen only in a graph of the backward pass)

    @staticmethod
    def forward(ctx, values, From, to):
        ctx.From, ctx.to = From, to
        size = int(max(From.max(initial=-1), to.max(initial=-1))) + 1
        memory = np.zeros_like(values._data, shape=(size,))  # on values' device
        np.add.at(memory, From.reshape(-1), values._data.reshape(-1))
        return memory[to.reshape(-1)].reshape(to.shape)

    @staticmethod
    def backward(ctx, grad):
        return MoveThroughStorage.apply(grad, From=ctx.to, to=ctx.From)


class CopySlices(Op):
    """The base's new history after an in-place change through one of its views.

    `v = a[1:]; v.mul_(3)` changes a's storage, so a's history must say so: a is now "a before,
    with the view's places replaced by (a before)[view places] * 3". This node is that
    replacement: the gradient at the replaced places goes to the new values (and on through the
    in-place op, to a before), everywhere else straight to a before. PyTorch names it CopySlices.
    `where` holds, for each element of the view, its position in the flattened base."""

    node_name = "CopySlices"
    derivative = "the view's places: to the new values; the rest: to the base before"

    @staticmethod
    def forward(ctx, base, values, where):
        ctx.where = where
        out = base._data.copy()
        out.reshape(-1)[where.reshape(-1)] = values._data.reshape(-1)
        return out

    @staticmethod
    def backward(ctx, grad):
        flat = grad.reshape(-1)
        replaced = ctx.where.reshape(-1)
        to_values = flat[replaced].reshape(ctx.where.shape)
        if not ctx.task_should_compute_output(0):
            # PyTorch writes the view's gradient back into the base's only when the base's is
            # needed, so the refusals below come only then
            return None, to_values
        if np.unique(replaced).size < replaced.size and not _repeats_along_a_dim(ctx.where):
            # an as_strided view whose windows overlap: PyTorch writes the view's gradient back
            # element after element, the later over the earlier, so its answer depends on that
            # order (README's Simplifications: refused, as the in-place ops on it are)
            raise RuntimeError(
                "unsupported operation: some elements of the written-to tensor refer to a single "
                "memory location (an as_strided view whose elements overlap): this backward pass "
                "goes through an in-place change of it, and PyTorch 2.13 writes its gradient back "
                "element after element, so its answer depends on that order; autograd_lab "
                "refuses. Fix: .clone() the view before changing it in place."
            )
        if np.unique(replaced).size < replaced.size:
            # an expanded view (fill_, zero_, masked_fill_ run on one): PyTorch writes the view's
            # gradient into a tensor laid out as the view, whose elements share memory, and
            # refuses that write here, at backward
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location: this backward pass goes through an in-place change "
                "of an expanded view, whose elements share memory. Fix: clone() the expanded "
                "tensor before changing it in place (x.expand(...).clone().fill_(...))."
            )
        grad_base = CopySlices.apply(grad, _zeros(replaced.shape, grad), where=ctx.where)
        return grad_base, to_values


def _repeats_along_a_dim(where):
    """Whether a view repeats its elements along a dim (stride 0, an expanded view: the same
    base position all along it), which PyTorch's copy finds and refuses."""
    return any(
        length > 1 and bool((np.diff(where, axis=dim) == 0).all())
        for dim, length in enumerate(where.shape)
    )


def _zeros(shape, like):
    return _make(np.zeros_like(like._data, shape=shape))


def change_through_view(view, op, args, kwargs):
    """`view.op_(*args)` while recording. Returns the view's new values (recorded as `op` of the
    view's old values, read from a copy of the base) and the base's new history (CopySlices)."""
    base = view._base
    before = _make(base._data.copy(), base.grad_fn, base._output_nr)
    where = positions_in_base(view._data, base._data)
    result = op(before.reshape(-1)[where], *args, **kwargs)
    if result.shape != view.shape:  # the caller refuses it (Tensor._inplace)
        return result, None
    if result.grad_fn is not None:
        # PyTorch keeps this node inside its CopySlices node, which calls it only when a
        # gradient arrives (the engine then skips its saved-tensor check, engine.py)
        result.grad_fn._within_copy_slices = True
    return result, CopySlices.apply(before, result, where=where)


def positions_in_base(view_array, base_array):
    """For each element of a view, its position in the flattened (row-major) base."""
    base_places = places(*geometry(base_array)).reshape(-1)
    position_of_place = np.full(int(base_places.max(initial=-1)) + 1, -1)
    position_of_place[base_places] = np.arange(base_places.size)
    return position_of_place[places(*geometry(view_array))]


@public("as_strided", method=True)
def as_strided(input, size, stride, storage_offset=None):
    return AsStrided.apply(input, size=size, stride=stride, storage_offset=storage_offset)
