"""The Functions behind `F.max_pool2d` and `F.avg_pool2d`: one number per window.

Max pooling keeps the largest value of each window (ops/windows.py). Where it was found is all
the backward needs: `max_pool2d_indices` finds, for every output, the flat position h·W + w of
its maximum in the input plane (PyTorch's `indices`, what return_indices=True returns), and

    forward:  out = input.flatten(2)[..., indices]          (a gather)
    backward: grad_input = zeros, grad added at indices     (a scatter; repeats add up)

a gather and a scatter, each the other's backward (double backward included).

Average pooling sums each window and divides by its `divisor` (the window's size, or how much
of it lies inside the image); its backward spreads grad / divisor back over each window
(`add_windows_back`), and these two are again each other's backward.

Both take (N, C, H, W) images or a single (C, H, W) image. Their results and gradients are new
tensors, row-major or channels-last as PyTorch suggests (`in_suggested_layout`), whatever layout
numpy's window arithmetic left them in: stride() shows it.
"""

import numpy as np

from ..autograd.function import Op
from ..layout import in_suggested_layout
from .elementwise import _zeros
from .windows import add_windows_back, crop, pad, windows


def _as_batch(array):
    """(C, H, W) -> (1, C, H, W); (N, C, H, W) unchanged."""
    return array[None] if array.ndim == 3 else array


def max_pool2d_indices(data, kernel, stride, padding, dilation):
    """For each window, the flat index (h·W + w in its input plane) of its largest element
    (the first one on ties, as PyTorch; a nan counts as the largest, so nan propagates, and of
    several nans the last one: PyTorch walks the window taking every nan it meets)."""
    images = _as_batch(data)
    height, width = images.shape[2:]
    patches = windows(pad(images, padding, -np.inf), kernel, stride, dilation)
    n, c, out_h, out_w, k_h, k_w = patches.shape
    flat = patches.reshape(n, c, out_h, out_w, k_h * k_w)
    is_nan = flat != flat
    last_nan = k_h * k_w - 1 - is_nan[..., ::-1].argmax(axis=-1)
    best = np.where(is_nan.any(axis=-1), last_nan, flat.argmax(axis=-1))
    (dh, dw), (sh, sw), ((top, _), (left, _)) = dilation, stride, padding
    rows = np.arange(out_h)[:, None] * sh + (best // k_w) * dh - top
    cols = np.arange(out_w)[None, :] * sw + (best % k_w) * dw - left
    indices = rows * width + cols
    return indices[0] if data.ndim == 3 else indices


class MaxPool2d(Op):
    """The input's values at `indices` (one per window): max pooling, once the maxima are found."""

    node_name = "MaxPool2DWithIndicesBackward0"
    saved_names = ("self",)  # and grad_fn._saved_indices, from ctx.indices (as in PyTorch)
    derivative = "the gradient goes to the maximum of each window, 0 elsewhere"

    @staticmethod
    def forward(ctx, input, indices):
        ctx.indices = indices
        ctx.save_for_backward(input)  # not for its values: MaxPool2dGrad's edge back to it
        images, where = _as_batch(input._data), _as_batch(indices)
        n, c = images.shape[:2]
        flat = images.reshape(n, c, -1)
        out = np.take_along_axis(flat, where.reshape(n, c, -1), axis=2).reshape(where.shape)
        return in_suggested_layout(out[0] if input._data.ndim == 3 else out, [input._data])

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return MaxPool2dGrad.apply(grad, input, indices=ctx.indices)


class MaxPool2dGrad(Op):
    """max pooling's backward: `grad` added into a zero input at the maxima's positions. It
    takes the input too, as PyTorch's max_pool2d_with_indices_backward does: the result does not
    depend on it (derivative 0), but a second backward must reach the input with zeros."""

    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, indices):
        input_shape = input._data.shape
        ctx.indices, ctx.input_shape = indices, input_shape
        g, where = _as_batch(grad._data), _as_batch(indices)
        n, c = g.shape[:2]
        out = np.zeros((n, c, int(np.prod(input_shape[-2:]))), dtype=g.dtype)
        batch = np.arange(n)[:, None, None, None]
        channel = np.arange(c)[None, :, None, None]
        np.add.at(out, (batch, channel, where), g)  # overlapping windows may share a maximum
        return in_suggested_layout(out.reshape(input_shape), [input._data])

    @staticmethod
    def backward(ctx, grad2):
        return MaxPool2d.apply(grad2, indices=ctx.indices), _zeros(ctx.input_shape, grad2)


class AvgPool2d(Op):
    """The sum of each window of the zero-padded input, divided by `divisor` (a number, or one
    per output position)."""

    node_name = "AvgPool2DBackward0"
    saved_names = ("self",)
    derivative = "each window's elements get grad / divisor"

    @staticmethod
    def forward(ctx, input, kernel, stride, padding, divisor):
        ctx.geometry = (kernel, stride, padding, divisor)
        ctx.save_for_backward(input)  # not for its values: AvgPool2dGrad's edge back to it
        images = _as_batch(input._data)
        patches = windows(pad(images, padding), kernel, stride, (1, 1))
        out = (patches.sum(axis=(-2, -1)) / divisor).astype(images.dtype, copy=False)
        return in_suggested_layout(out[0] if input._data.ndim == 3 else out, [input._data])

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return AvgPool2dGrad.apply(grad, input, geometry=ctx.geometry)


class AvgPool2dGrad(Op):
    """average pooling's backward: grad / divisor spread over each window, added back. It takes
    the input too, as PyTorch's avg_pool2d_backward does (see MaxPool2dGrad)."""

    node_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, geometry):
        input_shape = input._data.shape
        ctx.geometry, ctx.input_shape = geometry, input_shape
        kernel, stride, padding, divisor = geometry
        g = _as_batch(grad._data)
        shares = (g / divisor).astype(g.dtype, copy=False)
        patches = np.broadcast_to(shares[..., None, None], shares.shape + tuple(kernel))
        (top, bottom), (left, right) = padding
        n, c = g.shape[:2]
        padded_shape = (n, c, input_shape[-2] + top + bottom, input_shape[-1] + left + right)
        padded = add_windows_back(patches, padded_shape, stride, (1, 1))
        return in_suggested_layout(crop(padded, padding).reshape(input_shape), [input._data])

    @staticmethod
    def backward(ctx, grad2):
        kernel, stride, padding, divisor = ctx.geometry
        grad_grad = AvgPool2d.apply(
            grad2, kernel=kernel, stride=stride, padding=padding, divisor=divisor
        )
        return grad_grad, _zeros(ctx.input_shape, grad2)
