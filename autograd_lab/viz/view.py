"""What graph.js is sent: the `graph` object for one layout of a snapshot.

The live widget (widget.py) sends it over the kernel's comm; an exported page (export.py) embeds
one per layout it saved. Building it in one place keeps the two drawings the same.

    >>> graph, shown = view_graph(snapshot, collapsed=None, max_nodes=200)
    >>> graph["layout"]["nodes"]    # a box per visible node; shown: the scopes drawn as one box
"""

from .graph import Recording, snapshot
from .layout import default_collapsed, layout, scope_counts
from .repeats import fold, prefixes
from .snapshot import Snapshot
from .svg import forward_ops
from .torch_recording import TorchRecording


def view_graph(snapshot, collapsed=None, max_nodes=200, folded=(), repeats=(), scopes_drawn=None):
    """The graph object for graph.js with these scopes collapsed (None: the layout's default
    rule: every top-level scope of a graph over `max_nodes` nodes), and the scope paths that
    the layout drew collapsed. `folded` names the repeated blocks (`repeats`: find_repeats's)
    drawn as one box, "×N"; `collapsed` never names a repeat."""
    data = snapshot.to_dict()
    names = {r["name"] for r in repeats}
    if folded:  # a folded repeat: one scope ...
        data = fold(data, folded, repeats, scopes_drawn)
    if collapsed is None:
        collapsed = default_collapsed(data, max_nodes)
    # ... drawn as one collapsed box; the scopes the caller keeps are the real ones only
    collapsed = [p for p in collapsed if p not in names] + list(folded)
    boxes = layout(data, collapsed=collapsed, threshold=max_nodes)
    shown = [g["scope"] for g in boxes["groups"] if g["collapsed"] and g["scope"] not in names]
    # ... plus a folded repeat's blocks, each collapsed, for the readers that cannot fold: the
    # static picture and a repeat opened again (widget.py's _fold_changed)
    for r in repeats:
        if r["name"] in folded:
            shut = set(shown)
            shown += [p for p in r["scopes"] if not shut.intersection(prefixes(p))]
    hidden = boxes["hidden"]
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
        # for the step captions, for expanding big scopes one level at a time, and for the
        # search box, which finds hidden nodes too (their box lights up)
        "hidden_nodes": {
            n["id"]: {"label": n["label"], "kind": n["kind"], "op": n["op"], "name": n["name"]}
            for n in data["nodes"]
            if n["id"] in hidden
        },
        # repeated blocks (viz/repeats.py): a folded one is drawn as one box, "×N"
        "repeats": [{**r, "folded": r["name"] in folded} for r in repeats],
        "scopes": sorted(scope_counts(data)),
        "max_nodes": max_nodes,
    }
    if data.get("clusters"):  # fused kernels (compile): drawn in their own colour
        graph["clusters"] = data["clusters"]
    if data.get("memory") is not None:  # a memory plan: which planned call each step shows
        graph["memory"] = {**data["memory"], "at_step": memory_at_step(snapshot)}
    if data.get("note"):  # what the drawing cannot show (a PyTorch graph: from_torch.py)
        graph["note"] = data["note"]
    if data.get("marks"):  # a diff's or a failed cell's marks (viz/marks.py)
        graph["marks"] = data["marks"]
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
            dict(d.get("marks") or {}),
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
