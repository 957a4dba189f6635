"""PyTorch's compound elementwise ops: addcmul, addcdiv, lerp — the vocabulary of optimizers.

    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)   # Adam's second moment
    param.addcdiv_(exp_avg, denom, value=-step_size)                 # Adam's update

Each is one node, as in PyTorch (`AddcmulBackward0`, ...); gradients of broadcast inputs are summed
back to their shapes by the engine, like every other op's.
"""

import numpy as np

from .. import types
from ..autograd.function import Op
from ..tensor import Tensor, _make
from .elementwise import check_broadcastable
from .registry import public


class Addcmul(Op):
    """input + value * tensor1 * tensor2"""

    node_name = "AddcmulBackward0"
    saved_names = ("tensor1", "tensor2")
    kernel = staticmethod(
        lambda input, tensor1, tensor2, value=1: input + value * (tensor1 * tensor2)
    )
    derivative = "d/d(input) = 1,  d/d(tensor1) = value * tensor2,  d/d(tensor2) = value * tensor1"

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value=1):
        ctx.value = value
        ctx.save_for_backward(tensor1, tensor2)
        return input._data + value * (tensor1._data * tensor2._data)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        return grad, grad * t2 * ctx.value, grad * t1 * ctx.value


class Addcdiv(Op):
    """input + value * tensor1 / tensor2"""

    node_name = "AddcdivBackward0"
    saved_names = ("tensor1", "tensor2")
    kernel = staticmethod(
        lambda input, tensor1, tensor2, value=1: input + value * (tensor1 / tensor2)
    )
    derivative = "d/d(input) = 1,  d/d(tensor1) = value / tensor2,  d/d(tensor2) = -value * tensor1 / tensor2²"

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value=1):
        ctx.value = value
        ctx.save_for_backward(tensor1, tensor2)
        return input._data + value * (tensor1._data / tensor2._data)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        g = grad * ctx.value / t2
        return grad, g, -g * t1 / t2  # d(t1/t2)/dt2 = -t1/t2²


class Lerp(Op):
    """input + weight * (end - input), a number weight (PyTorch's LerpBackward0)"""

    node_name = "LerpBackward0"
    kernel = staticmethod(lambda input, end, weight: input + weight * (end - input))
    derivative = "d/d(input) = 1 - weight,  d/d(end) = weight"

    @staticmethod
    def forward(ctx, input, end, weight):
        ctx.weight = weight
        return input._data + weight * (end._data - input._data)

    @staticmethod
    def backward(ctx, grad):
        return grad * (1 - ctx.weight), grad * ctx.weight


class LerpTensor(Op):
    """input + weight * (end - input), a tensor weight (PyTorch's LerpBackward1)"""

    node_name = "LerpBackward1"
    saved_names = ("self", "end", "weight")
    kernel = staticmethod(lambda input, end, weight: input + weight * (end - input))
    derivative = "d/d(input) = 1 - weight,  d/d(end) = weight,  d/d(weight) = end - input"

    @staticmethod
    def forward(ctx, input, end, weight):
        ctx.save_for_backward(input, end, weight)
        return input._data + weight._data * (end._data - input._data)

    @staticmethod
    def backward(ctx, grad):
        input, end, weight = ctx.saved_tensors
        return grad * (1 - weight), grad * weight, grad * (end - input)


def _tensors(name, *values):
    """Numbers become tensors of the first tensor's dtype; tensors are promoted to a common dtype."""
    like = next(v for v in values if isinstance(v, Tensor))
    tensors = [
        v if isinstance(v, Tensor) else _make(np.asarray(v, like._data.dtype)) for v in values
    ]
    dtype = tensors[0]._data.dtype
    for t in tensors[1:]:
        dtype = types.result_type(np.empty(0, dtype), t._data)
    if dtype.kind != "f":
        raise RuntimeError(
            f"{name}() works on floating-point tensors, got {types.of_array(like._data)}. Fix: "
            "convert first, e.g. x.float()."
        )
    check_broadcastable(*[t.shape for t in tensors])
    return [t if t._data.dtype == dtype else t.to(types.to_dtype(dtype)) for t in tensors]


@public("addcmul", method=True, inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2, as one op."""
    return Addcmul.apply(*_tensors("addcmul", input, tensor1, tensor2), value=value)


@public("addcdiv", method=True, inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2, as one op."""
    return Addcdiv.apply(*_tensors("addcdiv", input, tensor1, tensor2), value=value)


@public("lerp", method=True, inplace=True)
def lerp(input, end, weight):
    """Linear interpolation input + weight * (end - input); `weight` a number or a tensor."""
    if isinstance(weight, Tensor):
        return LerpTensor.apply(*_tensors("lerp", input, end, weight))
    return Lerp.apply(*_tensors("lerp", input, end), weight=float(weight))
