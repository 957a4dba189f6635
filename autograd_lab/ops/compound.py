"""PyTorch's compound elementwise ops: addcmul, addcdiv, lerp — the vocabulary of optimizers.

    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)   # Adam's second moment
    param.addcdiv_(exp_avg, denom, value=-step_size)                 # Adam's update

Each is one node, as in PyTorch (`AddcmulBackward0`, ...); gradients of broadcast inputs are summed
back to their shapes by the engine, like every other op's.
"""

import numpy as np

from .. import promotion, types
from ..autograd.function import Op
from ..tensor import Tensor
from . import scalar
from .elementwise import NumberOverTensor, check_broadcastable
from .registry import public


class Addcmul(Op):
    """input + value * tensor1 * tensor2"""

    node_name = "AddcmulBackward0"
    saved_names = ("tensor1", "tensor2")
    kernel = staticmethod(
        lambda input, tensor1, tensor2, value=1, dtype=None: input + value * tensor1 * tensor2
    )
    derivative = "d/d(input) = 1,  d/d(tensor1) = value * tensor2,  d/d(tensor2) = value * tensor1"

    @staticmethod
    @np.errstate(over="ignore", invalid="ignore")  # overflow to inf, and inf * 0 = nan, silently
    def forward(ctx, input, tensor1, tensor2, value=1, dtype=None):
        ctx.value = value
        # each is saved only for the other's gradient, so only where that one is needed (as in
        # PyTorch: changing tensor1 in place is then allowed when tensor2 needs no gradient)
        _, needs_t1, needs_t2 = ctx.needs_input_grad
        ctx.save_for_backward(tensor1 if needs_t2 else None, tensor2 if needs_t1 else None)
        x, t1, t2 = _in_dtype(dtype, input, tensor1, tensor2)
        # (value * t1) * t2, in PyTorch's order: value * t1 may overflow to inf, and inf * 0 is
        # nan, where value * (t1 * t2) would be 0
        return x + value * t1 * t2

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        # grouped as PyTorch groups them (derivatives.yaml), so the same rounding comes out
        grad_t1 = grad * (t2 * ctx.value) if t2 is not None else None
        return grad, grad_t1, grad * (t1 * ctx.value) if t1 is not None else None


class Addcdiv(Op):
    """input + value * tensor1 / tensor2"""

    node_name = "AddcdivBackward0"
    saved_names = ("tensor1", "tensor2")
    kernel = staticmethod(
        lambda input, tensor1, tensor2, value=1, dtype=None: input + value * tensor1 / tensor2
    )
    derivative = "d/d(input) = 1,  d/d(tensor1) = value / tensor2,  d/d(tensor2) = -value * tensor1 / tensor2²"

    @staticmethod
    @np.errstate(divide="ignore", invalid="ignore", over="ignore")  # x/0 = inf, silently
    def forward(ctx, input, tensor1, tensor2, value=1, dtype=None):
        ctx.value = value
        # tensor1 is needed only for tensor2's gradient; tensor2 for both, so PyTorch always keeps
        # it (changing it in place before backward is refused even when only input needs a grad)
        ctx.save_for_backward(tensor1 if ctx.needs_input_grad[2] else None, tensor2)
        x, t1, t2 = _in_dtype(dtype, input, tensor1, tensor2)
        return x + value * t1 / t2  # (value * t1) / t2, in PyTorch's order (as addcmul)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        _, needs_t1, needs_t2 = ctx.needs_input_grad
        value = ctx.value
        # grouped as PyTorch groups them (derivatives.yaml), so the same rounding (and, where
        # tensor2 is 0 or huge, the same nan and inf) comes out: d(t1/t2)/dt2 = -t1/t2²
        grad_t1 = grad * NumberOverTensor.apply(t2, number=value) if needs_t1 else None
        return grad, grad_t1, -grad * (value * t1 / (t2 * t2)) if needs_t2 else None


def _lerp(input, end, weight):
    """input + weight·(end - input), computed as PyTorch does: from the nearer end, so weight 1
    gives end exactly, and an infinite input or end spreads as in PyTorch."""
    from_input = input + weight * (end - input)
    from_end = end - (end - input) * (1 - weight)
    return scalar.where(abs(weight) < 0.5, from_input, from_end)


class Lerp(Op):
    """input + weight * (end - input), a number weight (PyTorch's LerpBackward0)"""

    node_name = "LerpBackward0"
    kernel = staticmethod(_lerp)
    derivative = "d/d(input) = 1 - weight,  d/d(end) = weight"

    @staticmethod
    @np.errstate(invalid="ignore")  # inf - inf in the branch not taken
    def forward(ctx, input, end, weight):
        ctx.weight = weight
        return _lerp(input._data, end._data, weight).astype(input._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return grad * (1 - ctx.weight), grad * ctx.weight


class LerpTensor(Op):
    """input + weight * (end - input), a tensor weight (PyTorch's LerpBackward1)"""

    node_name = "LerpBackward1"
    saved_names = ("self", "end", "weight")
    kernel = staticmethod(
        lambda input, end, weight, bool_weight=False, dtype=None: _lerp(input, end, weight)
    )
    derivative = "d/d(input) = 1 - weight,  d/d(end) = weight,  d/d(weight) = end - input"

    @staticmethod
    @np.errstate(invalid="ignore")  # inf - inf in the branch not taken
    def forward(ctx, input, end, weight, bool_weight=False, dtype=None):
        ctx.bool_weight = bool_weight
        needs_input, needs_end, needs_weight = ctx.needs_input_grad
        # as PyTorch, save input and end (read by weight's gradient only) only when that gradient
        # is needed: an in-place change of them is then no error. weight, read by two gradients,
        # PyTorch always saves, so changing it in place before backward is refused even where no
        # gradient is needed (x.lerp_(end, x) with an end that leads nowhere)
        ctx.save_for_backward(
            input if needs_weight else None,
            end if needs_weight else None,
            weight,
        )
        if dtype is None:
            return _lerp(input._data, end._data, weight._data)
        return _lerp(*_in_dtype(dtype, input, end, weight))

    @staticmethod
    def backward(ctx, grad):
        input, end, weight = ctx.saved_tensors
        needs_input, needs_end, needs_weight = ctx.needs_input_grad
        if needs_input and ctx.bool_weight:
            # PyTorch keeps a 0-d bool weight as it is, and its `1 - weight` fails on bools
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported: the "
                "gradient of lerp for input is grad * (1 - weight), and this weight is a bool "
                "tensor. Fix: give lerp a float weight, e.g. weight.float()."
            )
        grad_input = grad * (1 - weight) if needs_input else None
        grad_end = grad * weight if needs_end else None
        grad_weight = grad * (end - input) if needs_weight else None
        return grad_input, grad_end, grad_weight


def _operands(name, **tensors):
    """The tensors of addcmul/addcdiv in PyTorch's common dtype over all of them (a 0-d float64
    tensor does not widen float32 tensors); PyTorch takes no Python numbers in their place."""
    for position, (argument, value) in enumerate(tensors.items(), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{name}(): argument '{argument}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}. Fix: make it a tensor, e.g. torch.tensor(value), or "
                "use the value= argument for a number."
            )
    check_broadcastable(*[t.shape for t in tensors.values()])
    return promotion.common_dtype(*tensors.values()), list(tensors.values())


def _in_dtype(dtype, *tensors):
    """The tensors' arrays in the common dtype (its numpy name, "float32": a plain string, so the
    fusion compiler still fuses the op). The op computes in it, but keeps (and its backward uses)
    the tensors as they were, as PyTorch does: a float64 tensor1 times a float32 input saves
    tensor1 in float64, so the gradient's rounding is PyTorch's."""
    dtype = np.dtype(dtype)
    return [t._data if t._data.dtype == dtype else t._data.astype(dtype) for t in tensors]


def _value_in(dtype, value):
    """`value` as the result's dtype takes it: an integer result truncates 2.5 to 2, as PyTorch."""
    if dtype.is_floating_point:
        return value
    promotion.check_fits("value", value, dtype)  # (before int(): inf does not fit either)
    return int(value)


@public("addcmul", method=True, inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2, as one op."""
    dtype, tensors = _operands("addcmul", input=input, tensor1=tensor1, tensor2=tensor2)
    if dtype is types.bool_:
        raise types.not_implemented_for("addcmul", dtype)
    return Addcmul.apply(*tensors, value=_value_in(dtype, value), dtype=dtype.numpy.name)


@public("addcdiv", method=True, inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2, as one op."""
    dtype, tensors = _operands("addcdiv", input=input, tensor1=tensor1, tensor2=tensor2)
    if not (tensor1.is_floating_point() or tensor2.is_floating_point()):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported: tensor1 and tensor2 are "
            f"{tensor1.dtype} and {tensor2.dtype}, and PyTorch will not guess between a whole-"
            "number and a true division. Fix: for true division, make one of them float "
            "(tensor1.float()); for floor division, use input + value * (tensor1 // tensor2)."
        )
    return Addcdiv.apply(*tensors, value=_value_in(dtype, value), dtype=dtype.numpy.name)


@public("lerp", method=True, inplace=True)
def lerp(input, end, weight):
    """Linear interpolation input + weight * (end - input); `weight` a number or a tensor.
    Unlike most ops, PyTorch's lerp does not promote: its tensors must share one dtype. A 0-d
    weight tensor is the exception: PyTorch takes it as a number that still takes part in the
    promotion (two int tensors and a 0-d float weight give float32)."""
    _check_same_dtype("end", end, input)
    shapes = [t.shape for t in (input, end, weight) if isinstance(t, Tensor)]
    check_broadcastable(*shapes)
    if isinstance(weight, Tensor) and weight.dim() == 0:
        dtype = promotion.common_dtype(input, end, weight)
        types.floating_point_only("lerp", dtype)
        # computed in that dtype, but saved as they are (as PyTorch does): x.lerp_(x, w) saves
        # x itself as `end`, so changing it in place (the lerp_ itself) is caught in backward
        bool_weight = weight.dtype is types.bool_
        return LerpTensor.apply(input, end, weight, bool_weight=bool_weight, dtype=dtype.numpy.name)
    if isinstance(weight, Tensor):
        _check_same_dtype("weight", weight, input)
    types.floating_point_only("lerp", input.dtype)
    if isinstance(weight, Tensor):
        return LerpTensor.apply(input, end, weight)
    return Lerp.apply(input, end, weight=float(weight))


def _check_same_dtype(argument, value, input):
    """lerp's tensors must be tensors of input's dtype, as PyTorch requires."""
    if not isinstance(value, Tensor):
        raise TypeError(
            f"lerp(): argument '{argument}' must be a Tensor, not {type(value).__name__}. Fix: "
            "make it a tensor of input's dtype, e.g. torch.full_like(input, value)."
        )
    if value.dtype is not input.dtype:
        raise RuntimeError(
            f"expected dtype {input.dtype} for `{argument}` but got dtype {value.dtype}: lerp "
            f"does not promote dtypes. Fix: convert it, e.g. {argument}.to(input.dtype)."
        )
