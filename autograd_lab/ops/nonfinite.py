"""Infinities and nans: finding them (isinf, isposinf, isneginf) and replacing them (nan_to_num).

A float can hold inf, -inf and nan (not a number: 0/0, inf - inf). They spread through every
sum they enter, so a training run that meets one is usually lost; these ops find them, and
nan_to_num swaps them for ordinary numbers.

    >>> autograd_lab.nan_to_num(autograd_lab.tensor([1.0, float("nan"), float("inf")]))
    tensor([1.0000e+00, 0.0000e+00, 3.4028e+38])
"""

import numpy as np

from ..autograd.function import Op
from ..tensor import _make
from . import scalar
from .registry import public


def _question(name, numpy_test, doc):
    """A public function answering a question about each element with a bool tensor."""

    def ask(input):
        if input._data.dtype.kind != "f":  # integers and bools are never infinite (and numpy
            return _make(np.zeros_like(input._data, dtype=bool))  # cannot subtract bools)
        with np.errstate(invalid="ignore"):  # inf - inf is nan: that is the point
            return _make(numpy_test(input._data))

    ask.__name__ = ask.__qualname__ = name
    ask.__doc__ = doc
    ask.kernel = numpy_test  # the same formula for one element of a fused kernel
    return public(name, method=True)(ask)


# Written without an `inf` constant (a generated kernel has no name for it): x - x is 0 for
# every finite x, and nan for ±inf and nan; nan is the one value that differs from itself.
def _infinite(x):
    return (x - x != 0) & (x == x)


isinf = _question("isinf", _infinite, "x is +inf or -inf, element by element")
isposinf = _question("isposinf", lambda x: _infinite(x) & (x > 0), "x is +inf")
isneginf = _question("isneginf", lambda x: _infinite(x) & (x < 0), "x is -inf")


def _nan_to_num(x, nan, posinf, neginf):
    """x with nan, +inf and -inf replaced (numpy calls only, and a valid kernel formula)."""
    replaced = scalar.where(x > 0, posinf, neginf)
    return scalar.where(x != x, nan, scalar.where(_infinite(x), replaced, x))


class NanToNum(Op):
    """nan, inf, -inf replaced by numbers; the gradient passes where x was finite."""

    node_name = "NanToNumBackward0"
    saved_names = ("self",)
    kernel = staticmethod(_nan_to_num)
    derivative = "1 where x is finite, 0 where it was replaced"

    @staticmethod
    def forward(ctx, input, nan, posinf, neginf):
        ctx.save_for_backward(input)
        data = input._data
        if data.dtype.kind != "f":  # integers have no nan or inf: a copy, as in PyTorch
            return data.copy()
        with np.errstate(invalid="ignore"):
            return _nan_to_num(data, nan, posinf, neginf).astype(data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        finite = x.abs() <= float(np.finfo(x._data.dtype).max)  # neither ±inf nor nan
        return grad * finite  # PyTorch multiplies here (an inf gradient at a replaced x: nan)


@public("nan_to_num", method=True, inplace=True, out=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan -> `nan` (0 by default), inf -> `posinf`, -inf -> `neginf` (by default the largest and
    the lowest number the tensor's dtype can hold)."""
    data = input._data
    if data.dtype.kind == "f":
        limits = np.finfo(data.dtype)
        posinf = float(limits.max) if posinf is None else posinf
        neginf = float(limits.min) if neginf is None else neginf
    return NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)
