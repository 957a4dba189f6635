"""Row 7: peak memory of a big-MLP training step, eager against a planned run, with the
optimizer's update after backward (the standard loop) and inside it (post-accumulate hooks).

The network, data and SGD step of row 3b (784-512-512-10, batch 256, float32, lr 0.01), run four
ways from the same weights:
- eager: `zero_grad()`, forward, `backward()`, `step()`: the four lines of every tutorial;
- eager + update in backward: one SGD per parameter, stepped by that parameter's
  `register_post_accumulate_grad_hook`, which also drops the gradient (PyTorch's pattern);
- planned: the same step with the loss compiled by `autograd_lab.compile(..., plan_memory=True)`
  (fuse=False: there is nothing elementwise to fuse here, so the plan alone is measured);
- planned + update in backward: both. Backward is autograd's engine, which runs each parameter's
  hooks as soon as its gradient is complete, so the six gradients are never alive together (the
  plan is made at the first call, once the hooks are registered: it reads them).

Measured as row 5 (peak_memory.py): each way in a fresh process (this file run as a script) with
`MALLOC_MMAP_THRESHOLD_=65536`; after two warm-up steps, the resident-memory high-water mark over
one step (RSS, Linux only), then, after one traced step, `tracemalloc`'s peak over one step. One
difference: before each measured step the gradients are dropped (`.grad = None`, which the
standard step's `zero_grad()` does first thing anyway), so every way starts from the same memory
(the model, the data, the optimizer) and its peak counts the gradients it makes. Row 5 counts
from before `zero_grad()`, with the last step's gradients in the baseline: there a step's peak is
what it needs beyond them. Each child then saves its parameters (after five steps), and the check
compares them with the reference's.

    .venv/bin/python benchmarks/planned_memory.py planned+hooks OUT.npz [ours|before]   # one child

With run.py's --before, each way is also measured for the "before" engine, in children of its own,
and its parameters are checked the same way, against its own eager step.
"""

import gc
import json
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
from harness import Row, Target, compare, engines, quietly
from peak_memory import in_mib, rss_peak, run_child

TARGET = Target(0.7)  # issue 7: planned + update in backward at most 0.7x eager's peak
WAYS = ("eager", "eager+hooks", "planned", "planned+hooks")
NAMES = {
    "eager": "eager",
    "eager+hooks": "eager + update in backward",
    "planned": "planned",
    "planned+hooks": "planned + update in backward",
}


def training_step(lib, weights, x, labels, way):
    """One SGD training step of row 3b's network as a function, done `way` (see WAYS)."""
    from big_mlp import LEARNING_RATE
    from models import build_mlp

    model = build_mlp(lib, weights, "ReLU")
    x, labels = lib.tensor(x), lib.tensor(labels)
    cross_entropy = lib.nn.CrossEntropyLoss()
    loss_fn = lambda x, y: cross_entropy(model(x), y)  # noqa: E731
    if way.startswith("planned"):
        loss_fn = lib.compile(loss_fn, fuse=False, plan_memory=True)
    params = list(model.parameters())
    if way.endswith("+hooks"):
        optimizers = {p: lib.optim.SGD([p], lr=LEARNING_RATE) for p in params}

        def update(p):  # runs inside backward, as soon as p.grad is complete
            optimizers[p].step()
            optimizers[p].zero_grad()  # set_to_none: the gradient's memory goes now

        for p in params:
            p.register_post_accumulate_grad_hook(update)

        def step():
            loss_fn(x, labels).backward()
    else:
        optimizer = lib.optim.SGD(params, lr=LEARNING_RATE)

        def step():
            optimizer.zero_grad()
            loss_fn(x, labels).backward()
            optimizer.step()

    return step, params


def child(way, out_path, engine_name="ours"):
    """Measure one way of one engine in this process; print {"rss": bytes, "traced": bytes} and
    save the parameters."""
    from big_mlp import problem
    from harness import engine

    _, weights, x, labels = problem(quick=False)
    step, params = training_step(engine(engine_name), weights, x, labels, way)

    def drop_gradients():  # what the standard step's zero_grad() does first anyway
        for p in params:
            p.grad = None
        gc.collect()

    step()
    step()
    drop_gradients()
    rss = rss_peak(step)
    tracemalloc.start()
    step()  # once traced, so the arrays a step frees were also seen being allocated
    drop_gradients()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    step()
    traced = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    np.savez(out_path, *[p.detach().numpy() for p in params])
    print(json.dumps({"rss": rss, "traced": traced}))


def run_ways(engine_name, folder):
    """{way: the child's JSON} and {way: its parameters} of one engine, each way in a child."""
    paths = {way: Path(folder) / f"{engine_name}-{way}.npz" for way in WAYS}
    got = {way: run_child(__file__, way, str(paths[way]), engine_name) for way in WAYS}
    params = {}
    for way, path in paths.items():
        with np.load(path) as saved:
            params[way] = np.concatenate([saved[k].ravel() for k in saved.files])
    return in_mib(got), params


def run_engines():
    """{engine: (MiB by way, parameters by way)}, and {engine: error} for any other engine than
    ours that failed (an old "before" may lack the planner or post-accumulate hooks)."""
    measured, failed = {}, {}
    with tempfile.TemporaryDirectory() as folder:
        for name in engines():
            try:
                measured[name] = run_ways(name, folder)
            except RuntimeError as error:
                if name == "ours":
                    raise
                failed[name] = str(error)
    return measured, failed


# (way, its reference, target, measure): the target by both measures, then each way against
# its reference by tracemalloc
COMPARISONS = (
    ("planned+hooks", "eager", TARGET, "traced"),
    ("planned+hooks", "eager", TARGET, "rss"),
    ("planned", "eager", None, "traced"),
    ("eager+hooks", "eager", None, "traced"),
    ("planned+hooks", "eager+hooks", None, "traced"),
)


def params_check(params, before_params, way, ref):
    """A way's parameters after five steps against its reference's, for ours and "before"."""
    check, ok = compare(way, params[way], ref, params[ref], 1e-6)
    if before_params is not None:  # the same check within the "before" engine's own ways
        before_check, before_ok = compare(way, before_params[way], ref, before_params[ref], 1e-6)
        check, ok = f"{check}, before: {before_check}", ok and before_ok
    return f"params {check}", ok


def rows(settings):
    """Full size even with --quick: four children of a few steps each, a few seconds (and four
    more for the "before" engine). The load is recorded only: it does not change memory."""
    (measured, failed), load = quietly(run_engines, rerun=False)
    mib, params = measured["ours"]
    before_mib, before_params = measured.get("before", (None, None))
    what = "peak memory of a 3b training step"
    no_rss = "RSS: /proc not available (not Linux)" if mib["eager"]["rss"] is None else ""
    failures = "; ".join(f"{name} failed: {error}" for name, error in failed.items())
    table = []
    for way, ref, target, measure in COMPARISONS:
        check, ok = params_check(params, before_params, way, ref)
        how = "tracemalloc" if measure == "traced" else "RSS"
        row = Row(
            "7",
            f"{what}: {NAMES[way]}, {how}",
            "MiB",
            mib[way][measure],
            ref,
            mib[ref][measure],
            target,
            check=check,
            check_ok=ok,
            load=load,
        )
        row.before = before_mib[way][measure] if before_mib else None
        row.note = "; ".join(filter(None, [no_rss if measure == "rss" else "", failures]))
        table.append(row)
    return table


if __name__ == "__main__":
    child(*sys.argv[1:])
