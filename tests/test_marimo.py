"""The graph widget under `marimo run`, driven by Debian's chromium via Playwright.

The app (tests/fixtures/marimo_graph.py) wraps a GraphWidget in `mo.ui.anywidget`, as marimo needs
for an anywidget, and prints the step Python sees. Checked: the picture appears with its six
nodes, the buttons step through backward until b's gradient is 8 + 7 = 15, Python sees the step
the browser shows, and the page fetches nothing from outside 127.0.0.1 (marimo's front end and
the widget's code come from the local server, never from a CDN).

Same conventions as tests/test_browser.py: needs /usr/bin/chromium (another path with
AUTOGRAD_LAB_CHROMIUM=...) and the playwright and marimo packages (the test extra); skipped
without them, except under CI=true, where that is a failure. Screenshot:
test-artifacts/graph_widget_marimo.png (graph_widget_marimo_failure.png and the server's log on
failure).
"""

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from test_browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_FLAGS,
    _free_port,
    _stop,
    _wait_until_answering,
)

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "tests" / "fixtures" / "marimo_graph.py"
START_TIMEOUT = 60  # seconds for marimo to answer
UI_TIMEOUT = 45_000  # milliseconds for anything on the page (the first run imports everything)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def _missing(what, how):
    """Skip where the browser stack is absent; under CI that is an error (CI always has it)."""
    message = f"{what} is not available, so the marimo test cannot run: {how}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{message} (CI must run the browser tests)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def marimo_app(tmp_path_factory):
    """`marimo run` serving the app on 127.0.0.1 with a token; always shut down."""
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        _missing(CHROMIUM, "install Debian's chromium with `sudo apt-get install chromium`")
    for module in ("playwright", "marimo", "anywidget"):
        try:
            __import__(module)
        except ImportError:
            _missing(f"the Python package {module}", "`pip install -e .[test]` in this venv")
    work = tmp_path_factory.mktemp("marimo")
    port, token = _free_port(), uuid.uuid4().hex
    command = [sys.executable, "-m", "marimo", "run", str(APP), "--headless", "--no-sandbox"]
    command += ["--host=127.0.0.1", f"--port={port}", "--token", f"--token-password={token}"]
    env = {
        **os.environ,
        "MARIMO_SKIP_UPDATE_CHECK": "1",  # no call to PyPI at start-up
        # a fresh marimo profile: no user settings, nothing written to this user's home
        "XDG_CONFIG_HOME": str(work / "config"),
        "XDG_CACHE_HOME": str(work / "cache"),
        "XDG_STATE_HOME": str(work / "state"),
    }
    log_path = work / "marimo.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_answering(server, f"{url}/health", log, "marimo", START_TIMEOUT)
        yield {"url": url, "token": token, "log": log_path}
    finally:
        _stop(server)
        log.close()


@pytest.fixture
def page(marimo_app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.set_default_timeout(UI_TIMEOUT)
            page = context.new_page()
            page.errors, page.requests = [], []
            page.on("pageerror", lambda error: page.errors.append(str(error)))
            page.on("request", lambda request: page.requests.append(request.url))
            yield page
        finally:
            browser.close()


def test_widget_renders_and_steps_under_marimo_run(marimo_app, page):
    try:
        _drive(marimo_app, page)
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)  # what the page looked like when it went wrong
        page.screenshot(path=str(ARTIFACTS / "graph_widget_marimo_failure.png"))
        shutil.copy(marimo_app["log"], ARTIFACTS / "marimo_failure.log")
        print("marimo's log:\n" + marimo_app["log"].read_text()[-4000:])
        raise


def _grad_text(widget, node_id):
    return widget.locator(f'.agl-node[data-id="{node_id}"] .agl-grad').text_content()


def _drive(app, page):
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT)
    page.goto(f"{app['url']}/?access_token={app['token']}")

    # the picture: the six nodes of the cell, named as in the code
    widget = page.locator(".agl-widget")
    expect(widget).to_have_count(1)
    nodes = widget.locator(".agl-node")
    expect(nodes).to_have_count(6)
    labels = widget.locator(".agl-node .agl-label").all_text_contents()
    assert labels == ["a", "b", "c = Add", "d = Add", "e = Mul", "e"]
    assert widget.locator(".agl-edge").count() >= 6  # a reused input may draw a second edge
    step = widget.locator(".agl-step")
    expect(step).to_have_text(re.compile(r"step 0 / \d+"))
    last = int(step.text_content().split("/")[1])
    python_sees = page.get_by_text(re.compile(r"python sees step \d+"))
    expect(python_sees).to_have_text("python sees step 0")

    # step with the buttons: the forward pass (4 steps), then backward starts at Mul
    forward = widget.get_by_role("button", name="Step forward")
    for k in range(1, 5):
        forward.click()
        expect(step).to_contain_text(f"step {k} / {last}")
    expect(widget.locator(".agl-caption")).to_contain_text("MulBackward0")
    assert _grad_text(widget, "n1") == ""  # no gradient has reached b yet
    # the widget's state reached Python, and the cell that reads it ran again
    expect(python_sees).to_have_text("python sees step 4")

    # on to the end of backward: b's gradient is 8 (through d) + 7 (through c)
    widget.get_by_role("button", name="Jump to the last step").click()
    expect(step).to_contain_text(f"step {last} / {last}")
    assert _grad_text(widget, "n1") == "grad 15."
    assert _grad_text(widget, "n0") == "grad 7."
    expect(python_sees).to_have_text(f"python sees step {last}")
    # and back one step with the button
    widget.get_by_role("button", name="Step back").click()
    expect(step).to_contain_text(f"step {last - 1} / {last}")

    # everything the page loaded came from marimo's own server: no CDN, no font service
    outside = sorted(
        {
            url.split("?")[0]
            for url in page.requests
            if not url.startswith((app["url"] + "/", "data:", "blob:"))
        }
    )
    assert not outside, f"the page fetched from outside the local server: {outside}"
    assert not page.errors, page.errors

    ARTIFACTS.mkdir(exist_ok=True)
    widget.screenshot(path=str(ARTIFACTS / "graph_widget_marimo.png"))
    page.screenshot(path=str(ARTIFACTS / "graph_widget_marimo_page.png"))
