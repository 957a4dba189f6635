"""Per-op overhead on tiny tensors: autograd_lab against PyTorch, in the same run.

    .venv/bin/python benchmarks/tiny_ops.py [--ops 2000] [--repeats 30] [--no-gc] [--json PATH]

A 4-element float32 leaf that requires grad goes through a chain of `--ops` operations; then
backward() runs through the chain. With 4 elements the arithmetic costs nothing, so the times are
the bookkeeping of each op: making the tensor, recording the node, and the engine's walk back.
Three recipes: "arithmetic" (multiply and add a number: pure per-op overhead), "mixed" (adds
tanh and exp, whose backward formulas are one or more ops themselves) and "unary+tensor" (tanh,
sigmoid, exp, - c, * w, + x: unary ops, and tensor operands whose gradients are summed into two
leaves). Both libraries run the same recipe, interleaved (a block of ours, a block of PyTorch,
...) so that a slower moment of the machine hits both. We report medians. The garbage collector
stays on, as in a learner's notebook; `--no-gc` switches it off while a chain is timed, as
`timeit` does. Threads are left at each library's default. `benchmarks/run.py` shows the same
numbers as row 1 of its table (and can add the "before" engine, see before.py).
"""

import argparse
import gc
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from harness import (
    Row,
    Target,
    check_engines,
    engines,
    interleaved,
    machine_info,
    now,
    quietly,
    torch,
)

# The recipes: one step per op, repeated until the chain is `--ops` long. A step gets the chain's
# value `y` and the chain's tensors `t`: `t.x`, the leaf the chain starts from, and `t.w`, a second
# leaf (both 4-element float32, requiring grad), as a model's parameters are.
RECIPES = {
    "arithmetic": [lambda y, t: y * 1.0001, lambda y, t: y + 0.5],
    "mixed": [
        lambda y, t: y * 0.9,
        lambda y, t: y + 0.1,
        lambda y, t: y.tanh(),
        lambda y, t: y * 1.5,
        lambda y, t: y + (-0.2),
        lambda y, t: y.exp(),
        lambda y, t: y * 0.5,
        lambda y, t: y + (-0.3),
    ],
    # Unary ops and tensor operands: each `* w` and `+ x` also sends a gradient to a leaf, which
    # the engine sums there. Stays finite: tanh, sigmoid and exp keep y in (1.31, 2.08) before
    # `- 1.5`, and a block scales the gradient through y by at most 1 * 0.25 * 2.08 * 1.1 < 1.
    "unary+tensor": [
        lambda y, t: y.tanh(),
        lambda y, t: y.sigmoid(),
        lambda y, t: y.exp(),
        lambda y, t: y - 1.5,
        lambda y, t: y * t.w,
        lambda y, t: y + t.x,
    ],
}
START = np.array([0.1, -0.5, 1.0, 2.0], dtype=np.float32)
WEIGHT = np.array([0.9, -1.1, 0.5, 1.05], dtype=np.float32)
TARGET = Target(1.0)  # the issue's: per op, no slower than PyTorch


def chain_runner(lib, steps, n_ops, gc_off, results):
    """A runner timing one chain (forward, then backward); it leaves the output and the leaves'
    gradients in `results`, for the check that every library computed the same numbers."""

    def run():
        t = SimpleNamespace(
            x=lib.tensor(START, requires_grad=True), w=lib.tensor(WEIGHT, requires_grad=True)
        )
        seed = lib.ones(4)
        if gc_off:
            gc.disable()
        try:
            t0 = now()
            y = t.x
            for i in range(n_ops):
                y = steps[i % len(steps)](y, t)
            t1 = now()
            y.backward(seed)
            t2 = now()
        finally:
            gc.enable()
        grads = [leaf.grad.numpy() for leaf in (t.x, t.w) if leaf.grad is not None]
        results[:] = [y.detach().numpy(), *grads]
        return {"forward": t1 - t0, "backward": t2 - t1}

    return run


def measure(recipe, n_ops, repeats, warmup, gc_off=False):
    """{library: {"forward"/"backward": median µs/op}} and the check (text, ok), for one recipe:
    every engine (ours, and "before" with run.py's --before) and PyTorch, interleaved."""
    libs = engines() | ({"torch": torch} if torch else {})
    results = {name: [] for name in libs}
    runners = {
        name: chain_runner(lib, RECIPES[recipe], n_ops, gc_off, results[name])
        for name, lib in libs.items()
    }
    medians = interleaved(runners, repeats, warmup)
    per_op = {name: {c: s / n_ops * 1e6 for c, s in m.items()} for name, m in medians.items()}
    # the same recipe must give the same numbers, or we are not timing the same work
    flat = {name: np.concatenate(values) for name, values in results.items()}
    return per_op, check_engines(flat, tolerance=1e-4)


def rows(settings):
    """Row 1 of run.py's table: forward and backward µs/op of each recipe, ours vs torch."""
    n_ops = 200 if settings.quick else 2000
    table = []
    for recipe in RECIPES:
        (per_op, (check, ok)), load = quietly(
            lambda recipe=recipe: measure(recipe, n_ops, settings.repeats, settings.warmup)
        )
        for column in ("forward", "backward"):
            table.append(
                Row(
                    "1",
                    f"tiny-op chain '{recipe}', {column}",
                    "µs/op",
                    per_op["ours"][column],
                    "torch",
                    per_op.get("torch", {}).get(column),
                    TARGET,
                    check=check,
                    check_ok=ok,
                    before=per_op.get("before", {}).get(column),
                    load=load,
                )
            )
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
    print(
        f"chain: {args.ops} ops on a 4-element float32 leaf, {args.repeats} repeats after "
        f"{args.warmup} warm-up, interleaved; medians; garbage collector "
        f"{'off' if args.no_gc else 'on'}"
    )
    report = {"machine": machine, "settings": vars(args), "recipes": {}}
    for recipe in RECIPES:
        (per_op, (check, _)), load = quietly(
            lambda recipe=recipe: measure(recipe, args.ops, args.repeats, args.warmup, args.no_gc)
        )
        for times in per_op.values():
            times["total"] = times["forward"] + times["backward"]
        print(f"\nrecipe {recipe!r} (other processes' busy cores: {load})")
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
        report["recipes"][recipe] = per_op | {"load": load.as_dict()}

    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
