"""`out=`: write an op's result into a tensor the caller already has, as PyTorch's functions do.

    >>> total = autograd_lab.empty(3)
    >>> autograd_lab.cumsum(autograd_lab.tensor([1.0, 2.0, 3.0]), 0, out=total)
    tensor([1., 3., 6.])

The op computes its result as usual; then the values are copied into `out`, which is returned.
PyTorch's rules, checked here once for every function that takes `out=` (ops/registry.py adds
the keyword to the record functions, and to the hand-written ones marked `@public(..., out=True)`):

- autograd does not flow through out=: refused while a gradient is being recorded;
- `out` must have the result's dtype (we do not guess a conversion);
- an `out` of another shape is resized, with PyTorch's warning unless it was empty.
"""

import warnings

import numpy as np

from ..autograd.grad_mode import _state
from ..tensor import Tensor


def write_into(out, result, name):
    """Copy `result` (a tensor) into the tensor `out` and return `out`."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be a Tensor, not {type(out).__name__}")
    if _state.enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad. Fix: leave out out= "
            "(y = op(x)), or compute inside `with torch.no_grad():`"
        )
    if out.device != result.device:
        raise RuntimeError(
            f"{name}(): out= is on {out.device} but the result is on {result.device}. Fix: make "
            "out on the device of the inputs"
        )
    if out.dtype != result.dtype:
        raise RuntimeError(
            f"{name}(): Found dtype {out.dtype} but expected {result.dtype}: out= must have the "
            f"dtype of the result. Fix: make out with dtype={result.dtype}, or convert afterwards"
        )
    if out._data.shape != result._data.shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(result._data.shape)}.",
                UserWarning,
                stacklevel=3,
            )
        out._data = np.empty_like(result._data)  # a new storage of the result's shape
    out._data[...] = result._data
    out._shared_version_counter()[0] += 1  # as for any in-place change: saved copies notice
    return out
