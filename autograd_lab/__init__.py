"""autograd_lab: a small, readable, PyTorch-compatible autograd engine for learning.

    import autograd_lab as torch   # a simple PyTorch script runs unchanged and prints the same numbers

Where things live: `tensor.py` (the Tensor), `autograd/` (nodes, the backward engine, grad modes,
gradcheck), `ops/` (every operation as a small Function), `creation.py` (tensor(), zeros(), ...).
"""

import math as _math

from . import (  # noqa: F401
    autograd,
    backends,
    cuda,
    data,
    linalg,
    nn,
    ops,
    optim,
    profiler,
    types,
    utils,
)
from ._format import set_printoptions  # noqa: F401 - get_printoptions, printoptions: in _format
from .as_torch import as_torch  # noqa: F401 - `autograd_lab.as_torch()`: `import torch` gives us
from .autograd import (  # noqa: F401
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from .creation import (  # noqa: F401
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from .describe import is_complex, is_floating_point, is_tensor, numel  # noqa: F401, E402
from .limits import finfo, iinfo  # noqa: F401
from .ops import *  # noqa: F403 - every op is also a top-level function, as in PyTorch
from .ops import abs, all, any, max, min, pow, sum  # noqa: F401
from .promotion import can_cast, promote_types, result_type  # noqa: F401
from .random import (  # noqa: F401 - autograd_lab.random is torch.random (it binds x.normal_() & co)
    Generator,
    bernoulli,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)
from .serialization import load, save  # noqa: F401 - torch.save / torch.load
from .tensor import Tensor  # noqa: F401
from .threads import get_num_threads, set_num_threads  # noqa: F401
from .types import (  # noqa: F401
    Size,
    bfloat16,
    complex32,
    complex64,
    complex128,
    device,
    dtype,
    float16,
    float32,
    float64,
    get_default_device,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    set_default_device,
    set_default_dtype,
    set_default_tensor_type,
    uint8,
)
from .viz import record  # noqa: F401 - `with autograd_lab.record() as r: ...`: see a graph

__version__ = "0.1.0"


def show(*roots, names=None, static=False, max_nodes=None):
    """Draw the graph behind tensors: the live widget in a notebook (`static=True`: an SVG).

    The plain-function twin of the `%autograd` magic; see autograd_lab.magic.show.
    """
    from .magic import show as _show  # IPython is only needed once something is shown

    return _show(*roots, names=names, static=static, max_nodes=max_nodes)


def load_ipython_extension(ipython):
    """`%load_ext autograd_lab` registers the %autograd and %%autograd magics."""
    from .magic import load_ipython_extension as _load

    _load(ipython)


# PyTorch's aliases for dtypes. Assigned last: `float`, `int`, `bool` shadow builtins in this module.
half, double, long, short = float16, float64, int64, int16
float, int, bool = float32, int32, types.bool_
cfloat, cdouble, chalf = complex64, complex128, complex32  # named, but numpy cannot store them
pi, e, inf, nan, newaxis = _math.pi, _math.e, _math.inf, _math.nan, None  # torch.pi & co
# Last: `compile` shadows the builtin in this module, as torch.compile does in torch.
from .compile.api import compile  # noqa: E402, F401, A001
