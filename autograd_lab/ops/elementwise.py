"""Elementwise operations: one small Function each, forward on numpy arrays, backward in Tensor ops.

Backward formulas use differentiable Tensor operations, so the backward pass can itself be recorded
(`create_graph=True`) and differentiated again. Broadcasting is *not* undone here: an op returns a
gradient of the broadcast shape and the engine sums it back to each input's shape (engine._fit).
"""

import numpy as np

from .. import storage, types
from ..autograd.function import Op
from ..tensor import Tensor, _make


def operands(a, b, elementwise=True):
    """The two numpy operands of a binary op, promoted the way PyTorch promotes them."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):  # the common cases first
        x, y = a._data, b._data
        if x.dtype == y.dtype and x.shape == y.shape:
            return x, y
    elif isinstance(a, Tensor):
        x = a._data
        if type(b) is float:  # int tensor * 1.5 is float32 in PyTorch (numpy would say float64)
            return (x if x.dtype.kind == "f" else x.astype(np.float32)), b
        if type(b) is int:
            return x, b
    x = a._data if isinstance(a, Tensor) else _scalar_or_array(a)
    y = b._data if isinstance(b, Tensor) else _scalar_or_array(b)
    x_is_array, y_is_array = not _is_number(x), not _is_number(y)  # numpy or CUDA arrays
    if x_is_array and y_is_array:
        if x.dtype != y.dtype:
            dtype = types.result_type(x, y)
            x, y = x.astype(dtype, copy=False), y.astype(dtype, copy=False)
        if elementwise and x.shape != y.shape:
            check_broadcastable(x.shape, y.shape)
    elif x_is_array:
        if type(y) is float and x.dtype.kind != "f":
            x = x.astype(np.float32)  # int tensor * 1.5 is float32 in PyTorch (numpy: float64)
    elif y_is_array and type(x) is float and y.dtype.kind != "f":
        y = y.astype(np.float32)
    return x, y


def check_broadcastable(shape_a, shape_b):
    """Refuse shapes that do not broadcast with PyTorch's RuntimeError (numpy raises ValueError)."""
    for m, n in zip(reversed(shape_a), reversed(shape_b), strict=False):
        if m != n and m != 1 and n != 1:
            raise RuntimeError(
                f"shapes {list(shape_a)} and {list(shape_b)} cannot be broadcast together: "
                f"compared from the right, sizes {m} and {n} differ and neither is 1. Fix: reshape "
                "or unsqueeze one of them so that each pair of sizes is equal or 1."
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

    @staticmethod
    def forward(ctx, a, b):
        x, y = operands(a, b)
        return x + y

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sub(Op):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = operands(a, b)
        return x - y

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad if ctx.needs_input_grad[1] else None


class Rsub(Op):
    """`number - tensor`: PyTorch records it as one node with a single edge."""

    node_name = "RsubBackward1"

    @staticmethod
    def forward(ctx, x, number):
        a, b = operands(number, x)
        return a - b

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Mul(Op):
    node_name = "MulBackward0"
    saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if ctx.needs_input_grad[0] else None)  # fmt: skip
        x, y = operands(a, b)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = grad * b if ctx.needs_input_grad[0] else None
        grad_b = grad * a if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class MulNumber(Op):
    """`tensor * number`: the number is a constant of the node, nothing needs saving."""

    node_name = "MulBackward0"

    @staticmethod
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

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if isinstance(b, Tensor) else None)  # fmt: skip
        ctx.b = None if isinstance(b, Tensor) else b
        x, y = operands(a, b)
        if x.dtype.kind != "f" and _kind(y) != "f":
            x = x.astype(np.float32)  # true division of integers gives float32, as in PyTorch
            y = y if _is_number(y) else y.astype(np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):  # x/0 = inf, 0/0 = nan, silently
            return x / y

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        if b is None:
            b = ctx.b
        grad_a = grad / b if ctx.needs_input_grad[0] else None
        grad_b = -grad * a / (b * b) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Neg(Op):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, x):
        return -x._data

    @staticmethod
    def backward(ctx, grad):
        return -grad


class PowScalar(Op):
    """`x ** c` for a number c."""

    node_name = "PowBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.save_for_backward(x)
        ctx.exponent = exponent
        base, exp = operands(x, exponent)
        return base**exp

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        p = ctx.exponent
        if p == 0:
            return grad * 0
        return grad * p * x ** (p - 1)


class Pow(Op):
    """`a ** b` for two tensors."""

    node_name = "PowBackward1"
    saved_names = ("self", "exponent", "result")

    @staticmethod
    def forward(ctx, a, b):
        x, y = operands(a, b)
        result = _make(x**y)
        ctx.save_for_backward(a, b, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, b, result = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = where(b == 0, 0.0, grad * b * a ** (b - 1))
        if ctx.needs_input_grad[1]:  # d(a^b)/db = a^b log a, taken as 0 where a == 0 and b >= 0
            grad_b = where((a == 0) & (b >= 0), 0.0, grad * result * log(a))
        return grad_a, grad_b


class RPow(Op):
    """`c ** x` for a number c."""

    node_name = "PowBackward2"
    saved_names = ("exponent", "result")

    @staticmethod
    def forward(ctx, x, base):
        b, e = operands(base, x)
        result = _make(b**e)
        ctx.save_for_backward(x, result)
        ctx.base = base
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        return grad * result * float(np.log(ctx.base))


# ---- unary functions --------------------------------------------------------------------------------


class Exp(Op):
    node_name = "ExpBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, x):
        result = _make(np.exp(x._data))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * result


class Log(Op):
    node_name = "LogBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, log(-1) = nan
            return np.log(_float(x._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x


class Log1p(Op):
    node_name = "Log1PBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log1p(_float(x._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x + 1)


class Expm1(Op):
    node_name = "Expm1Backward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, x):
        result = _make(np.expm1(_float(x._data)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * (result + 1)


class Sqrt(Op):
    node_name = "SqrtBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore"):
            result = _make(np.sqrt(_float(x._data)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad / (2 * result)


class Sin(Op):
    node_name = "SinBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(_float(x._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * cos(x)


class Cos(Op):
    node_name = "CosBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.cos(_float(x._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad * sin(x)


class Tanh(Op):
    node_name = "TanhBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, x):
        result = _make(np.tanh(_float(x._data)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return TanhGrad.apply(grad, result)  # grad * (1 - result²) as one op, as in PyTorch


class TanhGrad(Op):
    """tanh's backward as a single (differentiable) op, like PyTorch's `tanh_backward`."""

    node_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_for_backward(grad, result)
        g, y = grad._data, result._data
        return g * (1 - y * y)

    @staticmethod
    def backward(ctx, grad2):
        grad, result = ctx.saved_tensors
        return grad2 * (1 - result * result), grad2 * grad * result * -2


class Sigmoid(Op):
    node_name = "SigmoidBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, x):
        data = _float(x._data)
        # two forms, so exp never overflows: 1/(1+e^-x) for x >= 0, e^x/(1+e^x) for x < 0
        e = np.exp(-np.abs(data))
        result = _make(np.where(data >= 0, 1 / (1 + e), e / (1 + e)).astype(data.dtype, copy=False))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return SigmoidGrad.apply(grad, result)  # grad * y * (1 - y) as one op, as in PyTorch


class SigmoidGrad(Op):
    """sigmoid's backward as a single (differentiable) op, like PyTorch's `sigmoid_backward`."""

    node_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_for_backward(grad, result)
        g, y = grad._data, result._data
        return g * y * (1 - y)

    @staticmethod
    def backward(ctx, grad2):
        grad, result = ctx.saved_tensors
        return grad2 * result * (1 - result), grad2 * grad * (1 - 2 * result)


class Relu(Op):
    node_name = "ReluBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, x):
        result = _make(np.maximum(x._data, 0).astype(x._data.dtype, copy=False))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return ReluGrad.apply(grad, result)  # grad where result > 0: one op, no float mask


class ReluGrad(Op):
    """relu's backward as a single (differentiable) op, like PyTorch's `threshold_backward`."""

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_for_backward(result)
        g = grad._data
        return np.multiply(g, result._data > 0, dtype=g.dtype)  # the bool mask is cast on the fly

    @staticmethod
    def backward(ctx, grad2):
        (result,) = ctx.saved_tensors
        return ReluGrad.apply(grad2, result), None


class Abs(Op):
    node_name = "AbsBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.abs(x._data)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * sign(x)


class Sign(Op):
    """-1, 0 or 1: flat everywhere, so its gradient is 0 (PyTorch records it all the same)."""

    node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, x):
        return np.sign(x._data)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


class Reciprocal(Op):
    node_name = "ReciprocalBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore"):
            result = _make(1 / _float(x._data))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return -grad * result * result


class Clamp(Op):
    """clamp with number bounds; the gradient passes where min <= x <= max."""

    node_name = "ClampBackward1"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, x, min=None, max=None):
        ctx.save_for_backward(x)
        ctx.bounds = (min, max)
        return np.clip(x._data, min, max).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        low, high = ctx.bounds
        inside = _make(np.ones_like(x._data, dtype=bool))
        if low is not None:
            inside = inside & (x >= low)
        if high is not None:
            inside = inside & (x <= high)
        return grad * inside


class ClampTensor(Op):
    """clamp with tensor bounds (either may be None)."""

    node_name = "ClampBackward0"
    saved_names = ("self", "min", "max")

    @staticmethod
    def forward(ctx, x, low, high):
        ctx.save_for_backward(x, low, high)
        data = x._data
        if low is not None:
            data = np.maximum(*operands(_make(data), low))
        if high is not None:
            data = np.minimum(*operands(_make(data), high))
        return data

    @staticmethod
    def backward(ctx, grad):
        x, low, high = ctx.saved_tensors
        inside = _make(np.ones_like(x._data, dtype=bool))
        grad_low = grad_high = None
        if low is not None:
            inside = inside & (x >= low)
            grad_low = grad * (x < low)
        if high is not None:
            inside = inside & (x <= high)
            grad_high = grad * (x > high)
        return grad * inside, grad_low, grad_high


class Maximum(Op):
    """Elementwise max of two tensors; at ties each side gets half the gradient, as in PyTorch."""

    node_name = "MaximumBackward0"
    saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.maximum(*operands(a, b))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        share = (a > b) + (a == b) * 0.5
        return grad * share, grad * (1 - share)


class Minimum(Op):
    node_name = "MinimumBackward0"
    saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.minimum(*operands(a, b))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        share = (a < b) + (a == b) * 0.5
        return grad * share, grad * (1 - share)


class Where(Op):
    """`where(condition, a, b)`: the gradient goes to `a` where condition holds, else to `b`."""

    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, a, b, condition):
        ctx.condition = condition
        x, y = operands(a, b)
        return np.where(condition._data, x, y)

    @staticmethod
    def backward(ctx, grad):
        cond = ctx.condition
        return where(cond, grad, 0.0), where(cond, 0.0, grad)


class Clone(Op):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        return x._data.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad


class ToCopy(Op):
    """A dtype and/or device conversion. The gradient goes back to the input's device (a move
    recorded like any op, so it is differentiable); the engine converts it back to its dtype."""

    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dtype, device=None):
        data = x._data if dtype is None else x._data.astype(dtype)
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
        return np.broadcast_to(value, x._data.shape).astype(x._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, grad.to(ctx.src_device)


def _float(data):
    """Math functions of integer tensors give float32 in PyTorch (numpy would give float64)."""
    return data if data.dtype.kind == "f" else data.astype(np.float32)


# ---- the public functions (the Tensor methods of the same names call these) --------------------


def add(input, other, alpha=1):
    if not isinstance(input, Tensor):
        input, other = other, input  # 2 + x is recorded as x + 2, as PyTorch does
    if alpha != 1:
        other = other * alpha
    return Add.apply(input, other)


def sub(input, other, alpha=1):
    if alpha != 1:
        other = other * alpha
    if not isinstance(input, Tensor):
        return Rsub.apply(other, number=input)
    return Sub.apply(input, other)


def mul(input, other):
    if not isinstance(input, Tensor):
        input, other = other, input  # 2 * x is recorded as x * 2, as PyTorch does
    if isinstance(other, Tensor):
        return Mul.apply(input, other)
    return MulNumber.apply(input, other)


def div(input, other):
    if not isinstance(input, Tensor):
        return mul(
            reciprocal(other), input
        )  # 2 / x is recorded as reciprocal(x) * 2, as in PyTorch
    return Div.apply(input, other)


true_divide = divide = div
multiply = mul
subtract = sub


def neg(input):
    return Neg.apply(input)


negative = neg


def pow(input, exponent):
    if not isinstance(input, Tensor):
        return RPow.apply(exponent, base=input)
    if isinstance(exponent, Tensor):
        return Pow.apply(input, exponent)
    return PowScalar.apply(input, exponent=exponent)


def square(input):
    return pow(input, 2)


def exp(input):
    return Exp.apply(input)


def log(input):
    return Log.apply(input)


def log1p(input):
    return Log1p.apply(input)


def expm1(input):
    return Expm1.apply(input)


def sqrt(input):
    return Sqrt.apply(input)


def sin(input):
    return Sin.apply(input)


def cos(input):
    return Cos.apply(input)


def tanh(input):
    return Tanh.apply(input)


def sigmoid(input):
    return Sigmoid.apply(input)


def relu(input):
    return Relu.apply(input)


def abs(input):
    return Abs.apply(input)


def reciprocal(input):
    return Reciprocal.apply(input)


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("clamp() needs at least one of min= or max=")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return ClampTensor.apply(input, min, max)
    return Clamp.apply(input, min=min, max=max)


clip = clamp


def maximum(input, other):
    return Maximum.apply(input, other)


def minimum(input, other):
    return Minimum.apply(input, other)


def where(condition, input, other):
    condition = condition if isinstance(condition, Tensor) else _make(np.asarray(condition, bool))
    if condition._data.dtype != np.bool_:
        condition = condition != 0
    return Where.apply(input, other, condition=condition)


def sign(input):
    return Sign.apply(input)


def clone(input):
    return Clone.apply(input)


def to_dtype(input, dtype, device=None):
    return ToCopy.apply(input, dtype=dtype, device=device)


def copy_from(input, src):
    return CopyFrom.apply(input, src)


# ---- comparisons and logic: results are bool tensors that never require grad --------------------


def _compare(ufunc):
    def compare(input, other):
        return _make(ufunc(*operands(input, other)))

    compare.__name__ = ufunc.__name__
    return compare


eq = _compare(np.equal)
ne = _compare(np.not_equal)
lt = less = _compare(np.less)
le = less_equal = _compare(np.less_equal)
gt = greater = _compare(np.greater)
ge = greater_equal = _compare(np.greater_equal)
logical_and = _compare(np.logical_and)
logical_or = _compare(np.logical_or)
logical_xor = _compare(np.logical_xor)


def logical_not(input):
    return _make(np.logical_not(input._data))


def isnan(input):
    return _make(np.isnan(input._data))


def isfinite(input):
    return _make(np.isfinite(input._data))


def equal(input, other):
    """True when both tensors have the same shape and elements."""
    return input._data.shape == other._data.shape and bool((input._data == other._data).all())


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _make(np.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))
