"""The elementwise CUDA kernels: map (one input), zip (two), where (three), fill and arange.

A first look at a GPU kernel:
- A kernel is a Python function compiled for the GPU by `@cuda.jit`. It runs once per *thread*,
  thousands of threads at a time; `cuda.grid(1)` is this thread's number, `cuda.gridsize(1)`
  how many threads were launched.
- Every kernel here uses a grid-stride loop: thread t handles items t, t + gridsize, ... so any
  launch size gives the same answer (launch.py picks it).
- An array arrives as a 1-D device buffer plus an offset and per-dimension element strides:
  element [i, j] of a 2-D operand is buffer[offset + i * strides[0] + j * strides[1]]. A broadcast
  operand has stride 0 along its broadcast dims and a transposed one has its strides swapped, so
  neither is ever copied. `position` turns "the i-th element in row-major order" into that index.

What one thread computes for one element (exp, add, ...) is in scalar_functions.py; the other
kernels: reduce_kernels.py (sum, max, argmax, softmax), matmul.py (tiled matmul), index_kernels.py
(gather, scatter, nonzero). The host code that launches these is elementwise.py.
"""

from numba import cuda

from .scalar_functions import BINARY, UNARY


@cuda.jit(device=True)
def position(i, shape, strides, offset):
    """Buffer index of the i-th element (row-major order over `shape`) of a strided array."""
    for d in range(len(shape) - 1, -1, -1):
        offset += (i % shape[d]) * strides[d]
        i //= shape[d]
    return offset


# ---- the kernels: one per scalar function, all made by the same two recipes ----------------------


def make_map_kernel(fn):
    """out[...] = fn(x[...]) over a (broadcast) shape; each operand brings its own strides.

    Threads: one element at a time each, grid-stride (thread t: elements t, t + gridsize, ...);
    consecutive threads take consecutive elements, so their memory reads are next to each other.
    """

    def map_kernel(n, shape, out, out_offset, out_strides, x, x_offset, x_strides):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            value = fn(x[position(i, shape, x_strides, x_offset)])
            out[position(i, shape, out_strides, out_offset)] = value

    return cuda.jit(map_kernel)


def make_zip_kernel(fn):
    """out[...] = fn(a[...], b[...]): a stride of 0 repeats an operand along a broadcast dim.

    Threads: as map, one output element at a time each, grid-stride.
    """

    def zip_kernel(
        n, shape, out, out_offset, out_strides, a, a_offset, a_strides, b, b_offset, b_strides
    ):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            value = fn(
                a[position(i, shape, a_strides, a_offset)],
                b[position(i, shape, b_strides, b_offset)],
            )
            out[position(i, shape, out_strides, out_offset)] = value

    return cuda.jit(zip_kernel)


MAP_KERNELS = {name: make_map_kernel(fn) for name, fn in UNARY.items()}
ZIP_KERNELS = {name: make_zip_kernel(fn) for name, fn in BINARY.items()}


@cuda.jit
def where_kernel(
    n,
    shape,
    out,
    out_offset,
    out_strides,
    cond,
    cond_offset,
    cond_strides,
    a,
    a_offset,
    a_strides,
    b,
    b_offset,
    b_strides,
):
    """out = a where cond is true, else b (numpy's three-argument `where`).

    Threads: one output element at a time each, grid-stride; only the chosen side is read.
    """
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        if cond[position(i, shape, cond_strides, cond_offset)]:
            value = a[position(i, shape, a_strides, a_offset)]
        else:
            value = b[position(i, shape, b_strides, b_offset)]
        out[position(i, shape, out_strides, out_offset)] = value


@cuda.jit
def fill_kernel(n, shape, out, out_offset, out_strides, value):
    """Every element of `out` becomes `value` (a number passed with the launch: no copy).

    Threads: one element at a time each, grid-stride.
    """
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[position(i, shape, out_strides, out_offset)] = value


@cuda.jit
def arange_kernel(n, out, start, step):
    """out[i] = start + i * step for a contiguous out; one element per thread, grid-stride."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = start + i * step
