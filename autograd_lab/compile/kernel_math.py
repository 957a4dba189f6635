"""exp and tanh for float32 CPU kernels, written so the compiler can vectorize the loop.

Why not `math.exp`? A call to the C library's exp or tanh handles one number at a time: a loop
calling it cannot use the CPU's vector instructions (8 or 16 floats per instruction). numpy ships
its own vectorized exp/tanh, so a fused kernel calling libm would be *slower* than the numpy ops it
replaces. These versions use only +, *, / and comparisons, which LLVM vectorizes:

    exp(-a) = (e^(-a/1024))^1024       a >= 0: a degree-7 Taylor polynomial on [0, 0.1] (a <= 102)
                                       then 10 squarings; e^x = 1 / e^(-x) for x > 0

All in float64 arithmetic, rounded to float32 at the end: the result is within 1 float32 ulp of
the exact value (the polynomial's 3e-13 error grows 1024-fold by squaring: still far below 6e-8).
Float64 kernels keep `math.exp`/`math.tanh`, which are exact to rounding. Only the generated
float32 CPU kernels import this module: `from autograd_lab.compile.kernel_math import exp32 as exp`.
"""

import numpy as np
from numba import njit

_INLINE = {"inline": "always", "cache": True, "fastmath": False, "error_model": "numpy"}


@njit(**_INLINE)
def exp_minus(a):
    """e^(-a) for a >= 0 (float64): a polynomial for e^(-a/1024), then squared 10 times."""
    a = 1024.0 if a > 1024.0 else a  # e^-1024 is 0 in float64 anyway; NaN passes through
    s = a * (1.0 / 1024.0)
    p = 1.0 - s * (1.0 - s * (1.0 / 2 - s * (1.0 / 6 - s * (1.0 / 24 - s * (
        1.0 / 120 - s * (1.0 / 720 - s * (1.0 / 5040)))))))  # fmt: skip
    p = p * p
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
    e = exp_minus(abs(y))
    return np.float32(e if y <= 0.0 else 1.0 / e)  # 1/0 = inf past float32's range, as exp does


@njit(**_INLINE)
def tanh32(x):
    """tanh of a float32, vectorizable: (1 - e^(-2|x|)) / (1 + e^(-2|x|)), with x's sign.

    Near 0 that difference cancels, so there tanh(x) = x (exact to float32 for |x| < 2^-12).
    """
    y = np.float64(x)
    a = abs(y)
    e = exp_minus(2.0 * a)
    t = (1.0 - e) / (1.0 + e)
    t = a if a < 0.000244140625 else t
    return np.float32(t if y >= 0.0 else -t)
