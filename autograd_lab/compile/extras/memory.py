"""Memory: watch it (a timeline of live bytes), then plan it (lifetimes, buffer reuse, layers that
share memory), as data that the runner consumes.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile.extras.memory import record_memory
    >>> x = ag.randn(256, 256, requires_grad=True)
    >>> with record_memory() as timeline:
    ...     x.tanh().exp().sum().backward()
    >>> [sample.label for sample in timeline.samples]
    ['TanhBackward0', 'ExpBackward0', 'SumBackward0', 'SumBackward0', 'ExpBackward0', 'TanhBackward0', 'AccumulateGrad']

`tracemalloc` counts every array numpy allocates, so "live bytes" is exactly what the arrays of the
program hold. Printing the timeline of a training step of the 784-512-512-10 MLP (batch 256,
float32) shows where its peak is: not in forward (the activations, ~1.6 MB), but at the end of
backward, where the gradient of the first weight (1.6 MB) is computed while the other weights'
gradients (1 MB) and the gradient flowing into the first layer (0.5 MB) are held.

The plan cuts what it can. `plan_memory(graph, inputs)` reads the traced program and returns a
`MemoryPlan`: plain data, computed once per trace, which `run(graph, inputs, plan)` (compile/run.py,
the runner of every traced graph) consumes on every call:
- `intervals`: each value's lifetime (made by call i, last read by call j, or kept until backward
  when a node saved it). The runner drops every value right after its last reader (Python keeps
  locals until the function returns);
- `buffers` and `slots`: a call that takes `out=` (a fused kernel) writes into the buffer of a
  value that died, of the same size;
- `replace`: {call index: Call to run instead}: linear layers and ReLU run as layers.py's
  `HostedLinear` and `InPlaceRelu`. ReLU works in place, and a weight's gradient buffer, idle
  until that weight's gradient is written, holds the layer's output and later the gradient
  flowing back into it, so the first layer's incoming gradient takes no memory of its own. The
  three calls that share such a buffer get one `Host`, which the runner makes new for each run.
Backward is autograd's own, as for any graph: those Functions make ordinary nodes. The engine
frees what each node saved once it has run, adds repeated gradients in place, adopts a fresh
gradient as `.grad` without a copy (the weight gradients that layers.py writes are fresh), and
runs each parameter's post-accumulate hooks as soon as its gradient is complete; `autograd.grad`,
hooks and `create_graph=True` work on a planned run as on an eager one. `run_planned` is the
entry point: it checks that the plan fits these inputs, then calls `run`.

Measured (tracemalloc peak of forward + backward after warm-up, as `tests/test_memory_plan.py`
measures it): eager 3.21 MB, planned 2.73 MB (0.85x); with `optimizer.step()` (SGD) too, 3.22 vs
2.75 MB. Forward + backward cannot go below its results, the six gradients (2.68 MB, 0.83 of
eager's peak): besides them eager holds 0.54 MB at its peak, the plan 0.05 MB. A training step
can, since a gradient's last use is the update: step one optimizer per parameter in that
parameter's `register_post_accumulate_grad_hook` and drop `.grad` there, and the gradients are
never all alive together (the layers that host change then, layers.py point 3). Whole step:
eager 2.70 MB with the update in backward, planned 2.21 MB (0.69x of eager's 3.22 MB;
benchmarks/planned_memory.py, row 7, measures the same step in fresh processes). The planned
step peaks in the first layer's update: its weight gradient (1.61 MB) and the gradient that
flowed into the layer (0.52 MB), which the engine holds until the node that received it has sent
all its results, so until the leaves' hooks it feeds have run.
`plan.summary()` estimates the peaks of forward + backward from the graph alone (eager 3.20 MB,
planned 2.69 MB: within 3% of the measured ones, tested), modelling adopted gradients and the
memory that layers.py shares; it does not count temporaries. A parameter with post-accumulate
hooks when the plan is made is taken to lose its gradient once complete, as the update in
backward does (estimates 2.62 and 2.13 MB for the whole step's 2.70 and 2.21 measured, tested);
others keep theirs. The plan reads the hooks once: register them before planning (before the
first call of a function compiled with `plan_memory=True`), or plan again.

Hook for `autograd_lab.compile(..., plan_memory=True)`: `plan = plan_memory(graph, inputs)` once
per trace, then `run_planned(graph, inputs, plan)` per call, instead of `run(graph, inputs)`.
"""

import dataclasses
import tracemalloc
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ...autograd.function import saved_storage
from ...autograd.grad_mode import enable_grad, is_grad_enabled
from ...autograd.graph import observe
from ...tensor import _make
from ..ir import map_values
from ..run import check_inputs, run
from .layers import InPlaceRelu, plan_layers, updated_in_backward

# ---- (a) the timeline of live bytes ---------------------------------------------------------------


class Sample(NamedTuple):
    """Live bytes after one op (`live`) and the most reached while it ran (`peak`)."""

    phase: str  # "forward", "backward" or a mark's phase
    label: str  # the node's name, e.g. "AddmmBackward0"
    live: int
    peak: int


class MemoryTimeline:
    """Samples of live bytes, one per op of forward and backward (from `record_memory`).

    Bytes count from the moment recording started: arrays made before (the model) are not in it.
    """

    def __init__(self):
        self.samples, self._base, self._pending = [], 0, None

    @property
    def peak(self):
        return max((s.peak for s in self.samples), default=0)

    def mark(self, label, phase="other"):
        """Close a sample by hand: for work autograd does not record (`optimizer.step()`)."""
        self._flush()
        live, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        self.samples.append(Sample(phase, label, live - self._base, peak - self._base))

    def _on_node(self, node, outputs):
        self.mark(node.name(), "forward")

    def _on_backward(self, event, node, detail):
        if event == "run":  # a node starts: the previous one is done
            self._flush()
            self._pending = node.name()

    def _flush(self):
        if self._pending is not None:
            label, self._pending = self._pending, None
            self.mark(label, "backward")

    def __repr__(self):
        rows = [f"{'#':>3} {'phase':<9} {'op':<24} {'live MB':>8} {'peak MB':>8}"]
        for i, s in enumerate(self.samples):
            rows.append(
                f"{i:>3} {s.phase:<9} {s.label:<24} {s.live / 1e6:8.3f} {s.peak / 1e6:8.3f}"
            )
        return "\n".join(rows)


class record_memory:
    """`with record_memory() as timeline:` records live bytes after every op run inside."""

    def __enter__(self):
        self._started = not tracemalloc.is_tracing()
        if self._started:
            tracemalloc.start()
        self.timeline = MemoryTimeline()
        self.timeline._base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        self._observer = observe(self.timeline._on_node, self.timeline._on_backward)
        self._observer.__enter__()
        return self.timeline

    def __exit__(self, *exc):
        self._observer.__exit__(*exc)
        self.timeline._flush()
        if self._started:
            tracemalloc.stop()
        return False


def measure_peak(step, *args, warmup=1):
    """Peak bytes allocated while `step(*args)` runs (after `warmup` calls, so caches are
    filled). The arguments are made before the measurement starts, so they do not count."""
    for _ in range(warmup):
        step(*args)
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    try:
        step(*args)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        if started:
            tracemalloc.stop()


# ---- (b) the plan ----------------------------------------------------------------------------------


@dataclass
class MemoryPlan:
    """What `plan_memory` found. Steps: forward call i is step i; with `backward`, the backward of
    call i is step 2n-1-i (calls run backward in reverse). A value lives over [born, dies].

    What the runner (compile/run.py) reads: `graph`, `buffers` and `replace`; the rest is the
    estimate, for people and the graph viewer (`summary()`, `live_bytes()`, `per_call()`)."""

    graph: object
    intervals: dict  # value id -> (born, dies): the planned lifetime; ("grad", id): its gradient
    eager_intervals: dict  # value id -> (born, dies) as plain Python code keeps it
    saved: dict  # call index -> ids of the values its nodes saved for backward
    buffers: dict  # value id -> slot: where a call taking out= writes (the runner reads it)
    slots: dict  # slot -> nbytes
    nbytes: dict  # value id -> bytes
    backward: bool = False
    reused: list = field(default_factory=list)  # value ids that took a dead value's buffer
    hosted: dict = field(default_factory=dict)  # key -> key whose memory holds it (layers.py)
    updated: list = field(default_factory=list)  # parameters with post-accumulate hooks
    replace: dict = field(default_factory=dict)  # call index -> Call the runner runs instead

    def alive_after(self, step):
        """Ids of the values alive once `step` has run (for the graph widget)."""
        spans = self.intervals.items()
        return sorted(v for v, (born, dies) in spans if type(v) is int and born <= step < dies)

    def freed_after(self, step):
        """Ids of the values freed right after `step` (their last use)."""
        return sorted(
            v for v, (_, dies) in self.intervals.items() if type(v) is int and dies == step
        )

    def per_call(self):
        """For each forward call (the widget shows this per node): the values alive after it,
        those freed right after it, and the bytes the plan keeps then."""
        live = self.live_bytes()
        return [
            {
                "alive": self.alive_after(call.index),
                "freed": self.freed_after(call.index),
                "live_bytes": int(live[call.index]),
            }
            for call in self.graph.calls
        ]

    def live_bytes(self, eager=False):
        """Estimated live bytes after every step, as a planned run (or plain Python with eager
        autograd) keeps the values and gradients. Temporaries inside one op are not
        counted, so a measured peak is a little higher (the tests check within 3%)."""
        steps = len(self.graph.calls) * (2 if self.backward else 1)
        spans = dict(self.eager_intervals if eager else self.intervals)
        if not eager:  # a value kept in another's memory costs nothing, but keeps that memory
            for key, host in self.hosted.items():
                (born, dies), (host_born, host_dies) = spans.pop(key), spans[host]
                spans[host] = (min(born, host_born), max(dies, host_dies))
        live = np.zeros(steps, dtype=np.int64)
        for key, (born, dies) in spans.items():
            live[born : dies + 1] += self.nbytes[key]
        return live

    def summary(self):
        """A few lines for people: predicted peaks (plain Python vs the plan), buffers, saved."""
        eager, planned = self.live_bytes(eager=True), self.live_bytes()
        values = sum(type(key) is int for key in self.intervals)
        saved = sum(
            self.nbytes[v] for ids in self.saved.values() for v in set(ids) if v in self.nbytes
        )
        return "\n".join(
            [
                f"memory plan: {len(self.graph.calls)} calls, {values} intermediate values"
                + (f", {len(self.intervals) - values} gradients" if self.backward else ""),
                f"  eager estimate:   peak {eager.max(initial=0) / 1e6:.3f} MB (values live until the "
                "function returns, saved ones until their backward, gradients adopted as .grad)",
                f"  planned estimate: peak {planned.max(initial=0) / 1e6:.3f} MB (freed after last use"
                + (f"; {len(self.hosted)} arrays kept in another's memory" if self.hosted else "")
                + ")",
                f"  out= buffers:     {len(self.slots)} for {len(self.buffers)} values, "
                f"{len(self.reused)} reuse a dead value's buffer",
                f"  saved for backward: {saved / 1e6:.3f} MB",
            ]
            + self._updated_line()
        )

    def _updated_line(self):
        if not self.updated:
            return []
        return [
            f"  updated in backward: {len(self.updated)} parameters (post-accumulate hooks: "
            "each gradient taken to go once complete)"
        ]


def plan_memory(graph, inputs=None, saved=None, backward=None):
    """Lifetimes and buffer reuse for `graph`. `inputs` (example tensors) let the planner run the
    graph once to see what each node saves for backward; or pass `saved` yourself. With a backward
    and example inputs, also the calls that run as layers.py's Functions (`plan.replace`), as the
    parameters' post-accumulate hooks are now."""
    if saved is None:
        saved = find_saved(graph, inputs) if inputs is not None else {}
    if backward is None:
        backward = any(saved.values())
    n, outputs = len(graph.calls), {v.id for v in graph.outputs}
    end = 2 * n - 1 if backward else n - 1
    last_use = graph.last_use()
    kept_for_backward = {}
    for index, ids in saved.items():
        for value_id in ids:
            kept_for_backward[value_id] = max(kept_for_backward.get(value_id, 0), 2 * n - 1 - index)
    intervals, eager_intervals, nbytes = {}, {}, {}
    for call in graph.calls:
        for value in call.outputs:
            if value is None:
                continue
            born, nbytes[value.id] = call.index, value.nbytes
            dies = last_use.get(value.id, born)
            if value.id in outputs:
                dies = end  # the caller gets it
            dies = max(dies, kept_for_backward.get(value.id, dies))
            intervals[value.id] = (born, dies)
            eager_intervals[value.id] = (born, max(dies, n - 1))
    buffers, slots, reused = _assign_buffers(graph, intervals, outputs)
    plan = MemoryPlan(
        graph, intervals, eager_intervals, saved, buffers, slots, nbytes, backward, reused
    )
    if backward:
        _plan_gradients(plan, last_use, outputs)
        if inputs is not None and on_host(graph, inputs):
            _plan_layers(plan, inputs)
    return plan


def _plan_gradients(plan, last_use, outputs):
    """Lifetimes of the gradients: the one of value v appears at the backward of v's last reader
    (calls run backward in reverse) and is used up by the backward of v's producer; a leaf's
    stays, as `.grad` (eager and planned alike adopt the array, no copy), unless the leaf has
    post-accumulate hooks: then it is taken to go once complete, at the backward of its first
    reader, as the optimizer's step in such a hook drops it (`zero_grad()`)."""
    graph, n = plan.graph, len(plan.graph.calls)
    first_reader = graph.first_use()
    needs = {
        v.id
        for v in graph.values()
        if v.is_float
        and (v.requires_grad if v.kind == "input" else v.kind == "const" and v.const.requires_grad)
    }
    for call in graph.calls:
        if any(v.id in needs for v in call.inputs()):
            needs.update(v.id for v in call.outputs if v is not None and v.is_float)
    made_by = {v.id: c.index for c in graph.calls for v in c.outputs if v is not None}
    for value in graph.values():
        if value.id not in needs or (value.id not in last_use and value.id not in outputs):
            continue
        born = n if value.id in outputs else 2 * n - 1 - last_use[value.id]
        leaf = value.id not in made_by
        dies = 2 * n - 1 if leaf else 2 * n - 1 - made_by[value.id]
        if leaf and value.const is not None and updated_in_backward(value.const):
            dies = 2 * n - 1 - first_reader[value.id]
            plan.updated.append(value.id)
        key = ("grad", value.id)
        plan.nbytes[key] = value.nbytes
        plan.intervals[key] = plan.eager_intervals[key] = (born, dies)


def _plan_layers(plan, inputs):
    """The calls that run as layers.py's Functions (`plan.replace`), and the memory they share
    (`plan.hosted`, for the estimates). An in-place ReLU's result lives in its input's memory,
    and so does its input's gradient when ReLU masks the gradient in place. When the linear
    layer before it hosts, its output, ReLU's result and both their gradients live in the layer's
    weight gradient buffer instead, which the layer's forward allocates."""
    plan.replace = plan_layers(plan.graph, inputs)
    made_by = {call.outputs[0].id: call for call in plan.replace.values()}
    for relu in plan.replace.values():
        if relu.fn is not InPlaceRelu:
            continue
        x, out = relu.args[0].id, relu.outputs[0].id
        masked = [("grad", out), ("grad", x)] if relu.kwargs["mask_in_place"] else []
        if "host" in relu.kwargs:  # the linear layer before it hosts: (bias, input, weight)
            host, shared = ("grad", made_by[x].args[2].id), [x, out, *masked]
        else:
            plan.hosted[out] = x
            host, shared = ("grad", out), masked[1:]
        for key in shared:
            if key in plan.intervals and host in plan.intervals:
                plan.hosted[key] = host


def _assign_buffers(graph, intervals, outputs):
    """Greedy: a value made by a call that takes `out=` gets the buffer of a dead value of the same
    size and dtype when one is free, else a new buffer. Outputs never give theirs back."""
    free, buffers, slots, reused, dying = {}, {}, {}, [], {}
    for call in graph.calls:
        if getattr(call.fn, "accepts_out", False):
            for value in call.outputs:
                if value is None:
                    continue
                key = (value.nbytes, np.dtype(value.dtype).str)
                if free.get(key):
                    buffers[value.id] = free[key].pop()
                    reused.append(value.id)
                else:
                    buffers[value.id] = len(slots)
                    slots[len(slots)] = value.nbytes
                if value.id not in outputs:
                    dying.setdefault(intervals[value.id][1], []).append((key, value.id))
        for key, value_id in dying.pop(call.index, ()):
            free.setdefault(key, []).append(buffers[value_id])
    return buffers, slots, reused


def find_saved(graph, inputs):
    """{call index: ids of the values its nodes saved for backward}, by running the graph once
    with recording on and reading what every node kept (the same arrays, so found by identity)."""
    env, by_array, saved, nodes = {}, {}, {}, []

    def lookup(value):
        return value.const if value.const is not None else env[value.id]

    for value, tensor in zip(graph.inputs, inputs, strict=True):
        copy = _make(tensor._data)
        copy._requires_grad = tensor.requires_grad and tensor._data.dtype.kind == "f"
        env[value.id], by_array[id(tensor._data)] = copy, value.id
    for call in graph.calls:
        for value in call.inputs():
            by_array.setdefault(id(lookup(value)._data), value.id)
        nodes.clear()
        with observe(on_node=lambda node, outputs: nodes.append(node)), enable_grad():
            result = call.fn.apply(
                *map_values(call.args, lookup), **map_values(call.kwargs, lookup)
            )
        for value, out in zip(call.outputs, _as_tuple(result), strict=False):
            if value is not None:
                env[value.id], by_array[id(out._data)] = out, value.id
        kept = [saved for node in nodes for saved in node._saved or () if saved is not None]
        arrays = [saved_storage(saved) for saved in kept]
        found = {by_array[id(a)] for a in arrays if id(a) in by_array}
        if found:
            saved[call.index] = sorted(found)
    return saved


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


# ---- (c) running it ------------------------------------------------------------------------------


def run_planned(graph, inputs, plan):
    """Run `graph` on `inputs` as `plan` says: `run(graph, inputs, plan)` (compile/run.py), which
    frees each value after its last reader, writes into the plan's out= buffers and runs the
    calls of `plan.replace` as layers.py's Functions; backward is autograd's, as for any graph.

    Two checks first: the plan lays out host memory (numpy arrays), and a plan made without
    gradients (it saw nothing saved for backward) may give a buffer that backward still needs to
    a later value, so its buffers are used only when nothing is recorded."""
    check_inputs(graph, inputs)
    if not on_host(graph, inputs):
        raise NotImplementedError(
            "run_planned plans host memory (numpy arrays), and these tensors are on a GPU. Fix: run "
            "the graph unplanned with autograd_lab.compile.run(graph, inputs), or use "
            "compile(fn) without plan_memory=True on CUDA tensors (fusion still applies)."
        )
    if not plan.backward and plan.buffers and _records(graph, inputs):
        plan = dataclasses.replace(plan, buffers={})
    return run(graph, inputs, plan)


def on_host(graph, inputs):
    """Are the inputs and the graph's constants numpy arrays (what the planner plans)?"""
    tensors = list(inputs) + [v.const for v in graph.values() if v.const is not None]
    return all(type(t._data) is np.ndarray for t in tensors)


def _records(graph, inputs):
    """Will running `graph` on `inputs` record a graph for backward?"""
    consts = [v.const for v in graph.values() if v.const is not None]
    return is_grad_enabled() and any(t.requires_grad for t in [*inputs, *consts])
