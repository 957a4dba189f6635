"""Every operation of the engine, one small Function each, grouped by kind.

    elementwise.py  arithmetic, math functions, comparisons
    compound.py     addcmul, addcdiv, lerp (one node each, as in PyTorch)
    reduction.py    sum, mean, max, var, logsumexp, softmax, ...
    shape.py        reshape, transpose, cat, split, indexing, ...
    linalg.py       matmul, mm, bmm, dot, outer
    nn.py, loss.py  linear, gelu and the losses behind autograd_lab.nn.functional

`table.py` lists the differentiable ones with the inputs to test them on; the tests are generated
from it.
"""

from .compound import addcdiv, addcmul, lerp  # noqa: F401
from .elementwise import (  # noqa: F401
    abs,
    add,
    allclose,
    clamp,
    clip,
    clone,
    copy_from,
    cos,
    div,
    divide,
    eq,
    equal,
    exp,
    expm1,
    ge,
    greater,
    greater_equal,
    gt,
    isclose,
    isfinite,
    isnan,
    le,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mul,
    multiply,
    ne,
    neg,
    negative,
    pow,
    reciprocal,
    relu,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    sub,
    subtract,
    tanh,
    to_dtype,
    true_divide,
    where,
)
from .linalg import bmm, dot, ger, matmul, mm, mv, outer  # noqa: F401
from .reduction import (  # noqa: F401
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    log_softmax,
    logsumexp,
    max,
    mean,
    min,
    prod,
    softmax,
    std,
    sum,
    var,
)
from .shape import (  # noqa: F401
    broadcast_to,
    cat,
    chunk,
    concat,
    concatenate,
    expand,
    expand_as,
    flatten,
    index,
    index_put,
    narrow,
    permute,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    transpose,
    unbind,
    unsqueeze,
    view,
)

# Functions that are also Tensor methods (x.exp() is exp(x)); tensor.py binds them.
TENSOR_METHODS = (
    "add sub mul div neg pow square exp log log1p expm1 sqrt sin cos tanh sigmoid relu abs "
    "reciprocal clamp clip maximum minimum sign eq ne lt le gt ge logical_not logical_and "
    "logical_or isnan isfinite equal allclose isclose sum mean prod var std max min amax amin "
    "argmax argmin logsumexp softmax log_softmax reshape view flatten transpose swapaxes permute "
    "squeeze unsqueeze expand expand_as broadcast_to split chunk unbind narrow matmul mm mv bmm "
    "dot outer multiply subtract divide negative true_divide addcmul addcdiv lerp"
).split()

# Loaded here and unbound: `from .ops import *` in autograd_lab/__init__.py copies every submodule
# bound in this namespace, and `ops.nn` would take the place of the `autograd_lab.nn` package.
from . import loss, nn  # noqa: E402

del loss, nn
