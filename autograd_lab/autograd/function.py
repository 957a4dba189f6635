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

from .. import layout, storage
from ..tensor import Tensor, _make
from .grad_mode import _state
from .handles import RemovableHandle  # noqa: F401 - part of this module's API
from .saved_tensors import Packed

_sequence = itertools.count()  # creation order: backward runs the newest ready node first
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Node:
    """A recorded operation (a tensor's `grad_fn`); also the `ctx` its Function's methods receive.

    Fields every node has are slots; the rest are class-level defaults that a node overrides
    only when it needs them (most nodes never have hooks, say), and `__dict__` holds what
    forward keeps on ctx (`ctx.dim = dim`).
    """

    __slots__ = (
        "next_functions",  # per forward input: (node, output_nr) its gradient goes to, or (None, 0)
        "_saved",  # what save_for_backward kept (see _save); None once backward freed them
        "_seq",  # creation number: among ready nodes, backward runs the newest first
        "_outputs",  # per output: (shape, dtype), what a gradient arriving for it must be
        "__dict__",
        "__weakref__",
    )
    _fn = None  # the Function class this node runs backward for
    _saved_names = ()  # PyTorch's names of the saved tensors (`_saved_self`, ...), in saving order
    _tensor_hooks = None  # {output_nr: {key: hook}} from Tensor.register_hook on non-leaf outputs
    _retained = None  # {output_nr: weakref to tensor} from Tensor.retain_grad()
    _trace = None  # the user's stack at creation, in anomaly mode
    _non_differentiable = ()  # outputs forward marked with mark_non_differentiable
    _materialize_grads = True  # give backward zeros (not None) for outputs that got no gradient
    runs_when_ready = False  # True: backward runs it before any other ready node (engine.py)
    _hook_order = None  # when saved-tensor hooks packed the saved tensors: the order they run in
    _within_copy_slices = False  # an in-place op through a view: PyTorch runs it inside CopySlices

    def name(self):
        return type(self).__name__

    @property
    def needs_input_grad(self):
        """Per forward input: does it want a gradient? That is, does its edge lead anywhere?"""
        return tuple([fn is not None for fn, _ in self.next_functions])

    def task_should_compute_output(self, index):
        """Whether the backward pass now running needs the gradient for forward input `index`:
        its edge leads somewhere and, in grad(inputs=...), towards an input asked for. (PyTorch's
        name; needs_input_grad asks the first question only.)"""
        node = self.next_functions[index][0]
        return node is not None and (_state.needed is None or node in _state.needed)

    def __repr__(self):
        # PyTorch's text, address and all: scripts print grad_fn and compare with PyTorch. The
        # notebooks' saved outputs stay comparable because nbval masks the address
        # (tests/nbval_sanitize.cfg).
        return f"<{self.name()} object at {hex(id(self))}>"

    # ---- the ctx API used inside forward/backward -----------------------------------------------
    def save_for_backward(self, *tensors):
        self._saved = tensors  # packed by _save once the outputs exist

    @property
    def saved_tensors(self):
        if self._saved is None:
            raise freed_error(self)
        if self._hook_order is None:
            return tuple([None if saved is None else _unpack(saved, self) for saved in self._saved])
        unpacked = [None] * len(self._saved)
        for i in self._hook_order:  # the unpack hook sees them in PyTorch's order (_pack_saved)
            if self._saved[i] is not None:
                unpacked[i] = _unpack(self._saved[i], self)
        return tuple(unpacked)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)

    # ---- introspection ------------------------------------------------------------------------
    @property
    def metadata(self):
        return self.__dict__.setdefault("_metadata", {})

    def __getattr__(self, attr):
        """`_saved_self`, `_saved_other`, `_saved_result`, ...: the saved tensors by PyTorch's names;
        `_raw_saved_self`, ...: the same as a SavedTensor, to give it hooks of its own;
        `_saved_exponent`, ...: other values the op kept on ctx under PyTorch's name."""
        names = type(self)._saved_names
        if attr.startswith("_saved_") and attr[7:] in names:
            index = names.index(attr[7:])
            if type(self._saved) is not tuple:  # freed (raises), or checkpoint's placeholder
                return self.saved_tensors[index]
            saved = self._saved[index]  # unpack only this one: hooks see one unpack, as in PyTorch
            return None if saved is None else _unpack(saved, self)
        if attr.startswith("_raw_saved_") and attr[11:] in names:
            return SavedTensor(self, names.index(attr[11:]))
        if attr.startswith("_saved_") and attr[7:] in self.__dict__:
            # a number the op kept on ctx (ctx.exponent = 2): PyTorch shows it as _saved_exponent
            return self.__dict__[attr[7:]]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")


def freed_error(node):
    """The error for a node whose saved tensors an earlier backward pass freed."""
    return RuntimeError(
        "Trying to backward through the graph a second time (or to read saved tensors "
        f"after they were freed): {node.name()} needs the tensors it saved during forward, "
        "but an earlier backward pass through this graph freed them (backward frees saved "
        "tensors to save memory). Fix: pass retain_graph=True to the first backward() if "
        "you need to go backward twice, or recompute the forward pass."
    )


class AccumulateGrad(Node):
    """The node at a leaf: adds the incoming gradient into `variable.grad`."""

    __slots__ = ()
    runs_when_ready = True  # PyTorch gives it the largest sequence number (see engine.py)

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()
        self._saved = ()
        self._seq = float("inf")  # PyTorch runs these as soon as they are ready
        self._outputs = ((variable._data.shape, variable._data.dtype),)


# ---- what a node keeps of a tensor it saved -----------------------------------------------------
# One small tuple per saved tensor (a tuple, not an object with fields: it is made for nearly every
# op, and a tuple costs a third as much to build):
#   an input:            (tensor, version)
#   the node's output:   (None, version, storage, version_counter, output_nr)
# The version is the one the storage had when saved: backward refuses it if someone modified the
# tensor in place since. A node keeps its own output as the storage only (and rebuilds the tensor
# on demand), so that node and output do not hold each other: that would be a reference cycle,
# freed late by the garbage collector instead of right after backward.


def _save(tensor, outputs):
    """What a node keeps of one tensor it saved (`outputs`: its results, as a tuple)."""
    if tensor is None:
        return None
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"save_for_backward() takes tensors (or None), got {type(tensor).__name__}; keep other "
            "values as attributes of ctx instead, e.g. ctx.dim = dim"
        )
    for output_nr, out in enumerate(outputs):
        if tensor is out:
            counter = out._shared_version_counter()
            return (None, counter[0], out._data, counter, output_nr)
    return (tensor, tensor._version)


def rebind_saved_output(node, tensor):
    """An in-place op computed its result into a new array and then stored it into `tensor`: what
    the node saved of its output (`x.exp_()` saves exp(x)) is `tensor` now, at its new version, so
    that a later in-place change to `tensor` is caught as PyTorch catches it."""
    if node is None or type(node._saved) is not tuple:  # nothing recorded, or packed by hooks
        return
    counter = tensor._shared_version_counter()
    node._saved = tuple(
        [
            (None, counter[0], tensor._data, counter, 0)
            if type(saved) is tuple and saved[0] is None
            else saved
            for saved in node._saved
        ]
    )


def creation_number_now():
    """The creation number of the newest node, for Tensor.detach_() to note when it cut a
    tensor's history: a node created before that saved the tensor with a history it has lost."""
    return next(_sequence)


def _unpack(saved, node):
    """The saved tensor, after checking nobody modified it in place since it was saved."""
    if type(saved) is Packed:  # it went through saved-tensor hooks: unpack_hook gives it back
        return _unpack_packed(saved, node)
    tensor, version = saved[0], saved[1]
    if tensor is not None and tensor._detached_at > node._seq:
        raise RuntimeError(
            "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_(): "
            f"{node.name()} saved this tensor for backward together with its history, which "
            "detach_() has since cut. Fix: use the out-of-place .detach() instead, which leaves "
            "the tensor (and the graph that saved it) as it was."
        )
    now = tensor._version if tensor is not None else saved[3][0]
    if now != version:
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: a tensor that {node.name()} saved for backward was modified in "
            f"place. It was saved at version {version} and is now at version {now}, so its "
            "gradient would be wrong. Fix: avoid the in-place operation (write x = x * 2 instead of "
            "x *= 2 or x.mul_(2)), or use .clone() on the tensor before modifying it."
        )
    if tensor is None:  # the node's own output: a new tensor on the same storage and counter
        _, _, data, counter, output_nr = saved
        tensor = _make(data, node, output_nr)
        tensor._version_counter = counter
    return tensor


def _unpack_packed(saved, node):
    """The tensor unpack_hook gives back, connected to the graph as the saved one was."""
    value = saved.unpack_hook(saved.packed)
    if not isinstance(value, Tensor):
        raise TypeError(
            f"a saved-tensor unpack hook must return a Tensor, but it returned "
            f"{type(value).__name__}. Fix: make unpack_hook turn what pack_hook returned back "
            "into a tensor (e.g. pack with lambda t: t.cpu(), unpack with lambda t: t)."
        )
    grad_fn = node if saved.is_output and saved.requires_grad else saved.grad_fn
    tensor = _make(value._data, grad_fn, saved.output_nr)
    tensor._requires_grad = saved.requires_grad
    if saved.accumulator is not None:  # a leaf: gradients reach the saved leaf's .grad
        tensor._grad_accumulator = weakref.ref(saved.accumulator)
    return tensor


def _pack(tensor, entry, pack_hook, unpack_hook, shown=None):
    """A saved entry packed by hooks (saved_tensors.py), knowing where its gradient must go;
    `shown`: what pack_hook is given, if not the tensor itself."""
    leaf = tensor._requires_grad and tensor._grad_fn is None
    accumulator = grad_accumulator_of(tensor) if leaf else None
    return Packed(tensor, pack_hook, unpack_hook, entry[0] is None, accumulator, shown)


def _pack_saved(node, entries, tensors):
    """Pack a new node's saved entries with the innermost saved_tensors_hooks in force.

    The hooks are called in PyTorch's order, which its generated code fixes: a built-in node
    saves its inputs in the alphabetical order of their names (MulBackward0: other, then self),
    then its results; a custom Function in the order of save_for_backward. Returns the packed
    entries (in saving order) and that order, in which backward unpacks them too."""
    order = list(range(len(entries)))
    if issubclass(node._fn, Op):
        names = type(node)._saved_names

        def pytorch_rank(i):
            is_result = entries[i] is not None and entries[i][0] is None
            return (is_result, names[i] if i < len(names) else "", i)

        order.sort(key=pytorch_rank)
    pack_hook, unpack_hook = _state.saved_hooks[-1]
    packed = list(entries)
    for i in order:
        if entries[i] is not None:
            packed[i] = _pack(tensors[i], entries[i], pack_hook, unpack_hook)
    return tuple(packed), tuple(order)


class SavedTensor:
    """One tensor a node saved, as `grad_fn._raw_saved_<name>` shows it: give it its own hooks.

        y = x.sin()
        y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)  # packs x now

    The unpack hook runs whenever the tensor is needed again (backward, `_saved_self`).
    """

    def __init__(self, node, index):
        self._node, self._index = node, index

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved tensor now with `pack_hook`; backward unpacks it with `unpack_hook`."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError(
                "register_hooks(pack_hook, unpack_hook) takes two functions. Fix: pass both, "
                "e.g. register_hooks(lambda t: t, lambda t: t)."
            )
        node, index = self._node, self._index
        saved = node._saved
        if saved is None:
            raise RuntimeError(
                f"cannot call register_hooks on a saved tensor of {node.name()}: it was freed by "
                "an earlier backward pass (saved tensors are freed after backward). Fix: pass "
                "retain_graph=True to backward() to keep them."
            )
        if type(saved) is not tuple or type(saved[index]) is Packed:
            raise RuntimeError(
                f"this saved tensor of {node.name()} already has its hooks (from "
                "saved_tensors_hooks, checkpoint, or an earlier register_hooks); only one pair "
                "of hooks is allowed at a time."
            )
        if saved[index] is None:
            raise RuntimeError(
                f"cannot call register_hooks on this saved tensor of {node.name()}: its value is "
                "None (the operation did not need to save it, because the input it serves does "
                "not require grad)."
            )
        tensor = _unpack(saved[index], node)
        # As in PyTorch, this pack hook is given the values only, without the graph (detached).
        packed = _pack(tensor, saved[index], pack_hook, unpack_hook, shown=tensor.detach())
        node._saved = saved[:index] + (packed,) + saved[index + 1 :]

    def __repr__(self):
        return f"<SavedTensor of {self._node.name()}>"


def saved_storage(saved):
    """The array behind a saved entry (for tools that measure memory or draw the graph); for one
    that hooks packed, an array of its shape and dtype that holds no memory (the hooks keep it)."""
    if type(saved) is Packed:
        return saved.placeholder
    return saved[0]._data if saved[0] is not None else saved[2]


class Function:
    """Base class of every operation; subclass it to write your own (see the module docstring)."""

    node_name = None  # PyTorch's node name, e.g. "MulBackward0"; defaults to "<Class>Backward"
    saved_names = ()  # names under which the saved tensors show as `grad_fn._saved_<name>`
    _forward_records = True  # may forward call Tensor operations (which must not be recorded)?
    # True where PyTorch's node saves a tensor that the record keeps as a plain constant on ctx
    # (the 2 of `x * 2`, an index): backward frees it like a saved tensor, so that a second
    # backward through the node fails as in PyTorch (engine.py).
    saves_constants = False
    # True where PyTorch records a node without a derivative (grad_fn NotImplemented, unique's):
    # its backward fails whenever the backward pass reaches it, even with no gradient for it.
    no_derivative = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("node_name") or f"{cls.__name__}Backward"
        cls.node_name = name
        attrs = {"__slots__": (), "_fn": cls, "_saved_names": tuple(cls.saved_names)}
        if name == "NotImplemented":
            # PyTorch's node for an op without a derivative runs as soon as it is ready, as
            # AccumulateGrad does: its error comes before the nodes made after it have run
            attrs["runs_when_ready"] = True
        cls._node_class = type(name, (Node,), attrs)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define a static forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function subclass must define a static backward(ctx, ...)")

    @classmethod
    def _laid_out(cls, out, args):
        """The result as forward laid it out (Op lays out an elementwise op's as PyTorch)."""
        return out

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward; when recording, connect the outputs to a new node of the graph.

        Positional Tensor arguments become edges of the graph (`next_functions`); keyword
        arguments are constants of the operation (like `dim=`). What forward computes is this
        one node's work, so nothing inside forward is recorded.
        """
        profiler = _state.profiler
        if profiler is not None:  # a profiler is timing every op (profiler.py)
            event = profiler.begin_op(cls, args)
        recording = False  # only while grad mode is on, and only if some input wants a gradient
        if _state.enabled:
            for arg in args:
                if isinstance(arg, Tensor) and arg.requires_grad:  # (a view: or its base)
                    recording = True
                    break
        node = cls._node_class.__new__(cls._node_class)  # forward's ctx; kept when recording
        node._saved = ()
        if recording:
            node.next_functions = tuple(map(_edge, args))
        else:  # no edges; forward may still ask ctx.needs_input_grad (all False)
            node.next_functions = ((None, 0),) * len(args)
        if cls._forward_records:
            out = _without_recording(cls.forward, node, args, kwargs)
        else:
            out = cls.forward(node, *args, **kwargs)
        if type(out) is np.ndarray:  # the common case: one new array
            outputs = _make(cls._laid_out(out, args))
        elif type(out) is tuple:  # several outputs (max(dim): values and indices, say)
            outputs = tuple([_as_tensor(value, args) for value in out])
        else:
            outputs = _as_tensor(out, args)
            if outputs is out and isinstance(out, Tensor):  # a new tensor (forward may save it)
                out._data = cls._laid_out(out._data, args)
        if recording:
            _record(node, args, kwargs, outputs)
        if profiler is not None:
            profiler.end(event)
        return outputs


class Op(Function):
    """Base of the built-in operations in `ops/`. Each subclass is one op's *record*: besides
    forward and backward it may declare, in one place, what the rest of the package derives
    (ops/registry.py reads the records back):

        function    its public name(s): `autograd_lab.<name>(...)` runs `apply(...)`
        method      ...also a Tensor method: `x.<name>(...)`
        inplace     ...and an in-place one: `x.<name>_(...)`
        kernel      what it computes for ONE element (ops/scalar.py): the fusion compiler's rule
        derivative  its local derivative in words, for the graph viewer
        domain      where the op-table tests draw its inputs ("positive", "unit", ...)
        piecewise   made of straight pieces (relu): second derivatives are 0 almost everywhere
        lays_out_itself  an op with a kernel whose forward gives its result PyTorch's layout
                    itself; the others' results are laid out like their inputs (layout.py)
        elementwise an op without a kernel whose result is laid out like its inputs all the
                    same (floor_divide: no derivative, so nothing the compiler could fuse)
        number_operand  a number given as a keyword is an operand too (`1 - x`): PyTorch wraps
                    it as a 0-d tensor, as it does a number given in the operands' place

    An Op's forward computes on numpy arrays only, so it records nothing and needs no switch of
    the grad mode around it. The engine trusts an Op's backward to return gradients that nobody
    else holds, unless it hands on an incoming gradient (engine.py: a leaf may then keep the
    array as its `.grad`).
    """

    _forward_records = False
    function = None
    method = False
    inplace = False
    kernel = None
    derivative = None
    domain = "real"
    piecewise = False
    lays_out_itself = False
    elementwise = False
    number_operand = False

    @classmethod
    def _laid_out(cls, out, args):
        """An elementwise op's result (it has a kernel) laid out in memory as PyTorch's
        TensorIterator lays it out: like its tensor inputs (layout.py)."""
        if (cls.kernel is None and not cls.elementwise) or cls.lays_out_itself:
            return out
        tensors = [arg._data for arg in args if isinstance(arg, Tensor)]
        # (a number among the operands changes only the strides of an empty result)
        number = cls.number_operand or len(tensors) < len(args)
        computing = computing_dtype(out.dtype, args)
        return layout.laid_out_like_inputs(out, tensors, number=number, computing=computing)


def computing_dtype(result_dtype, args):
    """The numpy dtype PyTorch's CPU TensorIterator computes an elementwise op of `args` in,
    where one of two or more tensors among them has another dtype: it converts that one first,
    which can change the result's layout (layout.laid_out_like_inputs). None where none has. A
    float result is computed in its own dtype (int / int divides in float); any other (a
    comparison's bool) in the operands' common dtype."""
    tensors = [arg for arg in args if isinstance(arg, Tensor)]
    if len(tensors) < 2:
        return None
    dtypes = {tensor._data.dtype for tensor in tensors}
    if result_dtype.kind == "f":
        return result_dtype if dtypes != {result_dtype} else None
    if len(dtypes) < 2:
        return None
    from .. import promotion

    operands = [arg for arg in args if isinstance(arg, Tensor) or type(arg) in (bool, int, float)]
    return promotion.common_dtype(*operands).numpy


def _without_recording(forward, node, args, kwargs):
    """A custom Function's forward may use Tensor operations: PyTorch never records them."""
    previous = _state.enabled
    _state.enabled = False
    try:
        return forward(node, *args, **kwargs)
    finally:
        _state.enabled = previous


def _record(node, args, kwargs, outputs):
    """Finish a new node of the graph (apply set its edges): link its outputs to it, note what a
    gradient for each must look like, pack the tensors it saved; and tell observers."""
    node._seq = next(_sequence)
    out = outputs if type(outputs) is tuple else (outputs,)
    shapes = []
    for output_nr, value in enumerate(out):
        if not isinstance(value, Tensor):
            continue
        data = value._data
        shapes.append((data.shape, data.dtype))
        if data.dtype.kind == "f":  # integer results need no gradient
            if not node._non_differentiable or not _is_marked(node, value):
                value._grad_fn = node
                value._output_nr = output_nr
                value._requires_grad = True
    node._outputs = tuple(shapes)
    if node._saved:
        tensors = node._saved
        node._saved = tuple([_save(tensor, out) for tensor in tensors])
        if _state.saved_hooks:  # inside saved_tensors_hooks(): pack them (saved_tensors.py)
            node._saved, node._hook_order = _pack_saved(node, node._saved, tensors)
    if _state.anomaly:
        node._trace = _user_stack()
    if _state.on_node is not None:  # a viewer or a tracer is watching (graph.observe)
        _state.on_node(node, outputs, args, kwargs)


def _is_marked(node, value):
    """Did forward mark this output with ctx.mark_non_differentiable?"""
    return any(value is t for t in node._non_differentiable)


def _edge(arg):
    """The `next_functions` entry for one forward argument: where its gradient must go."""
    if isinstance(arg, Tensor) and arg.requires_grad:
        node = arg.grad_fn  # (a view changed in place gets its new history here)
        if node is not None:
            return (node, arg._output_nr)
        if arg._requires_grad:
            return (grad_accumulator_of(arg), 0)
        # a view taken before its base's requires_grad_() requires grad, yet it is neither a
        # leaf of its own nor made by a node: as in PyTorch, its gradient goes nowhere
    return (None, 0)


def _as_tensor(value, args):
    """One output of forward as a tensor (a non-tensor output, an int say, passes through)."""
    if isinstance(value, Tensor):
        for arg in args:
            if value is arg:  # forward handed back an input: the output is a new alias of it
                alias = _make(value._data)
                alias._version_counter = value._shared_version_counter()
                return alias
        return value
    if isinstance(value, (np.ndarray, np.generic)) or storage.is_device_array(value):
        return _make(value)
    return value


def _user_stack():
    """The creation stack without our own frames, for anomaly mode's messages."""
    frames = traceback.extract_stack()[:-3]
    return [f for f in frames if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]


def once_differentiable(fn):
    """Decorator for a backward that is not itself differentiable (kept for PyTorch compatibility)."""
    return fn


def grad_accumulator_of(tensor):
    """The AccumulateGrad node of a leaf tensor (the same node for as long as a graph uses it)."""
    ref = tensor._grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._grad_accumulator = weakref.ref(node)
    return node
