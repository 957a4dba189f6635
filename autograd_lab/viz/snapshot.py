"""A snapshot of a graph as plain data: what every viewer reads (the SVG, the widget, the magic).

`Snapshot` holds nodes, edges and backward events as lists of dicts (CONTRACT.md describes every
field); `to_dict()` is JSON-safe. autograd_lab/viz/graph.py makes one from an autograd graph
(`snapshot(y)`, or a `record()`ing), autograd_lab/viz/compiled.py from a traced IR graph.

    >>> Snapshot([{"id": "n0", "kind": "tensor", "label": "x"}])
    Snapshot(1 nodes, 0 edges, 0 backward events)
"""

import math
from dataclasses import dataclass, field

import numpy as np

from ..ops import registry
from ..tensor import Tensor

# What each op's backward multiplies by, in words (shown when hovering a node): each op's record
# says it (its `derivative`, ops/registry.py)
LOCAL_DERIVATIVES = registry.derivatives()


def run_gradients(events):
    """From recorded backward events, each node's gradient when it ran: (the first, the last).
    The first is a root's seed gradient; the last is what a node shows after backward."""
    first, last = {}, {}
    for kind, node, _, summary in events:
        if kind == "run":
            last[node] = summary
            first.setdefault(node, summary)
    return first, last


def tensor_node(
    node_id, order, name, role, shape, dtype, value, grad=None, is_saved=False, unnamed="tensor"
):
    """A tensor's node record (CONTRACT.md): a leaf, a constant, an output, a torch graph's
    tensor. Every graph reader makes its tensor nodes here, so they all carry the same fields;
    `unnamed`: the label of a tensor the code gave no name."""
    return {
        "id": node_id,
        "kind": "tensor",
        "label": name or unnamed,
        "op": None,
        "name": name,
        "role": role,
        "shape": list(shape),
        "dtype": dtype,
        "value": value,
        "grad": grad,
        "saved": [],
        "is_saved": is_saved,
        "scope": None,
        "order": order,
        "derivative": None,
        "derivative_value": None,
    }


@dataclass
class Snapshot:
    """Nodes, edges and backward events, all plain data (see CONTRACT.md)."""

    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    events: list = field(default_factory=list)
    clusters: dict = field(default_factory=dict)  # scope path -> a fused group drawn as a cluster
    memory: dict | None = None  # a memory plan, step by step (the IR view of compile, optional)
    note: str | None = None  # what the drawing cannot show, e.g. of a PyTorch graph (from_torch.py)
    marks: dict = field(default_factory=dict)  # node id -> a mark drawn on it (viz/marks.py)

    def node(self, node_id):
        for node in self.nodes:
            if node["id"] == node_id:
                return node
        raise KeyError(
            f"no node {node_id!r} in this snapshot (ids are n0 to n{len(self.nodes) - 1})"
        )

    def add_inputs(self, node, ids):
        """An edge from each input of the graph node `node` (ours or PyTorch's: both have
        `next_functions`) that is drawn (has an id in `ids`) to the node's own box."""
        for input_nr, (next_node, _) in enumerate(node.next_functions):
            if next_node is not None and next_node in ids:
                self.edges.append(
                    {"source": ids[next_node], "target": ids[node], "input": input_nr}
                )

    def add_events(self, events, ids):
        """The recorded backward events (kind, node, target, gradient summary) that concern drawn
        nodes, in the engine's order, numbered from step 0."""
        for kind, node, target, summary in events:
            if node in ids and (target is None or target in ids):
                self.events.append(
                    {
                        "step": len(self.events),
                        "kind": kind,
                        "node": ids[node],
                        "target": ids[target] if target is not None else None,
                        "grad": summary,
                    }
                )

    def to_dict(self):
        data = {"nodes": self.nodes, "edges": self.edges, "events": self.events}
        if self.clusters:  # optional parts: a graph without them is what it always was
            data["clusters"] = self.clusters
        if self.memory is not None:
            data["memory"] = self.memory
        if self.note:
            data["note"] = self.note
        if self.marks:
            data["marks"] = self.marks
        return data

    def __repr__(self):
        return (
            f"Snapshot({len(self.nodes)} nodes, {len(self.edges)} edges, "
            f"{len(self.events)} backward events)"
        )


# ---- summaries of tensor values -------------------------------------------------------------------


def _number(value):
    """A JSON-safe number, rounded to 6 significant digits so printed text is stable."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(f"{value:.6g}")


def summarize(tensor, max_values=16):
    """Shape, element count, the values themselves when few, and min/max/mean/norm."""
    data = tensor._data if isinstance(tensor, Tensor) else np.asarray(tensor)
    summary = {"shape": list(data.shape), "numel": int(data.size), "values": None}
    if data.size <= max_values:
        values = np.vectorize(_number, otypes=[object])(data) if data.size else data
        summary["values"] = values.tolist()
    if data.size and data.dtype.kind in "fiub":
        numbers = data.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            stats = (numbers.min(), numbers.max(), numbers.mean(), np.sqrt((numbers**2).sum()))
        summary.update(zip(("min", "max", "mean", "norm"), map(_number, stats)))
    else:
        summary.update(min=None, max=None, mean=None, norm=None)
    return summary
