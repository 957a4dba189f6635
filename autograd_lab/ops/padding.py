"""The Function behind `F.pad` (mode='constant'): a border of `value` around the last dims.

`pad` lists (before, after) amounts from the last dim backwards, as PyTorch does:
pad=(1, 2) adds 1 column on the left and 2 on the right; pad=(1, 1, 3, 0) also 3 rows on top.
A negative amount cuts elements off instead.

The backward is padding again with every amount negated: cropping off what was added (and
putting zeros back where elements were cut off), so it is its own adjoint and double backward is
free.
"""

import numpy as np

from ..autograd.function import Op
from ..layout import copy_keeping_layout, in_suggested_layout


def pairs_of(pad, ndim):
    """pad=(left, right, top, bottom, ...) as one (before, after) pair per dim of an ndim array."""
    pairs = [(0, 0)] * ndim
    for k in range(len(pad) // 2):
        pairs[ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    return pairs


class ConstantPad(Op):
    """input with `value` added around it (negative amounts crop)."""

    node_name = "ConstantPadNdBackward0"
    derivative = "the gradient, cropped back to the input's place"

    @staticmethod
    def forward(ctx, input, pad, value=0.0):
        ctx.pad = pad
        data = input._data
        pairs = pairs_of(pad, data.ndim)
        # first cut what the negative amounts remove, then add the border of the positive ones
        kept = tuple(slice(max(-b, 0), n - max(-a, 0)) for n, (b, a) in zip(data.shape, pairs))
        border = [(max(b, 0), max(a, 0)) for b, a in pairs]
        if not any(amount > 0 for amount in pad):  # only cuts: PyTorch clones what is left
            return copy_keeping_layout(data[kept])
        # a new tensor, row-major unless the input is a channels-last image batch (as in PyTorch)
        return in_suggested_layout(np.pad(data[kept], border, constant_values=value), [data])

    @staticmethod
    def backward(ctx, grad):
        return ConstantPad.apply(grad, pad=tuple(-p for p in ctx.pad))
