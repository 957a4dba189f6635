"""Compiled functions in the viewer: fused groups as clusters, the memory plan per node.

    >>> import autograd_lab as ag
    >>> f = ag.compile(lambda x: ((x * 2).tanh() + 1).sum())
    >>> y = f(ag.ones(8, requires_grad=True))
    >>> graph_to_viz(f.graph, f.plan).clusters["fused0"]["label"]  # the calls, fused ones framed
    'fused: mul·tanh·add'
    >>> [n["label"] for n in ag.viz.snapshot(y).nodes if not n.get("fused_into")]
    ['tensor', 'Fused', 'Sum', 'output']

One compiled function, two pictures, drawn by every viewer (the SVG and the widget):
- the IR view, `graph_to_viz(graph, plan, memory=...)` (or `ag.show(f)`): one box per call; the
  calls fused into one kernel sit in a *cluster*, an orange frame titled "fused: mul·tanh·add".
  With a memory plan, every value says where it lives ("buf 2 · freed after %7") and the replay
  slider shows which values are alive, and which are already freed, after each call.
- autograd's view, `snapshot(y)` of a compiled function's result: the kernel is ONE node,
  `FusedBackward0`, drawn as a collapsed cluster. Expanding it shows the original ops inside,
  wired as they read each other; they have no values of their own, because the kernel keeps its
  intermediates in registers and never writes them to memory.

A cluster is a scope (so layout, collapsing and expanding work as for `autograd.scope`) that the
graph's `clusters` lists with kind "fused", so viewers can draw it in its own colour. The fields
are described in CONTRACT.md.
"""

import numpy as np

from ..compile.extras.memory import plan_memory
from .snapshot import LOCAL_DERIVATIVES, Snapshot

MAX_NAMES = 6  # a cluster's title names at most this many ops (GELU fuses nine)


# ---- clusters --------------------------------------------------------------------------------------


def short_name(op_name):
    """The op in a cluster's title: "TanhBackward0" -> "tanh"."""
    return op_name.rsplit("Backward", 1)[0].lower() or op_name


def cluster_label(op_names):
    """A cluster's title: "fused: mul·tanh·add", shortened for long groups."""
    names = [short_name(name) for name in op_names]
    if len(names) > MAX_NAMES:
        return f"fused: {'·'.join(names[:MAX_NAMES])}·… ({len(names)} ops)"
    return "fused: " + "·".join(names)


def fused_cluster(op_names, collapsed, node):
    """The `clusters` entry of one fused group (see CONTRACT.md); `node` computes the kernel."""
    return {
        "kind": "fused",
        "label": cluster_label(op_names),
        "ops": list(op_names),
        "collapsed": collapsed,
        "node": node,
    }


# ---- autograd's view: a FusedBackward0 node opens to show its ops -----------------------------------


def expand_fused(graph, fused):
    """Give each FusedBackward0 node of a snapshot a cluster holding the original ops.

    `fused` maps node ids to their autograd nodes. The node moves into a new scope `fused0`,
    `fused1`, ... (inside its own scope, if any); one member node per original op joins it
    (`fused_into` = the node's id: not a forward step of its own, no value). The node's input
    edges now go to the members that read those inputs, and the members that make the kernel's
    outputs point at the node. The cluster starts collapsed: one box, as autograd recorded it.
    """
    by_id = {node["id"]: node for node in graph.nodes}
    for number, (node_id, node) in enumerate(fused.items()):
        fused_node = by_id[node_id]
        names = tuple(vars(node)["_metadata"]["fused"])
        scope = fused_node["scope"]
        path = f"{scope}/fused{number}" if scope else f"fused{number}"
        fused_node.update(scope=path, fused=list(names))
        graph.clusters[path] = fused_cluster(names, collapsed=True, node=node_id)
        # what reaches the node: its input number -> the node id it comes from
        source_of = {e["input"]: e["source"] for e in graph.edges if e["target"] == node_id}
        graph.edges = [e for e in graph.edges if e["target"] != node_id]
        group = getattr(getattr(node, "kernel", None), "group", None)
        reads, makes = _wiring(group, names, len(node.next_functions))
        first = len(graph.nodes)
        calls = group.calls if group is not None else [None] * len(names)
        for name, call in zip(names, calls, strict=True):
            graph.nodes.append(_member(f"n{len(graph.nodes)}", name, call, fused_node))
        for source, member, k in reads:
            kind, i = source
            source_id = f"n{first + i}" if kind == "member" else source_of.get(i)
            if source_id is not None:  # an input that needs no gradient is not drawn
                graph.edges.append(
                    {"source": source_id, "target": f"n{first + member}", "input": k}
                )
        for member, output in makes:
            graph.edges.append({"source": f"n{first + member}", "target": node_id, "input": output})


def _wiring(group, names, n_inputs):
    """Who reads what inside a fused group: ([(source, member, input number)], [(member,
    output number)]); a source is ("input", p) (the node's input p) or ("member", i)."""
    if group is None:  # only the names are known (metadata): the ops in the order they ran
        reads = [(("input", p), 0, p) for p in range(n_inputs)]
        reads += [(("member", i - 1), i, 0) for i in range(1, len(names))]
        return reads, [(len(names) - 1, 0)]
    position = {value.id: p for p, value in enumerate(group.inputs)}
    made_by = {v.id: i for i, call in enumerate(group.calls) for v in call.outputs if v is not None}
    reads = []
    for i, call in enumerate(group.calls):
        for k, value in enumerate(call.inputs()):
            if value.id in made_by:
                reads.append((("member", made_by[value.id]), i, k))
            elif value.id in position:  # else a constant the kernel holds: nothing to draw
                reads.append((("input", position[value.id]), i, k))
    makes = [(made_by[v.id], j) for j, v in enumerate(group.outputs) if v.id in made_by]
    return reads, makes


def _member(node_id, name, call, fused_node):
    """An original op inside a fused node: drawn, but never computed on its own."""
    out = next((v for v in call.outputs if v is not None), None) if call is not None else None
    return {
        "id": node_id,
        "kind": "op",
        "label": name.rsplit("Backward", 1)[0] or name,
        "op": name,
        "name": None,
        "role": "intermediate",
        "shape": list(out.shape) if out is not None else list(fused_node["shape"]),
        "dtype": str(out.dtype) if out is not None else fused_node["dtype"],
        "value": None,
        "grad": None,
        "saved": [],
        "is_saved": False,
        "scope": fused_node["scope"],
        "order": fused_node["order"],
        "derivative": LOCAL_DERIVATIVES.get(name),
        "fused_into": fused_node["id"],
        "memory": {"in_registers": True, "note": "in registers"},
    }


# ---- the IR view: clusters and the memory plan ------------------------------------------------------


def annotate(viz, graph, plan=None, memory=None):
    """What `graph_to_viz(graph, plan, memory)` adds to its drawing of the traced `graph`: a cluster per
    fused group of `plan` (to_viz puts group k's calls in scope `fused{k}`) and, with a memory
    plan (compile/extras/memory.py), each value's place in it and the values alive after each call.

    A group runs as one kernel, so it is one step of the replay: its calls are computed with its
    last one (`fused_into`), where the fused call runs.
    """
    ops = [node for node in viz.nodes if node["kind"] == "op"]
    for number, group in enumerate(getattr(plan, "groups", None) or ()):
        last = ops[group.calls[-1].index]["id"]
        viz.clusters[f"fused{number}"] = fused_cluster(group.names, collapsed=False, node=last)
        for call in group.calls[:-1]:
            ops[call.index]["fused_into"] = last
    if memory is not None:
        _add_memory(viz, graph, plan, memory)
    return viz


def _add_memory(viz, graph, plan, memory):
    """Per node: `memory` (where its value lives) and `memory_step` (the planned call that
    computes it); for the graph: `memory`, the values alive and freed after each planned call."""
    ops = [node for node in viz.nodes if node["kind"] == "op"]
    outputs = viz.nodes[len(viz.nodes) - len(graph.outputs) :]
    if len(ops) != len(graph.calls) or len(outputs) != len(graph.outputs):
        raise ValueError("to_viz: the drawing does not match the graph (one op node per call)")
    planned = memory.graph  # the calls the plan runs: fused calls in place of their groups
    n = len(planned.calls)
    made_by = {v.id: call.index for call in planned.calls for v in call.outputs if v is not None}
    name = {call.index: f"%{_first(call.outputs).id}" for call in planned.calls}
    fused_at = {}  # traced call index -> the planned call its group runs in
    for group in getattr(plan, "groups", None) or ():
        for call in group.calls:
            fused_at[call.index] = made_by.get(group.outputs[0].id)
    shown_in = {}  # value id -> the nodes that show it (its op, and an output's tensor node)
    for call, node in zip(graph.calls, ops, strict=True):
        out = _first(call.outputs)
        if out is None:
            continue
        node["label"] = f"%{out.id} = {node['label']}"  # the notes name values: %7
        node["memory_step"] = made_by.get(out.id, fused_at.get(call.index))
        if out.id in made_by:
            node["memory"] = _value_memory(out.id, memory, name, n)
        else:  # made and used inside a fused kernel: never written to memory
            node["memory"] = {"value": f"%{out.id}", "in_registers": True, "note": "in registers"}
        shown_in.setdefault(out.id, []).append(node["id"])
    for value, node in zip(graph.outputs, outputs, strict=True):
        if value.id in memory.intervals:  # not when fn returns one of its inputs
            node["memory"] = _value_memory(value.id, memory, name, n)
            shown_in.setdefault(value.id, []).append(node["id"])
    live, eager = memory.live_bytes(), memory.live_bytes(eager=True)
    returned = [v.id for v in planned.outputs if v.id in memory.intervals]

    def nodes(value_ids):
        return [node_id for v in value_ids for node_id in shown_in.get(v, ())]

    steps = []
    for call in planned.calls:  # the plan lets results "die" at the end: the caller has them
        made = [v for v in returned if memory.intervals[v][0] <= call.index]
        alive = sorted(set(memory.alive_after(call.index)) | set(made))
        freed = [v for v in memory.freed_after(call.index) if v not in returned]
        steps.append(
            {
                "label": name[call.index],
                "live_bytes": int(live[call.index]),
                "live": bytes_text(live[call.index]),
                "alive": nodes(alive),
                "freed": nodes(freed),
            }
        )
    peak, eager_peak = int(live.max(initial=0)), int(eager.max(initial=0))
    viz.memory = {
        "steps": steps,
        "peak_bytes": peak,
        "peak": bytes_text(peak),
        "eager_peak_bytes": eager_peak,
        "eager_peak": bytes_text(eager_peak),
        "buffers": len(memory.slots),
        "reused": len(memory.reused),
    }


def _first(values):
    return next((v for v in values if v is not None), None)


def _value_memory(value_id, memory, name, n):
    """Where one value made by a planned call lives, and the note drawn under its box."""
    born, dies = memory.intervals[value_id]
    buffer = memory.buffers.get(value_id)
    reused_from = _previous_holder(memory.buffers, value_id) if value_id in memory.reused else None
    info = {
        "value": f"%{value_id}",
        "bytes": int(memory.nbytes[value_id]),
        "buffer": buffer,
        "reused_from": reused_from,
        "born": born,
        "dies": dies,
    }
    parts = (
        []
        if buffer is None
        else [f"buf {buffer}" + (f" (was {reused_from})" if reused_from else "")]
    )
    if value_id in {v.id for v in memory.graph.outputs}:
        parts.append("returned")
    elif dies >= n:  # a backward step: the backward of call 2n-1-dies still needed it
        parts.append(f"kept for backward of {name[2 * n - 1 - dies]}")
    else:
        parts.append(f"freed after {name[dies]}")
    info["note"] = " · ".join(parts)
    return info


def _previous_holder(buffers, value_id):
    """The value that held this buffer before `value_id` took it over."""
    before = None
    for other, slot in buffers.items():  # in the order the planner handed buffers out
        if other == value_id:
            return before
        if slot == buffers[value_id]:
            before = f"%{other}"
    return before


def bytes_text(n):
    """Bytes, short and stable: 80 B, 1.6 kB, 3.31 MB."""
    n = int(n)
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1e3:.3g} kB"
    return f"{n / 1e6:.3g} MB"


# ---- the IR view: the traced graph, drawn -----------------------------------------------------------


def graph_to_viz(graph, plan=None, memory=None):
    """A traced IR Graph (autograd_lab.compile) in the viewers' format: draw it with
    `GraphWidget(graph_to_viz(g))` or `to_svg(...)`.

    Inputs and constants become tensor nodes, calls become op nodes (the value of an op node
    is its output), the outputs become tensor nodes at the right. With a fusion `plan`, the
    calls of each fused group share a scope `fused0`, `fused1`, ... so the viewer draws each
    group as one box. With a `memory` plan (compile/extras/memory.py), each value shows where
    it lives and when it is freed (`annotate`).
    """
    group_of = {}
    for number, group in enumerate(getattr(plan, "groups", ()) or ()):
        for call in group.calls:
            group_of[call.index] = f"fused{number}"
    nodes, edges, source = [], [], {}

    def add(kind, label, op, value, role, scope=None):
        node_id = f"n{len(nodes)}"
        nodes.append(
            {
                "id": node_id,
                "kind": kind,
                "label": label,
                "op": op,
                "name": None,
                "role": role,
                "shape": list(value.shape) if value else [],
                "dtype": np.dtype(value.dtype).name if value else None,
                "value": None,
                "grad": None,
                "saved": [],
                "is_saved": False,
                "scope": scope,
                "order": len(nodes),
                "derivative": None,
            }
        )
        return node_id

    for value in graph.values():
        if value.kind != "result":
            label = f"%{value.id}" if value.kind == "input" else f"const %{value.id}"
            role = "input" if value.kind == "input" else "parameter"
            source[value.id] = add("tensor", label, None, value, role)
    for call in graph.calls:
        first = next((v for v in call.outputs if v is not None), None)
        label = call.name.replace("Backward0", "").replace("Backward1", "")
        node_id = add("op", label, call.name, first, "intermediate", group_of.get(call.index))
        for k, value in enumerate(call.inputs()):
            edges.append({"source": source[value.id], "target": node_id, "input": k})
        for value in call.outputs:
            if value is not None:
                source[value.id] = node_id
    for value in graph.outputs:
        node_id = add("tensor", f"%{value.id}", None, value, "output")
        edges.append({"source": source[value.id], "target": node_id, "input": 0})
    return annotate(Snapshot(nodes, edges, []), graph, plan, memory)


# ---- showing a compiled function ----------------------------------------------------------------


def compiled_view(compiled):
    """The IR view of one compiled signature (`CompiledFunction.current()`): its traced graph,
    fused groups as clusters, and its memory plan (planned here when compile() made none)."""
    memory = compiled.memory_plan
    if memory is None:
        memory = plan_memory(compiled.executed)  # lifetimes of the forward pass
    return graph_to_viz(compiled.graph, compiled.plan, memory=memory)
