"""Rounding to whole numbers (ceil, floor, round, trunc), the fractional part (frac), and rsqrt.

A rounded value is flat between two whole numbers and jumps at them, so its derivative is 0
almost everywhere: PyTorch records the node all the same (CeilBackward0, ...) and sends back
zeros. frac(x) = x - trunc(x) moves with x, so its gradient passes through unchanged.

    >>> x = autograd_lab.tensor([-1.5, 0.5, 2.5], requires_grad=True)
    >>> x.round()                          # halves go to the even neighbour, as in PyTorch
    tensor([-2.,  0.,  2.], grad_fn=<RoundBackward0>)

Integer tensors are whole already: rounding returns them unchanged (PyTorch does the same); bool
tensors are refused, as PyTorch refuses them.
"""

import numpy as np

from ..autograd.function import Op
from ..tensor import _make
from . import scalar
from .elementwise import _float, _zeros
from .registry import public


def _whole_numbers(name, input):
    """The input's array, checked: rounding takes numbers, not truth values."""
    data = input._data
    if data.dtype == np.bool_:
        raise NotImplementedError(
            f'"{name}" is not implemented for bool tensors: True and False have nothing to round. '
            f"Fix: convert first, x.float().{name}()"
        )
    return data


def _rounded(numpy_round, name, input):
    data = _whole_numbers(name, input)
    return numpy_round(data) if data.dtype.kind == "f" else data.copy()  # ints are whole already


class Ceil(Op):
    """The smallest whole number >= x, element by element."""

    function, method, inplace = "ceil", True, True
    node_name = "CeilBackward0"
    kernel = staticmethod(lambda input: scalar.ceil(input))
    derivative = "d ceil(x)/dx = 0: the output is flat between whole numbers"
    piecewise = True

    @staticmethod
    def forward(ctx, input):
        return _rounded(np.ceil, "ceil", input)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad)  # exact zeros: grad * 0 is nan for an inf gradient


class Floor(Op):
    """The largest whole number <= x, element by element."""

    function, method, inplace = "floor", True, True
    node_name = "FloorBackward0"
    kernel = staticmethod(lambda input: scalar.floor(input))
    derivative = "d floor(x)/dx = 0: the output is flat between whole numbers"
    piecewise = True

    @staticmethod
    def forward(ctx, input):
        return _rounded(np.floor, "floor", input)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad)  # exact zeros: grad * 0 is nan for an inf gradient


class Trunc(Op):
    """x without its fractional part (rounded toward zero), element by element."""

    function, method, inplace = ("trunc", "fix"), True, True
    node_name = "TruncBackward0"
    kernel = staticmethod(lambda input: scalar.trunc(input))
    derivative = "d trunc(x)/dx = 0: the output is flat between whole numbers"
    piecewise = True

    @staticmethod
    def forward(ctx, input):
        return _rounded(np.trunc, "trunc", input)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad)  # exact zeros: grad * 0 is nan for an inf gradient


class Round(Op):
    """The nearest whole number; halves go to the even one (round(2.5) = 2), as in PyTorch."""

    node_name = "RoundBackward0"
    kernel = staticmethod(lambda input: scalar.rint(input))
    derivative = "d round(x)/dx = 0: the output is flat between whole numbers"
    piecewise = True

    @staticmethod
    def forward(ctx, input):
        return _rounded(np.rint, "round", input)  # np.round would be the same, but is no ufunc

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad)  # exact zeros: grad * 0 is nan for an inf gradient


def _round_decimals(x, decimals, scale):
    """x rounded to `decimals` places: scale to whole numbers, round, scale back. Like PyTorch,
    a negative count divides (round(1234.5, decimals=-2) = 1200) rather than multiplying by
    10^-2, which is not exact in binary; `scale` = 10^|decimals| in x's own float type."""
    if decimals >= 0:
        return scalar.rint(x * scale) / scale
    return scalar.rint(x / scale) * scale


class RoundDecimals(Op):
    """round(x, decimals=d): to d decimal places (d < 0: to tens, hundreds, ...)."""

    node_name = "RoundBackward1"
    kernel = staticmethod(
        lambda input, decimals: _round_decimals(input, decimals, 10.0 ** abs(decimals))
    )
    derivative = "d round(x, decimals)/dx = 0: the output is flat between steps"
    piecewise = True

    @staticmethod
    def forward(ctx, input, decimals):
        data = _whole_numbers("round", input)
        if data.dtype.kind != "f":
            raise NotImplementedError(
                f"round(decimals={decimals}) is not implemented for {input.dtype} tensors (PyTorch "
                "rounds integers only when no decimals= is given). Fix: convert first, "
                "x.float().round(...), or leave decimals out"
            )
        scale = data.dtype.type(10.0 ** abs(decimals))  # float32 data: float32 arithmetic
        return _round_decimals(data, decimals, scale)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad)  # exact zeros: grad * 0 is nan for an inf gradient


class Frac(Op):
    """The fractional part x - trunc(x), element by element (frac(-1.25) = -0.25)."""

    function, method, inplace = "frac", True, True
    node_name = "FracBackward0"
    kernel = staticmethod(lambda input: input - scalar.trunc(input))
    derivative = "d frac(x)/dx = 1 (between whole numbers)"

    @staticmethod
    @np.errstate(invalid="ignore")  # frac(inf) = inf - inf = nan, as in PyTorch
    def forward(ctx, input):
        data = _whole_numbers("frac", input)
        if data.dtype.kind != "f":
            raise NotImplementedError(
                f'"frac" is not implemented for {input.dtype} tensors: a whole number has no '
                "fractional part. Fix: convert first, x.float().frac()"
            )
        return data - np.trunc(data)

    @staticmethod
    def backward(ctx, grad):
        return grad


class Rsqrt(Op):
    """1 / sqrt(x), element by element (inf at 0, nan below 0)."""

    function, method, inplace = "rsqrt", True, True
    node_name = "RsqrtBackward0"
    saved_names = ("result",)
    kernel = staticmethod(lambda input: 1 / scalar.sqrt(input))
    derivative = "d (1/sqrt(x))/dx = -1 / (2 x sqrt(x)) = -result³ / 2"
    domain = "positive"

    @staticmethod
    def forward(ctx, input):
        with np.errstate(divide="ignore", invalid="ignore"):
            result = _make(1 / np.sqrt(_float(input._data)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * result * result * result * -0.5


_NOT_GIVEN = (
    object()
)  # round(decimals=...) given at all, even 0, is another record (RoundBackward1)


@public("round", method=True, inplace=True, out=True)
def round(input, *, decimals=_NOT_GIVEN):
    """The nearest whole number (halves to even), or with `decimals=d` to d decimal places."""
    if decimals is _NOT_GIVEN:
        return Round.apply(input)
    return RoundDecimals.apply(input, decimals=decimals)
