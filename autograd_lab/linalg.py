"""autograd_lab.linalg is torch.linalg: norms of vectors and matrices.

    >>> A = autograd_lab.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> autograd_lab.linalg.vector_norm(A)              # every entry as one vector: sqrt(30)
    tensor(5.4772)
    >>> autograd_lab.linalg.matrix_norm(A, ord=1)       # the largest column sum of |A|
    tensor(6.)

A vector norm is one record (ops/norms.py, LinalgVectorNormBackward0). The matrix norms are
built from it and from other ops, as PyTorch builds them, so their nodes are PyTorch's too:
'fro' is the 2-norm of all entries; ord=1 is the largest column sum of |A| (AmaxBackward0), inf
the largest row sum, -1 and -inf the smallest. ord=2, -2 and 'nuc' need the singular values (an
SVD), which autograd_lab does not compute: they raise NotImplementedError saying so.
"""

import math

from .ops.norms import _needs_svd
from .ops.norms import vector_norm as _vector_norm
from .ops.out import write_into

__all__ = ["matrix_norm", "norm", "vector_norm"]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ord-norm of the entries over `dim` (all by default): 2, 1, inf, -inf, 0 (a count), or
    any other number p: (sum |x_i|^p)^(1/p)."""
    if out is not None:
        return write_into(out, vector_norm(x, ord, dim, keepdim, dtype=dtype), "linalg.vector_norm")
    return _vector_norm(x, ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The ord-norm of the matrices of A (its last two dims, or `dim`): 'fro', 1, -1, inf, -inf."""
    if out is not None:
        return write_into(out, matrix_norm(A, ord, dim, keepdim, dtype=dtype), "linalg.matrix_norm")
    if A.ndim < 2:
        raise RuntimeError(
            f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions, got "
            f"{A.ndim}. Fix: for a vector use torch.linalg.vector_norm"
        )
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    rows, columns = (d % A.ndim if -A.ndim <= d < A.ndim else d for d in dim)
    if rows == columns:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got {tuple(dim)}")
    if ord == "fro":
        return vector_norm(A, 2, (rows, columns), keepdim, dtype=dtype)
    if ord == "nuc" or ord in (2, -2):
        raise NotImplementedError(_needs_svd(f"linalg.matrix_norm(ord={ord!r})"))
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(
            f"linalg.matrix_norm: Order {ord} not supported. Fix: use 'fro', 1, -1, inf or -inf"
        )
    if dtype is not None:
        A = A.to(dtype)
    # ord 1: sum |A| down each column (over the rows), then the largest; inf: along each row
    summed, compared = (rows, columns) if abs(ord) == 1 else (columns, rows)
    sums = A.abs().sum(dim=summed, keepdim=keepdim)
    if not keepdim and summed < compared:
        compared -= 1  # the summed dim is gone: the dims after it moved down by one
    return sums.amax(compared, keepdim) if ord > 0 else sums.amin(compared, keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """torch.linalg.norm: a vector norm or a matrix norm, chosen as PyTorch chooses.

    ord=None: the 2-norm of all entries (dim=None) or over `dim` ('fro' for two dims). A string
    ord, or a `dim` of two dims, asks for a matrix norm; one dim, a vector norm. With an `ord`
    but no `dim`, A must be 1-D (a vector norm) or 2-D (a matrix norm)."""
    if out is not None:
        return write_into(out, norm(A, ord, dim, keepdim, dtype=dtype), "linalg.norm")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}"
        )
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(
                "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                f"Got {A.ndim}D. Fix: pass dim= (one dim for a vector norm, two for a matrix norm)"
            )
        dim = tuple(range(A.ndim))
    if isinstance(ord, str) or len(dim) == 2:
        if len(dim) != 2:
            raise RuntimeError(f"linalg.norm: a matrix norm ord={ord!r} needs two dims, got {dim}")
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)
