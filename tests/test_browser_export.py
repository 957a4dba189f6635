"""An exported page (viz/export.py) opened from disk in chromium with every network request
refused: it must draw, step, play, hover, inspect and collapse with no kernel and no server.

Two pages: `save_html` of a graph with two scopes, and `autograd-lab export-html` of a small
notebook (run by nbclient). Playwright aborts every request that is not file:// and the test
fails if the page asked for any. Screenshots: test-artifacts/export_*.png.
"""

import subprocess
import sys

import pytest
from test_browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_FLAGS,
    _require_browser_stack,
    _write_notebook,
)
from test_export import two_scopes  # the same two-layer graph the page tests draw

from autograd_lab.viz import save_html

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]
UI_TIMEOUT = 15_000


@pytest.fixture(scope="module")
def browser():
    _require_browser_stack()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()


def _open(browser, path):
    """A page of `path` from disk, every other request aborted and remembered."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    asked, errors = [], []

    def only_files(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            asked.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(path.resolve().as_uri())
    page.wait_for_selector(".agl-node", timeout=UI_TIMEOUT)
    return page, asked, errors


def test_saved_graph_steps_hovers_inspects_and_collapses_offline(browser, tmp_path):
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    r = two_scopes()
    path = save_html(r, tmp_path / "graph.html")
    page, asked, errors = _open(browser, path)
    widget = page.locator(".agl-widget")
    n_steps = len([n for n in r.nodes if n["kind"] == "op"]) + len(r.events)
    expect(widget.locator(".agl-step")).to_have_text(f"step 0 / {n_steps}")

    # step: the first op computes; the caption says so and its box shows a value
    widget.locator(".agl-forward").click()
    expect(widget.locator(".agl-step")).to_have_text(f"step 1 / {n_steps}")
    expect(widget.locator(".agl-caption")).to_contain_text("Forward 1/")
    widget.locator(".agl-last").click()
    expect(widget.locator(".agl-step")).to_have_text(f"step {n_steps} / {n_steps}")
    # w1's gradient has arrived: d loss/d w1 of a 2-layer tanh net, drawn in its box
    w1 = widget.locator('.agl-node[data-role="input"]').filter(has_text="w1")
    expect(w1.locator(".agl-grad")).to_contain_text("grad")
    # a 2x2 value too long for its box is summed up, as layout.py measured it
    w2 = widget.locator(".agl-node").filter(has_text="w2")
    expect(w2.locator(".agl-value")).to_have_text("[2, 2] mean 0.25")
    page.screenshot(path=str(ARTIFACTS / "export_graph_stepped.png"))

    # keys: ← steps back once the widget has the focus
    widget.locator(".agl-caption").click()
    page.keyboard.press("ArrowLeft")
    expect(widget.locator(".agl-step")).to_have_text(f"step {n_steps - 1} / {n_steps}")

    # play runs to the end by itself
    widget.locator(".agl-first").click()
    widget.locator(".agl-speed").select_option("60")
    widget.locator(".agl-play").click()
    expect(widget.locator(".agl-step")).to_have_text(
        f"step {n_steps} / {n_steps}", timeout=UI_TIMEOUT
    )

    # hover: the tooltip with the value and gradient
    w1.hover()
    tooltip = widget.locator(".agl-tooltip")
    expect(tooltip).to_be_visible()
    expect(tooltip).to_contain_text("w1")
    expect(tooltip).to_contain_text("grad")
    page.screenshot(path=str(ARTIFACTS / "export_graph_hover.png"))

    # inspect: a click pins the node, its values and a heat map of its gradient
    w1.click()
    inspector = widget.locator(".agl-inspector")
    expect(inspector).to_be_visible()
    expect(inspector.locator(".agl-inspector-title")).to_have_text("w1")
    expect(inspector).to_contain_text("0.5")
    expect(inspector.locator(".agl-heatmap")).to_have_count(2)  # its value and its gradient
    page.screenshot(path=str(ARTIFACTS / "export_graph_inspector.png"))

    # collapse layer1: one box stands for its nodes; w1 (inside it) leaves the inspector
    widget.locator(".agl-group-title", has_text="layer1").click()
    box = widget.locator(".agl-group.agl-collapsed")
    expect(box).to_have_count(1)
    expect(box).to_contain_text("layer1")
    expect(widget.locator(".agl-node").filter(has_text="w1")).to_have_count(0)
    expect(inspector).to_be_hidden()
    # nothing covers the box: layer2's frame follows its own boxes (layout.py's outline)
    box.click(trial=True, timeout=5_000)  # fails when another element would get the click
    expect(widget.locator(".agl-step")).to_have_text(f"step {n_steps} / {n_steps}")  # kept
    page.screenshot(path=str(ARTIFACTS / "export_graph_collapsed.png"))
    # both collapsed, then layer1 opened again: a layout two clicks away
    widget.locator(".agl-group-title", has_text="layer2").click()
    expect(widget.locator(".agl-group.agl-collapsed")).to_have_count(2)
    widget.locator(".agl-group.agl-collapsed", has_text="layer1").click()
    expect(widget.locator(".agl-group.agl-collapsed")).to_have_count(1)
    expect(widget.locator(".agl-node").filter(has_text="w1")).to_have_count(1)
    expect(page.locator(".agl-export-message")).to_be_hidden()

    assert asked == [], f"the page asked the network for {asked}"
    assert errors == [], f"the page logged errors: {errors}"
    page.context.close()


def test_a_layout_the_page_did_not_save_is_explained(browser, tmp_path):
    from playwright.sync_api import expect

    path = save_html(two_scopes(), tmp_path / "one_layout.html", max_layouts=1)
    page, asked, errors = _open(browser, path)
    page.locator(".agl-group-title", has_text="layer1").click()
    message = page.locator(".agl-export-message")
    expect(message).to_be_visible()
    expect(message).to_contain_text("max_layouts")
    expect(page.locator(".agl-group.agl-collapsed")).to_have_count(0)  # the view stays as it was
    assert asked == [] and errors == []
    page.context.close()


NOTEBOOK = [
    "# Two graphs\nA markdown cell between them.",
    "import autograd_lab as torch\nfrom autograd_lab.viz import GraphWidget\n\n%load_ext autograd_lab",
    "%%autograd -b -o view\n"
    "a = torch.tensor(2.0, requires_grad=True)\n"
    "b = torch.tensor(6.0, requires_grad=True)\n"
    "c = a + b\n"
    "d = b + 1\n"
    "e = c * d\n"
    "e",
    "GraphWidget(view.snapshot, step=view.n_steps, selected='n1')",
    "view.step = 3  # Python moves the first view: the page opens there too",
    "print('a printed line stays')",
]


def test_exported_notebook_has_every_graph_live_offline(browser, tmp_path):
    from playwright.sync_api import expect

    _write_notebook(tmp_path, "two_graphs.ipynb", NOTEBOOK)
    nb = tmp_path / "two_graphs.ipynb"
    _markdown_first(nb)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograd_lab.cli",
            "export-html",
            str(nb),
            "-o",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    page, asked, errors = _open(browser, tmp_path / "site" / "two_graphs.html")
    widgets = page.locator(".agl-widget")
    expect(widgets).to_have_count(2)
    expect(page.locator("h1", has_text="Two graphs")).to_be_visible()  # the markdown, rendered
    expect(page.locator(".output_area pre", has_text="a printed line stays")).to_be_visible()
    first, second = widgets.nth(0), widgets.nth(1)
    expect(first.locator(".agl-step")).to_have_text("step 3 / 15")
    # the second opens where the cell left it: the last step, b pinned with its gradient 15
    expect(second.locator(".agl-step")).to_have_text("step 15 / 15")
    expect(second.locator(".agl-inspector-title")).to_have_text("b")
    expect(second.locator(".agl-inspector")).to_contain_text("15.")
    # the graphs are independent: stepping one leaves the other
    for _ in range(4):
        first.locator(".agl-forward").click()
    expect(first.locator(".agl-step")).to_have_text("step 7 / 15")
    expect(second.locator(".agl-step")).to_have_text("step 15 / 15")
    page.screenshot(path=str(ARTIFACTS / "export_notebook.png"), full_page=True)
    assert asked == [], f"the page asked the network for {asked}"
    assert errors == [], f"the page logged errors: {errors}"
    page.context.close()


def _markdown_first(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nb.cells[0] = nbformat.v4.new_markdown_cell(nb.cells[0].source)
    nbformat.write(nb, path)


def test_a_lesson_exports_with_as_many_live_graphs_as_it_shows(browser, tmp_path):
    """Lesson 01 as a page: one live graph for every widget its saved outputs show."""
    import json
    from pathlib import Path

    from playwright.sync_api import expect

    lesson = Path(__file__).resolve().parent.parent / "notebooks" / "01_watching_backprop.ipynb"
    saved = json.loads(lesson.read_text(encoding="utf-8"))
    # a stored widget keeps its picture and its text (the live reference is dropped: see
    # teach/lesson_outputs.py), so count the texts
    widgets = sum(
        "".join(output.get("data", {}).get("text/plain", "")).startswith("GraphWidget(")
        for cell in saved["cells"]
        for output in cell.get("outputs", [])
    )
    assert widgets == 4  # the lesson as this test knows it
    done = subprocess.run(
        [sys.executable, "-m", "autograd_lab.cli", "export-html", str(lesson), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    page, asked, errors = _open(browser, tmp_path / "01_watching_backprop.html")
    expect(page.locator(".agl-widget")).to_have_count(widgets)
    # the neuron: step to the end, and x1's gradient is the lesson's -1.5
    neuron = page.locator(".agl-widget").nth(2)
    neuron.locator(".agl-last").click()
    x1 = neuron.locator('.agl-node[data-role="input"]').filter(has_text="x1")
    expect(x1.locator(".agl-grad")).to_have_text("grad -1.5")
    neuron.screenshot(path=str(ARTIFACTS / "export_lesson01_neuron.png"))
    assert asked == [] and errors == []
    page.context.close()
