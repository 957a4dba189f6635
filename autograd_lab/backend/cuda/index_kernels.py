"""Kernels for indexing with arrays: gather (`x[idx]`), scatter (`x[idx] = v`), scatter-add
(`np.add.at(x, idx, v)`, the backward of indexing) and nonzero (a boolean mask -> indices).

The host (indexing.py) first applies the basic parts of an index (ints, slices, None) as a view.
Then k index arrays, broadcast to a shape B, pick for each position b in B one element along each
of k dims of that view; the remaining dims ("rest") are taken whole. So the result is B x rest,
and thread work item i is the pair (b, r) = divmod(i, size of rest). `indices` holds the k index
arrays as rows of one (k, |B|) int64 buffer.

An index out of range cannot raise inside a kernel; like CUDA's device-side asserts, it sets a
flag on the device that is checked, and reported as an IndexError, at the next copy to the host.
"""

import functools

import numba
import numpy as np
from numba import cuda

from .kernels import fill_kernel, position
from .launch import device_array, launch_over

_error_flag = None  # a 1-element int32 device array, made on first use
_maybe_error = False  # has a kernel run with device-side indices since the last check?


@cuda.jit(device=True)
def indexed_position(b, indices, n_b, index_sizes, index_strides, base, error):
    """Add the k picked positions of item b to `base`; negative indices count from the end."""
    for j in range(len(index_sizes)):
        v = indices[j * n_b + b]
        if v < 0:
            v += index_sizes[j]
        if v < 0 or v >= index_sizes[j]:
            error[0] = 1
            v = 0  # read something harmless; the host raises later
        base += v * index_strides[j]
    return base


@cuda.jit
def gather_kernel(
    n,
    shape,
    out,
    out_offset,
    out_strides,
    src,
    src_offset,
    rest_shape,
    rest_strides,
    n_rest,
    indices,
    n_b,
    index_sizes,
    index_strides,
    error,
):
    """out[b, r] = src[picked by b, r]; `shape` and `out_strides` are in (B, rest) order.

    Threads: one output element (b, r) at a time each, grid-stride.
    """
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        b, r = i // n_rest, i % n_rest
        pos = position(r, rest_shape, rest_strides, src_offset)
        pos = indexed_position(b, indices, n_b, index_sizes, index_strides, pos, error)
        out[position(i, shape, out_strides, out_offset)] = src[pos]


def make_scatter_kernel(accumulate):
    """dst[picked by b, r] = (or +=) values[b, r]; one (b, r) at a time per thread, grid-stride.
    Adding uses an atomic read-modify-write, because a repeated index makes several threads add
    into the same element at the same time."""

    def scatter(
        n,
        shape,
        values,
        values_offset,
        values_strides,
        dst,
        dst_offset,
        rest_shape,
        rest_strides,
        n_rest,
        indices,
        n_b,
        index_sizes,
        index_strides,
        error,
    ):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            b, r = i // n_rest, i % n_rest
            pos = position(r, rest_shape, rest_strides, dst_offset)
            pos = indexed_position(b, indices, n_b, index_sizes, index_strides, pos, error)
            value = values[position(i, shape, values_strides, values_offset)]
            if accumulate:
                cuda.atomic.add(dst, pos, value)
            else:
                dst[pos] = value  # repeated indices: one of the values wins (numpy: the last)

    return cuda.jit(scatter)


scatter_kernel = make_scatter_kernel(accumulate=False)
scatter_add_kernel = make_scatter_kernel(accumulate=True)


@functools.cache
def nonzero_kernel(threads):
    """The multi-indices of the True elements of a mask, in row-major order: one block walks the
    mask in chunks of `threads` elements; a prefix sum over each chunk (in shared memory) gives
    every True element its slot in the output. `out` is (ndim, count), one row per dim."""

    def nonzero(mask, mask_offset, shape, strides, n, out, count):
        before = cuda.shared.array(threads, numba.int64)  # becomes: True elements up to me
        tid = cuda.threadIdx.x
        base = 0  # True elements in the chunks already done
        for start in range(0, n, threads):
            i = start + tid
            hit = 0
            if i < n and mask[position(i, shape, strides, mask_offset)]:
                hit = 1
            before[tid] = hit
            cuda.syncthreads()
            step = 1
            while step < threads:  # inclusive prefix sum: add the value `step` places back
                add = before[tid - step] if tid >= step else 0
                cuda.syncthreads()
                before[tid] += add
                cuda.syncthreads()
                step *= 2
            if hit:
                slot, rest = base + before[tid] - 1, i
                for d in range(len(shape) - 1, -1, -1):
                    out[d * count + slot] = rest % shape[d]
                    rest //= shape[d]
            base += before[threads - 1]
            cuda.syncthreads()

    return cuda.jit(nonzero)


def error_flag():
    """The device flag that index kernels set; taking it means the next sync checks it."""
    global _error_flag, _maybe_error
    if _error_flag is None:
        _error_flag = device_array(1, np.int32)
        launch_over(fill_kernel, 1, (1,), _error_flag, 0, (1,), np.int32(0))
    _maybe_error = True
    return _error_flag


def check_index_errors():
    """Raise the IndexError a kernel flagged (called before every copy to the host)."""
    global _maybe_error
    if not _maybe_error:
        return
    _maybe_error = False
    if _error_flag.copy_to_host()[0]:  # a 4-byte read that rides along with the copy asked for
        launch_over(fill_kernel, 1, (1,), _error_flag, 0, (1,), np.int32(0))
        raise IndexError(
            "index out of range in an indexing operation on the GPU (an index array held a "
            "value outside [-size, size) of the dim it indexes). CUDA reports such errors at the "
            "next synchronisation, so the failing line may be earlier than this one."
        )
