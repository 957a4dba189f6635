"""The graph of a cell that failed: what was recorded up to the error, the failing op marked.

    %%autograd
    h = x @ w1              # fine
    y = h @ w2              # RuntimeError: cannot multiply shapes [4, 3] and [4, 2] ...

The magic (magic.py) draws the graph the cell built before the error, adds the op that failed
framed in red with the error on hover, and then shows the error as usual. Which op failed is read
from the error's traceback, where Python keeps every frame's local variables:
- in forward, the innermost `Function.apply` frame is the op being called (`cls`), and its
  `args` are its inputs: they are drawn with their shapes, which is what a shape error is about.
  An error raised before `apply` (a bad `dim=` checked in Python) names the autograd_lab function
  the learner's line called, with the tensors it was given.
- in backward, the engine's `run_node` frame holds the node that was running (`node`) — the one
  whose saved tensors were freed, or whose gradient anomaly mode found NaN in — and `_run`'s
  frame the nodes backward started from, so the graph is drawn from there even when it was built
  in an earlier cell.
Not located: an op of PyTorch's that fails in a cell (its frames are in torch's C++, out of
reach of this reading); the error is then shown alone, as before.
"""

import dataclasses
import inspect
import sys

from ..autograd import engine
from ..autograd.function import AccumulateGrad, Function, grad_accumulator_of
from ..tensor import Tensor
from .graph import snapshot
from .marks import mark
from .snapshot import summarize, tensor_node

APPLY = Function.apply.__func__.__code__


def failed_graph(error, recording, names=None):
    """The Snapshot of what `recording` saw before `error`, with the failing op marked; None
    when the error did not come from an op or from backward (a NameError, say)."""
    names = names or {}
    frames = _frames(error)
    node = _running_node(frames)
    if node is not None:
        return _backward_failure(error, recording, names, node, _backward_roots(frames))
    called = _called_op(frames)
    if called is not None:
        return _forward_failure(error, recording, names, *called)
    return None


# ---- where in the traceback -------------------------------------------------------------------------


def _frames(error):
    out, tb = [], error.__traceback__
    while tb is not None:
        out.append(tb.tb_frame)
        tb = tb.tb_next
    return out


def _innermost(frames, test):
    return next((f for f in reversed(frames) if test(f)), None)


def _running_node(frames):
    frame = _innermost(
        frames, lambda f: f.f_code.co_name == "run_node" and f.f_code.co_filename == engine.__file__
    )
    return frame.f_locals.get("node") if frame is not None else None


def _backward_roots(frames):
    """The nodes backward started from (the engine's `_run(roots, ...)`: (edge, ...) triples)."""
    frame = _innermost(frames, lambda f: f.f_code is engine._run.__code__)
    if frame is None:
        return []
    return [edge[0] for edge, *_ in frame.f_locals.get("roots", ())]


def _called_op(frames):
    """(label, op name, input tensors) of the op being called when forward failed, or None."""
    frame = _innermost(frames, lambda f: f.f_code is APPLY)
    if frame is not None:
        cls, args = frame.f_locals["cls"], frame.f_locals.get("args", ())
        op = cls._node_class.__name__ if hasattr(cls, "_node_class") else cls.__name__
        return op.rsplit("Backward", 1)[0] or op, op, [a for a in args if isinstance(a, Tensor)]
    # raised before apply (a dim or a shape checked in Python): the function the learner called
    learners = [i for i, f in enumerate(frames) if not _ours(f) and not _library(f)]
    if not learners or learners[-1] + 1 >= len(frames) or not _ours(frames[learners[-1] + 1]):
        return None
    after = [f for f in frames[learners[-1] + 1 :] if _ours(f)]
    # the op registry's argument-checking wrappers are not the function the learner called
    after = [
        f
        for f in after
        if not f.f_code.co_filename.endswith(("ops/registry.py", "ops\\registry.py"))
    ]
    if not after:
        return None
    called = after[0]
    code = called.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    values = [called.f_locals.get(n) for n in code.co_varnames[:count]]
    if code.co_flags & inspect.CO_VARARGS:  # def cat(*tensors): its tuple of arguments
        values.append(called.f_locals.get(code.co_varnames[count]))
    return f"{code.co_name}()", None, _tensors(values)


def _ours(frame):
    """autograd_lab's engine and ops; not the viewers (record_torch's watching mode runs inside
    every PyTorch call: a torch op that fails is not ours to locate)."""
    module = frame.f_globals.get("__name__", "")
    return module.split(".")[0] == "autograd_lab" and not module.startswith("autograd_lab.viz")


def _library(frame):
    """Code of an installed package or of Python itself (numpy inside our ops, IPython)."""
    filename = frame.f_code.co_filename
    return (
        "site-packages" in filename
        or filename.startswith(sys.prefix)
        or filename.startswith("<frozen")
    )


def _tensors(values):
    out = []
    for value in values:
        if isinstance(value, Tensor):
            out.append(value)
        elif isinstance(value, (list, tuple)):  # cat([a, b]): a list of inputs
            out.extend(v for v in value if isinstance(v, Tensor))
    return out


# ---- the graph ----------------------------------------------------------------------------------------


def _recorded_graph(recording, names, starts, ids, leaves=()):
    """What the cell recorded, drawn from its roots (and `leaves`) and from `starts`, the nodes
    the failure is about; `ids` is filled with each drawn node's id."""
    return snapshot(
        *recording.roots(),
        *leaves,
        names=names,
        recording=recording,
        start=[*recording.sinks(), *starts],
        node_ids=ids,
    )


def _forward_failure(error, recording, names, label, op, inputs):
    """Everything recorded, plus the op that failed as a node reading its inputs."""
    leaves = [t for t in inputs if t._grad_fn is None and t.requires_grad]
    starts = [t._grad_fn for t in inputs if t._grad_fn is not None]
    ids = {}
    graph = _recorded_graph(recording, names, starts, ids, leaves)
    nodes, edges = list(graph.nodes), list(graph.edges)
    failed_id = f"n{len(nodes) + len(inputs)}"
    by_identity = {id(t): name for name, t in names.items() if isinstance(t, Tensor)}
    # a result the cell also left unused is drawn as its own tensor node: the failed op reads that
    drawn_as = {
        e["source"]: e["target"] for e in edges if graph.node(e["target"])["role"] == "output"
    }
    for k, tensor in enumerate(inputs):
        if tensor._grad_fn is not None:
            source = drawn_as.get(ids[tensor._grad_fn], ids[tensor._grad_fn])
        elif tensor.requires_grad:
            source = ids[grad_accumulator_of(tensor)]
        else:  # a tensor that needs no gradient: not part of the graph, drawn here as an input
            source = f"n{len(nodes)}"
            name, order = by_identity.get(id(tensor)), len(nodes)
            shape, value = tensor._data.shape, summarize(tensor)
            nodes.append(
                tensor_node(source, order, name, "constant", shape, tensor.dtype.name, value)
            )
        edges.append({"source": source, "target": failed_id, "input": k})
    failed_id = f"n{len(nodes)}"
    for edge in edges[len(graph.edges) :]:
        edge["target"] = failed_id
    nodes.append(_failed_node(failed_id, label, op, inputs, len(nodes)))
    text = _error_text(error)
    return dataclasses.replace(
        graph,
        nodes=nodes,
        edges=edges,
        marks={failed_id: mark("failed", f"{label} failed in forward: {text}")},
        note=f"The cell failed in forward, calling {label}: {_one_line(text)}",
    )


def _backward_failure(error, recording, names, node, roots):
    """The graph backward ran through, from where it started, the running node marked."""
    starts = [n for n in [*roots, node] if n is not None and type(n) is not AccumulateGrad]
    ids = {}
    graph = _recorded_graph(recording, names, starts, ids)
    failed_id = ids.get(node)
    text = _error_text(error)
    label = graph.node(failed_id)["label"] if failed_id is not None else node.name()
    marks = {failed_id: mark("failed", f"{label} failed in backward: {text}")} if failed_id else {}
    return dataclasses.replace(
        graph,
        marks=marks,
        note=f"The cell failed in backward, running {label}: {_one_line(text)}",
    )


def _failed_node(node_id, label, op, inputs, order):
    """The op that raised: it has no result, so no value and no shape of its own."""
    return {
        "id": node_id,
        "kind": "op",
        "label": label,
        "op": op or label,
        "name": None,
        "role": "intermediate",
        "shape": [],
        "dtype": inputs[0].dtype.name if inputs else "float32",
        "value": None,
        "grad": None,
        "saved": [],
        "is_saved": False,
        "scope": None,
        "order": order,
        "derivative": None,
        "derivative_value": None,
        "failed": True,
    }


def _error_text(error):
    return f"{type(error).__name__}: {error}"


def _one_line(text):
    """The error's first line, with "; " (the note's line break) made a comma."""
    first = text.splitlines()[0] if text else text
    return first.replace("; ", ", ")
