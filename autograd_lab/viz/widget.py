"""The live graph widget: step through the forward and backward pass inside the notebook.

    >>> import autograd_lab as ag
    >>> from autograd_lab.viz import record
    >>> from autograd_lab.viz.widget import GraphWidget
    >>> with record() as recording:
    ...     a = ag.tensor(2.0, requires_grad=True); b = ag.tensor(6.0, requires_grad=True)
    ...     c = a + b; d = b + 1; e = c * d
    ...     e.backward()
    >>> w = GraphWidget(recording)  # or GraphWidget(e, recording=recording), or a Snapshot
    >>> w
    GraphWidget(6 nodes, 12 backward events, step 0)
    >>> w.step = w.n_steps                  # the end of backward: every gradient has arrived
    >>> w.selected = "n1"                   # pin b in the inspector (clicking it does the same)

The picture is drawn by `graph.js` beside this file: plain JavaScript, no libraries, no build
step, nothing fetched from the network, so it works offline in JupyterLab and Notebook 7. Python
keeps the state (which step, which node, which scopes are collapsed) in four synced traits:
    graph      the snapshot (`Snapshot.to_dict()`) plus its layout; set by Python only
    step       0 = before the forward pass; 1..F: the F ops in creation order; then one step per
               backward event, in the engine's order (n_steps = F + number of events)
    selected   the node id shown in the inspector, or None
    collapsed  the scope paths drawn as one box; the browser sets it when a group is clicked,
               and Python answers with a new layout
In the browser: play (at a speed you pick), step, or step node by node (skipping the gradients
each node sends); once the widget has the focus (click it), ← → step and Shift+← → go node by
node, in JupyterLab and Notebook 7 alike. The view follows the step's node on wide graphs.
Where no widget can be shown (nbconvert, GitHub, nbval), the static SVG stands in for it.
"""

from pathlib import Path

import anywidget
import traitlets

from .graph import Recording, caller_tensor_names, snapshot
from .snapshot import Snapshot
from .torch_recording import TorchRecording

HERE = Path(__file__).parent


class GraphWidget(anywidget.AnyWidget):
    """An interactive drawing of a graph snapshot: hover, click, step, collapse.

    `GraphWidget(*roots)` takes tensors (plus `recording=` to know intermediate values and the
    backward pass), a `Recording` from `with record() as r:`, or a `Snapshot`. Names are read
    from the caller's variables unless `names=` is given. Graphs with more than `max_nodes` nodes
    start with every top-level scope collapsed.
    """

    _esm = HERE / "graph.js"
    _css = HERE / "graph.css"

    graph = traitlets.Dict().tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    selected = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    collapsed = traitlets.List(traitlets.Unicode()).tag(sync=True)

    def __init__(
        self,
        *roots,
        recording=None,
        names=None,
        max_nodes=200,
        max_values=64,
        collapsed=None,
        step=0,
        selected=None,
        **kwargs,
    ):
        if names is None:  # `GraphWidget(e)` labels a, b, c, ... like the cell that made them
            names = caller_tensor_names()
        self._snapshot = _as_snapshot(roots, recording, names, max_values)
        self._ids = {node["id"] for node in self._snapshot.nodes}
        self.max_nodes = max_nodes
        self._updating = False
        super().__init__(**kwargs)
        self._relayout(collapsed)
        self.step = step
        self.selected = selected

    # ---- what Python can read ---------------------------------------------------------------------

    @property
    def snapshot(self):
        """The `Snapshot` this widget shows (all nodes, those inside collapsed scopes too)."""
        return self._snapshot

    @property
    def n_forward(self):
        """How many forward steps: one per op node (the ops inside a fused kernel run with it)."""
        from .svg import forward_ops

        return len(forward_ops(self._snapshot.nodes))

    @property
    def n_steps(self):
        """The last step: every forward op, then every backward event."""
        return self.n_forward + len(self._snapshot.events)

    def __repr__(self):
        return (
            f"GraphWidget({len(self._snapshot.nodes)} nodes, "
            f"{len(self._snapshot.events)} backward events, step {self.step})"
        )

    def _repr_mimebundle_(self, **kwargs):
        """The live view, plus short text and the static SVG for places that cannot run it.

        nbval compares text/plain and the SVG (both deterministic) and ignores the widget's
        model id; nbconvert and GitHub show the SVG.
        """
        from .svg import to_svg

        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = dict(data)
        data["text/plain"] = repr(self)
        data["image/svg+xml"] = to_svg(
            self._snapshot, collapsed=self.collapsed, threshold=self.max_nodes
        )
        return data, metadata

    # ---- keeping the traits consistent ------------------------------------------------------------

    @traitlets.validate("step")
    def _check_step(self, proposal):
        step, last = proposal["value"], self.n_steps
        if not 0 <= step <= last:
            raise traitlets.TraitError(
                f"step {step} is out of range: this graph has steps 0 to {last} "
                f"(0: before the forward pass, 1-{self.n_forward}: forward, "
                f"{self.n_forward + 1}-{last}: backward)"
            )
        return step

    @traitlets.validate("selected")
    def _check_selected(self, proposal):
        node_id = proposal["value"]
        if node_id is not None and node_id not in self._ids:
            raise traitlets.TraitError(
                f"no node {node_id!r} in this graph: its node ids are n0 to "
                f"n{len(self._ids) - 1} (hover a node to see its id, or read w.snapshot.nodes)"
            )
        return node_id

    @traitlets.observe("selected")
    def _show_selected(self, change):
        """Selecting a node hidden inside a collapsed scope opens the scopes around it."""
        node_id = change["new"]
        box = self.graph.get("layout", {}).get("hidden", {}).get(node_id)
        if box is not None:
            scope = self._snapshot.node(node_id).get("scope") or box[len("scope:") :]
            inside = {p for p in self.collapsed if scope == p or scope.startswith(p + "/")}
            self.collapsed = [p for p in self.collapsed if p not in inside]

    @traitlets.observe("collapsed")
    def _collapse(self, change):
        if not self._updating:  # the browser (or the user) changed it: lay the graph out again
            self._relayout(change["new"])

    def _relayout(self, collapsed):
        """Lay out the graph with these scopes collapsed (None: the layout's default rule)."""
        from .layout import layout, scope_counts
        from .svg import forward_ops

        boxes = layout(self._snapshot, collapsed=collapsed, threshold=self.max_nodes)
        shown = [g["scope"] for g in boxes["groups"] if g["collapsed"]]
        hidden = boxes["hidden"]
        data = self._snapshot.to_dict()
        graph = {
            # nodes inside collapsed scopes stay in Python: a 10,000-node graph stays light
            "nodes": [n for n in data["nodes"] if n["id"] not in hidden],
            "edges": [
                e for e in data["edges"] if e["source"] not in hidden and e["target"] not in hidden
            ],
            "events": data["events"],
            "forward": [n["id"] for n in forward_ops(data["nodes"])],
            "n_steps": self.n_steps,
            "layout": boxes,
            # for the step captions and for expanding big scopes one level at a time
            "hidden_nodes": {
                n["id"]: {"label": n["label"], "kind": n["kind"], "op": n["op"]}
                for n in data["nodes"]
                if n["id"] in hidden
            },
            "scopes": sorted(scope_counts(self._snapshot)),
            "max_nodes": self.max_nodes,
        }
        if data.get("clusters"):  # fused kernels (compile): drawn in their own colour
            graph["clusters"] = data["clusters"]
        if data.get("memory") is not None:  # a memory plan: which planned call each step shows
            graph["memory"] = {**data["memory"], "at_step": self._memory_at_step()}
        if data.get("note"):  # what the drawing cannot show (a PyTorch graph: from_torch.py)
            graph["note"] = data["note"]
        if data.get("marks"):  # a diff's or a failed cell's marks (viz/marks.py)
            graph["marks"] = data["marks"]
        self._updating = True
        try:
            with self.hold_sync():
                self.graph = graph
                self.collapsed = shown
                if self.selected in hidden:
                    self.selected = None
        finally:
            self._updating = False

    def _memory_at_step(self):
        """For each step 0..n_steps, the planned call whose aftermath it shows (-1: none yet)."""
        from .svg import forward_ops

        at, current = [-1], -1
        for op in forward_ops(self._snapshot.nodes):
            if op.get("memory_step") is not None:
                current = op["memory_step"]
            at.append(current)
        return at + [current] * len(self._snapshot.events)


def _as_snapshot(roots, recording, names, max_values):
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
            "GraphWidget() needs something to draw: tensors (GraphWidget(loss)), a recording "
            "(with autograd_lab.record() as r: ...; GraphWidget(r)) or a Snapshot"
        )
    if recording is not None:
        return recording.graph(*roots, names=names)
    return snapshot(*roots, names=names, max_values=max_values)
