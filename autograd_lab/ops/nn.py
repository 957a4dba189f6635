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
from .elementwise import _float, exp, tanh
from .linalg import Mm
from .shape import SqueezeDim, Transpose, View

# ---- linear -----------------------------------------------------------------------------------------


def _times_weight_t(ctx, input, weight):
    """`input @ weight.T` in numpy: the transposed view costs no copy (BLAS reads it transposed)."""
    x, w = input._data, weight._data
    if x.dtype != w.dtype:
        raise RuntimeError(
            f"linear(): input is {x.dtype} but weight is {w.dtype}; both must have the same dtype. "
            "Fix: convert one of them, e.g. input.to(weight.dtype) (or .float() / .double())."
        )
    if x.shape[-1] != w.shape[-1]:
        raise RuntimeError(
            f"linear(): input has {x.shape[-1]} features in its last dim but weight has shape "
            f"{list(w.shape)} = [out_features, in_features], so it expects {w.shape[-1]}. Fix: give "
            "an input whose last dim is in_features, or a layer built for this input size."
        )
    ctx.save_for_backward(input if ctx.needs_input_grad[-1] else None,
                          weight if ctx.needs_input_grad[-2] else None)  # fmt: skip
    return np.matmul(x, w.T)


def _input_and_weight_grads(ctx, grad, needs_input, needs_weight):
    input, weight = ctx.saved_tensors
    if not is_grad_enabled():  # a plain backward (no create_graph): the two products in numpy,
        g = grad._data  # without the bookkeeping of two recorded-op calls per layer
        return (_make(g @ weight._data) if needs_input else None,
                _make(g.T @ input._data) if needs_weight else None)  # fmt: skip
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


class UnsafeView(View):
    """A reshape, under the name PyTorch gives the reshape that ends its matmul of a batch."""

    node_name = "UnsafeViewBackward0"


class SqueezeDims(SqueezeDim):
    """squeeze of a list of dims, as PyTorch records it (linear of a 1-D input without bias)."""

    node_name = "SqueezeBackward4"


# ---- GELU ------------------------------------------------------------------------------------------

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_SCALE, _TANH_CUBIC = math.sqrt(2 / math.pi), 0.044715  # gelu's tanh approximation


def gelu_value(x, approximate):
    """x·Φ(x), Φ the standard normal CDF; or its tanh approximation. numpy in, numpy out."""
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_TANH_SCALE * (x + _TANH_CUBIC * x * x * x)))
    return 0.5 * x * (1 + erf(x * _SQRT_HALF))


def _gelu_slope(x, approximate):
    """d gelu / dx in numpy: Φ(x) + x·φ(x), or the derivative of the tanh form."""
    if approximate == "tanh":
        t = np.tanh(_TANH_SCALE * (x + _TANH_CUBIC * x * x * x))
        inner_slope = _TANH_SCALE * (1 + 3 * _TANH_CUBIC * x * x)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * inner_slope
    return 0.5 * (1 + erf(x * _SQRT_HALF)) + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI


def _gelu_curvature(x, approximate):
    """d² gelu / dx² in Tensor ops (so that higher derivatives keep working)."""
    x2 = x * x
    if approximate == "tanh":  # with u = k(x + c x³), t = tanh(u): (1 - t²)(u' + x u''/2 - x t u'²)
        t = tanh((x2 * _TANH_CUBIC + 1) * x * _TANH_SCALE)
        du = (x2 * (3 * _TANH_CUBIC) + 1) * _TANH_SCALE
        return (1 - t * t) * (du + x2 * (3 * _TANH_CUBIC * _TANH_SCALE) - x * t * du * du)
    return exp(x2 * -0.5) * (2 - x2) * _INV_SQRT_2PI  # φ(x)·(2 - x²)


class Gelu(Op):
    node_name = "GeluBackward0"
    saved_names = ("self",)

    @staticmethod
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

    @staticmethod
    def forward(ctx, grad, x, approximate):
        ctx.save_for_backward(grad, x)
        ctx.approximate = approximate
        return grad._data * _gelu_slope(x._data, approximate).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad2):
        grad, x = ctx.saved_tensors
        needs_grad, needs_x = ctx.needs_input_grad
        grad_grad = GeluGrad.apply(grad2, x, approximate=ctx.approximate) if needs_grad else None
        grad_x = grad2 * grad * _gelu_curvature(x, ctx.approximate) if needs_x else None
        return grad_grad, grad_x


# ---- erf, which numpy lacks -------------------------------------------------------------------------
# W. J. Cody's rational Chebyshev approximations (Math. Comp. 23, 1969), the ones C libraries use:
# erf(x) = x·R1(x²) for |x| <= 0.46875, erfc(x) = e^(-x²)·R2(x) up to 4, e^(-x²)/x·(1/√π - R3(1/x²))
# beyond. Each R = numerator/denominator polynomial; coefficients highest degree first. Checked against
# math.erf: at most 2.3e-16 absolute error (a few units in the last place), in one vectorised pass.
_R1 = ((1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
        3.77485237685302021e02, 3.20937758913846947e03),
       (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
        2.84423683343917062e03))  # fmt: skip
_R2 = ((2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
        6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
        1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03),
       (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
        1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
        3.43936767414372164e03, 1.23033935480374942e03))  # fmt: skip
_R3 = ((1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
        1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4),
       (1.0, 2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
        6.05183413124413191e-2, 2.33520497626869185e-3))  # fmt: skip
_INV_SQRT_PI = 1 / math.sqrt(math.pi)


def _ratio(coefficients, z):
    """numerator(z) / denominator(z), both evaluated by Horner's rule (highest degree first)."""
    numerator, denominator = coefficients
    num, den = numerator[0], denominator[0]
    for a, b in zip(numerator[1:], denominator[1:], strict=True):
        num, den = num * z + a, den * z + b
    return num / den


def _exp_minus_square(y):
    """e^(-y²), with y² split into an exact part and a small rest so that no digits are lost."""
    head = np.trunc(y * 16) / 16
    return np.exp(-head * head) * np.exp(-(y - head) * (y + head))


def erf(x):
    """The error function of a numpy array, elementwise (float64 or float32; NaN stays NaN).

    >>> erf(np.array([0.0, 0.5, -3.0]))  # doctest: +ELLIPSIS
    array([ 0.        ,  0.52049988, -0.99997791...])
    """
    if x.ndim == 0:  # boolean masks below need a dimension (the CUDA backend's indexing does)
        return erf(x.reshape(1)).reshape(())
    y = np.abs(x)
    out = y.copy()  # NaN falls in no branch below and stays NaN
    small = y <= 0.46875
    out[small] = y[small] * _ratio(_R1, y[small] * y[small])
    middle = (y > 0.46875) & (y <= 4.0)
    ym = y[middle]
    out[middle] = 1 - _exp_minus_square(ym) * _ratio(_R2, ym)
    large = y > 4.0
    yl = y[large]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # y = inf: erfc is 0
        z = 1 / (yl * yl)
        tail = _exp_minus_square(yl) * (_INV_SQRT_PI - z * _ratio(_R3, z)) / yl
    out[large] = 1 - np.where(np.isfinite(yl), tail, 0)
    return np.copysign(out, x)
