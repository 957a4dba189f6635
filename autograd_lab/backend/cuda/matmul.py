"""Matrix multiplication: a tiled shared-memory kernel with several outputs per thread.

C = A @ B, A of shape (m, k), B of shape (k, n). A block of TY x TX threads computes one TM x TN
tile of C (TM = TY * RM, TN = TX * RN): each thread owns RM x RN outputs, kept in registers. The
block walks along k in steps of TK. At each step its threads together load a TM x TK slice of A
and a TK x TN slice of B into shared memory, wait (`syncthreads`), multiply-accumulate, and wait
again before the next slice overwrites the tiles. Every element loaded from (slow) global memory is
then used TN or TM times from (fast) shared memory, and every value read from shared memory RM or
RN times from registers: that reuse is what makes a matmul kernel fast.

Batched and broadcast leading dims are more tiles to loop over; a transposed operand is only a
swap of its row and column strides, never a copy.
"""

import functools

import numba
import numpy as np
from numba import cuda

from . import elementwise, launch, shapes
from .device_array import class_of
from .kernels import position


@functools.cache
def matmul_kernel(dtype, ty, tx, rm, rn, tk):
    """The kernel for one dtype and tile shape (shared and local array sizes are constants)."""
    tm, tn = ty * rm, tx * rn
    element = numba.from_dtype(np.dtype(dtype))

    def matmul(
        a,
        a_offset,
        a_batch_strides,
        a_row_stride,
        a_col_stride,
        b,
        b_offset,
        b_batch_strides,
        b_row_stride,
        b_col_stride,
        out,
        batch_shape,
        n_batch,
        m,
        n,
        k,
    ):
        a_tile = cuda.shared.array((tm, tk), element)
        b_tile = cuda.shared.array((tk, tn), element)
        acc = cuda.local.array((rm, rn), element)  # this thread's outputs, in registers
        a_column = cuda.local.array(rm, element)
        b_row = cuda.local.array(rn, element)
        thread_row, thread_col = cuda.threadIdx.y, cuda.threadIdx.x
        me = thread_row * tx + thread_col  # this thread's number within the block
        tiles_m, tiles_n = (m + tm - 1) // tm, (n + tn - 1) // tn
        for tile in range(cuda.blockIdx.x, n_batch * tiles_m * tiles_n, cuda.gridDim.x):
            batch, in_matrix = tile // (tiles_m * tiles_n), tile % (tiles_m * tiles_n)
            row0, col0 = (in_matrix // tiles_n) * tm, (in_matrix % tiles_n) * tn
            a_base = position(batch, batch_shape, a_batch_strides, a_offset)
            b_base = position(batch, batch_shape, b_batch_strides, b_offset)
            for i in range(rm):
                for j in range(rn):
                    acc[i, j] = 0
            for k0 in range(0, k, tk):
                for e in range(me, tm * tk, ty * tx):  # load the tiles; zeros past the edges
                    r, c = e // tk, e % tk
                    if row0 + r < m and k0 + c < k:
                        a_tile[r, c] = a[
                            a_base + (row0 + r) * a_row_stride + (k0 + c) * a_col_stride
                        ]
                    else:
                        a_tile[r, c] = 0
                for e in range(me, tk * tn, ty * tx):
                    r, c = e // tn, e % tn
                    if k0 + r < k and col0 + c < n:
                        b_tile[r, c] = b[
                            b_base + (k0 + r) * b_row_stride + (col0 + c) * b_col_stride
                        ]
                    else:
                        b_tile[r, c] = 0
                cuda.syncthreads()
                for kk in range(tk):
                    for i in range(rm):  # this thread's rows are thread_row, + ty, + 2 ty, ...
                        a_column[i] = a_tile[thread_row + i * ty, kk]
                    for j in range(rn):
                        b_row[j] = b_tile[kk, thread_col + j * tx]
                    for i in range(rm):
                        for j in range(rn):
                            acc[i, j] += a_column[i] * b_row[j]
                cuda.syncthreads()
            for i in range(rm):
                row = row0 + thread_row + i * ty
                for j in range(rn):
                    col = col0 + thread_col + j * tx
                    if row < m and col < n:
                        out[(batch * m + row) * n + col] = acc[i, j]

    return cuda.jit(matmul)


def _batch_strides(x, batch):
    """Strides of x's leading (batch) dims, seen as the broadcast batch shape."""
    lead = len(batch) - (x.ndim - 2)
    pairs = zip(batch[lead:], x.shape[:-2], x.element_strides[:-2])
    return tuple([0] * lead + [s if n == size else 0 for size, n, s in pairs]) or (0,)


def matmul(a, b, out=None, tiles=None):
    """numpy's matmul: 1-D operands are a row (left) or a column (right), batch dims broadcast.

    `tiles` = (TY, TX, RM, RN, TK) overrides launch.MATMUL (the tests run the GPU's sizes too).
    """
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions (a 0-d array)")
    loop = np.matmul.resolve_dtypes((a.dtype, b.dtype, None))
    if loop[-1] == np.bool_:
        raise NotImplementedError(
            "numpy.matmul of bool arrays is not implemented on the CUDA backend"
        )
    array_class = class_of([a, b, out])
    a = elementwise.on_device(a, loop[0], array_class)
    b = elementwise.on_device(b, loop[1], array_class)
    a2 = a.view_of((1, *a.shape), (0, *a.element_strides), a.offset) if a.ndim == 1 else a
    b2 = b.view_of((*b.shape, 1), (*b.element_strides, 0), b.offset) if b.ndim == 1 else b
    (m, k), (k2, n) = a2.shape[-2:], b2.shape[-2:]
    if k != k2:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {k2} is different from {k})"
        )
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    result = array_class.empty(batch + (m, n), loop[-1])
    n_batch = int(np.prod(batch, dtype=np.int64))
    if result.size and k == 0:
        result.fill(0)
    elif result.size:
        ty, tx, rm, rn, tk = launch.MATMUL if tiles is None else tiles
        kernel = matmul_kernel(result.dtype, ty, tx, rm, rn, tk)
        n_tiles = n_batch * -(-m // (ty * rm)) * -(-n // (tx * rn))
        a_args = (a2.buffer, a2.offset, _batch_strides(a2, batch), *a2.element_strides[-2:])
        b_args = (b2.buffer, b2.offset, _batch_strides(b2, batch), *b2.element_strides[-2:])
        args = (*a_args, *b_args, result.buffer, batch or (1,), n_batch, m, n, k)
        launch.launch(kernel, launch.blocks_for(n_tiles, 1), (tx, ty), *args)
    if a.ndim == 1 or b.ndim == 1:  # the added row / column goes again
        keep = batch + ((m,) if a.ndim > 1 else ()) + ((n,) if b.ndim > 1 else ())
        result = shapes.reshape(result, keep)
    return result if out is None else elementwise.assign(out, result)
