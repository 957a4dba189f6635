"""The Function behind `nn.Embedding` and `F.embedding`: a lookup table of rows.

An embedding is indexing: row `i` of the weight is the vector of token `i`, so

    out = weight[indices]          grad_weight = zeros, then grad added into row indices[k]

A token that appears twice gets its gradient twice (`np.add.at` adds once per occurrence). The
row `padding_idx` gets no gradient: it stays what it is (usually zeros) while the rest trains.

NB: in PyTorch the backward is `embedding_dense_backward`; its node shows as EmbeddingBackward0
with the weight as its only input (the indices are integers: no gradient flows to them).
"""

import numpy as np

from ..autograd.function import Op
from ..tensor import _make
from .elementwise import where


def _row_scale(indices, num_weights, scale_grad_by_freq):
    """How much of the gradient each looked-up position passes on to its row (numpy, or None
    when every position passes all of it): 1/count with scale_grad_by_freq."""
    if not scale_grad_by_freq:
        return None
    counts = np.bincount(indices.ravel(), minlength=num_weights)  # a frequent token should not
    return 1.0 / counts[indices]  # dominate: divide by how often it came


def _kept(indices, padding_idx):
    """Per looked-up position (with a trailing 1 for the embedding dim): is it not padding_idx?
    Padding positions pass nothing on: selected away (not multiplied by 0, which would turn an
    infinite gradient into nan), as PyTorch skips them. None when there is no padding_idx."""
    return None if padding_idx is None else (indices != padding_idx)[..., None]


class Embedding(Op):
    """weight[indices]: one row of the (num_embeddings, embedding_dim) weight per index."""

    node_name = "EmbeddingBackward0"
    saved_names = ("indices",)
    derivative = "the gradient is added into the looked-up rows (none to padding_idx)"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx=None, scale_grad_by_freq=False):
        ctx.indices, ctx.num_weights = indices, weight._data.shape[0]
        ctx.padding_idx, ctx.scale_grad_by_freq = padding_idx, scale_grad_by_freq
        return weight._data[indices]

    @staticmethod
    def backward(ctx, grad):
        return EmbeddingGrad.apply(
            grad,
            indices=ctx.indices,
            num_weights=ctx.num_weights,
            padding_idx=ctx.padding_idx,
            scale_grad_by_freq=ctx.scale_grad_by_freq,
        )


class EmbeddingGrad(Op):
    """embedding's backward as one (differentiable) op: each position's gradient added into the
    row it looked up, scaled as `_row_scale` says."""

    node_name = "EmbeddingBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
        g = grad._data
        ctx.indices = indices
        ctx.scale = _row_scale(indices, num_weights, scale_grad_by_freq)
        ctx.kept = _kept(indices, padding_idx)
        if ctx.scale is not None:
            g = g * ctx.scale[..., None].astype(g.dtype)
        if ctx.kept is not None:
            g = np.where(ctx.kept, g, g.dtype.type(0))
        out = np.zeros((num_weights,) + g.shape[indices.ndim :], dtype=g.dtype)
        np.add.at(out, indices, g)
        return out

    @staticmethod
    def backward(ctx, grad2):  # the adjoint: look the rows up again, scaled the same way
        rows = Embedding.apply(grad2, indices=ctx.indices)
        if ctx.scale is not None:
            rows = rows * _make(ctx.scale[..., None].astype(grad2._data.dtype))
        if ctx.kept is not None:
            rows = where(_make(ctx.kept), rows, 0.0)
        return rows
