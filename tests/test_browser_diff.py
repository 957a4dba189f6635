"""A diff of two graphs and the graph of a failed cell, in JupyterLab (and Notebook 7) and chromium.

The same server and browser as tests/test_browser.py (its fixtures, imported); the notebook is
added through the contents API. Checked as a learner sees them: the DiffWidget's two graphs with
their marks (3 added nodes framed green, the changed ones magenta), stepping one side moves the
other to the partner node's step; then a `%%autograd` cell that fails with a shape error draws
the graph up to the error with the failing op framed red, its tooltip saying why, and the error
below it. Screenshots: test-artifacts/<client>_diff_widget.png, <client>_failed_cell.png, and the
static pictures opened from disk: diff.png (diff.svg), failed_cell.png (failed_cell.svg).
"""

import re

import pytest
from test_browser import (  # noqa: F401
    ARTIFACTS,
    _no_errors_of_ours,
    _on_failure,
    _open_and_run_all,
    lab,
    page,
    upload_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

RUNS = (
    "import autograd_lab as torch\n"
    "from autograd_lab.viz import diff\n"
    "def newton_sqrt(a, tol):\n"
    "    y = a\n"
    "    while (y * y - a).abs() > tol:\n"
    "        y = (y + a / y) / 2\n"
    "    return y\n"
    "runs = []\n"
    "for value in (2.0, 9.0):\n"
    "    with torch.record() as recording:\n"
    "        a = torch.tensor(value, requires_grad=True)\n"
    "        root = newton_sqrt(a, tol=1e-3)\n"
    "        root.backward()\n"
    '    runs.append(recording.graph(root, names={"a": a, "root": root}))\n'
    'two_runs = diff(*runs, sides=("a = 2", "a = 9"))'
)
FAILING = (
    "%%autograd\n"
    "x = torch.ones(4, 3)\n"
    "w1 = torch.ones(3, 4, requires_grad=True)\n"
    "w2 = torch.ones(3, 2, requires_grad=True)\n"
    "h = (x @ w1).tanh()\n"
    "y = h @ w2"
)
CELLS = ["%load_ext autograd_lab\n" + RUNS, "two_runs.widget()", FAILING]


def _expected():
    """The same diff made here: what the page must show."""
    namespace = {}
    exec(RUNS, namespace)
    return namespace["two_runs"]


def test_a_diff_and_a_failed_cell_in_the_browser(lab, page):  # noqa: F811 - pytest's fixtures
    _on_failure(lab, page, _drive)


def _drive(server, browser_page):
    from playwright.sync_api import expect

    expect.set_options(timeout=45_000)
    upload_notebook(server, "diff.ipynb", CELLS)
    # open, wait for the kernel, Run All (tried again if the kernel missed it): 3 widgets, the
    # diff's two and the failed cell's
    _open_and_run_all(server, browser_page, "diff.ipynb", 3)
    d = _expected()

    # the diff: both graphs, marked as the Python side says
    left, right = (
        browser_page.locator(".agl-widget").nth(0),
        browser_page.locator(".agl-widget").nth(1),
    )
    expect(right.locator(".agl-mark-added")).to_have_count(len(d.added))
    expect(left.locator(".agl-mark-removed")).to_have_count(len(d.removed))
    expect(left.locator(".agl-mark-changed")).to_have_count(len(d.changed))
    expect(right.locator(".agl-mark-changed")).to_have_count(len(d.changed))
    expect(right.locator(".agl-legend")).to_contain_text("+ added: only in this graph")
    expect(left.locator(".agl-legend")).not_to_contain_text("added")  # run 1 has nothing added
    added = right.locator(".agl-mark-added").first.get_attribute("data-id")
    right.locator(f'.agl-node[data-id="{added}"]').hover()
    expect(right.locator(".agl-tooltip")).to_contain_text("added: added: only in a = 9")
    # stepping the left graph to its last forward step moves the right one to its own
    n_left = len([n for n in d.left.nodes if n["kind"] == "op"])
    n_right = len([n for n in d.right.nodes if n["kind"] == "op"])
    total_right = n_right + len(d.right.events)
    left.locator(".agl-slider").fill(str(n_left))
    expect(right.locator(".agl-step")).to_have_text(f"step {n_right} / {total_right}")
    ARTIFACTS.mkdir(exist_ok=True)
    browser_page.locator(".agl-diff").screenshot(
        path=str(ARTIFACTS / f"{server['client']}_diff_widget.png")
    )

    # the failed cell: the graph up to the error, the op that failed framed, then the error
    failed = browser_page.locator(".agl-widget").nth(2)
    expect(failed.locator(".agl-mark-failed")).to_have_count(1)
    expect(failed.locator(".agl-legend")).to_contain_text("\u2717 the op the cell failed in")
    failed_id = failed.locator(".agl-mark-failed").get_attribute("data-id")
    expect(failed.locator(f'.agl-node[data-id="{failed_id}"] .agl-label')).to_have_text("matmul()")
    expect(failed.locator(".agl-note")).to_contain_text(
        "The cell failed in forward, calling matmul()"
    )
    # it opens on its last step, the failed op's: what ran has its values, the op says it failed
    expect(failed.locator(".agl-step")).to_have_text("step 3 / 3")
    expect(failed.locator(".agl-caption")).to_contain_text(
        "matmul() failed in forward: RuntimeError"
    )
    expect(failed.locator(f'.agl-node[data-id="{failed_id}"] .agl-value')).to_have_text(
        "\u2717 failed"
    )
    expect(failed.locator(".agl-node .agl-value", has_text="[4, 4] mean 0.9951")).to_have_count(2)
    failed.locator(f'.agl-node[data-id="{failed_id}"]').hover()
    expect(failed.locator(".agl-tooltip")).to_contain_text("failed here")
    error = browser_page.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
    )
    expect(error.last).to_contain_text(re.compile(r"shapes cannot be multiplied \(4x4 and 3x2\)"))
    expect(error.last).not_to_contain_text("run_cell_magic")
    cell = browser_page.locator(".jp-NotebookPanel .jp-Cell").nth(2)
    cell.scroll_into_view_if_needed()
    cell.screenshot(path=str(ARTIFACTS / f"{server['client']}_failed_cell.png"))
    _no_errors_of_ours(browser_page)

    # the static pictures, made here and opened from disk: the whole of them, for the record
    _from_disk(browser_page, "diff", d.to_svg(), "+ Div: only in a = 9")
    _from_disk(
        browser_page,
        "failed_cell",
        _failed_cell_svg(),
        "The cell failed in forward, calling matmul()",
    )


def _failed_cell_svg():
    import autograd_lab as ag
    from autograd_lab.viz import record, to_svg
    from autograd_lab.viz.failed import failed_graph

    with record() as recording:
        x, w1, w2 = (
            ag.ones(4, 3),
            ag.ones(3, 4, requires_grad=True),
            ag.ones(3, 2, requires_grad=True),
        )
        h = (x @ w1).tanh()
        try:
            h @ w2
        except RuntimeError as error:
            graph = failed_graph(error, recording, {"x": x, "w1": w1, "w2": w2, "h": h})
    return to_svg(graph)


def _from_disk(browser_page, name, svg, text):
    from playwright.sync_api import expect

    (ARTIFACTS / f"{name}.svg").write_text(svg)
    holder = ARTIFACTS / f"{name}.html"  # chromium's screenshots of a bare SVG file hang
    holder.write_text(f'<body style="margin:0">{svg}</body>')
    alone = browser_page.context.new_page()
    alone.goto(holder.as_uri())
    expect(alone.locator("text", has_text=text).first).to_be_attached()
    alone.locator("svg").first.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    alone.close()
