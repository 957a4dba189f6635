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

import math
import warnings

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import promotion, random, types
from ..autograd import no_grad
from ..ops import relu as _relu
from ..ops import sigmoid, tanh
from ..ops.activation import Elu, LeakyRelu, Silu, Softplus
from ..ops.conv import Convolution, Geometry
from ..ops.elementwise import check_broadcastable, mul, where
from ..ops.embedding import Embedding
from ..ops.linalg import _multiplies_as_a_batch, check_batch_dtypes
from ..ops.loss import (
    BinaryCrossEntropy,
    BinaryCrossEntropyWithLogits,
    DivScalar,
    HuberLoss,
    MseLoss,
    MulScalar,
    NllLoss,
    NllLoss2d,
    NllPlan,
    SmoothL1Loss,
)
from ..ops.nn import Addmm, Gelu, LinearMm
from ..ops.normalization import BatchNorm, LayerNorm, densely_laid_out
from ..ops.padding import ConstantPad
from ..ops.pooling import AvgPool2d, MaxPool2d, max_pool2d_indices
from ..ops.reduction import log_softmax as _log_softmax
from ..ops.reduction import softmax as _softmax
from ..ops.shape import UnsafeView, View, expand, unsqueeze
from ..tensor import _make
from . import _checks, _conv_args

__all__ = [
    "relu",
    "leaky_relu",
    "silu",
    "softplus",
    "elu",
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
    "embedding",
    "one_hot",
    "layer_norm",
    "batch_norm",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "conv1d",
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "pad",
    "normalize",
]

# ---- activations ------------------------------------------------------------------------------------


def relu(input, inplace=False):
    """max(input, 0). `inplace=True` overwrites input (not allowed on a leaf that requires grad)."""
    return input._inplace(_relu) if inplace else _relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope·x: a relu whose negative side keeps a small slope."""
    _checks.check_tensors("leaky_relu", input=input)
    return _activation("leaky_relu", input, inplace, LeakyRelu, negative_slope=negative_slope)


def silu(input, inplace=False):
    """x·sigmoid(x) (also called swish)."""
    _checks.check_tensors("silu", input=input)
    return _activation("silu", input, inplace, Silu)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta·x)) / beta: a smooth relu; x itself where beta·x > threshold."""
    _checks.check_tensors("softplus", input=input)
    types.floating_point_only("softplus", input.dtype)
    return Softplus.apply(input, beta=beta, threshold=threshold)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha·(exp(x) - 1)."""
    _checks.check_tensors("elu", input=input)
    return _activation("elu", input, inplace, Elu, alpha=alpha)


def _activation(name, input, inplace, op, **options):
    types.floating_point_only(name, input.dtype)
    if inplace:  # x.op_(): the result is written into input (not allowed on a leaf needing grad)
        return input._inplace(lambda x: op.apply(x, **options))
    return op.apply(input, **options)


def gelu(input, *, approximate="none"):
    """x·Φ(x) with Φ the normal CDF (`approximate="tanh"`: 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))))."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(
            f"approximate argument must be either none or tanh, got {approximate!r}. Fix: leave "
            "it out for the exact GELU, or pass approximate='tanh'."
        )
    types.floating_point_only("gelu", input.dtype)
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
        _checks.check_tensors("linear", bias=bias)
        vector = sum(s != 1 for s in bias.shape) == 1 or bias.ndim == 1  # PyTorch's test
        if vector and input._data.flags.c_contiguous and _adds_to_rows(bias, rows, out_features):
            _check_bias(bias, weight)  # addmm's rule: one dtype for all three
            flat = View.apply(input, shape=(rows, in_features))
            return View.apply(Addmm.apply(bias, flat, weight), shape=batch + (out_features,))
    # otherwise PyTorch computes matmul(input, weight.t()), and where that multiplies as a batch
    # (bmm) its errors are bmm's: bool has no bmm kernel, before the dtypes are compared; with
    # nothing to multiply, bmm gives zeros of weight's dtype without comparing them (as matmul)
    if _multiplies_as_a_batch(input, weight.mT):
        if input.numel() and weight.numel():
            check_batch_dtypes(input, weight.mT, names=("input", "weight"))
        else:
            input = input.to(weight.dtype)
    if input.ndim == 1:
        # squeezed in place, as PyTorch does: the result is a tensor of its own, not a view
        out = LinearMm.apply(unsqueeze(input, 0), weight).squeeze_(0)
    else:
        flat = input.reshape(rows, in_features)  # a copy where it cannot be a view, as there
        out = UnsafeView.apply(LinearMm.apply(flat, weight), shape=batch + (out_features,))
    # then it adds the bias in place, so the product's dtype and shape stay (add_'s rules)
    return out if bias is None else out.add_(bias)


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
    if not training or p == 0 or input.numel() == 0:  # nothing to drop: the input itself
        return input
    data = input._data
    if p == 1:  # PyTorch draws nothing: everything is zeroed, in any dtype (ints and bools too)
        noise = np.zeros(data.shape, dtype=data.dtype)
    elif data.dtype.kind != "f":  # the kept elements would be scaled by a float 1/(1 - p)
        raise RuntimeError(
            f"dropout() needs a floating-point tensor, got {input.dtype} (result type Float "
            "can't be cast to it). Fix: input.float()."
        )
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
    computed_in = promotion.result_type(input, target)
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
    types.floating_point_only("mse_loss", computed_in)  # after the shapes, as in PyTorch
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
    if target.shape != input.shape:  # checked before any computing, as PyTorch does
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape}). Fix: "
            "one target per score, e.g. target.view(input.shape)."
        )
    types.floating_point_only("log_sigmoid", input.dtype)  # PyTorch's first step: log(sigmoid(x))
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
    # a target of the input's own shape holds class probabilities, whatever its dtype
    if target._data.dtype.kind == "f" or tuple(target.shape) == tuple(input.shape):
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
        smooth, _per_class(label_smoothing, classes)
    )


def _per_class(smoothing, classes):
    """ε/C, the share of the smoothing each class gets; with no classes inf, as PyTorch's C++
    division gives (it then multiplies an empty tensor, or makes a reduced loss nan)."""
    return smoothing / classes if classes else math.inf


def _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, smoothing, dim):
    if target.shape != input.shape:
        raise RuntimeError(
            f"cross_entropy(): a floating-point target holds class probabilities and must have "
            f"the input's shape {list(input.shape)}, got {list(target.shape)}. Fix: for class "
            "indices pass an integer tensor (target.long())."
        )
    if target._data.dtype.kind != "f":
        raise RuntimeError(
            f"Expected floating point type for target with class probabilities, got "
            f"{target.dtype}. A target of the input's shape {list(input.shape)} holds class "
            "probabilities. Fix: target.float() for probabilities; for class indices give one "
            "index per sample (shape [N], without the class dim)."
        )
    if ignore_index >= 0:
        raise RuntimeError(
            "ignore_index is not supported for floating point target. Fix: leave ignore_index "
            "out, or give a target row of zeros to a sample that should not count."
        )
    classes = input.shape[dim]
    if smoothing > 0:
        target = target * (1 - smoothing) + _per_class(smoothing, classes)
    product = _log_softmax(input, dim) * target
    if weight is not None:
        _checks.check_class_weight("cross_entropy", weight, input, classes)
        product = product * _class_view(weight, input.ndim, dim)
    if reduction == "none":
        return -product.sum(dim)
    if reduction == "sum":
        return -product.sum()
    if input.numel() == 0:  # no samples: the mean is nan, recorded as PyTorch does (a negation)
        return -product.sum().fill_(float("nan"))
    return DivScalar.apply(-product.sum(), input._data.size / classes)  # mean over the samples


def _class_view(weight, ndim, dim):
    """The (C,) class weights shaped to broadcast along the class dim of an ndim-D tensor."""
    return weight.reshape([-1 if d == dim else 1 for d in range(ndim)])


def _nll_loss(input, target, weight, ignore_index, reduction, fn):
    _checks.check_tensors(fn, input=input, target=target)
    _checks.check_rank(input)
    t = _checks.class_targets(input, target, fn)
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    if weight is not None:
        _checks.check_class_weight(fn, weight, input, classes)
    image_like = input.ndim == 3 or input.ndim > 4  # PyTorch views these as (N, C, 1, rest)
    n, rest = input.shape[0], int(np.prod(input.shape[2:]))
    if image_like and input.numel() == 0 and t.size > 0:  # no classes: the view is (N, 0, 0, 0)
        raise RuntimeError(
            f"size mismatch (got input: {[n, classes, 0, 0]} , target: {[n, 1, rest]}): "
            f"{fn}'s input has no classes (dim 1 has size 0) to score the targets against. "
            "Fix: an input with one score per class in dim 1."
        )
    if input._data.dtype.kind != "f":  # the shapes are checked first, then the kernel is chosen
        kernel = "nll_loss2d_forward_out_frame" if input.ndim >= 3 else "nll_loss_out_frame"
        raise types.not_implemented_for(kernel, input.dtype)
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
    if image_like:
        flat = View.apply(input, shape=(n, classes, 1, rest), copy_ok=True)
        plan = NllPlan(
            t.reshape(n, 1, rest), w, ignore_index, reduction, flat.shape, input._data.dtype
        )
        out = NllLoss2d.apply(flat, plan=plan)
        return View.apply(out, shape=t.shape) if reduction == "none" else out
    plan = NllPlan(t, w, ignore_index, reduction, input.shape, input._data.dtype)
    return (NllLoss2d if input.ndim == 4 else NllLoss).apply(input, plan=plan)


# ---- embeddings ------------------------------------------------------------------------------------


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """Look up rows of `weight` (num_embeddings, embedding_dim): `weight[input]`, one vector per
    integer index of `input`; the result has shape input.shape + (embedding_dim,).

    >>> import autograd_lab as ag
    >>> table = ag.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    >>> embedding(ag.tensor([[2, 1]]), table)
    tensor([[[3., 4.],
             [1., 2.]]])

    `padding_idx`: that row gets no gradient. `max_norm`: rows looked up whose norm is larger are
    scaled down to it, in place, before the look-up (as PyTorch does).
    """
    _checks.check_tensors("embedding", indices=input, weight=weight)
    _checks.cpu_only("embedding", input, weight)
    if input._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {input.dtype} instead. Fix: the indices are token numbers, "
            "integers: input.long()."
        )
    if weight.ndim != 2:
        raise RuntimeError(
            f"'weight' must be 2-D, got shape {list(weight.shape)}. Fix: an embedding table has "
            "one row per token: shape (num_embeddings, embedding_dim)."
        )
    num_embeddings = weight.shape[0]
    padding_idx = _checks.padding_index(padding_idx, num_embeddings)
    if sparse:
        raise NotImplementedError(
            "embedding(sparse=True) is not supported: autograd_lab has no sparse tensors, so it "
            "cannot give the weight a sparse gradient. Fix: leave sparse out (a dense gradient "
            "gives the same training steps with SGD and Adam)."
        )
    indices = input._data
    if indices.size and (indices.min() < 0 or indices.max() >= num_embeddings):
        raise IndexError(
            f"index out of range in self: embedding indices go from 0 to {num_embeddings - 1} for "
            f"a weight with {num_embeddings} rows, got {indices.min()}..{indices.max()}. Fix: "
            "make num_embeddings larger than the largest token number."
        )
    if max_norm is not None:
        _renormalize_rows(weight, indices, max_norm, norm_type)
    return Embedding.apply(
        weight,
        indices=indices.astype(np.int64),
        padding_idx=padding_idx,
        scale_grad_by_freq=scale_grad_by_freq,
    )


def _renormalize_rows(weight, indices, max_norm, norm_type):
    """Scale the looked-up rows whose norm exceeds max_norm down to it, in place and unrecorded
    (PyTorch's embedding_renorm_, including its 1e-7 that keeps the new norm just below max_norm)."""
    rows = np.unique(indices)
    data = weight._data
    norms = np.linalg.norm(data[rows].astype(np.float64), ord=norm_type, axis=1)
    too_long = norms > max_norm
    scale = max_norm / (norms[too_long] + 1e-7)
    data[rows[too_long]] *= scale[:, None].astype(data.dtype)


def one_hot(tensor, num_classes=-1):
    """Class indices -> one-hot rows: shape tensor.shape + (num_classes,), int64, a 1 at each index.

    >>> import autograd_lab as ag
    >>> one_hot(ag.tensor([0, 2]), num_classes=3)
    tensor([[1, 0, 0],
            [0, 0, 1]])

    num_classes=-1 (the default) takes the largest index + 1.
    """
    _checks.check_tensors("one_hot", tensor=tensor)
    indices = tensor._data
    if indices.dtype != np.int64:
        raise RuntimeError(
            f"one_hot is only applicable to index tensor of type LongTensor. Got {tensor.dtype}. "
            "Fix: tensor.long()."
        )
    if num_classes == -1:
        if indices.size == 0:
            raise RuntimeError(
                "Can not infer total number of classes from empty tensor. Fix: give num_classes."
            )
        num_classes = int(indices.max()) + 1
    if indices.size and indices.min() < 0:
        raise RuntimeError(
            "Class values must be non-negative. Fix: one_hot takes class indices 0, 1, 2, ..."
        )
    if indices.size and indices.max() >= num_classes:
        raise RuntimeError(
            f"Class values must be smaller than num_classes ({num_classes}), got "
            f"{indices.max()}. Fix: num_classes=<number of classes>, or leave it out to take "
            "the largest index + 1."
        )
    # row k of the identity matrix is the one-hot vector of class k: look the rows up
    return _make(np.eye(max(num_classes, 0), dtype=np.int64)[indices])


# ---- normalization ---------------------------------------------------------------------------------


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Standardize each sample over its last dims (`normalized_shape`, e.g. the features) to
    mean 0 and variance 1, then `* weight + bias` (both of shape normalized_shape, optional).

    >>> import autograd_lab as ag
    >>> layer_norm(ag.tensor([[1.0, 2.0, 3.0]]), (3,))
    tensor([[-1.2247,  0.0000,  1.2247]])
    """
    _checks.check_tensors("layer_norm", input=input)
    _checks.cpu_only("layer_norm", input, weight, bias)
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(
            f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
            f"{type(normalized_shape).__name__}. Fix: layer_norm(x, (features,)); nn.LayerNorm "
            "also takes a plain int."
        )
    shape = [int(n) for n in normalized_shape]
    if (
        not shape
        or list(input.shape[input.ndim - len(shape) :]) != shape
        or input.ndim < len(shape)
    ):
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape [*, "
            f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}. Fix: "
            "normalized_shape names the input's last dims (usually (features,))."
        )
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and list(param.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"{list(param.shape)} and normalized_shape = {shape}."
            )
    types.floating_point_only("layer_norm", input.dtype)  # a mean and a variance need fractions
    return LayerNorm.apply(input, weight, bias, normalized_ndim=len(shape), eps=eps)


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-05,
):
    """Standardize each channel (dim 1) over the batch (and the positions of an image), then
    `* weight + bias`, per channel.

    training=True: with the batch's mean and (biased) variance; the running statistics given are
    updated in place: running = (1 - momentum)·running + momentum·batch statistic, with the
    batch's *unbiased* variance, as PyTorch does. training=False: with the running statistics.
    """
    _checks.check_tensors("batch_norm", input=input)
    _checks.cpu_only("batch_norm", input, weight, bias)
    # PyTorch's order: the batch size, the parameters' sizes, the running statistics, and only
    # then the dtype (a kernel is chosen) and the channels dim 1 (read first when training)
    shape = input.shape
    if training and shape[0] * math.prod(shape[2:]) == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {input.shape}. "
            "Fix: a batch of at least 2 samples (or model.eval() to use the running statistics)."
        )
    channels = shape[1] if input.ndim > 1 else 0
    for name, tensor in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if tensor is not None and tensor.numel() != channels:
            raise RuntimeError(
                f"{name} should contain {channels} elements not {tensor.numel()}. Fix: the layer "
                f"is built for {tensor.numel()} channels but the input has {channels} in dim 1."
            )
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(
            "running_mean must be defined in evaluation mode. Fix: pass the running "
            "statistics, or training=True to use the batch's own."
        )
    if input.numel() == 0:
        # nothing to normalize: PyTorch picks no kernel and leaves the running statistics alone;
        # it returns a copy (times weight[0], plus bias[0], so that the graph reaches them)
        out = input.clone()
        out = out if weight is None else out * weight[0]
        return out if bias is None else out + bias[0]
    if not training:
        types.floating_point_only("batch_norm", input.dtype)
    elif not input.dtype.is_floating_point and not densely_laid_out(input._data):
        # PyTorch's kernel for other layouts (expanded, transposed) first takes the batch's mean
        # with mean(), which refuses integers with a RuntimeError
        raise RuntimeError(
            f"mean(): could not infer output dtype: batch_norm takes the mean of each channel, "
            f"and mean() needs a floating-point tensor, got {input.dtype}. Fix: input.float()."
        )
    if input.ndim < 2:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-1, 0], but got 1): batch_norm "
            f"needs a channels dim 1, the input has shape {list(input.shape)}. Fix: a batch of "
            "shape (N, C) or (N, C, ...)."
        )
    types.floating_point_only("batch_norm", input.dtype)
    if not training:
        return BatchNorm.apply(
            input,
            weight,
            bias,
            running_mean=running_mean._data,
            running_var=running_var._data,
            eps=eps,
        )
    if running_mean is not None or running_var is not None:
        _update_running_stats(input._data, running_mean, running_var, momentum)
    return BatchNorm.apply(input, weight, bias, running_mean=None, running_var=None, eps=eps)


def _batch_norm_layer(
    input,
    running_mean,
    running_var,
    num_batches_tracked,
    weight,
    bias,
    training,
    track_running_stats,
    momentum,
    eps,
):
    """What nn.BatchNorm1d/2d do: count the batch, choose the momentum, then batch_norm.

    One function (not the layer's forward), its buffers passed in, so that autograd_lab.compile
    replays all of it on every call: the count and the running statistics change in place."""
    factor = 0.0 if momentum is None else momentum
    if training and track_running_stats:
        num_batches_tracked.add_(1)
        if momentum is None:  # no momentum: the plain average over all batches so far
            factor = 1.0 / float(num_batches_tracked.item())
    # the batch's own statistics in training, and also in evaluation when none were kept
    use_batch_stats = training or running_mean is None
    keep_stats = not training or track_running_stats
    return batch_norm(
        input,
        running_mean if keep_stats else None,
        running_var if keep_stats else None,
        weight,
        bias,
        use_batch_stats,
        factor,
        eps,
    )


def _update_running_stats(data, running_mean, running_var, momentum):
    """running ← (1 - momentum)·running + momentum·(this batch's statistic), in place."""
    dims = (0,) + tuple(range(2, data.ndim))
    # the running variance estimates the population's, so it divides by n - 1 (ddof=1), while
    # the batch itself is standardized with its biased variance (divided by n)
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: inf, as in PyTorch
        batch_stats = (data.mean(axis=dims), data.var(axis=dims, ddof=1))
    with no_grad():
        for running, batch in zip((running_mean, running_var), batch_stats):
            if running is not None:
                update = (1 - momentum) * running._data + momentum * batch
                running.copy_(_make(update.astype(running._data.dtype)))


# ---- robust regression losses: L1, smooth L1, Huber ------------------------------------------------


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error: |input - target|, averaged (reduction="mean"), summed, or per element.
    Recorded as PyTorch records it, from plain ops: (input - target).abs().mean()."""
    reduction = _checks.reduction_of(reduction, size_average, reduce)
    _checks.check_tensors("l1_loss", input=input, target=target)
    input, target = _same_shape(input, target)
    errors = (input - target).abs()
    if weight is not None:
        _check_weight(weight, input)
        errors = errors * weight
        if reduction == "mean":  # a weighted mean: divided by the total weight
            return errors.sum() / weight.sum()
    return _reduced(errors, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """½(input - target)²/beta where |input - target| < beta, else |input - target| - ½beta:
    squared for small errors, absolute for large ones (beta=0 is l1_loss)."""
    reduction = _checks.reduction_of(reduction, size_average, reduce)
    _checks.check_tensors("smooth_l1_loss", input=input, target=target)
    # PyTorch's order: the shapes, beta, then the dtype (when a kernel is chosen)
    computed_in = promotion.result_type(input, target)
    input, target = _same_shape(input, target)
    if beta < 0:
        raise RuntimeError(
            f"smooth_l1_loss does not support negative values for beta (got {beta}). Fix: beta is "
            "where the loss changes from squared to absolute, e.g. beta=1.0."
        )
    if beta == 0.0:  # no squared part left: PyTorch computes the L1 loss
        return _reduced((input - target).abs(), reduction)
    types.floating_point_only("smooth_l1_loss", computed_in)
    return SmoothL1Loss.apply(input, target, reduction=reduction, beta=beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """½(input - target)² where |input - target| < delta, else delta·(|input - target| - ½delta):
    smooth_l1_loss times delta (its slope far away is delta instead of 1)."""
    reduction = _checks.reduction_of(reduction, None, None)
    _checks.check_tensors("huber_loss", input=input, target=target)
    if delta <= 0:  # PyTorch's order: delta, the shapes, then the dtypes
        raise RuntimeError(
            f"huber_loss does not support non-positive values for delta (got {delta}). Fix: delta "
            "is where the loss changes from squared to absolute, e.g. delta=1.0."
        )
    input, target = _same_shape(input, target)
    _check_huber_dtypes(input, target)
    if weight is None:
        return HuberLoss.apply(input, target, reduction=reduction, delta=delta)
    _check_weight(weight, input)
    losses = HuberLoss.apply(input, target, reduction="none", delta=delta) * weight
    return _reduced(losses, reduction)


def _check_huber_dtypes(input, target):
    """PyTorch's huber_loss keeps the input's dtype (mse_loss and smooth_l1_loss promote): it
    computes in the promoted dtype and stores the result as input's dtype, which must be a float
    one (ops/loss.py's HuberLoss; its backward needs both in one dtype).

    PyTorch's order: first whether the promoted result may be stored in the input's dtype (the
    "same kind" rule of an in-place op: a bool input cannot hold an int64 result, an int64 input
    not a float one), then whether its kernel computes that dtype at all (float only)."""
    computed_in = promotion.result_type(input, target)
    if not promotion.can_cast(computed_in, input.dtype):
        raise RuntimeError(
            f"result type {types.kernel_name(computed_in)} can't be cast to the desired output "
            f"type {types.kernel_name(input.dtype)}: huber_loss gives a result of the input's "
            f"dtype ({input.dtype}), and it cannot hold the {computed_in} it computes. Fix: "
            "convert the input first, e.g. input.float()."
        )
    # a float result that passed the cast check has a float input to be stored in
    types.floating_point_only("huber_loss", computed_in)


def _same_shape(input, target):
    """input and target broadcast to one shape, with PyTorch's warning when they differ (a
    target of shape (N,) against predictions (N, 1) silently compares every pair)."""
    if input.shape == target.shape:
        return input, target
    warnings.warn(
        f"Using a target size ({target.shape}) that is different to the input size "
        f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
        "Please ensure they have the same size.",
        stacklevel=3,
    )
    check_broadcastable(input.shape, target.shape)
    shape = np.broadcast_shapes(input.shape, target.shape)
    input = input if input.shape == shape else expand(input, shape)
    return input, target if target.shape == shape else expand(target, shape)


def _check_weight(weight, input):
    _checks.check_tensors("loss", weight=weight)
    if weight.shape != input.shape:
        raise ValueError(
            f"Weights and input must have the same size: weight {list(weight.shape)}, input "
            f"{list(input.shape)}. Fix: one weight per element."
        )


def _reduced(losses, reduction):
    if reduction == "none":
        return losses
    return losses.mean() if reduction == "mean" else losses.sum()


# ---- convolution and pooling -----------------------------------------------------------------------


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Slide `weight` (C_out, C_in/groups, k) along signals (N, C_in, L) -> (N, C_out, L_out):
    each output is a weighted sum of a k-long window of every input channel, plus bias."""
    return _convolution("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Slide `weight` (C_out, C_in/groups, k_h, k_w) over images (N, C_in, H, W): each output
    pixel is a weighted sum of a k_h × k_w window of every input channel, plus bias.

    >>> import autograd_lab as ag
    >>> image = ag.arange(16.0).reshape(1, 1, 4, 4)
    >>> conv2d(image, ag.ones(1, 1, 2, 2))            # the sum of each 2×2 window
    tensor([[[[10., 14., 18.],
              [26., 30., 34.],
              [42., 46., 50.]]]])

    `padding`: zeros added around (a number, or 'same' to keep the size, 'valid' for none),
    `stride`: the step between windows, `dilation`: the step inside a window, `groups`: split
    the channels into groups convolved separately.
    """
    return _convolution("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


def _convolution(fn, input, weight, bias, stride, padding, dilation, groups, spatial):
    _checks.check_tensors(fn, input=input, weight=weight)
    _checks.cpu_only(fn, input, weight, bias)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {fn}, but "
            f"got input of size: {list(input.shape)}. Fix: a batch (N, C, ...) or one sample "
            "(C, ...)."
        )
    if weight.ndim != spatial + 2:
        raise RuntimeError(
            f"{fn}() needs a {spatial + 2}-D weight (out_channels, in_channels / groups, kernel "
            f"size{'s' if spatial > 1 else ''}), got shape {list(weight.shape)}."
        )
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"expected scalar type {weight.dtype} but found {input.dtype}: the input and the "
            "weight must have the same dtype. Fix: input.to(weight.dtype) (or model.double())."
        )
    if bias is not None:
        if bias.shape != (weight.shape[0],):
            raise RuntimeError(
                f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
                f"with {weight.shape[0]} elements, but got bias of size {list(bias.shape)} "
                "instead. Fix: one bias per output channel."
            )
        if bias.dtype != weight.dtype:
            raise RuntimeError(
                f"Input type ({input.dtype}) and bias type ({bias.dtype}) should be the same. "
                "Fix: bias.to(input.dtype)."
            )
    stride, pairs, dilation = _conv_args.conv_geometry(
        input, weight, stride, padding, dilation, groups, spatial
    )
    if spatial == 1:  # conv1d is conv2d over images of height 1
        stride, pairs, dilation = (1,) + stride, ((0, 0),) + pairs, (1,) + dilation
    geometry = Geometry(stride, pairs, dilation, groups)
    if input.dtype is types.bool_ and input.numel() > 0:  # PyTorch has no kernel to run for bool
        raise types.not_implemented_for(fn, input.dtype)
    if input.ndim == spatial + 1:  # one sample: as a batch of one, as PyTorch does
        return Convolution.apply(unsqueeze(input, 0), weight, bias, geometry=geometry).squeeze(0)
    return Convolution.apply(input, weight, bias, geometry=geometry)


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """The largest value of each kernel_size window (the step `stride` defaults to kernel_size:
    windows side by side). `return_indices=True` also returns where each maximum was, as a flat
    position h·W + w in its input plane (int64).

    >>> import autograd_lab as ag
    >>> max_pool2d(ag.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    _checks.check_tensors("max_pool2d", input=input)
    _checks.cpu_only("max_pool2d", input)
    kernel, stride, pairs, dilation = _conv_args.pool_geometry(
        input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d"
    )
    types.check_kernel_dtype("max_pool2d", input.dtype)  # after the sizes, as in PyTorch
    indices = max_pool2d_indices(input._data, kernel, stride, pairs, dilation)
    out = MaxPool2d.apply(input, indices=indices)
    return (out, _make(indices)) if return_indices else out


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """The mean of each kernel_size window (`stride` defaults to kernel_size). Zero padding
    counts in the mean unless count_include_pad=False; divisor_override divides by that instead."""
    _checks.check_tensors("avg_pool2d", input=input)
    _checks.cpu_only("avg_pool2d", input)
    kernel, stride, pairs, _ = _conv_args.pool_geometry(
        input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d"
    )
    types.check_kernel_dtype("avg_pool2d", input.dtype)  # after the sizes, as in PyTorch
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero. Fix: leave divisor_override out.")
        divisor = divisor_override
    else:
        divisor = _window_sizes(input.shape[-2:], kernel, stride, pairs, count_include_pad)
        divisor = divisor.astype(input._data.dtype)
    return AvgPool2d.apply(input, kernel=kernel, stride=stride, padding=pairs, divisor=divisor)


def _window_sizes(size, kernel, stride, pairs, count_include_pad):
    """How many elements each window averages: the window sums of an image of ones (the padding
    counted, as PyTorch does, except where ceil_mode's last window hangs over the edge)."""
    (top, bottom), (left, right) = pairs
    h, w = size
    if count_include_pad:  # ones over the image and its padding, zeros beyond
        pad_h, pad_w = (top, top), (left, left)
        ones = np.pad(np.ones((h + 2 * top, w + 2 * left)), ((0, bottom - top), (0, right - left)))
    else:  # ones over the image only
        pad_h, pad_w = (top, bottom), (left, right)
        ones = np.pad(np.ones((h, w)), (pad_h, pad_w))
    patches = sliding_window_view(ones, kernel)[:: stride[0], :: stride[1]]
    return patches.sum(axis=(-2, -1))


# ---- padding ---------------------------------------------------------------------------------------


def pad(input, pad, mode="constant", value=None):
    """Add a border of `value` (default 0) around the last dims: `pad` gives (before, after)
    amounts from the last dim backwards, e.g. (1, 1) for a column on each side, (1, 1, 2, 0)
    also 2 rows on top. Negative amounts cut elements off.

    >>> import autograd_lab as ag
    >>> pad(ag.tensor([[1, 2]]), (1, 2), value=9)
    tensor([[9, 1, 2, 9, 9]])
    """
    _checks.check_tensors("pad", input=input)
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(
            f"Padding length must be divisible by 2, got {len(pad)} amounts. Fix: a (before, "
            "after) pair per dim, e.g. pad=(1, 1)."
        )
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(
            f"Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}."
        )
    if mode != "constant":
        if mode in ("reflect", "replicate", "circular"):
            raise NotImplementedError(
                f"pad(mode={mode!r}) is not supported by autograd_lab yet: only mode='constant'."
            )
        raise NotImplementedError(
            f"Unrecognised padding mode {mode}. Fix: mode='constant', 'reflect', 'replicate' or "
            "'circular' (autograd_lab has 'constant')."
        )
    for size, (before, after) in zip(input.shape[::-1], zip(pad[::2], pad[1::2])):
        if size + before + after < 0:
            raise RuntimeError(
                f"narrow(): length must be non-negative: padding ({before}, {after}) would cut "
                f"more than the {size} elements of a dim. Fix: smaller negative amounts."
            )
    return ConstantPad.apply(input, pad=pad, value=0 if value is None else value)


# ---- normalize -------------------------------------------------------------------------------------


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(‖input‖_p, eps) along `dim`: every slice becomes a unit vector (a slice of
    zeros stays zeros: eps keeps the division finite).

    >>> import autograd_lab as ag
    >>> normalize(ag.tensor([3.0, 4.0]), dim=0)
    tensor([0.6000, 0.8000])
    """
    _checks.check_tensors("normalize", input=input)
    if out is not None:
        raise NotImplementedError(
            "normalize(out=...) is not supported by autograd_lab. Fix: y = F.normalize(x), or "
            "out.copy_(F.normalize(x))."
        )
    if input._data.dtype.kind != "f":
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{input.dtype}. Fix: input.float()."
        )
    if p == float("inf"):
        size = input.abs()
        # the largest |x|; several equal largest share its gradient, as in PyTorch
        ties = size == size.max(dim, keepdim=True).values
        norm = (size * ties).sum(dim, keepdim=True) / ties.sum(dim, keepdim=True)
        return input / norm.clamp(min=eps)
    if not p > 0:
        raise NotImplementedError(
            f"normalize(p={p}) is not supported by autograd_lab: p must be positive or inf. "
            "Fix: p=2 (the default), p=1 or p=float('inf')."
        )
    if p == 1:
        return input / input.abs().sum(dim, keepdim=True).clamp(min=eps)
    # PyTorch's formula: the norm's gradient is 0 where the norm is 0, so a slice of zeros gets
    # the finite gradient 1/eps (and nan when differentiated again, as in PyTorch)
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)
