"""Stateless neural-network functions, as in `torch.nn.functional` (usually imported as F).

    >>> import autograd_lab as ag
    >>> import autograd_lab.nn.functional as F
    >>> logits = ag.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, ag.tensor([0]))
    >>> loss
    tensor(0.2413, grad_fn=<NllLossBackward0>)
    >>> loss.grad_fn.next_functions[0][0]  # recorded as in PyTorch: log_softmax, then nll_loss
    <LogSoftmaxBackward0 object at 0x...>

The activations are the engine's ops; linear and gelu are Functions of ops/nn.py, the losses of
ops/loss.py. This module checks the arguments: PyTorch's exception classes, messages with a fix.
"""

import warnings

import numpy as np

from .. import random
from ..ops import relu as _relu
from ..ops import sigmoid, tanh
from ..ops.elementwise import check_broadcastable, mul, where
from ..ops.loss import (
    BinaryCrossEntropy,
    BinaryCrossEntropyWithLogits,
    DivScalar,
    MseLoss,
    MulScalar,
    NllLoss,
    NllLoss2d,
    NllPlan,
)
from ..ops.nn import Addmm, Gelu, LinearMm, SqueezeDims, UnsafeView
from ..ops.reduction import log_softmax as _log_softmax
from ..ops.reduction import softmax as _softmax
from ..ops.shape import View, expand, unsqueeze
from ..tensor import _make
from . import _checks

__all__ = [
    "relu",
    "sigmoid",
    "tanh",
    "gelu",
    "softmax",
    "log_softmax",
    "linear",
    "dropout",
    "mse_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "nll_loss",
    "cross_entropy",
]

# ---- activations ------------------------------------------------------------------------------------


def relu(input, inplace=False):
    """max(input, 0). `inplace=True` overwrites input (not allowed on a leaf that requires grad)."""
    return input._inplace(_relu) if inplace else _relu(input)


def gelu(input, *, approximate="none"):
    """x·Φ(x) with Φ the normal CDF (`approximate="tanh"`: 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))))."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(
            f"approximate argument must be either none or tanh, got {approximate!r}. Fix: leave "
            "it out for the exact GELU, or pass approximate='tanh'."
        )
    return Gelu.apply(input, approximate=approximate)


def _implicit_dim(name, ndim, stacklevel):
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1  # PyTorch's old guess: the batch dim comes first


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / exp(x).sum(dim): each slice along `dim` becomes probabilities that sum to 1."""
    dim = _implicit_dim("softmax", input.ndim, _stacklevel) if dim is None else dim
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x, dim)), computed without forming softmax (stable for large scores)."""
    dim = _implicit_dim("log_softmax", input.ndim, _stacklevel) if dim is None else dim
    return _log_softmax(input, dim, dtype=dtype)


# ---- linear and dropout -----------------------------------------------------------------------------


def linear(input, weight, bias=None):
    """input @ weight.T + bias, weight of shape [out_features, in_features].

    >>> import autograd_lab as ag
    >>> x, w = ag.ones(2, 3, requires_grad=True), ag.ones(4, 3, requires_grad=True)
    >>> linear(x, w, ag.zeros(4, requires_grad=True)).grad_fn  # one node, as in PyTorch
    <AddmmBackward0 object at 0x...>
    """
    _checks.check_tensors("linear", input=input, weight=weight)
    if input._data.ndim == 2 and weight._data.ndim == 2:  # the common case, kept short
        if bias is None:
            return LinearMm.apply(input, weight)
        _check_bias(bias, weight)
        if not _adds_to_rows(bias, input._data.shape[0], weight._data.shape[0]):
            raise RuntimeError(
                f"linear(): a bias of shape {list(bias.shape)} cannot be added to the output of "
                f"shape {[input.shape[0], weight.shape[0]]}. Fix: give a bias of shape "
                f"[out_features] = [{weight.shape[0]}]."
            )
        return Addmm.apply(bias, input, weight)
    return _linear_any_rank(input, weight, bias)


def _check_bias(bias, weight):
    _checks.check_tensors("linear", bias=bias)
    if bias._data.dtype != weight._data.dtype:
        raise RuntimeError(
            f"linear(): bias is {bias.dtype} but weight is {weight.dtype}; they must have the same "
            "dtype. Fix: convert one, e.g. bias.to(weight.dtype)."
        )


def _adds_to_rows(bias, rows, out_features):
    """Whether `bias` broadcasts to the (rows, out_features) output of one matrix product."""
    shape = bias._data.shape
    if shape == (out_features,):
        return True
    return len(shape) <= 2 and all(s in (1, n) for s, n in zip(shape[::-1], (out_features, rows)))


def _linear_any_rank(input, weight, bias):
    """Other ranks, recorded as PyTorch records them: the batch dims folded into one (a view)
    around the 2-D product when the bias is a vector, else the product followed by `+ bias`."""
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(
            f"both arguments to linear need to be at least 1D, but they are {input.ndim}D and "
            f"{weight.ndim}D. Fix: give the input a features dim, e.g. x.reshape(1) or x[None]."
        )
    if weight.ndim > 2 or (weight.ndim == 1 and bias is not None):
        raise RuntimeError(
            f"linear() needs a weight of shape [out_features, in_features], got "
            f"{list(weight.shape)}{' with a bias' if weight.ndim == 1 else ''}. Fix: reshape the "
            "weight to 2-D, e.g. weight.reshape(out_features, -1)."
        )
    if weight.ndim == 1:
        return input @ weight
    out_features, in_features = weight.shape
    if input.shape[-1] != in_features:
        LinearMm.apply(input.reshape(-1, input.shape[-1]), weight)  # raises: explains the mismatch
    batch = tuple(input.shape[:-1])
    rows = int(np.prod(batch))
    if bias is not None:
        _check_bias(bias, weight)
        vector = sum(s != 1 for s in bias.shape) == 1 or bias.ndim == 1  # PyTorch's test
        if vector and input._data.flags.c_contiguous and _adds_to_rows(bias, rows, out_features):
            flat = View.apply(input, shape=(rows, in_features))
            return View.apply(Addmm.apply(bias, flat, weight), shape=batch + (out_features,))
    if input.ndim == 1:
        out = SqueezeDims.apply(LinearMm.apply(unsqueeze(input, 0), weight), dims=(0,))
    else:
        flat = View.apply(input, shape=(rows, in_features), copy_ok=True)
        out = UnsafeView.apply(LinearMm.apply(flat, weight), shape=batch + (out_features,))
    return out if bias is None else out + bias


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1 - p) (identity when
    `training=False`). The mask is PyTorch's on the CPU: `noise = empty_like(input).bernoulli_(1 - p)`
    (one 53-bit uniform per element, kept where it is below 1 - p), so `manual_seed` gives the
    mask PyTorch gives (PyTorch on an Intel CPU draws it through MKL instead: see random.py)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(
            f"dropout probability has to be between 0 and 1, but got {p}. Fix: p is the chance "
            "that an element is zeroed, e.g. p=0.5 (p=0 keeps everything)."
        )
    if not training or p == 0:
        return input
    data = input._data
    if data.dtype.kind != "f":
        raise RuntimeError(
            f"dropout() needs a floating-point tensor, got {input.dtype}. Fix: input.float()."
        )
    if data.size == 0:
        return input
    if p == 1:  # PyTorch draws nothing: everything is zeroed
        noise = np.zeros(data.shape, dtype=data.dtype)
    else:
        keep = random.bernoulli_array(None, 1 - p, data.size).reshape(data.shape)
        noise = keep.astype(data.dtype)
        noise /= data.dtype.type(1 - p)  # kept elements are scaled so the expected value stays
    noise = _make(noise)  # recorded as PyTorch on the CPU: input * noise (MulBackward0)
    return input.mul_(noise) if inplace else mul(input, noise)


# ---- losses ----------------------------------------------------------------------------------------


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error: ((input - target)²).mean() for reduction="mean" (or .sum(), or none)."""
    reduction = _checks.reduction_of(reduction, size_average, reduce)
    _checks.check_tensors("mse_loss", input=input, target=target)
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size (e.g. target.view(input.shape)).",
            stacklevel=2,
        )
        check_broadcastable(input.shape, target.shape)
        shape = np.broadcast_shapes(input.shape, target.shape)
        input = input if input.shape == shape else expand(input, shape)
        target = target if target.shape == shape else expand(target, shape)
    if weight is None:
        return MseLoss.apply(input, target, reduction=reduction)
    _checks.check_tensors("mse_loss", weight=weight)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size. Fix: one weight per element.")
    squared = (input - target) ** 2 * weight  # PyTorch composes a weighted mse from plain ops
    if reduction == "none":
        return squared
    return squared.sum() / weight.sum() if reduction == "mean" else squared.sum()


def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """-(target·log(input) + (1 - target)·log(1 - input)) for probabilities input in [0, 1]."""
    reduction = _checks.reduction_of(reduction, size_average, reduce)
    _checks.check_tensors("binary_cross_entropy", input=input, target=target)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size (e.g. "
            "target.view(input.shape))."
        )
    if target.dtype != input.dtype:
        raise RuntimeError(
            f"Found dtype {target.dtype} but expected {input.dtype}: binary_cross_entropy needs "
            "input and target of the same dtype. Fix: target.to(input.dtype)."
        )
    for name, tensor in (("input", input), ("target", target)):
        values = tensor._data
        if not ((values >= 0) & (values <= 1)).all():
            raise RuntimeError(
                f"all elements of {name} should be between 0 and 1 (they are probabilities). Fix: "
                "pass sigmoid(scores), or give the raw scores to binary_cross_entropy_with_logits."
            )
    weight = _checks.constant_like("binary_cross_entropy", "weight", weight, input)
    return BinaryCrossEntropy.apply(input, target, weight=weight, reduction=reduction)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    """binary_cross_entropy(sigmoid(input), target), computed stably from the scores (logits);
    `pos_weight` multiplies the loss of the positive (target = 1) part."""
    reduction = _checks.reduction_of(reduction, size_average, reduce)
    name = "binary_cross_entropy_with_logits"
    _checks.check_tensors(name, input=input, target=target)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape}). Fix: "
            "one target per score, e.g. target.view(input.shape)."
        )
    if target._data.dtype.kind != "f":
        raise RuntimeError(
            f"{name}() needs a floating-point target (probabilities in [0, 1]), got "
            f"{target.dtype}. Fix: target.float() (or .to(input.dtype))."
        )
    weight = _checks.constant_like(name, "weight", weight, input)
    pos_weight = _checks.constant_like(name, "pos_weight", pos_weight, input)
    return BinaryCrossEntropyWithLogits.apply(
        input, target, weight=weight, pos_weight=pos_weight, reduction=reduction
    )


def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    """Negative log-likelihood: -input[n, target[n]] (times weight[target[n]]), averaged.
    `input` holds log-probabilities of C classes in dim 1 (dim 0 for a single sample)."""
    reduction = _checks.reduction_of(reduction, size_average, reduce)
    return _nll_loss(input, target, weight, ignore_index, reduction, "nll_loss")


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """nll_loss(log_softmax(input, class dim), target) for class-index targets (integers); for a
    float target of the input's shape (class probabilities): -(target·log_softmax(input)).sum.
    `label_smoothing` = ε mixes the target with the uniform distribution: (1 - ε)·target + ε/C."""
    reduction = _checks.reduction_of(reduction, size_average, reduce)
    _checks.check_tensors("cross_entropy", input=input, target=target)
    if label_smoothing > 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}. Fix: a small "
            "value such as label_smoothing=0.1 (0 turns smoothing off)."
        )
    _checks.check_rank(input)
    class_dim = 0 if input.ndim == 1 else 1
    if target._data.dtype.kind == "f":
        return _cross_entropy_probabilities(
            input, target, weight, ignore_index, reduction, label_smoothing, class_dim
        )
    log_p = _log_softmax(input, class_dim)
    loss = _nll_loss(log_p, target, weight, ignore_index, reduction, "cross_entropy")
    if label_smoothing <= 0:  # PyTorch ignores a negative value too
        return loss
    # ε/C times the loss against every class at once, ignored targets left out, reduced like loss
    t = _checks.class_targets(log_p, target, "cross_entropy")
    kept = t != ignore_index
    weighted = log_p if weight is None else log_p * _class_view(weight, log_p.ndim, class_dim)
    smooth = where(_make(kept), -weighted.sum(class_dim), 0.0)
    if reduction == "mean":
        counted = kept.sum() if weight is None else weight._data[t[kept]].sum()
        smooth = smooth.sum() / _make(np.asarray(counted, dtype=log_p._data.dtype))
    elif reduction == "sum":
        smooth = smooth.sum()
    classes = input.shape[class_dim]
    return MulScalar.apply(loss, 1 - label_smoothing) + MulScalar.apply(
        smooth, label_smoothing / classes
    )


def _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, smoothing, dim):
    if target.shape != input.shape:
        raise RuntimeError(
            f"cross_entropy(): a floating-point target holds class probabilities and must have "
            f"the input's shape {list(input.shape)}, got {list(target.shape)}. Fix: for class "
            "indices pass an integer tensor (target.long())."
        )
    if ignore_index >= 0:
        raise RuntimeError(
            "ignore_index is not supported for floating point target. Fix: leave ignore_index "
            "out, or give a target row of zeros to a sample that should not count."
        )
    classes = input.shape[dim]
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / classes
    product = _log_softmax(input, dim) * target
    if weight is not None:
        _checks.check_class_weight("cross_entropy", weight, input, classes)
        product = product * _class_view(weight, input.ndim, dim)
    if reduction == "none":
        return -product.sum(dim)
    if reduction == "sum":
        return -product.sum()
    return DivScalar.apply(-product.sum(), input._data.size / classes)  # mean over the samples


def _class_view(weight, ndim, dim):
    """The (C,) class weights shaped to broadcast along the class dim of an ndim-D tensor."""
    return weight.reshape([-1 if d == dim else 1 for d in range(ndim)])


def _nll_loss(input, target, weight, ignore_index, reduction, fn):
    _checks.check_tensors(fn, input=input, target=target)
    _checks.check_rank(input)
    if input._data.dtype.kind != "f":
        raise RuntimeError(
            f"{fn}() needs floating-point scores, got {input.dtype}. Fix: input.float()."
        )
    t = _checks.class_targets(input, target, fn)
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    if weight is not None:
        _checks.check_class_weight(fn, weight, input, classes)
    in_range = t.size == 0 or (t.min() >= 0 and t.max() < classes)  # the quick common case
    invalid = None if in_range else (t != ignore_index) & ((t < 0) | (t >= classes))
    if invalid is not None and invalid.any():
        raise IndexError(
            f"Target {t[invalid].flat[0]} is out of bounds. Fix: class indices go from 0 to "
            f"{classes - 1} for an input with {classes} classes in dim {class_dim} (or use "
            f"ignore_index={ignore_index} for samples that should not count)."
        )
    w = None if weight is None else weight._data
    if in_range and not 0 <= ignore_index < classes:
        ignore_index = None  # no target can be ignored: the plan skips looking for them
    if input.ndim == 3 or input.ndim > 4:  # PyTorch views these as (N, C, 1, rest) inputs
        n, rest = input.shape[0], int(np.prod(input.shape[2:]))
        flat = View.apply(input, shape=(n, classes, 1, rest), copy_ok=True)
        plan = NllPlan(
            t.reshape(n, 1, rest), w, ignore_index, reduction, flat.shape, input._data.dtype
        )
        out = NllLoss2d.apply(flat, plan=plan)
        return View.apply(out, shape=t.shape) if reduction == "none" else out
    plan = NllPlan(t, w, ignore_index, reduction, input.shape, input._data.dtype)
    return (NllLoss2d if input.ndim == 4 else NllLoss).apply(input, plan=plan)
