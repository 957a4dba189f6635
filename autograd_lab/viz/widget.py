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
    folded     the repeated blocks (viz/repeats.py: 12 identical transformer blocks, an RNN cell
               called at every step) drawn once, as one box "×N"; a click opens one, and an
               opened one's "fold ×N" folds it again. Big graphs start with every repeat folded.
In the browser: play (at a speed you pick), step, or step node by node (skipping the gradients
each node sends); once the widget has the focus (click it), ← → step and Shift+← → go node by
node, in JupyterLab and Notebook 7 alike. The view follows the step's node on wide graphs.
The search box finds nodes by label, variable name or op (the others dim; a match inside a
collapsed scope or folded repeat lights up its box), and Enter selects the next match, which
opens the scopes and repeats around it.
Where no widget can be shown (nbconvert, GitHub, a notebook opened without its kernel), a picture
of the step it shows stands in for it (`stored_svg()`), and `w.filmstrip()` stores the key steps;
`w.save_html("graph.html")` writes the live drawing as one page that needs no kernel (export.py).
"""

from pathlib import Path

import anywidget
import traitlets

from .column import picture_bundle
from .graph import caller_tensor_names
from .layout import drawn_scopes
from .repeats import find_repeats, prefixes
from .view import as_snapshot

HERE = Path(__file__).parent


class GraphWidget(anywidget.AnyWidget):
    """An interactive drawing of a graph snapshot: hover, click, step, collapse.

    `GraphWidget(*roots)` takes tensors (plus `recording=` to know intermediate values and the
    backward pass), a `Recording` from `with record() as r:`, or a `Snapshot`. Names are read
    from the caller's variables unless `names=` is given. Graphs with more than `max_nodes` nodes
    start with every top-level scope collapsed and every repeated block folded into one box
    "×N"; `folded=True` / `False` / a list of repeat names (see `w.repeats`) choose for any graph.
    """

    _esm = HERE / "graph.js"
    _css = HERE / "graph.css"

    graph = traitlets.Dict().tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    selected = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    collapsed = traitlets.List(traitlets.Unicode()).tag(sync=True)
    folded = traitlets.List(traitlets.Unicode()).tag(sync=True)

    def __init__(
        self,
        *roots,
        recording=None,
        names=None,
        max_nodes=200,
        max_values=64,
        collapsed=None,
        folded=None,
        step=0,
        selected=None,
        **kwargs,
    ):
        if names is None:  # `GraphWidget(e)` labels a, b, c, ... like the cell that made them
            names = caller_tensor_names()
        self._snapshot = as_snapshot(roots, recording, names, max_values)
        self._ids = {node["id"] for node in self._snapshot.nodes}
        self.max_nodes = max_nodes
        self._updating = False
        self._scopes_drawn = drawn_scopes(self._snapshot)
        self._repeats = find_repeats(self._snapshot, self._scopes_drawn)
        self._position = {node["id"]: i for i, node in enumerate(self._snapshot.nodes)}
        super().__init__(**kwargs)
        self._fold(folded)
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

    @property
    def repeats(self):
        """The repeated blocks found in the graph (viz/repeats.py's `find_repeats`)."""
        return self._repeats

    def __repr__(self):
        return (
            f"GraphWidget({len(self._snapshot.nodes)} nodes, "
            f"{len(self._snapshot.events)} backward events, step {self.step})"
        )

    def _repr_mimebundle_(self, **kwargs):
        """The live view, plus a picture of the same step for every place that cannot run it.

        JupyterLab and Notebook 7 show the live view when a kernel has the widget, and otherwise
        the picture: text/html (an <img> of the SVG, shown even in untrusted notebooks), which
        nbconvert uses too; GitHub shows the SVG. The picture is the step the widget shows now
        (the finished graph at step 0), wrapped to a notebook's column, with a line saying how to
        step through it. nbval compares text/plain and the SVG (both deterministic) and ignores
        the widget's model id.
        """
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        return {**data, **picture_bundle(self.stored_svg(), repr(self))}, metadata

    def stored_svg(self):
        """The static picture of what the widget shows now, for notebooks opened without it."""
        from .column import RUN_HINT, inspector_text, render_fitted

        step = self.step or None  # step 0 (nothing computed yet) stores the finished graph
        where = "The finished graph" if step is None else f"Step {step} of {self.n_steps}"
        note = f"{where}, as a static picture. {RUN_HINT}"
        if self.selected is not None:  # what the inspector shows, for readers without it
            note += "\n" + inspector_text(self._snapshot, self.selected, step)
        return render_fitted(self._snapshot, self.graph["layout"], step=step, note=note)

    def filmstrip(self, steps=None):
        """A film strip: the picture after each of `steps` (default: the end of the forward pass,
        then every step where an op runs or a leaf's .grad is added to), for readers without a
        kernel, e.g. on GitHub. `w.filmstrip([4, 7, 9])` picks the steps.
        """
        from .column import Picture, filmstrip_svg, key_steps

        steps = key_steps(self._snapshot) if steps is None else list(steps)
        which = f"Steps {', '.join(map(str, steps))} of {self.n_steps}"
        note = f"{which}, as static pictures. Run the widget's cell to step through every one."
        layout_options = {"collapsed": self.collapsed, "threshold": self.max_nodes}
        svg = filmstrip_svg(self._snapshot, steps, note=note, **layout_options)
        return Picture(svg, f"film strip: {which.lower()}")

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
        if box is None:
            return
        scope = self._scopes_drawn[self._position[node_id]]
        around = set(prefixes(scope))  # the scopes the node sits in, and the repeats of them
        opened = [r["name"] for r in self._repeats if around & set(r["scopes"])]
        self._updating = True
        try:
            with self.hold_sync():
                self.folded = [name for name in self.folded if name not in opened]
                collapsed = self._opening(self.collapsed, opened)
                self.collapsed = [p for p in collapsed if p not in around]
        finally:
            self._updating = False
        self._relayout(self.collapsed)

    @traitlets.observe("collapsed")
    def _collapse(self, change):
        if not self._updating:  # the browser (or the user) changed it: lay the graph out again
            self._relayout(change["new"])

    @traitlets.validate("folded")
    def _check_folded(self, proposal):
        names = [r["name"] for r in self._repeats]
        for name in proposal["value"]:
            if name not in names:
                found = ", ".join(repr(n) for n in names) or "none: no block repeats in it"
                raise traitlets.TraitError(
                    f"no repeated block {name!r} in this graph; its repeats (w.repeats) are: {found}"
                )
        return proposal["value"]

    @traitlets.observe("folded")
    def _fold_changed(self, change):
        if self._updating:
            return
        # `collapsed` holds a folded repeat's blocks (see _relayout): an opened repeat of many
        # nodes keeps them, one box a block, as a big scope opens; a small one opens them too
        opened = [r["name"] for r in self._repeats if r["name"] in change["old"]]
        opened = [name for name in opened if name not in change["new"]]
        self._relayout(self._opening(self.collapsed, opened))

    def _opening(self, collapsed, opened):
        """`collapsed` once the repeats named `opened` open: their blocks open too, unless
        there are more nodes than max_nodes (then each block is one box, opened on a click)."""
        for r in self._repeats:
            if r["name"] in opened and (r["kind"] == "calls" or r["nodes"] <= self.max_nodes):
                collapsed = [p for p in collapsed if p not in r["scopes"]]
        return list(collapsed)

    def _fold(self, folded):
        """Set `folded` from the constructor's argument: None folds every repeat of a big graph."""
        if folded is None:
            folded = len(self._snapshot.nodes) > self.max_nodes
        if folded is True or folded is False:
            folded = [r["name"] for r in self._repeats] if folded else []
        self._updating = True
        try:
            self.folded = list(folded)
        finally:
            self._updating = False

    def _relayout(self, collapsed):
        """Lay out the graph with these scopes collapsed (None: the layout's default rule)."""
        from .view import view_graph

        graph, shown = view_graph(
            self._snapshot,
            collapsed,
            self.max_nodes,
            folded=self.folded,
            repeats=self._repeats,
            scopes_drawn=self._scopes_drawn,
        )
        hidden = graph["layout"]["hidden"]
        self._updating = True
        try:
            with self.hold_sync():
                self.graph = graph
                self.collapsed = shown
                if self.selected in hidden:
                    self.selected = None
        finally:
            self._updating = False

    def save_html(self, path, title=None, max_layouts=64):
        """Write this graph as one self-contained HTML page that steps without a kernel.

        The page opens at this widget's step, selection and collapsed scopes; see
        `autograd_lab.viz.save_html` for what it holds.
        """
        from .export import save_html

        return save_html(
            self._snapshot,
            path,
            title=title,
            step=self.step,
            selected=self.selected,
            collapsed=self.collapsed,
            max_nodes=self.max_nodes,
            max_layouts=max_layouts,
        )
