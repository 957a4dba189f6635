"""Drawing big graphs: layout + SVG time for a 2,000-node graph, and a 10,000-node one collapsed.

    .venv/bin/python benchmarks/viz_layout.py [--repeats 7] [--hidden 14] [--samples 3]

The graph is the one micrograd-style lessons build: a small MLP written with scalar tensors (one
node per multiply, add and tanh), run on a few samples, its loss backpropagated, all recorded
with `viz.trace()` inside `autograd.scope("mlp")` / `scope("layer1")`, ... This is a hard case
for a layered layout: every neuron reads every input of its layer, so edges cross a lot and
many edges skip columns (each adds waypoints).

Timed (median of `--repeats` runs after 2 warm-ups, garbage collector on, as in a notebook):
`layout()` alone, then `render_svg()` of that layout, and their sum against the 0.2 s target
of issue 3, for the whole 2,000-node graph drawn node by node (`collapsed=[]`). Then a 10,000-node
graph: its default view (top-level scope collapsed), one scope expanded, and, for information,
every node drawn.
"""

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout, uninstalled
import autograd_lab as ag  # noqa: E402
from autograd_lab.autograd import scope  # noqa: E402
from autograd_lab.viz.graph import trace  # noqa: E402
from autograd_lab.viz.layout import default_collapsed, expand, layout  # noqa: E402
from autograd_lab.viz.svg import render_svg  # noqa: E402

TARGET_S = 0.2


def scalar_mlp_graph(hidden, samples):
    """The recorded graph of a scalar MLP 4 -> hidden -> hidden -> 1 on `samples` inputs."""
    ag.manual_seed(0)
    sizes = [4, hidden, hidden, 1]
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        weights = [[ag.randn(()).requires_grad_() for _ in range(n_in)] for _ in range(n_out)]
        layers.append((weights, [ag.zeros(()).requires_grad_() for _ in range(n_out)]))
    with trace() as t:
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


def median_times(graph, collapsed, repeats):
    """Median seconds of layout() and of render_svg(), the number of boxes and the SVG's size."""
    layout_s, svg_s = [], []
    for run in range(2 + repeats):
        gc.collect()
        t0 = time.perf_counter()
        placed = layout(graph, collapsed=collapsed)
        t1 = time.perf_counter()
        svg = render_svg(graph, placed)
        t2 = time.perf_counter()
        if run >= 2:  # the first two are warm-ups
            layout_s.append(t1 - t0)
            svg_s.append(t2 - t1)
    return statistics.median(layout_s), statistics.median(svg_s), len(placed["nodes"]), len(svg)


def report(title, graph, collapsed, repeats, target=None):
    lay, svg, boxes, size = median_times(graph, collapsed, repeats)
    line = (
        f"{title:<34} {len(graph.nodes):>6} {boxes:>6} {lay * 1000:>9.1f} {svg * 1000:>8.1f} "
        f"{(lay + svg) * 1000:>9.1f} {size / 1024:>8.0f}"
    )
    if target is not None:
        verdict = "ok" if lay + svg <= target else "OVER"
        line += f"   target {target * 1000:.0f} ms: {verdict}"
    print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--hidden", type=int, default=14, help="neurons per hidden layer (2k graph)"
    )
    parser.add_argument("--samples", type=int, default=3, help="inputs run through it (2k graph)")
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
          f"median of {args.repeats} runs, garbage collector on")  # fmt: skip
    print(f"{'graph (view)':<34} {'nodes':>6} {'boxes':>6} {'layout ms':>9} {'svg ms':>8} "
          f"{'total ms':>9} {'svg KiB':>8}")  # fmt: skip

    small = scalar_mlp_graph(args.hidden, args.samples)
    report("2k MLP, every node", small, [], args.repeats, TARGET_S)
    report("2k MLP, default view", small, None, args.repeats)

    big = scalar_mlp_graph(32, 4)
    folded = default_collapsed(big)
    report("10k MLP, default view (collapsed)", big, None, args.repeats)
    report("10k MLP, 'mlp' expanded one level", big, expand(big, folded, "mlp"), args.repeats)
    report("10k MLP, every node (information)", big, [], max(1, args.repeats // 3))


if __name__ == "__main__":
    main()
