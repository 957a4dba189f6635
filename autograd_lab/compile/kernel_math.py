"""exp and tanh for float32 CPU kernels, written so the compiler can vectorize the loop.

Why not `math.exp`? A call to the C library's exp or tanh handles one number at a time: a loop
calling it cannot use the CPU's vector instructions (8 or 16 floats per instruction). numpy ships
its own vectorized exp/tanh, so a fused kernel calling libm would be *slower* than the numpy ops it
replaces. These versions use only +, *, / and comparisons, which LLVM vectorizes:

    e^(-a), a >= 0:   p = e^(-a/1024) by a degree-7 Taylor polynomial, then squared 10 times
    exp(x) = e^(-|x|) for x <= 0, 1 / e^(-|x|) for x > 0
    tanh(x) = (1 - e^(-2|x|)) / (1 + e^(-2|x|)) with x's sign, and x itself for |x| < 1e-5

All in float64 arithmetic, rounded to float32 at the end: within a float32 rounding of the exact
value (the polynomial's error, 4e-13 at most, grows 1024-fold: still far below float32's 6e-8).
Float64 kernels keep `math.exp`/`math.tanh`, which are exact to rounding. Only the generated
float32 CPU kernels import this module: `from autograd_lab.compile.kernel_math import exp32 as exp`.
"""

import numpy as np
from numba import njit

_INLINE = {"inline": "always", "cache": True, "fastmath": False, "error_model": "numpy"}


@njit(**_INLINE)
def exp_minus(a):
    """e^(-a) for 0 <= a <= 110 (float64), to a relative 1e-9."""
    s = a * (1.0 / 1024.0)
    p = 1.0 - s * (1.0 - s * (1.0 / 2 - s * (1.0 / 6 - s * (1.0 / 24 - s * (
        1.0 / 120 - s * (1.0 / 720 - s * (1.0 / 5040)))))))  # fmt: skip
    p = p * p  # ten times: e^(-a/1024) -> e^(-a)
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    return p * p


@njit(**_INLINE)
def exp32(x):
    """e^x of a float32, vectorizable (see the module docstring)."""
    y = np.float64(x)
    a = abs(y)
    a = 110.0 if a > 110.0 else a  # e^-110 is 0 and e^110 inf in float32; NaN passes through
    e = exp_minus(a)
    return np.float32(e if y <= 0.0 else 1.0 / e)


@njit(**_INLINE)
def tanh32(x):
    """tanh of a float32, vectorizable: (1 - e^(-2|x|)) / (1 + e^(-2|x|)), with x's sign.

    Near 0 that difference cancels (e^(-2|x|) is off by 1e-13 after the squarings), so below
    |x| = 1e-5 it is x itself: tanh(x) = x - x^3/3 equals x there to float32's precision.
    """
    y = np.float64(x)
    a = 2.0 * abs(y)
    a = 40.0 if a > 40.0 else a  # tanh(20) is 1 in float32; NaN passes through
    e = exp_minus(a)
    t = (1.0 - e) / (1.0 + e)
    t = 0.5 * a if a < 2e-5 else t
    return np.float32(t if y >= 0.0 else -t)
