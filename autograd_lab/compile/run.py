"""run(graph, inputs, plan=None): execute a traced Graph on new inputs, call by call.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace, run
    >>> g = trace(lambda x: (x * 2).tanh(), ag.zeros(2))
    >>> x = ag.tensor([0.5, -1.0], requires_grad=True)
    >>> y = run(g, [x])
    >>> y.sum().backward()
    >>> x.grad.shape
    torch.Size([2])

Each call replays through `call.fn.apply`, exactly what eager mode ran, so autograd records the
same nodes and `.backward()` works on the results. Each value is dropped as soon as its last
reader has run (outputs are kept), so intermediates are freed as early as the program allows;
what autograd saved for backward stays alive in the graph until backward frees it.

A `plan` (from the fusion pass or the memory planner) replaces the graph by its rewritten one
(`plan.graph`: groups of calls replaced by fused calls) and may assign output buffers
(`plan.buffers`: {value id: slot}); a call whose Function accepts `out=` then writes into a reused
array of that slot instead of allocating a new one. A plan may also run some calls as other
Functions (`plan.replace`: {call index: the Call to run instead, with the same outputs}); a
keyword argument `PerRun(name, make)` of such a Call stands for an object made new for each run,
the same one for every call of that run that names it. The memory planner runs linear layers and
ReLU so, sharing a weight gradient's buffer between three calls (compile/extras/layers.py).
"""

from dataclasses import dataclass

from ..tensor import Tensor
from .ir import map_values


@dataclass(frozen=True)
class PerRun:
    """A keyword argument of a replacing call: the object `make()` made for the current run."""

    name: str
    make: object  # called once per run, e.g. a class

    def __repr__(self):
        return f"{self.make.__name__} {self.name}"


def run(graph, inputs, plan=None):
    """Run `graph` (or `plan.graph`) on `inputs` (tensors in the order of graph.inputs)."""
    if plan is not None and getattr(plan, "graph", None) is not None:
        graph = plan.graph
    check_inputs(graph, inputs)
    buffers = getattr(plan, "buffers", None) or {}
    replace = getattr(plan, "replace", None) or {}
    per_run = {}  # PerRun name -> the object made for this run
    env = {value.id: tensor for value, tensor in zip(graph.inputs, inputs, strict=True)}
    keep = {value.id for value in graph.outputs}
    free_after = {}  # call index -> value ids whose last reader is that call
    for value_id, index in graph.last_use().items():
        if value_id not in keep:
            free_after.setdefault(index, []).append(value_id)
    slots = {}  # slot -> the array last written there (planned buffer reuse)

    def lookup(value):
        if value.const is not None:
            return value.const
        return env[value.id]

    for call in graph.calls:
        swapped = replace.get(call.index)
        if swapped is not None:  # the plan runs another Function here (same outputs)
            call = swapped
        args = map_values(call.args, lookup)
        kwargs = map_values(call.kwargs, lookup)
        if swapped is not None:
            kwargs = {key: _for_this_run(value, per_run) for key, value in kwargs.items()}
        if buffers and getattr(call.fn, "accepts_out", False):
            kwargs["out"] = _out_buffers(call, buffers, slots)
        result = call.fn.apply(*args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        for value, tensor in zip(call.outputs, results, strict=False):
            if value is not None:
                env[value.id] = tensor
        for value_id in free_after.get(call.index, ()):
            env.pop(value_id, None)  # its last reader ran: drop our reference now
    return map_values(graph.output_tree, lookup)


def _for_this_run(value, per_run):
    """A PerRun argument's object for this run (made on first use), anything else as it is."""
    if type(value) is not PerRun:
        return value
    if value.name not in per_run:
        per_run[value.name] = value.make()
    return per_run[value.name]


def _out_buffers(call, buffers, slots):
    """Arrays for a call's outputs: the array of the value's slot when it fits, else None."""
    import numpy as np

    out = []
    for value in call.outputs:
        slot = buffers.get(value.id) if value is not None else None
        array = slots.get(slot)
        fits = array is not None and array.shape == value.shape and array.dtype == value.dtype
        if slot is not None and not fits:
            array = slots[slot] = np.empty(value.shape, value.dtype)
        out.append(array if slot is not None else None)
    return tuple(out)


def check_inputs(graph, inputs):
    """Refuse inputs that do not match the traced ones in number, type, shape or dtype."""
    if len(inputs) != len(graph.inputs):
        raise TypeError(
            f"this graph was traced with {len(graph.inputs)} inputs but got {len(inputs)}. Fix: "
            "call it with the same number of tensors it was traced with."
        )
    for k, (value, tensor) in enumerate(zip(graph.inputs, inputs, strict=True)):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"input {k} must be a Tensor, got {type(tensor).__name__}")
        if tuple(tensor._data.shape) != value.shape or tensor._data.dtype != value.dtype:
            raise RuntimeError(
                f"input {k} is {tensor.dtype} of shape {list(tensor.shape)}, but the graph was "
                f"traced with {value.type_str()}. Fix: trace again for these inputs "
                "(autograd_lab.compile does this for you)."
            )
