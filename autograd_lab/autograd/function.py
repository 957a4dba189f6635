"""Function and Node: how one operation records itself into the graph.

Every operation is a `Function` with two static methods, exactly as in PyTorch:

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

`Square.apply(x)` runs `forward` and, when autograd is recording, creates a *node*: the `ctx` that
forward filled in, which becomes the output's `grad_fn`. A node knows the edges to the nodes that
made its inputs (`next_functions`), the tensors it saved, and how to run `backward`.
"""

import itertools
import os
import traceback
import weakref

import numpy as np

from .. import storage
from ..tensor import Tensor, _make
from .grad_mode import _state
from .handles import RemovableHandle  # noqa: F401 - part of this module's API

_sequence = itertools.count()  # creation order: backward runs the newest ready node first
_NO_EDGE = (None, 0)  # next_functions entry for an input that needs no gradient
_ONE_INPUT = (True,)  # needs_input_grad of an op with one input (that requires grad)
_NEVER_MODIFIED = (0,)  # the version "counter" of a tensor that has none yet: version 0
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Node:
    """A recorded operation (a tensor's `grad_fn`); also the `ctx` its Function's methods receive."""

    __slots__ = ("next_functions", "needs_input_grad", "_saved", "_seq", "_outputs", "__dict__",
                 "__weakref__")  # fmt: skip
    _fn = None  # the Function class this node runs backward for
    _saved_names = ()  # PyTorch's names of the saved tensors (`_saved_self`, ...), in saving order
    _tensor_hooks = None  # {output_nr: {key: hook}} from Tensor.register_hook on non-leaf outputs
    _retained = None  # {output_nr: weakref to tensor} from Tensor.retain_grad()
    _trace = None  # the user's stack at creation, in anomaly mode
    _non_differentiable = ()
    _materialize_grads = True

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()}>"  # no memory address: notebook output must be deterministic

    # ---- the ctx API used inside forward/backward -----------------------------------------------
    def save_for_backward(self, *tensors):
        self._saved = tensors  # packed by Function.apply once the outputs exist

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is None:
            raise RuntimeError(
                f"{self.name()} needs the tensors it saved during forward, but they were freed by an "
                "earlier backward pass through this graph (backward frees them to save memory). Fix: "
                "pass retain_graph=True to the first backward() if you need to go backward twice, or "
                "recompute the forward pass."
            )
        return tuple([_unpack(self, entry) for entry in saved])

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)

    # ---- introspection ------------------------------------------------------------------------
    @property
    def metadata(self):
        return self.__dict__.setdefault("_metadata", {})

    def __getattr__(self, attr):
        """`_saved_self`, `_saved_other`, `_saved_result`, ...: the saved tensors by PyTorch's names."""
        names = type(self)._saved_names
        if attr.startswith("_saved_") and attr[7:] in names:
            return self.saved_tensors[names.index(attr[7:])]  # raises if already freed
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")


class AccumulateGrad(Node):
    """The node at a leaf: adds the incoming gradient into `variable.grad`."""

    __slots__ = ()

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()
        self._saved = ()
        self._seq = float("inf")  # PyTorch runs these as soon as they are ready
        self._outputs = ((variable._data.shape, variable._data.dtype),)


def _unpack(node, entry):
    """Give back one saved tensor, after checking nobody modified it in place since it was saved."""
    if entry is None:
        return None
    tensor = entry[0]
    if tensor is not None:  # an input (or other tensor): (tensor, version when saved)
        version_box, version = tensor._vbox or _NEVER_MODIFIED, entry[1]
    else:  # an output: (None, version, data, version box, output_nr)
        _, version, data, version_box, output_nr = entry
    if version_box[0] != version:  # somebody changed it in place after it was saved
        raise RuntimeError(
            f"a tensor that {node.name()} saved for backward was modified in place: it was saved at "
            f"version {version} and is now at version {version_box[0]}, so its gradient would be "
            "wrong. Fix: avoid the in-place operation (write x = x * 2 instead of x *= 2 or x.mul_(2)), "
            "or use .clone() on the tensor before modifying it."
        )
    if tensor is None:  # a saved output is rebuilt on demand, so node and output form no cycle
        tensor = _make(data, node, output_nr)
        tensor._vbox = version_box
    return tensor


def _pack(tensor, outputs):
    """What a node keeps for one saved tensor (see _unpack)."""
    if tensor is None:
        return None
    if tensor is outputs:  # an op saving its own (single) result: exp, tanh, sigmoid, ...
        box = tensor._version_box()
        return (None, box[0], tensor._data, box, 0)
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"save_for_backward() takes tensors (or None), got {type(tensor).__name__}; keep other "
            "values as attributes of ctx instead, e.g. ctx.dim = dim"
        )
    for output_nr, out in enumerate(outputs if type(outputs) is tuple else (outputs,)):
        if tensor is out:
            box = out._version_box()
            return (None, box[0], out._data, box, output_nr)
    return (tensor, tensor._vbox[0] if tensor._vbox is not None else 0)


def _user_stack():
    """The creation stack without our own frames, for anomaly mode's messages."""
    frames = traceback.extract_stack()[:-3]
    return [f for f in frames if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]


class Function:
    """Base class of every operation; subclass it to write your own (see the module docstring)."""

    node_name = None  # PyTorch's node name, e.g. "MulBackward0"; defaults to "<Class>Backward"
    saved_names = ()  # names under which the saved tensors show as `grad_fn._saved_<name>`
    _numpy_forward = False  # True for the built-in ops (see Op below)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("node_name") or f"{cls.__name__}Backward"
        cls.node_name = name
        attrs = {"__slots__": (), "_fn": cls, "_saved_names": tuple(cls.saved_names)}
        cls._node_class = type(name, (Node,), attrs)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define a static forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function subclass must define a static backward(ctx, ...)")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward; when recording, connect the outputs to a new node of the graph.

        Positional Tensor arguments become edges of the graph (`next_functions`); keyword
        arguments are constants of the operation (like `dim=`).
        """
        if _state.enabled:
            for arg in args:
                if isinstance(arg, Tensor) and arg._requires_grad:
                    return _record(cls, args, kwargs)
        node = _new(cls._node_class)  # forward still gets a ctx; it is dropped afterwards
        node.needs_input_grad = _NO_GRADS[len(args)] if len(args) < 8 else (False,) * len(args)
        forward = cls.forward if cls._numpy_forward else _unrecorded(cls.forward)
        out = forward(node, *args, **kwargs)
        if type(out) is np.ndarray:  # the common cases, kept short: one new array or tensor
            return _make(out)
        if type(out) is Tensor and _is_new(out, args):
            return out
        return _wrap_outputs(out, args, None)


class Op(Function):
    """Base of the built-in operations in `ops/`: their forward computes on numpy arrays only.

    Custom Functions may call Tensor operations inside forward, so apply() switches recording off
    around it; an Op's forward never records anything, which saves that switch on every call.
    """

    _numpy_forward = True


def _record(cls, args, kwargs):
    """Function.apply while recording: forward, then a node wired to the inputs' nodes."""
    node = _new(cls._node_class)
    node._saved = ()
    if len(args) == 1:  # one input (that requires grad: apply checked), the commonest case
        edges, node.needs_input_grad = (_edge(args[0]),), _ONE_INPUT
    else:
        edges = tuple([_edge(arg) for arg in args])
        node.needs_input_grad = _shared(tuple([edge is not _NO_EDGE for edge in edges]))
    forward = cls.forward if cls._numpy_forward else _unrecorded(cls.forward)
    out = forward(node, *args, **kwargs)
    node.next_functions = edges
    node._seq = next(_sequence)
    if type(out) is np.ndarray:  # the common case: one new array (integer results need no grad)
        outputs = _make(out, node) if out.dtype.kind == "f" else _make(out)
        node._outputs = _shared(((out.shape, out.dtype),))
    elif type(out) is Tensor and _is_new(out, args) and not node._non_differentiable:
        outputs, data = out, out._data  # next most common: one new tensor (it saved itself, say)
        node._outputs = _shared(((data.shape, data.dtype),))
        if data.dtype.kind == "f":
            out._grad_fn, out._output_nr, out._requires_grad = node, 0, True
    else:
        outputs = _wrap_outputs(out, args, node)
    saved = node._saved
    if saved:
        node._saved = tuple([_pack(t, outputs) for t in saved])
    if _state.anomaly:
        node._trace = _user_stack()
    if _state.on_node is not None:  # a viewer or a tracer is watching (graph.observe)
        _state.on_node(node, outputs, args, kwargs)
    return outputs


def _unrecorded(forward):
    """A custom Function's forward, run with recording off: PyTorch never records inside it."""

    def run(*args, **kwargs):
        previous, _state.enabled = _state.enabled, False
        try:
            return forward(*args, **kwargs)
        finally:
            _state.enabled = previous

    return run


def _edge(arg):
    """The `next_functions` entry for one forward argument: where its gradient must go."""
    if isinstance(arg, Tensor) and arg._requires_grad:
        fn = arg._grad_fn
        return (fn, arg._output_nr) if fn is not None else (grad_accumulator_of(arg), 0)
    return _NO_EDGE


def _is_new(out, args):
    """False when forward handed back one of its inputs (then the output must be a new alias)."""
    for arg in args:
        if arg is out:
            return False
    return True


_NO_GRADS = [(False,) * n for n in range(8)]
_SHARED = {}


def _shared(value):
    """One shared copy of a small immutable tuple (flags, output shapes): graphs repeat a few of
    them millions of times, and every object kept alive costs memory and garbage-collector time."""
    shared = _SHARED.get(value)
    if shared is None:
        if len(_SHARED) > 4096:  # bounded: programs with ever-new shapes must not grow it forever
            _SHARED.clear()
        shared = _SHARED[value] = value
    return shared


_new = object.__new__


def _wrap_outputs(out, args, node):
    """Turn forward's results (arrays or Tensors) into the op's output tensors, linked to `node`."""
    single = type(out) is not tuple
    outs = (out,) if single else out
    results, meta = [], []
    non_diff = node._non_differentiable if node is not None else ()
    for output_nr, value in enumerate(outs):
        if isinstance(value, Tensor):
            if not _is_new(value, args):  # forward returned an input: the output is a new alias
                value = _make(value._data)
                value._vbox = outs[output_nr]._version_box()
        elif isinstance(value, (np.ndarray, np.generic)) or storage.is_device_array(value):
            value = _make(value)
        else:
            results.append(value)  # a non-tensor output (an int, say) passes through untouched
            continue
        if node is not None:
            meta.append((value._data.shape, value._data.dtype))
            if value._data.dtype.kind == "f" and not any(value is t for t in non_diff):
                value._grad_fn, value._output_nr, value._requires_grad = node, output_nr, True
        results.append(value)
    if node is not None:
        node._outputs = _shared(tuple(meta))
    return results[0] if single else tuple(results)


def once_differentiable(fn):
    """Decorator for a backward that is not itself differentiable (kept for PyTorch compatibility)."""
    return fn


def grad_accumulator_of(tensor):
    """The AccumulateGrad node of a leaf tensor (the same node for as long as a graph uses it)."""
    ref = tensor.__dict__.get("_accumulator_ref")
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor.__dict__["_accumulator_ref"] = weakref.ref(node)
    return node
