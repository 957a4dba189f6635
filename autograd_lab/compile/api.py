"""`autograd_lab.compile(fn)`: trace once per input signature, fuse, replay (NB: torch.compile).

    >>> import autograd_lab as ag
    >>> @ag.compile
    ... def gelu(x):
    ...     return 0.5 * x * (1 + ((x + 0.044715 * x**3) * 0.7978845608).tanh())
    >>> x = ag.randn(1000, requires_grad=True)
    >>> y = gelu(x)                   # first call: trace, fuse, generate kernels
    >>> y.grad_fn
    <FusedBackward0 object at 0x...>
    >>> y.sum().backward()            # the generated backward kernel
    >>> gelu.traces                   # a second call with the same shapes reuses everything
    1

What the compiled function does on each call: look up its inputs' signature (shapes, dtypes,
devices, requires_grad, and the values of non-tensor arguments); on a new signature, trace `fn`
(compile/trace.py), fuse its elementwise chains (compile/fuse.py); then replay the plan through
autograd (compile/run.py), so results and gradients are those of eager mode.

What tracing cannot see is in compile/trace.py's docstring: Python control flow on tensor values
follows the branch taken while tracing (a `TracerWarning` flags `.item()` / `bool(t)`).
"""

import functools
import warnings

import numpy as np

from .. import optional
from ..tensor import Tensor
from . import fuse as fusion
from .extras.memory import on_host, plan_memory, run_planned
from .extras.parallel import run_parallel
from .extras.rowkernel import RowKernel
from .extras.rowwise import Rows
from .ir import forward_name
from .run import run
from .trace import trace


class CompiledFunction:
    """What `compile(fn)` returns: call it like fn. See the module docstring."""

    def __init__(self, fn, fuse=True, plan_memory=False, parallel=False, checkpoint=False):
        if fuse:  # say so now, not at the first call: fused kernels are compiled by numba
            optional.require("numba", "ag.compile's fused kernels (fuse=True, the default)")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.options = {
            "fuse": fuse,
            "plan_memory": plan_memory,
            "parallel": parallel,
            "checkpoint": checkpoint,
        }
        self.traces = 0  # how many times fn was traced (once per new input signature)
        self._cache = {}  # signature -> _Compiled
        self._last = None

    def __call__(self, *args):
        key = tuple(_signature(a) for a in args)
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._cache[key] = self._compile(args)
        self._last = compiled
        return compiled(*[a for a in args if isinstance(a, Tensor)])

    def _compile(self, args):
        tensors = [a for a in args if isinstance(a, Tensor)]

        def traced(*xs):  # fn with the non-tensor arguments put back in place
            feed = iter(xs)
            return self.fn(*[next(feed) if isinstance(a, Tensor) else a for a in args])

        graph = trace(traced, *tensors)
        self.traces += 1
        return _Compiled(graph, tensors, self.options)

    # ---- looking inside (the most recently used compilation) ------------------------------------
    def current(self):
        """The compilation of the signature called last (its graph, plan, kernels)."""
        if self._last is None:
            raise RuntimeError(
                f"{self.__name__} has not been called yet, so there is nothing traced to show. "
                "Fix: call it once on example inputs first."
            )
        return self._last

    @property
    def graph(self):
        """The traced Graph (before fusion)."""
        return self.current().graph

    @property
    def plan(self):
        """The fusion Plan (None with fuse=False): plan.graph is what runs."""
        return self.current().plan

    @property
    def kernels(self):
        """The generated source of every fused group's kernels (CPU), one string per group."""
        plan = self.current().plan
        return [kernel.source for kernel in plan.kernels] if plan is not None else []

    def explain(self):
        """A readable summary: what was traced, what was fused, the memory traffic saved."""
        return explain(self.current())

    def __repr__(self):
        return f"<compiled {self.__name__}: {self.traces} trace(s)>"


class _Compiled:
    """One traced signature: its graph, fusion plan and (optionally) memory plan, ready to run."""

    def __init__(self, graph, examples, options):
        self.graph = graph
        self.plan = fuse(graph) if options["fuse"] else None
        self.executed = self.plan.graph if self.plan is not None else graph
        self.memory_plan = None
        self.parallel, self.checkpoint = options["parallel"], options["checkpoint"]
        if options["plan_memory"]:
            if on_host(self.executed, examples):
                self.memory_plan = plan_memory(self.executed, examples)
            else:  # the planner lays out numpy arrays; on a GPU the plain replay runs instead
                warnings.warn(
                    "compile(plan_memory=True): the memory planner plans host (numpy) "
                    "memory only; on these CUDA tensors the function runs unplanned "
                    "(fusion still applies)",
                    RuntimeWarning,
                    stacklevel=4,
                )

    def __call__(self, *inputs):
        if self.checkpoint:
            from ..utils.checkpoint import checkpoint

            return checkpoint(self._execute, *inputs, use_reentrant=False)
        return self._execute(*inputs)

    def _execute(self, *inputs):
        if self.memory_plan is not None:
            return run_planned(self.executed, list(inputs), self.memory_plan)
        if self.parallel:
            return run_parallel(self.executed, list(inputs))
        return run(self.executed, list(inputs))


def _signature(arg):
    """What decides whether a trace can be reused for this argument."""
    if isinstance(arg, Tensor):
        return (
            "tensor",
            tuple(arg._data.shape),
            arg._data.dtype.str,
            str(arg.device),
            arg.requires_grad,
        )
    try:
        hash(arg)
    except TypeError:
        raise TypeError(
            f"a compiled function's non-tensor arguments become constants of the trace, so they "
            f"must be hashable; got a {type(arg).__name__}. Fix: pass tensors, or numbers, "
            "strings and tuples, or capture the object in a closure."
        ) from None
    return ("constant", type(arg).__name__, arg)


def explain(compiled):
    """The text of CompiledFunction.explain() (deterministic: shapes and counts, no ids)."""
    graph, plan = compiled.graph, compiled.plan
    lines = [
        f"traced {len(graph.calls)} calls on inputs "
        f"{', '.join(v.type_str() for v in graph.inputs) or '(none)'}"
    ]
    if plan is None:
        lines.append("fusion off: every call runs as in eager mode")
        return "\n".join(lines)
    fused = sum(len(g.calls) for g in plan.groups)
    lines.append(
        f"{len(plan.groups)} fused group(s) covering {fused} calls; "
        f"{len(plan.graph.calls)} calls run"
    )
    saved_total = 0
    for number, group in enumerate(plan.groups):
        eager = sum(_bytes(call.inputs()) + _bytes(call.outputs) for call in group.calls)
        fused_bytes = _bytes(group.inputs) + _bytes(group.outputs)
        saved_total += eager - fused_bytes
        names = " -> ".join(forward_name(n) for n in group.names)  # as the listing names them
        shape = ", ".join(str(s) for s in group.shape)
        lines.append(f"  group {number}: {names} over {np.dtype(group.dtype).name}[{shape}]")
        lines.append(
            f"    reads {len(group.inputs)} and writes {len(group.outputs)} array(s): "
            f"{_mb(fused_bytes)} moved instead of {_mb(eager)} op by op"
        )
    lines.append(
        f"forward memory traffic saved: {_mb(saved_total)} "
        "(backward kernels save more: they recompute instead of re-reading)"
    )
    return "\n".join(lines)


def _bytes(values):
    return sum(v.nbytes for v in values if v is not None)


def _mb(n):
    return f"{n / 1e6:.3f} MB" if n >= 1e5 else f"{n} bytes"


def fuse(graph, min_size=2):
    """A fusion Plan for `graph`: row-wise groups first (reductions over the last axis with their
    neighbours: compile/extras/rowwise.py), then elementwise groups among the other calls."""
    return fusion.plan(graph, [Rows(graph, RowKernel), fusion.Elementwise(min_size)])


def compile(fn=None, *, fuse=True, plan_memory=False, parallel=False, checkpoint=False):
    """Compile `fn`: trace it, fuse elementwise chains into numba kernels, replay on new inputs.

    Usable as `compile(fn)`, `@compile` or `@compile(fuse=False)`. Options:
    fuse         generate fused kernels for elementwise chains (forward and backward); needs
                 numba (`pip install "autograd_lab[compile]"`). fuse=False traces and replays
                 with numpy alone
    plan_memory  free each value at its last use and reuse buffers (compile/extras/memory.py)
    parallel     run independent branches concurrently (compile/parallel.py)
    checkpoint   keep no activations: recompute the forward during backward (less memory)
    """
    options = {
        "fuse": fuse,
        "plan_memory": plan_memory,
        "parallel": parallel,
        "checkpoint": checkpoint,
    }
    if fn is None:
        return lambda f: CompiledFunction(f, **options)
    if not callable(fn):
        raise TypeError(f"compile() takes a function, got {type(fn).__name__}")
    return CompiledFunction(fn, **options)
