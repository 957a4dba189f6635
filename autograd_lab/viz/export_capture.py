"""What runs inside the kernel while `autograd-lab export-html` runs a notebook (export.py).

A saved notebook keeps a graph widget's picture, not its data, so export.py runs the notebook
again with `capture_graphs` installed first: every GraphWidget displayed (and every row of them,
such as `side_by_side(...).widgets()`) marks its output, under GRAPH_MIME, with its number in
DISPLAYED. After the last cell, `show_final_graphs` gives each one's page data as it is then:
a cell that moves a widget (`w.step = 4`, `w.selected = "n1"`) moves it in the page too, as
in the live notebook after Run All. The notebook file itself is never written.
"""

from IPython.display import display

from .export import GRAPH_MIME, page_data
from .widget import GraphWidget

DISPLAYED = []  # every GraphWidget shown so far, in the order of their places in the page


def capture_graphs(max_layouts=64):
    """In a kernel: give every displayed GraphWidget (and a row of them) its page data too.

    export_notebook runs this first; the outputs then carry GRAPH_MIME beside the widget's own.
    """
    from IPython import get_ipython
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class GraphFormatter(BaseFormatter):
        format_type = Unicode(GRAPH_MIME)
        print_method = ObjectName("_autograd_lab_page_data_")
        _return_type = dict

    DISPLAYED.clear()

    def slot(widget):
        DISPLAYED.append(widget)
        return len(DISPLAYED) - 1

    def widgets_in(box):
        for child in box.children:
            if isinstance(child, GraphWidget):
                yield child
            elif hasattr(child, "children"):
                yield from widgets_in(child)

    def row(box):
        slots = [slot(w) for w in widgets_in(box)]
        return {"slots": slots} if slots else None

    formatter = GraphFormatter(parent=get_ipython().display_formatter)
    formatter.for_type(GraphWidget, lambda widget: {"slots": [slot(widget)]})
    try:
        import ipywidgets

        formatter.for_type(ipywidgets.Box, row)
    except ImportError:
        pass
    get_ipython().display_formatter.formatters[GRAPH_MIME] = formatter
    global MAX_LAYOUTS
    MAX_LAYOUTS = max_layouts


MAX_LAYOUTS = 64


def show_final_graphs():
    """After the last cell: the page data of every displayed widget, as it is now."""
    graphs = [
        page_data(w.snapshot, w.step, w.selected, w.collapsed, w.max_nodes, MAX_LAYOUTS)
        for w in DISPLAYED
    ]
    display({GRAPH_MIME: {"graphs": graphs}}, raw=True)
