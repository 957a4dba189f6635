"""The Functions behind `F.layer_norm` and `F.batch_norm`: standardize, then scale and shift.

Both compute, over some dims of x,

    mean, var = x.mean(dims), x.var(dims, unbiased=False)
    x_hat = (x - mean) / sqrt(var + eps)          y = x_hat * weight + bias

layer norm over the last dims of each sample (its features), batch norm over every dim but the
channels (dim 1): each channel is standardized with the statistics of the whole batch.

The gradient flows through the statistics too (they are functions of x). With g = grad·weight:

    grad_x = (g - mean(g) - x_hat·mean(g·x_hat)) / sqrt(var + eps)      (means over `dims`)
    grad_weight = sum(grad·x_hat)        grad_bias = sum(grad)          (sums over the rest)

In evaluation, batch norm uses fixed running statistics instead: x_hat is then an affine
function of x and grad_x is simply g / sqrt(running_var + eps).

The backwards are written with Tensor ops, x_hat recomputed from x, so they can be
differentiated again (create_graph=True). NB: PyTorch's nodes are NativeLayerNormBackward0 and
NativeBatchNormBackward0; both save the mean and 1/sqrt(var + eps) instead of recomputing them.
"""

import numpy as np

from ..autograd.function import Op
from ..layout import in_suggested_layout, row_major
from ..tensor import _make


def standardized(data, dims, eps):
    """(data - mean) / sqrt(var + eps) over `dims` in numpy, with mean and 1/sqrt(var + eps).

    The mean is taken around each row's first element: a constant row then has exactly its value
    as mean, so it standardizes to exactly 0 (the output is the bias), as with PyTorch's running
    (Welford) mean; a plain mean leaves rounding there that 1/sqrt(eps) magnifies."""
    if data.size == 0:  # no element to standardize (an empty row): no statistics, no warning
        stats_shape = [1 if d in dims else size for d, size in enumerate(data.shape)]
        nothing = np.full(stats_shape, np.nan, dtype=data.dtype)
        return data.copy(), nothing, nothing
    first = tuple(slice(0, 1) if d in dims else slice(None) for d in range(data.ndim))
    shift = data[first]
    mean = shift + (data - shift).mean(axis=dims, keepdims=True)
    centered = data - mean
    var = (centered * centered).mean(axis=dims, keepdims=True)
    inverse_std = 1 / np.sqrt(var + eps)
    return centered * inverse_std, mean, inverse_std


def _scale_and_shift(x_hat, weight, bias, shape):
    """x_hat·weight + bias, the (per-feature or per-channel) parameters viewed as `shape`."""
    out = x_hat
    if weight is not None:
        out = out * weight._data.reshape(shape)
    # a missing bias is a bias of 0.0, added all the same, as PyTorch's kernels do: adding +0.0
    # turns a -0.0 (from x = -0.0 in a row of zeros) into 0.0, so 1 / y is inf, not -inf
    shift = 0.0 if bias is None else bias._data.reshape(shape)
    return out + shift


def _standardized_tensor(input, dims, eps):
    """x_hat and 1/sqrt(var + eps) in Tensor ops, so that the backward is differentiable."""
    mean = input.mean(dims, keepdim=True)
    centered = input - mean
    inverse_std = ((centered * centered).mean(dims, keepdim=True) + eps) ** -0.5
    return centered * inverse_std, inverse_std


def _grads(ctx, grad, x_hat, inverse_std, other_dims, param_shape):
    """The three gradients (input, weight, bias) where the statistics are constants (batch norm
    in evaluation; layer norm computes its input's gradient itself); see the module docstring."""
    weight = ctx.saved_tensors[1]
    needs_input, needs_weight, needs_bias = ctx.needs_input_grad[:3]
    grad_input = grad_weight = grad_bias = None
    if needs_input:
        g = grad if weight is None else grad * weight.reshape(param_shape)
        grad_input = g * inverse_std
    if needs_weight:  # summed over the dims the parameters are shared along
        grad_weight = (grad * x_hat).sum(other_dims) if other_dims else grad * x_hat
    if needs_bias:
        grad_bias = grad.sum(other_dims) if other_dims else grad
    return grad_input, grad_weight, grad_bias


class LayerNorm(Op):
    """Standardize each sample over its last `normalized_ndim` dims, then ·weight + bias."""

    node_name = "NativeLayerNormBackward0"
    saved_names = ("input", "weight")

    @staticmethod
    def forward(ctx, input, weight, bias, normalized_ndim, eps):
        data = input._data
        ctx.save_for_backward(input, weight)
        ctx.eps, ctx.ndim = eps, normalized_ndim
        dims = tuple(range(data.ndim - normalized_ndim, data.ndim))
        x_hat, _, _ = standardized(data, dims, eps)
        shape = data.shape[data.ndim - normalized_ndim :]
        out = _scale_and_shift(x_hat, weight, bias, shape).astype(data.dtype, copy=False)
        # row-major whatever input's layout (PyTorch normalizes a contiguous copy of input), as
        # stride() and the order randint_like(out, 5) fills it show
        return row_major(out)

    @staticmethod
    def backward(ctx, grad):
        input = ctx.saved_tensors[0]
        ndim = input.ndim
        dims = tuple(range(ndim - ctx.ndim, ndim))
        other_dims = tuple(range(ndim - ctx.ndim))
        x_hat, inverse_std = _standardized_tensor(input, dims, ctx.eps)
        shape = tuple(input.shape[ndim - ctx.ndim :])
        _, grad_weight, grad_bias = _grads(ctx, grad, x_hat, inverse_std, other_dims, shape)
        grad_input = None
        if ctx.needs_input_grad[0]:
            weight = ctx.saved_tensors[1]
            grad_input = _layer_norm_input_grad(input, grad, weight, inverse_std, dims)
        return grad_input, grad_weight, grad_bias


def _layer_norm_input_grad(x, grad, weight, inverse_std, dims):
    """The module docstring's grad_x, in the order PyTorch's kernel computes it (g = grad·weight,
    N elements per row): in a constant row the terms cancel and what is left is rounding, which
    another order would change (by thousands of times float32's epsilon, as 1/sqrt(eps) is big)

        ds = sum(g·x)    db = sum(g)    b = (db·mean - ds)·inverse_std³/N    c = -b·mean - db·inverse_std/N
        grad_x = inverse_std·grad·weight + b·x + c"""
    n = int(np.prod([x.shape[d] for d in dims]))
    g = grad if weight is None else grad * weight
    mean = x.mean(dims, keepdim=True)
    ds, db = (g * x).sum(dims, keepdim=True), g.sum(dims, keepdim=True)
    per_element = 1 / n if n else 0.0  # (rows with no elements: the gradient is empty anyway)
    b = (db * mean - ds) * inverse_std * inverse_std * inverse_std * per_element
    c = -b * mean - db * inverse_std * per_element
    first = inverse_std * grad if weight is None else inverse_std * grad * weight
    return first + b * x + c


def channel_shape(ndim, channels):
    """(1, C, 1, ...): a per-channel vector viewed to broadcast along dim 1 of an ndim-D input."""
    return (1, channels) + (1,) * (ndim - 2)


def _one_scale_and_shift(data, mean, inverse_std, weight, bias, shape):
    """batch norm's output as PyTorch's CPU kernel computes it. Its fast kernel, for a tensor laid
    out densely (contiguous or channels-last), folds standardizing and the parameters into one
    scale and one shift per channel,

        y = x·scale + shift      scale = weight / sqrt(var + eps)      shift = bias - mean·scale

    with a fused multiply-add (x·scale + shift rounded once; here in float64, then rounded). Other
    layouts (an expanded or transposed input) take the plain formula. The results agree up to
    rounding, except in a constant channel: the plain formula gives exactly 0, the fast kernel
    rounding noise (mean·scale is rounded, x·scale is not: about 1e-5), and so do we."""
    if not densely_laid_out(data):
        return _scale_and_shift((data - mean) * inverse_std, weight, bias, shape)
    scale = inverse_std if weight is None else inverse_std * weight._data.reshape(shape)
    # (a missing bias is 0: 0 - mean·scale, so a shift of 0 is 0.0, never -0.0)
    shift = (0 if bias is None else bias._data.reshape(shape)) - mean * scale
    return (data.astype(np.float64) * scale + shift).astype(data.dtype)


def _batch_statistics(data, dims, eps):
    """The batch's mean and 1/sqrt(var + eps) per channel, as PyTorch's CPU kernels take them: the
    squares summed in float64 around the mean, which is taken in float64 too for a densely laid
    out input, and in the input's own dtype otherwise (that path of PyTorch's calls mean())."""
    wide = data.astype(np.float64)
    mean = (wide if densely_laid_out(data) else data).mean(axis=dims, keepdims=True)
    centered = wide - mean
    sum_of_squares = (centered * centered).sum(axis=dims, keepdims=True)
    if densely_laid_out(data):
        # the fast kernel stores the sum of the squares in the input's dtype before dividing it
        # by the count: rounded to float32 (a last bit of the output), inf beyond float32's range
        # (the variance is then inf, and the channel's output 1/sqrt(inf)·(x - mean) 0)
        with np.errstate(over="ignore"):
            sum_of_squares = sum_of_squares.astype(data.dtype).astype(np.float64)
    variance = sum_of_squares / (data.size // mean.size)
    return mean, 1 / np.sqrt(variance + eps)


def densely_laid_out(data):
    """Contiguous, or channels-last (an image batch stored pixel by pixel, channels innermost)."""
    channels_last = data.ndim in (4, 5) and np.moveaxis(data, 1, -1).flags.c_contiguous
    return data.flags.c_contiguous or channels_last


class BatchNorm(Op):
    """Standardize each channel (dim 1) with the batch's statistics (`running_mean` and
    `running_var` None) or with the running ones given (numpy arrays), then ·weight + bias."""

    node_name = "NativeBatchNormBackward0"
    saved_names = ("input", "weight")

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps):
        data = input._data
        ctx.save_for_backward(input, weight)
        ctx.eps, ctx.running_mean, ctx.running_var = eps, running_mean, running_var
        shape = channel_shape(data.ndim, data.shape[1])
        if running_mean is None:  # training: the statistics of this batch
            dims = (0,) + tuple(range(2, data.ndim))
            mean, inverse_std = _batch_statistics(data, dims, eps)
        else:  # evaluation: the statistics gathered during training
            mean = running_mean.reshape(shape)
            inverse_std = 1 / np.sqrt(running_var.reshape(shape) + eps)
        mean, inverse_std = mean.astype(data.dtype), inverse_std.astype(data.dtype)
        result = _one_scale_and_shift(data, mean, inverse_std, weight, bias, shape)
        return in_suggested_layout(result, [data])

    @staticmethod
    def backward(ctx, grad):
        input = ctx.saved_tensors[0]
        dims = (0,) + tuple(range(2, input.ndim))
        shape = channel_shape(input.ndim, input.shape[1])
        if ctx.running_mean is None:
            x_hat, inverse_std = _standardized_tensor(input, dims, ctx.eps)
        else:  # fixed statistics: constants of the graph
            dtype = input._data.dtype
            mean = _make(ctx.running_mean.reshape(shape).astype(dtype))
            inverse_std = _make(
                (1 / np.sqrt(ctx.running_var + ctx.eps)).reshape(shape).astype(dtype)
            )
            x_hat = (input - mean) * inverse_std
        grad_input, grad_weight, grad_bias = _grads(ctx, grad, x_hat, inverse_std, dims, shape)
        if grad_input is None:
            pass
        elif ctx.running_mean is None:  # the mean and variance depend on x: two more terms
            weight = ctx.saved_tensors[1]
            grad_input = _batch_norm_input_grad(input, grad, weight, inverse_std, dims, shape)
        else:
            grad_input = InputKept.apply(grad_input, input)
        return grad_input, grad_weight, grad_bias


def _batch_norm_input_grad(x, grad, weight, inverse_std, dims, shape):
    """The module docstring's grad_x, in the order PyTorch's kernel computes it (N elements per
    channel). The order matters where values are near float32's limit: there (x - mean)·grad
    overflows, and PyTorch's answer is nan, where x_hat·grad (x_hat small) would hide it.

        dotp = sum((x - mean)·grad)    k = dotp·inverse_std²/N    grad_mean = sum(grad)/N
        grad_x = (grad - grad_mean - (x - mean)·k)·inverse_std·weight"""
    n = int(np.prod([x.shape[d] for d in dims]))
    per_element = 1 / n if n else 0.0  # (no elements: the gradient is empty anyway)
    centered = x - x.mean(dims, keepdim=True)
    dotp = (centered * grad).sum(dims, keepdim=True)
    k = dotp * inverse_std * inverse_std * per_element
    grad_mean = grad.sum(dims, keepdim=True) * per_element
    grad_x = (grad - grad_mean - centered * k) * inverse_std
    return grad_x if weight is None else grad_x * weight.reshape(shape)


class InputKept(Op):
    """`gradient` unchanged, recorded with an edge to `input` as well.

    In evaluation, batch norm's input gradient g / sqrt(running_var + eps) does not depend on
    the input; but PyTorch computes it with one op that takes the input
    (native_batch_norm_backward), so with create_graph=True it requires grad whenever the input
    does, and a second backward gives the input no gradient from it (None). So here."""

    node_name = "NativeBatchNormBackwardBackward0"

    @staticmethod
    def forward(ctx, gradient, input):
        return gradient._data

    @staticmethod
    def backward(ctx, grad):
        return grad, None
