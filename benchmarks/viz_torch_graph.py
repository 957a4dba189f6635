"""Render time of a 2,000-node PyTorch graph in our viewer (issue 17): reading it (the Snapshot
from grad_fn, next_functions and saved tensors, recorded with record_torch), laying it out, and
writing its SVG. Best of 3; the machine's load average is printed beside each row.

    python benchmarks/viz_torch_graph.py

Two shapes: one leaf feeding every step (`y = (y * 1.01).tanh() + x`, 666 steps: the long edges
layout.py draws as one lane) and a new leaf every step (1,000 steps). Needs torch.
"""

import os
import time

import torch

from autograd_lab.viz import record_torch
from autograd_lab.viz.layout import layout
from autograd_lab.viz.svg import render_svg


def build(shape):
    x = torch.tensor([0.5, -0.25, 1.0], requires_grad=True)
    y = x
    if shape == "shared leaf":
        for _ in range(666):
            y = (y * 1.01).tanh() + x
    else:
        for _ in range(1000):
            y = y * torch.full((3,), 1.01, requires_grad=True)
    return y.sum()


def main():
    for shape in ("shared leaf", "leaf per step"):
        with record_torch() as recording:
            loss = build(shape)
            loss.backward()
        best = {}
        for _ in range(3):
            t0 = time.perf_counter()
            graph = recording.graph(loss)
            t1 = time.perf_counter()
            placed = layout(graph)
            t2 = time.perf_counter()
            render_svg(graph, placed)
            t3 = time.perf_counter()
            times = {"read": t1 - t0, "layout": t2 - t1, "svg": t3 - t2, "total": t3 - t0}
            best = {k: min(best.get(k, v), v) for k, v in times.items()}
        row = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in best.items())
        print(f"{shape:14s} {len(graph.nodes)} nodes: {row} (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
