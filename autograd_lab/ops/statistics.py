"""Two statistics at once: var_mean and std_mean return (variance or spread, mean) in one node.

Computing both in one pass is how PyTorch offers them (VarMeanBackward0, StdMeanBackward0): a
gradient may arrive for either output, and backward adds what each one contributes.

    >>> var, mean = autograd_lab.var_mean(autograd_lab.tensor([1.0, 2.0, 6.0]))
    >>> var, mean
    (tensor(7.), tensor(3.))
"""

import numpy as np

from ..autograd.function import Op
from ..tensor import _make
from .elementwise import _float, where
from .reduction import _correction, _dims, _over_dof, _unreduce
from .registry import public


class VarMean(Op):
    node_name = "VarMeanBackward0"
    derivative = "var: 2 (x_i - mean) / (n - correction);  mean: 1/n"
    saved_names = ("self", "result0")
    _spread = staticmethod(np.var)

    @staticmethod
    def forward(ctx, x, dim=None, correction=1, keepdim=False):
        data = _float(x._data)
        ctx.dims, ctx.keepdim, ctx.correction = _dims(dim, data.ndim), keepdim, correction
        with np.errstate(divide="ignore", invalid="ignore"):  # too few elements: nan, as PyTorch
            spread = _make(ctx._fn._spread(data, axis=ctx.dims, ddof=correction, keepdims=keepdim))
            mean = _make(np.mean(data, axis=ctx.dims, keepdims=keepdim))
        ctx.save_for_backward(x, spread)
        return spread, mean

    @staticmethod
    def backward(ctx, grad_spread, grad_mean):
        x, spread = ctx.saved_tensors
        shape = x._data.shape
        n = int(np.prod([shape[d] for d in ctx.dims])) if shape else 1
        if ctx._fn is StdMean:  # d std = d var / (2 std); all values equal: 0, as PyTorch takes it
            grad_spread = where(spread == 0, 0.0, grad_spread / (2 * spread))
        grad_spread = _unreduce(grad_spread, shape, ctx.dims, ctx.keepdim)
        centered = x - x.mean(dim=ctx.dims, keepdim=True)
        from_spread = grad_spread * centered * _over_dof(2.0, n, ctx.correction)
        from_mean = _unreduce(grad_mean, shape, ctx.dims, ctx.keepdim).expand(shape) / n
        return from_spread + from_mean


class StdMean(VarMean):
    node_name = "StdMeanBackward0"
    derivative = "std: (x_i - mean) / ((n - correction) std);  mean: 1/n"
    _spread = staticmethod(np.std)


@public("var_mean")
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(variance, mean) over `dim` (all dims by default), as var() and mean() give them."""
    correction = _correction(unbiased, correction)
    return VarMean.apply(input, dim=dim, correction=correction, keepdim=keepdim)


@public("std_mean")
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(standard deviation, mean) over `dim` (all dims by default), as std() and mean() give them."""
    correction = _correction(unbiased, correction)
    return StdMean.apply(input, dim=dim, correction=correction, keepdim=keepdim)
