"""A page that steps without a kernel: one self-contained HTML file with the live drawing.

    >>> from autograd_lab.viz import record, save_html
    >>> with record() as r:
    ...     a = ag.tensor(2.0, requires_grad=True); b = a * a + a; b.backward()
    >>> save_html(r, "graph.html")        # or widget.save_html("graph.html")

The file holds graph.css, graph.js (the widget's own drawing code) and standalone.js (a stand-in
for the kernel) inline, and the graph as JSON: no CDN, no server, nothing fetched, so it opens
from disk, on GitHub Pages, in an LMS page or beside slides. Step, play, hover, inspect and
collapse work as in the notebook.

Collapsing a scope needs a new layout, which layout.py computes in Python. Rather than write a
second layout in JavaScript (two codes that would drift apart and draw different boxes), the
export lays out in advance every view the page can reach by clicking scope titles from its first
view, nearest first, up to `max_layouts` (a lesson's graph has a handful). A view beyond that
says so on the page. Node and edge data are written once and shared by all layouts.

`export_notebook` does the same for every graph of a notebook (cli.py: `autograd-lab
export-html`): see its docstring for why it runs the notebook again.
"""

import html
import json
from pathlib import Path

from .layout import drawn_scopes
from .repeats import find_repeats
from .view import as_snapshot, view_graph

HERE = Path(__file__).parent
# the JSON a GraphWidget (or a row of them) adds to its output while export_notebook runs a notebook
GRAPH_MIME = "application/vnd.autograd-lab.graph+json"

PAGE_CSS = """
body { margin: 0 auto; max-width: 1400px; padding: 16px 24px;
  font-family: system-ui, sans-serif; color: #1f2937; line-height: 1.45; }
.agl-export { margin: 8px 0 16px; }
.agl-export-row { display: flex; gap: 12px; align-items: flex-start; }
.agl-export-row > .agl-export { flex: 1; min-width: 0; }
.agl-export-message { margin-top: 4px; padding: 6px 10px; background: #fef3c7;
  border: 1px solid #d97706; border-radius: 4px; font-size: 13px; }
.agl-export-footer { margin-top: 24px; color: #6b7280; font-size: 12px; }
"""

# a notebook page (nbconvert's "basic" cells): code in grey boxes, no prompts
NOTEBOOK_CSS = """
.cell { margin: 10px 0; }
.prompt, .anchor-link { display: none; }
.input_area { background: #f6f8fa; border: 1px solid #e5e7eb; border-radius: 4px;
  padding: 8px 10px; overflow-x: auto; }
pre { font-family: ui-monospace, monospace; font-size: 13px; margin: 0; white-space: pre-wrap; }
.output_area pre { padding: 4px 10px; }
.rendered_html table { border-collapse: collapse; }
.rendered_html td, .rendered_html th { border: 1px solid #d1d5db; padding: 2px 8px; }
.output_area img { max-width: 100%; height: auto; }
"""


def save_html(
    graph_or_roots,
    path,
    *,
    title=None,
    step=0,
    selected=None,
    collapsed=None,
    max_nodes=200,
    max_layouts=64,
    recording=None,
    names=None,
):
    """Write `graph_or_roots` as one self-contained HTML page that steps without a kernel.

    `graph_or_roots`: a `Snapshot`, a `Recording` (`with record() as r:`), a `TorchRecording`, a
    `GraphWidget`, or a tensor (or a list of tensors; `recording=` and `names=` as for
    `snapshot`). The page opens at `step`, with `selected` in the inspector and the scopes
    `collapsed` (None: every top-level scope of a graph over `max_nodes` nodes). Returns the
    path written.
    """
    if hasattr(graph_or_roots, "save_html") and hasattr(graph_or_roots, "snapshot"):
        return graph_or_roots.save_html(path, title=title, max_layouts=max_layouts)
    roots = (
        tuple(graph_or_roots) if isinstance(graph_or_roots, (list, tuple)) else (graph_or_roots,)
    )
    if names is None:  # label a, b, c like the code that made them (as GraphWidget does)
        from .graph import caller_tensor_names

        names = caller_tensor_names()
    snapshot = as_snapshot(roots, recording, names, max_values=64)
    data = page_data(snapshot, step, selected, collapsed, max_nodes, max_layouts)
    n = len(snapshot.nodes)
    title = title or f"autograd_lab graph: {n} nodes, {len(snapshot.events)} backward events"
    body = f"<h1>{html.escape(title)}</h1>\n{graph_slot('agl-graph-0', data)}"
    return _write(path, page(title, body))


def page_data(snapshot, step=0, selected=None, collapsed=None, max_nodes=200, max_layouts=64):
    """Everything standalone.js needs for one graph, as plain JSON-ready data (see its header)."""
    if max_layouts < 1:
        raise ValueError(f"max_layouts={max_layouts}: a page needs at least its first layout (1)")
    # the page lists the model's repeated blocks (the search box and legend read them) but draws
    # them unfolded: folding lays the graph out again, which needs Python (the live widget)
    repeats = find_repeats(snapshot, drawn_scopes(snapshot))
    graph, shown = view_graph(snapshot, collapsed, max_nodes, repeats=repeats)
    _check_start(snapshot, graph, step, selected)
    hidden = graph["layout"]["hidden"]
    if selected in hidden:  # as the widget does: open the scopes around the selected node
        scope = snapshot.node(selected).get("scope") or hidden[selected][len("scope:") :]
        shown = [p for p in shown if not (scope == p or scope.startswith(p + "/"))]
        graph, shown = view_graph(snapshot, shown, max_nodes, repeats=repeats)
    states, requests, complete = _reachable_layouts(
        snapshot, graph, shown, max_nodes, max_layouts, repeats
    )

    full = snapshot.to_dict()
    node_index = {n["id"]: k for k, n in enumerate(full["nodes"])}
    edge_index = {_edge_key(e): k for k, e in enumerate(full["edges"])}
    graphs = [g for _, g in states]
    # what every layout has alike is written once (the events, the forward order, ...)
    keys = set().union(*graphs) - {"nodes", "edges"}
    shared = {k: graphs[0][k] for k in keys if all(k in g and g[k] == graphs[0][k] for g in graphs)}
    own = []
    for shown_scopes, g in states:
        rest = {k: v for k, v in g.items() if k not in shared}
        rest["nodes"] = [node_index[n["id"]] for n in g["nodes"]]
        rest["edges"] = [edge_index[_edge_key(e)] for e in g["edges"]]
        # the nodes hidden in collapsed scopes, by index too (a 10,000-node graph hides 9,500
        # per layout): standalone.js rebuilds layout.hidden and hidden_nodes from them
        if "hidden_nodes" in rest:
            rest["hidden_nodes"] = [node_index[i] for i in g["hidden_nodes"]]
        if "layout" in rest:
            boxes = {}
            for i, box in g["layout"]["hidden"].items():
                boxes.setdefault(box, []).append(node_index[i])
            rest["layout"] = {**g["layout"], "hidden": boxes}
        own.append({"shown": shown_scopes, "graph": rest})
    return {
        "shared": shared,
        "nodes": full["nodes"],
        "edges": full["edges"],
        "states": own,
        "requests": requests,
        "complete": complete,
        "start": {"state": 0, "step": step, "selected": selected},
    }


def _edge_key(edge):
    return (edge["source"], edge["target"], edge["input"])


def _check_start(snapshot, graph, step, selected):
    last = graph["n_steps"]
    if not isinstance(step, int) or not 0 <= step <= last:
        raise ValueError(f"step={step!r} is out of range: this graph has steps 0 to {last}")
    ids = {n["id"] for n in snapshot.nodes}
    if selected is not None and selected not in ids:
        raise ValueError(
            f"selected={selected!r}: no such node in this graph (its ids are n0 to n{len(ids) - 1})"
        )


def _key(scopes):
    """A set of collapsed scopes as standalone.js looks it up: sorted, one per line."""
    return "\n".join(sorted(scopes))


def _reachable_layouts(snapshot, graph, shown, max_nodes, max_layouts, repeats=()):
    """The layouts a reader reaches by clicking scope titles, nearest the first view first.

    Returns [(shown scopes, graph)], {request key: index} for every collapsed list graph.js may
    send (graph.js's `toggle`, mirrored by `_toggled`), and whether every reachable one is there.
    """
    states = [(shown, graph)]
    by_shown = {_key(shown): 0}
    requests = {_key(shown): 0}
    complete = True
    i = 0
    while i < len(states):  # breadth first: one click away, then two, ...
        now, g = states[i]
        for group in g["layout"]["groups"]:
            asked = _toggled(now, group, g["scopes"], max_nodes)
            if _key(asked) in requests:
                continue
            if len(states) >= max_layouts:
                complete = False
                continue
            new_graph, new_shown = view_graph(snapshot, asked, max_nodes, repeats=repeats)
            k = by_shown.get(_key(new_shown))
            if k is None:
                k = by_shown[_key(new_shown)] = len(states)
                requests[_key(new_shown)] = k
                states.append((new_shown, new_graph))
            requests[_key(asked)] = k
        i += 1
    return states, requests, complete


def _toggled(collapsed, group, scopes, max_nodes):
    """The collapsed scopes graph.js asks for when this group's title is clicked (its `toggle`)."""
    scope = group["scope"]

    def inside(p):
        return p.startswith(scope + "/")

    asked = [p for p in collapsed if not inside(p)]
    if group["collapsed"]:
        asked = [p for p in asked if p != scope]
        if group["count"] > max_nodes:  # a big scope opens one level at a time
            asked += [p for p in scopes if inside(p) and "/" not in p[len(scope) + 1 :]]
    else:
        asked.append(scope)
    return asked


# ---- the page ------------------------------------------------------------------------------------


def graph_slot(element_id, data):
    """The place of one graph in the page: a div standalone.js fills, and the graph's JSON."""
    return (
        f'<div class="agl-export" data-graph="{element_id}">'
        "<noscript>This graph needs JavaScript to draw.</noscript></div>\n"
        f'<script type="application/json" id="{element_id}">{_json(data)}</script>\n'
    )


def _json(data):
    # "<" as \u003c: the JSON can never close its <script> (a value holding "</script>")
    text = json.dumps(data, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page(title, body, extra_css=""):
    """A whole HTML page: the widget's CSS and JavaScript inline, `body` in between."""
    css = _inline((HERE / "graph.css").read_text(encoding="utf-8"), "style") + PAGE_CSS + extra_css
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{css}</style>\n</head>\n<body>\n"
        f"{body}\n"
        '<p class="agl-export-footer">Drawn by autograd_lab\'s graph viewer; this page needs no '
        "server and no network: step, play, hover and click nodes, click a scope's title to "
        "collapse it.</p>\n"
        f'<script type="module">\n{_scripts()}\n</script>\n</body>\n</html>\n'
    )


def _scripts():
    """graph.js as a plain module (its default export named) and standalone.js after it."""
    source = (HERE / "graph.js").read_text(encoding="utf-8")
    marker = "export default {"
    if source.count(marker) != 1:
        raise RuntimeError(f"graph.js must have exactly one `{marker}` (the widget) to export it")
    source = source.replace(marker, "const graphWidget = {")
    script = source + "\n" + (HERE / "standalone.js").read_text(encoding="utf-8")
    return _inline(script, "script")


def _inline(text, tag):
    if f"</{tag}" in text.lower():
        raise RuntimeError(f"cannot inline a file holding '</{tag}': it would end the <{tag}>")
    return text


def _write(path, text):
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder: give a file name, e.g. {path / 'graph.html'}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---- a notebook: every graph output live ----------------------------------------------------------


def export_notebook(notebook, out_dir=None, *, timeout=600, kernel_name=None, max_layouts=64):
    """Run `notebook` and write it as one page, every graph output live; returns the path.

    Why run it: a saved notebook keeps a graph widget's output as a model id (the widget itself
    lived in the kernel) and the static SVG, not the nodes, values and backward events a page
    needs to step. Storing them in each output would make every lesson file carry them and
    every re-execution rewrite them. So the notebook runs again (nbclient, in its own folder, as
    nbval runs it), with a display formatter that marks each graph's output (GRAPH_MIME) and,
    after the last cell, each graph's page data as the notebook left it (a later `w.step = 4`
    counts, as in a notebook after Run All): export_capture.py. The notebook file is not
    changed. The page is written to `out_dir`
    (default: beside the notebook) as <notebook name>.html.
    """
    import nbformat

    path = Path(notebook)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no such notebook (give the path of an .ipynb file, e.g. notebooks/01_watching_backprop.ipynb)"
        )
    if max_layouts < 1:  # checked here: inside the kernel it would look like a broken cell
        raise ValueError(f"max_layouts={max_layouts}: a page needs at least its first layout (1)")
    if path.suffix != ".ipynb":
        raise ValueError(f"{path} is not a notebook: export-html reads Jupyter .ipynb files")
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:
        raise ValueError(f"{path} could not be read as a Jupyter notebook: {error}") from error
    graphs = _run(nb, path, timeout, kernel_name, max_layouts)
    count = _live_graphs(nb, graphs)
    if count == 0:
        raise ValueError(
            f"{path} shows no graph: export-html draws the outputs of GraphWidget, "
            "autograd_lab.show(...) and %%autograd cells (static pictures such as "
            "show(..., static=True) stay pictures). Add one, or save a single graph with "
            "autograd_lab.viz.save_html(graph, path)."
        )
    from nbconvert import HTMLExporter

    # "basic": the notebook's cells only, with no <script src> of a CDN (MathJax, require.js)
    body, _ = HTMLExporter(template_name="basic").from_notebook_node(nb)
    from pygments.formatters import HtmlFormatter

    colours = HtmlFormatter().get_style_defs(".highlight")  # the code's colours, as nbconvert's
    out = Path(out_dir) if out_dir is not None else path.parent
    return _write(out / f"{path.stem}.html", page(path.stem, body, NOTEBOOK_CSS + colours))


CAPTURE = (
    "from autograd_lab.viz.export_capture import capture_graphs as _agl_capture\n"
    "_agl_capture(max_layouts={max_layouts})\n"
    "del _agl_capture"
)
FINAL = (
    "from autograd_lab.viz.export_capture import show_final_graphs as _agl_final\n"
    "_agl_final()\n"
    "del _agl_final"
)


def _run(nb, path, timeout, kernel_name, max_layouts):
    """Execute the notebook in memory between two cells of our own (export_capture.py): the
    first installs `capture_graphs`, the last gives the graphs' page data; returns that."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb.cells.insert(0, nbformat.v4.new_code_cell(CAPTURE.format(max_layouts=int(max_layouts))))
    nb.cells.append(nbformat.v4.new_code_cell(FINAL))
    name = kernel_name or nb.metadata.get("kernelspec", {}).get("name") or "python3"
    # store_widget_state=False: widget state in the notebook would make nbconvert add a CDN script
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=name,
        resources={"metadata": {"path": str(path.parent.resolve())}},
        store_widget_state=False,
    )
    try:
        client.execute()
    except CellExecutionError as error:
        raise RuntimeError(
            f"{path}: a cell raised while the notebook ran for export (fix it, or tag a cell "
            f"that is meant to raise with 'raises-exception'):\n{error}"
        ) from error
    finally:
        final = nb.cells.pop()
        nb.cells.pop(0)
    nb.metadata.pop("widgets", None)
    return [o for o in final.outputs if GRAPH_MIME in o.get("data", {})][0]["data"][GRAPH_MIME][
        "graphs"
    ]


def _live_graphs(nb, graphs):
    """Swap each output marked GRAPH_MIME for its live graphs (`graphs`: their page data in
    the order they were shown); returns how many."""
    count = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            data.pop("application/vnd.jupyter.widget-view+json", None)  # no widget manager here
            if GRAPH_MIME not in data:
                continue
            slots = data[GRAPH_MIME]["slots"]
            places = "".join(graph_slot(f"agl-graph-{k}", graphs[k]) for k in slots)
            count += len(slots)
            row = len(slots) > 1  # side_by_side(...).widgets(): the graphs in a row
            output["data"] = {
                "text/html": f'<div class="agl-export-row">{places}</div>' if row else places
            }
    return count
