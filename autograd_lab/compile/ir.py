"""The IR: a traced function as a flat list of calls on numbered values.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace
    >>> g = trace(lambda x: (x * 2).tanh(), ag.ones(3))
    >>> g
    graph(%0: float32[3]):
      %1 = mul(%0, 2)
      %2 = tanh(%1)
      return %2

A `Value` is one tensor of the program (an input, a constant, or what a call produced); a `Call`
is one recorded operation: the `Function` class to replay (`fn.apply(*args, **kwargs)`), its
arguments with tensors replaced by Values, and the Values it produced. The listing names each call
by its forward operation (`mul`, as PyTorch's IRs say `aten::mul`); `call.name` keeps the name of
the node autograd recorded (`MulBackward0`: the *backward* step of mul, lesson 01). A `Graph` lists the calls in
the order they ran, so running them in that order is always valid. Everything else in
`autograd_lab.compile` (fusion, the memory planner, parallel levels) reads or rewrites this one
structure, and so does the graph viewer (autograd_lab/viz/compiled.py draws it).
"""

import re
from dataclasses import dataclass, field

import numpy as np


@dataclass(eq=False)
class Value:
    """One tensor of the traced program: `%id`. `producer` is the Call that made it (None for an
    input or a constant); `const` holds the tensor itself for a constant (a parameter, say)."""

    id: int
    shape: tuple
    dtype: np.dtype
    device: object
    producer: "Call | None" = None
    const: object = None  # a Tensor for a constant Value, else None
    requires_grad: bool = False  # as traced: inputs keep the caller's flag, results are True

    @property
    def kind(self):
        """'input', 'const' or 'result' (made by a call)."""
        if self.producer is not None:
            return "result"
        return "const" if self.const is not None else "input"

    @property
    def is_float(self):
        """Floating point: only such values carry gradients."""
        return np.dtype(self.dtype).kind == "f"

    @property
    def nbytes(self):
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    def type_str(self):
        """`float32[2, 3]`: how the listing writes a value's type."""
        return f"{np.dtype(self.dtype).name}[{', '.join(str(s) for s in self.shape)}]"

    def __repr__(self):
        return f"%{self.id}"


@dataclass(eq=False)
class Call:
    """One recorded operation: `outputs = fn.apply(*args, **kwargs)` with Values for tensors.

    `args`/`kwargs` hold Values where the operation received a tensor (also inside lists and
    tuples, e.g. an index) and plain Python constants elsewhere. `outputs` has one entry per
    result of `apply` (None for a result that is not a tensor). `index` is the call's position in
    its Graph's `calls`.
    """

    fn: type
    name: str
    args: tuple
    kwargs: dict
    outputs: tuple
    index: int = 0
    metadata: dict = field(default_factory=dict)  # e.g. a fused call's group of op names

    def inputs(self):
        """The Values this call reads, in argument order, each once."""
        seen, found = set(), []
        for value in _values_in((self.args, self.kwargs)):
            if value.id not in seen:
                seen.add(value.id)
                found.append(value)
        return found

    @property
    def forward_name(self):
        """The forward operation this call runs, as the listing prints it: `mul` for MulBackward0."""
        return forward_name(self.name, self.fn)

    def __repr__(self):
        outs = ", ".join("_" if v is None else repr(v) for v in self.outputs)
        shown = {
            k: v
            for k, v in self.kwargs.items()
            if v is not None and k != "kernel" and not _names_call(v, self)
        }
        parts = [_show(a) for a in self.args] + [f"{k}={_show(v)}" for k, v in shown.items()]
        fused = self.metadata.get("fused")
        note = f"  # {' -> '.join(forward_name(n) for n in fused)}" if fused else ""
        return f"{outs} = {self.forward_name}({', '.join(parts)}){note}"


@dataclass(eq=False)
class Graph:
    """Inputs, calls in execution order, outputs; `output_tree` rebuilds fn's result structure."""

    inputs: list
    calls: list
    outputs: list
    output_tree: object = None  # fn's result with Values for tensors: a Value, tuple, list, dict

    # ---- questions the planners ask ----------------------------------------------------------
    def consumers(self):
        """{value id: [calls that read it]}, calls in execution order."""
        readers = {}
        for call in self.calls:
            for value in call.inputs():
                readers.setdefault(value.id, []).append(call)
        return readers

    def last_use(self):
        """{value id: index of the last call reading it}; a value nobody reads is absent.

        Graph outputs are not counted as "used" here: whoever frees a value after its last use
        must also keep the outputs (see `run`).
        """
        last = {}
        for call in self.calls:
            for value in call.inputs():
                last[value.id] = call.index
        return last

    def first_use(self):
        """{value id: index of the first call reading it}: going backward, the last call whose
        backward adds to the value's gradient (so the gradient is complete after it)."""
        first = {}
        for call in self.calls:
            for value in call.inputs():
                first.setdefault(value.id, call.index)
        return first

    def levels(self):
        """Calls grouped by depth: a call's level is one more than the deepest call it reads from.

        Calls of one level read only values made at earlier levels, so they are independent of
        each other and may run in any order, or at the same time.
        """
        made_by = {v.id: c.index for c in self.calls for v in c.outputs if v is not None}
        depth, levels = {}, []
        for call in self.calls:
            level = 0
            for value in call.inputs():
                if value.id in made_by:
                    level = max(level, depth[made_by[value.id]] + 1)
            depth[call.index] = level
            if level == len(levels):
                levels.append([])
            levels[level].append(call)
        return levels

    def values(self):
        """Every Value: inputs, constants read by calls, then results, by id."""
        found = {v.id: v for v in self.inputs}
        for call in self.calls:
            for value in call.inputs():
                found.setdefault(value.id, value)
            for value in call.outputs:
                if value is not None:
                    found[value.id] = value
        for value in self.outputs:
            found.setdefault(value.id, value)
        return [found[i] for i in sorted(found)]

    # ---- showing it ------------------------------------------------------------------------------
    def __repr__(self):
        head = ", ".join(f"{v!r}: {v.type_str()}" for v in self.inputs)
        lines = [f"graph({head}):"]
        for value in self.values():
            if value.kind == "const":
                lines.append(f"  {value!r} = constant {value.type_str()}")
        lines += [f"  {call!r}" for call in self.calls]
        lines.append(f"  return {', '.join(repr(v) for v in self.outputs)}")
        return "\n".join(lines)


def _values_in(obj):
    """Every Value inside an argument structure (Values, tuples, lists, dicts, slices)."""
    if isinstance(obj, Value):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _values_in(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _values_in(item)


def map_values(obj, fn):
    """`obj` with every Value v inside it replaced by fn(v) (tuples, lists and dicts rebuilt)."""
    if isinstance(obj, Value):
        return fn(obj)
    if type(obj) is tuple:
        return tuple(map_values(item, fn) for item in obj)
    if type(obj) is list:
        return [map_values(item, fn) for item in obj]
    if type(obj) is dict:
        return {key: map_values(item, fn) for key, item in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple, e.g. (values, indices)
        return type(obj)(*(map_values(item, fn) for item in obj))
    return obj


def forward_name(node_name, fn=None):
    """The forward op behind an autograd node's name, in PyTorch's spelling of op names.

        MulBackward0 -> mul    LogSoftmaxBackward0 -> log_softmax    TanhBackwardBackward0 ->
        tanh_backward (the op that computes tanh's gradient, itself recorded in double backward)

    Names that are already forward names (a Compare's `gt`, a WholeCall's function) stay as they
    are; a node PyTorch calls NotImplemented is named after its class.
    """
    if node_name == "NotImplemented" and fn is not None:
        node_name = fn.__name__
    match = re.fullmatch(r"(\w+?)Backwards?\d*", node_name)
    if match is None:
        return node_name
    # LogSoftmax -> log_softmax, MaxPool2DWithIndices -> max_pool2d_with_indices, Log1P -> log1p
    return re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z0-9])(?=[A-Z][a-z])", "_", match.group(1)).lower()


def _names_call(obj, call):
    """Is this keyword the call's own name (a Compare's op, a WholeCall's function)? Not shown."""
    return obj == call.name or getattr(obj, "__name__", None) == call.name


def _show(obj):
    """An argument as the listing writes it: %3 for a Value, short text for constants."""
    if isinstance(obj, Value):
        return repr(obj)
    if isinstance(obj, (tuple, list)):
        inner = ", ".join(_show(item) for item in obj)
        return (
            f"({inner}{',' if len(obj) == 1 else ''})" if isinstance(obj, tuple) else f"[{inner}]"
        )
    if isinstance(obj, (np.ndarray, np.generic)):
        return f"array{list(np.shape(obj))}"
    if isinstance(obj, type) or callable(obj):
        return getattr(obj, "__name__", type(obj).__name__)
    text = repr(obj)
    return text if len(text) <= 40 and " at 0x" not in text else f"<{type(obj).__name__}>"
