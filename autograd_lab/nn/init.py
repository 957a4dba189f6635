"""Weight initialisation, as in `torch.nn.init`: fill a tensor in place with well-scaled values.

    >>> import autograd_lab as ag
    >>> w = ag.empty(3, 4)
    >>> _ = ag.nn.init.kaiming_uniform_(w, nonlinearity="relu")  # U(-b, b), b = sqrt(2) * sqrt(3/4)
    >>> bool((w.abs() <= 1.5 ** 0.5).all())
    True

Why the scale matters: a layer with `fan_in` inputs sums fan_in products, so weights of a fixed
size make activations grow (or shrink) layer after layer. Xavier/Glorot keeps the variance
steady through linear/tanh layers, Kaiming/He through ReLU layers; `calculate_gain` is the
correction factor for each nonlinearity.

Every function writes into the tensor under no_grad (initialisation is not part of any graph) and
draws from autograd_lab's generator, which makes PyTorch's CPU numbers: after `ag.manual_seed(0)`,
`nn.Linear(784, 512)` holds the same weights as PyTorch's after `torch.manual_seed(0)`.
"""

import math
import warnings

import numpy as np

from .. import random, types
from ..autograd.grad_mode import no_grad
from ..creation import zeros_like
from ..ops import where
from ..tensor import _make

_GAINS = {"linear": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}
_LINEAR_LIKE = (
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity, param=None):
    """The recommended scale factor for weights feeding `nonlinearity` (e.g. 'relu' -> sqrt(2))."""
    if nonlinearity in _LINEAR_LIKE:
        return 1.0
    if nonlinearity in _GAINS:
        return _GAINS[nonlinearity]
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    known = ", ".join(["linear", "sigmoid", "tanh", "relu", "leaky_relu", "selu", "conv1d", "..."])
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}. Fix: use one of {known}")


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight: inputs and outputs per unit, times the kernel size if any.

    Linear weights are (out_features, in_features); conv weights (out, in, *kernel).
    """
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(this one has shape {list(tensor.shape)}). Fix: initialise 1-d tensors such as "
            "biases with uniform_, normal_ or zeros_ instead."
        )
    receptive_field = math.prod(tensor.shape[2:])  # 1 for a Linear weight
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor, values):
    """Write the float64 numpy `values` into `tensor` in place (cast to its dtype, on its device)."""
    with no_grad():
        tensor.copy_(_make(values).to(tensor.device))
    return tensor


# ---- plain distributions ---------------------------------------------------------------------


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with values drawn uniformly from [a, b) (PyTorch: tensor.uniform_(a, b))."""
    with no_grad():
        return random.uniform_(tensor, a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with values drawn from the normal distribution N(mean, std²)."""
    with no_grad():
        return random.normal_(tensor, mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std²) values restricted to [a, b] (a and b are absolute values, not
    multiples of std), drawn as PyTorch draws them, so the same seed gives the same values."""

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    kept = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
    with no_grad():
        if kept > 0.3:
            # Most normals land in [a, b]: draw normals, and redraw (the whole tensor, keeping
            # only what is needed) until none is outside.
            low, high = _as_dtype(tensor, a), _as_dtype(tensor, b)
            result = random.normal_(tensor, mean, std, generator=generator)
            while True:
                outside = (result < low) | (result > high)
                if not bool(outside.any()):
                    break
                fresh = random.normal_(zeros_like(result), mean, std, generator=generator)
                result = where(outside, fresh, result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        # A narrow window: draw uniformly in [a, b] and accept a candidate x with probability
        # pdf(x) / pdf(peak), i.e. when log(u) <= log_pdf(x) - log_pdf(peak).
        peak = max(a, min(mean, b))
        log_peak = -0.5 * ((peak - mean) / std) ** 2
        candidates = zeros_like(tensor)
        accept = zeros_like(tensor)
        random.uniform_(tensor, a, b, generator=generator)
        candidates.copy_(tensor)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = random.uniform_(accept, generator=generator).log_().gt(candidates)
        result = tensor
        while bool(pending.any()):
            random.uniform_(candidates, a, b, generator=generator)
            result = where(pending, candidates, result)
            candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            rejected = random.uniform_(accept, generator=generator).log_().gt(candidates)
            pending = where(pending, rejected, pending)
        if result is not tensor:
            tensor.copy_(result)
        return tensor


def _as_dtype(tensor, value):
    """`value` rounded to the tensor's dtype (a bound compared with the tensor's values)."""
    return float(np.array(value, dtype=types.to_dtype(tensor.dtype).numpy))


def constant_(tensor, val):
    """Fill with the value `val`."""
    return _fill(tensor, np.full(tuple(tensor.shape), val, dtype=np.float64))


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


# ---- scaled by the fans: Xavier/Glorot and Kaiming/He --------------------------------------------


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-bound, bound) with bound = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))  # a uniform's std is bound / sqrt(3)
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std²) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015).

    `a` is the negative slope of a leaky ReLU; `mode='fan_out'` keeps the backward pass steady
    instead of the forward one. nn.Linear uses this with a=sqrt(5) for its default weights.
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std²) with std = gain / sqrt(fan) (He et al., 2015)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)
