"""Shape operations on device arrays: views where numpy gives views, copies (kernels) where it must.

A view changes only shape, element strides and offset over the same buffer: transposing swaps
strides, broadcasting sets a stride to 0, reshaping a contiguous array recomputes them. Joining
(concatenate, stack) writes each piece into a slice of a new array with the copy kernel. Also
here: numpy's `axis` arguments (`normalize_axes`), which every module that reduces or indexes
along an axis reads.

    >>> x = from_numpy(np.arange(6).reshape(2, 3))
    >>> transpose(x).element_strides, transpose(x).buffer is x.buffer
    ((1, 3), True)
"""

import numpy as np

from .. import contiguous_strides
from . import elementwise
from .device_array import DeviceArray


def normalize_axes(axis, ndim):
    """numpy's `axis` argument as a sorted tuple of non-negative dims."""
    if axis is None:
        return tuple(range(ndim))
    axes = []
    for a in (axis,) if np.ndim(axis) == 0 else axis:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        axes.append(int(a) % ndim)
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(axes))


def _resolve(size, shape):
    """numpy's reshape target: one -1 is worked out from the element count."""
    shape = (shape,) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
    if shape.count(-1) == 1 and known and size % known == 0:
        shape = tuple(size // known if s == -1 else s for s in shape)
    if shape.count(-1) or int(np.prod(shape, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


def _view_strides(shape, strides, new_shape):
    """Strides showing the same elements (row-major order) in new_shape, or None when the old
    layout makes that impossible (numpy's no-copy reshape). Dims are matched in groups whose
    sizes have equal products; inside a group the old dims must be laid out contiguously."""
    if 0 in new_shape:
        return contiguous_strides(new_shape)
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new_strides, oi, ni = [0] * len(new_shape), 0, 0
    while oi < len(old) and ni < len(new_shape):
        oj, nj = oi + 1, ni + 1
        old_size, new_size = old[oi][0], new_shape[ni]
        while old_size != new_size:
            if new_size < old_size:
                new_size, nj = new_size * new_shape[nj], nj + 1
            else:
                old_size, oj = old_size * old[oj][0], oj + 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new_strides[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_strides[k - 1] = new_strides[k] * new_shape[k]
        oi, ni = oj, nj
    return tuple(new_strides)


def reshape(x, shape, copy=None):
    """A view when the layout allows (always for contiguous arrays), else a copy."""
    shape = _resolve(x.size, shape)
    strides = None if copy else _view_strides(x.shape, x.element_strides, shape)
    if strides is not None:
        return x.view_of(shape, strides, x.offset)
    if copy is False:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    contiguous = x.copy()
    return contiguous.view_of(shape, contiguous_strides(shape), 0)


def transpose(x, axes=None):
    axes = tuple(range(x.ndim - 1, -1, -1)) if axes is None else tuple(int(a) for a in axes)
    inside = all(-x.ndim <= a < x.ndim for a in axes)
    if not inside or sorted(a % x.ndim for a in axes) != list(range(x.ndim)):
        raise ValueError("axes don't match array")
    axes = tuple(a % x.ndim for a in axes)
    shape = tuple(x.shape[a] for a in axes)
    return x.view_of(shape, tuple(x.element_strides[a] for a in axes), x.offset)


def swapaxes(x, axis1, axis2):
    (a,), (b,) = normalize_axes(axis1, x.ndim), normalize_axes(axis2, x.ndim)
    order = list(range(x.ndim))
    order[a], order[b] = b, a
    return transpose(x, order)


def squeeze(x, axis=None):
    if axis is None:
        axes = tuple(d for d, n in enumerate(x.shape) if n == 1)
    else:
        axes = normalize_axes(axis, x.ndim)
        if any(x.shape[d] != 1 for d in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    keep = [d for d in range(x.ndim) if d not in axes]
    shape = tuple(x.shape[d] for d in keep)
    return x.view_of(shape, tuple(x.element_strides[d] for d in keep), x.offset)


def expand_dims(x, axis):
    axes = normalize_axes(axis, x.ndim + (1 if np.ndim(axis) == 0 else len(axis)))
    shape, strides, dims = [], [], iter(zip(x.shape, x.element_strides))
    for d in range(x.ndim + len(axes)):
        size, stride = (1, 0) if d in axes else next(dims)
        shape.append(size)
        strides.append(stride)
    return x.view_of(shape, strides, x.offset)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """A read-only view of a diagonal (it becomes the last dim), as numpy's np.diagonal: one step
    along the diagonal is one step along both axes, so its stride is the sum of theirs."""
    (a,), (b,) = normalize_axes(axis1, x.ndim), normalize_axes(axis2, x.ndim)
    if a == b:
        raise ValueError("axis1 and axis2 cannot be the same")
    strides = x.element_strides
    length = max(0, min(x.shape[a] + min(offset, 0), x.shape[b] - max(offset, 0)))
    start = x.offset + (strides[b] * offset if offset > 0 else -strides[a] * offset)
    keep = [d for d in range(x.ndim) if d not in (a, b)]
    shape = tuple(x.shape[d] for d in keep) + (length,)
    view_strides = tuple(strides[d] for d in keep) + (strides[a] + strides[b],)
    return x.view_of(shape, view_strides, start if length else x.offset, writeable=False)


def broadcast_to(x, shape):
    """A read-only view (stride 0 along the broadcast dims), as numpy's broadcast_to."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    if not elementwise.broadcasts_to(x.shape, shape):
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes "
            f"[original->remapped]: {x.shape} and requested shape {shape}"
        )
    return x.view_of(shape, elementwise.broadcast_strides(x, shape), x.offset, writeable=False)


def concatenate(arrays, axis=0, dtype=None):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if not all(isinstance(a, DeviceArray) for a in arrays):
        raise TypeError("concatenate on the CUDA backend needs CudaArrays only")
    if axis is None:
        arrays, axis = [reshape(a, -1) for a in arrays], 0
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    (axis,) = normalize_axes(axis, first.ndim)
    for i, a in enumerate(arrays[1:], start=1):
        if a.ndim != first.ndim:
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the array at "
                f"index 0 has {first.ndim} dimension(s) and the array at index {i} has "
                f"{a.ndim} dimension(s)"
            )
        for d in range(first.ndim):
            if d != axis and a.shape[d] != first.shape[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{first.shape[d]} and the array at index {i} has size {a.shape[d]}"
                )
    dtype = np.result_type(*(a.dtype for a in arrays)) if dtype is None else np.dtype(dtype)
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out, start = type(first).empty(tuple(shape), dtype), 0
    for a in arrays:
        elementwise.assign(_slice(out, axis, start, start + a.shape[axis]), a)
        start += a.shape[axis]
    return out


def stack(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    if any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError("all input arrays must have the same shape")
    (axis,) = normalize_axes(axis, arrays[0].ndim + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


def split(x, indices_or_sections, axis=0, equal=True):
    """Views of consecutive pieces along `axis` (np.split; np.array_split with equal=False)."""
    (axis,) = normalize_axes(axis, x.ndim)
    n = x.shape[axis]
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if equal and n % sections:
            raise ValueError("array split does not result in an equal division")
        sizes = [n // sections + (i < n % sections) for i in range(sections)]
        cuts = list(np.cumsum(sizes)[:-1])
    else:
        cuts = [int(c) for c in indices_or_sections]
    bounds = zip([0, *cuts], [*cuts, n])
    return [_slice(x, axis, a, b) for a, b in bounds]


def _slice(x, axis, start, stop):
    """x[start:stop] along `axis` (Python's slice rules), a view: what indexing.py does for
    `x[:, start:stop]`, here for the joining and splitting above."""
    start, stop, _ = slice(start, stop).indices(x.shape[axis])
    shape = list(x.shape)
    shape[axis] = max(stop - start, 0)
    offset = x.offset + (start * x.element_strides[axis] if shape[axis] else 0)
    return x.view_of(shape, x.element_strides, offset)
