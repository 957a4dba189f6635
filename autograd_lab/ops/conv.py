"""The Functions behind `F.conv1d` and `F.conv2d`.

A convolution is a matrix product in disguise. With the windows of ops/windows.py,

    out[n, o, i, j] = bias[o] + Σ_c,a,b  window[n, c, i, j, a, b] · weight[o, c, a, b]

one `np.einsum` over the channel and kernel indices. With `groups` = G the channels are split in
G groups convolved separately (each output channel sees C_in / G input channels).

Its gradients are two more products of the same three arrays (input, weight, output gradient):

    grad_input  = the output gradient times the weight, patches added back   (`conv_input_grad`)
    grad_weight = every window times the output gradient, summed             (`conv_weight_grad`)

Each of the three is linear in each of its two tensor inputs, so the derivative of each is again
made of the three: `Convolution`, `ConvInputGrad` and `ConvWeightGrad` are each other's backward,
and double backward (create_graph=True) works all the way down.

Conv1d runs as conv2d over images of height 1 (`as_images`). NB: PyTorch shows one node,
ConvolutionBackward0, and one node ConvolutionBackwardBackward0 for both gradients in a double
backward; here the two gradients are two nodes of that name.
"""

from collections import namedtuple

import numpy as np

from ..autograd.function import Op
from ..layout import is_channels_last, row_major
from . import products
from .windows import add_windows_back, as_images, crop, pad, windows

# stride, dilation: (h, w) pairs; padding: ((top, bottom), (left, right)); groups: an int
Geometry = namedtuple("Geometry", ["stride", "padding", "dilation", "groups"])


def _grouped_windows(x, kernel, geometry):
    """The windows of the padded input (N, G, C/G, out_h, out_w, k_h, k_w), by channel group."""
    patches = windows(pad(x, geometry.padding), kernel, geometry.stride, geometry.dilation)
    n, c = x.shape[:2]
    return patches.reshape((n, geometry.groups, c // geometry.groups) + patches.shape[2:])


def _sum_of_products(subscripts, a, b, sources):
    """np.einsum(subscripts, a, b). Where a product overflows float32 the way it is added shows:
    PyTorch's convolution of one sample rounds each product first (inf + -inf = nan), as its
    matrix products do (products.py), while its kernel for a batch fuses products into their sums
    as BLAS does, in an order of its own (README's Simplifications)."""
    one_sample = sources[0].shape[0] == 1
    return products.einsum(subscripts, a, b, sources=sources if one_sample else None)


def convolve(x, w, geometry):
    """numpy: (N, C_in, H, W) images ⊛ (C_out, C_in/G, k_h, k_w) kernels -> (N, C_out, h, w)."""
    g = geometry.groups
    patches = _grouped_windows(x, w.shape[2:], geometry)
    kernels = w.reshape((g, w.shape[0] // g) + w.shape[1:])
    out = _sum_of_products("ngchwab,gocab->ngohw", patches, kernels, sources=(x, w))
    return out.reshape((x.shape[0], w.shape[0]) + out.shape[3:])


def conv_input_grad(grad, w, input_shape, geometry):
    """numpy: the gradient of convolve(x, w) with respect to x (of `input_shape`)."""
    n, c_out, out_h, out_w = grad.shape
    g = geometry.groups
    grads = grad.reshape(n, g, c_out // g, out_h, out_w)
    kernels = w.reshape((g, c_out // g) + w.shape[1:])
    patches = _sum_of_products("ngohw,gocab->ngchwab", grads, kernels, sources=(grad, w))
    patches = patches.reshape((n, input_shape[1], out_h, out_w) + w.shape[2:])
    (top, bottom), (left, right) = geometry.padding
    padded_shape = (n, input_shape[1], input_shape[2] + top + bottom, input_shape[3] + left + right)
    padded = add_windows_back(patches, padded_shape, geometry.stride, geometry.dilation)
    return crop(padded, geometry.padding)


def conv_weight_grad(x, grad, weight_shape, geometry):
    """numpy: the gradient of convolve(x, w) with respect to w (of `weight_shape`)."""
    n, c_out = grad.shape[:2]
    g = geometry.groups
    patches = _grouped_windows(x, weight_shape[2:], geometry)
    grads = grad.reshape((n, g, c_out // g) + grad.shape[2:])
    out = _sum_of_products("ngchwab,ngohw->gocab", patches, grads, sources=(x, grad))
    return out.reshape(weight_shape)


def _laid_out_as_pytorch_does(out, x, w):
    """PyTorch's convolution of images gives a row-major result, unless the images or the
    kernels are channels-last (N, H, W, C in memory): then the result is channels-last too. (The
    layout shows in stride() and in what as_strided reads from a clone.)"""
    if not (is_channels_last(x) or is_channels_last(w)):
        return row_major(out)
    channels_innermost = np.transpose(out, (0, 2, 3, 1)).copy()  # (N, H, W, C), row-major
    return np.transpose(channels_innermost, (0, 3, 1, 2))  # seen as (N, C, H, W) again


def _signals_as_pytorch_images(x, w):
    """Signals (N, C, L) and their kernels as PyTorch's convolution sees them when it chooses
    the result's layout: the signals made contiguous first (a copy only where they are not),
    then both unsqueezed to images (N, C, 1, L), the new dim stepping over the whole L dim, as
    unsqueeze makes it (numpy's `None` steps 0, which would hide a channels-last layout)."""
    if not x.flags.c_contiguous:
        x = x.copy()
    return _height_one_images(x), _height_one_images(w)


def _height_one_images(array):
    n, c, length = array.shape
    step = array.strides[2]
    strides = (array.strides[0], array.strides[1], length * step, step)
    return np.lib.stride_tricks.as_strided(array, (n, c, 1, length), strides, writeable=False)


class Convolution(Op):
    """conv(input, weight) + bias over 1-D signals (N, C, L) or images (N, C, H, W)."""

    node_name = "ConvolutionBackward0"
    saved_names = ("input", "weight")
    derivative = "grad_input: the kernels slid back over grad; grad_weight: Σ windows × grad"

    @staticmethod
    def forward(ctx, input, weight, bias, geometry):
        ctx.save_for_backward(input, weight)
        ctx.geometry = geometry
        x, w = as_images(input._data), as_images(weight._data)
        out = convolve(x, w, geometry)
        if bias is not None:
            out += bias._data.reshape(1, -1, 1, 1)
        if input._data.ndim == 3:  # back to signals: (N, C, 1, L) -> (N, C, L), its layout kept
            seen = _signals_as_pytorch_images(input._data, weight._data)
            return _laid_out_as_pytorch_does(out, *seen)[:, :, 0]
        return _laid_out_as_pytorch_does(out, input._data, weight._data)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        needs_input, needs_weight, needs_bias = ctx.needs_input_grad
        grad_input = grad_weight = grad_bias = None
        if needs_input:
            grad_input = ConvInputGrad.apply(grad, weight, input, geometry=ctx.geometry)
        if needs_weight:
            grad_weight = ConvWeightGrad.apply(input, grad, weight, geometry=ctx.geometry)
        if needs_bias:  # each output channel's bias was added at every position of every sample
            grad_bias = grad.sum([0] + list(range(2, grad.ndim)))
        return grad_input, grad_weight, grad_bias


class ConvInputGrad(Op):
    """The input gradient of a convolution: linear in the output gradient and in the weight.

    It takes the input too, as PyTorch's convolution_backward does, though only the input's
    shape is used: so the gradient requires grad whenever the input does (create_graph=True),
    as in PyTorch, and a second backward gives the input no gradient from it (None). The same
    holds for ConvWeightGrad and the weight."""

    node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, weight, input, geometry):
        ctx.save_for_backward(grad, weight)
        ctx.geometry = geometry
        input_shape = input._data.shape
        shape = (input_shape[0], input_shape[1], 1, input_shape[2])
        shape = shape if len(input_shape) == 3 else input_shape
        g, w = as_images(grad._data), as_images(weight._data)
        return conv_input_grad(g, w, shape, geometry).reshape(input_shape)

    @staticmethod
    def backward(ctx, upstream):  # upstream has the input's shape
        grad, weight = ctx.saved_tensors
        needs_grad, needs_weight, _ = ctx.needs_input_grad
        d_grad = (
            Convolution.apply(upstream, weight, None, geometry=ctx.geometry) if needs_grad else None
        )
        d_weight = None
        if needs_weight:
            d_weight = ConvWeightGrad.apply(upstream, grad, weight, geometry=ctx.geometry)
        return d_grad, d_weight, None


class ConvWeightGrad(Op):
    """The weight gradient of a convolution: linear in the input and in the output gradient
    (and taking the weight for its shape: see ConvInputGrad)."""

    node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, input, grad, weight, geometry):
        ctx.save_for_backward(input, grad)
        ctx.geometry = geometry
        weight_shape = weight._data.shape
        kernel_shape = tuple(weight_shape[:2]) + (1,) + tuple(weight_shape[2:])
        kernel_shape = kernel_shape if len(weight_shape) == 3 else weight_shape
        x, g = as_images(input._data), as_images(grad._data)
        return conv_weight_grad(x, g, kernel_shape, geometry).reshape(weight_shape)

    @staticmethod
    def backward(ctx, upstream):  # upstream has the weight's shape
        input, grad = ctx.saved_tensors
        needs_input, needs_grad, _ = ctx.needs_input_grad
        d_input = None
        if needs_input:
            d_input = ConvInputGrad.apply(grad, upstream, input, geometry=ctx.geometry)
        d_grad = (
            Convolution.apply(input, upstream, None, geometry=ctx.geometry) if needs_grad else None
        )
        return d_input, d_grad, None
