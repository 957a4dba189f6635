"""Reading the autograd graph into a Snapshot: the nodes, edges and backward events behind tensors.

    >>> import autograd_lab as ag
    >>> from autograd_lab.viz import record
    >>> with record() as recording:
    ...     a = ag.tensor(2.0, requires_grad=True); b = ag.tensor(6.0, requires_grad=True)
    ...     e = (a + b) * (b + 1)
    ...     e.backward()
    >>> g = recording.graph(e, names={"a": a, "b": b, "e": e})
    >>> [n["label"] for n in g.nodes]
    ['a', 'b', 'Add', 'Add', 'e = Mul', 'e']

Every viewer reads this one structure (the SVG, the widget, the magic): a viewer never walks the
autograd graph itself. `snapshot(*roots)` reads what the graph keeps (node names, shapes, saved
tensors, leaves' values and grads). `record()` also watches the graph being built and run, so it
knows more: the value of every intermediate result, the scope it was made in, and the backward
pass as the engine really ran it (which node ran, which gradient went where, what accumulated).

NB: `autograd_lab.compile.trace` is something else: it writes a function down as an IR program to
compile (as `torch.jit.trace` does); recording only watches, and changes nothing.

The format (viz/snapshot.py's `Snapshot`, whose `to_dict()` is JSON-safe) is described in
CONTRACT.md beside this file.
"""

import inspect
import weakref

import numpy as np

from ..autograd.function import AccumulateGrad, grad_accumulator_of, saved_storage
from ..autograd.grad_mode import _state, no_grad
from ..autograd.graph import current_scope, observe
from ..tensor import Tensor, _make
from .compiled import expand_fused
from .from_torch import is_torch_tensor, torch_parameter_names, torch_snapshot
from .layout import summary_text
from .snapshot import LOCAL_DERIVATIVES, Snapshot, run_gradients, summarize, tensor_node

# ---- watching the graph being built and run ----------------------------------------------------------


class Recording:
    """Records, while active, every node created (with its outputs and scope) and every backward
    event; `graph()` turns that into a Snapshot. Use it through `record()`."""

    def __init__(self, max_values=16):
        self.max_values = max_values
        self.nodes = []  # in creation order
        self.outputs = {}  # node -> [weak reference to each output tensor]
        self.scopes = {}  # node -> "outer/inner"
        self.saved = {}  # node -> what it saved, read at creation (backward frees it later)
        self.values = {}  # node -> summary of its first output, taken when it was computed
        self.slopes = {}  # node -> its local derivative's values, taken while its saved tensors live
        self.events = []  # (kind, node, target node or None, gradient summary)

    def __enter__(self):
        self._observer = observe(on_node=self._on_node, on_backward=self._on_backward)
        self._observer.__enter__()
        return self

    def __exit__(self, *exc):
        self._observer.__exit__(*exc)
        return False

    def _on_node(self, node, outputs):
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        self.nodes.append(node)
        self.outputs[node] = [weakref.ref(t) if isinstance(t, Tensor) else None for t in outputs]
        self.saved[node] = (_saved_list(node), _saved_keys(node))
        if isinstance(outputs[0], Tensor):  # temporaries like the x * w in x * w + b die soon
            self.values[node] = summarize(outputs[0], self.max_values)
            self.slopes[node] = local_derivative_values(node, self.max_values)
        if current_scope():
            self.scopes[node] = "/".join(current_scope())

    def _on_backward(self, kind, node, detail):
        if kind == "run":  # detail: the gradients that arrived, one per output
            grad = next((g for g in detail if g is not None), None)
            target = None
        elif kind == "send":  # detail: (receiving node, its output number, gradient)
            target, _, grad = detail
        else:  # "accumulate": detail is the gradient added into the leaf's .grad
            target, grad = None, detail
        summary = summarize(grad, self.max_values) if grad is not None else None
        self.events.append((kind, node, target, summary))

    def output(self, node, output_nr=0):
        """The output tensor of a recorded node, if it is still alive."""
        refs = self.outputs.get(node)
        return refs[output_nr]() if refs and refs[output_nr] is not None else None

    def sinks(self):
        """The recorded nodes whose results no later recorded op consumed: where the graph ends."""
        consumed = {n for node in self.nodes for n, _ in node.next_functions if n is not None}
        return [node for node in self.nodes if node not in consumed]

    def roots(self):
        """The results of the sinks that are still alive (`loss.sum().backward()` keeps none)."""
        return [t for node in self.sinks() if (t := self.output(node)) is not None]

    def graph(self, *roots, names=None):
        """The Snapshot behind `roots`; by default everything recorded, even results already gone."""
        if roots:
            return snapshot(*roots, names=names, recording=self)
        return snapshot(*self.roots(), names=names, recording=self, start=self.sinks())


def record(max_values=16):
    """Record the graph built and run inside the block: `with record() as r: ...; r.graph()`."""
    return Recording(max_values)


# ---- the snapshot ------------------------------------------------------------------------------------


def snapshot(*roots, names=None, recording=None, max_values=16, start=(), node_ids=None):
    """The graph behind `roots` (tensors) as a Snapshot. `names` maps variable names to tensors.

    `start` adds op nodes to draw from whose result tensors are gone (Recording.graph uses it).
    `node_ids`, a dict, is filled with {autograd node: its id in the Snapshot} (viz/failed.py
    draws the op a cell failed in beside the nodes it read).
    """
    roots = [r for r in roots if r is not None]
    if roots and all(is_torch_tensor(r) for r in roots):  # a real PyTorch graph: from_torch.py
        return torch_snapshot(*roots, names=names, recording=recording, max_values=max_values)
    for r in roots:
        if is_torch_tensor(r):
            raise TypeError(
                "snapshot() draws one library's graph at a time: these roots mix torch tensors "
                "with autograd_lab tensors. Draw each on its own, or compare them with "
                "autograd_lab.viz.side_by_side()"
            )
        if not isinstance(r, Tensor):
            raise TypeError(f"snapshot() draws tensors; got a {type(r).__name__}")
    if recording is not None:
        max_values = recording.max_values
    ops, leaves = _collect(roots, start)
    label_of = _names_by_node(names or {})
    alive = _alive_results(names or {}, roots)

    # Deterministic ids: ops in creation order, each preceded by the leaves it is the first to use.
    ids, order = {}, []
    for op in ops:
        for next_node, _ in op.next_functions:
            if type(next_node) is AccumulateGrad and next_node not in ids:
                ids[next_node] = f"n{len(order)}"
                order.append(next_node)
        ids[op] = f"n{len(order)}"
        order.append(op)
    for leaf in leaves:  # a root that is itself a leaf, used by no op
        if leaf not in ids:
            ids[leaf] = f"n{len(order)}"
            order.append(leaf)

    if node_ids is not None:
        node_ids.update(ids)
    saved = _saved_outputs(ops, recording)
    first_grad, last_grad = run_gradients(recording.events if recording is not None else ())

    graph, fused = Snapshot(), {}
    for index, node in enumerate(order):
        if type(node) is AccumulateGrad:
            graph.nodes.append(
                _leaf_node(node.variable, ids[node], index, label_of, saved, max_values)
            )
        else:
            graph.nodes.append(
                _op_node(
                    node, ids[node], index, label_of, saved, recording, last_grad, max_values, alive
                )
            )
            if (vars(node).get("_metadata") or {}).get("fused"):  # a kernel from compile()
                fused[ids[node]] = node
        graph.add_inputs(node, ids)

    for root in roots:  # each root is drawn as a tensor node after the op that made it
        if root._grad_fn is None:
            continue
        root_id = f"n{len(graph.nodes)}"
        node = _root_node(root, root_id, len(graph.nodes), label_of, max_values)
        if node["grad"] is None:  # backward starts here: the seed gradient, ones for a scalar loss
            node["grad"] = first_grad.get(root._grad_fn)
        graph.nodes.append(node)
        graph.edges.append({"source": ids[root._grad_fn], "target": root_id, "input": 0})

    if recording is not None:
        graph.add_events(recording.events, ids)
    if fused:  # drawn as clusters that open to show the ops inside (viz/compiled.py)
        expand_fused(graph, fused)
    return graph


def tensor_names(namespace):
    """The tensors in a namespace (e.g. `globals()`), by name; `_private` names are skipped.
    PyTorch's tensors count too, and the parameters of its modules ('0.weight'), named last."""
    names = {
        name: value
        for name, value in namespace.items()
        if (isinstance(value, Tensor) or is_torch_tensor(value)) and not name.startswith("_")
    }
    for name, value in torch_parameter_names(namespace).items():
        names.setdefault(name, value)
    return names


def caller_tensor_names():
    """The tensors visible where the user called us: the first frame outside autograd_lab, its
    local names first, then its globals. How `show(e)` and `GraphWidget(e)` label a, b, c, ..."""
    frame = inspect.currentframe()
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "autograd_lab":
        frame = frame.f_back  # wrappers such as autograd_lab.show must not hide the caller
    if frame is None:
        return {}
    names = tensor_names(frame.f_locals)
    for name, value in tensor_names(frame.f_globals).items():
        names.setdefault(name, value)
    return names


def _collect(roots, start=()):
    """Every op node reachable from the roots (in creation order) and the leaves used as roots."""
    seen, stack, ops, leaves = set(), list(start), [], []
    for root in roots:
        if root._grad_fn is not None:
            stack.append(root._grad_fn)
        elif root.requires_grad:
            leaves.append(grad_accumulator_of(root))
    while stack:  # iterative: graphs can be deeper than Python's recursion limit
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if type(node) is not AccumulateGrad:
            ops.append(node)
        for next_node, _ in node.next_functions:
            if next_node is not None and next_node not in seen:
                stack.append(next_node)
    ops.sort(key=lambda n: n._seq)
    return ops, leaves


def _names_by_node(names):
    """Map each named tensor to what stands for it in the graph: a leaf's tensor, or (op, output)."""
    label_of = {}
    for name, tensor in names.items():
        if not isinstance(tensor, Tensor) or name.startswith("_"):
            continue
        key = id(tensor) if tensor._grad_fn is None else (tensor._grad_fn, tensor._output_nr)
        label_of.setdefault(key, name)  # the first name wins, so the result does not depend on
    return label_of  # which alias a notebook defined last


def _alive_results(names, roots):
    """{(op, output_nr): tensor} for the results still held by a name or drawn as a root: a graph
    drawn after the fact (no recording) reads their values, and a retained .grad, from them."""
    alive = {}
    for tensor in [*roots, *names.values()]:
        if isinstance(tensor, Tensor) and tensor._grad_fn is not None:
            alive.setdefault((tensor._grad_fn, tensor._output_nr), tensor)
    return alive


def _saved_outputs(ops, recording):
    """What some op saved for backward: leaf tensors (by id) and op outputs (node, output_nr)."""
    saved = set()
    for op in ops:
        if recording is not None and op in recording.saved:
            saved.update(recording.saved[op][1])  # as saved in forward, even if backward freed it
        else:
            saved.update(_saved_keys(op))
    return saved


def _saved_keys(op):
    keys = []
    for saved in op._saved or ():
        if type(saved) is not tuple:  # None, or packed by saved-tensor hooks: not kept here
            continue
        tensor = saved[0]
        if tensor is None:  # the op saved its own output: (None, version, storage, counter, nr)
            keys.append((op, saved[4]))
        elif tensor._grad_fn is None:
            keys.append(id(tensor))
        else:
            keys.append((tensor._grad_fn, tensor._output_nr))
    return keys


def _saved_list(op):
    if op._saved is None:
        return []  # freed by backward
    names = type(op)._saved_names
    out = []
    for i, saved in enumerate(op._saved):
        if saved is None:
            continue
        shape = saved_storage(saved).shape
        out.append({"name": names[i] if i < len(names) else f"saved{i}", "shape": list(shape)})
    return out


def _leaf_node(tensor, node_id, order, label_of, saved, max_values):
    # a variable's name first; else a module parameter's qualified name ('fc1.weight', nn.Module)
    name = label_of.get(id(tensor)) or tensor._name
    return tensor_node(
        node_id,
        order,
        name,
        "parameter" if type(tensor).__name__ == "Parameter" else "input",
        tensor._data.shape,
        tensor.dtype.name,
        summarize(tensor, max_values),
        grad=summarize(tensor._grad, max_values) if tensor._grad is not None else None,
        is_saved=id(tensor) in saved,
    )


def _op_node(op, node_id, order, label_of, saved, recording, last_grad, max_values, alive):
    name = op.name()
    short = name.rsplit("Backward", 1)[0] or name
    output_name = label_of.get((op, 0))
    shape, dtype = op._outputs[0]
    value = recording.values.get(op) if recording is not None else None
    grad = last_grad.get(op)
    result = alive.get((op, 0))
    if value is None and result is not None:  # not recorded, but the result is still at hand
        value = summarize(result, max_values)
    if grad is None and result is not None and result._grad is not None:  # retain_grad()
        grad = summarize(result._grad, max_values)
    return {
        "id": node_id,
        "kind": "op",
        "label": f"{output_name} = {short}" if output_name else short,
        "op": name,
        "name": output_name,
        "role": "intermediate",
        "shape": list(shape),
        "dtype": np.dtype(dtype).name,
        "value": value,
        "grad": grad,
        "saved": recording.saved[op][0]
        if recording is not None and op in recording.saved
        else _saved_list(op),
        "saved_freed": op._saved is None,
        "is_saved": (op, 0) in saved,
        "scope": recording.scopes.get(op) if recording is not None else None,
        "order": order,
        "derivative": LOCAL_DERIVATIVES.get(name),
        "derivative_value": _derivative_value(
            LOCAL_DERIVATIVES.get(name),
            recording.slopes.get(op)
            if recording is not None and op in recording.slopes
            else local_derivative_values(op, max_values),
            np.dtype(dtype).name,
        ),
    }


def _root_node(tensor, node_id, order, label_of, max_values):
    name = label_of.get((tensor._grad_fn, tensor._output_nr))
    return tensor_node(
        node_id,
        order,
        name,
        "output",
        tensor._data.shape,
        tensor.dtype.name,
        summarize(tensor, max_values),
        grad=summarize(tensor._grad, max_values) if tensor._grad is not None else None,
        unnamed="output",
    )


# ---- the local derivative's value at this step ----------------------------------------------------


def local_derivative_values(node, max_values=16):
    """What an elementwise op's backward multiplies the incoming gradient by, per input, at the
    values of this forward pass: a summary per input (None where the input needs no gradient).

    For an op that works element by element (its record has a `kernel`), output element i depends
    only on element i of each input, so running its backward with a gradient of ones gives exactly
    d out_i / d input_i: `1 - tanh(x)²` for tanh, `other` and `self` for `self * other`. Other ops
    (matmul, sum, ...) mix elements: there is no one number per element to show, so None.
    Needs the saved tensors, so it is read in forward (backward frees them); the gradients it
    computes are thrown away and nothing is recorded.
    """
    fn = node._fn
    if getattr(fn, "kernel", None) is None or node._saved is None or len(node._outputs) != 1:
        return None
    if node._hook_order is not None:  # packed by saved-tensor hooks: unpacking would run them
        return None
    shape, dtype = node._outputs[0]
    profiler, _state.profiler = _state.profiler, None  # not an op the user asked for
    try:
        with no_grad():
            results = fn.backward(node, _make(np.ones(shape, dtype)))
    finally:
        _state.profiler = profiler
    results = results if isinstance(results, tuple) else (results,)
    return [
        summarize(r, max_values) if isinstance(r, Tensor) and next_node is not None else None
        for r, (next_node, _) in zip(results, node.next_functions)
    ]


def _derivative_value(formula, values, dtype):
    """The local derivative's formula with its value at this step after each part:
    "d tanh(x)/dx = 1 - tanh(x)² = 0.5"; "... d/d(self) = other = 7.,  d/d(other) = self = 8."."""
    shown = [summary_text(v, dtype) if v is not None else None for v in values or ()]
    if not formula or not any(shown):
        return None
    parts = formula.split(",  ")  # the records write one part per input, ",  " between them
    if len(parts) == 1 and len(shown) > 1 and sum(v is not None for v in shown) == 1:
        shown = [v for v in shown if v is not None]  # x ** 2: one formula, for x alone
    if len(parts) != len(shown):
        return f"{formula}; here: {', '.join(v for v in shown if v is not None)}"
    out = []
    for part, value in zip(parts, shown):
        formula_part, _, aside = part.partition("  (")  # "exp(x)  (the result itself)"
        right = formula_part.rsplit("= ", 1)[-1].strip()
        if value is None or _is_number(right):  # a number needs no gradient; "= 1" says it all
            out.append(part)
        else:
            out.append(f"{formula_part} = {value}" + (f"  ({aside}" if aside else ""))
    return ",  ".join(out)


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True
