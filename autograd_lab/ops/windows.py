"""Sliding windows ("im2col") and their adjoint: what convolution and pooling are built from.

A 2-D convolution or pooling looks at a small window of the image at each output position.
`windows` lists them all at once, without copying: numpy's `sliding_window_view` gives a view
of shape (N, C, out_h, out_w, k_h, k_w) whose entry [n, c, i, j] is the k_h × k_w patch under
output position (i, j). Then

    convolution  = every patch times the kernel, summed     (one einsum: a matrix product)
    max pooling  = the largest entry of every patch
    avg pooling  = the mean of every patch

`add_windows_back` goes the other way: values of the shape of the patches are added back into
the image where each patch came from (overlapping patches add up). It is the adjoint of
`windows` (the transpose of the matrix "im2col" multiplies by), so it is how every gradient
with respect to an image is computed.

Geometry, per spatial dim: `stride` (step between windows), `dilation` (step between the
elements inside one window), `padding` as (before, after) pairs (added around the image).
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def pad(images, padding, value=0.0):
    """(N, C, H, W) images with `padding` ((top, bottom), (left, right)) of `value` around."""
    if not any(any(pair) for pair in padding):
        return images
    return np.pad(images, ((0, 0), (0, 0)) + tuple(padding), constant_values=value)


def span(kernel, dilation):
    """How many pixels one window covers along each dim: (k - 1)·dilation + 1."""
    return tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation))


def output_size(size, kernel, stride, padding, dilation):
    """Windows along each dim: (size + padding - span) // stride + 1 (padding: both sides)."""
    return tuple(
        (n + before + after - s) // st + 1
        for n, (before, after), s, st in zip(size, padding, span(kernel, dilation), stride)
    )


def windows(padded, kernel, stride, dilation):
    """A view (N, C, out_h, out_w, k_h, k_w) of every window of the (already padded) images."""
    view = sliding_window_view(padded, span(kernel, dilation), axis=(2, 3))
    (sh, sw), (dh, dw) = stride, dilation
    return view[:, :, ::sh, ::sw, ::dh, ::dw]  # every stride-th window, every dilation-th pixel


def add_windows_back(patches, padded_shape, stride, dilation):
    """The adjoint of `windows`: a zero (padded) image with each patch added where it came from.

    One slice assignment per kernel element: element (a, b) of all the windows lies on a grid of
    step `stride` starting at (a·dilation, b·dilation).
    """
    out = np.zeros(padded_shape, dtype=patches.dtype)
    _, _, out_h, out_w, k_h, k_w = patches.shape
    (sh, sw), (dh, dw) = stride, dilation
    for a in range(k_h):
        for b in range(k_w):
            rows = slice(a * dh, a * dh + sh * (out_h - 1) + 1, sh)
            cols = slice(b * dw, b * dw + sw * (out_w - 1) + 1, sw)
            out[:, :, rows, cols] += patches[:, :, :, :, a, b]
    return out


def crop(padded, padding):
    """The image inside `padding` (the inverse of `pad`)."""
    (top, bottom), (left, right) = padding
    return padded[:, :, top : padded.shape[2] - bottom, left : padded.shape[3] - right]


def as_images(array):
    """A 1-D signal (N, C, L) as images of height 1 (N, C, 1, L); images unchanged.
    Conv1d is conv2d over such images, so one code path serves both."""
    return array[:, :, None, :] if array.ndim == 3 else array
