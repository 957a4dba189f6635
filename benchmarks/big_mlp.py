"""Row 3: a 784-512-512-10 ReLU MLP, batch 256, float32: ours, PyTorch and the numpy floor.

Four ways to run a training step of the same network from the same weights, interleaved:
(a) forward + cross-entropy + backward written with raw tensors (`h @ W.T + b`, `relu()`,
`F.cross_entropy`), ours and PyTorch; (b) the same with `nn.Linear` modules, `CrossEntropyLoss` and
an `optim.SGD` step (zero_grad + forward + loss + backward + step), ours and PyTorch; (d) the numpy
floor (numpy_floor.py) without and with the SGD update; with run.py's --before, the "before"
engine's (a) and (b) as well. Here the matmuls are most of the work, so the ratio to the floor is
what the engine adds on top of numpy: node bookkeeping, extra copies, and gradients summed that
the floor writes in place.
"""

import numpy as np
from harness import Row, Target, check_all, engines, interleaved, now, quietly, torch
from models import MODULES_API, build_mlp, init_weights, missing_api, raw_parameters, train_step
from numpy_floor import NumpyMLP

SIZES, BATCH = [784, 512, 512, 10], 256
QUICK_SIZES, QUICK_BATCH = [20, 16, 16, 10], 8
LEARNING_RATE = 0.01
TO_FLOOR, TO_TORCH = Target(1.15), Target(1.3)  # the targets
REFERENCES = (("floor", TO_FLOOR), ("torch", TO_TORCH))


def problem(quick):
    """(sizes, weights, x, labels) of the benchmark, as numpy arrays."""
    sizes, batch = (QUICK_SIZES, QUICK_BATCH) if quick else (SIZES, BATCH)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch).astype(np.int64)
    return sizes, init_weights(sizes, seed=0), x, labels


def raw_runner(lib, weights, x, labels, result):
    """Forward + loss + backward with plain tensors; leaves (loss, dW1) in `result`."""
    params = raw_parameters(lib, weights)
    x, labels = lib.tensor(x), lib.tensor(labels)
    cross_entropy = lib.nn.functional.cross_entropy

    def run():
        start = now()
        for p in params:
            p.grad = None
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i].T + params[i + 1]
            if i < len(params) - 2:
                h = h.relu()
        loss = cross_entropy(h, labels)
        loss.backward()
        seconds = now() - start
        result[:] = [loss.item(), params[0].grad.numpy().copy()]
        return seconds

    return run


def module_runner(lib, weights, x, labels, result):
    """A training step with nn.Linear, CrossEntropyLoss and SGD; leaves the loss in `result`."""
    model = build_mlp(lib, weights, "ReLU")
    loss_fn = lib.nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    x, labels = lib.tensor(x), lib.tensor(labels)

    def run():
        start = now()
        loss = train_step(model, loss_fn, optimizer, x, labels)
        seconds = now() - start
        result[:] = [loss.item()]
        return seconds

    return run


def floor_runner(weights, x, labels, result, update):
    net = NumpyMLP(weights)

    def run():
        start = now()
        loss, grads = net.forward_backward(x, labels)
        if update:
            net.sgd_step(grads, LEARNING_RATE)
        seconds = now() - start
        result[:] = [loss, grads[0][0]] if not update else [loss]
        return seconds

    return run


def measure(libs, kinds, weights, x, labels, settings):
    """Median ms of every way to run each kind of step ({"ours raw": ms, "floor raw": ...},
    interleaved) and the numbers each computed, for the checks."""
    make = {"raw": raw_runner, "nn": module_runner}
    results, runners = {}, {}
    for kind in kinds:
        for name, lib in libs[kind].items():
            result = results[f"{name} {kind}"] = []
            runners[f"{name} {kind}"] = make[kind](lib, weights, x, labels, result)
        result = results[f"floor {kind}"] = []
        runners[f"floor {kind}"] = floor_runner(weights, x, labels, result, update=kind == "nn")
    medians = interleaved(runners, settings.repeats, settings.warmup)
    flat = {way: np.concatenate([np.ravel(v) for v in result]) for way, result in results.items()}
    return {way: m[""] * 1e3 for way, m in medians.items()}, flat


def rows(settings):
    sizes, weights, x, labels = problem(settings.quick)
    net = f"{'-'.join(map(str, sizes))} MLP, batch {len(labels)}"
    names = {"raw": f"{net}, fwd+bwd, raw tensors", "nn": f"{net}, nn.Linear + SGD step"}
    needs = {"raw": ("nn.functional.cross_entropy",), "nn": MODULES_API}
    libs, notes = {}, {}
    for kind, needed in needs.items():  # the engines that have what each kind of step needs
        missing = {name: missing_api(lib, needed) for name, lib in engines().items()}
        libs[kind] = {name: lib for name, lib in engines().items() if not missing[name]}
        libs[kind] |= {"torch": torch} if torch else {}
        notes[kind] = "; ".join(f"{name} not run: {m} missing" for name, m in missing.items() if m)
    kinds = [kind for kind in ("raw", "nn") if "ours" in libs[kind]]
    (ms, results), load = quietly(lambda: measure(libs, kinds, weights, x, labels, settings))

    table = []
    for kind, row_id in (("raw", "3a"), ("nn", "3b")):
        if kind not in kinds:
            table += [
                Row(row_id, names[kind], "ms/step", None, ref, None, target, note=notes[kind])
                for ref, target in REFERENCES
            ]
            continue
        # (a) compares the loss and the first weight's gradient; (b), after the same number of
        # SGD steps from the same weights, the loss.
        what = "loss+dW1 " if kind == "raw" else "loss "
        ours = {name: results[f"{name} {kind}"] for name in libs[kind] if name != "torch"}
        for ref, target in REFERENCES:
            row = Row(
                row_id,
                names[kind],
                "ms/step",
                ms[f"ours {kind}"],
                ref,
                ms.get(f"{ref} {kind}"),
                target,
                before=ms.get(f"before {kind}"),
                load=load,
                note=notes[kind],
            )
            if f"{ref} {kind}" in results:
                row.check, row.check_ok = check_all(ours, ref, results[f"{ref} {kind}"], 1e-4, what)
            if ref == "torch" and row.ref is not None:
                scale = f"torch / floor = {row.ref / ms[f'floor {kind}']:.2f}x"
                row.note = "; ".join(filter(None, [scale, notes[kind]]))
            table.append(row)
    return table
