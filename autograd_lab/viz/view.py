"""What graph.js is sent: the `graph` object for one layout of a snapshot.

The live widget (widget.py) sends it over the kernel's comm; an exported page (export.py) embeds
one per layout it saved. Building it in one place keeps the two drawings the same.

    >>> graph, shown = view_graph(snapshot, collapsed=None, max_nodes=200)
    >>> graph["layout"]["nodes"]    # a box per visible node; shown: the scopes drawn as one box
"""

from .graph import Recording, snapshot
from .layout import layout, scope_counts
from .snapshot import Snapshot
from .svg import forward_ops
from .torch_recording import TorchRecording


def view_graph(snapshot, collapsed=None, max_nodes=200):
    """The graph object for graph.js with these scopes collapsed (None: the layout's default
    rule: every top-level scope of a graph over `max_nodes` nodes), and the scope paths that
    the layout drew collapsed."""
    boxes = layout(snapshot, collapsed=collapsed, threshold=max_nodes)
    shown = [g["scope"] for g in boxes["groups"] if g["collapsed"]]
    hidden = boxes["hidden"]
    data = snapshot.to_dict()
    forward = [n["id"] for n in forward_ops(data["nodes"])]
    graph = {
        # nodes inside collapsed scopes stay in Python: a 10,000-node graph stays light
        "nodes": [n for n in data["nodes"] if n["id"] not in hidden],
        "edges": [
            e for e in data["edges"] if e["source"] not in hidden and e["target"] not in hidden
        ],
        "events": data["events"],
        "forward": forward,
        "n_steps": len(forward) + len(data["events"]),
        "layout": boxes,
        # for the step captions and for expanding big scopes one level at a time
        "hidden_nodes": {
            n["id"]: {"label": n["label"], "kind": n["kind"], "op": n["op"]}
            for n in data["nodes"]
            if n["id"] in hidden
        },
        "scopes": sorted(scope_counts(snapshot)),
        "max_nodes": max_nodes,
    }
    if data.get("clusters"):  # fused kernels (compile): drawn in their own colour
        graph["clusters"] = data["clusters"]
    if data.get("memory") is not None:  # a memory plan: which planned call each step shows
        graph["memory"] = {**data["memory"], "at_step": memory_at_step(snapshot)}
    if data.get("note"):  # what the drawing cannot show (a PyTorch graph: from_torch.py)
        graph["note"] = data["note"]
    return graph, shown


def memory_at_step(snapshot):
    """For each step 0..n_steps, the planned call whose aftermath it shows (-1: none yet)."""
    at, current = [-1], -1
    for op in forward_ops(snapshot.nodes):
        if op.get("memory_step") is not None:
            current = op["memory_step"]
        at.append(current)
    return at + [current] * len(snapshot.events)


def as_snapshot(roots, recording, names, max_values):
    """A Snapshot from what the constructor was given: one Snapshot (or its dict), one
    Recording, or tensors."""
    if len(roots) == 1 and isinstance(roots[0], Snapshot):
        return roots[0]
    if len(roots) == 1 and isinstance(roots[0], dict) and "nodes" in roots[0]:
        d = roots[0]
        return Snapshot(
            list(d["nodes"]),
            list(d["edges"]),
            list(d.get("events", [])),
            dict(d.get("clusters") or {}),
            d.get("memory"),
            d.get("note"),
        )
    if len(roots) == 1 and isinstance(roots[0], (Recording, TorchRecording)):
        return roots[0].graph(names=names)
    if not roots:
        raise TypeError(
            "a graph view needs something to draw: tensors (GraphWidget(loss)), a recording "
            "(with autograd_lab.record() as r: ...; GraphWidget(r)) or a Snapshot"
        )
    if recording is not None:
        return recording.graph(*roots, names=names)
    return snapshot(*roots, names=names, max_values=max_values)
