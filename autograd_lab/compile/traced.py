"""The tensor class the tracer follows: it records what autograd does not.

Every tensor the tracer follows (the inputs' tracing copies and every result computed from them)
has its class switched to `TracedTensor`, a Tensor subclass that adds three things while tracing:
comparisons and logical ops (`x > 0`, `&`, `~`) become Calls of the graph (autograd never records
them: they are not differentiable), indexing with a traced tensor (`x[x > 0]`) becomes one call
replayed by indexing again, and reading a value into Python (`.item()`, `bool(t)`) warns with a
`TracerWarning`, because the number is baked into the graph.
"""

import warnings

from .. import ops
from ..autograd.function import Function
from ..ops import shape
from ..tensor import Tensor


class TracerWarning(Warning):
    """A traced function did something the graph cannot replay faithfully (NB: torch.jit's name)."""


class Compare(Function):
    """A comparison or logical op (`>`, `==`, `&`, `~`, ...) as a Call of the graph.

    Autograd never records these (their results are not differentiable), but a mask computed from
    an input changes with the input, so the tracer records them and `run` replays them.
    """

    node_name = "Compare"

    @classmethod
    def apply(cls, *args, op):
        return getattr(ops, op)(*args)


class WholeCall(Function):
    """A function recorded as ONE call and replayed by calling it again: `function(*args)`.

    For functions that read a tensor's values in Python before recording their ops (indexing
    with a tensor, nll_loss planning its gather from the target); replaying their inner ops
    would replay the old values.
    """

    node_name = "WholeCall"

    @classmethod
    def apply(cls, *args, function, **kwargs):
        return function(*args, **kwargs)


def _index_put(input, value, index):
    """`input[index] = value`, out of place (how a traced in-place index assignment replays)."""
    return shape.index_put(input, value, index)


_COMPARISONS = {"__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
                "__ge__": "ge", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt",
                "ge": "ge", "__and__": "logical_and", "__or__": "logical_or",
                "logical_and": "logical_and", "logical_or": "logical_or",
                "logical_xor": "logical_xor"}  # fmt: skip
_REFLECTED = {"__rand__": "logical_and", "__ror__": "logical_or"}
_TO_PYTHON = ("item", "tolist", "__bool__", "__float__", "__int__", "__index__")


class TracedTensor(Tensor):
    """The class of every tensor the tracer follows: it records comparisons and indexing with
    traced tensors, and warns when a value leaves the graph as a Python number."""

    __slots__ = ()
    __hash__ = Tensor.__hash__
    _tracer = None  # the Tracer running now (set on the class while tracing)


def _comparison(op):
    def compare(self, other):
        return self._tracer.record(
            Compare, (self, other), {"op": op}, lambda: getattr(ops, op)(self, other)
        )

    return compare


def _reflected(op):
    def compare(self, other):
        return self._tracer.record(
            Compare, (other, self), {"op": op}, lambda: getattr(ops, op)(other, self)
        )

    return compare


def _to_python(name):
    plain = getattr(Tensor, name)

    def read(self, *args):
        warnings.warn(
            f"{name}() read a traced tensor as a Python value: the graph keeps the value it had "
            "while tracing, and replays the branch or number that followed from it. The compiled "
            "function may give wrong results for other inputs. Fix: keep the computation in "
            "tensor ops (e.g. torch.where instead of if), or call the function uncompiled.",
            TracerWarning,
            stacklevel=2,
        )
        return plain(self, *args)

    return read


def _invert(self):
    return self._tracer.record(
        Compare, (self,), {"op": "logical_not"}, lambda: ops.logical_not(self)
    )


def _getitem(self, index):
    if not self._tracer.holds_traced(index):
        return shape.index(self, index)
    return self._tracer.record(WholeCall, (self, index), {"function": shape.index},
                               lambda: shape.index(self, index))  # fmt: skip


def _setitem(self, index, value):
    if not self._tracer.holds_traced(index):  # the value is a positional arg: recorded anyway
        return Tensor.__setitem__(self, index, value)

    def assign():
        Tensor.__setitem__(self, index, value)
        return self

    self._tracer.record(WholeCall, (self, value, index), {"function": _index_put}, assign)


for _name, _op in _COMPARISONS.items():
    setattr(TracedTensor, _name, _comparison(_op))
for _name, _op in _REFLECTED.items():
    setattr(TracedTensor, _name, _reflected(_op))
for _name in _TO_PYTHON:
    setattr(TracedTensor, _name, _to_python(_name))
TracedTensor.__invert__, TracedTensor.logical_not = _invert, _invert
TracedTensor.__getitem__, TracedTensor.__setitem__ = _getitem, _setitem
