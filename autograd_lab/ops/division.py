"""Division that rounds: floor division `//`, the remainder `%`, fmod, and div(rounding_mode=).

Dividing 7 by 2 in whole steps leaves a quotient and a remainder, and there are two ways to round
a negative quotient, so there are two remainders:

    rounding down (floor):      -7 // 2 = -4,  remainder(-7, 2) =  1   (sign of the divisor)
    rounding toward 0 (trunc):  trunc(-7 / 2) = -3,  fmod(-7, 2) = -1  (sign of the dividend)

    >>> x = autograd_lab.tensor([7.5, -7.5], requires_grad=True)
    >>> x % 2                      # Python's rule, as PyTorch's `%` and remainder
    tensor([1.5000, 0.5000], grad_fn=<RemainderBackward0>)
    >>> autograd_lab.fmod(x, 2)    # C's rule
    tensor([ 1.5000, -1.5000], grad_fn=<FmodBackward0>)

The remainder a - floor(a / b) * b moves with a at slope 1 and with b at slope -floor(a / b)
(between the jumps), so both are differentiable. A rounded quotient is flat between its jumps:
div(rounding_mode=...) sends back zeros, as PyTorch does, while PyTorch has no derivative at
all for floor_divide (`//`) and for `number % tensor`: their nodes are "NotImplemented" and
their backward raises, here too. Integers divided by zero raise, as in PyTorch; floats give inf
or nan.
"""

import numpy as np

from ..autograd.function import Op
from ..tensor import Tensor
from . import scalar
from .elementwise import Div, _is_number, _zeros, operands
from .registry import public

# ---- checks shared by every rounding division ------------------------------------------------------


def _divide_operands(name, a, b):
    """The promoted numpy operands of `name(a, b)`, refused where PyTorch refuses them."""
    x, y = operands(a, b)
    if _is_bool(x) and _is_bool(y):
        raise NotImplementedError(
            f'"{name}" is not implemented for Bool: True and False cannot be divided in whole '
            "steps. Fix: convert first, x.long() or x.float()."
        )
    if _is_whole(x) and _is_whole(y) and _has_zero(y) and _has_elements(x, y):
        raise RuntimeError(
            f"ZeroDivisionError: {name}() of integers by zero has no answer (a float would give "
            "inf or nan, an integer has neither). Fix: make the divisor nonzero, or convert to "
            "floats first with x.float()."
        )
    return x, y


def _is_bool(value):
    return type(value) is bool if _is_number(value) else value.dtype == np.bool_


def _is_whole(value):
    kind = np.asarray(value).dtype.kind if _is_number(value) else value.dtype.kind
    return kind in "iub"


def _has_zero(value):
    return value == 0 if _is_number(value) else bool((value == 0).any())


def _has_elements(x, y):
    """Whether the result has any element: an empty one divides nothing, so nothing by zero."""
    return 0 not in np.broadcast_shapes(np.shape(x), np.shape(y))


def _not_implemented(what, fix):
    return RuntimeError(
        f"derivative for aten::{what} is not implemented (PyTorch has none either: its grad_fn is "
        f"NotImplemented). {fix}"
    )


# ---- the remainder: Python's sign rule (the result has the divisor's sign) ---------------------


def _remainder(x, y):
    """x % y as PyTorch computes it: fmod (the sign of x), then moved by y where it is nonzero
    and its sign differs from y's. A zero keeps x's sign: -1.0 % 0.25 is -0.0 (numpy's remainder
    gives 0.0), which shows in 1 / (x % y) = -inf."""
    mod = np.fmod(x, y)
    return np.where((mod != 0) & ((mod < 0) != (y < 0)), mod + y, mod)


class Remainder(Op):
    """`tensor % tensor`: a - floor(a / b) * b, element by element."""

    node_name = "RemainderBackward1"
    saved_names = ("self", "other")
    kernel = staticmethod(lambda input, other: input - scalar.floor(input / other) * other)
    derivative = "d(a % b)/da = 1,  d/db = -floor(a / b)"
    domain, piecewise = "nonzero", True

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")  # x % 0.0 is nan, silently
    def forward(ctx, a, b):
        if ctx.needs_input_grad[1]:  # only b's slope reads them: a may change in place otherwise
            ctx.save_for_backward(a, b)
        else:
            ctx.save_for_backward(None, None)
        x, y = _divide_operands("remainder", a, b)
        return _remainder(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = grad if needs_a else None
        grad_b = -grad * rounded_div(a, b, "floor") if needs_b else None
        return grad_a, grad_b


class RemainderNumber(Op):
    """`tensor % number`: the number is a constant, the slope in the tensor is 1."""

    node_name = "RemainderBackward0"
    kernel = staticmethod(lambda input, other: input - scalar.floor(input / other) * other)
    derivative = "d(a % c)/da = 1"
    domain, piecewise = "nonzero", True

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")
    def forward(ctx, a, number):
        x, y = _divide_operands("remainder", a, number)
        return _remainder(x, y)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class NumberRemainder(Op):
    """`number % tensor`: PyTorch computes it but records no derivative (grad_fn NotImplemented)."""

    node_name = "NotImplemented"
    no_derivative = True
    elementwise = True  # its result laid out as TensorIterator lays out a quotient's

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")
    def forward(ctx, b, number):
        x, y = _divide_operands("remainder", number, b)
        return _remainder(x, y)

    @staticmethod
    def backward(ctx, grad):
        raise _not_implemented(
            "remainder",
            "`number % x` has no gradient with respect to x. Fix: write it as "
            "number - (number / x).floor() * x, whose gradient is defined.",
        )


# ---- fmod: C's sign rule (the result has the dividend's sign) ------------------------------------


class Fmod(Op):
    """fmod(tensor, tensor): a - trunc(a / b) * b, element by element."""

    node_name = "FmodBackward1"
    saved_names = ("self", "other")
    kernel = staticmethod(lambda input, other: input - scalar.trunc(input / other) * other)
    derivative = "d fmod(a, b)/da = 1,  d/db = -trunc(a / b)"
    domain, piecewise = "nonzero", True

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")
    def forward(ctx, a, b):
        if ctx.needs_input_grad[1]:  # only b's slope reads them: a may change in place otherwise
            ctx.save_for_backward(a, b)
        else:
            ctx.save_for_backward(None, None)
        x, y = _divide_operands("fmod", a, b)
        return np.fmod(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = grad if needs_a else None
        grad_b = -grad * rounded_div(a, b, "trunc") if needs_b else None
        return grad_a, grad_b


class FmodNumber(Op):
    """fmod(tensor, number)."""

    node_name = "FmodBackward0"
    kernel = staticmethod(lambda input, other: input - scalar.trunc(input / other) * other)
    derivative = "d fmod(a, c)/da = 1"
    domain, piecewise = "nonzero", True

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")
    def forward(ctx, a, number):
        x, y = _divide_operands("fmod", a, number)
        return np.fmod(x, y)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


# ---- the rounded quotient ------------------------------------------------------------------------


def _trunc_divide(x, y):
    """a / b rounded toward zero. Floats: trunc of the true quotient. Integers have no trunc: take
    the floor quotient (-7 // 2 = -4) and step back up by one where it went below the true
    quotient, that is where the division is not exact and the signs differ (-4 + 1 = -3)."""
    if _is_whole(x) and _is_whole(y):
        went_down = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
        return np.floor_divide(x, y) + went_down  # adding bools keeps x's integer dtype
    return np.trunc(x / y)


# one text for all rounding modes: the viewer shows one derivative per node name (DivBackward2)
ROUNDED_QUOTIENT = (
    "rounding_mode 'floor' or 'trunc': d/da = 0, d/db = 0 (flat between the jumps); "
    "rounding_mode=None: as a / b"
)


def _save_as_div(ctx, a, b):
    """Save what PyTorch's DivBackward2 saves, though the zero gradient needs neither: it shares
    its formula with a / b, so it keeps other (and self, where other needs a gradient). Changing
    one of them in place before backward is then refused, as in PyTorch."""
    ctx.save_for_backward(
        a if ctx.needs_input_grad[1] and isinstance(a, Tensor) else None,
        b if isinstance(b, Tensor) else None,
    )


class DivFloor(Op):
    """div(a, b, rounding_mode='floor'): the quotient rounded down; flat, so its gradient is 0."""

    node_name = "DivBackward2"
    saved_names = ("self", "other")
    kernel = staticmethod(lambda input, other: scalar.floor(input / other))
    derivative = ROUNDED_QUOTIENT
    domain, piecewise = "nonzero", True

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")  # 7.0 // 0 = inf
    def forward(ctx, a, b):
        ctx.rounding_mode = "floor"  # grad_fn._saved_rounding_mode, as in PyTorch
        _save_as_div(ctx, a, b)
        x, y = _divide_operands("div", a, b)
        return np.floor_divide(x, y)

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors  # unpacking refuses a saved tensor changed in place (_save_as_div)
        needs_a, needs_b = ctx.needs_input_grad
        # exact zeros (grad * 0 is nan for an inf gradient), one array for each input
        grad_a = _zeros(grad.shape, grad) if needs_a else None
        return grad_a, _zeros(grad.shape, grad) if needs_b else None


class DivTrunc(Op):
    """div(a, b, rounding_mode='trunc'): the quotient rounded toward zero; its gradient is 0."""

    node_name = "DivBackward2"
    saved_names = ("self", "other")
    kernel = staticmethod(lambda input, other: scalar.trunc(input / other))
    derivative = ROUNDED_QUOTIENT
    domain, piecewise = "nonzero", True

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")
    def forward(ctx, a, b):
        ctx.rounding_mode = "trunc"
        _save_as_div(ctx, a, b)
        x, y = _divide_operands("div", a, b)
        return _trunc_divide(x, y)

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors  # unpacking refuses a saved tensor changed in place (_save_as_div)
        needs_a, needs_b = ctx.needs_input_grad
        # exact zeros (grad * 0 is nan for an inf gradient), one array for each input
        grad_a = _zeros(grad.shape, grad) if needs_a else None
        return grad_a, _zeros(grad.shape, grad) if needs_b else None


class FloorDivide(Op):
    """floor_divide(a, b), `a // b`: as div(rounding_mode='floor'), but PyTorch records no
    derivative for it (grad_fn NotImplemented), so backward raises."""

    node_name = "NotImplemented"
    no_derivative = True
    elementwise = True  # its result laid out as TensorIterator lays out a quotient's

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")
    def forward(ctx, a, b):
        x, y = _divide_operands("floor_divide", a, b)
        return np.floor_divide(x, y)

    @staticmethod
    def backward(ctx, grad):
        raise _not_implemented(
            "floor_divide",
            "`a // b` is flat between its jumps, so its gradient would be 0 anyway. Fix: use "
            "autograd_lab.div(a, b, rounding_mode='floor'), which gives that zero gradient.",
        )


# ---- the public functions: each chooses the record for a tensor or a number ------------------


@public("remainder", method=True, inplace=True, out=True)
def remainder(input, other):
    """input % other with the divisor's sign: remainder(-7, 2) = 1, as Python's %."""
    if not isinstance(input, Tensor):
        return NumberRemainder.apply(other, number=input)
    if isinstance(other, Tensor):
        return Remainder.apply(input, other)
    return RemainderNumber.apply(input, other)


@public("fmod", method=True, inplace=True, out=True)
def fmod(input, other):
    """The remainder with the dividend's sign: fmod(-7, 2) = -1, as C's fmod."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"fmod() takes a tensor as its first argument (input), not {type(input).__name__} "
            "(PyTorch's fmod has no number-first form). Fix: make it a tensor, "
            "autograd_lab.fmod(autograd_lab.tensor(5), x)."
        )
    if isinstance(other, Tensor):
        return Fmod.apply(input, other)
    return FmodNumber.apply(input, other)


@public("floor_divide", method=True, inplace=True, out=True)
def floor_divide(input, other):
    """input // other: the quotient rounded down (-7 // 2 = -4); not differentiable."""
    return FloorDivide.apply(input, other)


class DivGivenNoRounding(Div):
    """div(a, b, rounding_mode=None), the mode given though None: PyTorch then calls the overload
    that takes a rounding mode, so the node is named DivBackward2; the quotient is a / b."""

    node_name = "DivBackward2"
    derivative = ROUNDED_QUOTIENT


def rounded_div(input, other, rounding_mode):
    """div(input, other, rounding_mode=...) for 'trunc' or 'floor' (ops/elementwise.py's div
    hands these here): the quotient rounded to a whole number, keeping an integer dtype."""
    if rounding_mode is None:
        return DivGivenNoRounding.apply(input, other)
    if rounding_mode == "floor":
        return DivFloor.apply(input, other)
    if rounding_mode == "trunc":
        return DivTrunc.apply(input, other)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"{rounding_mode!r}. Fix: 'floor' rounds the quotient down (as //), 'trunc' toward zero, "
        "None keeps the exact quotient."
    )
