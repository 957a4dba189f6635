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
from . import scalar
from .elementwise import _float, _sigmoid, _zeros


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
    1 or negative_slope. Its derivative in x is 0: a second backward gives x zeros (not None)."""

    node_name = "LeakyReluBackwardBackward0"
    kernel = staticmethod(
        lambda grad, input, negative_slope=0.01: scalar.where(
            input > 0, grad, grad * negative_slope
        )
    )

    @staticmethod
    def forward(ctx, grad, input, negative_slope):
        ctx.save_for_backward(input)
        ctx.negative_slope = negative_slope
        g = grad._data
        return np.where(input._data > 0, g, g * negative_slope).astype(g.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad2):
        (input,) = ctx.saved_tensors
        d_grad = LeakyReluGrad.apply(grad2, input, negative_slope=ctx.negative_slope)
        return d_grad, _zeros(input.shape, input)


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
        return SoftplusGrad.apply(grad, x, beta=ctx.beta, threshold=ctx.threshold)


def _softplus_slope(x, beta, threshold):
    """σ(βx), and 1 on the linear piece (numpy arrays and kernel expressions alike)."""
    return scalar.where(x * beta > threshold, 1.0, _sigmoid(x * beta))


class SoftplusGrad(Op):
    """softplus's backward as one op (PyTorch's `softplus_backward`): grad·σ(βx)."""

    node_name = "SoftplusBackwardBackward0"
    kernel = staticmethod(
        lambda grad, input, beta=1.0, threshold=20.0: grad * _softplus_slope(input, beta, threshold)
    )

    @staticmethod
    def forward(ctx, grad, input, beta, threshold):
        ctx.save_for_backward(grad, input)
        ctx.beta, ctx.threshold = beta, threshold
        g = grad._data
        return (g * _softplus_slope(_float(input._data), beta, threshold)).astype(g.dtype)

    @staticmethod
    def backward(ctx, grad2):
        grad, x = ctx.saved_tensors
        beta, threshold = ctx.beta, ctx.threshold
        d_grad = SoftplusGrad.apply(grad2, x, beta=beta, threshold=threshold)
        s = (x * beta).sigmoid()  # the slope's own slope, β·σ(1 - σ), only where βx < threshold
        # PyTorch multiplies by the mask βx < threshold (0 on the linear piece and at the threshold
        # itself) rather than choosing, so a NaN input keeps its NaN: NaN · 0 is NaN
        smooth_piece = x * beta < threshold  # (a bool tensor: times it, 0 or 1)
        d_x = (grad2 * grad) * (1 - s) * s * smooth_piece * beta
        return d_grad, d_x


class Elu(Op):
    """x where x >= 0, else alpha·(e^x - 1)."""

    node_name = "EluBackward0"
    saved_names = ("self",)
    kernel = staticmethod(
        lambda input, alpha=1.0: scalar.where(input < 0, alpha * scalar.expm1(input), input)
    )
    derivative = "d elu(x)/dx = 1 where x > 0, else α·e^x"
    domain = "nonzero"

    @staticmethod
    def forward(ctx, input, alpha=1.0):
        ctx.save_for_backward(input)
        ctx.alpha = alpha
        x = _float(input._data)
        # as PyTorch's kernel: x itself unless x < 0, so elu(-0.0) is -0.0 whatever α is (expm1
        # of the negative part only: no overflow warning from the branch not taken)
        negative_part = np.where(x < 0, x, 0)
        return np.where(x < 0, alpha * np.expm1(negative_part), x).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return EluGrad.apply(grad, x, alpha=ctx.alpha)


class EluGrad(Op):
    """elu's backward as one op (PyTorch's `elu_backward`): grad·α·e^x where x <= 0, else grad
    (so at elu(nan) = nan the gradient passes on, as in PyTorch)."""

    node_name = "EluBackwardBackward0"
    kernel = staticmethod(
        lambda grad, input, alpha=1.0: scalar.where(
            input <= 0, grad * alpha * scalar.exp(input), grad
        )
    )

    @staticmethod
    def forward(ctx, grad, input, alpha):
        ctx.save_for_backward(grad, input)
        ctx.alpha = alpha
        g, x = grad._data, input._data
        slope = np.where(x <= 0, alpha * np.exp(np.minimum(x, 0)), 1.0)
        return (g * slope).astype(g.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad2):
        grad, x = ctx.saved_tensors
        d_grad = EluGrad.apply(grad2, x, alpha=ctx.alpha)
        # α·e^x's own slope, only where x < 0 (PyTorch's second derivative is 0 at x = 0).
        # PyTorch multiplies by the mask x < 0 rather than choosing, so an infinite or nan
        # grad2·grad on the linear piece gives nan there (inf · 0), as PyTorch's does
        d_x = EluGrad.apply(grad2 * grad, x, alpha=ctx.alpha) * (x < 0)
        return d_grad, d_x
