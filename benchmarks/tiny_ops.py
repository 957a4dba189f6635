"""Per-op overhead on tiny tensors: autograd_lab against PyTorch, in the same run.

    .venv/bin/python benchmarks/tiny_ops.py [--ops 2000] [--repeats 30] [--no-gc] [--json PATH]

A 4-element float32 leaf that requires grad goes through a chain of `--ops` operations; then
backward() runs through the chain. With 4 elements the arithmetic costs nothing, so the times are
the bookkeeping of each op: making the tensor, recording the node, and the engine's walk back.
Two recipes: "arithmetic" (multiply and add a number: pure per-op overhead) and "mixed" (adds
tanh and exp, whose backward formulas are one or more ops themselves). Both libraries run the same
recipe, interleaved (ours, PyTorch, ours, PyTorch, ...) so that a slower moment of the machine hits
both. We report medians. The garbage collector stays on, as in a learner's notebook; `--no-gc`
switches it off while a chain is timed, as `timeit` does. `benchmarks/run.py` shows the same
numbers as row 1 of its table.
"""

import argparse
import gc
import json
from pathlib import Path

import numpy as np
from harness import Row, Target, compare, interleaved, machine_info, now, torch

import autograd_lab

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
TARGET = Target(1.0)  # the issue's: per op, no slower than PyTorch


def chain_runner(lib, steps, n_ops, gc_off, results):
    """A runner timing one chain (forward, then backward); it leaves the output and the leaf's
    grad in `results`, for the check that both libraries computed the same numbers."""

    def run():
        x = lib.tensor(START, requires_grad=True)
        seed = lib.ones(4)
        if gc_off:
            gc.disable()
        try:
            t0 = now()
            y = x
            for i in range(n_ops):
                y = steps[i % len(steps)](y)
            t1 = now()
            y.backward(seed)
            t2 = now()
        finally:
            gc.enable()
        results[:] = [y.detach().numpy(), x.grad.numpy()]
        return {"forward": t1 - t0, "backward": t2 - t1}

    return run


def measure(recipe, n_ops, repeats, warmup, gc_off=False):
    """{library: {"forward"/"backward": median µs/op}} and the check text, for one recipe."""
    libs = {"ours": autograd_lab} | ({"torch": torch} if torch else {})
    results = {name: [] for name in libs}
    runners = {
        name: chain_runner(lib, RECIPES[recipe], n_ops, gc_off, results[name])
        for name, lib in libs.items()
    }
    medians = interleaved(runners, repeats, warmup)
    per_op = {name: {c: s / n_ops * 1e6 for c, s in m.items()} for name, m in medians.items()}
    check, ok = ("", True)
    if torch:  # the same recipe must give the same numbers, or we are not timing the same work
        ours, theirs = np.concatenate(results["ours"]), np.concatenate(results["torch"])
        check, ok = compare("ours", ours, "torch", theirs, tolerance=1e-4)
    return per_op, check, ok


def rows(settings):
    """Row 1 of run.py's table: forward and backward µs/op of each recipe, ours vs torch."""
    n_ops = 200 if settings.quick else 2000
    table = []
    for recipe in RECIPES:
        per_op, check, ok = measure(recipe, n_ops, settings.repeats, settings.warmup)
        for column in ("forward", "backward"):
            table.append(Row(
                "1", f"tiny-op chain '{recipe}', {column}", "µs/op", per_op["ours"][column],
                "torch", per_op.get("torch", {}).get(column), TARGET, check=check, check_ok=ok,
            ))  # fmt: skip
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000, help="ops in the chain (default 2000)")
    parser.add_argument("--repeats", type=int, default=30, help="timed runs each (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--no-gc", action="store_true", help="garbage collector off while timing")
    parser.add_argument("--json", metavar="PATH", help="also write the results to this file")
    args = parser.parse_args()

    machine = machine_info()
    print("machine: " + ", ".join(f"{k} {v}" for k, v in machine.items() if v is not None))
    print(f"chain: {args.ops} ops on a 4-element float32 leaf, {args.repeats} repeats after "
          f"{args.warmup} warm-up, interleaved; medians; garbage collector "
          f"{'off' if args.no_gc else 'on'}")  # fmt: skip
    report = {"machine": machine, "settings": vars(args), "recipes": {}}
    for recipe in RECIPES:
        per_op, check, _ = measure(recipe, args.ops, args.repeats, args.warmup, args.no_gc)
        for times in per_op.values():
            times["total"] = times["forward"] + times["backward"]
        print(f"\nrecipe {recipe!r}")
        print(f"{'':14}{'forward µs/op':>16}{'backward µs/op':>16}{'total µs/op':>16}")
        for name, times in per_op.items():
            print(f"{name:14}" + "".join(f"{v:16.2f}" for v in times.values()))
        if torch:
            ratio = {c: per_op["ours"][c] / per_op["torch"][c] for c in per_op["ours"]}
            per_op["ratio_ours_over_torch"] = ratio
            print(f"{'ours / torch':14}" + "".join(f"{r:15.2f}x" for r in ratio.values()))
            print(f"check, max |output and grad difference|: {check}")
        else:
            print("ratio unavailable: PyTorch is not installed")
        report["recipes"][recipe] = per_op

    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
