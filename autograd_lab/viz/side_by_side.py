"""The same code run in PyTorch and in autograd_lab, both graphs drawn side by side.

    def model(torch):                       # the library comes in as an argument
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        x = torch.tensor([1.0, 2.0, 3.0])
        loss = ((w * x).tanh() ** 2).sum()
        return loss

    from autograd_lab.viz import side_by_side
    side_by_side(model)                     # PyTorch's graph on the left, ours on the right

The lesson "our engine is PyTorch's", made visible: each library runs the code inside its own
recording (`record_torch()`, `record()`), backward included (called here when the code did not
call it), and `compare()` pairs the nodes. Every node whose op or variable name, inputs, value
or gradient differs is framed in magenta, with the reason in its tooltip and listed below.

A script (a string of code using the name `torch`) works too: `side_by_side(source)`. The
picture is a static SVG; `.widgets()` gives both live widgets in a row (without the marks).
"""

import sys
from dataclasses import replace

from .compare import compare
from .from_torch import is_torch_tensor
from .graph import record, tensor_names
from .layout import layout
from .marks import mark
from .svg import _escape, render_svg, scene
from .torch_recording import record_torch

GAP, TITLE_H, LINE_H = 40.0, 26.0, 16.0
MARK = "#c026d3"  # magenta: no role colour uses it


class SideBySide:
    """Both snapshots (`.torch`, `.ours`), their `comparison`, and the picture (`to_svg()`)."""

    def __init__(self, torch_graph, our_graph, comparison):
        self.torch = torch_graph
        self.ours = our_graph
        self.comparison = comparison

    def __repr__(self):
        return (
            f"SideBySide(PyTorch {self.torch!r}, autograd_lab {self.ours!r}; {self.comparison!r})"
        )

    def _repr_mimebundle_(self, **kwargs):
        """In a notebook: PyTorch's graph above ours, each wrapped to the column (side by side
        they would shrink their text), the differences listed; an <img> copy for untrusted
        notebooks (column.py). `to_svg()` draws them side by side."""
        from .column import picture_bundle, stacked_svg

        lines = _summary_lines(self.comparison, self.torch, self.ours)
        coloured = [("#111827" if i == 0 else MARK, line) for i, line in enumerate(lines)]
        torch_graph = replace(self.torch, marks=_as_marks(self.comparison.marks("left")))
        our_graph = replace(self.ours, marks=_as_marks(self.comparison.marks("right")))
        svg = stacked_svg([("PyTorch", torch_graph), ("autograd_lab", our_graph)], coloured)
        return picture_bundle(svg, repr(self))

    def to_svg(self, threshold=200, direction="auto"):
        """One SVG: PyTorch's graph, autograd_lab's beside it (`direction="row"`) or below it
        ("column"; "auto": below when side by side would be wider than 1600 pixels), every
        difference framed and listed underneath."""
        if direction not in ("auto", "row", "column"):
            raise ValueError(f'direction must be "auto", "row" or "column"; got {direction!r}')
        left = _Picture(self.torch, self.comparison.marks("left"), threshold)
        right = _Picture(self.ours, self.comparison.marks("right"), threshold)
        if direction == "auto":
            direction = "row" if left.width + GAP + right.width <= 1600 else "column"
        if direction == "row":
            places = [(0.0, TITLE_H), (left.width + GAP, TITLE_H)]
            bottom = TITLE_H + max(left.height, right.height)
        else:
            places = [(0.0, TITLE_H), (0.0, 2 * TITLE_H + left.height)]
            bottom = 2 * TITLE_H + left.height + right.height
        lines = _summary_lines(self.comparison, self.torch, self.ours)
        width = max(
            max(x + picture.width for (x, _), picture in zip(places, (left, right))),
            24.0 + 6.6 * max(map(len, lines)),
        )
        height = bottom + 16.0 + LINE_H * len(lines)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.1f}" height="{height:.1f}" '
            f'viewBox="0 0 {width:.1f} {height:.1f}" font-family="monospace" font-size="12">\n',
            f'<rect width="{width:.1f}" height="{height:.1f}" fill="#ffffff"/>\n',
        ]
        for (x, y), picture, title in zip(places, (left, right), ("PyTorch", "autograd_lab")):
            out.append(
                f'<text x="{x + 12:.1f}" y="{y - 8:.1f}" font-weight="bold" font-size="14">'
                f"{title}</text>\n"
            )
            out.append(f'<g transform="translate({x:.1f},{y:.1f})">\n{picture.svg}</g>\n')
        for i, line in enumerate(lines):
            colour = MARK if i else "#111827"
            y = bottom + 16.0 + LINE_H * i
            out.append(f'<text x="12.0" y="{y:.1f}" fill="{colour}">{_escape(line)}</text>\n')
        return "".join(out) + "</svg>\n"

    def widgets(self):
        """Both live widgets in a row (ipywidgets.HBox); their steps move together when both
        graphs have as many steps."""
        import ipywidgets
        import traitlets

        from .widget import GraphWidget

        left, right = GraphWidget(self.torch), GraphWidget(self.ours)
        if left.n_steps == right.n_steps:
            traitlets.link((left, "step"), (right, "step"))
        return ipywidgets.HBox([left, right])


def _as_marks(kinds_of):
    """compare()'s {node: [kinds]} as the Snapshot's marks (viz/marks.py): "changed" marks."""
    return {
        node: mark("changed", f"differs: {', '.join(kinds)}", _letters(kinds))
        for node, kinds in kinds_of.items()
    }


class _Picture:
    """One graph's SVG, with a magenta frame (and a tooltip: why) on every node that differs."""

    def __init__(self, graph, marks, threshold):
        placed = layout(graph, None, threshold)
        drawn = scene(graph, placed)  # for where render_svg puts the graph: `top` pixels down
        svg = render_svg(graph, placed)
        frames = []
        for node_id, kinds in marks.items():
            box = placed["nodes"].get(placed.get("hidden", {}).get(node_id, node_id))
            if box is None:
                continue
            x, y = box["x"] - 5, box["y"] - 5 + drawn["top"]
            frames.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{box["w"] + 10:.1f}" '
                f'height="{box["h"] + 10:.1f}" fill="none" stroke="{MARK}" stroke-width="3" '
                f'stroke-dasharray="6 3" rx="10"><title>differs: {", ".join(kinds)}</title></rect>\n'
                f'<text x="{x + box["w"] + 10:.1f}" y="{y - 3:.1f}" fill="{MARK}" '
                f'font-weight="bold" text-anchor="end">{_letters(kinds)}</text>\n'
            )
        self.svg = svg.replace("</svg>\n", "".join(frames) + "</svg>\n")
        self.width, self.height = drawn["width"], drawn["height"]


def _summary_lines(comparison, torch_graph, our_graph):
    """The header line, then one line per difference (N name, S structure, V value, G grad)."""
    if comparison.same:
        return ["The same graph: every node, input, value and gradient matches PyTorch's."]
    lines = [
        "Marked (magenta): N name, S structure (inputs, or a node with no partner), V value, "
        "G gradient."
    ]
    labels_left = {n["id"]: n["label"] for n in torch_graph.nodes}
    labels_right = {n["id"]: n["label"] for n in our_graph.nodes}
    for d in comparison.differences:
        where = labels_left.get(d["left"]) or labels_right.get(d["right"])
        lines.append(f"{_letters(d['kinds'])} {where}: {d['text']}")
    if comparison.order:
        lines.append(f"order: {comparison.order}")
    return lines


def _letters(kinds):
    """("name", "grad") -> "NG": the marks' short form."""
    return "".join(kind[0].upper() for kind in kinds)


def side_by_side(code, backward=True, max_values=16):
    """Run `code` (a function taking the library as `torch`, or a script using the name
    `torch`) in PyTorch and in autograd_lab; return both graphs, compared (a SideBySide)."""
    import torch

    import autograd_lab

    if not (callable(code) or isinstance(code, str)):
        raise TypeError(
            "side_by_side() runs code twice: give a function taking the library "
            "(def f(torch): ...) or a string of code that uses the name torch; "
            f"got a {type(code).__name__}"
        )
    with record_torch(max_values) as theirs:
        torch_result, torch_names = _run(code, torch)
        if backward:
            _backward(torch_result, theirs)
    with record(max_values) as mine:
        our_result, our_names = _run(code, autograd_lab)
        if backward:
            _backward(our_result, mine)
    torch_graph = theirs.graph(*_roots(torch_result, theirs), names=torch_names)
    our_graph = mine.graph(*_roots(our_result, mine), names=our_names)
    comparison = compare(torch_graph, our_graph, sides=("PyTorch", "autograd_lab"))
    return SideBySide(torch_graph, our_graph, comparison)


def _run(code, library):
    """Run the code with `library` as torch: (its result, the tensors it named)."""
    if isinstance(code, str):
        namespace = {"torch": library, "__name__": "__side_by_side__"}
        exec(compile(code, "<side_by_side>", "exec"), namespace)
        return None, tensor_names(namespace)
    result, local_names = _call_keeping_locals(code, library)
    return result, tensor_names(local_names)


def _call_keeping_locals(function, argument):
    """Call function(argument) and keep its local variables as they were when it returned: the
    names a learner gave the tensors (w, x, loss) label the nodes, as show() does in a notebook.
    Python's profiler hook is the one place that sees a frame's locals as it returns."""
    kept = {}
    code = getattr(function, "__code__", None)
    previous = sys.getprofile()

    def watch(frame, event, arg):
        if event == "return" and frame.f_code is code:
            kept.update(frame.f_locals)

    sys.setprofile(watch)
    try:
        result = function(argument)
    finally:
        sys.setprofile(previous)
    return result, kept


def _roots(result, recording):
    """The tensors to draw: what the code returned, else what it left unused."""
    if isinstance(result, (list, tuple)):
        tensors = [t for t in result if _is_tensor(t)]
        if tensors:
            return tensors
    if _is_tensor(result):
        return [result]
    return recording.roots()


def _is_tensor(value):
    from ..tensor import Tensor

    return isinstance(value, Tensor) or is_torch_tensor(value)


def _backward(result, recording):
    """Call backward on the one-number result when the code did not already."""
    if recording.events:
        return
    roots = _roots(result, recording)
    if len(roots) == 1 and roots[0].requires_grad and roots[0].numel() == 1:
        roots[0].backward()
