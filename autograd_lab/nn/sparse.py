"""Embedding: a learnable lookup table, the first layer of every language model.

    >>> import autograd_lab as ag
    >>> _ = ag.manual_seed(0)
    >>> emb = ag.nn.Embedding(27, 10)   # 27 tokens (say 'a'..'z' and '.'), 10 numbers each
    >>> emb
    Embedding(27, 10)
    >>> emb(ag.tensor([[1, 2, 3]])).shape    # one 10-vector per token
    autograd_lab.Size([1, 3, 10])

Indexing the weight with token numbers is the same as multiplying one-hot rows by it
(`F.one_hot(idx, 27).float() @ emb.weight`), only without building the one-hot rows.
The weight starts as draws from N(0, 1), from the same random stream as PyTorch's.
"""

from ..creation import empty
from . import _checks, init
from . import functional as F
from .module import Module
from .parameter import Parameter


class Embedding(Module):
    """A table of num_embeddings rows of embedding_dim numbers; `emb(idx)` is `weight[idx]`.

    `padding_idx`: that row starts at zero and gets no gradient (a "no token here" filler).
    `max_norm`: rows looked up are scaled down, in place, to at most this norm.
    `scale_grad_by_freq`: each row's gradient is divided by how often its token came up.
    """

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
        _weight=None,
        _freeze=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _checks.padding_index(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            weight = empty(num_embeddings, embedding_dim, device=device, dtype=dtype)
            self.weight = Parameter(weight, requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    f"Shape of weight does not match num_embeddings and embedding_dim: got "
                    f"{list(_weight.shape)}, expected {[num_embeddings, embedding_dim]}."
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        """Draw fresh weights from N(0, 1); the padding row becomes zeros."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            init.zeros_(self.weight[self.padding_idx])

    def forward(self, input):
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse:
            text += ", sparse=True"
        return text

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=True,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
    ):
        """An Embedding whose weight is `embeddings` (2-D), frozen unless freeze=False."""
        if embeddings.ndim != 2:
            raise AssertionError(
                f"Embeddings parameter is expected to be 2-dimensional, got shape "
                f"{list(embeddings.shape)}. Fix: one row per token, (num_embeddings, dim)."
            )
        rows, cols = embeddings.shape
        return cls(
            rows,
            cols,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
            _weight=embeddings,
            _freeze=freeze,
        )
