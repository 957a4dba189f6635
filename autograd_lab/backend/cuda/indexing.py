"""Indexing device arrays with numpy's rules: `x[index]`, `x[index] = v`, `np.add.at(x, index, v)`.

Basic parts (ints, slices, None, ...) only change shape, strides and offset: the result is a view,
no kernel runs. Integer and boolean arrays ("advanced" indexing) pick elements: a gather kernel
copies them out, a scatter kernel writes them back (index_kernels.py). numpy's placement rule is
kept: the broadcast shape of the index arrays replaces the indexed dims in place when those are
next to each other, else it goes first (`x[:, [0, 1]]` keeps dim 0 first; `x[[0], :, [1]]` not).

Index arrays given on the host (numpy arrays, lists) are bounds-checked there and copied to the
device (a counted copy); a boolean mask on the device needs its number of True elements on the
host to size the result (one counted 8-byte copy: PyTorch synchronises there too).

    >>> x = from_numpy(np.arange(12).reshape(3, 4))
    >>> getitem(x, (slice(None), [0, 3])).to_numpy()
    array([[ 0,  3],
           [ 4,  7],
           [ 8, 11]])
"""

import numpy as np

from . import elementwise, launch, reductions, shapes
from .device_array import DeviceArray
from .index_kernels import (
    error_flag,
    gather_kernel,
    nonzero_kernel,
    scatter_add_kernel,
    scatter_kernel,
)


def getitem(x, index):
    view, picks = _apply(x, index)
    return view if not picks else _gather(view, picks)


def setitem(x, index, value):
    if not x.writeable:
        raise ValueError("assignment destination is read-only")
    view, picks = _apply(x, index)
    if not picks:
        elementwise.assign(view, value)
    else:
        _scatter(view, picks, value, scatter_kernel)


def add_at(x, index, values):
    """np.add.at: adds once per occurrence of an index (a repeated index adds twice)."""
    if x.dtype == np.bool_:
        raise NotImplementedError(
            "numpy.add.at on a bool array is not implemented on the CUDA backend"
        )
    view, picks = _apply(x, index)
    if not picks:
        elementwise.call(np.add, (view, values), out=view, casting="unsafe")
    else:
        _scatter(view, picks, values, scatter_add_kernel)


def nonzero(mask):
    """The indices of the non-zero elements, one int64 array per dim (numpy's nonzero)."""
    if mask.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d first.")
    mask = mask if mask.dtype == np.bool_ else elementwise.astype(mask, np.bool_)
    count = int(reductions.reduce("add", mask).to_numpy())  # the result's size depends on the data
    out = type(mask).empty((mask.ndim, count), np.int64)
    if count:
        threads = launch.REDUCE_THREADS
        args = (mask.buffer, mask.offset, mask.shape, mask.element_strides, mask.size)
        launch.launch(nonzero_kernel(threads), 1, threads, *args, out.buffer, count)
    return tuple(getitem(out, d) for d in range(mask.ndim))


def take_along_axis(array, indices, axis):
    """np.take_along_axis: one gather, array[arange_0, ..., indices, ..., arange_n]."""
    if axis is None:
        array, axis = shapes.reshape(array, -1), 0
    return getitem(array, _along_axis(array, indices, axis))


def _along_axis(array, indices, axis):
    """The index that np.take_along_axis / np.put_along_axis use: `indices` along `axis`, an
    arange (broadcast) along every other dim."""
    if indices.ndim != array.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    (axis,) = shapes.normalize_axes(axis, array.ndim)
    index = []
    for d, size in enumerate(array.shape):
        shape = [1] * array.ndim
        shape[d] = size
        if d == axis:
            index.append(indices)
        else:
            index.append(shapes.reshape(type(array).arange(size, dtype=np.int64), shape))
    return tuple(index)


def put_along_axis(array, indices, values, axis):
    setitem(array, _along_axis(array, indices, axis), values)


def take(array, indices, axis=None):
    """np.take: elements at `indices` of the flattened array, or along `axis`."""
    if axis is None:
        return getitem(shapes.reshape(array, -1), (indices,))
    (axis,) = shapes.normalize_axes(axis, array.ndim)
    return getitem(array, (slice(None),) * axis + (indices,))


def put(array, indices, values):
    """np.put: write `values` at `indices` of the flattened array (values broadcast to them)."""
    try:
        flat = shapes.reshape(array, -1, copy=False)  # a view: the writes must land in `array`
    except ValueError:
        raise NotImplementedError(
            "numpy.put on a non-contiguous array is not implemented on the CUDA backend"
        ) from None
    setitem(flat, (indices,), values)


# ---- from a numpy-style index to (view, picks) ------------------------------------------------------


def _parts(x, index):
    """The index as a list of ("int" | "slice" | "new" | "array", value), `...` expanded and
    boolean masks turned into integer index arrays (one per dim they cover)."""
    parts, ellipsis = [], False
    for part in index if isinstance(index, tuple) else (index,):
        if isinstance(part, list):
            part = np.asarray(part)
            part = part.astype(np.int64) if part.size == 0 else part  # [] indexes nothing
        if isinstance(part, (bool, np.bool_)):
            raise NotImplementedError(
                "indexing with a Python bool is not implemented on the CUDA backend"
            )
        if part is None:
            parts.append(("new", None))
        elif part is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
            parts.append(("...", None))
        elif isinstance(part, slice):
            parts.append(("slice", part))
        elif isinstance(part, (DeviceArray, np.ndarray)):
            parts.extend(_array_parts(part))
        elif isinstance(part, (int, np.integer)):
            parts.append(("int", int(part)))
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                f"integer or boolean arrays are valid indices, not {type(part).__name__}"
            )
    # dims of x the index uses: a k-dim mask uses k, None and ... none
    used = sum(
        len(v[0]) if kind == "mask" else int(kind in ("int", "slice", "array")) for kind, v in parts
    )
    if used > x.ndim:
        raise IndexError(
            f"too many indices for array: array is {x.ndim}-dimensional, but {used} were indexed"
        )
    fill = [("slice", slice(None))] * (x.ndim - used)
    if ellipsis:
        at = [kind for kind, _ in parts].index("...")
        return parts[:at] + fill + parts[at + 1 :]
    return parts + fill


def _array_parts(array):
    if array.dtype == np.bool_:
        if array.ndim == 0:
            raise NotImplementedError(
                "indexing with a 0-d boolean array is not implemented on the CUDA backend"
            )
        found = nonzero(array) if isinstance(array, DeviceArray) else np.nonzero(array)
        return [("mask", (array.shape, found))]
    if array.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if isinstance(array, np.ndarray) and array.ndim == 0:
        return [("int", int(array))]
    return [("array", array)]


def _apply(x, index):
    """Apply the basic parts as a view; return it with the picks: [(view dim, index array)]."""
    parts = _parts(x, index)
    advanced = any(kind in ("array", "mask") for kind, _ in parts)
    shape, strides, offset, picks, dim = [], [], x.offset, [], 0
    for kind, value in parts:
        if kind == "new":
            shape.append(1)
            strides.append(0)
            continue
        if kind == "mask":  # a k-dim mask picks with k index arrays, one per dim it covers
            mask_shape, found = value
            for k, size in enumerate(mask_shape):
                if x.shape[dim] != size:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {dim}; size of "
                        f"axis is {x.shape[dim]} but size of corresponding boolean axis is {size}"
                    )
                picks.append((len(shape), _checked(found[k], size, dim, type(x))))
                shape.append(x.shape[dim])
                strides.append(x.element_strides[dim])
                dim += 1
            continue
        size, stride = x.shape[dim], x.element_strides[dim]
        if kind == "slice":
            start, stop, step = value.indices(size)
            shape.append(len(range(start, stop, step)))
            strides.append(stride * step)
            offset += start * stride if shape[-1] else 0
        elif kind == "int" and not advanced:
            if not -size <= value < size:
                raise IndexError(f"index {value} is out of bounds for axis {dim} with size {size}")
            offset += (value % size) * stride
        else:  # an index array, or an int among index arrays (then it acts as a 0-d array)
            picks.append((len(shape), _checked(value, size, dim, type(x))))
            shape.append(size)
            strides.append(stride)
        dim += 1
    return x.view_of(shape, strides, offset), picks


def _checked(index, size, dim, array_class):
    """A device int64 index array (host indices become `array_class` arrays); host indices are
    bounds-checked first (device ones later, by the kernels)."""
    if isinstance(index, DeviceArray):
        return index if index.dtype == np.int64 else elementwise.astype(index, np.int64)
    index = np.asarray(index, dtype=np.int64)
    if index.size and (index.min() < -size or index.max() >= size):
        bad = index.min() if index.min() < -size else index.max()
        raise IndexError(f"index {bad} is out of bounds for axis {dim} with size {size}")
    if index.ndim == 0:
        return elementwise.constant(int(index), np.int64, array_class)  # on the device: no copy
    return array_class.from_numpy(index)


# ---- gather and scatter ---------------------------------------------------------------------------


def _layout(view, picks):
    """Shape of view[picks], and how to walk it in (B, rest) order (see index_kernels.py)."""
    dims = [d for d, _ in picks]
    b_shape = np.broadcast_shapes(*(a.shape for _, a in picks))
    rest = [d for d in range(view.ndim) if d not in dims]
    together = dims == list(range(dims[0], dims[0] + len(dims)))
    at = dims[0] if together else 0  # where B's dims go in the result (numpy's rule)
    rest_shape = tuple(view.shape[d] for d in rest)
    shape = rest_shape[:at] + b_shape + rest_shape[at:]
    return shape, b_shape, rest, at


def _kernel_args(view, picks, b_shape, rest):
    """The arguments that describe the picking: rest dims, the stacked index table, the flag."""
    n_b = int(np.prod(b_shape, dtype=np.int64))
    table = type(view).empty((len(picks), *b_shape), np.int64)
    for j, (_, index) in enumerate(picks):
        elementwise.assign(getitem(table, j), index)
    rest_shape = tuple(view.shape[d] for d in rest)
    rest_strides = tuple(view.element_strides[d] for d in rest)
    n_rest = int(np.prod(rest_shape, dtype=np.int64))
    index_sizes = tuple(view.shape[d] for d, _ in picks)
    index_strides = tuple(view.element_strides[d] for d, _ in picks)
    walk_rest = (view.offset, rest_shape or (1,), rest_strides or (0,), n_rest)
    picking = (table.buffer, n_b, index_sizes, index_strides, error_flag())
    return walk_rest + picking


def _b_first(strides, at, nb):
    """Strides of the result reordered to (B dims, rest dims)."""
    return strides[at : at + nb] + strides[:at] + strides[at + nb :]


def _gather(view, picks):
    shape, b_shape, rest, at = _layout(view, picks)
    out = type(view).empty(shape, view.dtype)
    if out.size:
        order = b_shape + tuple(view.shape[d] for d in rest)
        strides = _b_first(out.element_strides, at, len(b_shape))
        out_args = (out.buffer, 0, strides or (0,))
        args = (*out_args, view.buffer, *_kernel_args(view, picks, b_shape, rest))
        launch.launch_over(gather_kernel, out.size, order or (1,), *args)
    return out


def _scatter(view, picks, values, kernel):
    shape, b_shape, rest, at = _layout(view, picks)
    values = elementwise.on_device(values, view.dtype, type(view))
    if values.buffer is view.buffer:
        values = values.copy()  # read everything before anything is overwritten
    if not elementwise.broadcasts_to(values.shape, shape):
        raise ValueError(
            f"shape mismatch: value array of shape {values.shape} could not be broadcast to "
            f"indexing result of shape {shape}"
        )
    n = int(np.prod(shape, dtype=np.int64))
    if n:
        order = b_shape + tuple(view.shape[d] for d in rest)
        strides = _b_first(elementwise.broadcast_strides(values, shape), at, len(b_shape))
        values_args = (values.buffer, values.offset, strides or (0,))
        args = (*values_args, view.buffer, *_kernel_args(view, picks, b_shape, rest))
        launch.launch_over(kernel, n, order or (1,), *args)
