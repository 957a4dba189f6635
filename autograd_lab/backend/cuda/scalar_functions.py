"""What one GPU thread computes for one element: the scalar functions of the elementwise kernels.

Each is a `@cuda.jit(device=True)` function: compiled for the GPU and called from kernels (not
launched by itself). kernels.py turns each one into a kernel (UNARY -> map kernels, BINARY -> zip
kernels). The cases written out (log(0) = -inf, sqrt(-1) = nan, ...) are numpy's answers: a GPU's
math library gives them anyway, but the simulator runs Python's `math`, which raises instead.
"""

import math

from numba import cuda

INF = math.inf
NAN = math.nan


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
def sinh(x):
    # past ±710.5 the double overflows: numpy's ±inf (Python's math raises); nan stays nan
    return math.copysign(INF, x) if abs(x) >= 710.5 else math.sinh(x)


@cuda.jit(device=True)
def cosh(x):
    return INF if abs(x) >= 710.5 else math.cosh(x)  # past ±710.5 the double overflows


@cuda.jit(device=True)
def arcsin(x):
    return math.asin(x) if -1 <= x <= 1 else NAN


@cuda.jit(device=True)
def arccos(x):
    return math.acos(x) if -1 <= x <= 1 else NAN


@cuda.jit(device=True)
def arctan(x):
    return math.atan(x)


@cuda.jit(device=True)
def log2(x):
    if x > 0:
        return math.log2(x)
    return -INF if x == 0 else NAN


@cuda.jit(device=True)
def log10(x):
    if x > 0:
        return math.log10(x)
    return -INF if x == 0 else NAN


@cuda.jit(device=True)
def tan(x):
    return NAN if math.isinf(x) else math.tan(x)


@cuda.jit(device=True)
def tanh(x):
    return math.tanh(x)


@cuda.jit(device=True)
def trunc(x):  # toward zero; nan, inf and floats too big to have a fraction stay as they are
    if x != x or abs(x) >= 4503599627370496.0:
        return x
    return math.copysign(x - math.fmod(x, 1.0), x)  # copysign keeps trunc(-0.5) = -0.0


# Rounding stays float, as numpy's does (Python's math.floor and math.ceil return an int, which has
# no nan or inf; the simulator's math raises on them): each is built on trunc above.
@cuda.jit(device=True)
def floor(x):
    whole = trunc(x)
    return whole - 1 if whole > x else whole  # below zero, trunc went up: one step down


@cuda.jit(device=True)
def ceil(x):
    whole = trunc(x)
    return whole + 1 if whole < x else whole  # above zero, trunc went down: one step up


@cuda.jit(device=True)
def rint(x):  # to the nearest whole number, halves to the even one (round(2.5) = 2)
    below = floor(x)
    rest = x - below  # nan for nan and inf: neither comparison holds, `below` is the answer
    if rest > 0.5 or (rest == 0.5 and math.fmod(below, 2.0) != 0):
        below += 1
    return math.copysign(below, x)  # rint(-0.4) is -0.0, as in numpy


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


# Rounding division: // and % already round down with numpy's answers, as `divide` above gives
# numpy's x / 0 (the kernels run with numpy's error model: x // 0 is inf for floats and 0 for
# integers, x % 0 is nan or 0, never an exception).
@cuda.jit(device=True)
def floor_divide(a, b):
    return a // b


@cuda.jit(device=True)
def remainder(a, b):  # the sign of b, as Python's %
    return a % b


@cuda.jit(device=True)
def fmod(a, b):  # the sign of a, as C's fmod (Python's math.fmod would raise at 0 and inf)
    if b == INF or b == -INF:
        return a if a - a == 0 else a - a  # a finite a stays; inf - inf and nan give nan
    rest = a % b  # b's sign; where it differs from a's, one b too many was taken away
    if rest == 0:
        return a * 0  # zero with a's sign: fmod(-4.0, 2.0) is -0.0
    if (rest < 0) != (a < 0):
        rest -= b
    return rest


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


# Every device function above, by the numpy name it answers for (np.tan(x) -> tan), as kernels.py
# reads them: one argument makes a map kernel, two a zip kernel.
UNARY = {
    name: f
    for name, f in list(globals().items())
    if isinstance(f, type(copy)) and f.py_func.__code__.co_argcount == 1
}
BINARY = {
    name: f
    for name, f in list(globals().items())
    if isinstance(f, type(copy)) and f.py_func.__code__.co_argcount == 2
}
