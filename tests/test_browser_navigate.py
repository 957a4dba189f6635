"""Finding your way in a big graph, in JupyterLab and chromium: the search box and "×N" boxes.

The same server and browser as tests/test_browser.py (its fixtures, imported; JupyterLab only).
A model of 12 identical residual blocks opens with the blocks folded into one box, "×12" (viz/
repeats.py). Typing "tanh" in the search box lights the box (all 12 Tanh ops are inside it) and
dims the rest, and the notebook's own shortcuts do not act on the letters typed; Enter selects the
first Tanh, which opens the repeat; Enter again moves to the second; "fold ×12" folds the blocks
back, and a click on the box opens them again. Screenshots: test-artifacts/navigate_folded.png,
navigate_search.png, navigate_found.png, navigate_opened.png.
"""

import re

import pytest
from test_browser import (  # noqa: F401 - lab and page: fixtures used below
    ARTIFACTS,
    _on_failure,
    _open_and_run_all,
    lab,
    page,
    upload_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

CELLS = [
    "import autograd_lab as ag\n"
    "from autograd_lab import nn\n"
    "from autograd_lab.viz import record\n"
    "from autograd_lab.viz.widget import GraphWidget",
    "class Block(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(4, 4)\n"
    "        self.act = nn.Tanh()\n"
    "\n"
    "    def forward(self, x):\n"
    "        return x + self.act(self.fc(x))\n"
    "\n"
    "ag.manual_seed(0)\n"
    "model = nn.Sequential(*[Block() for _ in range(12)], nn.Linear(4, 1))\n"
    "with record() as r:\n"
    "    x = ag.randn(2, 4)\n"
    "    loss = model(x).sum()\n"
    "    loss.backward()\n"
    "w = GraphWidget(r, folded=True)\n"
    "w",
    'print("folded:", w.folded, "selected:", w.selected)',
]
FOLDED = "Sequential/0 (Block) … 11 (Block) ×12"


@pytest.mark.parametrize("lab", ["jupyterlab"], indirect=True)
def test_search_and_repeated_blocks(lab, page):  # noqa: F811 - pytest's fixtures
    _on_failure(lab, page, _drive, "navigate_failure")


def _drive(server, browser_page):
    from playwright.sync_api import expect

    upload_notebook(server, "navigate.ipynb", CELLS)
    _open_and_run_all(server, browser_page, "navigate.ipynb", widgets=1)
    ARTIFACTS.mkdir(exist_ok=True)
    widget = browser_page.locator(".agl-widget")

    # 12 identical blocks drawn once: one box named "×12", a stack of cards; the head stays out
    repeat = widget.locator(f'.agl-repeat[data-id="scope:{FOLDED}"]')
    expect(repeat).to_have_count(1)
    expect(repeat.locator(".agl-label")).to_have_text(FOLDED)
    expect(repeat.locator(".agl-repeat-card")).to_have_count(2)
    expect(repeat.locator("title")).to_contain_text("12 identical blocks (3 nodes each)")
    expect(widget.locator(".agl-node")).to_have_count(5)  # the head: 2 weights, Addmm; Sum; loss
    expect(widget.locator(".agl-legend")).to_contain_text("×N: a block repeated N times")
    expect(widget.locator(".agl-legend")).not_to_contain_text("collapsed scope")  # none here
    widget.screenshot(path=str(ARTIFACTS / "navigate_folded.png"))

    # search: the 12 Tanh ops are inside the box, so the box lights up and everything else dims
    cells = browser_page.locator(".jp-NotebookPanel .jp-Cell").count()
    box = widget.locator(".agl-search")
    box.click()
    box.press_sequentially("tanh")  # 'a' and 'h' are notebook shortcuts in command mode
    expect(widget.locator(".agl-search-count")).to_have_text("12 matches")
    expect(repeat).to_have_class(re.compile(r"\bagl-match\b"))
    expect(widget.locator(".agl-node.agl-dim")).to_have_count(5)
    expect(widget.locator(".agl-node.agl-match")).to_have_count(0)
    assert browser_page.locator(".jp-NotebookPanel .jp-Cell").count() == cells  # no cell added
    widget.screenshot(path=str(ARTIFACTS / "navigate_search.png"))

    # Enter: the first match is selected, and Python opens the repeat around it
    box.press("Enter")
    first = widget.locator('.agl-node[data-id="n3"]')  # block 0's Tanh
    expect(first).to_have_class(re.compile(r"\bagl-selected\b"))
    expect(widget.locator(".agl-repeat")).to_have_count(0)
    expect(widget.locator(".agl-node.agl-match")).to_have_count(12)
    expect(first).to_have_class(re.compile(r"\bagl-match\b"))
    expect(widget.locator(".agl-search-count")).to_have_text("1 of 12")
    expect(widget.locator(".agl-inspector")).to_contain_text("TanhBackward0")
    expect(widget.locator(".agl-inspector")).to_contain_text("Sequential/0 (Block)/act (Tanh)")
    box.press("Enter")  # the next one: block 1's Tanh
    expect(widget.locator('.agl-node[data-id="n8"]')).to_have_class(re.compile(r"\bagl-selected\b"))
    expect(widget.locator(".agl-search-count")).to_have_text("2 of 12")
    box.press("Shift+Enter")  # and back
    expect(first).to_have_class(re.compile(r"\bagl-selected\b"))
    widget.screenshot(path=str(ARTIFACTS / "navigate_found.png"))

    # Python saw it: the repeat is open, the Tanh selected
    browser_page.locator(".jp-NotebookPanel .jp-Cell").nth(2).click()
    browser_page.keyboard.press("Shift+Enter")
    printed = browser_page.locator(".jp-NotebookPanel .jp-Cell").nth(2).locator(".jp-OutputArea")
    expect(printed).to_contain_text("folded: [] selected: n3")

    # Esc in the search box clears it; "fold ×12" folds the blocks back; a click opens them
    box.press("Escape")
    expect(widget.locator(".agl-node.agl-dim")).to_have_count(0)
    fold = widget.locator(".agl-fold")
    expect(fold).to_have_text(re.compile(r"^fold ×12"))
    fold.click()
    expect(repeat).to_have_count(1)
    repeat.click()
    expect(widget.locator(".agl-repeat")).to_have_count(0)
    expect(widget.locator(".agl-node")).to_have_count(5 + 12 * 5)
    widget.screenshot(path=str(ARTIFACTS / "navigate_opened.png"))
    assert browser_page.errors == []
