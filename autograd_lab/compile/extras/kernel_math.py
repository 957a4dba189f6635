"""Math for generated CPU kernels, written so the compiler can vectorize the loops calling it.

Why not `math.exp`? A call to the C library's exp or tanh handles one number at a time: a loop
calling it cannot use the CPU's vector instructions (8 or 16 floats per instruction). numpy ships
its own vectorized exp/tanh, so a fused kernel calling libm would be *slower* than the numpy ops it
replaces. These versions use only +, *, /, comparisons and bit reinterpretation, which LLVM
vectorizes, and compute in float32 throughout (as numpy's float32 exp/tanh do):

    exp32(x)   x = k·ln2 + r with |r| <= ln2/2 (k an integer); e^r by its Taylor polynomial to
               r^7/7!; 2^k written straight into a float's exponent bits. <= 1 ulp (numpy: 2.5)
    exp_nonpositive32(x)   the same for x <= 0 (or NaN): a softmax's entries minus the row's max.
               It skips what only a positive x needs (overflow to inf; 2^k in two halves), a
               quarter less work where softmax and cross-entropy kernels spend most of theirs
    tanh32(x)  x·P(x²)/Q(x²), a rational function fitted to tanh on [-9, 9] (beyond, tanh is
               ±1 in float32). <= 5 ulp (numpy: 1.4); float64 would give 1, at twice the cost

Both are compiled with `fastmath={"contract"}` only: a*b + c may become one fused multiply-add
(one rounding instead of two: never less accurate); NaN and inf keep IEEE rules. exp32 flushes
results below float32's smallest normal number (1.2e-38, from x < -87.34) to 0: the subnormal
numbers in between cost ~100 cycles each on x86 CPUs, and numpy's are lost in any sum anyway.
Float64 kernels keep `math.exp`/`math.tanh`, exact to rounding.

`ceil`, `floor`, `rint`, `trunc` are numpy's, which stay float (Python's math.floor returns an
int, which has no nan or inf) and vectorize.

`order_key32/64` turn a float into an integer that sorts the same way, so a row's max can be
taken with integer instructions, which vectorize (a float max with NaN rules does not).
"""

import numpy as np
from numba import njit

_MATH = {"cache": True, "fastmath": {"contract"}, "error_model": "numpy"}
_F = np.float32

# exp: Cody-Waite split of ln 2 (the high part has few bits, so k * _LN2_HIGH is exact)
_LOG2E, _LN2_HIGH, _LN2_LOW = _F(1.4426950408889634), _F(0.693359375), _F(-2.12194440e-4)
_EXP_MAX, _EXP_MIN = _F(88.72283935546875), _F(-87.33654022216797)  # e^x is inf / subnormal

# tanh(x) = x P(t) / Q(t), t = x²: a (4, 4) rational fitted to tanh(x)/x on [0, 81] by
# least squares on the relative error, iterated (Loeb's method, Lawson weights): 2.1e-8 at most
_P = tuple(_F(c) for c in (0.9999999796807832, 0.13381054892331062, 0.0034956218447626712,
                           2.060959613725455e-05, 1.3355289173509861e-08))  # fmt: skip
_Q = tuple(_F(c) for c in (1.0, 0.467143705636848, 0.02587711307362306, 0.0003285688219936677,
                           7.776833489571567e-07))  # fmt: skip
_P0, _P1, _P2, _P3, _P4 = _P
_Q0, _Q1, _Q2, _Q3, _Q4 = _Q


@njit(**_MATH)
def _power_of_two(k):
    """2^k for -126 <= k <= 127: the biased exponent k + 127 in a float32's exponent bits."""
    return np.int32((k + 127) << 23).view(np.float32)


@njit(**_MATH)
def _exp_split(a):
    """(k, e^r) for a = k·ln2 + r, |r| <= ln2/2: k an integer (as an int32), e^r by its Taylor
    polynomial to r^7/7!, so that e^a = e^r · 2^k (the two exps below make 2^k their own way)."""
    k = np.floor(a * _LOG2E + _F(0.5))
    r = (a - k * _LN2_HIGH) - k * _LN2_LOW
    p = _F(1.0) + r * (_F(1.0) + r * (_F(1 / 2) + r * (_F(1 / 6) + r * (_F(1 / 24) + r * (
        _F(1 / 120) + r * (_F(1 / 720) + r * _F(1 / 5040)))))))  # fmt: skip
    return np.int32(k), p


@njit(**_MATH)
def exp32(x):
    """e^x of a float32, in float32, vectorizable (see the module docstring)."""
    a = _EXP_MAX if x > _EXP_MAX else (_EXP_MIN if x < _EXP_MIN else x)
    n, p = _exp_split(a)
    half = n >> 1  # 2^k as 2^half * 2^(k - half): k = 128 (e^88.7) would overflow the bits
    y = p * _power_of_two(half) * _power_of_two(n - half)
    y = _F(np.inf) if x > _EXP_MAX else (_F(0.0) if x < _EXP_MIN else y)
    return x if x != x else y


@njit(**_MATH)
def exp_nonpositive32(x):
    """e^x of a float32 x <= 0 (x minus its row's max), in float32, vectorizable: exp32 without
    the overflow steps (k <= 0 here, so 2^k fits a float's exponent bits in one go)."""
    k, p = _exp_split(_EXP_MIN if x < _EXP_MIN else x)
    y = p * _power_of_two(k)
    y = _F(0.0) if x < _EXP_MIN else y
    return x if x != x else y


@njit(**_MATH)
def tanh32(x):
    """tanh of a float32, in float32, vectorizable: x·P(x²)/Q(x²), see the module docstring."""
    a = _F(9.0) if x > _F(9.0) else (_F(-9.0) if x < _F(-9.0) else x)
    t = a * a
    p = _P0 + t * (_P1 + t * (_P2 + t * (_P3 + t * _P4)))
    q = _Q0 + t * (_Q1 + t * (_Q2 + t * (_Q3 + t * _Q4)))
    y = a * p / q
    y = _F(1.0) if y > _F(1.0) else (_F(-1.0) if y < _F(-1.0) else y)
    return x if x != x else y


# ---- floats as sortable integers --------------------------------------------------------------------
# A float's bits, read as a signed integer, sort like the float for positive numbers; negative ones
# sort backwards. Flipping every bit but the sign of the negative ones fixes that: then
# a < b  <=>  key(a) < key(b) for any non-NaN floats (-0.0 sorts just below +0.0).


@njit(inline="always", cache=True)
def order_key32(x):
    i = np.float32(x).view(np.int32)
    return i if i >= 0 else np.int32(i ^ np.int32(0x7FFFFFFF))


@njit(inline="always", cache=True)
def from_order_key32(k):
    i = k if k >= 0 else np.int32(k ^ np.int32(0x7FFFFFFF))
    return np.int32(i).view(np.float32)


@njit(inline="always", cache=True)
def order_key64(x):
    i = np.float64(x).view(np.int64)
    return i if i >= 0 else np.int64(i ^ np.int64(0x7FFFFFFFFFFFFFFF))


@njit(inline="always", cache=True)
def from_order_key64(k):
    i = k if k >= 0 else np.int64(k ^ np.int64(0x7FFFFFFFFFFFFFFF))
    return np.int64(i).view(np.float64)


# ---- rounding that stays float: numpy's, not math's (which returns an int) ----------------------


@njit(inline="always", cache=True)
def ceil(x):
    return np.ceil(x)


@njit(inline="always", cache=True)
def floor(x):
    return np.floor(x)


@njit(inline="always", cache=True)
def rint(x):
    return np.rint(x)


@njit(inline="always", cache=True)
def trunc(x):
    return np.trunc(x)
