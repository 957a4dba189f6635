"""Watching training run: a progress bar, and a figure that redraws itself while the model learns.

    from autograd_lab.viz import LiveTraining, progress

    live = LiveTraining(X, y, model, every=50)      # loss curve + decision boundary
    bar = progress(range(500), desc="train")
    for step in bar:
        loss = ...; loss.backward(); ...
        bar.set(loss=loss)                          # shown after the bar
        live.update(step, loss)
    live.close()                                    # one final figure stays in the notebook

Silence every bar with `progress(..., disable=True)`, `set_progress(False)` (this process), or the
environment variable AUTOGRAD_LAB_PROGRESS=0; the argument wins over set_progress(), which wins
over the variable. A silenced bar prints nothing at all, not even its summary line.

Why it looks the way it does: notebooks are tested with nbval, which reruns them and compares the
outputs with the saved ones. Running a notebook under `pytest --nbval` twice (see
tests/fixtures/live_progress.ipynb and tests/test_live.py) shows what nbval compares:
- stream text, stdout and stderr each merged into one text with \\r and \\b applied;
- the *first* display_data of each display, MIME type by MIME type, except image/png;
- not update_display_data (a display redrawn in place by its display_id), not clear_output.
A notebook saved by Jupyter (or nbclient) keeps the *last* version of each display, and raw stream
text: \\r-rewritten lines with timings would stay in the file. Hence:
- progress() draws its live line (elapsed time, rate, ETA) in a display that starts empty, is
  redrawn in place, and is emptied when the loop ends: empty first, empty last, nothing to differ.
  Then it prints one summary line without timings to stdout, e.g.
  `train: 100% [####################] 500/500 loss=0.0213`, which nbval compares. In a terminal
  the live line is rewritten with \\r on stderr and replaced by the same summary.
- LiveTraining keeps one display whose PNG is replaced in place while its text/plain never
  changes, so the first and the last version agree; the saved PNG is the final figure.
Redraws are rate-limited (`every` seconds for the bar, every `every` steps for the figure), and a
step that does not redraw costs a counter and a clock read.
"""

import base64
import html
import io
import numbers
import os
import sys
import time

from .plots import _scalar, decision_boundary, loss_curve

_enabled = None  # set by set_progress(); None: ask the environment variable


def set_progress(enabled):
    """Turn every progress bar on or off in this process (None: back to AUTOGRAD_LAB_PROGRESS)."""
    global _enabled
    if enabled is not None and not isinstance(enabled, bool):
        raise ValueError(f"set_progress() takes True, False or None; got {enabled!r}")
    _enabled = enabled


def _progress_on(disable):
    if disable is not None:
        return not disable
    if _enabled is not None:
        return _enabled
    return os.environ.get("AUTOGRAD_LAB_PROGRESS", "1").strip().lower() not in {"0", "false", "off"}


def _in_notebook():
    """True inside a Jupyter kernel (where displays can be updated), False in a terminal."""
    ipython = sys.modules.get("IPython")  # a kernel has imported it; a script need not import it
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def _display(bundle):
    """Show a MIME bundle in the notebook; the handle redraws it in place (handle.update)."""
    from IPython.display import display

    return display(bundle, raw=True, display_id=True)


def progress(iterable, total=None, desc=None, every=None, disable=None):
    """Wrap an iterable to show a progress bar while a loop runs over it.

        bar = progress(range(500), desc="train")
        for step in bar:
            ...
            bar.set(loss=loss)            # the latest values, shown after the bar

    `total`: the number of items (default len(iterable), when it has one). `every`: the least
    number of seconds between redraws (default 0.1 in a terminal, 0.25 in a notebook).
    `disable=True` silences it. When the loop ends (or breaks) a summary line without timings
    stays: `train: 100% [####################] 500/500 loss=0.0213`.
    """
    return Progress(iterable, total, desc, every, disable)


class Progress:
    """The bar progress() returns: iterate over it; `set(**values)` adds values after the bar."""

    def __init__(self, iterable, total=None, desc=None, every=None, disable=None):
        if total is None and hasattr(iterable, "__len__"):
            total = len(iterable)
        if total is not None and (not isinstance(total, numbers.Integral) or total < 0):
            raise ValueError(f"total must be a number of items >= 0, or None; got {total!r}")
        if every is not None and (not isinstance(every, numbers.Real) or every < 0):
            raise ValueError(
                f"every is the least number of seconds between redraws: pass a number >= 0 such "
                f"as every=0.5 (or None for the default); got every={every!r}"
            )
        self.iterable, self.total, self.desc = iterable, total, desc
        self.silent = not _progress_on(disable)
        self.notebook = not self.silent and _in_notebook()
        self.every = every if every is not None else (0.25 if self.notebook else 0.1)
        self.n = 0
        self.postfix = {}
        self._handle = None
        self._start = self._next_draw = None
        self._width = 0  # the longest line written so far (terminal): shorter ones pad to it
        self._closed = False

    def set(self, **values):
        """Show `name=value` after the bar (tensors and floats with 4 significant digits)."""
        self.postfix.update(values)

    set_postfix = set  # tqdm's name for it

    def __iter__(self):
        if self.silent:
            return iter(self.iterable)  # nothing between the loop and the data: no cost at all
        return self._run()

    def _run(self):
        self._begin()
        try:
            for item in self.iterable:
                yield item
                self.n += 1
                now = time.perf_counter()
                if now >= self._next_draw:
                    self._draw(now)
        finally:  # also when the loop breaks or raises: the summary says how far it got
            self.close()

    def _begin(self):
        self.n, self._closed = 0, False  # (a second loop over the same bar starts again)
        self._start = time.perf_counter()
        if self.notebook:
            self._handle = _display({})  # starts empty, as it will end (see the module docstring)
        self._draw(self._start)

    def _draw(self, now):
        line = self.line(now - self._start)
        if self.notebook:
            html_line = self._html(self.line(now - self._start, bar=False))
            self._handle.update({"text/plain": line, "text/html": html_line}, raw=True)
        else:
            self._width = max(self._width, len(line))
            sys.stderr.write("\r" + line.ljust(self._width))
            sys.stderr.flush()
        self._next_draw = now + self.every

    def line(self, elapsed=None, bar=True):
        """The text of the bar; with `elapsed` seconds, also the time, ETA and rate."""
        parts = [f"{self.desc}:"] if self.desc else []
        if self.total:
            done = min(self.n / self.total, 1.0)
            filled = int(20 * done)
            drawn = f" [{'#' * filled}{'-' * (20 - filled)}]" if bar else ""
            parts.append(f"{int(100 * done):3d}%{drawn}")
            parts.append(f"{self.n}/{self.total}")
        else:
            parts.append(f"{self.n} it")
        if elapsed is not None:
            parts.append(self._timing(elapsed))
        if self.postfix:
            parts.append(", ".join(f"{k}={_format(v)}" for k, v in self.postfix.items()))
        return " ".join(parts)

    def _timing(self, elapsed):
        rate = self.n / elapsed if elapsed > 0 else 0.0
        if self.total and rate > 0:
            clock = f"{_clock(elapsed)}<{_clock((self.total - self.n) / rate)}"
        else:
            clock = _clock(elapsed)
        if rate == 0:
            speed = "? it/s"  # nothing done yet
        else:
            speed = f"{rate:.1f} it/s" if rate >= 1 else f"{1 / rate:.2f} s/it"
        return f"[{clock}, {speed}]"

    def _html(self, text):
        """An HTML <progress> bar (no value: an indeterminate one) followed by the text."""
        value = f' value="{self.n}" max="{self.total}"' if self.total else ""
        return (
            f'<div style="font-family: monospace"><progress{value} style="width: 16em; '
            f'vertical-align: middle"></progress> {html.escape(text)}</div>'
        )

    def close(self):
        """End the bar: the live line goes, the summary line stays. The loop's end calls it."""
        if self._closed or self.silent or self._start is None:
            return
        self._closed = True
        summary = self.line()
        if self.notebook:
            self._handle.update({}, raw=True)
            print(summary)
        else:
            sys.stderr.write("\r" + summary.ljust(self._width) + "\n")
            sys.stderr.flush()


def _format(value):
    if hasattr(value, "item"):  # a one-element tensor or a numpy number
        value = value.item()
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _clock(seconds):
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"


# ---- the live figure -----------------------------------------------------------------------------


class LiveTraining:
    """A figure of a training run, redrawn in place in a notebook every `every` steps.

        live = LiveTraining(X, y, model, every=50)
        for step in range(500):
            ...
            live.update(step, loss, accuracy=acc)   # accuracy is optional
        live.close()                                # the final figure; live.figure is it

    Panels: the loss curve, the accuracy (once one is given) and, with a `model`, the decision
    boundary of a 2-D classifier: `model` is called on a grid of points (see
    viz.plots.decision_boundary; `resolution` points per axis). In a terminal or a test nothing is
    drawn until close(), which leaves the final matplotlib Figure in `live.figure` (save it with
    live.figure.savefig("run.png")). It never makes a pyplot figure, so the notebook's inline
    backend does not draw it a second time.
    """

    # The same text at every redraw: nbval compares the first with the saved last (module docs).
    TEXT = "<LiveTraining figure: loss curve and decision boundary>"

    def __init__(self, X=None, y=None, model=None, every=50, resolution=100, smoothing=None):
        if model is not None and (X is None or y is None):
            raise ValueError(
                "LiveTraining draws the model's decision boundary over the data: pass the points "
                "and labels too, LiveTraining(X, y, model), or model=None for the loss alone"
            )
        if model is not None and (len(X.shape) != 2 or X.shape[1] != 2):
            raise ValueError(
                f"the decision boundary is drawn for 2-D data: X must have shape (N, 2), one row "
                f"per point; got shape {list(X.shape)} (pass model=None to plot the loss alone)"
            )
        if isinstance(every, bool) or not isinstance(every, numbers.Integral) or every < 1:
            raise ValueError(
                f"every is the number of steps between redraws: pass an integer >= 1 such as "
                f"every=50; got every={every!r}"
            )
        self.X, self.y, self.model = X, y, model
        self.every, self.resolution, self.smoothing = int(every), resolution, smoothing
        self.steps, self.losses = [], []
        self.accuracy_steps, self.accuracies = [], []
        self.figure = None
        self._handle = None
        self._drawn_at = None  # the step of the last redraw
        self._notebook = _in_notebook()

    def update(self, step, loss, accuracy=None):
        """Record the loss (and accuracy) at `step`; redraw if `every` steps have passed."""
        self.steps.append(int(step))
        self.losses.append(_scalar(loss))
        if accuracy is not None:
            self.accuracy_steps.append(int(step))
            self.accuracies.append(_scalar(accuracy))
        if self._notebook and (self._drawn_at is None or step - self._drawn_at >= self.every):
            self._drawn_at = step
            self._show()

    def close(self):
        """Draw the final figure (and leave it in the notebook, in place of the live one)."""
        self._render()
        if self._notebook:
            self._show(render=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _show(self, render=True):
        if render:
            self._render()
        buffer = io.BytesIO()
        # No "Software" metadata: the PNG bytes depend on the pixels only.
        self.figure.savefig(buffer, format="png", dpi=80, metadata={"Software": None})
        bundle = {
            "image/png": base64.b64encode(buffer.getvalue()).decode(),
            "text/plain": self.TEXT,
        }
        if self._handle is None:
            self._handle = _display(bundle)
        else:
            self._handle.update(bundle, raw=True)

    def _render(self):
        from matplotlib.figure import Figure  # not pyplot: no figure manager, no double drawing

        panels = 1 + bool(self.accuracies) + (self.model is not None)
        if self.figure is None:
            self.figure = Figure(layout="constrained", facecolor="white")
        self.figure.clear()
        self.figure.set_size_inches(4.5 * panels, 4)
        axes = list(self.figure.subplots(1, panels, squeeze=False)[0])
        loss_axes = axes.pop(0)
        if self.losses:
            loss_curve(self.losses, ax=loss_axes, smoothing=self.smoothing, steps=self.steps)
        else:  # nothing recorded yet: the empty axes loss_curve would label
            loss_axes.set(xlabel="step", ylabel="loss", title="Training loss")
        if self.accuracies:
            accuracy_axes = axes.pop(0)
            accuracy_axes.plot(self.accuracy_steps, self.accuracies, color="#2ca02c")
            accuracy_axes.set(xlabel="step", ylabel="accuracy", title="Accuracy")
        if self.model is not None:
            boundary = decision_boundary(
                self.model, self.X, self.y, ax=axes.pop(0), resolution=self.resolution
            )
            if self.steps:
                boundary.set_title(f"Decision boundary (step {self.steps[-1]})")
