"""The Functions behind the activations of `nn.functional` beyond relu, sigmoid, tanh and gelu:
leaky_relu, silu, softplus and elu (each also an nn layer, in nn/activation.py).

    leaky_relu(x) = x where x > 0, else slope·x         a small slope keeps negative units alive
    silu(x)       = x·σ(x)                              "swish": smooth, slightly negative dip
    softplus(x)   = log(1 + e^(βx)) / β                 a smooth relu (x itself where βx > threshold)
    elu(x)        = x where x > 0, else α·(e^x - 1)     smooth towards -α for very negative x

Each backward is written with Tensor ops (so it can be differentiated again); each `kernel` is
the same formula for one element, for the fusion compiler.
"""

import numpy as np

from ..autograd.function import Op
from ..tensor import _make
from . import scalar
from .elementwise import _float, _sigmoid, where


class LeakyRelu(Op):
    """x where x > 0, else negative_slope·x."""

    node_name = "LeakyReluBackward0"
    saved_names = ("self",)
    kernel = staticmethod(
        lambda input, negative_slope=0.01: scalar.where(input > 0, input, input * negative_slope)
    )
    derivative = "d leaky_relu(x)/dx = 1 where x > 0, else negative_slope"
    domain, piecewise = "nonzero", True

    @staticmethod
    def forward(ctx, input, negative_slope=0.01):
        ctx.save_for_backward(input)
        ctx.negative_slope = negative_slope
        x = input._data
        return np.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return LeakyReluGrad.apply(grad, input, negative_slope=ctx.negative_slope)


class LeakyReluGrad(Op):
    """leaky_relu's backward as one op (PyTorch's `leaky_relu_backward`): grad times the slope,
    1 or negative_slope. Its derivative in x is 0, so a second backward reaches x with zeros."""

    node_name = "LeakyReluBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, negative_slope):
        ctx.save_for_backward(input)
        ctx.negative_slope = negative_slope
        g = grad._data
        return np.where(input._data > 0, g, g * negative_slope).astype(g.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad2):
        (input,) = ctx.saved_tensors
        return LeakyReluGrad.apply(grad2, input, negative_slope=ctx.negative_slope), None


class Silu(Op):
    """x·σ(x), σ the logistic sigmoid."""

    node_name = "SiluBackward0"
    saved_names = ("self",)
    kernel = staticmethod(lambda input: input * _sigmoid(input))
    derivative = "d silu(x)/dx = σ(x)·(1 + x·(1 - σ(x)))"

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        x = _float(input._data)
        return (x * _sigmoid(x)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * s * (1 + x * (1 - s))


class Softplus(Op):
    """log(1 + e^(beta·x)) / beta, and x itself where beta·x > threshold (no overflow there)."""

    node_name = "SoftplusBackward0"
    saved_names = ("self",)
    kernel = staticmethod(
        lambda input, beta=1.0, threshold=20.0: scalar.where(
            input * beta > threshold, input, scalar.log1p(scalar.exp(input * beta)) / beta
        )
    )
    derivative = "d softplus(x)/dx = σ(βx) (1 where βx > threshold)"

    @staticmethod
    def forward(ctx, input, beta=1.0, threshold=20.0):
        ctx.save_for_backward(input)
        ctx.beta, ctx.threshold = beta, threshold
        x = _float(input._data)
        scaled = x * beta
        linear = scaled > threshold
        with np.errstate(over="ignore"):  # exp overflows only where the linear piece is used
            smooth = np.log1p(np.exp(scaled)) / beta
        return np.where(linear, x, smooth).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        scaled = x._data * ctx.beta
        # the slope σ(βx), differentiable where βx < threshold; a constant elsewhere: 1 on the
        # linear piece, and σ(threshold) exactly at it (where PyTorch's second derivative is 0)
        constant = np.where(scaled > ctx.threshold, 1.0, _sigmoid(_float(scaled)))
        constant = _make(constant.astype(x._data.dtype, copy=False))
        return grad * where(_make(scaled < ctx.threshold), (x * ctx.beta).sigmoid(), constant)


class Elu(Op):
    """x where x > 0, else alpha·(e^x - 1)."""

    node_name = "EluBackward0"
    saved_names = ("self",)
    kernel = staticmethod(
        lambda input, alpha=1.0: scalar.where(input > 0, input, alpha * (scalar.exp(input) - 1))
    )
    derivative = "d elu(x)/dx = 1 where x > 0, else α·e^x"
    domain = "nonzero"

    @staticmethod
    def forward(ctx, input, alpha=1.0):
        ctx.save_for_backward(input)
        ctx.alpha = alpha
        x = _float(input._data)
        return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # the slope α·e^x, differentiable where x < 0; a constant elsewhere: 1 for x > 0, and α
        # exactly at 0 (where PyTorch's second derivative is 0)
        constant = _make(np.where(x._data > 0, 1.0, ctx.alpha).astype(x._data.dtype))
        return grad * where(_make(x._data < 0), x.exp() * ctx.alpha, constant)
