"""Time to first paint of a 2,000-node graph in a real browser: the live widget and the static SVG.

    .venv/bin/python benchmarks/viz_first_paint.py [--shape shared|rnn|transformer] [--repeats 5]
    .venv/bin/python benchmarks/viz_first_paint.py --before HEAD~3     # REF's layout, same page

What a notebook does to show a graph, split where it can be timed without a notebook server:

1. **Python**: `GraphWidget(graph)` lays the graph out and builds the JSON it sends (`widget.graph`),
   and displaying it also renders the static SVG (`to_svg`, the picture nbconvert and GitHub
   show): both are timed, as `_repr_mimebundle_` runs them.
2. **Browser, live widget**: graph.js draws that JSON in a plain page (no JupyterLab: its start and
   the kernel round trip are no part of drawing, and would dwarf it). The page holds the JSON and a
   stand-in for anywidget's model (`get`, `set`, `on`, `save_changes`), imports graph.js as the ES
   module anywidget would load, calls its `render`, and waits for the next two animation frames:
   the first paint of the drawing. Timed from before the JSON is parsed.
3. **Browser, static SVG**: the SVG alone in an HTML file opened from disk; the time is from the
   start of navigation to the second animation frame after the page's load event (the whole SVG
   parsed and painted; first-contentful-paint would count a page whose first boxes showed).

Debian's chromium (`/usr/bin/chromium`, or `$AUTOGRAD_LAB_CHROMIUM`) driven by Playwright,
headless, no GPU, as the browser tests run it. Median of `--repeats` pages (a fresh page each),
after one warm-up; the Python side, median of 3 runs (1 with --before). The load figures are
other processes' busy cores (see README.md). A screenshot of each page goes to
test-artifacts/first_paint_<shape>_{widget,svg}.png.
"""

import argparse
import gc
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout, uninstalled
sys.path.insert(0, str(ROOT / "benchmarks"))
from harness import cpu_snapshot, git_revision, other_cores  # noqa: E402
from viz_layout import rnn_graph, shared_leaf_graph, transformer_graph  # noqa: E402

from autograd_lab.viz.svg import to_svg  # noqa: E402
from autograd_lab.viz.widget import GraphWidget  # noqa: E402

CHROMIUM = os.environ.get("AUTOGRAD_LAB_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
ARTIFACTS = ROOT / "test-artifacts"
SHAPES = {"shared": shared_leaf_graph, "rnn": rnn_graph, "transformer": transformer_graph}
TARGET_S = 1.0
PYTHON_RUNS = 3  # the Python side: median of this many (one, when --before is slow)

# The page: graph.js imported from a blob (a module cannot be imported from file:// pages), a
# model that answers what graph.js asks, and a promise that resolves after the first paint.
WIDGET_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>{css}</style></head>
<body><div id="out"></div>
<script id="graph-data" type="application/json">{data}</script>
<script id="graph-js" type="text/plain">{js}</script>
<script type="module">
const t0 = performance.now();
const values = {{
  graph: JSON.parse(document.getElementById("graph-data").textContent),
  step: 0, selected: null, collapsed: {collapsed},
}};
const model = {{
  get: (name) => values[name],
  set: (name, value) => {{ values[name] = value; }},
  on: () => {{}}, off: () => {{}}, save_changes: () => {{}},
}};
const source = document.getElementById("graph-js").textContent;
const url = URL.createObjectURL(new Blob([source], {{ type: "text/javascript" }}));
const widget = (await import(url)).default;
widget.render({{ model, el: document.getElementById("out") }});
await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
window.firstPaint = performance.now() - t0;
window.boxes = document.querySelectorAll("#out svg rect, #out svg path").length;
</script></body></html>
"""


def python_side(graph, widget_class, svg_of):
    """Seconds to build the widget's JSON and the static SVG, and both."""
    gc.collect()
    t0 = time.perf_counter()
    widget = widget_class(graph, max_nodes=10**6, names={})  # every node drawn
    t1 = time.perf_counter()
    svg = svg_of(graph, collapsed=widget.collapsed, threshold=widget.max_nodes)
    t2 = time.perf_counter()
    payload = {"graph": widget.graph, "collapsed": widget.collapsed}
    return t1 - t0, t2 - t1, payload, svg


def browser_side(payload, svg, repeats, shape):
    """Median first paint (seconds) of the live widget's page and of the static SVG's page."""
    from playwright.sync_api import sync_playwright

    here = Path(__file__).resolve().parent.parent / "autograd_lab" / "viz"
    data = json.dumps(payload["graph"]).replace("</", "<\\/")
    page_html = WIDGET_PAGE.format(
        css=(here / "graph.css").read_text(),
        data=data,
        js=(here / "graph.js").read_text().replace("</script", "<\\/script"),
        collapsed=json.dumps(payload["collapsed"]),
    )
    folder = Path(tempfile.mkdtemp(prefix="first_paint_"))
    widget_file, svg_file = folder / "widget.html", folder / "svg.html"
    widget_file.write_text(page_html, encoding="utf-8")
    # after the whole SVG is parsed (load), the frame after next has painted all of it
    painted = (
        "<script>addEventListener('load', () => requestAnimationFrame(() => "
        "requestAnimationFrame(() => { window.painted = performance.now(); })));</script>"
    )
    svg_file.write_text(f"<!doctype html><html><body>{svg}{painted}</body></html>", "utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    widget_times, svg_times = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        for run in range(1 + repeats):
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(widget_file.as_uri())
            page.wait_for_function("window.firstPaint !== undefined", timeout=60_000)
            if page.evaluate("window.boxes") < len(payload["graph"]["layout"]["nodes"]):
                raise RuntimeError("graph.js drew fewer boxes than the layout has")
            if run == 0:
                page.screenshot(path=str(ARTIFACTS / f"first_paint_{shape}_widget.png"))
            else:
                widget_times.append(page.evaluate("window.firstPaint") / 1000)
            page.close()
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(svg_file.as_uri())
            page.wait_for_function("window.painted !== undefined", timeout=60_000)
            paint = page.evaluate("window.painted")
            if run == 0:
                page.screenshot(path=str(ARTIFACTS / f"first_paint_{shape}_svg.png"))
            else:
                svg_times.append(paint / 1000)
            page.close()
        browser.close()
    return statistics.median(widget_times), statistics.median(svg_times), len(data), len(svg)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="shared")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", metavar="REF", help="lay out with REF's package instead")
    args = parser.parse_args()
    widget_class, svg_of, code = GraphWidget, to_svg, git_revision(working_tree=True)
    if args.before:
        from before import load

        name = load(args.before).__name__
        widget_class = importlib.import_module(f"{name}.viz.widget").GraphWidget
        svg_of = importlib.import_module(f"{name}.viz.svg").to_svg
        code = f"{args.before} ({git_revision(args.before)})"
    graph = SHAPES[args.shape]().to_dict()
    print(
        f"{args.shape}: {len(graph['nodes'])} nodes; layout by autograd_lab {code}; load average "
        + " ".join(f"{v:.2f}" for v in os.getloadavg())
        + f"; chromium {CHROMIUM}, headless; median of {args.repeats} pages"
    )
    start = cpu_snapshot()
    repeats = 1 if args.before else PYTHON_RUNS  # before: a minute a run for these shapes
    runs = [python_side(graph, widget_class, svg_of) for _ in range(repeats)]
    python_load = other_cores(start, cpu_snapshot())
    widget_s = statistics.median(run[0] for run in runs)
    svg_s = statistics.median(run[1] for run in runs)
    payload, svg = runs[-1][2:]
    start = cpu_snapshot()
    paint_widget, paint_svg, json_size, svg_size = browser_side(
        payload, svg, args.repeats, args.shape
    )
    browser_load = other_cores(start, cpu_snapshot())
    print(
        f"python: GraphWidget (layout + JSON) {widget_s * 1000:.0f} ms, to_svg "
        f"{svg_s * 1000:.0f} ms (other processes' load {python_load:.2f} cores)"
    )
    print("browser:")
    for what, paint, size, python_s in (
        ("live widget (graph.js)", paint_widget, json_size, widget_s),
        ("static SVG", paint_svg, svg_size, svg_s),
    ):
        total = python_s + paint
        verdict = "ok" if total <= TARGET_S else "OVER"
        print(
            f"  {what:<24} {size / 1024:>7.0f} KiB  first paint {paint * 1000:>6.0f} ms;"
            f" with Python {total * 1000:>6.0f} ms   target {TARGET_S * 1000:.0f} ms: {verdict}"
        )
    shown = widget_s + svg_s + paint_widget
    print(
        f"  a notebook's display (widget and its static SVG, as _repr_mimebundle_ does, then "
        f"graph.js): {shown * 1000:.0f} ms   target {TARGET_S * 1000:.0f} ms: "
        + ("ok" if shown <= TARGET_S else "OVER")
    )
    print(f"  busy cores besides this process during the browser runs: {browser_load:.2f}")
    print("  (chromium's own processes are among them: read it as an upper bound of others' load)")


if __name__ == "__main__":
    main()
