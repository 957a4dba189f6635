"""Row 2: one training step of a small MLP on the moons data set, ours against PyTorch.

The network a first lesson trains: 2 -> 16 -> 16 -> 2 with Tanh, the full 200-point moons set as
one batch, CrossEntropyLoss, SGD with momentum 0.9. A step is zero_grad + forward + loss + backward
+ step, exactly as a learner writes it. The arrays are tiny (16 columns), so this measures the
per-op cost of a real training loop: about 20 ops forward, as many nodes backward, and the
optimizer's update of 6 parameters. Each sample times `steps` steps in a row (one step is too short
for the clock on a busy machine); ours and PyTorch take turns (with run.py's --before, the
"before" engine too).
"""

from harness import Row, Target, check_engines, engines, interleaved, now, quietly, torch
from models import build_mlp, init_weights, missing_api, moons, train_step

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


def usable_engines():
    """(engines with the API this row needs, {name: what is missing} for the others)."""
    found = {name: (lib, missing_api(lib)) for name, lib in engines().items()}
    usable = {name: lib for name, (lib, missing) in found.items() if not missing}
    return usable, {name: missing for name, (_, missing) in found.items() if missing}


def measure(libs, n_samples, steps, settings):
    """Median seconds per step of each library, interleaved, and each one's losses."""
    trainers = {name: make_trainer(lib, n_samples) for name, lib in libs.items()}
    runners = {name: (lambda run=run: run(steps)) for name, (run, _) in trainers.items()}
    medians = interleaved(runners, settings.repeats, settings.warmup)
    return medians, {name: losses for name, (_, losses) in trainers.items()}


def rows(settings):
    n_samples, steps = (40, 2) if settings.quick else (200, 20)
    what = f"moons MLP step {'-'.join(map(str, SIZES))} Tanh, batch {n_samples}, SGD+momentum"
    usable, missing = usable_engines()
    note = "; ".join(f"{name} not run: {m} missing" for name, m in missing.items())
    if "ours" in missing:
        return [Row("2", what, "µs/step", None, "torch", None, TARGET, note=note)]
    libs = usable | ({"torch": torch} if torch else {})
    (medians, losses), load = quietly(lambda: measure(libs, n_samples, steps, settings))
    # all ran the same number of steps from the same weights: the same losses
    check, ok = check_engines(losses, 1e-4, prefix="losses ")
    us = {name: m[""] * 1e6 for name, m in medians.items()}
    return [
        Row(
            "2",
            what,
            "µs/step",
            us["ours"],
            "torch",
            us.get("torch"),
            TARGET,
            check=check,
            check_ok=ok,
            before=us.get("before"),
            load=load,
            note=note,
        )
    ]
