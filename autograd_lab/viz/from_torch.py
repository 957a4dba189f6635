"""Real PyTorch graphs, read into the same Snapshot as ours, so every viewer draws them.

    import torch
    from autograd_lab.viz import record_torch, to_svg
    with record_torch() as recording:
        a = torch.tensor(2.0, requires_grad=True); b = torch.tensor(6.0, requires_grad=True)
        e = (a + b) * (b + 1)
        e.backward()
    to_svg(recording.graph(e))     # show(e), GraphWidget(e) and %autograd e read torch tensors too

This file reads a torch graph; torch_recording.py watches PyTorch build and run one.

A torch graph is made of the same parts as ours, under the same names: each tensor's `grad_fn`
(a node such as `MulBackward0`), its `next_functions` (the edges), the `AccumulateGrad` node of
each leaf (its `.variable` is the leaf) and what each node saved for backward (`_saved_self`,
`_saved_other`, ...). What can be seen depends on when we look:

- the graph alone (`snapshot(e)`): the nodes, edges, saved tensors (until backward frees them),
  the leaves' values and `.grad`s, and the values of named or saved intermediate results;
- inside `record_torch()`: also every intermediate value as it was computed, the module (scope)
  that made each node, and each backward pass called inside, step by step, in the order
  PyTorch's engine runs it (`watch_torch(loss)` does only the backward part);
- a graph whose backward already ran outside a recording: the order of that backward pass is
  lost, and without `retain_graph=True` its saved tensors were freed. It is still drawn, with a
  note saying what cannot be shown (`Snapshot.note`).

torch is never imported by autograd_lab: these functions only look at objects the user made with
it (a torch tensor is recognised by its class, `torch.Tensor`), and `record_torch()` imports it
because it is asked to watch it.
"""

import numpy as np

from .snapshot import LOCAL_DERIVATIVES, Snapshot, run_gradients, summarize, tensor_node

# ---- recognising PyTorch's objects without importing torch ----------------------------------------


def _has_class(value, module, name):
    return any(c.__module__ == module and c.__name__ == name for c in type(value).__mro__)


def is_torch_tensor(value):
    """A `torch.Tensor` (or a subclass such as `nn.Parameter`); False for ours."""
    return _has_class(value, "torch", "Tensor")


def is_torch_tensor_class(cls):
    """The class `torch.Tensor` itself (not autograd_lab's, which `as_torch()` may call torch)."""
    return isinstance(cls, type) and cls.__module__ == "torch" and cls.__name__ == "Tensor"


def is_torch_module(value):
    """A `torch.nn.Module`: its parameters can be named after it ('fc1.weight')."""
    return _has_class(value, "torch.nn.modules.module", "Module")


def is_leaf_node(node):
    """A leaf's AccumulateGrad node: the end of the graph, where `.grad` is added to."""
    return type(node).__name__ == "AccumulateGrad"


def torch_parameter_names(namespace):
    """The parameters of the torch modules in a namespace, by qualified name ('0.weight'), as our
    nn.Module names its own parameters when it runs; named only once, by the first module."""
    names = {}
    for key, value in namespace.items():
        if is_torch_module(value) and not key.startswith("_"):
            for name, param in value.named_parameters():
                names.setdefault(name, param)
    return names


# ---- reading one node ------------------------------------------------------------------------------


def node_name(node):
    """PyTorch's name of the node: "MulBackward0"; "CopySlices" without its C++ namespace."""
    return node.name().rsplit("::", 1)[-1]


def _output_meta(node):
    """(shape, dtype) of the node's first output: what its incoming gradient must look like."""
    meta = node._input_metadata  # PyTorch's name: what comes in to the node in backward
    if not meta:
        return [], None
    return list(meta[0].shape), _dtype_name(meta[0].dtype)


def _dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def _numpy(tensor):
    """The values of a torch tensor as a numpy array (numpy has no bfloat16: float32 then)."""
    tensor = tensor.detach().cpu().resolve_conj().resolve_neg()
    if str(tensor.dtype) == "torch.bfloat16":
        tensor = tensor.float()
    return tensor.numpy()


def summarize_torch(tensor, max_values=16):
    """The summary (CONTRACT.md) of a torch tensor; None if its values cannot be read."""
    try:
        return summarize(_numpy(tensor), max_values)
    except (RuntimeError, TypeError, ValueError):  # sparse, meta, quantized... tensors
        return None


def _key(tensor):
    """What stands for a tensor in the graph: a leaf itself (by id), else (grad_fn, output_nr)."""
    if tensor.grad_fn is None:
        return id(tensor)
    return (tensor.grad_fn, tensor.output_nr)


def read_saved(node, max_values=16, known=None):
    """What a node saved for backward, read now: (tensors, attributes, freed).

    tensors: [{"name", "shape", "value", "key"}] (key: see `_key`, to mark the saved tensor;
    `known` maps keys to values already summarized, and learns the new ones);
    attributes: the other saved arguments ({"alpha": 1, "dim": 0}); freed: the names of the
    tensors backward freed (it ran without retain_graph=True): only their names are left.
    """
    tensors, attributes, freed = [], {}, []
    for name, saved in _saved_items(node):
        if saved is _FREED:
            freed.append(name)
        elif saved is _NOT_A_TENSOR:
            attributes[name] = _plain(getattr(node, "_saved_" + name, None))
        else:
            _add_saved(tensors, name, saved, max_values, {} if known is None else known)
    return tensors, attributes, freed


def freed_names(node):
    """The names of the tensors this node saved that backward has freed since."""
    return [name for name, saved in _saved_items(node, tensors_only=True) if saved is _FREED]


_FREED, _NOT_A_TENSOR = object(), object()  # what _saved_items gives instead of a tensor


def _saved_items(node, tensors_only=False):
    """(name, what was saved) for each `_saved_*` attribute, in the order a formula reads them;
    _FREED for a tensor backward freed, _NOT_A_TENSOR for a number, a size or a flag."""
    for attribute in sorted((a for a in dir(node) if a.startswith("_saved_")), key=_formula_order):
        name = attribute.removeprefix("_saved_")
        if not hasattr(node, "_raw_saved_" + name):  # only a saved tensor has a raw twin
            if not tensors_only:
                yield name, _NOT_A_TENSOR
            continue
        try:
            yield name, getattr(node, attribute)
        except RuntimeError:  # "... saved tensors after they have already been freed"
            yield name, _FREED
    if hasattr(node, "_forward_cls"):  # a torch.autograd.Function's node: ctx.saved_tensors
        try:  # (reading it, even with hasattr, raises once backward freed it)
            yield "saved_tensors", list(node.saved_tensors)
        except RuntimeError:
            yield "saved_tensors", _FREED


def _formula_order(attribute):
    """dir() sorts names, PyTorch's node does not say its own order: read them as a formula
    does, self first, then other, then the rest, the op's own result last."""
    name = attribute.removeprefix("_saved_")
    return ({"self": 0, "other": 1, "result": 3}.get(name, 2), name)


def _add_saved(tensors, name, saved, max_values, known):
    if isinstance(saved, (list, tuple)):  # a list of tensors, e.g. what torch.cat saved
        for i, one in enumerate(saved):
            _add_saved(tensors, f"{name}[{i}]", one, max_values, known)
    elif is_torch_tensor(saved):
        key = _key(saved)
        if key not in known:
            known[key] = summarize_torch(saved, max_values)
        tensors.append({"name": name, "shape": list(saved.shape), "value": known[key], "key": key})


def _plain(value):
    """A saved argument as JSON-safe data (sizes as lists, anything unusual as text)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if np.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


# ---- the snapshot -------------------------------------------------------------------------------------


def torch_snapshot(*roots, names=None, recording=None, max_values=16, start=()):
    """The graph behind torch tensors `roots` as a Snapshot, with the node ids, labels and
    fields of ours (CONTRACT.md). `names` maps variable names to tensors."""
    if recording is not None and not hasattr(recording, "watch_backward"):  # ours: record()
        raise TypeError(
            f"recording= must come from record_torch() to draw torch tensors; got a "
            f"{type(recording).__name__} (autograd_lab.record() watches autograd_lab's graphs)"
        )
    if recording is not None:
        max_values = recording.max_values
    ops, leaves = _collect(roots, start)
    label_of = _names_by_node(names or {})
    if recording is not None:  # parameters named after the modules that ran them
        for key, name in recording.parameter_names.items():
            label_of.setdefault(key, name)

    # Deterministic ids, as ours: ops in creation order, each after the leaves it uses first.
    ids, order = {}, []
    for op in ops:
        for next_node, _ in op.next_functions:
            if next_node is not None and is_leaf_node(next_node) and next_node not in ids:
                ids[next_node] = f"n{len(order)}"
                order.append(next_node)
        ids[op] = f"n{len(order)}"
        order.append(op)
    drawn_leaves = {id(node.variable) for node in order if is_leaf_node(node)}
    for leaf in leaves:  # a root that is itself a leaf, used by no op: the tensor alone
        if id(leaf) not in drawn_leaves:
            order.append(leaf)

    saved = {op: _saved_of(op, recording, max_values) for op in ops}
    values = _values(ops, saved, names or {}, roots, recording, max_values)
    first_grad, last_grad = run_gradients(recording.events if recording is not None else ())
    saved_keys = {s["key"] for tensors, _, _ in saved.values() for s in tensors if s["key"]}

    graph = Snapshot()
    for index, node in enumerate(order):
        if is_leaf_node(node) or is_torch_tensor(node):  # a leaf: its tensor, and no inputs
            leaf = node if is_torch_tensor(node) else node.variable
            role = "parameter" if _has_class(leaf, "torch.nn.parameter", "Parameter") else "input"
            drawn = _tensor_node(leaf, f"n{index}", index, label_of, max_values, role)
            drawn["is_saved"] = id(leaf) in saved_keys
            graph.nodes.append(drawn)
            continue
        drawn = _op_node(node, ids[node], index, label_of, saved[node], values, last_grad)
        drawn["is_saved"] = (node, 0) in saved_keys
        drawn["scope"] = recording.scopes.get(node) if recording is not None else None
        graph.nodes.append(drawn)
        graph.add_inputs(node, ids)

    for root in roots:  # each root is drawn as a tensor node after the op that made it
        if root.grad_fn is None:
            continue
        root_id = f"n{len(graph.nodes)}"
        drawn = _tensor_node(root, root_id, len(graph.nodes), label_of, max_values, "output")
        drawn["label"] = drawn["name"] or "output"
        if drawn["grad"] is None:  # backward starts here: the seed gradient, as ours shows it
            drawn["grad"] = first_grad.get(root.grad_fn)
        graph.nodes.append(drawn)
        graph.edges.append({"source": ids[root.grad_fn], "target": root_id, "input": 0})

    graph.add_events(recording.events if recording is not None else (), ids)
    graph.note = _note(graph, roots, recording)
    return graph


def _collect(roots, start=()):
    """Every op node reachable from the roots (in creation order) and the leaves used as roots."""
    seen, stack, ops, leaves = set(), list(start), [], []
    for root in roots:
        if root.grad_fn is not None:
            stack.append(root.grad_fn)
        elif root.requires_grad:  # a leaf drawn alone
            leaves.append(root)
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if not is_leaf_node(node):
            ops.append(node)
        stack.extend(n for n, _ in node.next_functions if n is not None and n not in seen)
    ops.sort(key=lambda n: n._sequence_nr())
    return ops, leaves


def _names_by_node(names):
    label_of = {}
    for name, tensor in names.items():
        if is_torch_tensor(tensor) and not name.startswith("_"):
            label_of.setdefault(_key(tensor), name)  # the first name wins, as in ours
    return label_of


def _saved_of(op, recording, max_values):
    """What the op saved: as read when it was made (recorded, so backward freeing them later
    loses nothing), else as read now; and the names of those freed by now."""
    if recording is not None and op in recording.saved:
        tensors, attributes, _ = recording.saved[op]
        return tensors, attributes, freed_names(op)
    return read_saved(op, max_values)


def _values(ops, saved, names, roots, recording, max_values):
    """(node, output_nr) -> value summary, from every place that tells it: the recording (the
    value when computed), then the tensors named or drawn, then what some op saved."""
    values = dict(recording.values) if recording is not None else {}
    for tensor in [*names.values(), *roots]:
        if is_torch_tensor(tensor) and tensor.grad_fn is not None:
            key = (tensor.grad_fn, tensor.output_nr)
            if key not in values:
                values[key] = summarize_torch(tensor, max_values)
    for op in ops:
        for entry in saved[op][0]:
            if isinstance(entry["key"], tuple) and entry["value"] is not None:
                values.setdefault(entry["key"], entry["value"])
    return values


def _tensor_node(tensor, node_id, order, label_of, max_values, role):
    name = label_of.get(_key(tensor))
    value = summarize_torch(tensor, max_values)
    dtype = _dtype_name(tensor.dtype)
    grad = _grad_of(tensor, max_values)
    return tensor_node(node_id, order, name, role, tensor.shape, dtype, value, grad=grad)


def _grad_of(tensor, max_values):
    """`.grad`, read only where PyTorch keeps one (it warns when asked for another's)."""
    if not (tensor.is_leaf or tensor.retains_grad) or tensor.grad is None:
        return None
    return summarize_torch(tensor.grad, max_values)


def _op_node(op, node_id, order, label_of, saved, values, last_grad):
    name = node_name(op)
    short = name.rsplit("Backward", 1)[0] or name
    output_name = label_of.get((op, 0))
    shape, dtype = _output_meta(op)
    tensors, attributes, freed = saved
    return {
        "id": node_id,
        "kind": "op",
        "label": f"{output_name} = {short}" if output_name else short,
        "op": name,
        "name": output_name,
        "role": "intermediate",
        "shape": shape,
        "dtype": dtype,
        "value": values.get((op, 0)),
        "grad": last_grad.get(op),
        "saved": [{"name": s["name"], "shape": s["shape"], "value": s["value"]} for s in tensors],
        "saved_attributes": attributes,  # PyTorch's node keeps these too: alpha, dim, sizes
        "saved_freed": bool(freed),
        "saved_freed_names": freed,  # freed before anything read them: their names are left
        "is_saved": False,
        "scope": None,
        "order": order,
        "derivative": LOCAL_DERIVATIVES.get(name),
    }


def _note(graph, roots, recording):
    """One line saying what this drawing of a PyTorch graph cannot show, and why."""
    parts = ["PyTorch graph"]
    ops = [n for n in graph.nodes if n["kind"] == "op"]
    leaves_have_grad = any(n["grad"] is not None for n in graph.nodes if n["kind"] == "tensor")
    freed = any(n.get("saved_freed") for n in ops)
    if not graph.events and (leaves_have_grad or freed):
        parts.append(
            "backward ran unwatched: its steps are unknown, only the leaves' .grad "
            "(watch it: record_torch() or watch_torch(loss))"
        )
    elif not graph.events:
        parts.append("backward not run yet (watch_torch(loss) runs it and shows each step)")
    if any(n.get("saved_freed_names") and not n["saved"] for n in ops):
        parts.append("saved tensors freed by backward (retain_graph=False): only their names")
    unknown = sum(1 for n in ops if n["value"] is None)
    if unknown:
        why = (
            "made inside a PyTorch function that did not return them"
            if recording is not None and recording.watched_forward
            else "build the graph inside record_torch() to see them"
        )
        parts.append(f"{unknown} intermediate value{'s' if unknown > 1 else ''} unknown ({why})")
    return "; ".join(parts)
