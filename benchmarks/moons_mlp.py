"""Row 2: one training step of a small MLP on the moons data set, ours against PyTorch.

The network a first lesson trains: 2 -> 16 -> 16 -> 2 with Tanh, the full 200-point moons set as
one batch, CrossEntropyLoss, SGD with momentum 0.9. A step is zero_grad + forward + loss + backward
+ step, exactly as a learner writes it. The arrays are tiny (16 columns), so this measures the
per-op cost of a real training loop: about 20 ops forward, as many nodes backward, and the
optimizer's update of 6 parameters. Each sample times `steps` steps in a row (one step is too short
for the clock on a busy machine); ours and PyTorch alternate.
"""

from harness import Row, Target, compare, interleaved, now, torch
from models import build_mlp, init_weights, missing_api, moons, train_step

import autograd_lab

SIZES = [2, 16, 16, 2]
LEARNING_RATE, MOMENTUM = 0.1, 0.9
TARGET = Target(1.0)  # the issue's: a step no slower than PyTorch's


def make_trainer(lib, n_samples):
    """A runner doing `steps` training steps (returns seconds per step) and its list of losses."""
    x, y = moons(n_samples)
    x, y = lib.tensor(x), lib.tensor(y)
    model = build_mlp(lib, init_weights(SIZES), "Tanh")
    loss_fn = lib.nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)
    losses = []

    def run(steps):
        start = now()
        for _ in range(steps):
            loss = train_step(model, loss_fn, optimizer, x, y)
        seconds = (now() - start) / steps
        losses.append(loss.item())  # read after the clock stops: item() is not part of a step
        return seconds

    return run, losses


def rows(settings):
    n_samples, steps = (40, 2) if settings.quick else (200, 20)
    what = f"moons MLP step {'-'.join(map(str, SIZES))} Tanh, batch {n_samples}, SGD+momentum"
    if missing_api(autograd_lab):
        return [Row("2", what, "µs/step", None, "torch", None, TARGET,
                    note=f"not run: {missing_api(autograd_lab)} missing")]  # fmt: skip
    libs = {"ours": autograd_lab} | ({"torch": torch} if torch else {})
    trainers = {name: make_trainer(lib, n_samples) for name, lib in libs.items()}
    runners = {name: (lambda run=run: run(steps)) for name, (run, _) in trainers.items()}
    medians = interleaved(runners, settings.repeats, settings.warmup)
    check, ok = "", True
    if torch:  # both ran the same number of steps from the same weights: same losses
        ours, theirs = trainers["ours"][1], trainers["torch"][1]
        check, ok = compare("ours", ours, "torch", theirs, tolerance=1e-4)
    theirs = medians["torch"][""] * 1e6 if torch else None
    return [Row("2", what, "µs/step", medians["ours"][""] * 1e6, "torch", theirs, TARGET,
                check=f"losses {check}" if check else "", check_ok=ok)]  # fmt: skip
