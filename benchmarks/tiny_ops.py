"""Per-op overhead on tiny tensors: autograd_lab against PyTorch, in the same run.

    .venv/bin/python benchmarks/tiny_ops.py [--ops 2000] [--repeats 30] [--no-gc] [--json PATH]

A 4-element float32 leaf that requires grad goes through a chain of `--ops` operations; then
backward() runs through the chain. With 4 elements the arithmetic costs nothing, so the times are
the bookkeeping of each op: making the tensor, recording the node, and the engine's walk back.
Two recipes: "arithmetic" (multiply and add a number: pure per-op overhead) and "mixed" (adds
tanh and exp, whose backward formulas are one or more ops themselves). Both libraries run the same
recipe, interleaved (ours, PyTorch, ours, PyTorch, ...) so that a slower moment of the machine hits
both. We report medians. The garbage collector stays on, as in a learner's notebook; `--no-gc`
switches it off while a chain is timed, as `timeit` does.
"""

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout, uninstalled
import autograd_lab  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

# The recipes: one step per op, repeated until the chain is `--ops` long.
RECIPES = {
    "arithmetic": [lambda y: y * 1.0001, lambda y: y + 0.5],
    "mixed": [
        lambda y: y * 0.9,
        lambda y: y + 0.1,
        lambda y: y.tanh(),
        lambda y: y * 1.5,
        lambda y: y + (-0.2),
        lambda y: y.exp(),
        lambda y: y * 0.5,
        lambda y: y + (-0.3),
    ],
}
START = np.array([0.1, -0.5, 1.0, 2.0], dtype=np.float32)


def time_chain(lib, steps, n_ops, gc_off):
    """Seconds for the forward chain and for its backward, plus the output and the leaf's grad."""
    x = lib.tensor(START, requires_grad=True)
    seed = lib.ones(4)
    if gc_off:
        gc.disable()
    try:
        t0 = time.perf_counter()
        y = x
        for i in range(n_ops):
            y = steps[i % len(steps)](y)
        t1 = time.perf_counter()
        y.backward(seed)
        t2 = time.perf_counter()
    finally:
        gc.enable()
    return t1 - t0, t2 - t1, y.detach().numpy(), x.grad.numpy()


def measure(libs, steps, args):
    """Median µs/op (forward, backward, total) per library, and each library's output and grad."""
    times = {name: {"forward": [], "backward": [], "total": []} for name in libs}
    outputs = {}
    for run in range(args.warmup + args.repeats):
        for name, lib in libs.items():  # interleaved: one chain each, in turn
            gc.collect()
            forward, backward, *outputs[name] = time_chain(lib, steps, args.ops, args.no_gc)
            if run >= args.warmup:
                for column, seconds in zip(times[name], (forward, backward, forward + backward)):
                    times[name][column].append(seconds)
    medians = {
        name: {column: statistics.median(v) / args.ops * 1e6 for column, v in t.items()}
        for name, t in times.items()
    }
    return medians, outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000, help="ops in the chain (default 2000)")
    parser.add_argument("--repeats", type=int, default=30, help="timed runs each (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--no-gc", action="store_true", help="garbage collector off while timing")
    parser.add_argument("--json", metavar="PATH", help="also write the results to this file")
    args = parser.parse_args()

    libs = {"autograd_lab": autograd_lab} | ({"torch": torch} if torch else {})
    machine = {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__ if torch else None,
    }
    print("machine: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in machine.items()))
    print(f"chain: {args.ops} ops on a 4-element float32 leaf, {args.repeats} repeats after "
          f"{args.warmup} warm-up, interleaved; medians; garbage collector "
          f"{'off' if args.no_gc else 'on'}")  # fmt: skip
    report = {"machine": machine, "settings": vars(args), "recipes": {}}
    for recipe, steps in RECIPES.items():
        results, outputs = measure(libs, steps, args)
        print(f"\nrecipe {recipe!r}")
        print(f"{'':14}{'forward µs/op':>16}{'backward µs/op':>16}{'total µs/op':>16}")
        for name in libs:
            print(f"{name:14}" + "".join(f"{v:16.2f}" for v in results[name].values()))
        if torch:
            ours, theirs = results["autograd_lab"], results["torch"]
            results["ratio_ours_over_torch"] = {c: ours[c] / theirs[c] for c in ours}
            print(f"{'ours / torch':14}" + "".join(
                f"{r:15.2f}x" for r in results["ratio_ours_over_torch"].values()))  # fmt: skip
            # The same recipe must give the same numbers, or we are not timing the same work.
            value_diff = np.abs(outputs["autograd_lab"][0] - outputs["torch"][0]).max()
            grad_diff = np.abs(outputs["autograd_lab"][1] - outputs["torch"][1]).max()
            print(f"check, max |ours - PyTorch|: output {value_diff:.1e}, grad {grad_diff:.1e}")
        else:
            print("ratio unavailable: PyTorch is not installed")
        report["recipes"][recipe] = results

    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
