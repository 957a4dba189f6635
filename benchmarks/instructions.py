"""Instructions per tiny op, counted by valgrind: the eager engine's cost without the clock's noise.

    .venv/bin/python benchmarks/instructions.py                  # this checkout
    .venv/bin/python benchmarks/instructions.py --before 534be3d # and that commit's package

Why count instructions: on a shared VM the wall time of the same code moves by 2x from one minute
to the next (row 1 of run.py measured 5.5 and 15 µs per op for one unchanged engine, with no
other process busy), which drowns a 5% change. Callgrind counts the instructions the CPU runs, the
same on every run, so a change to the engine's bookkeeping shows as itself.

What is counted: the chain of row 1's *unary+tensor* recipe (`tanh, sigmoid, exp, - 0.5, * w,
+ x` on a 4-element float32 tensor, `w` and `x` without gradients), 600 ops. A child process
builds `n` such chains (forward) and then runs backward through them; the difference between
n = 8 and n = 2, divided by 6 x 600, is the cost of one op with the start-up left out. Forward and
backward are counted separately, with the garbage collector on (as users run) and off (the
engine's own work: the collector's share is the difference).

Needs valgrind (`apt-get install valgrind`); without it, says so and exits with status 2. It runs
8 children under callgrind per engine, about two minutes each on the development machine
(half an hour with --before).
"""

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from before import export

BENCHMARKS = Path(__file__).resolve().parent
OPS = 600


def chain(ag, np, w, x_other):
    """One chain of the recipe, from a fresh leaf: 600 ops, each recorded."""
    h = ag.tensor(np.array([0.5, -0.5, 0.25, 1.0], np.float32), requires_grad=True)
    for _ in range(OPS // 6):
        h = h.tanh()
        h = h.sigmoid()
        h = h.exp()
        h = h - 0.5
        h = h * w
        h = h + x_other
    return h.sum()


def child(package, n, backward, collector):
    """Run inside valgrind: n chains forward, then (with `backward`) backward through each."""
    import numpy as np

    ag = __import__(package)
    w = ag.tensor(np.array([0.9, 1.1, 0.95, 1.05], np.float32))
    x_other = ag.tensor(np.array([0.1, -0.2, 0.3, 0.05], np.float32))
    chain(ag, np, w, x_other).backward()  # warm: first calls import and cache what they need
    if not collector:
        gc.disable()
    losses = [chain(ag, np, w, x_other) for _ in range(n)]
    if backward:
        for loss in losses:
            loss.backward()


def count(path, package, n, backward, collector):
    """Instructions of one child run under callgrind."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--child",
        package,
        str(n),
        str(int(backward)),
        str(int(collector)),
    ]
    environment = dict(os.environ, PYTHONPATH=str(path), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    for line in done.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1])
    raise RuntimeError(f"callgrind gave no count:\n{done.stderr[-2000:]}")


def per_op(path, package, collector):
    """(forward, backward) instructions per op for one engine."""
    forward = {n: count(path, package, n, False, collector) for n in (2, 8)}
    both = {n: count(path, package, n, True, collector) for n in (2, 8)}
    ops = 6 * OPS
    forward_per_op = (forward[8] - forward[2]) / ops
    return forward_per_op, (both[8] - both[2]) / ops - forward_per_op


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        package, n, backward, collector = sys.argv[2:6]
        child(package, int(n), backward == "1", collector == "1")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REF", help="also count that git ref's package")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: apt-get install valgrind (nothing was counted)")
        return 2
    engines = [("after (this checkout)", BENCHMARKS.parent, "autograd_lab")]
    with tempfile.TemporaryDirectory() as folder:
        if args.before:
            export(args.before, Path(folder))
            engines.insert(0, (f"before ({args.before})", Path(folder), "autograd_lab_before"))
        print("instructions per op, 600-op chain (tanh, sigmoid, exp, - 0.5, * w, + x)")
        print(f"{'engine':28} {'collector':>9} {'forward':>9} {'backward':>9}")
        for name, path, package in engines:
            for collector in (True, False):
                forward, backward = per_op(path, package, collector)
                on = "on" if collector else "off"
                print(f"{name:28} {on:>9} {forward:9,.0f} {backward:9,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
