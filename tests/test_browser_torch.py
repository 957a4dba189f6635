"""A real PyTorch graph in the widget, in JupyterLab and chromium (viz/from_torch.py).

The same server and browser as tests/test_browser.py (its fixtures, imported); this notebook is
added through JupyterLab's contents API. What a learner sees, checked end to end: PyTorch's graph
of the README example drawn with our names, stepped through PyTorch's own backward pass until b's
gradient is 15; a graph whose backward ran unwatched, drawn with its note; and the side-by-side
picture. Screenshots: test-artifacts/torch_graph_widget.png, test-artifacts/side_by_side.png (the
side-by-side SVG, also saved as side_by_side.svg, opened from disk).
"""

import pytest
from test_browser import (  # noqa: F401 - lab and page: fixtures used below
    ARTIFACTS,
    _on_failure,
    _open_and_run_all,
    lab,
    page,
    upload_notebook,
)

pytest.importorskip("torch", reason="PyTorch (the test oracle) is not installed")

pytestmark = [pytest.mark.browser, pytest.mark.oracle, pytest.mark.timeout(240)]

CELLS = [
    "import torch\n"
    "import autograd_lab as ag\n"
    "from autograd_lab.viz import GraphWidget, record_torch, side_by_side",
    "with record_torch() as r:\n"
    "    a = torch.tensor(2.0, requires_grad=True)\n"
    "    b = torch.tensor(6.0, requires_grad=True)\n"
    "    c = a + b\n"
    "    d = b + 1\n"
    "    e = c * d\n"
    "    e.backward()\n"
    "GraphWidget(r)",
    "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    "y = (x * x).tanh()\n"
    "loss = y.sum()\n"
    "loss.backward()\n"
    "ag.show(loss)",
    "def model(torch):\n"
    "    torch.manual_seed(0)\n"
    "    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))\n"
    "    loss = torch.nn.functional.mse_loss(net(torch.randn(5, 3)), torch.randn(5, 1))\n"
    "    return loss\n"
    "side_by_side(model)",
]


# JupyterLab only, as the docstring says (it always opened /lab/tree/..., also on the Notebook 7
# server)
@pytest.mark.parametrize("lab", ["jupyterlab"], indirect=True)
def test_torch_graph_steps_in_the_widget(lab, page):  # noqa: F811 - pytest's fixtures
    _on_failure(lab, page, _drive, "torch_graph_failure")


def _drive(server, browser_page):
    from playwright.sync_api import expect

    upload_notebook(server, "torch.ipynb", CELLS)
    _open_and_run_all(server, browser_page, "torch.ipynb", widgets=2)
    # the side-by-side picture: JupyterLab prefers its text/html, an <img> of the SVG
    picture_img = browser_page.locator('.jp-RenderedHTMLCommon img[src^="data:image/svg+xml"]')
    expect(picture_img).to_have_count(1)

    # PyTorch's graph, labelled with the cell's variable names, drawn as ours is
    widget = browser_page.locator(".agl-widget").first
    expect(widget.locator(".agl-node")).to_have_count(6)
    labels = widget.locator(".agl-node .agl-label").all_text_contents()
    assert labels == ["a", "b", "c = Add", "d = Add", "e = Mul", "e"]
    expect(widget.locator(".agl-note")).to_have_text("PyTorch graph")

    # step through PyTorch's backward pass: 3 forward steps, then the engine's 12 events
    step = widget.locator(".agl-step")
    widget.locator(".agl-slider").fill("3")
    expect(step).to_have_text("step 3 / 15")
    grads = []
    forward = widget.get_by_role("button", name="Step forward")
    for k in range(4, 16):
        forward.click()
        expect(step).to_have_text(f"step {k} / 15")
        grads.append(widget.locator('.agl-node[data-id="n1"] .agl-grad').text_content())
    assert grads[-1] == "grad 15." and "grad 8." in grads, grads
    widget.locator('.agl-node[data-id="n4"]').click()  # e = Mul: what it saved for backward
    inspector = widget.locator(".agl-inspector")
    expect(inspector).to_contain_text("MulBackward0")
    expect(inspector).to_contain_text("self scalar, other scalar")
    ARTIFACTS.mkdir(exist_ok=True)
    widget.screenshot(path=str(ARTIFACTS / "torch_graph_widget.png"))

    # backward ran before anyone watched: drawn all the same, with a note saying what is missing
    unwatched = browser_page.locator(".agl-widget").nth(1)
    expect(unwatched.locator(".agl-note")).to_contain_text("backward ran unwatched")
    expect(unwatched.locator(".agl-node")).to_have_count(5)

    picture = picture_img.first
    picture.scroll_into_view_if_needed()
    box = picture.bounding_box()
    # both graphs, one under the other in the column, and the list of differences
    assert 400 < box["width"] <= 880 and box["height"] > 500
    assert browser_page.errors == []

    # the same picture made here, opened from disk on its own: the whole of it, for the record
    from autograd_lab.viz import side_by_side

    namespace = {}
    exec(CELLS[-1].rsplit("\n", 1)[0], namespace)  # defines model(torch)
    path = ARTIFACTS / "side_by_side.svg"
    path.write_text(side_by_side(namespace["model"]).to_svg())
    page_file = ARTIFACTS / "side_by_side.html"  # a page holding it (chromium's screenshots of
    page_file.write_text(f'<body style="margin:0">{path.read_text()}</body>')  # bare SVG hang)
    alone = browser_page.context.new_page()
    alone.goto(page_file.as_uri())
    expect(alone.locator("text", has_text="T: only in PyTorch")).to_have_count(2)
    alone.locator("svg").first.screenshot(path=str(ARTIFACTS / "side_by_side.png"))
