"""Parameter: a Tensor that a Module registers as one of its learnable weights.

    >>> import autograd_lab as ag
    >>> w = ag.nn.Parameter(ag.zeros(2))
    >>> w
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    >>> type(w * 2).__name__
    'Tensor'

A Parameter is an ordinary Tensor in every computation (`w * 2` is a plain Tensor, and `w.grad`
accumulates as for any leaf); the subclass only tells a Module "this is a weight": assigning one to
a module attribute registers it, so `model.parameters()` hands it to the optimizer.
"""

from ..creation import empty
from ..tensor import Tensor, _make, init


class Parameter(Tensor):
    """`Parameter(data=None, requires_grad=True)`: a leaf tensor sharing `data`'s storage."""

    __slots__ = ()  # the Tensor's slots are enough: a Parameter carries no extra state

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(data) expects a Tensor, got {type(data).__name__}. Fix: make a tensor "
                "first, e.g. nn.Parameter(torch.tensor([1.0, 2.0]))."
            )
        # Same storage and version counter as `data`, but a leaf: a Parameter starts a new graph.
        init(self, data._data, requires_grad)
        self._version_counter = data._shared_version_counter()

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        # As in PyTorch: the copy is a Parameter with its own copy of the values; .grad is not copied.
        result = Parameter(self.detach().clone(), self._requires_grad)
        memo[id(self)] = result
        return result

    def __reduce__(self):  # pickling gives back a Parameter, not a plain Tensor
        return (_rebuild_parameter, (self._data, self._requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(_make(data), requires_grad)
