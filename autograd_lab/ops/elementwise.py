"""Elementwise operations: one record each (autograd/function.py's Op lists the fields).

Forward computes on numpy arrays; backward is written with differentiable Tensor operations, so
the backward pass can itself be recorded (`create_graph=True`) and differentiated again.
Broadcasting is *not* undone here: an op returns a gradient of the broadcast shape and the engine
sums it back to each input's shape (engine._fit). `kernel` says what the op computes for one
element (ops/scalar.py); the fusion compiler writes its kernels from it, and finds each op's
local derivatives by tracing its `backward`, so no derivative is written twice.
"""

import itertools
import math

import numpy as np

from .. import promotion, storage, types
from ..autograd.function import Op, computing_dtype
from ..autograd.grad_mode import is_grad_enabled
from ..layout import as_converted, copy_keeping_layout, laid_out_like_inputs, row_major
from ..tensor import Tensor, _make
from . import scalar
from .registry import public

# numpy warns where IEEE arithmetic gives inf or nan (inf - inf, 0 * inf, an overflow); PyTorch
# gives those values silently. np.errstate as a decorator makes no new object per call, as a
# `with` block would: on a tiny tensor that is a third of an op's cost (benchmarks, row 1).
silently = np.errstate(invalid="ignore", over="ignore")


def operands(a, b, elementwise=True):
    """The two numpy operands of a binary op, promoted the way PyTorch promotes them."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):  # the common cases first
        x, y = a._data, b._data
        if x.dtype == y.dtype and x.shape == y.shape:
            return x, y
    elif isinstance(a, Tensor):
        x = a._data
        if type(b) is float:  # int tensor * 1.5 is float32 in PyTorch (numpy would say float64)
            return _float(x), b
        if type(b) is int:
            return x, _wrapped_int(b, x.dtype)
    x = a._data if isinstance(a, Tensor) else _scalar_or_array(a)
    y = b._data if isinstance(b, Tensor) else _scalar_or_array(b)
    x_is_array, y_is_array = not _is_number(x), not _is_number(y)  # numpy or CUDA arrays
    if x_is_array and y_is_array:
        if x.dtype != y.dtype:
            dtype = types.result_type(x, y)
            x = x if x.dtype == dtype else convert(x, dtype)
            y = y if y.dtype == dtype else convert(y, dtype)
        if elementwise and x.shape != y.shape:
            check_broadcastable(x.shape, y.shape)
    elif x_is_array:
        if type(y) is int:
            y = _wrapped_int(y, x.dtype)
        if type(y) is float and x.dtype.kind != "f":
            x = _float(x)  # int tensor * 1.5: float32 (numpy: float64)
    elif y_is_array and type(x) is int:
        x = _wrapped_int(x, y.dtype)
    elif y_is_array and type(x) is float and y.dtype.kind != "f":
        y = _float(y)
    return x, y


def _wrapped_int(value, dtype):
    """A Python int beyond a small integer dtype wraps around, as PyTorch converts it: an int8
    tensor + 1000 adds -24 (1000 - 1024). numpy 2 would raise OverflowError instead."""
    if dtype.kind not in "iu" or dtype.itemsize == 8:  # int64 holds every int PyTorch takes
        return value
    info = np.iinfo(dtype)
    if info.min <= value <= info.max:
        return value
    return int(np.array(value, dtype=np.int64).astype(dtype))


def check_broadcastable(*shapes):
    """Refuse shapes that do not broadcast with PyTorch's RuntimeError (numpy raises ValueError).

    Shapes broadcast together when every two of them do: in each dim, all sizes other than 1
    must be equal."""
    for shape_a, shape_b in itertools.combinations(shapes, 2):
        for m, n in zip(reversed(shape_a), reversed(shape_b), strict=False):
            if m != n and m != 1 and n != 1:
                raise RuntimeError(
                    f"shapes {list(shape_a)} and {list(shape_b)} cannot be broadcast together: "
                    f"compared from the right, sizes {m} and {n} differ and neither is 1. Fix: "
                    "reshape or unsqueeze one of them so that each pair of sizes is equal or 1."
                )


def _is_number(value):
    return type(value) is float or type(value) is int or type(value) is bool


def _kind(value):
    """numpy's dtype kind ('f', 'i', 'b', ...) of an operand: an array, or a Python number."""
    return np.asarray(value).dtype.kind if _is_number(value) else value.dtype.kind


def _scalar_or_array(value):
    if type(value) is float or type(value) is int or type(value) is bool:
        return value
    if isinstance(value, np.generic):
        return value.item()  # a numpy scalar acts like a Python number, as in PyTorch
    array = np.asarray(value)
    return array.astype(types.default_numpy_dtype(array), copy=False)


# ---- arithmetic ------------------------------------------------------------------------------------


class Add(Op):
    node_name = "AddBackward0"
    kernel = staticmethod(lambda input, other: input + other)
    derivative = "d(self + other)/d(self) = 1,  d/d(other) = 1"

    @staticmethod
    @silently  # inf + -inf = nan, silently
    def forward(ctx, a, b):
        x, y = operands(a, b)
        return x + y

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sub(Op):
    node_name = "SubBackward0"
    kernel = staticmethod(lambda input, other: input - other)
    derivative = "d(self - other)/d(self) = 1,  d/d(other) = -1"

    @staticmethod
    @silently  # inf - inf = nan, silently
    def forward(ctx, a, b):
        x, y = operands(a, b)
        return x - y

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad if ctx.needs_input_grad[1] else None


class AddAlpha(Op):
    """`add(x, y, alpha=a)`: x + a * y as one node, as PyTorch records it (`grad_fn._saved_alpha`).

    y's gradient is a * grad on the result's shape, which the engine then sums to y's shape (in
    PyTorch's order): where y broadcasts to an empty result its gradient is 0 even for a = inf,
    where summing first and scaling after would give 0 * inf = nan."""

    node_name = "AddBackward0"
    kernel = staticmethod(lambda input, other, alpha: input + alpha * other)
    # (no `derivative`: the viewer finds a node's text by its name, and AddBackward0's is Add's)

    @staticmethod
    @silently  # inf + -inf and 0 * inf = nan, silently
    def forward(ctx, a, b, alpha):
        ctx.alpha = alpha
        x, y = operands(a, b)
        return x + _times_alpha(y, alpha, x)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad * ctx.alpha if ctx.needs_input_grad[1] else None


class SubAlpha(Op):
    """`sub(x, y, alpha=a)`: x - a * y as one node, as PyTorch records it; y's gradient is
    -grad * a before the engine sums it to y's shape (AddAlpha says why that order matters)."""

    node_name = "SubBackward0"
    kernel = staticmethod(lambda input, other, alpha: input + -alpha * other)
    # (no `derivative`: the viewer finds a node's text by its name, and SubBackward0's is Sub's)

    @staticmethod
    @silently  # inf - inf and 0 * inf = nan, silently
    def forward(ctx, a, b, alpha):
        ctx.alpha = alpha
        x, y = operands(a, b)
        # x + (-alpha)·y, as PyTorch computes it: the same number as x - alpha·y but for the
        # sign of a zero (alpha=0, an int, has no -0: -0.0 - 0·y is -0.0, -0.0 + 0·y is 0.0)
        return x + _times_alpha(y, -alpha, x)

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad * ctx.alpha if ctx.needs_input_grad[1] else None


def _times_alpha(y, alpha, x):
    """`alpha * y` in the result's dtype, which `operands` gave y (or x, when y is a number):
    PyTorch converts alpha to that dtype, so for a bool result any alpha but 0 is True, and a
    product beyond a small integer dtype wraps around."""
    if _kind(x) == "b" and _kind(y) == "b":
        return y & bool(alpha)
    if type(y) is int and not _is_number(x):
        return _wrapped_int(y * alpha, x.dtype)
    return y * alpha


class Rsub(Op):
    """`number - tensor`: PyTorch records it as one node with a single edge."""

    node_name = "RsubBackward1"
    kernel = staticmethod(lambda x, number: number - x)
    number_operand = True  # its number, a keyword here, is an operand of PyTorch's loop
    derivative = "d(c - x)/dx = -1"

    @staticmethod
    @silently  # inf - inf = nan, silently
    def forward(ctx, x, number):
        a, b = operands(number, x)
        return a - b

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Mul(Op):
    node_name = "MulBackward0"
    saved_names = ("self", "other")
    kernel = staticmethod(lambda input, other: input * other)
    derivative = "d(self * other)/d(self) = other,  d/d(other) = self"

    @staticmethod
    @silently  # inf * 0 = nan, silently
    def forward(ctx, a, b):
        needs_a, needs_b = ctx.needs_input_grad
        ctx.save_for_backward(a if needs_b else None, b if needs_a else None)
        x, y = operands(a, b)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = grad * b if needs_a else None
        grad_b = grad * a if needs_b else None
        return grad_a, grad_b


class MulNumber(Mul):
    """`tensor * number`: the number is a constant of the node, nothing needs saving."""

    node_name = "MulBackward0"
    saved_names = ()
    saves_constants = True  # PyTorch saves the number as a tensor (_saved_other)

    @staticmethod
    @silently  # inf * 0 = nan, silently
    def forward(ctx, a, number):
        ctx.number = number
        x, y = operands(a, number)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.number, None


class Div(Op):
    node_name = "DivBackward0"
    saved_names = ("self", "other")
    kernel = staticmethod(lambda input, other: input / other)
    derivative = "d(self / other)/d(self) = 1/other,  d/d(other) = -self/other²"

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")  # x/0 = inf, 0/0 = nan, silently
    def forward(ctx, a, b):
        ctx.save_for_backward(
            a if ctx.needs_input_grad[1] else None, b if isinstance(b, Tensor) else None
        )
        ctx.b = None if isinstance(b, Tensor) else b
        x, y = operands(a, b)
        if x.dtype.kind != "f" and _kind(y) != "f":
            x = _float(x)  # int / int is a float (float32), as in PyTorch
            y = y if _is_number(y) else _float(y)
        return x / y

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        if b is None:
            b = ctx.b
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = grad / b if needs_a else None
        # -grad * a / b² in PyTorch's order, ((a / b) / b): for x / x the two gradients then
        # cancel exactly, and b * b cannot overflow where the quotient does not
        grad_b = -grad * ((a / b) / b) if needs_b else None
        return grad_a, grad_b


class NumberOverTensor(Op):
    """`number / tensor` as PyTorch's C++ backward formulas write it (`value / tensor2` in
    addcdiv's): a tensor filled with the number, divided by the tensor. (Python's `2 / x` is
    recorded as reciprocal(x) * 2 instead, as in PyTorch; the two round differently.)"""

    node_name = "DivBackward0"
    saved_names = ("other", "result")
    kernel = staticmethod(lambda other, number: number / other)
    derivative = Div.derivative  # the same node as Div's, with a constant self

    @staticmethod
    def forward(ctx, other, number):
        x, y = operands(number, other)
        with np.errstate(divide="ignore", invalid="ignore"):  # c/0 = inf, 0/0 = nan, silently
            result = _make(x / y)
        ctx.save_for_backward(other, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        other, result = ctx.saved_tensors
        return -grad * (result / other)  # Div's -grad * ((self / other) / other)


class Neg(Op):
    """-x, element by element."""

    function = ("neg", "negative")
    method = inplace = True
    node_name = "NegBackward0"
    kernel = staticmethod(lambda input: -input)
    derivative = "d(-x)/dx = -1"

    @staticmethod
    def forward(ctx, input):
        if input._data.dtype == np.bool_:
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                "to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        return -input._data

    @staticmethod
    def backward(ctx, grad):
        return -grad


class PowScalar(Op):
    """`x ** c` for a number c."""

    node_name = "PowBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda x, exponent: x**exponent)
    derivative = "d(x^p)/dx = p * x^(p-1)"

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.save_for_backward(x)
        ctx.exponent = exponent
        base, exp = operands(x, exponent)
        if base.dtype == np.bool_:  # numpy has no bool power (it gives int8): PyTorch's dtype
            return (base**exp).astype(promotion.result_type(x, exponent).numpy)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # 0 ** -1 = inf
            if exp == -0.5 and base.dtype.kind == "f":
                # PyTorch computes x ** -0.5 as 1 / sqrt(x): (-0.0) ** -0.5 is 1 / -0.0 = -inf
                return 1 / np.sqrt(base)
            return base**exp

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        p = ctx.exponent
        # x^0 is 1 everywhere: exact zeros (grad * 0 would make an inf gradient nan). PyTorch
        # does not count False as 0 there: x ** False takes the formula (0 · 0^-1 = nan at 0)
        if p == 0 and type(p) is not bool:
            return _zeros(x.shape, x)
        return grad * p * x ** (p - 1)


class Pow(Op):
    """`a ** b` for two tensors."""

    node_name = "PowBackward1"
    saved_names = ("self", "exponent", "result")
    kernel = staticmethod(lambda input, exponent: input**exponent)
    derivative = "d(a^b)/da = b * a^(b-1),  d/db = a^b * log(a)"

    @staticmethod
    def forward(ctx, a, b):
        x, y = operands(a, b)
        if x.dtype == np.bool_:  # only a tensor ** a number has a bool version (see PowScalar)
            raise types.not_implemented_for("pow", types.bool_)
        result = _make(_power(x, y))
        ctx.save_for_backward(a, b, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, b, result = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if needs_a:
            grad_a = where(b == 0, 0.0, grad * b * a ** (b - 1))
        if needs_b:  # d(a^b)/db = a^b log a, taken as 0 where a == 0 and b >= 0 (as PyTorch,
            # which multiplies grad by that slope: an inf gradient there gives nan, not 0).
            # log a is taken in the dtype a ** b computes in: a float32 a with a float64 b
            # (x32.pow_(b64) keeps a float32 result) still gets a float64 log, as in PyTorch
            log_a = a.to(promotion.result_type(a, b)).log()
            grad_b = grad * where((a == 0) & (b >= 0), 0.0, result * log_a)
        return grad_a, grad_b


def _power(base, exponent):
    """base ** exponent, element by element; for integers as PyTorch computes it, where numpy
    refuses negative exponents: 1 / base**k rounded toward zero is 0, except for bases 1 and -1."""
    if _kind(base) not in "iub" or _kind(exponent) not in "iu":
        return _float_power(base, exponent)
    powers = base ** np.abs(exponent)  # (-1) ** -k == (-1) ** k, and 1 ** -k == 1
    return np.where((exponent < 0) & (np.abs(base) != 1), 0, powers).astype(powers.dtype)


def _float_power(base, exponent):
    """base ** exponent as C's pow, which PyTorch uses for every element of a tensor exponent.
    numpy takes sqrt(x) for an exponent of 0.5 given once (a number, a 0-d or broadcast array),
    and sqrt differs from pow at two points: sqrt(-inf) is nan where pow(-inf, 0.5) is inf, and
    sqrt(-0.0) is -0.0 where pow(-0.0, 0.5) is 0.0."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # 0 ** -1 = inf, silently
        powers = base**exponent
    at_half = exponent == 0.5
    as_pow = np.where(at_half & (base == -np.inf), np.inf, powers)
    as_pow = np.where(at_half & (base == 0), 0.0, as_pow)
    return as_pow.astype(powers.dtype)  # (2 ** a bool tensor stays int64)


class RPow(Op):
    """`c ** x` for a number c."""

    node_name = "PowBackward2"
    saved_names = ("exponent", "result")
    kernel = staticmethod(lambda x, base: base**x)
    lays_out_itself = True  # row-major, not like x
    derivative = "d(c^x)/dx = c^x * log(c)"

    @staticmethod
    def forward(ctx, x, base):
        b, e = operands(base, x)
        if e.dtype == np.bool_ and _kind(b) == "b":  # True ** mask: no bool version in PyTorch
            raise types.not_implemented_for("pow", types.bool_)
        # PyTorch makes a number's power a new row-major tensor, whatever x's layout
        result = _make(row_major(_power(b, e)))
        ctx.save_for_backward(x, result)
        ctx.base = base
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, log(-2) = nan
            slope = result * float(np.log(ctx.base))
        if ctx.base == 0:  # 0^x: 0 for x > 0, 1 at x = 0; PyTorch takes the slope there as 0
            slope = where(x >= 0, 0.0, slope)
        return grad * slope


# ---- unary functions --------------------------------------------------------------------------------
# Each is public as itself (`function`), a method and an in-place method: exp(x), x.exp(), x.exp_().


class Exp(Op):
    """e^x, element by element."""

    function, method, inplace = "exp", True, True
    node_name = "ExpBackward0"
    saved_names = ("result",)
    kernel = staticmethod(lambda input: scalar.exp(input))
    derivative = "d exp(x)/dx = exp(x)  (the result itself)"

    @staticmethod
    @silently  # exp(100.) overflows to inf: no warning, as in PyTorch
    def forward(ctx, input):
        # (numpy's float32 exp is a last bit off PyTorch's for some inputs: README's
        # simplifications; taking it in float64 would match more often at 3-5x the time)
        result = _make(np.exp(_float(input._data)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * result


class Log(Op):
    """The natural logarithm, element by element (log(0) = -inf, log(-1) = nan)."""

    function, method, inplace = "log", True, True
    node_name = "LogBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.log(input))
    derivative = "d log(x)/dx = 1/x"
    domain = "positive"

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")  # log(0) = -inf, log(-1) = nan
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.log(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x


class Log2(Op):
    """The base-2 logarithm, element by element (log2(0) = -inf, log2(-1) = nan)."""

    function, method, inplace = "log2", True, True
    node_name = "Log2Backward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.log2(input))
    derivative = "d log2(x)/dx = 1/(x ln 2)"
    domain = "positive"

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.log2(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * math.log(2.0))


class Log10(Op):
    """The base-10 logarithm, element by element (log10(0) = -inf, log10(-1) = nan)."""

    function, method, inplace = "log10", True, True
    node_name = "Log10Backward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.log10(input))
    derivative = "d log10(x)/dx = 1/(x ln 10)"
    domain = "positive"

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.log10(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x * math.log(10.0))


class Log1p(Op):
    """log(1 + x), accurate for small x."""

    function, method, inplace = "log1p", True, True
    node_name = "Log1PBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.log1p(input))
    derivative = "d log(1+x)/dx = 1/(1+x)"
    domain = "positive"

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.log1p(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x + 1)


class Expm1(Op):
    """e^x - 1, accurate for small x."""

    function, method, inplace = "expm1", True, True
    node_name = "Expm1Backward0"
    saved_names = ("result",)
    kernel = staticmethod(lambda input: scalar.expm1(input))
    derivative = "d (e^x - 1)/dx = e^x"

    @staticmethod
    def forward(ctx, input):
        result = _make(np.expm1(_float(input._data)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * (result + 1)


class Sqrt(Op):
    """The square root, element by element (nan below 0)."""

    function, method, inplace = "sqrt", True, True
    node_name = "SqrtBackward0"
    saved_names = ("result",)
    kernel = staticmethod(lambda input: scalar.sqrt(input))
    derivative = "d sqrt(x)/dx = 1 / (2 sqrt(x))"
    domain = "positive"

    @staticmethod
    def forward(ctx, input):
        with np.errstate(invalid="ignore"):
            result = _make(np.sqrt(_float(input._data)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad / (2 * result)


class Sin(Op):
    """The sine, element by element."""

    function, method, inplace = "sin", True, True
    node_name = "SinBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.sin(input))
    derivative = "d sin(x)/dx = cos(x)"

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.sin(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()


class Cos(Op):
    """The cosine, element by element."""

    function, method, inplace = "cos", True, True
    node_name = "CosBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.cos(input))
    derivative = "d cos(x)/dx = -sin(x)"

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.cos(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad * x.sin()


class Tan(Op):
    """The tangent, element by element."""

    function, method, inplace = "tan", True, True
    node_name = "TanBackward0"
    saved_names = ("result",)
    kernel = staticmethod(lambda input: scalar.tan(input))
    derivative = "d tan(x)/dx = 1 + tan(x)²"
    domain = "unit"  # away from the poles at ±π/2, where finite differences would blow up

    @staticmethod
    def forward(ctx, input):
        result = _make(np.tan(_float(input._data)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * (1 + result * result)


class Sinh(Op):
    """The hyperbolic sine, element by element."""

    function, method, inplace = "sinh", True, True
    node_name = "SinhBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.sinh(input))
    derivative = "d sinh(x)/dx = cosh(x)"

    @staticmethod
    @np.errstate(over="ignore")  # sinh(1000) = inf, silently
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.sinh(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cosh()


class Cosh(Op):
    """The hyperbolic cosine, element by element."""

    function, method, inplace = "cosh", True, True
    node_name = "CoshBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.cosh(input))
    derivative = "d cosh(x)/dx = sinh(x)"

    @staticmethod
    @np.errstate(over="ignore")  # cosh(1000) = inf, silently
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.cosh(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.sinh()


class Asin(Op):
    """The inverse sine, element by element (nan outside [-1, 1])."""

    function, method, inplace = ("asin", "arcsin"), True, True
    node_name = "AsinBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.asin(input))
    derivative = "d asin(x)/dx = 1/√(1 - x²)"
    domain = "unit"  # inside (-1, 1): the derivative is infinite at ±1

    @staticmethod
    @np.errstate(invalid="ignore")  # asin(2) = nan, silently
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.arcsin(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 - x * x).sqrt()


class Acos(Op):
    """The inverse cosine, element by element (nan outside [-1, 1])."""

    function, method, inplace = ("acos", "arccos"), True, True
    node_name = "AcosBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.acos(input))
    derivative = "d acos(x)/dx = -1/√(1 - x²)"
    domain = "unit"

    @staticmethod
    @np.errstate(invalid="ignore")
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.arccos(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad / (1 - x * x).sqrt()


class Atan(Op):
    """The inverse tangent, element by element."""

    function, method, inplace = ("atan", "arctan"), True, True
    node_name = "AtanBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: scalar.atan(input))
    derivative = "d atan(x)/dx = 1/(1 + x²)"

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return np.arctan(_float(input._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 + x * x)


class Tanh(Op):
    """The hyperbolic tangent, element by element."""

    function, method, inplace = "tanh", True, True
    node_name = "TanhBackward0"
    saved_names = ("result",)
    kernel = staticmethod(lambda input: scalar.tanh(input))
    derivative = "d tanh(x)/dx = 1 - tanh(x)²"

    @staticmethod
    def forward(ctx, input):
        data = _float(input._data)
        # numpy's float32 tanh is a last bit off PyTorch's for one input in four; near +-1 that
        # bit is all of the slope 1 - tanh². Taken in float64 and rounded once, it agrees.
        wide = data if data.dtype == np.float64 else convert(data, np.float64)
        result = _make(np.tanh(wide).astype(data.dtype))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return TanhGrad.apply(grad, result)  # grad * (1 - result²) as one op, as in PyTorch


class TanhGrad(Op):
    """tanh's backward as a single (differentiable) op, like PyTorch's `tanh_backward`."""

    node_name = "TanhBackwardBackward0"
    kernel = staticmethod(lambda grad, result: grad * (1 - result * result))

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_for_backward(grad, result)
        g, y = grad._data, result._data
        # PyTorch's kernel rounds 1 - y·y once (a fused multiply-add); so do we, via float64
        slope = (1 - y.astype(np.float64) * y).astype(y.dtype)
        return g * slope

    @staticmethod
    def backward(ctx, grad2):
        grad, result = ctx.saved_tensors
        # PyTorch's formulas (derivatives.yaml), grouped as there: tanh_backward again, whose
        # 1 - y·y rounds once (near y = ±1 it is all of the slope), and grad2·(-2y·grad)
        d_grad = TanhGrad.apply(grad2, result) if ctx.needs_input_grad[0] else None
        d_result = grad2 * (result * -2 * grad) if ctx.needs_input_grad[1] else None
        return d_grad, d_result


def _sigmoid(x):
    """1/(1+e^-x), PyTorch's formula as it stands: far below 0 (x < -88.7 in float32) e^-x
    overflows to inf and the result is 0, where the true value would be a denormal number."""
    return 1 / (1 + scalar.exp(-x))


class Sigmoid(Op):
    """The logistic function 1/(1+e^-x), element by element."""

    function, method, inplace = "sigmoid", True, True
    node_name = "SigmoidBackward0"
    saved_names = ("result",)
    kernel = staticmethod(_sigmoid)
    derivative = "d σ(x)/dx = σ(x) * (1 - σ(x))"

    @staticmethod
    @np.errstate(over="ignore")  # e^-x = inf far below 0 is meant: the result is 0
    def forward(ctx, input):
        data = _float(input._data)
        result = _make(_sigmoid(data).astype(data.dtype, copy=False))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return SigmoidGrad.apply(grad, result)  # grad * y * (1 - y) as one op, as in PyTorch


class SigmoidGrad(Op):
    """sigmoid's backward as a single (differentiable) op, like PyTorch's `sigmoid_backward`."""

    node_name = "SigmoidBackwardBackward0"
    kernel = staticmethod(lambda grad, result: grad * result * (1 - result))

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_for_backward(grad, result)
        g, y = grad._data, result._data
        return g * y * (1 - y)

    @staticmethod
    def backward(ctx, grad2):
        grad, result = ctx.saved_tensors
        return grad2 * result * (1 - result), grad2 * grad * (1 - 2 * result)


def _logit(input, eps=None):
    """log(p / (1 - p)); with eps (a negative eps counts as none), p clamped to [eps, 1 - eps]."""
    if eps is not None and eps >= 0:
        input = _clamp(input, eps, 1 - eps)
    return scalar.log(input / (1 - input))


class Logit(Op):
    """The logit log(p / (1 - p)), sigmoid's inverse, of probabilities p. Its own record (not
    a division and a log) for PyTorch's gradient at the edges: grad * inf at p = 0 and p = 1 (the
    composed form gives nan there), nan outside [0, 1] and at a nan p, and 0 where eps clamped p."""

    node_name = "LogitBackward0"
    saved_names = ("self",)  # and `_saved_eps`, the number kept on ctx
    kernel = staticmethod(_logit)
    derivative = "d logit(p)/dp = 1 / (p (1 - p)); 0 where eps clamped p"

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore")  # logit(1) = inf, logit(2) = nan
    def forward(ctx, input, eps=None):
        ctx.save_for_backward(input)
        ctx.eps = eps
        return _logit(_float(input._data), eps)

    @staticmethod
    def backward(ctx, grad):
        (p,) = ctx.saved_tensors
        if ctx.eps is None or ctx.eps < 0:  # outside [0, 1] the logit is nan, so is its slope
            low, high, outside = 0.0, 1.0, math.nan
        else:  # clamped: the logit is flat outside [eps, 1 - eps]
            low, high, outside = ctx.eps, 1 - ctx.eps, 0.0
        # at p = 0 and p = 1 the slope is grad * inf, so -0.0 gives +inf (grad / -0.0 would
        # give -inf): PyTorch's rule element by element (its vectorized loop for long tensors
        # divides, a difference README's "Simplifications" lists)
        slope = where((p == 0) | (p == 1), grad * math.inf, grad / (p * (1 - p)))
        # a nan p is not outside [low, high] (comparisons with nan are false): its slope is nan
        return where((p < low) | (p > high), outside, slope)


class Relu(Op):
    """max(x, 0), element by element (nan stays nan)."""

    function, method, inplace = "relu", True, True
    node_name = "ReluBackward0"
    saved_names = ("result",)
    kernel = staticmethod(lambda input: scalar.where(input < 0, 0.0, input))
    derivative = "d relu(x)/dx = 1 where x > 0, else 0"
    domain, piecewise = "nonzero", True

    @staticmethod
    def forward(ctx, input):
        if input._data.dtype == np.bool_:
            raise RuntimeError(
                "Boolean inputs not supported for relu: a bool is never negative, so there is "
                "nothing to cut off. Fix: use the mask as it is, or convert it, e.g. x.float()."
            )
        # 0 where x < 0, else x itself: so relu(-0.0) is -0.0 and relu(nan) nan, as in PyTorch
        # (np.maximum(-0.0, 0) would give +0.0)
        data = input._data
        result = _make(np.where(data < 0, 0, data).astype(data.dtype, copy=False))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return ReluGrad.apply(grad, result)  # 0 where result <= 0, else grad: one op


class ReluGrad(Op):
    """relu's backward as a single (differentiable) op, like PyTorch's `threshold_backward`:
    0 where result <= 0, else grad. A select, not grad * mask: an infinite gradient where relu
    is flat must give 0, not inf * 0 = nan; and relu(nan) = nan passes its gradient on."""

    node_name = "ThresholdBackwardBackward0"
    kernel = staticmethod(lambda grad, result: scalar.where(result <= 0, 0.0, grad))

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_for_backward(result)
        g = grad._data
        return np.where(result._data <= 0, g.dtype.type(0), g)

    @staticmethod
    def backward(ctx, grad2):
        (result,) = ctx.saved_tensors
        # the mask is flat in result: zeros for it, as PyTorch gives (so the second derivative
        # of relu is 0, not "unused")
        return ReluGrad.apply(grad2, result), _zeros(result.shape, result)


class Abs(Op):
    """|x|, element by element."""

    function, method, inplace = "abs", True, True
    node_name = "AbsBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: abs(input))
    derivative = "d |x|/dx = sign(x)"
    domain, piecewise = "nonzero", True

    @staticmethod
    def forward(ctx, input):
        if input._data.dtype == np.bool_:
            raise types.not_implemented_for("abs", types.bool_)
        ctx.save_for_backward(input)
        return np.abs(input._data)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.sgn()


class Sign(Op):
    """-1, 0 or 1: flat everywhere, so its gradient is 0 (PyTorch records it all the same).
    As in PyTorch, sign(nan) is 0 (so |x|'s gradient, grad * sign(x), is 0 at nan) and
    sign(-0.) is 0., where numpy's sign gives nan and -0."""

    function, method, inplace = "sign", True, True
    node_name = "SignBackward0"
    kernel = staticmethod(
        lambda input: scalar.where(input > 0, 1.0, scalar.where(input < 0, -1.0, 0.0))
    )
    derivative = "d sign(x)/dx = 0: the output is flat almost everywhere"
    domain, piecewise = "nonzero", True

    @staticmethod
    def forward(ctx, input):
        x = input._data
        if x.dtype == np.bool_:  # True is positive, False zero: a bool is its own sign
            return x.copy()
        if x.dtype.kind != "f":
            return np.sign(x)
        return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)  # nan: neither, so 0

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad)  # exact zeros: grad * 0 would make an inf gradient nan


class Sgn(Sign):
    """sign's twin for complex numbers (z / |z|); on real numbers it is sign, under its own node
    name. PyTorch's backward of sgn gives an "efficient zero tensor" that stays zero even when
    multiplied by inf or nan later; ours gives plain zeros (README's Simplifications)."""

    function = "sgn"
    node_name = "SgnBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, input):
        result = _make(Sign.forward(ctx, input))
        # PyTorch's formula for complex numbers reads both, so it saves them for real ones too:
        # changing either in place before backward is refused
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        _ = ctx.saved_tensors
        return _zeros(grad.shape, grad)


class Reciprocal(Op):
    """1/x, element by element."""

    function, method, inplace = "reciprocal", True, True
    node_name = "ReciprocalBackward0"
    saved_names = ("result",)
    kernel = staticmethod(lambda input: 1 / input)
    derivative = "d (1/x)/dx = -1/x²"
    domain = "nonzero"

    @staticmethod
    def forward(ctx, input):
        with np.errstate(divide="ignore"):
            result = _make(1 / _float(input._data))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return -grad * (result * result)  # PyTorch's order, so the last bit agrees


def _clamp(x, min=None, max=None):
    """x held between min and max (either may be None); nan stays nan, as in np.clip."""
    low = x if min is None else scalar.where(x < min, min, x)
    return low if max is None else scalar.where(low > max, max, low)


class Clamp(Op):
    """clamp with number bounds; the gradient passes where min <= x <= max."""

    node_name = "ClampBackward1"
    saved_names = ("self",)
    kernel = staticmethod(_clamp)
    derivative = "1 where min <= x <= max, else 0"

    @staticmethod
    def forward(ctx, x, min=None, max=None):
        ctx.save_for_backward(x)
        ctx.bounds = (min, max)
        # PyTorch's promotion over x and the bounds: ints clamped to 1.5 give float32, bools
        # clamped to 0 give int64
        dtype = promotion.common_dtype(x, min, max)
        if dtype is types.bool_:
            raise types.not_implemented_for("clamp", dtype)
        data = x._data.astype(dtype.numpy, copy=False)
        if any(bound is not None and bound != bound for bound in (min, max)):
            return np.full_like(data, np.nan)  # a nan bound: every element is nan, as in PyTorch
        # _clamp, not np.clip: where x equals a bound (0.0 and -0.0) PyTorch keeps x's own value
        return _clamp(data, min, max).astype(data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        low, high = ctx.bounds
        if low is not None:
            grad = where(x >= low, grad, 0.0)
        if high is not None:
            grad = where(x <= high, grad, 0.0)
        return grad


class ClampTensor(Op):
    """clamp with tensor bounds (either may be None)."""

    node_name = "ClampBackward0"
    saved_names = ("self", "min", "max")

    @staticmethod
    def forward(ctx, x, low, high):
        ctx.save_for_backward(x, low, high)
        # PyTorch promotes over all three at once: an int64 x between a 0-d float64 min and a
        # float32 max is float32 (taken a pair at a time, int64 and float64 would make float64)
        dtype = promotion.common_dtype(x, low, high).numpy
        data = _make(convert(x._data, dtype))
        if low is not None:
            data = _make(np.maximum(*operands(data, _make(convert(low._data, dtype)))))
        if high is not None:
            data = _make(np.minimum(*operands(data, _make(convert(high._data, dtype)))))
        # laid out as PyTorch's TensorIterator lays out its operands (x, min, max), x first
        inputs = [t._data for t in (x, low, high) if t is not None]
        return laid_out_like_inputs(data._data, inputs)

    @staticmethod
    def backward(ctx, grad):
        x, low, high = ctx.saved_tensors
        if low is None:
            return where(x <= high, grad, 0.0), None, where(x > high, grad, 0.0)
        if high is None:
            return where(x >= low, grad, 0.0), where(x < low, grad, 0.0), None
        # Where min > max the result is max (numpy's clip and PyTorch agree), so max gets the
        # gradient there and min none, whichever side of them x is.
        grad_x = where((x >= low) & (x <= high), grad, 0.0)
        grad_low = where((x < low) & (low < high), grad, 0.0)
        grad_high = where((x > high) | (high < low), grad, 0.0)
        return grad_x, grad_low, grad_high


class Maximum(Op):
    """Elementwise max of two tensors; at ties each side gets half the gradient, as in PyTorch."""

    function, method = "maximum", True
    node_name = "MaximumBackward0"
    saved_names = ("self", "other")
    # other where it is larger or nan, else input: at a tie (0.0 and -0.0) input's own value,
    # as PyTorch keeps it (numpy's maximum keeps other's)
    kernel = staticmethod(
        lambda input, other: scalar.where((other > input) | scalar.isnan(other), other, input)
    )
    derivative = "1 to the larger input (half each at a tie)"
    domain, piecewise = "grid", True

    @staticmethod
    def forward(ctx, input, other):
        _both_tensors("maximum", input, other)
        ctx.save_for_backward(input, other)
        x, y = operands(input, other)
        return np.where((y > x) | (y != y), y, x)  # y != y: y is nan

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _to_the_picked(grad, a, b, a_lost=a < b, b_lost=a > b)


class Minimum(Op):
    """Elementwise min of two tensors; at ties each side gets half the gradient, as in PyTorch."""

    function, method = "minimum", True
    node_name = "MinimumBackward0"
    saved_names = ("self", "other")
    kernel = staticmethod(  # at a tie (0.0 and -0.0) input's own value, as in maximum
        lambda input, other: scalar.where((other < input) | scalar.isnan(other), other, input)
    )
    derivative = "1 to the smaller input (half each at a tie)"
    domain, piecewise = "grid", True

    @staticmethod
    def forward(ctx, input, other):
        _both_tensors("minimum", input, other)
        ctx.save_for_backward(input, other)
        x, y = operands(input, other)
        return np.where((y < x) | (y != y), y, x)  # y != y: y is nan

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _to_the_picked(grad, a, b, a_lost=a > b, b_lost=a < b)


def _both_tensors(name, input, other):
    """maximum and minimum take two tensors: PyTorch refuses a Python number (max/clamp take one)."""
    for position, (argument, value) in enumerate((("input", input), ("other", other)), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{name}(): argument '{argument}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}. Fix: make it a tensor, torch.tensor(value), or use "
                f"clamp() to bound a tensor by a number."
            )


def _to_the_picked(grad, a, b, a_lost, b_lost):
    """maximum's and minimum's backward: the gradient goes to the input that was picked, half to
    each at a tie, and whole to both where neither lost (a nan compares neither way: PyTorch's
    rule). Selects, not grad * mask: an infinite gradient must give the loser 0, not nan."""
    shared = where(a == b, grad / 2, grad)
    return where(a_lost, 0.0, shared), where(b_lost, 0.0, shared)


class Where(Op):
    """`where(condition, a, b)`: the gradient goes to `a` where condition holds, else to `b`."""

    node_name = "WhereBackward0"
    saved_names = ("condition",)  # grad_fn._saved_condition, as in PyTorch
    kernel = staticmethod(lambda input, other, condition: scalar.where(condition, input, other))
    # PyTorch's TensorIterator reads the condition first, so its layout decides the result's (a
    # transposed mask gives a transposed result); here the condition is a keyword argument,
    # which Op's layout rule does not see
    lays_out_itself = True
    derivative = "the gradient goes to the input the condition picked"

    @staticmethod
    def forward(ctx, a, b, condition):
        ctx.save_for_backward(condition)
        x, y = operands(a, b)
        result = np.where(condition._data, x, y)
        # a value of another dtype than the result's is converted first (x.to()), as for any
        # elementwise op (layout.as_converted); the condition is read as it is
        values = [as_converted(t._data, result.dtype) for t in (a, b) if isinstance(t, Tensor)]
        number = len(values) < 2  # where(c, x, 0.0): PyTorch wraps the number as an operand
        return laid_out_like_inputs(result, [condition._data, *values], number=number)

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        return where(cond, grad, 0.0), where(cond, 0.0, grad)


class Clone(Op):
    """A copy that the gradient flows back through."""

    function, method = "clone", True
    node_name = "CloneBackward0"
    kernel = staticmethod(lambda input: input)
    lays_out_itself = True  # as its input, exactly (empty_like's rule, not TensorIterator's)
    derivative = "1: the gradient passes through"

    @staticmethod
    def forward(ctx, input):
        return copy_keeping_layout(input._data)

    @staticmethod
    def backward(ctx, grad):
        return grad


class Contiguous(Clone):
    """`x.contiguous()` of a strided x: a row-major copy (PyTorch records it as a clone too)."""

    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, input):
        return input._data.copy()  # row-major, not like its input


class ToCopy(Op):
    """A dtype and/or device conversion. The gradient goes back to the input's device (a move
    recorded like any op, so it is differentiable); the engine converts it back to its dtype."""

    node_name = "ToCopyBackward0"
    derivative = "1: the gradient passes through (converted back to the input's dtype)"

    @staticmethod
    def forward(ctx, x, dtype, device=None):
        data = x._data if dtype is None else convert(x._data, dtype)
        ctx.device = None if device is None else x.device
        return data if device is None else storage.move(data, device)

    @staticmethod
    def backward(ctx, grad):
        return grad if ctx.device is None else grad.to(ctx.device)


class CopyFrom(Op):
    """The out-of-place half of `x.copy_(src)` / `x.fill_(v)`: src broadcast to x's shape and dtype."""

    node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, x, src):
        if not isinstance(src, Tensor):
            return np.full_like(x._data, src)
        ctx.src_device = src.device  # copy_ copies across devices, as in PyTorch
        value = storage.move(src._data, x.device)
        # a src with more dims gives a bigger result, which Tensor._inplace then refuses
        shape = np.broadcast_shapes(x._data.shape, value.shape)
        return np.broadcast_to(value, shape).astype(x._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad), grad.to(ctx.src_device)  # x's old values are gone


class Fill(Op):
    """The out-of-place half of `x.fill_(3.0)`: every element becomes the number; x's old values
    no longer matter, so no gradient reaches them."""

    node_name = "FillBackward2"  # PyTorch's name for fill_ with a Python number
    derivative = "0: the old values were overwritten"

    @staticmethod
    def forward(ctx, x, value):
        return np.full_like(x._data, value)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad)


class FillWithTensor(Op):
    """`x.fill_(v)` with a 0-d tensor v: every element is v, so v's gradient is the sum of all."""

    node_name = "FillBackward3"
    derivative = "0 for the old values; the value gets the sum of the gradient"

    @staticmethod
    def forward(ctx, x, value):
        if value._data.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions. Fix: pass one number, e.g. v.item() or v[0]."
            )
        ctx.value_device = value.device
        return np.full_like(x._data, storage.move(value._data, x.device))

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad), grad.sum().to(ctx.value_device)


class Zero(Fill):
    """The out-of-place half of `x.zero_()`."""

    node_name = "ZeroBackward0"

    @staticmethod
    def forward(ctx, x):
        return np.zeros_like(x._data)


def _zeros(shape, like):
    """Zeros of `shape` with the dtype and device of the tensor `like`. As a gradient: an exact 0
    (PyTorch's zeros_like), where grad * 0 would turn an infinite gradient into nan."""
    return _make(np.zeros_like(like._data, shape=shape))


def _float(data):
    """Math functions of integer tensors give the default dtype, float32 (numpy: float64)."""
    if data.dtype.kind == "f":
        return data
    return convert(data, types.default_float())


def convert(array, dtype):
    """`array` as `dtype`, laid out in memory as PyTorch's conversions lay it out."""
    if storage.is_device_array(array):
        return array.astype(dtype)
    return copy_keeping_layout(array, dtype=dtype)


# ---- the public functions that choose among records (the others are made from `function`) ------


@public("add", method=True, inplace=True)
def add(input, other, alpha=1):
    if type(alpha) is not int or alpha != 1:
        promotion.check_alpha(alpha, promotion.result_type(input, other))
        return AddAlpha.apply(input, other, alpha=alpha)
    if not isinstance(input, Tensor):
        input, other = other, input  # 2 + x is recorded as x + 2, as PyTorch does
    return Add.apply(input, other)


@public("sub", "subtract", method=True, inplace=True)
def sub(input, other, alpha=1):
    _refuse_bool_subtraction(input, other)
    if type(alpha) is not int or alpha != 1:
        promotion.check_alpha(alpha, promotion.result_type(input, other))
        return SubAlpha.apply(input, other, alpha=alpha)
    if not isinstance(input, Tensor):
        return Rsub.apply(other, number=input)
    return Sub.apply(input, other)


def _is_bool(value):
    """A bool tensor or a Python bool: PyTorch's subtraction refuses both."""
    if isinstance(value, Tensor):
        return value.dtype is types.bool_
    return isinstance(value, (bool, np.bool_))


def _refuse_bool_subtraction(input, other):
    """Subtracting booleans has no meaning PyTorch will guess at: it points to xor and not."""
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead (True where exactly one is True)."
        )
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead; to count "
            "with it, convert it first, e.g. mask.long()."
        )


@public("mul", "multiply", method=True, inplace=True)
def mul(input, other):
    if not isinstance(input, Tensor):
        input, other = other, input  # 2 * x is recorded as x * 2, as PyTorch does
    if isinstance(other, Tensor):
        return Mul.apply(input, other)
    return MulNumber.apply(input, other)


_NOT_GIVEN = object()  # tells div(a, b) from div(a, b, rounding_mode=None)


@public("div", "divide", method=True, inplace=True)
def div(input, other, *, rounding_mode=_NOT_GIVEN):
    given = rounding_mode is not _NOT_GIVEN
    if given and (rounding_mode is not None or isinstance(input, Tensor)):
        # a mode given, even None, has its own records, in ops/division.py (DivBackward2)
        from .division import rounded_div  # here, not at the top: division.py imports this module

        return rounded_div(input, other, rounding_mode)
    if not isinstance(input, Tensor):  # 2 / x is recorded as reciprocal(x) * 2, as in PyTorch
        return mul(Reciprocal.apply(other), input)
    return Div.apply(input, other)


@public("true_divide", method=True, inplace=True)
def true_divide(input, other):
    """div without rounding: PyTorch's true_divide takes no rounding_mode."""
    return div(input, other)


@public("pow", method=True, inplace=True)
def pow(input, exponent):
    if not isinstance(input, Tensor):
        return RPow.apply(exponent, base=input)
    if isinstance(exponent, Tensor):
        return Pow.apply(input, exponent)
    if type(exponent) is int and exponent < 0 and input._data.dtype.kind in "iub":
        # PyTorch refuses this one, though it computes a tensor of negative exponents (_power)
        raise RuntimeError(
            f"Integers to negative integer powers are not allowed: {input.dtype} ** {exponent} "
            "would be a fraction, which an integer tensor cannot hold. Fix: make one of them "
            f"floating point, e.g. x.float() ** {exponent} or x ** {float(exponent)}."
        )
    return PowScalar.apply(input, exponent=exponent)


@public("square", method=True, inplace=True)
def square(input):
    return pow(input, 2)


@public("clamp", "clip", method=True, inplace=True)
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("clamp() needs at least one of min= or max=")
    min, max = _clamp_bounds(min, max)
    # shapes that do not broadcast are refused before a dtype without a kernel (bool)
    check_broadcastable(*[t.shape for t in (input, min, max) if isinstance(t, Tensor)])
    both_tensors = isinstance(min, Tensor) and isinstance(max, Tensor)
    if both_tensors and promotion.common_dtype(input, min, max) is types.bool_:
        # with one tensor bound PyTorch takes maximum or minimum, which compare bools; with two
        # it runs its clamp kernel, which has no bool version
        raise types.not_implemented_for("clamp_cpu", types.bool_)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return ClampTensor.apply(input, min, max)
    return Clamp.apply(input, min=min, max=max)


def _clamp_bounds(min, max):
    """PyTorch's clamp takes two tensor bounds or two number bounds, not one of each. A 0-dim
    tensor that needs no gradient passes for a number (its value is used), so that mix works."""
    numbers = [bound for bound in (min, max) if bound is not None and not isinstance(bound, Tensor)]
    tensors = [bound for bound in (min, max) if isinstance(bound, Tensor)]
    if not (numbers and tensors):
        return min, max
    tensor = tensors[0]
    if tensor.dim() != 0 or tensor.requires_grad:
        raise TypeError(
            "clamp() received an invalid combination of arguments: min and max must both be "
            "tensors or both be numbers (a 0-dim tensor that does not require grad counts as a "
            "number). Fix: make the number a tensor too, e.g. max=torch.full_like(min, 0.5)."
        )
    if isinstance(min, Tensor):
        return min.item(), max
    return min, max.item()


@public("where")
def where(condition, input, other):
    condition = condition if isinstance(condition, Tensor) else _make(np.asarray(condition, bool))
    if condition._data.dtype != np.bool_:
        condition = condition != 0
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # two Python numbers: PyTorch makes them tensors of its default dtypes (float32 for
        # where(mask, 1.0, 0.0), int64 for ints), where numpy would give float64
        input, other = _number_tensors(input, other, condition)
    check_broadcastable(*[t.shape for t in (condition, input, other) if isinstance(t, Tensor)])
    return Where.apply(input, other, condition=condition)


def _number_tensors(a, b, like):
    if isinstance(a, bool) and isinstance(b, bool):
        dtype = np.bool_
    elif isinstance(a, float) or isinstance(b, float):
        dtype = types.default_float()
    else:
        dtype = np.int64
    device = storage.device_of(like._data)
    return tuple(_make(storage.move(np.asarray(n, dtype), device)) for n in (a, b))


def to_dtype(input, dtype, device=None):
    if dtype is not None and (np.issubdtype(dtype, np.integer) or dtype == np.bool_):
        # an integer or bool result has no gradient: PyTorch records nothing, so it never looks
        # at the input's history (a split piece whose base has changed in place converts fine)
        input = input.detach()
    return ToCopy.apply(input, dtype=dtype, device=device)


def contiguous(input):
    return Contiguous.apply(input)


def copy_from(input, src):
    if isinstance(src, Tensor):
        check_broadcastable(input.shape, src.shape)
    return CopyFrom.apply(input, src)


def fill(input, value):
    if isinstance(value, Tensor):
        return FillWithTensor.apply(input, value)
    promotion.check_value_fits(value, input.dtype)
    return Fill.apply(input, value=value)


def zero(input):
    return Zero.apply(input)


# ---- comparisons and logic: results are bool tensors that never require grad --------------------
# Not recorded (nothing to differentiate), but fused kernels compute them: each has a kernel.


def _comparison(name, numpy_function, kernel, *aliases):
    def compare(input, other):
        # laid out as an Op's result is (TensorIterator's rule): numpy picks other strides for
        # a dim of size 1, which where(x > 0, ...) would then take on
        inputs = [t._data for t in (input, other) if isinstance(t, Tensor)]
        result = numpy_function(*operands(input, other))
        computing = computing_dtype(result.dtype, (input, other))
        return _make(laid_out_like_inputs(result, inputs, len(inputs) < 2, computing))

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"{name}(input, other): element by element, a bool tensor"
    compare.kernel = kernel
    return public(name, *aliases, method=True)(compare)


eq = _comparison("eq", np.equal, lambda a, b: a == b)
ne = _comparison("ne", np.not_equal, lambda a, b: a != b)
lt = _comparison("lt", np.less, lambda a, b: a < b, "less")
le = _comparison("le", np.less_equal, lambda a, b: a <= b, "less_equal")
gt = _comparison("gt", np.greater, lambda a, b: a > b, "greater")
ge = _comparison("ge", np.greater_equal, lambda a, b: a >= b, "greater_equal")
logical_and = _comparison("logical_and", np.logical_and, lambda a, b: a & b)
logical_or = _comparison("logical_or", np.logical_or, lambda a, b: a | b)
logical_xor = _comparison("logical_xor", np.logical_xor, lambda a, b: a != b)


@public("logical_not", method=True)
def logical_not(input):
    return _make(np.logical_not(input._data))


logical_not.kernel = lambda a: ~a


def _read_histories(*inputs):
    """PyTorch has no derivative for the bitwise ops, but its autograd layer still records a node
    for an input that requires grad before the kernel refuses a float: reading that input's
    history first (a split piece changed through its base is refused there)."""
    for input in inputs:
        if isinstance(input, Tensor) and input.requires_grad and is_grad_enabled():
            _ = input.grad_fn  # (a view's history is rebuilt, or refused, on reading)


def _bitwise(name, numpy_function, kernel):
    """PyTorch's &, | and ^: bit by bit on integers, in their promoted dtype (int8 & 3 is int8),
    which on bools is the logical and/or/xor; floats have no bits to combine."""

    def combine(input, other):
        x, y = operands(input, other)
        if _kind(x) == "f" or _kind(y) == "f":
            _read_histories(input, other)
            raise types.not_implemented_for(name, promotion.result_type(input, other))
        return _make(numpy_function(x, y))

    combine.__name__ = combine.__qualname__ = name
    combine.__doc__ = f"{name}(input, other): element by element, bit by bit (bools: logically)"
    combine.kernel = kernel
    return public(name, method=True)(combine)


bitwise_and = _bitwise("bitwise_and", np.bitwise_and, lambda a, b: a & b)
bitwise_or = _bitwise("bitwise_or", np.bitwise_or, lambda a, b: a | b)
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor, lambda a, b: a ^ b)


@public("bitwise_not", method=True)
def bitwise_not(input):
    """~x: every bit flipped for integers (~5 is -6), not for bools."""
    if input.is_floating_point():
        _read_histories(input)
        raise types.not_implemented_for("bitwise_not", input.dtype)
    return _make(np.invert(input._data))


bitwise_not.kernel = lambda a: ~a


@public("isnan", method=True)
def isnan(input):
    return _make(np.isnan(input._data))


isnan.kernel = scalar.isnan


@public("isfinite", method=True)
def isfinite(input):
    return _make(np.isfinite(input._data))


isfinite.kernel = lambda a: a - a == 0  # inf - inf and nan - nan are nan


@public("equal", method=True)
def equal(input, other):
    """True when both tensors have the same shape and elements."""
    return input._data.shape == other._data.shape and bool((input._data == other._data).all())


def _comparable(name, input, other):
    """isclose and allclose compare two tensors of one dtype: PyTorch neither promotes here nor
    takes a Python number, so a float32 tensor is not silently compared with float64 values."""
    if not isinstance(other, Tensor):
        raise TypeError(
            f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}. "
            f"Fix: wrap it, e.g. x.{name}(torch.tensor(value, dtype=x.dtype))."
        )
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"{types.kernel_name(input.dtype)} did not match {types.kernel_name(other.dtype)}: "
            f"{name}() compares tensors of the same dtype, got {input.dtype} and {other.dtype}. "
            f"Fix: convert one first, e.g. a.{name}(b.to(a.dtype))."
        )
    check_broadcastable(input.shape, other.shape)


@public("allclose", method=True)
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _comparable("allclose", input, other)
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


@public("isclose", method=True)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _comparable("isclose", input, other)
    close = np.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan)
    # laid out as PyTorch's first step, input == other, lays out its result
    return _make(laid_out_like_inputs(close, [input._data, other._data]))


@public("logit", method=True, inplace=True)
def logit(input, eps=None):
    """log(p / (1 - p)), the inverse of sigmoid: the logit of a probability. With eps, p is
    first clamped to [eps, 1 - eps], so 0 and 1 give finite logits."""
    return Logit.apply(input, eps=eps)
