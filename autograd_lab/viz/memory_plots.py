"""Matplotlib figures of memory: live bytes over the ops of forward and backward.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import record_memory
    >>> from autograd_lab.viz import memory_plots
    >>> x = ag.randn(256, 256, requires_grad=True)
    >>> with record_memory() as eager:
    ...     x.tanh().exp().sum().backward()
    >>> ax = memory_plots.memory_timeline({"eager": eager})
    >>> ax.get_ylabel()
    'live MB'

Two figures, both from `MemoryTimeline`s (compile/extras/memory.py) measured with tracemalloc:
`memory_timeline` draws any number of runs of the same program on one axis (eager vs planned, or
backward with saved tensors released vs retained with `retain_graph=True`); `plan_estimate` draws
what a `MemoryPlan` predicts, before anything runs. As in viz/plots.py, every function takes an
optional `ax` and returns the Axes it drew on; sizes and colours are fixed, so the same numbers
give the same picture.
"""

import numpy as np

from .plots import _new_axes

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]  # matplotlib's first tab10 colours
MB = 1e6


def memory_timeline(timelines, ax=None, title="Live memory, op by op", labels=False):
    """Live MB after each op (solid steps) and the most reached during it (dotted), per run.

    `timelines`: {name: MemoryTimeline} (or a list of (name, timeline) pairs). A dashed vertical
    line marks where backward starts in the first run. `labels=True` writes the first run's op
    names under the x axis (readable up to ~40 ops; other runs may run other ops).
    """
    items = list(timelines.items()) if hasattr(timelines, "items") else list(timelines)
    if not items:
        raise ValueError("memory_timeline needs at least one timeline, e.g. {'eager': timeline}")
    ax = _new_axes(ax, (8, 3.6))
    for k, (name, timeline) in enumerate(items):
        live = np.array([s.live for s in timeline.samples]) / MB
        peak = np.array([s.peak for s in timeline.samples]) / MB
        steps = np.arange(len(live))
        color = COLORS[k % len(COLORS)]
        ax.step(
            steps,
            live,
            where="mid",
            color=color,
            label=f"{name} (peak {timeline.peak / MB:.2f} MB)",
        )
        ax.plot(steps, peak, linestyle=":", color=color, linewidth=1)
    first = items[0][1].samples
    backward = next((i for i, s in enumerate(first) if s.phase == "backward"), None)
    if backward is not None:
        ax.axvline(backward - 0.5, color="0.5", linestyle="--", linewidth=1)
        ax.annotate(
            "backward →",
            (backward - 0.4, 0),
            xytext=(2, 4),
            textcoords="offset points",
            color="0.4",
            fontsize=8,
        )
    if labels:
        ax.set_xticks(range(len(first)))
        ax.set_xticklabels(
            [s.label.replace("Backward0", "") for s in first], rotation=90, fontsize=7
        )
    ax.set_xlabel("op (forward, then backward)")
    ax.set_ylabel("live MB")
    ax.set_title(title)
    ax.set_ylim(0, max(t.peak for _, t in items) / MB * 1.15 or 1)  # room for the legend
    ax.legend(loc="upper left", fontsize=8)
    return ax


def plan_estimate(plan, ax=None, title="Memory plan: predicted live bytes"):
    """What `plan` predicts per step: plain Python's lifetimes vs the plan's (freed at last use,
    gradients adopted as .grad). Steps are forward calls, then their backwards in reverse."""
    eager, planned = plan.live_bytes(eager=True) / MB, plan.live_bytes() / MB
    ax = _new_axes(ax, (8, 3.6))
    steps = np.arange(len(eager))
    ax.step(
        steps,
        eager,
        where="mid",
        color=COLORS[0],
        label=f"eager estimate (peak {eager.max(initial=0):.2f} MB)",
    )
    ax.step(
        steps,
        planned,
        where="mid",
        color=COLORS[1],
        label=f"planned (peak {planned.max(initial=0):.2f} MB)",
    )
    n = len(plan.graph.calls)
    if plan.backward:
        ax.axvline(n - 0.5, color="0.5", linestyle="--", linewidth=1)
    ax.set_xlabel("step (forward calls, then their backwards)")
    ax.set_ylabel("live MB")
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize=8)
    return ax
