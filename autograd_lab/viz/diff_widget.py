"""A diff's two graphs as live widgets side by side, marked, stepping together.

    d = autograd_lab.viz.diff(run_1, run_2, sides=("run 1", "run 2"))
    d.widget()          # or DiffWidget(d)

Each side is a GraphWidget of a marked snapshot (viz/diff.py), so hovering a marked node says
what differs. Stepping is linked through the alignment: when one side steps to a node's forward
step (or its backward "run"), the other side goes to its partner's; a node with no partner (added
or removed) leaves the other side where it is — that is where the two runs part ways.
"""

import ipywidgets

from .svg import forward_ops
from .widget import GraphWidget


class DiffWidget(ipywidgets.VBox):
    """Two GraphWidgets in a row (`.left`, `.right`) with titles and the list of differences."""

    def __init__(self, graph_diff, max_nodes=200, **kwargs):
        self.diff = graph_diff
        self.left = GraphWidget(graph_diff.left, names={}, max_nodes=max_nodes)
        self.right = GraphWidget(graph_diff.right, names={}, max_nodes=max_nodes)
        columns = []
        for title, view in zip(graph_diff.sides, (self.left, self.right)):
            heading = ipywidgets.HTML(f"<b>{_html(title)}</b>")
            columns.append(ipywidgets.VBox([heading, view], layout={"width": "50%"}))
        summary = ipywidgets.HTML(_summary_html(graph_diff.coloured_lines()))
        super().__init__([ipywidgets.HBox(columns), summary], **kwargs)
        self.add_class("agl-diff")
        pairs = graph_diff.pairs
        self._partner = {"left": pairs, "right": {y: x for x, y in pairs.items()}}
        self._moving = False
        self.left.observe(lambda change: self._follow("left", change["new"]), names="step")
        self.right.observe(lambda change: self._follow("right", change["new"]), names="step")

    def __repr__(self):
        return f"DiffWidget({self.diff!r})"

    def partner_step(self, side, step):
        """The step of the other side that shows what `side` shows at `step`, or None."""
        mine, other = (self.left, self.right) if side == "left" else (self.right, self.left)
        if step == 0 or step == mine.n_steps:  # before the forward pass; the very end
            return 0 if step == 0 else other.n_steps
        node, kind = _step_node(mine, step)
        partner = self._partner[side].get(node)
        if partner is None:
            return None
        if kind == "forward":
            ids = [n["id"] for n in forward_ops(other.snapshot.nodes)]
            return ids.index(partner) + 1 if partner in ids else None
        target = None
        if kind == "send":  # a gradient sent along an edge: the partner edge's, when it has one
            event = mine.snapshot.events[step - mine.n_forward - 1]
            target = self._partner[side].get(event["target"])
        for k, event in enumerate(other.snapshot.events):
            same_edge = target is None or event["target"] == target
            if event["kind"] == kind and event["node"] == partner and same_edge:
                return other.n_forward + k + 1
        return None

    def _follow(self, side, step):
        if self._moving:  # the other side moving in answer: do not answer back
            return
        target = self.partner_step(side, step)
        if target is None:
            return
        self._moving = True
        try:
            (self.right if side == "left" else self.left).step = target
        finally:
            self._moving = False


def _step_node(widget, step):
    """(node id, "forward" | the backward event's kind) that a widget's step shows."""
    if step <= widget.n_forward:
        return forward_ops(widget.snapshot.nodes)[step - 1]["id"], "forward"
    event = widget.snapshot.events[step - widget.n_forward - 1]
    return event["node"], event["kind"]


def _summary_html(lines):
    """The list of differences, one a line, each in its mark's colour (as in the SVG)."""
    rows = [f'<div style="color: {colour}">{_html(line)}</div>' for colour, line in lines]
    return '<div style="font: 12px monospace; line-height: 1.5">' + "".join(rows) + "</div>"


def _html(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
