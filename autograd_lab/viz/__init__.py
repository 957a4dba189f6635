"""Seeing the graph: a snapshot of it as data, and the viewers that draw it.

    from autograd_lab.viz import record, to_svg
    with record() as recording:
        loss = ...; loss.backward()
    graph = recording.graph()    # a Snapshot: nodes, edges, the backward pass in the engine's order
    to_svg(graph)                # a deterministic picture; GraphWidget(graph) is the live one

snapshot.py (the Snapshot, plain data), graph.py (reading an autograd graph into one, and
recording it being built and run), layout.py (where boxes go), svg.py (static pictures),
column.py (pictures that fit a notebook's column: what notebooks store, film strips),
widget.py + graph.js (the live widget), plots.py (matplotlib figures), live.py (progress bars and
a live training figure), from_torch.py + torch_recording.py (real PyTorch graphs read into the
same Snapshot, and watched as PyTorch runs them), compare.py + side_by_side.py (the same code in
PyTorch and in autograd_lab, differences marked), diff.py + diff_widget.py (any two graphs
aligned, added/removed/changed nodes marked: marks.py), failed.py (the graph of a cell that
failed), repeats.py (blocks a model repeats, drawn once as "×N"), compiled.py (compiled
functions: fused kernels as clusters, the memory plan per node), memory_plots.py (memory
timelines), export.py (one HTML page that steps without a kernel: save_html, `autograd-lab
export-html`). The widget needs anywidget, the plots
matplotlib: both come with the `lab` extra and are imported only when used.
"""

from .compare import Comparison, compare
from .diff import GraphDiff, diff
from .export import save_html
from .graph import Recording, record, snapshot
from .layout import default_collapsed, expand, layout, scope_counts
from .live import LiveTraining, progress, set_progress
from .repeats import find_repeats
from .side_by_side import SideBySide, side_by_side
from .snapshot import LOCAL_DERIVATIVES, Snapshot, summarize
from .svg import render_svg, step_count, to_matplotlib, to_png, to_svg
from .torch_recording import TorchRecording, record_torch, watch_torch


def __getattr__(name):
    # The widget pulls in anywidget/ipywidgets: load it on first use, not with the package.
    if name == "GraphWidget":
        from .widget import GraphWidget

        return GraphWidget
    if name == "DiffWidget":
        from .diff_widget import DiffWidget

        return DiffWidget
    raise AttributeError(f"module 'autograd_lab.viz' has no attribute {name!r}")


__all__ = [
    "LOCAL_DERIVATIVES",
    "Comparison",
    "DiffWidget",
    "GraphDiff",
    "GraphWidget",
    "LiveTraining",
    "Recording",
    "SideBySide",
    "Snapshot",
    "TorchRecording",
    "compare",
    "default_collapsed",
    "diff",
    "expand",
    "find_repeats",
    "layout",
    "progress",
    "record",
    "record_torch",
    "render_svg",
    "save_html",
    "scope_counts",
    "set_progress",
    "side_by_side",
    "snapshot",
    "step_count",
    "summarize",
    "to_matplotlib",
    "to_png",
    "to_svg",
    "watch_torch",
]
