"""trace(fn, *example_inputs): run fn once and write down every operation it did, as a Graph.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace
    >>> trace(lambda x, y: (x + y).exp(), ag.ones(2), ag.ones(2))
    graph(%0: float32[2], %1: float32[2]):
      %2 = add(%0, %1)
      %3 = exp(%2)
      return %3

How: fn runs on fresh leaf copies of the inputs that require grad, inside
`autograd.observe(on_call=...)`, so autograd records every operation that touches an input and
hands the tracer its node, outputs and arguments. Integer inputs (class targets, indices) cannot
require grad, so the tracer sets the private flag `_requires_grad` on their tracing copies (and on
integer results computed from them): only then does autograd record the ops that use them. Tensors
fn reads that are not inputs (parameters, constant tensors) become constant Values. An op on
constants only (`w.t()` of a parameter) is still a call of the graph, replayed every time, not
folded into a constant: a parameter changes between calls (optimizer steps) and needs gradients.

What a trace cannot see (NB: torch.jit.trace has the same limits):
- Python control flow is recorded as the branch taken: `if x.sum() > 0:` picks one path for good.
  Reading a traced tensor as a Python value (`.item()`, `bool(t)`, `float(t)`, `.tolist()`) warns
  with a `TracerWarning`, because the number is baked into the graph as a constant.
- Work done under `no_grad()` inside fn, or by numpy on `t.detach().numpy()`, is a constant; so
  is an op whose only traced tensor is a keyword (`where(x > 0, 1.0, 0.0)`: autograd records ops
  by their positional tensors; write `where(x > 0, x * 0 + 1, x * 0)` to keep it in the graph).
- backward() inside fn is refused: compile the forward, call backward on its result.
- Random tensors fn makes itself (`randn(...)`) are constants: pass them in as inputs.
Comparisons (`x > 0`, `&`, `~`), which autograd never records, and indexing with a tensor computed
from the inputs (`x[x > 0]`) are recorded by the tracer itself, so masks follow new inputs.
nll_loss / cross_entropy with an integer target that is an input are recorded as one call (their
target is read in Python to plan the gather), so new targets give new losses; so is dropout, so
every call draws a new mask; so are embedding, one_hot and max_pool2d (they read indices or
maxima in Python) and batch_norm (it updates the running statistics in place).
"""

import threading
import warnings

import numpy as np

from .. import ops
from ..autograd.function import Function
from ..autograd.grad_mode import _state
from ..autograd.graph import observe
from ..nn import functional as F
from ..ops import shape
from ..random import default_generator
from ..tensor import Tensor, _make
from .ir import Call, Graph, Value, map_values

# Functions of nn.functional recorded as one call (see whole_function), and when: the losses when
# an integer tensor (the target) is traced, as they read it in Python to plan their gather;
# dropout always, as it draws its mask in Python, which must be new on every call. So are the nn
# functions that read values in Python (where the maxima are, which rows to look up) and those
# that update buffers in place (batch norm's running statistics and batch count: "stateful", run
# on copies of the buffers while tracing, so that the first call does not count twice).
_WHOLE_FUNCTIONS = {
    "nll_loss": "integer",
    "cross_entropy": "integer",
    "dropout": "any",
    "embedding": "integer",
    "one_hot": "any",
    "max_pool2d": "any",
    "batch_norm": "stateful",
    "_batch_norm_layer": "stateful",
}
# one trace at a time: tracing swaps these functions of nn.functional. Reentrant: finding a fusion
# rule traces an op's backward (compile/rules.py), maybe while a function calling a compiled one
# is being traced itself.
_lock = threading.RLock()


# ---- the tensor the tracer follows ---------------------------------------------------------------
# Every tensor the tracer follows (the inputs' tracing copies and every result computed from them)
# has its class switched to `TracedTensor`, a Tensor subclass that adds three things while tracing:
# comparisons and logical ops (`x > 0`, `&`, `~`) become Calls of the graph (autograd never records
# them: they are not differentiable), indexing with a traced tensor (`x[x > 0]`) becomes one call
# replayed by indexing again, and reading a value into Python (`.item()`, `bool(t)`) warns with a
# `TracerWarning`, because the number is baked into the graph.


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


_COMPARISONS = {
    "__eq__": "eq",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "eq": "eq",
    "ne": "ne",
    "lt": "lt",
    "le": "le",
    "gt": "gt",
    "ge": "ge",
    "__and__": "logical_and",
    "__or__": "logical_or",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
}
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
    return self._tracer.record(
        WholeCall, (self, index), {"function": shape.index}, lambda: shape.index(self, index)
    )


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


# ---- the tracer ----------------------------------------------------------------------------------


class Tracer:
    """Builds a Graph from the calls autograd reports while fn runs (see `trace`)."""

    def __init__(self):
        self.calls, self.inputs = [], []
        self._by_tensor = {}  # id(tensor) -> Value, for tensors without grad_fn
        self._by_node = {}  # (id(node), output_nr) -> Value, for results: survives in-place ops
        self._alive = []  # every tensor seen: keeps ids unique while tracing
        self._next_id = 0
        self._inside_whole_call = 0

    # ---- values ----------------------------------------------------------------------------
    def _new_value(self, tensor, producer=None, const=None, requires_grad=False):
        data = tensor._data
        value = Value(
            self._next_id,
            tuple(data.shape),
            data.dtype,
            tensor.device,
            producer,
            const,
            requires_grad,
        )
        self._next_id += 1
        self._alive.append(tensor)
        return value

    def _bind(self, tensor, value):
        if tensor._grad_fn is not None:
            self._by_node[(id(tensor._grad_fn), tensor._output_nr)] = value
            self._alive.append(tensor._grad_fn)
        else:
            self._by_tensor[id(tensor)] = value

    def lookup(self, tensor):
        """The Value of a traced tensor, or None for a tensor from outside (a constant)."""
        if tensor._grad_fn is not None:
            found = self._by_node.get((id(tensor._grad_fn), tensor._output_nr))
            if found is not None:
                return found
        return self._by_tensor.get(id(tensor))

    def value_of(self, tensor):
        """The Value of `tensor` in the graph; a tensor from outside becomes a constant."""
        value = self.lookup(tensor)
        if value is None:
            value = self._new_value(tensor, const=tensor, requires_grad=tensor.requires_grad)
            self._bind(tensor, value)
        return value

    def add_input(self, example):
        """A fresh leaf copy of an example input, traced (see the module docstring for why)."""
        copy = _make(example._data)
        copy.__class__ = TracedTensor
        copy._requires_grad = True  # floats and integers alike: every op on it gets recorded
        value = self._new_value(copy, requires_grad=example.requires_grad)
        self._bind(copy, value)
        self.inputs.append(value)
        return copy

    def holds_traced(self, obj):
        """Is a traced tensor somewhere inside obj (a tensor, tuple, list or dict)?"""
        if isinstance(obj, Tensor):
            return self.lookup(obj) is not None and self.lookup(obj).const is None
        if isinstance(obj, (tuple, list)):
            return any(self.holds_traced(item) for item in obj)
        if isinstance(obj, dict):
            return any(self.holds_traced(item) for item in obj.values())
        return False

    def _symbolic(self, obj):
        """obj with every tensor replaced by its Value."""
        if isinstance(obj, Tensor):
            return self.value_of(obj)
        if type(obj) in (tuple, list):
            return type(obj)(self._symbolic(item) for item in obj)
        if type(obj) is dict:
            return {key: self._symbolic(item) for key, item in obj.items()}
        return obj

    # ---- calls -----------------------------------------------------------------------------
    def on_call(self, node, outputs, args, kwargs):
        """autograd recorded an operation (observe's on_call): append it to the graph."""
        if self._inside_whole_call:
            return  # part of a WholeCall: the whole function is one call
        self._append(node._fn, node.name(), args, kwargs, outputs)

    def record(self, fn, args, kwargs, compute):
        """Run `compute()` (what fn.apply(*args, **kwargs) does) as one call of the graph."""
        self._inside_whole_call += 1
        try:
            outputs = compute()
        finally:
            self._inside_whole_call -= 1
        name = kwargs["function"].__name__ if fn is WholeCall else kwargs.get("op", fn.node_name)
        self._append(fn, name, args, kwargs, outputs)
        return outputs

    def _append(self, fn, name, args, kwargs, outputs):
        call = Call(
            fn, name, self._symbolic(tuple(args)), self._symbolic(dict(kwargs)), (), len(self.calls)
        )
        results = []
        for out in outputs if isinstance(outputs, tuple) else (outputs,):
            if not isinstance(out, Tensor):
                results.append(None)
                continue
            value = self._new_value(out, producer=call, requires_grad=True)
            if out._data.dtype.kind != "f" or (fn is WholeCall and not out._requires_grad):
                out._requires_grad = True  # integer results of traced values (and a whole call's
                # results from inputs without grad): keep recording what is computed from them
            if type(out) is Tensor:
                out.__class__ = TracedTensor
            self._bind(out, value)
            results.append(value)
        call.outputs = tuple(results)
        self.calls.append(call)

    def whole_function(self, function, when):
        """nn.functional's `function`, recorded as one WholeCall when it gets a traced tensor
        (`when` = "any" or "stateful") or a traced integer tensor ("integer")."""

        def traced(*args, **kwargs):
            tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
            if when == "integer":
                tensors = [t for t in tensors if t._data.dtype.kind != "f"]
            if self._inside_whole_call or not any(self.holds_traced(t) for t in tensors):
                return function(*args, **kwargs)
            plain = [self._plain(a, when) for a in args]
            plain_kwargs = {k: self._plain(v, when) for k, v in kwargs.items()}
            return self.record(
                WholeCall,
                args,
                {"function": function, **kwargs},
                lambda: function(*plain, **plain_kwargs),
            )

        return traced

    def _plain(self, obj, when="any"):
        """What the function would see eagerly: integer tensors without the tracing flag, inputs
        with the caller's requires_grad (nll_loss refuses a class weight that requires grad);
        for a "stateful" function, copies of the buffers it would update (the replay does)."""
        value = self.lookup(obj) if isinstance(obj, Tensor) else None
        if value is None or value.const is not None:
            stateful_buffer = when == "stateful" and isinstance(obj, Tensor)
            return _make(obj._data.copy()) if stateful_buffer and not obj.requires_grad else obj
        if obj._data.dtype.kind != "f" or (value.producer is None and not value.requires_grad):
            return _make(obj._data)
        return obj


def trace(fn, *example_inputs):
    """Run `fn(*example_inputs)` once and return the Graph of what it computed (see module doc)."""
    for k, x in enumerate(example_inputs):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"trace() takes tensors as example inputs, but input {k} is a "
                f"{type(x).__name__}. Fix: pass numbers and settings through a closure or "
                "functools.partial, and only tensors as arguments."
            )
    tracer = Tracer()
    with _lock:
        copies = [tracer.add_input(x) for x in example_inputs]
        saved = {name: getattr(F, name) for name in _WHOLE_FUNCTIONS}
        outer, TracedTensor._tracer = TracedTensor._tracer, tracer
        enabled = _state.enabled
        # the random numbers fn draws while tracing are drawn again when the graph runs: put the
        # generator back afterwards, so a compiled call draws what the eager call would
        rng_state = default_generator.get_state()
        _state.enabled = True  # recording must be on to see the calls, even inside no_grad()
        try:
            for name, function in saved.items():
                setattr(F, name, tracer.whole_function(function, _WHOLE_FUNCTIONS[name]))
            with observe(on_call=tracer.on_call, on_backward=_refuse_backward):
                result = fn(*copies)
        except RuntimeError as error:
            if "leaf Variable that requires grad is being used in an in-place" not in str(error):
                raise
            raise RuntimeError(
                "compile cannot trace a function that modifies one of its inputs in place (the "
                "traced copy of every input is a leaf that requires grad). Fix: work on a copy "
                "inside the function (x = x.clone()), or return the new value instead."
            ) from error
        finally:
            for name, function in saved.items():
                setattr(F, name, function)
            TracedTensor._tracer = outer
            _state.enabled = enabled
            default_generator.set_state(rng_state)
    tree = _output_tree(tracer, result)
    outputs = []
    map_values(tree, lambda v: outputs.append(v) or v)
    return Graph(tracer.inputs, tracer.calls, outputs, tree)


def _refuse_backward(event, node, detail):
    """A backward pass inside fn: unless it is recorded (create_graph=True), the graph cannot
    replay it, and it would write .grad of the parameters while tracing."""
    if not _state.enabled:
        raise RuntimeError(
            "compile traces the forward computation only, but the function ran backward() (or "
            "autograd.grad without create_graph=True), which the graph cannot replay. Fix: "
            "compile the forward part, loss = compiled(x), and call loss.backward() outside; "
            "or use autograd.grad(..., create_graph=True) inside, which is recorded."
        )


def _output_tree(tracer, result):
    """fn's result with Values for tensors; refuses results the graph cannot give back."""
    if isinstance(result, Tensor):
        return tracer.value_of(result)
    if isinstance(result, (tuple, list)):
        items = [_output_tree(tracer, item) for item in result]
        if hasattr(result, "_fields"):
            return type(result)(*items)
        return type(result)(items)
    if isinstance(result, dict):
        return {key: _output_tree(tracer, item) for key, item in result.items()}
    if result is None or isinstance(result, (int, float, bool, str, np.generic)):
        return result  # a Python constant: given back as it was while tracing
    raise TypeError(
        f"compile/trace: fn returned a {type(result).__name__}; a traced function may return "
        "tensors, numbers, None, and tuples, lists or dicts of them. Fix: return the tensors and "
        "build other objects outside the compiled function."
    )
