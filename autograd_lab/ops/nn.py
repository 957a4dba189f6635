"""The Functions behind `autograd_lab.nn.functional`: linear layers and GELU (losses: loss.py).

`linear` is the hot path of every network, so it is one node with a three-line backward:

    y = x @ W.T + b      grad_x = grad @ W      grad_W = grad.T @ x      grad_b = grad.sum(0)

NB: in PyTorch, `F.linear` records `AddmmBackward0` fed by a `TBackward0` node (it multiplies by the
view `weight.t()`); here the weight is an input of the AddmmBackward0 node itself, one node fewer.
"""

import math

import numpy as np

from ..autograd.function import Op
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import _make
from . import scalar
from .elementwise import _float
from .linalg import Mm, check_same_dtype
from .shape import Transpose

# ---- linear -----------------------------------------------------------------------------------------


def _times_weight_t(ctx, input, weight):
    """`input @ weight.T` in numpy: the transposed view costs no copy (BLAS reads it transposed)."""
    check_same_dtype("linear", input, weight, names=("input", "weight"))
    x, w = input._data, weight._data
    if x.shape[-1] != w.shape[-1]:
        raise RuntimeError(
            f"linear(): input has {x.shape[-1]} features in its last dim but weight has shape "
            f"{list(w.shape)} = [out_features, in_features], so it expects {w.shape[-1]}. Fix: give "
            "an input whose last dim is in_features, or a layer built for this input size."
        )
    ctx.save_for_backward(
        input if ctx.needs_input_grad[-1] else None, weight if ctx.needs_input_grad[-2] else None
    )
    return np.matmul(x, w.T)


def _input_and_weight_grads(ctx, grad, needs_input, needs_weight):
    input, weight = ctx.saved_tensors
    if not is_grad_enabled():  # a plain backward (no create_graph): the two products in numpy,
        g = grad._data  # without the bookkeeping of two recorded-op calls per layer
        return (
            _make(g @ weight._data) if needs_input else None,
            _make(g.T @ input._data) if needs_weight else None,
        )
    grad_input = Mm.apply(grad, weight) if needs_input else None
    grad_weight = Mm.apply(Transpose.apply(grad, dim0=0, dim1=1), input) if needs_weight else None
    return grad_input, grad_weight


class Addmm(Op):
    """`bias + input @ weight.T` for a 2-D input: F.linear with a bias, as one node."""

    node_name = "AddmmBackward0"
    saved_names = ("mat1", "weight")  # PyTorch saves weight.t() as `mat2`; we keep the weight

    @staticmethod
    def forward(ctx, bias, input, weight):
        out = _times_weight_t(ctx, input, weight)
        ctx.bias_ndim = bias._data.ndim
        np.add(out, bias._data, out=out)  # in place: the product is a fresh array
        return out

    @staticmethod
    def backward(ctx, grad):
        needs_bias, needs_input, needs_weight = ctx.needs_input_grad
        grad_bias = None
        if needs_bias:  # a (out_features,) bias gets its sum over the batch; others: the engine
            grad_bias = grad.sum(0) if ctx.bias_ndim == 1 else grad
        return (grad_bias, *_input_and_weight_grads(ctx, grad, needs_input, needs_weight))


class LinearMm(Op):
    """`input @ weight.T` for a 2-D input: F.linear without a bias (PyTorch: mm with weight.t())."""

    node_name = "MmBackward0"
    saved_names = ("self", "weight")

    @staticmethod
    def forward(ctx, input, weight):
        return _times_weight_t(ctx, input, weight)

    @staticmethod
    def backward(ctx, grad):
        return _input_and_weight_grads(ctx, grad, *ctx.needs_input_grad)


# ---- GELU ------------------------------------------------------------------------------------------

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_SCALE, _TANH_CUBIC = math.sqrt(2 / math.pi), 0.044715  # gelu's tanh approximation


def gelu_value(x, approximate):
    """x·Φ(x), Φ the standard normal CDF; or its tanh approximation. For numpy arrays and for
    kernel expressions alike (ops/scalar.py): the forward and the fused kernels share it."""
    if approximate == "tanh":
        return 0.5 * x * (1 + scalar.tanh(_TANH_SCALE * (x + _TANH_CUBIC * x * x * x)))
    return 0.5 * x * (1 + scalar.erf(x * _SQRT_HALF))


def gelu_slope(x, approximate):
    """d gelu / dx: Φ(x) + x·φ(x), or the derivative of the tanh form (arrays or expressions)."""
    if approximate == "tanh":
        t = scalar.tanh(_TANH_SCALE * (x + _TANH_CUBIC * x * x * x))
        inner_slope = _TANH_SCALE * (1 + 3 * _TANH_CUBIC * x * x)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * inner_slope
    return 0.5 * (1 + scalar.erf(x * _SQRT_HALF)) + x * scalar.exp(-0.5 * x * x) * _INV_SQRT_2PI


def _gelu_curvature(x, approximate):
    """d² gelu / dx² in Tensor ops (so that higher derivatives keep working)."""
    if approximate == "tanh":
        # gelu = f·(1 + t) with f = x/2, t = tanh(u), u = k(x + c x³); its slope is
        # f'·(1 + t) + f·g·h with g = 1 - t² and h = u', and the slope of that is
        # 2 f'·g·h + f·h·g' + f·g·h'. Grouped as PyTorch groups it (gelu_double_backward): g'
        # is -2 sech²(u) t h, sech taken from cosh, which keeps its size in float32 where t
        # rounds to ±1 and 1 - t² to a few last bits
        u = (x + x**3 * _TANH_CUBIC) * _TANH_SCALE
        t, sech = u.tanh(), 1 / u.cosh()
        f, g, h = x * 0.5, 1 - t * t, (x * x * (3 * _TANH_CUBIC) + 1) * _TANH_SCALE
        g_slope = (sech * 2) * (-sech * t) * h
        h_slope = x * (6 * _TANH_CUBIC * _TANH_SCALE)
        return (g * h * 0.5) * 2 + f * h * g_slope + f * g * h_slope
    x2 = x * x
    return (x2 * -0.5).exp() * (2 - x2) * _INV_SQRT_2PI  # φ(x)·(2 - x²)


class Gelu(Op):
    """x·Φ(x), Φ the standard normal CDF (or its tanh approximation): F.gelu."""

    node_name = "GeluBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input, approximate="none": gelu_value(input, approximate))
    derivative = "d gelu(x)/dx = Φ(x) + x·φ(x)"

    @staticmethod
    # gelu(-inf) = -inf · 0 = nan, and the tanh form's x³ overflows: silently, as in PyTorch
    @np.errstate(invalid="ignore", over="ignore")
    def forward(ctx, x, approximate="none"):
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        data = _float(x._data)
        return gelu_value(data, approximate).astype(data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return GeluGrad.apply(grad, x, approximate=ctx.approximate)


class GeluGrad(Op):
    """gelu's backward as a single (differentiable) op, like PyTorch's `gelu_backward`."""

    node_name = "GeluBackwardBackward0"
    kernel = staticmethod(lambda grad, x, approximate="none": grad * gelu_slope(x, approximate))

    @staticmethod
    @np.errstate(over="ignore", invalid="ignore")  # x² overflows where φ(x) is 0: silently
    def forward(ctx, grad, x, approximate):
        ctx.save_for_backward(grad, x)
        ctx.approximate = approximate
        return grad._data * gelu_slope(x._data, approximate).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad2):
        grad, x = ctx.saved_tensors
        needs_grad, needs_x = ctx.needs_input_grad
        grad_grad = GeluGrad.apply(grad2, x, approximate=ctx.approximate) if needs_grad else None
        grad_x = grad2 * grad * _gelu_curvature(x, ctx.approximate) if needs_x else None
        return grad_grad, grad_x
