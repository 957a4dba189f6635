"""Drawing big graphs: layout + SVG time for 2,000-node graphs of several shapes, and a 10,000-node
graph collapsed.

    .venv/bin/python benchmarks/viz_layout.py [--repeats 7] [--before REF] [--only shared rnn]

The graphs, every one recorded with `viz.record()` and drawn node by node (`collapsed=[]`) unless
the row says otherwise:

- **2k MLP**: the one micrograd-style lessons build, a small MLP written with scalar tensors (one
  node per multiply, add and tanh) on a few samples, its loss backpropagated, inside
  `autograd.scope("mlp")` / `scope("layer1")`, ... Every neuron reads every input of its layer,
  so edges cross a lot and many edges skip columns (each adds waypoints).
- **shared leaf**: `y = (y * 1.01).tanh() + x` 666 times: one leaf feeds every step, its edges
  spanning up to the whole picture (issue 17: 15.5 s before lanes).
- **RNN**: `h = (w * h + u * x[t] + b).tanh()` for 400 steps: w, u and b reused by every step.
- **transformer**: blocks of pre-norm attention (layer norm, q/k/v projections, softmax of the
  scaled scores, output projection) and MLP (layer norm, linear, relu, linear), each with its
  residual addition, each block in `scope("block<i>")` with `attention` and `mlp` inside; 66
  blocks make 2,000 nodes.
- **10k MLP**: the MLP with 32 hidden neurons on 4 samples, in its default view (top-level scope
  collapsed), one scope expanded, and, for information, every node drawn.

Timed: median of `--repeats` runs after 2 warm-ups (garbage collector on, as in a notebook), of
`layout()` alone, then `render_svg()` of that layout, and their sum against the 0.2 s target of
issues 3 and 17. `--before REF` also times REF's package (exported by `before.py`, see README.md)
on the same graphs, given as plain dicts, in the same run; a slow "before" (over 2 s a run) is run
`--before-repeats` times (default 1) without warm-ups. `cpu ms` is this process's CPU time for
layout + SVG (`time.process_time`, median): on a shared machine it leaves out the moments other
programs held the CPU, which wall time counts (it still feels their share of caches). The load
column is other processes' average busy cores while a row ran (`harness.other_cores`, from
/proc/stat): read a row above 0.25 as a figure about the machine as much as about the code. Each
row also says how many points the edges' polylines have in all: the waypoints an edge bends
through show up there (two points each).
"""

import argparse
import gc
import importlib
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout, uninstalled
sys.path.insert(0, str(Path(__file__).resolve().parent))  # harness, before
from harness import cpu_snapshot, git_revision, other_cores  # noqa: E402

import autograd_lab as ag  # noqa: E402
import autograd_lab.nn.functional as F  # noqa: E402
from autograd_lab.autograd import scope  # noqa: E402
from autograd_lab.viz.graph import record  # noqa: E402
from autograd_lab.viz.layout import default_collapsed, expand, layout  # noqa: E402
from autograd_lab.viz.svg import render_svg  # noqa: E402

TARGET_S = 0.2
SLOW_S = 2.0  # a "before" run slower than this is run --before-repeats times, no warm-up


# ---- the graphs ------------------------------------------------------------------------------------


def scalar_mlp_graph(hidden, samples):
    """The recorded graph of a scalar MLP 4 -> hidden -> hidden -> 1 on `samples` inputs."""
    ag.manual_seed(0)
    sizes = [4, hidden, hidden, 1]
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        weights = [[ag.randn(()).requires_grad_() for _ in range(n_in)] for _ in range(n_out)]
        layers.append((weights, [ag.zeros(()).requires_grad_() for _ in range(n_out)]))
    with record() as t:
        loss = None
        for _ in range(samples):
            h = [ag.randn(()) for _ in range(sizes[0])]
            with scope("mlp"):
                for number, (weights, biases) in enumerate(layers, start=1):
                    with scope(f"layer{number}"):
                        h = [
                            neuron(w, b, h, last=number == len(layers))
                            for w, b in zip(weights, biases)
                        ]
            loss = h[0] * h[0] if loss is None else loss + h[0] * h[0]
        loss.backward()
    return t.graph(loss)


def neuron(weights, bias, inputs, last):
    total = bias
    for w, x in zip(weights, inputs):
        total = total + w * x
    return total if last else total.tanh()


def shared_leaf_graph(steps=666):
    """`y = (y * 1.01).tanh() + x`, `steps` times: x feeds every step (2,000 nodes for 666)."""
    x = ag.tensor(0.5, requires_grad=True)
    with record() as t:
        y = x
        for _ in range(steps):
            y = (y * 1.01).tanh() + x
        y.backward()
    return t.graph(y, names={"x": x, "y": y})


def rnn_graph(steps=400):
    """A scalar RNN `h = (w * h + u * x[t] + b).tanh()`: w, u and b are reused by every step
    (2,000 nodes for 400 steps: x[t] needs no gradient, so it is no node)."""
    ag.manual_seed(0)
    w, u, b = (ag.randn(()).requires_grad_() for _ in range(3))
    xs = ag.randn(steps)
    with record() as t:
        h = ag.zeros(())
        for step in range(steps):
            h = (w * h + u * xs[step] + b).tanh()
        h.backward()
    return t.graph(h, names={"w": w, "u": u, "b": b, "h": h})


def transformer_graph(blocks=66, width=8, tokens=4):
    """`blocks` pre-norm transformer blocks (attention, then MLP, each with its residual) on a
    `tokens` x `width` input, in scopes block<i>/attention and block<i>/mlp; 30 nodes a block."""
    ag.manual_seed(0)

    def weight(*shape):
        return (ag.randn(*shape) * shape[0] ** -0.5).requires_grad_()

    x = ag.randn(tokens, width)
    with record() as t:
        for i in range(blocks):
            with scope(f"block{i}"):
                with scope("attention"):
                    h = F.layer_norm(x, (width,), weight(width), weight(width))
                    q, k, v = (h @ weight(width, width) for _ in range(3))
                    scores = F.softmax((q @ k.transpose(0, 1)) * width**-0.5, dim=-1)
                    x = x + (scores @ v) @ weight(width, width)
                with scope("mlp"):
                    h = F.layer_norm(x, (width,), weight(width), weight(width))
                    hidden = F.relu(h @ weight(width, 4 * width) + weight(4 * width))
                    x = x + hidden @ weight(4 * width, width) + weight(width)
        loss = x.sum()
        loss.backward()
    return t.graph(loss)


# ---- timing ----------------------------------------------------------------------------------------


def median_times(lay_out, render, graph, collapsed, repeats):
    """Median seconds of layout() and of render_svg(), the layout and the SVG's size, and the load.
    A run slower than SLOW_S (a "before" of a hard shape) is not repeated as often."""
    layout_s, svg_s, cpu_s = [], [], []
    start = cpu_snapshot()
    runs = 2 + repeats
    run = 0
    while run < runs:
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        placed = lay_out(graph, collapsed=collapsed)
        t1 = time.perf_counter()
        svg = render(graph, placed)
        t2, c2 = time.perf_counter(), time.process_time()
        if run == 0 and t2 - t0 > SLOW_S:  # no warm-ups for a slow one: this run counts
            runs = method.before_repeats
        if run >= 2 or runs == method.before_repeats:
            layout_s.append(t1 - t0)
            svg_s.append(t2 - t1)
            cpu_s.append(c2 - c0)
        run += 1
    load = other_cores(start, cpu_snapshot())
    medians = [statistics.median(times) for times in (layout_s, svg_s, cpu_s)]
    return (*medians, placed, len(svg), load)


class method:  # the command line's choices that median_times reads
    before_repeats = 1


def points_of(placed):
    return sum(len(edge["points"]) for edge in placed["edges"])


def load_text(load):
    if load is None:
        return "n/a"
    return f"{load:.2f}" + (" loaded" if load > 0.25 else "")


HEADER = (
    f"{'graph (view)':<34} {'code':<6} {'nodes':>6} {'boxes':>6} {'points':>7} {'layout ms':>10} "
    f"{'svg ms':>8} {'total ms':>9} {'cpu ms':>7} {'svg KiB':>8} {'load':>6}"
)


def report(title, graph, collapsed, repeats, before=None, target=None):
    """One line for today's code, and one for REF's before it when --before is given."""
    codes = [("before", before), ("after", None)] if before is not None else [("", None)]
    for code, module in codes:
        # viz/__init__.py binds the name `layout` to the function: take the modules by name
        lay_out = sys.modules[f"{module}.viz.layout"].layout if module else layout
        render = sys.modules[f"{module}.viz.svg"].render_svg if module else render_svg
        drawn = graph.to_dict()  # both read the plain format (REF's may not know today's Snapshot)
        lay, svg, cpu, placed, size, load = median_times(lay_out, render, drawn, collapsed, repeats)
        line = (
            f"{title:<34} {code:<6} {len(graph.nodes):>6} {len(placed['nodes']):>6} "
            f"{points_of(placed):>7} {lay * 1000:>10.1f} {svg * 1000:>8.1f} "
            f"{(lay + svg) * 1000:>9.1f} {cpu * 1000:>7.1f} {size / 1024:>8.0f} "
            f"{load_text(load):>6}"
        )
        if target is not None:
            line += f"   target {target * 1000:.0f} ms: {'ok' if lay + svg <= target else 'OVER'}"
        print(line, flush=True)


ROWS = ("mlp", "shared", "rnn", "transformer", "big")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before", metavar="REF", help="also time REF's package (a git ref)")
    parser.add_argument("--before-repeats", type=int, default=1, help="runs of a slow 'before'")
    parser.add_argument("--only", nargs="+", choices=ROWS, default=ROWS, help="rows to run")
    parser.add_argument("--hidden", type=int, default=14, help="neurons per hidden layer (2k MLP)")
    parser.add_argument("--samples", type=int, default=3, help="inputs run through it (2k MLP)")
    args = parser.parse_args()
    method.before_repeats = max(1, args.before_repeats)
    before = None
    if args.before:
        from before import load

        before = load(args.before).__name__
        importlib.import_module(f"{before}.viz.layout")  # the modules the rows call
        importlib.import_module(f"{before}.viz.svg")
    commit = git_revision(working_tree=True)
    load_average = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
        f"autograd_lab {commit}; load average {load_average}; median of {args.repeats} runs, "
        "garbage collector on"
    )
    if before is not None:
        print(f"before: {args.before} ({git_revision(args.before)})")
    print(HEADER)
    only = set(args.only)
    if "mlp" in only:
        small = scalar_mlp_graph(args.hidden, args.samples)
        report("2k MLP, every node", small, [], args.repeats, before, TARGET_S)
        report("2k MLP, default view", small, None, args.repeats, before)
    if "shared" in only:
        report(
            "shared leaf x 666, every node", shared_leaf_graph(), [], args.repeats, before, TARGET_S
        )
    if "rnn" in only:
        report("RNN 400 steps, every node", rnn_graph(), [], args.repeats, before, TARGET_S)
    if "transformer" in only:
        graph = transformer_graph()
        report("transformer x 66, every node", graph, [], args.repeats, before, TARGET_S)
        report("transformer x 66, default view", graph, None, args.repeats, before)
    if "big" in only:
        big = scalar_mlp_graph(32, 4)
        folded = default_collapsed(big)
        report("10k MLP, default view (collapsed)", big, None, args.repeats, before)
        report("10k MLP, 'mlp' expanded one level", big, expand(big, folded, "mlp"), args.repeats)
        report("10k MLP, every node (information)", big, [], max(1, args.repeats // 3), before)


if __name__ == "__main__":
    main()
