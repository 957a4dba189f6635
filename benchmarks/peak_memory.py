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

    .venv/bin/python benchmarks/peak_memory.py ours    # one child (ours, torch or floor): prints JSON
"""

import gc
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

from harness import Row, Target, compare, torch

import autograd_lab

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
    """Measure one library's step in this process; print {"rss": bytes, "traced": ..., "loss": ...}."""
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
        step = module_runner(autograd_lab if kind == "ours" else torch, weights, x, labels, result)
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
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    if not with_torch:
        env["BENCHMARKS_WITHOUT_TORCH"] = "1"
    command = [sys.executable, script, *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        last_line = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the child measuring {args[0]} failed: {last_line}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def in_mib(got):
    """{way: {"rss": MiB or None, "traced": MiB or None}} from the children's bytes."""
    return {way: {m: None if v[m] is None else v[m] / MiB for m in ("rss", "traced")}
            for way, v in got.items()}  # fmt: skip


def rows(settings):
    from models import missing_api

    what = "peak memory of one 3b step"
    if missing_api(autograd_lab):
        return [Row("5", what, "MiB", None, "torch", None, TARGET,
                    note=f"not run: {missing_api(autograd_lab)} missing")]  # fmt: skip
    kinds = ["ours", "floor"] + (["torch"] if torch else [])
    got = {kind: run_child(__file__, kind, with_torch=kind == "torch") for kind in kinds}
    mib = in_mib(got)  # full size even with --quick: it is cheap
    loss_check = lambda ref: compare("ours", got["ours"]["loss"], ref, got[ref]["loss"], 1e-4)
    no_rss = "" if mib["ours"]["rss"] is not None else "RSS: /proc not available (not Linux)"
    table = []
    if torch:
        check, ok = loss_check("torch")
        table.append(Row("5", f"{what}, RSS", "MiB", mib["ours"]["rss"], "torch",
                         mib["torch"]["rss"], TARGET, check=f"loss {check}", check_ok=ok,
                         note=no_rss))  # fmt: skip
    else:
        table.append(Row("5", f"{what}, RSS", "MiB", mib["ours"]["rss"], "torch", None, TARGET))
    check, ok = loss_check("floor")
    table.append(Row("5", f"{what}, RSS", "MiB", mib["ours"]["rss"], "floor", mib["floor"]["rss"],
                     check=f"loss {check}", check_ok=ok))  # fmt: skip
    table.append(Row("5", f"{what}, tracemalloc", "MiB", mib["ours"]["traced"], "floor",
                     mib["floor"]["traced"], note="tracemalloc cannot see PyTorch's allocator"))  # fmt: skip
    return table


if __name__ == "__main__":
    child(sys.argv[1])
