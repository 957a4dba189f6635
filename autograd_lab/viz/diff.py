"""Two graphs, aligned: which nodes one has and the other lacks, and which differ.

    from autograd_lab.viz import diff
    d = diff(loss_short, loss_long, sides=("2 steps", "3 steps"))
    d                        # a notebook draws both graphs side by side, differences marked
    d.added, d.removed       # node ids: only in the second graph / only in the first
    d.changed                # [{"left", "right", "kinds", "text"}]: paired, but different
    d.widget()               # both live widgets, marked; stepping one steps the other

What to diff: two forward passes of a model whose control flow depends on its data (the
define-by-run lesson: each run records its own graph), eager against compiled, a learner's graph
against a reference. Each side is tensors (ours or PyTorch's), a recording (`record()`,
`record_torch()`) or a Snapshot.

The alignment is compare.py's: nodes are paired from the outputs backwards, input number by
input number, the way backward walks; leaves left over are paired by name. A node with no partner
was added (only in the second graph, green "+") or removed (only in the first, red "−"); a
paired node whose op or name, inputs, value or gradient differs is changed (magenta, with the
letters S, V, G: its inputs, value or gradient). Unlike compare()'s default, only nodes of the
same op are paired (where the runs part ways, nodes are added and removed, not renamed), and
variable names are not differences (`short` and `long` name the results of two runs). The marks live in the two Snapshots (`d.left.marks`, viz/marks.py), so
`to_svg(d.left)` and `GraphWidget(d.left)` show them too.
"""

import dataclasses

from .compare import compare
from .graph import Recording, caller_tensor_names, snapshot, tensor_names
from .layout import layout
from .marks import mark
from .snapshot import Snapshot
from .svg import _escape, render_svg, scene
from .torch_recording import TorchRecording

GAP, TITLE_H, LINE_H = 40.0, 26.0, 16.0
HEADER_COLOUR, CHANGED_COLOUR = "#111827", "#c026d3"
LINE_COLOURS = {"+": "#15803d", "\u2212": "#dc2626"}  # added, removed: marks.py's colours


class GraphDiff:
    """Two aligned snapshots (`left`, `right`, each with its marks), the `comparison` behind
    them, and what it found: `added`, `removed` (node ids), `changed` (differences)."""

    def __init__(self, left, right, comparison, sides):
        self.comparison = comparison
        self.sides = sides
        self.removed = [d["left"] for d in comparison.differences if d["right"] is None]
        self.added = [d["right"] for d in comparison.differences if d["left"] is None]
        self.changed = [d for d in comparison.differences if None not in (d["left"], d["right"])]
        left_marks, right_marks = {}, {}
        for node_id in self.removed:
            left_marks[node_id] = mark("removed", f"removed: only in {sides[0]}")
        for node_id in self.added:
            right_marks[node_id] = mark("added", f"added: only in {sides[1]}")
        for d in self.changed:
            letters = _letters(d["kinds"])
            left_marks[d["left"]] = right_marks[d["right"]] = mark("changed", d["text"], letters)
        self.left = dataclasses.replace(left, marks=left_marks)
        self.right = dataclasses.replace(right, marks=right_marks)

    @property
    def same(self):
        """True when every node pairs up and nothing differs (the backward order included)."""
        return self.comparison.same

    @property
    def pairs(self):
        """{left id: right id}: the nodes found in both graphs."""
        return self.comparison.pairs

    def __repr__(self):
        first, second = self.sides
        if self.same:
            return f"GraphDiff({first} and {second}: the same graph, {len(self.pairs)} nodes)"
        return (
            f"GraphDiff({first} -> {second}: {len(self.added)} added, {len(self.removed)} "
            f"removed, {len(self.changed)} changed, {len(self.pairs)} paired)"
        )

    def _repr_mimebundle_(self, **kwargs):
        """In a notebook: the first graph above the second, each wrapped to the column (side by
        side they would shrink their text), the differences listed; an <img> copy for untrusted
        notebooks (column.py). `to_svg()` draws them side by side."""
        from .column import picture_bundle, stacked_svg

        titled = list(zip(self.sides, (self.left, self.right)))
        return picture_bundle(stacked_svg(titled, self.coloured_lines()), repr(self))

    def lines(self):
        """The differences in words, one a line: what the picture lists under the graphs."""
        first, second = self.sides
        if self.same:
            return [
                f"The same graph: every node, input, value and gradient matches ({first}, {second})."
            ]
        out = [
            f"+ added (green): only in {second};  \u2212 removed (red): only in {first};  "
            "changed (magenta): S structure (inputs), V value, G gradient."
        ]
        labels_left = {n["id"]: n["label"] for n in self.left.nodes}
        labels_right = {n["id"]: n["label"] for n in self.right.nodes}
        out += [f"\u2212 {labels_left[n]}: only in {first}" for n in self.removed]
        out += [f"+ {labels_right[n]}: only in {second}" for n in self.added]
        for d in self.changed:
            out.append(f"{_letters(d['kinds'])} {labels_right[d['right']]}: {d['text']}")
        if self.comparison.order:
            out.append(f"order: {self.comparison.order}")
        return out

    def coloured_lines(self):
        """[(colour, line)]: the lines in their marks' colours, the header in black."""
        lines = self.lines()
        return [(HEADER_COLOUR if i == 0 else _line_colour(t), t) for i, t in enumerate(lines)]

    def to_svg(self, threshold=200, direction="auto"):
        """One SVG: the first graph, the second beside it (`direction="row"`) or below it
        ("column"; "auto": below when side by side would be wider than 1600 pixels), each
        difference framed, and the list of differences underneath."""
        if direction not in ("auto", "row", "column"):
            raise ValueError(f'direction must be "auto", "row" or "column"; got {direction!r}')
        pictures = [_picture(graph, threshold) for graph in (self.left, self.right)]
        (left_w, left_h, _), (right_w, right_h, _) = pictures
        if direction == "auto":
            direction = "row" if left_w + GAP + right_w <= 1600 else "column"
        if direction == "row":
            places = [(0.0, TITLE_H), (left_w + GAP, TITLE_H)]
            bottom = TITLE_H + max(left_h, right_h)
        else:
            places = [(0.0, TITLE_H), (0.0, 2 * TITLE_H + left_h)]
            bottom = 2 * TITLE_H + left_h + right_h
        lines = self.coloured_lines()
        width = max(
            max(x + w for (x, _), (w, _, _) in zip(places, pictures)),
            24.0 + 6.6 * max(len(line) for _, line in lines),
        )
        height = bottom + 16.0 + LINE_H * len(lines)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.1f}" height="{height:.1f}" '
            f'viewBox="0 0 {width:.1f} {height:.1f}" font-family="monospace" font-size="12">\n',
            f'<rect width="{width:.1f}" height="{height:.1f}" fill="#ffffff"/>\n',
        ]
        for (x, y), (_, _, svg), title in zip(places, pictures, self.sides):
            out.append(
                f'<text x="{x + 12:.1f}" y="{y - 8:.1f}" font-weight="bold" font-size="14">'
                f"{_escape(title)}</text>\n"
            )
            out.append(f'<g transform="translate({x:.1f},{y:.1f})">\n{svg}</g>\n')
        for i, (colour, line) in enumerate(lines):
            y = bottom + 16.0 + LINE_H * i
            out.append(f'<text x="12.0" y="{y:.1f}" fill="{colour}">{_escape(line)}</text>\n')
        return "".join(out) + "</svg>\n"

    def widget(self, max_nodes=200):
        """Both graphs as live widgets side by side, marked; their steps move together
        (a DiffWidget, viz/diff_widget.py)."""
        from .diff_widget import DiffWidget

        return DiffWidget(self, max_nodes=max_nodes)


def diff(a, b, sides=("the first graph", "the second graph"), names=None, rtol=1e-4, atol=1e-6):
    """Align two graphs and mark what differs (see the module's docstring). `a` and `b` are each
    tensors (a tuple of them for several outputs), a recording or a Snapshot; `sides` names them
    in the texts and titles; `names` maps variable names to tensors (default: the caller's)."""
    if not (isinstance(sides, (tuple, list)) and len(sides) == 2 and all(map(_is_text, sides))):
        raise TypeError(f'sides names the two graphs, e.g. ("run 1", "run 2"); got {sides!r}')
    if names is None:
        names = caller_tensor_names()
    left, right = _as_snapshot(a, names, "first"), _as_snapshot(b, names, "second")
    comparison = compare(
        left, right, tuple(sides), rtol, atol, same_op_only=True, variable_names=False
    )
    return GraphDiff(left, right, comparison, tuple(sides))


def _as_snapshot(value, names, which):
    names = tensor_names(names)
    if isinstance(value, Snapshot):
        return value
    if isinstance(value, dict) and "nodes" in value:
        return Snapshot(**{k: v for k, v in value.items() if k in _FIELDS})
    if isinstance(value, (Recording, TorchRecording)):
        return value.graph(names=names)
    tensors = list(value) if isinstance(value, (tuple, list)) else [value]
    if tensors and all(_is_tensor(t) for t in tensors):
        return snapshot(*tensors, names=names)
    raise TypeError(
        f"diff() compares two graphs; its {which} argument is a {type(value).__name__}. Give "
        "a tensor (the output of a forward pass, e.g. loss), a tuple of tensors, a recording "
        "(with autograd_lab.viz.record() as r: ...) or a Snapshot"
    )


_FIELDS = {f.name for f in dataclasses.fields(Snapshot)}


def _is_tensor(value):
    from ..tensor import Tensor
    from .from_torch import is_torch_tensor

    return isinstance(value, Tensor) or is_torch_tensor(value)


def _is_text(value):
    return isinstance(value, str) and value.strip() != ""


def _picture(graph, threshold):
    """(width, height, svg) of one marked graph, drawn as to_svg draws it."""
    placed = layout(graph, None, threshold)
    drawn = scene(graph, placed)
    return drawn["width"], drawn["height"], render_svg(graph, placed)


def _letters(kinds):
    """("value", "grad") -> "VG": the marks' short form."""
    return "".join(kind[0].upper() for kind in kinds)


def _line_colour(line):
    return LINE_COLOURS.get(line[0], CHANGED_COLOUR)
