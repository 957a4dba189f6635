"""The Functions behind the losses of `autograd_lab.nn.functional` (which checks the arguments).

A loss reduces per-element losses with `reduction` = "none" (keep them), "sum" or "mean". Its
backward spreads the incoming gradient back over the elements (`_spread`: divided by their count
for "mean") and applies the derivative of the per-element loss (the binary cross-entropies do
these in PyTorch's order, slope times grad first: `_weighted_mean`).
"""

import numpy as np

from .. import storage
from ..autograd.function import Op
from ..layout import laid_out_as, laid_out_like_inputs
from .activation import Softplus
from .elementwise import Div, MulNumber, _zeros, logit, operands


def _reduce(losses, reduction, *inputs, written_into_empty_like=None):
    """The per-element `losses` reduced; kept with reduction="none", laid out in memory like the
    loss's tensor `inputs` (arrays), as PyTorch's elementwise kernels lay them out (layout.py).
    A loss whose PyTorch kernel writes into `empty_like(input)` (huber_loss, binary_cross_entropy)
    passes that input as `written_into_empty_like`: its losses take input's layout exactly, the
    strides of its size-1 dims too, where they have input's shape."""
    like = written_into_empty_like
    if reduction == "none" and like is not None and losses.shape == like.shape:
        return laid_out_as(losses, like)
    if reduction == "none":
        return laid_out_like_inputs(losses, [array for array in inputs if array is not None])
    total = np.sum(losses)  # numpy gives a scalar, the CUDA backend a 0-d array: Op takes both
    if reduction == "sum":
        return total
    with np.errstate(invalid="ignore", divide="ignore"):  # the mean of nothing is nan, silently
        return total / losses.size


def _spread(grad, reduction, count):
    """The gradient of each element's loss, from the gradient of the reduced loss."""
    return grad * (1 / count if count else float("nan")) if reduction == "mean" else grad


class MulScalar(MulNumber):
    """`tensor * number` as PyTorch's C++ code records it (the Scalar overload): MulBackward1."""

    node_name = "MulBackward1"


class DivScalar(Div):
    """`tensor / number` as PyTorch's C++ code records it (the Scalar overload): DivBackward1."""

    node_name = "DivBackward1"


# ---- mean squared error -----------------------------------------------------------------------------


class MseLoss(Op):
    node_name = "MseLossBackward0"
    saved_names = ("self", "target")

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        x, t = operands(input, target)
        diff = x - t
        return _reduce(diff * diff, reduction, input._data, target._data)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        grad_input = MseLossGrad.apply(grad, input, target, reduction=ctx.reduction)
        return grad_input, -grad_input if ctx.needs_input_grad[1] else None


class MseLossGrad(Op):
    """mse_loss's backward, 2·(input - target)·grad (/ count for "mean"), as one op."""

    node_name = "MseLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, target, reduction):
        ctx.save_for_backward(grad, input, target)
        ctx.reduction = reduction
        x, t = operands(input, target)
        count = x.size
        scale = (2 / count if count else float("nan")) if reduction == "mean" else 2.0
        return (x - t) * (grad._data * scale)

    @staticmethod
    def backward(ctx, grad2):
        grad, input, target = ctx.saved_tensors
        count = input._data.size
        grad2 = _spread(grad2, ctx.reduction, count) * 2.0
        grad_grad = grad_input = None
        if ctx.needs_input_grad[0]:  # linear in grad: the adjoint sums back what forward spread
            # a bool side counts as 0 or 1: PyTorch's kernel converts it, our `-` refuses bools
            if not target.is_floating_point():
                target = target.to(input.dtype)
            if not input.is_floating_point():
                input = input.to(target.dtype)
            grad_grad = grad2 * (input - target)
            grad_grad = grad_grad if ctx.reduction == "none" else grad_grad.sum()
        if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
            grad_input = grad2 * grad
        grad_target = -grad_input if ctx.needs_input_grad[2] else None
        return grad_grad, grad_input if ctx.needs_input_grad[1] else None, grad_target


# ---- Huber and smooth L1 ------------------------------------------------------------------------


def _huber_losses(ctx, input, target, reduction, delta):
    """The Huber loss of each element (numpy); saves what the backward needs."""
    ctx.save_for_backward(input, target)
    ctx.reduction, ctx.delta = reduction, delta
    x, t = operands(input, target)
    diff = x - t
    absolute = np.abs(diff)
    losses = np.where(absolute < delta, 0.5 * diff * diff, delta * (absolute - 0.5 * delta))
    return losses.astype(diff.dtype, copy=False)


def _huber_grads(ctx, grad, scale):
    """clamp(input - target, -delta, delta)·scale times the gradient of each element's loss."""
    input, target = ctx.saved_tensors
    # a bool side counts as 0/1 (the loss's kernel promotes it; the `-` operator refuses bools)
    if input._data.dtype == np.bool_:
        input = input.to(target.dtype)
    if target._data.dtype == np.bool_:
        target = target.to(input.dtype)
    spread = _spread(grad, ctx.reduction, input._data.size)
    grad_input = HuberLossGrad.apply(spread, input, target, ctx.delta, scale)
    # PyTorch computes the target's gradient with the roles swapped (so +0.0 where d = 0, not -0.0)
    grad_target = HuberLossGrad.apply(spread, target, input, ctx.delta, scale)
    return grad_input, grad_target if ctx.needs_input_grad[1] else None


class HuberLossGrad(Op):
    """huber_loss's (and smooth_l1_loss's) backward as one op, PyTorch's `huber_loss_backward`:
    grad·clamp(input - target, -delta, delta)·scale. Its own derivative is grad·scale where
    |input - target| < delta and 0 elsewhere, a mask multiplied in (not chosen with where), so a
    NaN in the incoming gradient stays NaN as in PyTorch."""

    node_name = "HuberLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, target, delta, scale):
        ctx.save_for_backward(grad, input, target)
        ctx.delta, ctx.scale = delta, scale
        g = grad._data
        slope = np.clip(input._data - target._data, -delta, delta)
        if scale != 1.0:
            slope = slope * scale
        return (g * slope).astype(np.result_type(g, slope), copy=False)

    @staticmethod
    def backward(ctx, grad2):
        grad, input, target = ctx.saved_tensors
        delta, scale = ctx.delta, ctx.scale
        d_grad = HuberLossGrad.apply(grad2, input, target, delta, scale)
        inside = ((input - target).abs() < delta).to(grad.dtype)  # 0 on the linear pieces
        d_input = grad2 * grad * inside
        if scale != 1.0:
            d_input = d_input * scale
        return d_grad, d_input, -d_input, None, None


class HuberLoss(Op):
    """Squared near the target, absolute far from it: with d = input - target,
    ½d² where |d| < delta, else delta·(|d| - ½delta). The two pieces meet at |d| = delta with
    the same value and slope, so the gradient, clamp(d, -delta, delta), has no jump: a large
    error pulls with a bounded force (robust to outliers), a small one as in mse_loss."""

    node_name = "HuberLossBackward0"
    saved_names = ("self", "target")

    @staticmethod
    def forward(ctx, input, target, reduction, delta):
        # computed in the promoted dtype, kept in the input's (mse_loss and smooth_l1_loss promote)
        losses = _huber_losses(ctx, input, target, reduction, delta)
        losses = losses.astype(input._data.dtype, copy=False)
        x, t = input._data, target._data
        return _reduce(losses, reduction, x, t, written_into_empty_like=x)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        if input.dtype != target.dtype:  # PyTorch's backward kernel takes one dtype only
            raise RuntimeError(
                f"Found dtype {target.dtype} but expected {input.dtype}: huber_loss computes a "
                "loss for a target of another dtype, but its backward needs the target in the "
                "input's dtype, as in PyTorch. Fix: convert the target first, e.g. "
                "F.huber_loss(input, target.to(input.dtype))."
            )
        return _huber_grads(ctx, grad, 1.0)


class SmoothL1Loss(Op):
    """The Huber loss divided by its threshold (here called beta): ½d²/beta where |d| < beta,
    else |d| - ½beta; its gradient is clamp(d / beta, -1, 1)."""

    node_name = "SmoothL1LossBackward0"
    saved_names = ("self", "target")

    @staticmethod
    def forward(ctx, input, target, reduction, beta):
        losses = _huber_losses(ctx, input, target, reduction, beta)
        losses = losses / losses.dtype.type(beta)
        return _reduce(losses, reduction, input._data, target._data)

    @staticmethod
    def backward(ctx, grad):
        return _huber_grads(ctx, grad, 1 / ctx.delta)


# ---- binary cross-entropy ---------------------------------------------------------------------------


_EPSILON = float(np.float32(1e-12))  # PyTorch's bound, a float32 constant (9.9999999600e-13)


class BinaryCrossEntropy(Op):
    """-w·(t·log(x) + (1 - t)·log(1 - x)), each log clamped at -100 as PyTorch does (no -inf)."""

    node_name = "BinaryCrossEntropyBackward0"
    saved_names = ("self", "target")

    @staticmethod
    def forward(ctx, input, target, weight, reduction):
        ctx.save_for_backward(input, target)
        ctx.weight, ctx.reduction = weight, reduction
        x, t = input._data, target._data
        with np.errstate(divide="ignore"):
            log_x, log_rest = np.maximum(np.log(x), -100), np.maximum(np.log1p(-x), -100)
        losses = (t - 1) * log_rest - t * log_x
        losses = losses if weight is None else losses * weight._data
        return _reduce(losses, reduction, x, t, written_into_empty_like=x)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:  # one op, so its own gradient is PyTorch's (below)
            grad_input = BinaryCrossEntropyGrad.apply(
                grad, input, target, weight=ctx.weight, reduction=ctx.reduction
            )
        if ctx.needs_input_grad[1]:  # -logit(x) = log(1 - x) - log(x), as PyTorch takes it: not
            # clamped like the loss's logs, so it is +inf at x = 0 and -inf at x = 1
            grad_target = _weighted_mean(-logit(input) * grad, ctx)
        return grad_input, grad_target


class BinaryCrossEntropyGrad(Op):
    """binary_cross_entropy's input gradient as one op (PyTorch's `binary_cross_entropy_backward`):
    grad·(x - t) / (x (1 - x)), the denominator kept >= 1e-12. Its own gradients (a second
    derivative) are PyTorch's formulas, which keep x and 1 - x away from 0 by adding 1e-12 to each
    instead: the exact derivative of the clamped slope differs from them in the 7th digit where x
    is near 0 or 1."""

    node_name = "BinaryCrossEntropyBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, target, weight, reduction):
        ctx.save_for_backward(grad, input, target)
        ctx.weight, ctx.reduction = weight, reduction
        g, x, t = grad._data, input._data, target._data
        slope = g * (x - t) / np.maximum(x * (1 - x), x.dtype.type(_EPSILON))
        if weight is not None:
            slope = slope * weight._data
        return slope / slope.size if reduction == "mean" else slope

    @staticmethod
    def backward(ctx, grad2):
        grad, x, t = ctx.saved_tensors
        eps = 1e-12
        d_grad = d_x = d_t = None
        if ctx.needs_input_grad[0]:  # the slope (x - t) / ((x + eps)(1 - x + eps))
            d_grad = _weighted_mean((x - t) / ((x + eps) * (1 - x + eps)), ctx) * grad2
        if ctx.needs_input_grad[1]:  # the slope's own slope, (x² - 2xt + t) / (x² (1 - x)²)
            curvature = (x * x - 2 * x * t + t) / ((x + eps) ** 2 * (1 - x + eps) ** 2)
            d_x = _weighted_mean(curvature * (grad2 * grad), ctx)
        if ctx.needs_input_grad[2]:  # -1 / (x (1 - x)), clamped as the first derivative is
            d_t = -grad2 * grad
            if ctx.weight is not None:
                d_t = d_t * ctx.weight
            d_t = d_t / ((1 - x) * x).clamp(min=eps)  # (1e-12 exactly here, in PyTorch too)
            d_t = d_t / d_t.numel() if ctx.reduction == "mean" else d_t
        return d_grad, d_x, d_t


def _weighted_mean(grad, ctx):
    """The gradient of each element's loss times its weight, divided by the count for "mean":
    in PyTorch's order (a per-element slope times grad first), so float32 results match it."""
    if ctx.weight is not None:
        grad = grad * ctx.weight
    return grad / grad.numel() if ctx.reduction == "mean" else grad


class BinaryCrossEntropyWithLogits(Op):
    """binary_cross_entropy(sigmoid(x), t) computed from x directly, so it never overflows:
    (1 - t)·x + (1 + (pos_weight - 1)·t)·softplus(-x), where softplus(-x) = log(1 + e^-x)."""

    node_name = "BinaryCrossEntropyWithLogitsBackward0"
    saved_names = ("self", "target")

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        ctx.save_for_backward(input, target)
        ctx.weight, ctx.pos_weight, ctx.reduction = weight, pos_weight, reduction
        # as PyTorch: log(sigmoid(x)) in the input's dtype, the loss in the target's dtype
        x, t = input._data, target._data
        softplus = np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))
        if pos_weight is not None:
            softplus = softplus * ((pos_weight._data - 1) * t + 1)
        losses = ((1 - t) * x + softplus).astype(t.dtype, copy=False)
        if weight is not None:
            losses = (losses * weight._data).astype(t.dtype, copy=False)
        return _reduce(losses, reduction, t, x)  # (PyTorch's formula starts from the target)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        pos_weight = ctx.pos_weight
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            if pos_weight is None:
                slope = input.sigmoid() - target
            else:  # d/dx of (1 - t)·x + c·softplus(-x), c = 1 + (pos_weight - 1)·t, written
                # as PyTorch does: (p·t + 1 - t)·sigmoid(x) - p·t, so an infinite pos_weight
                # gives its nan (inf - inf, or inf · 0 where t = 0) as PyTorch's
                weighted_target = pos_weight * target
                slope = (weighted_target + 1 - target) * input.sigmoid() - weighted_target
            grad_input = _weighted_mean(slope * grad, ctx)
        if ctx.needs_input_grad[1]:
            if pos_weight is None:
                slope = -input
            else:  # log σ(-x) - p·log σ(x) as PyTorch writes it (log σ(x) = -softplus(-x)):
                # softplus's slope is σ, smooth at x = 0, where max(-x, 0) and |x| have kinks
                slope = pos_weight * Softplus.apply(-input) - Softplus.apply(input)
            grad_target = _weighted_mean(slope * grad, ctx)
        return grad_input, grad_target


# ---- negative log-likelihood ------------------------------------------------------------------------


class NllPlan:
    """What nll_loss needs besides its input, worked out once from the target.

    The loss picks, for each target element, the input's value at the target class along
    `class_axis`, times a coefficient: the class weight, 0 where target == ignore_index (one
    number for all when every weight is 1). For "mean" the weighted sum is divided by the sum of
    the coefficients, `total`, so the loss is a weighted mean. (Divided after summing, as PyTorch
    does: a sum beyond the dtype's range is inf, as PyTorch's is, even where the mean is not.)
    """

    def __init__(self, target, weight, ignore_index, reduction, shape, dtype):
        class_axis = 0 if len(shape) == 1 else 1  # shape: the scores', classes along class_axis
        kept = None if ignore_index is None else target != ignore_index  # None: nothing ignored
        everything_kept = kept is None or bool(kept.all())
        index = target if everything_kept else np.where(kept, target, 0)  # 0: any valid class
        if weight is None and everything_kept:
            coefficients, total = np.ones((), dtype), target.size
        else:
            if weight is None:
                coefficients = kept.astype(dtype)
            elif weight.size == 0:  # no classes, so every target is ignored: each counts 0
                coefficients = np.zeros(target.shape, dtype)
            else:
                coefficients = weight[index]
            coefficients = coefficients if everything_kept else np.where(kept, coefficients, 0)
            coefficients = coefficients.astype(dtype, copy=False)
            total = coefficients.sum()
        # "mean" with weights that sum to 0 is 0/0, nan; so is the gradient of a kept target
        # (0 · (grad / 0)), but an ignored one gets 0 (PyTorch skips it)
        self.undefined = reduction == "mean" and not total
        self.total = coefficients.dtype.type(total) if reduction == "mean" else None
        self.coefficients, self.class_axis, self.reduction = coefficients, class_axis, reduction
        # where targets are ignored, loss and gradient are set to 0 (not computed as -x·0, which
        # is -0, or nan for an infinite x), as PyTorch skips those elements
        self.kept = None if everything_kept else kept
        self.target_shape = target.shape
        if target.ndim <= 1:  # (C,) or (N, C) scores: positions in the flattened scores (fastest)
            rows = storage.new(np.arange, target.size, device=storage.device_of(target)) * shape[-1]
            self.positions = index if target.ndim == 0 else rows + index
        else:
            self.positions, self.index = None, np.expand_dims(index, class_axis)

    def gather(self, x):
        if x.size == 0:  # no classes (so every target is ignored) or no samples: nothing to pick
            picked = np.zeros_like(x, shape=self.target_shape)
        elif self.positions is not None:
            picked = np.take(x, self.positions)
        else:
            picked = np.take_along_axis(x, self.index, self.class_axis).squeeze(self.class_axis)
        scaled = picked * self.coefficients
        # one sample (a 0-d target): PyTorch subtracts from a zero total, so a zero loss is +0.0
        losses = 0 - scaled if self.target_shape == () else -scaled
        if self.kept is not None:
            losses = np.where(self.kept, losses, losses.dtype.type(0))
        if self.reduction == "none":
            return losses
        # a sum beyond the dtype's range is inf, and 0 / 0 nan, silently
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            total = losses.sum()
            return total if self.total is None else total / self.total

    @np.errstate(divide="ignore", invalid="ignore")  # grad / 0 (weights summing to 0): silently
    def scatter(self, grad, shape):
        # in PyTorch's order: the incoming gradient divided by the total first (for "mean")
        values = self.coefficients * -(grad if self.total is None else grad / self.total)
        if self.kept is not None:
            values = np.where(self.kept, values, values.dtype.type(0))
        out = np.zeros_like(values, self.coefficients.dtype, shape=shape)  # on grad's device
        if out.size == 0:  # nothing was picked, so there is nothing to put back
            return out
        if self.positions is not None:
            np.put(out, self.positions, values)
        else:
            values = np.broadcast_to(values, self.target_shape)  # coefficient and grad may be 0-d
            np.put_along_axis(
                out, self.index, np.expand_dims(values, self.class_axis), self.class_axis
            )
        return out


class NllLoss(Op):
    """-input[target] (times the class weight), reduced. Linear in the input, so its backward
    (NllLossGrad: put -weight·grad at each target) and this forward are each other's adjoints."""

    node_name = "NllLossBackward0"
    saved_names = ("self",)  # as PyTorch: not for its values, for NllLossGrad's edge back to it

    @staticmethod
    def forward(ctx, input, plan, primal=True):
        ctx.plan = plan
        ctx.save_for_backward(input)
        if primal and plan.undefined:
            return np.full_like(input._data, np.nan, shape=())
        return plan.gather(input._data)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return NllLossGrad.apply(grad, input, plan=ctx.plan)


class NllLoss2d(NllLoss):
    """nll_loss of an (N, C, H, W) input, under PyTorch's name for that case."""

    node_name = "NllLoss2DBackward0"


class NllLossGrad(Op):
    """nll_loss's backward. It takes the input too, as PyTorch's nll_loss_backward does: the
    gradient does not depend on it (its derivative there is 0), but a second backward must reach
    the input with zeros, not leave it unused."""

    node_name = "NllLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, plan):
        ctx.plan, ctx.shape = plan, input._data.shape
        return plan.scatter(grad._data, ctx.shape)

    @staticmethod
    def backward(ctx, grad2):
        d_grad = NllLoss.apply(grad2, plan=ctx.plan, primal=False)
        return d_grad, _zeros(ctx.shape, grad2)
