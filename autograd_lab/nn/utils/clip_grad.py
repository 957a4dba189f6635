"""Gradient clipping: keep one bad batch from throwing the weights far away.

    >>> import autograd_lab as ag
    >>> w = ag.nn.Parameter(ag.tensor([3.0, 4.0]))
    >>> w.grad = ag.tensor([3.0, 4.0])
    >>> ag.nn.utils.clip_grad_norm_([w], max_norm=1.0)   # returns the norm before clipping
    tensor(5.)
    >>> w.grad                                           # now of norm 1 (just under)
    tensor([0.6000, 0.8000])

clip_grad_norm_ treats all gradients as one long vector: if its norm is above max_norm, every
gradient is scaled by the same factor, so the direction of the step is kept and only its length
shrinks. clip_grad_value_ clamps each element instead (the direction may change).
Call either between `loss.backward()` and `optimizer.step()`.
"""

import math

from ...autograd import no_grad
from ...creation import tensor
from ...ops.shape import stack
from ...tensor import Tensor


def _gradients(parameters):
    """The .grad of each parameter that has one (a single tensor counts as a list of one)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _vector_norm(values, norm_type):
    """The p-norm of all elements of `values`: (sum |x|^p)^(1/p); p = inf: max |x|."""
    if math.isinf(norm_type):
        return values.abs().max() if norm_type > 0 else values.abs().min()
    if norm_type == 2.0:
        return (values * values).sum().sqrt()
    if norm_type == 1.0:
        return values.abs().sum()
    return (values.abs() ** norm_type).sum() ** (1.0 / norm_type)


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of `parameters` in place so that their total norm is at most
    `max_norm`; return the total norm from before (a 0-d tensor, useful to log).

    The total norm is the norm of all gradients joined into one vector (computed as the norm of
    the per-tensor norms, which is the same number). `norm_type` may be float('inf').
    """
    grads = _gradients(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return tensor(0.0)
    norms = stack([_vector_norm(g, norm_type) for g in grads])
    total_norm = _vector_norm(norms, norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`. Fix: look for the nan or "
            "inf first (a log of 0, a division by 0, a learning rate too large)."
        )
    # the 1e-6 keeps a zero norm from dividing by zero; a factor above 1 would grow small
    # gradients, so it is capped at 1 (as in PyTorch, the gradients are multiplied either way)
    factor = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(factor.to(g.dtype))
    return total_norm


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element of `parameters` into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    for g in _gradients(parameters):
        g.clamp_(-clip_value, clip_value)
