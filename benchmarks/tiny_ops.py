"""Per-op overhead on tiny tensors: autograd_lab against PyTorch, in the same run.

    .venv/bin/python benchmarks/tiny_ops.py [--ops 2000] [--repeats 30] [--json results.json]

A 4-element float32 leaf that requires grad goes through a chain of `--ops` operations (multiply
and add a scalar, with a tanh and an exp now and then); then backward() runs through the chain.
With 4 elements the arithmetic costs nothing, so the times are the bookkeeping of each op: making
the tensor, recording the node, and the engine's walk back. Both libraries run the same recipe,
interleaved (ours, PyTorch, ours, PyTorch, ...) so that a slower moment of the machine hits both.
We report medians; as `timeit` does, the garbage collector is off while a chain is timed.
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

# The recipe: one step per op, repeated until the chain is `--ops` long.
STEPS = [
    lambda y: y * 0.9,
    lambda y: y + 0.1,
    lambda y: y.tanh(),
    lambda y: y * 1.5,
    lambda y: y + (-0.2),
    lambda y: y.exp(),
    lambda y: y * 0.5,
    lambda y: y + (-0.3),
]
START = np.array([0.1, -0.5, 1.0, 2.0], dtype=np.float32)


def time_chain(lib, n_ops):
    """Seconds for the forward chain and for its backward, plus the output and the leaf's grad."""
    x = lib.tensor(START, requires_grad=True)
    seed = lib.ones(4)
    gc.disable()
    try:
        t0 = time.perf_counter()
        y = x
        for i in range(n_ops):
            y = STEPS[i % len(STEPS)](y)
        t1 = time.perf_counter()
        y.backward(seed)
        t2 = time.perf_counter()
    finally:
        gc.enable()
    return t1 - t0, t2 - t1, y.detach().numpy(), x.grad.numpy()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000, help="ops in the chain (default 2000)")
    parser.add_argument("--repeats", type=int, default=30, help="timed runs each (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--json", metavar="PATH", help="also write the results to this file")
    args = parser.parse_args()

    libs = {"autograd_lab": autograd_lab} | ({"torch": torch} if torch else {})
    times = {name: {"forward": [], "backward": []} for name in libs}
    outputs = {}
    for run in range(args.warmup + args.repeats):
        for name, lib in libs.items():  # interleaved: one chain each, in turn
            gc.collect()
            forward, backward, *outputs[name] = time_chain(lib, args.ops)
            if run >= args.warmup:
                times[name]["forward"].append(forward)
                times[name]["backward"].append(backward)

    results = {}
    for name, t in times.items():
        totals = [f + b for f, b in zip(t["forward"], t["backward"], strict=True)]
        results[name] = {
            "forward_us_per_op": statistics.median(t["forward"]) / args.ops * 1e6,
            "backward_us_per_op": statistics.median(t["backward"]) / args.ops * 1e6,
            "total_us_per_op": statistics.median(totals) / args.ops * 1e6,
        }
    columns = list(results["autograd_lab"])
    if torch:
        ours, theirs = results["autograd_lab"], results["torch"]
        results["ratio_ours_over_torch"] = {c: ours[c] / theirs[c] for c in columns}

    machine = {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__ if torch else None,
    }
    print("machine: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in machine.items()))
    print(f"chain: {args.ops} ops on a 4-element float32 leaf, {args.repeats} repeats after "
          f"{args.warmup} warm-up, interleaved; medians")  # fmt: skip
    print()
    print(f"{'':14}{'forward µs/op':>16}{'backward µs/op':>16}{'total µs/op':>16}")
    for name in libs:
        print(f"{name:14}" + "".join(f"{results[name][c]:16.2f}" for c in columns))
    if torch:
        ratio = results["ratio_ours_over_torch"]
        print(f"{'ours / torch':14}" + "".join(f"{ratio[c]:15.2f}x" for c in columns))
        # The same recipe must give the same numbers, or we are not timing the same work.
        value_diff = np.abs(outputs["autograd_lab"][0] - outputs["torch"][0]).max()
        grad_diff = np.abs(outputs["autograd_lab"][1] - outputs["torch"][1]).max()
        print(f"\ncheck, max |ours - PyTorch|: output {value_diff:.1e}, grad {grad_diff:.1e}")
    else:
        print("\nratio unavailable: PyTorch is not installed")

    if args.json:
        settings = {"ops": args.ops, "repeats": args.repeats, "warmup": args.warmup}
        report = {"machine": machine, "settings": settings, "results": results}
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
