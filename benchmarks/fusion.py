"""Row 6: fused kernels (autograd_lab.compile) against eager mode and a memory-bandwidth bound.

    .venv/bin/python benchmarks/fusion.py [--quick] [--repeats N] [--warmup N]

Three functions, forward + backward on 4M float32 elements (4096 rows x 1024 columns):
    GELU          the tanh form written out in ops (x, x**3, tanh, ...): one elementwise group
    layer norm    over the last axis, with a weight and a bias: one row-wise group
    softmax + CE  F.cross_entropy(logits, class targets): one row-wise group
Each is timed three ways, interleaved (a block of eager, of fused, of np.add, ...) after a warm-up
that includes tracing and compiling the kernels; the table shows medians (with run.py's
--before, the "before" engine's eager and fused steps run in the same rounds):
    eager   autograd_lab ops, one numpy pass (or several) per op
    fused   ag.compile(fn): generated numba kernels, on every core (numba's threads)
    bound   the least memory any implementation must move, at the bandwidth np.add(a, b, out=c)
            reaches on 4M float32 in the same round (one thread: numpy's)
The least memory, forward + backward (16 MB per full array; a row's few numbers are free):
    GELU          read x, write y; read x and the incoming gradient, write x's gradient: 5 x 16 MB
    layer norm    the same 5 x 16 MB (the weight's and bias's gradients are 4 KB each)
    softmax + CE  read x, write x's gradient: 2 x 16 MB (the loss is one number, so forward can
                  write the gradient for an incoming 1 in the same pass, as ours does;
                  backward then only scales it, by nothing for loss.backward())
Targets (issue 7): fused >= 3x faster than eager, and fused <= 2x the bound. A step is what a
training loop does: .grad set to None, forward, backward (the engine adopts a fresh gradient as
.grad without copying it). The machine is shared: the header prints the load average before and
after, and medians only tell so much. With run.py's `--clock cpu` the fused times are the CPU
time of all of numba's threads (two here), so they count the work, not the wait.
"""

import argparse
import sys

import numpy as np
from harness import Row, Target, engines, interleaved, machine_info, now, print_table, quietly
from models import missing_api

SPEEDUP, BOUND = Target(3.0, at_least=True), Target(2.0)
ROWS, COLUMNS = 4096, 1024


def gelu_tanh(x):
    return 0.5 * x * (1 + ((x + 0.044715 * x * x * x) * 0.7978845608028654).tanh())


def layer_norm(x, weight, bias):
    mean = x.mean(-1, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(-1, keepdim=True)
    return centred / (var + 1e-5).sqrt() * weight + bias


def softmax_cross_entropy(lib):
    """F.cross_entropy of engine `lib`, as a function of its own to compile."""
    cross_entropy = lib.nn.functional.cross_entropy

    def softmax_cross_entropy(logits, target):
        return cross_entropy(logits, target)

    return softmax_cross_entropy


def problem(rows, columns, rng):
    """The numpy arrays every engine starts from: the same numbers for each."""
    return {
        "x": rng.standard_normal((rows, columns)).astype(np.float32),
        "weight": rng.uniform(0.5, 1.5, columns).astype(np.float32),
        "bias": rng.uniform(-0.5, 0.5, columns).astype(np.float32),
        "target": rng.integers(0, columns, rows),
        "upstream": rng.standard_normal((rows, columns)).astype(np.float32),
    }


def cases(lib, arrays):
    """name: (function, its inputs, the inputs that get gradients, full arrays moved at least,
    the incoming gradient), with engine `lib`'s tensors."""
    grad = lambda name: lib.tensor(arrays[name], requires_grad=True)  # noqa: E731
    x, weight, bias = grad("x"), grad("weight"), grad("bias")
    target, upstream = lib.tensor(arrays["target"]), lib.tensor(arrays["upstream"])
    return {
        "GELU (tanh form)": (gelu_tanh, [x], [x], 5, upstream),
        "layer norm (last axis)": (layer_norm, [x, weight, bias], [x, weight, bias], 5, upstream),
        "softmax + cross-entropy": (softmax_cross_entropy(lib), [x, target], [x], 2, upstream),
    }


def step(fn, inputs, leaves, upstream):
    """One forward + backward; returns its seconds (and its results, for the check)."""
    for leaf in leaves:
        leaf.grad = None
    start = now()
    out = fn(*inputs)
    out.backward(upstream if out.ndim else None)
    seconds = now() - start
    return seconds, (out, [leaf.grad for leaf in leaves])


def agreement(a, b):
    """The largest difference between two (output, gradients) results, relative to their size."""
    worst = 0.0
    for x, y in zip([a[0], *a[1]], [b[0], *b[1]], strict=True):
        x, y = x.detach().numpy().astype(np.float64), y.detach().numpy().astype(np.float64)
        worst = max(worst, float(np.max(np.abs(x - y))) / max(1.0, float(np.max(np.abs(y)))))
    return worst


def measure(per_engine, add, repeats, warmup):
    """Median seconds of each engine's eager and fused step ("ours eager", "ours fused", ...)
    and of np.add, interleaved; each engine's fused difference from its eager; the kernels.

    `per_engine` is {engine: (lib, its case: see `cases`)}. The timed steps keep
    nothing: holding on to a step's gradient (as a check would) keeps the memory a training loop
    gets back when it sets .grad = None, and each next step would wait for fresh pages. The check
    runs after the timing, once each."""
    runners, compiled = {"np.add": add}, {}
    runner = lambda f, args: lambda: step(f, *args)[0]  # noqa: E731
    for name, (lib, (fn, inputs, leaves, _, upstream)) in per_engine.items():
        compiled[name] = lib.compile(fn)
        runners[f"{name} eager"] = runner(fn, (inputs, leaves, upstream))
        runners[f"{name} fused"] = runner(compiled[name], (inputs, leaves, upstream))
    times = interleaved(runners, repeats=repeats, warmup=warmup)
    seconds = {name: columns[""] for name, columns in times.items()}
    differences = {}
    for name, (_, (fn, inputs, leaves, _, upstream)) in per_engine.items():
        eager = step(fn, inputs, leaves, upstream)[1]
        fused = step(compiled[name], inputs, leaves, upstream)[1]
        differences[name] = agreement(fused, eager)
    return seconds, differences, compiled["ours"].plan.kernels


def fused_check(differences):
    """The check cell: each engine's fused step against its own eager one."""
    cells = [
        f"{'' if name == 'ours' else name + ' '}fused-eager {difference:.0e} "
        f"{'✓' if difference <= 1e-4 else '✗'}"
        for name, difference in differences.items()
    ]
    return ", ".join(cells), all(difference <= 1e-4 for difference in differences.values())


def run(quick=False, repeats=None, warmup=None):
    """The table's rows: per function, fused vs eager (speed-up) and fused vs the bound, each
    engine's (ours, and "before" with run.py's --before) eager and fused step in the same rounds."""
    repeats = repeats or (2 if quick else 15)
    warmup = warmup or (1 if quick else 2)
    rows, columns = (64, 128) if quick else (ROWS, COLUMNS)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(rows * columns).astype(np.float32) for _ in range(2))
    c = np.empty_like(a)

    def add():
        start = now()
        np.add(a, b, out=c)
        return now() - start

    usable = {name: lib for name, lib in engines().items() if not missing_api(lib, ("compile",))}
    skipped = "; ".join(f"{name} not run: no compile()" for name in engines() if name not in usable)
    arrays = problem(rows, columns, rng)
    per_engine = {name: cases(lib, arrays) for name, lib in usable.items()}
    table, size = [], f"{rows}x{columns} float32"
    for letter, name in zip("abc", per_engine["ours"], strict=True):
        moved = per_engine["ours"][name][3]  # full arrays any implementation must move
        case = {engine: (usable[engine], cases_[name]) for engine, cases_ in per_engine.items()}
        (seconds, differences, kernels), load = quietly(
            lambda case=case: measure(case, add, repeats, warmup)
        )
        ms = {way: value * 1e3 for way, value in seconds.items()}
        bandwidth = 3 * a.nbytes / (ms["np.add"] / 1e3)  # np.add reads two arrays and writes one
        bound = moved * a.nbytes / bandwidth * 1e3
        check, ok = fused_check(differences)
        by = ", ".join(type(k).__name__ for k in kernels) or "none"
        before_eager = ms.get("before eager")
        notes = [f"fused by {by}", skipped]
        notes += [f"before: eager {before_eager:.3g} ms"] if before_eager else []
        common = {"before": ms.get("before fused"), "load": load}
        table.append(
            Row(
                f"6{letter}",
                f"{name}, fwd+bwd, {size}",
                "ms",
                ms["ours fused"],
                "eager",
                ms["ours eager"],
                SPEEDUP,
                speedup=True,
                check=check,
                check_ok=ok,
                note="; ".join(filter(None, notes)),
                **common,
            )
        )
        table.append(
            Row(
                f"6{letter}",
                f"{name}: fused vs bound",
                "ms",
                ms["ours fused"],
                "bound",
                bound,
                BOUND,
                note=f"bound: {moved} x {a.nbytes / 1e6:.3g} MB at "
                f"np.add's {bandwidth / 1e9:.1f} GB/s ({ms['np.add']:.2f} ms per np.add)",
                **common,
            )
        )
    return table


def rows(settings):
    """Row 6 of run.py's table (same settings as the other rows)."""
    return run(quick=settings.quick, repeats=settings.repeats, warmup=settings.warmup)


def _load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks it runs")
    parser.add_argument("--repeats", type=int, help="timed samples each (default 15)")
    parser.add_argument("--warmup", type=int, help="untimed samples first (default 2)")
    args = parser.parse_args(argv)
    machine = machine_info()
    print(
        f"machine: {machine['cpu']}, {machine['cpus']} CPUs; numba threads "
        f"{machine['numba threads']}; load average before: {_load()}"
    )
    table = run(args.quick, args.repeats, args.warmup)
    print_table(table)
    print(f"load average after: {_load()}")
    return 0 if all(r.check_ok for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
