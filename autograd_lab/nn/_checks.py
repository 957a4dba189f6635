"""Argument checks of `autograd_lab.nn.functional`: PyTorch's exception classes and messages, each
followed by the fix, in words a learner can act on."""

import warnings

import numpy as np

from ..ops.elementwise import check_broadcastable
from ..tensor import Tensor, _make

_REDUCTIONS = ("none", "mean", "sum")


def reduction_of(reduction, size_average, reduce):
    if size_average is not None or reduce is not None:  # PyTorch's old way of saying it
        keep_all = reduce is not None and not reduce
        averaged = size_average is None or size_average
        reduction = "none" if keep_all else ("mean" if averaged else "sum")
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{reduction}' "
            "instead.",
            stacklevel=3,
        )
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"{reduction} is not a valid value for reduction. Fix: reduction='mean' (the default), "
            "'sum' or 'none' (one loss per element)."
        )
    return reduction


def check_tensors(fn, **tensors):
    for name, value in tensors.items():
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{fn}(): argument '{name}' must be Tensor, not {type(value).__name__}. Fix: "
                "wrap it with autograd_lab.tensor(...)."
            )


def check_rank(input):
    if input.ndim == 0:
        raise ValueError(
            "Expected 1 or more dimensions (got 0): the input needs a dim of class scores. Fix: "
            "give scores of shape (C,) for one sample or (N, C) for a batch."
        )


def check_no_grad(fn, name, tensor):
    if tensor is not None and tensor.requires_grad:
        raise RuntimeError(
            f"The function '{fn}' is not differentiable with respect to argument '{name}'. This "
            f"input cannot have requires_grad True. Fix: pass {name}.detach()."
        )


def constant_like(fn, name, tensor, input):
    """A weight-like argument: no gradient, the input's dtype, a shape that broadcasts to it."""
    if tensor is None:
        return None
    check_tensors(fn, **{name: tensor})
    check_no_grad(fn, name, tensor)
    check_broadcastable(tensor.shape, input.shape)
    if np.broadcast_shapes(tensor.shape, input.shape) != tuple(input.shape):
        raise RuntimeError(
            f"{fn}(): {name} of shape {list(tensor.shape)} does not broadcast to the input's shape "
            f"{list(input.shape)}. Fix: one value per class, shape [{input.shape[-1]}]."
        )
    return _make(tensor._data.astype(input._data.dtype, copy=False))


def check_class_weight(fn, weight, input, classes):
    check_tensors(fn, weight=weight)
    if weight.shape != (classes,):
        raise RuntimeError(
            f"{'cross_entropy: ' if fn == 'cross_entropy' else ''}weight tensor should be defined "
            f"either for all {classes} classes or no classes but got weight tensor of shape: "
            f"{list(weight.shape)}. Fix: one weight per class, shape [{classes}]."
        )
    check_no_grad("nll_loss_forward", "weight", weight)
    # the kernel is chosen for the input's dtype first: an integer input is refused for that
    if input.dtype.is_floating_point and weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype} but found {weight.dtype}: the class weights must "
            "have the input's dtype. Fix: weight.to(input.dtype)."
        )


def class_targets(input, target, fn):
    """The target's class indices as a numpy array shaped like the per-sample losses, checked."""
    t = target._data
    if t.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {target.dtype}: {fn} takes class "
            "indices. Fix: target.long() (for class probabilities, use cross_entropy with a float "
            "target of the input's shape)."
        )
    shape = input.shape
    if len(shape) == 1:
        if t.ndim > 1 or t.size != 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: {t.size}. Fix: "
                "one class index for the one sample, e.g. tensor(2)."
            )
        return t.reshape(())
    if t.ndim == 0 or t.shape[0] != shape[0]:
        raise ValueError(
            f"Expected input batch_size ({shape[0]}) to match target batch_size "
            f"({t.shape[0] if t.ndim else 0}). Fix: one class index per sample."
        )
    expected = (shape[0],) + tuple(shape[2:])
    if len(shape) == 2 and t.ndim != 1:
        raise RuntimeError(
            "0D or 1D target tensor expected, multi-target not supported. Fix: a target of "
            f"shape [{shape[0]}] holding one class index per sample."
        )
    if t.shape != expected:
        raise RuntimeError(
            f"Expected target size {list(expected)}, got {list(t.shape)}. Fix: one class index "
            "per position: the input's shape without its class dim (dim 1)."
        )
    return t


def cpu_only(fn, *tensors):
    """Refuse, by name, what the CUDA backend cannot run yet (instead of failing deep inside)."""
    for tensor in tensors:
        if tensor is not None and tensor.is_cuda:
            raise NotImplementedError(
                f"{fn}() is not implemented on the CUDA backend yet (a tensor is on "
                f"{tensor.device}). Fix: run this layer on the CPU: .cpu() the model and inputs."
            )


def padding_index(padding_idx, num_embeddings):
    """padding_idx as a row number (a negative one counts from the end), or None; checked."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError(
            f"Padding_idx must be within num_embeddings: got padding_idx={padding_idx} for "
            f"num_embeddings={num_embeddings}. Fix: a row number from 0 to {num_embeddings - 1}."
        )
    return padding_idx % num_embeddings
