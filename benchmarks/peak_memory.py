"""Row 5: peak memory of one training step of the big MLP (row 3b), ours against PyTorch.

Each library is measured in a fresh process (this file, run as a script), so that neither sees the
other's leftovers. The child builds the network, runs two warm-up steps (the optimizer and the
gradients exist from then on), collects garbage, resets the kernel's high-water mark of resident
memory (`echo 5 > /proc/self/clear_refs`), reads the resident size (VmRSS) as the baseline, runs
one step and reads the high-water mark (VmHWM): peak - baseline is what the step needed at most.
`MALLOC_MMAP_THRESHOLD_=65536` makes glibc give every array bigger than 64 KiB its own mapping,
returned to the system when freed, so that resident memory follows the live arrays.
For ours and the numpy floor, `tracemalloc` (numpy reports its buffers to it) gives a second,
independent number; it cannot see PyTorch's allocator. Off Linux the RSS numbers are "n/a".
With run.py's --before, a child measures the "before" engine too (it imports the package from the
folder its parent exported it to). The load column counts the children's CPU time as this
process's own.

    .venv/bin/python benchmarks/peak_memory.py ours    # one child (ours, before, torch or floor):
                                                       # prints JSON
"""

import gc
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

from harness import Row, Target, check_all, child_environment, engine, engines, quietly, torch

TARGET = Target(1.2)  # the issue's: at most 1.2x PyTorch's peak
MiB = 2**20


def _status(field):
    """A field of /proc/self/status in bytes (the kernel writes kB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def rss_peak(step):
    """Bytes the step added to resident memory at its peak, or None where /proc cannot say."""
    try:
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM := current VmRSS
        baseline = _status("VmRSS")
    except (OSError, KeyError):
        return None
    step()
    return _status("VmHWM") - baseline


def traced_peak(step):
    """Bytes the step added at its peak, as tracemalloc sees them (numpy's buffers included)."""
    tracemalloc.start()
    step()  # once traced, so the arrays a step frees were also seen being allocated
    step()
    gc.collect()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - before


def child(kind):
    """Measure one way's step in this process (an engine, "floor" or "torch"); print
    {"rss": bytes, "traced": ..., "loss": ...}."""
    from big_mlp import LEARNING_RATE, module_runner, problem
    from numpy_floor import NumpyMLP

    _, weights, x, labels = problem(quick=False)
    result = []
    if kind == "floor":
        net, kept = NumpyMLP(weights), {}

        def step():  # keeps its gradients until the next step, as .grad does with zero_grad()
            kept.clear()
            loss, kept["grads"] = net.forward_backward(x, labels)
            net.sgd_step(kept["grads"], LEARNING_RATE)
            result[:] = [loss]
    else:
        lib = torch if kind == "torch" else engine(kind)
        step = module_runner(lib, weights, x, labels, result)
    step()
    step()
    gc.collect()
    rss = rss_peak(step)
    loss = result[0]  # after three steps in every child, so the losses can be compared
    traced = traced_peak(step) if kind != "torch" else None
    print(json.dumps({"rss": rss, "traced": traced, "loss": loss}))


def run_child(script, *args, with_torch=False):
    """Run `script` with `args` in a fresh process that measures one way (args[0]) and prints
    JSON last; return it. Big arrays get their own mappings (see the module docstring)."""
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536", **child_environment())
    if not with_torch:
        env["BENCHMARKS_WITHOUT_TORCH"] = "1"
    command = [sys.executable, script, *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        last_line = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the child measuring {' '.join(args)} failed: {last_line}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def in_mib(got):
    """{way: {"rss": MiB or None, "traced": MiB or None}} from the children's bytes."""
    return {
        way: {m: None if v[m] is None else v[m] / MiB for m in ("rss", "traced")}
        for way, v in got.items()
    }


def run_children(kinds):
    """{kind: the child's JSON} for each kind, and for each one that failed, its error."""
    got, failed = {}, {}
    for kind in kinds:
        try:
            got[kind] = run_child(__file__, kind, with_torch=kind == "torch")
        except RuntimeError as error:
            if kind == "ours":
                raise
            failed[kind] = str(error)  # an old "before" may lack what the step needs
    return got, failed


def rows(settings):
    from models import missing_api

    what = "peak memory of one 3b step"
    missing = {name: missing_api(lib) for name, lib in engines().items()}
    if missing["ours"]:
        return [
            Row(
                "5",
                what,
                "MiB",
                None,
                "torch",
                None,
                TARGET,
                note=f"not run: {missing['ours']} missing",
            )
        ]
    kinds = [name for name in engines() if not missing[name]] + ["floor"]
    kinds += ["torch"] if torch else []
    # the load is recorded, not acted on: how much memory a step needs does not depend on it
    (got, failed), load = quietly(lambda: run_children(kinds), rerun=False)
    mib = in_mib(got)  # full size even with --quick: it is cheap
    ours = {name: got[name]["loss"] for name in engines() if name in got}
    note = "; ".join(
        [f"{name} failed: {error}" for name, error in failed.items()]
        + [f"{name} not run: {m} missing" for name, m in missing.items() if m]
    )
    if mib["ours"]["rss"] is None:
        note = "; ".join(filter(None, ["RSS: /proc not available (not Linux)", note]))
    before = lambda measure: mib.get("before", {}).get(measure)  # noqa: E731
    table = []
    for ref, measure, target in (
        ("torch", "rss", TARGET),
        ("floor", "rss", None),
        ("floor", "traced", None),
    ):
        how = "RSS" if measure == "rss" else "tracemalloc"
        row = Row(
            "5",
            f"{what}, {how}",
            "MiB",
            mib["ours"][measure],
            ref,
            mib.get(ref, {}).get(measure),
            target,
            before=before(measure),
            load=load,
        )
        if ref in got and measure == "rss":
            row.check, row.check_ok = check_all(ours, ref, got[ref]["loss"], 1e-4, "loss ")
        row.note = "tracemalloc cannot see PyTorch's allocator" if measure == "traced" else note
        table.append(row)
    return table


if __name__ == "__main__":
    child(sys.argv[1])
