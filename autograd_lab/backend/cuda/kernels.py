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

The other kernels: reduce_kernels.py (sum, max, argmax, softmax), matmul.py (tiled matmul),
index_kernels.py (gather, scatter, nonzero). The host code that launches these is elementwise.py.
"""

import math

from numba import cuda

INF = math.inf
NAN = math.nan


@cuda.jit(device=True)
def position(i, shape, strides, offset):
    """Buffer index of the i-th element (row-major order over `shape`) of a strided array."""
    for d in range(len(shape) - 1, -1, -1):
        offset += (i % shape[d]) * strides[d]
        i //= shape[d]
    return offset


# ---- what one thread computes for one element ----------------------------------------------------
# The cases written out (log(0) = -inf, sqrt(-1) = nan, ...) are numpy's answers. A GPU's math
# library gives them anyway; the simulator runs Python's `math`, which raises instead.


@cuda.jit(device=True)
def copy(x):
    return x


@cuda.jit(device=True)
def not_zero(x):  # astype(bool)
    return x != 0


@cuda.jit(device=True)
def positive(x):
    return x


@cuda.jit(device=True)
def negative(x):
    return -x


@cuda.jit(device=True)
def absolute(x):
    return abs(x)


@cuda.jit(device=True)
def sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return x  # 0 stays 0, nan stays nan


@cuda.jit(device=True)
def square(x):
    return x * x


@cuda.jit(device=True)
def exp(x):
    return INF if x > 709.782712893384 else math.exp(x)


@cuda.jit(device=True)
def expm1(x):
    return INF if x > 709.782712893384 else math.expm1(x)


@cuda.jit(device=True)
def log(x):
    if x > 0:
        return math.log(x)
    return -INF if x == 0 else NAN


@cuda.jit(device=True)
def log1p(x):
    if x > -1:
        return math.log1p(x)
    return -INF if x == -1 else NAN


@cuda.jit(device=True)
def sqrt(x):
    return math.sqrt(x) if x >= 0 else NAN


@cuda.jit(device=True)
def sin(x):
    return NAN if math.isinf(x) else math.sin(x)


@cuda.jit(device=True)
def cos(x):
    return NAN if math.isinf(x) else math.cos(x)


@cuda.jit(device=True)
def tanh(x):
    return math.tanh(x)


@cuda.jit(device=True)
def trunc(x):  # toward zero; nan, inf and floats too big to have a fraction stay as they are
    if x != x or abs(x) >= 4503599627370496.0:
        return x
    return math.copysign(x - math.fmod(x, 1.0), x)  # copysign keeps trunc(-0.5) = -0.0


@cuda.jit(device=True)
def logical_not(x):
    return x == 0


@cuda.jit(device=True)
def isnan(x):
    return x != x


@cuda.jit(device=True)
def isinf(x):
    return x == INF or x == -INF


@cuda.jit(device=True)
def isfinite(x):
    return x == x and x != INF and x != -INF


@cuda.jit(device=True)
def invert(x):  # ~ of integers (for bools the host picks logical_not)
    return ~x


@cuda.jit(device=True)
def add(a, b):
    return a + b


@cuda.jit(device=True)
def subtract(a, b):
    return a - b


@cuda.jit(device=True)
def multiply(a, b):
    return a * b


@cuda.jit(device=True)
def divide(a, b):
    return a / b


@cuda.jit(device=True)
def power(a, b):
    return a**b


@cuda.jit(device=True)
def copysign(a, b):
    return math.copysign(a, b)


@cuda.jit(device=True)
def maximum(a, b):
    return a if a > b or a != a else b  # a nan on either side wins, as in numpy


@cuda.jit(device=True)
def minimum(a, b):
    return a if a < b or a != a else b


@cuda.jit(device=True)
def equal(a, b):
    return a == b


@cuda.jit(device=True)
def not_equal(a, b):
    return a != b


@cuda.jit(device=True)
def less(a, b):
    return a < b


@cuda.jit(device=True)
def less_equal(a, b):
    return a <= b


@cuda.jit(device=True)
def greater(a, b):
    return a > b


@cuda.jit(device=True)
def greater_equal(a, b):
    return a >= b


@cuda.jit(device=True)
def logical_and(a, b):
    return a != 0 and b != 0


@cuda.jit(device=True)
def logical_or(a, b):
    return a != 0 or b != 0


@cuda.jit(device=True)
def logical_xor(a, b):
    return (a != 0) != (b != 0)


@cuda.jit(device=True)
def bitwise_and(a, b):
    return a & b


@cuda.jit(device=True)
def bitwise_or(a, b):
    return a | b


@cuda.jit(device=True)
def bitwise_xor(a, b):
    return a ^ b


# ---- the kernels: one per scalar function, all made by the same two recipes ----------------------


def make_map_kernel(fn):
    """out[...] = fn(x[...]) over a (broadcast) shape; each operand brings its own strides."""

    def map_kernel(n, shape, out, out_offset, out_strides, x, x_offset, x_strides):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            value = fn(x[position(i, shape, x_strides, x_offset)])
            out[position(i, shape, out_strides, out_offset)] = value

    return cuda.jit(map_kernel)


def make_zip_kernel(fn):
    """out[...] = fn(a[...], b[...]): a stride of 0 repeats an operand along a broadcast dim."""

    def zip_kernel(n, shape, out, out_offset, out_strides, a, a_offset, a_strides, b, b_offset,
                   b_strides):  # fmt: skip
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            value = fn(a[position(i, shape, a_strides, a_offset)],
                       b[position(i, shape, b_strides, b_offset)])  # fmt: skip
            out[position(i, shape, out_strides, out_offset)] = value

    return cuda.jit(zip_kernel)


UNARY = {f.__name__: f for f in (copy, not_zero, positive, negative, absolute, sign, square, exp,
         expm1, log, log1p, sqrt, sin, cos, tanh, trunc, logical_not, isnan, isinf, isfinite,
         invert)}  # fmt: skip
BINARY = {f.__name__: f for f in (add, subtract, multiply, divide, power, copysign, maximum,
          minimum, equal, not_equal, less, less_equal, greater, greater_equal, logical_and,
          logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor)}  # fmt: skip
MAP_KERNELS = {name: make_map_kernel(fn) for name, fn in UNARY.items()}
ZIP_KERNELS = {name: make_zip_kernel(fn) for name, fn in BINARY.items()}


@cuda.jit
def where_kernel(n, shape, out, out_offset, out_strides, cond, cond_offset, cond_strides, a,
                 a_offset, a_strides, b, b_offset, b_strides):  # fmt: skip
    """out = a where cond is true, else b (numpy's three-argument `where`)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        if cond[position(i, shape, cond_strides, cond_offset)]:
            value = a[position(i, shape, a_strides, a_offset)]
        else:
            value = b[position(i, shape, b_strides, b_offset)]
        out[position(i, shape, out_strides, out_offset)] = value


@cuda.jit
def fill_kernel(n, shape, out, out_offset, out_strides, value):
    """Every element of `out` becomes `value` (a number passed with the launch: no copy)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[position(i, shape, out_strides, out_offset)] = value


@cuda.jit
def arange_kernel(n, out, start, step):
    """out[i] = start + i * step for a contiguous out."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = start + i * step
