"""Every operation of the engine, one record each, grouped by kind.

    elementwise.py  arithmetic, math functions, comparisons
    compound.py     addcmul, addcdiv, lerp (one node each, as in PyTorch)
    division.py     //, %, floor_divide, remainder, fmod, div(rounding_mode=): rounded quotients
    reduction.py    sum, mean, max, var, logsumexp, softmax, ...
    scan.py         cumsum, cumprod (running totals along one dimension), diff
    nonfinite.py    isinf, isposinf, isneginf, nan_to_num
    rounding.py     ceil, floor, round, trunc, frac, rsqrt
    norms.py        norm, and the vector norm behind autograd_lab.linalg
    counting.py     histc, histogram, bincount, count_nonzero (not differentiable)
    statistics.py   var_mean, std_mean (two results, one node)
    shape.py        reshape, transpose, cat, split, indexing, ...
    views.py        as_strided: a view is (size, stride, storage offset); CopySlices
    indexing.py     gather, scatter, index_select, masked_fill: picking by an index tensor
    rearrange.py    tril, flip, roll, repeat, diagonal, trace, meshgrid: elements moved
    sorting.py      sort, argsort, topk, unique
    random_fills.py the nodes of x.uniform_(), bernoulli(p), ...: random values, zero gradient
    inplace_shape.py  x.unsqueeze_(0), x.t_(), ...: x itself takes the new shape
    overlap.py      when an in-place write is refused: one memory place seen twice
    linalg.py       matmul, mm, bmm, dot, outer
    nn.py, loss.py  linear, gelu and the losses behind autograd_lab.nn.functional
    embedding.py, normalization.py   the look-up table and layer/batch norm of nn layers
    windows.py, conv.py, pooling.py  sliding windows (im2col), convolution, max/avg pooling
    activation.py   leaky_relu, silu, softplus, elu         padding.py  F.pad's constant border
    scalar.py       what an elementwise op computes for one element (its `kernel`)

An op's record is its class (autograd/function.py's `Op` lists what a record may say) and, where
one function chooses among classes, that function marked `@public`. Everything that lists ops is
derived from the records by registry.py: the functions exported here (and by autograd_lab), the
Tensor methods, the fusion compiler's rules, the viewer's derivative texts, and the op table
(table.py) the tests are generated from.
"""

from . import (  # noqa: F401 - the records
    activation,
    compound,
    conv,
    counting,
    division,
    elementwise,
    embedding,
    indexing,
    inplace_shape,
    linalg,
    loss,
    nn,
    nonfinite,
    normalization,
    norms,
    padding,
    pooling,
    random_fills,
    rearrange,
    reduction,
    rounding,
    scan,
    shape,
    sorting,
    statistics,
    views,
)
from .registry import functions as _functions

globals().update(_functions())  # tan, exp, add, ...: autograd_lab.ops.tan is autograd_lab.tan
__all__ = sorted(_functions())

# `from .ops import *` in autograd_lab/__init__.py copies __all__ only: `ops.nn` (the Functions
# behind nn.functional) cannot take the place of the `autograd_lab.nn` package.
