"""Row 3: a 784-512-512-10 ReLU MLP, batch 256, float32: ours, PyTorch and the numpy floor.

Four ways to run a training step of the same network from the same weights, interleaved:
(a) forward + cross-entropy + backward written with raw tensors (`h @ W.T + b`, `relu()`,
`F.cross_entropy`), ours and PyTorch; (b) the same with `nn.Linear` modules, `CrossEntropyLoss` and
an `optim.SGD` step (zero_grad + forward + loss + backward + step), ours and PyTorch; (d) the numpy
floor (numpy_floor.py) without and with the SGD update. Here the matmuls are most of the work, so
the ratio to the floor is what the engine adds on top of numpy: node bookkeeping, extra copies,
and gradients summed that the floor writes in place.
"""

import numpy as np
from harness import Row, Target, compare, interleaved, now, torch
from models import MODULES_API, build_mlp, init_weights, missing_api, raw_parameters, train_step
from numpy_floor import NumpyMLP

import autograd_lab

SIZES, BATCH = [784, 512, 512, 10], 256
QUICK_SIZES, QUICK_BATCH = [20, 16, 16, 10], 8
LEARNING_RATE = 0.01
TO_FLOOR, TO_TORCH = Target(1.15), Target(1.3)  # the targets


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


def rows(settings):
    sizes, weights, x, labels = problem(settings.quick)
    net = f"{'-'.join(map(str, sizes))} MLP, batch {len(labels)}"
    names = {"raw": f"{net}, fwd+bwd, raw tensors", "nn": f"{net}, nn.Linear + SGD step"}
    needs = {"raw": ("nn.functional.cross_entropy",), "nn": MODULES_API}
    missing = {kind: missing_api(autograd_lab, needed) for kind, needed in needs.items()}
    results = {}
    runners = {}
    libs = {"ours": autograd_lab} | ({"torch": torch} if torch else {})
    make = {"raw": raw_runner, "nn": module_runner}
    for kind in [k for k in ("raw", "nn") if not missing[k]]:
        for name, lib in libs.items():
            result = results[f"{name} {kind}"] = []
            runners[f"{name} {kind}"] = make[kind](lib, weights, x, labels, result)
        result = results[f"floor {kind}"] = []
        runners[f"floor {kind}"] = floor_runner(weights, x, labels, result, update=kind == "nn")
    medians = interleaved(runners, settings.repeats, settings.warmup)
    ms = {name: m[""] * 1e3 for name, m in medians.items()}

    table = []
    for kind, row_id in (("raw", "3a"), ("nn", "3b")):
        if missing[kind]:
            table += [Row(row_id, names[kind], "ms/step", None, ref, None, target,
                          note=f"not run: {missing[kind]} missing")
                      for ref, target in (("floor", TO_FLOOR), ("torch", TO_TORCH))]  # fmt: skip
            continue
        # (a) compares the loss and the first weight's gradient; (b), after the same number of
        # SGD steps from the same weights, the loss.
        ours = np.concatenate([np.ravel(v) for v in results[f"ours {kind}"]])
        for ref, target in (("floor", TO_FLOOR), ("torch", TO_TORCH)):
            if f"{ref} {kind}" not in results:
                table.append(
                    Row(row_id, names[kind], "ms/step", ms[f"ours {kind}"], ref, None, target)
                )
                continue
            theirs = np.concatenate([np.ravel(v) for v in results[f"{ref} {kind}"]])
            check, ok = compare("ours", ours, ref, theirs, tolerance=1e-4)
            what = "loss+dW1" if kind == "raw" else "loss"
            note = ""
            if ref == "torch":
                note = f"torch / floor = {ms[f'torch {kind}'] / ms[f'floor {kind}']:.2f}x"
            table.append(Row(row_id, names[kind], "ms/step", ms[f"ours {kind}"], ref,
                             ms[f"{ref} {kind}"], target, check=f"{what} {check}", check_ok=ok,
                             note=note))  # fmt: skip
    return table
