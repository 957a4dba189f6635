"""viz.live: progress bars (terminal, notebook, silenced) and the live training figure.

The notebook paths are tested twice: here with a stand-in for IPython's display (what is sent,
in which order), and for real in tests/fixtures/live_progress.ipynb, run under `pytest --nbval`.
"""

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.data import make_blobs
from autograd_lab.viz import LiveTraining, live, progress, set_progress

matplotlib = pytest.importorskip("matplotlib", reason="matplotlib (the lab extra) is not installed")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.contour import ContourSet  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "live_progress.ipynb"
TIMING = re.compile(r"it/s|s/it|\d\d:\d\d")  # what must never reach a saved output


@pytest.fixture(autouse=True)
def _default_state(monkeypatch):
    """Bars on (whatever the environment says), no figures left behind."""
    monkeypatch.delenv("AUTOGRAD_LAB_PROGRESS", raising=False)
    set_progress(None)
    yield
    set_progress(None)
    plt.close("all")


class FakeHandle:
    """Stands in for IPython's DisplayHandle: remembers every bundle shown, in order."""

    def __init__(self, bundle):
        self.bundles = [bundle]

    def update(self, bundle, raw=False):
        assert raw
        self.bundles.append(bundle)


@pytest.fixture
def notebook(monkeypatch):
    """Pretend to run in a Jupyter kernel; returns the list of displays made."""
    handles = []

    def display(bundle):
        handles.append(FakeHandle(bundle))
        return handles[-1]

    monkeypatch.setattr(live, "_in_notebook", lambda: True)
    monkeypatch.setattr(live, "_display", display)
    return handles


def final_line(stderr):
    """What a terminal shows at the end: the text after the last carriage return."""
    assert stderr.endswith("\n")
    return stderr[:-1].rsplit("\r", 1)[-1].rstrip()


# ---- progress in a terminal ----------------------------------------------------------------------


def test_terminal_bar_rewrites_one_line_and_ends_with_a_summary_without_timings(capsys):
    bar = progress(range(5), desc="train", every=0)
    seen = []
    for step in bar:
        seen.append(step)
        bar.set(loss=ag.tensor(1.0 / (step + 1)))
    assert seen == [0, 1, 2, 3, 4]  # the items pass through unchanged
    out, err = capsys.readouterr()
    assert out == ""  # progress goes to stderr in a terminal, as tqdm's does
    assert err.count("\r") == 7  # the start, five steps, and the summary over them
    assert "it/s" in err  # live lines show the rate...
    assert final_line(err) == "train: 100% [####################] 5/5 loss=0.2"  # ...not the end


def test_a_loop_that_stops_early_or_has_no_length_still_gets_its_summary(capsys):
    for i in progress(iter(range(100)), desc="search"):
        if i == 3:
            break
    assert final_line(capsys.readouterr().err) == "search: 3 it"
    with pytest.raises(KeyError):
        for i in progress(range(10), total=8):
            if i == 5:
                raise KeyError(i)
    assert final_line(capsys.readouterr().err) == " 62% [############--------] 5/8"


def test_a_second_loop_over_the_same_bar_counts_again(capsys):
    bar = progress(range(2))
    list(bar)
    list(bar)
    err = capsys.readouterr().err
    assert len(re.findall(r"\] 2/2 *\n", err)) == 2 and "4/2" not in err


def test_redraws_are_rate_limited(capsys):
    for _ in progress(range(1000), every=3600):  # an hour between redraws: only start and end
        pass
    err = capsys.readouterr().err
    assert err.count("\r") == 2 and final_line(err).endswith("1000/1000")


def test_postfix_values_are_short():
    bar = progress([], desc="x")
    bar.set(loss=ag.tensor(0.123456), acc=np.float64(0.5), epoch=3)
    bar.set_postfix(lr=0.001)
    assert bar.line() == "x: 0 it loss=0.1235, acc=0.5, epoch=3, lr=0.001"


# ---- silencing -----------------------------------------------------------------------------------


def test_disable_true_prints_nothing_and_costs_nothing(capsys):
    items = [1, 2, 3]
    bar = progress(items, disable=True)
    assert type(iter(bar)) is type(iter(items))  # the list's own iterator: no wrapper in the loop
    assert list(bar) == items
    assert capsys.readouterr() == ("", "")


def test_set_progress_silences_every_bar_and_an_argument_overrides_it(capsys):
    set_progress(False)
    list(progress(range(3)))
    assert capsys.readouterr().err == ""
    list(progress(range(3), disable=False))
    assert final_line(capsys.readouterr().err).endswith("3/3")
    with pytest.raises(ValueError, match="True, False or None"):
        set_progress("no")


@pytest.mark.parametrize("value, shown", [("0", False), ("off", False), ("1", True)])
def test_the_environment_variable_silences_bars(capsys, monkeypatch, value, shown):
    monkeypatch.setenv("AUTOGRAD_LAB_PROGRESS", value)
    list(progress(range(3)))
    assert bool(capsys.readouterr().err) is shown
    set_progress(True)  # set_progress() wins over the variable
    list(progress(range(3)))
    assert capsys.readouterr().err


@pytest.mark.parametrize(
    "kwargs, message",
    [(dict(every=-1), "every=-1"), (dict(every="fast"), "seconds"), (dict(total=-2), "total")],
)
def test_progress_refuses_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        progress(range(3), **kwargs)


# ---- progress in a notebook ----------------------------------------------------------------------


def test_notebook_bar_is_a_display_that_starts_and_ends_empty(notebook, capsys):
    bar = progress(range(4), desc="train", every=0)
    for step in bar:
        bar.set(loss=0.5)
    (handle,) = notebook
    first, *live_lines, last = handle.bundles
    assert first == {} and last == {}  # what nbval compares (first) and Jupyter saves (last)
    assert len(live_lines) == 5  # redrawn in place at the start and after each step
    html = live_lines[-1]["text/html"]
    assert '<progress value="4" max="4"' in html and "#" not in html  # the HTML bar, no ASCII one
    assert TIMING.search(live_lines[-1]["text/plain"]) and TIMING.search(html)
    out, err = capsys.readouterr()
    assert out == "train: 100% [####################] 4/4 loss=0.5\n" and err == ""


def test_notebook_bar_escapes_html(notebook):
    list(progress(range(1), desc="<b>", every=0))
    assert "&lt;b&gt;" in notebook[0].bundles[1]["text/html"]


# ---- the live figure -----------------------------------------------------------------------------


def linear_model():
    X, y = make_blobs(40, centers=[[-2.0, 0.0], [2.0, 0.0]], cluster_std=0.5, seed=0)
    w = ag.tensor([[-1.0, 1.0], [0.0, 0.0]])
    return X, y, lambda points: points @ w


def titles(figure):
    return [ax.get_title() for ax in figure.axes]


def test_headless_it_records_cheaply_and_draws_the_final_figure_on_close():
    X, y, model = linear_model()
    run = LiveTraining(X, y, model, every=2, resolution=20)
    for step in range(6):
        run.update(step * 10, ag.tensor(1.0 / (step + 1)), accuracy=step / 5)
    assert run.figure is None  # nobody sees intermediate figures here: none is drawn
    run.close()
    assert titles(run.figure) == ["Training loss", "Accuracy", "Decision boundary (step 50)"]
    loss_axes, accuracy_axes, boundary_axes = run.figure.axes
    np.testing.assert_array_equal(loss_axes.lines[0].get_xdata(), [0, 10, 20, 30, 40, 50])
    np.testing.assert_allclose(
        loss_axes.lines[0].get_ydata(), [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6]
    )
    np.testing.assert_allclose(accuracy_axes.lines[0].get_ydata(), [0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert any(isinstance(c, ContourSet) for c in boundary_axes.get_children())
    assert plt.get_fignums() == []  # not a pyplot figure: the inline backend will not draw it again


def test_panels_follow_what_was_given():
    X, y, model = linear_model()
    with LiveTraining(X, y, model, resolution=10) as run:
        run.update(0, 0.7)
    assert titles(run.figure) == ["Training loss", "Decision boundary (step 0)"]
    run = LiveTraining()  # no model: the loss alone, even before any step
    run.close()
    assert titles(run.figure) == ["Training loss"] and run.figure.axes[0].get_xlabel() == "step"


def test_in_a_notebook_it_redraws_one_display_in_place(notebook):
    X, y, model = linear_model()
    run = LiveTraining(X, y, model, every=5, resolution=10)
    for step in range(12):
        run.update(step, 1.0)
    (handle,) = notebook  # one display for the whole run...
    assert len(handle.bundles) == 3  # ...drawn at steps 0, 5 and 10
    run.close()
    assert len(handle.bundles) == 4  # the final figure replaces the live one
    for bundle in handle.bundles:
        assert bundle["text/plain"] == LiveTraining.TEXT  # first and last agree for nbval
        assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")
    assert titles(run.figure)[-1] == "Decision boundary (step 11)"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(every=0), "every=0"),
        (dict(model=lambda p: p), "pass the points"),
        (dict(X=ag.zeros(4, 3), y=ag.zeros(4), model=lambda p: p), "got shape [4, 3]"),
    ],
)
def test_live_training_refuses_bad_arguments(kwargs, message):
    with pytest.raises(ValueError) as error:
        LiveTraining(**kwargs)
    assert message in str(error.value)


def test_loss_curve_takes_the_step_numbers():
    from autograd_lab.viz import plots

    ax = plots.loss_curve([3.0, 2.0], steps=[0, 50])
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [0, 50])
    with pytest.raises(ValueError, match="steps has 1 numbers but losses has 2"):
        plots.loss_curve([3.0, 2.0], steps=[0])


# ---- under nbval, for real -----------------------------------------------------------------------


def test_the_fixture_notebook_saves_no_timings():
    notebook = json.loads(FIXTURE.read_text())
    saved = json.dumps([cell.get("outputs", []) for cell in notebook["cells"]])
    assert "count: 100% [####################] 30/30 loss=0.03333" in saved
    assert LiveTraining.TEXT in saved
    assert not TIMING.search(saved)


@pytest.mark.slow
def test_nbval_passes_the_fixture_twice_and_catches_a_changing_display(tmp_path):
    # Two copies of the fixture, run on fresh kernels, must both match the saved outputs. A control
    # notebook whose first display shows the time must fail: the comparison does look at displays.
    for name in ("first.ipynb", "second.ipynb"):
        (tmp_path / name).write_text(FIXTURE.read_text())
    control = json.loads(FIXTURE.read_text())
    control["cells"] = [control["cells"][1]]
    control["cells"][0]["source"] = (
        "import time\nfrom IPython.display import display\n"
        'handle = display({"text/plain": str(time.time())}, raw=True, display_id=True)\n'
        'handle.update({"text/plain": "done"}, raw=True)'
    )
    control["cells"][0]["outputs"] = [
        {"output_type": "display_data", "data": {"text/plain": "done"}, "metadata": {}}
    ]
    (tmp_path / "control.ipynb").write_text(json.dumps(control))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "--nbval",
         "-rA", "first.ipynb", "second.ipynb", "control.ipynb"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    report = result.stdout
    assert re.search(r"\b8 passed", report), report[-3000:]  # 4 code cells, twice
    assert "FAILED control.ipynb::Cell 0" in report and re.search(r"\b1 failed", report)
