"""The widget in a real browser: JupyterLab on 127.0.0.1, driven by Debian's chromium via Playwright.

What a learner does, checked end to end: open a notebook, Run All, see the graph, step through
backward and watch b's gradient become 8 + 7 = 15, click a node to inspect it, collapse a scope;
and what Python sees of it (`w.step`, `w.selected`), both ways. A compiled function shows its
fused kernel as a cluster (with the memory plan per node), and autograd's graph of its result
shows the kernel as one box that opens to show the ops inside.

Needs `/usr/bin/chromium` (`sudo apt-get install chromium`; `.ci/run` installs it; another path
with AUTOGRAD_LAB_CHROMIUM=...) and the `playwright` Python package, never its downloaded
browsers. Skipped without them, except under CI=true, where that is a failure. Screenshots land
in test-artifacts/ (graph_widget.png; graph_widget_failure.png and the server log on failure).
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("AUTOGRAD_LAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
START_TIMEOUT = 60  # seconds for JupyterLab to answer
UI_TIMEOUT = 45_000  # milliseconds for anything on the page (the first kernel start is the slowest)

NOTEBOOK_CELLS = [
    "import autograd_lab as ag\nfrom autograd_lab.viz import record\nfrom autograd_lab.viz.widget import GraphWidget",
    "with record() as t:\n"
    "    a = ag.tensor(2.0, requires_grad=True)\n"
    "    b = ag.tensor(6.0, requires_grad=True)\n"
    "    c = a + b\n"
    "    d = b + 1\n"
    "    e = c * d\n"
    "    e.backward()",
    "w = GraphWidget(t)\nw",
    "w.step = 4  # Python moves the view",
    'print(f"python sees step {w.step}, selected {w.selected}")',
    "with record() as t2:\n"
    "    x = ag.ones(2, 3)\n"
    '    with ag.autograd.scope("layer"):\n'
    "        weight = ag.full((3, 2), 0.5, requires_grad=True)\n"
    "        h = (x @ weight).tanh()\n"
    "    loss = h.sum()\n"
    "    loss.backward()\n"
    "GraphWidget(t2)",
    # a 10,000-node graph in 20 scopes: it must open collapsed and leave the page responsive
    "with record() as t3:\n"
    "    z = ag.ones(1, requires_grad=True)\n"
    "    for layer in range(20):\n"
    '        with ag.autograd.scope(f"layer{layer}"):\n'
    "            for _ in range(250):\n"
    "                z = (z * 1.001 + 0.001).tanh()\n"
    "    z.sum().backward()\n"
    "big = GraphWidget(t3)\n"
    "print(len(big.snapshot.nodes), 'nodes')\n"
    "big",
    # a compiled function: GELU after a matmul, fused into one kernel
    "@ag.compile\n"
    "def layer(x, w):\n"
    "    h = x @ w\n"
    "    return (0.5 * h * (1 + ((h + 0.044715 * h**3) * 0.7978845608).tanh())).sum()\n"
    "y = layer(ag.ones(2, 3, requires_grad=True), ag.full((3, 4), 0.1))\n"
    "ag.show(layer)",
    "ag.show(y)",
]

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def _missing(what, how):
    """Skip where the browser stack is absent; under CI that is an error (CI always has it)."""
    message = f"{what} is not available, so the browser test cannot run: {how}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{message} (CI must run the browser test)")
    pytest.skip(message)


def _require_browser_stack():
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        _missing(CHROMIUM, "install Debian's chromium with `sudo apt-get install chromium`")
    for module, extra in (("playwright", "test"), ("jupyterlab", "lab"), ("anywidget", "lab")):
        try:
            __import__(module)
        except ImportError:
            _missing(f"the Python package {module}", f"`pip install -e .[{extra}]` in this venv")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_notebook(folder):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(source) for source in NOTEBOOK_CELLS]
    nbformat.write(nb, folder / "graph.ipynb")


def _quiet_settings(home):
    """A fresh JupyterLab profile: no news prompt, no update check, no saved workspace."""
    config = home / "config"
    settings = home / "settings" / "@jupyterlab"
    config.mkdir(parents=True)
    (settings / "apputils-extension").mkdir(parents=True)
    (settings / "notebook-extension").mkdir(parents=True)
    (config / "jupyter_server_config.py").write_text(
        "c.LabApp.news_url = None\n"
        "c.LabApp.check_for_updates_class = 'jupyterlab.NeverCheckForUpdate'\n"
    )
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        '{"checkForUpdates": false, "fetchNews": "false"}'
    )
    # open the notebook with its own kernel, without asking which one
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        '{"autoStartDefaultKernel": true}'
    )
    return {
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 serving a folder with graph.ipynb; always shut down."""
    _require_browser_stack()
    work = tmp_path_factory.mktemp("lab")
    notebooks = work / "notebooks"
    notebooks.mkdir()
    _write_notebook(notebooks)
    port, token = _free_port(), uuid.uuid4().hex
    command = [
        sys.executable, "-m", "jupyter", "lab",
        "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
        f"--IdentityProvider.token={token}", "--ServerApp.open_browser=False",
        f"--ServerApp.root_dir={notebooks}",
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI run as root; Jupyter refuses otherwise
    env = {**os.environ, **_quiet_settings(work / "home")}
    log = (work / "jupyter.log").open("w")
    server = subprocess.Popen(
        command,
        cwd=notebooks,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(
                        f"JupyterLab did not start within {START_TIMEOUT}s:\n"
                        + (work / "jupyter.log").read_text()[-3000:]
                    )
                time.sleep(0.3)
        yield {"url": url, "token": token, "log": work / "jupyter.log"}
    finally:
        _stop(server)
        log.close()


def _stop(server):
    """Stop JupyterLab and its kernels (one process group): politely, then firmly."""
    if server.poll() is not None:
        return
    try:
        os.killpg(server.pid, 15)
        server.wait(timeout=15)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        try:
            os.killpg(server.pid, 9)
        except ProcessLookupError:
            pass
        server.wait(timeout=10)


@pytest.fixture
def page(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.set_default_timeout(UI_TIMEOUT)
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.errors = errors
            yield page
        finally:
            browser.close()


def _grad_text(widget, node_id):
    return widget.locator(f'.agl-node[data-id="{node_id}"] .agl-grad').text_content()


def test_widget_renders_steps_and_inspects_in_jupyterlab(lab, page):
    try:
        _drive(lab, page)
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)  # what the page looked like when it went wrong
        page.screenshot(path=str(ARTIFACTS / "graph_widget_failure.png"))
        shutil.copy(lab["log"], ARTIFACTS / "jupyterlab_failure.log")
        print("JupyterLab's log:\n" + lab["log"].read_text()[-4000:])
        raise


def _drive(lab, page):
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT)
    page.goto(f"{lab['url']}/lab/tree/graph.ipynb?token={lab['token']}")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    # wait for the kernel ("Python 3 (ipykernel) | Idle" in the status bar): cells sent while it
    # is still connecting can be lost
    status = page.locator("#jp-main-statusbar")
    expect(status).to_contain_text(re.compile(r"\(ipykernel\)\s*\|\s*Idle"))
    # Run -> Run All Cells from the menu, as a learner would
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

    # every cell has run (the last one builds a 10,000-node graph) before anything is clicked:
    # clicks sent while the kernel is busy would race with the cells still queued
    expect(page.locator(".agl-widget")).to_have_count(5)
    expect(status).to_contain_text(re.compile(r"\(ipykernel\)\s*\|\s*Idle"))

    # the graph is drawn: six nodes with the names used in the cell
    widget = page.locator(".agl-widget").first
    nodes = widget.locator(".agl-node")
    expect(nodes).to_have_count(6)
    labels = widget.locator(".agl-node .agl-label").all_text_contents()
    assert labels == ["a", "b", "c = Add", "d = Add", "e = Mul", "e"]
    assert widget.locator(".agl-edge").count() == 6

    # Python moved the view to step 4 (cell 4): the first backward step, Mul runs with grad 1
    step = widget.locator(".agl-step")
    expect(step).to_have_text("step 4 / 15")
    expect(widget.locator(".agl-caption")).to_contain_text("MulBackward0 runs")
    assert _grad_text(widget, "n1") == ""  # no gradient has reached b yet

    # step forward through backward with the button: b gets 8 (from d), then 8 + 7 = 15
    seen = []
    forward = widget.get_by_role("button", name="Step forward")
    for k in range(5, 16):
        forward.click()
        expect(step).to_have_text(f"step {k} / 15")
        seen.append(_grad_text(widget, "n1"))
    assert "grad 8." in seen and seen[-1] == "grad 15.", seen
    assert seen.index("grad 8.") < seen.index("grad 15.")
    assert _grad_text(widget, "n0") == "grad 7."
    # and back again: the slider and the button move together
    widget.get_by_role("button", name="Step back").click()
    expect(step).to_have_text("step 14 / 15")
    widget.locator(".agl-slider").fill("15")
    expect(step).to_have_text("step 15 / 15")

    # clicking b pins the inspector with its value and gradient
    widget.locator('.agl-node[data-id="n1"]').click()
    inspector = widget.locator(".agl-inspector")
    expect(inspector).to_be_visible()
    expect(inspector.locator(".agl-inspector-title")).to_have_text("b")
    expect(inspector).to_contain_text("6.")
    expect(inspector).to_contain_text("15.")

    # Python sees what the browser did: re-run the print cell
    cell = page.locator(".jp-NotebookPanel .jp-Cell").nth(4)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    expect(cell.locator(".jp-OutputArea-output")).to_contain_text(
        "python sees step 15, selected n1"
    )

    # a scope collapses into one box when its title is clicked (the browser sets `collapsed`,
    # Python lays the graph out again), and expands when the box is clicked
    scoped = page.locator(".agl-widget").nth(1)
    expect(scoped.locator(".agl-node")).to_have_count(5)
    scoped.locator('.agl-group[data-id="scope:layer"] .agl-group-title').click()
    expect(scoped.locator(".agl-group.agl-collapsed")).to_have_count(1)
    expect(scoped.locator(".agl-node")).to_have_count(2)  # loss = Sum, loss: the rest is inside
    scoped.locator(".agl-group.agl-collapsed").click()
    expect(scoped.locator(".agl-node")).to_have_count(5)

    # the 10,000-node graph opens with its 20 scopes collapsed, and still steps at once
    big = page.locator(".agl-widget").nth(2)
    big_cell = page.locator(".jp-NotebookPanel .jp-Cell").nth(6)
    expect(big_cell.locator(".jp-OutputArea-output").first).to_contain_text(
        re.compile(r"1\d{4} nodes")
    )
    expect(big.locator(".agl-group.agl-collapsed")).to_have_count(20)
    assert big.locator(".agl-node").count() < 30
    big_step = big.locator(".agl-step")
    big.get_by_role("button", name="Step forward").click()
    expect(big_step).to_contain_text("step 1 /")

    # the compiled function's trace: the fused kernel is an orange cluster of the ops it runs;
    # at the last step the matmul's result and the kernel's are freed (read for the last time)
    traced = page.locator(".agl-widget").nth(3)
    expect(traced.locator(".agl-group.agl-fused .agl-group-title")).to_contain_text("fused: mul·")
    traced.get_by_role("button", name="Jump to the last step").click()
    freed = traced.locator(".agl-node.agl-mem-freed .agl-label")
    expect(freed).to_have_text(["%2 = Mm", "%10 = Mul"])
    expect(traced.locator(".agl-membar-text")).to_contain_text("live after")
    # autograd's graph of its result: the kernel is one box; clicking it shows the ops inside
    kernel = page.locator(".agl-widget").nth(4)
    closed = kernel.locator(".agl-group.agl-fused.agl-collapsed")
    expect(closed).to_have_count(1)
    assert "Tanh" not in kernel.locator(".agl-node .agl-label").all_text_contents()
    closed.click()
    expect(kernel.locator(".agl-node .agl-label").filter(has_text="Tanh")).to_have_count(1)

    # hovering a node shows its tooltip
    widget.locator('.agl-node[data-id="n4"]').hover()
    expect(widget.locator(".agl-tooltip")).to_contain_text("MulBackward0")
    page.mouse.move(5, 5)
    expect(widget.locator(".agl-tooltip")).to_be_hidden()

    # keep a picture of the widget: the end of backward, b inspected
    ARTIFACTS.mkdir(exist_ok=True)
    widget.scroll_into_view_if_needed()
    widget.screenshot(path=str(ARTIFACTS / "graph_widget.png"))
    page.screenshot(path=str(ARTIFACTS / "graph_widget_jupyterlab.png"))
    assert not page.errors, page.errors
